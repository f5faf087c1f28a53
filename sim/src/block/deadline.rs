//! mq-deadline, as pure state: per-direction sector order and FIFO
//! deadlines, read preference with write starvation, batches
//! (kernel `block/mq-deadline.c`; constants \[S16\]).
//!
//! Requests are named by `u32` ids. Queues are sorted `Vec`s that keep
//! their capacity, so steady state allocates nothing.

use crate::time::{MS, Ns, SEC};

/// Read deadline (`read_expire`, HZ/2).
pub const READ_EXPIRE_NS: Ns = 500 * MS;
/// Write deadline (`write_expire`, 5·HZ).
pub const WRITE_EXPIRE_NS: Ns = 5 * SEC;
/// Read batches allowed to pass waiting writes (`writes_starved`).
pub const WRITES_STARVED: u32 = 2;
/// Requests per batch in sector order (`fifo_batch`).
pub const FIFO_BATCH: u32 = 16;

#[derive(Clone, Copy, Debug)]
struct Entry {
    id: u32,
    sector: u64,
    deadline: Ns,
    seq: u64,
}

#[derive(Debug, Default)]
struct DirQueue {
    /// By (sector, arrival).
    sorted: Vec<Entry>,
    /// Sector after the last request dispatched in this direction.
    next_sector: u64,
}

impl DirQueue {
    fn insert(&mut self, e: Entry) {
        let pos = self
            .sorted
            .partition_point(|x| (x.sector, x.seq) < (e.sector, e.seq));
        self.sorted.insert(pos, e);
    }

    /// Index of the oldest request (the FIFO head).
    fn fifo_head(&self) -> Option<usize> {
        (0..self.sorted.len()).min_by_key(|&i| self.sorted[i].seq)
    }

    /// Index of the first request at or after `next_sector`; `None` past
    /// the last one (the kernel then restarts at the oldest, not at the
    /// lowest sector).
    fn next_in_order(&self) -> Option<usize> {
        let i = self.sorted.partition_point(|x| x.sector < self.next_sector);
        (i < self.sorted.len()).then_some(i)
    }

    fn take(&mut self, i: usize, len_sectors: u64) -> u32 {
        let e = self.sorted.remove(i);
        self.next_sector = e.sector + len_sectors;
        e.id
    }
}

/// Direction of a request for the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DDir {
    /// Reads.
    Read = 0,
    /// Writes (and discards).
    Write = 1,
}

/// The scheduler state of one queue.
#[derive(Debug, Default)]
pub struct Deadline {
    dirs: [DirQueue; 2],
    last_dir: Option<DDir>,
    batching: u32,
    starved: u32,
    seq: u64,
}

impl Deadline {
    /// An empty scheduler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Requests queued.
    pub fn len(&self) -> usize {
        self.dirs[0].sorted.len() + self.dirs[1].sorted.len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Queues request `id` of direction `dir` starting at byte `offset`.
    pub fn insert(&mut self, now: Ns, id: u32, dir: DDir, offset: u64) {
        let expire = match dir {
            DDir::Read => READ_EXPIRE_NS,
            DDir::Write => WRITE_EXPIRE_NS,
        };
        self.seq += 1;
        self.dirs[dir as usize].insert(Entry {
            id,
            sector: offset / 512,
            deadline: now + expire,
            seq: self.seq,
        });
    }

    /// The next request to dispatch, if any; `len_of(id)` gives its length
    /// in bytes (to know where the head ends up).
    pub fn dispatch(&mut self, now: Ns, len_of: impl Fn(u32) -> u64) -> Option<u32> {
        // Continue the batch in sector order.
        if let Some(d) = self.last_dir
            && self.batching < FIFO_BATCH
            && let Some(i) = self.continue_batch(d)
        {
            self.batching += 1;
            let id = self.dirs[d as usize].sorted[i].id;
            return Some(self.dirs[d as usize].take(i, len_of(id).div_ceil(512)));
        }
        let reads = !self.dirs[0].sorted.is_empty();
        let writes = !self.dirs[1].sorted.is_empty();
        let dir = if reads {
            if writes && self.starved >= WRITES_STARVED {
                DDir::Write
            } else {
                if writes {
                    self.starved += 1;
                }
                DDir::Read
            }
        } else if writes {
            DDir::Write
        } else {
            return None;
        };
        if dir == DDir::Write {
            self.starved = 0;
        }
        let q = &self.dirs[dir as usize];
        // A new batch starts at the oldest request if it has expired (or
        // the direction changed), else where the sector sweep left off.
        let head = q.fifo_head()?;
        let expired = q.sorted[head].deadline <= now;
        let i = if expired || self.last_dir != Some(dir) {
            head
        } else {
            q.next_in_order().unwrap_or(head)
        };
        self.last_dir = Some(dir);
        self.batching = 1;
        let id = self.dirs[dir as usize].sorted[i].id;
        Some(self.dirs[dir as usize].take(i, len_of(id).div_ceil(512)))
    }

    fn continue_batch(&self, d: DDir) -> Option<usize> {
        let q = &self.dirs[d as usize];
        let i = q.sorted.partition_point(|x| x.sector < q.next_sector);
        (i < q.sorted.len()).then_some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(d: &mut Deadline, now: Ns) -> Vec<u32> {
        std::iter::from_fn(|| d.dispatch(now, |_| 4096)).collect()
    }

    #[test]
    fn a_batch_sweeps_in_sector_order() {
        let mut d = Deadline::new();
        for (id, off) in [(1, 40_960), (2, 0), (3, 81_920), (4, 4096)] {
            d.insert(0, id, DDir::Write, off);
        }
        // The batch starts at the oldest and sweeps upward; past the top it
        // restarts at the oldest left (2), then sweeps up again.
        assert_eq!(drain(&mut d, 0), vec![1, 3, 2, 4]);
        assert!(d.is_empty());
    }

    #[test]
    fn past_the_top_a_new_batch_starts_at_the_oldest() {
        let mut d = Deadline::new();
        // Inserted A(100), C(50), B(10): the kernel dispatches A, C, B.
        d.insert(0, 1, DDir::Write, 100 * 512);
        d.insert(0, 3, DDir::Write, 50 * 512);
        d.insert(0, 2, DDir::Write, 10 * 512);
        assert_eq!(d.dispatch(0, |_| 512), Some(1));
        // Batch continues only upward: nothing above 101, the batch ends.
        assert_eq!(d.dispatch(0, |_| 512), Some(3));
        assert_eq!(d.dispatch(0, |_| 512), Some(2));
    }

    #[test]
    fn reads_are_preferred_until_writes_starve() {
        let mut d = Deadline::new();
        for i in 0..40 {
            d.insert(0, 100 + i, DDir::Write, u64::from(i) * 4096);
        }
        for i in 0..40 {
            d.insert(0, i, DDir::Read, (1 << 30) + u64::from(i) * 4096);
        }
        let order = drain(&mut d, 0);
        // Two read batches of 16, then a write batch of 16.
        assert!(order[..32].iter().all(|&id| id < 100), "{order:?}");
        assert!(order[32..48].iter().all(|&id| id >= 100), "{order:?}");
        assert!(order[48..56].iter().all(|&id| id < 100), "{order:?}");
        assert_eq!(order.len(), 80);
    }

    #[test]
    fn an_expired_request_starts_the_next_batch() {
        let mut d = Deadline::new();
        d.insert(0, 1, DDir::Read, 1 << 20);
        d.insert(0, 2, DDir::Read, 0);
        assert_eq!(d.dispatch(0, |_| 4096), Some(1));
        // A new far-away read arrives first in sector order, but an older one
        // waiting past its deadline wins when a batch restarts.
        d.insert(1, 3, DDir::Read, 2 << 20);
        for _ in 0..FIFO_BATCH {
            d.insert(1, 9, DDir::Write, 0);
        }
        assert_eq!(d.dispatch(1, |_| 4096), Some(3));
        assert_eq!(d.dispatch(READ_EXPIRE_NS + 1, |_| 4096), Some(2));
    }
}
