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
//!   checkpoint of iclog-sized `SYNC|META|FUA` writes, the first with
//!   `PREFLUSH`. The CIL is also pushed in the background above 1/8 of the
//!   log. With nothing to force, `fsync` issues a bare cache flush.
//! * Checkpoints occupy log space until their items are written in place;
//!   below 25 % free the oldest checkpoint's items are written back (the
//!   AIL push).
//!
//! Sizes are documented constants; the log size follows mkfs: 1/2048 of
//! the filesystem, at least 10 MiB, at most 2 GiB.

use std::collections::{HashSet, VecDeque};

/// Bytes per iclog write (`logbsize` 32 KiB).
pub const ICLOG_BYTES: u64 = 32 * 1024;
/// Bytes a logged inode core takes in a checkpoint *(assumed: 176-byte
/// core plus item and op headers, rounded up)*.
pub const INODE_ITEM_BYTES: u64 = 512;
/// Bytes a logged bmbt leaf takes *(assumed: one 4 KiB block)*.
pub const BMBT_ITEM_BYTES: u64 = 4096;
/// Extent records per bmbt leaf (4 KiB block, 16-byte records).
pub const EXTENTS_PER_LEAF: u32 = 254;

/// Log size mkfs would choose for a filesystem of `fs_bytes`.
pub fn log_size_for(fs_bytes: u64) -> u64 {
    (fs_bytes / 2048)
        .clamp(10 << 20, 2 << 30)
        .min(fs_bytes / 4)
        .max(1 << 20)
        / 4096
        * 4096
}

/// A checkpoint waiting for its items to be written in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// Log bytes it occupies.
    pub bytes: u64,
    /// Distinct metadata blocks it logged.
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
        self.checkpoints.push_back(Checkpoint {
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

    /// Device offset for the next `len` bytes of log, wrapping.
    pub fn place(&mut self, len: u64) -> u64 {
        if self.head + len > self.log_size {
            self.head = 0;
        }
        let at = self.log_offset + self.head;
        self.head += len;
        at
    }

    /// Should the CIL be pushed in the background?
    pub fn cil_over_threshold(&self) -> bool {
        self.cil_bytes > self.log_size / 8
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
        assert_eq!(log_size_for(16 << 30), 10 << 20);
        assert_eq!(log_size_for(8 << 40), 2 << 30);
    }

    #[test]
    fn items_count_once_per_checkpoint() {
        let mut j = Journal::new(0, 10 << 20);
        j.log_item(inode_key(1), INODE_ITEM_BYTES);
        j.log_item(inode_key(1), INODE_ITEM_BYTES);
        j.log_item(leaf_key(1, 5, 1000, 1), BMBT_ITEM_BYTES);
        assert_eq!(j.cil_bytes, INODE_ITEM_BYTES + BMBT_ITEM_BYTES);
        assert_eq!(j.push(), 8192);
        assert_eq!(j.cil_seq, 2);
        assert_eq!(j.push(), 0);
        j.log_item(inode_key(1), INODE_ITEM_BYTES);
        assert_eq!(j.cil_bytes, INODE_ITEM_BYTES);
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
