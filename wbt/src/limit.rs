//! Admission limits (kernel: `get_limit`, `rq_wait_inc_below`, spec §7) and
//! the signals they read: recent dirty throttling (`wb_recent_wait`) and
//! other IO close by (`close_io`).

use crate::{CLOSE_IO_NS, Class, Op, OpFlags, RECENT_DIRTY_WAIT_NS, Variant, Wbt};

impl Wbt {
    /// Dirty-throttle signal: modern "a writer slept within the last
    /// second" (kernel: `wb_recent_wait`), v5 "a writer is sleeping now".
    pub(crate) fn dirty_signal(&self, now: u64) -> bool {
        match self.variant {
            Variant::Modern => self
                .last_dirty_sleep
                .is_some_and(|t| now < t.saturating_add(RECENT_DIRTY_WAIT_NS)),
            Variant::V5_2016 => self.dirty_sleeping > 0,
        }
    }

    /// Other IO within 100 ms (kernel: `close_io`).
    fn close_io(&self, now: u64) -> bool {
        now < self.last_issue.saturating_add(CLOSE_IO_NS)
            || now < self.last_comp.saturating_add(CLOSE_IO_NS)
    }

    /// Admission limit for a tracked bio (kernel: `get_limit`, spec §7):
    /// discards → background; SYNC/META/PRIO/SWAP or recent dirty
    /// throttling → max; BACKGROUND or recent other IO → background;
    /// otherwise normal. v5: SYNC/META/PRIO or someone dirty-sleeping → max.
    pub fn get_limit(&self, now: u64, op: Op, flags: OpFlags) -> u32 {
        let hiprio = OpFlags::SYNC | OpFlags::META | OpFlags::PRIO;
        match self.variant {
            Variant::Modern => {
                if op == Op::Discard {
                    return self.background;
                }
                if flags.intersects(hiprio | OpFlags::SWAP) || self.dirty_signal(now) {
                    self.max_depth
                } else if flags.intersects(OpFlags::BACKGROUND) || self.close_io(now) {
                    self.background
                } else {
                    self.normal
                }
            }
            Variant::V5_2016 => {
                if flags.intersects(hiprio) || self.dirty_signal(now) {
                    self.max_depth
                } else if flags.intersects(OpFlags::BACKGROUND) || self.close_io(now) {
                    self.background
                } else {
                    self.normal
                }
            }
        }
    }

    fn class_limit(&self, now: u64, class: Class, flags: OpFlags) -> u32 {
        let op = if class == Class::Discard {
            Op::Discard
        } else {
            Op::Write
        };
        self.get_limit(now, op, flags)
    }

    /// Increment the class counter if it is below the limit (kernel:
    /// `rq_wait_inc_below`). With the target at 0 everything is admitted.
    pub(crate) fn inc_below(&mut self, now: u64, class: Class, flags: OpFlags) -> bool {
        let i = class.index();
        if self.min_lat_ns != 0 {
            let limit = self.class_limit(now, class, flags);
            if self.inflight[i] >= limit {
                return false;
            }
        }
        self.inflight[i] = self.inflight[i].saturating_add(1);
        true
    }
}
