//! The `writeback` events iolab reads (kernel:
//! `include/trace/events/writeback.h`).

use super::fields::num;

/// `balance_dirty_pages`: one pass of a writer through dirty throttling.
/// Page counts are in pages, rates in KiB/s, times in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BalanceDirtyPages<'a> {
    /// The backing device's name (`7:0` for a block device).
    pub bdi: &'a str,
    /// `limit=`: the global dirty limit.
    pub limit: u64,
    /// `setpoint=`.
    pub setpoint: u64,
    /// `dirty=`: dirty pages in all.
    pub dirty: u64,
    /// `wb_setpoint=`.
    pub wb_setpoint: u64,
    /// `wb_dirty=`.
    pub wb_dirty: u64,
    /// `dirty_ratelimit=`.
    pub dirty_ratelimit: u64,
    /// `task_ratelimit=`.
    pub task_ratelimit: u64,
    /// `dirtied=`.
    pub dirtied: u64,
    /// `paused=`: time already paused in this call.
    pub paused: u64,
    /// `pause=`: the pause about to be taken (ms; negative: none).
    pub pause: i64,
    /// `period=`.
    pub period: u64,
    /// `think=`.
    pub think: i64,
}

/// `bdi_dirty_ratelimit`: one update of a device's dirty rate limit (at
/// most every 200 ms, from a throttled writer). Rates in KiB/s, each the
/// kernel's pages per second times 4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BdiDirtyRatelimit<'a> {
    /// The backing device's name (`7:0` for a block device).
    pub bdi: &'a str,
    /// `write_bw=`: the last interval's write bandwidth.
    pub write_bw: u64,
    /// `awrite_bw=`: its smoothed value, the one throttling uses.
    pub awrite_bw: u64,
    /// `dirty_rate=`: the rate pages were dirtied over the interval.
    pub dirty_rate: u64,
    /// `dirty_ratelimit=`: the base rate after the update.
    pub dirty_ratelimit: u64,
    /// `task_ratelimit=`: the rate a dirtier was held to, plus one page/s.
    pub task_ratelimit: u64,
    /// `balanced_dirty_ratelimit=`: the interval's balanced rate.
    pub balanced_dirty_ratelimit: u64,
}

/// `global_dirty_state`: the global counts and thresholds, in pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GlobalDirtyState {
    /// `dirty=`.
    pub dirty: u64,
    /// `writeback=`.
    pub writeback: u64,
    /// `bg_thresh=`.
    pub bg_thresh: u64,
    /// `thresh=`.
    pub thresh: u64,
    /// `limit=`.
    pub limit: u64,
    /// `dirtied=`.
    pub dirtied: u64,
    /// `written=`.
    pub written: u64,
}

/// `bdi NAME: FIELDS`: the device's name and the fields.
fn bdi_and_fields(payload: &str) -> Result<(&str, &str), String> {
    payload
        .strip_prefix("bdi ")
        .and_then(|rest| rest.split_once(": "))
        .ok_or_else(|| "expected 'bdi NAME: ...'".to_string())
}

pub(super) fn balance_dirty_pages(payload: &str) -> Result<BalanceDirtyPages<'_>, String> {
    let (bdi, f) = bdi_and_fields(payload)?;
    Ok(BalanceDirtyPages {
        bdi,
        limit: num(f, "limit", "")?,
        setpoint: num(f, "setpoint", "")?,
        dirty: num(f, "dirty", "")?,
        wb_setpoint: num(f, "wb_setpoint", "")?,
        wb_dirty: num(f, "wb_dirty", "")?,
        dirty_ratelimit: num(f, "dirty_ratelimit", "")?,
        task_ratelimit: num(f, "task_ratelimit", "")?,
        dirtied: num(f, "dirtied", "")?,
        paused: num(f, "paused", "")?,
        pause: num(f, "pause", "")?,
        period: num(f, "period", "")?,
        think: num(f, "think", "")?,
    })
}

pub(super) fn bdi_dirty_ratelimit(payload: &str) -> Result<BdiDirtyRatelimit<'_>, String> {
    let (bdi, f) = bdi_and_fields(payload)?;
    Ok(BdiDirtyRatelimit {
        bdi,
        write_bw: num(f, "write_bw", "")?,
        awrite_bw: num(f, "awrite_bw", "")?,
        dirty_rate: num(f, "dirty_rate", "")?,
        dirty_ratelimit: num(f, "dirty_ratelimit", "")?,
        task_ratelimit: num(f, "task_ratelimit", "")?,
        balanced_dirty_ratelimit: num(f, "balanced_dirty_ratelimit", "")?,
    })
}

pub(super) fn global_dirty_state(f: &str) -> Result<GlobalDirtyState, String> {
    Ok(GlobalDirtyState {
        dirty: num(f, "dirty", "")?,
        writeback: num(f, "writeback", "")?,
        bg_thresh: num(f, "bg_thresh", "")?,
        thresh: num(f, "thresh", "")?,
        limit: num(f, "limit", "")?,
        dirtied: num(f, "dirtied", "")?,
        written: num(f, "written", "")?,
    })
}
