//! Bookings of one serial resource (a channel bus or a link direction).
//!
//! A transfer takes the earliest gap that fits at or after its data is
//! ready. A single `busy_until` would make a booking far in the future (a
//! read queued behind a program) block the idle time before it; the
//! timeline keeps every future interval instead, so that time stays usable.
//!
//! Layout: `(start, end)` pairs in one vector, sorted, the intervals
//! disjoint (so the ends are sorted too). On the reference random-read job
//! a channel or link holds about a dozen future intervals and two thirds of
//! the bookings land before the last one, a few places from the end: the
//! slot is looked for among the last few first, by binary search beyond.
//!
//! The past needs no pruning for correctness: a booking is never ready
//! before `now`, so an interval that ended by then is never after the slot
//! (it may be joined, which changes nothing: the time before `now` is never
//! booked again). Past intervals are dropped only when the vector is full
//! (or all at once when a booking comes after all of them), so the common
//! booking does no bookkeeping for them at all.

use crate::time::Ns;

/// Bookings examined at once from the end when looking for a slot.
const TAIL: usize = 8;

#[derive(Debug, Clone, Default)]
pub(super) struct Timeline {
    iv: Vec<(Ns, Ns)>,
}

impl Timeline {
    pub(super) fn with_capacity(n: usize) -> Timeline {
        Timeline {
            iv: Vec::with_capacity(n),
        }
    }

    /// Books `dur` at the earliest time `>= ready` where it overlaps no
    /// other booking and returns that start. `now` is the caller's clock
    /// (`now <= ready`); intervals that ended by then may be dropped. A
    /// zero-length booking occupies nothing and starts at `ready` (the SSD
    /// model never makes one: its transfer times round up).
    #[inline]
    pub(super) fn reserve(&mut self, now: Ns, ready: Ns, dur: Ns) -> Ns {
        debug_assert!(now <= ready, "booking before now");
        if dur == 0 {
            return ready;
        }
        // Fast path: the transfer starts after every booked interval.
        match self.iv.last_mut() {
            Some(last) if ready < last.1 => {}
            Some(last) if ready == last.1 => {
                last.1 += dur;
                return ready;
            }
            Some(&mut (_, last)) => {
                if last <= now {
                    // Everything booked is in the past.
                    self.iv.clear();
                }
                self.push(now, ready, dur);
                return ready;
            }
            None => {
                self.push(now, ready, dur);
                return ready;
            }
        }
        let len = self.iv.len();
        // The slot is usually a few places from the end: count the starts
        // at or after `ready` among the last few without branching (the
        // count varies booking to booking, so a loop exit would
        // mispredict), and search the rest only if all of them are.
        let tail = &self.iv[len.saturating_sub(TAIL)..];
        let later = tail
            .iter()
            .map(|&(s, _)| usize::from(s >= ready))
            .sum::<usize>();
        let mut pos = len - later;
        if later == tail.len() {
            pos = self.iv[..pos].partition_point(|&(s, _)| s < ready);
        }
        let mut cur = ready;
        if pos > 0 {
            cur = cur.max(self.iv[pos - 1].1);
        }
        while pos < len && self.iv[pos].0 < cur + dur {
            cur = cur.max(self.iv[pos].1);
            pos += 1;
        }
        let end = cur + dur;
        let joins_prev = pos > 0 && self.iv[pos - 1].1 == cur;
        let joins_next = pos < len && self.iv[pos].0 == end;
        match (joins_prev, joins_next) {
            (true, true) => {
                self.iv[pos - 1].1 = self.iv[pos].1;
                self.iv.remove(pos);
            }
            (true, false) => self.iv[pos - 1].1 = end,
            (false, true) => self.iv[pos].0 = cur,
            (false, false) => {
                let dropped = self.make_room(now.min(ready));
                self.iv.insert(pos - dropped, (cur, end));
            }
        }
        debug_assert!(self.is_sorted_and_disjoint());
        cur
    }

    /// Appends `[at, at + dur)`.
    #[inline]
    fn push(&mut self, now: Ns, at: Ns, dur: Ns) {
        self.make_room(now.min(at));
        self.iv.push((at, at + dur));
    }

    /// When the vector is full, drops the intervals that ended by `past`
    /// (a prefix, the ends being sorted) instead of growing; returns how
    /// many went. The callers pass the earlier of `now` and the booking's
    /// start, so every dropped interval lies before the booking's slot even
    /// if a caller broke `now <= ready`.
    #[inline]
    fn make_room(&mut self, past: Ns) -> usize {
        if self.iv.len() < self.iv.capacity() {
            return 0;
        }
        let gone = self.iv.partition_point(|&(_, e)| e <= past);
        self.iv.drain(..gone);
        gone
    }

    fn is_sorted_and_disjoint(&self) -> bool {
        let ok_each = self.iv.iter().all(|(s, e)| s < e);
        let ok_between = self.iv.windows(2).all(|w| w[0].1 < w[1].0);
        ok_each && ok_between
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The specification, as plainly as it can be said: an unsorted list
    /// of busy intervals, searched by brute force.
    struct Reference {
        busy: Vec<(Ns, Ns)>,
    }

    impl Reference {
        fn reserve(&mut self, ready: Ns, dur: Ns) -> Ns {
            let overlaps = |t: Ns| self.busy.iter().any(|&(s, e)| t < e && s < t + dur);
            let mut t = ready;
            if dur > 0 {
                while overlaps(t) {
                    t = self
                        .busy
                        .iter()
                        .filter(|&&(s, e)| t < e && s < t + dur)
                        .map(|&(_, e)| e)
                        .max()
                        .expect("an overlap has an end");
                }
                self.busy.push((t, t + dur));
            }
            // An empty booking overlaps nothing: it starts when ready.
            t
        }
    }

    #[test]
    fn a_booking_takes_the_first_gap_that_fits() {
        let mut t = Timeline::with_capacity(4);
        assert_eq!(t.reserve(0, 100, 10), 100);
        assert_eq!(t.reserve(0, 200, 10), 200);
        // Fits before the first booking.
        assert_eq!(t.reserve(0, 50, 50), 50);
        // Does not fit in [110, 200): goes after the second booking.
        assert_eq!(t.reserve(0, 105, 100), 210);
        // Fits exactly in [110, 200) and joins both neighbours.
        assert_eq!(t.reserve(0, 110, 90), 110);
        assert_eq!(t.iv, [(50, 310)]);
        // A zero-length booking occupies nothing, even inside a busy one.
        assert_eq!(t.reserve(0, 60, 0), 60);
        assert_eq!(t.iv, [(50, 310)]);
    }

    #[test]
    fn the_past_is_dropped_and_does_not_block() {
        let mut t = Timeline::with_capacity(4);
        // Always about five bookings ahead of now: the vectors must stop
        // growing once they hold those, the past being dropped to make room.
        for i in 0..10_000 {
            let now = i * 100;
            assert_eq!(t.reserve(now, now + 500, 10), now + 500);
        }
        assert!(t.iv.capacity() <= 8, "grew to {}", t.iv.capacity());
        assert!(t.iv.len() <= 8, "kept {}", t.iv.len());
        // A booking after everything, with everything past: starts afresh.
        assert_eq!(t.reserve(2_000_000, 2_000_000, 10), 2_000_000);
        assert_eq!(t.iv.len(), 1);
    }

    #[test]
    fn matches_the_reference_on_a_pseudo_random_stream() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut t = Timeline::with_capacity(8);
        let mut r = Reference { busy: Vec::new() };
        let mut now = 0;
        for i in 0..20_000 {
            now += next() % 40;
            // Often exactly now: a booking may join one that just ended.
            let ready = if i % 8 == 0 { now } else { now + next() % 400 };
            let dur = if i % 17 == 0 { 0 } else { next() % 30 };
            let got = t.reserve(now, ready, dur);
            let want = r.reserve(ready, dur);
            assert_eq!(got, want, "booking {i}: ready {ready} dur {dur} now {now}");
            r.busy.retain(|&(_, e)| e > now);
        }
    }
}
