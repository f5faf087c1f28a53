//! What a metadata call costs each filesystem: the pure rules behind the
//! metadata engines (`world::meta` is their glue).
//!
//! * CPU time per call *(assumed figures, in the range fio 3.33's
//!   `filecreate`, `filestat` and `filedelete` report on a local
//!   filesystem: tens of µs to create or delete, a few to stat; the file
//!   calls' from fio's `falloc` and `ftruncate` engines on ext4, a few µs,
//!   at [`cpu_ns`])*;
//! * xfs-lite: the log items a create or a delete dirties (`xfs_create`,
//!   `xfs_remove`: the inode, the directory block holding the entry, the
//!   AGI);
//! * btrfs: the items a create or a delete reserves and changes
//!   (`btrfs_start_transaction(root, 5)`: inode item, inode ref, directory
//!   item and index, the parent inode), and the fs-tree leaves those COW
//!   in a transaction, each queueing two delayed refs.
//! * the file-call engines' calls (`fallocate`, a hole punched,
//!   `ftruncate`, ext4's extent move) change one file's extents: they take
//!   its inode's lock, log its inode and its extent map on xfs-lite, and
//!   change its inode and a file extent item on btrfs.

use super::btrfs::metadata::{NODESIZE, item_bytes_for_file};
use super::journal::{INODE_ITEM_BYTES, inode_key};
use crate::fio::MetaEngine;
use crate::time::Ns;
use crate::workload::{Dir, FileCall};

/// One call a metadata engine makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaCall {
    /// `open(O_CREAT)` of a new file.
    Create,
    /// `open(O_CREAT)` of a file an earlier pass made.
    Open,
    /// `stat(2)` of a file or directory.
    Stat,
    /// `unlink(2)`.
    Unlink,
    /// `mkdir(2)`.
    Mkdir,
    /// `mkdir(2)` of a directory an earlier pass made (`EEXIST`).
    MkdirExists,
    /// `rmdir(2)`.
    Rmdir,
    /// `fallocate(2)` with `FALLOC_FL_KEEP_SIZE` (falloc's read).
    FallocKeepSize,
    /// `fallocate(2)`, mode 0 (falloc's write).
    Falloc,
    /// `fallocate(2)` punching a hole (falloc's trim).
    PunchHole,
    /// `ftruncate(2)`.
    Truncate,
    /// `EXT4_IOC_MOVE_EXT` (e4defrag's write).
    MoveExtent,
    /// `EXT4_IOC_MOVE_EXT` with the donor's range allocated before and
    /// truncated after (`inplace=1`).
    MoveExtentInPlace,
}

/// The lock a call holds for its whole length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lock {
    /// None.
    None,
    /// Its directory's (`i_rwsem` of the parent).
    Dir,
    /// Its file's inode's (`i_rwsem`).
    Inode,
}

/// The calls, in the order of the report's counts.
pub const CALLS: [MetaCall; 13] = [
    MetaCall::Create,
    MetaCall::Open,
    MetaCall::Stat,
    MetaCall::Unlink,
    MetaCall::Mkdir,
    MetaCall::MkdirExists,
    MetaCall::Rmdir,
    MetaCall::FallocKeepSize,
    MetaCall::Falloc,
    MetaCall::PunchHole,
    MetaCall::Truncate,
    MetaCall::MoveExtent,
    MetaCall::MoveExtentInPlace,
];

impl MetaCall {
    /// The call engine `op` makes in a pass (`first`: the first).
    pub fn of(op: MetaEngine, first: bool) -> MetaCall {
        match (op, first) {
            (MetaEngine::FileCreate, true) => MetaCall::Create,
            (MetaEngine::FileCreate, false) => MetaCall::Open,
            (MetaEngine::FileStat | MetaEngine::DirStat, _) => MetaCall::Stat,
            (MetaEngine::FileDelete, _) => MetaCall::Unlink,
            (MetaEngine::DirCreate, true) => MetaCall::Mkdir,
            (MetaEngine::DirCreate, false) => MetaCall::MkdirExists,
            (MetaEngine::DirDelete, _) => MetaCall::Rmdir,
        }
    }

    /// The report's name.
    pub fn name(self) -> &'static str {
        match self {
            MetaCall::Create => "create",
            MetaCall::Open => "open",
            MetaCall::Stat => "stat",
            MetaCall::Unlink => "unlink",
            MetaCall::Mkdir => "mkdir",
            MetaCall::MkdirExists => "mkdir_exists",
            MetaCall::Rmdir => "rmdir",
            MetaCall::FallocKeepSize => "fallocate_keep_size",
            MetaCall::Falloc => "fallocate",
            MetaCall::PunchHole => "punch_hole",
            MetaCall::Truncate => "ftruncate",
            MetaCall::MoveExtent => "move_ext",
            MetaCall::MoveExtentInPlace => "move_ext_inplace",
        }
    }

    /// The call a file-call engine makes for an IO in direction `dir`
    /// (`None`: one it never makes, refused before the run).
    pub fn of_file(call: FileCall, dir: Dir) -> Option<MetaCall> {
        Some(match (call, dir) {
            (FileCall::Falloc, Dir::Read) => MetaCall::FallocKeepSize,
            (FileCall::Falloc, Dir::Write) => MetaCall::Falloc,
            (FileCall::Falloc, Dir::Trim) => MetaCall::PunchHole,
            (FileCall::Ftruncate, Dir::Write) => MetaCall::Truncate,
            (FileCall::E4defrag { inplace: false }, Dir::Write) => MetaCall::MoveExtent,
            (FileCall::E4defrag { inplace: true }, Dir::Write) => MetaCall::MoveExtentInPlace,
            _ => return None,
        })
    }

    /// The lock it holds.
    pub fn lock(self) -> Lock {
        match self {
            MetaCall::Create | MetaCall::Unlink | MetaCall::Mkdir | MetaCall::Rmdir => Lock::Dir,
            MetaCall::Open | MetaCall::Stat | MetaCall::MkdirExists => Lock::None,
            _ => Lock::Inode,
        }
    }

    /// It changes one file's extents (a file-call engine's call).
    pub fn on_extents(self) -> bool {
        self.lock() == Lock::Inode
    }

    /// It changes the filesystem (a transaction on btrfs, log items on
    /// xfs-lite).
    pub fn changes(self) -> bool {
        self.lock() != Lock::None
    }

    /// It adds items that stay (a new inode).
    pub fn creates(self) -> bool {
        matches!(self, MetaCall::Create | MetaCall::Mkdir)
    }
}

/// CPU time of a call *(assumed)*.
pub fn cpu_ns(call: MetaCall) -> Ns {
    match call {
        MetaCall::Create => 15_000,
        MetaCall::Open => 3_000,
        MetaCall::Stat => 2_000,
        MetaCall::Unlink => 30_000,
        MetaCall::Mkdir => 20_000,
        MetaCall::MkdirExists => 3_000,
        MetaCall::Rmdir => 25_000,
        // The file calls' figures are the means fio 3.33's falloc and
        // ftruncate engines report for 4 KiB calls on a 100 MiB file of
        // an ext4 filesystem on a virtual disk, one job alone; the move's
        // is assumed.
        MetaCall::FallocKeepSize => 3_500,
        MetaCall::Falloc => 2_000,
        MetaCall::PunchHole => 6_000,
        MetaCall::Truncate => 2_000,
        MetaCall::MoveExtent => 20_000,
        // The donor's fallocate and ftruncate around the move.
        MetaCall::MoveExtentInPlace => 24_000,
    }
}

/// Item bytes a btrfs file call changes: the inode item and one file
/// extent item, with their headers *(the items' sizes; one extent item
/// per call assumed)*.
pub const BTRFS_EXTENT_CALL_BYTES: u64 = 160 + 53 + 2 * 25;

/// Logged bytes of a file's extent map (its inode fork's changed
/// region) per call *(assumed)*.
const BMAP_LOG_BYTES: u64 = 128;

/// The log items (key, bytes) an xfs file call on run file `file`
/// dirties: its inode (the item its data writes log too) and its extent
/// map, and for an extent move the donor's two as well (keys apart from
/// the data files' extent leaves and from [`xfs_items`]'s).
pub fn xfs_extent_items(call: MetaCall, file: u32) -> impl Iterator<Item = (u64, u64)> {
    let f = u64::from(file);
    let ours = [
        (inode_key(file), INODE_ITEM_BYTES),
        (1 << 59 | f, BMAP_LOG_BYTES),
    ];
    let donor = [
        (1 << 58 | f, INODE_ITEM_BYTES),
        (1 << 57 | f, BMAP_LOG_BYTES),
    ];
    let moves = matches!(call, MetaCall::MoveExtent | MetaCall::MoveExtentInPlace);
    ours.into_iter()
        .chain(donor.into_iter().filter(move |_| moves))
}

/// Items a btrfs create or delete reserves for at its transaction start.
pub const BTRFS_ITEMS: u64 = 5;

/// Item bytes a btrfs create or delete changes: the inode item, its ref
/// and the two directory items of a name `name_len` long
/// (`item_bytes_for_file` of an empty file).
pub fn btrfs_item_bytes(name_len: u64) -> u64 {
    item_bytes_for_file(0, name_len)
}

/// Directory entries per xfs directory block logged *(assumed: 4 KiB
/// blocks of ~64-byte entries)*.
const DIRENTS_PER_BLOCK: u32 = 64;
/// Logged bytes of a directory block's changed region and of the AGI
/// *(assumed)*.
const DIR_BLOCK_LOG_BYTES: u64 = 256;
const AGI_LOG_BYTES: u64 = 128;
/// Allocation groups the inodes spread over (mkfs.xfs's four on a small
/// filesystem).
const AGS: u32 = 4;

/// The log items (key, bytes) an xfs create or delete of job `job`'s file
/// `file` (its number among the job's, or the run's file id) dirties: keys apart from the data files' (`journal::leaf_key`,
/// `journal::inode_key` use the top bit clear).
pub fn xfs_items(job: u32, file: u32) -> [(u64, u64); 3] {
    let j = u64::from(job) << 32;
    [
        (1 << 63 | j | u64::from(file), INODE_ITEM_BYTES),
        (
            1 << 62 | j | u64::from(file / DIRENTS_PER_BLOCK),
            DIR_BLOCK_LOG_BYTES,
        ),
        (1 << 61 | u64::from(file % AGS), AGI_LOG_BYTES),
    ]
}

/// The fs-tree leaves metadata calls COW in each transaction: the items
/// of calls in one directory lie side by side, so a leaf is COWed once
/// per transaction and then filled (the first call of a transaction COWs
/// the leaf it lands in).
#[derive(Clone, Copy, Debug, Default)]
pub struct LeafCows {
    txn: u64,
    bytes: u64,
}

impl LeafCows {
    /// `bytes` of items changed in transaction `txn`: the leaves COWed.
    pub fn on_change(&mut self, txn: u64, bytes: u64) -> u64 {
        let first = if txn != self.txn || self.bytes == 0 {
            self.txn = txn;
            self.bytes = 0;
            1
        } else {
            0
        };
        let before = self.bytes / NODESIZE;
        self.bytes += bytes;
        first + (self.bytes / NODESIZE - before)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leaf_is_cowed_once_per_transaction_then_filled() {
        let mut l = LeafCows::default();
        assert_eq!(l.on_change(1, 100), 1, "the first call COWs its leaf");
        assert_eq!(l.on_change(1, 100), 0, "the same leaf");
        // Filling past a leaf's size COWs (splits into) the next.
        assert_eq!(l.on_change(1, NODESIZE), 1);
        assert_eq!(l.on_change(2, 100), 1, "a new transaction COWs again");
    }

    #[test]
    fn passes_after_the_first_open_what_it_made() {
        assert_eq!(MetaCall::of(MetaEngine::FileCreate, true), MetaCall::Create);
        assert_eq!(MetaCall::of(MetaEngine::FileCreate, false), MetaCall::Open);
        assert!(!MetaCall::Open.changes() && MetaCall::Unlink.changes());
        assert!(MetaCall::Mkdir.creates() && !MetaCall::Rmdir.creates());
        assert!(cpu_ns(MetaCall::Stat) < cpu_ns(MetaCall::Create));
    }

    #[test]
    fn file_calls_lock_the_inode_and_log_its_extents() {
        let falloc = |d| MetaCall::of_file(FileCall::Falloc, d);
        assert_eq!(falloc(Dir::Read), Some(MetaCall::FallocKeepSize));
        assert_eq!(falloc(Dir::Trim), Some(MetaCall::PunchHole));
        assert_eq!(MetaCall::of_file(FileCall::Ftruncate, Dir::Read), None);
        assert_eq!(
            MetaCall::of_file(FileCall::E4defrag { inplace: true }, Dir::Write),
            Some(MetaCall::MoveExtentInPlace)
        );
        assert_eq!(MetaCall::Truncate.lock(), Lock::Inode);
        assert_eq!(MetaCall::Create.lock(), Lock::Dir);
        assert!(MetaCall::PunchHole.changes() && !MetaCall::Stat.changes());
        assert_eq!(xfs_extent_items(MetaCall::Falloc, 7).count(), 2);
        let moved: Vec<_> = xfs_extent_items(MetaCall::MoveExtent, 7).collect();
        assert_eq!(moved.len(), 4, "the donor's inode and extents too");
        assert_eq!(moved[0].0, inode_key(7), "the inode its writes log");
        for (key, _) in &moved[1..] {
            assert!(key >> 57 != 0 && key >> 61 == 0, "{key:x}");
        }
    }

    #[test]
    fn xfs_keys_stay_apart_from_the_data_files() {
        let items = xfs_items(3, 130);
        for (key, _) in items {
            assert!(key >> 61 != 0, "{key:x}");
        }
        // Two files in one directory block share its key.
        assert_eq!(xfs_items(3, 1)[1].0, xfs_items(3, 2)[1].0);
    }
}
