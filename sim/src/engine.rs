//! The event queue: a 4-ary min-heap keyed by `(time, sequence)`.
//!
//! The sequence number is a global insertion counter, so events at the same
//! nanosecond pop in the order they were scheduled: the order is total and
//! does not depend on anything but the inputs. A 4-ary heap on a flat `Vec`
//! is shallower than a binary heap.

use crate::time::Ns;

/// Packs `(time << 64) | seq` so one integer comparison orders by time,
/// then by insertion.
#[inline]
fn key(time: Ns, seq: u64) -> u128 {
    (u128::from(time) << 64) | u128::from(seq)
}

#[inline]
fn time_of(key: u128) -> Ns {
    (key >> 64) as Ns
}

/// Pending events of one simulation run.
///
/// The heap is two parallel vectors: the keys, which every step of a sift
/// compares, and the events, which it only moves. Four sibling keys are 64
/// bytes, one cache line's worth.
pub struct EventQueue<E: Copy> {
    keys: Vec<u128>,
    events: Vec<E>,
    seq: u64,
    now: Ns,
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue with room for `capacity` pending events before it grows.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            keys: Vec::with_capacity(capacity),
            events: Vec::with_capacity(capacity),
            seq: 0,
            now: 0,
        }
    }

    /// Time of the last popped event.
    #[inline]
    pub fn now(&self) -> Ns {
        self.now
    }

    /// Number of pending events.
    #[inline]
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when nothing is pending.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Schedules `event` at `time`. Scheduling into the past is a logic error.
    #[inline]
    pub fn push(&mut self, time: Ns, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let k = key(time, self.seq);
        self.seq += 1;
        self.keys.push(k);
        self.events.push(event);
        self.sift_up(self.keys.len() - 1, k, event);
    }

    /// Time of the earliest pending event.
    #[inline]
    pub fn peek_time(&self) -> Option<Ns> {
        self.keys.first().copied().map(time_of)
    }

    /// Removes the earliest event and advances `now` to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ns, E)> {
        let last_key = self.keys.pop()?;
        let last_event = self.events.pop()?;
        let (top_key, top_event) = if self.keys.is_empty() {
            (last_key, last_event)
        } else {
            let top = (self.keys[0], self.events[0]);
            self.sift_down(0, last_key, last_event);
            top
        };
        let time = time_of(top_key);
        debug_assert!(time >= self.now);
        self.now = time;
        Some((time, top_event))
    }

    /// Places `(k, e)` at or above the hole at `i`.
    #[inline]
    fn sift_up(&mut self, mut i: usize, k: u128, e: E) {
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.keys[parent] <= k {
                break;
            }
            self.keys[i] = self.keys[parent];
            self.events[i] = self.events[parent];
            i = parent;
        }
        self.keys[i] = k;
        self.events[i] = e;
    }

    /// Places `(k, e)` at or below the hole at `i`.
    #[inline]
    fn sift_down(&mut self, mut i: usize, k: u128, e: E) {
        let len = self.keys.len();
        loop {
            let first = 4 * i + 1;
            let best = if first + 4 <= len {
                // A full node: a two-round tournament the compiler can do
                // with conditional moves (which child wins is a coin flip,
                // so a branch would mispredict half the time).
                let c = &self.keys[first..first + 4];
                let a = usize::from(c[1] < c[0]);
                let b = 2 + usize::from(c[3] < c[2]);
                first + if c[b] < c[a] { b } else { a }
            } else if first < len {
                let mut best = first;
                for c in first + 1..len {
                    if self.keys[c] < self.keys[best] {
                        best = c;
                    }
                }
                best
            } else {
                break;
            };
            if k <= self.keys[best] {
                break;
            }
            self.keys[i] = self.keys[best];
            self.events[i] = self.events[best];
            i = best;
        }
        self.keys[i] = k;
        self.events[i] = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::with_capacity(4);
        q.push(30, 'c');
        q.push(10, 'a');
        q.push(30, 'd');
        q.push(20, 'b');
        q.push(10, 'e');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'e', 'b', 'c', 'd']);
        assert_eq!(q.now(), 30);
    }

    #[test]
    fn matches_a_sorted_reference_on_a_pseudo_random_stream() {
        let mut q = EventQueue::with_capacity(16);
        let mut reference = Vec::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for (seq, round) in (0..2000u64).enumerate() {
            let seq = seq as u32;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let t = q.now() + x % 1000;
            q.push(t, seq);
            reference.push((t, seq));
            if round % 3 == 0 {
                reference.sort_unstable();
                let want = reference.remove(0);
                assert_eq!(q.pop(), Some(want));
            }
        }
        reference.sort_unstable();
        for want in reference {
            assert_eq!(q.pop(), Some(want));
        }
        assert!(q.is_empty());
    }
}
