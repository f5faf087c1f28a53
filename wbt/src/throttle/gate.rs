//! The per-class counters of a [`Throttle`](crate::Throttle) in atomics
//! (kernel: `rq_wait.inflight` and the wait queue's "has sleeper" test),
//! shared by the lockless fast path and the core under the lock.
//!
//! One `u64` per class holds both counters and an epoch: requests in
//! flight (20 bits), waiters (20 bits) and the number of admission-state
//! publications (24 bits, wrapping). "Below the limit and nobody waiting,
//! take a slot" and "nobody waiting, give a slot back" are each a single
//! compare-and-swap on that word, which keeps a newcomer from overtaking a
//! waiter and a release from missing one. The epoch makes the fast path's
//! limit current, as a sequence lock: a publication makes it odd, stores
//! the board, and makes it even again. The fast path reads the word, gives
//! way to the lock while the epoch is odd, reads the board, then swaps; a
//! publication in between changed the epoch, so the swap fails and the
//! fast path reads the new board before it tries again.

use crate::sync::{Arc, AtomicU64, Ordering};
use crate::{Class, NUM_CLASSES, Released, Slots};

const FIELD_BITS: u32 = 20;
const FIELD_MAX: u32 = (1 << FIELD_BITS) - 1;
const ONE_INFLIGHT: u64 = 1;
const ONE_WAITER: u64 = 1 << FIELD_BITS;
const ONE_EPOCH: u64 = 1 << (2 * FIELD_BITS);

#[inline]
fn inflight(word: u64) -> u32 {
    (word as u32) & FIELD_MAX
}

#[inline]
fn waiting(word: u64) -> u32 {
    ((word >> FIELD_BITS) as u32) & FIELD_MAX
}

/// `n` is below `limit` (`None`: unlimited) and one more still fits its
/// field: a class holds at most 2^20 − 1 requests in flight.
#[inline]
fn below(n: u32, limit: Option<u32>) -> bool {
    n < limit.unwrap_or(FIELD_MAX).min(FIELD_MAX)
}

/// A newcomer's step on `word`: a slot taken (`true`) if below `limit` and
/// (when `fifo`) nobody waits; else, with `register`, one more waiter
/// (`false`); else `None`, nothing to change.
#[inline]
fn arrive(word: u64, limit: Option<u32>, fifo: bool, register: bool) -> Option<(u64, bool)> {
    let free = !(fifo && waiting(word) > 0) && below(inflight(word), limit);
    match (free, register) {
        (true, _) => Some((word + ONE_INFLIGHT, true)),
        (false, true) => Some((plus_waiter(word), false)),
        (false, false) => None,
    }
}

/// One more waiter, saturating like the core's counters.
#[inline]
fn plus_waiter(word: u64) -> u64 {
    if waiting(word) < FIELD_MAX {
        word + ONE_WAITER
    } else {
        word
    }
}

/// The counters of the three classes. Cloning shares them.
#[derive(Clone, Debug)]
pub(crate) struct Gates(Arc<[AtomicU64; NUM_CLASSES]>);

impl Gates {
    pub(crate) fn new() -> Gates {
        Gates(Arc::new([
            AtomicU64::new(0),
            AtomicU64::new(0),
            AtomicU64::new(0),
        ]))
    }

    fn word(&self, class: Class) -> u64 {
        self.0[class.index()].load(Ordering::Acquire)
    }

    /// Replace the class's word by `next(word)` in one step and return the
    /// old and new words; `Err(word)` if `next` declines.
    #[inline]
    fn update(&self, class: Class, next: impl Fn(u64) -> Option<u64>) -> Result<(u64, u64), u64> {
        let cell = &self.0[class.index()];
        let mut word = cell.load(Ordering::Acquire);
        loop {
            let Some(new) = next(word) else {
                return Err(word);
            };
            match cell.compare_exchange(word, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(old) => return Ok((old, new)),
                Err(seen) => word = seen,
            }
        }
    }

    /// Take a slot if below `limit` and (when `fifo`) nobody waits.
    #[inline]
    pub(crate) fn take(&self, class: Class, limit: Option<u32>, fifo: bool) -> bool {
        self.update(class, |w| arrive(w, limit, fifo, false).map(|(new, _)| new))
            .is_ok()
    }

    /// Take a slot as [`take`](Self::take) does, or else count the caller
    /// as a waiter, in one step.
    #[inline]
    pub(crate) fn take_or_wait(&self, class: Class, limit: Option<u32>, fifo: bool) -> bool {
        let step = self.update(class, |w| arrive(w, limit, fifo, true).map(|(new, _)| new));
        matches!(step, Ok((old, new)) if inflight(new) > inflight(old))
    }

    /// The fast path's admission: after each read of the class's word,
    /// `limit()` reads the published limit (`None`: take the locked path
    /// instead); then take a slot as [`take`](Self::take) does, or else
    /// (with `register`) count the caller as a waiter, in one swap. `None`
    /// if `limit()` declined, else whether a slot was taken.
    #[inline]
    pub(crate) fn admit_with(
        &self,
        class: Class,
        fifo: bool,
        register: bool,
        limit: impl Fn() -> Option<u32>,
    ) -> Option<bool> {
        let cell = &self.0[class.index()];
        let mut word = cell.load(Ordering::Acquire);
        loop {
            if word & ONE_EPOCH != 0 {
                return None; // a publication is under way
            }
            let limit = limit()?;
            let Some((new, took)) = arrive(word, Some(limit), fifo, register) else {
                return Some(false);
            };
            match cell.compare_exchange(word, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some(took),
                Err(seen) => word = seen,
            }
        }
    }

    /// Bump every class's epoch: before a publication (it becomes odd:
    /// fast paths give way) and after it (even again). A fast path that
    /// read the word before either bump fails its swap and retries.
    pub(crate) fn bump_epoch(&self) {
        for cell in self.0.iter() {
            cell.fetch_add(ONE_EPOCH, Ordering::AcqRel);
        }
    }

    /// Give a slot back if nobody waits (then no wake can be due). `false`
    /// if someone waits or the class holds no slot: the caller releases
    /// through the core under the lock instead.
    #[inline]
    pub(crate) fn release_quiet(&self, class: Class) -> bool {
        self.update(class, |w| {
            (waiting(w) == 0 && inflight(w) > 0).then(|| w - ONE_INFLIGHT)
        })
        .is_ok()
    }
}

impl Slots for Gates {
    fn inflight(&self, class: Class) -> u32 {
        inflight(self.word(class))
    }

    fn waiting(&self, class: Class) -> u32 {
        waiting(self.word(class))
    }

    fn admit_or_wait(&mut self, class: Class, limit: Option<u32>, fifo: bool) -> bool {
        self.take_or_wait(class, limit, fifo)
    }

    fn try_take(&mut self, class: Class, limit: Option<u32>, fifo: bool) -> bool {
        self.take(class, limit, fifo)
    }

    fn grant_waiter(&mut self, class: Class, limit: Option<u32>) -> bool {
        self.update(class, |w| {
            let leave = if waiting(w) > 0 { ONE_WAITER } else { 0 };
            below(inflight(w), limit).then(|| w + ONE_INFLIGHT - leave)
        })
        .is_ok()
    }

    fn cancel_waiter(&mut self, class: Class) {
        let _ = self.update(class, |w| (waiting(w) > 0).then(|| w - ONE_WAITER));
    }

    fn release(&mut self, class: Class) -> Option<Released> {
        let (old, _) = self
            .update(class, |w| (inflight(w) > 0).then(|| w - ONE_INFLIGHT))
            .ok()?;
        Some(Released {
            inflight: inflight(old) - 1,
            has_waiters: waiting(old) > 0,
        })
    }
}

#[cfg(all(test, not(iolab_loom)))]
mod tests {
    use proptest::prelude::*;

    use super::Gates;
    use crate::{Class, LocalSlots, Slots};

    #[derive(Clone, Copy, Debug)]
    enum Step {
        AdmitOrWait(usize, Option<u32>, bool),
        TryTake(usize, Option<u32>, bool),
        Grant(usize, Option<u32>),
        Cancel(usize),
        Release(usize),
    }

    fn step() -> impl Strategy<Value = Step> {
        let class = 0usize..3;
        let limit = prop::option::weighted(0.9, 0u32..4);
        prop_oneof![
            (class.clone(), limit.clone(), any::<bool>())
                .prop_map(|(c, l, f)| Step::AdmitOrWait(c, l, f)),
            (class.clone(), limit.clone(), any::<bool>())
                .prop_map(|(c, l, f)| Step::TryTake(c, l, f)),
            (class.clone(), limit).prop_map(|(c, l)| Step::Grant(c, l)),
            class.clone().prop_map(Step::Cancel),
            class.prop_map(Step::Release),
        ]
    }

    proptest! {
        /// The atomic counters answer every call as the plain ones do.
        #[test]
        fn gates_agree_with_local_slots(steps in prop::collection::vec(step(), 0..64)) {
            let mut local = LocalSlots::default();
            let mut gates = Gates::new();
            for s in steps {
                let (l, g) = match s {
                    Step::AdmitOrWait(c, lim, fifo) => {
                        let c = Class::ALL[c];
                        (local.admit_or_wait(c, lim, fifo), gates.admit_or_wait(c, lim, fifo))
                    }
                    Step::TryTake(c, lim, fifo) => {
                        let c = Class::ALL[c];
                        (local.try_take(c, lim, fifo), gates.try_take(c, lim, fifo))
                    }
                    Step::Grant(c, lim) => {
                        let c = Class::ALL[c];
                        (local.grant_waiter(c, lim), gates.grant_waiter(c, lim))
                    }
                    Step::Cancel(c) => {
                        let c = Class::ALL[c];
                        local.cancel_waiter(c);
                        gates.cancel_waiter(c);
                        (true, true)
                    }
                    Step::Release(c) => {
                        let c = Class::ALL[c];
                        let (l, g) = (local.release(c), gates.release(c));
                        prop_assert_eq!(l, g);
                        (l.is_some(), g.is_some())
                    }
                };
                prop_assert_eq!(l, g, "{:?}", s);
                for c in Class::ALL {
                    prop_assert_eq!(local.inflight(c), gates.inflight(c));
                    prop_assert_eq!(local.waiting(c), gates.waiting(c));
                }
            }
        }
    }

    #[test]
    fn a_quiet_release_needs_a_slot_and_no_waiters() {
        let mut g = Gates::new();
        assert!(!g.release_quiet(Class::Bg), "nothing to give back");
        assert!(g.admit_or_wait(Class::Bg, Some(1), true));
        assert!(!g.admit_or_wait(Class::Bg, Some(1), true), "over the limit");
        assert_eq!(g.waiting(Class::Bg), 1);
        assert!(!g.release_quiet(Class::Bg), "a waiter needs the core");
        g.cancel_waiter(Class::Bg);
        assert!(g.release_quiet(Class::Bg));
        assert_eq!((g.inflight(Class::Bg), g.waiting(Class::Bg)), (0, 0));
    }
}
