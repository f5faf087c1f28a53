//! Trace records (what the kernel's `btrfs_*` tracepoints and counters
//! would show) and the bounded ring that holds them.

use crate::FlushPolicy;
use crate::{Actor, CommitSource, FlushModel, FlushState, HandleId, TicketError, TicketId};

/// One event, stamped with the time of the call that produced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceRecord {
    /// A reservation did not fit and became a ticket.
    TicketQueued {
        /// Time.
        now: u64,
        /// The ticket.
        ticket: TicketId,
        /// Bytes asked for.
        bytes: u64,
        /// Priority queue (else normal).
        prio: bool,
        /// `may_use` at the time.
        may_use: u64,
    },
    /// A ticket was granted (by `try_grant` or a steal).
    TicketGranted {
        /// Time.
        now: u64,
        /// The ticket.
        ticket: TicketId,
        /// Bytes granted.
        bytes: u64,
        /// Wait.
        waited_ns: u64,
        /// Taken from the global reserve.
        stolen: bool,
    },
    /// A ticket failed or was removed.
    TicketFailed {
        /// Time.
        now: u64,
        /// The ticket.
        ticket: TicketId,
        /// Bytes asked for.
        bytes: u64,
        /// Why.
        error: TicketError,
        /// Wait.
        waited_ns: u64,
    },
    /// A flusher entered a state (kernel: `btrfs_flush_space`).
    Flush {
        /// Time.
        now: u64,
        /// Who.
        actor: Actor,
        /// The state.
        state: FlushState,
        /// `to_reclaim`.
        bytes: u64,
    },
    /// The reclaim worker began a run (kernel: the start of
    /// `btrfs_async_reclaim_metadata_space` with work to do).
    ReclaimStart {
        /// Time.
        now: u64,
        /// `to_reclaim`.
        bytes: u64,
    },
    /// `may_commit_transaction` said no.
    CommitDeclined {
        /// Time.
        now: u64,
        /// Bytes the front ticket still needed beyond free space (0: it
        /// needed nothing, so a commit would not help).
        need: u64,
    },
    /// A commit began (pre-flush).
    CommitStart {
        /// Time.
        now: u64,
        /// Transaction.
        txn: u64,
        /// Cause.
        source: CommitSource,
    },
    /// The commit reached write-out (the transaction is `Unblocked`).
    CommitWriteOut {
        /// Time.
        now: u64,
        /// Transaction.
        txn: u64,
        /// Dirty metadata written.
        meta_bytes: u64,
    },
    /// The commit completed and its pinned bytes were freed.
    CommitDone {
        /// Time.
        now: u64,
        /// Transaction.
        txn: u64,
        /// Pinned bytes freed.
        unpinned: u64,
        /// Duration since `CommitStart`.
        duration_ns: u64,
    },
    /// A batch of heads finished running.
    RefsRun {
        /// Time.
        now: u64,
        /// Who ran them.
        actor: Actor,
        /// Heads.
        heads: u64,
        /// Refs.
        refs: u64,
    },
    /// Catch-up: a handle end marked the transaction `Blocked`.
    TxnBlocked {
        /// Time.
        now: u64,
        /// Transaction.
        txn: u64,
    },
    /// Catch-up legacy: a handle end's throttle level (only when non-zero).
    Throttle {
        /// Time.
        now: u64,
        /// Handle.
        handle: HandleId,
        /// 1 = wait, 2 = async.
        level: u8,
    },
    /// A metadata chunk was allocated.
    ChunkAlloc {
        /// Time.
        now: u64,
        /// Bytes added to `total`.
        bytes: u64,
    },
    /// The preemptive clamp changed.
    Clamp {
        /// Time.
        now: u64,
        /// New clamp.
        clamp: u32,
    },
}

impl<P: FlushPolicy> FlushModel<P> {
    pub(crate) fn trace(&mut self, rec: TraceRecord) {
        if self.ring.len() >= self.params.trace_capacity {
            self.ring.pop_front();
            self.trace_dropped += 1;
        }
        self.ring.push_back(rec);
    }

    /// The oldest undrained trace record.
    pub fn poll_trace(&mut self) -> Option<TraceRecord> {
        self.ring.pop_front()
    }

    /// Records overwritten because the ring was full.
    pub fn trace_dropped(&self) -> u64 {
        self.trace_dropped
    }
}
