//! null_blk-like device \[S8\]: every command completes a fixed delay after
//! submission, infinitely parallel, no write cache.

use super::{DevCmd, DevCtx, Gate, NullParams};
use crate::time::Ns;

/// Fixed-latency device, like null_blk in timer mode (`irqmode=2`).
#[derive(Debug, Clone)]
pub struct NullDev {
    gate: Gate,
    capacity: u64,
    completion_ns: Ns,
}

impl NullDev {
    pub(crate) fn new(p: &NullParams) -> NullDev {
        NullDev {
            gate: Gate::new(p.queue_depth, true),
            capacity: p.capacity_gb * 1_000_000_000,
            completion_ns: p.completion_ns,
        }
    }

    pub(crate) fn queue_depth(&self) -> u32 {
        self.gate.queue_depth
    }

    pub(crate) fn capacity(&self) -> u64 {
        self.capacity
    }

    pub(crate) fn write_cache(&self) -> bool {
        false
    }

    pub(crate) fn fua(&self) -> bool {
        false
    }

    pub(crate) fn flush_queued(&self) -> bool {
        true
    }

    pub(crate) fn gate(&self) -> &Gate {
        &self.gate
    }

    pub(crate) fn submit(&mut self, now: Ns, cmd: DevCmd, ctx: &mut impl DevCtx) {
        self.gate.on_submit(&cmd);
        ctx.complete_at(now + self.completion_ns, cmd.tag);
    }

    pub(crate) fn on_wake(&mut self, _now: Ns, _ctx: &mut impl DevCtx) {}

    pub(crate) fn retire(&mut self, _now: Ns, tag: u32) {
        self.gate.on_retire(tag);
    }
}
