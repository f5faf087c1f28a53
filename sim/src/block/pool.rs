//! Request slots: how many requests may exist before submitters sleep.
//!
//! blk-mq has one pool of `nr_requests` (the queue depth without a
//! scheduler, `2·min(QD, 128)` with one). The 2016 legacy layer (kernel
//! 4.x `blk-core.c`) has two pools of 128, one for synchronous
//! requests (reads and SYNC writes share it) and one for the rest; a
//! submitter that had to wait becomes a "batcher" and may then take up to 32
//! requests within 20 ms even past the limit, up to one and a half times
//! it. Freeing a request below the limit wakes one sleeper of its pool.

use crate::block::request::{Flags, Op};
use crate::time::{MS, Ns};

/// Requests a batcher may take (`BLK_BATCH_REQ` / `nr_batching`).
pub const BATCH_REQUESTS: u32 = 32;
/// How long a batcher keeps the privilege (`BLK_BATCH_TIME`, HZ/50).
pub const BATCH_TIME_NS: Ns = 20 * MS;
/// Requests per pool in the legacy layer (`BLKDEV_MAX_RQ`).
pub const LEGACY_NR_REQUESTS: u32 = 128;

/// A submitter's batching state (the legacy layer's `io_context` fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    left: u32,
    since: Ns,
}

impl Batch {
    fn active(&self, now: Ns) -> bool {
        self.left == BATCH_REQUESTS || (self.left > 0 && now < self.since + BATCH_TIME_NS)
    }

    /// The submitter slept for a request: it becomes a batcher.
    pub fn set(&mut self, now: Ns) {
        if !self.active(now) {
            self.left = BATCH_REQUESTS;
            self.since = now;
        }
    }
}

/// Which pool rules apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolRules {
    /// blk-mq: one pool, a hard limit.
    Mq,
    /// Legacy request layer: sync/async pools, batching, 1.5× hard cap.
    Legacy,
}

/// The request pools of one queue.
#[derive(Clone, Debug)]
pub struct Pools {
    rules: PoolRules,
    nr_requests: u32,
    used: [u32; 2],
    full: [bool; 2],
}

impl Pools {
    /// Pools with `nr_requests` per pool.
    pub fn new(rules: PoolRules, nr_requests: u32) -> Self {
        Self {
            rules,
            nr_requests: nr_requests.max(1),
            used: [0; 2],
            full: [false; 2],
        }
    }

    /// The pool a request of `op` with `flags` draws from.
    pub fn pool_of(&self, op: Op, flags: Flags) -> usize {
        match self.rules {
            PoolRules::Mq => 0,
            PoolRules::Legacy => usize::from(!(op == Op::Read || flags.contains(Flags::SYNC))),
        }
    }

    /// Requests allocated from `pool`.
    pub fn used(&self, pool: usize) -> u32 {
        self.used[pool]
    }

    /// Tries to take a request from `pool` for a submitter with batching
    /// state `batch`.
    pub fn try_alloc(&mut self, now: Ns, pool: usize, batch: &mut Batch) -> bool {
        let nr = self.nr_requests;
        let count = self.used[pool];
        match self.rules {
            PoolRules::Mq => return self.try_alloc_unbatched().unwrap_or(false),
            PoolRules::Legacy => {
                if count + 1 >= nr && !batch.active(now) {
                    if self.full[pool] {
                        return false;
                    }
                    // The first to fill the pool becomes a batcher.
                    batch.set(now);
                    self.full[pool] = true;
                }
                if count >= 3 * nr / 2 {
                    return false;
                }
                if batch.active(now) {
                    batch.left -= 1;
                }
            }
        }
        self.used[pool] += 1;
        true
    }

    /// blk-mq's allocation, which needs no batching state; `None` under
    /// the legacy rules.
    #[inline]
    pub fn try_alloc_unbatched(&mut self) -> Option<bool> {
        if self.rules != PoolRules::Mq {
            return None;
        }
        if self.used[0] >= self.nr_requests {
            return Some(false);
        }
        self.used[0] += 1;
        Some(true)
    }

    /// A request of `pool` was freed; true when one sleeper should be woken.
    pub fn free(&mut self, pool: usize) -> bool {
        debug_assert!(self.used[pool] > 0);
        self.used[pool] -= 1;
        if self.used[pool] < self.nr_requests {
            self.full[pool] = false;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mq_is_a_hard_limit() {
        let mut p = Pools::new(PoolRules::Mq, 2);
        let mut b = Batch::default();
        assert!(p.try_alloc(0, 0, &mut b));
        assert!(p.try_alloc(0, 0, &mut b));
        assert!(!p.try_alloc(0, 0, &mut b));
        assert!(p.free(0));
        assert!(p.try_alloc(0, 0, &mut b));
    }

    #[test]
    fn legacy_pools_split_sync_from_async() {
        let p = Pools::new(PoolRules::Legacy, LEGACY_NR_REQUESTS);
        assert_eq!(p.pool_of(Op::Read, Flags::empty()), 0);
        assert_eq!(p.pool_of(Op::Write, Flags::SYNC), 0);
        assert_eq!(p.pool_of(Op::Write, Flags::BACKGROUND), 1);
    }

    #[test]
    fn a_batcher_may_pass_the_limit_up_to_one_and_a_half_times() {
        let mut p = Pools::new(PoolRules::Legacy, 128);
        let mut a = Batch::default();
        let mut b = Batch::default();
        for _ in 0..127 {
            assert!(p.try_alloc(0, 0, &mut a));
        }
        // The 128th request fills the pool: its taker becomes a batcher.
        assert!(p.try_alloc(0, 0, &mut a));
        // Another submitter must now wait.
        assert!(!p.try_alloc(0, 0, &mut b));
        // The batcher goes on within 20 ms...
        for _ in 0..31 {
            assert!(p.try_alloc(MS, 0, &mut a));
        }
        assert_eq!(p.used(0), 159);
        // ...until its 32 requests are spent.
        assert!(!p.try_alloc(MS, 0, &mut a));
        // A woken sleeper becomes a batcher, up to the 1.5x cap (192).
        b.set(2 * MS);
        let mut got = 0;
        while p.try_alloc(2 * MS, 0, &mut b) {
            got += 1;
        }
        assert_eq!(got, 32);
        let mut c = Batch::default();
        c.set(2 * MS);
        let mut more = 0;
        while p.try_alloc(2 * MS, 0, &mut c) {
            more += 1;
        }
        assert_eq!(p.used(0), 192);
        assert_eq!(more, 1);
        // Freeing above the limit wakes nobody; below it, one.
        assert!(!p.free(0));
        for _ in 0..63 {
            p.free(0);
        }
        assert_eq!(p.used(0), 128);
        assert!(p.free(0));
    }

    #[test]
    fn batching_expires_after_20_ms() {
        let mut p = Pools::new(PoolRules::Legacy, 4);
        let mut a = Batch::default();
        for _ in 0..4 {
            assert!(p.try_alloc(0, 1, &mut a));
        }
        assert!(p.try_alloc(0, 1, &mut a));
        assert!(!p.try_alloc(BATCH_TIME_NS + 1, 1, &mut a));
    }
}
