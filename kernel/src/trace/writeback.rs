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

pub(super) fn balance_dirty_pages(payload: &str) -> Result<BalanceDirtyPages<'_>, String> {
    let rest = payload
        .strip_prefix("bdi ")
        .ok_or_else(|| "expected 'bdi NAME: ...'".to_string())?;
    let (bdi, f) = rest
        .split_once(": ")
        .ok_or_else(|| "expected 'bdi NAME: ...'".to_string())?;
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
