//! Write-direction latency samples recorded by the fast path of a
//! [`Throttle`](crate::Throttle), in one bucket per completing thread
//! (the userspace counterpart of the kernel's per-CPU `blk_rq_stat`
//! buckets that `blk_stat_add` fills without a lock). Folded into the
//! core's window at the start of every locked section.
//!
//! # Buckets
//!
//! A [`Bucket`] holds one thread's running totals for one throttle: the
//! sample count and the latency sum, both only ever growing (wrapping at
//! 2^63 and 2^64). The count word's top bit says the owner has exited.
//! Only its owner thread writes them, with a plain load and store each:
//! recording costs no read-modify-write. The lock holder keeps, per
//! bucket, the totals it has already folded ([`Registry`]) and folds the
//! difference. A thread finds its bucket in a thread-local list keyed by
//! the throttle's id; its first sample for a throttle creates the bucket
//! and registers it under the throttle's lock (so a `Clock` must not
//! complete permits: the throttle reads it with the lock held).
//!
//! Min and max are shared by all threads and change only when a sample
//! beats them (a load, and a read-modify-write only then).
//!
//! # Looseness
//!
//! Count, sum and the extremes are separate words, read one after the
//! other, so a sample recorded during a fold may have its latency (in the
//! sum, or as an extreme) in one batch and its count in the next. A batch
//! takes a bucket's sum only with some of its count, so a latency is never
//! dropped with an empty batch: every sample is folded exactly once, and
//! over all batches count, sum, min and max are exact. The kernel's
//! per-CPU folding has the same looseness.
//!
//! # Lifetimes
//!
//! When a thread exits its list is dropped and each of its buckets marked
//! finished; the next fold takes its last totals and forgets it. A
//! registration does the same once the registry has doubled since its
//! last pruning (see `Registry::prune_at`), so the registry stays under
//! twice the live threads plus a few even when no locked section folds.
//! When a throttle is dropped its buckets are marked orphaned; a thread
//! drops orphaned entries from its list the next time it registers a
//! bucket.

use std::cell::RefCell;
use std::vec::Vec;

use crate::WindowStat;
use crate::sync::{Arc, AtomicBool, AtomicU64, Ordering};

/// One thread's running totals for one throttle.
#[derive(Debug)]
pub(crate) struct Bucket {
    /// Samples recorded, ever, below [`FINISHED`] (owner writes).
    count: AtomicU64,
    /// Their latencies summed, ever, wrapping (owner writes).
    sum: AtomicU64,
    /// Set when the throttle is dropped: the owner may forget the bucket.
    orphan: AtomicBool,
}

impl Bucket {
    fn new() -> Bucket {
        Bucket {
            count: AtomicU64::new(0),
            sum: AtomicU64::new(0),
            orphan: AtomicBool::new(false),
        }
    }

    /// Add one sample. Only the owner thread calls this, so a load and a
    /// store cannot lose an update. The sum is stored before the count, so
    /// a fold that sees the count sees the latency too.
    #[inline]
    fn add(&self, lat: u64) {
        let sum = self.sum.load(Ordering::Relaxed);
        self.sum.store(sum.wrapping_add(lat), Ordering::Relaxed);
        let count = self.count.load(Ordering::Relaxed);
        self.count.store((count + 1) & !FINISHED, Ordering::Release);
    }

    /// The owner exits: the totals are final.
    fn finish(&self) {
        let count = self.count.load(Ordering::Relaxed);
        self.count.store(count | FINISHED, Ordering::Release);
    }
}

/// The count word's top bit: set by the owner as it exits, so one load
/// tells the folder both the count and whether it is final.
const FINISHED: u64 = 1 << 63;

/// A thread's entry for one throttle.
struct Mine {
    throttle: u64,
    bucket: Arc<Bucket>,
}

impl Drop for Mine {
    fn drop(&mut self) {
        self.bucket.finish();
    }
}

#[cfg(not(iolab_loom))]
crate::sync::thread_local! {
    /// This thread's buckets, one per throttle it has completed a tracked
    /// request on.
    static MINE: RefCell<Vec<Mine>> = const { RefCell::new(Vec::new()) };
}

// loom's macro takes no `const` initialiser.
#[cfg(iolab_loom)]
crate::sync::thread_local! {
    static MINE: RefCell<Vec<Mine>> = RefCell::new(Vec::new());
}

/// A bucket as the lock holder knows it: the totals already folded.
#[derive(Debug)]
struct Seen {
    bucket: Arc<Bucket>,
    count: u64,
    sum: u64,
}

/// Every bucket of one throttle, and the last totals of exited threads'
/// buckets not folded yet. Kept under the throttle's lock.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    seen: Vec<Seen>,
    carry_count: u64,
    carry_sum: u64,
    /// A registration prunes exited threads' buckets once the list is
    /// this long (then twice what is left, at least [`PRUNE_MIN`]): the
    /// list stays under twice the live threads plus `PRUNE_MIN`.
    prune_at: usize,
}

/// The shortest list a registration prunes.
const PRUNE_MIN: usize = 8;

impl Registry {
    /// Start folding `bucket` (caller holds the throttle's lock). Buckets
    /// of exited threads are folded into the carry and forgotten here too
    /// (see `prune_at`), so the list stays bounded even when no locked
    /// section folds.
    pub(crate) fn register(&mut self, bucket: Arc<Bucket>) {
        if self.seen.len() >= self.prune_at.max(PRUNE_MIN) {
            self.fold();
            self.prune_at = 2 * self.seen.len();
        }
        self.seen.push(Seen {
            bucket,
            count: 0,
            sum: 0,
        });
    }

    /// Fold what every bucket recorded since the last fold into the carry,
    /// and forget the buckets of exited threads.
    fn fold(&mut self) {
        let (mut count, mut sum) = (self.carry_count, self.carry_sum);
        self.seen.retain_mut(|s| {
            // Acquire: the sum and extremes stored before the count, and
            // a finished bucket's totals are final.
            let word = s.bucket.count.load(Ordering::Acquire);
            let c = word & !FINISHED;
            if c != s.count {
                // The sum may run ahead of the count (a sample stored
                // between the two loads): it goes with this batch. A sum
                // alone waits for its count, never to be lost.
                let total = s.bucket.sum.load(Ordering::Relaxed);
                count = count.wrapping_add(c.wrapping_sub(s.count) & !FINISHED);
                sum = sum.wrapping_add(total.wrapping_sub(s.sum));
                s.count = c;
                s.sum = total;
            }
            word & FINISHED == 0
        });
        (self.carry_count, self.carry_sum) = (count, sum);
    }

    /// Buckets being folded (for tests).
    #[cfg(all(test, not(iolab_loom)))]
    pub(crate) fn len(&self) -> usize {
        self.seen.len()
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        for s in &self.seen {
            s.bucket.orphan.store(true, Ordering::Relaxed);
        }
    }
}

/// The shared side of one throttle's samples: its id and the extremes.
#[derive(Debug)]
pub(crate) struct WriteSamples {
    /// Unique among the throttles of this process: the key of a thread's
    /// bucket list.
    id: u64,
    min: AtomicU64,
    max: AtomicU64,
}

impl WriteSamples {
    pub(crate) fn new() -> WriteSamples {
        WriteSamples {
            id: crate::sync::next_instance_id(),
            min: AtomicU64::new(u64::MAX),
            max: AtomicU64::new(0),
        }
    }

    /// Record one sample of `lat` ns in this thread's bucket. A thread's
    /// first sample creates its bucket and hands it to `register`, which
    /// must pass it to [`Registry::register`] under the throttle's lock.
    /// `false` if this thread's bucket list cannot be reached (the thread
    /// is exiting): the caller gives the sample to the core under the lock
    /// instead.
    #[inline]
    pub(crate) fn record(&self, lat: u64, register: impl FnOnce(Arc<Bucket>)) -> bool {
        // The extremes first: a fold that sees this sample's count (an
        // acquire of the bucket's release) sees them too.
        if lat < self.min.load(Ordering::Relaxed) {
            self.min.fetch_min(lat, Ordering::Relaxed);
        }
        if lat > self.max.load(Ordering::Relaxed) {
            self.max.fetch_max(lat, Ordering::Relaxed);
        }
        MINE.try_with(|mine| {
            let Ok(mut mine) = mine.try_borrow_mut() else {
                return false;
            };
            match mine.iter().find(|m| m.throttle == self.id) {
                Some(m) => m.bucket.add(lat),
                None => {
                    mine.retain(|m| !m.bucket.orphan.load(Ordering::Relaxed));
                    let bucket = Arc::new(Bucket::new());
                    bucket.add(lat);
                    register(Arc::clone(&bucket));
                    mine.push(Mine {
                        throttle: self.id,
                        bucket,
                    });
                }
            }
            true
        })
        .unwrap_or(false)
    }

    /// Take what was recorded since the last drain, `None` if nothing
    /// (caller holds the throttle's lock and passes its `registry`).
    /// Buckets of exited threads are folded a last time and forgotten.
    pub(crate) fn drain(&self, registry: &mut Registry) -> Option<WindowStat> {
        registry.fold();
        let count = core::mem::take(&mut registry.carry_count);
        let sum = core::mem::take(&mut registry.carry_sum);
        if count == 0 {
            return None;
        }
        let min = self.min.swap(u64::MAX, Ordering::Relaxed);
        let max = self.max.swap(0, Ordering::Relaxed);
        Some(WindowStat {
            nr_samples: u32::try_from(count).unwrap_or(u32::MAX),
            min,
            max,
            sum,
        })
    }
}

#[cfg(all(test, not(iolab_loom)))]
mod tests {
    use super::{Registry, WriteSamples};
    use std::sync::Mutex;
    use std::vec::Vec;

    fn stat(s: &WriteSamples, reg: &mut Registry) -> Option<(u32, u64, u64, u64)> {
        s.drain(reg).map(|w| (w.nr_samples, w.min, w.max, w.sum))
    }

    fn record(s: &WriteSamples, reg: &Mutex<Registry>, lat: u64) {
        assert!(s.record(lat, |b| reg.lock().unwrap().register(b)));
    }

    #[test]
    fn samples_fold_into_one_window_stat() {
        let s = WriteSamples::new();
        let reg = Mutex::new(Registry::default());
        assert_eq!(stat(&s, &mut reg.lock().unwrap()), None);
        for lat in [5, 3, 9] {
            record(&s, &reg, lat);
        }
        let mut reg = reg.into_inner().unwrap();
        assert_eq!(stat(&s, &mut reg), Some((3, 3, 9, 17)));
        assert_eq!(reg.len(), 1, "one bucket for this thread");
        assert_eq!(stat(&s, &mut reg), None, "a drain takes only what is new");
        assert!(s.record(4, |_| unreachable!("registered already")));
        assert_eq!(stat(&s, &mut reg), Some((1, 4, 4, 4)));
    }

    #[test]
    fn a_long_latency_counts_exactly() {
        let s = WriteSamples::new();
        let reg = Mutex::new(Registry::default());
        let long = 1 << 50; // thirteen days
        record(&s, &reg, long);
        record(&s, &reg, 3);
        let mut reg = reg.into_inner().unwrap();
        assert_eq!(stat(&s, &mut reg), Some((2, 3, long, long + 3)));
    }

    /// Short-lived threads record one after the other with no fold
    /// between: registrations fold the buckets of exited threads into the
    /// carry, so the list stays short; the fold takes everything.
    #[test]
    fn exited_threads_are_folded_and_forgotten_without_a_fold() {
        let s = WriteSamples::new();
        let reg = Mutex::new(Registry::default());
        let threads = 100u64;
        std::thread::scope(|scope| {
            for lat in 1..=threads {
                let (s, reg) = (&s, &reg);
                // An explicit join waits for the thread's destructors.
                scope
                    .spawn(move || (0..3).for_each(|_| record(s, reg, lat)))
                    .join()
                    .unwrap();
                let r = reg.lock().unwrap();
                assert!(r.len() <= super::PRUNE_MIN, "{} buckets kept", r.len());
            }
        });
        let mut reg = reg.into_inner().unwrap();
        assert!(reg.carry_count > 0, "some were folded at registration");
        let sum: u64 = (1..=threads).map(|l| 3 * l).sum();
        assert_eq!(stat(&s, &mut reg), Some((300, 1, threads, sum)));
        assert_eq!(reg.len(), 0, "every thread exited: every bucket goes");
        assert_eq!(stat(&s, &mut reg), None);
    }

    #[test]
    fn a_sum_seen_before_its_count_waits_for_it() {
        // A fold that loads the count, then (after the owner stored sum
        // and count) the sum, must keep that latency for the batch that
        // counts it. Simulated by storing the sum alone.
        let s = WriteSamples::new();
        let reg = Mutex::new(Registry::default());
        record(&s, &reg, 5);
        let mut reg = reg.into_inner().unwrap();
        assert_eq!(stat(&s, &mut reg), Some((1, 5, 5, 5)));
        let bucket = std::sync::Arc::clone(&reg.seen[0].bucket);
        bucket
            .sum
            .store(5 + 7, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(stat(&s, &mut reg), None, "no count yet");
        bucket.count.store(2, std::sync::atomic::Ordering::Release);
        assert_eq!(stat(&s, &mut reg).map(|t| (t.0, t.3)), Some((1, 7)));
    }

    #[test]
    fn throttles_do_not_share_buckets_and_orphans_are_dropped() {
        let a = WriteSamples::new();
        let reg_a = Mutex::new(Registry::default());
        record(&a, &reg_a, 7);
        {
            let b = WriteSamples::new();
            let reg_b = Mutex::new(Registry::default());
            record(&b, &reg_b, 100);
            let mut reg_b = reg_b.into_inner().unwrap();
            assert_eq!(stat(&b, &mut reg_b).map(|t| t.3), Some(100));
            // reg_b dropped here: its bucket is orphaned.
        }
        let c = WriteSamples::new();
        let reg_c = Mutex::new(Registry::default());
        record(&c, &reg_c, 1);
        super::MINE.with(|m| {
            let ids: Vec<u64> = m.borrow().iter().map(|m| m.throttle).collect();
            assert_eq!(ids, [a.id, c.id], "b's orphaned bucket was dropped");
        });
        let mut reg_a = reg_a.into_inner().unwrap();
        assert_eq!(stat(&a, &mut reg_a).map(|t| (t.0, t.3)), Some((1, 7)));
        let mut reg_c = reg_c.into_inner().unwrap();
        assert_eq!(stat(&c, &mut reg_c).map(|t| (t.0, t.3)), Some((1, 1)));
    }
}

/// Loom: concurrent recording and folding lose and double nothing.
#[cfg(all(test, iolab_loom))]
mod loom_tests {
    use super::{Registry, WriteSamples};
    use crate::WindowStat;
    use crate::sync::{Arc, Mutex, model, thread};

    #[test]
    fn every_sample_is_folded_exactly_once() {
        model(|| {
            let s = Arc::new(WriteSamples::new());
            let reg = Arc::new(Mutex::new(Registry::default()));
            let threads: std::vec::Vec<_> = [[3, 10], [7, 1]]
                .into_iter()
                .map(|lats| {
                    let (s, reg) = (Arc::clone(&s), Arc::clone(&reg));
                    thread::spawn(move || {
                        for lat in lats {
                            assert!(s.record(lat, |b| reg.lock().unwrap().register(b)));
                        }
                    })
                })
                .collect();
            let mut total = WindowStat::EMPTY;
            let mut fold = || {
                if let Some(stat) = s.drain(&mut reg.lock().unwrap()) {
                    total.merge(&stat);
                }
            };
            fold();
            for t in threads {
                t.join().unwrap();
            }
            fold();
            assert_eq!(
                (total.nr_samples, total.min, total.max, total.sum),
                (4, 1, 10, 21)
            );
        });
    }
}
