//! The admission state a [`Throttle`](crate::Throttle) publishes for its
//! lockless fast path: the core's [`AdmissionView`] as of the throttle's
//! time, written under the lock when it changes, read without it.
//!
//! The fields are written with relaxed stores between two bumps of the
//! epoch in every class's counter word (`Gates::bump_epoch`, a sequence
//! lock); the fast path reads the counter word (acquire) before the board,
//! gives way while a publication is under way, and a publication between
//! its read and its swap makes the swap fail. So an admission never uses
//! limits older than the last publication before it, nor a word and an
//! expiry from two publications.
//! The dirty-throttle and close-IO signals are published as bits with the
//! instant they expire; past it the fast path defers to the locked path,
//! which publishes them afresh.

use crate::sync::{AtomicU64, Ordering};
use crate::{AdmissionView, Limits};

/// Depths above this take the locked path (they do not fit the packing).
const DEPTH_MAX: u32 = (1 << 20) - 1;
const FAST: u64 = 1 << 60;
const ARMED: u64 = 1 << 61;
const DIRTY: u64 = 1 << 62;
const CLOSE: u64 = 1 << 63;

/// The board's contents: one word with the depths and flags, and the
/// instant the word's time-dependent bits (`DIRTY`, `CLOSE`) stop being
/// true to the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Notice {
    word: u64,
    until: u64,
}

impl Notice {
    /// The core's view as the fast path needs it at the throttle's time
    /// `now`.
    pub(crate) fn new(view: &AdmissionView, now: u64) -> Notice {
        let l = view.limits;
        let fits = l.max_depth <= DEPTH_MAX && l.normal <= DEPTH_MAX && l.background <= DEPTH_MAX;
        let mut word = u64::from(l.max_depth & DEPTH_MAX)
            | (u64::from(l.normal & DEPTH_MAX) << 20)
            | (u64::from(l.background & DEPTH_MAX) << 40);
        let mut until = u64::MAX;
        for (bit, expiry) in [(DIRTY, view.dirty_until), (CLOSE, view.close_until)] {
            if now < expiry {
                word |= bit;
                until = until.min(expiry);
            }
        }
        if view.enabled && view.limited && fits {
            word |= FAST;
        }
        if view.window_armed {
            word |= ARMED;
        }
        Notice { word, until }
    }

    /// The same notice with the fast path off: every admission takes the
    /// locked path (a closed throttle).
    pub(crate) fn locked_only(self) -> Notice {
        Notice {
            word: self.word & !FAST,
            ..self
        }
    }

    /// Whether the word (not only its expiry) differs: a change the fast
    /// path must not miss.
    pub(crate) fn same_word(&self, other: &Notice) -> bool {
        self.word == other.word
    }
}

#[derive(Debug)]
pub(crate) struct Board {
    /// The depths (20 bits each, max | normal | background) and the
    /// `FAST`, `ARMED`, `DIRTY` and `CLOSE` bits.
    word: AtomicU64,
    /// When `DIRTY` or `CLOSE` may stop holding.
    until: AtomicU64,
}

impl Board {
    /// A board that sends everyone to the locked path until the first
    /// publication.
    pub(crate) fn new() -> Board {
        Board {
            word: AtomicU64::new(0),
            until: AtomicU64::new(0),
        }
    }

    /// Store a notice (caller holds the lock, so stores never interleave,
    /// and brackets a new word with epoch bumps).
    pub(crate) fn store(&self, notice: &Notice) {
        self.until.store(notice.until, Ordering::Relaxed);
        self.word.store(notice.word, Ordering::Relaxed);
    }

    /// A monitoring window runs.
    #[inline]
    pub(crate) fn armed(&self) -> bool {
        self.word.load(Ordering::Relaxed) & ARMED != 0
    }

    /// The limit for a tracked bio at `now`, `decide`d from the published
    /// depths and signals, or `None` if the fast path may not decide (WBT
    /// off or unlimited, depths too large, or the time-dependent bits have
    /// expired at `now`).
    #[inline]
    pub(crate) fn limit(
        &self,
        now: u64,
        decide: impl Fn(Limits, bool, bool) -> u32,
    ) -> Option<u32> {
        let w = self.word.load(Ordering::Relaxed);
        if w & FAST == 0 || now >= self.until.load(Ordering::Relaxed) {
            return None;
        }
        let depth = |shift: u32| ((w >> shift) as u32) & DEPTH_MAX;
        let limits = Limits {
            max_depth: depth(0),
            normal: depth(20),
            background: depth(40),
        };
        Some(decide(limits, w & DIRTY != 0, w & CLOSE != 0))
    }
}
