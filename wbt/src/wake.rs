//! Releasing slots and waking waiters (kernel: `wbt_rqw_done`,
//! `rwb_wake_all`; v5: `__wbt_done`).

use crate::{Class, DepthPolicy, ReqFlags, Slots, Variant, Wbt};

/// How to serve a class's waiters after a wake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeMode {
    /// Modern: walk the FIFO from the head calling [`Wbt::try_admit`] with
    /// each waiter's flags; stop at the first `false` (kernel:
    /// `rq_qos_wake_function` granting under the queue lock).
    GrantFifo,
    /// v5 `wake_up_all`: every waiter rechecks once, in FIFO order; those
    /// refused stay queued and later ones may still succeed.
    RecheckAll,
    /// v5 `wake_up_nr(1)`: only the head waiter rechecks.
    RecheckOne,
}

/// A wake request for one class, drained with [`Wbt::poll_wake`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wake {
    /// The class whose waiters should be served.
    pub class: Class,
    /// How to serve them.
    pub mode: WakeMode,
}

impl<S: Slots, D: DepthPolicy> Wbt<S, D> {
    /// Give back a slot and decide whether to wake (kernel: `wbt_rqw_done`;
    /// v5: `__wbt_done`).
    pub(crate) fn release(&mut self, now: u64, class: Class, flags: ReqFlags) -> bool {
        let (n, has_waiters) = match self.slots.release(class) {
            Some(r) => (r.inflight, r.has_waiters),
            None => {
                self.underflows += 1;
                (0, self.slots.waiting(class) > 0)
            }
        };
        match self.variant {
            Variant::Modern => {
                let wake_limit = if flags.contains(ReqFlags::DISCARD) {
                    self.background
                } else if self.write_cache && !self.dirty_signal(now) {
                    0
                } else {
                    self.normal
                };
                if n > 0 && n >= wake_limit {
                    return false;
                }
                let diff = i64::from(wake_limit) - i64::from(n);
                if has_waiters && (n == 0 || diff >= i64::from(self.background / 2)) {
                    self.queue_wake(class, WakeMode::GrantFifo);
                    return true;
                }
                false
            }
            Variant::V5_2016 => {
                let limit = if self.write_cache && !self.dirty_signal(now) {
                    0
                } else {
                    self.normal
                };
                if limit != 0 && n >= limit {
                    if self.max_depth == 0 && has_waiters {
                        self.queue_wake(class, WakeMode::RecheckAll);
                        return true;
                    }
                    return false;
                }
                let diff = i64::from(limit) - i64::from(n);
                if has_waiters && (n == 0 || diff >= i64::from(self.background / 2)) {
                    self.queue_wake(class, WakeMode::RecheckOne);
                    return true;
                }
                false
            }
        }
    }

    fn queue_wake(&mut self, class: Class, mode: WakeMode) {
        let slot = &mut self.wakes[class.index()];
        *slot = match (*slot, mode) {
            (Some(WakeMode::GrantFifo), _) | (_, WakeMode::GrantFifo) => Some(WakeMode::GrantFifo),
            (Some(WakeMode::RecheckAll), _) | (_, WakeMode::RecheckAll) => {
                Some(WakeMode::RecheckAll)
            }
            _ => Some(WakeMode::RecheckOne),
        };
    }

    /// Wake every class that has waiters (kernel: `rwb_wake_all`).
    pub(crate) fn wake_all(&mut self) {
        for class in Class::ALL {
            self.wake_class(class);
        }
    }

    /// Wake `class`'s waiters as [`wake_all`](Self::wake_all) would, if it
    /// has any: the userspace face's call after a waiter left the queue
    /// without a slot (no kernel counterpart: `rq_qos_wait` sleeps
    /// uninterruptibly), so that those behind it are not held by it.
    pub(crate) fn wake_class(&mut self, class: Class) {
        let mode = match self.variant {
            Variant::Modern => WakeMode::GrantFifo,
            Variant::V5_2016 => WakeMode::RecheckAll,
        };
        if self.slots.waiting(class) > 0 {
            self.queue_wake(class, mode);
        }
    }

    /// The next class whose waiters should be served, in class order.
    pub fn poll_wake(&mut self) -> Option<Wake> {
        for class in Class::ALL {
            if let Some(mode) = self.wakes[class.index()].take() {
                return Some(Wake { class, mode });
            }
        }
        None
    }
}
