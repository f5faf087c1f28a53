//! Bios and requests.
//!
//! A [`Bio`] is what an actor (a fio job, the flusher, the journal) submits;
//! once admitted by the rq-qos policy and given a tag it becomes a
//! [`Request`] in the request slab, addressed by a `u32` index.

use crate::time::Ns;

/// The operation of a bio or request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Read data.
    Read,
    /// Write data; a write of length 0 with `PREFLUSH` is a bare cache flush.
    Write,
    /// Discard (trim) a range.
    Discard,
}

/// Request flags, as the kernel's `REQ_*` bits that matter here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags(pub u16);

impl Flags {
    /// Synchronous: someone waits for it (`REQ_SYNC`).
    pub const SYNC: Flags = Flags(1);
    /// No more IO follows soon (`REQ_IDLE`); with SYNC marks O_DIRECT writes.
    pub const IDLE: Flags = Flags(1 << 1);
    /// Filesystem metadata (`REQ_META`).
    pub const META: Flags = Flags(1 << 2);
    /// Flush the device's volatile cache before this request (`REQ_PREFLUSH`).
    pub const PREFLUSH: Flags = Flags(1 << 3);
    /// Forced unit access: complete only once on stable media (`REQ_FUA`).
    pub const FUA: Flags = Flags(1 << 4);
    /// Background writeback (`REQ_BACKGROUND`).
    pub const BACKGROUND: Flags = Flags(1 << 5);
    /// Readahead (`REQ_RAHEAD`).
    pub const RAHEAD: Flags = Flags(1 << 6);
    /// Priority IO (`REQ_PRIO`).
    pub const PRIO: Flags = Flags(1 << 7);
    /// Swap IO (`REQ_SWAP`).
    pub const SWAP: Flags = Flags(1 << 8);

    /// No flags.
    pub const fn empty() -> Self {
        Flags(0)
    }

    /// True when every bit of `other` is set.
    #[inline]
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// True when any bit of `other` is set.
    #[inline]
    pub const fn intersects(self, other: Flags) -> bool {
        self.0 & other.0 != 0
    }

    /// Union.
    #[inline]
    #[must_use]
    pub const fn with(self, other: Flags) -> Self {
        Flags(self.0 | other.0)
    }

    /// Difference.
    #[inline]
    #[must_use]
    pub const fn without(self, other: Flags) -> Self {
        Flags(self.0 & !other.0)
    }
}

/// Who submitted the IO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A task (a fio job clone), by job index.
    Task(u32),
    /// The writeback flusher.
    Flusher,
    /// Memory reclaim.
    Kswapd,
    /// Filesystem-internal work (journal, metadata writeback).
    Fs,
}

/// What a request carries for the page cache and the waiters once it ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Payload {
    /// Pages `[first, first + count)` of file `file` being read in.
    CacheRead {
        /// File id.
        file: u32,
        /// First page index.
        first: u32,
        /// Page count.
        count: u32,
    },
    /// Pages `[first, first + count)` of file `file` under writeback.
    CacheWrite {
        /// File id.
        file: u32,
        /// First page index.
        first: u32,
        /// Page count.
        count: u32,
        /// The copies of a mirrored volume written together: index of
        /// their count of copies still in flight (`NIL`: one copy).
        group: u32,
    },
    /// A direct IO of a job context.
    Direct {
        /// File id.
        file: u32,
        /// First page touched.
        first: u32,
        /// Pages touched.
        count: u32,
    },
    /// A journal write (an iclog of checkpoint `seq`).
    Log {
        /// Checkpoint sequence.
        seq: u64,
    },
    /// Metadata written in place.
    Meta,
    /// A bare cache flush.
    Flush,
    /// A volume's fsync: a log-tree block or a superblock (the context
    /// waits for it; nothing else upstream).
    LogSync,
    /// A volume's commit: a run of tree blocks.
    TreeBlock,
    /// A volume's commit: a superblock.
    CommitSuper,
}

/// A bio: an IO before it holds a request slot.
#[derive(Clone, Copy, Debug)]
pub struct Bio {
    /// Operation.
    pub op: Op,
    /// Flags.
    pub flags: Flags,
    /// Device index in the volume.
    pub dev: u16,
    /// Byte offset on the device.
    pub offset: u64,
    /// Length in bytes (0 for a bare flush).
    pub len: u64,
    /// Submitter.
    pub origin: Origin,
    /// Block cgroup id (0 = root).
    pub cgroup: u16,
    /// What the completion means upstream.
    pub payload: Payload,
}

/// A request in the slab.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    /// The bio it was made from.
    pub bio: Bio,
    /// When the bio was submitted (before throttling).
    pub submit_ns: Ns,
    /// When it got its tag (request allocation).
    pub alloc_ns: Ns,
    /// When it was dispatched to the device (0 until then).
    pub issue_ns: Ns,
    /// Opaque policy data set by `Policy::track`.
    pub policy_data: u32,
    /// Flush sequencing state (see `block::flush`).
    pub fseq: u8,
    /// Device tag held.
    pub tag: u32,
    /// Head of the waiter list (index into the waiter slab, `NIL` for none).
    pub waiters: u32,
    /// Intrusive list of in-flight writes of one file.
    pub file_next: u32,
    /// Intrusive list of in-flight writes of one file.
    pub file_prev: u32,
}

/// The null index of intrusive lists.
pub const NIL: u32 = u32::MAX;
