//! The rq-qos hook points and the [`Policy`] trait the algorithm crates
//! implement (blk-wbt, blk-iocost).
//!
//! The simulator is generic over `P: Policy`, so the hooks are statically
//! dispatched on the hot path. A policy sees a bio at `throttle` (before it
//! gets a request slot; it may make the submitter wait), stores its own
//! per-request bits at `track`, and sees the request again at `issue` (sent
//! to the device) and `done` (completed). Timers follow the sans-IO shape:
//! `next_deadline` says when to call `timer`. Waiting submitters are woken
//! in the order `poll_wake` returns them.

use super::request::{Flags, Op, Origin};
use crate::time::Ns;

/// A submitter parked by a policy; handed back by [`Policy::poll_wake`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Waiter(pub u32);

/// A policy's answer to a bio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Proceed now.
    Go,
    /// The submitter sleeps; the policy keeps the [`Waiter`] and returns it
    /// from `poll_wake` when the bio may proceed.
    Wait,
}

/// What a policy sees of a bio.
#[derive(Clone, Copy, Debug)]
pub struct QosBio {
    /// Operation.
    pub op: Op,
    /// Flags.
    pub flags: Flags,
    /// Length in bytes.
    pub len: u64,
    /// Byte offset on the device.
    pub offset: u64,
    /// Submitter.
    pub origin: Origin,
    /// Block cgroup id.
    pub cgroup: u16,
}

/// What a policy sees of a request at issue and completion.
#[derive(Clone, Copy, Debug)]
pub struct QosRq {
    /// Identity, unique among requests in flight.
    pub id: u32,
    /// The bio fields.
    pub bio: QosBio,
    /// The value the policy returned from `track`.
    pub policy_data: u32,
    /// Request allocation time.
    pub alloc_ns: Ns,
    /// Dispatch time (0 before issue).
    pub issue_ns: Ns,
}

/// Static facts about the device a policy is attached to.
#[derive(Clone, Copy, Debug)]
pub struct DeviceInfo {
    /// Host queue depth (tags).
    pub queue_depth: u32,
    /// Rotational media.
    pub rotational: bool,
    /// Volatile write cache present.
    pub write_cache: bool,
}

/// A block cgroup of the run, from fio's `cgroup=` and `cgroup_weight=`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Cgroup {
    /// The id bios carry in [`QosBio::cgroup`] (0 is the root, never listed).
    pub id: u16,
    /// The path fio was given.
    pub name: String,
    /// `cgroup_weight=` (fio writes it to the group's weight file), `None`
    /// when no job set it: the controller's default applies.
    pub weight: Option<u32>,
}

/// A block-layer rq-qos policy.
pub trait Policy {
    /// Short name for reports.
    fn name(&self) -> &str;
    /// Called once before the run with the device it sits on.
    fn attach(&mut self, _now: Ns, _dev: &DeviceInfo) {}
    /// Called once after `attach` with the cgroups of the run, ordered by
    /// id. Policies without per-cgroup state ignore it.
    fn cgroups(&mut self, _now: Ns, _groups: &[Cgroup]) {}
    /// A bio wants a request slot. `waiter` identifies the submitter if the
    /// policy answers [`Admit::Wait`].
    fn throttle(&mut self, now: Ns, bio: &QosBio, waiter: Waiter) -> Admit;
    /// The bio got a request; the returned bits are stored in the request.
    fn track(&mut self, _now: Ns, _bio: &QosBio) -> u32 {
        0
    }
    /// The request goes to the device.
    fn issue(&mut self, _now: Ns, _rq: &QosRq) {}
    /// The request completed.
    fn done(&mut self, _now: Ns, _rq: &QosRq) {}
    /// A task was throttled in `balance_dirty_pages`.
    fn dirty_throttled(&mut self, _now: Ns) {}
    /// A task's `balance_dirty_pages` pause ended.
    fn dirty_throttle_ended(&mut self, _now: Ns) {}
    /// What the policy reports at the end of a run (the JSON `iolab.policy`
    /// object): its state, and its trace records when asked for.
    fn report(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    /// The deadline returned by `next_deadline` has come.
    fn timer(&mut self, _now: Ns) {}
    /// When `timer` must be called next.
    fn next_deadline(&self) -> Option<Ns> {
        None
    }
    /// A parked submitter that may now proceed. Called after every hook
    /// above, at the time that hook was given.
    fn poll_wake(&mut self) -> Option<Waiter> {
        None
    }
}

/// The `none` policy: admits everything, keeps no state.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoPolicy;

impl Policy for NoPolicy {
    fn name(&self) -> &str {
        "none"
    }

    #[inline]
    fn throttle(&mut self, _now: Ns, _bio: &QosBio, _waiter: Waiter) -> Admit {
        Admit::Go
    }
}
