//! Statistics over independent runs (one per seed): a mean with its 95 %
//! confidence interval, and Welch's t-test of two such sets of runs.
//!
//! Seeds are independent draws of the same scenario, so the values one
//! metric takes over them are a sample of its run-to-run distribution.
//! The interval is Student's: `mean ± t(0.975, n − 1) · s / √n`, with `s`
//! the sample standard deviation (n − 1). The test is Welch's, the one
//! mmtests applies between kernels (`VMR::Stat::calc_welch_test`): the
//! degrees of freedom by Welch–Satterthwaite, rounded down, and the two
//! means differ at 95 % when `|t|` exceeds `t(0.975, df)`.

/// Two-sided 95 % critical values of Student's t for 1 to 30 degrees of
/// freedom (`t(0.975, df)`), to four decimals.
const T975: [f64; 30] = [
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010,
    2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739, 2.0687,
    2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
];

/// The standard normal's 97.5 % quantile.
const Z975: f64 = 1.959_963_984_540_054;

/// `t(0.975, df)`: the half-width, in standard errors, of a two-sided 95 %
/// interval on `df` degrees of freedom (`df ≥ 1`; 0 is treated as 1).
/// Tabulated to 30, then the Cornish–Fisher expansion in `1/df`, which is
/// within 1e-4 of the exact value from 31 up.
pub fn t975(df: u64) -> f64 {
    let df = df.max(1);
    if let Some(&t) = T975.get(df as usize - 1) {
        return t;
    }
    let v = df as f64;
    let z = Z975;
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    z + (z3 + z) / (4.0 * v)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v * v)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v * v * v)
}

/// Mean and sample variance (n − 1) of `xs`; the variance is NaN below two
/// values.
fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, f64::NAN);
    }
    let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    (mean, ss / (n - 1.0))
}

/// A mean over runs and the half-width of its 95 % confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeanCi {
    /// Number of values.
    pub n: usize,
    /// Their arithmetic mean (NaN when there are none).
    pub mean: f64,
    /// `t(0.975, n − 1) · s / √n`; NaN below two values.
    pub half_width: f64,
}

impl MeanCi {
    /// The interval of `xs`.
    pub fn of(xs: &[f64]) -> MeanCi {
        if xs.is_empty() {
            return MeanCi {
                n: 0,
                mean: f64::NAN,
                half_width: f64::NAN,
            };
        }
        let (mean, var) = mean_var(xs);
        let n = xs.len();
        MeanCi {
            n,
            mean,
            half_width: t975(n as u64 - 1) * (var / n as f64).sqrt(),
        }
    }

    /// `mean ± half` with `decimals` places, or the mean alone for one
    /// value.
    pub fn format(&self, decimals: usize) -> String {
        if self.half_width.is_nan() {
            format!("{:.decimals$}", self.mean)
        } else {
            format!("{:.decimals$} ± {:.decimals$}", self.mean, self.half_width)
        }
    }
}

/// Whether the means of `a` and `b` differ by Welch's t-test at 95 %. Each
/// needs two values or more (otherwise: false). When neither varies, they
/// differ exactly when their means do.
pub fn welch_differs(a: &[f64], b: &[f64]) -> bool {
    if a.len() < 2 || b.len() < 2 {
        return false;
    }
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let (sa, sb) = (va / a.len() as f64, vb / b.len() as f64);
    if sa + sb == 0.0 {
        return ma != mb;
    }
    let df =
        (sa + sb).powi(2) / (sa * sa / (a.len() as f64 - 1.0) + sb * sb / (b.len() as f64 - 1.0));
    let t = (ma - mb) / (sa + sb).sqrt();
    t.abs() > t975(df.floor() as u64)
}

/// Hedges' g of `a` against `b`: the difference of their means in units
/// of their pooled standard deviation, corrected for small samples
/// (`1 − 3 / (4(n_a + n_b) − 9)`). `None` below two values on either
/// side; infinite when neither varies and the means differ. By the usual
/// reading, |g| of 0.2 is small, 0.5 medium, 0.8 or more large.
pub fn hedges_g(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let pooled = (((na - 1.0) * va + (nb - 1.0) * vb) / (na + nb - 2.0)).sqrt();
    let d = ma - mb;
    if pooled == 0.0 {
        return Some(if d == 0.0 {
            0.0
        } else {
            d.signum() * f64::INFINITY
        });
    }
    Some(d / pooled * (1.0 - 3.0 / (4.0 * (na + nb) - 9.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1, 2, 3 against 3, 4, 5: means 2 apart, pooled sd 1, so d = −2 and
    /// g = −2 · (1 − 3/15) = −1.6.
    #[test]
    fn hedges_g_is_the_corrected_standardised_difference() {
        let g = hedges_g(&[1.0, 2.0, 3.0], &[3.0, 4.0, 5.0]).expect("two or more");
        assert!((g + 1.6).abs() < 1e-12, "{g}");
        assert_eq!(hedges_g(&[1.0], &[2.0, 3.0]), None);
        assert_eq!(hedges_g(&[2.0, 2.0], &[2.0, 2.0]), Some(0.0));
        assert_eq!(hedges_g(&[3.0, 3.0], &[2.0, 2.0]), Some(f64::INFINITY));
    }

    /// P(|T| < t) on `df` degrees of freedom, by integrating the density
    /// after x = √df·tan θ (it becomes cos^(df−1) θ), with Simpson's rule.
    fn central_mass(df: u64, t: f64) -> f64 {
        let f = |th: f64| th.cos().powi(df as i32 - 1);
        let simpson = |hi: f64| {
            let n = 20_000;
            let h = hi / n as f64;
            let mut s = f(0.0) + f(hi);
            for i in 1..n {
                s += f(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
            }
            s * h / 3.0
        };
        simpson((t / (df as f64).sqrt()).atan()) / simpson(std::f64::consts::FRAC_PI_2)
    }

    #[test]
    fn the_critical_values_leave_five_percent_in_the_tails() {
        for df in (1..=40).chain([50, 75, 100, 250, 1000]) {
            let mass = central_mass(df, t975(df));
            assert!((mass - 0.95).abs() < 5e-5, "df {df}: {mass}");
        }
        assert_eq!(t975(0), t975(1));
    }

    #[test]
    fn the_interval_of_known_values() {
        let ci = MeanCi::of(&[10.0, 12.0, 14.0]);
        assert_eq!(ci.n, 3);
        assert_eq!(ci.mean, 12.0);
        // s = 2, t(0.975, 2) = 4.3027: 4.3027 · 2 / √3.
        assert!((ci.half_width - 4.3027 * 2.0 / 3f64.sqrt()).abs() < 1e-9);
        assert_eq!(ci.format(1), "12.0 ± 5.0");
        let one = MeanCi::of(&[7.5]);
        assert!(one.half_width.is_nan());
        assert_eq!(one.format(2), "7.50");
        assert!(MeanCi::of(&[]).mean.is_nan());
        assert_eq!(MeanCi::of(&[3.0, 3.0]).half_width, 0.0);
    }

    #[test]
    fn welch_separates_distinct_means_and_not_overlapping_ones() {
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        assert!(welch_differs(&a, &[110.0, 111.0, 109.0, 110.5, 109.5]));
        assert!(!welch_differs(&a, &[100.2, 101.5, 98.9, 100.1, 99.0]));
        // One value on a side: no test.
        assert!(!welch_differs(&a, &[200.0]));
        // Neither varies.
        assert!(welch_differs(&[1.0, 1.0], &[2.0, 2.0]));
        assert!(!welch_differs(&[1.0, 1.0], &[1.0, 1.0]));
        // Welch's df is 3.68 here, floored to 3 as mmtests does: t = 3.0
        // exceeds t(0.975, 4) = 2.776 but not t(0.975, 3) = 3.182.
        let b = [0.0, 1.0, 2.0];
        let c = [2.05, 3.05, 4.05, 3.05, 2.05, 4.05];
        let (mb, vb) = mean_var(&b);
        let (mc, vc) = mean_var(&c);
        let t = (mc - mb) / (vb / 3.0 + vc / 6.0).sqrt();
        assert!(t > t975(4) && t < t975(3), "t = {t}");
        assert!(!welch_differs(&b, &c));
        assert!(welch_differs(&b, &c.map(|x| x + 0.5)));
    }
}
