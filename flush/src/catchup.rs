//! Variant catch-up (kernel ≤ 5.0-rc4 `__btrfs_end_transaction`
//! and `should_end_transaction`): the ending handle may queue or wait for a
//! catch-up batch of refs, and may block the transaction and commit it.

use crate::FlushPolicy;
use crate::handle::{End, HState, Handle};
use crate::refworker::RefJob;
use crate::space::{check_space_legacy, check_space_rsv, global_low, throttle_level};
use crate::txn::TxnState;
use crate::{CommitSource, FlushModel, HandleId, HandleKind, TraceRecord};

impl<P: FlushPolicy> FlushModel<P> {
    /// `check_space()` of the policy's era (kernel:
    /// `btrfs_check_space_for_delayed_refs`): true = short.
    pub fn check_space(&self) -> bool {
        if self.policy.legacy {
            check_space_legacy(
                self.refs.ready_heads,
                0,
                0,
                self.space.full,
                self.global.reserved,
                self.params.nodesize,
            )
        } else {
            check_space_rsv(&self.delayed_refs, &self.global)
        }
    }

    /// `should_end()` of a catch-up handle end: a short space check or a
    /// global reserve under half full.
    pub fn should_end(&self) -> bool {
        self.check_space() || global_low(&self.global)
    }

    /// `should_throttle()` (kernel: `btrfs_should_throttle_delayed_refs`):
    /// 1 wait, 2 async, 0 nothing.
    pub fn should_throttle(&self) -> u8 {
        throttle_level(self.refs.entries(), self.avg_ref_ns, self.check_space())
    }

    /// Catch-up handle end (`__btrfs_end_transaction` up to 5.0-rc4), steps
    /// 2–8 as numbered below.
    pub(crate) fn end_catch_up(&mut self, h: HandleId, x: Handle, throttle: bool) -> End {
        // Step 2: the batch; step 3: the throttle level (CU-legacy only).
        let cur = Self::catch_up_batch(x.updates);
        let mut must = 0;
        if self.policy.legacy {
            must = self.should_throttle();
            if must == 1 && matches!(x.kind, HandleKind::JoinNoLock | HandleKind::Attach) {
                must = 2;
            }
            if must != 0 {
                self.trace_throttle(h, must);
            }
        }
        // Step 4: the unused start reservation (inside `leave_txn` below,
        // which also does step 7; nothing in between reads them).
        let lock = x.kind != HandleKind::JoinNoLock;
        // Step 5: mark the transaction blocked on a shortage.
        let should_end = lock && self.should_end();
        if let Some(t) = self
            .txn
            .as_mut()
            .filter(|t| should_end && t.id == x.txn && t.state == TxnState::Running)
        {
            t.state = TxnState::Blocked;
            let (now, id) = (self.now, t.id);
            self.trace(TraceRecord::TxnBlocked { now, txn: id });
        }
        let blocked = self
            .txn
            .as_ref()
            .is_some_and(|t| t.id == x.txn && t.state == TxnState::Blocked);
        self.leave_txn(&x);
        // Step 6: a blocked transaction is committed now.
        if lock && blocked {
            if throttle {
                match self.request_commit(CommitSource::Throttle) {
                    Some(txn) => {
                        if let Ok(y) = self.handle_mut(h) {
                            y.state = HState::EndWaitCommit(txn);
                        }
                        self.waiting_commit_end += 1;
                        return End::Wait(h);
                    }
                    None => {
                        self.free_handle(h);
                        return End::Done;
                    }
                }
            }
            self.request_commit(CommitSource::Kthread);
        }
        // Step 8: queue the catch-up batch.
        if must != 0 {
            let waiter = if must == 1 { Some(h) } else { None };
            let queued = self.refworker.queue.len() < self.refworker.capacity;
            if queued {
                self.refworker.queue.push_back(RefJob {
                    count: cur,
                    transid: x.txn,
                    waiter,
                });
            }
            if must == 1 && queued {
                if let Ok(y) = self.handle_mut(h) {
                    y.state = HState::EndWaitRefs;
                }
                return End::Wait(h);
            }
        }
        self.free_handle(h);
        End::Done
    }
}
