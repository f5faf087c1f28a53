//! fio job clones and their IO contexts.
//!
//! A job has one context per IO it may have in flight: one for the sync
//! engines, `iodepth` for libaio with O_DIRECT and for io_uring. A context
//! runs one operation at a time: a data IO, an `fsync`/`fdatasync`, or a
//! sleep (think time, rate pacing, dirty throttling).

use std::collections::VecDeque;

use super::pick::Picked;
use super::{Actor, Ev, World};
use crate::block::Policy;
use crate::block::request::{Bio, Flags, Op, Origin, Payload};
use crate::fs::PAGE;
use crate::fs::btrfs::volume::MapChunk;
use crate::rng::Stream;
use crate::stats::{self, JobStats};
use crate::time::{Ns, SEC};
use crate::workload::{Dir, EngineKind, ExitWhat, JobPlan, OffsetGen, RwMix};

/// Largest bio the block layer builds (`max_sectors_kb`, 512 KiB *(assumed)*).
pub(crate) const MAX_BIO_BYTES: u64 = 512 * 1024;
/// Largest direct-IO bio btrfs maps to a chunk at once (256 pages of
/// 4 KiB): one read-mirror choice per such bio.
pub(crate) const DIO_MAP_BYTES: u64 = 1024 * 1024;
/// CPU time to copy 4 KiB between user and page cache (*assumed*
/// 0.5 µs).
pub(crate) const COPY_NS_PER_PAGE: Ns = 500;
/// CPU time of one IO on fio's null engine *(assumed)*.
pub(crate) const NULL_ENGINE_NS: Ns = 100;
/// A read or write of `/dev/null` or `/dev/zero`: the system call alone
/// *(fio 3.33's psync here: 128 KiB writes to /dev/null at 1.28 M IOPS,
/// 4 KiB reads of /dev/zero at 1.69 M, one job; about 0.6 µs an IO)*.
pub(crate) const NULL_DEVICE_NS: Ns = 600;
/// fio 3.33's time from an IO's preparation to its issue where no `slat`
/// is counted (measured on this machine, mean `lat` less mean `clat`):
/// a synchronous engine's call (`psync`, 4 KiB random reads, 71 ns) and
/// the null engine at depth 1 (13 ns); the null engine's `slat` past depth
/// 1 (28 ns at `iodepth=8`).
const SYNC_PREP_NS: Ns = 71;
const NULL_PREP_NS: Ns = 13;
const NULL_SLAT_NS: Ns = 28;
/// A read at the end of an empty file *(fio 3.33's libaio here, reads of
/// a file created on open: 0.8 µs of `clat`)*.
const EMPTY_READ_NS: Ns = 800;

/// Lifecycle of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JobState {
    Waiting,
    Running,
    Stopping,
    Done,
}

/// What a context is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Idle,
    /// Submitting the bios in its queue.
    Submit,
    /// Waiting for its requests.
    Wait,
    /// Spending CPU (copy, null engine); completes on its timer.
    Cpu,
    /// Sleeping; on its timer it picks the next operation.
    Sleep,
    /// fsync: writing back the file's dirty pages.
    SyncWriteback,
    /// fsync: waiting for the file's writes in flight.
    SyncWait,
    /// fsync: log force or cache flush being submitted.
    SyncLog,
    /// fsync: waiting for the log writes or flush.
    SyncLogWait,
    /// fsync on a volume: log blocks down, waiting for `tree_log_mutex`
    /// before the superblocks (or for the batch leader's superblocks).
    SyncLogLock,
    /// fsync on btrfs that fell back to a full commit: waiting for it.
    SyncCommit,
    /// fsync on btrfs: data down, waiting for the file's ordered extents.
    SyncOrdered,
    /// A metadata engine's call on btrfs, waiting for its transaction
    /// handle to start or to end.
    MetaHandle,
    /// A metadata engine's call waiting for its directory's lock.
    MetaLock,
    /// btrfs: a write waiting for its metadata reservation ticket.
    Reserve,
    /// Held back by fio's flow control until another job of the flow
    /// issues (`world::flow`).
    FlowWait,
    /// Held by fio's rate control: the context that found the job ahead of
    /// its rate waits for the job's IOs in flight to complete, then sleeps
    /// (fio's `io_u_quiesce` in `rate_ddir`); the others wait behind it.
    RateWait,
    /// A direct IO that completed while its job's thread was busy with
    /// earlier ones: it is reaped (its `clat` ends) on its timer.
    Reap,
    /// Verify's read-back waits for the job's writes still in flight
    /// (`world::verify`).
    VerifyWait,
    /// Past the depth a latency target's search allows, or waiting for
    /// the job's IOs in flight after it lowered it (`world::latency`).
    DepthWait,
    /// zonemode=zbd: waiting for a zone another job holds or for the
    /// job's IOs in flight, or behind a context of its job that does
    /// (`world::zbd`).
    ZoneWait,
    Done,
}

/// An IO a job has picked: its direction, `len` bytes at `offset` of the
/// job's file `fi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PlannedIo {
    pub dir: Dir,
    pub fi: usize,
    pub len: u64,
    pub offset: u64,
}

/// The operation in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpKind {
    None,
    Io { dir: Dir, bytes: u64 },
    Sync { datasync: bool },
}

/// One IO context.
#[derive(Debug)]
pub(crate) struct Ctx {
    pub job: u32,
    pub pending: u32,
    pub generation: u32,
    pub phase: Phase,
    pub op: OpKind,
    pub op_start: Ns,
    pub queue: VecDeque<(Bio, bool)>,
    /// A volume fsync's superblock writes, issued once its log blocks are
    /// on the device.
    pub after_log: VecDeque<(Bio, bool)>,
    /// Its log-block writes in flight.
    pub log_in_flight: u32,
    /// When its fsync asked for `tree_log_mutex` and had to wait.
    pub lock_asked: Ns,
    /// fsync: file, writeback cursor, passes done.
    pub sync_file: u32,
    /// The file's `write_seq` when the fsync started: what it makes
    /// durable (a write that lands during the fsync is not covered).
    pub sync_write_seq: u64,
    pub sync_cursor: u32,
    pub sync_passes: u32,
    /// CPU time owed when the current wait ends.
    pub cpu_after: Ns,
    /// Direction chosen before a rate-pacing sleep.
    pub planned: Option<Dir>,
    /// Woken from behind another context's rate wait: its `planned`
    /// direction has not been paced yet.
    pub rate_parked: bool,
    /// A replayed log's action this context claimed and sleeps until the
    /// log's time for.
    pub replayed: Option<u32>,
    /// Request batching state (legacy layer).
    pub batch: crate::block::pool::Batch,
    /// The current write slept in `balance_dirty_pages`.
    pub dirty_paused: bool,
    /// Its bios waiting for a request slot (more than one only while the
    /// copies of a mirrored writeback bio wait together).
    pub parked: u32,
    /// When the job's thread is done with this context's last direct IO
    /// (its host time reserved at completion): the next submission.
    pub host_until: Ns,
    /// btrfs: the O_DIRECT write in flight: its ordered extent once its
    /// last bio is down.
    pub direct_ordered: Option<super::btrfs::Ordered>,
    /// A metadata engine's call in progress: (call, job, file).
    pub meta: Option<(crate::fs::meta::MetaCall, u32, u32)>,
    /// The IO a `create_on_open` create goes before.
    pub pending_io: Option<PlannedIo>,
    /// zonemode=zbd: the zone its IO in flight holds; the IO to place
    /// again after a zone wait; the write its zone's reset goes before.
    pub zone_held: Option<super::zbd::ZoneHeld>,
    pub zbd_retry: Option<PlannedIo>,
    pub zbd_then: Option<PlannedIo>,
    /// zonemode=zbd: the zone (disk, zone) whose queue it waits in.
    pub zone_queued: Option<(u32, u32)>,
    /// What came before its IO's issue (its `slat`, or a synchronous
    /// call's preparation), and whether the job's thread slept for its
    /// last completion (the next submission's `slat` has the wake-up).
    pub before: stats::Before,
    pub woke: bool,
}

/// One job clone.
pub(crate) struct Job {
    pub plan: JobPlan,
    pub rng: Stream,
    pub file_ids: Vec<u32>,
    pub gens: Vec<OffsetGen>,
    pub cur_file: usize,
    pub file_left: u32,
    pub mix: RwMix,
    pub stats: Option<JobStats>,
    pub ctx_first: u32,
    pub nctx: u32,
    pub active: u32,
    pub state: JobState,
    pub start_ns: Ns,
    pub ramp_end: Ns,
    pub bytes_issued: u64,
    pub issued: [u64; 3],
    pub issued_bytes: [u64; 3],
    pub writes_since_fsync: u32,
    pub writes_since_fdatasync: u32,
    pub ios_since_think: u32,
    pub dirtied: u32,
    /// `balance_dirty_pages` pacing: pages until the next call, and when
    /// the last pause ended.
    pub pacing: crate::cache::pacing::TaskPacing,
    /// When the job's thread is next free of host work (the devices'
    /// `host_io_us` after each direct IO, one IO at a time, and
    /// `host_wake_us` when it had slept for the completion).
    pub host_free: Ns,
    pub end_sync_next: usize,
    pub sync_busy: bool,
    pub loops_done: u32,
    /// A metadata engine's files done in the current loop.
    pub meta_done: u32,
    pub exhausted: bool,
    /// Bytes of the IOs picked so far by direction, all passes
    /// (read-backs not).
    pub picked_bytes: [u64; 3],
    pub next_arrival: [Ns; 3],
    /// IOs the job issued in its flow (fio's `td->flow_counter`).
    pub flow_issued: u64,
    /// Sequential jobs: files that reached their end in this loop.
    pub eof: Vec<bool>,
    /// `create_on_open`: the job's files it has opened (created).
    pub opened: Vec<bool>,
    /// A job that reads files it creates on open (`plan.empty_reads`):
    /// how far into each its writes have reached, its size; a read from
    /// there on finds nothing.
    pub written_end: Vec<u64>,
    pub files_at_eof: usize,
    /// The job's data IOs issued and not completed (fio's `cur_depth`).
    pub in_flight: u32,
    /// The context in fio's rate wait (see [`Phase::RateWait`]), the sleep
    /// it takes once the job's IOs in flight are done, and the contexts
    /// waiting behind it.
    pub rate_gate: Option<u32>,
    pub rate_sleep: Ns,
    pub rate_parked: Vec<u32>,
    /// A replay's next action, and when the last one claimed is issued.
    pub replay_at: usize,
    pub replay_clock: Ns,
    /// Verify (`world::verify`): the copy of the pick state the
    /// read-back replays, the writes not yet read back, the backlog reads
    /// left in the current batch, and the read-back phase: begun, its
    /// reads started (the writes in flight are in), the contexts waiting
    /// for those writes.
    pub verify_cursor: Option<Box<super::pick::PickState>>,
    pub unverified: u64,
    pub verify_batch: u64,
    pub verifying: bool,
    pub verify_started: bool,
    pub verify_parked: Vec<u32>,
    /// IOs and bytes completed (fio's `io_blocks`, `io_bytes`), and the
    /// steady-state detection (`world::steady`) when the job has one.
    pub done_ios: u64,
    pub done_bytes: u64,
    pub steady: Option<super::steady::SteadyState>,
    /// A latency target's depth search (`world::latency`).
    pub latency: Option<super::latency::LatencySearch>,
    /// zonemode=zbd: the zones the job has open (fio's `num_open_zones`),
    /// the context of the job that waits for a zone or for the IOs in
    /// flight (`zone_quiesce`) and those waiting behind it, and the
    /// zones it reset.
    pub open_zones: u32,
    pub zone_gate: Option<u32>,
    pub zone_parked: Vec<u32>,
    pub zone_quiesce: bool,
    pub zone_resets: u64,
}

impl<P: Policy> World<P> {
    /// Starts every job of stonewall section `wall`.
    pub(crate) fn start_wall(&mut self, wall: u32) {
        let now = self.q.now();
        self.cur_wall = wall;
        for j in 0..self.jobs.len() as u32 {
            let plan = &self.jobs[j as usize].plan;
            if plan.wall != wall {
                continue;
            }
            // fio counts a delay from the run's start (its genesis), which
            // is time 0 here; a job whose delay has passed starts now,
            // unless the jobs it waits for still run.
            if plan.start_delay > now {
                self.q.push(plan.start_delay, Ev::JobStart { job: j });
            } else if !self.waitee_running(j) {
                self.start_job(now, j);
            }
        }
        if self.walls_left.get(wall as usize).copied() == Some(0) {
            // An empty section: go on.
            self.next_wall(now);
        }
    }

    fn next_wall(&mut self, _now: Ns) {
        let next = self.cur_wall + 1;
        if (next as usize) < self.walls_left.len() && !self.exit_all {
            self.start_wall(next);
        } else {
            self.stop = true;
        }
    }

    fn start_job(&mut self, now: Ns, j: u32) {
        self.flow_job_started(j as usize);
        let job = &mut self.jobs[j as usize];
        job.state = JobState::Running;
        job.start_ns = now;
        job.replay_clock = now;
        job.ramp_end = now + job.plan.ramp;
        if let Some(ss) = job.steady.as_mut() {
            ss.prev_at = now;
        }
        if let Some(t) = job.plan.latency_target {
            job.latency = Some(super::latency::LatencySearch::new(
                t,
                job.plan.iodepth,
                now,
                job.done_ios,
            ));
        }
        job.stats = Some(job.stats_from(job.ramp_end));
        job.stats_depth();
        job.verify_cursor = super::verify::cursor_of(job);
        self.zbd_verify_start(j as usize);
        let job = &mut self.jobs[j as usize];
        if job.plan.ramp > 0 {
            self.q.push(job.ramp_end, Ev::RampEnd { job: j });
        }
        if let Some(rt) = job.plan.runtime {
            self.q.push(job.ramp_end + rt, Ev::Deadline { job: j });
        }
        if job.plan.invalidate {
            for i in 0..job.file_ids.len() {
                let f = self.jobs[j as usize].file_ids[i];
                self.cache.invalidate(f);
            }
        }
        let job = &self.jobs[j as usize];
        let (first, n) = (job.ctx_first, job.nctx);
        for c in first..first + n {
            self.ctx_next(now, c);
        }
    }

    /// A delayed job starts, unless an `exitall` ended it first.
    pub(crate) fn on_job_start(&mut self, now: Ns, j: u32) {
        if self.jobs[j as usize].state == JobState::Waiting && !self.waitee_running(j) {
            self.start_job(now, j);
        }
    }

    /// fio's `waitee_running`: job `j` has a `wait_for=` and a job of
    /// that name (other than its own) has not ended.
    fn waitee_running(&self, j: u32) -> bool {
        let me = &self.jobs[j as usize].plan;
        let Some(w) = me.wait_for.as_deref() else {
            return false;
        };
        self.jobs
            .iter()
            .any(|o| o.plan.name != me.name && o.plan.name == w && o.state != JobState::Done)
    }

    /// Starts the jobs of the current section that waited (`wait_for=`)
    /// for the jobs named `ended`, once none of those runs and their
    /// `startdelay` has passed.
    fn start_waiters(&mut self, now: Ns, ended: &str) {
        for k in 0..self.jobs.len() as u32 {
            let o = &self.jobs[k as usize];
            if o.state == JobState::Waiting
                && o.plan.wall == self.cur_wall
                && o.plan.wait_for.as_deref() == Some(ended)
                && o.plan.start_delay <= now
                && !self.waitee_running(k)
            {
                self.start_job(now, k);
            }
        }
    }

    pub(crate) fn on_ramp_end(&mut self, now: Ns, j: u32) {
        // Stats restart at the end of the ramp.
        let job = &mut self.jobs[j as usize];
        job.stats = Some(job.stats_from(now));
        job.stats_depth();
    }

    /// Job `j` fails with fio's `error` (its first one is reported) and
    /// ends as its runtime would end it.
    pub(crate) fn job_failed(&mut self, now: Ns, j: usize, error: i32) {
        if let Some(s) = self.jobs[j].stats.as_mut()
            && s.error == 0
        {
            s.error = error;
        }
        self.on_deadline(now, j as u32);
    }

    pub(crate) fn on_deadline(&mut self, now: Ns, j: u32) {
        let job = &mut self.jobs[j as usize];
        if job.state != JobState::Running {
            return;
        }
        job.state = JobState::Stopping;
        if let Some(s) = job.stats.as_mut() {
            s.stop_sampling();
        }
        let (first, n) = (job.ctx_first, job.nctx);
        for c in first..first + n {
            let ctx = &mut self.ctxs[c as usize];
            if matches!(
                ctx.phase,
                Phase::Sleep
                    | Phase::Idle
                    | Phase::FlowWait
                    | Phase::RateWait
                    | Phase::VerifyWait
                    | Phase::DepthWait
                    | Phase::ZoneWait
            ) {
                ctx.generation = ctx.generation.wrapping_add(1);
                self.ctx_finish(now, c);
            }
        }
    }

    /// Puts context `c` to sleep until `at`, then `on_ctx_timer`.
    pub(crate) fn ctx_timer(&mut self, at: Ns, c: u32, phase: Phase) {
        let ctx = &mut self.ctxs[c as usize];
        ctx.phase = phase;
        ctx.generation = ctx.generation.wrapping_add(1);
        let generation = ctx.generation;
        self.q.push(at, Ev::Wake { ctx: c, generation });
    }

    pub(crate) fn on_ctx_timer(&mut self, now: Ns, c: u32) {
        match self.ctxs[c as usize].phase {
            Phase::Cpu if self.ctxs[c as usize].pending_io.is_some() => {
                self.open_created(now, c);
            }
            Phase::Cpu => {
                if std::mem::take(&mut self.ctxs[c as usize].dirty_paused) {
                    self.policy.dirty_throttle_ended(now);
                    self.drain_policy_wakes(now);
                }
                self.op_complete(now, c);
            }
            Phase::Sleep => self.ctx_next(now, c),
            Phase::Reap => self.op_complete(now, c),
            Phase::Wait | Phase::SyncWait | Phase::SyncLogWait
                if self.ctxs[c as usize].pending == 0 =>
            {
                self.ctx_io_done(now, c);
            }
            _ => {}
        }
    }

    /// Picks and starts the next operation of context `c`.
    pub(crate) fn ctx_next(&mut self, now: Ns, c: u32) {
        let j = self.ctxs[c as usize].job as usize;
        // A replayed action claimed before another context reached the
        // log's end is still issued (a runtime's end or an exitall finishes
        // a sleeping context without waking it).
        if self.jobs[j].state != JobState::Running && self.ctxs[c as usize].replayed.is_none() {
            self.ctx_finish(now, c);
            return;
        }
        if self.jobs[j].verifying {
            self.verify_next(now, c, j);
            return;
        }
        let job = &mut self.jobs[j];
        let plan = &job.plan;
        // fsync / fdatasync every N writes.
        if !job.sync_busy {
            if plan.fsync_every > 0 && job.writes_since_fsync >= plan.fsync_every {
                job.writes_since_fsync = 0;
                let f = job.file_ids[job.cur_file];
                self.start_sync(now, c, f, false);
                return;
            }
            if plan.fdatasync_every > 0 && job.writes_since_fdatasync >= plan.fdatasync_every {
                job.writes_since_fdatasync = 0;
                let f = job.file_ids[job.cur_file];
                self.start_sync(now, c, f, true);
                return;
            }
        }
        // Think time.
        if plan.thinktime > 0 && job.ios_since_think >= plan.thinktime_blocks.max(1) {
            job.ios_since_think = 0;
            let at = now + plan.thinktime;
            self.ctx_timer(at, c, Phase::Sleep);
            return;
        }
        // Byte limit.
        if let Some(limit) = plan.io_limit
            && job.bytes_issued >= limit
        {
            self.writes_done(now, c, j);
            return;
        }
        // IO count limit (`number_ios`): IOs issued, in flight included.
        if let Some(limit) = plan.io_count_limit
            && job.issued.iter().sum::<u64>() >= limit
        {
            self.writes_done(now, c, j);
            return;
        }
        if let EngineKind::Cpu(_) = job.plan.engine {
            // cpuio burns its CPU until its runtime (or an exitall) ends
            // it; `job_end` counts the time.
            self.ctxs[c as usize].phase = Phase::Sleep;
            return;
        }
        if let Some(log) = job.plan.replay.clone() {
            self.replay_next(now, c, j, &log);
            return;
        }
        if let Some(meta) = job.plan.meta {
            // fio paces a metadata engine's calls as IOs (`rate_iops`,
            // `rate`), except the call that finds the job done.
            let last_pass = !plan.time_based && job.loops_done + 1 >= plan.loops;
            let done = job.meta_done == meta.files && last_pass;
            if !done {
                let dir = meta_dir(plan);
                let paced = self.ctxs[c as usize].planned.take().is_some();
                if self.io_waits(now, c, j, dir, paced) {
                    return;
                }
            }
            self.meta_next(now, c, j);
            return;
        }
        if job.exhausted {
            self.writes_done(now, c, j);
            return;
        }
        if self.depth_waits(c, j) {
            return;
        }
        if self.jobs[j].plan.zbd.is_some() {
            if self.zone_gate_waits(c, j) {
                return;
            }
            if let Some(io) = self.ctxs[c as usize].zbd_retry.take() {
                self.zbd_issue(now, c, j, io);
                return;
            }
        }
        // A context woken from rate pacing issues the IO it planned.
        let planned = self.ctxs[c as usize].planned.take();
        if planned.is_none() && self.verify_backlog_due(j) {
            self.verify_read(now, c, j);
            return;
        }
        let job = &mut self.jobs[j];
        let dir = planned.unwrap_or_else(|| job.pick_dir());
        let dir = self.zbd_adjust_ddir(j, dir);
        if self.io_waits(now, c, j, dir, planned.is_some()) {
            return;
        }
        let job = &mut self.jobs[j];
        let Some(Picked {
            io,
            wrapped,
            all_wrapped,
        }) = job.pick_rest(dir)
        else {
            self.writes_done(now, c, j);
            return;
        };
        if io.dir == Dir::Write && job.plan.verify.is_some() {
            job.unverified += 1;
        }
        let plan = &job.plan;
        if plan.invalidate && !plan.direct {
            if all_wrapped {
                for &f in &job.file_ids {
                    self.cache.invalidate(f);
                }
            } else if let Some(w) = wrapped {
                self.cache.invalidate(job.file_ids[w]);
            }
        }
        if job.plan.zbd.is_some() {
            self.zbd_issue(now, c, j, io);
            return;
        }
        let fi = io.fi;
        if job.plan.create_on_open && !job.opened[fi] {
            job.opened[fi] = true;
            self.create_then_issue(now, c, j, io);
            return;
        }
        self.issue_io(now, c, j, io);
    }

    /// Counts job `j`'s IO `io` as issued (fio's counters, the depth,
    /// think time's and fsync's cadences).
    pub(crate) fn count_issue(&mut self, j: usize, io: PlannedIo) {
        let PlannedIo { dir, len, .. } = io;
        let d = dir as usize;
        let job = &mut self.jobs[j];
        job.issued[d] += 1;
        job.issued_bytes[d] += len;
        job.in_flight += 1;
        if let Some(s) = job.stats.as_mut() {
            s.record_depth(job.in_flight);
        }
        job.bytes_issued += len;
        job.ios_since_think += 1;
        if dir == Dir::Write {
            job.writes_since_fsync += 1;
            job.writes_since_fdatasync += 1;
        }
    }

    /// What comes before context `c`'s next IO's issue, as fio times it:
    /// on an engine that queues, its submission (`slat`: the devices'
    /// `host_submit_us`, with `host_wake_us` when the job's thread slept
    /// for the context's last completion; fio's null engine's few ns past
    /// depth 1); on a synchronous one, fio's preparation of the call,
    /// which is in its `lat` and no `slat`.
    fn before_issue(&mut self, c: u32, j: usize) -> stats::Before {
        let woke = std::mem::take(&mut self.ctxs[c as usize].woke);
        let plan = &self.jobs[j].plan;
        match plan.engine {
            EngineKind::Libaio | EngineKind::IoUring => {
                stats::Before::Slat(self.host_submit_ns + if woke { self.host_wake_ns } else { 0 })
            }
            EngineKind::Null if plan.iodepth > 1 => stats::Before::Slat(NULL_SLAT_NS),
            EngineKind::Null => stats::Before::Prep(NULL_PREP_NS),
            _ => stats::Before::Prep(SYNC_PREP_NS),
        }
    }

    /// An IO that completes without the device (zonemode=zbd's trim of an
    /// empty zone): counted, done after the call's time.
    pub(crate) fn issue_instant(&mut self, now: Ns, c: u32, j: usize, io: PlannedIo) {
        self.count_issue(j, io);
        self.ctxs[c as usize].before = self.before_issue(c, j);
        let ctx = &mut self.ctxs[c as usize];
        ctx.op_start = now;
        ctx.op = OpKind::Io {
            dir: io.dir,
            bytes: io.len,
        };
        self.ctx_timer(now + NULL_DEVICE_NS, c, Phase::Cpu);
    }

    /// Context `c` of job `j` issues the IO `io`.
    pub(crate) fn issue_io(&mut self, now: Ns, c: u32, j: usize, io: PlannedIo) {
        let PlannedIo {
            dir,
            fi,
            len,
            offset,
        } = io;
        self.count_issue(j, io);
        self.ctxs[c as usize].before = self.before_issue(c, j);
        if self.jobs[j].plan.empty_reads.is_some() {
            let end = &mut self.jobs[j].written_end[fi];
            match dir {
                // The file grows as the job writes it.
                Dir::Write => *end = (*end).max(offset + len),
                // Past its end: the read returns at once with nothing.
                Dir::Read if offset >= *end => {
                    let ctx = &mut self.ctxs[c as usize];
                    ctx.op_start = now;
                    ctx.op = OpKind::Io { dir, bytes: 0 };
                    self.ctx_timer(now + EMPTY_READ_NS, c, Phase::Cpu);
                    return;
                }
                _ => {}
            }
        }
        let plan = &self.jobs[j].plan;
        let file = self.jobs[j].file_ids[fi];
        let engine = plan.engine;
        let direct = plan.direct;
        let ctx = &mut self.ctxs[c as usize];
        ctx.op_start = now;
        if engine == EngineKind::Null || plan.null_device {
            ctx.op = OpKind::Io { dir, bytes: len };
            let ns = if plan.null_device {
                NULL_DEVICE_NS
            } else {
                NULL_ENGINE_NS
            };
            self.ctx_timer(now + ns, c, Phase::Cpu);
            return;
        }
        if let Some(call) = plan
            .file_call
            .and_then(|f| crate::fs::meta::MetaCall::of_file(f, dir))
        {
            ctx.op = OpKind::Io { dir, bytes: len };
            self.file_call(now, c, j, call, io);
            return;
        }
        if dir == Dir::Write && plan.device_reads_writes {
            // SCSI VERIFY: the device reads the range; fio counts it as
            // the write it was asked for.
            self.start_direct(now, c, file, Dir::Read, offset, len);
            self.ctxs[c as usize].op = OpKind::Io { dir, bytes: len };
        } else if direct || dir == Dir::Trim {
            self.start_direct(now, c, file, dir, offset, len);
        } else if dir == Dir::Read {
            self.start_buffered_read(now, c, file, fi, offset, len);
        } else {
            self.start_buffered_write(now, c, file, offset, len);
        }
    }

    /// An O_DIRECT IO: bios straight to the device (on btrfs a write is
    /// an ordered extent too).
    pub(crate) fn start_direct(
        &mut self,
        now: Ns,
        c: u32,
        file: u32,
        dir: Dir,
        offset: u64,
        len: u64,
    ) {
        if dir == Dir::Write {
            self.btrfs_note_direct_write(c, file, offset, len);
        }
        let j = self.ctxs[c as usize].job as usize;
        let cgroup = self.jobs[j].plan.cgroup;
        let f = &self.files[file as usize];
        let (dev, place) = (f.dev, f.place);
        let (op, flags) = match dir {
            Dir::Read => (Op::Read, Flags::SYNC),
            Dir::Write => (Op::Write, Flags::SYNC.with(Flags::IDLE)),
            Dir::Trim => (Op::Discard, Flags::empty()),
        };
        if dir == Dir::Write {
            self.note_mtime(now, file);
        }
        self.ctxs[c as usize].op = OpKind::Io { dir, bytes: len };
        let mut at = offset;
        let end = offset + len;
        while at < end {
            let addr = place.device_offset(at);
            let mut n = (end - at).min(place.contiguous_from(at));
            // On a multi-device volume btrfs maps a direct-IO bio of up to
            // 1 MiB once, cut at its chunk's end; the block layer splits it
            // after the copy is chosen (`queue_mirrored`).
            let chunk = match &self.raid {
                None => {
                    n = n.min(MAX_BIO_BYTES);
                    None
                }
                Some(r) => {
                    let (chunk, left) = r
                        .map(addr)
                        .expect("the layout keeps files inside the volume");
                    n = n.min(left).min(DIO_MAP_BYTES);
                    Some(*chunk)
                }
            };
            let first = (at / PAGE) as u32;
            let count = ((at + n).div_ceil(PAGE) - at / PAGE) as u32;
            let bio = Bio {
                op,
                flags,
                dev,
                offset: addr,
                len: n,
                origin: Origin::Task(j as u32),
                cgroup,
                payload: Payload::Direct { file, first, count },
            };
            match chunk {
                None => self.ctxs[c as usize].queue.push_back((bio, true)),
                Some(chunk) => self.queue_mirrored(c, j as u32, bio, &chunk, at),
            }
            at += n;
        }
        self.ctxs[c as usize].phase = Phase::Submit;
        self.ctx_pump(now, c);
    }

    /// Queues the child bios of logical bio `bio` (at file offset
    /// `file_off`, inside `chunk`) for context `c` of job `j`: a read to the
    /// one copy the read policy picks (`btrfs_map_block`), a write or
    /// discard to every copy, each cut into bios of at most
    /// `MAX_BIO_BYTES` on that copy. The context waits for all of them, so
    /// the IO completes with its last copy.
    fn queue_mirrored(&mut self, c: u32, j: u32, bio: Bio, chunk: &MapChunk, file_off: u64) {
        let delta = bio.offset - chunk.logical;
        let copies = if bio.op == Op::Read {
            let k = self.mirror_read_copy(chunk, j, bio.len);
            k..k + 1
        } else {
            0..usize::from(chunk.copies)
        };
        for k in copies {
            let (dev, physical) = chunk.stripes[k];
            let mut done = 0;
            while done < bio.len {
                let n = (bio.len - done).min(MAX_BIO_BYTES);
                let at = file_off + done;
                let payload = match bio.payload {
                    Payload::Direct { file, .. } => Payload::Direct {
                        file,
                        first: (at / PAGE) as u32,
                        count: ((at + n).div_ceil(PAGE) - at / PAGE) as u32,
                    },
                    other => other,
                };
                let child = Bio {
                    dev,
                    offset: physical + delta + done,
                    len: n,
                    payload,
                    ..bio
                };
                self.ctxs[c as usize].queue.push_back((child, true));
                done += n;
            }
        }
    }

    /// The copy of `chunk` a read of `len` bytes by job `j` goes to, as
    /// the read policy picks it with the devices' statistics as they are
    /// now (`btrfs_map_block` → `find_live_mirror`); counted.
    pub(crate) fn mirror_read_copy(&mut self, chunk: &MapChunk, j: u32, len: u64) -> usize {
        let raid = self
            .raid
            .as_mut()
            .expect("a mapped chunk implies a multi-device volume");
        let devs = &self.devs;
        let pid = raid.pid_of(j);
        let k = raid.choose(chunk, |d| devs[usize::from(d)].part, pid, j % self.cpus);
        if raid.contract_broken.is_some() {
            self.stop = true;
        }
        raid.on_read_submitted(len);
        let dev = chunk.stripes[k].0;
        self.devs[usize::from(dev)].part.mirror_reads += 1;
        k
    }

    /// Submits the context's queued bios (or fsync writeback) until one is
    /// parked or all are out.
    pub(crate) fn ctx_pump(&mut self, now: Ns, c: u32) {
        loop {
            let next = match self.ctxs[c as usize].phase {
                Phase::SyncWriteback => self.next_sync_writeback_bio(c),
                Phase::Submit | Phase::SyncLog => self.ctxs[c as usize].queue.pop_front(),
                _ => return,
            };
            let Some((bio, wait)) = next else {
                break;
            };
            if bio.payload == Payload::LogSync {
                self.note_log_sync_submit(c, &bio);
            }
            let mut went = self.submit(now, Actor::Ctx(c), bio, wait);
            if self.ctxs[c as usize].phase == Phase::SyncWriteback {
                // The other copies of a mirrored writeback bio go out now,
                // parked or not, so any fsync finds each linked to the
                // file; the context resumes once all have requests.
                while let Some((copy, w)) = self.ctxs[c as usize].queue.pop_front() {
                    went &= self.submit(now, Actor::Ctx(c), copy, w);
                }
            }
            if !went {
                return;
            }
        }
        self.ctx_submitted(now, c);
    }

    fn ctx_submitted(&mut self, now: Ns, c: u32) {
        match self.ctxs[c as usize].phase {
            Phase::Submit => self.ctxs[c as usize].phase = Phase::Wait,
            Phase::SyncWriteback => self.sync_wait_writes(now, c),
            Phase::SyncLog => self.ctxs[c as usize].phase = Phase::SyncLogWait,
            _ => return,
        }
        if self.ctxs[c as usize].pending == 0 {
            // Nothing to wait for: go on through the event queue, never by
            // recursion (a chain of empty fsyncs would otherwise nest).
            let ctx = &mut self.ctxs[c as usize];
            ctx.generation = ctx.generation.wrapping_add(1);
            let generation = ctx.generation;
            self.q.push(now, Ev::Wake { ctx: c, generation });
        }
    }

    /// Every request context `c` waited for has completed.
    pub(crate) fn ctx_io_done(&mut self, now: Ns, c: u32) {
        if let Some(d) = self.ctxs[c as usize].direct_ordered.take() {
            self.btrfs_on_written_direct(now, d);
        }
        let ctx = &mut self.ctxs[c as usize];
        match ctx.phase {
            Phase::Wait if ctx.zbd_then.is_some() => {
                // A zone's reset is done: its write goes out.
                let io = ctx.zbd_then.take().expect("checked above");
                let j = ctx.job as usize;
                self.issue_io(now, c, j, io);
            }
            Phase::Wait => {
                if ctx.cpu_after > 0 {
                    let at = now + ctx.cpu_after;
                    ctx.cpu_after = 0;
                    self.ctx_timer(at, c, Phase::Cpu);
                } else {
                    self.op_complete(now, c);
                }
            }
            Phase::SyncWait => self.sync_after_writeback(now, c),
            Phase::SyncLogWait if !ctx.after_log.is_empty() => {
                // The log blocks are down: now the superblocks.
                self.fsync_superblock_step(now, c);
            }
            Phase::SyncLogWait => {
                if self.leads_fsync_batch(c) {
                    self.fsync_batch_done(now, c);
                }
                self.op_complete(now, c);
            }
            // Still submitting: ctx_submitted will see pending == 0.
            _ => {}
        }
    }

    /// The operation of context `c` is over: account it, go on.
    pub(crate) fn op_complete(&mut self, now: Ns, c: u32) {
        if self.reap_later(now, c) {
            return;
        }
        self.ops_done += 1;
        if self.ctxs[c as usize].phase == Phase::SyncLogLock {
            self.note_follower_done();
        }
        let ctx = &mut self.ctxs[c as usize];
        let j = ctx.job as usize;
        let lat = now - ctx.op_start;
        let before = ctx.before;
        let op = ctx.op;
        let host_until = std::mem::take(&mut ctx.host_until);
        ctx.op = OpKind::None;
        if let Some(call) = ctx.meta.take() {
            self.meta_unlock(now, call);
        }
        let ctx = &mut self.ctxs[c as usize];
        ctx.phase = Phase::Idle;
        let job = &mut self.jobs[j];
        let counted = ctx.op_start >= job.ramp_end;
        match op {
            OpKind::Io { dir, bytes, .. } => {
                job.in_flight = job.in_flight.saturating_sub(1);
                job.done_ios += 1;
                job.done_bytes += bytes;
                if job.plan.zbd.is_some() {
                    self.zbd_put_io(now, c);
                    if self.jobs[j].in_flight == 0 {
                        self.zone_quiesced(now, j);
                    }
                }
                let job = &mut self.jobs[j];
                // The last IO in flight is done: a rate wait's quiesce is
                // over, its sleep starts.
                if job.in_flight == 0
                    && let Some(g) = job.rate_gate
                    && self.ctxs[g as usize].phase == Phase::RateWait
                {
                    let at = now + job.rate_sleep;
                    self.ctx_timer(at, g, Phase::Sleep);
                }
                let job = &mut self.jobs[j];
                if counted && let Some(s) = job.stats.as_mut() {
                    let d = match dir {
                        Dir::Read => stats::Dir::Read,
                        Dir::Write => stats::Dir::Write,
                        Dir::Trim => stats::Dir::Trim,
                    };
                    s.record_io(d, now, lat, before, bytes);
                }
                self.latency_completed(now, j, lat);
                // A read that found nothing past the file's end.
                if dir == Dir::Read
                    && bytes == 0
                    && let Some(error) = self.jobs[j].plan.empty_reads
                    && error != 0
                {
                    self.job_failed(now, j, error);
                }
            }
            OpKind::Sync { .. } => {
                job.sync_busy = false;
                if counted && let Some(s) = job.stats.as_mut() {
                    s.record_sync(now, lat);
                }
                if job.state == JobState::Stopping && job.plan.end_fsync {
                    self.end_fsync_next(now, c);
                    return;
                }
            }
            OpKind::None => {}
        }
        // The thread prepares the next IO before it submits again.
        if host_until > now {
            self.ctx_timer(host_until, c, Phase::Sleep);
            return;
        }
        self.ctx_next(now, c);
    }

    /// The job's thread reaps a direct IO's completion and prepares the
    /// next one, one IO at a time (the devices' `host_io_us`, with
    /// `host_wake_us` first when the thread had gone to sleep waiting
    /// for it): this reserves that time on the thread and, when the
    /// thread is still busy with earlier completions, defers the reaping
    /// (fio's `clat` ends when the thread gets to the completion, so at
    /// depth completions queue there). The next submission waits for the
    /// reserved time to pass. Returns whether the reaping was deferred.
    fn reap_later(&mut self, now: Ns, c: u32) -> bool {
        let (host, wake) = (self.host_io_ns, self.host_wake_ns);
        let ctx = &mut self.ctxs[c as usize];
        let job = &mut self.jobs[ctx.job as usize];
        if host == 0 && wake == 0
            || ctx.phase == Phase::Reap
            || !matches!(ctx.op, OpKind::Io { .. })
            || !job.plan.direct
        {
            return false;
        }
        let slept = job.host_free < now;
        let start = job.host_free.max(now);
        let busy = host + if slept { wake } else { 0 };
        job.host_free = start + busy;
        ctx.host_until = start + busy;
        ctx.woke = slept && wake > 0;
        if ctx.op_start >= job.ramp_end
            && let Some(s) = job.stats.as_mut()
        {
            s.record_host(busy, slept);
        }
        if start > now {
            self.ctx_timer(start, c, Phase::Reap);
            return true;
        }
        false
    }

    /// Stops job `j` from starting new IO. Its contexts waiting behind a
    /// rate gate look again, and finish.
    pub(crate) fn job_stop(&mut self, now: Ns, j: u32) {
        let job = &mut self.jobs[j as usize];
        if job.state == JobState::Running {
            job.state = JobState::Stopping;
        }
        if let Some(g) = job.rate_gate {
            self.rate_gate_open(now, j as usize, g);
        }
    }

    /// Whether job `j`'s next IO in direction `dir` waits: for fio's rate
    /// pacing (not drawn again for a context woken from it, `paced`), then
    /// for its flow. A waiting context keeps `dir` planned and sleeps.
    ///
    /// fio's one thread paces as `rate_ddir` does: ahead of the rate, it
    /// first waits for every IO in flight (`io_u_quiesce`), then sleeps
    /// the time it was ahead by when it looked; so at a rate the device
    /// keeps up with, IOs go out one at a time whatever the `iodepth`.
    /// Here the context that finds the job ahead holds the job's rate
    /// gate through that wait; the job's other contexts wait behind it
    /// and look again when it has issued.
    fn io_waits(&mut self, now: Ns, c: u32, j: usize, dir: Dir, paced: bool) -> bool {
        let paced = paced && !std::mem::take(&mut self.ctxs[c as usize].rate_parked);
        if !paced {
            let job = &mut self.jobs[j];
            if job.rate_gate.is_some_and(|g| g != c) {
                job.rate_parked.push(c);
                let ctx = &mut self.ctxs[c as usize];
                ctx.planned = Some(dir);
                ctx.rate_parked = true;
                ctx.phase = Phase::RateWait;
                return true;
            }
            let earliest = job.pacing_at(now, dir as usize);
            if earliest > now {
                self.ctxs[c as usize].planned = Some(dir);
                let job = &mut self.jobs[j];
                job.rate_gate = Some(c);
                // fio's rate_ddir waits for the IOs in flight only when
                // it submits inline.
                if job.in_flight > 0 && !job.plan.offload {
                    // Quiesce first; the sleep starts when the last IO in
                    // flight completes (`op_complete`).
                    job.rate_sleep = earliest - now;
                    self.ctxs[c as usize].phase = Phase::RateWait;
                } else {
                    self.ctx_timer(earliest, c, Phase::Sleep);
                }
                return true;
            }
        }
        self.rate_gate_open(now, j, c);
        self.flow_holds(now, c, j, dir)
    }

    /// Context `c` issues past job `j`'s rate gate (if it held it): the
    /// contexts behind it look again, in the order they came.
    fn rate_gate_open(&mut self, now: Ns, j: usize, c: u32) {
        let job = &mut self.jobs[j];
        if job.rate_gate != Some(c) {
            return;
        }
        job.rate_gate = None;
        let mut parked = std::mem::take(&mut job.rate_parked);
        for &p in &parked {
            if self.ctxs[p as usize].phase == Phase::RateWait {
                self.ctx_timer(now, p, Phase::Sleep);
            }
        }
        parked.clear();
        self.jobs[j].rate_parked = parked;
    }

    /// Context `c` has nothing more to do.
    pub(crate) fn ctx_finish(&mut self, now: Ns, c: u32) {
        if self.ctxs[c as usize].phase == Phase::Done {
            return;
        }
        let j = self.ctxs[c as usize].job as usize;
        let job = &mut self.jobs[j];
        if job.state == JobState::Running {
            job.state = JobState::Stopping;
        }
        // Contexts held back by a latency target's depth finish too.
        self.depth_release(now, j);
        // A zone wait given up lets the job's other contexts go on.
        if self.ctxs[c as usize].zbd_retry.take().is_some() {
            self.zone_give_up(now, c);
            self.zone_gate_open(now, j, c);
        }
        let job = &mut self.jobs[j];
        if job.active == 1 && job.plan.end_fsync && job.end_sync_next == 0 {
            // The last context runs end_fsync over the job's files.
            self.end_fsync_next(now, c);
            return;
        }
        self.ctxs[c as usize].phase = Phase::Done;
        job.active -= 1;
        if job.active == 0 {
            self.job_end(now, j as u32);
        }
    }

    fn end_fsync_next(&mut self, now: Ns, c: u32) {
        let j = self.ctxs[c as usize].job as usize;
        let job = &mut self.jobs[j];
        if job.end_sync_next < job.file_ids.len() {
            let f = job.file_ids[job.end_sync_next];
            job.end_sync_next += 1;
            self.start_sync(now, c, f, false);
        } else {
            job.end_sync_next = usize::MAX;
            self.ctxs[c as usize].phase = Phase::Done;
            job.active -= 1;
            if job.active == 0 {
                self.job_end(now, j as u32);
            }
        }
    }

    fn job_end(&mut self, now: Ns, j: u32) {
        let job = &mut self.jobs[j as usize];
        job.state = JobState::Done;
        self.flow_job_ended(now, j as usize);
        let job = &mut self.jobs[j as usize];
        if let Some(s) = job.stats.as_mut() {
            // cpuio: its share of a CPU over the time it ran.
            if let EngineKind::Cpu(load) = job.plan.engine {
                s.record_user(now.saturating_sub(job.ramp_end) / 100 * u64::from(load));
            }
            s.finish(now.max(job.ramp_end));
        }
        let wall = job.plan.wall;
        let group = job.plan.groupid;
        if let Some(what) = job.plan.exitall {
            if what == ExitWhat::All {
                // Later stonewall sections do not start either.
                self.exit_all = true;
            }
            for k in 0..self.jobs.len() {
                let other = &self.jobs[k];
                let hit = match what {
                    ExitWhat::All => true,
                    ExitWhat::Group => other.plan.groupid == group,
                    ExitWhat::Stonewall => other.plan.wall == wall,
                };
                if hit && other.state == JobState::Running {
                    self.on_deadline(now, k as u32);
                } else if hit && other.state == JobState::Waiting && other.plan.wall == wall {
                    // Still in its startdelay: fio terminates a job it has
                    // not created yet, so it never starts.
                    self.jobs[k].state = JobState::Done;
                    self.walls_left[wall as usize] -= 1;
                }
            }
        }
        self.walls_left[wall as usize] -= 1;
        if self.jobs[j as usize].plan.wall == self.cur_wall {
            let name = self.jobs[j as usize].plan.name.clone();
            self.start_waiters(now, &name);
        }
        if self.walls_left[wall as usize] == 0 && wall == self.cur_wall {
            self.next_wall(now);
        }
    }

    /// Records a timestamp update for a write to `file` (XFS logs the
    /// inode core when the coarse clock has ticked since the last one).
    pub(crate) fn note_mtime(&mut self, now: Ns, file: u32) {
        const TICK: Ns = 4_000_000;
        let f = &mut self.files[file as usize];
        f.write_seq += 1;
        if f.mtime == 0 || now >= f.mtime + TICK {
            f.mtime = now.max(1);
            self.log_timestamp(file);
        }
    }
}

impl Ctx {
    /// An idle context of job `job`.
    pub(crate) fn new(job: u32) -> Self {
        Self {
            job,
            pending: 0,
            generation: 0,
            phase: Phase::Idle,
            op: OpKind::None,
            op_start: 0,
            queue: VecDeque::with_capacity(8),
            after_log: VecDeque::new(),
            log_in_flight: 0,
            lock_asked: 0,
            direct_ordered: None,
            meta: None,
            pending_io: None,
            sync_write_seq: 0,
            sync_file: 0,
            sync_cursor: 0,
            sync_passes: 0,
            cpu_after: 0,
            planned: None,
            rate_parked: false,
            replayed: None,
            batch: crate::block::pool::Batch::default(),
            dirty_paused: false,
            parked: 0,
            host_until: 0,
            zone_held: None,
            zbd_retry: None,
            zbd_then: None,
            zone_queued: None,
            before: stats::Before::Prep(0),
            woke: false,
        }
    }
}

/// The direction fio counts a metadata engine's calls in: reads, unless
/// the job only writes.
pub(crate) fn meta_dir(plan: &JobPlan) -> Dir {
    if plan.reads || !plan.writes {
        Dir::Read
    } else {
        Dir::Write
    }
}

impl Job {
    /// The earliest time fio's rate control (`rate`, `rate_iops`, with
    /// `rate_process=poisson` gaps) lets the job's next IO in direction
    /// `d` go out; `now` if none holds it back.
    fn pacing_at(&mut self, now: Ns, d: usize) -> Ns {
        let plan = &self.plan;
        let mut earliest = now;
        let wide = u128::from(self.issued_bytes[d]) * u128::from(SEC);
        if let Some(t) = wide.checked_div(u128::from(plan.rate[d])) {
            earliest = earliest.max(
                self.start_ns
                    .saturating_add(t.min(u128::from(u64::MAX)) as Ns),
            );
        }
        if let Some(gap) = SEC.checked_div(plan.rate_iops[d]) {
            let t = if plan.poisson {
                // Exponential gaps with the same mean (fio's poisson process).
                let t = self.next_arrival[d].max(self.start_ns);
                self.next_arrival[d] = t + self.rng.exp(gap as f64) as Ns;
                t
            } else {
                self.start_ns + self.issued[d] * gap
            };
            earliest = earliest.max(t);
        }
        earliest
    }

    /// Gives the job's fresh statistics its `iodepth` (fio's
    /// `latency_depth`).
    pub(crate) fn stats_depth(&mut self) {
        if let Some(s) = self.stats.as_mut() {
            s.latency_depth = self.plan.iodepth;
        }
    }

    /// A job clone that has not started.
    pub(crate) fn new(
        plan: JobPlan,
        rng: Stream,
        file_ids: Vec<u32>,
        gens: Vec<OffsetGen>,
        ctx_first: u32,
        nctx: u32,
    ) -> Self {
        let nfiles = file_ids.len();
        Self {
            plan,
            rng,
            file_ids,
            gens,
            cur_file: 0,
            file_left: 0,
            mix: RwMix::default(),
            stats: None,
            ctx_first,
            nctx,
            active: nctx,
            state: JobState::Waiting,
            start_ns: 0,
            ramp_end: 0,
            bytes_issued: 0,
            issued: [0; 3],
            issued_bytes: [0; 3],
            writes_since_fsync: 0,
            writes_since_fdatasync: 0,
            ios_since_think: 0,
            dirtied: 0,
            pacing: crate::cache::pacing::TaskPacing::default(),
            host_free: 0,
            end_sync_next: 0,
            sync_busy: false,
            loops_done: 0,
            meta_done: 0,
            exhausted: false,
            picked_bytes: [0; 3],
            next_arrival: [0; 3],
            flow_issued: 0,
            eof: vec![false; nfiles],
            opened: vec![false; nfiles],
            written_end: vec![0; nfiles],
            files_at_eof: 0,
            in_flight: 0,
            rate_gate: None,
            rate_sleep: 0,
            rate_parked: Vec::new(),
            replay_at: 0,
            replay_clock: 0,
            verify_cursor: None,
            unverified: 0,
            verify_batch: 0,
            verifying: false,
            verify_started: false,
            verify_parked: Vec::new(),
            done_ios: 0,
            done_bytes: 0,
            steady: None,
            latency: None,
            open_zones: 0,
            zone_gate: None,
            zone_parked: Vec::new(),
            zone_quiesce: false,
            zone_resets: 0,
        }
    }
}

impl<P: Policy> World<P> {
    /// The `[global]` options of the last job (fio's JSON "global options").
    pub(crate) fn global_options(&self) -> Vec<(String, String)> {
        self.jobs
            .last()
            .map(|j| j.plan.global_options.clone())
            .unwrap_or_default()
    }

    /// Statistics of every job clone as they stand at `at`, left running
    /// (fio's `--status-interval`): copies closed at `at`.
    pub(crate) fn job_inputs_at(&self, at: Ns) -> Vec<stats::JobInput> {
        self.jobs
            .iter()
            .map(|j| {
                let mut s = j
                    .stats
                    .as_ref()
                    .map_or_else(|| j.stats_from(0), JobStats::without_series);
                if !s.is_finished() {
                    s.finish(at.max(s.start_ns()));
                }
                j.input(s)
            })
            .collect()
    }

    /// Statistics of every job clone, closed at `end` for jobs still running.
    pub(crate) fn job_inputs(&mut self, end: Ns) -> Vec<stats::JobInput> {
        self.jobs
            .iter_mut()
            .map(|j| {
                let mut s = j.stats.take().unwrap_or_else(|| j.stats_from(0));
                if j.state != JobState::Done {
                    s.finish(end.max(j.ramp_end));
                }
                j.input(s)
            })
            .collect()
    }
}

impl Job {
    /// Fresh statistics of the clone from `start` on, at its log window
    /// and sample periods.
    pub(crate) fn stats_from(&self, start: Ns) -> JobStats {
        let p = &self.plan.percentiles;
        JobStats::new(start, self.plan.log_avg, self.plan.bw_sample)
            .with_iops_sample(self.plan.iops_sample)
            .with_histograms(p.slat, p.lat)
            .with_hist_log(self.plan.hist_log)
    }

    /// The clone's statistics `s` as the report takes them.
    fn input(&self, mut s: JobStats) -> stats::JobInput {
        s.latency_depth = self.plan.iodepth;
        s.steady = self.steady.as_ref().and_then(|ss| ss.report());
        if self.plan.zbd.is_some() {
            s.zone_resets = Some(self.zone_resets);
        }
        if let Some(l) = &self.latency {
            s.latency_depth = l.qd;
            s.latency_target = Some(l.target);
        }
        stats::JobInput {
            name: self.plan.name.clone(),
            groupid: self.plan.groupid,
            group_reporting: self.plan.group_reporting,
            options: self.plan.options.clone(),
            percentiles: self.plan.percentiles.clone(),
            unified: self.plan.unified,
            stats: s,
        }
    }
}

impl<P: Policy> World<P> {
    /// The share of the run's work done at `now` (see
    /// [`RunProgress`](crate::RunProgress)).
    pub(crate) fn share_done(&self, now: Ns) -> f64 {
        let sections = self.walls_left.len().max(1) as f64;
        let (mut sum, mut n) = (0.0, 0u32);
        for job in self.jobs.iter().filter(|j| j.plan.wall == self.cur_wall) {
            n += 1;
            sum += match job.state {
                JobState::Waiting => 0.0,
                JobState::Done => 1.0,
                JobState::Running | JobState::Stopping => {
                    let by_time = job.plan.runtime.map_or(0.0, |rt| {
                        now.saturating_sub(job.start_ns) as f64 / (rt + job.plan.ramp).max(1) as f64
                    });
                    let by_bytes = job
                        .plan
                        .io_limit
                        .map_or(0.0, |l| job.bytes_issued as f64 / l.max(1) as f64);
                    by_time.max(by_bytes).min(1.0)
                }
            };
        }
        let section = if n == 0 { 1.0 } else { sum / f64::from(n) };
        ((f64::from(self.cur_wall) + section) / sections).min(1.0)
    }
}
