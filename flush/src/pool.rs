//! The userspace face: [`Pool`], a [`FlushModel`] shared by threads.
//! Reservers block on their tickets; a flusher thread does the work the
//! core hands out and, by reporting it done, lets the core grant.
//!
//! ```
//! use iolab_flush::{Config, FlushKind, ManualClock, Pool};
//!
//! let pool = Pool::with_clock(Config::default(), ManualClock::new(0)).unwrap();
//! let r = pool.reserve(256 * 1024, FlushKind::FlushAll).unwrap();
//! assert_eq!(pool.snapshot().grants, 256 * 1024);
//! drop(r); // returns the bytes
//! assert_eq!(pool.snapshot().grants, 0);
//! ```
//!
//! # Protocol
//!
//! One mutex guards the core and the face's bookkeeping; one condition
//! variable is notified (all waiters) after every change. Every call takes
//! the lock, feeds the core one event stamped with the [`Clock`], and
//! drains the core's decisions *under the same lock*: grants and failures
//! go to a table keyed by the reserver's owner token, handle wake-ups to a
//! table keyed by handle, work (`RunRefs`, `Flush`, `CommitIo`) to a FIFO
//! the flusher takes from. So a decision is never lost between the core and
//! a sleeper: a reserver that queued a ticket looks in the table before
//! every sleep, and whoever put an outcome there notifies after unlocking
//! nothing in between.
//!
//! * A reserver whose request fits returns at once. Otherwise it sleeps
//!   until its outcome is in the table. With [`Pool::reserve_cancellable`]
//!   it also checks a flag after every wake-up: if set, it removes its own
//!   ticket ([`FlushModel::on_interrupt`]); if the ticket was already
//!   granted, the grant wins and the reserver keeps the bytes.
//!   [`Pool::reserve_timeout`] gives up the same way once its time on the
//!   pool's [`Clock`] is up ([`PoolError::TimedOut`]), and
//!   [`Pool::try_reserve`] never waits (the kernel's
//!   `BTRFS_RESERVE_NO_FLUSH`: it fails at once, with
//!   [`PoolError::WouldBlock`], if the bytes do not fit).
//! * Tasks reserve with [`Pool::reserve_async`] (or
//!   [`Pool::reserve_owned_async`]) and a flusher task waits with
//!   [`Pool::wait_work_async`]: the same tickets in the same FIFO as
//!   threads; dropping a reservation future gives back what it holds
//!   (see `pool_future`).
//! * The commit timer is the caller's: [`Pool::tick`] at the deadline it
//!   returns, or [`Ticker`](iolab_clock::Ticker) on a thread or a task;
//!   [`Pool::missed_ticks`] counts deadlines found overdue.
//! * The flusher loops on [`Pool::wait_work`] → do the work →
//!   [`Pool::work_done`]; [`Pool::close`] ends the loop.
//! * [`Pool::close`] is the end of the pool's service: every reserver
//!   still waiting takes its ticket off the queue (unless the grant came
//!   first) and gets [`PoolError::Closed`], as does every later
//!   reservation and ref update, so nobody waits for a flusher that is
//!   gone. Reservations held stay valid; dropping them returns the bytes.
//! * Dropping a [`Reservation`] returns its bytes (which may grant waiting
//!   tickets in the dropper's context). A reservation borrows its pool;
//!   for one that must outlive the borrow (moved to a `'static` task or
//!   another thread), keep the pool in a [`std::sync::Arc`] and reserve
//!   with [`Pool::reserve_owned`], [`Pool::try_reserve_owned`] or
//!   [`Pool::reserve_timeout_owned`]: an [`OwnedReservation`] holds a
//!   reference count instead, and the pool lives until the last is
//!   dropped.
//!
//! Waking everybody on every change is simple and obviously free of lost
//! wake-ups; it costs spurious wake-ups under contention.

use std::collections::{BTreeMap, VecDeque};
use std::sync::PoisonError;
use std::task::Waker;
use std::time::Duration;

use crate::Interrupted;
use crate::sync::{AtomicBool, Condvar, Mutex, MutexGuard, Ordering};
use crate::{
    Actor, Config, ConfigError, Decision, End, Error, FlushKind, FlushModel, FlushState, HandleId,
    HandleKind, JobId, RefBatch, Reserve, Snapshot, Start, TicketError, TicketId,
};

pub use iolab_clock::LATE_TICK_NS;
pub use iolab_clock::{Clock, ManualClock, SystemClock};
use iolab_clock::{TimerWatch, WakerSet};

pub use crate::pool_future::{OwnedReserveFuture, ReserveFuture, WorkFuture};

/// A piece of work for the flusher thread; hand it back to
/// [`Pool::work_done`] when done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// Run delayed refs (see [`Decision::RunRefs`]).
    Refs {
        /// The job.
        job: JobId,
        /// Who the core charges.
        actor: Actor,
        /// Heads.
        heads: u64,
        /// Refs.
        refs: u64,
        /// CPU time the model assigns.
        cpu_ns: u64,
    },
    /// A flush state's page-cache work (see [`Decision::Flush`]).
    Flush {
        /// The job.
        job: JobId,
        /// The state.
        state: FlushState,
        /// Bytes wanted.
        bytes: u64,
    },
    /// Write out a commit (see [`Decision::CommitIo`]).
    Commit {
        /// The transaction.
        txn: u64,
        /// Dirty metadata.
        meta_bytes: u64,
    },
}

/// Why a reservation or ref update did not go through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PoolError {
    /// The ticket failed (ENOSPC, interrupted, aborted).
    Ticket(TicketError),
    /// The core refused the event.
    Core(Error),
    /// The pool was closed ([`Pool::close`]) before the reservation or
    /// ref update could go through.
    Closed,
    /// [`Pool::reserve_timeout`]'s time ran out before a grant.
    TimedOut,
    /// [`Pool::try_reserve`]: the bytes do not fit now, and it does not
    /// wait (a waiting reservation might still be granted them).
    WouldBlock,
}

impl core::fmt::Display for PoolError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PoolError::Ticket(e) => write!(f, "reservation failed: {e}"),
            PoolError::Core(e) => write!(f, "{e}"),
            PoolError::Closed => write!(f, "the pool is closed"),
            PoolError::TimedOut => write!(f, "timed out waiting for a grant"),
            PoolError::WouldBlock => write!(
                f,
                "the bytes do not fit now, and the reservation does not wait"
            ),
        }
    }
}

impl std::error::Error for PoolError {}

/// Reserved bytes; dropping returns them.
#[derive(Debug)]
pub struct Reservation<'a, C: Clock = SystemClock> {
    pool: Holder<'a, C>,
    bytes: u64,
    /// Whether dropping returns the bytes (not once moved into an owned
    /// reservation).
    live: bool,
}

/// A [`Reservation`] that owns a reference count of its pool instead of
/// borrowing it, from [`Pool::reserve_owned`]: `'static` whenever the
/// clock is, so it may move to a `'static` task or another thread (the
/// pool lives until the last of them is dropped).
pub type OwnedReservation<C = SystemClock> = Reservation<'static, C>;

/// How a reservation reaches its pool.
#[derive(Debug)]
pub(crate) enum Holder<'a, C: Clock> {
    Borrowed(&'a Pool<C>),
    Owned(std::sync::Arc<Pool<C>>),
}

impl<'a, C: Clock> Holder<'a, C> {
    pub(crate) fn share(&self) -> Holder<'a, C> {
        match self {
            Holder::Borrowed(p) => Holder::Borrowed(p),
            Holder::Owned(p) => Holder::Owned(std::sync::Arc::clone(p)),
        }
    }
}

impl<C: Clock> std::ops::Deref for Holder<'_, C> {
    type Target = Pool<C>;

    fn deref(&self) -> &Pool<C> {
        match self {
            Holder::Borrowed(p) => p,
            Holder::Owned(p) => p,
        }
    }
}

impl<C: Clock> Reservation<'_, C> {
    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The same bytes held through `owner` (the pool that granted them)
    /// instead of a borrow.
    fn into_owned(mut self, owner: &std::sync::Arc<Pool<C>>) -> OwnedReservation<C> {
        debug_assert!(std::ptr::eq(&*self.pool, &**owner));
        self.live = false; // the owned one returns the bytes
        Reservation {
            pool: Holder::Owned(std::sync::Arc::clone(owner)),
            bytes: self.bytes,
            live: true,
        }
    }
}

impl<C: Clock> Reservation<'_, C> {
    /// Keep the bytes past this reservation: they stay held until given
    /// back through [`ReservationPool::release_bytes`](crate::ReservationPool::release_bytes).
    pub(crate) fn keep(mut self) -> u64 {
        self.live = false;
        self.bytes
    }
}

impl<C: Clock> Drop for Reservation<'_, C> {
    fn drop(&mut self) {
        if self.live {
            self.pool.give_back(self.bytes);
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Granted(u64),
    Failed(TicketError),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HandleEvent {
    Ready,
    Failed(TicketError),
    Released,
}

#[derive(Debug)]
pub(crate) struct Shared {
    fs: FlushModel,
    next_owner: u64,
    pub(crate) outcomes: BTreeMap<u64, Outcome>,
    handles: BTreeMap<HandleId, HandleEvent>,
    pub(crate) work: VecDeque<Work>,
    pub(crate) closed: bool,
    /// Waiting tasks (reservers and flushers), by owner token.
    pub(crate) wakers: WakerSet,
    pub(crate) watch: TimerWatch,
}

impl Shared {
    pub(crate) fn token(&mut self) -> u64 {
        let t = self.next_owner;
        self.next_owner += 1;
        t
    }

    /// Move every decision of the core to where its consumer looks.
    fn settle(&mut self) {
        while let Some(d) = self.fs.poll_decision() {
            match d {
                Decision::Grant { owner, bytes, .. } => {
                    self.outcomes.insert(owner, Outcome::Granted(bytes));
                }
                Decision::Fail { owner, error, .. } => {
                    self.outcomes.insert(owner, Outcome::Failed(error));
                }
                Decision::HandleReady { handle } => {
                    self.handles.insert(handle, HandleEvent::Ready);
                }
                Decision::HandleFailed { handle, error } => {
                    self.handles.insert(handle, HandleEvent::Failed(error));
                }
                Decision::HandleReleased { handle } => {
                    self.handles.insert(handle, HandleEvent::Released);
                }
                Decision::RunRefs {
                    job,
                    actor,
                    heads,
                    refs,
                    cpu_ns,
                    ..
                } => self.work.push_back(Work::Refs {
                    job,
                    actor,
                    heads,
                    refs,
                    cpu_ns,
                }),
                Decision::Flush {
                    job, state, bytes, ..
                } => self.work.push_back(Work::Flush { job, state, bytes }),
                Decision::CommitIo { txn, meta_bytes } => {
                    self.work.push_back(Work::Commit { txn, meta_bytes })
                }
            }
        }
        // Traces are not kept by the face.
        while self.fs.poll_trace().is_some() {}
        self.wakers.wake_all();
    }
}

/// A thread-safe reservation pool around one [`FlushModel`]. How
/// reservers, the flusher and the timer work together, what closing does
/// and how a reservation outlives a borrow: [the module docs](crate::pool).
#[derive(Debug)]
pub struct Pool<C: Clock = SystemClock> {
    shared: Mutex<Shared>,
    cv: Condvar,
    clock: C,
}

impl Pool<SystemClock> {
    /// A pool on the system clock.
    pub fn new(config: Config) -> Result<Pool<SystemClock>, ConfigError> {
        Pool::with_clock(config, SystemClock::new())
    }
}

impl<C: Clock> Pool<C> {
    /// A pool on the given clock.
    pub fn with_clock(config: Config, clock: C) -> Result<Pool<C>, ConfigError> {
        Ok(Pool {
            shared: Mutex::new(Shared {
                fs: FlushModel::new(config)?,
                next_owner: 1,
                outcomes: BTreeMap::new(),
                handles: BTreeMap::new(),
                work: VecDeque::new(),
                closed: false,
                wakers: WakerSet::new(),
                watch: TimerWatch::new(LATE_TICK_NS),
            }),
            cv: Condvar::new(),
            clock,
        })
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'g>(&self, g: MutexGuard<'g, Shared>) -> MutexGuard<'g, Shared> {
        self.cv.wait(g).unwrap_or_else(PoisonError::into_inner)
    }

    /// Reserve `bytes`, sleeping on a ticket if they do not fit.
    /// [`PoolError::Closed`] if the pool is closed before the grant.
    pub fn reserve(&self, bytes: u64, kind: FlushKind) -> Result<Reservation<'_, C>, PoolError> {
        self.reserve_inner(bytes, kind, None, None)
    }

    /// Reserve `bytes` without waiting: granted if they fit now, else
    /// [`PoolError::WouldBlock`] at once and no ticket (the kernel's
    /// `BTRFS_RESERVE_NO_FLUSH`, which says `-ENOSPC` there).
    pub fn try_reserve(&self, bytes: u64) -> Result<Reservation<'_, C>, PoolError> {
        match self.reserve_inner(bytes, FlushKind::NoFlush, None, None) {
            Err(PoolError::Ticket(TicketError::Enospc)) => Err(PoolError::WouldBlock),
            other => other,
        }
    }

    /// [`reserve`](Self::reserve), giving up with [`PoolError::TimedOut`]
    /// (and taking its ticket off the queue) once `timeout` has passed on
    /// the pool's clock, unless the grant came first. With a
    /// [`ManualClock`] the time passes only as the clock is moved; the
    /// waiter looks again at least every `timeout` of real time, or at
    /// once after [`Pool::notify`]. A timeout beyond 584 years is taken
    /// as that.
    pub fn reserve_timeout(
        &self,
        bytes: u64,
        kind: FlushKind,
        timeout: Duration,
    ) -> Result<Reservation<'_, C>, PoolError> {
        let timeout_ns = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        let deadline = self.clock.now_ns().saturating_add(timeout_ns);
        self.reserve_inner(bytes, kind, None, Some(deadline))
    }

    /// [`reserve`](Self::reserve), giving up with
    /// [`TicketError::Eintr`] once `cancel` is set and the pool notified
    /// ([`Pool::notify`]), unless the grant came first.
    pub fn reserve_cancellable(
        &self,
        bytes: u64,
        kind: FlushKind,
        cancel: &AtomicBool,
    ) -> Result<Reservation<'_, C>, PoolError> {
        self.reserve_inner(bytes, kind, Some(cancel), None)
    }

    /// [`reserve`](Self::reserve) for a pool in an [`std::sync::Arc`]: the
    /// reservation holds a reference count instead of a borrow.
    pub fn reserve_owned(
        self: &std::sync::Arc<Self>,
        bytes: u64,
        kind: FlushKind,
    ) -> Result<OwnedReservation<C>, PoolError> {
        self.reserve(bytes, kind).map(|r| r.into_owned(self))
    }

    /// [`try_reserve`](Self::try_reserve), returning an
    /// [`OwnedReservation`].
    pub fn try_reserve_owned(
        self: &std::sync::Arc<Self>,
        bytes: u64,
    ) -> Result<OwnedReservation<C>, PoolError> {
        self.try_reserve(bytes).map(|r| r.into_owned(self))
    }

    /// [`reserve_timeout`](Self::reserve_timeout), returning an
    /// [`OwnedReservation`].
    pub fn reserve_timeout_owned(
        self: &std::sync::Arc<Self>,
        bytes: u64,
        kind: FlushKind,
        timeout: Duration,
    ) -> Result<OwnedReservation<C>, PoolError> {
        self.reserve_timeout(bytes, kind, timeout)
            .map(|r| r.into_owned(self))
    }

    /// The first step of every reservation, under the lock: refuse if
    /// closed, else offer a ticket to the core; a task's `waker` is
    /// registered (under the same lock) if it must wait.
    pub(crate) fn start(
        &self,
        s: &mut Shared,
        bytes: u64,
        kind: FlushKind,
        waker: Option<&Waker>,
    ) -> Started {
        if s.closed {
            return Started::Done(Err(PoolError::Closed));
        }
        let owner = s.token();
        let now = self.clock.now_ns();
        let deadline = s.fs.next_deadline();
        s.watch.observe(now, deadline);
        let r = s.fs.on_reserve(now, owner, bytes, kind);
        if let (Ok(Reserve::Queued(_)), Some(w)) = (&r, waker) {
            s.wakers.register(owner, w);
        }
        s.settle();
        // Wake the flusher (there is work now) or the waiters a grant
        // leaves room for.
        self.cv.notify_all();
        match r {
            Ok(Reserve::Granted) => Started::Done(Ok(bytes)),
            Ok(Reserve::Failed(e)) => Started::Done(Err(PoolError::Ticket(e))),
            Err(e) => Started::Done(Err(PoolError::Core(e))),
            Ok(Reserve::Queued(ticket)) => Started::Queued { owner, ticket },
        }
    }

    pub(crate) fn reservation<'a>(&self, pool: Holder<'a, C>, bytes: u64) -> Reservation<'a, C> {
        debug_assert!(std::ptr::eq(&*pool, self));
        Reservation {
            pool,
            bytes,
            live: true,
        }
    }

    /// A waiter leaves without waiting for its outcome (cancelled, timed
    /// out, closed, or its future dropped): its ticket leaves the queue,
    /// unless it was resolved first; then its outcome is returned (and
    /// taken out of the table).
    pub(crate) fn leave(&self, s: &mut Shared, owner: u64, ticket: TicketId) -> Option<Outcome> {
        s.wakers.forget(owner);
        if let Some(o) = s.outcomes.remove(&owner) {
            return Some(o);
        }
        let r = s.fs.on_interrupt(self.clock.now_ns(), ticket);
        s.settle();
        self.cv.notify_all();
        match r {
            Ok(Interrupted::Removed) => {
                s.outcomes.remove(&owner);
                None
            }
            // Resolved already: its outcome is in the table (the decisions
            // were settled under this same lock).
            Ok(Interrupted::AlreadyResolved) | Err(_) => s.outcomes.remove(&owner),
        }
    }

    /// Why a waiting reserver stops waiting without its outcome: its
    /// cancel flag, the pool's close, or its deadline on the clock.
    fn give_up(
        &self,
        s: &Shared,
        cancel: Option<&AtomicBool>,
        deadline: Option<u64>,
    ) -> Option<PoolError> {
        if cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
            Some(PoolError::Ticket(TicketError::Eintr))
        } else if s.closed {
            Some(PoolError::Closed)
        } else if deadline.is_some_and(|d| self.clock.now_ns() >= d) {
            Some(PoolError::TimedOut)
        } else {
            None
        }
    }

    fn reserve_inner(
        &self,
        bytes: u64,
        kind: FlushKind,
        cancel: Option<&AtomicBool>,
        deadline: Option<u64>,
    ) -> Result<Reservation<'_, C>, PoolError> {
        let mut s = self.lock();
        let (owner, ticket) = match self.start(&mut s, bytes, kind, None) {
            Started::Done(r) => {
                drop(s);
                return r.map(|b| self.reservation(Holder::Borrowed(self), b));
            }
            Started::Queued { owner, ticket } => (owner, ticket),
        };
        loop {
            if let Some(o) = s.outcomes.remove(&owner) {
                drop(s);
                return match o {
                    Outcome::Granted(b) => Ok(self.reservation(Holder::Borrowed(self), b)),
                    Outcome::Failed(e) => Err(PoolError::Ticket(e)),
                };
            }
            if let Some(why) = self.give_up(&s, cancel, deadline) {
                // Mutant F1 (test-only; reverts kernel 0cab7acc4afc, "Btrfs:
                // fix race leading to metadata space leak after task
                // received signal", Filipe Manana, 2019): the interrupted
                // waiter notes EINTR and leaves without taking its ticket
                // off the queue, so a later grant raises `may_use` for
                // bytes nobody will ever return.
                #[cfg(iolab_mutant = "f1")]
                if why == PoolError::Ticket(TicketError::Eintr) {
                    let _ = ticket;
                    drop(s);
                    return Err(why);
                }
                match self.leave(&mut s, owner, ticket) {
                    None => {
                        drop(s);
                        return Err(why);
                    }
                    Some(o) => {
                        // The outcome came first: it wins.
                        s.outcomes.insert(owner, o);
                        continue;
                    }
                }
            }
            s = match deadline {
                Some(d) => {
                    let left = d.saturating_sub(self.clock.now_ns()).max(1);
                    self.cv
                        .wait_timeout(s, Duration::from_nanos(left))
                        .map_or_else(|e| e.into_inner().0, |(g, _)| g)
                }
                None => self.wait(s),
            };
        }
    }

    /// Return `bytes` granted by this pool (which may grant waiting
    /// tickets in the caller's context) and wake the sleepers.
    pub(crate) fn give_back(&self, bytes: u64) {
        let mut s = self.lock();
        let now = self.clock.now_ns();
        // The bytes were granted by this pool's core, so the release fits.
        let _ = s.fs.on_release(now, bytes);
        s.settle();
        drop(s);
        self.cv.notify_all();
    }

    /// Wake every sleeper (after setting a cancel flag).
    pub fn notify(&self) {
        let mut g = self.lock();
        g.wakers.wake_all();
        drop(g);
        self.cv.notify_all();
    }

    /// Wait for handle `h`'s event; `None` once the pool is closed.
    fn wait_handle<'g>(
        &self,
        mut s: MutexGuard<'g, Shared>,
        h: HandleId,
    ) -> (MutexGuard<'g, Shared>, Option<HandleEvent>) {
        loop {
            if let Some(e) = s.handles.remove(&h) {
                return (s, Some(e));
            }
            if s.closed {
                return (s, None);
            }
            s = self.wait(s);
        }
    }

    /// Queue refs as an endio worker would: join the transaction (waiting
    /// while it commits), add the batch, end the handle (waiting if the
    /// catch-up variant makes the end wait). [`PoolError::Closed`] if the
    /// pool is closed before, or while it waits (when it closes during the
    /// end's wait, the batch was added).
    pub fn add_refs(&self, batch: RefBatch) -> Result<(), PoolError> {
        let mut s = self.lock();
        if s.closed {
            return Err(PoolError::Closed);
        }
        let now = self.clock.now_ns();
        let h = match s.fs.on_handle_start(now, HandleKind::Join, 0) {
            Ok(Start::Ready(h)) => h,
            Ok(Start::Wait { handle, .. }) => {
                s.settle();
                self.cv.notify_all();
                let (g, e) = self.wait_handle(s, handle);
                s = g;
                match e {
                    Some(HandleEvent::Ready) => handle,
                    Some(HandleEvent::Failed(e)) => return Err(PoolError::Ticket(e)),
                    Some(HandleEvent::Released) => {
                        return Err(PoolError::Core(Error::UnknownHandle(handle)));
                    }
                    None => return Err(PoolError::Closed),
                }
            }
            Ok(Start::Failed(e)) => return Err(PoolError::Ticket(e)),
            Ok(Start::NoTransaction) => return Ok(()),
            Err(e) => return Err(PoolError::Core(e)),
        };
        let now = self.clock.now_ns();
        let added = s.fs.on_refs_added(now, h, batch);
        let end = s.fs.on_handle_end(now, h, false);
        s.settle();
        self.cv.notify_all();
        added.map_err(PoolError::Core)?;
        match end.map_err(PoolError::Core)? {
            End::Done => Ok(()),
            End::Wait(w) => match self.wait_handle(s, w).1 {
                Some(_) => Ok(()),
                None => Err(PoolError::Closed),
            },
        }
    }

    /// Take the next piece of work without waiting.
    pub fn next_work(&self) -> Option<Work> {
        self.lock().work.pop_front()
    }

    /// Wait for the next piece of work; `None` once the pool is closed,
    /// whatever work is still queued (the flusher's service ends with
    /// the pool's; reservations held stay valid).
    pub fn wait_work(&self) -> Option<Work> {
        let mut s = self.lock();
        loop {
            if s.closed {
                return None;
            }
            if let Some(w) = s.work.pop_front() {
                return Some(w);
            }
            s = self.wait(s);
        }
    }

    /// The flusher finished `work`.
    pub fn work_done(&self, work: Work) -> Result<(), Error> {
        let mut s = self.lock();
        let now = self.clock.now_ns();
        let r = match work {
            Work::Refs { job, .. } | Work::Flush { job, .. } => s.fs.on_work_done(now, job),
            Work::Commit { txn, .. } => s.fs.on_commit_done(now, txn),
        };
        s.settle();
        drop(s);
        self.cv.notify_all();
        r
    }

    /// Run the commit timer if due; returns the next deadline.
    pub fn tick(&self) -> Option<u64> {
        let mut s = self.lock();
        let now = self.clock.now_ns();
        if s.fs.next_deadline().is_some_and(|d| d <= now) {
            s.fs.on_timer(now);
        }
        s.settle();
        let next = s.fs.next_deadline();
        drop(s);
        self.cv.notify_all();
        next
    }

    /// Commit deadlines found overdue by more than [`LATE_TICK_NS`] when
    /// the pool was used: each is a timer nobody ran in time (no
    /// [`tick`](Self::tick) loop, or a starved one).
    pub fn missed_ticks(&self) -> u64 {
        self.lock().watch.missed()
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// End the pool's service: [`wait_work`](Self::wait_work) loops stop,
    /// every reserver still waiting gets [`PoolError::Closed`] (its
    /// ticket taken off the queue, unless the grant came first), and so
    /// does every later reservation and ref update. Reservations held stay
    /// valid.
    pub fn close(&self) {
        let mut s = self.lock();
        s.closed = true;
        s.wakers.wake_all();
        drop(s);
        self.cv.notify_all();
    }

    /// A copy of the core's state.
    pub fn snapshot(&self) -> Snapshot {
        self.lock().fs.snapshot()
    }

    /// Wait as a task until `bytes` are granted (the async
    /// [`reserve`](Self::reserve)): the same FIFO of tickets as threads.
    /// Dropping the future gives back what it holds: its ticket leaves the
    /// queue, or bytes granted but not yet polled are returned.
    pub fn reserve_async(&self, bytes: u64, kind: FlushKind) -> ReserveFuture<'_, C> {
        ReserveFuture::new(Holder::Borrowed(self), bytes, kind)
    }

    /// [`reserve_async`](Self::reserve_async) for a pool in an
    /// [`std::sync::Arc`], resolving to an [`OwnedReservation`].
    pub fn reserve_owned_async(
        self: &std::sync::Arc<Self>,
        bytes: u64,
        kind: FlushKind,
    ) -> OwnedReserveFuture<C> {
        ReserveFuture::new(Holder::Owned(std::sync::Arc::clone(self)), bytes, kind)
    }

    /// The flusher's wait as a task (the async
    /// [`wait_work`](Self::wait_work)): the next piece of work, or `None`
    /// once the pool is closed.
    pub fn wait_work_async(&self) -> WorkFuture<'_, C> {
        WorkFuture::new(self)
    }
}

impl<C: Clock> iolab_clock::Timed for Pool<C> {
    fn tick(&self) -> Option<u64> {
        Pool::tick(self)
    }

    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    fn is_closed(&self) -> bool {
        Pool::is_closed(self)
    }
}

/// The first step of a reservation.
pub(crate) enum Started {
    /// Granted (these bytes) or failed at once.
    Done(Result<u64, PoolError>),
    /// Waiting on `ticket`, as `owner`.
    Queued { owner: u64, ticket: TicketId },
}
