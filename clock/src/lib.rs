//! The time source every threaded face of iolab reads ([`Clock`]): the
//! system clock in production ([`SystemClock`]), a clock moved by hand
//! in tests and simulations ([`ManualClock`]). One crate, so that one
//! clock serves a throttle and a pool alike, and importing both crates
//! names each type once.
//!
//! ```
//! use iolab_clock::{Clock, ManualClock};
//!
//! let clock = ManualClock::new(5);
//! clock.advance(10);
//! assert_eq!(clock.now_ns(), 15);
//! ```
//!
//! The crate also holds [`sync`], the one shim every face takes its locks,
//! condition variables, atomics and threads from: under
//! `--cfg iolab_loom` (with the `loom` feature) they are loom's, the
//! manual clock's counter included, so a model sees every shared access.

use std::time::Instant;

#[cfg(all(iolab_loom, not(feature = "loom")))]
compile_error!(
    "`--cfg iolab_loom` needs iolab-clock's `loom` feature: add iolab-verification \
     (which turns it on) to your dev-dependencies, or turn it on yourself"
);

pub mod sync;
mod timer;
mod wakers;

pub use timer::{LATE_TICK_NS, Ticker, Timed, TimerWatch};
pub use wakers::WakerSet;

use sync::{AtomicU64, Ordering};

/// A source of time in nanoseconds from a fixed origin, non-decreasing.
pub trait Clock: Send + Sync {
    /// The current time in nanoseconds, never less than an earlier
    /// reading. A face may call it with its own lock held, so it must not
    /// call back into that face.
    fn now_ns(&self) -> u64;
}

/// The production clock: [`Instant`] since the clock was created.
#[derive(Clone, Copy, Debug)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// A clock whose origin is now.
    pub fn new() -> SystemClock {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> SystemClock {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// A clock moved by hand, for tests and simulations.
#[derive(Debug)]
pub struct ManualClock {
    ns: AtomicU64,
}

impl ManualClock {
    /// A clock reading `start_ns`.
    pub fn new(start_ns: u64) -> ManualClock {
        ManualClock {
            ns: AtomicU64::new(start_ns),
        }
    }

    /// Set the time. The clock never goes back: a value earlier than the
    /// current reading is ignored.
    pub fn set(&self, ns: u64) {
        self.ns.fetch_max(ns, Ordering::SeqCst);
    }

    /// Move the time forward by `ns` (saturating at `u64::MAX`).
    pub fn advance(&self, ns: u64) {
        let _ = self
            .ns
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |t| {
                Some(t.saturating_add(ns))
            });
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.ns.load(Ordering::SeqCst)
    }
}

impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    #[inline]
    fn now_ns(&self) -> u64 {
        (**self).now_ns()
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    #[inline]
    fn now_ns(&self) -> u64 {
        (**self).now_ns()
    }
}

#[cfg(all(test, not(iolab_loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_manual_clock_never_goes_back_nor_wraps() {
        let c = ManualClock::new(10);
        c.set(5);
        assert_eq!(c.now_ns(), 10);
        c.advance(u64::MAX);
        assert_eq!(c.now_ns(), u64::MAX);
        let shared = std::sync::Arc::new(ManualClock::new(7));
        assert_eq!(Clock::now_ns(&shared), 7);
    }
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
