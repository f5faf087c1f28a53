//! The rq-qos hooks a block layer calls (kernel: `wbt_wait`, `wbt_track`,
//! `wbt_issue`, `wbt_requeue`, `wbt_done`, `wbt_cleanup`) and the
//! dirty-throttle signal.

use crate::{Class, DepthPolicy, Op, OpFlags, ReqFlags, Slots, Variant, Wbt};

/// Outcome of [`Wbt::on_throttle`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Proceed; store these flags on the request (they may be empty).
    Go(ReqFlags),
    /// Over the limit: queue the bio at the tail of your FIFO for this class
    /// and wait for a [`Wake`](crate::Wake).
    Wait(Class),
}

/// A request as WBT sees it at issue and completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rq {
    /// Caller's request identity (kernel: the request pointer, used as the
    /// stuck-read cookie). Must be unique among requests in flight.
    pub id: u64,
    /// Operation.
    pub op: Op,
    /// Flags from [`Admit::Go`], [`ReqFlags::tracked`] or [`Wbt::on_track`].
    pub flags: ReqFlags,
}

impl<S: Slots, D: DepthPolicy> Wbt<S, D> {
    /// A bio is submitted (kernel: `wbt_wait`). Untracked bios go at once
    /// (a read stamps "recent read issue"). A tracked bio goes if its class
    /// has no waiters and is below the live limit; otherwise the core
    /// counts it as a waiter and you queue it. An admission arms the
    /// window if none runs. The v5 variant lets newcomers overtake
    /// sleepers, as the 2016 code did.
    #[inline]
    pub fn on_throttle(&mut self, now: u64, op: Op, flags: OpFlags) -> Admit {
        match self.enter(now, op, flags, true) {
            Ok(f) => Admit::Go(f),
            Err(class) => Admit::Wait(class),
        }
    }

    /// [`on_throttle`](Self::on_throttle) for a caller that will not wait
    /// (a `try_acquire`): the flags to store if the bio may go now, `None`
    /// if it would have to wait. A refusal leaves no waiter counted.
    pub fn on_try_throttle(&mut self, now: u64, op: Op, flags: OpFlags) -> Option<ReqFlags> {
        self.enter(now, op, flags, false).ok()
    }

    /// The admission both take: `Ok(flags)` to go, `Err(class)` refused
    /// (counted as a waiter only if `wait`).
    #[inline]
    fn enter(&mut self, now: u64, op: Op, flags: OpFlags, wait: bool) -> Result<ReqFlags, Class> {
        let f = self.classify(op, flags);
        let Some(class) = f.class() else {
            let stamp = match self.variant {
                Variant::Modern => f.contains(ReqFlags::READ),
                Variant::V5_2016 => self.enabled(),
            };
            if stamp {
                self.last_issue = now;
            }
            return Ok(f);
        };
        let limit = self.admission_limit(now, class, flags);
        let fifo = self.variant == Variant::Modern;
        let took = if wait {
            self.slots.admit_or_wait(class, limit, fifo)
        } else {
            self.slots.try_take(class, limit, fifo)
        };
        if !took {
            return Err(class);
        }
        self.arm_if_idle(now);
        Ok(f)
    }

    /// Try to grant a slot to a queued waiter of `class` with op flags
    /// `flags` (kernel: the `wbt_inflight_cb` check run by the waker, or
    /// the v5 waiter's own recheck). On `true` the waiter leaves the
    /// core's waiter count and holds a slot; give its request
    /// [`ReqFlags::tracked`]`(class)`. Arms the window if none runs.
    pub fn try_admit(&mut self, now: u64, class: Class, flags: OpFlags) -> bool {
        let limit = self.admission_limit(now, class, flags);
        if !self.slots.grant_waiter(class, limit) {
            return false;
        }
        self.arm_if_idle(now);
        true
    }

    /// A queued waiter gave up without a slot (e.g. its task was killed).
    pub fn on_wait_cancelled(&mut self, class: Class) {
        self.slots.cancel_waiter(class);
    }

    /// A bio becomes a request (kernel: `wbt_track`): the flags to store,
    /// recomputed from scratch like the kernel does. They equal the flags
    /// [`on_throttle`](Self::on_throttle) gave unless the enable state
    /// changed in between, which the caller must prevent by quiescing
    /// (else the inflight count of a request tracked under one setting and
    /// completed under another goes wrong).
    pub fn on_track(&self, op: Op, flags: OpFlags) -> ReqFlags {
        self.classify(op, flags)
    }

    /// A request goes to the device at `now` (kernel: `wbt_issue`). The
    /// first read issued while no read is watched becomes the stuck-read
    /// cookie (v5: any untracked request).
    pub fn on_issue(&mut self, now: u64, rq: Rq) {
        if !self.enabled() || self.sync.is_some() {
            return;
        }
        let watch = match self.variant {
            Variant::Modern => rq.flags.contains(ReqFlags::READ),
            Variant::V5_2016 => !rq.flags.contains(ReqFlags::TRACKED),
        };
        if watch {
            self.sync = Some((rq.id, now));
        }
    }

    /// A request is put back for reissue (kernel: `wbt_requeue`).
    pub fn on_requeue(&mut self, rq: Rq) {
        if self.enabled() && self.sync.is_some_and(|(id, _)| id == rq.id) {
            self.sync = None;
        }
    }

    /// A request completed at `now`, or was freed after a merge (kernel:
    /// `blk_stat_add` + `wbt_done`). `issue_ns` is its device-issue time,
    /// `None` if it never reached the device (no latency sample). Returns
    /// whether this completion wakes its class's waiters (the wake is also
    /// queued for [`poll_wake`](Self::poll_wake)).
    #[inline]
    pub fn on_done(&mut self, now: u64, rq: Rq, issue_ns: Option<u64>) -> bool {
        if let Some(issue) = issue_ns {
            self.record_sample(now, rq.op, issue);
        }
        match rq.flags.class() {
            None => {
                if self.sync.is_some_and(|(id, _)| id == rq.id) {
                    self.sync = None;
                }
                let stamp = match self.variant {
                    Variant::Modern => rq.flags.contains(ReqFlags::READ) && self.enabled(),
                    Variant::V5_2016 => self.enabled(),
                };
                if stamp {
                    self.last_comp = now;
                }
                false
            }
            Some(class) => self.release(now, class, rq.flags),
        }
    }

    /// A throttled bio did not become its own request (kernel:
    /// `wbt_cleanup`): give back its slot. Classification is recomputed, as
    /// in the kernel. Returns whether waiters are woken.
    pub fn on_cleanup(&mut self, now: u64, op: Op, flags: OpFlags) -> bool {
        let f = self.classify(op, flags);
        match f.class() {
            Some(class) => self.release(now, class, f),
            None => false,
        }
    }

    /// A writer went to sleep in dirty-page balancing at `now` (modern:
    /// stamps `last_bdp_sleep`; v5: one more sleeper until
    /// [`on_dirty_throttle_end`](Self::on_dirty_throttle_end)).
    pub fn on_dirty_throttle(&mut self, now: u64) {
        self.last_dirty_sleep = Some(now);
        self.dirty_sleeping = self.dirty_sleeping.saturating_add(1);
    }

    /// A writer left dirty-page balancing (only the v5 variant cares).
    pub fn on_dirty_throttle_end(&mut self, _now: u64) {
        self.dirty_sleeping = self.dirty_sleeping.saturating_sub(1);
    }
}
