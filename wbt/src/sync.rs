//! The synchronisation types of the userspace face, from the one shim
//! every iolab face shares (`iolab_clock::sync`): `std`'s normally, loom's
//! under `RUSTFLAGS="--cfg iolab_loom"`, so the model checker sees every
//! lock, wait, notify and atomic access of [`Throttle`](crate::Throttle).
//! The loom models in `iolab-verification` take `Arc`, `thread` and
//! atomics from here too, so a model and the code it checks always agree
//! on which world they live in.

pub use iolab_clock::sync::*;

/// A number no earlier call in this process returned: the identity of an
/// object that threads key thread-local state by (an address could be
/// reused after a drop). Outside the model in both worlds: loom need not
/// explore it, only equality of ids matters.
pub fn next_instance_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}
