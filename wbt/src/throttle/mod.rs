//! The userspace face: [`Throttle`], a [`Wbt`] shared by threads that block
//! until their write may go.
//!
//! ```
//! use iolab_wbt::{DeviceParams, ManualClock, Op, OpFlags, Options, Throttle, Variant};
//!
//! let params = DeviceParams { queue_depth: 2, rotational: false, write_cache: false };
//! let t = Throttle::with_clock(params, Variant::Modern, Options::default(), ManualClock::new(0));
//! let p = t.acquire(Op::Write, OpFlags::BACKGROUND)?; // background limit is 1 here
//! assert!(t.try_acquire(Op::Write, OpFlags::BACKGROUND).is_err());
//! t.clock().advance(500_000); // the write took 0.5 ms
//! p.complete(); // releases the slot and records the latency
//! assert!(t.try_acquire(Op::Write, OpFlags::BACKGROUND).is_ok());
//! # Ok::<(), iolab_wbt::ThrottleClosed>(())
//! ```
//!
//! # Protocol (modern `rq_qos_wait`, `block/blk-rq-qos.c`)
//!
//! The per-class counters (requests in flight, waiters) live in atomics
//! that the core also uses ([`Slots`](crate::Slots)); one mutex guards the
//! rest of the core and one FIFO of waiters per class; each waiter owns an
//! entry with its own condition variable (a directed wake, never a
//! thundering herd).
//!
//! 1. *Fast path* (lockless, tracked writes and discards): read the limits
//!    the core last published, and in one compare-and-swap on the class's
//!    counter word either take a slot (the class has no waiters and is
//!    below the limit) or count the caller as a waiter. A newcomer never
//!    overtakes a waiter: the waiter count includes threads still on their
//!    way into the queue. If no window runs, the admitted thread starts one
//!    under the lock (as the kernel's `wbt_wait` does after admitting; a
//!    window about to end is shown as ended before the timer counts what is
//!    in flight, so an admission racing it is never left unmonitored).
//!    Reads, untracked writes, a disabled or unlimited throttle, depths too
//!    large for the packing, a publication under way and signals past
//!    their published expiry take the same decision under the lock
//!    ([`Wbt::on_throttle`]).
//! 2. The gap: nothing is held between the fast path and the enqueue, as
//!    in the kernel.
//! 3. *Enqueue* (critical section): note whether the queue was empty,
//!    append the entry, and if it was empty recheck once (the B4 fix: slots
//!    may have drained while we were in the gap, and their wake found an
//!    empty queue). Enqueue and recheck are one critical section, so a
//!    waiter never holds two tokens (I5) and never misses its grant (I6).
//! 4. *Sleep* until the entry is granted.
//!
//! A release gives its slot back with one compare-and-swap when the class
//! has no waiters (no wake can be due), and records its latency sample in
//! the completing thread's own bucket (plain loads and stores; see
//! `samples`), which the core folds in at its next locked section.
//! With waiters it releases through the core under the lock.
//!
//! The *waker* is whoever releases a slot or changes a limit (a [`Permit`]
//! completing, [`Throttle::set_lat_usec`], [`Throttle::set_queue_depth`],
//! [`Throttle::tick`]). Under the lock it drains [`Wbt::poll_wake`] and
//! grants slots in FIFO order *in its own context* ([`Wbt::try_admit`] on
//! the waiter's behalf, with the limit that applies now), stopping at the
//! first refusal; it marks the entry granted, unlinks it and notifies its
//! condition variable. The v5 variant's wake modes are served in the same
//! place (all waiters rechecked in order, or the head only).
//!
//! # Async
//!
//! [`Throttle::acquire_async`] and [`Throttle::acquire_owned_async`] return
//! futures built on std's `Future` and `Waker` alone (no runtime is named;
//! they run under tokio, async-std or a hand-written executor). A task and a
//! thread wait in the same per-class FIFO and are granted by the same waker
//! in the same order: the first poll takes the fast path or enqueues an
//! entry carrying the task's `Waker`, stored under the throttle's lock (so a
//! grant can never slip between the check and the store); the granting
//! thread collects the wakers of the entries it granted and wakes them only
//! after unlocking, so a task's poll never waits for the lock its waker
//! holds. A later poll replaces the stored waker if the task moved.
//!
//! Cancellation is safe: dropping a queued future unlinks its entry (the
//! place is given up; the class's waiter count drops, and if that lets the
//! next waiter through it is granted now), and dropping a future whose
//! entry was already granted gives the slot back as a completion without a
//! latency sample. [`Throttle::close`] wakes every queued task, whose
//! future then resolves to [`ThrottleClosed`]. Polling a future after it
//! resolved panics, as most std futures do.
//!
//! # Timer
//!
//! The window timer is driven by the caller: call [`Throttle::tick`] when
//! [`Throttle::next_deadline`] (on the throttle's clock) has passed. `tick`
//! returns the next deadline, so a background thread can loop
//! `sleep until deadline; tick()` (sleeping a short fixed period while it
//! returns `None`), or an event loop of your own can call it whenever it
//! wakes. [`Ticker`] is that loop, on a thread (`run_blocking`) or in a
//! task on any runtime (`run` with the runtime's sleep). Without ticks the
//! depth never changes; admission still works, and
//! [`Throttle::missed_ticks`] counts the windows found more than
//! [`LATE_TICK_NS`] overdue whenever the throttle took its lock.
//!
//! # Cost and limits
//!
//! Uncontended, an acquire and its completion are two compare-and-swaps
//! (take a slot, give it back), as in the kernel: the latency sample goes
//! to a bucket of the completing thread's own, written with plain loads and
//! stores (the kernel's are per CPU), and folded in under the lock. Beyond
//! those: a read-modify-write when a sample is a new minimum or maximum of
//! its batch (the first after each fold), and the lock when a thread
//! completes its first request on a throttle (registering its bucket).
//! A class holds at most 2^20 − 1 requests in flight in this face (its
//! counter's width); depths above that send every request through the
//! lock.
//!
//! # Shutdown
//!
//! [`Throttle::close`] ends admission for good: every thread asleep in a
//! queue wakes with [`ThrottleClosed`] (its place given up, nothing held),
//! and every later [`acquire`](Throttle::acquire) or
//! [`try_acquire`](Throttle::try_acquire) is refused the same way, reads
//! included. Permits granted before the close stay valid and release as
//! usual, so an engine can close the throttle, let its IO in flight finish,
//! and then drop it. An acquire that races the close either gets its permit
//! (it came first) or the error, never a sleep that nothing will end. The
//! kernel has no counterpart: its queue lives as long as the disk.
//!
//! # Permits
//!
//! A [`Permit`] is the right to have one request in flight. Complete it
//! (or drop it) when the IO finishes: the slot is released, the latency
//! since the grant is recorded as a sample for the window, and waiters may
//! be granted. [`Permit::cancel`] releases without a sample. Leaking a
//! permit (`mem::forget`) leaks its slot, as a lost completion would in the
//! kernel. Reads are never throttled but should take permits too: their
//! latency is the signal WBT steers by.
//!
//! A permit borrows its throttle. Where it must outlive the borrow (moved
//! to a `'static` task, or to the thread that reaps the completion), keep
//! the throttle in a [`std::sync::Arc`] and take an [`OwnedPermit`] with
//! [`Throttle::acquire_owned`] or [`Throttle::try_acquire_owned`]: the
//! same permit, holding a reference count instead of a borrow (the
//! throttle lives until the last of them is released).

mod board;
mod clock;
mod face;
mod future;
mod gate;
mod samples;

use std::boxed::Box;
use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};
use std::sync::PoisonError;
use std::task::Waker;
use std::vec::Vec;

use crate::sync::{Arc, AtomicBool, AtomicU64, Condvar, Mutex, MutexGuard, Ordering};
use crate::{
    Admit, Class, DeviceParams, KnobError, NUM_CLASSES, Op, OpFlags, Options, ReqFlags, Rq,
    Snapshot, TraceRecord, Variant, WakeMode, Wbt, classify_request, select_limit,
};
use board::{Board, Notice};
pub use clock::{Clock, ManualClock, SystemClock};
pub use face::Admission;
pub use future::{Acquire, OwnedAcquire};
use gate::Gates;
use iolab_clock::TimerWatch;
pub use iolab_clock::{LATE_TICK_NS, Ticker, Timed};
use samples::{Registry, WriteSamples};

/// One queued waiter (kernel: `struct rq_qos_wait_data`). All fields are
/// written and read under the throttle's lock; the atomics only make the
/// entry shareable (`Relaxed` is enough).
#[derive(Debug)]
struct Waiter {
    flags: OpFlags,
    granted: AtomicBool,
    /// Turned away by [`Throttle::close`] instead of granted.
    refused: AtomicBool,
    issue_ns: AtomicU64,
    #[cfg(iolab_mutant = "b2")]
    woken: AtomicBool,
    cv: Condvar,
    /// The task to wake, for a waiter queued by [`Throttle::acquire_async`]
    /// (a blocking waiter sleeps on `cv` and leaves this empty). Locked
    /// only with the throttle's lock held, after it.
    waker: Mutex<Option<Waker>>,
}

impl Waiter {
    fn new(flags: OpFlags) -> Waiter {
        Waiter {
            flags,
            granted: AtomicBool::new(false),
            refused: AtomicBool::new(false),
            issue_ns: AtomicU64::new(0),
            #[cfg(iolab_mutant = "b2")]
            woken: AtomicBool::new(false),
            cv: Condvar::new(),
            waker: Mutex::new(None),
        }
    }

    fn is_granted(&self) -> bool {
        self.granted.load(Ordering::Relaxed)
    }

    fn is_refused(&self) -> bool {
        self.refused.load(Ordering::Relaxed)
    }

    fn issue_ns(&self) -> u64 {
        self.issue_ns.load(Ordering::Relaxed)
    }

    /// Mark refused and wake the owner (caller holds the lock and unlinks
    /// the entry; a task's waker goes to `wakers`, woken once the lock is
    /// released).
    fn refuse(&self, wakers: &mut Vec<Waker>) {
        self.refused.store(true, Ordering::Relaxed);
        self.notify(wakers);
    }

    /// Mark granted at `now` and wake the owner (caller holds the lock and
    /// unlinks the entry).
    fn grant(&self, now: u64, wakers: &mut Vec<Waker>) {
        self.issue_ns.store(now, Ordering::Relaxed);
        self.granted.store(true, Ordering::Relaxed);
        self.notify(wakers);
    }

    /// Wake the owner: a thread on `cv`, a task through its waker (caller
    /// holds the throttle's lock).
    fn notify(&self, wakers: &mut Vec<Waker>) {
        self.cv.notify_one();
        if let Some(waker) = self.lock_waker().take() {
            wakers.push(waker);
        }
    }

    /// Remember the task to wake (caller holds the throttle's lock).
    fn set_waker(&self, waker: &Waker) {
        let mut slot = self.lock_waker();
        if !slot.as_ref().is_some_and(|w| w.will_wake(waker)) {
            *slot = Some(waker.clone());
        }
    }

    fn lock_waker(&self) -> MutexGuard<'_, Option<Waker>> {
        self.waker.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[derive(Debug)]
struct Inner {
    /// The core, boxed: it is over 5 KiB, and a throttle is moved by
    /// value into `Arc`s and onto the small stacks loom models run on.
    wbt: Box<Wbt<Gates>>,
    queues: [VecDeque<Arc<Waiter>>; NUM_CLASSES],
    last_now: u64,
    next_id: u64,
    /// What the board shows (see [`Throttle::publish`]).
    published: Option<Notice>,
    /// The per-thread sample buckets and what was folded from each.
    registry: Registry,
    /// [`Throttle::close`] was called: nothing more is admitted.
    closed: bool,
    /// Tasks granted or refused in this locked section, woken when it ends
    /// (outside the lock: a waker is the executor's code).
    wakers: Vec<Waker>,
    /// Window deadlines found overdue under the lock (nobody ticks).
    watch: TimerWatch,
}

impl Inner {
    fn now(&mut self, clock: &impl Clock) -> u64 {
        self.last_now = self.last_now.max(clock.now_ns());
        self.note_late_window();
        self.last_now
    }

    /// Count the window's deadline if it is overdue. Kept out of line:
    /// `now` is inlined into every locked path, whose frames the loom
    /// models run on small coroutine stacks.
    #[inline(never)]
    fn note_late_window(&mut self) {
        let deadline = self.wbt.next_deadline();
        self.watch.observe(self.last_now, deadline);
    }

    fn next_id(&mut self) -> u64 {
        self.next_id = self.next_id.wrapping_add(1);
        self.next_id
    }

    /// The waker (kernel: `rq_qos_wake_function`): serve every queued wake in the
    /// caller's context, under the lock.
    fn dispatch(&mut self, now: u64) {
        let Inner {
            wbt,
            queues,
            wakers,
            ..
        } = self;
        while let Some(wake) = wbt.poll_wake() {
            let class = wake.class;
            let q = &mut queues[class.index()];
            match wake.mode {
                #[cfg(not(iolab_mutant = "b2"))]
                WakeMode::GrantFifo => {
                    while let Some(head) = q.front() {
                        if !wbt.try_admit(now, class, head.flags) {
                            break; // head-of-line blocking, by design
                        }
                        head.grant(now, wakers);
                        q.pop_front();
                    }
                }
                // Mutant B2 (pre-2018): wake everyone and let each waiter
                // recheck for itself; whoever runs first wins.
                #[cfg(iolab_mutant = "b2")]
                WakeMode::GrantFifo => {
                    for w in q.iter() {
                        w.woken.store(true, Ordering::Relaxed);
                        w.notify(wakers);
                    }
                }
                WakeMode::RecheckOne => {
                    if let Some(head) = q.front().filter(|h| wbt.try_admit(now, class, h.flags)) {
                        head.grant(now, wakers);
                        q.pop_front();
                    }
                }
                WakeMode::RecheckAll => q.retain(|w| {
                    if wbt.try_admit(now, class, w.flags) {
                        w.grant(now, wakers);
                        false
                    } else {
                        true
                    }
                }),
            }
        }
    }
}

/// State of a [`Throttle`] for export: the core's [`Snapshot`] plus the
/// face's queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThrottleSnapshot {
    /// The core's state (limits, inflight, step, window, ...).
    pub wbt: Snapshot,
    /// Threads asleep in each class's FIFO (index with [`Class::index`]).
    /// The core's `waiting` also counts threads between the fast path and
    /// the queue.
    pub queued: [usize; NUM_CLASSES],
    /// The throttle's time when the snapshot was taken.
    pub now_ns: u64,
}

/// WBT for threads: a [`Wbt`] whose per-class counters are atomics, a
/// lockless fast path, and behind a lock the rest of the core with
/// per-class FIFO wait queues. Share it by reference or in an `Arc`. See
/// [the module docs](crate::throttle) for the protocol, the timer and
/// the async face.
#[derive(Debug)]
pub struct Throttle<C: Clock = SystemClock> {
    inner: Mutex<Inner>,
    /// The core's counters, shared with the fast path.
    gates: Gates,
    /// What the fast path admits from, published under the lock.
    board: Board,
    /// Fast-path write latency samples, folded in under the lock.
    samples: WriteSamples,
    variant: Variant,
    clock: C,
}

/// The lock held: every locked section starts by folding the fast path's
/// samples into the core and ends by publishing the core's admission view
/// for the fast path.
struct Locked<'a, C: Clock> {
    guard: Option<MutexGuard<'a, Inner>>,
    throttle: &'a Throttle<C>,
}

impl<C: Clock> Locked<'_, C> {
    /// Sleep on `cv`, releasing the lock meanwhile (and publishing first).
    fn wait(&mut self, cv: &Condvar) {
        let mut guard = self.guard.take().expect("the guard is held between waits");
        self.throttle.publish(&mut guard);
        // No section that sleeps grants today; should one, its tasks are
        // woken before the sleep rather than forgotten.
        guard.wakers.drain(..).for_each(Waker::wake);
        let guard = cv.wait(guard).unwrap_or_else(PoisonError::into_inner);
        self.guard = Some(guard);
    }
}

impl<C: Clock> Deref for Locked<'_, C> {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        self.guard
            .as_ref()
            .expect("the guard is held between waits")
    }
}

impl<C: Clock> DerefMut for Locked<'_, C> {
    fn deref_mut(&mut self) -> &mut Inner {
        self.guard
            .as_mut()
            .expect("the guard is held between waits")
    }
}

impl<C: Clock> Drop for Locked<'_, C> {
    fn drop(&mut self) {
        if let Some(mut guard) = self.guard.take() {
            self.throttle.publish(&mut guard);
            let wakers = std::mem::take(&mut guard.wakers);
            drop(guard);
            wakers.into_iter().for_each(Waker::wake);
        }
    }
}

/// Where protocol steps 1 to 3 left a request (see [`Throttle::begin`]).
enum Begun<'a, C: Clock> {
    /// Admitted or refused.
    Done(Result<Permit<'a, C>, ThrottleClosed>),
    /// Queued in `class`'s FIFO, the lock still held; `first` if the queue
    /// was empty before.
    Queued {
        me: Arc<Waiter>,
        class: Class,
        first: bool,
        guard: Locked<'a, C>,
    },
}

/// What the fast path did with a request.
enum Fast<'a, C: Clock> {
    /// Admitted.
    Go(Permit<'a, C>),
    /// Counted as a waiter of the class (only when asked to register).
    Wait(Class),
    /// Over the limit, nothing left behind (a `try_acquire`).
    Refused,
    /// Not for the fast path: decide under the lock.
    Locked,
}

impl Throttle<SystemClock> {
    /// A throttle on the system clock with default options.
    pub fn new(params: DeviceParams, variant: Variant) -> Throttle<SystemClock> {
        Throttle::with_clock(params, variant, Options::default(), SystemClock::new())
    }
}

impl<C: Clock> Throttle<C> {
    /// A throttle reading time from `clock`. `options.start_ns` should be
    /// the clock's current reading.
    pub fn with_clock(params: DeviceParams, variant: Variant, options: Options, clock: C) -> Self {
        let start = clock.now_ns().max(options.start_ns);
        let options = Options {
            start_ns: start,
            ..options
        };
        let gates = Gates::new();
        let t = Throttle {
            inner: Mutex::new(Inner {
                wbt: Box::new(Wbt::with_slots(params, variant, options, gates.clone())),
                queues: [VecDeque::new(), VecDeque::new(), VecDeque::new()],
                last_now: start,
                next_id: 0,
                published: None,
                registry: Registry::default(),
                closed: false,
                watch: TimerWatch::new(LATE_TICK_NS),
                wakers: Vec::new(),
            }),
            gates,
            board: Board::new(),
            samples: WriteSamples::new(),
            variant,
            clock,
        };
        drop(t.lock()); // the first publication
        t
    }

    /// The clock this throttle reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    fn lock(&self) -> Locked<'_, C> {
        // Nothing in the critical sections panics while the state is
        // half-updated, so a poisoned lock still guards consistent state.
        let mut guard = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let inner = &mut *guard;
        if let Some(stat) = self.samples.drain(&mut inner.registry) {
            inner.wbt.add_write_samples(&stat);
        }
        Locked {
            guard: Some(guard),
            throttle: self,
        }
    }

    /// Publish what changed for the fast path (caller holds the lock). A
    /// new word is stored between two epoch bumps (a sequence lock, see
    /// `gate`); a later expiry alone is stored without them.
    fn publish(&self, g: &mut Inner) {
        let notice = Notice::new(&g.wbt.admission_view(), g.last_now);
        self.post(g, notice);
    }

    fn post(&self, g: &mut Inner, notice: Notice) {
        // Closed: every newcomer takes the locked path, which refuses it.
        let notice = if g.closed {
            notice.locked_only()
        } else {
            notice
        };
        if g.published == Some(notice) {
            return;
        }
        let new_word = !g.published.is_some_and(|p| p.same_word(&notice));
        g.published = Some(notice);
        if new_word {
            self.gates.bump_epoch();
        }
        self.board.store(&notice);
        if new_word {
            self.gates.bump_epoch();
        }
    }

    /// The fast path's time: the clock as it reads (a [`Clock`] never goes
    /// back; the locked path also guards against one that does).
    #[inline]
    fn fast_now(&self) -> u64 {
        self.clock.now_ns()
    }

    fn permit(&self, op: Op, flags: ReqFlags, id: u64, issue_ns: u64) -> Permit<'_, C> {
        Permit {
            throttle: Holder::Borrowed(self),
            rq: Rq { id, op, flags },
            issue_ns,
            live: true,
        }
    }

    /// Admitted on the locked path: stamp the request as issued now.
    fn go(&self, g: &mut Inner, now: u64, op: Op, flags: ReqFlags) -> Permit<'_, C> {
        let id = g.next_id();
        let rq = Rq { id, op, flags };
        g.wbt.on_issue(now, rq);
        self.permit(op, flags, id, now)
    }

    /// The lockless admission of a tracked bio (protocol step 1). With
    /// `register`, a refusal counts the caller as a waiter.
    fn fast_admit(&self, op: Op, flags: OpFlags, register: bool) -> Fast<'_, C> {
        let f = classify_request(self.variant, true, op, flags);
        let Some(class) = f.class() else {
            return Fast::Locked; // reads and untracked writes feed the core
        };
        let now = self.fast_now();
        let fifo = self.variant == Variant::Modern;
        // The op as the core derives it from the class (see
        // `Wbt::admission_limit`).
        let op = if class == Class::Discard {
            Op::Discard
        } else {
            Op::Write
        };
        let limit = || {
            self.board.limit(now, |limits, dirty, close| {
                select_limit(self.variant, op, flags, limits, dirty, close)
            })
        };
        match self.gates.admit_with(class, fifo, register, limit) {
            None => return Fast::Locked,
            Some(false) if register => return Fast::Wait(class),
            Some(false) => return Fast::Refused,
            Some(true) => {}
        }
        if !self.board.armed() {
            let mut g = self.lock();
            let now = g.now(&self.clock);
            g.wbt.ensure_window(now);
        }
        // A tracked request is never the stuck-read cookie, so it needs no
        // unique id (the core's ids start at 1).
        Fast::Go(self.permit(op, f, 0, now))
    }

    /// Block until a request `op` with `flags` may go; the permit holds its
    /// slot until completed or dropped. Untracked requests (reads,
    /// O_DIRECT writes, everything while disabled) return at once.
    /// [`ThrottleClosed`] if the throttle is closed before the grant (see
    /// [`close`](Self::close)).
    pub fn acquire(&self, op: Op, flags: OpFlags) -> Result<Permit<'_, C>, ThrottleClosed> {
        let (me, class, first, mut g) = match self.begin(op, flags, None) {
            Begun::Done(result) => return result,
            Begun::Queued {
                me,
                class,
                first,
                guard,
            } => (me, class, first, guard),
        };
        let _ = first; // read by mutant B5 only
        // Mutant B4 (v5.3..v5.14): decide "first" after enqueueing, in a
        // separate step, by "am I the only sleeper"; two waiters that both
        // enqueued before looking both see two sleepers.
        #[cfg(iolab_mutant = "b4")]
        {
            drop(g);
            g = self.lock();
            let now = g.now(&self.clock);
            if g.queues[class.index()].len() == 1
                && !me.is_granted()
                && g.wbt.try_admit(now, class, flags)
            {
                g.queues[class.index()].clear();
                return Ok(self.granted(&mut g, op, class, now));
            }
        }
        // Mutant B5 (2019, before "use a mb for got_token"): the first
        // waiter's recheck does not see a grant the waker made meanwhile;
        // it takes a second token and returns one permit.
        #[cfg(iolab_mutant = "b5")]
        if first {
            drop(g);
            g = self.lock();
            let now = g.now(&self.clock);
            if g.wbt.try_admit(now, class, flags) {
                g.queues[class.index()].retain(|w| !Arc::ptr_eq(w, &me));
                return Ok(self.granted(&mut g, op, class, now));
            }
        }
        // 4. Sleep until the waker grants us a slot or the close turns us
        // away (either unlinked our entry).
        while !me.is_granted() {
            if me.is_refused() {
                return Err(ThrottleClosed);
            }
            g.wait(&me.cv);
            #[cfg(iolab_mutant = "b2")]
            if self.recheck_woken(&mut g, &me, class) {
                let now = g.now(&self.clock);
                return Ok(self.granted(&mut g, op, class, now));
            }
        }
        Ok(self.granted(&mut g, op, class, me.issue_ns()))
    }

    /// Protocol steps 1 to 3, shared by the blocking and the async face:
    /// the fast path (lockless or under the lock), the gap, and the
    /// enqueue with the first waiter's recheck. A waiter left queued is
    /// returned with the lock still held; `waker` (the async face's task)
    /// is stored in its entry before the entry is visible to a waker.
    fn begin(&self, op: Op, flags: OpFlags, waker: Option<&Waker>) -> Begun<'_, C> {
        // 1. Fast path, lockless or under the lock.
        let class = match self.fast_admit(op, flags, true) {
            Fast::Go(p) => return Begun::Done(Ok(p)),
            Fast::Wait(class) => class,
            Fast::Refused | Fast::Locked => {
                let mut g = self.lock();
                if g.closed {
                    return Begun::Done(Err(ThrottleClosed));
                }
                let now = g.now(&self.clock);
                match g.wbt.on_throttle(now, op, flags) {
                    Admit::Go(f) => return Begun::Done(Ok(self.go(&mut g, now, op, f))),
                    Admit::Wait(class) => class,
                }
            }
        };
        // 2. The gap.
        let me = Arc::new(Waiter::new(flags));
        if let Some(waker) = waker {
            me.set_waker(waker);
        }
        let mut g = self.lock();
        if g.closed {
            // Counted as a waiter on the way in; never queued.
            g.wbt.on_wait_cancelled(class);
            return Begun::Done(Err(ThrottleClosed));
        }
        // 3. Enqueue, and the first waiter rechecks once (B4 fix).
        let now = g.now(&self.clock);
        let first = g.queues[class.index()].is_empty();
        g.queues[class.index()].push_back(Arc::clone(&me));
        #[cfg(not(any(iolab_mutant = "b3", iolab_mutant = "b4", iolab_mutant = "b5")))]
        if first && g.wbt.try_admit(now, class, flags) {
            g.queues[class.index()].pop_back();
            return Begun::Done(Ok(self.granted(&mut g, op, class, now)));
        }
        // Mutant B3 (before v5.3): trust the fast path's view of the queue;
        // never recheck after enqueueing.
        #[cfg(any(iolab_mutant = "b3", iolab_mutant = "b4", iolab_mutant = "b5"))]
        let _ = now;
        Begun::Queued {
            me,
            class,
            first,
            guard: g,
        }
    }

    /// Mutant B2: a waiter woken without a grant rechecks for itself and,
    /// if it fits, leaves the queue with a slot (`true`).
    #[cfg(iolab_mutant = "b2")]
    fn recheck_woken(&self, g: &mut Locked<'_, C>, me: &Arc<Waiter>, class: Class) -> bool {
        if me.is_granted() || !me.woken.swap(false, Ordering::Relaxed) {
            return false;
        }
        let now = g.now(&self.clock);
        if !g.wbt.try_admit(now, class, me.flags) {
            return false;
        }
        g.queues[class.index()].retain(|w| !Arc::ptr_eq(w, me));
        true
    }

    /// A waiter holds a slot of `class` since `issue_ns`.
    fn granted(&self, g: &mut Inner, op: Op, class: Class, issue_ns: u64) -> Permit<'_, C> {
        let id = g.next_id();
        let flags = ReqFlags::tracked(class);
        g.wbt.on_issue(issue_ns, Rq { id, op, flags });
        self.permit(op, flags, id, issue_ns)
    }

    /// Like [`acquire`](Self::acquire) but never blocks:
    /// [`TryAcquireError::WouldBlock`] if the request would have to wait
    /// (over the limit, or others are waiting), [`TryAcquireError::Closed`]
    /// once the throttle is closed.
    pub fn try_acquire(&self, op: Op, flags: OpFlags) -> Result<Permit<'_, C>, TryAcquireError> {
        match self.fast_admit(op, flags, false) {
            Fast::Go(p) => return Ok(p),
            Fast::Refused => return Err(TryAcquireError::WouldBlock),
            Fast::Wait(_) | Fast::Locked => {}
        }
        let mut g = self.lock();
        if g.closed {
            return Err(TryAcquireError::Closed);
        }
        let now = g.now(&self.clock);
        let f = g
            .wbt
            .on_try_throttle(now, op, flags)
            .ok_or(TryAcquireError::WouldBlock)?;
        Ok(self.go(&mut g, now, op, f))
    }

    /// [`acquire`](Self::acquire) for a class: a background write, a swap
    /// write or a discard.
    pub fn acquire_class(&self, class: Class) -> Result<Permit<'_, C>, ThrottleClosed> {
        let (op, flags) = class_request(class);
        self.acquire(op, flags)
    }

    /// [`try_acquire`](Self::try_acquire) for a class.
    pub fn try_acquire_class(&self, class: Class) -> Result<Permit<'_, C>, TryAcquireError> {
        let (op, flags) = class_request(class);
        self.try_acquire(op, flags)
    }

    /// [`acquire`](Self::acquire) for a throttle in an [`std::sync::Arc`]:
    /// the permit holds a reference count instead of a borrow, so it may
    /// move to another thread or a `'static` task (see [the module docs](crate::throttle)'
    /// *Permits*).
    pub fn acquire_owned(
        self: &std::sync::Arc<Self>,
        op: Op,
        flags: OpFlags,
    ) -> Result<OwnedPermit<C>, ThrottleClosed> {
        self.acquire(op, flags).map(|p| p.into_owned(self))
    }

    /// [`try_acquire`](Self::try_acquire), returning an [`OwnedPermit`].
    pub fn try_acquire_owned(
        self: &std::sync::Arc<Self>,
        op: Op,
        flags: OpFlags,
    ) -> Result<OwnedPermit<C>, TryAcquireError> {
        self.try_acquire(op, flags).map(|p| p.into_owned(self))
    }

    /// [`acquire`](Self::acquire) as a future: it resolves when the
    /// request may go, a task waiting in the same FIFO as blocked threads
    /// (see [the module docs](crate::throttle)' *Async*).
    pub fn acquire_async(&self, op: Op, flags: OpFlags) -> Acquire<'_, C> {
        Acquire::new(Holder::Borrowed(self), op, flags)
    }

    /// [`acquire_async`](Self::acquire_async) for a throttle in an
    /// [`std::sync::Arc`]: the future and its permit own a reference count,
    /// so both may move to a `'static` task.
    pub fn acquire_owned_async(
        self: &std::sync::Arc<Self>,
        op: Op,
        flags: OpFlags,
    ) -> OwnedAcquire<C> {
        Acquire::new(Holder::Owned(std::sync::Arc::clone(self)), op, flags)
    }

    /// A queued task gave up (its [`Acquire`] was dropped): a slot granted
    /// meanwhile goes back without a sample, a place in the queue is given
    /// up and the waiters behind it get their chance.
    fn abandon(&self, me: &Arc<Waiter>, op: Op, class: Class) {
        let mut g = self.lock();
        if me.is_granted() {
            let permit = self.granted(&mut g, op, class, me.issue_ns());
            drop(g);
            permit.cancel();
        } else if !me.is_refused() {
            g.queues[class.index()].retain(|w| !Arc::ptr_eq(w, me));
            g.wbt.on_wait_cancelled(class);
            g.wbt.wake_class(class);
            let now = g.now(&self.clock);
            g.dispatch(now);
        }
    }

    fn release(&self, rq: Rq, issue_ns: Option<u64>) {
        let mut sample = issue_ns;
        if let Some(class) = rq.flags.class() {
            // A tracked request is a write or a discard: a write-direction
            // sample, which the core keeps only while a window runs.
            if let Some(issue) = issue_ns {
                let lat = self.fast_now().saturating_sub(issue);
                if !self.board.armed() || self.record(lat) {
                    sample = None;
                }
            }
            if sample.is_none() && self.gates.release_quiet(class) {
                return;
            }
        }
        let mut g = self.lock();
        let now = g.now(&self.clock);
        g.wbt.on_done(now, rq, sample);
        g.dispatch(now);
    }

    /// Record a write sample in this thread's bucket (`false`: give it to
    /// the core under the lock). A thread's first sample registers its
    /// bucket under the lock, without the fold and publication of
    /// [`lock`](Self::lock): nothing else changes.
    #[inline]
    fn record(&self, lat: u64) -> bool {
        self.samples.record(lat, |bucket| {
            self.inner
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .registry
                .register(bucket);
        })
    }

    /// Run `f` on the core under the lock, then serve any wakes it queued.
    fn reconfigure<T>(&self, f: impl FnOnce(&mut Wbt<Gates>, u64) -> T) -> T {
        let mut g = self.lock();
        let now = g.now(&self.clock);
        let r = f(&mut g.wbt, now);
        g.dispatch(now);
        r
    }

    /// Write the `wbt_lat_usec` knob ([`Wbt::set_lat_usec`]): −1 default,
    /// 0 off, else µs. Safe while threads wait: a change resets the depth
    /// to step 0 and re-evaluates every waiter; turning WBT off grants all
    /// waiters (disabled means unlimited, as `get_limit` did in 5.x). Permits
    /// keep the flags they were granted with, so enable flips never unbalance
    /// the counters (the negative-inflight hang of 2022).
    pub fn set_lat_usec(&self, value: i64) -> Result<(), KnobError> {
        self.reconfigure(|w, _| w.set_lat_usec(value))
    }

    /// [`set_lat_usec`](Self::set_lat_usec) from text, as sysfs takes it.
    pub fn set_lat_usec_str(&self, text: &str) -> Result<(), KnobError> {
        self.reconfigure(|w, _| w.set_lat_usec_str(text))
    }

    /// Read the `wbt_lat_usec` knob.
    pub fn lat_usec(&self) -> u64 {
        self.lock().wbt.lat_usec()
    }

    /// The device queue depth changed: limits are recomputed at step 0 and
    /// waiters re-evaluated (a raise grants them; after a drop they wait
    /// for completions).
    pub fn set_queue_depth(&self, queue_depth: u32) {
        self.reconfigure(|w, _| w.set_queue_depth(queue_depth));
    }

    /// The volatile write cache appeared or went away.
    pub fn set_write_cache(&self, write_cache: bool) {
        self.reconfigure(|w, _| w.set_write_cache(write_cache));
    }

    /// A writer slept in dirty-page balancing ([`Wbt::on_dirty_throttle`]).
    pub fn dirty_throttle(&self) {
        self.reconfigure(|w, now| w.on_dirty_throttle(now));
    }

    /// A writer left dirty-page balancing ([`Wbt::on_dirty_throttle_end`]).
    pub fn dirty_throttle_end(&self) {
        self.reconfigure(|w, now| w.on_dirty_throttle_end(now));
    }

    /// Run the window timer if it is due ([`Wbt::on_timer`]) and serve the
    /// wakes a depth change queued. Returns the next deadline on the
    /// throttle's clock, `None` while no window runs.
    pub fn tick(&self) -> Option<u64> {
        let mut g = self.lock();
        let now = g.now(&self.clock);
        if g.wbt.next_deadline().is_some_and(|d| now >= d) {
            // The window may end here without a successor if nothing is in
            // flight. Show that before the timer counts what is in flight:
            // a fast admission then either lands in that count or sees no
            // window and starts one once the lock is free.
            let mut view = g.wbt.admission_view();
            view.window_armed = false;
            let last_now = g.last_now;
            self.post(&mut g, Notice::new(&view, last_now));
        }
        g.wbt.on_timer(now);
        g.dispatch(now);
        g.wbt.next_deadline()
    }

    /// When [`tick`](Self::tick) is next due, `None` while no window runs.
    pub fn next_deadline(&self) -> Option<u64> {
        self.lock().wbt.next_deadline()
    }

    /// End admission: every queued thread wakes with [`ThrottleClosed`]
    /// and every later acquire is refused (see the module's *Shutdown*).
    /// Permits already granted stay valid and release as usual. Closing
    /// twice is closing once.
    pub fn close(&self) {
        let mut g = self.lock();
        if g.closed {
            return;
        }
        g.closed = true;
        for class in Class::ALL {
            let queue = std::mem::take(&mut g.queues[class.index()]);
            for waiter in queue {
                g.wbt.on_wait_cancelled(class);
                waiter.refuse(&mut g.wakers);
            }
        }
        // Dropping the lock publishes the board without its fast path.
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Window deadlines found overdue by more than [`LATE_TICK_NS`]
    /// whenever the throttle took its lock (the locked path, a snapshot):
    /// each is a window nobody ended in time, so the depth did not adapt.
    /// Nonzero means nobody runs [`tick`](Self::tick) (see
    /// [`Ticker`]).
    pub fn missed_ticks(&self) -> u64 {
        let mut g = self.lock();
        let _ = g.now(&self.clock);
        g.watch.missed()
    }

    /// A copy of the state for export.
    pub fn snapshot(&self) -> ThrottleSnapshot {
        let mut g = self.lock();
        let _ = g.now(&self.clock);
        ThrottleSnapshot {
            wbt: g.wbt.snapshot(),
            queued: [g.queues[0].len(), g.queues[1].len(), g.queues[2].len()],
            now_ns: g.last_now.max(self.clock.now_ns()),
        }
    }

    /// Drain the trace records (oldest first) into `f`. They are taken
    /// under the lock and handed to `f` after it is released, so `f` may
    /// use the throttle (complete a permit, take a snapshot).
    pub fn drain_trace(&self, f: impl FnMut(TraceRecord)) {
        let records: std::vec::Vec<TraceRecord> = {
            let mut g = self.lock();
            core::iter::from_fn(|| g.wbt.poll_trace()).collect()
        };
        records.into_iter().for_each(f);
    }
}

/// [`Throttle::acquire`] was refused: the throttle is closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThrottleClosed;

impl core::fmt::Display for ThrottleClosed {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("the throttle is closed")
    }
}

impl std::error::Error for ThrottleClosed {}

/// Why [`Throttle::try_acquire`] gave no permit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TryAcquireError {
    /// The request would have to wait: over the limit, or others wait.
    WouldBlock,
    /// The throttle is closed.
    Closed,
}

impl core::fmt::Display for TryAcquireError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            TryAcquireError::WouldBlock => f.write_str("the request would have to wait"),
            TryAcquireError::Closed => f.write_str("the throttle is closed"),
        }
    }
}

impl std::error::Error for TryAcquireError {}

fn class_request(class: Class) -> (Op, OpFlags) {
    match class {
        Class::Bg => (Op::Write, OpFlags::BACKGROUND),
        Class::Swap => (Op::Write, OpFlags::SWAP),
        Class::Discard => (Op::Discard, OpFlags::NONE),
    }
}

/// The right to have one request in flight, from [`Throttle::acquire`].
/// Completing or dropping it releases the slot and records its latency.
///
/// Dropping counts as a completion: the time since the grant becomes a
/// write-latency sample of the current window. A request that failed, or
/// never reached the device, must end with [`cancel`](Permit::cancel)
/// instead, or its (usually short) time is taken as the device's.
#[derive(Debug)]
#[must_use = "dropping a permit at once releases its slot"]
pub struct Permit<'a, C: Clock = SystemClock> {
    throttle: Holder<'a, C>,
    rq: Rq,
    issue_ns: u64,
    live: bool,
}

/// A [`Permit`] that owns a reference count of its throttle instead of
/// borrowing it, from [`Throttle::acquire_owned`]: `'static` whenever the
/// clock is.
pub type OwnedPermit<C = SystemClock> = Permit<'static, C>;

/// How a permit reaches its throttle.
#[derive(Debug)]
enum Holder<'a, C: Clock> {
    Borrowed(&'a Throttle<C>),
    Owned(std::sync::Arc<Throttle<C>>),
}

impl<'a, C: Clock> Holder<'a, C> {
    /// Another holder of the same throttle.
    fn share(&self) -> Holder<'a, C> {
        match self {
            Holder::Borrowed(t) => Holder::Borrowed(t),
            Holder::Owned(t) => Holder::Owned(std::sync::Arc::clone(t)),
        }
    }
}

impl<C: Clock> Deref for Holder<'_, C> {
    type Target = Throttle<C>;

    fn deref(&self) -> &Throttle<C> {
        match self {
            Holder::Borrowed(t) => t,
            Holder::Owned(t) => t,
        }
    }
}

impl<C: Clock> Permit<'_, C> {
    /// The flags WBT gave the request (tracked class, read).
    pub fn flags(&self) -> ReqFlags {
        self.rq.flags
    }

    /// The class whose slot this permit holds, `None` if untracked.
    pub fn class(&self) -> Option<Class> {
        self.rq.flags.class()
    }

    /// When the permit was granted (the request's issue time).
    pub fn issue_ns(&self) -> u64 {
        self.issue_ns
    }

    /// The request completed: release the slot, record the latency since
    /// the grant. Same as dropping the permit.
    pub fn complete(mut self) {
        self.finish(true);
    }

    /// The request never reached the device: release the slot without a
    /// latency sample.
    pub fn cancel(mut self) {
        self.finish(false);
    }

    /// The same permit holding `owner` (the throttle it was granted by)
    /// instead of a borrow.
    fn into_owned(self, owner: &std::sync::Arc<Throttle<C>>) -> OwnedPermit<C> {
        self.rehome(Holder::Owned(std::sync::Arc::clone(owner)))
    }

    /// The same permit reaching its throttle through `holder`.
    fn rehome<'b>(mut self, holder: Holder<'b, C>) -> Permit<'b, C> {
        debug_assert!(std::ptr::eq(&*self.throttle, &*holder));
        let moved = Permit {
            throttle: holder,
            rq: self.rq,
            issue_ns: self.issue_ns,
            live: self.live,
        };
        self.live = false; // the new permit releases it
        moved
    }

    /// Keep the slot past this permit: it stays taken until released
    /// through [`Admission::release`].
    pub(crate) fn keep(mut self) {
        self.live = false;
    }

    fn finish(&mut self, sample: bool) {
        if std::mem::replace(&mut self.live, false) {
            let issue = sample.then_some(self.issue_ns);
            self.throttle.release(self.rq, issue);
        }
    }
}

impl<C: Clock> Drop for Permit<'_, C> {
    fn drop(&mut self) {
        self.finish(true);
    }
}

impl<C: Clock> Timed for Throttle<C> {
    fn tick(&self) -> Option<u64> {
        Throttle::tick(self)
    }

    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    fn is_closed(&self) -> bool {
        Throttle::is_closed(self)
    }
}
