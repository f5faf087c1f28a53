//! The threaded face: [`Controller`], an [`IoCost`] shared by threads and
//! tasks, that an engine asks for a [`Grant`] before it issues an IO.
//!
//! ```
//! use iolab_iocost::{Controller, Device, GroupId, Io, IoCost, ManualClock, Op, Options};
//!
//! let dev = Device { devno: (259, 0), rotational: false, queue_depth: 64 };
//! let mut ioc = IoCost::new(dev, Options::default());
//! let tenant = ioc.add_group(0, 1);
//! ioc.write_qos(0, "enable=1 rpct=95 rlat=2500 wpct=95 wlat=5000").unwrap();
//! let ctl = Controller::with_clock(ioc, ManualClock::new(0)).unwrap();
//!
//! let grant = ctl.acquire(Io::new(tenant, Op::Read, 4096, 0)).unwrap();
//! assert!(grant.cost() > 0);
//! // ... issue the read; dropping the grant reports its completion ...
//! drop(grant);
//! ```
//!
//! # Protocol
//!
//! One mutex guards the core and the face's tables; one condition variable
//! wakes sleeping threads and a list of [`Waker`]s wakes waiting tasks.
//! Every call takes the lock, feeds the core one event stamped with the
//! [`Clock`], and moves the bios the core releases to a table keyed by bio
//! *under the same lock*, then wakes every sleeper. A waiter looks in the
//! table before each sleep, and registers its waker under the lock, so a
//! release is never lost between the core and a sleeper.
//!
//! * [`acquire`](Controller::acquire) prices the IO. Within its group's
//!   budget it returns at once; otherwise the bio waits in its group's FIFO
//!   (the core's, `ioc_rqos_throttle`) until the period or waiter timer
//!   ([`tick`](Controller::tick)) finds budget for it.
//! * A [`Grant`] is the IO's right to run. Dropping it (or
//!   [`complete`](Grant::complete)) reports the completion, which returns
//!   its cost and counts its latency against the QoS targets, so keep it
//!   until the IO is done. An IO that never ran is
//!   [`cancel`](Grant::cancel)led: its cost comes back without a latency
//!   sample. [`Grant::delay`] is the debt delay the kernel would make the
//!   issuing task sleep on its way back to user space; sleep it after the
//!   IO if you want the kernel's back-pressure on an indebted group.
//! * [`acquire_async`](Controller::acquire_async) waits as a task in the
//!   same FIFO. Dropping its future gives back what it holds: a parked bio
//!   leaves the FIFO uncharged (the waiters behind it are served if they
//!   now fit), a bio released but not yet polled returns its cost.
//! * The timers are the caller's: call [`tick`](Controller::tick) at (or
//!   soon after) the deadline it returns, or let [`Ticker`](iolab_clock::Ticker)
//!   do it on a thread or a task. A deadline found overdue by more than
//!   [`LATE_TICK_NS`] counts in [`missed_ticks`](Controller::missed_ticks):
//!   nobody is ticking, and waiters would wait for ever.
//! * [`close`](Controller::close) ends the service: every parked bio leaves
//!   its FIFO uncharged and its waiter gets [`ControllerError::Closed`]
//!   (unless its release came first), as does every later acquire. Grants
//!   held stay valid.
//!
//! A controller is built from an [`IoCost`] that is already enabled (a QoS
//! line with `enable=1`): a disabled one would let every IO through
//! uncharged, so [`Controller::new`] refuses it, and an acquire while it is
//! disabled (by [`configure`](Controller::configure)) fails with
//! [`ControllerError::Disabled`]. The face drains no traces: an
//! [`Options::trace`](crate::Options::trace) user reads them through
//! [`configure`](Controller::configure).

mod future;
mod grant;

use std::collections::BTreeMap;
use std::sync::PoisonError;
use std::task::Waker;

pub use iolab_clock::LATE_TICK_NS;
use iolab_clock::{Clock, SystemClock, TimerWatch, WakerSet};

use crate::sync::{Condvar, Mutex, MutexGuard};
use crate::{Admit, Bio, CostError, CostModel, GroupId, IoCost, Linear, Op};

pub use future::{GrantFuture, OwnedGrantFuture};
pub use grant::{Grant, OwnedGrant};

/// An IO an engine is about to issue, as [`Controller::acquire`] prices it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Io {
    /// The issuing tenant's group ([`IoCost::add_group`]);
    /// [`GroupId::ROOT`] is never charged.
    pub group: GroupId,
    /// Direction.
    pub op: Op,
    /// Size in bytes.
    pub bytes: u64,
    /// Start sector (512 bytes), for the sequential/random decision.
    pub sector: u64,
    /// Must be issued even over budget (metadata, swap): charged as debt
    /// instead of waiting.
    pub must_issue: bool,
}

impl Io {
    /// An IO of `group` that waits when over budget.
    pub fn new(group: GroupId, op: Op, bytes: u64, sector: u64) -> Io {
        Io {
            group,
            op,
            bytes,
            sector,
            must_issue: false,
        }
    }

    /// The same IO, issued even over budget (charged as debt).
    pub fn must_issue(self) -> Io {
        Io {
            must_issue: true,
            ..self
        }
    }
}

/// Why an acquire did not give a [`Grant`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ControllerError {
    /// The controller is not enabled (`enable=0`): the IO would have gone
    /// uncontrolled, so it is refused instead.
    Disabled,
    /// The group was never added to this controller's core.
    UnknownGroup(GroupId),
    /// The cost model priced the IO past its contract
    /// ([`Admit::Refused`]).
    Cost(CostError),
    /// The controller was closed ([`Controller::close`]) before a release.
    Closed,
}

impl core::fmt::Display for ControllerError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ControllerError::Disabled => write!(
                f,
                "the iocost controller is disabled (enable=0): write a QoS line with enable=1 first"
            ),
            ControllerError::UnknownGroup(g) => {
                write!(f, "group {} was never added to this controller", g.0)
            }
            ControllerError::Cost(e) => write!(f, "{e}"),
            ControllerError::Closed => write!(f, "the controller is closed"),
        }
    }
}

impl std::error::Error for ControllerError {}

/// Where a parked bio stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Released by the core with this cost charged.
    Released(u64),
    /// Failed by [`Controller::close`].
    Closed,
}

#[derive(Debug)]
struct State<M> {
    ioc: IoCost<M>,
    next_bio: u64,
    /// Bios waiting in a FIFO of the core, with their group.
    parked: BTreeMap<u64, GroupId>,
    /// Bios whose wait ended, not yet collected by their waiter.
    outcomes: BTreeMap<u64, Outcome>,
    /// Waiting tasks, by bio.
    wakers: WakerSet,
    closed: bool,
    watch: TimerWatch,
}

impl<M: CostModel> State<M> {
    /// Move the core's releases to the outcome table; wake every waiter if
    /// there was one (threads are woken by the caller's `notify_all`).
    fn settle(&mut self) -> bool {
        let mut any = false;
        while let Some(r) = self.ioc.poll_release() {
            self.parked.remove(&r.bio);
            self.outcomes.insert(r.bio, Outcome::Released(r.cost));
            any = true;
        }
        if any {
            self.wakers.wake_all();
        }
        any
    }

    /// Give up a wait that ended without its waiter (a dropped future):
    /// a parked bio leaves its FIFO, a released one returns its cost. The
    /// bios a withdrawal releases are handed over by the caller's
    /// `unlock_settled`.
    fn abandon(&mut self, now: u64, bio: u64, group: GroupId) {
        self.wakers.forget(bio);
        match self.outcomes.remove(&bio) {
            Some(Outcome::Released(cost)) => self.ioc.on_unused(now, group, cost),
            Some(Outcome::Closed) => {}
            None => {
                self.parked.remove(&bio);
                self.ioc.on_withdraw(now, group, bio);
            }
        }
    }
}

/// The first step of an acquire.
enum Begun {
    /// Admitted (cost, delay) at once, or failed.
    Done(Result<(u64, u64), ControllerError>),
    /// Parked in the core's FIFO as `bio`.
    Parked { bio: u64 },
}

/// A thread-safe iocost controller around one [`IoCost`] core: how
/// threads and tasks wait, how the timers run and what closing does are in
/// [the module docs](crate::controller).
#[derive(Debug)]
pub struct Controller<C: Clock = SystemClock, M: CostModel = Linear> {
    state: Mutex<State<M>>,
    cv: Condvar,
    clock: C,
}

impl<M: CostModel> Controller<SystemClock, M> {
    /// A controller on the system clock. [`ControllerError::Disabled`] if
    /// `ioc` is not enabled.
    pub fn new(ioc: IoCost<M>) -> Result<Controller<SystemClock, M>, ControllerError> {
        Controller::with_clock(ioc, SystemClock::new())
    }
}

impl<C: Clock, M: CostModel> Controller<C, M> {
    /// A controller on `clock`, whose readings continue the times `ioc`
    /// was configured at. [`ControllerError::Disabled`] if `ioc` is not
    /// enabled (write a QoS line with `enable=1` first).
    pub fn with_clock(ioc: IoCost<M>, clock: C) -> Result<Controller<C, M>, ControllerError> {
        if !ioc.enabled() {
            return Err(ControllerError::Disabled);
        }
        Ok(Controller {
            state: Mutex::new(State {
                ioc,
                next_bio: 1,
                parked: BTreeMap::new(),
                outcomes: BTreeMap::new(),
                wakers: WakerSet::new(),
                closed: false,
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

    fn lock(&self) -> MutexGuard<'_, State<M>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hand the core's releases to their waiters and unlock: tasks are
    /// woken by `settle`, sleeping threads here, after the unlock.
    fn unlock_settled(&self, mut s: MutexGuard<'_, State<M>>) {
        let woke = s.settle();
        drop(s);
        if woke {
            self.cv.notify_all();
        }
    }

    /// Wait until `io` may be issued; [`ControllerError::Closed`] if the
    /// controller closes first.
    pub fn acquire(&self, io: Io) -> Result<Grant<'_, C, M>, ControllerError> {
        let alloc_ns = self.clock.now_ns();
        let (cost, delay_ns) = match self.begin(io, alloc_ns, None) {
            Begun::Done(r) => r?,
            Begun::Parked { bio } => {
                let mut s = self.lock();
                loop {
                    match s.outcomes.remove(&bio) {
                        Some(Outcome::Released(cost)) => break (cost, 0),
                        Some(Outcome::Closed) => return Err(ControllerError::Closed),
                        None => s = self.cv.wait(s).unwrap_or_else(PoisonError::into_inner),
                    }
                }
            }
        };
        Ok(Grant::new(
            grant::Holder::Borrowed(self),
            io,
            cost,
            delay_ns,
            alloc_ns,
            self.clock.now_ns(),
        ))
    }

    /// [`acquire`](Self::acquire) for a controller in an
    /// [`Arc`](std::sync::Arc): the grant holds a reference count instead
    /// of a borrow, so it may move to another thread or a `'static` task.
    pub fn acquire_owned(
        self: &std::sync::Arc<Self>,
        io: Io,
    ) -> Result<OwnedGrant<C, M>, ControllerError> {
        self.acquire(io).map(|g| g.into_owned(self))
    }

    /// Wait as a task until `io` may be issued. Dropping the future gives
    /// back its place in the FIFO, or the cost of a release not yet polled.
    pub fn acquire_async(&self, io: Io) -> GrantFuture<'_, C, M> {
        GrantFuture::new(grant::Holder::Borrowed(self), io)
    }

    /// [`acquire_async`](Self::acquire_async) resolving to an
    /// [`OwnedGrant`].
    pub fn acquire_owned_async(self: &std::sync::Arc<Self>, io: Io) -> OwnedGrantFuture<C, M> {
        GrantFuture::new(grant::Holder::Owned(std::sync::Arc::clone(self)), io)
    }

    /// Price `io` at `now` and either admit it or park it (registering
    /// `waker` under the lock).
    fn begin(&self, io: Io, now: u64, waker: Option<&Waker>) -> Begun {
        let mut s = self.lock();
        if s.closed {
            return Begun::Done(Err(ControllerError::Closed));
        }
        if !s.ioc.enabled() {
            return Begun::Done(Err(ControllerError::Disabled));
        }
        if io.group != GroupId::ROOT && s.ioc.weight(io.group).is_none() {
            return Begun::Done(Err(ControllerError::UnknownGroup(io.group)));
        }
        let deadline = s.ioc.next_deadline();
        s.watch.observe(now, deadline);
        let bio = s.next_bio;
        s.next_bio += 1;
        let admit = s.ioc.on_submit(
            now,
            &Bio {
                id: bio,
                group: io.group,
                op: io.op,
                bytes: io.bytes,
                sector: io.sector,
                must_issue: io.must_issue,
            },
        );
        let begun = match admit {
            Admit::Go { cost, delay_ns } => Begun::Done(Ok((cost, delay_ns))),
            Admit::Refused(e) => Begun::Done(Err(ControllerError::Cost(e))),
            Admit::Wait => {
                s.parked.insert(bio, io.group);
                if let Some(w) = waker {
                    s.wakers.register(bio, w);
                }
                Begun::Parked { bio }
            }
        };
        self.unlock_settled(s);
        begun
    }

    /// A completed (or, `sample == false`, never issued) grant.
    fn finish(&self, io: &Io, cost: u64, alloc_ns: u64, start_ns: u64, sample: bool) {
        let now = self.clock.now_ns();
        let mut s = self.lock();
        if sample {
            s.ioc.on_done(
                now,
                &crate::Done {
                    group: io.group,
                    cost,
                    op: io.op,
                    bytes: io.bytes,
                    alloc_ns,
                    start_ns,
                },
            );
        } else {
            s.ioc.on_unused(now, io.group, cost);
        }
        self.unlock_settled(s);
    }

    /// Run every timer due (the period timer, the groups' waiter timers),
    /// release the bios that now fit and wake their waiters. Returns the
    /// next deadline on the clock, if any.
    pub fn tick(&self) -> Option<u64> {
        let mut s = self.lock();
        let now = self.clock.now_ns();
        if s.ioc.next_deadline().is_some_and(|d| d <= now) {
            s.ioc.on_timer(now);
        }
        let next = s.ioc.next_deadline();
        self.unlock_settled(s);
        next
    }

    /// Change the core under the lock (add a group, write a weight, a QoS
    /// or model line, read its traces), with the clock's time. Bios the
    /// change releases (a disable releases every one, uncharged) are handed
    /// to their waiters.
    pub fn configure<R>(&self, f: impl FnOnce(&mut IoCost<M>, u64) -> R) -> R {
        let mut s = self.lock();
        let now = self.clock.now_ns();
        let r = f(&mut s.ioc, now);
        self.unlock_settled(s);
        r
    }

    /// End the service: every parked bio leaves its FIFO uncharged and its
    /// waiter gets [`ControllerError::Closed`], as does every later
    /// acquire. Grants held stay valid; their completions still count.
    pub fn close(&self) {
        let mut s = self.lock();
        s.closed = true;
        let now = self.clock.now_ns();
        // Newest first: a FIFO's head leaves last, so no withdrawal serves
        // a bio behind it.
        while let Some((bio, group)) = s.parked.pop_last() {
            s.ioc.on_withdraw(now, group, bio);
            s.outcomes.insert(bio, Outcome::Closed);
        }
        s.settle();
        s.wakers.wake_all();
        drop(s);
        self.cv.notify_all();
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Bios waiting for budget now.
    pub fn waiting(&self) -> usize {
        self.lock().parked.len()
    }

    /// Deadlines found overdue by more than [`LATE_TICK_NS`] when the
    /// controller was used: each is a timer nobody ran in time.
    pub fn missed_ticks(&self) -> u64 {
        self.lock().watch.missed()
    }

    /// The core's io.stat-like snapshot at the clock's time.
    pub fn snapshot(&self) -> crate::Snapshot {
        let s = self.lock();
        s.ioc.snapshot(self.clock.now_ns())
    }
}

impl<C: Clock, M: CostModel> iolab_clock::Timed for Controller<C, M> {
    fn tick(&self) -> Option<u64> {
        Controller::tick(self)
    }

    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    fn is_closed(&self) -> bool {
        Controller::is_closed(self)
    }
}
#[cfg(all(test, not(iolab_loom)))]
mod tests;
