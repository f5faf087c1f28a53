//! A storage engine's own policies, written against iolab's extension
//! points as a user would, and checked by `iolab-verification`'s suites
//! from this crate's tests (`tests/conformance.rs`, and under
//! `--cfg iolab_loom` `tests/loom.rs`).
//!
//! [`wrong`] holds deliberately wrong twins, one per suite, which the
//! same tests show being caught.

use std::collections::VecDeque;

use iolab_flush::sync::{AtomicBool, Condvar, Mutex, MutexGuard, Ordering};
use iolab_flush::{PoolError, ReservationPool, TicketError};
use iolab_tiering::{Candidate, ChunkAllocator, ChunkType, ReadPolicy, ReadRequest, SelectRequest};
use iolab_wbt::{Admission, DepthAt, DepthNow, DepthPolicy, Limits, ThrottleClosed};

pub mod wrong;

/// A RAID1 read policy: the copy whose device has served reads fastest
/// on average, then the one with fewer reads in flight, then the lowest.
#[derive(Clone, Copy, Debug, Default)]
pub struct ShortestWait;

impl ReadPolicy for ShortestWait {
    fn name(&self) -> &'static str {
        "shortest-wait"
    }

    fn preferred(&mut self, req: &ReadRequest<'_>) -> usize {
        let m = req.mirrors();
        let key = |i: usize| {
            let avg = m[i].read_wait_ns / m[i].read_ios.max(1);
            (avg, m[i].inflight)
        };
        req.range()
            .min_by_key(|&i| (key(i), i))
            .unwrap_or(req.first())
    }

    /// Waits grow where reads go, so under load every copy serves some.
    fn balances(&self) -> bool {
        true
    }
}

/// A chunk allocator: metadata chunks on non-rotational devices first,
/// everything else in stock order.
#[derive(Clone, Copy, Debug, Default)]
pub struct MetadataOnFlash;

impl ChunkAllocator for MetadataOnFlash {
    fn name(&self) -> &'static str {
        "metadata-on-flash"
    }

    fn select(&self, req: &SelectRequest, cands: &mut Vec<Candidate>) {
        if matches!(req.ty, ChunkType::Metadata | ChunkType::System) {
            // A stable sort keeps the stock order within each class.
            cands.sort_by_key(|c| c.rotational);
        }
    }
}

/// A WBT scaling step: the queue depth halved per step, never deeper
/// than the device's queue.
#[derive(Clone, Copy, Debug, Default)]
pub struct Halving;

impl DepthPolicy for Halving {
    fn name(&self) -> &str {
        "halving"
    }

    fn limits(&self, queue_depth: u32, step: i32) -> DepthAt {
        let max_depth = (queue_depth >> step.clamp(0, 31)).max(1);
        DepthAt {
            limits: Limits {
                max_depth,
                normal: max_depth.div_ceil(2),
                background: max_depth.div_ceil(4),
            },
            capped: step <= 0,
        }
    }

    fn scale_up(&self, now: DepthNow) -> Option<i32> {
        (now.step > 0).then(|| now.step - 1)
    }

    fn scale_down(&self, now: DepthNow, _hard: bool) -> Option<i32> {
        (now.limits.max_depth > 1).then(|| now.step + 1)
    }
}

/// A queue of waiters served in order, each by a number, with the
/// numbers already let through.
#[derive(Debug, Default)]
struct Line {
    next: u64,
    waiting: VecDeque<(u64, u64)>,
    served: Vec<u64>,
    closed: bool,
}

impl Line {
    fn join(&mut self, amount: u64) -> u64 {
        let me = self.next;
        self.next += 1;
        self.waiting.push_back((me, amount));
        me
    }

    fn take_served(&mut self, me: u64) -> bool {
        match self.served.iter().position(|&n| n == me) {
            Some(k) => {
                self.served.swap_remove(k);
                true
            }
            None => false,
        }
    }

    fn leave(&mut self, me: u64) {
        self.waiting.retain(|&(n, _)| n != me);
    }

    /// Let through, in order, every front waiter `fits` admits.
    fn serve(&mut self, mut fits: impl FnMut(u64) -> bool) {
        while let Some(&(n, amount)) = self.waiting.front() {
            if !fits(amount) {
                break;
            }
            self.waiting.pop_front();
            self.served.push(n);
        }
    }
}

/// A reservation pool: bytes granted in the order asked.
#[derive(Debug)]
pub struct TicketPool {
    capacity: u64,
    state: Mutex<(u64, Line)>,
    cv: Condvar,
}

impl TicketPool {
    /// A pool of `capacity` bytes, all free.
    pub fn new(capacity: u64) -> TicketPool {
        TicketPool {
            capacity,
            state: Mutex::new((capacity, Line::default())),
            cv: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, (u64, Line)> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn grant(s: &mut (u64, Line)) {
        let (free, line) = s;
        line.serve(|b| {
            let fits = b <= *free;
            if fits {
                *free -= b;
            }
            fits
        });
    }

    fn wait_for(&self, bytes: u64, cancel: Option<&AtomicBool>) -> Result<(), PoolError> {
        let mut s = self.lock();
        if s.1.closed {
            return Err(PoolError::Closed);
        }
        if s.1.waiting.is_empty() && bytes <= s.0 {
            s.0 -= bytes;
            return Ok(());
        }
        let me = s.1.join(bytes);
        loop {
            if s.1.take_served(me) {
                return Ok(());
            }
            let why = if cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
                Some(PoolError::Ticket(TicketError::Eintr))
            } else if s.1.closed {
                Some(PoolError::Closed)
            } else {
                None
            };
            if let Some(why) = why {
                s.1.leave(me);
                // Those behind may fit now.
                Self::grant(&mut s);
                drop(s);
                self.cv.notify_all();
                return Err(why);
            }
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl ReservationPool for TicketPool {
    fn reserve_bytes(&self, bytes: u64) -> Result<(), PoolError> {
        self.wait_for(bytes, None)
    }

    fn reserve_bytes_cancellable(&self, bytes: u64, cancel: &AtomicBool) -> Result<(), PoolError> {
        self.wait_for(bytes, Some(cancel))
    }

    fn release_bytes(&self, bytes: u64) {
        let mut s = self.lock();
        s.0 += bytes;
        Self::grant(&mut s);
        drop(s);
        self.cv.notify_all();
    }

    fn notify(&self) {
        drop(self.lock());
        self.cv.notify_all();
    }

    fn close(&self) {
        self.lock().1.closed = true;
        self.cv.notify_all();
    }

    fn waiters(&self) -> usize {
        self.lock().1.waiting.len()
    }

    fn held_bytes(&self) -> u64 {
        self.capacity - self.lock().0
    }
}

/// An admission gate: at most `limit` requests in flight, waiters let
/// in in the order they came.
#[derive(Debug)]
pub struct FifoGate {
    limit: u32,
    state: Mutex<(u32, Line)>,
    cv: Condvar,
}

impl FifoGate {
    /// A gate letting `limit` requests in at once.
    pub fn new(limit: u32) -> FifoGate {
        FifoGate {
            limit,
            state: Mutex::new((0, Line::default())),
            cv: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, (u32, Line)> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Admission for FifoGate {
    fn admit(&self) -> Result<(), ThrottleClosed> {
        let mut s = self.lock();
        if s.1.closed {
            return Err(ThrottleClosed);
        }
        if s.1.waiting.is_empty() && s.0 < self.limit {
            s.0 += 1;
            return Ok(());
        }
        let me = s.1.join(1);
        loop {
            if s.1.take_served(me) {
                return Ok(());
            }
            if s.1.closed {
                s.1.leave(me);
                return Err(ThrottleClosed);
            }
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn release(&self) {
        let mut s = self.lock();
        s.0 -= 1;
        let limit = self.limit;
        let (in_flight, line) = &mut *s;
        line.serve(|_| {
            let fits = *in_flight < limit;
            if fits {
                *in_flight += 1;
            }
            fits
        });
        drop(s);
        self.cv.notify_all();
    }

    fn close(&self) {
        self.lock().1.closed = true;
        self.cv.notify_all();
    }

    fn waiters(&self) -> usize {
        self.lock().1.waiting.len()
    }
}
