//! The simulator's dirty-throttling arithmetic replayed on the kernel's
//! `writeback` records (`balance_dirty_pages`, `bdi_dirty_ratelimit`,
//! `global_dirty_state`), for one device.
//!
//! Two checks, each on what the kernel printed:
//!
//! - **Every throttled pass** (`balance_dirty_pages`): the rate the task
//!   was held to is the base rate times the position ratio, and the
//!   ratio is recomputed by `iolab_sim::cache::wb::wb_position_ratio` from
//!   the record's limit, setpoint, dirty counts and device setpoint, the
//!   threshold of the `global_dirty_state` record before it and the
//!   device's smoothed bandwidth of the last `bdi_dirty_ratelimit` record.
//!   The device's share of the threshold is not printed; it is recovered
//!   from its setpoint (`wb_setpoint = setpoint × wb_thresh / (thresh +
//!   1)`). The kernel also re-estimates the bandwidth, untraced, at the
//!   end of writeback submissions, so a pass can use a bandwidth a little
//!   off the last printed one: a pass agrees when the rates are within
//!   [`PASS_TOLERANCE`]; how many are exact is counted too.
//! - **Every rate-limit update** (`bdi_dirty_ratelimit`, after the first,
//!   which has no earlier base rate to start from): from the earlier
//!   record's base and balanced rates, this record's task rate,
//!   bandwidth and dirty rate, and the dirty count and setpoint of the
//!   pass that made the update (the `balance_dirty_pages` record of the
//!   same task that follows it), `iolab_sim::cache::wb::dirty_ratelimit_step`
//!   must give exactly the balanced and base rates printed.
//!
//! Rates are printed in KiB/s, pages/s times 4 (4 KiB pages), and
//! compared in pages/s.

use crate::trace::{BalanceDirtyPages, BdiDirtyRatelimit, Dev, Event, Item, Reader, TraceError};
use iolab_sim::cache::wb::{
    ControlLine, RATELIMIT_CALC_SHIFT, RateLimits, RatelimitInput, dirty_ratelimit_step,
    wb_position_ratio,
};

/// A pass agrees when the replayed task rate is within this fraction of
/// the kernel's (see the module docs).
pub const PASS_TOLERANCE: f64 = 0.01;

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
    /// Throttled passes checked (those after a threshold and a bandwidth
    /// were printed), agreeing within the tolerance, and exactly.
    pub passes: u64,
    pub passes_agree: u64,
    pub passes_exact: u64,
    /// Passes before the trace had printed a threshold and a bandwidth.
    pub passes_unanchored: u64,
    /// Largest relative difference of a pass's task rate.
    pub max_pass_error: f64,
    /// Rate-limit updates checked, and those replayed exactly.
    pub updates: u64,
    pub updates_agree: u64,
    /// Updates that could not be checked: the first (no earlier rates) and
    /// any with no pass of the same task after it.
    pub updates_unanchored: u64,
    /// The first failed check.
    pub first_divergence: Option<Divergence>,
    /// Lost-events markers.
    pub lost_markers: u64,
}

/// Replays `text` for device `dev`.
pub fn replay(text: &str, dev: Dev) -> Result<Report, TraceError> {
    let mut r = Replay::default();
    let mut reader = Reader::new(text, Some(dev));
    for item in reader.by_ref() {
        match item? {
            Item::Record(rec) => match rec.event {
                Event::GlobalDirtyState(g) => r.thresh = Some(g.thresh),
                Event::BdiDirtyRatelimit(u) => r.update(rec.line, rec.pid, u),
                Event::BalanceDirtyPages(b) => r.pass(rec.line, rec.pid, &b),
                _ => {}
            },
            Item::Lost { .. } => r.report.lost_markers += 1,
        }
    }
    if r.pending.is_some() {
        r.report.updates_unanchored += 1;
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

#[derive(Default)]
struct Replay {
    thresh: Option<u64>,
    /// The last update's rates and smoothed bandwidth (pages/s).
    last: Option<(RateLimits, u64)>,
    pending: Option<Pending>,
    report: Report,
}

impl Replay {
    fn diverge(&mut self, line: usize, field: &'static str, kernel: u64, core: u64) {
        if self.report.first_divergence.is_none() {
            self.report.first_divergence = Some(Divergence {
                line,
                field,
                kernel,
                core,
            });
        }
    }

    fn update(&mut self, line: usize, pid: i64, u: BdiDirtyRatelimit<'_>) {
        if self.pending.take().is_some() {
            self.report.updates_unanchored += 1;
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
            write_bw: pages(u.awrite_bw),
            dirty_rate: pages(u.dirty_rate),
        });
        self.last = Some((rates, pages(u.awrite_bw)));
    }

    fn pass(&mut self, line: usize, pid: i64, b: &BalanceDirtyPages<'_>) {
        if let Some(p) = self.pending.filter(|p| p.pid == pid) {
            self.pending = None;
            self.check_update(p, b);
        }
        let (Some(thresh), Some((_, write_bw))) = (self.thresh, self.last) else {
            self.report.passes_unanchored += 1;
            return;
        };
        let line_marks = ControlLine {
            thresh,
            limit: b.limit,
            setpoint: b.setpoint,
        };
        // wb_setpoint = setpoint × wb_thresh / (thresh + 1), inverted.
        let wb_thresh = if b.setpoint == 0 {
            0
        } else {
            (u128::from(b.wb_setpoint) * u128::from(thresh + 1) / u128::from(b.setpoint)) as u64
        };
        let pos_ratio = wb_position_ratio(line_marks, b.dirty, b.wb_dirty, wb_thresh, write_bw);
        let core = ((pages(b.dirty_ratelimit) * pos_ratio) >> RATELIMIT_CALC_SHIFT) * 4;
        let kernel = b.task_ratelimit;
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
            self.diverge(line, "task_ratelimit", kernel, core);
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
