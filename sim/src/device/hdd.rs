//! Rotating disk.
//!
//! Service of a media access = command overhead + seek(distance) + rotational wait +
//! transfer at the zone's rate. Layout: `zones` zones of equal cylinder count whose
//! track size falls linearly from the outer to the inner rate; an offset maps to
//! (cylinder, angle). Seek: DiskSim's 3-point curve `seek(d) = c + a(d-1) + b·sqrt(d-1)`,
//! with `c` the single-track time and `a`, `b` solved so that seek(N/3) is the average
//! and seek(N-1) the full-stroke time \[S20\]; reads and writes have separate curves.
//! Rotation is deterministic: the platter angle at time `t` is `t mod T_rev`, so
//! back-to-back contiguous accesses stream without losing a revolution and no RNG is
//! needed. Track and cylinder switches inside a transfer are free (skew hides them).
//!
//! NCQ: whenever the actuator is free, the queued media command with the shortest
//! positioning time (seek + rotational wait) goes next, except that anything older
//! than `max_age` goes first (oldest first). `wake_at` marks each actuator-free time.
//!
//! Write cache: a write completes after its link transfer into the cache while the
//! cache has room; otherwise it waits (FIFO) until destaging frees room. Cached extents
//! are destaged in positioning order (among the `destage_window` oldest) when no read
//! is queued, or regardless of reads while a FLUSH / FUA write waits or a write waits
//! for room; the oldest extent is forced after being passed over `4 × destage_window`
//! times (a cached write has no host waiting on its age, so `max_age` does not apply). FLUSH (and a FUA write) completes once everything cached at its submission
//! is on media. Contiguous cached writes merge into one extent.
//!
//! Read-ahead: after a media read the head keeps reading ahead (up to one segment) while
//! the actuator is idle; a read inside data already read ahead is a cache hit (link
//! transfer only), a read just ahead of the stream completes when the stream reaches
//! its end, so sequential small reads do not lose a revolution each. `ra_segments`
//! recently read ranges are kept.
//!
//! Not modelled: reads served from dirty cached data (they go to media), defects,
//! thermal recalibration.

use super::{DevCmd, DevCtx, DevOp, DeviceError, Gate, HddParams, clamp_range};
use crate::time::{Ns, SEC, US, transfer_ns};

#[derive(Debug, Clone, Copy)]
struct Zone {
    byte_start: u64,
    cyl_start: u64,
    track_bytes: u64,
}

#[derive(Debug, Clone, Copy)]
struct Curve {
    c: f64,
    a: f64,
    b: f64,
}

impl Curve {
    /// Solve c + a·x + b·sqrt(x) through (x1, avg) and (x2, full), x = d - 1.
    fn solve(track: Ns, avg: Ns, full: Ns, n_cyl: u64, key: &str) -> Result<Curve, DeviceError> {
        let c = track as f64;
        let x1 = (n_cyl / 3).saturating_sub(1) as f64;
        let x2 = n_cyl.saturating_sub(2) as f64;
        let (s1, s2) = (x1.sqrt(), x2.sqrt());
        let det = x1 * s2 - x2 * s1;
        let (y1, y2) = (avg as f64 - c, full as f64 - c);
        if x1 < 1.0 || det.abs() < 1e-9 {
            return Err(DeviceError::Invalid {
                key: key.to_string(),
                msg: "too few cylinders to fit a seek curve".into(),
            });
        }
        let a = (y1 * s2 - y2 * s1) / det;
        let b = (x1 * y2 - x2 * y1) / det;
        if !(a >= 0.0 && b >= 0.0 && a.is_finite() && b.is_finite()) {
            return Err(DeviceError::Invalid {
                key: key.to_string(),
                msg: format!(
                    "no monotone seek curve through single-track/average/full-stroke \
                     (a = {a:.3e}, b = {b:.3e}); the average must lie closer to \
                     single-track than a straight line would put it"
                ),
            });
        }
        Ok(Curve { c, a, b })
    }

    #[inline]
    fn seek(&self, d: u64) -> Ns {
        if d == 0 {
            return 0;
        }
        let x = (d - 1) as f64;
        (self.c + self.a * x + self.b * x.sqrt()).round() as Ns
    }
}

/// Disk geometry and seek curves (pure function of the parameters).
#[derive(Debug, Clone)]
struct Geometry {
    zones: Vec<Zone>,
    heads: u64,
    n_cyl: u64,
    rev: Ns,
    read: Curve,
    write: Curve,
}

impl Geometry {
    fn new(p: &HddParams) -> Result<Geometry, DeviceError> {
        let capacity = p.capacity_gb * 1_000_000_000;
        let rev = 60 * SEC / u64::from(p.rpm);
        let nz = u64::from(p.zones);
        let heads = u64::from(p.heads);
        let mut tracks = Vec::with_capacity(p.zones as usize);
        for z in 0..nz {
            let rate = if nz == 1 {
                p.outer_mb_s
            } else {
                p.outer_mb_s - (p.outer_mb_s - p.inner_mb_s) * z / (nz - 1)
            } * 1_000_000;
            let bytes = (u128::from(rate) * u128::from(rev) / u128::from(SEC)) as u64;
            tracks.push((bytes / 512 * 512).max(512));
        }
        let per_cyl_set: u64 = tracks.iter().map(|t| t * heads).sum();
        let cyl_per_zone = capacity.div_ceil(per_cyl_set).max(1);
        let mut zones = Vec::with_capacity(tracks.len());
        let (mut byte_start, mut cyl_start) = (0, 0);
        for t in tracks {
            zones.push(Zone {
                byte_start,
                cyl_start,
                track_bytes: t,
            });
            byte_start += cyl_per_zone * heads * t;
            cyl_start += cyl_per_zone;
        }
        let n_cyl = cyl_start;
        let read = Curve::solve(
            p.seek_track_us * US,
            p.seek_avg_us * US,
            p.seek_full_us * US,
            n_cyl,
            "hdd.seek_avg_us",
        )?;
        let write = Curve::solve(
            p.seek_track_write_us * US,
            p.seek_avg_write_us * US,
            p.seek_full_us * US,
            n_cyl,
            "hdd.seek_avg_write_us",
        )?;
        Ok(Geometry {
            zones,
            heads,
            n_cyl,
            rev,
            read,
            write,
        })
    }

    /// (cylinder, angle in ns from the index, track bytes) of a byte offset.
    #[inline]
    fn locate(&self, off: u64) -> (u64, Ns, u64) {
        let zi = self.zones.partition_point(|z| z.byte_start <= off) - 1;
        let z = self.zones[zi];
        let rel = off - z.byte_start;
        let cyl_bytes = z.track_bytes * self.heads;
        let cyl = z.cyl_start + rel / cyl_bytes;
        let in_track = rel % cyl_bytes % z.track_bytes;
        let angle = (u128::from(in_track) * u128::from(self.rev) / u128::from(z.track_bytes)) as Ns;
        (cyl, angle, z.track_bytes)
    }

    #[inline]
    fn xfer(&self, len: u64, track_bytes: u64) -> Ns {
        (u128::from(len) * u128::from(self.rev)).div_ceil(u128::from(track_bytes)) as Ns
    }
}

/// Check that the seek curves of `p` can be fitted (used by config validation).
pub(crate) fn check_params(p: &HddParams) -> Result<(), DeviceError> {
    Geometry::new(p).map(|_| ())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    Free,
    /// Needs the actuator (read miss or write-through).
    Media,
    /// Write waiting for cache room.
    WaitCache,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    state: SlotState,
    tag: u32,
    op: DevOp,
    off: u64,
    len: u64,
    fua: bool,
    submit: Ns,
    seq: u64,
}

const FREE_SLOT: Slot = Slot {
    state: SlotState::Free,
    tag: 0,
    op: DevOp::Read,
    off: 0,
    len: 0,
    fua: false,
    submit: 0,
    seq: 0,
};

#[derive(Debug, Clone, Copy, Default)]
struct Extent {
    off: u64,
    len: u64,
    first_seq: u64,
    ready: Ns,
    live: bool,
}

#[derive(Debug, Clone, Copy)]
struct Waiter {
    tag: u32,
    target: u64,
    not_before: Ns,
}

#[derive(Debug, Clone, Copy)]
struct Stream {
    seg: usize,
    base_pos: u64,
    base_t: Ns,
    limit: u64,
    track_bytes: u64,
}

/// Contiguous cached writes merge up to this size, so one destage never holds the
/// actuator for long *(assumed)*; back-to-back contiguous extents still stream.
const MAX_EXTENT: u64 = 1 << 20;

/// The oldest cached extent is destaged at the latest after being passed over this many
/// times the destage window *(assumed: bounds its wait without giving up reordering)*.
const HEAD_SKIP_LIMIT: u64 = 4;

#[derive(Debug, Clone, Copy)]
enum Choice {
    Slot(usize),
    Extent(usize),
}

/// Rotating-disk model.
#[derive(Debug, Clone)]
pub struct HddDev {
    gate: Gate,
    geo: Geometry,
    capacity: u64,
    overhead: Ns,
    link_bps: u64,
    write_cache: bool,
    fua: bool,
    max_age: Ns,
    window: usize,
    seg_bytes: u64,
    // commands
    slots: Vec<Slot>,
    cmd_seq: u64,
    // actuator
    act_busy: bool,
    act_until: Ns,
    act_destage: Option<(u64, u64)>,
    head_cyl: u64,
    head_end: u64,
    head_end_t: Ns,
    link_free: Ns,
    // write cache
    cache_cap: u64,
    cache_used: u64,
    ring: Vec<Extent>,
    r_head: usize,
    r_count: usize,
    live: usize,
    /// Destages since the oldest extent was last chosen.
    head_skips: u64,
    wseq: u64,
    waiters: Vec<Waiter>,
    // read-ahead
    segs: Vec<(u64, u64)>,
    seg_next: usize,
    stream: Option<Stream>,
}

impl HddDev {
    pub(crate) fn new(p: &HddParams) -> Result<HddDev, DeviceError> {
        let geo = Geometry::new(p)?;
        let qd = p.queue_depth as usize;
        let cache_cap = if p.write_cache { p.cache_mib << 20 } else { 0 };
        let ring_len = ((cache_cap / 4096) as usize * 2).max(64);
        Ok(HddDev {
            gate: Gate::new(p.queue_depth, p.flush_queued),
            geo,
            capacity: p.capacity_gb * 1_000_000_000,
            overhead: p.cmd_overhead_us * US,
            link_bps: p.link_mb_s * 1_000_000,
            write_cache: p.write_cache,
            fua: p.fua,
            max_age: p.max_age_ms * 1_000_000,
            window: p.destage_window as usize,
            seg_bytes: p.ra_segment_kib * 1024,
            slots: vec![FREE_SLOT; qd],
            cmd_seq: 0,
            act_busy: false,
            act_until: 0,
            act_destage: None,
            head_cyl: 0,
            head_end: 0,
            head_end_t: 0,
            link_free: 0,
            cache_cap,
            cache_used: 0,
            ring: vec![Extent::default(); if p.write_cache { ring_len } else { 1 }],
            r_head: 0,
            r_count: 0,
            live: 0,
            head_skips: 0,
            wseq: 0,
            waiters: Vec::with_capacity(qd + 1),
            segs: vec![(0, 0); p.ra_segments as usize],
            seg_next: 0,
            stream: None,
        })
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

    /// Bytes held in the write cache (including the extent being destaged).
    pub fn cache_used(&self) -> u64 {
        self.cache_used
    }

    /// Number of cylinders of the layout.
    pub fn cylinders(&self) -> u64 {
        self.geo.n_cyl
    }

    /// Media rate (bytes/s) at a byte offset.
    pub fn media_rate(&self, off: u64) -> u64 {
        let (_, _, t) = self.geo.locate(off.min(self.capacity - 1));
        (u128::from(t) * u128::from(SEC) / u128::from(self.geo.rev)) as u64
    }

    pub(crate) fn submit(&mut self, now: Ns, cmd: DevCmd, ctx: &mut impl DevCtx) {
        self.settle(now, ctx);
        self.gate.on_submit(&cmd);
        let (off, len) = clamp_range(cmd.offset, cmd.len, self.capacity);
        match cmd.op {
            DevOp::Discard => ctx.complete_at(now + self.overhead, cmd.tag),
            DevOp::Flush => {
                if !self.write_cache || (self.live == 0 && self.act_destage.is_none()) {
                    ctx.complete_at(now + self.overhead, cmd.tag);
                } else {
                    self.waiters.push(Waiter {
                        tag: cmd.tag,
                        target: self.wseq,
                        not_before: now + self.overhead,
                    });
                }
            }
            DevOp::Read => {
                if self.seg_hit(off, len, now) {
                    self.complete_from_cache(now, len, cmd.tag, ctx);
                } else {
                    self.enqueue(now, cmd, off, len, SlotState::Media, ctx);
                }
            }
            DevOp::Write => {
                self.invalidate(off, len, now);
                if !self.write_cache || len > self.cache_cap {
                    self.enqueue(now, cmd, off, len, SlotState::Media, ctx);
                } else if !self.any_waiting_for_cache() && self.can_insert(off, len) {
                    let w = Slot {
                        state: SlotState::WaitCache,
                        tag: cmd.tag,
                        op: cmd.op,
                        off,
                        len,
                        fua: cmd.fua,
                        submit: now,
                        seq: 0,
                    };
                    self.insert(now + self.overhead, w, ctx);
                } else {
                    self.enqueue(now, cmd, off, len, SlotState::WaitCache, ctx);
                }
            }
        }
        self.kick(now, ctx);
    }

    pub(crate) fn on_wake(&mut self, now: Ns, ctx: &mut impl DevCtx) {
        self.settle(now, ctx);
        self.kick(now, ctx);
    }

    pub(crate) fn retire(&mut self, _now: Ns, tag: u32) {
        self.gate.on_retire(tag);
    }

    fn enqueue(
        &mut self,
        now: Ns,
        cmd: DevCmd,
        off: u64,
        len: u64,
        state: SlotState,
        ctx: &mut impl DevCtx,
    ) {
        let Some(i) = self.slots.iter().position(|s| s.state == SlotState::Free) else {
            // More commands than tags: a host bug. Complete it rather than panic.
            debug_assert!(false, "hdd: no free slot for {cmd:?}");
            ctx.complete_at(now + self.overhead, cmd.tag);
            return;
        };
        self.cmd_seq += 1;
        self.slots[i] = Slot {
            state,
            tag: cmd.tag,
            op: cmd.op,
            off,
            len,
            fua: cmd.fua,
            submit: now,
            seq: self.cmd_seq,
        };
    }

    fn any_waiting_for_cache(&self) -> bool {
        self.slots.iter().any(|s| s.state == SlotState::WaitCache)
    }

    // ----- read-ahead segments -----

    fn stream_pos(&self, st: &Stream, t: Ns) -> u64 {
        if t <= st.base_t {
            return st.base_pos;
        }
        let ahead = (u128::from(t - st.base_t) * u128::from(st.track_bytes)
            / u128::from(self.geo.rev)) as u64;
        (st.base_pos + ahead).min(st.limit)
    }

    fn stream_reach(&self, st: &Stream, x: u64) -> Ns {
        if x <= st.base_pos {
            return st.base_t;
        }
        st.base_t + self.geo.xfer(x - st.base_pos, st.track_bytes)
    }

    /// Current extent of segment `i` (the stream's grows while it reads ahead).
    fn seg_range(&self, i: usize, t: Ns) -> (u64, u64) {
        let (s, mut e) = self.segs[i];
        if let Some(st) = &self.stream
            && st.seg == i
        {
            e = self.stream_pos(st, t);
        }
        (s.max(e.saturating_sub(self.seg_bytes)), e)
    }

    fn seg_hit(&self, off: u64, len: u64, t: Ns) -> bool {
        (0..self.segs.len()).any(|i| {
            let (s, e) = self.seg_range(i, t);
            e > s && off >= s && off + len <= e
        })
    }

    fn complete_from_cache(&mut self, now: Ns, len: u64, tag: u32, ctx: &mut impl DevCtx) {
        let start = (now + self.overhead).max(self.link_free);
        let done = start + transfer_ns(len, self.link_bps);
        self.link_free = done;
        ctx.complete_at(done, tag);
    }

    /// Stop the read-ahead stream at time `t`; the head is where it got to.
    fn freeze(&mut self, t: Ns) {
        if let Some(st) = self.stream.take() {
            let p = self.stream_pos(&st, t);
            let (s, _) = self.segs[st.seg];
            self.segs[st.seg] = (s.max(p.saturating_sub(self.seg_bytes)), p);
            let (cyl, _, _) = self.geo.locate(p.min(self.capacity - 1));
            self.head_cyl = cyl;
            self.head_end = p;
            self.head_end_t = t;
        }
    }

    fn invalidate(&mut self, off: u64, len: u64, now: Ns) {
        let end = off + len;
        for i in 0..self.segs.len() {
            let (s, e) = self.seg_range(i, now);
            if e > s && off < e && s < end {
                if self.stream.is_some_and(|st| st.seg == i) {
                    self.freeze(now);
                }
                self.segs[i] = (0, 0);
            }
        }
    }

    // ----- write cache -----

    fn tail_index(&self) -> Option<usize> {
        if self.r_count == 0 {
            None
        } else {
            Some((self.r_head + self.r_count - 1) % self.ring.len())
        }
    }

    fn mergeable(&self, off: u64, len: u64) -> Option<usize> {
        let i = self.tail_index()?;
        let e = &self.ring[i];
        (e.live && e.off + e.len == off && e.len + len <= MAX_EXTENT).then_some(i)
    }

    fn can_insert(&self, off: u64, len: u64) -> bool {
        self.cache_used + len <= self.cache_cap
            && (self.r_count < self.ring.len() || self.mergeable(off, len).is_some())
    }

    /// Put write `w` into the cache: link transfer from `t_ready` on, then completion (or
    /// a FUA wait).
    fn insert(&mut self, t_ready: Ns, w: Slot, ctx: &mut impl DevCtx) {
        let Slot {
            tag, off, len, fua, ..
        } = w;
        let start = t_ready.max(self.link_free);
        let done = start + transfer_ns(len, self.link_bps);
        self.link_free = done;
        self.cache_used += len;
        self.wseq += 1;
        if let Some(i) = self.mergeable(off, len) {
            let e = &mut self.ring[i];
            e.len += len;
            e.ready = e.ready.max(done);
        } else {
            let i = (self.r_head + self.r_count) % self.ring.len();
            self.ring[i] = Extent {
                off,
                len,
                first_seq: self.wseq,
                ready: done,
                live: true,
            };
            self.r_count += 1;
            self.live += 1;
        }
        if fua {
            self.waiters.push(Waiter {
                tag,
                target: self.wseq,
                not_before: done,
            });
        } else {
            ctx.complete_at(done, tag);
        }
    }

    fn advance_head(&mut self) {
        while self.r_count > 0 && !self.ring[self.r_head].live {
            self.r_head = (self.r_head + 1) % self.ring.len();
            self.r_count -= 1;
        }
    }

    /// Lowest write sequence number not yet on media.
    fn min_unstable_seq(&self) -> u64 {
        let mut m = u64::MAX;
        if self.live > 0 {
            m = self.ring[self.r_head].first_seq;
        }
        if let Some((_, s)) = self.act_destage {
            m = m.min(s);
        }
        m
    }

    fn check_waiters(&mut self, t: Ns, ctx: &mut impl DevCtx) {
        let stable_below = self.min_unstable_seq();
        let mut i = 0;
        while i < self.waiters.len() {
            let w = self.waiters[i];
            if w.target < stable_below {
                self.waiters.remove(i);
                ctx.complete_at(t.max(w.not_before), w.tag);
            } else {
                i += 1;
            }
        }
    }

    /// Writes waiting for room enter the cache in submission order.
    fn admit_waiting(&mut self, t: Ns, ctx: &mut impl DevCtx) {
        loop {
            let mut best: Option<usize> = None;
            for (i, s) in self.slots.iter().enumerate() {
                if s.state == SlotState::WaitCache && best.is_none_or(|b| s.seq < self.slots[b].seq)
                {
                    best = Some(i);
                }
            }
            let Some(i) = best else { return };
            let s = self.slots[i];
            if !self.can_insert(s.off, s.len) {
                return;
            }
            self.slots[i] = FREE_SLOT;
            self.insert(t.max(s.submit + self.overhead), s, ctx);
        }
    }

    // ----- actuator -----

    /// Finish the actuator's operation if it ended by `now`.
    fn settle(&mut self, now: Ns, ctx: &mut impl DevCtx) {
        if !self.act_busy || self.act_until > now {
            return;
        }
        let t = self.act_until;
        self.act_busy = false;
        if let Some((len, _)) = self.act_destage.take() {
            self.cache_used -= len;
            self.check_waiters(t, ctx);
            self.admit_waiting(t, ctx);
        }
    }

    /// Positioning of an access: (start of data transfer, end of transfer).
    fn plan(&self, now: Ns, eligible: Ns, off: u64, len: u64, write: bool) -> (Ns, Ns) {
        if !write && let Some(st) = &self.stream {
            let (s, _) = self.seg_range(st.seg, now);
            if off >= s && off <= st.limit {
                let begin = eligible.max(self.stream_reach(st, off));
                let done = eligible.max(self.stream_reach(st, off + len));
                return (begin, done);
            }
        }
        let t = now.max(eligible);
        let (cyl, angle, track) = self.geo.locate(off);
        // While reading ahead the head follows the stream.
        let (head_cyl, head_end, head_end_t) = match &self.stream {
            Some(st) => {
                let p = self.stream_pos(st, now);
                (self.geo.locate(p.min(self.capacity - 1)).0, p, now)
            }
            None => (self.head_cyl, self.head_end, self.head_end_t),
        };
        let begin = if off == head_end && t == head_end_t {
            t
        } else {
            let d = cyl.abs_diff(head_cyl);
            let curve = if write {
                &self.geo.write
            } else {
                &self.geo.read
            };
            let arrive = t + curve.seek(d);
            let rev = self.geo.rev;
            let mut rot = (angle + rev - arrive % rev) % rev;
            if rev - rot <= 16 {
                rot = 0;
            }
            arrive + rot
        };
        (begin, begin + self.geo.xfer(len, track))
    }

    /// When the actuator is free, start the next media operation.
    fn kick(&mut self, now: Ns, ctx: &mut impl DevCtx) {
        if self.act_busy {
            return;
        }
        // Queued reads that meanwhile became read-ahead hits.
        for i in 0..self.slots.len() {
            let s = self.slots[i];
            if s.state == SlotState::Media && s.op == DevOp::Read && self.seg_hit(s.off, s.len, now)
            {
                self.slots[i] = FREE_SLOT;
                self.complete_from_cache(now.max(s.submit), s.len, s.tag, ctx);
            }
        }
        self.advance_head();
        let has_read = self
            .slots
            .iter()
            .any(|s| s.state == SlotState::Media && s.op == DevOp::Read);
        let destage_ok = self.live > 0
            && (!has_read || !self.waiters.is_empty() || self.any_waiting_for_cache());

        // A host command older than max_age goes first, oldest first. Destaging has no
        // host waiting on its age; instead the oldest cached extent is forced once it has
        // been passed over `HEAD_SKIP_LIMIT × destage_window` times.
        let mut oldest: Option<(Ns, u64, usize)> = None;
        for (i, s) in self.slots.iter().enumerate() {
            if s.state == SlotState::Media
                && oldest.is_none_or(|(t, q, _)| (s.submit, s.seq) < (t, q))
            {
                oldest = Some((s.submit, s.seq, i));
            }
        }
        let forced = match oldest {
            Some((t, _, i)) if now.saturating_sub(t) >= self.max_age => Some(Choice::Slot(i)),
            _ if destage_ok && self.head_skips >= HEAD_SKIP_LIMIT * self.window as u64 => {
                Some(Choice::Extent(self.r_head))
            }
            _ => None,
        };
        let choice = match forced {
            Some(c) => c,
            None if oldest.is_none() && !destage_ok => return,
            None => {
                let mut best: Option<(Ns, u64, Choice)> = None;
                for (i, s) in self.slots.iter().enumerate() {
                    if s.state != SlotState::Media {
                        continue;
                    }
                    let (begin, _) = self.plan(
                        now,
                        s.submit + self.overhead,
                        s.off,
                        s.len,
                        s.op == DevOp::Write,
                    );
                    let key = (begin, s.seq);
                    if best.is_none_or(|(b, q, _)| key < (b, q)) {
                        best = Some((begin, s.seq, Choice::Slot(i)));
                    }
                }
                if destage_ok {
                    let mut seen = 0;
                    let mut idx = self.r_head;
                    for _ in 0..self.r_count {
                        let e = self.ring[idx];
                        if e.live {
                            let (begin, _) = self.plan(now, e.ready, e.off, e.len, true);
                            // Host commands win ties against destaging.
                            let key = (begin, u64::MAX - (self.r_count - seen) as u64);
                            if best.is_none_or(|(b, q, _)| key < (b, q)) {
                                best = Some((key.0, key.1, Choice::Extent(idx)));
                            }
                            seen += 1;
                            if seen >= self.window {
                                break;
                            }
                        }
                        idx = (idx + 1) % self.ring.len();
                    }
                }
                match best {
                    Some((_, _, c)) => c,
                    None => return,
                }
            }
        };
        self.dispatch(now, choice, ctx);
    }

    fn dispatch(&mut self, now: Ns, choice: Choice, ctx: &mut impl DevCtx) {
        let (off, len, write, eligible) = match choice {
            Choice::Slot(i) => {
                let s = self.slots[i];
                (s.off, s.len, s.op == DevOp::Write, s.submit + self.overhead)
            }
            Choice::Extent(i) => {
                let e = self.ring[i];
                (e.off, e.len, true, e.ready)
            }
        };
        let in_stream = !write
            && self.stream.is_some_and(|st| {
                let (s, _) = self.seg_range(st.seg, now);
                off >= s && off <= st.limit
            });
        let (_, done) = self.plan(now, eligible, off, len, write);
        if !in_stream {
            self.freeze(now);
        }
        match choice {
            Choice::Slot(i) => {
                let s = self.slots[i];
                self.slots[i] = FREE_SLOT;
                ctx.complete_at(done, s.tag);
                if write {
                    self.set_head(off, len, done);
                } else if in_stream {
                    if let Some(st) = &mut self.stream {
                        st.limit = st.limit.max(off + len + self.seg_bytes);
                    }
                } else {
                    // New read-ahead stream from the end of this read.
                    self.set_head(off, len, done);
                    let seg = self.seg_next;
                    self.seg_next = (self.seg_next + 1) % self.segs.len();
                    self.segs[seg] = (off, off + len);
                    let (_, _, track) = self.geo.locate(off);
                    if off + len < self.capacity {
                        self.stream = Some(Stream {
                            seg,
                            base_pos: off + len,
                            base_t: done,
                            limit: (off + len + self.seg_bytes).min(self.capacity),
                            track_bytes: track,
                        });
                    }
                }
            }
            Choice::Extent(i) => {
                let e = self.ring[i];
                if i == self.r_head {
                    self.head_skips = 0;
                } else {
                    self.head_skips += 1;
                }
                self.ring[i].live = false;
                self.live -= 1;
                self.advance_head();
                self.act_destage = Some((e.len, e.first_seq));
                self.set_head(off, len, done);
            }
        }
        self.act_busy = true;
        self.act_until = done;
        ctx.wake_at(done);
    }

    fn set_head(&mut self, off: u64, len: u64, done: Ns) {
        let last = (off + len).saturating_sub(1).min(self.capacity - 1);
        let (cyl, _, _) = self.geo.locate(last);
        self.head_cyl = cyl;
        self.head_end = off + len;
        self.head_end_t = done;
    }
}
