//! What the core asks its caller to do, drained in order with
//! [`FlushModel::poll_decision`](crate::FlushModel::poll_decision).

use core::fmt;

use crate::{FlushState, HandleId, JobId, TicketId};

/// Who does a piece of work. The caller charges the CPU time of
/// [`Decision::RunRefs`] to this actor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Actor {
    /// The async reclaim worker serving normal tickets (kernel:
    /// `btrfs_async_reclaim_metadata_space`).
    Reclaim,
    /// The 5.12+ preemptive worker (kernel:
    /// `btrfs_preempt_reclaim_metadata_space`).
    Preempt,
    /// The catch-up async ref runner (kernel: `delayed_ref_async_start`).
    RefWorker,
    /// The committer (kernel: `btrfs_commit_transaction`).
    Commit,
    /// The owner of a priority ticket, flushing for itself (kernel:
    /// `priority_reclaim_metadata_space`).
    Priority(TicketId),
}

/// Why a ticket failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TicketError {
    /// No space could be made (`-ENOSPC`).
    Enospc,
    /// The owner was interrupted (`-EINTR`).
    Eintr,
    /// The filesystem was aborted (`-EIO`).
    Aborted,
}

impl fmt::Display for TicketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TicketError::Enospc => f.write_str("ENOSPC"),
            TicketError::Eintr => f.write_str("EINTR"),
            TicketError::Aborted => f.write_str("EIO (aborted)"),
        }
    }
}

/// Who caused a commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CommitSource {
    /// The commit thread: interval elapsed, or a catch-up `Blocked` state.
    Kthread,
    /// A catch-up handle ended with `throttle` on a blocked transaction.
    Throttle,
    /// A flusher's `COMMIT_TRANS`.
    Flusher(Actor),
    /// A task's own `btrfs_commit_transaction`: an fsync that cannot use
    /// the log tree and commits instead, `sync(2)`
    /// ([`FlushModel::on_commit_request`](crate::FlushModel::on_commit_request)).
    Sync,
}

/// One decision to act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// A waiting reservation ([`Reserve::Queued`](crate::Reserve::Queued))
    /// is granted: the owner holds `bytes` and returns them later with
    /// [`FlushModel::on_release`](crate::FlushModel::on_release).
    Grant {
        /// The ticket.
        ticket: TicketId,
        /// The owner token given at reservation.
        owner: u64,
        /// Bytes now held.
        bytes: u64,
        /// Time between the reservation and the grant.
        waited_ns: u64,
    },
    /// A waiting reservation failed; the owner holds nothing.
    Fail {
        /// The ticket.
        ticket: TicketId,
        /// The owner token.
        owner: u64,
        /// Why.
        error: TicketError,
        /// Time between the reservation and the failure.
        waited_ns: u64,
    },
    /// A handle that was waiting (for its reservation or for the
    /// transaction) is now open.
    HandleReady {
        /// The handle.
        handle: HandleId,
    },
    /// A waiting handle's start reservation failed; the handle is gone.
    HandleFailed {
        /// The handle.
        handle: HandleId,
        /// Why.
        error: TicketError,
    },
    /// A handle whose end had to wait (catch-up: for its batch of refs or
    /// for the commit it caused) is finished; its owner may go on.
    HandleReleased {
        /// The handle (its id is no longer valid).
        handle: HandleId,
    },
    /// Run delayed refs: `heads` heads holding `refs` refs. Charge `cpu_ns`
    /// to `actor`, then call `on_work_done(now, job)`. `meta_bytes` of
    /// extent-tree blocks get dirtied (written by the next commit).
    RunRefs {
        /// The job to report.
        job: JobId,
        /// Who runs them.
        actor: Actor,
        /// Heads claimed.
        heads: u64,
        /// Refs in those heads.
        refs: u64,
        /// CPU time of the batch.
        cpu_ns: u64,
        /// Metadata COWed by the batch.
        meta_bytes: u64,
    },
    /// Do the caller's part of a flush state (delalloc writeback, delayed
    /// items, iputs) for about `bytes`, then call `on_work_done(now, job)`.
    Flush {
        /// The job to report.
        job: JobId,
        /// Who flushes.
        actor: Actor,
        /// The state.
        state: FlushState,
        /// Bytes the flusher wants back.
        bytes: u64,
    },
    /// Write out transaction `txn`: `meta_bytes` of dirty tree blocks,
    /// then a device flush and the superblocks; call
    /// `on_commit_done(now, txn)` when durable. New handles may start a
    /// new transaction meanwhile.
    CommitIo {
        /// The transaction.
        txn: u64,
        /// Dirty metadata to write.
        meta_bytes: u64,
    },
}
