//! The one place every threaded face of iolab (the throttle, the pool, the
//! iocost controller) takes its synchronisation types from.
//!
//! Normally these are `std`'s. Built with `RUSTFLAGS="--cfg iolab_loom"`
//! (and this crate's `loom` feature, which `iolab-verification` turns on)
//! they are [loom](https://docs.rs/loom)'s, so a model checker sees every
//! lock, wait, notify and atomic access of every face at once. A loom
//! model, ours or a user's, takes `Arc`, `thread` and atomics from here
//! too, so the model and the code it checks always live in the same world.
//!
//! The `loom` feature only makes the dependency available under the cfg;
//! without `--cfg iolab_loom` it changes nothing, and a crate that never
//! turns it on never has loom in its lockfile.

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
pub use loom::{model, thread, thread_local};
