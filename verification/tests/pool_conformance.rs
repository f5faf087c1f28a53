//! The reservation pool's loom models on our own `Pool` (every model
//! passes). The historic bugs F1 and F2 put back into it are caught by
//! these models too (`flush_mutants.rs`); the wrong twins a user might
//! write (a lost wakeup, an unfair grant, a close that strands a waiter,
//! a cancelled waiter that leaks) are in the example crate,
//! `examples/own-variants`.
//!
//! ```text
//! RUSTFLAGS="--cfg iolab_loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target-loom \
//!   cargo test -p iolab-verification --release --test pool_conformance
//! ```
#![cfg(iolab_loom)]

mod flush_common;

use iolab_verification::flush::pool;

#[test]
fn our_pool_passes_every_model() {
    pool::check(flush_common::unshared_pool);
}
