//! The [`FlushModel`] state machine: its state vector,
//! construction, the pump that lets every actor move after an event, and
//! the invariant audit. The behaviour lives in the concept modules.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use crate::commit::CommitMachine;
use crate::consts::{CLAMP_MIN, insert_unit};
use crate::handle::Handle;
use crate::preempt::PreemptWorker;
use crate::reclaim::Reclaim;
use crate::refs::{Job, RefQueue};
use crate::refworker::RefWorker;
use crate::space::{Rsv, Space};
use crate::ticket::Tickets;
use crate::txn::{Txn, Writing};
use crate::{Config, ConfigError, Decision, Params, Policy, TraceRecord};
use crate::{FlushPolicy, FlushState, check_walk};

/// The metadata space, delayed-ref queue, transactions, tickets and
/// flushers of one filesystem. See the crate docs for how to drive it.
#[derive(Clone, Debug)]
pub struct FlushModel<P = Policy> {
    pub(crate) policy: Policy,
    /// Which states reclaim walks and when a flusher commits.
    pub(crate) plan: P,
    /// `plan`'s walk, checked when the model was built.
    pub(crate) walk: [FlushState; FlushState::ALL.len()],
    pub(crate) walk_len: usize,
    pub(crate) params: Params,
    /// Insert unit `U`.
    pub(crate) unit: u64,
    /// Delayed-ref reserve bytes per head `R`.
    pub(crate) head_bytes: u64,
    /// Latest time seen.
    pub(crate) now: u64,

    pub(crate) space: Space,
    pub(crate) global: Rsv,
    pub(crate) delayed_refs: Rsv,
    pub(crate) delayed_items: Rsv,
    pub(crate) trans: Rsv,
    /// Bytes granted to callers (`on_reserve`) and not yet released.
    pub(crate) grants: u64,
    /// Metadata COW that no reserve covered (it went straight to pinned).
    pub(crate) uncovered_meta: u64,
    /// Caller-reported delalloc and ordered bytes (preempt heuristics).
    pub(crate) delalloc_bytes: u64,
    pub(crate) ordered_bytes: u64,

    pub(crate) refs: RefQueue,
    pub(crate) avg_ref_ns: u64,

    pub(crate) txn: Option<Txn>,
    pub(crate) writing: Option<Writing>,
    pub(crate) next_txn_id: u64,
    pub(crate) completed_txn: u64,
    pub(crate) commits: u64,
    pub(crate) commit: CommitMachine,
    pub(crate) next_tick: u64,

    pub(crate) tickets: Tickets,
    pub(crate) reclaim: Reclaim,
    pub(crate) preempt: PreemptWorker,
    pub(crate) clamp: u32,
    pub(crate) refworker: RefWorker,

    pub(crate) handles: Vec<Option<Handle>>,
    pub(crate) generations: Vec<u32>,
    pub(crate) free_slots: Vec<u32>,
    /// Handles in `WaitTxn` (skip the scan when 0).
    pub(crate) waiting_txn: u32,
    /// One bit per handle slot counted in `waiting_txn`, so a wake-up
    /// visits the waiting handles in slot order without reading the
    /// whole table.
    pub(crate) waiting_slots: Vec<u64>,
    /// Handles whose end waits for a commit.
    pub(crate) waiting_commit_end: u32,

    pub(crate) jobs: Vec<Job>,
    pub(crate) next_job: u64,

    pub(crate) aborted: bool,
    pub(crate) decisions: VecDeque<Decision>,
    pub(crate) ring: VecDeque<TraceRecord>,
    pub(crate) trace_dropped: u64,
}

impl FlushModel {
    /// A filesystem at time 0 with the global reserve filled. All queues
    /// are allocated here, at their configured capacities.
    pub fn new(config: Config) -> Result<FlushModel, ConfigError> {
        FlushModel::with_policy(config, config.policy)
    }
}

impl<P: FlushPolicy> FlushModel<P> {
    /// [`FlushModel::new`] with reclaim's walk and the commit gate decided
    /// by `plan` instead of `config.policy`'s `states` and `commit_gate`
    /// (which are then unused). Refused when the walk breaks a
    /// [`WalkRule`](crate::WalkRule).
    pub fn with_policy(config: Config, plan: P) -> Result<FlushModel<P>, ConfigError> {
        let mut walk = [FlushState::CommitTrans; FlushState::ALL.len()];
        let given = plan.states();
        check_walk(given).map_err(ConfigError::Walk)?;
        // No repeats: at most one of each state.
        walk[..given.len()].copy_from_slice(given);
        let walk_len = given.len();
        let p = config.params;
        if !p.nodesize.is_power_of_two() || !(4096..=65536).contains(&p.nodesize) {
            return Err(ConfigError::NodeSize(p.nodesize));
        }
        for (v, what) in [
            (p.ticket_capacity as u64, "ticket_capacity"),
            (p.max_handles as u64, "max_handles"),
            (p.trace_capacity as u64, "trace_capacity"),
            (p.decision_capacity as u64, "decision_capacity"),
            (p.chunk_heads, "chunk_heads"),
            (p.profile_factor, "profile_factor"),
            (p.kthread_period_ns, "kthread_period_ns"),
        ] {
            if v == 0 {
                return Err(ConfigError::ZeroCapacity(what));
            }
        }
        for (v, what) in [
            (p.total, "total"),
            (p.used, "used"),
            (p.readonly, "readonly"),
            (p.unallocated, "unallocated"),
            (p.chunk_size, "chunk_size"),
            (p.global_rsv, "global_rsv"),
            (p.meta_per_head, "meta_per_head"),
            (p.c_head_ns, "c_head_ns"),
            (p.c_ref_ns, "c_ref_ns"),
            (p.profile_factor, "profile_factor"),
            (p.ncpu, "ncpu"),
        ] {
            if v > crate::MAX_BYTES {
                return Err(ConfigError::TooLarge(what));
            }
        }
        if !(1..=100).contains(&config.policy.preempt_full_pct) {
            return Err(ConfigError::Percent(config.policy.preempt_full_pct));
        }
        let needed = p
            .used
            .saturating_add(p.readonly)
            .saturating_add(p.global_rsv);
        if needed > p.total {
            return Err(ConfigError::TooSmall {
                needed,
                total: p.total,
            });
        }
        let unit = insert_unit(p.nodesize);
        let head_bytes = if config.policy.free_space_tree {
            unit * 2
        } else {
            unit
        };
        let mut global = Rsv {
            size: p.global_rsv,
            reserved: p.global_rsv,
            full: false,
        };
        global.set_full();
        let mut empty = Rsv::default();
        empty.set_full();
        let model = FlushModel {
            policy: config.policy,
            plan,
            walk,
            walk_len,
            params: p,
            unit,
            head_bytes,
            now: 0,
            space: Space {
                total: p.total,
                used: p.used,
                reserved: 0,
                pinned: 0,
                readonly: p.readonly,
                may_use: p.global_rsv,
                full: false,
                unallocated: p.unallocated,
                profile_factor: p.profile_factor,
            },
            global,
            delayed_refs: empty,
            delayed_items: empty,
            trans: empty,
            grants: 0,
            uncovered_meta: 0,
            delalloc_bytes: 0,
            ordered_bytes: 0,
            refs: RefQueue::default(),
            avg_ref_ns: crate::consts::AVG_REF_RUNTIME_INIT_NS,
            txn: None,
            writing: None,
            next_txn_id: 1,
            completed_txn: 0,
            commits: 0,
            commit: CommitMachine::default(),
            next_tick: p.kthread_period_ns,
            tickets: Tickets::with_capacity(p.ticket_capacity),
            reclaim: Reclaim::default(),
            preempt: PreemptWorker::default(),
            clamp: CLAMP_MIN,
            refworker: RefWorker::with_capacity(p.max_handles),
            handles: (0..p.max_handles).map(|_| None).collect(),
            generations: alloc::vec![0; p.max_handles],
            free_slots: (0..p.max_handles as u32).rev().collect(),
            waiting_txn: 0,
            waiting_slots: alloc::vec![0; p.max_handles.div_ceil(64)],
            waiting_commit_end: 0,
            jobs: Vec::with_capacity(p.ticket_capacity + 8),
            next_job: 1,
            aborted: false,
            decisions: VecDeque::with_capacity(p.decision_capacity),
            ring: VecDeque::with_capacity(p.trace_capacity),
            trace_dropped: 0,
        };
        model.audit();
        Ok(model)
    }

    /// The policy this instance runs.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// The sizes and costs this instance runs with.
    pub fn params(&self) -> Params {
        self.params
    }

    /// The oldest undrained decision.
    pub fn poll_decision(&mut self) -> Option<Decision> {
        self.decisions.pop_front()
    }

    pub(crate) fn emit(&mut self, d: Decision) {
        self.decisions.push_back(d);
    }

    /// Take the event time; time never runs backwards inside the core (a
    /// smaller `now` is treated as the latest time seen).
    pub(crate) fn enter(&mut self, now: u64) {
        if now > self.now {
            self.now = now;
        }
        // Something may have changed: a parked preemptive worker looks again.
        self.preempt.parked = false;
    }

    /// Let every actor move until none can: the end of every event.
    pub(crate) fn pump(&mut self) {
        // Every step either consumes queued work or changes a phase; the
        // bound only guards against a livelock bug.
        let mut rounds = 0u32;
        loop {
            let mut progress = false;
            progress |= self.advance_commit();
            progress |= self.advance_handles();
            progress |= self.advance_refworker();
            progress |= self.advance_priority();
            progress |= self.advance_reclaim();
            progress |= self.advance_preempt();
            if !progress {
                break;
            }
            rounds += 1;
            debug_assert!(rounds < 1_000_000, "pump does not settle");
            if rounds >= 1_000_000 {
                break;
            }
        }
        self.audit();
    }

    /// The invariants that hold after every event (checked in
    /// debug builds).
    pub(crate) fn audit(&self) {
        self.global.check();
        self.delayed_refs.check();
        self.delayed_items.check();
        self.trans.check();
        let held = self.global.reserved
            + self.delayed_refs.reserved
            + self.delayed_items.reserved
            + self.trans.reserved
            + self.grants;
        debug_assert_eq!(
            self.space.may_use, held,
            "may_use is not the sum of its holders"
        );
        self.refs.check();
        let waiting: u64 = self
            .tickets
            .normal
            .iter()
            .chain(self.tickets.prio.iter())
            .map(|t| t.bytes)
            .sum();
        debug_assert_eq!(self.tickets.reclaim_size, waiting, "reclaim_size drifted");
        debug_assert!(
            self.tickets.normal.is_empty() || self.tickets.flush_active || self.aborted,
            "normal tickets wait with no flusher"
        );
        if let Some(t) = &self.txn {
            debug_assert!(t.extwriters <= t.writers);
            debug_assert!(t.id > self.completed_txn);
        }
    }
}
