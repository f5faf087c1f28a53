//! `wbt` and `wbt-v5`: blk-wbt from `iolab-wbt` as the block layer's rq-qos
//! policy.
//!
//! The core counts waiters; the FIFO of waiting bios per class lives here.
//! When the core asks for a wake, the waiters are served as its
//! [`WakeMode`] says (modern: grant in FIFO order, stop at the first
//! refusal; v5: every waiter, or only the head, rechecks). Admitted waiters
//! are handed back to the simulator in that order.

use std::collections::VecDeque;

use iolab_wbt::{
    Admit as WbtAdmit, Class, DeviceParams, NUM_CLASSES, Op as WbtOp, OpFlags, Options, ReqFlags,
    Rq, TraceRecord, Variant, Wake, WakeMode, Wbt,
};
use serde_json::{Value, json};

use crate::block::request::{Flags, Op};
use crate::block::{Admit, DeviceInfo, Policy, QosBio, QosRq, Waiter};
use crate::time::Ns;

/// Knobs of the `wbt` policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WbtKnobs {
    /// Generation.
    pub variant: Variant,
    /// `wbt_lat_usec` to write after attaching (`None`: the default).
    pub lat_usec: Option<i64>,
    /// Keep the controller's trace records for the report.
    pub trace: bool,
}

/// The `wbt` rq-qos policy.
pub struct WbtPolicy {
    knobs: WbtKnobs,
    core: Option<Wbt>,
    fifo: [VecDeque<(Waiter, OpFlags)>; NUM_CLASSES],
    granted: VecDeque<Waiter>,
    now: Ns,
    trace: Vec<Value>,
    steps: u64,
}

impl WbtPolicy {
    /// A policy with `knobs`; the core is built when it is attached.
    pub fn new(knobs: WbtKnobs) -> Self {
        Self {
            knobs,
            core: None,
            fifo: Default::default(),
            granted: VecDeque::new(),
            now: 0,
            trace: Vec::new(),
            steps: 0,
        }
    }

    fn core(&mut self) -> &mut Wbt {
        // attach() always runs first; a default device keeps this total.
        self.core.get_or_insert_with(|| {
            Wbt::new(
                DeviceParams {
                    queue_depth: 32,
                    rotational: false,
                    write_cache: true,
                },
                Variant::Modern,
            )
        })
    }

    /// Drains the core's trace records (kept only when asked for).
    fn drain_trace(&mut self) {
        let keep = self.knobs.trace;
        while let Some(rec) = self.core().poll_trace() {
            if matches!(rec, TraceRecord::Step { .. }) {
                self.steps += 1;
            }
            if keep {
                self.trace.push(trace_json(&rec));
            }
        }
    }

    /// Serves the core's wake requests from the per-class FIFOs.
    fn serve_wakes(&mut self) {
        let now = self.now;
        while let Some(Wake { class, mode }) = self.core().poll_wake() {
            let i = class.index();
            let mut k = 0;
            while k < self.fifo[i].len() {
                let (w, flags) = self.fifo[i][k];
                let core = self.core.as_mut();
                let ok = core.is_some_and(|c| c.try_admit(now, class, flags));
                if ok {
                    self.fifo[i].remove(k);
                    self.granted.push_back(w);
                } else {
                    k += 1;
                }
                let go_on = match mode {
                    WakeMode::GrantFifo => ok,
                    WakeMode::RecheckAll => true,
                    WakeMode::RecheckOne => false,
                };
                if !go_on {
                    break;
                }
            }
        }
        self.drain_trace();
    }
}

fn op_of(op: Op) -> WbtOp {
    match op {
        Op::Read => WbtOp::Read,
        Op::Write => WbtOp::Write,
        Op::Discard => WbtOp::Discard,
    }
}

/// The core's view of a request: its id, op and the flags `track` stored.
fn rq_of(rq: &QosRq) -> Rq {
    Rq {
        id: u64::from(rq.id),
        op: op_of(rq.bio.op),
        flags: ReqFlags(rq.policy_data as u8),
    }
}

fn flags_of(f: Flags) -> OpFlags {
    let mut o = OpFlags::NONE;
    for (ours, theirs) in [
        (Flags::SYNC, OpFlags::SYNC),
        (Flags::IDLE, OpFlags::IDLE),
        (Flags::META, OpFlags::META),
        (Flags::PRIO, OpFlags::PRIO),
        (Flags::BACKGROUND, OpFlags::BACKGROUND),
        (Flags::SWAP, OpFlags::SWAP),
    ] {
        if f.contains(ours) {
            o = OpFlags(o.0 | theirs.0);
        }
    }
    o
}

fn trace_json(rec: &TraceRecord) -> Value {
    match *rec {
        TraceRecord::Step {
            now,
            dir,
            step,
            window_ns,
            background,
            normal,
            max,
        } => json!({
            "event": "wbt_step", "t_ns": now, "msg": format!("{dir:?}"), "step": step,
            "window_ns": window_ns, "bg": background, "normal": normal, "max": max,
        }),
        TraceRecord::Stat { now, read, write } => json!({
            "event": "wbt_stat", "t_ns": now,
            "rmean": read.mean(), "rmin": if read.nr_samples == 0 { 0 } else { read.min },
            "rmax": read.max, "rnr_samples": read.nr_samples, "rtime": read.sum,
            "wmean": write.mean(), "wmin": if write.nr_samples == 0 { 0 } else { write.min },
            "wmax": write.max, "wnr_samples": write.nr_samples, "wtime": write.sum,
        }),
        TraceRecord::Lat { now, lat_ns } => json!({
            "event": "wbt_lat", "t_ns": now, "lat_usec": lat_ns / 1000,
        }),
        TraceRecord::Timer {
            now,
            verdict,
            step,
            inflight,
        } => json!({
            "event": "wbt_timer", "t_ns": now, "status": verdict as u32,
            "step": step, "inflight": inflight,
        }),
    }
}

impl Policy for WbtPolicy {
    fn name(&self) -> &str {
        match self.knobs.variant {
            Variant::Modern => "wbt",
            Variant::V5_2016 => "wbt-v5",
        }
    }

    fn attach(&mut self, now: Ns, dev: &DeviceInfo) {
        let params = DeviceParams {
            queue_depth: dev.queue_depth,
            rotational: dev.rotational,
            write_cache: dev.write_cache,
        };
        let mut core = Wbt::with_options(
            params,
            self.knobs.variant,
            Options {
                start_ns: now,
                tick_hz: None,
            },
        );
        if let Some(v) = self.knobs.lat_usec {
            // Validated when the variant was parsed.
            let _ = core.set_lat_usec(v);
        }
        self.core = Some(core);
        self.drain_trace();
    }

    fn throttle(&mut self, now: Ns, bio: &QosBio, waiter: Waiter) -> Admit {
        self.now = now;
        let flags = flags_of(bio.flags);
        match self.core().on_throttle(now, op_of(bio.op), flags) {
            WbtAdmit::Go(_) => {
                self.drain_trace();
                Admit::Go
            }
            WbtAdmit::Wait(class) => {
                self.fifo[class.index()].push_back((waiter, flags));
                Admit::Wait
            }
        }
    }

    fn track(&mut self, _now: Ns, bio: &QosBio) -> u32 {
        u32::from(self.core().on_track(op_of(bio.op), flags_of(bio.flags)).0)
    }

    fn issue(&mut self, now: Ns, rq: &QosRq) {
        self.now = now;
        self.core().on_issue(now, rq_of(rq));
    }

    fn done(&mut self, now: Ns, rq: &QosRq) {
        self.now = now;
        let r = rq_of(rq);
        let issued = (rq.issue_ns > 0).then_some(rq.issue_ns);
        self.core().on_done(now, r, issued);
        self.serve_wakes();
    }

    fn dirty_throttled(&mut self, now: Ns) {
        self.now = now;
        self.core().on_dirty_throttle(now);
    }

    fn dirty_throttle_ended(&mut self, now: Ns) {
        self.now = now;
        self.core().on_dirty_throttle_end(now);
        self.serve_wakes();
    }

    fn timer(&mut self, now: Ns) {
        self.now = now;
        self.core().on_timer(now);
        self.serve_wakes();
    }

    fn next_deadline(&self) -> Option<Ns> {
        self.core.as_ref().and_then(Wbt::next_deadline)
    }

    fn poll_wake(&mut self) -> Option<Waiter> {
        if self.granted.is_empty() {
            self.serve_wakes();
        }
        self.granted.pop_front()
    }

    fn report(&self) -> Value {
        let Some(core) = self.core.as_ref() else {
            return Value::Null;
        };
        let s = core.snapshot();
        let classes: Vec<Value> = Class::ALL
            .iter()
            .map(|c| {
                json!({
                    "class": format!("{c:?}"),
                    "inflight": s.inflight[c.index()],
                    "waiting": s.waiting[c.index()],
                })
            })
            .collect();
        json!({
            "name": self.name(),
            "min_lat_ns": s.min_lat_ns,
            "enabled": s.enabled,
            "step": s.step,
            "max_depth": s.max_depth,
            "normal": s.normal,
            "background": s.background,
            "window_ns": s.window_ns,
            "classes": classes,
            "step_changes": self.steps,
            "trace_dropped": s.trace_dropped,
            "trace": if self.knobs.trace { Value::Array(self.trace.clone()) } else { Value::Null },
        })
    }
}
