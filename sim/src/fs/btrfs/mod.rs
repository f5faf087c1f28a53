//! btrfs, one module tree: the pure bookkeeping of the btrfs pieces the
//! simulator runs (`world::btrfs` and its `commit` and `log_tree` are their glue to the
//! page cache, the block layer and the `iolab-flush` model).
//!
//! * [`volume`]: the devices and the chunk map (`--volume`), built with
//!   the `iolab-tiering` allocator; where each copy of a block lives, the
//!   per-device `part_stat` the read policies read.
//! * [`metadata`]: the volume's metadata chunks and the tree items a write
//!   or a file adds.
//! * [`transaction`]: the running transaction, its 30 s commit, the tree
//!   blocks it writes, `tree_log_mutex` and the batching of fsyncs'
//!   superblock writes.
//! * [`write_path`] (re-exported here): btrfs's buffered write path
//!   around the flush model: the inode's reservation, outstanding extents,
//!   the refs an ordered extent queues.

pub mod metadata;
pub mod transaction;
pub mod volume;
pub mod write_path;

pub use write_path::*;
