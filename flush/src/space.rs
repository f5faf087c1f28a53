//! The metadata `space_info` counters and the block reserves, with the
//! pure rules on them: used bytes, overcommit, release routing and the
//! space checks.

use crate::FlushKind;
use crate::consts::{
    GLOBAL_LOW_TENTHS, LEAF_HEADER, LEGACY_HEAD_ITEM, MAX_LEVEL, OVERCOMMIT_SHIFT_FLUSH_ALL,
    OVERCOMMIT_SHIFT_OTHER, THROTTLE_ASYNC_NS, THROTTLE_WAIT_NS,
};

/// One block reserve (kernel: `struct btrfs_block_rsv`). Its `reserved`
/// bytes are part of [`Space::may_use`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rsv {
    /// What the reserve should hold.
    pub size: u64,
    /// What it holds.
    pub reserved: u64,
    /// `reserved >= size`.
    pub full: bool,
}

impl Rsv {
    /// Bytes missing to be full.
    pub const fn deficit(&self) -> u64 {
        self.size.saturating_sub(self.reserved)
    }

    pub(crate) fn set_full(&mut self) {
        self.full = self.reserved >= self.size;
    }

    pub(crate) fn check(&self) {
        debug_assert!(
            self.reserved <= self.size,
            "reserve over its size: {self:?}"
        );
        debug_assert_eq!(
            self.full,
            self.reserved >= self.size,
            "stale full flag: {self:?}"
        );
    }
}

/// The four block reserves of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RsvKind {
    /// `global_block_rsv`: the emergency pool.
    Global,
    /// `delayed_refs_rsv` (5.0+).
    DelayedRefs,
    /// `delayed_block_rsv` (delayed inode items).
    DelayedItems,
    /// `trans_block_rsv`: what open handles reserved at start.
    Trans,
}

/// The metadata space counters (kernel: `struct btrfs_space_info`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Space {
    /// Allocated metadata chunk bytes.
    pub total: u64,
    /// Bytes in tree blocks.
    pub used: u64,
    /// Bytes allocated but not yet referenced (`bytes_reserved`).
    pub reserved: u64,
    /// Bytes freed in the running or committing transaction, usable only
    /// after its commit completes.
    pub pinned: u64,
    /// Read-only bytes.
    pub readonly: u64,
    /// Reservations: every block reserve's `reserved` plus outstanding
    /// grants.
    pub may_use: u64,
    /// No more chunks can be allocated.
    pub full: bool,
    /// Unallocated device space.
    pub unallocated: u64,
    /// Profile factor of metadata chunks.
    pub profile_factor: u64,
}

impl Space {
    /// `used + reserved + pinned + readonly + may_use` (kernel:
    /// `btrfs_space_info_used(s, true)`).
    pub const fn used_all(&self) -> u64 {
        self.used_no_may_use().saturating_add(self.may_use)
    }

    /// The same without `may_use`.
    pub const fn used_no_may_use(&self) -> u64 {
        self.used
            .saturating_add(self.reserved)
            .saturating_add(self.pinned)
            .saturating_add(self.readonly)
    }

    /// Unallocated space usable for overcommit by a reserver of this kind
    /// (kernel: `calc_available_free_space`): a 1/8 share for `FlushAll`,
    /// 1/2 for everyone else.
    pub const fn avail(&self, kind: FlushKind) -> u64 {
        let avail = match self.unallocated.checked_div(self.profile_factor) {
            Some(a) => a,
            None => 0,
        };
        match kind {
            FlushKind::FlushAll => avail >> OVERCOMMIT_SHIFT_FLUSH_ALL,
            _ => avail >> OVERCOMMIT_SHIFT_OTHER,
        }
    }

    /// Whether `bytes` more may be promised beyond the allocated chunks
    /// (kernel: `btrfs_can_overcommit`; strict `<`, metadata only).
    pub const fn can_overcommit(&self, bytes: u64, kind: FlushKind) -> bool {
        self.used_all().saturating_add(bytes) < self.total.saturating_add(self.avail(kind))
    }

    /// The admission test shared by reservations and ticket grants: fits in
    /// the allocated space or may overcommit.
    pub const fn fits(&self, bytes: u64, kind: FlushKind) -> bool {
        self.used_all().saturating_add(bytes) <= self.total || self.can_overcommit(bytes, kind)
    }

    /// How far `used_all` is above `total + avail(FlushAll)` (the overage
    /// added to `to_reclaim`, kernel: `btrfs_calc_reclaim_metadata_size`).
    pub const fn overage(&self) -> u64 {
        let limit = self.total.saturating_add(self.avail(FlushKind::FlushAll));
        self.used_all().saturating_sub(limit)
    }
}

/// `check_space_rsv()` (5.0+, kernel: `btrfs_check_space_for_delayed_refs`):
/// true means "short": the delayed-ref reserve's size is at least what it
/// and the global reserve hold together.
pub const fn check_space_rsv(delayed_refs: &Rsv, global: &Rsv) -> bool {
    delayed_refs.size >= delayed_refs.reserved.saturating_add(global.reserved)
}

/// Leaves needed for `heads` extent items in the legacy check (kernel ≤ 4.20:
/// `heads_to_leaves`).
pub const fn legacy_leaves(heads: u64, nodesize: u64) -> u64 {
    let per = nodesize.saturating_sub(LEAF_HEADER);
    match heads.saturating_mul(LEGACY_HEAD_ITEM).checked_div(per) {
        Some(l) => l,
        None => 0,
    }
}

/// `check_space_legacy()` (≤ 4.20, kernel: the old
/// `btrfs_check_space_for_delayed_refs`): true means the global reserve
/// cannot cover a worst case for the ready heads, csum leaves and dirty
/// block groups.
pub const fn check_space_legacy(
    heads_ready: u64,
    csum_leaves: u64,
    dirty_bgs: u64,
    space_full: bool,
    global_reserved: u64,
    nodesize: u64,
) -> bool {
    let u = nodesize.saturating_mul(MAX_LEVEL * 2);
    let leaves = legacy_leaves(heads_ready, nodesize);
    let mut need = u
        .saturating_add(leaves.saturating_sub(1).saturating_mul(nodesize))
        .saturating_mul(2)
        .saturating_add(csum_leaves.saturating_mul(nodesize));
    let mut bg = u.saturating_mul(dirty_bgs);
    if space_full {
        need = need.saturating_mul(2);
        bg = bg.saturating_mul(2);
    }
    global_reserved <= need.saturating_add(bg)
}

/// The global reserve is less than half full (kernel:
/// `btrfs_block_rsv_check(global, 5)` failing).
pub const fn global_low(global: &Rsv) -> bool {
    (global.reserved as u128) < global.size as u128 * GLOBAL_LOW_TENTHS as u128 / 10
}

/// Throttle level of the time heuristic (kernel:
/// `btrfs_should_throttle_delayed_refs`, up to 6.3): 1 = wait, 2 = queue
/// and go on, 0 = only if the space check says short (`space_short`).
pub const fn throttle_level(num_entries: u64, avg_ns: u64, space_short: bool) -> u8 {
    let v = num_entries as u128 * avg_ns as u128;
    if v >= THROTTLE_WAIT_NS as u128 {
        1
    } else if v >= THROTTLE_ASYNC_NS as u128 {
        2
    } else if space_short {
        1
    } else {
        0
    }
}

/// One update of the catch-up average (kernel: `btrfs_run_delayed_refs`):
/// `(3·avg + wall)/4`, where `wall` is the whole call's duration.
pub const fn avg_update(avg_ns: u64, wall_ns: u64) -> u64 {
    let v = (avg_ns as u128 * 3 + wall_ns as u128) / 4;
    if v > u64::MAX as u128 {
        u64::MAX
    } else {
        v as u64
    }
}
