//! The ordered flush states (kernel: `enum btrfs_flush_state`) and the
//! lists the flushers walk (spec §6.1–6.2).

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
