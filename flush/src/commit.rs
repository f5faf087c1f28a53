//! Commits (kernel: `btrfs_commit_transaction`,
//! `transaction_kthread`): one committer walking pre-flush, CommitStart
//! (external writers leave), CommitDoing (all writers leave, `run(ALL)`),
//! write-out (`Unblocked`: a new transaction may run) and completion
//! (pinned bytes freed, tickets granted).

use crate::FlushPolicy;
use crate::handle::HState;
use crate::refs::Budget;
use crate::txn::{TxnState, Writing};
use crate::{Actor, CommitSource, Decision, Error, FlushModel, HandleId, TraceRecord};

/// Where the committer is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Phase {
    #[default]
    Idle,
    /// `run(0)` before CommitStart (once per transaction).
    PreFlush { started: bool },
    /// Waiting for `extwriters == 0`.
    WaitExt,
    /// Waiting for `writers == 0`.
    WaitWriters,
    /// `run(ALL)` until the queue is empty and no runner holds a head.
    RunAll,
    /// Write-out decision emitted; waiting for `on_commit_done`.
    WriteOut,
}

/// The committer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CommitMachine {
    pub phase: Phase,
    pub txn: u64,
    pub source: Option<CommitSource>,
    pub started_ns: u64,
    pub job: Option<crate::JobId>,
    /// A commit of the next transaction was asked for during write-out.
    pub next_requested: Option<CommitSource>,
}

impl<P: FlushPolicy> FlushModel<P> {
    /// Ask for a commit of the running transaction. Returns the id of the
    /// transaction whose completion the asker should wait for, or `None`
    /// when there is nothing to commit.
    pub(crate) fn request_commit(&mut self, source: CommitSource) -> Option<u64> {
        match self.commit.phase {
            Phase::Idle => {
                let t = self.txn.as_ref()?;
                let id = t.id;
                self.commit = crate::commit::CommitMachine {
                    phase: Phase::PreFlush { started: false },
                    txn: id,
                    source: Some(source),
                    started_ns: self.now,
                    job: None,
                    next_requested: None,
                };
                let now = self.now;
                self.trace(TraceRecord::CommitStart {
                    now,
                    txn: id,
                    source,
                });
                Some(id)
            }
            Phase::WriteOut => match self.txn.as_ref() {
                // Commit the transaction that started during write-out once
                // the previous one is done.
                Some(t) => {
                    let id = t.id;
                    if self.commit.next_requested.is_none() {
                        self.commit.next_requested = Some(source);
                    }
                    Some(id)
                }
                None => Some(self.commit.txn),
            },
            _ => Some(self.commit.txn),
        }
    }

    /// Move the committer as far as it can go.
    pub(crate) fn advance_commit(&mut self) -> bool {
        if self.commit.job.is_some() {
            return false;
        }
        match self.commit.phase {
            Phase::Idle => {
                if self.txn.is_none() {
                    // A request with no transaction to commit is dropped.
                    self.commit.next_requested = None;
                    return false;
                }
                match self.commit.next_requested.take() {
                    Some(src) => {
                        self.request_commit(src);
                        true
                    }
                    None => false,
                }
            }
            Phase::PreFlush { started } => {
                let Some(t) = self.txn.as_mut() else {
                    self.commit.phase = Phase::Idle;
                    return true;
                };
                if !started && !t.flushing {
                    t.flushing = true;
                    self.commit.phase = Phase::PreFlush { started: true };
                    let budget = self.run_zero_budget();
                    self.commit.job = self.start_run(Actor::Commit, budget);
                    return true;
                }
                t.state = TxnState::CommitStart;
                self.commit.phase = Phase::WaitExt;
                true
            }
            Phase::WaitExt => {
                let Some(t) = self.txn.as_mut() else {
                    return false;
                };
                if t.extwriters > 0 {
                    return false;
                }
                t.state = TxnState::CommitDoing;
                self.commit.phase = Phase::WaitWriters;
                true
            }
            Phase::WaitWriters => {
                let Some(t) = self.txn.as_ref() else {
                    return false;
                };
                if t.writers > 0 {
                    return false;
                }
                self.commit.phase = Phase::RunAll;
                true
            }
            Phase::RunAll => {
                if self.refs.ready_heads > 0 {
                    self.commit.job = self.start_run(Actor::Commit, Budget::All);
                    return true;
                }
                if self.refs.processing_heads > 0 {
                    return false;
                }
                self.write_out();
                true
            }
            Phase::WriteOut => false,
        }
    }

    /// All refs ran: the transaction is `Unblocked` and written out.
    fn write_out(&mut self) {
        let Some(t) = self.txn.take() else {
            self.commit.phase = Phase::Idle;
            return;
        };
        debug_assert_eq!(self.refs.heads(), 0, "refs survive into write-out");
        debug_assert_eq!(
            (t.writers, t.extwriters),
            (0, 0),
            "writers during write-out"
        );
        debug_assert!(self.writing.is_none(), "two transactions in write-out");
        self.writing = Some(Writing {
            id: t.id,
            pinned: t.pinned,
        });
        self.commit.phase = Phase::WriteOut;
        let now = self.now;
        self.trace(TraceRecord::CommitWriteOut {
            now,
            txn: t.id,
            meta_bytes: t.dirty_meta,
        });
        self.emit(Decision::CommitIo {
            txn: t.id,
            meta_bytes: t.dirty_meta,
        });
    }

    /// The write-out of `txn` is durable.
    pub(crate) fn commit_done(&mut self, txn: u64) -> Result<(), Error> {
        match self.writing {
            Some(w) if w.id == txn && self.commit.phase == Phase::WriteOut => {}
            _ => return Err(Error::NotCommitting(txn)),
        }
        let Some(w) = self.writing.take() else {
            return Err(Error::NotCommitting(txn));
        };
        debug_assert!(self.space.pinned >= w.pinned, "unpinning more than pinned");
        debug_assert!(w.id > self.completed_txn, "commits out of order");
        self.space.pinned -= w.pinned;
        self.completed_txn = w.id;
        self.commits += 1;
        let next = self.commit.next_requested;
        let duration = self.now - self.commit.started_ns;
        self.commit = crate::commit::CommitMachine {
            next_requested: next,
            ..Default::default()
        };
        let now = self.now;
        self.trace(TraceRecord::CommitDone {
            now,
            txn: w.id,
            unpinned: w.pinned,
            duration_ns: duration,
        });
        // The global reserve is topped up at every commit from the space
        // now free (kernel: unpinned extents refill it first in
        // `unpin_extent_range`; `btrfs_update_global_block_rsv` only takes
        // what `total` still holds). Never beyond free space: a refill
        // must not overcommit.
        let free = self.space.total.saturating_sub(self.space.used_all());
        let refill = self.global.deficit().min(free);
        self.global.reserved += refill;
        self.global.set_full();
        self.space.may_use += refill;
        self.try_grant();
        self.release_commit_waiters();
        Ok(())
    }

    /// Catch-up handles whose end waited for this commit go on.
    fn release_commit_waiters(&mut self) {
        if self.waiting_commit_end == 0 {
            return;
        }
        for slot in 0..self.handles.len() {
            let Some(x) = self.handles[slot] else {
                continue;
            };
            let HState::EndWaitCommit(t) = x.state else {
                continue;
            };
            if t <= self.completed_txn {
                let h = HandleId {
                    slot: slot as u32,
                    generation: self.generations[slot],
                };
                self.free_handle(h);
                self.waiting_commit_end -= 1;
                self.emit(Decision::HandleReleased { handle: h });
            }
        }
    }

    /// The commit thread's periodic check (kernel: `transaction_kthread`):
    /// commit a transaction older than the interval, or a blocked one.
    pub(crate) fn kthread_tick(&mut self) {
        if self.commit.phase != Phase::Idle {
            return;
        }
        let Some(t) = self.txn.as_ref() else { return };
        // The kernel stamps a transaction and compares in whole seconds
        // (`ktime_get_seconds`): one begun at 0.4 s is 30 s old at the
        // tick at 30 s.
        let age = (self.now / crate::consts::SEC).saturating_sub(t.start_ns / crate::consts::SEC);
        let old = age.saturating_mul(crate::consts::SEC) >= self.params.commit_interval_ns;
        if old || t.state == TxnState::Blocked {
            self.request_commit(CommitSource::Kthread);
        }
    }

    /// Whether a commit the asker waits for has completed.
    pub(crate) fn commit_waited(&self, wait: Option<u64>) -> bool {
        match wait {
            None => true,
            Some(t) => self.completed_txn >= t,
        }
    }
}
