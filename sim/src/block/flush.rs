//! The cache-flush sequencer (the kernel's `block/blk-flush.c` rules), as
//! pure state.
//!
//! A request carrying PREFLUSH and/or FUA on a device with a volatile write
//! cache runs through up to three steps: a cache flush before the data, the
//! data itself, and a flush after the data when the device cannot do FUA
//! natively (libata before v6.x). Flushes are shared: at most one FLUSH
//! command is in flight per queue; requests that need a flush while one runs
//! wait for the next. The next flush is held back while sequenced data is
//! still in flight, so that it can cover that data too, but never longer than
//! [`PENDING_TIMEOUT_NS`].

use crate::block::request::Flags;
use crate::time::{Ns, SEC};
use std::collections::VecDeque;

/// How long a pending flush may wait for sequenced data (5 s in the kernel).
pub const PENDING_TIMEOUT_NS: Ns = 5 * SEC;

/// Step bit: a flush before the data.
pub const PREFLUSH: u8 = 1;
/// Step bit: the data.
pub const DATA: u8 = 2;
/// Step bit: a flush after the data (FUA emulation).
pub const POSTFLUSH: u8 = 4;

/// The steps a request needs (a bit set of [`PREFLUSH`], [`DATA`],
/// [`POSTFLUSH`]); 0 means it bypasses the sequencer.
pub fn steps(flags: Flags, has_data: bool, write_cache: bool, native_fua: bool) -> u8 {
    if !write_cache {
        // Without a volatile cache PREFLUSH and FUA mean nothing; a bare
        // flush completes at once.
        return 0;
    }
    let mut s = 0;
    if flags.contains(Flags::PREFLUSH) {
        s |= PREFLUSH;
    }
    if has_data {
        if s != 0 || (flags.contains(Flags::FUA) && !native_fua) {
            s |= DATA;
        }
        if flags.contains(Flags::FUA) && !native_fua {
            s |= POSTFLUSH;
        }
    }
    s
}

/// True when a data request must carry FUA to the device.
pub fn device_fua(flags: Flags, write_cache: bool, native_fua: bool) -> bool {
    write_cache && native_fua && flags.contains(Flags::FUA)
}

/// What to do with a sequenced request next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Wait for a flush (it is now on the pending list).
    AwaitFlush,
    /// Dispatch its data.
    Data,
    /// All steps done: complete it.
    Complete,
}

/// One queue's flush state. Requests are named by `u32` ids chosen by the
/// caller (the simulator uses tags).
#[derive(Debug, Default)]
pub struct FlushQueue {
    pending: VecDeque<u32>,
    running: Vec<u32>,
    flush_inflight: bool,
    data_inflight: u32,
    pending_since: Ns,
}

impl FlushQueue {
    /// An idle queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next step of a request whose remaining steps are `remaining`;
    /// queues it for a flush when that is the step.
    pub fn advance(&mut self, now: Ns, id: u32, remaining: u8) -> Next {
        if remaining & PREFLUSH != 0 || (remaining & DATA == 0 && remaining & POSTFLUSH != 0) {
            if self.pending.is_empty() {
                self.pending_since = now;
            }
            self.pending.push_back(id);
            Next::AwaitFlush
        } else if remaining & DATA != 0 {
            self.data_inflight += 1;
            Next::Data
        } else {
            Next::Complete
        }
    }

    /// Sequenced data finished; returns the remaining steps without DATA.
    pub fn data_done(&mut self, remaining: u8) -> u8 {
        debug_assert!(self.data_inflight > 0);
        self.data_inflight -= 1;
        remaining & !DATA
    }

    /// Should a FLUSH be issued now? `Ok(true)`: yes, the pending requests
    /// moved to the running list (see [`FlushQueue::running`]);
    /// `Err(deadline)`: not before `deadline` unless data completes first;
    /// `Ok(false)`: nothing to do.
    pub fn kick(&mut self, now: Ns) -> Result<bool, Ns> {
        if self.flush_inflight || self.pending.is_empty() {
            return Ok(false);
        }
        let deadline = self.pending_since + PENDING_TIMEOUT_NS;
        if self.data_inflight > 0 && now < deadline {
            return Err(deadline);
        }
        debug_assert!(self.running.is_empty());
        self.running.extend(self.pending.drain(..));
        self.flush_inflight = true;
        Ok(true)
    }

    /// The requests the in-flight flush covers.
    pub fn running(&self) -> &[u32] {
        &self.running
    }

    /// The FLUSH completed: returns the covered requests (to advance each,
    /// clearing the flush step it waited for) in order.
    pub fn flush_done(&mut self, out: &mut Vec<u32>) {
        debug_assert!(self.flush_inflight);
        self.flush_inflight = false;
        out.append(&mut self.running);
    }

    /// True while a FLUSH command is outstanding.
    pub fn flush_inflight(&self) -> bool {
        self.flush_inflight
    }
}

/// The remaining steps after the flush a request waited for.
pub fn after_flush(remaining: u8) -> u8 {
    if remaining & PREFLUSH != 0 {
        remaining & !PREFLUSH
    } else {
        remaining & !POSTFLUSH
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_policy_follows_the_device() {
        let pf = Flags::PREFLUSH;
        let fua = Flags::FUA;
        let both = pf.with(fua);
        // No write cache: everything bypasses.
        assert_eq!(steps(both, true, false, false), 0);
        // SATA-like: no native FUA -> post-flush.
        assert_eq!(steps(both, true, true, false), PREFLUSH | DATA | POSTFLUSH);
        assert_eq!(steps(fua, true, true, false), DATA | POSTFLUSH);
        // NVMe-like: native FUA, data carries it.
        assert_eq!(steps(both, true, true, true), PREFLUSH | DATA);
        assert_eq!(steps(fua, true, true, true), 0);
        assert!(device_fua(fua, true, true));
        assert!(!device_fua(fua, true, false));
        // Bare flush.
        assert_eq!(steps(pf, false, true, false), PREFLUSH);
        // Plain write.
        assert_eq!(steps(Flags::SYNC, true, true, false), 0);
    }

    #[test]
    fn flushes_coalesce_and_wait_for_sequenced_data() {
        let mut q = FlushQueue::new();
        // Request 1: PREFLUSH+DATA+POSTFLUSH; request 2: bare flush.
        assert_eq!(
            q.advance(0, 1, PREFLUSH | DATA | POSTFLUSH),
            Next::AwaitFlush
        );
        assert_eq!(q.advance(0, 2, PREFLUSH), Next::AwaitFlush);
        assert_eq!(q.kick(0), Ok(true));
        assert_eq!(q.running(), &[1, 2]);
        // A third request while the flush runs waits for the next one.
        assert_eq!(q.advance(10, 3, PREFLUSH), Next::AwaitFlush);
        assert_eq!(q.kick(10), Ok(false));
        let mut done = Vec::new();
        q.flush_done(&mut done);
        assert_eq!(done, vec![1, 2]);
        // Request 1 goes on to its data.
        let r1 = after_flush(PREFLUSH | DATA | POSTFLUSH);
        assert_eq!(q.advance(20, 1, r1), Next::Data);
        // Request 2 is done.
        assert_eq!(q.advance(20, 2, after_flush(PREFLUSH)), Next::Complete);
        // Request 3's flush is held back while data is in flight...
        assert_eq!(q.kick(20), Err(10 + PENDING_TIMEOUT_NS));
        // ...until the data completes; then request 1 joins the next flush.
        let r1 = q.data_done(r1);
        assert_eq!(q.advance(30, 1, r1), Next::AwaitFlush);
        assert_eq!(q.kick(30), Ok(true));
        assert_eq!(q.running(), &[3, 1]);
    }

    #[test]
    fn a_pending_flush_is_not_held_back_forever() {
        let mut q = FlushQueue::new();
        assert_eq!(q.advance(0, 1, DATA | POSTFLUSH), Next::Data);
        assert_eq!(q.advance(5, 2, PREFLUSH), Next::AwaitFlush);
        assert_eq!(q.kick(5), Err(5 + PENDING_TIMEOUT_NS));
        assert_eq!(q.kick(5 + PENDING_TIMEOUT_NS), Ok(true));
    }
}
