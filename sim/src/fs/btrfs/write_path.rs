//! btrfs: the metadata-space side of btrfs's buffered write path
//! (for the delayed-ref runs of `docs/flush-reproduction.md`), driven
//! around the `iolab-flush` model.
//!
//! This module holds the pure bookkeeping; `world::btrfs` is the glue to
//! the page cache, the block layer and the flush model.
//!
//! * **Reservation per `write()`** (`calc_inode_reservations`): `U × (new
//!   outstanding extents + 1 csum leaf) + M` is reserved up front (a ticket
//!   if it does not fit); then the inode's reserve is resized to `U ×
//!   outstanding + M + U × csum leaves` and the excess released.
//! * **Outstanding extents** are the file's delalloc runs (dirty pages not
//!   under writeback, counted as maximal runs) plus its ordered extents in
//!   flight (one per writeback bio), as btrfs counts
//!   `outstanding_extents`.
//! * **Ordered-extent completion** (`btrfs_finish_ordered_io`): a pool of
//!   endio workers, each spending `finish_cpu_ns`, joins the transaction
//!   and queues refs ([`ExtentRefs`]): a first write into a preallocated
//!   extent adds a ref to that extent, merged into one ref node per head
//!   and transaction; a rewrite adds a new extent and drops the old one.
//! * **Delalloc flushing**: the flush states' `shrink_delalloc`
//!   starts writeback of at least an eighth of the delalloc bytes, then
//!   waits for ordered extents or sleeps a jiffy (`world::btrfs`).
//! * **Commit IO**: the COWed tree blocks as metadata writes, then a
//!   FLUSH and a FUA superblock write.
//!
//! Not modelled: delayed inode items, the csum tree's own COW, the log tree
//! (fsync), a CPU model with contention (every actor is its own server),
//! and metadata chunk allocation on the device (the flush model's space
//! accounting allocates chunks, the device layout does not move).

use crate::time::Ns;

/// CPU time of one buffered `write()` in btrfs beyond the page copy
/// (*assumed* 4 µs in all; the copy is 0.5 µs).
pub const WRITE_CPU_NS: Ns = 3_500;
/// CPU time an endio worker spends finishing one ordered extent
/// (`c_finish`, *assumed*).
pub const FINISH_CPU_NS: Ns = 15_000;
/// Size of one preallocated extent (`fallocate` creates extents of at most
/// 128 MiB, `BTRFS_MAX_EXTENT_SIZE`).
pub const PREALLOC_EXTENT_BYTES: u64 = 128 << 20;
/// Checksums of 4 bytes per 4 KiB sector in a 16 KiB leaf
/// (`btrfs_csum_bytes_to_leaves`: leaf data area / csum size).
pub const CSUMS_PER_LEAF: u64 = (16_384 - 101 - 25) / 4;
/// Interval of the `may_use` time series.
pub const SAMPLE_NS: Ns = 1_000_000_000;

/// The endio worker pool size: `min(ncpu + 2, 8)` (btrfs's
/// `thread_pool_size` default).
pub fn endio_workers(ncpu: u32) -> u32 {
    (ncpu + 2).min(8)
}

/// Leaves needed for the checksums of `pages` 4 KiB pages.
pub fn csum_leaves(pages: u64) -> u64 {
    pages.div_ceil(CSUMS_PER_LEAF)
}

/// One inode's delalloc metadata reservation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InodeRsv {
    /// Maximal runs of delalloc pages.
    pub runs: u64,
    /// Ordered extents not yet finished.
    pub ordered: u64,
    /// Pages whose checksums are still to be inserted (dirty or under
    /// writeback, not yet finished).
    pub csum_pages: u64,
    /// Bytes this inode holds in the space's `may_use`.
    pub held: u64,
}

impl InodeRsv {
    /// `outstanding_extents`.
    pub fn outstanding(&self) -> u64 {
        self.runs + self.ordered
    }
}

/// How a buffered `write()` reserves delalloc metadata. The module docs
/// describe the later scheme; the kernels of the 2019 regression (4.15 to
/// 5.2 at least, `btrfs_delalloc_reserve_metadata` with
/// `btrfs_inode_rsv_refill`) used the first, and the kernel wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RsvScheme {
    /// The inode's reserve is sized `U × (outstanding + 1) + U × csum
    /// leaves` (the `+ 1` is the inode item); a write counts one more
    /// extent and its csum bytes and reserves only the difference between
    /// that size and what the inode holds. A write that starts a new
    /// delalloc run releases nothing afterwards.
    Refill,
    /// A write reserves `U × (new extents + csum leaves of the write) + M`
    /// outright; afterwards the reserve is trimmed to `U × outstanding + U
    /// × csum leaves + M` and the excess released (which refills the
    /// delayed-refs reserve first).
    Exact,
}

/// The reservation rule of a run: units and scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RsvRule {
    /// Insert unit `U` (`nodesize × 8 × 2`).
    pub u: u64,
    /// Update unit `M` (`nodesize × 8`).
    pub m: u64,
    /// The era's scheme.
    pub scheme: RsvScheme,
}

impl RsvRule {
    /// What the inode's reserve should hold (kernel:
    /// `btrfs_calculate_inode_block_rsv_size`).
    pub fn target(&self, r: &InodeRsv) -> u64 {
        let leaves = csum_leaves(r.csum_pages);
        match self.scheme {
            RsvScheme::Refill => {
                let extents = match r.outstanding() {
                    0 => 0,
                    n => self.u * (n + 1),
                };
                extents + self.u * leaves
            }
            RsvScheme::Exact => {
                if r.outstanding() == 0 && r.csum_pages == 0 {
                    return 0;
                }
                self.u * (r.outstanding() + leaves) + self.m
            }
        }
    }

    /// Bytes to release so that `held` matches the target (never negative:
    /// a shortfall is not reserved after the fact, as in the kernel).
    pub fn excess(&self, r: &InodeRsv) -> u64 {
        r.held.saturating_sub(self.target(r))
    }

    /// Bytes a `write()` of `pages` pages reserves before dirtying them;
    /// `new_extent`: some page of it is not delalloc yet.
    pub fn write_reservation(&self, r: &InodeRsv, new_extent: bool, pages: u64) -> u64 {
        match self.scheme {
            RsvScheme::Refill => {
                let mut after = *r;
                after.runs += 1;
                after.csum_pages += pages;
                self.target(&after).saturating_sub(r.held)
            }
            RsvScheme::Exact => self.u * (u64::from(new_extent) + csum_leaves(pages)) + self.m,
        }
    }
}

/// Change in the number of delalloc runs when one page becomes delalloc,
/// given whether its neighbours are: a lone page starts a run, a page
/// between two runs joins them.
pub fn runs_delta_on_dirty(left: bool, right: bool) -> i64 {
    match (left, right) {
        (false, false) => 1,
        (true, true) => -1,
        _ => 0,
    }
}

/// Change in the number of delalloc runs when a contiguous range leaves
/// delalloc for writeback: cutting a run in the middle leaves two.
pub fn runs_delta_on_writeback(left: bool, right: bool) -> i64 {
    match (left, right) {
        (false, false) => -1,
        (true, true) => 1,
        _ => 0,
    }
}

/// The delayed refs an ordered extent queues, tracked per file:
/// which pages were written once into their preallocated extent and
/// which were since COWed, and in which epoch each preallocated extent
/// last got a head (an epoch ends when a ref batch starts: a head may have
/// been run and deleted, so the next ref makes a new one).
///
/// * A first write into a preallocated extent (nocow) adds a ref to that
///   extent. Every split of one preallocated extent refers to it with the
///   same key (root, inode, original offset), so the kernel merges these
///   refs into one ref node per head (`insert_delayed_ref` adds the
///   counts): a new head and ref node the first time in an epoch,
///   nothing new after that.
/// * A rewrite COWs: one new extent for the ordered extent (a head and a
///   ref) and, per page, the drop of what it replaced. A page never COWed
///   before drops a ref of its preallocated extent (merged like the adds);
///   a page COWed before drops its own 4 KiB extent (a head and a ref).
/// * Inserting the file-extent and checksum items COWs a leaf of the fs
///   tree and of the csum tree, the first time each leaf is touched in a
///   transaction. A COWed tree block queues two delayed refs of its own:
///   the new block's (`btrfs_alloc_tree_block`) and the old block's drop
///   (`btrfs_free_tree_block`), two heads. Leaves are found by position:
///   the file's extent items (one per preallocated extent, two more per
///   split) over [`FS_ITEMS_PER_LEAF`], checksums of first writes by file
///   position and those of COWed data in allocation order over
///   [`CSUM_ITEMS_PER_LEAF`]. Interior nodes are not counted.
#[derive(Clone, Debug, Default)]
pub struct ExtentRefs {
    /// Per file and preallocated extent: the epoch of its last head.
    prealloc_head_epoch: Vec<Vec<u64>>,
    /// Per file: pages COWed at least once.
    cowed: Vec<Option<crate::cache::bits::Bits>>,
    /// Per file: file-extent items.
    fs_items: Vec<u64>,
    /// Per file: pages written at least once (their checksums by file
    /// position).
    first_written: Vec<u64>,
    /// Per file and fs-tree leaf: the transaction that last COWed it.
    fs_leaf_txn: Vec<Vec<u64>>,
    /// Per file and csum leaf of first writes: the transaction that last
    /// COWed it.
    csum_leaf_txn: Vec<Vec<u64>>,
    /// Checksums of COWed data so far (allocation order).
    cow_csums: u64,
    /// Per csum leaf of COWed data: the transaction that last COWed it.
    cow_csum_leaf_txn: Vec<u64>,
    /// Tree blocks COWed (each queued two heads).
    pub tree_cows: u64,
}

/// An ordered extent: pages `[first, first + count)` of `file`, which has
/// `pages` pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderedSpan {
    /// File id.
    pub file: u32,
    /// The file's pages.
    pub pages: u32,
    /// First page.
    pub first: u32,
    /// Pages.
    pub count: u32,
}

/// File-extent items in a 16 KiB leaf: 25 bytes of item header and 53 of
/// `btrfs_file_extent_item`, leaves three quarters full *(assumed)*.
pub const FS_ITEMS_PER_LEAF: u64 = (16_384 - 101) * 3 / 4 / 78;
/// Checksum items of one 4 KiB block each (random writes do not merge
/// them): 25 bytes of header and 4 of crc32c, leaves three quarters full
/// *(assumed)*.
pub const CSUM_ITEMS_PER_LEAF: u64 = (16_384 - 101) * 3 / 4 / 29;

/// Marks `leaf` COWed in `txn`; true the first time in that transaction.
fn cow_leaf(leaves: &mut Vec<u64>, leaf: usize, txn: u64) -> bool {
    if leaves.len() <= leaf {
        leaves.resize(leaf + 1, u64::MAX);
    }
    let first = leaves[leaf] != txn;
    leaves[leaf] = txn;
    first
}

impl ExtentRefs {
    /// Tracking for `files` files of `pages[i]` pages, each starting as
    /// preallocated extents of at most [`PREALLOC_EXTENT_BYTES`].
    pub fn new(pages: &[u32]) -> ExtentRefs {
        let files = pages.len();
        ExtentRefs {
            prealloc_head_epoch: vec![Vec::new(); files],
            cowed: vec![None; files],
            fs_items: pages
                .iter()
                .map(|&p| (u64::from(p) * crate::fs::PAGE).div_ceil(PREALLOC_EXTENT_BYTES))
                .collect(),
            first_written: vec![0; files],
            fs_leaf_txn: vec![Vec::new(); files],
            csum_leaf_txn: vec![Vec::new(); files],
            cow_csums: 0,
            cow_csum_leaf_txn: Vec::new(),
            tree_cows: 0,
        }
    }

    /// A tree block COWed: its two delayed refs.
    fn tree_cow(&mut self, batch: &mut iolab_flush::RefBatch) {
        self.tree_cows += 1;
        batch.new_heads += 2;
        batch.refs += 2;
    }

    /// The refs of the ordered extent `span` finishing in transaction
    /// `txn` and ref epoch `epoch`.
    /// `written` holds the pages written since preallocation (`None`: the
    /// file was written out when laid out, so every write is a rewrite);
    /// it is updated.
    pub fn on_ordered(
        &mut self,
        span: OrderedSpan,
        written: Option<&mut crate::cache::bits::Bits>,
        txn: u64,
        epoch: u64,
    ) -> iolab_flush::RefBatch {
        let OrderedSpan {
            file,
            pages,
            first,
            count,
        } = span;
        let mut batch = iolab_flush::RefBatch::default();
        let f = file as usize;
        let mut rewrites = 0u64;
        let mut first_writes = 0u64;
        let mut prealloc_touched = false;
        let mut written = written;
        // The leaves holding the extent's items before it is inserted.
        let fs_leaf =
            u64::from(first) * self.fs_items[f] / u64::from(pages.max(1)) / FS_ITEMS_PER_LEAF;
        // Checksums by file position: those of the pages written so far
        // (all of them for a file written out at layout).
        let csums = match written {
            Some(_) => self.first_written[f].max(1),
            None => u64::from(pages),
        };
        let csum_leaf = u64::from(first) * csums / u64::from(pages.max(1)) / CSUM_ITEMS_PER_LEAF;
        // A contiguous run of pages that lands inside one older extent
        // splits it once: two more file-extent items per run, not per page.
        let mut split_items = 0u64;
        let mut in_split = false;
        for p in first..first + count {
            let before = match written.as_deref_mut() {
                Some(bits) => bits.set(p),
                None => true,
            };
            let splits = if !before {
                first_writes += 1;
                if !prealloc_touched {
                    prealloc_touched = true;
                    self.prealloc_ref(f, p, epoch, &mut batch);
                }
                true
            } else {
                rewrites += 1;
                let cowed = self.cowed[f]
                    .get_or_insert_with(|| crate::cache::bits::Bits::new(u64::from(pages)));
                if cowed.set(p) {
                    // Drop of its own earlier 4 KiB extent: replaced whole.
                    batch.new_heads += 1;
                    batch.refs += 1;
                    false
                } else {
                    self.prealloc_ref(f, p, epoch, &mut batch);
                    true
                }
            };
            if splits && !in_split {
                split_items += 2;
            }
            in_split = splits;
        }
        if rewrites > 0 {
            // The new extent written by this ordered extent.
            batch.new_heads += 1;
            batch.refs += 1;
        }
        // Tree COWs: the fs-tree leaf of the file-extent items; the csum
        // leaf of the new checksums (first writes by file position, COWed
        // data in allocation order); a rewrite also deletes the old
        // checksums from their leaf.
        if cow_leaf(&mut self.fs_leaf_txn[f], fs_leaf as usize, txn) {
            self.tree_cow(&mut batch);
        }
        if first_writes > 0 && cow_leaf(&mut self.csum_leaf_txn[f], csum_leaf as usize, txn) {
            self.tree_cow(&mut batch);
        }
        if rewrites > 0 {
            let leaf = (self.cow_csums / CSUM_ITEMS_PER_LEAF) as usize;
            self.cow_csums += rewrites;
            if cow_leaf(&mut self.cow_csum_leaf_txn, leaf, txn) {
                self.tree_cow(&mut batch);
            }
            if cow_leaf(&mut self.csum_leaf_txn[f], csum_leaf as usize, txn) {
                self.tree_cow(&mut batch);
            }
        }
        self.fs_items[f] += split_items;
        self.first_written[f] += first_writes;
        batch
    }

    /// A ref on the preallocated extent holding page `p`: a new head and
    /// ref node once per epoch, merged afterwards.
    fn prealloc_ref(&mut self, f: usize, p: u32, epoch: u64, batch: &mut iolab_flush::RefBatch) {
        let ext = (u64::from(p) * crate::fs::PAGE / PREALLOC_EXTENT_BYTES) as usize;
        let heads = &mut self.prealloc_head_epoch[f];
        if heads.len() <= ext {
            heads.resize(ext + 1, u64::MAX);
        }
        if heads[ext] != epoch {
            heads[ext] = epoch;
            batch.new_heads += 1;
            batch.refs += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const U: u64 = 256 * 1024;
    const M: u64 = 128 * 1024;

    /// The two schemes' rules, refill first.
    fn rules() -> (RsvRule, RsvRule) {
        let refill = RsvRule {
            u: U,
            m: M,
            scheme: RsvScheme::Refill,
        };
        let exact = RsvRule {
            scheme: RsvScheme::Exact,
            ..refill
        };
        (refill, exact)
    }

    #[test]
    fn reserve_target_follows_outstanding_extents_and_csum_leaves() {
        let (refill, exact) = rules();
        let mut r = InodeRsv::default();
        assert_eq!(exact.target(&r), 0);
        assert_eq!(refill.target(&r), 0);
        r.runs = 3;
        r.csum_pages = 3;
        assert_eq!(exact.target(&r), U * 4 + M);
        // The inode item counts as one more insert unit.
        assert_eq!(refill.target(&r), U * 5);
        r.csum_pages = CSUMS_PER_LEAF + 1;
        assert_eq!(exact.target(&r), U * 5 + M);
        assert_eq!(refill.target(&r), U * 6);
        r.held = U * 9;
        assert_eq!(exact.excess(&r), U * 4 - M);
        assert_eq!(refill.excess(&r), U * 3);
        r.held = 0;
        assert_eq!(exact.excess(&r), 0);
    }

    #[test]
    fn a_refill_write_reserves_the_difference_and_an_exact_one_the_worst_case() {
        let (refill, exact) = rules();
        // An inode with one delalloc run, its reserve full.
        let mut r = InodeRsv {
            runs: 1,
            csum_pages: 1,
            ..InodeRsv::default()
        };
        r.held = refill.target(&r);
        assert_eq!(r.held, 3 * U);
        // Refill: one more extent's unit, nothing transient.
        assert_eq!(refill.write_reservation(&r, true, 1), U);
        // A first write into an empty inode: extent, inode item, csum leaf.
        assert_eq!(
            refill.write_reservation(&InodeRsv::default(), true, 1),
            3 * U
        );
        // Exact: the extent, one csum leaf and M, whatever is held.
        assert_eq!(exact.write_reservation(&r, true, 1), 2 * U + M);
        assert_eq!(exact.write_reservation(&r, false, 1), U + M);
    }

    #[test]
    fn ordered_extents_queue_merged_prealloc_refs_and_cow_refs() {
        use crate::cache::bits::Bits;
        let pages = (2 * PREALLOC_EXTENT_BYTES / crate::fs::PAGE) as u32;
        let per_ext = pages / 2;
        let mut refs = ExtentRefs::new(&[pages]);
        let mut written = Bits::new(u64::from(pages));
        // Data refs only: the tree-block COW heads are taken out (each
        // COW adds two) and checked below.
        let b = |refs: &mut ExtentRefs, w: &mut Bits, p: u32, n: u32, epoch: u64| {
            let cows = refs.tree_cows;
            let span = OrderedSpan {
                file: 0,
                pages,
                first: p,
                count: n,
            };
            let r = refs.on_ordered(span, Some(w), 1, epoch);
            let c = refs.tree_cows - cows;
            (r.new_heads - 2 * c, r.refs - 2 * c)
        };
        // First writes into extent 0: one head and ref node, then merged.
        assert_eq!(b(&mut refs, &mut written, 10, 1, 1), (1, 1));
        assert_eq!(b(&mut refs, &mut written, 20, 4, 1), (0, 0));
        // Extent 1 gets its own head.
        assert_eq!(b(&mut refs, &mut written, per_ext + 3, 1, 1), (1, 1));
        // A new epoch (a ref batch ran): a new head for extent 0.
        assert_eq!(b(&mut refs, &mut written, 30, 1, 2), (1, 1));
        // Rewrite of page 10 (never COWed): new extent + drop merged into
        // extent 0's head of this epoch.
        assert_eq!(b(&mut refs, &mut written, 10, 1, 2), (1, 1));
        // Rewrite again: new extent + drop of its own extent.
        assert_eq!(b(&mut refs, &mut written, 10, 1, 2), (2, 2));
        // Two pages: 20 (first COW, merged) and 21 (first write, merged):
        // only the new extent.
        assert_eq!(b(&mut refs, &mut written, 20, 2, 2), (1, 1));
        // A file written out at layout: every write is a rewrite.
        let mut refs = ExtentRefs::new(&[pages]);
        let span = OrderedSpan {
            file: 0,
            pages,
            first: 5,
            count: 1,
        };
        let r = refs.on_ordered(span, None, 1, 1);
        // New extent + drop (merged into extent 0's new head), and the
        // fs leaf, the COWed-data csum leaf and the old csum leaf: 3 COWs.
        assert_eq!(refs.tree_cows, 3);
        assert_eq!((r.new_heads, r.refs), (2 + 6, 2 + 6));
    }

    #[test]
    fn tree_leaves_are_cowed_once_per_transaction() {
        use crate::cache::bits::Bits;
        // One preallocated extent of 32 MiB: one file-extent item.
        let pages = 8192;
        let mut refs = ExtentRefs::new(&[pages]);
        let mut w = Bits::new(u64::from(pages));
        let cows = |refs: &mut ExtentRefs, w: &mut Bits, p: u32, txn: u64| {
            let before = refs.tree_cows;
            let span = OrderedSpan {
                file: 0,
                pages,
                first: p,
                count: 1,
            };
            let _ = refs.on_ordered(span, Some(w), txn, 0);
            refs.tree_cows - before
        };
        // First write: the fs leaf and the csum leaf.
        assert_eq!(cows(&mut refs, &mut w, 100, 1), 2);
        // Same transaction, another page: both leaves already COWed.
        assert_eq!(cows(&mut refs, &mut w, 4000, 1), 0);
        // Next transaction: COWed again.
        assert_eq!(cows(&mut refs, &mut w, 4001, 2), 2);
        // Splits add items: after enough scattered first writes the
        // file's items span several fs leaves, and a far page lands in
        // another leaf.
        for p in 0..(FS_ITEMS_PER_LEAF as u32) {
            let _ = cows(&mut refs, &mut w, 5000 + 2 * p, 2);
        }
        assert!(cows(&mut refs, &mut w, pages - 1, 2) >= 1);
        // A contiguous multi-page extent splits once: two items.
        let items = refs.fs_items[0];
        let span = OrderedSpan {
            file: 0,
            pages,
            first: 200,
            count: 64,
        };
        let _ = refs.on_ordered(span, Some(&mut w), 2, 0);
        assert_eq!(refs.fs_items[0], items + 2);
        assert_eq!(FS_ITEMS_PER_LEAF, 156);
        assert_eq!(CSUM_ITEMS_PER_LEAF, 421);
    }

    #[test]
    fn runs_merge_and_split() {
        assert_eq!(runs_delta_on_dirty(false, false), 1);
        assert_eq!(runs_delta_on_dirty(true, false), 0);
        assert_eq!(runs_delta_on_dirty(true, true), -1);
        assert_eq!(runs_delta_on_writeback(false, false), -1);
        assert_eq!(runs_delta_on_writeback(false, true), 0);
        assert_eq!(runs_delta_on_writeback(true, true), 1);
        assert_eq!(endio_workers(4), 6);
        assert_eq!(endio_workers(88), 8);
        assert_eq!(CSUMS_PER_LEAF, 4064);
    }
}
