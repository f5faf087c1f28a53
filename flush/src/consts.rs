//! Constants of the model. Sizes are bytes,
//! times nanoseconds.

/// Default tree node size (mkfs default, 16 KiB).
pub const DEFAULT_NODESIZE: u64 = 16 * 1024;
/// Deepest btree level (kernel: `BTRFS_MAX_LEVEL`). Every worst-case
/// metadata estimate assumes a COW of one node per level.
pub const MAX_LEVEL: u64 = 8;
/// One second.
pub const SEC: u64 = 1_000_000_000;
/// Transaction age at which the commit thread commits (kernel: the default
/// `commit_interval` mount option, 30 s).
pub const COMMIT_INTERVAL_NS: u64 = 30 * SEC;
/// How often the commit thread looks at the running transaction (kernel:
/// `transaction_kthread` sleeps 5 s between checks).
pub const KTHREAD_PERIOD_NS: u64 = 5 * SEC;
/// Start value of the catch-up average ref runtime: 1 s / 64 (kernel:
/// `fs_info->avg_delayed_ref_runtime` initialised as `NSEC_PER_SEC >> 6`).
pub const AVG_REF_RUNTIME_INIT_NS: u64 = SEC / 64;
/// `num_entries × avg` at or above this is throttle level 1: the ending
/// handle waits for its catch-up batch (kernel: `btrfs_should_throttle_delayed_refs`).
pub const THROTTLE_WAIT_NS: u64 = SEC;
/// `num_entries × avg` at or above this is throttle level 2:
/// fire-and-forget catch-up batch.
pub const THROTTLE_ASYNC_NS: u64 = SEC / 2;
/// Smallest catch-up batch queued at the end of a handle (kernel:
/// `__btrfs_end_transaction`, `cur = max(updates, 32)`).
pub const MIN_CATCHUP_BATCH: u64 = 32;
/// Global-reserve "low" test of `should_end_transaction`: less than 5/10
/// of its size reserved (kernel: `btrfs_block_rsv_check(global, 5)`).
pub const GLOBAL_LOW_TENTHS: u64 = 5;
/// A steal from the global reserve must leave at least 10 % of its size
/// (kernel: `steal_from_global_rsv`, `mult_perc(size, 10)`).
pub const STEAL_FLOOR_PCT: u64 = 10;
/// Overcommit share of unallocated space for `FlushAll` reservers: 1/8
/// (kernel: `calc_available_free_space`, `avail >>= 3`).
pub const OVERCOMMIT_SHIFT_FLUSH_ALL: u32 = 3;
/// Overcommit share for every other reserver: 1/2 (`avail >>= 1`).
pub const OVERCOMMIT_SHIFT_OTHER: u32 = 1;
/// Normal-ticket failure comes after more than this many full passes of
/// the flush states without progress (kernel: `commit_cycles > 2`).
pub const MAX_COMMIT_CYCLES: u32 = 2;
/// Preemptive flushing does nothing unless more than this is reserved or
/// pinned beyond the global reserve (kernel: `need_preemptive_reclaim`, 128 MiB).
pub const PREEMPT_MIN_FLUSHABLE: u64 = 128 * 1024 * 1024;
/// Range of the preemptive clamp (kernel: `space_info->clamp`, 1..=8).
pub const CLAMP_MIN: u32 = 1;
/// Upper end of the clamp range.
pub const CLAMP_MAX: u32 = 8;
/// The no-force chunk allocation only happens once `used_all − may_use +
/// 2 MiB` reaches 80 % of the allocated metadata space (kernel:
/// `should_alloc_chunk`).
pub const CHUNK_ALLOC_SLACK: u64 = 2 * 1024 * 1024;
/// Percentage of `total` of the no-force chunk allocation threshold.
pub const CHUNK_ALLOC_PCT: u64 = 80;
/// Default metadata chunk size (kernel: 256 MiB below 50 GiB of devices).
pub const DEFAULT_CHUNK_SIZE: u64 = 256 * 1024 * 1024;
/// Leaf header overhead subtracted from the node size in the legacy space
/// check (`struct btrfs_header`: 101 bytes).
pub const LEAF_HEADER: u64 = 101;
/// Bytes of one head in an extent leaf in the legacy check: extent item +
/// inline ref with skinny metadata (`heads_to_leaves`: 33 bytes).
pub const LEGACY_HEAD_ITEM: u64 = 33;
/// 1 MiB.
pub const MIB: u64 = 1024 * 1024;

/// Insert unit `U = nodesize × MAX_LEVEL × 2` (kernel:
/// `btrfs_calc_insert_metadata_size(fs, 1)`; `calc_trans_metadata_size` up
/// to 5.3).
pub const fn insert_unit(nodesize: u64) -> u64 {
    nodesize * MAX_LEVEL * 2
}

/// Update unit `M = nodesize × MAX_LEVEL` (kernel: `btrfs_calc_metadata_size`).
pub const fn update_unit(nodesize: u64) -> u64 {
    nodesize * MAX_LEVEL
}

/// `bytes × pct / 100` without overflow for any `u64` input (kernel:
/// `mult_perc`, `div_factor_fine`).
pub const fn pct(bytes: u64, pct: u64) -> u64 {
    ((bytes as u128 * pct as u128) / 100) as u64
}
