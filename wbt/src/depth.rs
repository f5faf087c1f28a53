//! Depth controller: the maximum depth and limits at a step
//! (kernel: `rq_depth_calc_max_depth`, `calc_wb_limits`) and stepping
//! (kernel: `scale_up`, `scale_down`, `wbt_update_limits`).

use crate::{DEF_DEPTH, Slots, TraceRecord, V5_MAX_DEPTH, Variant, Wbt};

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

impl<S: Slots> Wbt<S> {
    pub(crate) fn recompute(&mut self) -> bool {
        let (mut d, cap) = calc_max_depth(self.variant, self.queue_depth, self.step);
        if self.variant == Variant::V5_2016 && self.min_lat_ns == 0 {
            // v5 zeroes wb_max along with the other limits.
            d = 0;
        }
        self.max_depth = d;
        let (n, b) = calc_limits(self.variant, d, self.min_lat_ns);
        self.normal = n;
        self.background = b;
        cap
    }

    /// Step toward deeper queues (kernel: `scale_up`). Returns whether
    /// anything changed.
    pub(crate) fn scale_up(&mut self, now: u64) -> bool {
        match self.variant {
            Variant::Modern => {
                if self.scaled_max {
                    return false;
                }
                self.step -= 1;
                self.scaled_max = self.recompute();
            }
            Variant::V5_2016 => {
                if self.step == 0 {
                    return false;
                }
                self.step -= 1;
                self.recompute();
            }
        }
        self.unknown_cnt = 0;
        self.wake_all();
        self.trace_step(now, StepDir::Up);
        true
    }

    /// Step toward shallower queues (kernel: `scale_down`); `hard` snaps a
    /// negative step back to 0.
    pub(crate) fn scale_down(&mut self, now: u64, hard: bool) -> bool {
        if self.max_depth == 1 {
            return false;
        }
        match self.variant {
            Variant::Modern => {
                if self.step < 0 && hard {
                    self.step = 0;
                } else {
                    self.step += 1;
                }
                self.scaled_max = false;
            }
            Variant::V5_2016 => self.step += 1,
        }
        self.recompute();
        self.unknown_cnt = 0;
        self.trace_step(now, StepDir::Down);
        true
    }

    /// Step 0, limits recomputed, everyone woken (kernel: `wbt_update_limits`).
    pub(crate) fn reset_limits(&mut self) {
        self.step = 0;
        self.scaled_max = false;
        self.recompute();
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
