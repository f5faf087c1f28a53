//! The delayed-ref queue (kernel: `delayed-ref.c` and
//! `btrfs_run_delayed_refs`): adding refs, merging, and running them in
//! calls of a budget, head by head, as jobs the caller times.
//!
//! Refs are counted, not stored: the queue knows how many heads and refs
//! are ready and how many are being run. A head's refs are the ready refs
//! shared out evenly over the ready heads when it is claimed. This keeps
//! the core free of per-ref allocation while every count the kernel keeps
//! (`num_entries`, `num_heads`, `num_heads_ready`) stays exact.

use crate::FlushPolicy;
use crate::{Actor, Decision, Error, FlushModel, JobId, RunZero, TraceRecord};

/// What one tree update queued.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RefBatch {
    /// New heads (extents with no pending head yet).
    pub new_heads: u64,
    /// Refs added to pending heads (new heads included).
    pub refs: u64,
    /// Refs that cancel a pending ref of opposite action (an add and a drop
    /// of the same ref with equal count): both vanish unrun.
    pub cancelled: u64,
    /// Bytes of the handle's own reservation its tree update COWed.
    pub meta_used: u64,
}

/// Counters of the queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RefQueue {
    /// Heads not claimed by a runner.
    pub ready_heads: u64,
    /// Refs of those heads.
    pub ready_refs: u64,
    /// Heads claimed by runners (their `processing` flag).
    pub processing_heads: u64,
    /// Refs of those heads.
    pub processing_refs: u64,
    /// Refs ever queued (cancelling refs included).
    pub created_refs: u64,
    /// Heads ever queued.
    pub created_heads: u64,
    /// Refs run.
    pub run_refs: u64,
    /// Heads run.
    pub run_heads: u64,
    /// Refs that vanished by cancellation (two per cancellation).
    pub annihilated: u64,
}

impl RefQueue {
    /// `num_heads`.
    pub const fn heads(&self) -> u64 {
        self.ready_heads + self.processing_heads
    }

    /// `num_entries`: pending heads plus pending refs.
    pub const fn entries(&self) -> u64 {
        self.heads() + self.ready_refs + self.processing_refs
    }

    pub(crate) fn check(&self) {
        debug_assert_eq!(
            self.created_refs,
            self.run_refs + self.annihilated + self.ready_refs + self.processing_refs,
            "a ref was lost or run twice: {self:?}"
        );
        debug_assert_eq!(
            self.created_heads,
            self.run_heads + self.ready_heads + self.processing_heads,
            "a head was lost or run twice: {self:?}"
        );
        debug_assert!(
            self.ready_refs == 0 || self.ready_heads > 0,
            "refs without head"
        );
    }
}

/// How far a run call goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Budget {
    /// Stop selecting heads once this many units (a ref or a head
    /// cleanup) were taken.
    Units(u64),
    /// Stop after this many heads.
    Heads(u64),
    /// Until the queue is empty.
    All,
}

impl Budget {
    fn allows(&self) -> bool {
        match self {
            Budget::Units(n) | Budget::Heads(n) => *n > 0,
            Budget::All => true,
        }
    }

    fn take(&mut self, refs: u64) {
        match self {
            Budget::Units(n) => *n = n.saturating_sub(refs + 1),
            Budget::Heads(n) => *n -= 1,
            Budget::All => {}
        }
    }
}

/// One `btrfs_run_delayed_refs` call in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RunCall {
    pub budget: Budget,
    pub started_ns: u64,
    pub refs_done: u64,
    /// The batch in flight.
    pub chunk_heads: u64,
    pub chunk_refs: u64,
}

/// Work handed to the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Work {
    Refs(RunCall),
    External,
}

/// An outstanding job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Job {
    pub id: JobId,
    pub actor: Actor,
    pub work: Work,
}

impl<P: FlushPolicy> FlushModel<P> {
    /// Queue refs of an open handle's tree update (kernel:
    /// `btrfs_add_delayed_*_ref`, then `btrfs_update_delayed_refs_rsv`).
    pub(crate) fn add_refs(&mut self, batch: &RefBatch) -> Result<u64, Error> {
        if batch.refs > 0 && self.refs.ready_heads + batch.new_heads == 0 {
            return Err(Error::RefsWithoutHead);
        }
        if batch.cancelled > self.refs.ready_refs {
            return Err(Error::NothingToCancel);
        }
        let q = &mut self.refs;
        q.ready_heads += batch.new_heads;
        q.created_heads += batch.new_heads;
        q.ready_refs += batch.refs;
        q.created_refs += batch.refs + batch.cancelled;
        q.ready_refs -= batch.cancelled;
        q.annihilated += 2 * batch.cancelled;
        Ok(batch.new_heads)
    }

    /// `delayed_refs.size += R × updates` (kernel:
    /// `btrfs_update_delayed_refs_rsv`). No bytes are reserved here: the
    /// gap between size and reserved is what flushing must cover.
    pub(crate) fn update_delayed_refs_rsv(&mut self, updates: u64) {
        if updates == 0 || self.policy.legacy {
            return;
        }
        let grow = self.head_bytes.saturating_mul(updates);
        self.delayed_refs.size = self.delayed_refs.size.saturating_add(grow);
        self.delayed_refs.set_full();
    }

    /// The budget of `run(count)` for `count > 0`. Up to 4.19 the count
    /// was of units (a ref or a head cleanup); from 4.20 on
    /// (the `__btrfs_run_delayed_refs` loop rework of Aug 2018) it is of
    /// heads: one is counted when a head is selected, and the loop stops
    /// once `count` heads were taken. The legacy (≤ 4.20, 4.19 source)
    /// accounting keeps units, every later era counts heads.
    pub(crate) fn count_budget(&self, count: u64) -> Budget {
        if self.policy.legacy {
            Budget::Units(count)
        } else {
            Budget::Heads(count)
        }
    }

    /// The budget of `run(0)`.
    pub(crate) fn run_zero_budget(&self) -> Budget {
        match self.policy.run_zero {
            RunZero::TwiceEntries => self.count_budget(self.refs.entries().saturating_mul(2)),
            RunZero::HeadsPresent => Budget::Heads(self.refs.ready_heads),
        }
    }

    /// Start a run call for `actor` (kernel: `btrfs_run_delayed_refs` →
    /// `__btrfs_run_delayed_refs`). Returns the job when there was
    /// something to claim; `None` means the call ended at once.
    pub(crate) fn start_run(&mut self, actor: Actor, budget: Budget) -> Option<JobId> {
        let mut call = RunCall {
            budget,
            started_ns: self.now,
            refs_done: 0,
            chunk_heads: 0,
            chunk_refs: 0,
        };
        if !self.claim_chunk(&mut call) {
            return None;
        }
        let id = JobId(self.next_job);
        self.next_job += 1;
        self.jobs.push(crate::refs::Job {
            id,
            actor,
            work: Work::Refs(call),
        });
        self.emit_chunk(id, actor, &call);
        Some(id)
    }

    /// Claim heads for the next batch of a call: one at a time, the budget
    /// checked before each (a runner never stops inside a head).
    /// (kernel: `btrfs_obtain_ref_head`, which skips heads being processed).
    fn claim_chunk(&mut self, call: &mut RunCall) -> bool {
        call.chunk_heads = 0;
        call.chunk_refs = 0;
        while call.chunk_heads < self.params.chunk_heads
            && self.refs.ready_heads > 0
            && call.budget.allows()
        {
            let q = &mut self.refs;
            let r = q.ready_refs.div_ceil(q.ready_heads);
            q.ready_heads -= 1;
            q.ready_refs -= r;
            q.processing_heads += 1;
            q.processing_refs += r;
            call.budget.take(r);
            call.chunk_heads += 1;
            call.chunk_refs += r;
        }
        debug_assert!(call.chunk_heads <= self.params.chunk_heads);
        debug_assert!(self.refs.processing_heads >= call.chunk_heads);
        call.chunk_heads > 0
    }

    fn emit_chunk(&mut self, job: JobId, actor: Actor, call: &RunCall) {
        let cpu = (call.chunk_heads.saturating_mul(self.params.c_head_ns))
            .saturating_add(call.chunk_refs.saturating_mul(self.params.c_ref_ns));
        self.emit(Decision::RunRefs {
            job,
            actor,
            heads: call.chunk_heads,
            refs: call.chunk_refs,
            cpu_ns: cpu,
            meta_bytes: call.chunk_heads.saturating_mul(self.params.meta_per_head),
        });
    }

    /// A batch finished: its heads leave the queue, their reserve goes
    /// back, their COW moves bytes from the reserves to pinned.
    fn complete_chunk(&mut self, actor: Actor, heads: u64, refs: u64) {
        let q = &mut self.refs;
        debug_assert!(q.processing_heads >= heads && q.processing_refs >= refs);
        q.processing_heads -= heads;
        q.processing_refs -= refs;
        q.run_heads += heads;
        q.run_refs += refs;
        self.use_meta(heads.saturating_mul(self.params.meta_per_head), true);
        if !self.policy.legacy {
            self.release_rsv(
                crate::RsvKind::DelayedRefs,
                heads.saturating_mul(self.head_bytes),
            );
        }
        let now = self.now;
        self.trace(TraceRecord::RefsRun {
            now,
            actor,
            heads,
            refs,
        });
    }

    /// The caller finished a job.
    pub(crate) fn work_done(&mut self, job: JobId) -> Result<(), Error> {
        let Some(pos) = self.jobs.iter().position(|j| j.id == job) else {
            return Err(Error::UnknownJob(job));
        };
        let entry = self.jobs[pos];
        match entry.work {
            Work::External => {
                self.jobs.swap_remove(pos);
                self.job_finished(entry.actor);
            }
            Work::Refs(mut call) => {
                self.complete_chunk(entry.actor, call.chunk_heads, call.chunk_refs);
                call.refs_done += call.chunk_refs;
                if self.claim_chunk(&mut call) {
                    self.jobs[pos].work = Work::Refs(call);
                    self.emit_chunk(job, entry.actor, &call);
                } else {
                    self.jobs.swap_remove(pos);
                    // Catch-up average (kernel: `btrfs_run_delayed_refs`):
                    // only calls that ran at least one ref count.
                    if call.refs_done > 0 {
                        let wall = self.now - call.started_ns;
                        self.avg_ref_ns = crate::space::avg_update(self.avg_ref_ns, wall);
                    }
                    self.job_finished(entry.actor);
                }
            }
        }
        Ok(())
    }

    /// Hand a new external job to the caller.
    pub(crate) fn start_external(
        &mut self,
        actor: Actor,
        state: crate::FlushState,
        bytes: u64,
    ) -> JobId {
        let id = JobId(self.next_job);
        self.next_job += 1;
        self.jobs.push(Job {
            id,
            actor,
            work: Work::External,
        });
        self.emit(Decision::Flush {
            job: id,
            actor,
            state,
            bytes,
        });
        id
    }

    /// Tell the actor its job is over.
    fn job_finished(&mut self, actor: Actor) {
        match actor {
            Actor::Reclaim => self.reclaim.job = None,
            Actor::Preempt => self.preempt.job = None,
            Actor::RefWorker => self.refworker.job = None,
            Actor::Commit => self.commit.job = None,
            Actor::Priority(t) => {
                if let Some(tk) = self.tickets.prio.iter_mut().find(|x| x.id == t) {
                    tk.job = None;
                }
            }
        }
    }
}
