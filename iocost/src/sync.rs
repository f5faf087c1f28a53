//! The synchronisation types of the threaded face, from the one shim every
//! iolab face shares (`iolab_clock::sync`): `std`'s normally, loom's under
//! `RUSTFLAGS="--cfg iolab_loom"`, so a model checker sees every lock,
//! wait, notify and atomic access of [`Controller`](crate::Controller).

pub use iolab_clock::sync::*;
