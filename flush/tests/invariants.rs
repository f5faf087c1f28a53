//! Property tests of the invariants of `shared/spec/flush.md` §7.
//!
//! Random event sequences drive every named variant through its public
//! API, with a caller that completes jobs and commits in random order.
//! After every event the caller checks what it can see:
//!
//! 1. exactly-once refs: created = run + annihilated + pending, and after
//!    the final drain nothing is pending;
//! 2. head exclusivity: the heads of the `RunRefs` batches in flight are
//!    exactly the queue's processing heads;
//! 3. reserve bounds: `reserved ≤ size`, `full ⇔ reserved ≥ size`;
//! 4. conservation: `may_use` = Σ reserves + the caller's held grants, and
//!    an immediate grant keeps `used_all ≤ total + avail`;
//! 5. FIFO: a normal ticket is granted or fails (ENOSPC) only from the
//!    front of the waiting normal tickets;
//! 6. termination: each ticket gets exactly one outcome;
//! 7. liveness: after the drain (jobs done, time advanced) no ticket waits
//!    and no handle is stuck;
//! 8. ENOSPC soundness: a normal ticket fails with ENOSPC only after the
//!    reclaim run ended at least three passes in `COMMIT_TRANS`;
//! 9. monotone transactions: commits complete in increasing id order,
//!    `Blocked` only in catch-up;
//! 10. variant purity: in on-demand a handle end never blocks the
//!     transaction, never runs refs, never commits.

use std::collections::BTreeMap;

use iolab_flush::{
    Actor, Config, Decision, End, FlushKind, FlushModel, HandleId, HandleKind, JobId, Mode, Params,
    Policy, Reserve, Start, TicketError, TicketId, TraceRecord, TxnState, parse_policy,
};
use proptest::prelude::*;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

#[derive(Clone, Debug)]
enum Op {
    Reserve {
        bytes: u64,
        kind: u8,
    },
    Release {
        frac: u8,
    },
    Interrupt {
        pick: u8,
    },
    Start {
        kind: u8,
        items: u64,
    },
    AddRefs {
        pick: u8,
        new_heads: u64,
        refs: u64,
        cancel: u64,
        meta: u64,
    },
    End {
        pick: u8,
        throttle: bool,
    },
    Complete {
        pick: u8,
    },
    CommitDone,
    Tick {
        ms: u64,
    },
    Writeback {
        delalloc: u64,
        ordered: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u64..48, 0u8..8).prop_map(|(b, kind)| Op::Reserve { bytes: b * 16 * KIB, kind }),
        2 => (1u8..=4).prop_map(|frac| Op::Release { frac }),
        1 => any::<u8>().prop_map(|pick| Op::Interrupt { pick }),
        3 => (0u8..4, 0u64..4).prop_map(|(kind, items)| Op::Start { kind, items }),
        4 => (any::<u8>(), 0u64..10, 0u64..12, 0u64..3, 0u64..3)
            .prop_map(|(pick, new_heads, refs, cancel, meta)| Op::AddRefs {
                pick,
                new_heads,
                refs,
                cancel,
                meta: meta * 16 * KIB,
            }),
        3 => (any::<u8>(), any::<bool>()).prop_map(|(pick, throttle)| Op::End { pick, throttle }),
        5 => any::<u8>().prop_map(|pick| Op::Complete { pick }),
        2 => Just(Op::CommitDone),
        2 => (1u64..8000).prop_map(|ms| Op::Tick { ms }),
        1 => (0u64..64, 0u64..64).prop_map(|(d, o)| Op::Writeback { delalloc: d * MIB, ordered: o * MIB }),
    ]
}

const VARIANTS: [&str; 5] = [
    "flush=catch-up",
    "flush=catch-up:run-at-end=on",
    "flush=on-demand",
    "flush=on-demand:preempt=2021",
    "flush=on-demand:preempt=off",
];

fn kind_of(k: u8) -> FlushKind {
    match k {
        0 | 1 => FlushKind::FlushAll,
        2 => FlushKind::FlushAllSteal,
        3 => FlushKind::FlushLimit,
        4 => FlushKind::FlushEvict,
        5 => FlushKind::NoFlush,
        6 => FlushKind::FlushEmergency,
        _ => FlushKind::FlushData,
    }
}

fn handle_kind(k: u8) -> HandleKind {
    match k {
        0 => HandleKind::Start,
        1 => HandleKind::Join,
        2 => HandleKind::JoinNoLock,
        _ => HandleKind::Attach,
    }
}

#[derive(Clone, Copy, Debug)]
struct Waiting {
    owner: u64,
}

/// The caller: what it holds and waits for, and the checks.
struct Driver {
    fs: FlushModel,
    mode: Mode,
    now: u64,
    held: u64,
    next_owner: u64,
    /// Caller-owned waiting tickets (from decisions).
    tickets: BTreeMap<TicketId, Waiting>,
    /// Every waiting ticket, handle-owned too (from traces, in exact
    /// order): id → normal queue.
    queue: BTreeMap<TicketId, bool>,
    resolved: BTreeMap<TicketId, bool>,
    open: Vec<HandleId>,
    waiting_handles: Vec<HandleId>,
    ending: Vec<HandleId>,
    jobs: BTreeMap<JobId, (u64, u64)>,
    commit: Option<u64>,
    last_done: u64,
    reclaim_commits: u32,
    failures: u32,
    log: Vec<Decision>,
    traces: Vec<TraceRecord>,
    stats: Stats,
}

/// How much of the protocol a case exercised.
#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    queued: u64,
    granted: u64,
    enospc: u64,
    commits: u64,
    blocked: u64,
    run_refs: u64,
    steals: u64,
}

impl Driver {
    fn new(policy: Policy, unallocated: u64) -> Driver {
        let params = Params {
            nodesize: 4096,
            total: 7 * MIB,
            used: 4 * MIB,
            global_rsv: MIB,
            unallocated,
            chunk_size: 8 * MIB,
            chunk_heads: 3,
            meta_per_head: 4096,
            trace_capacity: 1 << 16,
            ticket_capacity: 256,
            max_handles: 256,
            ..Params::default()
        };
        Driver {
            fs: FlushModel::new(Config { policy, params }).expect("valid"),
            mode: policy.mode,
            now: 0,
            held: 0,
            next_owner: 1,
            tickets: BTreeMap::new(),
            queue: BTreeMap::new(),
            resolved: BTreeMap::new(),
            open: Vec::new(),
            waiting_handles: Vec::new(),
            ending: Vec::new(),
            jobs: BTreeMap::new(),
            commit: None,
            last_done: 0,
            reclaim_commits: 0,
            failures: 0,
            log: Vec::new(),
            traces: Vec::new(),
            stats: Stats::default(),
        }
    }

    fn resolve(&mut self, t: TicketId) -> Result<Waiting, TestCaseError> {
        let w = self.tickets.remove(&t);
        prop_assert!(w.is_some(), "outcome for {t} that is not waiting");
        Ok(w.unwrap())
    }

    /// A ticket left the queue (trace order): exactly once, and normal
    /// grants and ENOSPC failures only from the front.
    fn dequeue(
        &mut self,
        t: TicketId,
        granted: bool,
        front_only: bool,
    ) -> Result<(), TestCaseError> {
        let front = self
            .queue
            .iter()
            .find(|(_, normal)| **normal)
            .map(|(t, _)| *t);
        let normal = self.queue.remove(&t);
        prop_assert!(normal.is_some(), "{t} left the queue but was not in it");
        prop_assert!(
            self.resolved.insert(t, granted).is_none(),
            "{t} resolved twice"
        );
        if normal == Some(true) && front_only {
            prop_assert_eq!(Some(t), front, "normal ticket left out of FIFO order");
        }
        Ok(())
    }

    /// Drain and check decisions and traces.
    fn drain(&mut self) -> Result<(), TestCaseError> {
        while let Some(d) = self.fs.poll_decision() {
            self.log.push(d);
            match d {
                Decision::Grant {
                    ticket,
                    owner,
                    bytes,
                    ..
                } => {
                    let w = self.resolve(ticket)?;
                    prop_assert_eq!(w.owner, owner);
                    self.held += bytes;
                }
                Decision::Fail { ticket, owner, .. } => {
                    let w = self.resolve(ticket)?;
                    prop_assert_eq!(w.owner, owner);
                }
                Decision::HandleReady { handle } => {
                    let pos = self.waiting_handles.iter().position(|h| *h == handle);
                    prop_assert!(pos.is_some(), "ready for unknown {handle}");
                    self.waiting_handles.remove(pos.unwrap());
                    self.open.push(handle);
                }
                Decision::HandleFailed { handle, .. } => {
                    let pos = self.waiting_handles.iter().position(|h| *h == handle);
                    prop_assert!(pos.is_some(), "failure for unknown {handle}");
                    self.waiting_handles.remove(pos.unwrap());
                }
                Decision::HandleReleased { handle } => {
                    let pos = self.ending.iter().position(|h| *h == handle);
                    prop_assert!(pos.is_some(), "release of unknown {handle}");
                    self.ending.remove(pos.unwrap());
                }
                Decision::RunRefs {
                    job, heads, refs, ..
                } => {
                    prop_assert!(heads > 0);
                    prop_assert!(
                        self.jobs.insert(job, (heads, refs)).is_none(),
                        "{job} twice"
                    );
                }
                Decision::Flush { job, .. } => {
                    prop_assert!(self.jobs.insert(job, (0, 0)).is_none(), "{job} twice");
                }
                Decision::CommitIo { txn, .. } => {
                    prop_assert!(self.commit.is_none(), "two write-outs");
                    prop_assert!(txn > self.last_done);
                    self.commit = Some(txn);
                }
            }
        }
        while let Some(r) = self.fs.poll_trace() {
            self.traces.push(r);
            match r {
                TraceRecord::TicketQueued { ticket, prio, .. } => {
                    self.stats.queued += 1;
                    prop_assert!(self.queue.insert(ticket, !prio).is_none());
                }
                TraceRecord::TicketGranted { ticket, stolen, .. } => {
                    self.stats.granted += 1;
                    self.stats.steals += u64::from(stolen);
                    self.dequeue(ticket, true, true)?;
                }
                TraceRecord::TicketFailed { ticket, error, .. } => {
                    let normal = self.queue.get(&ticket).copied() == Some(true);
                    if error == TicketError::Enospc {
                        self.stats.enospc += 1;
                        if normal {
                            self.failures += 1;
                            prop_assert!(
                                self.reclaim_commits >= 3,
                                "ENOSPC after {} commit states",
                                self.reclaim_commits
                            );
                        }
                    }
                    self.dequeue(ticket, false, error == TicketError::Enospc)?;
                }
                TraceRecord::RefsRun { .. } => self.stats.run_refs += 1,
                _ => {}
            }
            match r {
                TraceRecord::ReclaimStart { .. } => self.reclaim_commits = 0,
                TraceRecord::Flush {
                    actor: Actor::Reclaim,
                    state: iolab_flush::FlushState::CommitTrans,
                    ..
                } => self.reclaim_commits += 1,
                TraceRecord::TxnBlocked { .. } => {
                    self.stats.blocked += 1;
                    prop_assert_eq!(self.mode, Mode::CatchUp)
                }
                TraceRecord::CommitDone { txn, .. } => {
                    self.stats.commits += 1;
                    prop_assert!(txn > self.last_done, "commits out of order");
                    self.last_done = txn;
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn check(&self) -> Result<(), TestCaseError> {
        let s = self.fs.snapshot();
        for r in [s.global, s.delayed_refs, s.delayed_items, s.trans] {
            prop_assert!(r.reserved <= r.size, "reserve over size {r:?}");
            prop_assert_eq!(r.full, r.reserved >= r.size);
        }
        prop_assert_eq!(s.grants, self.held);
        prop_assert_eq!(
            s.space.may_use,
            s.global.reserved
                + s.delayed_refs.reserved
                + s.delayed_items.reserved
                + s.trans.reserved
                + s.grants
        );
        let q = s.refs;
        prop_assert_eq!(
            q.created_refs,
            q.run_refs + q.annihilated + q.ready_refs + q.processing_refs
        );
        prop_assert_eq!(
            q.created_heads,
            q.run_heads + q.ready_heads + q.processing_heads
        );
        let (h, r) = self
            .jobs
            .values()
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        prop_assert_eq!(
            (h, r),
            (q.processing_heads, q.processing_refs),
            "claimed heads drifted"
        );
        prop_assert_eq!(s.normal_tickets + s.prio_tickets, self.queue.len());
        if s.normal_tickets > 0 {
            prop_assert!(s.flush_active, "normal tickets wait without a flusher");
        }
        prop_assert!((1..=8).contains(&s.clamp));
        if let Some((id, state)) = s.txn {
            prop_assert!(id > s.completed_txn);
            if self.mode == Mode::OnDemand {
                prop_assert!(state != TxnState::Blocked);
            }
        }
        Ok(())
    }

    fn pick<T: Copy>(v: &[T], pick: u8) -> Option<T> {
        if v.is_empty() {
            None
        } else {
            Some(v[pick as usize % v.len()])
        }
    }

    fn apply(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match *op {
            Op::Reserve { bytes, kind } => {
                let owner = self.next_owner;
                self.next_owner += 1;
                let kind = kind_of(kind);
                let normal_waits = self.queue.values().any(|n| *n);
                let prio_waits = self.queue.values().any(|n| !*n);
                match self
                    .fs
                    .on_reserve(self.now, owner, bytes, kind)
                    .expect("valid")
                {
                    Reserve::Granted => {
                        // Nobody jumps waiting priority tickets; FlushAll
                        // reservers do not jump normal ones either. Only an
                        // emergency reservation may (it ignores may_use).
                        if kind != FlushKind::FlushEmergency {
                            prop_assert!(!prio_waits, "jumped a priority ticket");
                            if kind.queues_behind_normal() {
                                prop_assert!(!normal_waits, "jumped a normal ticket");
                            }
                        }
                        self.held += bytes;
                        // Emergency reservations ignore may_use.
                        if kind != FlushKind::FlushEmergency {
                            let s = self.fs.snapshot().space;
                            prop_assert!(s.used_all() <= s.total + s.avail(FlushKind::NoFlush));
                        }
                    }
                    Reserve::Queued(t) => {
                        self.tickets.insert(t, Waiting { owner });
                    }
                    Reserve::Failed(_) => {}
                }
            }
            Op::Release { frac } => {
                let b = self.held / u64::from(frac);
                if b > 0 {
                    self.fs.on_release(self.now, b).expect("held");
                    self.held -= b;
                }
            }
            Op::Interrupt { pick } => {
                let ids: Vec<TicketId> = self.queue.keys().copied().collect();
                if let Some(t) = Self::pick(&ids, pick) {
                    self.fs.on_interrupt(self.now, t).expect("known");
                }
            }
            Op::Start { kind, items } => match self
                .fs
                .on_handle_start(self.now, handle_kind(kind), items)
                .expect("room")
            {
                Start::Ready(h) => self.open.push(h),
                Start::Wait { handle, .. } => self.waiting_handles.push(handle),
                Start::Failed(_) | Start::NoTransaction => {}
            },
            Op::AddRefs {
                pick,
                new_heads,
                refs,
                cancel,
                meta,
            } => {
                if let Some(h) = Self::pick(&self.open, pick) {
                    let ready = self.fs.snapshot().refs;
                    let batch = iolab_flush::RefBatch {
                        new_heads,
                        refs: if ready.ready_heads + new_heads == 0 {
                            0
                        } else {
                            refs
                        },
                        cancelled: cancel.min(ready.ready_refs),
                        meta_used: meta,
                    };
                    self.fs
                        .on_refs_added(self.now, h, batch)
                        .expect("valid batch");
                }
            }
            Op::End { pick, throttle } => {
                if let Some(h) = Self::pick(&self.open, pick) {
                    let before = self.fs.snapshot();
                    let jobs_before = self.jobs.len();
                    self.open.retain(|x| *x != h);
                    match self.fs.on_handle_end(self.now, h, throttle).expect("open") {
                        End::Done => {}
                        End::Wait(w) => {
                            prop_assert_eq!(self.mode, Mode::CatchUp);
                            self.ending.push(w);
                        }
                    }
                    if self.mode == Mode::OnDemand
                        && matches!(before.txn, Some((_, TxnState::Running)))
                    {
                        let after = self.fs.snapshot();
                        prop_assert_eq!(
                            after.txn,
                            before.txn,
                            "on-demand end changed the transaction"
                        );
                        prop_assert_eq!(after.refs.run_heads, before.refs.run_heads);
                        self.drain()?;
                        prop_assert_eq!(
                            self.jobs.len(),
                            jobs_before,
                            "on-demand end ran something"
                        );
                    }
                }
            }
            Op::Complete { pick } => {
                let ids: Vec<JobId> = self.jobs.keys().copied().collect();
                if let Some(j) = Self::pick(&ids, pick) {
                    self.jobs.remove(&j);
                    self.now += 1000;
                    self.fs.on_work_done(self.now, j).expect("outstanding");
                }
            }
            Op::CommitDone => {
                if let Some(t) = self.commit.take() {
                    self.now += 1000;
                    self.fs.on_commit_done(self.now, t).expect("writing");
                }
            }
            Op::Tick { ms } => {
                self.now += ms * 1_000_000;
                self.fs.on_timer(self.now);
            }
            Op::Writeback { delalloc, ordered } => {
                self.fs.on_writeback(self.now, delalloc, ordered)
            }
        }
        self.drain()?;
        self.check()
    }

    /// Finish everything: end handles, complete all work, advance time.
    fn quiesce(&mut self) -> Result<(), TestCaseError> {
        for _ in 0..400 {
            for h in std::mem::take(&mut self.open) {
                if let End::Wait(w) = self.fs.on_handle_end(self.now, h, false).expect("open") {
                    self.ending.push(w);
                }
                self.drain()?;
            }
            while let Some((&j, _)) = self.jobs.iter().next() {
                self.jobs.remove(&j);
                self.fs.on_work_done(self.now, j).expect("outstanding");
                self.drain()?;
            }
            if let Some(t) = self.commit.take() {
                self.fs.on_commit_done(self.now, t).expect("writing");
                self.drain()?;
            }
            if self.held > 0 {
                let b = self.held;
                self.held = 0;
                self.fs.on_release(self.now, b).expect("held");
                self.drain()?;
            }
            self.check()?;
            let s = self.fs.snapshot();
            let idle = self.open.is_empty()
                && self.jobs.is_empty()
                && self.commit.is_none()
                && self.tickets.is_empty()
                && self.queue.is_empty()
                && self.waiting_handles.is_empty()
                && self.ending.is_empty()
                && s.refs.entries() == 0
                && s.txn.is_none();
            if idle {
                return Ok(());
            }
            self.now = self.fs.next_deadline().expect("deadline");
            self.fs.on_timer(self.now);
            self.drain()?;
        }
        let s = self.fs.snapshot();
        prop_assert!(
            false,
            "no quiescence: {s:?} tickets {:?} handles {:?}/{:?}/{:?}",
            self.tickets,
            self.open,
            self.waiting_handles,
            self.ending
        );
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, max_shrink_iters: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold(variant in 0usize..VARIANTS.len(), chunks in any::<bool>(), ops in prop::collection::vec(op(), 1..80)) {
        let policy = parse_policy(VARIANTS[variant]).expect("named variant");
        let mut d = Driver::new(policy, if chunks { 32 * MIB } else { 0 });
        for o in &ops {
            d.apply(o)?;
        }
        d.quiesce()?;
        let s = d.fs.snapshot();
        // Everything queued ran exactly once or was annihilated.
        prop_assert_eq!(s.refs.created_refs, s.refs.run_refs + s.refs.annihilated);
        prop_assert_eq!(s.refs.created_heads, s.refs.run_heads);
        prop_assert_eq!(s.space.pinned, 0);
        prop_assert_eq!(s.trans.size, 0);
        prop_assert_eq!(s.handles, 0);
    }

    #[test]
    fn same_inputs_same_outputs(variant in 0usize..VARIANTS.len(), ops in prop::collection::vec(op(), 1..60)) {
        let policy = parse_policy(VARIANTS[variant]).expect("named variant");
        let run = |ops: &[Op]| -> Result<Driver, TestCaseError> {
            let mut d = Driver::new(policy, 16 * MIB);
            for o in ops {
                d.apply(o)?;
            }
            d.quiesce()?;
            Ok(d)
        };
        let a = run(&ops)?;
        let b = run(&ops)?;
        prop_assert_eq!(&a.log, &b.log);
        prop_assert_eq!(&a.traces, &b.traces);
        prop_assert_eq!(a.fs.snapshot(), b.fs.snapshot());
    }
}

/// The generator reaches the interesting paths: across a fixed set of
/// cases, tickets queue, get granted, fail with ENOSPC, are stolen for;
/// catch-up blocks transactions; commits and ref runs happen.
#[test]
fn generator_covers_the_protocol() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config as RunnerConfig, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        RunnerConfig::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let mut total = Stats::default();
    for case in 0..200 {
        let ops = prop::collection::vec(op(), 40..80)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let policy = parse_policy(VARIANTS[case % VARIANTS.len()]).unwrap();
        let mut d = Driver::new(policy, if case % 2 == 0 { 0 } else { 32 * MIB });
        for o in &ops {
            d.apply(o).unwrap();
        }
        d.quiesce().unwrap();
        let s = d.stats;
        total.queued += s.queued;
        total.granted += s.granted;
        total.enospc += s.enospc;
        total.commits += s.commits;
        total.blocked += s.blocked;
        total.run_refs += s.run_refs;
        total.steals += s.steals;
    }
    eprintln!("{total:?}");
    assert!(total.queued > 100, "{total:?}");
    assert!(total.granted > 50, "{total:?}");
    assert!(total.enospc > 10, "{total:?}");
    assert!(total.steals > 0, "{total:?}");
    assert!(total.commits > 100, "{total:?}");
    assert!(total.blocked > 10, "{total:?}");
    assert!(total.run_refs > 100, "{total:?}");
}
