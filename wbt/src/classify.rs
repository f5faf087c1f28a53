//! Request classification (kernel: `bio_to_wbt_flags`): the
//! operation and its `REQ_*` flags in, WBT's per-request flags and
//! throttling [`Class`] out.

use core::fmt;

use crate::{DepthPolicy, NUM_CLASSES, Slots, Variant, Wbt};

/// Request operation, as far as WBT cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `REQ_OP_READ`.
    Read,
    /// `REQ_OP_WRITE`.
    Write,
    /// `REQ_OP_DISCARD`.
    Discard,
    /// `REQ_OP_WRITE_ZEROES`: write direction (counts in write stats), never throttled.
    WriteZeroes,
    /// `REQ_OP_FLUSH`: neither throttled nor counted.
    Flush,
}

impl Op {
    pub(crate) fn is_write_dir(self) -> bool {
        matches!(self, Op::Write | Op::Discard | Op::WriteZeroes)
    }
}

/// Request operation flags (`REQ_*`), a bit set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OpFlags(pub u32);

impl OpFlags {
    /// No flags.
    pub const NONE: OpFlags = OpFlags(0);
    /// `REQ_SYNC`.
    pub const SYNC: OpFlags = OpFlags(1);
    /// `REQ_IDLE`; with SYNC on a write it is the O_DIRECT signature.
    pub const IDLE: OpFlags = OpFlags(2);
    /// `REQ_META`.
    pub const META: OpFlags = OpFlags(4);
    /// `REQ_PRIO`.
    pub const PRIO: OpFlags = OpFlags(8);
    /// `REQ_BACKGROUND` (background writeback).
    pub const BACKGROUND: OpFlags = OpFlags(16);
    /// `REQ_SWAP` (swap-out; exempt class in the modern kernel).
    pub const SWAP: OpFlags = OpFlags(32);

    /// True if every bit of `other` is set.
    pub const fn contains(self, other: OpFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// True if any bit of `other` is set.
    pub const fn intersects(self, other: OpFlags) -> bool {
        self.0 & other.0 != 0
    }
}

impl core::ops::BitOr for OpFlags {
    type Output = OpFlags;
    fn bitor(self, rhs: OpFlags) -> OpFlags {
        OpFlags(self.0 | rhs.0)
    }
}

/// WBT's per-request flags (kernel: `enum wbt_flags`), stored on the request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ReqFlags(pub u8);

impl ReqFlags {
    /// Not WBT's business.
    pub const NONE: ReqFlags = ReqFlags(0);
    /// Counted in a class's inflight counter (`WBT_TRACKED`).
    pub const TRACKED: ReqFlags = ReqFlags(1);
    /// A read: feeds the stuck-read tracker and `close_io` (`WBT_READ`).
    pub const READ: ReqFlags = ReqFlags(2);
    /// Swap class (`WBT_SWAP`, formerly `WBT_KSWAPD`).
    pub const SWAP: ReqFlags = ReqFlags(4);
    /// Discard class (`WBT_DISCARD`).
    pub const DISCARD: ReqFlags = ReqFlags(8);

    /// True if every bit of `other` is set.
    pub const fn contains(self, other: ReqFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// The flags a tracked request of `class` carries (what a waiter granted
    /// through [`Wbt::try_admit`] stores on its request).
    pub const fn tracked(class: Class) -> ReqFlags {
        match class {
            Class::Bg => ReqFlags::TRACKED,
            Class::Swap => ReqFlags(ReqFlags::TRACKED.0 | ReqFlags::SWAP.0),
            Class::Discard => ReqFlags(ReqFlags::TRACKED.0 | ReqFlags::DISCARD.0),
        }
    }

    /// The class of a tracked request (kernel: `get_rq_wait`), `None` if untracked.
    pub const fn class(self) -> Option<Class> {
        if !self.contains(ReqFlags::TRACKED) {
            None
        } else if self.contains(ReqFlags::SWAP) {
            Some(Class::Swap)
        } else if self.contains(ReqFlags::DISCARD) {
            Some(Class::Discard)
        } else {
            Some(Class::Bg)
        }
    }
}

/// Throttling class: each has its own inflight counter and wait queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Buffered writes (`WBT_RWQ_BG`). The only class of the v5 variant.
    Bg = 0,
    /// Swap-out writes (`WBT_RWQ_SWAP`).
    Swap = 1,
    /// Discards (`WBT_RWQ_DISCARD`).
    Discard = 2,
}

impl Class {
    /// All classes in index order.
    pub const ALL: [Class; NUM_CLASSES] = [Class::Bg, Class::Swap, Class::Discard];

    /// Index into per-class arrays.
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// A class index outside 0..3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownClass(pub usize);

impl fmt::Display for UnknownClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown wbt class {} (0 = background, 1 = swap, 2 = discard)",
            self.0
        )
    }
}

impl core::error::Error for UnknownClass {}

impl TryFrom<usize> for Class {
    type Error = UnknownClass;

    fn try_from(i: usize) -> Result<Class, UnknownClass> {
        Class::ALL.get(i).copied().ok_or(UnknownClass(i))
    }
}

/// Classify a bio (kernel: `bio_to_wbt_flags`) for a variant
/// that is `enabled` or not: empty when disabled. In v5 only buffered
/// writes are tracked (no READ bit, no discard or swap classes).
#[inline]
pub fn classify_request(variant: Variant, enabled: bool, op: Op, flags: OpFlags) -> ReqFlags {
    if !enabled {
        return ReqFlags::NONE;
    }
    let odirect = flags.contains(OpFlags::SYNC | OpFlags::IDLE);
    match variant {
        Variant::Modern => match op {
            Op::Read => ReqFlags::READ,
            Op::Write if odirect => ReqFlags::NONE,
            Op::Write | Op::Discard => {
                let mut f = ReqFlags::TRACKED.0;
                if flags.contains(OpFlags::SWAP) {
                    f |= ReqFlags::SWAP.0;
                }
                if op == Op::Discard {
                    f |= ReqFlags::DISCARD.0;
                }
                ReqFlags(f)
            }
            Op::WriteZeroes | Op::Flush => ReqFlags::NONE,
        },
        // v5 `wbt_should_throttle`: writes that are not O_DIRECT. The 2016
        // O_DIRECT test was "SYNC without NOIDLE", which is SYNC|IDLE in
        // today's flag vocabulary.
        Variant::V5_2016 => match op {
            Op::Write if !odirect => ReqFlags::TRACKED,
            _ => ReqFlags::NONE,
        },
    }
}

impl<S: Slots, D: DepthPolicy> Wbt<S, D> {
    /// Classify a bio with this controller's variant and enable state
    /// ([`classify_request`]).
    pub fn classify(&self, op: Op, flags: OpFlags) -> ReqFlags {
        classify_request(self.variant, self.enabled(), op, flags)
    }
}
