//! A copy of the state for export (time series of `may_use`, the ticket
//! queue, commits).

use crate::FlushPolicy;
use crate::space::{Rsv, Space};
use crate::{FlushModel, RefQueue, TxnState};

/// A copy of the state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Latest event time.
    pub now: u64,
    /// Space counters.
    pub space: Space,
    /// Global reserve.
    pub global: Rsv,
    /// Delayed-ref reserve.
    pub delayed_refs: Rsv,
    /// Delayed-items reserve.
    pub delayed_items: Rsv,
    /// Trans reserve.
    pub trans: Rsv,
    /// Bytes granted to callers and not released.
    pub grants: u64,
    /// COW bytes no reserve covered.
    pub uncovered_meta: u64,
    /// Delayed-ref queue counters.
    pub refs: RefQueue,
    /// Catch-up average ref runtime.
    pub avg_ref_ns: u64,
    /// Normal tickets waiting.
    pub normal_tickets: usize,
    /// Priority tickets waiting.
    pub prio_tickets: usize,
    /// Bytes of waiting tickets.
    pub reclaim_size: u64,
    /// Grants so far (`tickets_id`).
    pub tickets_id: u64,
    /// The reclaim worker owns the normal queue.
    pub flush_active: bool,
    /// Preemptive clamp.
    pub clamp: u32,
    /// The 2021 preemptive worker is parked: its last step found nothing it
    /// could do, and it looks again at the next event (where the kernel's
    /// worker loops until something changes).
    pub preempt_parked: bool,
    /// Running transaction id and state.
    pub txn: Option<(u64, TxnState)>,
    /// Transaction being written out.
    pub writing: Option<u64>,
    /// Last completed transaction.
    pub completed_txn: u64,
    /// Commits completed.
    pub commits: u64,
    /// Open or waiting handles.
    pub handles: usize,
    /// Jobs outstanding.
    pub jobs: usize,
    /// Trace records lost to the ring bound.
    pub trace_dropped: u64,
}

impl<P: FlushPolicy> FlushModel<P> {
    /// A copy of the state.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            now: self.now,
            space: self.space,
            global: self.global,
            delayed_refs: self.delayed_refs,
            delayed_items: self.delayed_items,
            trans: self.trans,
            grants: self.grants,
            uncovered_meta: self.uncovered_meta,
            refs: self.refs,
            avg_ref_ns: self.avg_ref_ns,
            normal_tickets: self.tickets.normal.len(),
            prio_tickets: self.tickets.prio.len(),
            reclaim_size: self.tickets.reclaim_size,
            tickets_id: self.tickets.tickets_id,
            flush_active: self.tickets.flush_active,
            clamp: self.clamp,
            preempt_parked: self.preempt.running && self.preempt.parked,
            txn: self.txn.as_ref().map(|t| (t.id, t.state)),
            writing: self.writing.map(|w| w.id),
            completed_txn: self.completed_txn,
            commits: self.commits,
            handles: self.handles.iter().filter(|h| h.is_some()).count(),
            jobs: self.jobs.len(),
            trace_dropped: self.trace_dropped,
        }
    }

    /// `may_use`.
    pub fn may_use(&self) -> u64 {
        self.space.may_use
    }

    /// The running transaction's id, without building a whole
    /// [`Snapshot`] (which counts the handle table).
    pub fn txn_id(&self) -> Option<u64> {
        self.txn.as_ref().map(|t| t.id)
    }

    /// Tickets waiting, normal and priority.
    pub fn tickets_waiting(&self) -> usize {
        self.tickets.normal.len() + self.tickets.prio.len()
    }
}
