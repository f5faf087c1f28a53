//! The throttle face's loom models on our own `Throttle` (every model
//! passes). The wrong twins a user might write (a lost wakeup, an unfair
//! hand-off) are in the example crate, `examples/own-variants`.
//!
//! ```text
//! RUSTFLAGS="--cfg iolab_loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target-loom \
//!   cargo test -p iolab-verification --release --test admission_conformance
//! ```
#![cfg(iolab_loom)]

mod common;

use iolab_verification::wbt::admission;

#[test]
fn our_throttle_passes_every_model() {
    // Queue depth 2 at time 0: background writes one at a time.
    admission::check(|| common::unshared_throttle(2));
}
