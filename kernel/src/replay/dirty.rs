//! The simulator's dirty-throttling arithmetic replayed on the kernel's
//! `writeback` records (`balance_dirty_pages`, `bdi_dirty_ratelimit`,
//! `global_dirty_state`), for one device.
//!
//! Two checks, each on what the kernel printed:
//!
//! - **Every throttled pass** (`balance_dirty_pages`): the rate the task
//!   was held to is the base rate times the position ratio, and the
//!   ratio is recomputed by `iolab_sim::cache::wb::wb_position_ratio` from
//!   the record's dirty counts and device setpoint, the thresholds of the
//!   `global_dirty_state` record before it (the hard limit is the larger
//!   of the threshold and the printed limit, the setpoint halfway from the
//!   free-run line to it) and the device's smoothed bandwidth. The
//!   device's share of the threshold is not printed; it is recovered from
//!   its setpoint (`wb_setpoint = setpoint × wb_thresh / (thresh + 1)`).
//!   Nor is the bandwidth a pass used: `bdi_dirty_ratelimit` prints the
//!   smoothed bandwidth just before the same update moves it, so the pass
//!   that made an update used the value that update prints, and the
//!   passes after it the value the next update prints; passes are held
//!   until then, and each is checked on both values, the nearer result
//!   kept. The kernel also re-estimates the bandwidth, untraced, at the
//!   end of writeback submissions, so a pass may have used a third value:
//!   a pass agrees when the rates are within [`PASS_TOLERANCE`]; how many
//!   are exact is counted too.
//! - **Every rate-limit update** (`bdi_dirty_ratelimit`, after the first,
//!   which has no earlier base rate to start from): from the earlier
//!   record's base and balanced rates, this record's task rate,
//!   bandwidth and dirty rate, and the dirty count and setpoint of the
//!   pass that made the update (the `balance_dirty_pages` record of the
//!   same task that follows it), `iolab_sim::cache::wb::dirty_ratelimit_step`
//!   must give exactly the balanced and base rates printed.
//!
//! Rates are printed in KiB/s, pages/s times 4 (4 KiB pages), and
//! compared in pages/s. One writeback context per device is assumed (no
//! cgroup writeback: the records' `cgroup_ino` is not read). After a
//! lost-events marker the replay starts again: held passes and a pending
//! update are not checked, and the next update has no earlier rates.

use crate::trace::{BalanceDirtyPages, BdiDirtyRatelimit, Dev, Event, Item, Reader, TraceError};
use iolab_sim::cache::wb::{
    ControlLine, RATELIMIT_CALC_SHIFT, RateLimits, RatelimitInput, dirty_ratelimit_step,
    wb_position_ratio,
};

/// A pass agrees when the replayed task rate is within this fraction of
/// the kernel's (see the module docs).
pub const PASS_TOLERANCE: f64 = 0.005;

/// KiB/s as printed to pages/s.
fn pages(kib_s: u64) -> u64 {
    kib_s / 4
}

/// The first check that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// Line of the record.
    pub line: usize,
    /// `task_ratelimit` (a pass) or `dirty_ratelimit` /
    /// `balanced_dirty_ratelimit` (an update).
    pub field: &'static str,
    /// The kernel's value and the replay's, KiB/s.
    pub kernel: u64,
    pub core: u64,
}

/// The outcome of a replay.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Throttled passes checked, agreeing within the tolerance, and
    /// exactly.
    pub passes: u64,
    pub passes_agree: u64,
    pub passes_exact: u64,
    /// Passes that could not be checked: before the trace had printed the
    /// thresholds, or before a lost-events marker.
    pub passes_unanchored: u64,
    /// Largest relative difference of a pass's task rate.
    pub max_pass_error: f64,
    /// Rate-limit updates checked, and those replayed exactly.
    pub updates: u64,
    pub updates_agree: u64,
    /// Updates that could not be checked: the first (no earlier rates) and
    /// any with no pass of the same task after it.
    pub updates_unanchored: u64,
    /// The failed check of the earliest line.
    pub first_divergence: Option<Divergence>,
    /// Lost-events markers.
    pub lost_markers: u64,
}

/// The largest page count and rate (KiB/s) a record may print: beyond
/// them the arithmetic would overflow, and no machine is that large.
const MAX_PAGES: u64 = 1 << 40;
const MAX_KIB_S: u64 = 1 << 33;

/// Each named field of the record at `line` is at most `max`.
fn plausible(line: usize, fields: &[(&str, u64)], max: u64) -> Result<(), TraceError> {
    match fields.iter().find(|&&(_, v)| v > max) {
        Some(&(what, v)) => Err(TraceError {
            line,
            message: format!("{what}={v}: implausibly large (at most {max})"),
        }),
        None => Ok(()),
    }
}

/// Replays `text` for device `dev`.
pub fn replay(text: &str, dev: Dev) -> Result<Report, TraceError> {
    let mut r = Replay::default();
    let mut reader = Reader::new(text, Some(dev));
    for item in reader.by_ref() {
        match item? {
            Item::Record(rec) => match rec.event {
                Event::GlobalDirtyState(g) => {
                    let fields = [("thresh", g.thresh), ("bg_thresh", g.bg_thresh)];
                    plausible(rec.line, &fields, MAX_PAGES)?;
                    r.thresholds = Some((g.thresh, g.bg_thresh));
                }
                Event::BdiDirtyRatelimit(u) => r.update(rec.line, rec.pid, u)?,
                Event::BalanceDirtyPages(b) => r.pass(rec.line, rec.pid, &b)?,
                _ => {}
            },
            Item::Lost { .. } => r.lost(),
        }
    }
    if r.pending.is_some() {
        r.report.updates_unanchored += 1;
    }
    // Passes after the last update: the last printed bandwidth is the best
    // there is.
    for p in std::mem::take(&mut r.held) {
        r.check_pass(&p, None);
    }
    Ok(r.report)
}

/// An update waiting for the pass that made it.
#[derive(Clone, Copy, Debug)]
struct Pending {
    line: usize,
    pid: i64,
    prev: Option<RateLimits>,
    update: RateLimits,
    task_ratelimit: u64,
    write_bw: u64,
    dirty_rate: u64,
}

/// A pass's inputs, in pages and pages/s.
#[derive(Clone, Copy, Debug)]
struct PassInput {
    line: usize,
    line_marks: ControlLine,
    dirty: u64,
    wb_dirty: u64,
    wb_thresh: u64,
    dirty_ratelimit: u64,
    /// The kernel's task rate, KiB/s.
    task_ratelimit: u64,
    /// The bandwidth the last update printed before this pass, if any.
    bw_before: Option<u64>,
}

#[derive(Default)]
struct Replay {
    /// The last `global_dirty_state`'s threshold and background threshold.
    thresholds: Option<(u64, u64)>,
    /// The last update's rates and smoothed bandwidth (pages/s).
    last: Option<(RateLimits, u64)>,
    pending: Option<Pending>,
    /// Passes waiting for the bandwidth they used (the next update's).
    held: Vec<PassInput>,
    report: Report,
}

impl Replay {
    fn diverge(&mut self, line: usize, field: &'static str, kernel: u64, core: u64) {
        if self.report.first_divergence.is_none_or(|d| line < d.line) {
            self.report.first_divergence = Some(Divergence {
                line,
                field,
                kernel,
                core,
            });
        }
    }

    fn lost(&mut self) {
        self.report.lost_markers += 1;
        if self.pending.take().is_some() {
            self.report.updates_unanchored += 1;
        }
        self.report.passes_unanchored += self.held.len() as u64;
        self.held.clear();
        self.last = None;
    }

    fn update(
        &mut self,
        line: usize,
        pid: i64,
        u: BdiDirtyRatelimit<'_>,
    ) -> Result<(), TraceError> {
        plausible(
            line,
            &[
                ("awrite_bw", u.awrite_bw),
                ("dirty_rate", u.dirty_rate),
                ("dirty_ratelimit", u.dirty_ratelimit),
                ("task_ratelimit", u.task_ratelimit),
                ("balanced_dirty_ratelimit", u.balanced_dirty_ratelimit),
            ],
            MAX_KIB_S,
        )?;
        if self.pending.take().is_some() {
            self.report.updates_unanchored += 1;
        }
        let write_bw = pages(u.awrite_bw);
        for p in std::mem::take(&mut self.held) {
            self.check_pass(&p, Some(write_bw));
        }
        let rates = RateLimits {
            dirty_ratelimit: pages(u.dirty_ratelimit),
            balanced_dirty_ratelimit: pages(u.balanced_dirty_ratelimit),
        };
        self.pending = Some(Pending {
            line,
            pid,
            prev: self.last.map(|(r, _)| r),
            update: rates,
            task_ratelimit: pages(u.task_ratelimit),
            write_bw,
            dirty_rate: pages(u.dirty_rate),
        });
        self.last = Some((rates, write_bw));
        Ok(())
    }

    fn pass(&mut self, line: usize, pid: i64, b: &BalanceDirtyPages<'_>) -> Result<(), TraceError> {
        plausible(
            line,
            &[
                ("limit", b.limit),
                ("setpoint", b.setpoint),
                ("dirty", b.dirty),
                ("wb_setpoint", b.wb_setpoint),
                ("wb_dirty", b.wb_dirty),
            ],
            MAX_PAGES,
        )?;
        plausible(
            line,
            &[
                ("dirty_ratelimit", b.dirty_ratelimit),
                ("task_ratelimit", b.task_ratelimit),
            ],
            MAX_KIB_S,
        )?;
        let made_update = self.pending.filter(|p| p.pid == pid);
        if let Some(p) = made_update {
            self.pending = None;
            self.check_update(p, b);
        }
        let Some((thresh, bg_thresh)) = self.thresholds else {
            self.report.passes_unanchored += 1;
            return Ok(());
        };
        let limit = b.limit.max(thresh);
        let freerun = (thresh + bg_thresh) / 2;
        let line_marks = ControlLine {
            thresh,
            limit,
            setpoint: (freerun + limit) / 2,
        };
        // wb_setpoint = setpoint × wb_thresh / (thresh + 1), inverted, on
        // the setpoint the record printed.
        let wb_thresh = (u128::from(b.wb_setpoint) * u128::from(thresh + 1))
            .checked_div(u128::from(b.setpoint))
            .map_or(0, |t| u64::try_from(t).unwrap_or(u64::MAX));
        let input = PassInput {
            line,
            line_marks,
            dirty: b.dirty,
            wb_dirty: b.wb_dirty,
            wb_thresh,
            dirty_ratelimit: pages(b.dirty_ratelimit),
            task_ratelimit: b.task_ratelimit,
            bw_before: self.last.map(|(_, bw)| bw),
        };
        match made_update {
            // Its position was taken before the update moved the bandwidth.
            Some(p) => self.check_pass(
                &PassInput {
                    bw_before: Some(p.write_bw),
                    ..input
                },
                None,
            ),
            None => self.held.push(input),
        }
        Ok(())
    }

    /// Checks pass `p` on the bandwidth printed before it and the one
    /// printed after it (`bw_after`), keeping the nearer result.
    fn check_pass(&mut self, p: &PassInput, bw_after: Option<u64>) {
        let kernel = p.task_ratelimit;
        let rate = |bw: u64| {
            let pos_ratio = wb_position_ratio(p.line_marks, p.dirty, p.wb_dirty, p.wb_thresh, bw);
            ((p.dirty_ratelimit * pos_ratio) >> RATELIMIT_CALC_SHIFT) * 4
        };
        let Some(core) = [p.bw_before, bw_after]
            .into_iter()
            .flatten()
            .map(rate)
            .min_by_key(|c| c.abs_diff(kernel))
        else {
            self.report.passes_unanchored += 1;
            return;
        };
        let err = if kernel == 0 {
            if core == 0 { 0.0 } else { 1.0 }
        } else {
            core.abs_diff(kernel) as f64 / kernel as f64
        };
        let r = &mut self.report;
        r.passes += 1;
        r.max_pass_error = r.max_pass_error.max(err);
        if core == kernel {
            r.passes_exact += 1;
        }
        if err <= PASS_TOLERANCE {
            r.passes_agree += 1;
        } else {
            self.diverge(p.line, "task_ratelimit", kernel, core);
        }
    }

    fn check_update(&mut self, p: Pending, b: &BalanceDirtyPages<'_>) {
        let Some(prev) = p.prev else {
            self.report.updates_unanchored += 1;
            return;
        };
        let got = dirty_ratelimit_step(
            prev,
            RatelimitInput {
                task_ratelimit: p.task_ratelimit,
                write_bw: p.write_bw,
                dirty_rate: p.dirty_rate,
                dirty: b.dirty,
                setpoint: b.setpoint,
            },
        );
        self.report.updates += 1;
        if got.balanced_dirty_ratelimit != p.update.balanced_dirty_ratelimit {
            self.diverge(
                p.line,
                "balanced_dirty_ratelimit",
                p.update.balanced_dirty_ratelimit * 4,
                got.balanced_dirty_ratelimit * 4,
            );
        } else if got.dirty_ratelimit != p.update.dirty_ratelimit {
            self.diverge(
                p.line,
                "dirty_ratelimit",
                p.update.dirty_ratelimit * 4,
                got.dirty_ratelimit * 4,
            );
        } else {
            self.report.updates_agree += 1;
        }
    }
}
