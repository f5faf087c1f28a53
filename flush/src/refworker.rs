//! The catch-up async ref runner (`RefRunner`; kernel:
//! `btrfs_async_run_delayed_refs` and `delayed_ref_async_start`): one
//! worker taking queued catch-up batches in order.

use alloc::collections::VecDeque;

use crate::FlushPolicy;
use crate::handle::HState;
use crate::txn::TxnState;
use crate::{Actor, Decision, FlushModel, HandleId};

/// One queued batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RefJob {
    /// Units to run.
    pub count: u64,
    /// Transaction of the handle that queued it.
    pub transid: u64,
    /// The handle waiting for it (level 1).
    pub waiter: Option<HandleId>,
}

/// The worker.
#[derive(Clone, Debug)]
pub(crate) struct RefWorker {
    pub queue: VecDeque<RefJob>,
    pub capacity: usize,
    pub current: Option<RefJob>,
    pub job: Option<crate::JobId>,
}

impl RefWorker {
    pub(crate) fn with_capacity(capacity: usize) -> RefWorker {
        RefWorker {
            queue: VecDeque::with_capacity(capacity),
            capacity,
            current: None,
            job: None,
        }
    }
}

impl<P: FlushPolicy> FlushModel<P> {
    /// Release the handle waiting at its end, if any.
    fn release_waiter(&mut self, waiter: Option<HandleId>) {
        let waits =
            waiter.filter(|&h| self.handle(h).is_ok_and(|x| x.state == HState::EndWaitRefs));
        if let Some(h) = waits {
            self.free_handle(h);
            self.emit(Decision::HandleReleased { handle: h });
        }
    }

    pub(crate) fn advance_refworker(&mut self) -> bool {
        if self.refworker.job.is_some() {
            return false;
        }
        if let Some(done) = self.refworker.current.take() {
            self.release_waiter(done.waiter);
            return true;
        }
        let Some(job) = self.refworker.queue.pop_front() else {
            return false;
        };
        // A blocked or committing transaction will run everything itself;
        // a batch for an older transaction is stale.
        let runnable = self.txn.as_ref().is_some_and(|t| {
            t.id == job.transid
                && !matches!(
                    t.state,
                    TxnState::Blocked | TxnState::CommitStart | TxnState::CommitDoing
                )
        });
        if !runnable {
            self.release_waiter(job.waiter);
            return true;
        }
        self.refworker.current = Some(job);
        self.refworker.job = self.start_run(Actor::RefWorker, self.count_budget(job.count));
        true
    }
}
