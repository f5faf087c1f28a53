//! Simulated time: `u64` nanoseconds since the start of a run.
//!
//! No wall clock is ever read inside the simulator; time only moves when the
//! event loop pops the next event.

/// Nanoseconds since the start of a run.
pub type Ns = u64;

/// One microsecond in [`Ns`].
pub const US: Ns = 1_000;
/// One millisecond in [`Ns`].
pub const MS: Ns = 1_000_000;
/// One second in [`Ns`].
pub const SEC: Ns = 1_000_000_000;

/// Time to move `bytes` at `bytes_per_sec`, rounded up to whole nanoseconds.
///
/// Rounding up keeps a transfer from ever taking zero time.
#[inline]
pub fn transfer_ns(bytes: u64, bytes_per_sec: u64) -> Ns {
    debug_assert!(bytes_per_sec > 0);
    let num = u128::from(bytes) * u128::from(SEC);
    let den = u128::from(bytes_per_sec);
    num.div_ceil(den) as Ns
}
