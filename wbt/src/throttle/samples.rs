//! Write-direction latency samples recorded by the fast path of a
//! [`Throttle`](crate::Throttle) (kernel: the per-CPU `blk_rq_stat`
//! buckets that `blk_stat_add` fills without a lock). Folded into the
//! core's window at the start of every locked section.
//!
//! Count and sum share one word (20 and 44 bits) so recording is one
//! compare-and-swap; min and max change only when a sample beats them. A
//! sample that does not fit (a latency of 2^44 ns or more, or a full
//! word) is refused and the caller gives it to the core under the lock.
//! The three words are drained one after the other, so a sample recorded
//! during a drain may have its count in one batch and its extreme in the
//! next; the kernel's per-CPU folding has the same looseness.

use crate::WindowStat;
use crate::sync::{AtomicU64, Ordering};

const SUM_BITS: u32 = 44;
const SUM_MASK: u64 = (1 << SUM_BITS) - 1;
const ONE_SAMPLE: u64 = 1 << SUM_BITS;
const COUNT_MAX: u64 = (1 << (64 - SUM_BITS)) - 1;

#[derive(Debug)]
pub(crate) struct WriteSamples {
    count_sum: AtomicU64,
    min: AtomicU64,
    max: AtomicU64,
}

impl WriteSamples {
    pub(crate) fn new() -> WriteSamples {
        WriteSamples {
            count_sum: AtomicU64::new(0),
            min: AtomicU64::new(u64::MAX),
            max: AtomicU64::new(0),
        }
    }

    /// Record one sample of `lat` ns; `false` if it does not fit.
    #[inline]
    pub(crate) fn record(&self, lat: u64) -> bool {
        let mut word = self.count_sum.load(Ordering::Relaxed);
        loop {
            let fits = (word >> SUM_BITS) < COUNT_MAX
                && (word & SUM_MASK)
                    .checked_add(lat)
                    .is_some_and(|s| s <= SUM_MASK);
            if !fits {
                return false;
            }
            let next = word + ONE_SAMPLE + lat;
            match self
                .count_sum
                .compare_exchange(word, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(seen) => word = seen,
            }
        }
        if lat < self.min.load(Ordering::Relaxed) {
            self.min.fetch_min(lat, Ordering::Relaxed);
        }
        if lat > self.max.load(Ordering::Relaxed) {
            self.max.fetch_max(lat, Ordering::Relaxed);
        }
        true
    }

    /// Take what was recorded since the last drain, `None` if nothing.
    pub(crate) fn drain(&self) -> Option<WindowStat> {
        if self.count_sum.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let word = self.count_sum.swap(0, Ordering::Relaxed);
        let min = self.min.swap(u64::MAX, Ordering::Relaxed);
        let max = self.max.swap(0, Ordering::Relaxed);
        Some(WindowStat {
            nr_samples: (word >> SUM_BITS) as u32,
            min,
            max,
            sum: word & SUM_MASK,
        })
    }
}

#[cfg(all(test, not(iolab_loom)))]
mod tests {
    use super::{SUM_MASK, WriteSamples};

    #[test]
    fn samples_fold_into_one_window_stat() {
        let s = WriteSamples::new();
        assert_eq!(s.drain(), None);
        for lat in [5, 3, 9] {
            assert!(s.record(lat));
        }
        let stat = s.drain().expect("three samples");
        assert_eq!(
            (stat.nr_samples, stat.min, stat.max, stat.sum),
            (3, 3, 9, 17)
        );
        assert_eq!(s.drain(), None, "a drain empties the accumulator");
    }

    #[test]
    fn a_sample_that_does_not_fit_is_refused_whole() {
        let s = WriteSamples::new();
        assert!(!s.record(SUM_MASK + 1));
        assert!(s.record(SUM_MASK - 1));
        assert!(!s.record(2), "the sum would overflow its bits");
        let stat = s.drain().expect("one sample");
        assert_eq!((stat.nr_samples, stat.sum), (1, SUM_MASK - 1));
    }
}
