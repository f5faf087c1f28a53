//! The async face of [`Throttle`]: [`Acquire`], the future that
//! [`Throttle::acquire_async`] returns.
//!
//! A task runs the same protocol steps 1 to 3 as a blocking thread, on its
//! first poll, and if it must wait its entry joins the same FIFO with the
//! task's [`Waker`] in it instead of a sleeping thread. The waker grants
//! its slot in FIFO order exactly as for a thread (marks the entry,
//! unlinks it) and wakes the task once the lock is released; the next poll
//! finds the grant under the lock. Storing the waker and granting are both
//! done under the throttle's lock, so a grant never falls between a poll's
//! check and its registration (no lost wakeup).
//!
//! Cancellation: dropping the future gives back whatever it held. Queued
//! and not yet granted, its place is given up and the waiters behind it
//! are served if they now fit (a smaller-limit head no longer holds them
//! up). Granted but not yet polled, the slot is released without a latency
//! sample (as [`Permit::cancel`]), which may grant the next waiter.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::{Begun, Holder, Permit, Throttle, ThrottleClosed, Waiter};
use crate::sync::Arc;
use crate::{Class, Op, OpFlags};

use super::clock::{Clock, SystemClock};

/// The future of [`Throttle::acquire_async`]: resolves to the request's
/// [`Permit`], or [`ThrottleClosed`] if the throttle is closed first.
/// Dropping it before it resolves gives its place (or a slot granted
/// meanwhile) back. Polling it again after it resolved panics, as for
/// most futures.
#[derive(Debug)]
#[must_use = "a future does nothing unless polled"]
pub struct Acquire<'a, C: Clock = SystemClock> {
    throttle: Holder<'a, C>,
    op: Op,
    flags: OpFlags,
    state: State,
}

/// An [`Acquire`] that owns a reference count of its throttle, from
/// [`Throttle::acquire_owned_async`]; it resolves to an
/// [`OwnedPermit`](super::OwnedPermit).
pub type OwnedAcquire<C = SystemClock> = Acquire<'static, C>;

#[derive(Debug)]
enum State {
    /// Not polled yet: nothing taken, nothing queued.
    Start,
    /// Waiting in `class`'s FIFO.
    Queued { me: Arc<Waiter>, class: Class },
    /// Resolved (or being polled).
    Done,
}

impl<'a, C: Clock> Acquire<'a, C> {
    pub(super) fn new(throttle: Holder<'a, C>, op: Op, flags: OpFlags) -> Acquire<'a, C> {
        Acquire {
            throttle,
            op,
            flags,
            state: State::Start,
        }
    }
}

impl<'a, C: Clock> Future for Acquire<'a, C> {
    type Output = Result<Permit<'a, C>, ThrottleClosed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let t: &Throttle<C> = &this.throttle;
        let (me, class) = match std::mem::replace(&mut this.state, State::Done) {
            State::Start => match t.begin(this.op, this.flags, Some(cx.waker())) {
                Begun::Done(result) => {
                    return Poll::Ready(result.map(|p| p.rehome(this.throttle.share())));
                }
                Begun::Queued { me, class, .. } => {
                    // The guard drops here: the entry, waker included, is
                    // visible to the waker from now on.
                    this.state = State::Queued { me, class };
                    return Poll::Pending;
                }
            },
            State::Queued { me, class } => (me, class),
            State::Done => panic!("`Acquire` polled after it resolved"),
        };
        let mut g = t.lock();
        if me.is_granted() {
            let permit = t.granted(&mut g, this.op, class, me.issue_ns());
            drop(g);
            return Poll::Ready(Ok(permit.rehome(this.throttle.share())));
        }
        if me.is_refused() {
            return Poll::Ready(Err(ThrottleClosed));
        }
        #[cfg(iolab_mutant = "b2")]
        if t.recheck_woken(&mut g, &me, class) {
            let now = g.now(&t.clock);
            let permit = t.granted(&mut g, this.op, class, now);
            drop(g);
            return Poll::Ready(Ok(permit.rehome(this.throttle.share())));
        }
        me.set_waker(cx.waker());
        drop(g);
        this.state = State::Queued { me, class };
        Poll::Pending
    }
}

impl<C: Clock> Drop for Acquire<'_, C> {
    fn drop(&mut self) {
        if let State::Queued { me, class } = std::mem::replace(&mut self.state, State::Done) {
            self.throttle.abandon(&me, self.op, class);
        }
    }
}
