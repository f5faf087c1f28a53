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

/// The civil date `(year, month 1–12, day 1–31)` of a day counted from
/// 1970-01-01 (the proleptic Gregorian calendar), for the dates the
/// reports print.
pub fn civil_date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month as u32, day as u32)
}

/// Time to move `bytes` at `bytes_per_sec`, rounded up to whole nanoseconds.
///
/// Rounding up keeps a transfer from ever taking zero time.
#[inline]
pub fn transfer_ns(bytes: u64, bytes_per_sec: u64) -> Ns {
    debug_assert!(bytes_per_sec > 0);
    // IO sizes keep `bytes * 1e9` well inside u64; the wide path is for
    // the rest.
    match bytes.checked_mul(SEC) {
        Some(num) => num.div_ceil(bytes_per_sec),
        None => (u128::from(bytes) * u128::from(SEC)).div_ceil(u128::from(bytes_per_sec)) as Ns,
    }
}

/// A transfer rate that remembers its last answer: devices ask for the
/// same IO size over and over, and a division per transfer is measurable
/// on the hot path.
#[derive(Clone, Copy, Debug)]
pub struct Rate {
    bps: u64,
    bytes: u64,
    ns: Ns,
}

impl Rate {
    /// A rate of `bytes_per_sec` (> 0).
    pub fn new(bytes_per_sec: u64) -> Self {
        Self {
            bps: bytes_per_sec,
            bytes: 0,
            ns: 0,
        }
    }

    /// Bytes per second.
    pub fn bps(&self) -> u64 {
        self.bps
    }

    /// [`transfer_ns`] of `bytes` at this rate.
    #[inline]
    pub fn ns(&mut self, bytes: u64) -> Ns {
        if bytes != self.bytes {
            self.bytes = bytes;
            self.ns = transfer_ns(bytes, self.bps);
        }
        self.ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_rounds_up_and_handles_huge_sizes() {
        assert_eq!(transfer_ns(4096, 4096 * SEC), 1);
        assert_eq!(transfer_ns(1, 3), 333_333_334);
        assert_eq!(transfer_ns(4096, 550_000_000), 7448);
        let huge = 1u64 << 50;
        assert_eq!(transfer_ns(huge, 1 << 30), (1u64 << 20) * SEC);
    }

    #[test]
    fn rate_memo_matches_the_division() {
        let mut r = Rate::new(550_000_000);
        for b in [4096, 4096, 8192, 4096, 0, 1] {
            assert_eq!(r.ns(b), transfer_ns(b, 550_000_000));
        }
    }
}
