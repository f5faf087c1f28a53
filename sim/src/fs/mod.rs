//! The filesystem layer: where files sit on the device, which of their
//! blocks are written (fio's file preparation, `filesetup.c`) and
//! the journal (`journal`).
//!
//! Layout: a fresh filesystem hands each file one contiguous extent, in
//! creation order, from the start of the data area; the journal sits in
//! the middle of the device as XFS's internal log does.

pub mod btrfs;
pub mod journal;
pub mod meta;

use crate::block::request::NIL;
use crate::cache::bits::Bits;

/// Page size of the page cache and filesystem block size.
pub const PAGE: u64 = 4096;

/// How a file's blocks are allocated before the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prep {
    /// fio wrote the file out (the job reads, or `overwrite=1`): every
    /// block is written.
    WrittenOut,
    /// fio `fallocate`d it (or left it sparse): blocks are unwritten until
    /// the first write reaches them, and each such write completion is a
    /// journal transaction.
    Unwritten,
}

/// One file of the run.
#[derive(Debug)]
pub struct FsFile {
    /// Name as the job file gives it.
    pub name: String,
    /// Device index.
    pub dev: u16,
    /// Where the file lives on the device.
    pub place: Placement,
    /// Size in bytes.
    pub size: u64,
    /// Pages.
    pub pages: u32,
    /// Written blocks; `None` when all are.
    pub written: Option<Bits>,
    /// Extent count estimate (for the journal's bmbt leaf estimate).
    pub extents: u32,
    /// Journal sequence of the last logged change of any kind.
    pub change_seq: u64,
    /// Journal sequence of the last change `fdatasync` must persist.
    pub datasync_seq: u64,
    /// Journal sequence in which the inode core was last logged.
    pub inode_logged_seq: u64,
    /// Head of the intrusive list of in-flight write requests.
    pub writes_head: u32,
    /// In-flight read requests (few at a time).
    pub reads: Vec<u32>,
    /// Head of the list of this file's writeback bios parked before
    /// becoming requests (indices into the parked-bio slab).
    pub parked_head: u32,
    /// Last timestamp update logged (coarse clock, see `world::job`).
    pub mtime: u64,
    /// `write()`s so far, and how many of them a volume's fsync has
    /// logged (btrfs skips the log and the superblocks when nothing
    /// changed since: `skip_inode_logging`).
    pub write_seq: u64,
    pub logged_write_seq: u64,
    /// Generation of the volume transaction that last changed its items.
    pub txn_generation: u64,
}

/// A file's extents: one, or two when it had to go around the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Device offset of page 0.
    pub first: u64,
    /// Page where the second extent starts (`u32::MAX`: one extent).
    pub split: u32,
    /// Device offset of page `split`.
    pub second: u64,
}

impl Placement {
    /// One contiguous extent at `at`.
    pub fn contiguous(at: u64) -> Self {
        Self {
            first: at,
            split: u32::MAX,
            second: 0,
        }
    }

    /// Device offset of byte `off` of the file.
    #[inline]
    pub fn device_offset(&self, off: u64) -> u64 {
        let split = u64::from(self.split) * PAGE;
        if off < split {
            self.first + off
        } else {
            self.second + (off - split)
        }
    }

    /// Bytes from file offset `off` that stay contiguous on the device.
    #[inline]
    pub fn contiguous_from(&self, off: u64) -> u64 {
        let split = u64::from(self.split) * PAGE;
        if off < split { split - off } else { u64::MAX }
    }
}

impl FsFile {
    /// Device offset of page `p`.
    #[inline]
    pub fn page_offset(&self, p: u32) -> u64 {
        self.place.device_offset(u64::from(p) * PAGE)
    }

    /// Is page `p` written?
    #[inline]
    pub fn is_written(&self, p: u32) -> bool {
        self.written.as_ref().is_none_or(|w| w.get(p))
    }
}

/// The device's first bytes, kept for superblocks and AG headers: no file
/// is placed there.
pub const HEADER_BYTES: u64 = 1 << 20;

/// Error from the layout allocator.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FsError {
    /// The files do not fit on the device.
    #[error(
        "file '{name}' ({size} bytes) does not fit: {free} bytes left on a {capacity}-byte device"
    )]
    NoSpace {
        /// File name.
        name: String,
        /// File size.
        size: u64,
        /// Free bytes when it was placed.
        free: u64,
        /// Device capacity.
        capacity: u64,
    },
    /// A file larger than the simulator's page index range.
    #[error("file '{name}' is {size} bytes; files above 16 TiB are not simulated")]
    TooLarge {
        /// File name.
        name: String,
        /// Size.
        size: u64,
    },
}

/// The filesystem of one device: a bump allocator around the log.
#[derive(Debug)]
pub struct Layout {
    capacity: u64,
    next: u64,
    log_offset: u64,
    log_size: u64,
}

impl Layout {
    /// A fresh filesystem on a device of `capacity` bytes with a log of
    /// `log_size` bytes in the middle.
    pub fn new(capacity: u64, log_size: u64) -> Self {
        let log_offset = (capacity / 2) / PAGE * PAGE;
        Self {
            capacity,
            next: HEADER_BYTES,
            log_offset,
            log_size,
        }
    }

    /// The end of the space handed out so far (past the log once a file
    /// went beyond it).
    pub fn end(&self) -> u64 {
        self.next
    }

    /// Where the log sits.
    pub fn log(&self) -> (u64, u64) {
        (self.log_offset, self.log_size)
    }

    /// Places a file of `size` bytes. A file that would run into the log
    /// continues after it, in a second extent (as an allocator would split
    /// it around an allocation group's log).
    pub fn place(&mut self, name: &str, size: u64) -> Result<Placement, FsError> {
        if size / PAGE >= u64::from(u32::MAX) {
            return Err(FsError::TooLarge {
                name: name.to_owned(),
                size,
            });
        }
        let size = size.div_ceil(PAGE) * PAGE;
        let log_end = self.log_offset + self.log_size;
        let mut at = self.next;
        if at >= self.log_offset && at < log_end {
            // The previous file ended where the log starts.
            at = log_end;
        }
        let before_log = at < self.log_offset;
        let usable = if before_log {
            self.capacity
                .saturating_sub(at)
                .saturating_sub(self.log_size)
        } else {
            self.capacity.saturating_sub(at)
        };
        if size > usable {
            return Err(FsError::NoSpace {
                name: name.to_owned(),
                size,
                free: usable,
                capacity: self.capacity,
            });
        }
        if before_log && at + size > self.log_offset {
            let head = self.log_offset - at;
            self.next = log_end + (size - head);
            Ok(Placement {
                first: at,
                split: (head / PAGE) as u32,
                second: log_end,
            })
        } else {
            self.next = at + size;
            Ok(Placement::contiguous(at))
        }
    }
}

/// A new file record.
pub fn new_file(name: &str, dev: u16, place: Placement, size: u64, prep: Prep) -> FsFile {
    let pages = size.div_ceil(PAGE) as u32;
    FsFile {
        name: name.to_owned(),
        dev,
        place,
        size,
        pages,
        written: match prep {
            Prep::WrittenOut => None,
            Prep::Unwritten => Some(Bits::new(u64::from(pages))),
        },
        extents: 1,
        change_seq: 0,
        datasync_seq: 0,
        inode_logged_seq: 0,
        writes_head: NIL,
        reads: Vec::new(),
        parked_head: NIL,
        mtime: 0,
        write_seq: 0,
        logged_write_seq: 0,
        txn_generation: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_placed_around_the_log() {
        let mut l = Layout::new(100 << 20, 10 << 20);
        assert_eq!(l.log(), (50 << 20, 10 << 20));
        assert_eq!(l.place("a", 40 << 20), Ok(Placement::contiguous(1 << 20)));
        // The next 20 MiB would run into the log: 9 MiB before, 11 after.
        let b = l.place("b", 20 << 20).unwrap();
        let want = Placement {
            first: 41 << 20,
            split: (9 << 20) / 4096,
            second: 60 << 20,
        };
        assert_eq!(b, want);
        assert_eq!(b.device_offset(0), 41 << 20);
        assert_eq!(b.device_offset((9 << 20) - 1), (50 << 20) - 1);
        assert_eq!(b.device_offset(9 << 20), 60 << 20);
        assert_eq!(b.contiguous_from(8 << 20), 1 << 20);
        assert_eq!(l.place("c", 29 << 20), Ok(Placement::contiguous(71 << 20)));
        let full = l.place("d", 1 << 20);
        assert!(matches!(full, Err(FsError::NoSpace { .. })));
    }

    #[test]
    fn a_file_starting_at_the_log_goes_after_it() {
        let mut l = Layout::new(100 << 20, 10 << 20);
        assert_eq!(l.place("a", 49 << 20), Ok(Placement::contiguous(1 << 20)));
        assert_eq!(l.place("b", 4 << 20), Ok(Placement::contiguous(60 << 20)));
    }

    #[test]
    fn a_file_larger_than_half_the_device_goes_around_the_log() {
        let mut l = Layout::new(1000 << 20, 10 << 20);
        let p = l.place("big", 600 << 20).unwrap();
        assert_eq!(p.first, 1 << 20);
        assert_eq!(p.second, 510 << 20);
        let more = l.place("more", 400 << 20);
        assert!(matches!(more, Err(FsError::NoSpace { .. })));
    }
}
