//! The event queue: a 4-ary min-heap keyed by `(time, sequence)`.
//!
//! The sequence number is a global insertion counter, so events at the same
//! nanosecond pop in the order they were scheduled: the order is total and
//! does not depend on anything but the inputs. A 4-ary heap on a flat `Vec`
//! is shallower than a binary heap and keeps siblings in one cache line.

use crate::time::Ns;

/// A pending event; `key` packs `(time << 64) | seq` so one integer
/// comparison orders by time, then by insertion.
#[derive(Clone, Copy)]
struct Entry<E: Copy> {
    key: u128,
    event: E,
}

impl<E: Copy> Entry<E> {
    #[inline]
    fn key(&self) -> u128 {
        self.key
    }

    #[inline]
    fn time(&self) -> Ns {
        (self.key >> 64) as Ns
    }
}

/// Pending events of one simulation run.
pub struct EventQueue<E: Copy> {
    heap: Vec<Entry<E>>,
    seq: u64,
    now: Ns,
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue with room for `capacity` pending events before it grows.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            heap: Vec::with_capacity(capacity),
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
        self.heap.len()
    }

    /// True when nothing is pending.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedules `event` at `time`. Scheduling into the past is a logic error.
    #[inline]
    pub fn push(&mut self, time: Ns, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let entry = Entry {
            key: (u128::from(time) << 64) | u128::from(self.seq),
            event,
        };
        self.seq += 1;
        self.heap.push(entry);
        self.sift_up(self.heap.len() - 1);
    }

    /// Time of the earliest pending event.
    #[inline]
    pub fn peek_time(&self) -> Option<Ns> {
        self.heap.first().map(Entry::time)
    }

    /// Removes the earliest event and advances `now` to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ns, E)> {
        let last = self.heap.pop()?;
        let top = if self.heap.is_empty() {
            last
        } else {
            let top = self.heap[0];
            self.heap[0] = last;
            self.sift_down(0);
            top
        };
        let time = top.time();
        debug_assert!(time >= self.now);
        self.now = time;
        Some((time, top.event))
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize) {
        let item = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.heap[parent].key() <= item.key() {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = item;
    }

    #[inline]
    fn sift_down(&mut self, mut i: usize) {
        let len = self.heap.len();
        let item = self.heap[i];
        loop {
            let first = 4 * i + 1;
            let best = if first + 4 <= len {
                // A full node: a two-round tournament the compiler can do
                // with conditional moves (which child wins is a coin flip,
                // so a branch would mispredict half the time).
                let k = |c: usize| self.heap[c].key();
                let a = first + usize::from(k(first + 1) < k(first));
                let b = first + 2 + usize::from(k(first + 3) < k(first + 2));
                if k(b) < k(a) { b } else { a }
            } else if first < len {
                let mut best = first;
                for c in first + 1..len {
                    if self.heap[c].key() < self.heap[best].key() {
                        best = c;
                    }
                }
                best
            } else {
                break;
            };
            if item.key() <= self.heap[best].key() {
                break;
            }
            self.heap[i] = self.heap[best];
            i = best;
        }
        self.heap[i] = item;
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
