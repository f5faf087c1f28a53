//! Reference-model property test, as a `proptest-state-machine` test.
//!
//! `Model` below is a plain transcription of the modern rules of
//! `block/blk-wbt.c` (classification, depth, window, limits, the
//! `wbt_lat_usec` knob), written without looking at the core's code
//! paths: signed integers everywhere, a real FIFO per class with the
//! waker-grants protocol of `rq_qos_wait` (`block/blk-rq-qos.c`).
//!
//! The reference state machine (`ModernRef`) is the model plus the request
//! table a caller keeps (pending, issued, waiting); its transitions are
//! random events, and the picks of `Issue`/`Complete`/`Merge`/`Requeue` name
//! requests that exist in that table. The system under test (`CoreTest`) is
//! the core `iolab_wbt::Wbt` driven through a small caller that keeps the
//! core's FIFOs. While the reference applies an event it records what the
//! core must be seen doing at each point the caller meets (admission, each
//! window timer, the waiters granted, the observable state); the caller
//! checks the core against those records at the same points, and its
//! request table against the reference's after every event. The
//! invariants hold throughout: no admission above the limit, step and
//! window bounds, monotone deadlines, every tracked request counted out
//! exactly once (checked after the final drain in `teardown`).
//!
//! The v5 variant (`V5Ref`) has no model and is checked against the
//! invariants only; its picks are indices into the caller's lists.

use std::collections::{BTreeMap, VecDeque};
use std::marker::PhantomData;

use iolab_wbt::{
    Admit, Class, DeviceParams, Op, OpFlags, ReqFlags, Rq, TraceRecord, Variant, WakeMode, Wbt,
};
use proptest::prelude::*;
use proptest::strategy::Union;
use proptest_state_machine::{ReferenceStateMachine, StateMachineTest, prop_state_machine};

const MS: u64 = 1_000_000;

// ----------------------------------------------------------------------
// The reference model (modern)
// ----------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
struct Waiter {
    id: u64,
    flags: OpFlags,
}

#[derive(Clone, Debug)]
struct Model {
    qd: i64,
    nonrot: bool,
    wc: bool,
    min_lat: i64,
    on: bool,
    step: i64,
    scaled_max: bool,
    max_depth: i64,
    normal: i64,
    background: i64,
    unknown_cnt: i64,
    cur_win: i64,
    deadline: Option<i64>,
    rd: (i64, i64), // (nr, min)
    wr_nr: i64,
    sync_issue: Option<(u64, i64)>,
    last_issue: i64,
    last_comp: i64,
    dirty: Option<i64>,
    inflight: [i64; 3],
    queues: [VecDeque<Waiter>; 3],
    granted: Vec<(u64, usize)>,
    /// The time of the latest timer or advance (see `last_now`).
    now_hint: i64,
}

fn naive_isqrt(x: i64) -> i64 {
    let mut r = 0;
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

impl Model {
    fn new(qd: u32, nonrot: bool, wc: bool) -> Model {
        let mut m = Model {
            qd: i64::from(qd.max(1)),
            nonrot,
            wc,
            min_lat: if nonrot { 2_000_000 } else { 75_000_000 },
            on: true,
            step: 0,
            scaled_max: false,
            max_depth: 0,
            normal: 0,
            background: 0,
            unknown_cnt: 0,
            cur_win: 100_000_000,
            deadline: None,
            rd: (0, i64::MAX),
            wr_nr: 0,
            sync_issue: None,
            last_issue: 0,
            last_comp: 0,
            dirty: None,
            inflight: [0; 3],
            queues: Default::default(),
            granted: Vec::new(),
            now_hint: 0,
        };
        m.reset_limits();
        m
    }

    /// Kernel: `rq_depth_calc_max_depth`.
    fn calc_max_depth(&mut self) -> bool {
        if self.qd == 1 {
            if self.step > 0 {
                self.max_depth = 1;
                return false;
            }
            self.max_depth = 2;
            return true;
        }
        let mut d = self.qd.min(16);
        let mut cap = false;
        if self.step > 0 {
            d = 1 + ((d - 1) >> self.step.min(31));
        } else if self.step < 0 {
            d = 1 + ((d - 1) << (-self.step));
            if d > 3 * self.qd / 4 {
                d = 3 * self.qd / 4;
                cap = true;
            }
        }
        self.max_depth = d;
        cap
    }

    fn calc_limits(&mut self) {
        if self.min_lat == 0 {
            self.normal = 0;
            self.background = 0;
        } else if self.max_depth <= 2 {
            self.normal = self.max_depth;
            self.background = 1;
        } else {
            self.normal = (self.max_depth + 1) / 2;
            self.background = (self.max_depth + 3) / 4;
        }
    }

    fn reset_limits(&mut self) {
        self.step = 0;
        self.scaled_max = false;
        self.calc_max_depth();
        self.calc_limits();
        let now = self.last_now();
        for c in 0..3 {
            self.wake_all(c, now);
        }
    }

    fn last_now(&self) -> i64 {
        // Waking from reset happens at the knob call's time; the reference
        // side passes it through `now_hint`.
        self.now_hint
    }

    fn recent_dirty(&self, now: i64) -> bool {
        self.dirty.is_some_and(|t| now < t + 1_000_000_000)
    }

    fn close_io(&self, now: i64) -> bool {
        now < self.last_issue + 100_000_000 || now < self.last_comp + 100_000_000
    }

    /// Kernel: `bio_to_wbt_flags`.
    fn classify(&self, op: Op, f: OpFlags) -> u8 {
        if !self.on {
            return 0;
        }
        match op {
            Op::Read => 2,
            Op::Write if f.contains(OpFlags::SYNC) && f.contains(OpFlags::IDLE) => 0,
            Op::Write | Op::Discard => {
                let mut x = 1;
                if f.intersects(OpFlags::SWAP) {
                    x |= 4;
                }
                if op == Op::Discard {
                    x |= 8;
                }
                x
            }
            _ => 0,
        }
    }

    fn class_of(flags: u8) -> usize {
        if flags & 4 != 0 {
            1
        } else if flags & 8 != 0 {
            2
        } else {
            0
        }
    }

    /// Kernel: `get_limit`.
    fn get_limit(&self, now: i64, discard: bool, f: OpFlags) -> i64 {
        if discard {
            return self.background;
        }
        let hi = OpFlags::SYNC | OpFlags::META | OpFlags::PRIO | OpFlags::SWAP;
        if f.intersects(hi) || self.recent_dirty(now) {
            self.max_depth
        } else if f.intersects(OpFlags::BACKGROUND) || self.close_io(now) {
            self.background
        } else {
            self.normal
        }
    }

    fn try_inc(&mut self, now: i64, c: usize, f: OpFlags) -> bool {
        // Disabled target: everything goes (the core's documented choice).
        let limit = if self.min_lat == 0 {
            i64::MAX
        } else {
            self.get_limit(now, c == 2, f)
        };
        if self.inflight[c] < limit {
            self.inflight[c] += 1;
            true
        } else {
            false
        }
    }

    fn arm(&mut self, now: i64) {
        self.cur_win = if self.step > 0 {
            (100_000_000 << 4) / naive_isqrt((self.step + 1) << 8)
        } else {
            100_000_000
        };
        self.deadline = Some(now + self.cur_win);
        self.rd = (0, i64::MAX);
        self.wr_nr = 0;
    }

    fn arm_if_idle(&mut self, now: i64) {
        if self.deadline.is_none() {
            self.arm(now);
        }
    }

    /// The waker (kernel: `rq_qos_wake_function`): grant in FIFO order until one fails.
    fn wake_all(&mut self, c: usize, now: i64) {
        while let Some(w) = self.queues[c].front().copied() {
            if !self.try_inc(now, c, w.flags) {
                break;
            }
            self.queues[c].pop_front();
            self.granted.push((w.id, c));
            self.arm_if_idle(now);
        }
    }

    /// Kernel: `wbt_wait`. Returns Some(flags) if admitted at once.
    fn throttle(&mut self, now: i64, id: u64, op: Op, f: OpFlags) -> Option<u8> {
        let fl = self.classify(op, f);
        if fl & 1 == 0 {
            if fl & 2 != 0 {
                self.last_issue = now;
            }
            return Some(fl);
        }
        let c = Model::class_of(fl);
        if self.queues[c].is_empty() && self.try_inc(now, c, f) {
            self.arm_if_idle(now);
            return Some(fl);
        }
        self.queues[c].push_back(Waiter { id, flags: f });
        None
    }

    fn issue(&mut self, now: i64, id: u64, fl: u8) {
        if self.on && fl & 2 != 0 && self.sync_issue.is_none() {
            self.sync_issue = Some((id, now));
        }
    }

    fn requeue(&mut self, id: u64) {
        if self.on && self.sync_issue.is_some_and(|(i, _)| i == id) {
            self.sync_issue = None;
        }
    }

    fn done(&mut self, now: i64, id: u64, op: Op, fl: u8, issue: Option<i64>) {
        if let (Some(t), Some(_)) = (issue, self.deadline) {
            let v = (now - t).max(0);
            match op {
                Op::Read => {
                    self.rd.0 += 1;
                    self.rd.1 = self.rd.1.min(v);
                }
                Op::Write | Op::Discard | Op::WriteZeroes => self.wr_nr += 1,
                Op::Flush => {}
            }
        }
        if fl & 1 == 0 {
            if self.sync_issue.is_some_and(|(i, _)| i == id) {
                self.sync_issue = None;
            }
            if fl & 2 != 0 && self.on {
                self.last_comp = now;
            }
        } else {
            self.release(now, Model::class_of(fl), fl);
        }
    }

    /// Kernel: `wbt_rqw_done`.
    fn release(&mut self, now: i64, c: usize, fl: u8) {
        self.inflight[c] -= 1;
        let n = self.inflight[c];
        let wake_limit = if fl & 8 != 0 {
            self.background
        } else if self.wc && !self.recent_dirty(now) {
            0
        } else {
            self.normal
        };
        if n > 0 && n >= wake_limit {
            return;
        }
        if !self.queues[c].is_empty() && (n == 0 || wake_limit - n >= self.background / 2) {
            self.wake_all(c, now);
        }
    }

    fn scale_up(&mut self, now: i64) {
        if self.scaled_max {
            return;
        }
        self.step -= 1;
        self.scaled_max = self.calc_max_depth();
        self.calc_limits();
        self.unknown_cnt = 0;
        for c in 0..3 {
            self.wake_all(c, now);
        }
    }

    fn scale_down(&mut self, hard: bool) {
        if self.max_depth == 1 {
            return;
        }
        if self.step < 0 && hard {
            self.step = 0;
        } else {
            self.step += 1;
        }
        self.scaled_max = false;
        self.calc_max_depth();
        self.calc_limits();
        self.unknown_cnt = 0;
    }

    fn timer(&mut self, now: i64) {
        self.deadline = None;
        let inflight: i64 = self.inflight.iter().sum();
        // Evaluate (kernel: `latency_exceeded`)
        let lat = match self.sync_issue {
            Some((_, t)) if self.on => now - t,
            _ => 0,
        };
        let verdict = if lat > self.cur_win || (lat > self.min_lat && self.rd.0 == 0) {
            4
        } else if !(self.rd.0 >= 1 && self.wr_nr >= 3) {
            if self.wr_nr > 0 || self.recent_dirty(now) || inflight > 0 {
                3
            } else {
                2
            }
        } else if self.rd.1 > self.min_lat {
            4
        } else {
            1
        };
        match verdict {
            4 => self.scale_down(true),
            1 | 3 => self.scale_up(now),
            _ => {
                self.unknown_cnt += 1;
                if self.unknown_cnt >= 5 {
                    if self.step > 0 {
                        self.scale_up(now);
                    } else if self.step < 0 {
                        self.scale_down(false);
                    }
                }
            }
        }
        if self.step != 0 || inflight > 0 {
            self.arm(now);
        }
    }

    /// The `wbt_lat_usec` knob (only called while quiesced).
    fn set_lat(&mut self, v: i64) {
        let ns = if v == -1 {
            if self.nonrot { 2_000_000 } else { 75_000_000 }
        } else {
            v * 1000
        };
        if ns == self.min_lat {
            return;
        }
        self.min_lat = ns;
        self.on = ns > 0;
        self.reset_limits();
    }
}

// ----------------------------------------------------------------------
// Events
// ----------------------------------------------------------------------

/// Which request an event acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pick {
    /// The request with this id; it must be in the list (modern: the
    /// reference only picks requests it holds).
    Id(u64),
    /// `i % len` into the list, nothing if it is empty (v5, and the old
    /// recorded cases).
    Index(usize),
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    Advance(u64),
    Drain,
    /// A new request: its id, `op_of` index, raw `OpFlags` bits.
    Submit(u64, u8, u8),
    Issue(Pick),
    Complete(Pick),
    Merge(Pick),
    Requeue(Pick),
    Dirty,
    DirtyEnd,
    Knob(i64),
    QueueDepth(u32),
}

fn op_of(o: u8) -> Op {
    [Op::Read, Op::Write, Op::Discard, Op::WriteZeroes, Op::Flush][usize::from(o % 5)]
}

#[derive(Clone, Copy, Debug)]
struct Req {
    id: u64,
    op: Op,
    opf: OpFlags,
    flags: ReqFlags,
    issued: Option<u64>,
}

fn pick(list: &[Req], p: Pick) -> Option<usize> {
    match p {
        Pick::Index(_) if list.is_empty() => None,
        Pick::Index(i) => Some(i % list.len()),
        Pick::Id(id) => Some(
            list.iter()
                .position(|r| r.id == id)
                .unwrap_or_else(|| panic!("request {id} is not in the list {list:?}")),
        ),
    }
}

fn ids<'a>(list: impl IntoIterator<Item = &'a Req>) -> Vec<u64> {
    list.into_iter().map(|r| r.id).collect()
}

/// The events, weighted as the old `proptest!` strategy weighted them. The
/// modern reference picks only requests its table holds (and leaves out a
/// pick with nothing to act on); v5 picks by index.
fn transitions(s: &RefState) -> BoxedStrategy<Ev> {
    let id = s.next_id;
    let mut arms: Vec<(u32, BoxedStrategy<Ev>)> = vec![
        (
            3,
            (0u64..160).prop_map(|ms| Ev::Advance(ms * MS / 4)).boxed(),
        ),
        (
            1,
            (100u64..2000).prop_map(|ms| Ev::Advance(ms * MS)).boxed(),
        ),
        (1, Just(Ev::Drain).boxed()),
        (
            6,
            (0u8..5, 0u8..64)
                .prop_map(move |(o, f)| Ev::Submit(id, o, f))
                .boxed(),
        ),
        (1, Just(Ev::Dirty).boxed()),
        (1, Just(Ev::DirtyEnd).boxed()),
        (
            1,
            prop_oneof![Just(-1i64), Just(0), 1i64..20_000]
                .prop_map(Ev::Knob)
                .boxed(),
        ),
        (
            1,
            prop_oneof![Just(1u32), Just(2), Just(4), 1u32..300]
                .prop_map(Ev::QueueDepth)
                .boxed(),
        ),
    ];
    match &s.world {
        Some(w) => {
            let pending = ids(&w.pending);
            let issued = ids(&w.issued);
            if !pending.is_empty() {
                let sel = proptest::sample::select(pending).prop_map(Pick::Id);
                arms.push((4, sel.clone().prop_map(Ev::Issue).boxed()));
                arms.push((1, sel.prop_map(Ev::Merge).boxed()));
            }
            if !issued.is_empty() {
                let sel = proptest::sample::select(issued).prop_map(Pick::Id);
                arms.push((5, sel.clone().prop_map(Ev::Complete).boxed()));
                arms.push((1, sel.prop_map(Ev::Requeue).boxed()));
            }
        }
        None => {
            let sel = any::<usize>().prop_map(Pick::Index);
            arms.push((4, sel.clone().prop_map(Ev::Issue).boxed()));
            arms.push((5, sel.clone().prop_map(Ev::Complete).boxed()));
            arms.push((1, sel.clone().prop_map(Ev::Merge).boxed()));
            arms.push((1, sel.prop_map(Ev::Requeue).boxed()));
        }
    }
    Union::new_weighted(arms).boxed()
}

// ----------------------------------------------------------------------
// Reference state machine: the model plus the caller's request table
// ----------------------------------------------------------------------

/// The core's observable state as `Snapshot` fields: step, scaled_max,
/// max_depth, normal, background, inflight, window_deadline, unknown_cnt,
/// min_lat_ns, enabled.
type Obs = (
    i32,
    bool,
    u32,
    u32,
    u32,
    [u32; 3],
    Option<u64>,
    u32,
    u64,
    bool,
);

/// What the core must be seen doing, recorded by the reference while it
/// applies one event, in the order the caller reaches the same points.
#[derive(Clone, Debug)]
enum Check {
    /// A submit: `Some(flags)` admitted at once, `None` queued.
    Admit(Option<u8>),
    /// The window timer fires at this time.
    Timer(u64),
    /// The waiters granted since the last such point, sorted.
    Grants(Vec<(u64, usize)>),
    /// The observable state, and the window length.
    Compare(Obs, u64),
}

impl Model {
    fn observe(&self) -> Check {
        Check::Compare(
            (
                self.step as i32,
                self.scaled_max,
                self.max_depth as u32,
                self.normal as u32,
                self.background as u32,
                self.inflight.map(|x| x as u32),
                self.deadline.map(|d| d as u64),
                self.unknown_cnt as u32,
                self.min_lat as u64,
                self.on,
            ),
            self.cur_win as u64,
        )
    }
}

/// The modern reference: the model and the request table of its caller.
/// Granted waiters join `pending` in id order, as they do on the core side,
/// so both tables stay equal element for element.
#[derive(Clone, Debug)]
struct World {
    model: Model,
    pending: Vec<Req>,
    issued: Vec<Req>,
    /// Requests in the model's FIFOs, by id (the model keeps only flags).
    waiting: BTreeMap<u64, Req>,
}

impl World {
    fn quiesced(&self) -> bool {
        self.pending.is_empty()
            && self.issued.is_empty()
            && self.model.queues.iter().all(|q| q.is_empty())
    }

    /// Move the model's grants to `pending` and record them.
    fn sync(&mut self, checks: &mut Vec<Check>) {
        let mut g = std::mem::take(&mut self.model.granted);
        g.sort_unstable();
        for &(id, c) in &g {
            let r = self
                .waiting
                .remove(&id)
                .expect("granted a waiter never queued");
            self.pending.push(Req {
                flags: ReqFlags::tracked(Class::ALL[c]),
                ..r
            });
        }
        checks.push(Check::Grants(g));
    }

    fn done(&mut self, now: u64, r: Req, issue: Option<u64>) {
        self.model
            .done(now as i64, r.id, r.op, r.flags.0, issue.map(|t| t as i64));
    }
}

/// Stops a reference advance that no longer moves time (a broken model);
/// the core side then reports the difference.
const MAX_TIMERS_PER_ADVANCE: usize = 10_000;

#[derive(Clone)]
struct RefState {
    variant: Variant,
    qd: u32,
    wc: bool,
    rot: bool,
    now: u64,
    next_id: u64,
    /// Modern only.
    world: Option<World>,
    /// What the last transition (or the initial state) recorded.
    checks: Vec<Check>,
}

impl std::fmt::Debug for RefState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RefState")
            .field("variant", &self.variant)
            .field("qd", &self.qd)
            .field("wc", &self.wc)
            .field("rot", &self.rot)
            .field("now", &self.now)
            .field("next_id", &self.next_id)
            .finish_non_exhaustive()
    }
}

impl RefState {
    fn new(variant: Variant, qd: u32, wc: bool, rot: bool) -> RefState {
        let world = (variant == Variant::Modern).then(|| World {
            model: Model::new(qd, !rot, wc),
            pending: Vec::new(),
            issued: Vec::new(),
            waiting: BTreeMap::new(),
        });
        let checks = world.iter().map(|w| w.model.observe()).collect();
        RefState {
            variant,
            qd,
            wc,
            rot,
            now: 0,
            next_id: 1,
            world,
            checks,
        }
    }

    /// Preconditions: ids only grow; a pick by id names a request in the
    /// list the event takes it from (shrinking may have removed it).
    fn allows(&self, e: &Ev) -> bool {
        let has = |list: &[Req], id| list.iter().any(|r| r.id == id);
        match (*e, &self.world) {
            (Ev::Submit(id, ..), _) => id >= self.next_id,
            (Ev::Issue(Pick::Id(id)) | Ev::Merge(Pick::Id(id)), Some(w)) => has(&w.pending, id),
            (Ev::Complete(Pick::Id(id)) | Ev::Requeue(Pick::Id(id)), Some(w)) => has(&w.issued, id),
            (
                Ev::Issue(Pick::Id(_))
                | Ev::Merge(Pick::Id(_))
                | Ev::Complete(Pick::Id(_))
                | Ev::Requeue(Pick::Id(_)),
                None,
            ) => false,
            _ => true,
        }
    }

    /// Step the reference, mirroring `Harness::step` on the core side.
    fn step(mut self, e: &Ev) -> RefState {
        self.checks.clear();
        let now = self.now;
        if let Ev::Submit(id, ..) = *e {
            self.next_id = id + 1;
        }
        let Some(w) = self.world.as_mut() else {
            if let Ev::Advance(dt) = *e {
                self.now = now + dt;
            }
            return self;
        };
        let checks = &mut self.checks;
        match *e {
            Ev::Advance(dt) => {
                let to = now + dt;
                let mut fired = 0;
                while let Some(d) = w.model.deadline {
                    if d > to as i64 || fired == MAX_TIMERS_PER_ADVANCE {
                        break;
                    }
                    fired += 1;
                    w.model.now_hint = d;
                    checks.push(Check::Timer(d as u64));
                    w.model.timer(d);
                    w.sync(checks);
                    checks.push(w.model.observe());
                }
                w.model.now_hint = to as i64;
                self.now = to;
                return self;
            }
            Ev::Submit(id, o, f) => {
                let op = op_of(o);
                let opf = OpFlags(u32::from(f));
                let a = w.model.throttle(now as i64, id, op, opf);
                checks.push(Check::Admit(a));
                let req = Req {
                    id,
                    op,
                    opf,
                    flags: ReqFlags::NONE,
                    issued: None,
                };
                match a {
                    Some(fl) => w.pending.push(Req {
                        flags: ReqFlags(fl),
                        ..req
                    }),
                    None => {
                        w.waiting.insert(id, req);
                    }
                }
            }
            Ev::Drain => {
                while let Some(r) = w.issued.pop() {
                    w.done(now, r, r.issued);
                    w.sync(checks);
                }
                for r in std::mem::take(&mut w.pending) {
                    w.done(now, r, None);
                    w.sync(checks);
                }
            }
            Ev::Issue(p) => {
                if let Some(k) = pick(&w.pending, p) {
                    let mut r = w.pending.swap_remove(k);
                    r.issued = Some(now);
                    w.model.issue(now as i64, r.id, r.flags.0);
                    w.issued.push(r);
                }
            }
            Ev::Complete(p) => {
                if let Some(k) = pick(&w.issued, p) {
                    let r = w.issued.swap_remove(k);
                    w.done(now, r, r.issued);
                }
            }
            Ev::Merge(p) => {
                if let Some(k) = pick(&w.pending, p) {
                    let r = w.pending.swap_remove(k);
                    w.done(now, r, None);
                }
            }
            Ev::Requeue(p) => {
                if let Some(k) = pick(&w.issued, p) {
                    let mut r = w.issued.swap_remove(k);
                    w.model.requeue(r.id);
                    r.issued = None;
                    w.pending.push(r);
                }
            }
            Ev::Dirty => w.model.dirty = Some(now as i64),
            Ev::DirtyEnd => {}
            Ev::Knob(v) => {
                if !w.quiesced() {
                    return self;
                }
                w.model.set_lat(v);
            }
            Ev::QueueDepth(qd) => {
                if !w.quiesced() {
                    return self;
                }
                w.model.qd = i64::from(qd.max(1));
                w.model.reset_limits();
            }
        }
        w.sync(checks);
        checks.push(w.model.observe());
        self
    }
}

/// The modern variant against the model.
struct ModernRef;

impl ReferenceStateMachine for ModernRef {
    type State = RefState;
    type Transition = Ev;

    fn init_state() -> BoxedStrategy<RefState> {
        (
            prop_oneof![
                Just(1u32),
                Just(2),
                Just(4),
                Just(16),
                Just(32),
                Just(64),
                1u32..300
            ],
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(qd, wc, rot)| RefState::new(Variant::Modern, qd, wc, rot))
            .boxed()
    }

    fn transitions(s: &RefState) -> BoxedStrategy<Ev> {
        transitions(s)
    }

    fn apply(s: RefState, e: &Ev) -> RefState {
        s.step(e)
    }

    fn preconditions(s: &RefState, e: &Ev) -> bool {
        s.allows(e)
    }
}

/// The 2016 v5 variant: no model, invariants only.
struct V5Ref;

impl ReferenceStateMachine for V5Ref {
    type State = RefState;
    type Transition = Ev;

    fn init_state() -> BoxedStrategy<RefState> {
        (
            prop_oneof![Just(1u32), Just(32), Just(128), 1u32..300],
            any::<bool>(),
        )
            .prop_map(|(qd, wc)| RefState::new(Variant::V5_2016, qd, wc, false))
            .boxed()
    }

    fn transitions(s: &RefState) -> BoxedStrategy<Ev> {
        transitions(s)
    }

    fn apply(s: RefState, e: &Ev) -> RefState {
        s.step(e)
    }

    fn preconditions(s: &RefState, e: &Ev) -> bool {
        s.allows(e)
    }
}

// ----------------------------------------------------------------------
// System under test: the caller around the core
// ----------------------------------------------------------------------

struct Harness {
    core: Wbt,
    /// Checked against the reference's records (modern).
    modern: bool,
    /// The reference's records for the event being applied.
    checks: VecDeque<Check>,
    now: u64,
    queues: [VecDeque<Req>; 3],
    pending: Vec<Req>,
    issued: Vec<Req>,
    admitted: u64,
    released: u64,
}

impl Harness {
    fn new(r: &RefState) -> Harness {
        let params = DeviceParams {
            queue_depth: r.qd,
            rotational: r.rot,
            write_cache: r.wc,
        };
        Harness {
            core: Wbt::new(params, r.variant),
            modern: r.world.is_some(),
            checks: VecDeque::new(),
            now: 0,
            queues: Default::default(),
            pending: Vec::new(),
            issued: Vec::new(),
            admitted: 0,
            released: 0,
        }
    }

    /// Take the reference's records for the event about to be applied.
    fn load(&mut self, r: &RefState) {
        self.checks = r.checks.iter().cloned().collect();
    }

    /// Every record of the reference was met.
    fn all_checked(&mut self, e: Option<Ev>) {
        match self.checks.pop_front() {
            None => {}
            Some(Check::Timer(d)) => panic!("model deadline {d} not served"),
            Some(c) => panic!("the core never reached the reference's {c:?} (event {e:?})"),
        }
    }

    /// The request tables agree with the reference's, element for element.
    fn agree(&self, r: &RefState) {
        assert_eq!(self.now, r.now, "times differ");
        if let Some(w) = &r.world {
            assert_eq!(ids(&self.pending), ids(&w.pending), "pending differs");
            assert_eq!(ids(&self.issued), ids(&w.issued), "issued differs");
            for c in 0..3 {
                let model: Vec<u64> = w.model.queues[c].iter().map(|x| x.id).collect();
                assert_eq!(ids(&self.queues[c]), model, "class {c} queue differs");
            }
        }
    }

    fn check_limit_after_grant(&self, class: Class, opf: OpFlags) {
        let s = self.core.snapshot();
        if s.min_lat_ns == 0 {
            return;
        }
        let op = if class == Class::Discard {
            Op::Discard
        } else {
            Op::Write
        };
        let limit = self.core.get_limit(self.now, op, opf);
        assert!(
            s.inflight[class.index()] <= limit,
            "admitted above the limit: {s:?} limit {limit}"
        );
    }

    /// Serve the core's wakes the way the crate docs tell a caller to.
    /// Granted waiters join `pending` in id order (the reference's order).
    fn serve_wakes(&mut self) -> Vec<(u64, usize)> {
        let mut granted = Vec::new();
        let mut admitted = Vec::new();
        while let Some(w) = self.core.poll_wake() {
            let c = w.class.index();
            match w.mode {
                WakeMode::GrantFifo | WakeMode::RecheckOne => {
                    while let Some(head) = self.queues[c].front().copied() {
                        if !self.core.try_admit(self.now, w.class, head.opf) {
                            break;
                        }
                        self.check_limit_after_grant(w.class, head.opf);
                        self.queues[c].pop_front();
                        admitted.push(Req {
                            flags: ReqFlags::tracked(w.class),
                            ..head
                        });
                        self.admitted += 1;
                        granted.push((head.id, c));
                        if w.mode == WakeMode::RecheckOne {
                            break;
                        }
                    }
                }
                WakeMode::RecheckAll => {
                    let mut keep = VecDeque::new();
                    while let Some(head) = self.queues[c].pop_front() {
                        if self.core.try_admit(self.now, w.class, head.opf) {
                            self.check_limit_after_grant(w.class, head.opf);
                            admitted.push(Req {
                                flags: ReqFlags::tracked(w.class),
                                ..head
                            });
                            self.admitted += 1;
                            granted.push((head.id, c));
                        } else {
                            keep.push_back(head);
                        }
                    }
                    self.queues[c] = keep;
                }
            }
        }
        admitted.sort_unstable_by_key(|r| r.id);
        self.pending.extend(admitted);
        granted
    }

    fn sync_model_grants(&mut self, core_granted: Vec<(u64, usize)>) {
        if self.modern {
            let mut cg = core_granted;
            cg.sort_unstable();
            match self.checks.pop_front() {
                Some(Check::Grants(mg)) => assert_eq!(mg, cg, "granted waiters differ"),
                other => panic!("granted waiters differ: core {cg:?}, reference at {other:?}"),
            }
        }
    }

    fn advance(&mut self, to: u64) {
        while let Some(d) = self.core.next_deadline() {
            if d > to {
                break;
            }
            assert!(d >= self.now, "deadline {d} in the past (now {})", self.now);
            if self.modern {
                match self.checks.pop_front() {
                    Some(Check::Timer(md)) => assert_eq!(md, d, "deadlines differ"),
                    other => panic!("deadlines differ: core timer at {d}, reference at {other:?}"),
                }
            }
            self.now = d;
            self.core.on_timer(d);
            let g = self.serve_wakes();
            self.sync_model_grants(g);
            self.compare();
        }
        // A model deadline at or before `to` that the core lacks is left
        // in `checks` as a `Timer`: `all_checked` reports it.
        self.now = to;
    }

    fn quiesced(&self) -> bool {
        self.pending.is_empty()
            && self.issued.is_empty()
            && self.queues.iter().all(|q| q.is_empty())
    }

    fn done(&mut self, r: Req, issue: Option<u64>) {
        if r.flags.contains(ReqFlags::TRACKED) {
            self.released += 1;
        }
        self.core.on_done(
            self.now,
            Rq {
                id: r.id,
                op: r.op,
                flags: r.flags,
            },
            issue,
        );
    }

    fn step(&mut self, e: Ev) {
        let now = self.now;
        match e {
            Ev::Advance(dt) => {
                self.advance(now + dt);
                return;
            }
            Ev::Submit(id, o, f) => {
                let op = op_of(o);
                let opf = OpFlags(u32::from(f));
                let before = self.core.snapshot();
                let a = self.core.on_throttle(now, op, opf);
                let m = self.modern.then(|| match self.checks.pop_front() {
                    Some(Check::Admit(m)) => m,
                    other => panic!("admission differs: core {a:?}, reference at {other:?}"),
                });
                let req = Req {
                    id,
                    op,
                    opf,
                    flags: ReqFlags::NONE,
                    issued: None,
                };
                match a {
                    Admit::Go(flags) => {
                        if let Some(m) = m {
                            assert_eq!(m, Some(flags.0), "admission differs");
                        }
                        if let Some(c) = flags.class() {
                            if before.variant == Variant::Modern {
                                assert_eq!(before.waiting[c.index()], 0, "overtook a waiter");
                            }
                            self.check_limit_after_grant(c, opf);
                            self.admitted += 1;
                        }
                        self.pending.push(Req { flags, ..req });
                    }
                    Admit::Wait(c) => {
                        if let Some(m) = m {
                            assert_eq!(m, None, "admission differs");
                        }
                        self.queues[c.index()].push_back(req);
                    }
                }
            }
            Ev::Drain => {
                // Complete everything issued and free everything pending;
                // waiters granted meanwhile stay pending.
                while let Some(r) = self.issued.pop() {
                    self.done(r, r.issued);
                    let g = self.serve_wakes();
                    self.sync_model_grants(g);
                }
                let pending = std::mem::take(&mut self.pending);
                for r in pending {
                    self.done(r, None);
                    let g = self.serve_wakes();
                    self.sync_model_grants(g);
                }
            }
            Ev::Issue(p) => {
                if let Some(k) = pick(&self.pending, p) {
                    let mut r = self.pending.swap_remove(k);
                    r.issued = Some(now);
                    self.core.on_issue(
                        now,
                        Rq {
                            id: r.id,
                            op: r.op,
                            flags: r.flags,
                        },
                    );
                    self.issued.push(r);
                }
            }
            Ev::Complete(p) => {
                if let Some(k) = pick(&self.issued, p) {
                    let r = self.issued.swap_remove(k);
                    self.done(r, r.issued);
                }
            }
            Ev::Merge(p) => {
                if let Some(k) = pick(&self.pending, p) {
                    let r = self.pending.swap_remove(k);
                    self.done(r, None);
                }
            }
            Ev::Requeue(p) => {
                if let Some(k) = pick(&self.issued, p) {
                    let mut r = self.issued.swap_remove(k);
                    self.core.on_requeue(Rq {
                        id: r.id,
                        op: r.op,
                        flags: r.flags,
                    });
                    r.issued = None;
                    self.pending.push(r);
                }
            }
            Ev::Dirty => self.core.on_dirty_throttle(now),
            Ev::DirtyEnd => self.core.on_dirty_throttle_end(now),
            Ev::Knob(v) => {
                if !self.quiesced() {
                    return;
                }
                self.core.set_lat_usec(v).expect("valid knob value");
            }
            Ev::QueueDepth(qd) => {
                if !self.quiesced() {
                    return;
                }
                self.core.set_queue_depth(qd);
            }
        }
        let g = self.serve_wakes();
        self.sync_model_grants(g);
        self.compare();
    }

    /// The invariants, at any point between two calls into the core.
    fn invariants(&self) {
        let s = self.core.snapshot();
        assert_eq!(s.underflows, 0, "a tracked request was counted out twice");
        let tracked_out: u32 = s.inflight.iter().sum();
        assert_eq!(u64::from(tracked_out), self.admitted - self.released);
        for c in Class::ALL {
            assert_eq!(s.waiting[c.index()] as usize, self.queues[c.index()].len());
        }
        if let Some(d) = s.window_deadline {
            assert!(d >= self.now);
        }
        // Step and window bounds.
        match s.variant {
            Variant::Modern => {
                assert!((-30..=4).contains(&s.step), "{s:?}");
                let qd = s.queue_depth;
                let top = 16.min(qd).max(3 * qd / 4).max(2);
                assert!(s.max_depth >= 1 && s.max_depth <= top, "{s:?}");
            }
            Variant::V5_2016 => {
                assert!((0..=6).contains(&s.step), "{s:?}");
                assert!(s.max_depth <= 64);
            }
        }
        // Modern steps stop at 4 (depth 16 >> 4 = 1); v5 at 6 (64 >> 6).
        let deepest = match s.variant {
            Variant::Modern => iolab_wbt::window_ns(4),
            Variant::V5_2016 => iolab_wbt::window_ns(6),
        };
        assert!(s.window_ns <= 100 * MS && s.window_ns >= deepest, "{s:?}");
    }

    /// The invariants, well-formed traces, and (modern) the core's
    /// observable state against the reference's record for this point.
    fn compare(&mut self) {
        self.invariants();
        while let Some(r) = self.core.poll_trace() {
            match r {
                TraceRecord::Step { now, .. }
                | TraceRecord::Stat { now, .. }
                | TraceRecord::Lat { now, .. }
                | TraceRecord::Timer { now, .. } => assert!(now <= self.now),
            }
        }
        if self.modern {
            let s = self.core.snapshot();
            let (want, win) = match self.checks.pop_front() {
                Some(Check::Compare(want, win)) => (want, win),
                other => panic!("core vs model: the reference was at {other:?}"),
            };
            let got = (
                s.step,
                s.scaled_max,
                s.max_depth,
                s.normal,
                s.background,
                s.inflight,
                s.window_deadline,
                s.unknown_cnt,
                s.min_lat_ns,
                s.enabled,
            );
            assert_eq!(got, want, "core vs model");
            if s.window_deadline.is_some() {
                assert_eq!(s.window_ns, win);
            }
        }
    }

    /// The last element of `list` as the pick the reference understands.
    fn last(&self, list: &[Req]) -> Pick {
        if self.modern {
            Pick::Id(list[list.len() - 1].id)
        } else {
            Pick::Index(list.len() - 1)
        }
    }
}

struct CoreTest<R>(PhantomData<R>);

impl<R> StateMachineTest for CoreTest<R>
where
    R: ReferenceStateMachine<State = RefState, Transition = Ev>,
{
    type SystemUnderTest = Harness;
    type Reference = R;

    fn init_test(r: &RefState) -> Harness {
        let mut h = Harness::new(r);
        h.load(r);
        h.compare();
        h.all_checked(None);
        h.agree(r);
        h
    }

    fn apply(mut h: Harness, r: &RefState, e: Ev) -> Harness {
        h.load(r);
        h.step(e);
        h.all_checked(Some(e));
        h.agree(r);
        h
    }

    fn check_invariants(h: &Harness, _: &RefState) {
        h.invariants();
    }

    /// Drain everything, both sides in step, and check every tracked
    /// request was counted out.
    fn teardown(mut h: Harness, mut r: RefState) {
        for _ in 0..10_000 {
            let e = if !h.issued.is_empty() {
                Ev::Complete(h.last(&h.issued))
            } else if !h.pending.is_empty() {
                Ev::Merge(h.last(&h.pending))
            } else if h.queues.iter().all(|q| q.is_empty()) {
                break;
            } else {
                // Only waiters left: a wake must come from time passing or
                // from the releases above; force a timer pass.
                Ev::Advance(200 * MS)
            };
            r = R::apply(r, &e);
            h = Self::apply(h, &r, e);
            Self::check_invariants(&h, &r);
            if matches!(e, Ev::Advance(_)) && h.pending.is_empty() && h.issued.is_empty() {
                let stuck: usize = h.queues.iter().map(|q| q.len()).sum();
                panic!("{stuck} waiters stranded with nothing inflight");
            }
        }
        let s = h.core.snapshot();
        assert_eq!(s.inflight, [0, 0, 0]);
        assert_eq!(h.admitted, h.released);
    }
}

prop_state_machine! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn modern_core_matches_reference_model(sequential 1..400 => CoreTest<ModernRef>);

    #[test]
    fn v5_invariants_hold(sequential 1..400 => CoreTest<V5Ref>);
}

// ----------------------------------------------------------------------
// The cases recorded in model.proptest-regressions
// ----------------------------------------------------------------------

/// The event shape of the test before the state-machine port, in which the
/// shrunk cases of `model.proptest-regressions` are written. Their seeds
/// still replay, but into the new strategy; these replay the cases
/// themselves.
#[derive(Clone, Copy)]
enum Old {
    Advance(u64),
    Submit(u8, u8),
    Issue(usize),
    Complete(usize),
    Merge(usize),
    Requeue(usize),
}

/// Run old-shape events through the state machine, both sides, as
/// `prop_state_machine!` would. Picks stay indices (granted waiters now
/// join `pending` in id order, so an index may land on another request
/// than it did then).
fn replay<R>(state: RefState, old: &[Old])
where
    R: ReferenceStateMachine<State = RefState, Transition = Ev>,
{
    let mut id = 0;
    let events = old
        .iter()
        .map(|&o| match o {
            Old::Advance(dt) => Ev::Advance(dt),
            Old::Submit(op, f) => {
                id += 1;
                Ev::Submit(id, op, f)
            }
            Old::Issue(i) => Ev::Issue(Pick::Index(i)),
            Old::Complete(i) => Ev::Complete(Pick::Index(i)),
            Old::Merge(i) => Ev::Merge(Pick::Index(i)),
            Old::Requeue(i) => Ev::Requeue(Pick::Index(i)),
        })
        .collect();
    CoreTest::<R>::test_sequential(ProptestConfig::default(), state, events, None);
}

#[test]
fn recorded_regressions() {
    use Old::*;
    replay::<V5Ref>(
        RefState::new(Variant::V5_2016, 32, false, false),
        &[
            Submit(1, 12),
            Advance(5000000),
            Submit(0, 0),
            Submit(0, 0),
            Submit(1, 0),
            Submit(0, 0),
            Submit(0, 0),
            Submit(0, 0),
            Advance(8750000),
            Submit(1, 0),
            Submit(1, 0),
            Submit(0, 0),
            Issue(15222694019269830830),
            Merge(0),
            Submit(2, 0),
            Advance(0),
            Merge(13692755009749809553),
            Submit(0, 0),
            Issue(14357054961044714986),
            Advance(0),
            Submit(1, 0),
            Submit(0, 0),
            Submit(0, 0),
            Advance(22750000),
            Issue(10698855606855),
            Issue(1048627566753959829),
            Issue(16243221670959466943),
            Advance(33750000),
            Complete(9727830838172122740),
            Submit(0, 55),
            Advance(13250000),
            Advance(9500000),
            Submit(3, 48),
            Issue(1442036617989386521),
            Submit(3, 55),
            Submit(2, 29),
            Submit(2, 24),
            Submit(3, 4),
            Submit(1, 39),
            Issue(5627444046061934575),
            Issue(9507201915278440132),
            Complete(9191775823083368201),
            Submit(0, 24),
            Issue(18291798636051030694),
            Issue(15852795525558866051),
            Advance(15000000),
            Submit(1, 23),
            Complete(4205499821643724290),
            Merge(11309616788912106164),
            Advance(3750000),
            Submit(4, 12),
            Advance(22500000),
            Complete(9036258959945729426),
            Submit(4, 39),
            Submit(4, 47),
            Requeue(8022989525241688869),
            Advance(24750000),
            Advance(29750000),
            Submit(3, 30),
            Submit(1, 14),
            Advance(25500000),
            Advance(20500000),
            Advance(24000000),
            Advance(14500000),
            Issue(4212529633465247760),
            Submit(3, 20),
            Merge(1004524990773281372),
            Issue(3757321490600499874),
            Requeue(4685917139457407005),
            Advance(19250000),
            Complete(9236934425510585891),
            Complete(17146449975093822162),
            Complete(10700463147787679393),
            Complete(11975988603743272633),
            Complete(13794191629729923444),
            Issue(17260555171668578894),
            Advance(35250000),
        ],
    );
    replay::<ModernRef>(
        RefState::new(Variant::Modern, 4, false, false),
        &[
            Submit(0, 0),
            Submit(0, 0),
            Submit(0, 0),
            Submit(0, 0),
            Submit(0, 0),
            Submit(1, 32),
            Submit(1, 32),
            Submit(0, 0),
            Submit(0, 0),
            Submit(0, 0),
            Submit(3, 0),
            Submit(2, 32),
            Submit(0, 0),
            Issue(6403507732257513578),
            Issue(6593081226747239456),
            Issue(0),
            Issue(0),
            Submit(0, 0),
            Requeue(0),
            Submit(0, 0),
            Submit(3, 0),
            Submit(1, 40),
            Merge(7289318317349493611),
            Submit(0, 0),
            Submit(0, 0),
            Issue(677765824453388215),
            Complete(14005690935828430797),
            Issue(16560751345219908643),
            Issue(4406391482053699847),
            Complete(16242119191348215819),
            Issue(11035849596895581215),
            Issue(9207793773636494433),
            Complete(6084939967563996331),
            Submit(2, 17),
            Submit(2, 45),
            Submit(4, 0),
            Submit(4, 18),
            Complete(17177112682747878101),
            Complete(6968004743309266308),
            Merge(11914773198606086377),
            Submit(3, 47),
            Submit(3, 57),
        ],
    );
    replay::<ModernRef>(RefState::new(Variant::Modern, 1, false, false), &[]);
}
