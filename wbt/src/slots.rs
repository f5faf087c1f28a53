//! Where a [`Wbt`](crate::Wbt) keeps its per-class counters: tracked
//! requests in flight and waiters (kernel: `struct rq_wait`'s `inflight`
//! atomic and its wait queue's sleepers).
//!
//! The core is generic over this store. [`LocalSlots`], the default, keeps
//! plain integers: the simulator and single-threaded engines use it. A face
//! shared by threads keeps the counters in atomics instead, so a lockless
//! fast path can take and give back slots with one compare-and-swap while
//! the core, under the face's lock, sees the same counters
//! ([`Throttle`](crate::Throttle) does this).
//!
//! Each method is one indivisible step on the counters of one class. The
//! limit passed in is the core's decision; the store only compares and
//! counts.

use crate::{Class, NUM_CLASSES};

/// What [`Slots::release`] saw when it gave a slot back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Released {
    /// Requests of the class still in flight after the release.
    pub inflight: u32,
    /// Whether the class had waiters at the moment of the release.
    pub has_waiters: bool,
}

/// The per-class counters of a [`Wbt`](crate::Wbt). `limit: None` means
/// unlimited (the latency target is 0).
pub trait Slots {
    /// Tracked requests of `class` in flight.
    fn inflight(&self, class: Class) -> u32;

    /// Waiters of `class`: queued, or between the fast path and the queue.
    fn waiting(&self, class: Class) -> u32;

    /// A newcomer (kernel: the check at the top of `rq_qos_wait`): take a
    /// slot if the class is below `limit` and, when `fifo`, has no waiters;
    /// otherwise count the newcomer as a waiter. Returns whether it took a
    /// slot.
    fn admit_or_wait(&mut self, class: Class, limit: Option<u32>, fifo: bool) -> bool;

    /// Like [`admit_or_wait`](Self::admit_or_wait) but a refusal leaves
    /// nothing behind ([`Wbt::on_try_throttle`](crate::Wbt::on_try_throttle)).
    fn try_take(&mut self, class: Class, limit: Option<u32>, fifo: bool) -> bool;

    /// A waiter is served (kernel: `rq_wait_inc_below` for a sleeper): take
    /// a slot if below `limit`, and leave the waiter count in the same
    /// step. Returns whether it took a slot.
    fn grant_waiter(&mut self, class: Class, limit: Option<u32>) -> bool;

    /// A waiter gave up without a slot.
    fn cancel_waiter(&mut self, class: Class);

    /// Give back a slot of `class`. `None` if the class had none (an
    /// underflow: nothing changes).
    fn release(&mut self, class: Class) -> Option<Released>;
}

/// The default store: plain counters, for an owner that serialises every
/// call (the simulator, a single-threaded engine, a face that locks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LocalSlots {
    inflight: [u32; NUM_CLASSES],
    waiting: [u32; NUM_CLASSES],
}

fn below(n: u32, limit: Option<u32>) -> bool {
    limit.is_none_or(|l| n < l)
}

impl Slots for LocalSlots {
    #[inline]
    fn inflight(&self, class: Class) -> u32 {
        self.inflight[class.index()]
    }

    #[inline]
    fn waiting(&self, class: Class) -> u32 {
        self.waiting[class.index()]
    }

    #[inline]
    fn admit_or_wait(&mut self, class: Class, limit: Option<u32>, fifo: bool) -> bool {
        if self.try_take(class, limit, fifo) {
            return true;
        }
        let i = class.index();
        self.waiting[i] = self.waiting[i].saturating_add(1);
        false
    }

    #[inline]
    fn try_take(&mut self, class: Class, limit: Option<u32>, fifo: bool) -> bool {
        let i = class.index();
        if (fifo && self.waiting[i] > 0) || !below(self.inflight[i], limit) {
            return false;
        }
        self.inflight[i] = self.inflight[i].saturating_add(1);
        true
    }

    #[inline]
    fn grant_waiter(&mut self, class: Class, limit: Option<u32>) -> bool {
        let i = class.index();
        if !below(self.inflight[i], limit) {
            return false;
        }
        self.inflight[i] = self.inflight[i].saturating_add(1);
        self.waiting[i] = self.waiting[i].saturating_sub(1);
        true
    }

    #[inline]
    fn cancel_waiter(&mut self, class: Class) {
        let i = class.index();
        self.waiting[i] = self.waiting[i].saturating_sub(1);
    }

    #[inline]
    fn release(&mut self, class: Class) -> Option<Released> {
        let i = class.index();
        let n = self.inflight[i].checked_sub(1)?;
        self.inflight[i] = n;
        Some(Released {
            inflight: n,
            has_waiters: self.waiting[i] > 0,
        })
    }
}
