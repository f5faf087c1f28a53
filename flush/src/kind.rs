//! How a reserver may flush (kernel: `enum btrfs_reserve_flush_enum`) and
//! how a handle joins a transaction (kernel: `TRANS_START`, `TRANS_JOIN`, ...).

/// What a reserver allows the space code to do for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlushKind {
    /// Fail at once if it does not fit; never jumps normal tickets.
    NoFlush,
    /// Priority ticket; the caller flushes delayed items and allocates a
    /// chunk itself.
    FlushLimit,
    /// Priority ticket with the evict state list; may steal from the
    /// global reserve.
    FlushEvict,
    /// Normal ticket (data space in the kernel; treated as metadata here).
    FlushData,
    /// Priority ticket that can only allocate chunks.
    FlushFreeSpaceInode,
    /// Normal ticket: sleep while the async worker flushes.
    FlushAll,
    /// Normal ticket that may steal from the global reserve at failure.
    FlushAllSteal,
    /// Never tickets; succeeds if the bytes fit without `may_use`.
    FlushEmergency,
}

impl FlushKind {
    /// Whether a ticket of this kind goes to the normal queue.
    pub const fn is_normal(self) -> bool {
        matches!(
            self,
            FlushKind::FlushAll | FlushKind::FlushAllSteal | FlushKind::FlushData
        )
    }

    /// Whether this kind may create a ticket at all (kernel: `can_ticket`).
    pub const fn can_ticket(self) -> bool {
        !matches!(self, FlushKind::NoFlush | FlushKind::FlushEmergency)
    }

    /// Whether a failing ticket of this kind may steal from the global
    /// reserve (kernel: `can_steal`).
    pub const fn can_steal(self) -> bool {
        matches!(self, FlushKind::FlushAllSteal | FlushKind::FlushEvict)
    }

    /// Whether a reserver of this kind must wait behind normal tickets too
    /// (the pending-tickets test of `__reserve_bytes`: `FlushAll`,
    /// `FlushAllSteal` and `NoFlush`).
    pub const fn queues_behind_normal(self) -> bool {
        matches!(
            self,
            FlushKind::FlushAll | FlushKind::FlushAllSteal | FlushKind::NoFlush
        )
    }
}

/// How a handle attaches to the running transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HandleKind {
    /// `btrfs_start_transaction`: reserves, waits while the transaction is
    /// blocked or committing, counts as an external writer.
    Start,
    /// `btrfs_join_transaction`: no reservation, not held up by `Blocked`.
    Join,
    /// `btrfs_join_transaction_nolock` (free-space inode writes): never
    /// blocks or commits the transaction at its end.
    JoinNoLock,
    /// `btrfs_attach_transaction`: joins only an existing transaction;
    /// counts as an external writer.
    Attach,
}

impl HandleKind {
    /// Counted in `extwriters` (kernel: `TRANS_EXTWRITERS`).
    pub const fn is_external(self) -> bool {
        matches!(self, HandleKind::Start | HandleKind::Attach)
    }
}
