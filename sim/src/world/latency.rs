//! fio's search for the deepest queue that meets a latency target
//! (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`), as fio 3.33's `io_u.c` runs it (`lat_target_init`,
//! `lat_target_check`, `lat_target_success`, `__lat_target_failed`,
//! `queue_full`):
//!
//! * the job starts at depth 1, its ceiling the job's `iodepth`;
//! * an IO whose latency (submission to completion) is above the target
//!   fails the window at once when the percentile is 100 (at depth 1 the
//!   job then ends with `ETIMEDOUT`), else is counted;
//! * at each completion, once the window's time has passed, the share of
//!   the window's IOs within the target decides: at least the percentile
//!   raises the depth (doubling until a depth has failed, then halfway to
//!   the failed one), below it lowers the depth halfway to the last good
//!   one and waits for the IOs in flight (fio's `io_u_quiesce`);
//! * a success that leaves the depth where it was starts a last window
//!   at that depth, its statistics from scratch, and the success after it
//!   ends the job; with `latency_run` the search never settles, the
//!   windows go on adjusting the depth until the job's own end.
//!
//! Contexts past the depth wait ([`Phase::DepthWait`]) until it rises.

use super::World;
use super::job::{JobState, Phase};
use crate::block::Policy;
use crate::time::Ns;
use crate::workload::LatencyTarget;

/// fio's `ETIMEDOUT`, the error of a job that misses its target at
/// depth 1 with a percentile of 100.
pub(crate) const ETIMEDOUT: i32 = 110;

/// One job's search.
#[derive(Clone, Debug)]
pub(crate) struct LatencySearch {
    pub target: LatencyTarget,
    /// The depth the job may use (fio's `latency_qd`), and the bounds of
    /// the search.
    pub qd: u32,
    pub low: u32,
    pub high: u32,
    /// The last window, at the depth found, is running.
    pub end_run: bool,
    pub window_start: Ns,
    pub window_ios: u64,
    pub failed: u64,
    /// Waiting for the IOs in flight before going on (a lower depth).
    pub quiesce: bool,
}

impl LatencySearch {
    pub(crate) fn new(target: LatencyTarget, iodepth: u32, now: Ns, ios: u64) -> Self {
        LatencySearch {
            target,
            qd: 1,
            low: 1,
            high: iodepth.max(1),
            end_run: false,
            window_start: now,
            window_ios: ios,
            failed: 0,
            quiesce: false,
        }
    }

    fn new_cycle(&mut self, now: Ns, ios: u64) {
        self.window_start = now;
        self.window_ios = ios;
        self.failed = 0;
    }

    /// A lower depth after a failed window; `false` at depth 1.
    fn ramp_down(&mut self, now: Ns, ios: u64) -> bool {
        if self.qd == 1 {
            return false;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = (self.qd + self.low) / 2;
        self.quiesce = true;
        self.new_cycle(now, ios);
        true
    }

    /// A higher depth after a good window: what it leads to.
    fn ramp_up(&mut self, now: Ns, ios: u64, iodepth: u32) -> Verdict {
        let run = self.target.run;
        let qd = self.qd;
        self.low = self.qd;
        self.qd = if self.high != iodepth {
            (self.qd + self.high) / 2
        } else {
            self.qd * 2
        }
        .min(iodepth);
        let verdict = if self.qd != qd || run {
            Verdict::Deeper
        } else if self.end_run {
            Verdict::Done
        } else {
            self.end_run = true;
            self.quiesce = true;
            Verdict::LastWindow
        };
        self.new_cycle(now, ios);
        verdict
    }
}

/// What a window's check leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Wait,
    Deeper,
    Shallower,
    LastWindow,
    Done,
}

impl<P: Policy> World<P> {
    /// Whether context `c` of job `j` waits for the job's depth before
    /// its next IO (fio's `queue_full` and `io_u_quiesce`).
    pub(crate) fn depth_waits(&mut self, c: u32, j: usize) -> bool {
        let job = &self.jobs[j];
        let Some(s) = job.latency.as_ref() else {
            return false;
        };
        let waits = (s.quiesce && job.in_flight > 0) || c - job.ctx_first >= s.qd;
        if waits {
            self.ctxs[c as usize].phase = Phase::DepthWait;
        }
        waits
    }

    /// An IO of job `j` completed at `now`, `lat` after its submission.
    pub(crate) fn latency_completed(&mut self, now: Ns, j: usize, lat: Ns) {
        let job = &mut self.jobs[j];
        let iodepth = job.plan.iodepth;
        let ios = job.done_ios;
        let Some(s) = job.latency.as_mut() else {
            return;
        };
        let t = s.target;
        let mut verdict = Verdict::Wait;
        if lat > t.target_ns {
            if t.percentile >= 100.0 {
                verdict = if s.ramp_down(now, ios) {
                    Verdict::Shallower
                } else {
                    // fio ends the job with ETIMEDOUT.
                    self.job_failed(now, j, ETIMEDOUT);
                    return;
                };
            } else {
                s.failed += 1;
            }
        }
        if verdict == Verdict::Wait && now - s.window_start >= t.window_ns {
            let n = ios - s.window_ios;
            let ok = 100.0 * (n - s.failed.min(n)) as f64 / n.max(1) as f64;
            verdict = if n > 0 && ok >= t.percentile {
                s.ramp_up(now, ios, iodepth)
            } else if s.ramp_down(now, ios) {
                Verdict::Shallower
            } else {
                // fio leaves a failed window at depth 1 as it is.
                Verdict::Wait
            };
        }
        match verdict {
            Verdict::Done => self.on_deadline(now, j as u32),
            Verdict::LastWindow => {
                // Only the last window, at the depth found, is reported.
                let job = &mut self.jobs[j];
                job.stats = Some(job.stats_from(now));
                job.stats_depth();
                self.wake_depth(now, j);
            }
            _ => self.wake_depth(now, j),
        }
    }

    /// A context of job `j` finished (its IO is done): the ones waiting for
    /// the depth look again, and find it done too.
    pub(crate) fn depth_release(&mut self, now: Ns, j: usize) {
        let job = &self.jobs[j];
        if job.latency.is_some() {
            self.wake_depth_waiters(now, j, job.nctx);
        }
    }

    /// The contexts of job `j` waiting for its depth that may now go on.
    fn wake_depth(&mut self, now: Ns, j: usize) {
        let job = &mut self.jobs[j];
        let Some(s) = job.latency.as_mut() else {
            return;
        };
        if s.quiesce && job.in_flight == 0 {
            s.quiesce = false;
        }
        if s.quiesce || job.state != JobState::Running {
            return;
        }
        let qd = s.qd.min(job.nctx);
        self.wake_depth_waiters(now, j, qd);
    }

    /// The first `count` contexts of job `j` that wait for its depth look
    /// again.
    fn wake_depth_waiters(&mut self, now: Ns, j: usize, count: u32) {
        let first = self.jobs[j].ctx_first;
        for c in first..first + count {
            if self.ctxs[c as usize].phase == Phase::DepthWait {
                self.ctx_timer(now, c, Phase::Sleep);
            }
        }
    }
}
