//! Transactions (kernel: `struct btrfs_transaction`,
//! `enum btrfs_trans_state`).

/// Life of a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TxnState {
    /// Handles join freely.
    Running,
    /// Catch-up only: a handle end saw a space shortage; new `Start`
    /// handles wait and the transaction is committed at once.
    Blocked,
    /// Commit begun: waiting for external writers to leave.
    CommitStart,
    /// Waiting for every writer, then running all refs.
    CommitDoing,
    /// Being written out; a new transaction may run.
    Unblocked,
    /// Durable; its pinned bytes are free.
    Completed,
}

/// The running transaction (not yet `Unblocked`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Txn {
    pub id: u64,
    pub state: TxnState,
    /// Open handles.
    pub writers: u32,
    /// Open `Start`/`Attach` handles.
    pub extwriters: u32,
    pub start_ns: u64,
    /// The commit pre-flush happened (kernel: `BTRFS_TRANS_COMMIT_PREP`,
    /// formerly the flushing bit).
    pub flushing: bool,
    /// Bytes pinned by this transaction.
    pub pinned: u64,
    /// Tree blocks dirtied (written by the commit).
    pub dirty_meta: u64,
}

/// The transaction being written out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Writing {
    pub id: u64,
    pub pinned: u64,
}
