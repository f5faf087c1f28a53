//! Seeded spread of a device's service times: each service takes its
//! nominal time times a log-normal factor with median 1 and spread σ
//! (`service_sigma`), drawn from the device's own stream, so a run stays a
//! function of `(scenario, seed)`. The factors are 1024 quantiles of the
//! distribution, computed once: a draw is one uniform index, and the
//! product stays in integers. A spread of a channel's speed
//! ([`Jitter::mean_speed_one`]) is scaled so that the speeds have mean 1
//! instead, so that it widens transfers' latencies without moving the
//! bandwidth they were fitted to.

use crate::rng::{Stream, splitmix64};
use crate::time::Ns;

/// Quantiles in the table.
const N: usize = 1024;
/// Fixed-point scale of a factor.
const ONE: u64 = 1 << 16;

/// The spread of one device.
#[derive(Debug, Clone)]
pub(crate) struct Jitter {
    stream: Stream,
    /// `exp(σ·z_i)` in units of 1/65536, `z_i` the standard normal
    /// quantile of `(i + 0.5) / N`.
    factors: Box<[u64]>,
}

/// Standard normal quantiles of `(i + 0.5) / n`, `i` in `0..n`: the
/// cumulative distribution integrated with Simpson's rule on a fine grid
/// and inverted by linear interpolation.
fn normal_quantiles(n: usize) -> Vec<f64> {
    const LO: f64 = -8.0;
    const STEPS: usize = 32_000;
    let h = 16.0 / STEPS as f64;
    let pdf = |x: f64| (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
    // cdf[k] at x = LO + k·h, by Simpson on each step's halves.
    let mut cdf = Vec::with_capacity(STEPS + 1);
    let mut acc = 0.0;
    cdf.push(0.0);
    for k in 0..STEPS {
        let a = LO + k as f64 * h;
        acc += h / 6.0 * (pdf(a) + 4.0 * pdf(a + h / 2.0) + pdf(a + h));
        cdf.push(acc);
    }
    let mut out = Vec::with_capacity(n);
    let mut k = 0;
    for i in 0..n {
        let p = (i as f64 + 0.5) / n as f64;
        while k + 1 < STEPS && cdf[k + 1] < p {
            k += 1;
        }
        let (c0, c1) = (cdf[k], cdf[k + 1]);
        let frac = if c1 > c0 { (p - c0) / (c1 - c0) } else { 0.0 };
        out.push(LO + (k as f64 + frac) * h);
    }
    out
}

impl Jitter {
    /// The spread for `sigma`, `None` when it is 0 (exact service times).
    pub(crate) fn new(sigma: f64, stream: Stream) -> Option<Jitter> {
        if sigma <= 0.0 {
            return None;
        }
        let factors = normal_quantiles(N)
            .into_iter()
            .map(|z| ((sigma * z).exp() * ONE as f64).round() as u64)
            .collect();
        Some(Jitter { stream, factors })
    }

    /// The spread for `sigma` of a speed rather than a time: the factors
    /// scale times, and their reciprocals (the speeds) have mean 1, so a
    /// channel whose factor is redrawn at fixed intervals keeps its
    /// nominal bandwidth over time. `None` when `sigma` is 0.
    pub(crate) fn mean_speed_one(sigma: f64, stream: Stream) -> Option<Jitter> {
        let mut j = Jitter::new(sigma, stream)?;
        let speed = j
            .factors
            .iter()
            .map(|&f| ONE as f64 / f as f64)
            .sum::<f64>()
            / N as f64;
        for f in j.factors.iter_mut() {
            *f = ((*f as f64) * speed).round() as u64;
        }
        Some(j)
    }

    /// `t` times the next factor.
    #[inline]
    pub(crate) fn scale(&mut self, t: Ns) -> Ns {
        let f = self.factor();
        times(t, f)
    }

    /// The next factor, in units of 1/65536.
    #[inline]
    pub(crate) fn factor(&mut self) -> u64 {
        self.factors[self.stream.below(N as u64) as usize]
    }

    /// The factor of `key` (its hash picks the quantile; the table's size
    /// is a power of two, so each is equally likely): the same key gives
    /// the same factor whenever it is asked, whatever was drawn before.
    #[inline]
    pub(crate) fn factor_of(&self, key: u64) -> u64 {
        self.factors[(splitmix64(key) % N as u64) as usize]
    }

    /// A key of this spread's own, from its stream, for [`Jitter::factor_of`].
    pub(crate) fn key(&mut self) -> u64 {
        self.stream.next_u64()
    }
}

/// One standard normal draw from `stream`: the quantile of a uniform
/// index, as a spread draws its factors.
pub(crate) fn normal_draw(stream: &mut Stream) -> f64 {
    let i = stream.below(N as u64) as usize;
    normal_quantiles(N)[i]
}

/// `t` times a factor of [`Jitter::factor`].
#[inline]
pub(crate) fn times(t: Ns, factor: u64) -> Ns {
    (u128::from(t) * u128::from(factor) / u128::from(ONE)) as Ns
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Entity;

    #[test]
    fn quantiles_are_the_standard_normals() {
        let q = normal_quantiles(1000);
        // (i + 0.5)/1000 for i = 499, 974, 989: p = 0.4995, 0.9745, 0.9895.
        assert!(q[499].abs() < 0.002, "{}", q[499]);
        assert!((q[974] - 1.9514).abs() < 0.002, "{}", q[974]);
        assert!((q[989] - 2.3087).abs() < 0.003, "{}", q[989]);
        assert!((q[0] + q[999]).abs() < 1e-6, "symmetric");
    }

    #[test]
    fn the_spread_keeps_the_median_and_widens_the_tail_as_sigma_says() {
        let mut j = Jitter::new(0.5, Stream::new(7, Entity::Device(0))).expect("spread");
        let mut v: Vec<Ns> = (0..20_000).map(|_| j.scale(100_000)).collect();
        v.sort_unstable();
        let p50 = v[10_000] as f64;
        let p99 = v[19_800] as f64;
        assert!((p50 / 100_000.0 - 1.0).abs() < 0.03, "median {p50}");
        // exp(2.326 · 0.5) = 3.20
        assert!((p99 / p50 - 3.20).abs() < 0.25, "p99/p50 {}", p99 / p50);
        assert!(Jitter::new(0.0, Stream::new(7, Entity::Device(0))).is_none());
    }

    #[test]
    fn a_speed_spread_keeps_the_mean_speed() {
        let mut j = Jitter::mean_speed_one(0.8, Stream::new(3, Entity::Device(0))).expect("spread");
        let f: Vec<u64> = (0..40_000).map(|_| j.factor()).collect();
        let speed = f.iter().map(|&f| ONE as f64 / f as f64).sum::<f64>() / f.len() as f64;
        assert!((speed - 1.0).abs() < 0.03, "mean speed {speed}");
        // A log-normal's mean is exp(σ²/2) times its median: the median
        // time factor is exp(0.32) = 1.377 once the speeds' mean is 1.
        let mut f = f;
        f.sort_unstable();
        let p50 = f[20_000] as f64 / ONE as f64;
        assert!((p50 - 1.377).abs() < 0.04, "median {p50}");
    }

    #[test]
    fn a_normal_draw_is_standard() {
        let mut s = Stream::new(11, Entity::Device(0));
        let z: Vec<f64> = (0..4000).map(|_| normal_draw(&mut s)).collect();
        let (mean, sd) = (
            crate::stats::amean(&z),
            crate::stats::stddev(&z, crate::stats::StddevForm::Sample),
        );
        assert!(mean.abs() < 0.05, "mean {mean}");
        assert!((sd - 1.0).abs() < 0.05, "sd {sd}");
    }

    #[test]
    fn draws_follow_the_seed() {
        let draw = |seed| {
            let mut j = Jitter::new(0.3, Stream::new(seed, Entity::Device(0))).expect("spread");
            (0..8).map(|_| j.scale(1000)).collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
    }
}
