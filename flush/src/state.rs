//! The ordered flush states (kernel: `enum btrfs_flush_state`) and the
//! lists the flushers walk.

use crate::StateList;

/// One flush state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FlushState {
    /// Run part of the delayed inode items (caller's work).
    DelayedItemsNr,
    /// Run all delayed inode items (caller's work).
    DelayedItems,
    /// Run `max(1, to_reclaim / U)` heads of delayed refs (units in the
    /// legacy accounting).
    DelayedRefsNr,
    /// `run(0)`.
    DelayedRefs,
    /// Start delalloc writeback (caller's work).
    Delalloc,
    /// Start delalloc writeback and wait for ordered extents (caller's work).
    DelallocWait,
    /// Write back all delalloc (caller's work).
    DelallocFull,
    /// Allocate a chunk if usage is high enough.
    AllocChunk,
    /// Allocate a chunk if any unallocated space is left.
    AllocChunkForce,
    /// Run delayed iputs (caller's work).
    RunDelayedIputs,
    /// Commit the transaction (gated by `may_commit_transaction` before 5.12).
    CommitTrans,
}

impl FlushState {
    /// Every state, in the kernel's order.
    pub const ALL: [FlushState; 11] = [
        FlushState::DelayedItemsNr,
        FlushState::DelayedItems,
        FlushState::DelayedRefsNr,
        FlushState::DelayedRefs,
        FlushState::Delalloc,
        FlushState::DelallocWait,
        FlushState::DelallocFull,
        FlushState::AllocChunk,
        FlushState::AllocChunkForce,
        FlushState::RunDelayedIputs,
        FlushState::CommitTrans,
    ];

    /// The state's value in the kernel's `enum btrfs_flush_state` (6.x), as
    /// `btrfs_flush_space` traces it: 1 for `FLUSH_DELAYED_ITEMS_NR` up to
    /// 11 for `COMMIT_TRANS` (12, `RESET_ZONES`, is zoned-only and not
    /// modelled).
    pub const fn kernel_number(self) -> i32 {
        self as i32 + 1
    }

    /// The state whose kernel value is `n`.
    pub fn from_kernel_number(n: i32) -> Option<FlushState> {
        Self::ALL.into_iter().find(|s| s.kernel_number() == n)
    }

    /// The kernel's name of the state (`FLUSH_DELALLOC`, …).
    pub const fn kernel_name(self) -> &'static str {
        match self {
            FlushState::DelayedItemsNr => "FLUSH_DELAYED_ITEMS_NR",
            FlushState::DelayedItems => "FLUSH_DELAYED_ITEMS",
            FlushState::DelayedRefsNr => "FLUSH_DELAYED_REFS_NR",
            FlushState::DelayedRefs => "FLUSH_DELAYED_REFS",
            FlushState::Delalloc => "FLUSH_DELALLOC",
            FlushState::DelallocWait => "FLUSH_DELALLOC_WAIT",
            FlushState::DelallocFull => "FLUSH_DELALLOC_FULL",
            FlushState::AllocChunk => "ALLOC_CHUNK",
            FlushState::AllocChunkForce => "ALLOC_CHUNK_FORCE",
            FlushState::RunDelayedIputs => "RUN_DELAYED_IPUTS",
            FlushState::CommitTrans => "COMMIT_TRANS",
        }
    }

    /// Whether the state's work is the caller's (page cache, inodes) rather
    /// than the core's (refs, chunks, commits).
    pub const fn is_external(self) -> bool {
        matches!(
            self,
            FlushState::DelayedItemsNr
                | FlushState::DelayedItems
                | FlushState::Delalloc
                | FlushState::DelallocWait
                | FlushState::DelallocFull
                | FlushState::RunDelayedIputs
        )
    }
}

use FlushState::*;

/// 4.19 ticket-worker list.
pub const STATES_4_19: &[FlushState] = &[
    DelayedItemsNr,
    DelayedItems,
    Delalloc,
    DelallocWait,
    AllocChunk,
    CommitTrans,
];

/// 5.0 ticket-worker list (commit 413df7252d52 added the two ref states).
pub const STATES_5_0: &[FlushState] = &[
    DelayedItemsNr,
    DelayedItems,
    DelayedRefsNr,
    DelayedRefs,
    Delalloc,
    DelallocWait,
    AllocChunk,
    CommitTrans,
];

/// Current ticket-worker list (without zoned `RESET_ZONES`).
pub const STATES_CURRENT: &[FlushState] = &[
    DelayedItemsNr,
    DelayedItems,
    DelayedRefsNr,
    DelayedRefs,
    Delalloc,
    DelallocWait,
    DelallocFull,
    AllocChunk,
    AllocChunkForce,
    RunDelayedIputs,
    CommitTrans,
];

/// Priority list of `FlushLimit` (kernel: `priority_flush_states`).
pub const PRIORITY_STATES: &[FlushState] = &[DelayedItemsNr, DelayedItems, AllocChunk];

/// Priority list of `FlushEvict` (kernel: `evict_flush_states`).
pub const EVICT_STATES: &[FlushState] = &[
    DelayedItemsNr,
    DelayedItems,
    DelayedRefsNr,
    DelayedRefs,
    Delalloc,
    DelallocWait,
    DelallocFull,
    AllocChunk,
    CommitTrans,
];

/// Priority list of `FlushFreeSpaceInode` (kernel:
/// `priority_reclaim_data_space`, simplified to one forced allocation).
pub const FREE_SPACE_INODE_STATES: &[FlushState] = &[AllocChunkForce];

/// The ticket-worker list of a [`StateList`].
pub const fn states(list: StateList) -> &'static [FlushState] {
    match list {
        StateList::V4_19 => STATES_4_19,
        StateList::V5_0 => STATES_5_0,
        StateList::Current => STATES_CURRENT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_numbers_follow_enum_btrfs_flush_state() {
        assert_eq!(DelayedItemsNr.kernel_number(), 1);
        assert_eq!(DelayedRefs.kernel_number(), 4);
        assert_eq!(Delalloc.kernel_number(), 5);
        assert_eq!(DelallocFull.kernel_number(), 7);
        assert_eq!(AllocChunk.kernel_number(), 8);
        assert_eq!(CommitTrans.kernel_number(), 11);
        for s in FlushState::ALL {
            assert_eq!(FlushState::from_kernel_number(s.kernel_number()), Some(s));
        }
        assert_eq!(FlushState::from_kernel_number(0), None);
        assert_eq!(FlushState::from_kernel_number(12), None);
        assert_eq!(CommitTrans.kernel_name(), "COMMIT_TRANS");
    }
}
