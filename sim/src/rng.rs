//! Deterministic random streams, one per entity.
//!
//! Every entity (a job clone, a device, the flusher) draws from its own
//! stream, derived from `(master seed, entity id)` with SplitMix64, so adding
//! a job never perturbs the numbers another job sees. The generator is
//! `Pcg64Mcg` from a pinned `rand_pcg`; the few distributions we need are
//! written here so a dependency bump can never change a result.

use rand_core::RngCore;
use rand_pcg::Pcg64Mcg;

/// SplitMix64 step: a well-mixed 64-bit value from a counter.
#[inline]
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Entity kinds, so that job 3 and device 3 get different streams.
#[derive(Clone, Copy, Debug)]
pub enum Entity {
    /// A fio job clone, numbered in job-file order.
    Job(u32),
    /// A device of the volume.
    Device(u32),
    /// Kernel-side actors (flusher, journal).
    Kernel(u32),
}

/// One deterministic random stream.
#[derive(Clone, Debug)]
pub struct Stream {
    rng: Pcg64Mcg,
}

impl Stream {
    /// The stream of `entity` under `seed`.
    pub fn new(seed: u64, entity: Entity) -> Self {
        let (kind, id) = match entity {
            Entity::Job(i) => (1u64, i),
            Entity::Device(i) => (2, i),
            Entity::Kernel(i) => (3, i),
        };
        let a = splitmix64(seed ^ splitmix64(kind << 32 | u64::from(id)));
        let b = splitmix64(a ^ 0x6a09_e667_f3bc_c908);
        let state = (u128::from(a) << 64) | u128::from(b);
        Self {
            rng: Pcg64Mcg::new(state | 1),
        }
    }

    /// A stream seeded directly (fio's `randseed`).
    pub fn from_seed(seed: u64) -> Self {
        Self::new(seed, Entity::Kernel(u32::MAX))
    }

    /// A second stream drawn from this one (for an entity with two
    /// independent sources of randomness): this one moves on by two draws.
    pub fn fork(&mut self) -> Self {
        let state = (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64());
        Self {
            rng: Pcg64Mcg::new(state | 1),
        }
    }

    /// Next raw 64-bit value.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Uniform integer in `0..n` (`n > 0`), unbiased (Lemire's multiply-shift
    /// with rejection).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as u64
    }

    /// Uniform integer in `1..=100`, as fio draws rwmix percentages.
    #[inline]
    pub fn percent(&mut self) -> u32 {
        (self.below(100) + 1) as u32
    }

    /// Exponentially distributed value with the given mean (inversion).
    pub fn exp(&mut self, mean: f64) -> f64 {
        // 53 random bits in (0, 1].
        let u = ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
        -mean * u.ln()
    }
}

/// A pseudo-random permutation of `0..n`: a balanced Feistel network on the
/// next even number of bits, with cycle walking to stay inside `0..n`.
///
/// It gives fio's "random map" semantics (every block once per pass) in O(1)
/// memory.
#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    /// A permutation of `0..n` keyed by `key`.
    pub fn new(n: u64, key: u64) -> Self {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut keys = [0u64; 4];
        for (i, k) in keys.iter_mut().enumerate() {
            *k = splitmix64(key ^ (i as u64).wrapping_mul(0xd6e8_feb8_6659_fd93));
        }
        Self { n, half_bits, keys }
    }

    /// The size of the permuted range.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// True for the empty range.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    #[inline]
    fn round(&self, x: u64, k: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let h = (x ^ k).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h ^ (h >> 29)) & mask
    }

    #[inline]
    fn encrypt(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let mut l = x >> self.half_bits;
        let mut r = x & mask;
        for k in self.keys {
            let nl = r;
            r = l ^ self.round(r, k);
            l = nl;
        }
        (l << self.half_bits) | r
    }

    /// The image of `i` (`i < n`).
    #[inline]
    pub fn get(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        let mut x = self.encrypt(i);
        while x >= self.n {
            x = self.encrypt(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_deterministic_and_distinct() {
        let mut a = Stream::new(7, Entity::Job(0));
        let mut b = Stream::new(7, Entity::Job(0));
        let mut c = Stream::new(7, Entity::Job(1));
        let mut d = Stream::new(8, Entity::Job(0));
        let va: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        let vd: Vec<u64> = (0..8).map(|_| d.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
        assert_ne!(va, vd);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut s = Stream::new(1, Entity::Kernel(0));
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            let v = s.below(7);
            seen[v as usize] += 1;
        }
        for count in seen {
            assert!((800..1200).contains(&count), "{seen:?}");
        }
        for _ in 0..1000 {
            assert!((1..=100).contains(&s.percent()));
        }
    }

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 3, 10, 255, 256, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut hit = vec![false; n as usize];
            for i in 0..n {
                let v = p.get(i);
                assert!(v < n);
                assert!(!hit[v as usize], "n={n} repeats {v}");
                hit[v as usize] = true;
            }
        }
    }

    #[test]
    fn permutation_is_not_the_identity() {
        let p = Permutation::new(1 << 16, 9);
        let fixed = (0..1000u64).filter(|&i| p.get(i) == i).count();
        assert!(fixed < 5);
    }

    #[test]
    fn exp_has_the_requested_mean() {
        let mut s = Stream::new(3, Entity::Kernel(1));
        let n = 20000;
        let mean: f64 = (0..n).map(|_| s.exp(10.0)).sum::<f64>() / n as f64;
        assert!((mean - 10.0).abs() < 0.3, "{mean}");
    }
}
