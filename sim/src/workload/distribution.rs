//! Non-uniform random offsets (fio's `random_distribution=`), one state per
//! file: the counterparts of fio's `zipf_next`, `pareto_next` and
//! `gauss_next` (`lib/zipf.c`, `lib/gauss.c`) and of its zoned draws
//! (`__get_next_rand_offset_zoned` and `_zoned_abs` in `io_u.c`).
//!
//! Each draw gives a block index in `0..ranges`, the file's size in units
//! of the job's smallest block size, rounded up. Zipf, pareto and normal
//! draw a rank and scatter it over the file with fio's multiplicative
//! hash, so the hot blocks are spread, not packed at the start; zoned
//! draws pick a zone by its access share and a block uniformly inside it.
//! None of them keeps a random map, as fio turns it off for them.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::Dir;
use crate::fio::{RandomDistribution, Zone};
use crate::rng::Stream;

/// fio's cap on the terms of the zipf normalisation sum (`ZIPF_MAX_GEN`):
/// past it the sum is that of the first ten million ranks.
const ZIPF_MAX_TERMS: u64 = 10_000_000;

/// The golden-ratio multiplier of fio's `__hash_u64`.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

/// Zipf's normalisation sums, shared by the files of a run that have the
/// same range count and exponent (each costs up to ten million powers).
#[derive(Debug, Default)]
pub struct ZetaCache(BTreeMap<(u64, u64), f64>);

impl ZetaCache {
    /// `sum over i in 1..=min(n, 10M) of i^-theta`.
    fn zetan(&mut self, n: u64, theta: f64) -> f64 {
        *self.0.entry((n, theta.to_bits())).or_insert_with(|| {
            (1..=n.min(ZIPF_MAX_TERMS))
                .map(|i| (1.0 / i as f64).powf(theta))
                .sum()
        })
    }
}

/// Each access percent's zone, `(start, end)` (index `v - 1` for `v` in
/// 1..=100).
type ZoneTable = [(u64, u64); 100];

/// A zoned distribution's lookup, per direction: for each access percent
/// `v` in 1..=100 (index `v - 1`), the zone's start and end, as percents
/// of the file or bytes (fio's `zone_split_index`). Shared by a job's files.
#[derive(Debug)]
pub struct ZoneIndex {
    abs: bool,
    dirs: [Option<Box<ZoneTable>>; 3],
}

impl ZoneIndex {
    /// The lookup of `zones` per direction (a direction without zones draws
    /// uniformly, as fio's does).
    pub fn new(zones: &[Vec<Zone>; 3], abs: bool) -> Self {
        let dirs = zones.clone().map(|list| {
            if list.is_empty() {
                return None;
            }
            let mut table = Box::new([(0u64, 0u64); 100]);
            let (mut access, mut start) = (0usize, 0u64);
            for z in &list {
                let end = start.saturating_add(z.size);
                for slot in table.iter_mut().skip(access).take(z.access as usize) {
                    *slot = (start, end);
                }
                access += z.access as usize;
                start = end;
            }
            Some(table)
        });
        ZoneIndex { abs, dirs }
    }
}

/// One file's draw of non-uniform random blocks.
#[derive(Clone, Debug)]
pub enum Skew {
    /// fio's `zipf_next`.
    Zipf {
        /// Ranges in the file.
        n: u64,
        /// Exponent.
        theta: f64,
        /// Normalisation sum.
        zetan: f64,
        /// `1 / (1 - theta)`.
        alpha: f64,
        /// fio's `eta`.
        eta: f64,
        /// Where rank 1 lands.
        off: u64,
    },
    /// fio's `pareto_next`.
    Pareto {
        /// Ranges in the file.
        n: u64,
        /// `ln(h) / ln(1 - h)`.
        pow: f64,
        /// Where rank 0 lands.
        off: u64,
    },
    /// fio's `gauss_next`.
    Normal {
        /// Ranges in the file.
        n: u64,
        /// Deviation in ranges (0: none).
        stddev: u64,
        /// Shift of the mean.
        off: u64,
    },
    /// A zone by its access share, then a uniform block in it.
    Zoned {
        /// Blocks of the job's smallest size in the file.
        blocks: u64,
        /// The job's smallest block size (zoned_abs sizes are bytes).
        unit: u64,
        /// The zones.
        index: Arc<ZoneIndex>,
    },
}

impl Skew {
    /// The draw of `dist` over a file of `size` bytes in units of `unit`,
    /// or `None` for uniform offsets. `key` seeds where an uncentred
    /// distribution's peak lands, per file.
    pub fn new(
        dist: &RandomDistribution,
        zones: Option<&Arc<ZoneIndex>>,
        size: u64,
        unit: u64,
        key: u64,
        zeta: &mut ZetaCache,
    ) -> Option<Self> {
        let unit = unit.max(1);
        let n = size.div_ceil(unit).max(1);
        let place = |center: Option<f64>| match center {
            Some(c) => ((n as f64 * c) as u64) % n,
            None => Stream::from_seed(key).below(n),
        };
        Some(match dist {
            RandomDistribution::Uniform => return None,
            &RandomDistribution::Zipf { theta, center } => {
                let zetan = zeta.zetan(n, theta);
                let zeta2 = 1.0 + 0.5f64.powf(theta);
                Skew::Zipf {
                    n,
                    theta,
                    zetan,
                    alpha: 1.0 / (1.0 - theta),
                    eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
                    off: place(center),
                }
            }
            &RandomDistribution::Pareto { h, center } => Skew::Pareto {
                n,
                pow: h.ln() / (1.0 - h).ln(),
                off: place(center),
            },
            &RandomDistribution::Normal { dev, center } => Skew::Normal {
                n,
                stddev: if dev > 0.0 {
                    ((n as f64 * dev / 100.0).ceil() as u64).min(n / 2)
                } else {
                    0
                },
                // fio moves the mean by (center - 0.5) of the file.
                off: center.map_or(0, |c| {
                    ((n as f64 * (c - 0.5)).floor() as i64).rem_euclid(n as i64) as u64
                }),
            },
            RandomDistribution::Zoned(_) | RandomDistribution::ZonedAbs(_) => Skew::Zoned {
                blocks: (size / unit).max(1),
                unit,
                index: Arc::clone(zones?),
            },
        })
    }

    /// The next block for an IO in direction `d`.
    pub fn next_block(&self, rng: &mut Stream, d: Dir) -> u64 {
        match *self {
            Skew::Zipf {
                n,
                theta,
                zetan,
                alpha,
                eta,
                off,
            } => {
                let u = unit_interval(rng);
                let z = u * zetan;
                let rank = if z < 1.0 {
                    0
                } else if z < 1.0 + 0.5f64.powf(theta) {
                    1
                } else {
                    // A float to integer cast saturates (NaN gives 0).
                    (n as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64
                };
                scatter(rank, off, n)
            }
            Skew::Pareto { n, pow, off } => {
                let rank = ((n - 1) as f64 * unit_interval(rng).powf(pow)) as u64;
                scatter(rank, off, n)
            }
            Skew::Normal { n, stddev, off } => {
                // The mean of twelve uniform draws over 0..=n, rounded up.
                let sum: u64 = (0..12).map(|_| rng.below(n + 1)).sum();
                let mut at = sum.div_ceil(12);
                if stddev > 0 {
                    let mut dev = rng.below(stddev) as i64 - (stddev / 2) as i64;
                    // fio's loop halves the deviation until the draw is in
                    // the file; at the mean's own edge (n) it would halve 0
                    // for ever, so it stops there and lets the wrap place it.
                    while dev != 0 && (at as i64 + dev < 0 || at as i64 + dev >= n as i64) {
                        dev /= 2;
                    }
                    at = (at as i64 + dev) as u64;
                }
                scatter(at, off, n)
            }
            Skew::Zoned {
                blocks,
                unit,
                ref index,
            } => {
                let Some(table) = &index.dirs[d as usize] else {
                    return rng.below(blocks);
                };
                let (start, end) = table[rng.below(100) as usize];
                let (first, len) = if index.abs {
                    (start / unit, end / unit - start / unit)
                } else {
                    (start * blocks / 100, blocks * (end - start) / 100)
                };
                first + if len > 0 { rng.below(len) } else { 0 }
            }
        }
    }
}

/// A uniform draw in `[0, 1]` with 32 bits, as fio's `__rand / FRAND32_MAX`.
fn unit_interval(rng: &mut Stream) -> f64 {
    (rng.next_u64() >> 32) as f64 / f64::from(u32::MAX)
}

/// A rank spread over the file by fio's hash, then moved by `off`.
fn scatter(rank: u64, off: u64, n: u64) -> u64 {
    rank.wrapping_mul(GOLDEN_RATIO_64).wrapping_add(off) % n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Entity;

    fn draws(dist: &RandomDistribution, n: u64, count: usize) -> Vec<u64> {
        let zones = match dist {
            RandomDistribution::Zoned(z) => Some(Arc::new(ZoneIndex::new(z, false))),
            RandomDistribution::ZonedAbs(z) => Some(Arc::new(ZoneIndex::new(z, true))),
            _ => None,
        };
        let skew = Skew::new(
            dist,
            zones.as_ref(),
            n * 4096,
            4096,
            7,
            &mut ZetaCache::default(),
        )
        .expect("a skew");
        let mut rng = Stream::new(3, Entity::Job(0));
        (0..count)
            .map(|_| skew.next_block(&mut rng, Dir::Read))
            .collect()
    }

    /// The share of all draws that the `k` most drawn blocks took.
    fn top_share(blocks: &[u64], k: usize) -> f64 {
        let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
        for &b in blocks {
            *counts.entry(b).or_default() += 1;
        }
        let mut c: Vec<u64> = counts.into_values().collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        c.iter().take(k).sum::<u64>() as f64 / blocks.len() as f64
    }

    #[test]
    fn zipf_gives_its_top_ranks_their_share() {
        let n = 100_000u64;
        let theta = 1.2;
        let got = draws(
            &RandomDistribution::Zipf {
                theta,
                center: None,
            },
            n,
            400_000,
        );
        assert!(got.iter().all(|&b| b < n));
        // Zipf's law: the top k of n ranks take H(k) / H(n) of the draws.
        let h = |k: u64| (1..=k).map(|i| (i as f64).powf(-theta)).sum::<f64>();
        for k in [1u64, 10, 100, 1000] {
            let want = h(k) / h(n);
            let share = top_share(&got, k as usize);
            assert!(
                (share - want).abs() < 0.02 + want * 0.05,
                "top {k}: {share} against {want}"
            );
        }
        // The hot blocks are scattered, not the first ones of the file.
        let low = got.iter().filter(|&&b| b < n / 10).count() as f64 / got.len() as f64;
        assert!(low < 0.3, "{low}");
    }

    #[test]
    fn pareto_concentrates_as_its_parameter_says() {
        // h = 0.2: about 80 % of the draws go to 20 % of the ranks
        // (u^pow < 0.2 when u < 0.2^(1/pow)).
        let n = 100_000u64;
        let got = draws(
            &RandomDistribution::Pareto {
                h: 0.2,
                center: None,
            },
            n,
            200_000,
        );
        let pow = 0.2f64.ln() / 0.8f64.ln();
        let want = 0.2f64.powf(1.0 / pow);
        let share = top_share(&got, (n / 5) as usize);
        assert!(share >= want - 0.02, "{share} against at least {want}");
    }

    #[test]
    fn normal_draws_cluster_as_a_bell() {
        // The mean of twelve uniforms over 0..=n has a deviation of n / 12:
        // about 68 % of the draws fall on the n / 6 ranks around the mean
        // (wherever the hash puts them), where uniform draws would put 1/6.
        // With a power of two ranks the hash is one to one; with others it
        // folds ranks together (1,200 ranks land on 148 blocks), as fio's.
        let n = 1024u64;
        let got = draws(
            &RandomDistribution::Normal {
                dev: 0.0,
                center: None,
            },
            n,
            200_000,
        );
        let share = top_share(&got, (n / 6) as usize);
        assert!((0.66..0.75).contains(&share), "{share}");
        // Two blocks and a deviation that rounds to nothing: fio's loop
        // would halve 0 for ever at the edge; this one ends.
        let tiny = draws(
            &RandomDistribution::Normal {
                dev: 50.0,
                center: None,
            },
            2,
            1000,
        );
        assert!(tiny.iter().all(|&b| b < 2));
        // A deviation widens it.
        let wide = draws(
            &RandomDistribution::Normal {
                dev: 40.0,
                center: None,
            },
            n,
            200_000,
        );
        assert!(top_share(&wide, (n / 6) as usize) < share - 0.1);
    }

    #[test]
    fn zones_take_their_access_shares() {
        // fio's own example: 60 % to the first 10 %, 30 % to the next 20 %,
        // 8 % to the next 30 %, 2 % to the last 40 %.
        let zones = vec![
            Zone {
                access: 60,
                size: 10,
            },
            Zone {
                access: 30,
                size: 20,
            },
            Zone {
                access: 8,
                size: 30,
            },
            Zone {
                access: 2,
                size: 40,
            },
        ];
        let n = 10_000u64;
        let dist = RandomDistribution::Zoned([zones.clone(), zones.clone(), zones]);
        let got = draws(&dist, n, 100_000);
        let mut share = [0u64; 4];
        for b in got {
            let z = match b * 100 / n {
                0..10 => 0,
                10..30 => 1,
                30..60 => 2,
                60..100 => 3,
                _ => panic!("block {b} beyond the file"),
            };
            share[z] += 1;
        }
        let pct = share.map(|c| (c as f64 / 1000.0).round() as u64);
        assert_eq!(pct, [60, 30, 8, 2]);
    }

    #[test]
    fn absolute_zones_are_bytes() {
        let zones = vec![
            Zone {
                access: 90,
                size: 4096 * 10,
            },
            Zone {
                access: 10,
                size: 4096 * 990,
            },
        ];
        let dist = RandomDistribution::ZonedAbs([zones.clone(), zones.clone(), zones]);
        let got = draws(&dist, 1000, 20_000);
        let first = got.iter().filter(|&&b| b < 10).count() as f64 / got.len() as f64;
        assert!((first - 0.901).abs() < 0.01, "{first}");
        assert!(got.iter().all(|&b| b < 1000));
    }

    #[test]
    fn a_centre_places_the_peak() {
        let n = 1000u64;
        let got = draws(
            &RandomDistribution::Zipf {
                theta: 2.0,
                center: Some(0.25),
            },
            n,
            10_000,
        );
        // Rank 1 (hash 0) lands at n * 0.25: the most drawn block.
        let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
        for b in got {
            *counts.entry(b).or_default() += 1;
        }
        let top = counts.iter().max_by_key(|e| *e.1).map(|e| *e.0);
        assert_eq!(top, Some(250));
    }
}
