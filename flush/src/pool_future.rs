//! The async face of [`Pool`]: [`ReserveFuture`] (from
//! [`Pool::reserve_async`]) and [`WorkFuture`] (from
//! [`Pool::wait_work_async`]).
//!
//! A task offers its ticket on its first poll, exactly as a thread does;
//! if it must wait, its [`Waker`](std::task::Waker) is registered under
//! the pool's lock, where every decision of the core is also moved to the
//! outcome table and wakes every waiting task. So a grant never falls
//! between a poll's look and its registration (no lost wakeup).
//!
//! Cancellation: dropping a [`ReserveFuture`] gives back whatever it
//! holds. Queued, its ticket leaves the queue (`FlushModel::on_interrupt`;
//! as in the kernel's `remove_ticket`, the tickets behind it are served at
//! the next change of space); granted but not yet polled, its bytes are
//! returned, which may grant the tickets behind it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::pool::{Holder, Outcome, Started};
use crate::{FlushKind, Pool, PoolError, Reservation, TicketId, Work};
use iolab_clock::{Clock, SystemClock};

/// The future of [`Pool::reserve_async`]: resolves to the
/// [`Reservation`], or [`PoolError`] (a failed ticket, or
/// [`PoolError::Closed`]). Polling it again after it resolved panics, as
/// for most futures.
#[derive(Debug)]
#[must_use = "a future does nothing unless polled"]
pub struct ReserveFuture<'a, C: Clock = SystemClock> {
    pool: Holder<'a, C>,
    bytes: u64,
    kind: FlushKind,
    state: State,
}

/// A [`ReserveFuture`] that owns a reference count of its pool, from
/// [`Pool::reserve_owned_async`]; it resolves to an
/// [`OwnedReservation`](crate::OwnedReservation).
pub type OwnedReserveFuture<C = SystemClock> = ReserveFuture<'static, C>;

#[derive(Clone, Copy, Debug)]
enum State {
    Start,
    Queued { owner: u64, ticket: TicketId },
    Done,
}

impl<'a, C: Clock> ReserveFuture<'a, C> {
    pub(crate) fn new(pool: Holder<'a, C>, bytes: u64, kind: FlushKind) -> ReserveFuture<'a, C> {
        ReserveFuture {
            pool,
            bytes,
            kind,
            state: State::Start,
        }
    }

    fn outcome(&self, o: Outcome) -> Result<Reservation<'a, C>, PoolError> {
        match o {
            Outcome::Granted(b) => Ok(self.pool.reservation(self.pool.share(), b)),
            Outcome::Failed(e) => Err(PoolError::Ticket(e)),
        }
    }
}

impl<'a, C: Clock> Future for ReserveFuture<'a, C> {
    type Output = Result<Reservation<'a, C>, PoolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match std::mem::replace(&mut this.state, State::Done) {
            State::Start => {
                let mut s = this.pool.lock();
                match this
                    .pool
                    .start(&mut s, this.bytes, this.kind, Some(cx.waker()))
                {
                    Started::Done(r) => {
                        drop(s);
                        Poll::Ready(r.map(|b| this.pool.reservation(this.pool.share(), b)))
                    }
                    Started::Queued { owner, ticket } => {
                        this.state = State::Queued { owner, ticket };
                        Poll::Pending
                    }
                }
            }
            State::Queued { owner, ticket } => {
                let mut s = this.pool.lock();
                if let Some(o) = s.outcomes.remove(&owner) {
                    s.wakers.forget(owner);
                    drop(s);
                    return Poll::Ready(this.outcome(o));
                }
                if s.closed {
                    return Poll::Ready(match this.pool.leave(&mut s, owner, ticket) {
                        None => Err(PoolError::Closed),
                        Some(o) => {
                            drop(s);
                            this.outcome(o)
                        }
                    });
                }
                s.wakers.register(owner, cx.waker());
                drop(s);
                this.state = State::Queued { owner, ticket };
                Poll::Pending
            }
            State::Done => panic!("`ReserveFuture` polled after it resolved"),
        }
    }
}

impl<C: Clock> Drop for ReserveFuture<'_, C> {
    fn drop(&mut self) {
        if let State::Queued { owner, ticket } = self.state {
            let mut s = self.pool.lock();
            let left = self.pool.leave(&mut s, owner, ticket);
            drop(s);
            if let Some(Outcome::Granted(b)) = left {
                self.pool.give_back(b);
            }
        }
    }
}

/// The future of [`Pool::wait_work_async`]: the next piece of work, or
/// `None` once the pool is closed.
#[derive(Debug)]
#[must_use = "a future does nothing unless polled"]
pub struct WorkFuture<'a, C: Clock = SystemClock> {
    pool: &'a Pool<C>,
    /// The waker's key once registered.
    key: Option<u64>,
}

impl<'a, C: Clock> WorkFuture<'a, C> {
    pub(crate) fn new(pool: &'a Pool<C>) -> WorkFuture<'a, C> {
        WorkFuture { pool, key: None }
    }
}

impl<C: Clock> Future for WorkFuture<'_, C> {
    type Output = Option<Work>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Work>> {
        let this = self.get_mut();
        let mut s = this.pool.lock();
        let done = if s.closed {
            Some(None)
        } else {
            s.work.pop_front().map(Some)
        };
        if let Some(out) = done {
            if let Some(k) = this.key.take() {
                s.wakers.forget(k);
            }
            return Poll::Ready(out);
        }
        let key = match this.key {
            Some(k) => k,
            None => {
                let k = s.token();
                this.key = Some(k);
                k
            }
        };
        s.wakers.register(key, cx.waker());
        Poll::Pending
    }
}

impl<C: Clock> Drop for WorkFuture<'_, C> {
    fn drop(&mut self) {
        if let Some(k) = self.key.take() {
            self.pool.lock().wakers.forget(k);
        }
    }
}
