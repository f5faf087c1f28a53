//! Preemptive flushing: the 2019 trigger that borrows the
//! ticket worker (kernel: `need_do_async_reclaim`), and the 2021 worker
//! with its clamp (kernel: `need_preemptive_reclaim`,
//! `btrfs_preempt_reclaim_metadata_space`, `maybe_clamp_preempt`).

use crate::FlushPolicy;
use crate::consts::{CLAMP_MAX, CLAMP_MIN, PREEMPT_MIN_FLUSHABLE, pct};
use crate::{Actor, FlushKind, FlushModel, FlushState, Preempt, TraceRecord};

/// The 2021 worker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PreemptWorker {
    pub queued: bool,
    pub running: bool,
    pub loops: u32,
    pub job: Option<crate::JobId>,
    pub wait_commit: Option<u64>,
    /// The last state could do nothing (its heads were all claimed by
    /// other runners): wait for the next event instead of spinning in the
    /// pump (the kernel loop would spin on `cond_resched` until the other
    /// runner finishes, which only an event can tell here).
    pub parked: bool,
}

impl<P: FlushPolicy> FlushModel<P> {
    /// After a successful metadata reservation: maybe start preemptive
    /// flushing (kernel: `__reserve_bytes`).
    pub(crate) fn maybe_queue_preempt(&mut self) {
        match self.policy.preempt {
            Preempt::Off => {}
            Preempt::Weak2019 => {
                if !self.reclaim.running && !self.reclaim.queued && self.need_async_2019() {
                    self.queue_reclaim(false);
                }
            }
            Preempt::Clamped2021 => {
                if !self.preempt.running && !self.preempt.queued && self.need_preempt() {
                    self.preempt.queued = true;
                }
            }
        }
    }

    /// `need_do_async_reclaim` (before 5.12): usage after the reservation
    /// reached 98 % while `used + reserved` is below it and there is
    /// something to reclaim.
    pub fn need_async_2019(&self) -> bool {
        let s = &self.space;
        let thresh = pct(s.total, 98);
        if s.used + s.reserved >= thresh {
            return false;
        }
        if self.calc_reclaim() == 0 {
            return false;
        }
        s.used_all() >= thresh
    }

    /// `need_preemptive_reclaim` (5.12+).
    pub fn need_preempt(&self) -> bool {
        let s = &self.space;
        let g = self.global.reserved;
        if s.used + s.reserved + g >= pct(s.total, self.policy.preempt_full_pct) {
            return false;
        }
        let flushable = s.may_use + s.pinned;
        if g >= flushable || flushable - g <= PREEMPT_MIN_FLUSHABLE {
            return false;
        }
        if self.tickets.reclaim_size > 0 {
            return false;
        }
        let mut thresh = s.avail(FlushKind::FlushAll);
        let used = s.used + s.reserved + s.readonly + g;
        thresh += s.total.saturating_sub(used);
        thresh >>= self.clamp;
        let x = s.pinned
            + if self.ordered_bytes / 2 >= self.delalloc_bytes {
                self.delayed_refs.reserved + self.delayed_items.reserved
            } else {
                s.may_use - g
            };
        x >= thresh
    }

    /// `clamp = min(clamp + 1, 8)` when a normal ticket had to be made.
    pub(crate) fn bump_clamp(&mut self) {
        let c = (self.clamp + 1).min(CLAMP_MAX);
        if c != self.clamp {
            self.clamp = c;
            let now = self.now;
            self.trace(TraceRecord::Clamp { now, clamp: c });
        }
    }

    /// Which pool to flush and how much (kernel:
    /// `btrfs_preempt_reclaim_metadata_space`).
    fn preempt_pick(&self) -> (FlushState, u64) {
        let g = self.global.reserved;
        let items = self.delayed_items.reserved;
        let refs = self.delayed_refs.reserved;
        let blk = items + refs + self.trans.reserved;
        let delalloc = self.space.may_use.saturating_sub(g + blk);
        let (state, bytes) = if delalloc > blk {
            (FlushState::Delalloc, delalloc)
        } else if self.space.pinned > items + refs {
            (FlushState::CommitTrans, self.space.pinned)
        } else if items > refs {
            (FlushState::DelayedItemsNr, items)
        } else {
            (FlushState::DelayedRefsNr, refs)
        };
        let quarter = bytes >> 2;
        (state, if quarter == 0 { self.unit } else { quarter })
    }

    /// One step of the 2021 worker.
    pub(crate) fn advance_preempt(&mut self) -> bool {
        if !self.preempt.running {
            if !self.preempt.queued {
                return false;
            }
            self.preempt.queued = false;
            self.preempt.running = true;
            self.preempt.loops = 0;
        }
        if self.preempt.parked
            || self.preempt.job.is_some()
            || !self.commit_waited(self.preempt.wait_commit)
        {
            return false;
        }
        self.preempt.wait_commit = None;
        if self.need_preempt() {
            self.preempt.loops += 1;
            let (state, bytes) = self.preempt_pick();
            let (job, wait) = self.do_flush(Actor::Preempt, state, bytes);
            self.preempt.job = job;
            self.preempt.wait_commit = wait;
            self.preempt.parked = job.is_none() && wait.is_none();
            return true;
        }
        if self.preempt.loops == 1 && self.tickets.reclaim_size == 0 {
            let c = (self.clamp - 1).max(CLAMP_MIN);
            if c != self.clamp {
                self.clamp = c;
                let now = self.now;
                self.trace(TraceRecord::Clamp { now, clamp: c });
            }
        }
        self.preempt.running = false;
        true
    }
}
