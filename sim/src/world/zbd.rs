//! fio's `zonemode=zbd` on a device simulated as a host-managed zoned
//! disk, as fio 3.33's `zbd.c` drives one: every zone
//! sequential-write-required, `zone_size` long and empty when the run
//! starts; the jobs on the device share its zones, its list of open zones
//! and its count of written bytes.
//!
//! * [`World::zbd_adjust_block`] (fio's `zbd_adjust_block`) moves each IO
//!   before it is issued: a write to its zone's write pointer, in a zone
//!   the open-zone limits allow (`zbd_open_zone`, else
//!   `zbd_convert_to_open_zone`), resetting the zone first when it is full
//!   or when `zone_reset_threshold`/`zone_reset_frequency` say so; a read
//!   below the write pointer (or of the nearest zone with data,
//!   `zbd_find_zone`) unless `read_beyond_wp`; a random trim to a zone
//!   with data. A zone reset is a command to the device (a discard of the
//!   zone), after the job's IOs in flight have completed (`io_u_quiesce`).
//! * Each zone has one job's IOs at a time: its lock is taken when the IO
//!   is placed and given back when it completes (`zbd_put_io`), where a
//!   write that reached the zone's end closes it (`zbd_end_zone_io`). A
//!   context that finds the zone held by another job waits for it, after
//!   its own job's IOs in flight, and its job's other contexts wait behind
//!   it (fio's thread is blocked on the zone's mutex).
//! * A job that finds nothing to do (no zone to read, none to open) ends,
//!   as fio's `io_u_eof` ends it; a write longer than a zone fails the job
//!   with `EINVAL`, a zone remainder shorter than the block with `EIO`.
//!
//! Differences from fio: fio's search for an open zone takes each zone's
//! lock as it looks at it and goes on from there once it has it; here a
//! context that finds a zone it would look at held by another job waits
//! for it and then places its IO again from the start. A freed zone goes
//! to the context that waited longest (a mutex promises no order).

use super::World;
use super::job::{Phase, PlannedIo};
use crate::block::Policy;
use crate::time::Ns;
use crate::workload::{Dir, ZbdPlan};

/// fio's `EINVAL` and `EIO`, the errors of a write that cannot be placed.
const EINVAL: i32 = 22;
const EIO: i32 = 5;

/// No job holds a zone.
const FREE: u32 = u32::MAX;

/// One zone of a zoned device.
#[derive(Clone, Debug)]
pub(crate) struct Zone {
    /// The write pointer, a device offset.
    pub wp: u64,
    /// In the device's list of open zones.
    pub open: bool,
    /// A reset is due before the next write (`zone_reset_frequency`).
    pub reset: bool,
    /// Blocks of the zone a verifying job has read back (fio's
    /// `verify_block`; a reset zeroes it).
    pub verify_block: u64,
    /// The job whose IOs hold the zone, and how many (fio's zone mutex
    /// is recursive: one job may hold it for several IOs).
    holder: u32,
    holds: u32,
    /// Contexts waiting for the zone, in the order they came.
    waiters: Vec<u32>,
}

/// A zoned device: its zones, shared by every job on it.
#[derive(Clone, Debug)]
pub(crate) struct ZonedDisk {
    pub zone_size: u64,
    pub zones: Vec<Zone>,
    /// fio's `open_zones`, in the order they were opened.
    pub open: Vec<u32>,
    /// `max_open_zones` (0: no limit, and no list kept).
    pub max_open: u32,
    /// Bytes written in the zones (fio's `wp_sectors_with_data`).
    pub with_data: u64,
    /// Writes until the next early reset (fio's `write_cnt`), set from the
    /// first writer's `zone_reset_frequency`.
    write_cnt: Option<u32>,
}

/// Which zones a job's file region covers: fio's `min_zone`, `max_zone`
/// (first zone past it), `file_offset` and `io_size`.
#[derive(Clone, Copy, Debug)]
struct Region {
    min: u32,
    max: u32,
    offset: u64,
    size: u64,
}

/// A zone a context's IO in flight holds, and for a write where it ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ZoneHeld {
    pub disk: u32,
    pub zone: u32,
    pub write_end: Option<u64>,
}

/// What placing an IO came to.
enum Adjust {
    /// Issue `io`, holding `zone` (none for a read beyond the write
    /// pointer); `reset`: the zone's `(start, bytes)` to reset first;
    /// `instant`: a trim of an empty zone, done without the device.
    Go {
        io: PlannedIo,
        zone: Option<ZoneHeld>,
        reset: Option<(u64, u64)>,
        instant: bool,
    },
    /// The context waits (the job's IOs in flight, or a zone another job
    /// holds) and places the IO again.
    Wait,
    /// Nothing to do: the job ends.
    Eof,
    /// The job fails with this error.
    Fail(i32),
}

/// What the search for an open zone found.
enum Convert {
    Zone(u32),
    /// Every open zone is in use: wait for the job's IOs in flight.
    Quiesce,
    /// The zone to look at is held by another job: wait for it (fio
    /// blocks on the zone's lock before it looks).
    WaitFor(u32),
    None,
}

impl ZonedDisk {
    /// A device of `size` bytes in zones of `plan.zone_size`, all empty.
    pub(crate) fn new(size: u64, plan: &ZbdPlan) -> Self {
        let zs = plan.zone_size;
        let n = size.div_ceil(zs);
        ZonedDisk {
            zone_size: zs,
            zones: (0..n)
                .map(|i| Zone {
                    wp: i * zs,
                    open: false,
                    reset: false,
                    verify_block: 0,
                    holder: FREE,
                    holds: 0,
                    waiters: Vec::new(),
                })
                .collect(),
            open: Vec::new(),
            max_open: plan.max_open_zones,
            with_data: 0,
            write_cnt: None,
        }
    }

    /// fio's `zbd_zone_idx`: the zone of `offset`, at most the count of
    /// zones (the sentinel past the last).
    fn idx(&self, offset: u64) -> u32 {
        (offset / self.zone_size).min(self.zones.len() as u64) as u32
    }

    fn start(&self, z: u32) -> u64 {
        u64::from(z) * self.zone_size
    }

    /// The end of the zone's capacity (the whole zone: no `zonecapacity`).
    fn cap_end(&self, z: u32) -> u64 {
        self.start(z) + self.zone_size
    }

    /// fio's `zbd_zone_full`: fewer than `required` bytes left.
    fn full(&self, z: u32, required: u64) -> bool {
        self.zones[z as usize].wp + required > self.cap_end(z)
    }

    fn region(&self, offset: u64, size: u64) -> Region {
        Region {
            min: self.idx(offset),
            max: self.idx(offset + size),
            offset,
            size,
        }
    }

    /// Takes zone `z` for context `c` of job `j`: false when another job
    /// holds it, or when it is free but another context waited for it
    /// first (a freed zone goes to the context that waited longest).
    fn lock(&mut self, z: u32, j: u32, c: u32) -> bool {
        let zone = &mut self.zones[z as usize];
        if zone.holder != FREE && zone.holder != j {
            return false;
        }
        if zone.holder == FREE && zone.waiters.first().is_some_and(|&w| w != c) {
            return false;
        }
        if zone.waiters.first() == Some(&c) {
            zone.waiters.remove(0);
        }
        zone.holder = j;
        zone.holds += 1;
        true
    }

    /// Gives back one hold of zone `z`; when the zone is free, the context
    /// that waited longest for it (to wake).
    fn unlock(&mut self, z: u32) -> Option<u32> {
        let zone = &mut self.zones[z as usize];
        zone.holds = zone.holds.saturating_sub(1);
        if zone.holds > 0 {
            return None;
        }
        zone.holder = FREE;
        zone.waiters.first().copied()
    }

    /// Context `c` no longer waits for zone `z`; when it was first and the
    /// zone is free, the next waiter (to wake).
    fn dequeue(&mut self, z: u32, c: u32) -> Option<u32> {
        let zone = &mut self.zones[z as usize];
        let k = zone.waiters.iter().position(|&w| w == c)?;
        zone.waiters.remove(k);
        if k == 0 && zone.holder == FREE {
            return zone.waiters.first().copied();
        }
        None
    }

    /// fio's `zbd_open_zone`: whether job `j` may write zone `z`, opening
    /// it if it was not (false past a limit, or when it is open but
    /// filled by writes in flight; with verify, `Some(min_bs)`, false for
    /// a zone without room for a block: resetting it would lose what
    /// verify reads back).
    fn open_zone(&mut self, z: u32, job_open: &mut u32, job_max: u32, verify: Option<u64>) -> bool {
        if verify.is_some_and(|min_bs| self.full(z, min_bs)) {
            return false;
        }
        if self.max_open == 0 {
            return true;
        }
        if self.open.contains(&z) {
            return self.zones[z as usize].wp < self.cap_end(z);
        }
        if job_max > 0 && *job_open >= job_max {
            return false;
        }
        if self.open.len() as u32 >= self.max_open {
            return false;
        }
        self.open.push(z);
        *job_open += 1;
        self.zones[z as usize].open = true;
        true
    }

    /// fio's `zbd_close_zone`, counted against the closing job.
    fn close_zone(&mut self, z: u32, job_open: &mut u32) {
        if let Some(k) = self.open.iter().position(|&o| o == z) {
            self.open.remove(k);
            *job_open = job_open.saturating_sub(1);
            self.zones[z as usize].open = false;
        }
    }

    /// fio's `zbd_reset_zone`: the bytes the zone held (0: nothing to
    /// reset, and no command).
    fn reset(&mut self, z: u32) -> u64 {
        let start = self.start(z);
        let zone = &mut self.zones[z as usize];
        let data = zone.wp - start;
        zone.wp = start;
        zone.verify_block = 0;
        self.with_data -= data;
        data
    }

    /// fio's `zbd_find_zone`: the nearest zone after `zb` (and, for random
    /// IO, before it) with at least `min_bytes` written.
    fn find_zone(&self, zb: u32, min_bytes: u64, r: Region, random: bool) -> Option<u32> {
        let has = |z: u32| self.start(z) + min_bytes <= self.zones[z as usize].wp;
        let (mut up, mut down) = (i64::from(zb) + 1, i64::from(zb) - 1);
        let (lo, hi) = (i64::from(r.min), i64::from(r.max));
        while up < hi || down >= lo {
            if up < hi {
                if has(up as u32) {
                    return Some(up as u32);
                }
            } else if !random {
                break;
            }
            if random && down >= lo && has(down as u32) {
                return Some(down as u32);
            }
            up += 1;
            down -= 1;
        }
        None
    }

    /// fio's `pick_random_zone_idx`: an index into the open list in
    /// proportion to the IO's place in the region.
    fn pick_open(&self, offset: u64, r: Region) -> usize {
        let k = u128::from(offset - r.offset) * self.open.len() as u128 / u128::from(r.size.max(1));
        k as usize
    }

    /// fio's `zbd_convert_to_open_zone`: a zone of the region job `j` may
    /// write `min_bs` bytes to, opened if need be.
    #[allow(clippy::too_many_arguments, reason = "fio's search reads all of them")]
    fn convert(
        &mut self,
        j: u32,
        offset: u64,
        r: Region,
        min_bs: u64,
        job_open: &mut u32,
        job_max: u32,
        in_flight: bool,
        verify: Option<u64>,
    ) -> Convert {
        let limited = self.max_open > 0 || job_max > 0;
        let mut z = if limited {
            self.open
                .get(self.pick_open(offset, r))
                .copied()
                .unwrap_or(0)
        } else {
            self.idx(offset)
        };
        z = z.clamp(r.min, r.max.saturating_sub(1));
        let mut examine = !limited;
        if limited && !self.open.is_empty() {
            let n = self.open.len();
            let first = self.pick_open(offset, r).min(n - 1);
            let Some(k) = (0..n)
                .map(|i| (first + i) % n)
                .find(|&k| (r.min..r.max).contains(&self.open[k]))
            else {
                return Convert::None;
            };
            z = self.open[k];
            examine = true;
        }
        let held = |disk: &Self, z: u32| {
            let h = disk.zones[z as usize].holder;
            h != FREE && h != j
        };
        if examine && held(self, z) {
            return Convert::WaitFor(z);
        }
        if examine && self.zones[z as usize].wp + min_bs <= self.cap_end(z) {
            return Convert::Zone(z);
        }
        // Open another zone: first let the IOs in flight close theirs if
        // a limit is reached.
        let span = r.max - r.min;
        let at_limit = self.open.len() as u32 == span
            || (self.max_open > 0 && self.open.len() as u32 == self.max_open)
            || (job_max > 0 && *job_open == job_max);
        if at_limit && in_flight {
            return Convert::Quiesce;
        }
        let tries = r.size / self.zone_size;
        for _ in 0..tries {
            z += 1;
            if z >= r.max || self.start(z) < r.offset {
                z = r.min;
            }
            if self.zones[z as usize].open {
                continue;
            }
            if self.open_zone(z, job_open, job_max, verify) {
                return Convert::Zone(z);
            }
        }
        // A write may still fit in a zone already open.
        for &o in self.open.iter().filter(|o| (r.min..r.max).contains(*o)) {
            if held(self, o) {
                return Convert::WaitFor(o);
            }
            if self.zones[o as usize].wp + min_bs <= self.cap_end(o) {
                return Convert::Zone(o);
            }
        }
        Convert::None
    }

    /// fio's `zbd_dec_and_reset_write_cnt`: counts a write down towards
    /// the next early reset; true when it is due.
    fn write_cnt_due(&mut self, frequency: f64) -> bool {
        let reload = || {
            if frequency > 0.0 {
                (1.0 / frequency).min(f64::from(u32::MAX)) as u32
            } else {
                u32::MAX
            }
        };
        let cnt = self.write_cnt.get_or_insert_with(reload);
        *cnt = cnt.saturating_sub(1);
        if *cnt == 0 {
            *cnt = reload();
            return true;
        }
        false
    }
}

impl<P: Policy> World<P> {
    /// The zones of the devices zonemode=zbd jobs use, built before the
    /// run: one [`ZonedDisk`] per device file, shared by its jobs.
    pub fn zbd_setup(&mut self) {
        for j in 0..self.jobs.len() {
            let Some(plan) = self.jobs[j].plan.zbd else {
                continue;
            };
            for k in 0..self.jobs[j].file_ids.len() {
                let f = self.jobs[j].file_ids[k] as usize;
                if self.zoned_of.len() <= f {
                    self.zoned_of.resize(self.files.len().max(f + 1), u32::MAX);
                }
                if self.zoned_of[f] == u32::MAX {
                    self.zoned_of[f] = self.zoned.len() as u32;
                    self.zoned.push(ZonedDisk::new(self.files[f].size, &plan));
                }
            }
        }
    }

    /// A verifying job that writes a zoned device starts by resetting
    /// every zone of its region that holds data, as fio's
    /// `zbd_file_reset` does before the writes (so that no zone has to be
    /// reset while it writes, losing what it will read back). The resets
    /// are counted; they take no device time here.
    pub(crate) fn zbd_verify_start(&mut self, j: usize) {
        let job = &self.jobs[j];
        if job.plan.zbd.is_none() || job.plan.verify.is_none() || !job.plan.writes {
            return;
        }
        let mut resets = 0;
        let mut open = job.open_zones;
        for fi in 0..job.file_ids.len() {
            let og = &job.gens[fi];
            let file = job.file_ids[fi] as usize;
            let disk = &mut self.zoned[self.zoned_of[file] as usize];
            let r = disk.region(og.base, og.size);
            for z in r.min..r.max {
                disk.close_zone(z, &mut open);
                if disk.reset(z) > 0 {
                    resets += 1;
                }
            }
        }
        let job = &mut self.jobs[j];
        job.open_zones = open;
        job.zone_resets += resets;
    }

    /// Where job `j` reads back the write `io` replays: in the zone of
    /// its offset, the next block not yet read back there (fio's
    /// `zbd_replay_write_order`: the zone's start plus `verify_block`
    /// blocks, counted up), or, when that zone has none left (the write
    /// went elsewhere), in the nearest zone of the region that has one:
    /// each block written is read back once.
    pub(crate) fn zbd_verify_place(&mut self, j: usize, mut io: PlannedIo) -> PlannedIo {
        let job = &self.jobs[j];
        let min_bs = job.plan.bs[Dir::Write as usize].0.max(1);
        let og = &job.gens[io.fi];
        let file = job.file_ids[io.fi] as usize;
        let disk = &mut self.zoned[self.zoned_of[file] as usize];
        let r = disk.region(og.base, og.size);
        let unread = |disk: &ZonedDisk, z: u32| {
            let zone = &disk.zones[z as usize];
            disk.start(z) + (zone.verify_block + 1) * min_bs <= zone.wp
        };
        let zb = disk.idx(io.offset).clamp(r.min, r.max.saturating_sub(1));
        let span = i64::from(r.max) - i64::from(r.min);
        let z = (0..span.max(1))
            .map(|k| (i64::from(zb) - i64::from(r.min) + k).rem_euclid(span.max(1)) as u32 + r.min)
            .find(|&z| unread(disk, z))
            .unwrap_or(zb);
        let zone = &mut disk.zones[z as usize];
        io.offset = u64::from(z) * disk.zone_size + zone.verify_block * min_bs;
        zone.verify_block += 1;
        io.len = min_bs;
        io
    }

    /// Context `c` of job `j` places `io` on the zoned device and issues
    /// it, or waits, or ends the job.
    pub(crate) fn zbd_issue(&mut self, now: Ns, c: u32, j: usize, io: PlannedIo) {
        let queued = self.ctxs[c as usize].zone_queued.take();
        let adjust = self.zbd_adjust_block(now, c, j, io);
        // Zones the placing freed: the contexts first in their queues.
        while let Some(w) = self.zone_wakes.pop() {
            self.zone_wake(now, w);
        }
        // Waiting for another zone now, or for none: its place in the old
        // zone's queue goes.
        if let Some(q) = queued
            && self.ctxs[c as usize].zone_queued != Some(q)
        {
            self.zone_dequeue(now, c, q);
        }
        match adjust {
            Adjust::Go {
                io,
                zone,
                reset,
                instant,
            } => {
                self.zone_gate_open(now, j, c);
                self.ctxs[c as usize].zone_held = zone;
                if let Some((start, bytes)) = reset {
                    self.zone_reset_io(now, c, j, io, start, bytes);
                } else if instant {
                    self.issue_instant(now, c, j, io);
                } else {
                    self.issue_io(now, c, j, io);
                }
            }
            Adjust::Wait => {}
            Adjust::Eof => {
                self.zone_gate_open(now, j, c);
                self.writes_done(now, c, j);
            }
            Adjust::Fail(e) => {
                self.zone_gate_open(now, j, c);
                self.job_failed(now, j, e);
                self.ctx_finish(now, c);
            }
        }
    }

    /// fio's `zbd_adjust_ddir`: a mixed job's first reads become writes
    /// while the device holds nothing to read.
    pub(crate) fn zbd_adjust_ddir(&self, j: usize, dir: Dir) -> Dir {
        let job = &self.jobs[j];
        let Some(plan) = job.plan.zbd else {
            return dir;
        };
        if dir != Dir::Read || !(job.plan.reads && job.plan.writes) || plan.read_beyond_wp {
            return dir;
        }
        let f = job.file_ids[job.cur_file] as usize;
        let d = self.zoned_of[f] as usize;
        if self.zoned[d].with_data > 0 {
            Dir::Read
        } else {
            Dir::Write
        }
    }

    /// fio's `zbd_adjust_block` for context `c` of job `j`.
    fn zbd_adjust_block(&mut self, now: Ns, c: u32, j: usize, mut io: PlannedIo) -> Adjust {
        let job = &self.jobs[j];
        let plan = job.plan.zbd.expect("a zbd job");
        let random = job.plan.random;
        let min_bs = job.plan.bs[io.dir as usize].0.max(1);
        let in_flight = job.in_flight > 0;
        let sync = job.plan.engine == crate::workload::EngineKind::Sync;
        let og = &job.gens[io.fi];
        let file = job.file_ids[io.fi] as usize;
        let d = self.zoned_of[file];
        let disk = &mut self.zoned[d as usize];
        let r = disk.region(og.base, og.size);
        let held = |zone: u32, write_end: Option<u64>| {
            Some(ZoneHeld {
                disk: d,
                zone,
                write_end,
            })
        };
        if io.dir == Dir::Read && plan.read_beyond_wp {
            return Adjust::Go {
                io,
                zone: None,
                reset: None,
                instant: false,
            };
        }
        let zb = disk.idx(io.offset);
        if !disk.lock(zb, j as u32, c) {
            return self.zone_wait(now, c, j, io, Some((d, zb)), in_flight && !sync);
        }
        match io.dir {
            Dir::Read => {
                let disk = &mut self.zoned[d as usize];
                let orig_start = disk.start(zb);
                let mut z = zb;
                let mut range = disk.zones[z as usize].wp - disk.start(z);
                if range < min_bs || (!random && io.offset + min_bs > disk.zones[z as usize].wp) {
                    if let Some(w) = disk.unlock(z) {
                        self.zone_wakes.push(w);
                    }
                    let Some(found) = disk.find_zone(zb, min_bs, r, random) else {
                        return Adjust::Eof;
                    };
                    if !disk.lock(found, j as u32, c) {
                        return self.zone_wait(now, c, j, io, Some((d, found)), in_flight && !sync);
                    }
                    let disk = &self.zoned[d as usize];
                    z = found;
                    range = disk.zones[z as usize].wp - disk.start(z);
                    if !random {
                        io.offset = disk.start(z);
                    }
                }
                let disk = &self.zoned[d as usize];
                if range <= io.len {
                    io.offset = disk.start(z);
                } else if random {
                    io.offset = disk.start(z)
                        + (io.offset - orig_start) % (range - io.len) / min_bs * min_bs;
                }
                let len = io.len.min(disk.zones[z as usize].wp - io.offset) / min_bs * min_bs;
                io.len = len.max(min_bs.min(io.len));
                Adjust::Go {
                    io,
                    zone: held(z, None),
                    reset: None,
                    instant: false,
                }
            }
            Dir::Write => {
                let disk = &mut self.zoned[d as usize];
                if io.len > disk.zone_size {
                    if let Some(w) = disk.unlock(zb) {
                        self.zone_wakes.push(w);
                    }
                    return Adjust::Fail(EINVAL);
                }
                let job = &mut self.jobs[j];
                let job_max = plan.job_max_open_zones;
                let verify = job.plan.verify.is_some().then_some(min_bs);
                let mut z = zb;
                if !disk.open_zone(zb, &mut job.open_zones, job_max, verify) {
                    if let Some(w) = disk.unlock(zb) {
                        self.zone_wakes.push(w);
                    }
                    match disk.convert(
                        j as u32,
                        io.offset,
                        r,
                        min_bs,
                        &mut job.open_zones,
                        job_max,
                        in_flight,
                        verify,
                    ) {
                        Convert::Zone(found) => {
                            if !disk.lock(found, j as u32, c) {
                                return self.zone_wait(
                                    now,
                                    c,
                                    j,
                                    io,
                                    Some((d, found)),
                                    in_flight && !sync,
                                );
                            }
                            z = found;
                        }
                        Convert::Quiesce => return self.zone_wait(now, c, j, io, None, true),
                        Convert::WaitFor(z) => {
                            return self.zone_wait(now, c, j, io, Some((d, z)), in_flight && !sync);
                        }
                        Convert::None => return Adjust::Eof,
                    }
                }
                let disk = &mut self.zoned[d as usize];
                if plan.reset_frequency > 0.0
                    && disk.with_data as f64 >= r.size as f64 * plan.reset_threshold
                    && disk.write_cnt_due(plan.reset_frequency)
                {
                    disk.zones[z as usize].reset = true;
                }
                let mut reset = None;
                if disk.zones[z as usize].reset || disk.full(z, min_bs) {
                    // The reset waits for the job's IOs in flight.
                    if in_flight {
                        if let Some(w) = disk.unlock(z) {
                            self.zone_wakes.push(w);
                        }
                        return self.zone_wait(now, c, j, io, None, true);
                    }
                    disk.zones[z as usize].reset = false;
                    let start = disk.start(z);
                    let data = disk.reset(z);
                    self.jobs[j].zone_resets += 1;
                    if data > 0 {
                        reset = Some((start, data));
                    }
                }
                let disk = &mut self.zoned[d as usize];
                io.offset = disk.zones[z as usize].wp;
                let len = io.len.min(disk.cap_end(z) - io.offset) / min_bs * min_bs;
                if len < min_bs {
                    if let Some(w) = disk.unlock(z) {
                        self.zone_wakes.push(w);
                    }
                    return Adjust::Fail(EIO);
                }
                io.len = len;
                // fio's zbd_queue_io: the write pointer moves as the write
                // is queued.
                let end = (io.offset + io.len).min(disk.cap_end(z));
                let zone = &mut disk.zones[z as usize];
                if zone.wp <= end {
                    disk.with_data += end - zone.wp;
                }
                disk.zones[z as usize].wp = end;
                Adjust::Go {
                    io,
                    zone: held(z, Some(end)),
                    reset,
                    instant: false,
                }
            }
            Dir::Trim => {
                let disk = &mut self.zoned[d as usize];
                let mut z = zb;
                if random && disk.zones[z as usize].wp == disk.start(z) {
                    if let Some(w) = disk.unlock(z) {
                        self.zone_wakes.push(w);
                    }
                    let Some(found) = disk.find_zone(zb, 1, r, random) else {
                        return Adjust::Eof;
                    };
                    if !disk.lock(found, j as u32, c) {
                        return self.zone_wait(now, c, j, io, Some((d, found)), in_flight && !sync);
                    }
                    z = found;
                    io.offset = self.zoned[d as usize].start(z);
                }
                // fio's zbd_do_io_u_trim: the trim resets the zone; an
                // empty one needs no command.
                let disk = &mut self.zoned[d as usize];
                let data = disk.reset(z);
                if data > 0 {
                    self.jobs[j].zone_resets += 1;
                }
                Adjust::Go {
                    io,
                    zone: held(z, None),
                    reset: None,
                    instant: data == 0,
                }
            }
        }
    }

    /// Context `c` of job `j` waits before placing `io` again: for the
    /// zone `on` another job holds (after the job's IOs in flight when
    /// `quiesce`), or for the IOs in flight alone. The job's other
    /// contexts wait behind it.
    fn zone_wait(
        &mut self,
        now: Ns,
        c: u32,
        j: usize,
        io: PlannedIo,
        on: Option<(u32, u32)>,
        quiesce: bool,
    ) -> Adjust {
        let job = &mut self.jobs[j];
        job.zone_gate = Some(c);
        let ctx = &mut self.ctxs[c as usize];
        ctx.zbd_retry = Some(io);
        ctx.phase = Phase::ZoneWait;
        if quiesce && job.in_flight > 0 {
            job.zone_quiesce = true;
        } else if let Some((d, z)) = on {
            let waiters = &mut self.zoned[d as usize].zones[z as usize].waiters;
            if !waiters.contains(&c) {
                waiters.push(c);
            }
            self.ctxs[c as usize].zone_queued = Some((d, z));
        } else {
            // Nothing in flight after all: place it again now.
            self.ctx_timer(now, c, Phase::Sleep);
        }
        Adjust::Wait
    }

    /// Job `j`'s IOs in flight are all done: the context that waited for
    /// them places its IO again.
    pub(crate) fn zone_quiesced(&mut self, now: Ns, j: usize) {
        let job = &mut self.jobs[j];
        if !std::mem::take(&mut job.zone_quiesce) {
            return;
        }
        if let Some(g) = job.zone_gate {
            self.zone_wake(now, g);
        }
    }

    /// Context `c` leaves zone `q`'s queue (`(disk, zone)`).
    fn zone_dequeue(&mut self, now: Ns, c: u32, q: (u32, u32)) {
        if let Some(w) = self.zoned[q.0 as usize].dequeue(q.1, c) {
            self.zone_wake(now, w);
        }
    }

    /// Context `c`, finishing, gives up its zone wait.
    pub(crate) fn zone_give_up(&mut self, now: Ns, c: u32) {
        if let Some(q) = self.ctxs[c as usize].zone_queued.take() {
            self.zone_dequeue(now, c, q);
        }
    }

    /// Wakes context `c` from its zone wait.
    fn zone_wake(&mut self, now: Ns, c: u32) {
        if self.ctxs[c as usize].phase == Phase::ZoneWait {
            self.ctx_timer(now, c, Phase::Sleep);
        }
    }

    /// Whether context `c` of job `j` waits behind another context of its
    /// job that waits for a zone (fio's one thread is blocked there).
    pub(crate) fn zone_gate_waits(&mut self, c: u32, j: usize) -> bool {
        let job = &mut self.jobs[j];
        match job.zone_gate {
            Some(g) if g != c => {
                job.zone_parked.push(c);
                self.ctxs[c as usize].phase = Phase::ZoneWait;
                true
            }
            _ => false,
        }
    }

    /// Context `c` no longer waits: the contexts behind it go on.
    pub(crate) fn zone_gate_open(&mut self, now: Ns, j: usize, c: u32) {
        let job = &mut self.jobs[j];
        if job.zone_gate != Some(c) {
            return;
        }
        job.zone_gate = None;
        let parked = std::mem::take(&mut job.zone_parked);
        for p in parked {
            if self.ctxs[p as usize].phase == Phase::ZoneWait {
                self.ctx_timer(now, p, Phase::Sleep);
            }
        }
    }

    /// Context `c`'s IO is over: its zone is given back, closed if the
    /// write filled it (fio's `zbd_put_io`); contexts waiting for the zone
    /// look again.
    pub(crate) fn zbd_put_io(&mut self, now: Ns, c: u32) {
        let Some(h) = self.ctxs[c as usize].zone_held.take() else {
            return;
        };
        let j = self.ctxs[c as usize].job as usize;
        let disk = &mut self.zoned[h.disk as usize];
        if let Some(end) = h.write_end
            && end >= disk.cap_end(h.zone)
        {
            disk.close_zone(h.zone, &mut self.jobs[j].open_zones);
        }
        if let Some(w) = disk.unlock(h.zone) {
            self.zone_wake(now, w);
        }
    }

    /// A write whose zone is reset first: the reset goes to the device as
    /// a discard of the zone's written bytes; the write follows when it
    /// completes (its latency starts then, as fio's clock starts at the
    /// write's submission).
    fn zone_reset_io(&mut self, now: Ns, c: u32, j: usize, io: PlannedIo, start: u64, bytes: u64) {
        let file = self.jobs[j].file_ids[io.fi];
        self.ctxs[c as usize].zbd_then = Some(io);
        self.start_direct(now, c, file, Dir::Trim, start, bytes);
        // Not an IO of the job's: nothing is counted for it.
        self.ctxs[c as usize].op = super::job::OpKind::None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(max_open: u32) -> ZonedDisk {
        ZonedDisk::new(
            16 << 20,
            &ZbdPlan {
                zone_size: 1 << 20,
                max_open_zones: max_open,
                job_max_open_zones: 0,
                read_beyond_wp: false,
                reset_threshold: 0.0,
                reset_frequency: 0.0,
            },
        )
    }

    /// With verify a zone without room for a block is never opened, even
    /// with no limit; a reset makes room again and zeroes what was read
    /// back.
    #[test]
    fn a_verifying_writer_opens_no_full_zone() {
        let mut d = disk(0);
        let mut open = 0;
        d.zones[0].wp = 1 << 20;
        d.zones[0].verify_block = 3;
        d.with_data = 1 << 20;
        assert!(!d.open_zone(0, &mut open, 0, Some(4096)));
        assert!(d.open_zone(0, &mut open, 0, None), "without verify it may");
        assert!(d.open_zone(1, &mut open, 0, Some(4096)));
        assert_eq!(d.reset(0), 1 << 20);
        assert_eq!(d.zones[0].verify_block, 0);
        assert!(d.open_zone(0, &mut open, 0, Some(4096)));
    }

    #[test]
    fn a_freed_zone_goes_to_the_context_that_waited_longest() {
        let mut d = disk(0);
        assert!(d.lock(3, 0, 10));
        // The holder's job may hold it again; another job waits.
        assert!(d.lock(3, 0, 11));
        assert!(!d.lock(3, 1, 20));
        d.zones[3].waiters.extend([20, 30]);
        assert_eq!(d.unlock(3), None, "still held once");
        assert_eq!(d.unlock(3), Some(20));
        // Free, but context 30 is not first: it waits on.
        assert!(!d.lock(3, 2, 30));
        assert!(d.lock(3, 1, 20));
        assert_eq!(d.zones[3].waiters, [30]);
        assert_eq!(d.unlock(3), Some(30));
        // The first waiter gives up: the next is woken.
        d.zones[3].waiters.push(40);
        assert_eq!(d.dequeue(3, 30), Some(40));
    }

    #[test]
    fn open_zones_are_limited_per_device_and_per_job() {
        let mut d = disk(2);
        let (mut a, mut b) = (0u32, 0u32);
        assert!(d.open_zone(0, &mut a, 1, None));
        // The job's own limit of 1.
        assert!(!d.open_zone(1, &mut a, 1, None));
        assert!(d.open_zone(1, &mut b, 0, None));
        // The device's limit of 2.
        assert!(!d.open_zone(2, &mut b, 0, None));
        assert_eq!(d.open, [0, 1]);
        // A zone filled by writes in flight counts as full.
        d.zones[1].wp = d.cap_end(1);
        assert!(!d.open_zone(1, &mut b, 0, None));
        d.close_zone(1, &mut b);
        assert_eq!((d.open.clone(), b), (vec![0], 0));
    }

    #[test]
    fn a_write_past_the_limit_goes_to_an_open_zone_or_waits_for_it() {
        let mut d = disk(1);
        let r = d.region(0, 16 << 20);
        let mut open = 0;
        assert!(d.open_zone(5, &mut open, 0, None));
        // A write drawn for zone 9 goes to the open zone 5.
        assert!(matches!(
            d.convert(0, 9 << 20, r, 4096, &mut open, 0, false, None),
            Convert::Zone(5)
        ));
        // Zone 5 held by job 1: job 0 waits for it before it looks.
        assert!(d.lock(5, 1, 7));
        assert!(matches!(
            d.convert(0, 9 << 20, r, 4096, &mut open, 0, false, None),
            Convert::WaitFor(5)
        ));
        // Zone 5 full and the limit reached: the IOs in flight first.
        d.unlock(5);
        d.zones[5].wp = d.cap_end(5);
        assert!(matches!(
            d.convert(0, 9 << 20, r, 4096, &mut open, 0, true, None),
            Convert::Quiesce
        ));
    }
}
