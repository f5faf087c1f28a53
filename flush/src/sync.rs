//! The one place the userspace face gets its synchronisation types from.
//!
//! Normally these are `std`'s; when the crate is built with
//! `RUSTFLAGS="--cfg iolab_loom"` they are [loom](https://docs.rs/loom)'s,
//! so a model checker sees every lock, wait, notify and atomic access of
//! [`Pool`](crate::Pool). Every sync type of the face comes through here;
//! a loom model should take `Arc`, `thread` and atomics from here too, so
//! the model and the code it checks always agree on which world they
//! live in.

#[cfg(not(iolab_loom))]
pub use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(iolab_loom))]
pub use std::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(iolab_loom))]
pub use std::thread;

#[cfg(iolab_loom)]
pub use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
#[cfg(iolab_loom)]
pub use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(iolab_loom)]
pub use loom::thread;
