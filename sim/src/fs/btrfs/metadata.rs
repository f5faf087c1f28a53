//! A volume's metadata space: its metadata chunks, how full they are, when
//! another is needed, and which one an fsync's log-tree blocks land in.
//!
//! What is modelled (Zygo Blaxell's fsync cliff, linux-btrfs, January 2021):
//! - **Use.** Tree items take space as files and extents are created
//!   ([`item_bytes_for_file`]), plus whatever an aged filesystem already
//!   held (`--metadata-used`). Chunks fill oldest first.
//! - **Growth.** A new metadata chunk is asked of the mount's allocator
//!   when the used bytes plus 2 MiB reach 80 % of the metadata chunks'
//!   total (the kernel's `should_alloc_chunk`, `CHUNK_ALLOC_NO_FORCE`).
//!   The caller ([`Raid`](super::volume::Raid)) does the allocation.
//! - **Log blocks** go to the chunk with the most free space *(assumed:
//!   the kernel's `find_free_extent` clusters metadata allocations in a
//!   block group with a free window, which on a filesystem whose older
//!   chunks are 80 % full is nearly always the newest)*; inside it they go
//!   round the free part (log blocks are freed by the next commit).
//!
//! - **Tree blocks** of a commit go the same way as log blocks, in a row
//!   ([`MetaSpace::place`]).
//!
//! What is not: metadata freed by deletes or by COW, the global reserve.

use super::volume::MapChunk;

/// A metadata tree block (btrfs `nodesize`, 16 KiB).
pub const NODESIZE: u64 = 16 * 1024;

/// Slack the kernel adds before comparing with 80 % (`SZ_2M`).
const ALLOC_SLACK: u64 = 2 << 20;
/// Percent of the metadata total at which a new chunk is allocated.
const ALLOC_PERCENT: u64 = 80;

/// Size of a leaf item's header (`struct btrfs_item`).
const ITEM_HEADER: u64 = 25;
/// `btrfs_inode_item`.
const INODE_ITEM: u64 = 160;
/// `btrfs_inode_ref` without its name.
const INODE_REF: u64 = 10;
/// `btrfs_dir_item` without its name (a DIR_ITEM and a DIR_INDEX each).
const DIR_ITEM: u64 = 30;
/// `btrfs_file_extent_item` of a regular extent.
const FILE_EXTENT_ITEM: u64 = 53;
/// `btrfs_extent_item` with one inline data backref.
const EXTENT_ITEM: u64 = 24 + 29;
/// Checksum bytes per 4 KiB data sector (crc32c).
const CSUM_PER_SECTOR: u64 = 4;
/// The largest data extent btrfs makes (`BTRFS_MAX_EXTENT_SIZE`).
const MAX_EXTENT: u64 = 128 << 20;
/// Average leaf fill under random inserts, percent *(assumed: the B-tree
/// result ln 2 ≈ 69 %; btrfs splits leaves in half)*.
const LEAF_FILL_PERCENT: u64 = 69;

/// Metadata bytes a new regular file of `size` bytes named `name_len`
/// bytes takes: its inode item, inode ref, directory item and index, one
/// file extent item and extent item per extent of at most 128 MiB, and
/// checksums; item headers included, over the average leaf fill.
pub fn item_bytes_for_file(size: u64, name_len: u64) -> u64 {
    let inode = INODE_ITEM + ITEM_HEADER;
    let names = (INODE_REF + name_len + ITEM_HEADER) + 2 * (DIR_ITEM + name_len + ITEM_HEADER);
    let extents = size.div_ceil(MAX_EXTENT) * (FILE_EXTENT_ITEM + EXTENT_ITEM + 2 * ITEM_HEADER);
    let csums = size.div_ceil(4096) * CSUM_PER_SECTOR;
    (inode + names + extents + csums) * 100 / LEAF_FILL_PERCENT
}

/// Tree-item bytes a data write of `pages` pages changes when its
/// ordered extent finishes: a file extent item, the data extent's item
/// in the extent tree and the pages' checksums, plus the inode item when
/// it is the file's first change in the transaction (`first`); item
/// headers included, over the average leaf fill.
pub fn item_bytes_for_write(pages: u64, first: bool) -> u64 {
    let inode = if first { INODE_ITEM + ITEM_HEADER } else { 0 };
    let extent = FILE_EXTENT_ITEM + EXTENT_ITEM + 2 * ITEM_HEADER;
    (inode + extent + pages * CSUM_PER_SECTOR) * 100 / LEAF_FILL_PERCENT
}

/// One metadata chunk.
#[derive(Clone, Copy, Debug)]
pub struct MetaChunk {
    /// Where it lives.
    pub map: MapChunk,
    /// Bytes of it holding tree items.
    pub used: u64,
    /// Next log block, bytes into the free part.
    cursor: u64,
}

impl MetaChunk {
    fn free(&self) -> u64 {
        self.map.len - self.used
    }
}

/// The metadata chunks of a volume and their use.
#[derive(Debug)]
pub struct MetaSpace {
    chunks: Vec<MetaChunk>,
    /// Tree-item bytes in use (may exceed the chunks' total when no chunk
    /// could be allocated).
    used: u64,
    /// Sums over the chunks, kept so that allocating many chunks at once
    /// stays linear: their bytes, the bytes they can hold for items, and
    /// the bytes of items placed in them.
    total: u64,
    room: u64,
    placed: u64,
    /// Chunk allocations the allocator refused.
    pub refused: u64,
}

/// Bytes of a chunk that can hold tree items: all but the room kept for
/// one log write of two blocks (the kernel keeps a global reserve; a chunk
/// is never filled to the byte).
fn item_room(map: &MapChunk) -> u64 {
    map.len.saturating_sub(2 * NODESIZE)
}

impl MetaSpace {
    /// The space of a fresh filesystem: mkfs's metadata chunk, empty.
    pub fn new(first: MapChunk) -> MetaSpace {
        MetaSpace {
            chunks: vec![MetaChunk {
                map: first,
                used: 0,
                cursor: 0,
            }],
            used: 0,
            total: first.len,
            room: item_room(&first),
            placed: 0,
            refused: 0,
        }
    }

    /// Bytes of all metadata chunks.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes the chunks can hold for tree items (each keeps room for one
    /// log write; see `refill`).
    pub fn capacity(&self) -> u64 {
        self.room
    }

    /// Tree-item bytes in use.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// The chunks, oldest first.
    pub fn chunks(&self) -> &[MetaChunk] {
        &self.chunks
    }

    /// Whether another chunk is due (kernel: `should_alloc_chunk`).
    pub fn wants_chunk(&self) -> bool {
        self.used + ALLOC_SLACK >= self.total() * ALLOC_PERCENT / 100
    }

    /// A chunk the allocator gave. The items the older chunks could not
    /// hold move into it (what `refill` would give it, without touching
    /// the others).
    pub fn add_chunk(&mut self, map: MapChunk) {
        let used = (self.used - self.placed).min(item_room(&map));
        self.chunks.push(MetaChunk {
            map,
            used,
            cursor: 0,
        });
        self.placed += used;
        self.total += map.len;
        self.room += item_room(&map);
        debug_assert_eq!(self.placed, self.chunks.iter().map(|c| c.used).sum::<u64>());
    }

    /// `bytes` more of tree items.
    pub fn use_bytes(&mut self, bytes: u64) {
        self.used = self.used.saturating_add(bytes);
        self.refill();
    }

    /// Spread `used` over the chunks, oldest first, up to each one's
    /// [`item_room`].
    fn refill(&mut self) {
        let mut left = self.used;
        for c in &mut self.chunks {
            c.used = left.min(item_room(&c.map));
            left -= c.used;
            if c.cursor >= c.free() {
                c.cursor = 0;
            }
        }
        self.placed = self.used - left;
    }

    /// Where the next `blocks` log blocks go: the chunk with the most free
    /// space (the first of equals), at its cursor, which goes round its
    /// free part. Returns the chunk and the byte offset into it.
    pub fn log_blocks(&mut self, blocks: u64) -> (MapChunk, u64) {
        let (map, at, n) = self.place(blocks);
        debug_assert_eq!(n, blocks, "refill leaves room for a log write");
        (map, at)
    }

    /// Where the next run of at most `blocks` tree blocks goes: the chunk
    /// with the most free space (the first of equals), at its cursor,
    /// which goes round its free part. Returns the chunk, the byte offset
    /// into it, and how many blocks it takes in a row there: all of them,
    /// or the chunk's whole free part (a caller with more asks again).
    pub fn place(&mut self, blocks: u64) -> (MapChunk, u64, u64) {
        let c = self
            .chunks
            .iter_mut()
            .rev()
            .max_by_key(|c| c.free())
            .expect("a volume has mkfs's metadata chunk");
        // A chunk is never filled past its room for one log write, so a
        // run of at least one block always fits inside it.
        assert!(
            c.free() >= 2 * NODESIZE,
            "refill leaves every chunk room for a log write"
        );
        let n = blocks.min(c.free() / NODESIZE).max(1);
        if c.cursor + n * NODESIZE > c.free() {
            c.cursor = 0;
        }
        let at = c.used + c.cursor;
        c.cursor += n * NODESIZE;
        (c.map, at, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn chunk(logical: u64, len: u64, dev: u16) -> MapChunk {
        let mut stripes = [(0, 0); super::super::volume::MAX_COPIES];
        stripes[0] = (dev, logical);
        MapChunk {
            logical,
            len,
            copies: 1,
            stripes,
        }
    }

    #[test]
    fn a_chunk_is_wanted_at_eighty_percent_less_two_mib() {
        let mut m = MetaSpace::new(chunk(0, GIB, 0));
        let at = GIB * 80 / 100 - ALLOC_SLACK;
        m.use_bytes(at - 1);
        assert!(!m.wants_chunk());
        m.use_bytes(1);
        assert!(m.wants_chunk());
        m.add_chunk(chunk(GIB, GIB, 1));
        assert!(!m.wants_chunk(), "{} of {}", m.used(), m.total());
        assert_eq!(m.chunks()[0].used, at, "the oldest chunk fills first");
        assert_eq!(m.chunks()[1].used, 0);
    }

    #[test]
    fn chunks_added_one_by_one_hold_what_a_full_refill_gives_them() {
        // An aged filesystem: far more items than mkfs's chunk holds, then
        // the chunks the threshold asks for, of unequal sizes.
        let mut m = MetaSpace::new(chunk(0, GIB, 0));
        m.use_bytes(40 * GIB + 12345);
        let mut at = GIB;
        let mut k = 0;
        while m.wants_chunk() {
            let len = if k % 3 == 0 { GIB / 2 } else { GIB };
            m.add_chunk(chunk(at, len, (k % 2) as u16));
            at += len;
            k += 1;
        }
        let incremental: Vec<u64> = m.chunks().iter().map(|c| c.used).collect();
        m.refill();
        let full: Vec<u64> = m.chunks().iter().map(|c| c.used).collect();
        assert_eq!(incremental, full);
        assert_eq!(m.total(), at);
        assert_eq!(full.iter().sum::<u64>(), m.used(), "every item placed");
        let room: u64 = m.chunks().iter().map(|c| item_room(&c.map)).sum();
        assert_eq!(m.capacity(), room);
        assert!(m.chunks().len() > 40, "{} chunks", m.chunks().len());
    }

    #[test]
    fn log_blocks_go_to_the_emptiest_chunk_and_round_its_free_part() {
        let mut m = MetaSpace::new(chunk(0, GIB, 0));
        m.use_bytes(GIB / 2);
        let (c, at) = m.log_blocks(2);
        assert_eq!(
            (c.stripes[0].0, at),
            (0, GIB / 2),
            "one chunk: its free part"
        );
        let (_, at) = m.log_blocks(2);
        assert_eq!(at, GIB / 2 + 2 * NODESIZE, "blocks are allocated in a row");
        m.add_chunk(chunk(GIB, GIB, 1));
        let (c, at) = m.log_blocks(2);
        assert_eq!(
            (c.stripes[0].0, at),
            (1, 0),
            "the new chunk is the emptiest"
        );
        // Free part of 4 blocks: the cursor goes round.
        let mut small = MetaSpace::new(chunk(0, 6 * NODESIZE, 0));
        small.use_bytes(2 * NODESIZE);
        let offsets: Vec<u64> = (0..3).map(|_| small.log_blocks(2).1 / NODESIZE).collect();
        assert_eq!(offsets, [2, 4, 2]);
    }

    #[test]
    fn a_long_run_of_tree_blocks_takes_the_free_part_and_asks_again() {
        let mut m = MetaSpace::new(chunk(0, 16 * NODESIZE, 0));
        m.use_bytes(6 * NODESIZE);
        // Free part: blocks 6..16 less the log room kept (refill keeps
        // two blocks): 10 blocks of free space.
        let (_, at, n) = m.place(3);
        assert_eq!((at / NODESIZE, n), (6, 3), "in a row at the cursor");
        let (_, at, n) = m.place(25);
        assert_eq!(
            (at / NODESIZE, n),
            (6, 10),
            "too long for the rest: wraps, whole part"
        );
        let (_, at, n) = m.place(4);
        assert_eq!(
            (at / NODESIZE, n),
            (6, 4),
            "the cursor was at the end: round again"
        );
        let (_, at) = m.log_blocks(2);
        assert_eq!(at / NODESIZE, 10, "log blocks follow in the same row");
    }

    #[test]
    fn a_write_changes_its_extent_items_and_checksums_and_the_inode_once() {
        let later = item_bytes_for_write(8, false);
        assert_eq!(later, (53 + 53 + 50 + 32) * 100 / 69);
        assert_eq!(
            item_bytes_for_write(8, true),
            (185 + 53 + 53 + 50 + 32) * 100 / 69
        );
        assert!(item_bytes_for_write(256, false) > later);
    }

    #[test]
    fn use_beyond_the_chunks_keeps_room_for_a_log_write() {
        let mut m = MetaSpace::new(chunk(0, 8 * NODESIZE, 0));
        m.use_bytes(100 * NODESIZE);
        assert_eq!(m.used(), 100 * NODESIZE);
        assert_eq!(m.capacity(), 6 * NODESIZE, "less than what is used");
        assert_eq!(m.chunks()[0].used, 6 * NODESIZE);
        assert_eq!(m.log_blocks(2).1, 6 * NODESIZE);
    }

    #[test]
    fn a_small_file_takes_about_a_kilobyte() {
        // 32 KiB, a 20-byte name: 185 + 3 x (name + item) + extent items
        // + 8 csums, over a 69 % fill.
        let b = item_bytes_for_file(32 << 10, 20);
        assert_eq!(b, (185 + 55 + 2 * 75 + 156 + 32) * 100 / 69);
        assert!((800..1000).contains(&b), "{b}");
        // A 1 GiB file: 8 extents and 262144 csums dominate.
        let big = item_bytes_for_file(1 << 30, 20);
        assert_eq!(big, (185 + 55 + 150 + 8 * 156 + 262_144 * 4) * 100 / 69);
    }
}
