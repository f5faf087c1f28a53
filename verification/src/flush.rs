//! Conformance suites for btrfs flushing's extension points, for
//! anyone's variant: the flush policy ([`FlushPolicy`](iolab_flush::FlushPolicy):
//! which states reclaim walks, when a flusher commits), driven through
//! the core on proptest streams,
//!
//! ```
//! let ours = iolab_flush::Policy::on_demand();
//! iolab_verification::flush::policy::check(move || ours);
//! ```
//!
//! and the reservation pool's face
//! ([`ReservationPool`](iolab_flush::ReservationPool)), for anyone's
//! threaded pool: loom models, compiled under `--cfg iolab_loom`.
//!
//! ```text
//! // tests/pool_loom.rs of your crate
//! #![cfg(iolab_loom)]
//! #[test]
//! fn my_pool_conforms() {
//!     iolab_verification::flush::pool::check(|| MyPool::new(iolab_verification::flush::pool::SPACE));
//! }
//! ```
//!
//! ```text
//! RUSTFLAGS="--cfg iolab_loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release --test pool_loom
//! ```

/// The reservation pool's loom models.
#[cfg(iolab_loom)]
pub mod pool {
    use iolab_flush::sync::{Arc, AtomicBool, AtomicU64, Ordering, thread};
    use iolab_flush::{PoolError, ReservationPool, TicketError};

    const KIB: u64 = 1024;

    /// The space the models expect the pool `make` builds to have free:
    /// exactly this, and nothing else can make room (no flusher runs).
    pub const SPACE: u64 = 1024 * KIB;

    /// The pool under a model, with the model's own count of the bytes
    /// it has seen granted and not yet given back.
    struct Under<P> {
        pool: P,
        held: AtomicU64,
    }

    impl<P: ReservationPool> Under<P> {
        fn new(pool: P) -> Arc<Under<P>> {
            Arc::new(Under {
                pool,
                held: AtomicU64::new(0),
            })
        }

        /// Note a grant: the bytes held never exceed the space.
        fn granted(&self, bytes: u64) {
            let now = self.held.fetch_add(bytes, Ordering::SeqCst) + bytes;
            assert!(
                now <= SPACE,
                "granted beyond the space: {now} bytes held of {SPACE}"
            );
        }

        fn reserve(&self, bytes: u64) -> Result<u64, PoolError> {
            self.pool.reserve_bytes(bytes)?;
            self.granted(bytes);
            Ok(bytes)
        }

        fn release(&self, bytes: u64) {
            self.held.fetch_sub(bytes, Ordering::SeqCst);
            self.pool.release_bytes(bytes);
        }

        /// Spin (yielding to the model checker) until `n` reservations wait.
        fn wait_waiters(&self, n: usize) {
            while self.pool.waiters() < n {
                thread::yield_now();
            }
        }

        /// At a model's end: every byte given back, nobody waiting, and
        /// the whole space grantable at once.
        fn settled(&self) {
            assert_eq!(self.pool.waiters(), 0, "a reservation is still waiting");
            assert_eq!(
                self.pool.held_bytes(),
                0,
                "bytes held after every reservation gave its bytes back (a leak)"
            );
            self.reserve(SPACE)
                .expect("the whole space, free again, is granted");
            self.release(SPACE);
        }
    }

    fn thread_reserving<P: ReservationPool + 'static>(
        u: &Arc<Under<P>>,
        bytes: u64,
    ) -> thread::JoinHandle<Result<u64, PoolError>> {
        let u = Arc::clone(u);
        thread::spawn(move || u.reserve(bytes))
    }

    /// Runs every model on pools `make` builds, each with [`SPACE`] free.
    ///
    /// # Panics
    ///
    /// Where a model fails: a rule's message, or loom's report of a
    /// deadlock (a lost wakeup or a sleeper left behind).
    pub fn check<P, F>(make: F)
    where
        P: ReservationPool + 'static,
        F: Fn() -> P + Send + Sync + 'static,
    {
        let make = std::sync::Arc::new(make);
        let m = std::sync::Arc::clone(&make);
        no_lost_wakeup(move || m());
        let m = std::sync::Arc::clone(&make);
        fifo_hand_off(move || m());
        let m = std::sync::Arc::clone(&make);
        close_fails_every_waiter(move || m());
        let m = std::sync::Arc::clone(&make);
        cancellation_gives_back(move || m());
        cancellation_behind_the_front(move || make());
    }

    /// Two reservers wait behind a holder of the whole space; one release
    /// must grant and wake both.
    pub fn no_lost_wakeup<P, F>(make: F)
    where
        P: ReservationPool + 'static,
        F: Fn() -> P + Send + Sync + 'static,
    {
        crate::model("pool::no_lost_wakeup", move || {
            let u = Under::new(make());
            u.reserve(SPACE).expect("the space is free");
            let a = thread_reserving(&u, 256 * KIB);
            let b = thread_reserving(&u, 256 * KIB);
            u.release(SPACE);
            let got =
                a.join().expect("a").expect("a granted") + b.join().expect("b").expect("b granted");
            u.release(got);
            u.settled();
        });
    }

    /// A waits for 768 KiB at the front; half the space comes back, which
    /// would fit B's 256 KiB but not A: B must not take it ahead of A.
    pub fn fifo_hand_off<P, F>(make: F)
    where
        P: ReservationPool + 'static,
        F: Fn() -> P + Send + Sync + 'static,
    {
        crate::model("pool::fifo_hand_off", move || {
            let u = Under::new(make());
            u.reserve(SPACE / 2).expect("fits");
            u.reserve(SPACE / 2).expect("fits");
            let a = thread_reserving(&u, 768 * KIB);
            u.wait_waiters(1);
            u.release(SPACE / 2);
            let b = {
                let u = Arc::clone(&u);
                thread::spawn(move || {
                    let got = u.reserve(256 * KIB);
                    assert_eq!(
                        u.pool.waiters(),
                        0,
                        "a later, smaller reservation was granted while the front one waits (not FIFO)"
                    );
                    got
                })
            };
            u.release(SPACE / 2);
            let got =
                a.join().expect("a").expect("a granted") + b.join().expect("b").expect("b granted");
            u.release(got);
            u.settled();
        });
    }

    /// Two reservers wait (or are about to) behind a holder of the whole
    /// space when the pool closes: both fail with `Closed` holding
    /// nothing, and so does a later reservation.
    pub fn close_fails_every_waiter<P, F>(make: F)
    where
        P: ReservationPool + 'static,
        F: Fn() -> P + Send + Sync + 'static,
    {
        crate::model("pool::close_fails_every_waiter", move || {
            let u = Under::new(make());
            u.reserve(SPACE).expect("the space is free");
            let a = thread_reserving(&u, 256 * KIB);
            let b = thread_reserving(&u, 256 * KIB);
            u.pool.close();
            for (who, t) in [("a", a), ("b", b)] {
                match t.join().expect(who) {
                    Err(PoolError::Closed) => {}
                    other => panic!("{who} waited through the close and got {other:?}, not Closed"),
                }
            }
            assert_eq!(
                u.reserve(1),
                Err(PoolError::Closed),
                "a reservation after the close"
            );
            u.release(SPACE);
            assert_eq!(u.pool.waiters(), 0, "a reservation is still waiting");
            assert_eq!(u.pool.held_bytes(), 0, "bytes held after the release");
        });
    }

    /// A waiter behind the front one is cancelled: it leaves the line
    /// holding nothing, and the front waiter, and any reservation after
    /// it, is still served when the space comes back.
    pub fn cancellation_behind_the_front<P, F>(make: F)
    where
        P: ReservationPool + 'static,
        F: Fn() -> P + Send + Sync + 'static,
    {
        crate::model("pool::cancellation_behind_the_front", move || {
            let u = Under::new(make());
            u.reserve(SPACE).expect("the space is free");
            let a = thread_reserving(&u, SPACE / 2);
            u.wait_waiters(1);
            let cancel = Arc::new(AtomicBool::new(true));
            // Cancelled before it waits: it queues behind A, then leaves.
            let got = match u.pool.reserve_bytes_cancellable(SPACE / 4, &cancel) {
                Ok(()) => panic!("a cancelled reservation was granted while the space was held"),
                Err(PoolError::Ticket(TicketError::Eintr)) => 0,
                Err(e) => panic!("a cancelled reservation failed with {e}, not EINTR"),
            };
            u.release(SPACE);
            let got = got + a.join().expect("a").expect("a granted");
            u.release(got);
            u.settled();
        });
    }

    /// A waiter is cancelled while the space it waits for comes back: it
    /// keeps a grant that came first or fails with EINTR holding nothing;
    /// either way no byte is left held and the whole space is grantable.
    pub fn cancellation_gives_back<P, F>(make: F)
    where
        P: ReservationPool + 'static,
        F: Fn() -> P + Send + Sync + 'static,
    {
        crate::model("pool::cancellation_gives_back", move || {
            let u = Under::new(make());
            u.reserve(SPACE).expect("the space is free");
            let cancel = Arc::new(AtomicBool::new(false));
            let a = {
                let (u, cancel) = (Arc::clone(&u), Arc::clone(&cancel));
                thread::spawn(
                    move || match u.pool.reserve_bytes_cancellable(SPACE / 2, &cancel) {
                        Ok(()) => {
                            u.granted(SPACE / 2);
                            SPACE / 2
                        }
                        Err(PoolError::Ticket(TicketError::Eintr)) => 0,
                        Err(e) => panic!("a cancelled reservation failed with {e}, not EINTR"),
                    },
                )
            };
            u.wait_waiters(1);
            let r = {
                let u = Arc::clone(&u);
                thread::spawn(move || u.release(SPACE))
            };
            cancel.store(true, Ordering::SeqCst);
            u.pool.notify();
            r.join().expect("release");
            let got = a.join().expect("a");
            u.release(got);
            u.settled();
        });
    }
}

/// The flush-policy suite.
pub mod policy {
    use iolab_flush::{
        Config, Decision, FlushKind, FlushModel, FlushPolicy, HandleKind, JobId, Params, Policy,
        Preempt, RefBatch, Reserve, Start, TicketError, TicketId,
    };
    use proptest::prelude::*;

    use crate::Checked;

    /// Cases when `IOLAB_CHECK_CASES` is not set.
    pub const DEFAULT_CASES: u64 = 200;

    const MIB: u64 = 1 << 20;
    const SPACE: u64 = 64 * MIB;
    const USED: u64 = 24 * MIB;
    const GLOBAL: u64 = 8 * MIB;

    /// One event of a case's stream.
    #[derive(Clone, Debug)]
    pub enum Op {
        /// Reserve this many bytes (a normal ticket if they do not fit).
        Reserve(u64),
        /// Give back the `k`th reservation held (modulo how many).
        Release(usize),
        /// A transaction handle whose tree changes COW this many bytes
        /// (pinned until the next commit) with one delayed-ref head.
        Cow(u64),
        /// Let this many ms pass.
        Wait(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (16u64..=4096).prop_map(|k| Op::Reserve(k * 1024)),
            3 => any::<usize>().prop_map(Op::Release),
            2 => (1u64..=2048).prop_map(|k| Op::Cow(k * 1024)),
            1 => (1u64..=3000).prop_map(Op::Wait),
        ]
    }

    fn stream() -> impl Strategy<Value = Vec<Op>> {
        proptest::collection::vec(op(), 1..120)
    }

    /// A filesystem of 64 MiB of metadata, 24 MiB used, an 8 MiB global
    /// reserve and no unallocated space (no overcommit, no new chunk),
    /// on-demand ticketing without the preemptive worker, flushed by `plan`.
    fn model<P: FlushPolicy>(plan: P) -> Result<FlushModel<P>, String> {
        let config = Config {
            policy: Policy {
                preempt: Preempt::Off,
                ..Policy::on_demand()
            },
            params: Params {
                total: SPACE,
                used: USED,
                global_rsv: GLOBAL,
                unallocated: 0,
                ticket_capacity: 256,
                max_handles: 8,
                ..Params::default()
            },
        };
        FlushModel::with_policy(config, plan).map_err(|e| format!("refused: {e}"))
    }

    /// What a run saw, for the rules and for a twin to match.
    #[derive(Debug, Default, PartialEq, Eq)]
    struct Seen {
        /// Tickets queued, with their bytes, in order.
        queued: Vec<(TicketId, u64)>,
        /// Tickets granted, in order.
        granted: Vec<TicketId>,
        /// Tickets failed, in order, and why.
        failed: Vec<(TicketId, TicketError)>,
        commits: u64,
        /// Every decision, with the event it followed (the stream's
        /// length for the end).
        decisions: Vec<(usize, Decision)>,
    }

    struct Run<P: FlushPolicy> {
        fs: FlushModel<P>,
        now: u64,
        held: Vec<u64>,
        owner: u64,
        seen: Seen,
        /// Work handed out, done when time next passes.
        work: Vec<JobId>,
        /// Commits written out, durable when time next passes.
        commits: Vec<u64>,
        /// The event being played.
        at: usize,
    }

    impl<P: FlushPolicy> Run<P> {
        fn new(plan: P) -> Result<Run<P>, String> {
            Ok(Run {
                fs: model(plan)?,
                now: 0,
                held: Vec::new(),
                owner: 0,
                seen: Seen::default(),
                work: Vec::new(),
                commits: Vec::new(),
                at: 0,
            })
        }

        /// Time passes: the work handed out is done, the commits written
        /// out are durable, in the order they came.
        fn pass(&mut self, ns: u64) -> Result<(), String> {
            self.now += ns;
            while !self.work.is_empty() || !self.commits.is_empty() {
                for job in core::mem::take(&mut self.work) {
                    self.fs
                        .on_work_done(self.now, job)
                        .map_err(|e| format!("the core refused work done: {e}"))?;
                    self.settle()?;
                }
                for txn in core::mem::take(&mut self.commits) {
                    self.fs
                        .on_commit_done(self.now, txn)
                        .map_err(|e| format!("the core refused a commit done: {e}"))?;
                    self.settle()?;
                }
            }
            self.timers()
        }
    }

    impl<P: FlushPolicy> Run<P> {
        /// Acts on every decision as a caller would: grants are held,
        /// work is done at once, commits are durable at once, waiting
        /// handles are ended as soon as they open. Checks the bytes in
        /// use after any grant.
        fn settle(&mut self) -> Result<(), String> {
            for _ in 0..100_000 {
                let Some(d) = self.fs.poll_decision() else {
                    return Ok(());
                };
                self.seen.decisions.push((self.at, d));
                let r = match d {
                    Decision::Grant { ticket, bytes, .. } => {
                        self.held.push(bytes);
                        self.seen.granted.push(ticket);
                        let s = self.fs.snapshot();
                        if s.space.used_all() > s.space.total + s.uncovered_meta {
                            return Err(format!(
                                "ticket {ticket:?} granted beyond the space: {} bytes in use of {}",
                                s.space.used_all(),
                                s.space.total
                            ));
                        }
                        Ok(())
                    }
                    Decision::Fail { ticket, error, .. } => {
                        self.seen.failed.push((ticket, error));
                        Ok(())
                    }
                    Decision::RunRefs { job, .. } | Decision::Flush { job, .. } => {
                        self.work.push(job);
                        Ok(())
                    }
                    Decision::CommitIo { txn, .. } => {
                        self.seen.commits += 1;
                        self.commits.push(txn);
                        Ok(())
                    }
                    Decision::HandleReady { handle } => {
                        self.fs.on_handle_end(self.now, handle, false).map(|_| ())
                    }
                    Decision::HandleFailed { .. } | Decision::HandleReleased { .. } => Ok(()),
                };
                r.map_err(|e| format!("the core refused the caller's answer: {e}"))?;
            }
            Err("decisions never ran out".to_owned())
        }

        fn timers(&mut self) -> Result<(), String> {
            while let Some(d) = self.fs.next_deadline().filter(|&d| d <= self.now) {
                self.fs.on_timer(d.max(self.now));
                self.settle()?;
            }
            Ok(())
        }

        fn step(&mut self, op: &Op) -> Result<(), String> {
            match *op {
                Op::Reserve(bytes) => {
                    let waiting = self.fs.snapshot().normal_tickets;
                    self.owner += 1;
                    match self
                        .fs
                        .on_reserve(self.now, self.owner, bytes, FlushKind::FlushAll)
                    {
                        Ok(Reserve::Granted) => {
                            if waiting > 0 {
                                return Err(format!(
                                    "a reservation of {bytes} bytes was granted at once while {waiting} tickets waited (not FIFO)"
                                ));
                            }
                            self.held.push(bytes);
                        }
                        Ok(Reserve::Queued(t)) => self.seen.queued.push((t, bytes)),
                        Ok(Reserve::Failed(_)) => {}
                        Err(e) => return Err(format!("the core refused a reservation: {e}")),
                    }
                }
                Op::Release(k) => {
                    if !self.held.is_empty() {
                        let bytes = self.held.swap_remove(k % self.held.len());
                        self.fs
                            .on_release(self.now, bytes)
                            .map_err(|e| format!("the core refused a release: {e}"))?;
                    }
                }
                Op::Cow(bytes) => {
                    // A handle reserves for its items (one insert unit,
                    // 256 KiB at the default node size, each) and COWs
                    // within that reservation.
                    let items = bytes.div_ceil(256 * 1024);
                    let start = self.fs.on_handle_start(self.now, HandleKind::Start, items);
                    if let Ok(Start::Ready(h)) = start {
                        let batch = RefBatch {
                            new_heads: 1,
                            refs: 1,
                            meta_used: bytes,
                            ..RefBatch::default()
                        };
                        self.fs
                            .on_refs_added(self.now, h, batch)
                            .and_then(|()| self.fs.on_handle_end(self.now, h, false).map(|_| ()))
                            .map_err(|e| format!("the core refused a handle: {e}"))?;
                    }
                }
                Op::Wait(ms) => return self.pass(ms * 1_000_000),
            }
            self.settle()?;
            self.timers()
        }
    }

    /// The case's stream through a model flushed by `plan`, then every
    /// reservation given back and 120 s of timers; what it saw.
    fn run<P: FlushPolicy>(ops: &[Op], plan: P) -> Result<Seen, String> {
        let mut r = Run::new(plan)?;
        for (k, op) in ops.iter().enumerate() {
            r.at = k;
            r.step(op)
                .map_err(|e| format!("at event {k} ({op:?}): {e}"))?;
        }
        r.at = ops.len();
        // The end: everything held comes back; time passes.
        let before = r.seen.failed.len();
        while let Some(bytes) = r.held.pop() {
            r.fs.on_release(r.now, bytes)
                .map_err(|e| format!("the core refused a release: {e}"))?;
            r.settle()?;
        }
        // A flusher serves what a commit makes room for at once, not at
        // the transaction's 30 s commit.
        for _ in 0..100 {
            r.pass(10_000_000)?;
        }
        let room = SPACE - USED - GLOBAL;
        let s = r.fs.snapshot();
        let resolved = |t: &TicketId, seen: &Seen| {
            seen.granted.contains(t) || seen.failed.iter().any(|(f, _)| f == t)
        };
        if let Some(&(t, bytes)) = r
            .seen
            .queued
            .iter()
            .find(|(t, bytes)| *bytes <= room && !resolved(t, &r.seen))
        {
            return Err(format!(
                "ticket {t:?} ({bytes} bytes) still waits 1 s after every reservation came back, though a commit would make room for it ({} bytes pinned)",
                s.space.pinned
            ));
        }
        for _ in 0..120 {
            r.pass(1_000_000_000)?;
            while let Some(bytes) = r.held.pop() {
                r.fs.on_release(r.now, bytes)
                    .map_err(|e| format!("the core refused a release: {e}"))?;
                r.settle()?;
            }
        }
        let s = r.fs.snapshot();
        if s.normal_tickets + s.prio_tickets > 0 {
            return Err(format!(
                "{} tickets still wait after every reservation came back and 120 s passed",
                s.normal_tickets + s.prio_tickets
            ));
        }
        // Once everything is back, a commit frees all that is pinned: a
        // ticket that fits in the space then must not fail.
        if let Some(&(t, e)) = r.seen.failed[before..].iter().find(|(t, _)| {
            r.seen
                .queued
                .iter()
                .any(|&(q, bytes)| q == *t && bytes <= room)
        }) {
            return Err(format!(
                "ticket {t:?} failed ({e}) after every reservation came back, though a commit would have made room for it ({} bytes pinned)",
                s.space.pinned
            ));
        }
        Ok(r.seen)
    }

    /// Handles pin 30 MiB of the 32 MiB free; a reservation of 8 MiB then
    /// waits for a commit, which a flusher must make at once.
    fn pinned<P: FlushPolicy>(plan: P) -> Result<(), String> {
        let mut r = Run::new(plan)?;
        for _ in 0..15 {
            r.step(&Op::Cow(2 * MIB))?;
        }
        r.step(&Op::Reserve(8 * MIB))?;
        for _ in 0..100 {
            r.step(&Op::Wait(10))?;
        }
        let pinned = r.fs.snapshot().space.pinned;
        match (
            r.seen.queued.first(),
            r.seen.granted.first(),
            r.seen.failed.first(),
        ) {
            (Some(_), None, Some((_, e))) => Err(format!(
                "a reservation of 8 MiB failed ({e}), though a commit would free the {pinned} bytes pinned"
            )),
            (Some(_), None, None) => Err(format!(
                "a reservation of 8 MiB still waits 1 s later, though a commit would free the {pinned} bytes pinned"
            )),
            _ => Ok(()),
        }
    }

    /// Checks a flush policy that `make` builds fresh, on streams of up
    /// to 119 reservations (16 KiB to 4 MiB), releases, transaction
    /// handles that pin what they COW until a commit, and waits, on a
    /// nearly full 64 MiB metadata space that cannot grow; the stream's
    /// end gives every reservation back and lets 120 s pass:
    ///
    /// - the core takes its walk (no [`WalkRule`](iolab_flush::WalkRule) broken);
    /// - tickets are granted in the order they queued, and no reservation
    ///   is granted at once while tickets wait (FIFO);
    /// - no grant takes the bytes in use beyond the space;
    /// - every ticket is resolved by the end, and none fails there that
    ///   the space, once a commit freed what is pinned, would hold; such
    ///   tickets are served within 1 s of the space coming back (by a
    ///   flusher's commit, not the transaction's 30 s one);
    /// - a fresh twin through the same stream decides the same;
    /// - and, first, on a space whose free bytes are nearly all pinned by
    ///   handles, a reservation that a commit would make room for is
    ///   served within 1 s.
    ///
    /// # Panics
    ///
    /// At the first case that breaks a rule, shrunk, with the seed.
    pub fn check<P: FlushPolicy, F: Fn() -> P>(make: F) -> Checked {
        let name = make().name().to_owned();
        if let Err(why) = pinned(make()) {
            panic!(
                "flush::policy: '{name}' broke a rule: {why}\n  case: 30 MiB pinned by handles, then a reservation of 8 MiB"
            );
        }
        crate::cases::proptest_cases("flush::policy", &name, DEFAULT_CASES, stream(), |ops| {
            let seen = run(ops, make())?;
            if let Some(w) = seen.granted.windows(2).find(|w| w[0] > w[1]) {
                return Err(format!(
                    "ticket {:?} was granted after ticket {:?}, which queued later (not FIFO)",
                    w[1], w[0]
                ));
            }
            let twin = run(ops, make())?;
            if twin != seen {
                let k = (0..seen.decisions.len().max(twin.decisions.len()))
                    .find(|&k| seen.decisions.get(k) != twin.decisions.get(k))
                    .unwrap_or(0);
                return Err(format!(
                    "not deterministic: decision {k} was {:?}, then {:?} from a fresh twin",
                    seen.decisions.get(k),
                    twin.decisions.get(k)
                ));
            }
            Ok(ops.len() as u64)
        })
    }

    /// Runs `mine` beside `reference` through the same streams and
    /// reports the first decision (a grant, a failure, work, a commit)
    /// that differs, and the event it followed.
    ///
    /// # Panics
    ///
    /// At the first diverging case, shrunk, with the seed.
    pub fn differential<P, R>(mine: impl Fn() -> P, reference: impl Fn() -> R) -> Checked
    where
        P: FlushPolicy,
        R: FlushPolicy,
    {
        let name = mine().name().to_owned();
        let other = reference().name().to_owned();
        crate::cases::proptest_cases(
            "flush::policy::differential",
            &name,
            DEFAULT_CASES,
            stream(),
            |ops| {
                let a = run(ops, mine())?.decisions;
                let b = run(ops, reference())?.decisions;
                let Some(k) = (0..a.len().max(b.len())).find(|&k| a.get(k) != b.get(k)) else {
                    return Ok(ops.len() as u64);
                };
                let at = a.get(k).or(b.get(k)).map_or(ops.len(), |d| d.0);
                let event = ops
                    .get(at)
                    .map_or_else(|| "the end".to_owned(), |op| format!("event {at} ({op:?})"));
                Err(format!(
                    "decision {k}, after {event}: {:?} where '{other}' decides {:?}",
                    a.get(k).map(|d| d.1),
                    b.get(k).map(|d| d.1)
                ))
            },
        )
    }
}
