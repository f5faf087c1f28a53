//! The one place the userspace face gets its synchronisation types from.
//!
//! Normally these are `std`'s; when the crate is built with
//! `RUSTFLAGS="--cfg iolab_loom"` they are [loom](https://docs.rs/loom)'s,
//! so the model checker sees every lock, wait, notify and atomic access of
//! [`Throttle`](crate::Throttle). Every sync type of the face comes through
//! here; the loom models in `iolab-verification` use it too (for `Arc`,
//! `thread` and atomics), so a model and the code it checks always agree on
//! which world they live in.

#[cfg(not(iolab_loom))]
pub use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(iolab_loom))]
pub use std::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(iolab_loom))]
pub use std::{thread, thread_local};

#[cfg(iolab_loom)]
pub use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
#[cfg(iolab_loom)]
pub use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(iolab_loom)]
pub use loom::{thread, thread_local};

/// A number no earlier call in this process returned: the identity of an
/// object that threads key thread-local state by (an address could be
/// reused after a drop). Outside the model in both worlds: loom need not
/// explore it, only equality of ids matters.
pub fn next_instance_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}
