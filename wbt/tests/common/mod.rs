//! Helpers shared by the throttle's integration tests (each test file
//! uses a part of them).
#![allow(dead_code)]

use iolab_wbt::{DeviceParams, ManualClock, Options, Throttle, Variant};

/// A modern, non-rotational throttle on a manual clock starting at
/// `start_ns`. Queue depth 2 gives background limit 1, normal 2; depth 8
/// gives background 2, normal 4.
pub fn throttle_at(queue_depth: u32, start_ns: u64) -> Throttle<ManualClock> {
    Throttle::with_clock(
        DeviceParams {
            queue_depth,
            rotational: false,
            write_cache: false,
        },
        Variant::Modern,
        Options::default(),
        ManualClock::new(start_ns),
    )
}

/// Nothing in flight, nobody counted as waiting or queued, and no slot
/// released twice.
pub fn assert_quiescent(t: &Throttle<ManualClock>) {
    let s = t.snapshot();
    assert_eq!(s.wbt.inflight, [0, 0, 0], "a slot leaked");
    assert_eq!(s.wbt.waiting, [0, 0, 0], "a waiter count left");
    assert_eq!(s.queued, [0, 0, 0], "an entry left queued");
    assert_eq!(s.wbt.underflows, 0, "a slot released twice");
}
