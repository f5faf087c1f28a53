//! Window expiry (kernel: `wb_timer_fn`): the [`Verdict`] (kernel:
//! `latency_exceeded`) reached from a window's [`WindowInputs`], and the
//! step it leads to ([`WindowOutcome`]).
//!
//! [`Wbt::on_timer`] gathers the inputs from the core's own accumulators.
//! A caller that watched the window from outside, such as a replay of a
//! kernel trace, gives them to [`Wbt::expire_window`] instead, or splits it
//! into [`Wbt::evaluate_window`] and [`Wbt::apply_verdict`].

use crate::window::{READ_BUCKET, WRITE_BUCKET, window_ns};
use crate::{
    Class, DepthError, DepthPolicy, Limits, MIN_READ_SAMPLES, MIN_WRITE_SAMPLES, Slots, StepDir,
    TraceRecord, UNKNOWN_BUMP, Variant, Wbt, WindowStat,
};

/// Window verdict (kernel: `LAT_*` returned by `latency_exceeded`). The
/// discriminants are the kernel's, as `wbt_timer` prints them (`status=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Reads met the target: relax (`LAT_OK`).
    Ok = 1,
    /// Not enough data and nothing going on (`LAT_UNKNOWN`).
    Unknown = 2,
    /// Not enough data but writes are going on: relax (`LAT_UNKNOWN_WRITES`, modern only).
    UnknownWrites = 3,
    /// Reads missed the target, or a read is stuck: squeeze (`LAT_EXCEEDED`).
    Exceeded = 4,
}

impl Verdict {
    /// The verdict a `wbt_timer` `status=` value names, `None` for another
    /// number.
    pub fn from_status(status: u32) -> Option<Verdict> {
        match status {
            1 => Some(Verdict::Ok),
            2 => Some(Verdict::Unknown),
            3 => Some(Verdict::UnknownWrites),
            4 => Some(Verdict::Exceeded),
            _ => None,
        }
    }

    /// The kernel's number for this verdict (`wbt_timer`'s `status=`).
    pub fn status(self) -> u32 {
        self as u32
    }
}

/// Everything a window's verdict is decided from (kernel: the statistics
/// handed to `latency_exceeded` and the state it reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowInputs {
    /// Read completions of the window (the `wbt_stat` `r*` fields).
    pub read: WindowStat,
    /// Write-direction completions of the window (the `w*` fields).
    pub write: WindowStat,
    /// How long the watched read has been in flight at the expiry, 0 when
    /// none is watched (kernel: `rwb_sync_issue_lat`; `wbt_lat` prints it
    /// when it decides the window).
    pub stuck_read_ns: u64,
    /// Modern: a writer slept in dirty-page balancing within the last
    /// second (kernel: `wb_recent_wait`). The v5 variant ignores it.
    pub recent_dirty_wait: bool,
    /// Tracked requests in flight at the expiry (kernel: `wbt_inflight`,
    /// `wbt_timer`'s `inflight=`).
    pub inflight: u32,
}

/// What one window expiry did (kernel: the effects of `wb_timer_fn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowOutcome {
    /// The verdict (`wbt_timer`'s `status=`).
    pub verdict: Verdict,
    /// `scale_step` before the expiry (`wbt_timer`'s `step=`).
    pub step_before: i32,
    /// Whether the depth changed (a `wbt_step` record), and which way.
    pub stepped: Option<StepDir>,
    /// `scale_step` after the expiry.
    pub step: i32,
    /// The expired window's length (`wbt_step`'s `window=`, which the
    /// kernel prints before it re-arms).
    pub window_ns: u64,
    /// The depths after the expiry (`wbt_step`'s `background`, `normal`,
    /// `max`).
    pub limits: Limits,
    /// A new window was armed (the step is not 0, or tracked IO was in
    /// flight).
    pub rearmed: bool,
    /// The depth policy's answer the core refused at this expiry (the
    /// depth then stays), `None` when it kept every rule.
    pub refused: Option<DepthError>,
}

impl<S: Slots, D: DepthPolicy> Wbt<S, D> {
    /// The verdict a window with `inputs` reaches at the current step
    /// (kernel: `latency_exceeded`). Pure: records no trace and changes
    /// nothing.
    pub fn evaluate_window(&self, inputs: &WindowInputs) -> Verdict {
        self.judge(inputs).0
    }

    /// The verdict and what `latency_exceeded` traces on the way: the
    /// latency `wbt_lat` prints and whether `wbt_stat` is printed.
    fn judge(&self, inputs: &WindowInputs) -> (Verdict, Option<u64>, bool) {
        let read = inputs.read;
        let write = inputs.write;
        let stuck = inputs.stuck_read_ns;
        if stuck > self.cur_win_ns || (stuck > self.min_lat_ns && read.nr_samples == 0) {
            return (Verdict::Exceeded, Some(stuck), false);
        }
        let valid = read.nr_samples >= MIN_READ_SAMPLES && write.nr_samples >= MIN_WRITE_SAMPLES;
        if !valid {
            let writes_going_on =
                write.nr_samples > 0 || inputs.recent_dirty_wait || inputs.inflight > 0;
            let verdict = match self.variant {
                Variant::Modern if writes_going_on => Verdict::UnknownWrites,
                _ => Verdict::Unknown,
            };
            return (verdict, None, false);
        }
        if read.min > self.min_lat_ns {
            return (Verdict::Exceeded, Some(read.min), true);
        }
        (Verdict::Ok, None, self.step != 0)
    }

    /// Timer callback (kernel: `wb_timer_fn`). Does nothing unless a window
    /// is armed and `now` has reached its deadline. Evaluates the window
    /// from the core's own accumulators and state, scales, and re-arms if
    /// the step is not 0 or tracked IO was inflight when the expiry
    /// started.
    pub fn on_timer(&mut self, now: u64) {
        match self.deadline {
            Some(d) if now >= d => {}
            _ => return,
        }
        let stuck_read_ns = match self.sync {
            Some((_, issue)) if self.enabled() => now.saturating_sub(issue),
            _ => 0,
        };
        let inputs = WindowInputs {
            read: self.stats[READ_BUCKET],
            write: self.stats[WRITE_BUCKET],
            stuck_read_ns,
            recent_dirty_wait: self.dirty_signal(now),
            inflight: self.total_inflight(),
        };
        self.expire_window(now, &inputs);
    }

    /// A window expires at `now` with `inputs` observed outside the core
    /// (kernel: `wb_timer_fn` on the statistics the block layer gathered):
    /// the verdict is reached, traced and acted on as
    /// [`on_timer`](Self::on_timer) does, and returned. The core's own
    /// accumulators are discarded. A window the core did not arm (its
    /// admission happened outside the core) is taken as armed at the
    /// current step, as the kernel arms it.
    pub fn expire_window(&mut self, now: u64, inputs: &WindowInputs) -> WindowOutcome {
        self.window_in_force();
        let (verdict, lat, stat) = self.judge(inputs);
        if let Some(lat_ns) = lat {
            self.push_trace(TraceRecord::Lat { now, lat_ns });
        }
        if stat {
            self.push_trace(TraceRecord::Stat {
                now,
                read: inputs.read,
                write: inputs.write,
            });
        }
        self.apply_verdict(now, verdict, inputs.inflight)
    }

    /// Act on a window's verdict at `now` (kernel: the scaling and re-arm
    /// of `wb_timer_fn`), with `inflight` tracked requests in flight at the
    /// expiry. Traces `wbt_timer` and any `wbt_step`. For a caller that
    /// knows the verdict but not the statistics behind it.
    pub fn apply_verdict(&mut self, now: u64, verdict: Verdict, inflight: u32) -> WindowOutcome {
        self.window_in_force();
        self.deadline = None;
        self.stats = [WindowStat::EMPTY; 2];
        let step_before = self.step;
        let window_ns = self.cur_win_ns;
        self.push_trace(TraceRecord::Timer {
            now,
            verdict,
            step: step_before,
            inflight,
        });
        let moved = match verdict {
            Verdict::Exceeded => self
                .scale_down(now, true)
                .map(|m| m.then_some(StepDir::Down)),
            Verdict::Ok | Verdict::UnknownWrites => {
                self.scale_up(now).map(|m| m.then_some(StepDir::Up))
            }
            Verdict::Unknown => {
                self.unknown_cnt = self.unknown_cnt.saturating_add(1);
                if self.unknown_cnt < UNKNOWN_BUMP {
                    Ok(None)
                } else if self.step > 0 {
                    self.scale_up(now).map(|m| m.then_some(StepDir::Up))
                } else if self.step < 0 {
                    self.scale_down(now, false)
                        .map(|m| m.then_some(StepDir::Down))
                } else {
                    Ok(None)
                }
            }
        };
        let (stepped, refused) = match moved {
            Ok(stepped) => (stepped, None),
            Err(e) => (None, Some(e)),
        };
        let rearmed = self.step != 0 || inflight > 0;
        if rearmed {
            self.arm_window(now);
        }
        WindowOutcome {
            verdict,
            step_before,
            stepped,
            step: self.step,
            window_ns,
            limits: self.limits(),
            rearmed,
            refused,
        }
    }

    /// The length of the window that is expiring: the armed one's, or, for
    /// a window armed outside the core, the current step's (as the kernel's
    /// `rwb_arm_timer` would have set it).
    fn window_in_force(&mut self) {
        if self.deadline.is_none() {
            self.cur_win_ns = window_ns(self.step);
        }
    }

    /// Put the controller at `step` with `unknown_cnt` windows of no data
    /// counted, the limits recomputed and no window armed: for a caller
    /// that joins a running device, such as a replay of a trace that starts
    /// mid-run (the kernel's state is not traced until it steps). The
    /// `scaled_max` flag is the one reaching `step` sets: a step at the
    /// queue-depth cap can only be reached by scaling up to it.
    /// A depth the policy gives there that breaks a rule is refused and
    /// kept for [`depth_error`](Self::depth_error); the depth then stays.
    pub fn resume_at(&mut self, step: i32, unknown_cnt: u32) {
        if let Ok(capped) = self.recompute_at(step) {
            self.scaled_max = step < 0 && capped;
        }
        self.unknown_cnt = unknown_cnt;
        self.deadline = None;
        self.stats = [WindowStat::EMPTY; 2];
        self.wake_all();
    }

    /// Consecutive windows of no data counted toward the next drift
    /// (kernel: `unknown_cnt`).
    pub fn unknown_cnt(&self) -> u32 {
        self.unknown_cnt
    }

    fn total_inflight(&self) -> u32 {
        Class::ALL
            .iter()
            .fold(0u32, |a, c| a.saturating_add(self.slots.inflight(*c)))
    }
}
