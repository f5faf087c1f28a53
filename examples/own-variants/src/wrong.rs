//! Deliberately wrong twins of the policies in the crate root, one per
//! suite, each breaking the rule its suite checks. The tests show each
//! caught, with the message a user would see.

use iolab_flush::sync::{AtomicBool, Condvar, Mutex};
use iolab_flush::{PoolError, ReservationPool};
use iolab_tiering::{Candidate, ChunkAllocator, ReadPolicy, ReadRequest, SelectRequest};
use iolab_wbt::{Admission, DepthAt, DepthNow, DepthPolicy, ThrottleClosed};

use crate::Halving;

/// Proposes the copy just past the request's last one.
#[derive(Clone, Copy, Debug, Default)]
pub struct PastTheEnd;

impl ReadPolicy for PastTheEnd {
    fn name(&self) -> &'static str {
        "past-the-end"
    }

    fn preferred(&mut self, req: &ReadRequest<'_>) -> usize {
        req.first() + req.n()
    }
}

/// Gives the best candidate twice, so a mirrored chunk would put both
/// copies on one device.
#[derive(Clone, Copy, Debug, Default)]
pub struct DuplicateCandidate;

impl ChunkAllocator for DuplicateCandidate {
    fn name(&self) -> &'static str {
        "duplicate-candidate"
    }

    fn select(&self, _req: &SelectRequest, cands: &mut Vec<Candidate>) {
        if let Some(&first) = cands.first() {
            cands.insert(1, first);
        }
    }
}

/// [`Halving`], but squeezing two steps at once.
#[derive(Clone, Copy, Debug, Default)]
pub struct Leaping;

impl DepthPolicy for Leaping {
    fn name(&self) -> &str {
        "leaping"
    }

    fn limits(&self, queue_depth: u32, step: i32) -> DepthAt {
        Halving.limits(queue_depth, step)
    }

    fn scale_up(&self, now: DepthNow) -> Option<i32> {
        Halving.scale_up(now)
    }

    fn scale_down(&self, now: DepthNow, _hard: bool) -> Option<i32> {
        (now.limits.max_depth > 1).then(|| now.step + 2)
    }
}

/// A gate that looks for a slot under the lock, lets go of it, and only
/// then sleeps: a release between the two is never seen (a lost wakeup).
#[derive(Debug)]
pub struct LostWakeupGate {
    limit: u32,
    state: Mutex<(u32, usize, bool)>,
    cv: Condvar,
}

impl LostWakeupGate {
    /// A gate letting `limit` requests in at once.
    pub fn new(limit: u32) -> LostWakeupGate {
        LostWakeupGate {
            limit,
            state: Mutex::new((0, 0, false)),
            cv: Condvar::new(),
        }
    }
}

impl Admission for LostWakeupGate {
    fn admit(&self) -> Result<(), ThrottleClosed> {
        loop {
            {
                let mut s = self.state.lock().unwrap();
                if s.2 {
                    return Err(ThrottleClosed);
                }
                if s.0 < self.limit {
                    s.0 += 1;
                    return Ok(());
                }
            }
            // The wrong step: the lock was let go, a release may come and
            // go here, and the wait below misses it.
            let mut s = self.state.lock().unwrap();
            s.1 += 1;
            let mut s = self.cv.wait(s).unwrap();
            s.1 -= 1;
        }
    }

    fn release(&self) {
        self.state.lock().unwrap().0 -= 1;
        self.cv.notify_all();
    }

    fn close(&self) {
        self.state.lock().unwrap().2 = true;
        self.cv.notify_all();
    }

    fn waiters(&self) -> usize {
        self.state.lock().unwrap().1
    }
}

/// A pool that grants whoever fits, waiting or not: a small late request
/// takes space the front waiter needs (an unfair grant).
#[derive(Debug)]
pub struct UnfairPool {
    capacity: u64,
    state: Mutex<(u64, usize, bool)>,
    cv: Condvar,
}

impl UnfairPool {
    /// A pool of `capacity` bytes, all free.
    pub fn new(capacity: u64) -> UnfairPool {
        UnfairPool {
            capacity,
            state: Mutex::new((capacity, 0, false)),
            cv: Condvar::new(),
        }
    }

    fn wait_for(&self, bytes: u64, cancel: Option<&AtomicBool>) -> Result<(), PoolError> {
        let mut s = self.state.lock().unwrap();
        let mut queued = false;
        loop {
            if s.2 {
                s.1 -= usize::from(queued);
                return Err(PoolError::Closed);
            }
            if bytes <= s.0 {
                s.0 -= bytes;
                s.1 -= usize::from(queued);
                return Ok(());
            }
            if cancel.is_some_and(|c| c.load(iolab_flush::sync::Ordering::SeqCst)) {
                s.1 -= usize::from(queued);
                return Err(PoolError::Ticket(iolab_flush::TicketError::Eintr));
            }
            if !queued {
                queued = true;
                s.1 += 1;
            }
            s = self.cv.wait(s).unwrap();
        }
    }
}

impl ReservationPool for UnfairPool {
    fn reserve_bytes(&self, bytes: u64) -> Result<(), PoolError> {
        self.wait_for(bytes, None)
    }

    fn reserve_bytes_cancellable(&self, bytes: u64, cancel: &AtomicBool) -> Result<(), PoolError> {
        self.wait_for(bytes, Some(cancel))
    }

    fn release_bytes(&self, bytes: u64) {
        self.state.lock().unwrap().0 += bytes;
        self.cv.notify_all();
    }

    fn notify(&self) {
        drop(self.state.lock().unwrap());
        self.cv.notify_all();
    }

    fn close(&self) {
        self.state.lock().unwrap().2 = true;
        self.cv.notify_all();
    }

    fn waiters(&self) -> usize {
        self.state.lock().unwrap().1
    }

    fn held_bytes(&self) -> u64 {
        self.capacity - self.state.lock().unwrap().0
    }
}
