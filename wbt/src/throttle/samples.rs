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
//! and registers it in a pending list behind its own small lock (never the
//! throttle's), which the next fold takes in.
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
//! finished; the next fold (or, before any fold, the next registration)
//! takes its last totals and forgets it, so the lists stay as long as the
//! live threads even when nobody takes the lock. When a
//! throttle is dropped its buckets are marked orphaned; a thread drops
//! orphaned entries from its list the next time it registers a bucket.

use std::cell::RefCell;
use std::vec::Vec;

use crate::WindowStat;
use crate::sync::{Arc, AtomicBool, AtomicU64, Mutex, MutexGuard, Ordering};
use std::sync::PoisonError;

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

/// Every bucket of one throttle that a fold has taken in. Kept under the
/// throttle's lock.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    seen: Vec<Seen>,
}

impl Registry {
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

/// Buckets registered since the last fold, behind their own small lock so
/// a registration never needs the throttle's (a permit completed while
/// the caller holds it, in a trace callback or a clock, must not
/// deadlock). Finished ones are folded into `count` and `sum` here, so the
/// list stays as long as the live threads even when no fold comes.
#[derive(Debug, Default)]
struct Pending {
    buckets: Vec<Arc<Bucket>>,
    count: u64,
    sum: u64,
}

/// The shared side of one throttle's samples: its id, the extremes, and
/// the buckets registered since the last fold.
#[derive(Debug)]
pub(crate) struct WriteSamples {
    /// Unique among the throttles of this process: the key of a thread's
    /// bucket list.
    id: u64,
    min: AtomicU64,
    max: AtomicU64,
    pending: Mutex<Pending>,
    /// `pending` has something for the next fold.
    has_pending: AtomicBool,
}

impl WriteSamples {
    pub(crate) fn new() -> WriteSamples {
        WriteSamples {
            id: crate::sync::next_instance_id(),
            min: AtomicU64::new(u64::MAX),
            max: AtomicU64::new(0),
            pending: Mutex::new(Pending::default()),
            has_pending: AtomicBool::new(false),
        }
    }

    fn pending(&self) -> MutexGuard<'_, Pending> {
        // Nothing panics while the list is half-updated.
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hand a new bucket to the next fold; fold the finished ones waiting
    /// with it.
    fn register(&self, bucket: Arc<Bucket>) {
        let mut p = self.pending();
        let p = &mut *p;
        p.buckets.retain(|b| {
            // Acquire: a finished bucket's totals are final.
            let word = b.count.load(Ordering::Acquire);
            if word & FINISHED == 0 {
                return true;
            }
            p.count = p.count.wrapping_add(word & !FINISHED);
            p.sum = p.sum.wrapping_add(b.sum.load(Ordering::Relaxed));
            false
        });
        p.buckets.push(bucket);
        self.has_pending.store(true, Ordering::Release);
    }

    /// Record one sample of `lat` ns in this thread's bucket (a thread's
    /// first sample creates and registers it). `false` if this thread's
    /// bucket list cannot be reached (the thread is exiting): the caller
    /// gives the sample to the core under the lock instead.
    #[inline]
    pub(crate) fn record(&self, lat: u64) -> bool {
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
                    self.register(Arc::clone(&bucket));
                    bucket.add(lat);
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
        let mut count = 0u64;
        let mut sum = 0u64;
        if self.has_pending.load(Ordering::Acquire) {
            let mut p = self.pending();
            self.has_pending.store(false, Ordering::Relaxed);
            count = core::mem::take(&mut p.count);
            sum = core::mem::take(&mut p.sum);
            registry.seen.extend(p.buckets.drain(..).map(|bucket| Seen {
                bucket,
                count: 0,
                sum: 0,
            }));
        }
        registry.seen.retain_mut(|s| {
            // Acquire: the sum and extremes stored before the count.
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

impl Drop for WriteSamples {
    fn drop(&mut self) {
        for b in &self.pending().buckets {
            b.orphan.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(all(test, not(iolab_loom)))]
mod tests {
    use super::{Registry, WriteSamples};
    use std::vec::Vec;

    fn stat(s: &WriteSamples, reg: &mut Registry) -> Option<(u32, u64, u64, u64)> {
        s.drain(reg).map(|w| (w.nr_samples, w.min, w.max, w.sum))
    }

    #[test]
    fn samples_fold_into_one_window_stat() {
        let s = WriteSamples::new();
        let mut reg = Registry::default();
        assert_eq!(stat(&s, &mut reg), None);
        for lat in [5, 3, 9] {
            assert!(s.record(lat));
        }
        assert_eq!(stat(&s, &mut reg), Some((3, 3, 9, 17)));
        assert_eq!(reg.len(), 1, "one bucket for this thread");
        assert_eq!(stat(&s, &mut reg), None, "a drain takes only what is new");
        assert!(s.record(4));
        assert_eq!(stat(&s, &mut reg), Some((1, 4, 4, 4)));
    }

    #[test]
    fn a_long_latency_counts_exactly() {
        let s = WriteSamples::new();
        let mut reg = Registry::default();
        let long = 1 << 50; // thirteen days
        assert!(s.record(long));
        assert!(s.record(3));
        assert_eq!(stat(&s, &mut reg), Some((2, 3, long, long + 3)));
    }

    /// Three threads record one after the other with no fold between: each
    /// registration folds the buckets of the threads that exited, and the
    /// fold after the last one exits forgets its bucket.
    #[test]
    fn exited_threads_are_folded_and_forgotten_without_a_lock_holder() {
        let s = WriteSamples::new();
        let mut reg = Registry::default();
        std::thread::scope(|scope| {
            for lat in [10, 20] {
                let s = &s;
                // An explicit join waits for the thread's destructors.
                scope
                    .spawn(move || (0..3).for_each(|_| assert!(s.record(lat))))
                    .join()
                    .unwrap();
            }
            {
                let p = s.pending();
                assert_eq!(p.buckets.len(), 1, "the second folded the first");
                assert_eq!((p.count, p.sum), (3, 30));
            }
            let s = &s;
            scope.spawn(move || assert!(s.record(1))).join().unwrap();
            let p = s.pending();
            assert_eq!(p.buckets.len(), 1, "the exited two were folded here");
            assert_eq!((p.count, p.sum), (6, 90));
        });
        assert_eq!(stat(&s, &mut reg), Some((7, 1, 20, 91)));
        assert_eq!(reg.len(), 0, "the last thread exited too: its bucket goes");
        assert_eq!(stat(&s, &mut reg), None);
    }

    #[test]
    fn a_sum_seen_before_its_count_waits_for_it() {
        // A fold that loads the count, then (after the owner stored sum
        // and count) the sum, must keep that latency for the batch that
        // counts it. Simulated by storing the sum alone.
        let s = WriteSamples::new();
        let mut reg = Registry::default();
        assert!(s.record(5));
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
        let mut reg_a = Registry::default();
        assert!(a.record(7));
        {
            let b = WriteSamples::new();
            let mut reg_b = Registry::default();
            assert!(b.record(100));
            assert_eq!(stat(&b, &mut reg_b).map(|t| t.3), Some(100));
            // reg_b dropped here: its bucket is orphaned.
        }
        let c = WriteSamples::new();
        assert!(c.record(1));
        super::MINE.with(|m| {
            let ids: Vec<u64> = m.borrow().iter().map(|m| m.throttle).collect();
            assert_eq!(ids, [a.id, c.id], "b's orphaned bucket was dropped");
        });
        assert_eq!(stat(&a, &mut reg_a).map(|t| (t.0, t.3)), Some((1, 7)));
        let mut reg_c = Registry::default();
        assert_eq!(stat(&c, &mut reg_c).map(|t| (t.0, t.3)), Some((1, 1)));
    }
}

/// Loom: concurrent recording and folding lose and double nothing.
#[cfg(all(test, iolab_loom))]
mod loom_tests {
    use super::{Registry, WriteSamples};
    use crate::WindowStat;
    use crate::sync::{Arc, thread};

    #[test]
    fn every_sample_is_folded_exactly_once() {
        loom::model(|| {
            let s = Arc::new(WriteSamples::new());
            let threads: std::vec::Vec<_> = [[3, 10], [7, 1]]
                .into_iter()
                .map(|lats| {
                    let s = Arc::clone(&s);
                    thread::spawn(move || {
                        for lat in lats {
                            assert!(s.record(lat));
                        }
                    })
                })
                .collect();
            let mut reg = Registry::default();
            let mut total = WindowStat::EMPTY;
            let mut fold = |reg: &mut Registry| {
                if let Some(stat) = s.drain(reg) {
                    total.merge(&stat);
                }
            };
            fold(&mut reg);
            for t in threads {
                t.join().unwrap();
            }
            fold(&mut reg);
            assert_eq!(
                (total.nr_samples, total.min, total.max, total.sum),
                (4, 1, 10, 21)
            );
        });
    }
}
