//! What an instance is built from: the behaviour knobs (the kernel eras of
//! the crate docs) and the filesystem's sizes and costs.

use crate::consts::{
    COMMIT_INTERVAL_NS, DEFAULT_CHUNK_SIZE, DEFAULT_NODESIZE, KTHREAD_PERIOD_NS, MIB, insert_unit,
};

/// What ending a transaction handle does about delayed refs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Up to 5.0-rc4: the ending handle may queue or wait for a
    /// catch-up batch of refs and may block and commit the transaction.
    CatchUp,
    /// From 5.0-rc5, commit 302167c50b32: ending a handle does no
    /// delayed-ref work; pressure comes only through reservations.
    OnDemand,
}

/// Which preemptive-flushing generation runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Preempt {
    /// No preemptive flushing at all (not a kernel era; a control).
    Off,
    /// `need_do_async_reclaim` (before 5.12): a successful reservation above
    /// 98 % may queue the ticket worker, which stops after one state when no
    /// ticket waits.
    Weak2019,
    /// `need_preemptive_reclaim` and its own worker with clamping (5.12+).
    Clamped2021,
}

/// How much a `run(0)` call (commit pre-flush, `FLUSH_DELAYED_REFS`) runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunZero {
    /// Up to 5.11: `2 × num_entries` heads (units with the legacy
    /// accounting), counted at the call, while new heads added meanwhile
    /// are fair game (it can chase producers).
    TwiceEntries,
    /// 5.12+: the heads present at the call (`num_heads_ready` snapshot).
    HeadsPresent,
}

/// Which flush-state list the ticket worker walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateList {
    /// 4.19: items, delalloc, chunk, commit (no delayed-ref states).
    V4_19,
    /// 5.0: 4.19's list with `FLUSH_DELAYED_REFS_NR`/`FLUSH_DELAYED_REFS`
    /// before delalloc.
    V5_0,
    /// Current numbering: 5.0 plus `FLUSH_DELALLOC_FULL`,
    /// `ALLOC_CHUNK_FORCE` and `RUN_DELAYED_IPUTS`.
    Current,
}

/// The behaviour of one variant. Named variants are built by
/// [`Policy::catch_up`], [`Policy::on_demand`] and the knob parser
/// ([`parse_policy`](crate::parse_policy)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Policy {
    /// Handle-end behaviour.
    pub mode: Mode,
    /// ≤ 4.20 accounting (CU-legacy): no `delayed_refs` reserve, the legacy
    /// space check, `run_at_end` catch-up runs, unused handle reservations
    /// go to the global reserve, the 4.19 state list.
    pub legacy: bool,
    /// Preemptive flushing generation.
    pub preempt: Preempt,
    /// `COMMIT_TRANS` asks `may_commit_transaction` first (before 5.12)
    /// instead of committing unconditionally.
    pub commit_gate: bool,
    /// Extent of a `run(0)` call.
    pub run_zero: RunZero,
    /// `need_preemptive_reclaim`'s "plainly full" threshold in percent of
    /// `total` (98 before the 5.15 fix 93c60b17f2b5, 90 after).
    pub preempt_full_pct: u64,
    /// State list of the ticket worker.
    pub states: StateList,
    /// Charge two insert units per head (free-space tree;
    /// `btrfs_calc_delayed_ref_bytes`).
    pub free_space_tree: bool,
}

impl Policy {
    /// `flush=catch-up`: CU-rsv (5.0-rc1…rc4). The 2019
    /// preemptive path is on: `need_do_async_reclaim` predates 5.0.
    pub const fn catch_up() -> Policy {
        Policy {
            mode: Mode::CatchUp,
            legacy: false,
            preempt: Preempt::Weak2019,
            commit_gate: true,
            run_zero: RunZero::TwiceEntries,
            preempt_full_pct: 98,
            states: StateList::V5_0,
            free_space_tree: false,
        }
    }

    /// `flush=catch-up:run-at-end=on`: CU-legacy (≤ 4.20).
    pub const fn catch_up_legacy() -> Policy {
        Policy {
            legacy: true,
            states: StateList::V4_19,
            ..Policy::catch_up()
        }
    }

    /// `flush=on-demand`: OD-2019 (5.0-rc5 … 5.11).
    pub const fn on_demand() -> Policy {
        Policy {
            mode: Mode::OnDemand,
            ..Policy::catch_up()
        }
    }

    /// `flush=on-demand:preempt=2021`: OD-2021 (5.12 … 6.6): the clamped
    /// preemptive worker, unconditional commits, a pre-flush bounded by the
    /// heads present, the 90 % threshold and the current state list.
    pub const fn on_demand_2021() -> Policy {
        Policy {
            mode: Mode::OnDemand,
            legacy: false,
            preempt: Preempt::Clamped2021,
            commit_gate: false,
            run_zero: RunZero::HeadsPresent,
            preempt_full_pct: 90,
            states: StateList::Current,
            free_space_tree: false,
        }
    }
}

/// Sizes, costs and capacities of one instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Params {
    /// Tree node size.
    pub nodesize: u64,
    /// Allocated metadata space (`space_info->total_bytes`).
    pub total: u64,
    /// Metadata already used at creation (`bytes_used`).
    pub used: u64,
    /// Read-only bytes (`bytes_readonly`).
    pub readonly: u64,
    /// Unallocated device space (`free_chunk_space`), the overcommit base
    /// and the source of new chunks.
    pub unallocated: u64,
    /// Metadata profile factor (1 single, 2 dup/raid1).
    pub profile_factor: u64,
    /// Size of a new metadata chunk.
    pub chunk_size: u64,
    /// Global block reserve size; filled at creation.
    pub global_rsv: u64,
    /// Online CPUs (the 2019 reclaim target is `min(ncpu MiB, 16 MiB)`).
    pub ncpu: u64,
    /// CPU cost of running one head, excluding its refs (`c_head`).
    pub c_head_ns: u64,
    /// CPU cost of one ref (`c_ref`).
    pub c_ref_ns: u64,
    /// Extent-tree bytes COWed per head run: taken from the delayed-refs
    /// reserve, pinned until commit, written by the commit.
    pub meta_per_head: u64,
    /// Most heads one `RunRefs` decision claims; a run call longer than
    /// this is cut into several decisions (head granularity is kept).
    pub chunk_heads: u64,
    /// Commit interval (30 s).
    pub commit_interval_ns: u64,
    /// Commit thread period (5 s).
    pub kthread_period_ns: u64,
    /// Capacity of each ticket queue (normal, priority).
    pub ticket_capacity: usize,
    /// Capacity of the handle table.
    pub max_handles: usize,
    /// Capacity of the trace ring.
    pub trace_capacity: usize,
    /// Capacity of the decision queue.
    pub decision_capacity: usize,
}

impl Default for Params {
    /// 1 GiB of metadata chunks (256 MiB used), 64 GiB unallocated, 8 CPUs and the
    /// assumed CPU costs `c_head` 20 µs and `c_ref` 5 µs.
    fn default() -> Params {
        Params {
            nodesize: DEFAULT_NODESIZE,
            total: 1024 * MIB,
            used: 256 * MIB,
            readonly: 0,
            unallocated: 64 * 1024 * MIB,
            profile_factor: 1,
            chunk_size: DEFAULT_CHUNK_SIZE,
            global_rsv: 64 * MIB,
            ncpu: 8,
            c_head_ns: 20_000,
            c_ref_ns: 5_000,
            meta_per_head: 4096,
            chunk_heads: 32,
            commit_interval_ns: COMMIT_INTERVAL_NS,
            kthread_period_ns: KTHREAD_PERIOD_NS,
            ticket_capacity: 1024,
            max_handles: 1024,
            trace_capacity: 4096,
            decision_capacity: 4096,
        }
    }
}

impl Params {
    /// Insert unit `U` for this node size.
    pub const fn insert_unit(&self) -> u64 {
        insert_unit(self.nodesize)
    }
}

/// Everything an instance is built from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Config {
    /// Behaviour.
    pub policy: Policy,
    /// Sizes and costs.
    pub params: Params,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy::on_demand()
    }
}
