//! The throttle's face as a trait: what a user's own threaded throttle
//! implements to be checked by the loom models of
//! `iolab_verification::wbt::admission` (the limit is never exceeded,
//! no lost wakeup, FIFO hand-off, close fails every waiter), the same
//! models [`Throttle`] goes through.
//!
//! An implementation takes its locks, condition variables, atomics and
//! threads from [`sync`](crate::sync), which is loom's under
//! `--cfg iolab_loom`, so the models see every wait and notify.

use super::{Clock, Throttle, ThrottleClosed};
use crate::{Class, Op, OpFlags, ReqFlags, Rq};

/// Admission of one class of request (buffered writes) with a limit on
/// how many are in flight.
///
/// The rules the models hold an implementation to:
///
/// * never more admitted and not yet released than the limit;
/// * a release wakes the waiter it lets in (no lost wakeup);
/// * waiters are let in in the order they started waiting (FIFO);
/// * after [`close`](Self::close) every waiter and every later admission
///   fails with [`ThrottleClosed`], and nobody is left asleep.
pub trait Admission: Send + Sync {
    /// Wait for a slot, behind every earlier waiter.
    fn admit(&self) -> Result<(), ThrottleClosed>;

    /// Give an admitted request's slot back.
    fn release(&self);

    /// End the service: waiters and later admissions fail.
    fn close(&self);

    /// Requests waiting for a slot now, in the order they will be let in
    /// (a request counted here is behind every one counted before it).
    fn waiters(&self) -> usize;
}

/// Background writes through WBT: [`admit`](Admission::admit) is
/// [`Throttle::acquire`] of a `BACKGROUND` write whose slot is kept until
/// [`release`](Admission::release) (no latency sample is recorded).
impl<C: Clock> Admission for Throttle<C> {
    fn admit(&self) -> Result<(), ThrottleClosed> {
        self.acquire(Op::Write, OpFlags::BACKGROUND)
            .map(|permit| permit.keep())
    }

    fn release(&self) {
        // The trait's slots carry no request, so this one is made up: the
        // core reads a request's id only against the stuck-read cookie,
        // which a tracked write never is (`Wbt::on_done`), and with no
        // issue time no latency is sampled; class and op are all it uses.
        let rq = Rq {
            id: 0,
            op: Op::Write,
            flags: ReqFlags::tracked(Class::Bg),
        };
        Throttle::release(self, rq, None);
    }

    fn close(&self) {
        Throttle::close(self);
    }

    /// Threads asleep in the background FIFO.
    fn waiters(&self) -> usize {
        // Not through `snapshot()`: the loom models call this from
        // coroutines with small stacks, and a whole snapshot is large.
        self.lock().queues[Class::Bg.index()].len()
    }
}

#[cfg(all(test, not(iolab_loom)))]
mod tests {
    use super::*;
    use crate::{DeviceParams, ManualClock, Options, Variant};

    #[test]
    fn a_kept_slot_is_held_until_released() {
        // Queue depth 2 at time 0: one background write at a time.
        let params = DeviceParams {
            queue_depth: 2,
            rotational: false,
            write_cache: false,
        };
        let t = Throttle::with_clock(
            params,
            Variant::Modern,
            Options::default(),
            ManualClock::new(0),
        );
        t.admit().unwrap();
        assert_eq!(t.snapshot().wbt.inflight[0], 1);
        assert!(t.try_acquire(Op::Write, OpFlags::BACKGROUND).is_err());
        Admission::release(&t);
        assert_eq!(t.snapshot().wbt.inflight[0], 0);
        Admission::close(&t);
        assert_eq!(t.admit(), Err(ThrottleClosed));
    }
}
