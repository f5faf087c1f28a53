//! `iocost` and `iocost-v5.4`: blk-iocost from `iolab-iocost` as the block
//! layer's rq-qos policy.
//!
//! The core prices each bio, charges its cgroup's budget and parks the
//! bios over budget in per-group FIFOs; this adapter maps the simulator's
//! hooks onto it:
//!
//! * `cgroups`: one core group per cgroup of the run, with fio's
//!   `cgroup_weight=` as its weight on the device (`MAJ:MIN N` in
//!   `io.weight`); cgroup 0 is the root, never controlled.
//! * `throttle`: `on_submit`. A parked bio is named to the core by its
//!   [`Waiter`] token and handed back through `poll_wake` when the core
//!   releases it. Bios carrying `META` or `SWAP` are must-issue
//!   (`bio_issue_as_root_blkg`): charged as debt instead of waiting.
//! * Debt delay: when the core answers `Go` with a `delay_ns` (a must-issue
//!   bio of a group deep in debt), the kernel lets the bio go and puts the
//!   task to sleep for that long on its way back to user space. The
//!   simulator's submitters have no "return to user space", so the bio is
//!   held here instead: the submitter sleeps `delay_ns` (`Wait`), then the
//!   bio proceeds, already charged. For a synchronous submitter the time
//!   lost is the same; the device sees the IO `delay_ns` later than in the
//!   kernel. The report counts these holds (`delayed_bios`, `delay_ns`).
//! * `track`: the request of an admitted bio gets a slot in a preallocated
//!   table carrying what the completion needs (group, charged cost, and the
//!   time the bio left the controller, which is the kernel's
//!   `rq->alloc_time_ns`); the request's own allocation time is the
//!   kernel's `start_time_ns`, so `on_q` and the request-wait signal match
//!   `ioc_rqos_done`. The simulator's `track` sees only the bio, so the
//!   admitted bios wait in a short list matched by (cgroup, op, offset,
//!   length); equal keys are interchangeable (same group, same size).
//! * `done`: `on_done` with that slot; timers: `next_deadline`/`on_timer`
//!   of the core, plus the debt-delay holds.
//!
//! Nothing is allocated per IO in steady state: the tables are sized at
//! attach time from the queue depth and only grow (amortised) if a run
//! outgrows them.

use std::collections::VecDeque;

use iolab_iocost::{
    Admit as IocAdmit, Bio, Device, Done, GroupId, IoCost, Op as IocOp, Options, Trace, Variant,
};
use serde_json::{Value, json};

use crate::block::request::{Flags, Op};
use crate::block::{Admit, Cgroup, DeviceInfo, Policy, QosBio, QosRq, Waiter};
use crate::time::Ns;

/// Knobs of the `iocost` policies: the lines written to the controller's
/// configuration files after attaching (validated when the variant was
/// parsed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IocostKnobs {
    /// Generation.
    pub variant: Variant,
    /// The `io.cost.qos` line, e.g. `enable=1 rpct=95 rlat=2500`.
    pub qos: String,
    /// The `io.cost.model` line; empty: the built-in set the device selects.
    pub model: String,
    /// Keep the controller's trace records for the report.
    pub trace: bool,
}

impl Default for IocostKnobs {
    fn default() -> Self {
        Self {
            variant: Variant::Modern,
            qos: "enable=1".to_owned(),
            model: String::new(),
            trace: false,
        }
    }
}

/// The device number the simulated device reports (`sda`).
pub const DEVNO: (u32, u32) = (8, 0);

/// A bio the controller let go and whose request does not exist yet.
#[derive(Clone, Copy, Debug)]
struct Admitted {
    cgroup: u16,
    op: Op,
    offset: u64,
    len: u64,
    group: GroupId,
    cost: u64,
    /// When it left the controller (the kernel's `alloc_time_ns`).
    at: Ns,
}

/// A bio parked in the core (or held for a debt delay), by waiter token.
#[derive(Clone, Copy, Debug)]
struct Held {
    bio: QosBio,
    group: GroupId,
    /// The cost already charged (debt-delay holds), 0 otherwise.
    cost: u64,
}

/// What a request in flight needs at completion.
#[derive(Clone, Copy, Debug)]
struct Slot {
    group: GroupId,
    cost: u64,
    alloc_ns: Ns,
}

/// Per-period figures folded over the run (from the core's period records).
#[derive(Clone, Copy, Debug, Default)]
struct PeriodSummary {
    periods: u64,
    vrate_min: u64,
    vrate_max: u64,
    vrate_sum: u128,
    periods_missed: u64,
    periods_over_target: u64,
    periods_rq_wait: u64,
    periods_busy: u64,
    periods_idle_low: u64,
}

/// The `iocost` rq-qos policy.
pub struct IocostPolicy {
    knobs: IocostKnobs,
    core: Option<IoCost>,
    /// Config writes refused at attach (never expected: the variant parser
    /// validated the same lines).
    errors: Vec<String>,
    /// Core group by cgroup id; [`GroupId::ROOT`] where none.
    groups: Vec<GroupId>,
    names: Vec<(u16, String)>,
    /// By waiter token.
    held: Vec<Option<Held>>,
    /// Debt-delay holds: (release time, waiter).
    delayed: Vec<(Ns, Waiter)>,
    granted: VecDeque<Waiter>,
    admitted: Vec<Admitted>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    now: Ns,
    delayed_bios: u64,
    delay_ns: u64,
    parked_bios: u64,
    untracked: u64,
    summary: PeriodSummary,
    trace: Vec<Value>,
    /// With the trace: each group's state at the end of each period.
    periods: Vec<(Ns, Vec<GroupAtPeriod>)>,
}

/// A group at a period's end: `(cgroup, hwi, abs_vdebt)`.
type GroupAtPeriod = (u64, u32, u64);

impl IocostPolicy {
    /// A policy with `knobs`; the core is built when it is attached.
    pub fn new(knobs: IocostKnobs) -> Self {
        Self {
            knobs,
            core: None,
            errors: Vec::new(),
            groups: Vec::new(),
            names: Vec::new(),
            held: Vec::new(),
            delayed: Vec::new(),
            granted: VecDeque::new(),
            admitted: Vec::new(),
            slots: Vec::new(),
            free: Vec::new(),
            now: 0,
            delayed_bios: 0,
            delay_ns: 0,
            parked_bios: 0,
            untracked: 0,
            summary: PeriodSummary::default(),
            trace: Vec::new(),
            periods: Vec::new(),
        }
    }

    fn core(&mut self) -> &mut IoCost {
        // attach() always runs first; a default device keeps this total.
        let variant = self.knobs.variant;
        self.core.get_or_insert_with(|| {
            IoCost::new(
                Device {
                    devno: DEVNO,
                    rotational: false,
                    queue_depth: 32,
                },
                Options {
                    variant,
                    trace: true,
                    ..Options::default()
                },
            )
        })
    }

    fn group_of(&self, cgroup: u16) -> GroupId {
        self.groups
            .get(usize::from(cgroup))
            .copied()
            .unwrap_or(GroupId::ROOT)
    }

    fn set_held(&mut self, w: Waiter, h: Held) {
        let i = w.0 as usize;
        if i >= self.held.len() {
            self.held.resize(i + 1, None);
        }
        self.held[i] = Some(h);
    }

    fn admit(&mut self, bio: &QosBio, group: GroupId, cost: u64, at: Ns) {
        self.admitted.push(Admitted {
            cgroup: bio.cgroup,
            op: bio.op,
            offset: bio.offset,
            len: bio.len,
            group,
            cost,
            at,
        });
    }

    /// A held bio may go now.
    fn grant(&mut self, w: Waiter, cost: Option<u64>) {
        let now = self.now;
        if let Some(h) = self.held.get_mut(w.0 as usize).and_then(Option::take) {
            self.admit(&h.bio, h.group, cost.unwrap_or(h.cost), now);
        }
        self.granted.push_back(w);
    }

    /// Moves the core's releases and trace records out.
    fn drain(&mut self) {
        let qos = self.core.as_ref().map(IoCost::qos);
        while let Some(r) = self.core.as_mut().and_then(IoCost::poll_release) {
            self.grant(Waiter(r.bio as u32), Some(r.cost));
        }
        while let Some(t) = self.core.as_mut().and_then(IoCost::poll_trace) {
            if let Trace::Period {
                vrate_base, stats, ..
            } = t
            {
                let s = &mut self.summary;
                if s.periods == 0 {
                    s.vrate_min = vrate_base;
                    s.vrate_max = vrate_base;
                }
                s.periods += 1;
                s.vrate_min = s.vrate_min.min(vrate_base);
                s.vrate_max = s.vrate_max.max(vrate_base);
                s.vrate_sum += u128::from(vrate_base);
                if stats.missed_ppm.iter().any(|&m| m > 0) {
                    s.periods_missed += 1;
                }
                // Above the QoS percentile: the period counts as busy.
                if let Some(q) = qos
                    && ((q.rppm > 0 && stats.missed_ppm[0] > 1_000_000 - q.rppm)
                        || (q.wppm > 0 && stats.missed_ppm[1] > 1_000_000 - q.wppm))
                {
                    s.periods_over_target += 1;
                }
                if stats.rq_wait_pct > 0 {
                    s.periods_rq_wait += 1;
                }
                if stats.nr_shortages > 0 {
                    s.periods_busy += 1;
                }
                if stats.nr_surpluses > 0 {
                    s.periods_idle_low += 1;
                }
                if self.knobs.trace
                    && let Some(core) = self.core.as_ref()
                {
                    let groups = core
                        .snapshot(self.now)
                        .groups
                        .iter()
                        .map(|g| (g.cgroup, g.hwi, g.abs_vdebt))
                        .collect();
                    self.periods.push((self.now, groups));
                }
            }
            if self.knobs.trace {
                self.trace.push(trace_json(&t));
            }
        }
    }

    /// Releases the debt-delay holds due at `now`, earliest first.
    fn release_delayed(&mut self, now: Ns) {
        loop {
            let due = self
                .delayed
                .iter()
                .enumerate()
                .filter(|(_, (at, _))| *at <= now)
                .min_by_key(|(k, (at, _))| (*at, *k))
                .map(|(k, _)| k);
            let Some(k) = due else { break };
            let (_, w) = self.delayed.remove(k);
            self.grant(w, None);
        }
    }
}

fn op_of(op: Op) -> IocOp {
    match op {
        Op::Read => IocOp::Read,
        Op::Write => IocOp::Write,
        Op::Discard => IocOp::Other,
    }
}

fn trace_json(t: &Trace) -> Value {
    match *t {
        Trace::Activate { now, group } => {
            json!({"event": "iocost_iocg_activate", "t_ns": now, "group": group.0})
        }
        Trace::Idle { now, group } => {
            json!({"event": "iocost_iocg_idle", "t_ns": now, "group": group.0})
        }
        Trace::InuseAdjust {
            now,
            group,
            old_inuse,
            new_inuse,
        } => json!({
            "event": "iocost_inuse_adjust", "t_ns": now, "group": group.0,
            "old_inuse": old_inuse, "new_inuse": new_inuse,
        }),
        Trace::InuseTransfer {
            now,
            group,
            old_inuse,
            new_inuse,
        } => json!({
            "event": "iocost_inuse_transfer", "t_ns": now, "group": group.0,
            "old_inuse": old_inuse, "new_inuse": new_inuse,
        }),
        Trace::ForgiveDebt {
            now,
            group,
            old_debt,
            new_debt,
            old_delay,
            new_delay,
        } => json!({
            "event": "iocost_iocg_forgive_debt", "t_ns": now, "group": group.0,
            "old_debt": old_debt, "new_debt": new_debt,
            "old_delay": old_delay, "new_delay": new_delay,
        }),
        Trace::Period {
            now,
            vrate_base,
            vrate,
            busy_level,
            prev_busy_level,
            stats,
        } => json!({
            "event": "iocost_ioc_vrate_adj", "t_ns": now,
            "vrate_base": vrate_base, "vrate": vrate,
            "busy_level": busy_level, "prev_busy_level": prev_busy_level,
            "rmissed_ppm": stats.missed_ppm[0], "wmissed_ppm": stats.missed_ppm[1],
            "rq_wait_pct": stats.rq_wait_pct, "nr_done": stats.nr_done,
            "nr_lagging": stats.nr_lagging, "nr_shortages": stats.nr_shortages,
            "nr_surpluses": stats.nr_surpluses, "nr_debtors": stats.nr_debtors,
        }),
    }
}

/// vtime per µs at 100 % (the core's `VTIME_PER_USEC`).
const VTIME_PER_USEC: u64 = iolab_iocost::consts::VTIME_PER_USEC;

fn pct(vrate: u64) -> f64 {
    vrate as f64 * 100.0 / VTIME_PER_USEC as f64
}

impl Policy for IocostPolicy {
    fn name(&self) -> &str {
        match self.knobs.variant {
            Variant::Modern => "iocost",
            Variant::V5_4 => "iocost-v5.4",
        }
    }

    fn attach(&mut self, now: Ns, dev: &DeviceInfo) {
        self.now = now;
        let qd = dev.queue_depth.max(1) as usize;
        let mut core = IoCost::new(
            Device {
                devno: DEVNO,
                rotational: dev.rotational,
                queue_depth: dev.queue_depth,
            },
            Options {
                variant: self.knobs.variant,
                waitq_capacity: 64,
                release_capacity: 256.max(4 * qd),
                trace: true,
                autop_switching: true,
            },
        );
        if !self.knobs.model.is_empty()
            && let Err(e) = core.write_model(now, &self.knobs.model)
        {
            self.errors.push(e.to_string());
        }
        if let Err(e) = core.write_qos(now, &self.knobs.qos) {
            self.errors.push(e.to_string());
        }
        self.core = Some(core);
        // Requests in flight are bounded by the request slots (a few times
        // the queue depth); parked bios by the submitters.
        let cap = 4 * qd + 64;
        self.slots.reserve(cap);
        self.free.reserve(cap);
        self.admitted.reserve(cap);
        self.held.resize(cap, None);
        self.granted.reserve(cap);
        self.delayed.reserve(64);
        self.drain();
    }

    fn cgroups(&mut self, now: Ns, groups: &[Cgroup]) {
        self.now = now;
        let top = groups.iter().map(|g| usize::from(g.id)).max().unwrap_or(0);
        self.groups = vec![GroupId::ROOT; top + 1];
        for g in groups {
            if g.id == 0 {
                continue;
            }
            let gid = self.core().add_group(now, u64::from(g.id));
            self.groups[usize::from(g.id)] = gid;
            self.names.push((g.id, g.name.clone()));
            if let Some(w) = g.weight
                && let Err(e) = self.core().set_weight(now, gid, w)
            {
                self.errors.push(format!("cgroup {}: {e}", g.name));
            }
        }
        self.drain();
    }

    fn throttle(&mut self, now: Ns, bio: &QosBio, waiter: Waiter) -> Admit {
        self.now = now;
        let group = self.group_of(bio.cgroup);
        let b = Bio {
            id: u64::from(waiter.0),
            group,
            op: op_of(bio.op),
            bytes: bio.len,
            sector: bio.offset >> 9,
            must_issue: bio.flags.intersects(Flags::META.with(Flags::SWAP)),
        };
        let answer = self.core().on_submit(now, &b);
        let out = match answer {
            IocAdmit::Go { cost, delay_ns: 0 } => {
                self.admit(bio, group, cost, now);
                Admit::Go
            }
            IocAdmit::Go { cost, delay_ns } => {
                self.delayed_bios += 1;
                self.delay_ns += delay_ns;
                self.set_held(
                    waiter,
                    Held {
                        bio: *bio,
                        group,
                        cost,
                    },
                );
                self.delayed.push((now.saturating_add(delay_ns), waiter));
                Admit::Wait
            }
            // The linear model prices any bio up to 4 GiB below the bound
            // on any model it accepts (iolab-iocost's
            // `linear_never_refuses_a_bio_up_to_4_gib`), and bios here are
            // under 2 GiB (`MAX_BS`), so no refusal reaches the simulator.
            IocAdmit::Refused(_) => {
                self.admit(bio, group, 0, now);
                Admit::Go
            }
            IocAdmit::Wait => {
                self.parked_bios += 1;
                self.set_held(
                    waiter,
                    Held {
                        bio: *bio,
                        group,
                        cost: 0,
                    },
                );
                Admit::Wait
            }
        };
        self.drain();
        out
    }

    fn track(&mut self, _now: Ns, bio: &QosBio) -> u32 {
        let Some(k) = self.admitted.iter().position(|a| {
            a.cgroup == bio.cgroup && a.op == bio.op && a.offset == bio.offset && a.len == bio.len
        }) else {
            self.untracked += 1;
            return 0;
        };
        let a = self.admitted.remove(k);
        let slot = Slot {
            group: a.group,
            cost: a.cost,
            alloc_ns: a.at,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        };
        i + 1
    }

    fn done(&mut self, now: Ns, rq: &QosRq) {
        self.now = now;
        let Some(i) = rq.policy_data.checked_sub(1) else {
            return;
        };
        let Some(s) = self.slots.get(i as usize).copied() else {
            return;
        };
        self.free.push(i);
        let d = Done {
            group: s.group,
            cost: s.cost,
            op: op_of(rq.bio.op),
            bytes: rq.bio.len,
            alloc_ns: s.alloc_ns,
            start_ns: rq.alloc_ns.max(s.alloc_ns),
        };
        self.core().on_done(now, &d);
        self.drain();
    }

    fn timer(&mut self, now: Ns) {
        self.now = now;
        if self
            .core
            .as_ref()
            .and_then(IoCost::next_deadline)
            .is_some_and(|t| t <= now)
        {
            self.core().on_timer(now);
        }
        self.release_delayed(now);
        self.drain();
    }

    fn next_deadline(&self) -> Option<Ns> {
        // Bios released outside a completion or timer (by a submission)
        // are handed over by a timer at once.
        let soon = (!self.granted.is_empty()).then_some(self.now);
        let core = self.core.as_ref().and_then(IoCost::next_deadline);
        let held = self.delayed.iter().map(|(at, _)| *at).min();
        [soon, core, held].into_iter().flatten().min()
    }

    fn poll_wake(&mut self) -> Option<Waiter> {
        self.granted.pop_front()
    }

    fn report(&self) -> Value {
        let Some(core) = self.core.as_ref() else {
            return Value::Null;
        };
        let s = core.snapshot(self.now);
        let name_of = |cg: u64| {
            self.names
                .iter()
                .find(|(id, _)| u64::from(*id) == cg)
                .map_or("", |(_, n)| n.as_str())
        };
        let groups: Vec<Value> = s
            .groups
            .iter()
            .map(|g| {
                json!({
                    "cgroup": g.cgroup,
                    "name": name_of(g.cgroup),
                    "weight": g.weight,
                    "active": g.active,
                    "hwa": g.hwa,
                    "hwi": g.hwi,
                    "usage_us": g.usage_us,
                    "wait_us": g.wait_us,
                    "indebt_us": g.indebt_us,
                    "indelay_us": g.indelay_us,
                    "debt": g.abs_vdebt,
                    "delay_us": g.delay_us,
                    "waiting": g.waiting,
                })
            })
            .collect();
        let p = &self.summary;
        let lp = &s.last_period;
        let mut report = json!({
            "name": self.name(),
            "enabled": core.enabled(),
            "qos": core.qos_line().to_string(),
            "model": core.model_line().to_string(),
            "vrate_pct": s.vrate_pct100 as f64 / 100.0,
            "busy_level": s.busy_level,
            "period_us": s.period_us,
            "periods": s.cur_period,
            "last_period": {
                "rmissed_ppm": lp.missed_ppm[0], "wmissed_ppm": lp.missed_ppm[1],
                "rq_wait_pct": lp.rq_wait_pct, "nr_done": lp.nr_done,
                "nr_lagging": lp.nr_lagging, "nr_shortages": lp.nr_shortages,
                "nr_surpluses": lp.nr_surpluses, "nr_debtors": lp.nr_debtors,
            },
            "run": {
                "periods": p.periods,
                "vrate_min_pct": pct(p.vrate_min),
                "vrate_max_pct": pct(p.vrate_max),
                "vrate_mean_pct": if p.periods == 0 { 0.0 } else {
                    (p.vrate_sum / u128::from(p.periods)) as f64 * 100.0 / VTIME_PER_USEC as f64
                },
                "periods_missed": p.periods_missed,
                "periods_over_target": p.periods_over_target,
                "periods_rq_wait": p.periods_rq_wait,
                "periods_short": p.periods_busy,
                "periods_donating": p.periods_idle_low,
                "parked_bios": self.parked_bios,
                "delayed_bios": self.delayed_bios,
                "delay_ns": self.delay_ns,
                "untracked_requests": self.untracked,
            },
            "groups": groups,
            "io_stat": s.to_string(),
            "errors": self.errors,
            "trace": if self.knobs.trace { Value::Array(self.trace.clone()) } else { Value::Null },
        });
        // With the trace: each group's state at the end of each period.
        if self.knobs.trace {
            let periods: Vec<Value> = self
                .periods
                .iter()
                .map(|(t, groups)| {
                    let groups: Vec<Value> = groups
                        .iter()
                        .map(|&(cg, hwi, debt)| {
                            json!({
                                "cgroup": cg,
                                "name": name_of(cg),
                                "hwi_pct": f64::from(hwi) * 100.0 / 65_536.0,
                                "debt": debt,
                            })
                        })
                        .collect();
                    json!({ "t_ns": t, "groups": groups })
                })
                .collect();
            report["group_periods"] = Value::Array(periods);
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::request::Origin;

    fn policy(qos: &str) -> IocostPolicy {
        let mut p = IocostPolicy::new(IocostKnobs {
            qos: qos.to_owned(),
            ..IocostKnobs::default()
        });
        p.attach(
            0,
            &DeviceInfo {
                queue_depth: 32,
                rotational: false,
                write_cache: true,
            },
        );
        p.cgroups(
            0,
            &[Cgroup {
                id: 1,
                name: "a".into(),
                weight: Some(100),
            }],
        );
        p
    }

    fn bio(op: Op, flags: Flags, offset: u64, len: u64) -> QosBio {
        QosBio {
            op,
            flags,
            len,
            offset,
            origin: Origin::Task(0),
            cgroup: 1,
        }
    }

    #[test]
    fn debt_delay_parks_the_submitter_until_its_deadline() {
        let mut p = policy("enable=1");
        // Must-issue (META) 4 MiB writes at one instant: each is charged as
        // debt; once the overage passes five periods the core asks for an
        // issuer delay, which the adapter turns into a hold.
        let mut held = None;
        for k in 0..64u32 {
            let b = bio(Op::Write, Flags::META, u64::from(k) << 22, 4 << 20);
            match p.throttle(0, &b, Waiter(k)) {
                Admit::Go => {
                    assert!(p.track(0, &b) > 0, "every admitted bio gets a slot");
                }
                Admit::Wait => {
                    held = Some(k);
                    break;
                }
            }
        }
        let k = held.expect("the debt grew into a delay");
        assert_eq!(p.delayed_bios, 1);
        assert!(p.delay_ns >= 250_000, "at least MIN_DELAY: {}", p.delay_ns);
        let at = p.next_deadline().expect("a deadline for the hold");
        assert!(at <= p.delay_ns, "{at}");
        assert_eq!(p.poll_wake(), None, "nothing before the deadline");
        p.timer(at);
        assert_eq!(p.poll_wake(), Some(Waiter(k)));
        // Its request is tracked like any other and completes.
        let b = bio(Op::Write, Flags::META, u64::from(k) << 22, 4 << 20);
        let slot = p.track(at, &b);
        assert!(slot > 0);
        p.done(
            at + 1_000_000,
            &QosRq {
                id: 0,
                bio: b,
                policy_data: slot,
                alloc_ns: at,
                issue_ns: at,
            },
        );
        assert_eq!(p.untracked, 0);
        let r = p.report();
        assert_eq!(r["run"]["delayed_bios"], 1);
        assert!(
            r["groups"][0]["debt"].as_u64().is_some_and(|d| d > 0),
            "{r}"
        );
    }

    #[test]
    fn parked_bios_come_back_in_fifo_order() {
        let mut p = policy("enable=1");
        // 1 MiB random reads: ~2.6 ms of cost each at 100 %; the first few
        // fit the activation budget, the rest park.
        let mut parked = Vec::new();
        for k in 0..16u32 {
            let b = bio(Op::Read, Flags::SYNC, u64::from(k) * (64 << 20), 1 << 20);
            match p.throttle(1_000, &b, Waiter(k)) {
                Admit::Go => {
                    p.track(1_000, &b);
                }
                Admit::Wait => parked.push(k),
            }
        }
        assert!(!parked.is_empty() && parked.len() < 16, "{parked:?}");
        let mut woken = Vec::new();
        let mut now = 1_000;
        while woken.len() < parked.len() {
            now = p.next_deadline().expect("the core keeps a timer").max(now);
            p.timer(now);
            while let Some(Waiter(k)) = p.poll_wake() {
                woken.push(k);
            }
            assert!(now < 1_000_000_000, "parked bios never came back");
        }
        assert_eq!(woken, parked);
    }
}
