//! `xfs-lite`: the parts of an XFS-like journal that decide what `fsync`
//! and `fdatasync` cost (kernel: `fs/xfs/xfs_file.c` `xfs_file_fsync`,
//! `fs/xfs/xfs_log.c`).
//!
//! * A write that completes into an unwritten extent is a transaction: it
//!   logs the inode core and one bmbt leaf (*assumed* one 4 KiB block);
//!   an item logged again within the same checkpoint counts once.
//! * A buffered `write()` logs a timestamp change (inode core): `fsync`
//!   must force it, `fdatasync` need not.
//! * Logged items gather in the CIL; a force writes the CIL as a
//!   checkpoint of iclog-sized `SYNC|IDLE|META` writes through
//!   [`ICLOG_BUFS`] buffers, the first with `PREFLUSH`, the commit record
//!   (the last) with `PREFLUSH` and `FUA`. The CIL is also pushed in
//!   the background above [`Journal::cil_space_limit`]. With nothing to
//!   force, `fsync` issues a bare cache flush.
//! * Checkpoints occupy log space until their items are written in place;
//!   below 25 % free the oldest checkpoint's items are written back (the
//!   AIL push). An item logged again in a later checkpoint has moved on in
//!   the AIL (relogging, `fs/xfs/xfs_trans_ail.c`): the old checkpoint no
//!   longer holds it, and one whose every item moved on frees its space
//!   without a write.
//!
//! Sizes are documented constants; the log size follows mkfs
//! ([`log_size_for`]).

use std::collections::{HashMap, HashSet, VecDeque};

/// Bytes per iclog write (`logbsize` 32 KiB).
pub const ICLOG_BYTES: u64 = 32 * 1024;
/// iclog buffers (`logbufs`, whose default is the most there can be,
/// `XLOG_MAX_ICLOGS` = 8 in `fs/xfs/xfs_log_priv.h`): a log write waits
/// for one to be free.
pub const ICLOG_BUFS: u32 = 8;
/// Bytes a logged inode core takes in a checkpoint *(assumed: 176-byte
/// core plus item and op headers, rounded up)*.
pub const INODE_ITEM_BYTES: u64 = 512;
/// Bytes a logged bmbt leaf takes: half of its 4 KiB block. Inserting a
/// record into a leaf logs the records from the insertion point to the
/// end (`xfs_btree_insrec` in `fs/xfs/libxfs/xfs_btree.c`), half the leaf
/// on average. (Measured on Linux 6.18, 2026-12-04: 817 MB of log writes
/// for 314,522 conversions, 2.6 KiB each with the inode core and the log's
/// headers; `docs/kernel-validation.md`.)
pub const BMBT_ITEM_BYTES: u64 = 2048;
/// Most a CIL holds before its background push, whatever the log size:
/// 16 times the largest iclog window, 8 iclogs of 256 KiB
/// (`XLOG_CIL_SPACE_LIMIT` in `fs/xfs/xfs_log_priv.h`).
pub const CIL_SPACE_CAP: u64 = 32 << 20;
/// The smallest log mkfs.xfs makes for a filesystem of 300 MB or more
/// (`XFS_MIN_REALISTIC_LOG_BLOCKS` of xfsprogs' `mkfs/xfs_mkfs.c`, 64 MiB
/// since 2022; mkfs.xfs 6.1.0 makes a 16,384-block log on an 8 GiB file).
pub const MIN_REALISTIC_LOG: u64 = 64 << 20;
/// Extent records per bmbt leaf (4 KiB block, 16-byte records).
pub const EXTENTS_PER_LEAF: u32 = 254;

/// Log size mkfs.xfs chooses for a filesystem of `fs_bytes`: 1/2048 of
/// it, at least [`MIN_REALISTIC_LOG`] (10 MiB under 300 MB, where mkfs
/// would refuse), at most 2 GiB and a quarter of the filesystem (an
/// allocation group of four).
pub fn log_size_for(fs_bytes: u64) -> u64 {
    let floor = if fs_bytes < 300_000_000 {
        10 << 20
    } else {
        MIN_REALISTIC_LOG
    };
    (fs_bytes / 2048)
        .clamp(floor, 2 << 30)
        .min(fs_bytes / 4)
        .max(1 << 20)
        / 4096
        * 4096
}

/// A checkpoint waiting for its items to be written in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// Its sequence.
    pub seq: u64,
    /// Log bytes it occupies.
    pub bytes: u64,
    /// Distinct metadata blocks it logged and no later checkpoint logged
    /// again: the ones writing it back must write.
    pub items: u32,
}

/// Journal state.
#[derive(Debug)]
pub struct Journal {
    /// Log region on the device.
    pub log_offset: u64,
    /// Log size in bytes.
    pub log_size: u64,
    /// Next write position inside the log.
    pub head: u64,
    /// Sequence number of the open CIL (starts at 1).
    pub cil_seq: u64,
    /// Bytes in the open CIL.
    pub cil_bytes: u64,
    /// Distinct items in the open CIL.
    pub cil_items: u32,
    cil_keys: HashSet<u64>,
    /// Log bytes in use (written checkpoints not yet written back).
    pub used: u64,
    /// Checkpoints in log order, oldest first.
    pub checkpoints: VecDeque<Checkpoint>,
    /// Per logged item not yet written in place: the sequence of the last
    /// checkpoint that logged it.
    latest: HashMap<u64, u64>,
    /// Counters for reports.
    pub stats: JournalStats,
}

/// What the journal did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JournalStats {
    /// Transactions logged.
    pub transactions: u64,
    /// Forces (by fsync/fdatasync).
    pub forces: u64,
    /// Checkpoints written.
    pub checkpoints: u64,
    /// Bare flushes for fsyncs with nothing to force.
    pub bare_flushes: u64,
    /// Unwritten-extent conversions.
    pub conversions: u64,
    /// iclog writes submitted, and the most in flight at once.
    pub log_writes: u64,
    pub log_writes_max_in_flight: u32,
    /// Metadata blocks queued for writeback in place.
    pub ail_writes: u64,
    /// Of those, written.
    pub ail_done: u64,
}

impl Journal {
    /// An empty log at `log_offset` of `log_size` bytes.
    pub fn new(log_offset: u64, log_size: u64) -> Self {
        Self {
            log_offset,
            log_size,
            head: 0,
            cil_seq: 1,
            cil_bytes: 0,
            cil_items: 0,
            cil_keys: HashSet::with_capacity(4096),
            used: 0,
            checkpoints: VecDeque::new(),
            latest: HashMap::new(),
            stats: JournalStats::default(),
        }
    }

    /// Logs one item identified by `key` of `bytes`; counted once per
    /// checkpoint.
    pub fn log_item(&mut self, key: u64, bytes: u64) {
        if self.cil_keys.insert(key) {
            self.cil_bytes += bytes;
            self.cil_items += 1;
        }
    }

    /// Closes the open CIL as a checkpoint; returns its size in bytes
    /// rounded to whole 4 KiB blocks (0 when empty).
    pub fn push(&mut self) -> u64 {
        if self.cil_bytes == 0 {
            return 0;
        }
        let bytes = self.cil_bytes.div_ceil(4096) * 4096;
        let seq = self.cil_seq;
        for &key in &self.cil_keys {
            // Relogged: the older checkpoint no longer holds it. Counting
            // only, so the set's order does not matter.
            if let Some(old) = self.latest.insert(key, seq)
                && let Ok(i) = self.checkpoints.binary_search_by_key(&old, |c| c.seq)
            {
                self.checkpoints[i].items -= 1;
            }
        }
        self.checkpoints.push_back(Checkpoint {
            seq,
            bytes,
            items: self.cil_items,
        });
        self.used += bytes;
        self.cil_bytes = 0;
        self.cil_items = 0;
        self.cil_keys.clear();
        self.cil_seq += 1;
        self.stats.checkpoints += 1;
        bytes
    }

    /// Frees the oldest checkpoints whose every item a later one logged
    /// again: the log tail moves past them with nothing to write.
    pub fn free_relogged(&mut self) {
        while let Some(ck) = self.checkpoints.front().copied() {
            if ck.items > 0 {
                return;
            }
            self.checkpoints.pop_front();
            self.used -= ck.bytes;
        }
    }

    /// The oldest checkpoint's items are written in place: its log space
    /// is free, and its items are clean until logged again.
    pub fn oldest_written(&mut self) {
        if let Some(ck) = self.checkpoints.pop_front() {
            self.used -= ck.bytes;
            self.latest.retain(|_, seq| *seq != ck.seq);
        }
    }

    /// Device offset for the next `len` bytes of log, wrapping.
    pub fn place(&mut self, len: u64) -> u64 {
        if self.head + len > self.log_size {
            self.head = 0;
        }
        let at = self.log_offset + self.head;
        self.head += len;
        at
    }

    /// What the CIL may hold before its background push: an eighth of
    /// the log, at most [`CIL_SPACE_CAP`].
    pub fn cil_space_limit(&self) -> u64 {
        (self.log_size / 8).min(CIL_SPACE_CAP)
    }

    /// Should the CIL be pushed in the background?
    pub fn cil_over_threshold(&self) -> bool {
        self.cil_bytes > self.cil_space_limit()
    }

    /// Should the oldest checkpoint be written back (less than 25 % free)?
    pub fn needs_ail_push(&self) -> bool {
        self.used * 4 > self.log_size * 3
    }
}

/// The bmbt leaf key of page `p` of a file with `pages` pages and about
/// `extents` extents: leaves split the file evenly.
pub fn leaf_key(file: u32, p: u32, pages: u32, extents: u32) -> u64 {
    let leaves = (extents / EXTENTS_PER_LEAF).max(1);
    let leaf = (u64::from(p) * u64::from(leaves) / u64::from(pages.max(1))) as u32;
    (u64::from(file) << 32) | u64::from(leaf)
}

/// Key of a file's inode core item.
pub fn inode_key(file: u32) -> u64 {
    (u64::from(file) << 32) | u64::from(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_size_follows_mkfs() {
        assert_eq!(log_size_for(512 << 30), 256 << 20);
        // What mkfs.xfs 6.1.0 made on an 8 GiB file: 16,384 blocks.
        assert_eq!(log_size_for(8 << 30), 16_384 * 4096);
        assert_eq!(log_size_for(16 << 30), 64 << 20);
        assert_eq!(log_size_for(200 << 20), 10 << 20);
        assert_eq!(log_size_for(8 << 40), 2 << 30);
    }

    #[test]
    fn items_count_once_per_checkpoint() {
        let mut j = Journal::new(0, 10 << 20);
        j.log_item(inode_key(1), INODE_ITEM_BYTES);
        j.log_item(inode_key(1), INODE_ITEM_BYTES);
        j.log_item(leaf_key(1, 5, 1000, 1), BMBT_ITEM_BYTES);
        assert_eq!(j.cil_bytes, INODE_ITEM_BYTES + BMBT_ITEM_BYTES);
        assert_eq!(j.push(), 4096);
        assert_eq!(j.cil_seq, 2);
        assert_eq!(j.push(), 0);
        j.log_item(inode_key(1), INODE_ITEM_BYTES);
        assert_eq!(j.cil_bytes, INODE_ITEM_BYTES);
    }

    /// An item logged again in a later checkpoint leaves the older one:
    /// a checkpoint all of whose items moved on frees its log space with
    /// nothing to write; one that still holds items must be written back,
    /// and those items only.
    #[test]
    fn relogged_items_move_on() {
        let mut j = Journal::new(0, 64 << 20);
        j.log_item(1, 4096);
        j.log_item(2, 4096);
        j.push();
        j.log_item(1, 4096);
        j.push();
        assert_eq!(
            j.checkpoints[0].items, 1,
            "item 2 is still only in the first"
        );
        j.free_relogged();
        assert_eq!(j.checkpoints.len(), 2, "the first still holds item 2");
        j.log_item(2, 4096);
        j.push();
        assert_eq!(j.checkpoints[0].items, 0, "both its items moved on");
        assert_eq!(j.checkpoints[1].items, 1, "item 1 is last in the second");
        let used = j.used;
        j.free_relogged();
        assert_eq!(j.checkpoints.len(), 2);
        assert_eq!(j.used, used - 8192);
        // Writing the second back writes item 1 only, and frees it.
        j.oldest_written();
        assert_eq!((j.checkpoints.len(), j.used), (1, 4096));
        j.oldest_written();
        assert_eq!((j.checkpoints.len(), j.used), (0, 0));
        // Written in place, item 2 starts afresh: logging it again adds
        // to no old checkpoint.
        j.log_item(2, 4096);
        j.push();
        assert_eq!(j.checkpoints[0].items, 1);
    }

    #[test]
    fn the_cil_limit_is_an_eighth_of_the_log_up_to_32_mib() {
        assert_eq!(Journal::new(0, 64 << 20).cil_space_limit(), 8 << 20);
        assert_eq!(Journal::new(0, 2 << 30).cil_space_limit(), 32 << 20);
    }

    #[test]
    fn leaves_split_the_file() {
        assert_eq!(leaf_key(0, 999, 1000, 10) & 0xffff_ffff, 0);
        assert_ne!(leaf_key(0, 0, 1000, 2540), leaf_key(0, 999, 1000, 2540));
    }

    #[test]
    fn log_space_and_wrap() {
        let mut j = Journal::new(1000, 64 * 1024);
        assert_eq!(j.place(32 * 1024), 1000);
        assert_eq!(j.place(32 * 1024), 1000 + 32 * 1024);
        assert_eq!(j.place(32 * 1024), 1000);
        j.log_item(1, 50 * 1024);
        j.push();
        assert!(j.needs_ail_push());
    }
}
