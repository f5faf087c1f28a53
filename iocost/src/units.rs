//! Fixed-point helpers: round-up divisions, the conversions between
//! absolute (device) cost and a group's own vtime, and wrapping vtime
//! comparisons.
//!
//! vtime is a free-running `u64` that the kernel lets wrap and compares with
//! `time_after64()`; the helpers here do the same so that the arithmetic is
//! the kernel's. Intermediate products use `u128` so that no input can
//! overflow and panic (the kernel would silently wrap; for every realistic
//! magnitude the results are equal).

use crate::consts::WEIGHT_ONE;

/// `ceil(a / b)` in 128 bits, saturated to `u64`; `b == 0` yields `u64::MAX`
/// instead of a panic (callers never pass 0, see their invariants).
#[inline]
pub(crate) fn div_ceil(a: u128, b: u128) -> u64 {
    if b == 0 {
        return u64::MAX;
    }
    u64::try_from(a.div_ceil(b)).unwrap_or(u64::MAX)
}

/// `a / b` truncated, in 128 bits, saturated to `u64`.
#[inline]
pub(crate) fn div_floor(a: u128, b: u128) -> u64 {
    if b == 0 {
        return u64::MAX;
    }
    u64::try_from(a / b).unwrap_or(u64::MAX)
}

/// Device cost to the cost in a group's vtime at hierarchical weight `hw`:
/// `ceil(abs × ONE / hw)` (`abs_cost_to_cost`). A group holding a quarter of
/// the device pays four times the device cost in its own vtime.
#[inline]
pub fn abs_cost_to_cost(abs_cost: u64, hw: u32) -> u64 {
    debug_assert!(hw >= 1);
    div_ceil(
        u128::from(abs_cost) * u128::from(WEIGHT_ONE),
        u128::from(hw.max(1)),
    )
}

/// The inverse, `ceil(cost × hw / ONE)` (`cost_to_abs_cost`).
#[inline]
pub fn cost_to_abs_cost(cost: u64, hw: u32) -> u64 {
    div_ceil(u128::from(cost) * u128::from(hw), u128::from(WEIGHT_ONE))
}

/// Signed distance `a − b` of two wrapping vtimes.
#[inline]
pub(crate) fn vdiff(a: u64, b: u64) -> i64 {
    a.wrapping_sub(b) as i64
}

/// `time_after64(a, b)`: `a` is later than `b`.
#[inline]
pub(crate) fn after(a: u64, b: u64) -> bool {
    vdiff(a, b) > 0
}

/// `time_before64(a, b)`: `a` is earlier than `b`.
#[inline]
pub(crate) fn before(a: u64, b: u64) -> bool {
    vdiff(a, b) < 0
}
