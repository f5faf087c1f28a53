//! What a btrfs commit writes, and the mutex a commit shares with the
//! superblock step of every fsync. *When* a transaction starts and is
//! committed is the `iolab-flush` model's (its commit thread's 30 s
//! interval, a flush state's `COMMIT_TRANS`, a catch-up throttle, an
//! fsync's full commit); this module holds the rest.
//!
//! What is modelled (kernel `transaction.c`, `tree-log.c`, `disk-io.c`):
//! - **The tree items a transaction changed** ([`Transaction`]): the item
//!   bytes the ordered extents finished under it changed in the fs and
//!   checksum trees ([`Transaction::change`]), handed to its commit
//!   ([`Transaction::end`]).
//! - **The commit's blocks** ([`commit_blocks`]): the leaves those items
//!   fill and a path per tree; the extent-tree blocks the delayed-ref runs
//!   COWed are the flush model's count, added by the glue. Then
//!   `write_all_supers` (a FLUSH and a FUA superblock on every device). A
//!   new transaction may start meanwhile (the kernel's state is already
//!   `UNBLOCKED` when the blocks go out).
//! - **`tree_log_mutex`** ([`LogMutex`]): the commit holds it from its
//!   first tree-block write to its last superblock. An fsync takes it
//!   after its log blocks are down, for its own superblock step; fsyncs
//!   that wait for it together are served by one superblock write (the
//!   log-transaction batching of `btrfs_sync_log`).
//! - **Full-commit fallback** (`p_full_commit`, an assumed share of
//!   fsyncs; the glue draws it): the fsync asks the flush model for a
//!   commit and waits for it instead of logging.
//!
//! What is not: the fallback forced by a chunk allocated during the
//! transaction, and the extent-tree updates that freeing each COWed
//! block's old copy makes.

use std::collections::VecDeque;

use super::metadata::NODESIZE;

/// The kernel-actor random stream (`rng::Entity::Kernel`) the full-commit
/// draws come from.
pub const FULL_COMMIT_STREAM: u32 = 2;

/// Trees a data-writing transaction changes: the subvolume (fs) tree, the
/// extent tree, the checksum tree, and the root tree that points at them.
pub const TREES_PER_COMMIT: u64 = 4;

/// Block pointers per internal node: (16 KiB less the 101-byte header)
/// over 33-byte key pointers, at the 69 % fill of
/// [`super::metadata::item_bytes_for_file`].
const NODE_FANOUT: u64 = (NODESIZE - 101) / 33 * 69 / 100;

/// Levels of internal nodes above the leaves of a tree holding `bytes` of
/// items (0: the root is a leaf).
pub fn inner_levels(bytes: u64) -> u64 {
    let mut reach = 1u64;
    let leaves = bytes.div_ceil(NODESIZE).max(1);
    let mut levels = 0;
    while reach < leaves {
        reach = reach.saturating_mul(NODE_FANOUT);
        levels += 1;
    }
    levels
}

/// Tree blocks a commit writes for `dirty` item bytes changed on a
/// filesystem holding `used` bytes of tree items: the leaves those items
/// fill, plus the path from the root to them in each tree it changed
/// *(assumed: the items a transaction changes in one tree lie side by
/// side, as a run of new files' items do; random overwrites of a large
/// file touch a leaf each, so this undercounts them)*.
pub fn commit_blocks(dirty: u64, used: u64) -> u64 {
    if dirty == 0 {
        return 0;
    }
    dirty.div_ceil(NODESIZE) + TREES_PER_COMMIT * inner_levels(used)
}

/// The running transaction.
#[derive(Debug)]
pub struct Transaction {
    /// Generation of the running (or next) transaction.
    generation: u64,
    /// Item bytes changed in it.
    dirty: u64,
}

/// A transaction handed to its commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ended {
    /// Its generation.
    pub generation: u64,
    /// Item bytes it changed.
    pub dirty: u64,
}

impl Default for Transaction {
    fn default() -> Self {
        Transaction {
            generation: 1,
            dirty: 0,
        }
    }
}

impl Transaction {
    /// Generation of the running (or next) transaction.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// `bytes` of tree items changed in the running transaction.
    pub fn change(&mut self, bytes: u64) {
        self.dirty += bytes;
    }

    /// Ends the running transaction for its commit (whenever the flush
    /// model commits it, with or without item changes); the next change
    /// belongs to the next generation.
    pub fn end(&mut self) -> Ended {
        let ended = Ended {
            generation: self.generation,
            dirty: self.dirty,
        };
        self.generation += 1;
        self.dirty = 0;
        ended
    }
}

/// Who waits for, or holds, [`LogMutex`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waiter {
    /// The commit, for its tree blocks and superblocks.
    Commit,
    /// An fsync (its context), for its superblock step.
    Fsync(u32),
}

/// Who holds the mutex after an unlock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Granted {
    /// Nobody.
    Free,
    /// The commit.
    Commit,
    /// A batch of fsyncs (in the caller's batch list, the first leads).
    Fsyncs,
}

/// `tree_log_mutex`: one holder, a FIFO of waiters.
#[derive(Debug, Default)]
pub struct LogMutex {
    held: bool,
    queue: VecDeque<Waiter>,
}

impl LogMutex {
    /// Whether someone holds it.
    pub fn held(&self) -> bool {
        self.held
    }

    /// Waiters, oldest first.
    pub fn waiting(&self) -> usize {
        self.queue.len()
    }

    /// Whether a commit waits for it.
    pub fn commit_waits(&self) -> bool {
        self.queue.contains(&Waiter::Commit)
    }

    /// `who` asks for it: true if it holds it now, else it waits in turn.
    pub fn lock(&mut self, who: Waiter) -> bool {
        if self.held {
            self.queue.push_back(who);
            false
        } else {
            debug_assert!(self.queue.is_empty(), "a free mutex has no waiters");
            self.held = true;
            true
        }
    }

    /// The holder lets go. The first waiter takes it; if that is an fsync,
    /// every fsync queued behind it up to the next commit joins its batch
    /// (`batch` is cleared and filled, leader first).
    pub fn unlock(&mut self, batch: &mut Vec<u32>) -> Granted {
        debug_assert!(self.held, "unlock of a free mutex");
        batch.clear();
        match self.queue.pop_front() {
            None => {
                self.held = false;
                Granted::Free
            }
            Some(Waiter::Commit) => Granted::Commit,
            Some(Waiter::Fsync(c)) => {
                batch.push(c);
                while let Some(&Waiter::Fsync(c)) = self.queue.front() {
                    batch.push(c);
                    self.queue.pop_front();
                }
                Granted::Fsyncs
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transaction_collects_its_changes_until_it_ends() {
        let mut t = Transaction::default();
        t.change(100);
        t.change(50);
        assert_eq!(
            t.end(),
            Ended {
                generation: 1,
                dirty: 150
            }
        );
        assert_eq!(t.generation(), 2);
        assert_eq!(t.end().dirty, 0, "a commit without item changes");
        t.change(7);
        assert_eq!((t.generation(), t.end().dirty), (3, 7));
    }

    #[test]
    fn tree_height_grows_with_the_fanout() {
        assert_eq!(NODE_FANOUT, 340);
        assert_eq!(inner_levels(0), 0);
        assert_eq!(inner_levels(NODESIZE), 0, "one leaf is its own root");
        assert_eq!(inner_levels(NODESIZE + 1), 1);
        assert_eq!(inner_levels(340 * NODESIZE), 1);
        assert_eq!(inner_levels(340 * NODESIZE + 1), 2);
        // An aged 19 GiB of metadata: about 1.2 M leaves, three levels.
        assert_eq!(inner_levels(19 << 30), 3);
    }

    #[test]
    fn a_commit_writes_the_dirty_leaves_and_a_path_per_tree() {
        assert_eq!(commit_blocks(0, 19 << 30), 0);
        assert_eq!(commit_blocks(1, 0), 1, "a fresh filesystem: root leaves");
        assert_eq!(
            commit_blocks(10 * NODESIZE + 1, 19 << 30),
            11 + TREES_PER_COMMIT * 3
        );
    }

    #[test]
    fn the_mutex_serves_in_order_and_batches_fsyncs_up_to_a_commit() {
        let mut m = LogMutex::default();
        let mut batch = vec![99];
        assert!(m.lock(Waiter::Fsync(0)), "free: taken at once");
        assert!(!m.lock(Waiter::Commit));
        assert!(!m.lock(Waiter::Fsync(1)));
        assert!(!m.lock(Waiter::Fsync(2)));
        assert!(!m.lock(Waiter::Commit));
        assert!(!m.lock(Waiter::Fsync(3)));
        assert!(m.commit_waits());
        assert_eq!(m.unlock(&mut batch), Granted::Commit);
        assert!(batch.is_empty());
        assert_eq!(m.unlock(&mut batch), Granted::Fsyncs);
        assert_eq!(batch, [1, 2], "stops at the next commit");
        assert_eq!(m.unlock(&mut batch), Granted::Commit);
        assert_eq!(m.unlock(&mut batch), Granted::Fsyncs);
        assert_eq!(batch, [3]);
        assert!(!m.commit_waits());
        assert_eq!(m.unlock(&mut batch), Granted::Free);
        assert!(!m.held());
        assert!(m.lock(Waiter::Commit));
        assert_eq!(m.waiting(), 0);
    }
}
