//! The async face of [`Controller`]: [`GrantFuture`], from
//! [`Controller::acquire_async`].
//!
//! A task prices its IO on its first poll, exactly as a thread does; if
//! the bio must wait, it parks in the same FIFO of the core and the task's
//! [`Waker`] is registered under the controller's lock, where every
//! release is also moved to the outcome table and wakes every waiting
//! task. So a release never falls between a poll's look and its
//! registration (no lost wakeup).
//!
//! Cancellation: dropping the future gives back whatever it holds. Parked,
//! its bio leaves the FIFO uncharged and the bios behind it are served if
//! they now fit. Released but not yet polled, its cost comes back without
//! a latency sample (as [`Grant::cancel`]).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use iolab_clock::{Clock, SystemClock};

use super::grant::Holder;
use super::{Begun, ControllerError, Grant, Io, Outcome};
use crate::{CostModel, Linear};

/// The future of [`Controller::acquire_async`](super::Controller::acquire_async):
/// resolves to the IO's [`Grant`], or [`ControllerError`]. Polling it again
/// after it resolved panics, as for most futures.
#[derive(Debug)]
#[must_use = "a future does nothing unless polled"]
pub struct GrantFuture<'a, C: Clock = SystemClock, M: CostModel = Linear> {
    ctl: Holder<'a, C, M>,
    io: Io,
    state: State,
}

/// A [`GrantFuture`] that owns a reference count of its controller, from
/// [`Controller::acquire_owned_async`](super::Controller::acquire_owned_async).
pub type OwnedGrantFuture<C = SystemClock, M = Linear> = GrantFuture<'static, C, M>;

#[derive(Clone, Copy, Debug)]
enum State {
    Start,
    Parked { bio: u64, alloc_ns: u64 },
    Done,
}

impl<'a, C: Clock, M: CostModel> GrantFuture<'a, C, M> {
    pub(super) fn new(ctl: Holder<'a, C, M>, io: Io) -> GrantFuture<'a, C, M> {
        GrantFuture {
            ctl,
            io,
            state: State::Start,
        }
    }

    fn grant(&self, cost: u64, delay_ns: u64, alloc_ns: u64) -> Grant<'a, C, M> {
        let start = self.ctl.clock.now_ns();
        Grant::new(self.ctl.share(), self.io, cost, delay_ns, alloc_ns, start)
    }
}

impl<'a, C: Clock, M: CostModel> Future for GrantFuture<'a, C, M> {
    type Output = Result<Grant<'a, C, M>, ControllerError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match std::mem::replace(&mut this.state, State::Done) {
            State::Start => {
                let alloc_ns = this.ctl.clock.now_ns();
                match this.ctl.begin(this.io, alloc_ns, Some(cx.waker())) {
                    Begun::Done(r) => {
                        Poll::Ready(r.map(|(cost, delay)| this.grant(cost, delay, alloc_ns)))
                    }
                    Begun::Parked { bio } => {
                        this.state = State::Parked { bio, alloc_ns };
                        Poll::Pending
                    }
                }
            }
            State::Parked { bio, alloc_ns } => {
                let mut s = this.ctl.lock();
                match s.outcomes.remove(&bio) {
                    Some(Outcome::Released(cost)) => {
                        s.wakers.forget(bio);
                        drop(s);
                        Poll::Ready(Ok(this.grant(cost, 0, alloc_ns)))
                    }
                    Some(Outcome::Closed) => {
                        s.wakers.forget(bio);
                        Poll::Ready(Err(ControllerError::Closed))
                    }
                    None => {
                        s.wakers.register(bio, cx.waker());
                        drop(s);
                        this.state = State::Parked { bio, alloc_ns };
                        Poll::Pending
                    }
                }
            }
            State::Done => panic!("`GrantFuture` polled after it resolved"),
        }
    }
}

impl<C: Clock, M: CostModel> Drop for GrantFuture<'_, C, M> {
    fn drop(&mut self) {
        if let State::Parked { bio, .. } = self.state {
            let now = self.ctl.clock.now_ns();
            let mut s = self.ctl.lock();
            s.abandon(now, bio, self.io.group);
            self.ctl.unlock_settled(s);
        }
    }
}
