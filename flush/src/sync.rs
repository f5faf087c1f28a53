//! The synchronisation types of the userspace face, from the one shim
//! every iolab face shares (`iolab_clock::sync`): `std`'s normally, loom's
//! under `RUSTFLAGS="--cfg iolab_loom"`, so a model checker sees every
//! lock, wait, notify and atomic access of [`Pool`](crate::Pool). A loom
//! model takes `Arc`, `thread` and atomics from here too, so the model and
//! the code it checks always agree on which world they live in.

pub use iolab_clock::sync::*;
