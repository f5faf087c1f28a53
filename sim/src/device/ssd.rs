//! Flash SSD: "parallel units with analytic service times".
//!
//! Resources, each a `busy_until` timeline: the host link (one direction for SATA, one per
//! direction for PCIe), one bus per channel, and one die per unit (channels × LUNs).
//!
//! Reads: `now + cmd_overhead` → per stripe piece, tR on the unit owning the stripe
//! (static striping `unit = stripe_no mod units`) → transfer on that unit's channel →
//! host link. The completion time is computed at submission (one event per read).
//! A unit's page register keeps the stripe it read last until the unit reads another
//! or starts a program, so a read of the same stripe (the next 4 KiB of a sequential
//! stream) needs only its transfer, not another tR: sequential small reads are no
//! slower than random ones.
//!
//! With `service_sigma > 0` every tR, tPROG and write ack is its nominal time times a
//! seeded log-normal factor (module `jitter`).
//!
//! Writes: the data crosses the link into the write buffer as soon as the buffer has
//! room (FIFO among writes) and the write is acknowledged `ack_us` later. Buffered bytes
//! fill pages in log order; full pages are programmed on units in rotating order. Each
//! unit has at most one program committed at a time: the next starts when the previous
//! one ends (a `wake_at`), so a read arriving at a unit waits behind at most the program
//! in progress (read/write interference) instead of the whole backlog. Buffer space
//! returns when a program ends; writes that do not fit wait for it.
//!
//! FLUSH: the partial page is programmed now; the flush completes when every page
//! holding data buffered before it is programmed, plus `flush_fixed_us` if anything was
//! written since the previous flush (drives without power-loss protection commit their
//! mapping tables; calibrated on \[F11\]). With `plp` it costs `plp_flush_us`. A FUA write (or
//! any write with `write_cache = false`) completes once its own pages are programmed
//! (conservatively: once every page up to its last one is).
//!
//! GC (`gc = "stat"`): each unit counts free pages; below the threshold each
//! programmed page also costs `(waf - 1)` page migrations (tR + tPROG) and a
//! `1/pages_per_block` share of an erase on that unit.
//!
//! Not modelled: reads served from the write buffer (reads always go to flash), erase
//! suspend, SLC-cache folding.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::divisor::Divisor;
use super::jitter::Jitter;
use super::timeline::Timeline;
use super::{DevCmd, DevCtx, DevOp, Gate, GcMode, Precondition, SsdParams, clamp_range};
use crate::rng::Stream;
use crate::time::{Ns, Rate, US};

#[derive(Debug, Clone, Copy, Default)]
struct PageRec {
    /// Time the last byte of the page reached the buffer.
    ready: Ns,
    /// Bytes held (a page sealed by a flush may be partial).
    bytes: u32,
}

/// A write waiting for (the rest of) its buffer space.
#[derive(Debug, Clone, Copy)]
struct PendingWrite {
    tag: u32,
    remaining: u64,
    /// Must reach flash before completing (FUA or no volatile cache).
    durable: bool,
    /// Earliest start of its link transfer (submission + overhead).
    t_ready: Ns,
    /// Link command time not yet charged.
    first: bool,
}

/// A FLUSH or durable write waiting for pages to be programmed.
#[derive(Debug, Clone, Copy)]
struct Waiter {
    tag: u32,
    /// Completes once every page with index <= target is programmed.
    target: u64,
    not_before: Ns,
    /// Flush fixed cost to add (0 for writes and clean flushes).
    fixed: Ns,
}

/// Flash SSD model.
#[derive(Debug, Clone)]
pub struct SsdDev {
    gate: Gate,
    capacity: u64,
    units: Divisor,
    channels: Divisor,
    page: u64,
    stripe: Divisor,
    t_read: Ns,
    t_prog: Ns,
    overhead: Ns,
    ack: Ns,
    chan_rate: Rate,
    link_rate: Rate,
    link_cmd: Ns,
    duplex: bool,
    write_cache: bool,
    fua: bool,
    plp: bool,
    flush_fixed: Ns,
    plp_flush: Ns,
    // GC
    gc_on: bool,
    gc_threshold: u64,
    gc_extra: Ns,
    free_pages: Vec<u64>,
    // timelines
    unit_busy: Vec<Ns>,
    /// Per unit, the stripe its page register holds and when it is there.
    unit_reg: Vec<Option<(u64, Ns)>>,
    /// Seeded spread of tR, tPROG and acks (none: exact).
    jitter: Option<Jitter>,
    chan: Vec<Timeline>,
    link_rd: Timeline,
    link_wr: Timeline,
    // write buffer
    buf_cap: u64,
    buf_used: u64,
    open_fill: u64,
    open_ready: Ns,
    /// Per unit, its sealed pages not yet programmed, in order (the
    /// first is the one being programmed, if any). Kept per unit because
    /// units finish out of order: a unit that lags holds its pages while
    /// the others go far ahead in log order, so no ring of the buffer's
    /// page count covers the span.
    unit_pages: Vec<VecDeque<PageRec>>,
    /// Pages sealed so far (index of the next page).
    sealed: u64,
    unit_next: Vec<u64>,
    unit_prog: Vec<bool>,
    /// Programs in flight: (end, unit), one per unit at most.
    progs: BinaryHeap<Reverse<(Ns, u64)>>,
    pending: VecDeque<PendingWrite>,
    waiters: Vec<Waiter>,
    dirty: bool,
    flush_free: Ns,
}

fn mb(v: u64) -> u64 {
    v * 1_000_000
}

impl SsdDev {
    /// The model of `p`, its service-time spread (if any) drawn from `stream`.
    pub(crate) fn new(p: &SsdParams, stream: Stream) -> SsdDev {
        let units = u64::from(p.channels) * u64::from(p.luns_per_channel);
        let page = p.page_kib * 1024;
        let capacity = p.capacity_gb * 1_000_000_000;
        let buf_cap = p.buffer_mib << 20;
        let qd = p.queue_depth as usize;
        let ring = (buf_cap / page) as usize + qd + 4;
        let pages_per_unit = (u128::from(capacity) * u128::from(100 + p.over_provisioning_pct)
            / 100
            / u128::from(page)
            / u128::from(units)) as u64;
        let gc_threshold = pages_per_unit * u64::from(p.gc_threshold_pct) / 100;
        let start_free = match p.precondition {
            Precondition::Fob => pages_per_unit,
            Precondition::Steady => gc_threshold,
        };
        let migrate = (p.read_us + p.program_us) * US;
        let gc_extra = ((p.waf - 1.0) * migrate as f64).round() as Ns
            + p.erase_us * US / u64::from(p.pages_per_block);
        SsdDev {
            gate: Gate::new(p.queue_depth, p.flush_queued),
            capacity,
            units: Divisor::new(units),
            channels: Divisor::new(u64::from(p.channels)),
            page,
            stripe: Divisor::new(p.stripe_kib * 1024),
            t_read: p.read_us * US,
            t_prog: p.program_us * US,
            overhead: p.cmd_overhead_us * US,
            ack: p.ack_us * US,
            chan_rate: Rate::new(mb(p.channel_mb_s)),
            link_rate: Rate::new(mb(p.link_mb_s)),
            link_cmd: p.link_cmd_ns,
            duplex: p.link_full_duplex,
            write_cache: p.write_cache,
            fua: p.fua,
            plp: p.plp,
            flush_fixed: p.flush_fixed_us * US,
            plp_flush: p.plp_flush_us * US,
            gc_on: p.gc == GcMode::Stat,
            gc_threshold,
            gc_extra,
            free_pages: vec![start_free; units as usize],
            unit_busy: vec![0; units as usize],
            unit_reg: vec![None; units as usize],
            jitter: Jitter::new(p.service_sigma, stream),
            chan: vec![
                Timeline::with_capacity(2 * p.luns_per_channel as usize + 8);
                p.channels as usize
            ],
            link_rd: Timeline::with_capacity(qd.min(256) + 8),
            link_wr: Timeline::with_capacity(qd.min(256) + 8),
            buf_cap,
            buf_used: 0,
            open_fill: 0,
            open_ready: 0,
            unit_pages: (0..units)
                .map(|_| VecDeque::with_capacity(ring / units as usize + 4))
                .collect(),
            sealed: 0,
            unit_next: (0..units).collect(),
            unit_prog: vec![false; units as usize],
            progs: BinaryHeap::with_capacity(units as usize + 1),
            pending: VecDeque::with_capacity(qd + 1),
            waiters: Vec::with_capacity(qd + 1),
            dirty: false,
            flush_free: 0,
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
        self.gate.flush_queued
    }

    pub(crate) fn gate(&self) -> &Gate {
        &self.gate
    }

    /// Bytes currently held in the write buffer.
    pub fn buffer_used(&self) -> u64 {
        self.buf_used
    }

    pub(crate) fn submit(&mut self, now: Ns, cmd: DevCmd, ctx: &mut impl DevCtx) {
        self.settle(now, ctx);
        self.gate.on_submit(&cmd);
        let t1 = now + self.overhead;
        match cmd.op {
            DevOp::Read => {
                let (off, len) = clamp_range(cmd.offset, cmd.len, self.capacity);
                let done = self.read(now, t1, off, len);
                ctx.complete_at(done, cmd.tag);
            }
            DevOp::Discard => ctx.complete_at(t1, cmd.tag),
            DevOp::Write => {
                let (_, len) = clamp_range(cmd.offset, cmd.len, self.capacity);
                if len == 0 {
                    ctx.complete_at(t1 + self.link_cmd + self.ack, cmd.tag);
                    return;
                }
                let durable = (cmd.fua || !self.write_cache) && !self.plp;
                self.pending.push_back(PendingWrite {
                    tag: cmd.tag,
                    remaining: len,
                    durable,
                    t_ready: t1,
                    first: true,
                });
                self.admit(now, ctx);
            }
            DevOp::Flush => self.flush(now, t1, cmd.tag, ctx),
        }
    }

    pub(crate) fn on_wake(&mut self, now: Ns, ctx: &mut impl DevCtx) {
        self.settle(now, ctx);
    }

    pub(crate) fn retire(&mut self, _now: Ns, tag: u32) {
        self.gate.on_retire(tag);
    }

    /// `t` with the device's spread applied (itself without one).
    #[inline]
    fn spread(&mut self, t: Ns) -> Ns {
        match &mut self.jitter {
            Some(j) => j.scale(t),
            None => t,
        }
    }

    /// Read path: returns the completion time.
    #[inline]
    fn read(&mut self, now: Ns, t1: Ns, off: u64, len: u64) -> Ns {
        if len == 0 {
            return t1 + self.link_cmd;
        }
        let s0 = self.stripe.div(off);
        let s1 = self.stripe.div(off + len - 1);
        let count = s1 - s0 + 1;
        let units = self.units.get();
        let stripe = self.stripe.get();
        let n = count.min(units);
        let mut first_ready = Ns::MAX;
        let mut last_ready = 0;
        for i in 0..n {
            let s = s0 + i;
            let u = self.units.rem(s);
            let c = self.channels.rem(u) as usize;
            let u = u as usize;
            // Stripes of this command landing on unit u.
            let cnt = self.units.div_ceil(count - i);
            let bytes = if count <= units {
                let a = off.max(s * stripe);
                let b = (off + len).min((s + 1) * stripe);
                b - a
            } else {
                (u128::from(len) * u128::from(cnt) / u128::from(count)) as u64
            };
            let last = s + (cnt - 1) * units;
            let media = match self.unit_reg[u] {
                // One stripe, already in the register: no tR.
                Some((held, ready)) if cnt == 1 && held == s => t1.max(ready),
                _ => {
                    let start = t1.max(self.unit_busy[u]);
                    let t_read = self.spread(cnt * self.t_read);
                    let media = start + t_read;
                    self.unit_reg[u] = Some((last, media));
                    media
                }
            };
            let dur = self.chan_rate.ns(bytes);
            let x1 = self.chan[c].reserve(now, media, dur) + dur;
            self.unit_busy[u] = self.unit_busy[u].max(x1);
            first_ready = first_ready.min(x1);
            last_ready = last_ready.max(x1);
        }
        let dur = self.link_cmd + self.link_rate.ns(len);
        let l0 = self.link_rd.reserve(now, first_ready, dur);
        let tail = self.link_rate.ns(len.min(self.stripe.get()));
        (l0 + dur).max(last_ready + tail)
    }

    fn flush(&mut self, now: Ns, t1: Ns, tag: u32, ctx: &mut impl DevCtx) {
        if !self.write_cache {
            ctx.complete_at(t1, tag);
            return;
        }
        let dirty = std::mem::replace(&mut self.dirty, false);
        if self.plp {
            ctx.complete_at(t1 + if dirty { self.plp_flush } else { 0 }, tag);
            return;
        }
        let fixed = if dirty { self.flush_fixed } else { 0 };
        self.seal_open(now, ctx);
        if self.done_low() >= self.sealed {
            let end = self.flush_end(t1, fixed);
            ctx.complete_at(end, tag);
        } else {
            self.waiters.push(Waiter {
                tag,
                target: self.sealed - 1,
                not_before: t1,
                fixed,
            });
        }
    }

    fn flush_end(&mut self, start: Ns, fixed: Ns) -> Ns {
        if fixed == 0 {
            return start;
        }
        let s = start.max(self.flush_free);
        self.flush_free = s + fixed;
        self.flush_free
    }

    /// Processes every program that ended by `now`, in time order (a check,
    /// inlined, when none has).
    #[inline]
    fn settle(&mut self, now: Ns, ctx: &mut impl DevCtx) {
        if self.progs.peek().is_some_and(|&Reverse((t, _))| t <= now) {
            self.end_programs(now, ctx);
        }
    }

    fn end_programs(&mut self, now: Ns, ctx: &mut impl DevCtx) {
        while let Some(&Reverse((t, u))) = self.progs.peek() {
            if t > now {
                break;
            }
            self.progs.pop();
            let rec = self.unit_pages[u as usize]
                .pop_front()
                .expect("a program in flight has its page");
            self.buf_used -= u64::from(rec.bytes);
            self.unit_prog[u as usize] = false;
            if self.unit_next[u as usize] < self.sealed {
                self.start_program(u as usize, t, ctx);
            }
            self.admit(t, ctx);
            self.check_waiters(t, ctx);
        }
    }

    /// Move waiting writes into the buffer, FIFO, as far as space allows.
    fn admit(&mut self, now: Ns, ctx: &mut impl DevCtx) {
        while let Some(&w) = self.pending.front() {
            let free = self.buf_cap - self.buf_used;
            let piece = w.remaining.min(free);
            if piece == 0 || (piece < w.remaining && piece < self.page) {
                break;
            }
            let t0 = now.max(w.t_ready);
            let link = if self.duplex {
                &mut self.link_wr
            } else {
                &mut self.link_rd
            };
            let dur = self.link_rate.ns(piece) + if w.first { self.link_cmd } else { 0 };
            let end = link.reserve(now, t0, dur) + dur;
            self.buf_used += piece;
            self.dirty = true;
            self.feed(piece, end, now, ctx);
            let remaining = w.remaining - piece;
            if remaining > 0 {
                if let Some(front) = self.pending.front_mut() {
                    front.remaining = remaining;
                    front.first = false;
                }
                continue;
            }
            self.pending.pop_front();
            let ack = end + self.spread(self.ack);
            if w.durable {
                self.seal_open(now, ctx);
                self.waiters.push(Waiter {
                    tag: w.tag,
                    target: self.sealed - 1,
                    not_before: ack,
                    fixed: 0,
                });
            } else {
                ctx.complete_at(ack, w.tag);
            }
        }
    }

    /// Lowest page index not yet programmed (`sealed` when all are): over
    /// the units, the page being programmed, or else the next one (a unit
    /// that is idle has none sealed).
    fn done_low(&self) -> u64 {
        let n = self.units.get();
        self.unit_next
            .iter()
            .zip(&self.unit_prog)
            .map(|(&next, &busy)| if busy { next - n } else { next })
            .min()
            .map_or(self.sealed, |low| low.min(self.sealed))
    }

    fn check_waiters(&mut self, t: Ns, ctx: &mut impl DevCtx) {
        if self.waiters.is_empty() {
            return;
        }
        let done_low = self.done_low();
        let mut i = 0;
        while i < self.waiters.len() {
            let w = self.waiters[i];
            if done_low > w.target {
                self.waiters.remove(i);
                let start = t.max(w.not_before);
                let end = self.flush_end(start, w.fixed);
                ctx.complete_at(end, w.tag);
            } else {
                i += 1;
            }
        }
    }

    /// Buffered bytes that arrived by `ready` fill the open page; full pages are sealed.
    fn feed(&mut self, mut bytes: u64, ready: Ns, now: Ns, ctx: &mut impl DevCtx) {
        while bytes > 0 {
            let take = bytes.min(self.page - self.open_fill);
            self.open_fill += take;
            self.open_ready = self.open_ready.max(ready);
            bytes -= take;
            if self.open_fill == self.page {
                self.seal_open(now, ctx);
            }
        }
    }

    fn seal_open(&mut self, now: Ns, ctx: &mut impl DevCtx) {
        if self.open_fill == 0 {
            return;
        }
        let k = self.sealed;
        let u = self.units.rem(k) as usize;
        self.unit_pages[u].push_back(PageRec {
            ready: self.open_ready,
            bytes: self.open_fill as u32,
        });
        self.sealed += 1;
        self.open_fill = 0;
        self.open_ready = 0;
        if !self.unit_prog[u] {
            self.start_program(u, now, ctx);
        }
    }

    /// Commit the next page of unit `u`: channel transfer, then tPROG (+ GC share).
    fn start_program(&mut self, u: usize, t_min: Ns, ctx: &mut impl DevCtx) {
        let k = self.unit_next[u];
        debug_assert!(k < self.sealed);
        self.unit_next[u] += self.units.get();
        let rec = *self.unit_pages[u]
            .front()
            .expect("a unit starts its oldest sealed page");
        debug_assert_eq!(
            self.unit_pages[u].len() as u64,
            self.sealed.saturating_sub(k).div_ceil(self.units.get()),
            "a unit's queue holds its sealed pages from its next one on"
        );
        let c = self.channels.rem(u as u64) as usize;
        let dur = self.chan_rate.ns(u64::from(rec.bytes));
        let x1 =
            self.chan[c].reserve(t_min, t_min.max(rec.ready).max(self.unit_busy[u]), dur) + dur;
        let extra = if self.gc_on {
            if self.free_pages[u] > self.gc_threshold {
                self.free_pages[u] -= 1;
                0
            } else {
                self.gc_extra
            }
        } else {
            0
        };
        let done = x1 + self.spread(self.t_prog) + extra;
        self.unit_busy[u] = done;
        // Programming overwrites the page register.
        self.unit_reg[u] = None;
        self.unit_prog[u] = true;
        self.progs.push(Reverse((done, u as u64)));
        ctx.wake_at(done);
    }
}
