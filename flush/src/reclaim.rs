//! The async reclaim worker for normal tickets (kernel:
//! `btrfs_async_reclaim_metadata_space`) and the flush-state executor all
//! flushers share (kernel: `flush_space`, `may_commit_transaction`,
//! `btrfs_calc_reclaim_metadata_size`).

use crate::FlushPolicy;
use crate::consts::{CHUNK_ALLOC_PCT, CHUNK_ALLOC_SLACK, MAX_COMMIT_CYCLES, MIB, pct};
use crate::{Actor, CommitSource, CommitView, FlushModel, FlushState, Preempt, TraceRecord};

/// Where the worker is in its loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Step {
    /// Compute `to_reclaim` and run the first state.
    #[default]
    Begin,
    /// A state ran; decide the next.
    AfterFlush,
}

/// The worker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reclaim {
    /// Queued to run (kernel: `queue_work`).
    pub queued: bool,
    pub running: bool,
    /// Queued again while running (a ticket arrived while a one-shot
    /// preemptive run was in progress).
    pub requeue: bool,
    pub step: Step,
    pub index: usize,
    pub commit_cycles: u32,
    pub last_tickets_id: u64,
    pub to_reclaim: u64,
    pub job: Option<crate::JobId>,
    pub wait_commit: Option<u64>,
    /// Passes that went past the final state since the worker started
    /// (never fewer than `commit_cycles`; checks ENOSPC soundness).
    pub passes: u32,
}

impl<P: FlushPolicy> FlushModel<P> {
    /// Queue the worker; `from_ticket` means the ticket path, which
    /// re-queues a running worker (the preemptive path does not).
    pub(crate) fn queue_reclaim(&mut self, from_ticket: bool) {
        if self.reclaim.running {
            if from_ticket {
                self.reclaim.requeue = true;
            }
        } else {
            self.reclaim.queued = true;
        }
    }

    /// `to_reclaim` (kernel: `btrfs_calc_reclaim_metadata_size`): the bytes
    /// of waiting tickets (5.12+: plus the overcommit overage); with no
    /// ticket before 5.12, what it takes to get back under 95 % (90 % when
    /// even 1 MiB cannot overcommit), capped by `may_use + reserved`.
    pub fn calc_reclaim(&self) -> u64 {
        if self.policy.preempt == Preempt::Clamped2021 {
            return self.tickets.reclaim_size + self.space.overage();
        }
        if self.tickets.reclaim_size > 0 {
            return self.tickets.reclaim_size;
        }
        let s = &self.space;
        let target = (self.params.ncpu * MIB).min(16 * MIB);
        if s.can_overcommit(target, crate::FlushKind::FlushAll) {
            return 0;
        }
        let expected = if s.can_overcommit(MIB, crate::FlushKind::FlushAll) {
            pct(s.total, 95)
        } else {
            pct(s.total, 90)
        };
        s.used_all()
            .saturating_sub(expected)
            .min(s.may_use + s.reserved)
    }

    /// Run one flush state for `actor`. Work the caller must do becomes a
    /// job; refs become a run call; a commit makes the actor wait for it.
    /// Returns the job and the commit to wait for.
    pub(crate) fn do_flush(
        &mut self,
        actor: Actor,
        state: FlushState,
        to_reclaim: u64,
    ) -> (Option<crate::JobId>, Option<u64>) {
        let now = self.now;
        self.trace(TraceRecord::Flush {
            now,
            actor,
            state,
            bytes: to_reclaim,
        });
        if state.is_external() {
            return (Some(self.start_external(actor, state, to_reclaim)), None);
        }
        match state {
            FlushState::DelayedRefsNr => {
                let n = (to_reclaim / self.unit).max(1);
                (self.start_run(actor, self.count_budget(n)), None)
            }
            FlushState::DelayedRefs => {
                let b = self.run_zero_budget();
                (self.start_run(actor, b), None)
            }
            FlushState::AllocChunk | FlushState::AllocChunkForce => {
                self.alloc_chunk(state == FlushState::AllocChunkForce);
                (None, None)
            }
            FlushState::CommitTrans => {
                if actor != Actor::Preempt && !self.may_commit() {
                    return (None, None);
                }
                (None, self.request_commit(CommitSource::Flusher(actor)))
            }
            _ => (None, None),
        }
    }

    /// Whether a flusher's `COMMIT_TRANS` commits, as the flush policy
    /// says (ours: `may_commit_transaction` before 5.12, which commits
    /// only if the pinned bytes, or the pinned bytes plus what the delayed
    /// reserves hold, could satisfy the front ticket; unconditionally
    /// after). A declined commit is traced with what the front ticket
    /// needs beyond the free space.
    pub(crate) fn may_commit(&mut self) -> bool {
        let front = self
            .tickets
            .prio
            .front()
            .or(self.tickets.normal.front())
            .map_or(0, |t| t.bytes);
        let free = self.space.total.saturating_sub(self.space.used_all());
        let view = CommitView {
            need: front.saturating_sub(free),
            pinned: self.space.pinned,
            held: self.delayed_items.reserved + self.delayed_refs.reserved + self.trans.reserved,
        };
        let ok = self.plan.may_commit(&view);
        if !ok {
            let now = self.now;
            self.trace(TraceRecord::CommitDeclined {
                now,
                need: view.need,
            });
        }
        ok
    }

    /// The flush states reclaim walks (the flush policy's, checked when
    /// the model was built).
    pub fn reclaim_walk(&self) -> &[FlushState] {
        &self.walk[..self.walk_len]
    }

    /// Allocate one metadata chunk (kernel: `btrfs_chunk_alloc`). Without
    /// force only when usage without `may_use` is near 80 % of `total`.
    pub(crate) fn alloc_chunk(&mut self, force: bool) {
        let s = &self.space;
        if !force && s.used_no_may_use() + CHUNK_ALLOC_SLACK < pct(s.total, CHUNK_ALLOC_PCT) {
            return;
        }
        let raw = self.params.chunk_size * self.params.profile_factor;
        if self.space.unallocated < raw {
            self.space.full = true;
            return;
        }
        self.space.unallocated -= raw;
        self.space.total += self.params.chunk_size;
        let (now, bytes) = (self.now, self.params.chunk_size);
        self.trace(TraceRecord::ChunkAlloc { now, bytes });
        self.try_grant();
    }

    fn reclaim_finish(&mut self) {
        self.reclaim.running = false;
        self.reclaim.job = None;
        self.reclaim.wait_commit = None;
        if self.reclaim.requeue {
            self.reclaim.requeue = false;
            self.reclaim.queued = true;
        }
    }

    fn reclaim_flush(&mut self) {
        let state = self.reclaim_walk()[self.reclaim.index];
        let (job, wait) = self.do_flush(Actor::Reclaim, state, self.reclaim.to_reclaim);
        self.reclaim.job = job;
        self.reclaim.wait_commit = wait;
        self.reclaim.step = Step::AfterFlush;
    }

    /// One step of the worker loop.
    pub(crate) fn advance_reclaim(&mut self) -> bool {
        if !self.reclaim.running {
            if !self.reclaim.queued {
                return false;
            }
            self.reclaim.queued = false;
            self.reclaim.running = true;
            self.reclaim.step = Step::Begin;
        }
        if self.reclaim.job.is_some() || !self.commit_waited(self.reclaim.wait_commit) {
            return false;
        }
        self.reclaim.wait_commit = None;
        match self.reclaim.step {
            Step::Begin => {
                let to_reclaim = self.calc_reclaim();
                if to_reclaim == 0 {
                    self.tickets.flush_active = false;
                    self.reclaim_finish();
                    return true;
                }
                self.reclaim.to_reclaim = to_reclaim;
                let now = self.now;
                self.trace(TraceRecord::ReclaimStart {
                    now,
                    bytes: to_reclaim,
                });
                self.reclaim.last_tickets_id = self.tickets.tickets_id;
                self.reclaim.index = 0;
                self.reclaim.commit_cycles = 0;
                self.reclaim.passes = 0;
                self.reclaim_flush();
                true
            }
            Step::AfterFlush => {
                if self.tickets.normal.is_empty() {
                    self.tickets.flush_active = false;
                    self.reclaim_finish();
                    return true;
                }
                let walk = self.walk;
                let list = &walk[..self.walk_len];
                self.reclaim.to_reclaim = self.calc_reclaim();
                if self.reclaim.last_tickets_id == self.tickets.tickets_id {
                    self.reclaim.index += 1;
                } else {
                    self.reclaim.last_tickets_id = self.tickets.tickets_id;
                    self.reclaim.index = 0;
                    self.reclaim.commit_cycles = self.reclaim.commit_cycles.saturating_sub(1);
                }
                // Full delalloc flushing and forced chunks only after one
                // pass that ended in a commit.
                while self.reclaim.index < list.len()
                    && self.reclaim.commit_cycles == 0
                    && matches!(
                        list[self.reclaim.index],
                        FlushState::DelallocFull | FlushState::AllocChunkForce
                    )
                {
                    self.reclaim.index += 1;
                }
                if self.reclaim.index >= list.len() {
                    self.reclaim.commit_cycles += 1;
                    self.reclaim.passes += 1;
                    debug_assert!(self.reclaim.commit_cycles <= self.reclaim.passes);
                    if self.reclaim.commit_cycles > MAX_COMMIT_CYCLES {
                        debug_assert!(self.reclaim.passes > MAX_COMMIT_CYCLES);
                        if self.fail_front_tickets() {
                            self.reclaim.index = 0;
                            self.reclaim.commit_cycles -= 1;
                        } else {
                            self.tickets.flush_active = false;
                            self.reclaim_finish();
                            return true;
                        }
                    } else {
                        self.reclaim.index = 0;
                    }
                }
                self.reclaim_flush();
                true
            }
        }
    }
}
