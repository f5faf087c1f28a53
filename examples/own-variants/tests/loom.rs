//! This crate's threaded faces through iolab's loom models, and the
//! wrong twins, each caught. Run:
//!
//! ```text
//! RUSTFLAGS="--cfg iolab_loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target-loom \
//!   cargo test -p iolab-example-own-variants --release --test loom
//! ```
#![cfg(iolab_loom)]

use iolab_example_own_variants::{FifoGate, TicketPool, wrong};
use iolab_verification::failure_in_child;
use iolab_verification::flush::pool;
use iolab_verification::wbt::admission;

#[test]
fn pool_conforms() {
    pool::check(|| TicketPool::new(pool::SPACE));
}

#[test]
fn gate_conforms() {
    admission::check(|| FifoGate::new(admission::LIMIT as u32));
}

#[test]
fn lost_wakeup_is_caught() {
    let why = failure_in_child("lost_wakeup_is_caught", || {
        admission::check(|| wrong::LostWakeupGate::new(admission::LIMIT as u32));
    });
    eprintln!("lost wakeup: {why}");
    assert!(why.contains("deadlock"), "{why}");
}

#[test]
fn unfair_grant_is_caught() {
    let why = failure_in_child("unfair_grant_is_caught", || {
        pool::check(|| wrong::UnfairPool::new(pool::SPACE));
    });
    eprintln!("unfair grant: {why}");
    assert!(why.contains("not FIFO"), "{why}");
}
