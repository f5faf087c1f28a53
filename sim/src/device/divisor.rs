//! Division by a constant fixed at construction.
//!
//! The SSD model maps every command onto stripes, units and channels with
//! `/` and `%` by geometry constants. Real geometries are powers of two, and
//! a hardware 64-bit division costs tens of cycles, several per IO on the
//! read path; a shift and a mask cost one each. Other divisors fall back to
//! the plain operators, so any configured geometry still works.

/// A divisor `d > 0` with a shift/mask form when `d` is a power of two.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Divisor {
    d: u64,
    /// `log2(d)` when `d` is a power of two.
    shift: Option<u32>,
}

impl Divisor {
    pub(crate) fn new(d: u64) -> Divisor {
        assert!(d > 0, "a divisor of zero is a configuration bug");
        Divisor {
            d,
            shift: d.is_power_of_two().then(|| d.trailing_zeros()),
        }
    }

    /// The divisor itself.
    #[inline]
    pub(crate) fn get(self) -> u64 {
        self.d
    }

    /// `x / d`.
    #[inline]
    pub(crate) fn div(self, x: u64) -> u64 {
        match self.shift {
            Some(s) => x >> s,
            None => x / self.d,
        }
    }

    /// `x % d`.
    #[inline]
    pub(crate) fn rem(self, x: u64) -> u64 {
        match self.shift {
            Some(_) => x & (self.d - 1),
            None => x % self.d,
        }
    }

    /// `x.div_ceil(d)`.
    #[inline]
    pub(crate) fn div_ceil(self, x: u64) -> u64 {
        match self.shift {
            Some(s) => (x >> s) + u64::from(x & (self.d - 1) != 0),
            None => x.div_ceil(self.d),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Divisor;

    #[test]
    fn matches_the_operators_for_powers_of_two_and_others() {
        for d in [1u64, 2, 3, 7, 8, 16, 24, 64, 16384, 1 << 40, u64::MAX] {
            let v = Divisor::new(d);
            assert_eq!(v.get(), d);
            for x in [
                0u64,
                1,
                2,
                5,
                15,
                16,
                17,
                16383,
                16384,
                16385,
                1 << 41,
                u64::MAX,
            ] {
                assert_eq!(v.div(x), x / d, "{x} / {d}");
                assert_eq!(v.rem(x), x % d, "{x} % {d}");
                assert_eq!(v.div_ceil(x), x.div_ceil(d), "{x} div_ceil {d}");
            }
        }
    }
}
