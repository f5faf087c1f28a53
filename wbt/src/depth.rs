//! Depth controller: the maximum depth and limits at a step
//! (kernel: `rq_depth_calc_max_depth`, `calc_wb_limits`) and stepping
//! (kernel: `scale_up`, `scale_down`, `wbt_update_limits`).

use crate::depth_policy::{check_limits, check_step};
use crate::{
    DEF_DEPTH, DepthError, DepthNow, DepthPolicy, Slots, TraceRecord, V5_MAX_DEPTH, Variant, Wbt,
};

/// Maximum depth at `step` for queue depth `qd`, and whether a cap was hit
/// (kernel: `rq_depth_calc_max_depth`; v5: the `wb_max` line of
/// `calc_wb_limits`, which has no cap).
pub fn calc_max_depth(variant: Variant, qd: u32, step: i32) -> (u32, bool) {
    let qd = qd.max(1);
    match variant {
        Variant::V5_2016 => {
            let d = u64::from(V5_MAX_DEPTH.min(qd));
            let shift = step.clamp(0, 31) as u32;
            ((1 + ((d - 1) >> shift)) as u32, false)
        }
        Variant::Modern => {
            if qd == 1 {
                // One request in service and one ready behind it.
                return if step > 0 { (1, false) } else { (2, true) };
            }
            let d = u64::from(DEF_DEPTH.min(qd));
            if step > 0 {
                let shift = step.min(31) as u32;
                ((1 + ((d - 1) >> shift)) as u32, false)
            } else if step < 0 {
                let cap = 3 * u64::from(qd) / 4;
                let shift = step.unsigned_abs().min(63);
                let depth = if d - 1 > u64::MAX >> (shift + 1) {
                    u64::MAX
                } else {
                    1 + ((d - 1) << shift)
                };
                if depth > cap {
                    (cap as u32, true)
                } else {
                    (depth as u32, false)
                }
            } else {
                (d as u32, false)
            }
        }
    }
}

/// Normal and background limits for a maximum depth (kernel: `calc_wb_limits`).
/// Returns `(normal, background)`; both are 0 when the target is 0.
pub fn calc_limits(variant: Variant, max_depth: u32, min_lat_ns: u64) -> (u32, u32) {
    if min_lat_ns == 0 {
        return (0, 0);
    }
    match variant {
        Variant::Modern if max_depth <= 2 => (max_depth, 1),
        _ => (max_depth.div_ceil(2), max_depth.div_ceil(4)),
    }
}

/// Direction of a depth step, as the `wbt_step` tracepoint's message says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepDir {
    /// Depth relaxed: "scale up" (modern) / "step up" (v5).
    Up,
    /// Depth squeezed: "scale down" (modern) / "step down" (v5).
    Down,
}

impl<S: Slots, D: DepthPolicy> Wbt<S, D> {
    /// Where the controller stands, as a [`DepthPolicy`] is shown it.
    pub(crate) fn depth_now(&self) -> DepthNow {
        DepthNow {
            queue_depth: self.queue_depth,
            step: self.step,
            limits: self.limits(),
            scaled_max: self.scaled_max,
        }
    }

    /// Move to `next` with the policy's depths there, checked; the
    /// latency target of 0 zeroes them (v5: `max_depth` too). Returns
    /// whether the depth was capped. On a broken rule nothing changes and
    /// the error is kept.
    pub(crate) fn recompute_at(&mut self, next: i32) -> Result<bool, DepthError> {
        let at = self.depth.limits(self.queue_depth, next);
        let at = check_limits(self.queue_depth, self.step, next, at).map_err(|e| self.refuse(e))?;
        let mut l = at.limits;
        if self.min_lat_ns == 0 {
            l.normal = 0;
            l.background = 0;
            if self.variant == Variant::V5_2016 {
                // v5 zeroes wb_max along with the other limits.
                l.max_depth = 0;
            }
        }
        self.step = next;
        self.max_depth = l.max_depth;
        self.normal = l.normal;
        self.background = l.background;
        Ok(at.capped)
    }

    /// Keep the first refusal of the policy's answers, and hand it back.
    pub(crate) fn refuse(&mut self, e: DepthError) -> DepthError {
        self.depth_error.get_or_insert(e);
        e
    }

    /// The first answer of the depth policy the core refused, if any
    /// (see [`DepthPolicy`]). Our variants never have one.
    pub fn depth_error(&self) -> Option<DepthError> {
        self.depth_error
    }

    /// The depth policy in use.
    pub fn depth_policy(&self) -> &D {
        &self.depth
    }

    /// Step toward deeper queues (kernel: `scale_up`) as the policy says.
    /// Returns whether anything changed.
    pub(crate) fn scale_up(&mut self, now: u64) -> Result<bool, DepthError> {
        let at = self.depth_now();
        let Some(next) = self.depth.scale_up(at) else {
            return Ok(false);
        };
        let next = check_step(at, next, true).map_err(|e| self.refuse(e))?;
        self.scaled_max = self.recompute_at(next)?;
        self.unknown_cnt = 0;
        self.wake_all();
        self.trace_step(now, StepDir::Up);
        Ok(true)
    }

    /// Step toward shallower queues (kernel: `scale_down`) as the policy
    /// says; `hard` for a window whose reads missed the target.
    pub(crate) fn scale_down(&mut self, now: u64, hard: bool) -> Result<bool, DepthError> {
        let at = self.depth_now();
        let Some(next) = self.depth.scale_down(at, hard) else {
            return Ok(false);
        };
        let next = check_step(at, next, false).map_err(|e| self.refuse(e))?;
        self.recompute_at(next)?;
        self.scaled_max = false;
        self.unknown_cnt = 0;
        self.trace_step(now, StepDir::Down);
        Ok(true)
    }

    /// Step 0, limits recomputed, everyone woken (kernel: `wbt_update_limits`).
    /// A refused answer keeps the depths and is kept.
    pub(crate) fn reset_limits(&mut self) {
        if self.recompute_at(0).is_ok() {
            self.scaled_max = false;
        }
        self.wake_all();
    }

    fn trace_step(&mut self, now: u64, dir: StepDir) {
        self.push_trace(TraceRecord::Step {
            now,
            dir,
            step: self.step,
            window_ns: self.cur_win_ns,
            background: self.background,
            normal: self.normal,
            max: self.max_depth,
        });
    }
}
