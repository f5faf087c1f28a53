//! A block device backed by a file: the loop driver over a file on a
//! disk or in RAM, measured by `iolab calibrate` rather than taken from a
//! datasheet.
//!
//! What a file behind a loop device has, and a flash SSD does not: no
//! striping, no page register, no program/erase asymmetry. A command is
//! served by the first of `units` servers to come free (the backing
//! store's concurrency: the host disk's queue, or the CPUs copying pages
//! of a RAM file), in arrival order, whatever its offset, so sequential
//! and random small IOs cost the same. Each command costs a fixed time
//! (`read_us` or `write_us`, each with its own seeded spread,
//! `service_sigma` and `write_sigma`) on its server and then its data
//! crosses the backing store's one data channel, shared by both
//! directions, at a read's or a write's speed (`read_mb_s`, `write_mb_s`:
//! a RAM file's page copies, or the host disk's transfers, are not equally
//! fast both ways), the server held until the transfer ends.
//!
//! With a volatile write cache a FLUSH (the backing file's fsync) starts
//! once the writes submitted before it have completed and holds a server
//! for `flush_us` (no spread: it is fitted as a mean); a FUA write pays the
//! same after its own data. Without
//! one a FLUSH completes at once. A discard costs a write's fixed time.
//!
//! The completion time of every command is known at submission: no
//! wake-ups, and all state is sized at construction.

use super::jitter::Jitter;
use super::timeline::Timeline;
use super::{DevCmd, DevCtx, DevOp, Gate, LoopParams, clamp_range};
use crate::rng::Stream;
use crate::time::{Ns, Rate};

fn ns(us: f64) -> Ns {
    (us * 1000.0).round() as Ns
}

/// File-backed (loop) device model.
#[derive(Debug, Clone)]
pub struct LoopDev {
    gate: Gate,
    capacity: u64,
    t_read: Ns,
    t_write: Ns,
    t_flush: Ns,
    read_rate: Rate,
    write_rate: Rate,
    write_cache: bool,
    fua: bool,
    /// When each server is next free.
    unit_free: Vec<Ns>,
    link_busy: Timeline,
    /// When the last write submitted so far completes (a FLUSH waits).
    writes_done: Ns,
    read_spread: Option<Jitter>,
    write_spread: Option<Jitter>,
}

/// Which spread a command's fixed time takes.
#[derive(Clone, Copy)]
enum Spread {
    Read,
    Write,
    Exact,
}

impl LoopDev {
    /// The model of `p`, its service-time spread (if any) drawn from `stream`.
    pub(crate) fn new(p: &LoopParams, mut stream: Stream) -> LoopDev {
        let writes = stream.fork();
        LoopDev {
            gate: Gate::new(p.queue_depth, true),
            capacity: p.capacity_gb * 1_000_000_000,
            t_read: ns(p.read_us),
            t_write: ns(p.write_us),
            t_flush: ns(p.flush_us),
            read_rate: Rate::new(p.read_mb_s * 1_000_000),
            write_rate: Rate::new(p.write_mb_s * 1_000_000),
            write_cache: p.write_cache,
            fua: p.fua,
            unit_free: vec![0; p.units as usize],
            link_busy: Timeline::with_capacity((p.queue_depth as usize).min(256) + 8),
            writes_done: 0,
            read_spread: Jitter::new(p.service_sigma, stream),
            write_spread: Jitter::new(p.write_sigma, writes),
        }
    }

    pub(crate) fn queue_depth(&self) -> u32 {
        self.gate.queue_depth
    }

    pub(crate) fn capacity(&self) -> u64 {
        self.capacity
    }

    pub(crate) fn write_cache(&self) -> bool {
        self.write_cache
    }

    pub(crate) fn fua(&self) -> bool {
        self.fua
    }

    pub(crate) fn flush_queued(&self) -> bool {
        true
    }

    pub(crate) fn gate(&self) -> &Gate {
        &self.gate
    }

    pub(crate) fn submit(&mut self, now: Ns, cmd: DevCmd, ctx: &mut impl DevCtx) {
        self.gate.on_submit(&cmd);
        let done = match cmd.op {
            DevOp::Read => {
                let (_, len) = clamp_range(cmd.offset, cmd.len, self.capacity);
                self.serve(now, now, self.t_read, Spread::Read, len)
            }
            DevOp::Write => {
                let (_, len) = clamp_range(cmd.offset, cmd.len, self.capacity);
                let mut done = self.serve(now, now, self.t_write, Spread::Write, len);
                if cmd.fua && self.write_cache {
                    done = self.serve(now, done, self.t_flush, Spread::Exact, 0);
                }
                self.writes_done = self.writes_done.max(done);
                done
            }
            DevOp::Flush if self.write_cache => {
                let after = self.writes_done.max(now);
                self.serve(now, after, self.t_flush, Spread::Exact, 0)
            }
            DevOp::Flush => now,
            DevOp::Discard => self.serve(now, now, self.t_write, Spread::Write, 0),
        };
        ctx.complete_at(done, cmd.tag);
    }

    pub(crate) fn on_wake(&mut self, _now: Ns, _ctx: &mut impl DevCtx) {}

    pub(crate) fn retire(&mut self, _now: Ns, tag: u32) {
        self.gate.on_retire(tag);
    }

    /// One command ready at `ready`: `fixed` (with its spread) on the
    /// first server free, then `len` bytes over the shared channel at
    /// the read or the write speed. Returns its end.
    fn serve(&mut self, now: Ns, ready: Ns, fixed: Ns, spread: Spread, len: u64) -> Ns {
        let (u, free) = self
            .unit_free
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(i, t)| (t, i))
            .expect("a loop device has a server");
        let jitter = match spread {
            Spread::Read => self.read_spread.as_mut(),
            Spread::Write => self.write_spread.as_mut(),
            Spread::Exact => None,
        };
        let fixed = jitter.map_or(fixed, |j| j.scale(fixed));
        let media = ready.max(free) + fixed;
        let rate = match spread {
            Spread::Read => &mut self.read_rate,
            Spread::Write | Spread::Exact => &mut self.write_rate,
        };
        let dur = if len == 0 { 0 } else { rate.ns(len) };
        let end = self.link_busy.reserve(now, media, dur) + dur;
        self.unit_free[u] = end;
        end
    }
}
