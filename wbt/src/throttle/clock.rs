//! Time sources for [`Throttle`](crate::Throttle): the system clock in
//! production, a clock moved by hand in tests.

use std::time::Instant;

use crate::sync::{AtomicU64, Ordering};

/// A source of time in nanoseconds from a fixed origin, non-decreasing.
pub trait Clock: Send + Sync {
    /// The current time in nanoseconds, never less than an earlier
    /// reading. (The throttle's locked path clamps a clock that breaks
    /// this; its lockless path trusts it.) It may be called with the
    /// throttle's lock held, so it must not call into the throttle.
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

    /// Move the time forward by `ns`.
    pub fn advance(&self, ns: u64) {
        self.ns.fetch_add(ns, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.ns.load(Ordering::SeqCst)
    }
}
