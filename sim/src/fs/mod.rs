//! The filesystem layer: where files sit on the device, which of their
//! blocks are written (fio's file preparation, spec fidelity.md F1.1) and
//! the journal (`journal`).
//!
//! Layout: a fresh filesystem hands each file one contiguous extent, in
//! creation order, from the start of the data area; the journal sits in
//! the middle of the device as XFS's internal log does.

pub mod journal;

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
    /// Byte offset of the file's extent on the device.
    pub dev_offset: u64,
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
}

impl FsFile {
    /// Is page `p` written?
    #[inline]
    pub fn is_written(&self, p: u32) -> bool {
        self.written.as_ref().is_none_or(|w| w.get(p))
    }
}

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
            // Leave the first MiB for superblocks and AG headers.
            next: 1 << 20,
            log_offset,
            log_size,
        }
    }

    /// Where the log sits.
    pub fn log(&self) -> (u64, u64) {
        (self.log_offset, self.log_size)
    }

    /// Places a file of `size` bytes; returns its device offset.
    pub fn place(&mut self, name: &str, size: u64) -> Result<u64, FsError> {
        if size / PAGE >= u64::from(u32::MAX) {
            return Err(FsError::TooLarge {
                name: name.to_owned(),
                size,
            });
        }
        let size = size.div_ceil(PAGE) * PAGE;
        let mut at = self.next;
        if at < self.log_offset + self.log_size && at + size > self.log_offset {
            at = self.log_offset + self.log_size;
        }
        let free = self.capacity.saturating_sub(at);
        if size > free {
            return Err(FsError::NoSpace {
                name: name.to_owned(),
                size,
                free,
                capacity: self.capacity,
            });
        }
        self.next = at + size;
        Ok(at)
    }
}

/// A new file record.
pub fn new_file(name: &str, dev: u16, dev_offset: u64, size: u64, prep: Prep) -> FsFile {
    let pages = size.div_ceil(PAGE) as u32;
    FsFile {
        name: name.to_owned(),
        dev,
        dev_offset,
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_placed_around_the_log() {
        let mut l = Layout::new(100 << 20, 10 << 20);
        assert_eq!(l.log(), (50 << 20, 10 << 20));
        assert_eq!(l.place("a", 40 << 20), Ok(1 << 20));
        // The next 20 MiB would overlap the log: it goes after it.
        assert_eq!(l.place("b", 20 << 20), Ok(60 << 20));
        assert!(matches!(
            l.place("c", 30 << 20),
            Err(FsError::NoSpace { .. })
        ));
    }
}
