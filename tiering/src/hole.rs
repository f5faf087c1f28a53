//! Hole search on one device (kernel: `find_free_dev_extent`).

use crate::{DEVICE_RANGE_RESERVED, Device};

/// The answer of the hole search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hole {
    /// Start of the hole.
    pub start: u64,
    /// Its full length (not capped at the request).
    pub len: u64,
    /// Whether it is at least as long as the request. If not, it is the
    /// largest hole of the device (length 0 when there is none).
    pub fits: bool,
}

/// Searches `[1 MiB, total_bytes)` of `dev` for a free range of `want`
/// bytes: the **first** gap between extents that is long enough wins
/// (first fit, so low offsets fill first); if none is, the largest gap is
/// returned instead, the earliest among equals (the kernel replaces its
/// best only on a strictly larger hole).
///
/// A device without any gap past the reserved first MiB gives a hole of
/// length 0 at 1 MiB; the caller treats that as no space.
pub fn find_free_dev_extent(dev: &Device, want: u64) -> Hole {
    let end = dev.total_bytes();
    let mut best = Hole {
        start: DEVICE_RANGE_RESERVED,
        len: 0,
        fits: false,
    };
    if DEVICE_RANGE_RESERVED >= end {
        return best;
    }
    // The extents before the gap-free start hold no hole: skipping them
    // changes nothing (no candidate is seen there) and keeps the search
    // O(1) on a device filled from the front.
    let (extents, mut cursor) = dev.extents_after_gapless_start();
    let consider = |start: u64, len: u64, best: &mut Hole| -> bool {
        if len > best.len {
            best.start = start;
            best.len = len;
        }
        if len >= want {
            // The first hole that fits is also the largest seen so far:
            // every earlier one was shorter than `want`.
            debug_assert_eq!(best.start, start);
            best.fits = true;
            return true;
        }
        false
    };
    for &(offset, len) in extents {
        if offset > end {
            break;
        }
        if offset > cursor && consider(cursor, offset - cursor, &mut best) {
            return best;
        }
        cursor = cursor.max(offset + len);
    }
    if end > cursor {
        consider(cursor, end - cursor, &mut best);
    }
    debug_assert!(best.start + best.len <= end);
    best
}
