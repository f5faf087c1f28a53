//! Shared pieces of the loom models of `iolab_wbt::Throttle`.
#![allow(dead_code)] // each test file uses a subset

use iolab_wbt::sync::{Arc, thread};
use iolab_wbt::{DeviceParams, ManualClock, Op, OpFlags, Options, Permit, Throttle, Variant};

pub type T = Throttle<ManualClock>;

/// A modern throttle at time 0 (every write is "close to other IO"; the
/// models use background writes, so the limit is `wb_background`):
/// queue depth 2 → limit 1, 8 → limit 2, 12 → limit 3.
pub fn throttle(queue_depth: u32) -> Arc<T> {
    Arc::new(unshared_throttle(queue_depth))
}

/// [`throttle`] not yet shared: for the conformance models, which share
/// it themselves.
pub fn unshared_throttle(queue_depth: u32) -> T {
    Throttle::with_clock(
        DeviceParams {
            queue_depth,
            rotational: false,
            write_cache: false,
        },
        Variant::Modern,
        Options::default(),
        ManualClock::new(0),
    )
}

/// A background write (class Bg, limit `wb_background`).
pub fn write(t: &T) -> Permit<'_, ManualClock> {
    t.acquire(Op::Write, OpFlags::BACKGROUND).expect("open")
}

/// A thread that takes one slot and gives it back.
pub fn writer(t: &Arc<T>) -> thread::JoinHandle<()> {
    let t = Arc::clone(t);
    thread::spawn(move || write(&t).complete())
}

/// Spin (yielding to the model checker) until `n` threads sleep in the
/// background queue.
pub fn wait_queued(t: &T, n: usize) {
    while t.snapshot().queued[0] < n {
        thread::yield_now();
    }
}

/// I1/I2 at the end of a model: no token leaked or lost, nobody left
/// queued or counted as waiting.
pub fn assert_quiescent(t: &T) {
    let s = t.snapshot();
    assert_eq!(s.wbt.inflight, [0, 0, 0], "token leaked (I1)");
    assert_eq!(s.wbt.waiting, [0, 0, 0], "waiter count off");
    assert_eq!(s.queued, [0, 0, 0], "waiter stranded (I2)");
    assert_eq!(s.wbt.underflows, 0, "token released twice (I1)");
}

/// Spin (yielding to the model checker) until the core counts `n`
/// background waiters (queued, or between the fast path and the queue).
pub fn wait_waiting(t: &T, n: u32) {
    while t.snapshot().wbt.waiting[0] < n {
        thread::yield_now();
    }
}

#[allow(unused_imports)] // each test file uses a subset
pub use iolab_verification::model;
