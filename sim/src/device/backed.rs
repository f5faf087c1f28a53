//! A block device backed by a file: the loop driver over a file on a
//! disk or in RAM, measured by `iolab calibrate` rather than taken from a
//! datasheet.
//!
//! What a file behind a loop device has, and a flash SSD does not: no
//! striping, no page register, no program/erase asymmetry. The backing
//! store serves `units` commands at once (the host disk's queues, or the
//! CPUs copying pages of a RAM file), and each server keeps its own
//! queue: commands are dealt to the servers in turn, whatever their
//! offsets (so sequential and random small IOs cost the same), and one
//! waits for its own server even when another has come free. A command
//! behind a slow one waits long while one dealt to an idle server
//! overtakes it, which is what gives the measured devices a median at
//! depth shorter, and a tail longer, than one queue for all servers
//! would. Writes have `write_units` servers of their own (0: they take
//! the read servers' turns), for a backing store that absorbs writes
//! beside reads. Each command costs a fixed time
//! (`read_us` or `write_us`, each with its own seeded spread,
//! `service_sigma` and `write_sigma`) on its server and then its data
//! crosses the backing store's one data channel, shared by both
//! directions, at a read's or a write's speed (`read_mb_s`, `write_mb_s`:
//! a RAM file's page copies, or the host disk's transfers, are not equally
//! fast both ways), the server held until the transfer ends. The channel's
//! speed wanders: each direction's speed is scaled by a seeded
//! log-normal factor of mean 1 (`transfer_sigma`, `write_transfer_sigma`;
//! the fitted bandwidths stay), one factor for each [`SPEED_EPOCH`] of
//! time, a transfer taking the one of the time its data is ready. A factor per transfer would not do: the eight 1 MiB
//! transfers ahead of a read at QD8 would average their spreads out, where
//! the measured devices' latency there is as spread as one transfer's
//! (the host's disk and page cache are fast or slow for milliseconds at a
//! time, not per command).
//!
//! A run as a whole may be slower or faster than the fitted device, as
//! repeated runs of the same job on a real loop device are: one standard
//! normal `z` per run, drawn from the seed, scales both directions' fixed
//! times and divides their speeds by `exp(run_sigma · z)` for reads and
//! `exp(write_run_sigma · z)` for writes (one `z`: the host's disk is slow
//! or fast for both at once). The FLUSH's time stays as fitted.
//!
//! With a volatile write cache a FLUSH (the backing file's fsync) takes
//! `flush_us` (no spread: it is fitted as a mean) and no command submitted
//! after it starts before it ends. That is the loop driver's worker of
//! Linux 6.18: it takes its commands one by one, sends a read or a write
//! to the backing file without waiting for it, but does the fsync itself
//! (`loop_process_work`, `lo_req_flush` in `drivers/block/loop.c`), so a
//! FLUSH takes no server and holds up everything behind it. (Commit
//! 0ba93a906dda, merged after 6.18, sends reads and writes from the
//! submitter instead when it can; this model does not follow it.)
//! Whether the fsync also waits for the commands still in flight is the
//! backing store's affair, not the loop driver's, and is measured
//! (`flush_drains`): a store that finishes what it holds before it syncs
//! starts the FLUSH only when every command submitted before it has
//! completed. A FUA write pays the flush's time on its server after its
//! own data. Without a write cache a FLUSH completes at once. A discard
//! costs a write's fixed time.
//!
//! The completion time of every command is known at submission: no
//! wake-ups, and all state is sized at construction.

use super::jitter::{self, Jitter};
use super::timeline::Timeline;
use super::{DevCmd, DevCtx, DevOp, Gate, LoopParams, clamp_range};
use crate::rng::Stream;
use crate::time::{Ns, Rate};

fn ns(us: f64) -> Ns {
    (us * 1000.0).round() as Ns
}

/// How long the channel keeps one speed factor (assumed: the probes
/// measure the factor's spread, not how long it lasts).
pub(crate) const SPEED_EPOCH: Ns = 10_000_000;

/// One direction's channel speed: a factor for each [`SPEED_EPOCH`] of
/// time, a function of the epoch alone, so that a transfer takes the
/// speed of the time its data is ready, whatever order the transfers are
/// booked in.
#[derive(Debug, Clone)]
struct Speed {
    spread: Jitter,
    key: u64,
}

impl Speed {
    fn new(mut spread: Jitter) -> Speed {
        let key = spread.key();
        Speed { spread, key }
    }

    /// The factor of the epoch `at` is in.
    fn at(&self, at: Ns) -> u64 {
        self.spread.factor_of(self.key ^ (at / SPEED_EPOCH))
    }
}

/// File-backed (loop) device model.
#[derive(Debug, Clone)]
pub struct LoopDev {
    gate: Gate,
    capacity: u64,
    t_read: Ns,
    t_write: Ns,
    t_flush: Ns,
    flush_drains: bool,
    read_rate: Rate,
    write_rate: Rate,
    write_cache: bool,
    fua: bool,
    reads: Servers,
    /// Servers of writes; `None`: they use `reads`.
    writes: Option<Servers>,
    link_busy: Timeline,
    /// When the last FLUSH submitted so far completes: the loop driver's
    /// worker takes no command after a FLUSH until it has done it.
    flush_done: Ns,
    /// When the last of the commands submitted so far completes: what a
    /// draining FLUSH waits for.
    drained: Ns,
    read_spread: Option<Jitter>,
    write_spread: Option<Jitter>,
    read_speed: Option<Speed>,
    write_speed: Option<Speed>,
}

/// This run's factors of the reads' and the writes' times: `exp(σ·z)`
/// for each direction's σ and one standard normal `z` drawn from a stream
/// forked only when a σ is set (a file without them draws what it drew
/// before they existed).
fn run_factors(p: &LoopParams, stream: &mut Stream) -> (f64, f64) {
    if p.run_sigma <= 0.0 && p.write_run_sigma <= 0.0 {
        return (1.0, 1.0);
    }
    let z = jitter::normal_draw(&mut stream.fork());
    ((p.run_sigma * z).exp(), (p.write_run_sigma * z).exp())
}

/// A speed of `mb_s` 10^6 B/s in a run whose times are `factor` times the
/// fitted ones (at least 1 B/s).
fn run_rate(mb_s: u64, factor: f64) -> Rate {
    Rate::new(((mb_s as f64 * 1e6 / factor).round() as u64).max(1))
}

/// Servers that each keep their own queue, dealt commands in turn.
#[derive(Debug, Clone)]
struct Servers {
    /// When each server's queue is next empty.
    free: Vec<Ns>,
    /// The server the next command is dealt to.
    next: usize,
}

impl Servers {
    fn new(n: u32) -> Servers {
        Servers {
            free: vec![0; n as usize],
            next: 0,
        }
    }

    /// The next server in turn and when its queue empties.
    fn deal(&mut self) -> (usize, Ns) {
        let u = self.next;
        self.next = (u + 1) % self.free.len();
        (u, self.free[u])
    }
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
        // Forked only when used, so a file without transfer spreads draws
        // what it drew before they existed.
        let mut speed = |sigma: f64| {
            (sigma > 0.0)
                .then(|| Jitter::mean_speed_one(sigma, stream.fork()).map(Speed::new))
                .flatten()
        };
        let read_speed = speed(p.transfer_sigma);
        let write_speed = speed(p.write_transfer_sigma);
        let (read_run, write_run) = run_factors(p, &mut stream);
        LoopDev {
            gate: Gate::new(p.queue_depth, true),
            capacity: p.capacity_gb * 1_000_000_000,
            t_read: ns(p.read_us * read_run),
            t_write: ns(p.write_us * write_run),
            t_flush: ns(p.flush_us),
            flush_drains: p.flush_drains,
            read_rate: run_rate(p.read_mb_s, read_run),
            write_rate: run_rate(p.write_mb_s, write_run),
            write_cache: p.write_cache,
            fua: p.fua,
            reads: Servers::new(p.units),
            writes: (p.write_units > 0).then(|| Servers::new(p.write_units)),
            link_busy: Timeline::with_capacity((p.queue_depth as usize).min(256) + 8),
            flush_done: 0,
            drained: 0,
            read_spread: Jitter::new(p.service_sigma, stream),
            write_spread: Jitter::new(p.write_sigma, writes),
            read_speed,
            write_speed,
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
        // Nothing starts before the FLUSH ahead of it has completed.
        let ready = now.max(self.flush_done);
        let done = match cmd.op {
            DevOp::Read => {
                let (_, len) = clamp_range(cmd.offset, cmd.len, self.capacity);
                self.serve(now, ready, self.t_read, Spread::Read, len)
            }
            DevOp::Write => {
                let (_, len) = clamp_range(cmd.offset, cmd.len, self.capacity);
                let mut done = self.serve(now, ready, self.t_write, Spread::Write, len);
                if cmd.fua && self.write_cache {
                    done = self.serve(now, done, self.t_flush, Spread::Exact, 0);
                }
                done
            }
            DevOp::Flush if self.write_cache => {
                let start = if self.flush_drains {
                    ready.max(self.drained)
                } else {
                    ready
                };
                self.flush_done = start + self.t_flush;
                self.flush_done
            }
            DevOp::Flush => now,
            DevOp::Discard => self.serve(now, ready, self.t_write, Spread::Write, 0),
        };
        self.drained = self.drained.max(done);
        ctx.complete_at(done, cmd.tag);
    }

    pub(crate) fn on_wake(&mut self, _now: Ns, _ctx: &mut impl DevCtx) {}

    pub(crate) fn retire(&mut self, _now: Ns, tag: u32) {
        self.gate.on_retire(tag);
    }

    /// One command ready at `ready`: `fixed` (with its spread) on the
    /// server its turn deals it to, once that server's queue is empty,
    /// then `len` bytes over the shared channel at the read or the write
    /// speed. Returns its end.
    fn serve(&mut self, now: Ns, ready: Ns, fixed: Ns, spread: Spread, len: u64) -> Ns {
        let (u, free) = self.servers(spread).deal();
        let jitter = match spread {
            Spread::Read => self.read_spread.as_mut(),
            Spread::Write => self.write_spread.as_mut(),
            Spread::Exact => None,
        };
        let fixed = jitter.map_or(fixed, |j| j.scale(fixed));
        let media = ready.max(free) + fixed;
        let (rate, speed) = match spread {
            Spread::Read => (&mut self.read_rate, self.read_speed.as_mut()),
            Spread::Write | Spread::Exact => (&mut self.write_rate, self.write_speed.as_mut()),
        };
        let dur = if len == 0 {
            0
        } else {
            let exact = rate.ns(len);
            speed.map_or(exact, |s| jitter::times(exact, s.at(media)))
        };
        let end = self.link_busy.reserve(now, media, dur) + dur;
        self.servers(spread).free[u] = end;
        end
    }

    /// The servers a command of `spread` goes to: a write's (and a FUA
    /// write's flush) to the write servers if there are any.
    fn servers(&mut self, spread: Spread) -> &mut Servers {
        match (spread, self.writes.as_mut()) {
            (Spread::Write | Spread::Exact, Some(w)) => w,
            _ => &mut self.reads,
        }
    }
}
