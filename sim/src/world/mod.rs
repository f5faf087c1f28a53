//! The simulated machine: one event loop driving the workload, the page
//! cache, the filesystem, the block layer and the devices.
//!
//! `World` is split by concept into files, each adding methods:
//! `block` (submission, tags, dispatch, flush sequencing, completion),
//! `cache` (buffered reads and writes, readahead, `balance_dirty_pages`,
//! the flusher, `fsync`), `journal` (log forces, background pushes) and
//! `job` (the fio job clones). Everything runs on one thread; there is no
//! re-entrancy: work that would complete synchronously inside a submission
//! is posted as an event at the same instant instead.

mod block;
mod btrfs;
mod cache;
mod flow;
mod issue;
mod job;
mod journal;
mod latency;
mod meta;
mod pick;
mod replay;
mod steady;

pub(crate) use job::{NULL_DEVICE_NS, NULL_ENGINE_NS};
mod verify;
mod zbd;

use std::collections::VecDeque;

use crate::block::deadline::Deadline;
use crate::block::flush::FlushQueue;
use crate::block::pool::{Batch, LEGACY_NR_REQUESTS, PoolRules, Pools};
use crate::block::request::{Bio, Request};
use crate::block::{DeviceInfo, Policy};
use crate::cache::PageCache;
use crate::cache::dirty::{BdpMode, WRITEBACK_INTERVAL_NS};
use crate::device::{DevCtx, Device};
use crate::engine::EventQueue;
use crate::fs::FsFile;
use crate::fs::btrfs::volume::{PartStat, Raid};
use crate::fs::journal::Journal;
use crate::slab::Slab;
use crate::time::Ns;
use crate::world::job::Phase;
use crate::world::journal::LOG_WORKER_INTERVAL_NS;

pub(crate) use btrfs::BtrfsState;
pub(crate) use job::{Ctx, Job};
pub(crate) use meta::DirLock;

/// Something that submits bios and may be parked while doing so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Actor {
    /// A job's IO context.
    Ctx(u32),
    /// The writeback flusher.
    Flusher,
    /// The journal's background work (CIL push, AIL writeback).
    Journal,
}

/// A bio waiting for the policy or for a tag.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Parked {
    pub bio: Bio,
    pub actor: Actor,
    /// The actor (a context) waits for this request's completion.
    pub wait: bool,
    pub submit_ns: Ns,
    /// Contexts waiting for this bio (fsync of its file).
    pub waiters: u32,
    /// The file's list of parked writeback bios.
    pub file_next: u32,
    pub file_prev: u32,
}

/// One context waiting for one request.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WaitNode {
    pub ctx: u32,
    pub next: u32,
}

/// Events of the loop.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    /// A device completed the command with this tag.
    DevDone { dev: u16, tag: u32 },
    /// A device asked to be called back.
    DevWake { dev: u16 },
    /// A request that needs no device work completes.
    RqDone { rq: u32 },
    /// A context's timer (think time, CPU time, pauses); stale if `gen`
    /// differs from the context's.
    Wake { ctx: u32, generation: u32 },
    /// A job's runtime ended.
    Deadline { job: u32 },
    /// A job's ramp ended.
    RampEnd { job: u32 },
    /// A delayed job's `startdelay` is over.
    JobStart { job: u32 },
    /// The periodic writeback timer.
    Kupdate,
    /// fio's once-a-second steady-state check (`world::steady`).
    SteadyTick,
    /// xfs-lite's periodic log work (`xfs_log_worker`).
    LogWorker,
    /// Re-check a held-back cache flush.
    FlushKick { dev: u16 },
    /// The policy's deadline.
    PolicyTimer,
    /// btrfs: the flush model's deadline.
    FsTimer,
    /// btrfs: a flush-model job's work is done.
    FsWork { job: u64 },
    /// btrfs: an endio worker finished its CPU work.
    OeCpu { worker: u32 },
    /// btrfs: sample the time series.
    FsSample,
    /// btrfs: a `shrink_delalloc` job's jiffy or ordered wait is over.
    FsDelalloc { job: u64 },
}

/// The request layer and IO scheduler of a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum SchedKind {
    /// blk-mq pass-through (`none`).
    None,
    /// blk-mq with `mq-deadline`.
    MqDeadline,
    /// The 2016 legacy request layer with `noop` (kernel 4.x `block/blk-core.c`).
    SqNoop,
    /// The legacy request layer with `deadline` (mq-deadline's constants).
    SqDeadline,
}

/// Host-side state of one device: tags, dispatch list, flush sequencer.
pub(crate) struct DevQueue {
    pub dev: Device,
    pub free_tags: Vec<u32>,
    /// Request index per tag; `FLUSH_OWNER` while a FLUSH borrows it.
    pub owner: Vec<u32>,
    pub dispatch: VecDeque<u32>,
    pub flushq: FlushQueue,
    pub flush_tag: u32,
    /// Request whose tag the FLUSH borrowed (`NO_TAG`: a pool tag).
    pub flush_lender: u32,
    pub flush_kick_at: Option<Ns>,
    /// Request slots (`nr_requests`; two pools in the legacy layer).
    pub pools: Pools,
    /// Bios waiting for a request slot, FIFO per pool.
    pub pool_wait: [VecDeque<u32>; 2],
    /// Requests take their driver tag at allocation (blk-mq without a
    /// scheduler) rather than at dispatch.
    pub tag_at_alloc: bool,
    /// The deadline scheduler, if any (else requests dispatch in order).
    pub sched: Option<Deadline>,
    pub counters: DevCounters,
    /// Issue to completion, as the block events show it.
    pub issue: issue::IssueStats,
    /// `part_stat`: what the read-mirror policies see of this device.
    pub part: PartStat,
}

/// Per-device counters for the report.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct DevCounters {
    /// Read commands completed.
    pub reads: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Write commands completed.
    pub writes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// FLUSH commands completed.
    pub flushes: u64,
    /// Nanoseconds with a FLUSH outstanding.
    pub flush_ns: u64,
    /// Discards.
    pub discards: u64,
}

pub(crate) const FLUSH_OWNER: u32 = u32::MAX - 1;
/// Writeback timer ticks (5 s each) without progress before a run is
/// declared stalled: ten simulated minutes.
const STALL_TICKS: u32 = 120;
/// Events at one simulated instant before a run is declared livelocked:
/// far more than any burst of same-time completions, wakes and timers
/// (every context, tag and device at once is a few thousand), so only a
/// loop that never lets time advance gets here.
const LIVELOCK_EVENTS: u64 = 10_000_000;
/// A FLUSH waiting in the dispatch list.
pub(crate) const FLUSH_ITEM: u32 = u32::MAX - 1;
/// A request without a driver tag.
pub(crate) const NO_TAG: u32 = u32::MAX;

/// Adapter handing device callbacks to the event queue.
pub(crate) struct Sched<'a> {
    pub q: &'a mut EventQueue<Ev>,
    pub dev: u16,
}

impl DevCtx for Sched<'_> {
    #[inline]
    fn complete_at(&mut self, at: Ns, tag: u32) {
        self.q.push(at, Ev::DevDone { dev: self.dev, tag });
    }
    #[inline]
    fn wake_at(&mut self, at: Ns) {
        self.q.push(at, Ev::DevWake { dev: self.dev });
    }
}

/// The writeback flusher (one per device; the run has one filesystem).
#[derive(Debug, Default)]
pub(crate) struct Flusher {
    pub running: bool,
    pub kupdate: bool,
    pub cur: Option<u32>,
    pub cursor: u32,
    pub slice_left: u32,
    pub wrapped: bool,
    /// Files visited in a row without finding a page to write.
    pub fruitless: usize,
    /// Idle until a writeback completes.
    pub wait_writeback: bool,
    /// Pages to write back whatever the thresholds say (btrfs's
    /// `FLUSH_DELALLOC` states).
    pub forced: u64,
    /// Request batching state (legacy layer).
    pub batch: Batch,
    /// Scratch room for the other copies of a writeback bio on a
    /// mirrored volume (kept to reuse its allocation).
    pub copies: VecDeque<(Bio, bool)>,
    /// Its bios waiting for a request slot (more than one only on a
    /// mirrored volume, whose copies are submitted together).
    pub parked: u32,
    /// Writeback bios and pages taken from the page cache: once each,
    /// however many copies a mirrored volume writes (the devices'
    /// `part_stat` count every copy).
    pub bios: u64,
    pub pages: u64,
}

/// The journal's background actor.
#[derive(Debug, Default)]
pub(crate) struct JournalActor {
    pub queue: VecDeque<Bio>,
    pub ail_left: u32,
    pub ail_running: bool,
    /// The log worker asked for every checkpoint to be written back
    /// (`xfs_ail_push_all`), not only enough to keep a quarter free.
    pub push_all: bool,
    /// Checkpoints being written: (sequence, iclog writes outstanding).
    pub ckpt_out: VecDeque<(u64, u32)>,
    /// iclog writes waiting for a free iclog buffer, in log order.
    pub iclogs: VecDeque<Bio>,
    /// iclog writes submitted and not yet completed.
    pub iclogs_in_flight: u32,
    /// Every checkpoint up to this sequence is on the device.
    pub durable_seq: u64,
    /// Contexts waiting for a checkpoint: (sequence, context).
    pub seq_waiters: Vec<(u64, u32)>,
    pub ail_cursor: u64,
    pub blocked: bool,
    /// Request batching state (legacy layer).
    pub batch: Batch,
}

/// Dirty-throttling state shared by writers.
#[derive(Debug)]
pub(crate) struct Bdp {
    pub mode: BdpMode,
    /// The writeback device's estimates (one device).
    pub wb: crate::cache::wb::Wb,
    /// Passes above the free-run line whose pause was too short to sleep
    /// (the kernel traces these with `pause` ≤ 0).
    pub unpaused: u64,
    /// The pauses slept, one value each (their count and sum are the
    /// report's `dirty_pauses` and `dirty_pause_ns`).
    pub pause_lengths: crate::stats::LatAcc,
}

/// The whole simulated machine.
pub(crate) struct World<P: Policy> {
    pub q: EventQueue<Ev>,
    pub policy: P,
    pub devs: Vec<DevQueue>,
    pub rqs: Slab<Request>,
    pub parked: Slab<Parked>,
    pub waits: Slab<WaitNode>,
    /// Per mirrored writeback bio: its copies still in flight.
    pub copy_groups: Slab<u8>,
    pub cache: PageCache,
    pub files: Vec<FsFile>,
    pub journal: Journal,
    /// btrfs's volume: the chunk map and read policy (`None`: no btrfs,
    /// one device addressed directly). Set together with `btrfs`.
    pub raid: Option<Raid>,
    /// With a volume: each device's reads sent by the read policy so far,
    /// once a second with btrfs's series (`[ms, device 0, device 1, …]`).
    pub mirror_reads_series: Vec<Vec<u64>>,
    /// btrfs's flush model and its glue (`--fs btrfs`, any `--volume`).
    pub btrfs: Option<Box<btrfs::BtrfsState>>,
    /// CPUs of the machine (job `k` submits on CPU `k mod cpus`).
    pub cpus: u32,
    /// Host time per direct IO outside its completion latency (the
    /// devices' `host_io_us`, the largest of a volume's).
    pub host_io_ns: Ns,
    /// Host time to wake a thread that slept for a direct IO's completion
    /// (the devices' `host_wake_us`, the largest of a volume's).
    pub host_wake_ns: Ns,
    /// The part of `host_io_ns` an engine that queues spends submitting
    /// (its IOs' `slat`; the devices' `host_submit_us`).
    pub host_submit_ns: Ns,
    pub jn: JournalActor,
    /// A volume's transaction commits and `tree_log_mutex`.
    pub commit: btrfs::commit::CommitActor,
    pub flusher: Flusher,
    pub bdp: Bdp,
    pub jobs: Vec<Job>,
    pub ctxs: Vec<Ctx>,
    pub policy_timer: Option<Ns>,
    pub scratch: Vec<u32>,
    pub walls_left: Vec<u32>,
    pub cur_wall: u32,
    pub journal_on: bool,
    pub events: u64,
    pub stop: bool,
    /// An `exit_what=all` job ended: no further stonewall section starts.
    pub exit_all: bool,
    /// Operations completed by all jobs.
    pub ops_done: u64,
    /// Metadata engines' calls, by `fs::meta::CALLS`.
    pub meta_counts: [u64; crate::fs::meta::CALLS.len()],
    /// fio's flows (`flow_id`s some job takes part in), built at the
    /// run's start.
    pub(crate) flows: Vec<flow::FlowState>,
    /// The directories metadata calls change, one lock each.
    pub dir_locks: Vec<DirLock>,
    /// The files' inode locks the file-call engines' calls take (empty
    /// when no job has such an engine).
    pub inode_locks: Vec<DirLock>,
    /// zonemode=zbd's zoned devices (`world::zbd`), and each file's
    /// (`u32::MAX`: not zoned; empty when no job is zoned).
    pub(crate) zoned: Vec<zbd::ZonedDisk>,
    pub(crate) zoned_of: Vec<u32>,
    /// Contexts to wake for zones a placing freed (`world::zbd`).
    pub(crate) zone_wakes: Vec<u32>,
    /// Device completions.
    pub events_dev: u64,
    watch_last: u64,
    watch_idle: u32,
    /// The watchdog ended the run.
    pub stalled: bool,
    /// Events handled at the current instant, and the instant.
    same_instant: (Ns, u64),
    /// The run was stopped because simulated time stopped advancing.
    pub livelocked: bool,
    /// Operations after which the run stops ([`crate::Scenario::io_budget`]).
    pub io_budget: u64,
    /// The run was stopped at its budget.
    pub over_budget: bool,
    /// fio's `--status-interval`: the report as it stood at every
    /// multiple of it (built there, without its latency series, so a long
    /// run keeps only the figures), and how groups sum bandwidth.
    pub status_every: Option<(Ns, crate::stats::GroupBwMode)>,
    pub status: Vec<(Ns, crate::stats::RunReport)>,
}

impl<P: Policy> World<P> {
    /// A machine with `devices`, `mem_bytes` of RAM and `policy` on the
    /// block layer.
    pub fn new(
        devices: Vec<Device>,
        mem_bytes: u64,
        policy: P,
        journal: Journal,
        bdp: BdpMode,
        journal_on: bool,
        sched: SchedKind,
    ) -> Self {
        let mut devs = Vec::with_capacity(devices.len());
        let mut total_qd = 0usize;
        for dev in devices {
            let qd = dev.queue_depth();
            total_qd += qd as usize;
            devs.push(DevQueue {
                dev,
                free_tags: (0..qd).rev().collect(),
                owner: vec![u32::MAX; qd as usize],
                dispatch: VecDeque::with_capacity(qd as usize + 1),
                flushq: FlushQueue::new(),
                flush_tag: u32::MAX,
                flush_lender: NO_TAG,
                flush_kick_at: None,
                pools: match sched {
                    SchedKind::None => Pools::new(PoolRules::Mq, qd),
                    // nr_requests = 2 * min(queue depth, 128) (blk-mq-sched).
                    SchedKind::MqDeadline => Pools::new(PoolRules::Mq, 2 * qd.min(128)),
                    SchedKind::SqNoop | SchedKind::SqDeadline => {
                        Pools::new(PoolRules::Legacy, LEGACY_NR_REQUESTS)
                    }
                },
                pool_wait: [VecDeque::with_capacity(64), VecDeque::with_capacity(64)],
                tag_at_alloc: sched == SchedKind::None,
                sched: match sched {
                    SchedKind::None | SchedKind::SqNoop => None,
                    SchedKind::MqDeadline | SchedKind::SqDeadline => Some(Deadline::new()),
                },
                counters: DevCounters::default(),
                issue: issue::IssueStats::default(),
                part: PartStat::default(),
            });
        }
        Self {
            q: EventQueue::with_capacity(total_qd * 2 + 64),
            policy,
            devs,
            rqs: Slab::with_capacity(total_qd + 8),
            parked: Slab::with_capacity(64),
            waits: Slab::with_capacity(total_qd + 8),
            copy_groups: Slab::with_capacity(0),
            cache: PageCache::new(mem_bytes),
            files: Vec::new(),
            journal,
            raid: None,
            mirror_reads_series: Vec::new(),
            btrfs: None,
            cpus: 1,
            host_io_ns: 0,
            host_submit_ns: 0,
            host_wake_ns: 0,
            jn: JournalActor::default(),
            commit: btrfs::commit::CommitActor::default(),
            flusher: Flusher::default(),
            bdp: Bdp {
                mode: bdp,
                wb: crate::cache::wb::Wb::default(),
                unpaused: 0,
                pause_lengths: crate::stats::LatAcc::default(),
            },
            jobs: Vec::new(),
            ctxs: Vec::new(),
            policy_timer: None,
            scratch: Vec::with_capacity(64),
            walls_left: Vec::new(),
            cur_wall: 0,
            journal_on,
            events: 0,
            stop: false,
            exit_all: false,
            ops_done: 0,
            meta_counts: [0; crate::fs::meta::CALLS.len()],
            flows: Vec::new(),
            dir_locks: Vec::new(),
            inode_locks: Vec::new(),
            zoned: Vec::new(),
            zoned_of: Vec::new(),
            zone_wakes: Vec::new(),
            events_dev: 0,
            watch_last: 0,
            watch_idle: 0,
            stalled: false,
            same_instant: (0, 0),
            livelocked: false,
            io_budget: u64::MAX,
            over_budget: false,
            status_every: None,
            status: Vec::new(),
        }
    }

    /// Facts the policy needs about device 0.
    pub fn device_info(&self) -> DeviceInfo {
        let d = &self.devs[0].dev;
        DeviceInfo {
            queue_depth: d.queue_depth(),
            rotational: d.rotational(),
            write_cache: d.write_cache(),
        }
    }

    /// Runs until every job ended; `cgroups` are the run's groups for the
    /// policy. `progress` is called now and then with how far it has come.
    pub fn run(
        &mut self,
        cgroups: &[crate::block::Cgroup],
        progress: &mut dyn FnMut(crate::scenario::RunProgress),
    ) {
        let info = self.device_info();
        self.policy.attach(0, &info);
        self.policy.cgroups(0, cgroups);
        self.arm_policy_timer();
        self.q.push(WRITEBACK_INTERVAL_NS, Ev::Kupdate);
        if self.journal_on {
            self.q.push(LOG_WORKER_INTERVAL_NS, Ev::LogWorker);
        }
        self.build_flows();
        self.steady_setup();
        self.start_wall(0);
        let mut next_progress: Ns = 0;
        let mut next_status = self.status_every.map_or(Ns::MAX, |s| s.0);
        while !self.stop {
            let Some((now, ev)) = self.q.pop() else {
                break;
            };
            while now >= next_status {
                // Everything up to the status time is in: take the jobs'
                // statistics as they stand there.
                if let Some((every, mode)) = self.status_every {
                    let inputs = self.job_inputs_at(next_status);
                    let mut report = crate::stats::RunReport::build(inputs, mode);
                    report.series.clear();
                    self.status.push((next_status, report));
                    next_status = next_status.saturating_add(every);
                }
            }
            self.events += 1;
            if now == self.same_instant.0 {
                self.same_instant.1 += 1;
                if self.same_instant.1 > LIVELOCK_EVENTS {
                    self.livelocked = true;
                    self.stop = true;
                }
            } else {
                self.same_instant = (now, 1);
            }
            if now >= next_progress {
                progress(crate::scenario::RunProgress {
                    now,
                    done: self.share_done(now),
                });
                next_progress = now + crate::time::SEC;
            }
            self.dispatch_event(now, ev);
            if self.ops_done >= self.io_budget {
                self.over_budget = !self.jobs.iter().all(|j| j.state == job::JobState::Done);
                self.stop = self.over_budget;
                // Every job done: what is left (writeback) runs on,
                // unchecked.
                self.io_budget = u64::MAX;
            }
        }
    }

    fn dispatch_event(&mut self, now: Ns, ev: Ev) {
        match ev {
            Ev::DevDone { dev, tag } => {
                self.events_dev += 1;
                self.on_device_done(now, dev, tag);
            }
            Ev::DevWake { dev } => {
                let d = &mut self.devs[dev as usize];
                let mut s = Sched {
                    q: &mut self.q,
                    dev,
                };
                d.dev.on_wake(now, &mut s);
            }
            Ev::RqDone { rq } => self.complete_request(now, rq),
            Ev::Wake { ctx, generation } => {
                if self.ctxs[ctx as usize].generation == generation {
                    self.on_ctx_timer(now, ctx);
                }
            }
            Ev::Deadline { job } => self.on_deadline(now, job),
            Ev::RampEnd { job } => self.on_ramp_end(now, job),
            Ev::JobStart { job } => self.on_job_start(now, job),
            Ev::LogWorker => {
                self.on_log_worker(now);
                self.q.push(now + LOG_WORKER_INTERVAL_NS, Ev::LogWorker);
            }
            Ev::SteadyTick => {
                self.steady_tick(now);
                self.q.push(now + steady::TICK_NS, Ev::SteadyTick);
            }
            Ev::Kupdate => {
                self.flusher.kupdate = true;
                self.flusher_wake(now);
                self.q.push(now + WRITEBACK_INTERVAL_NS, Ev::Kupdate);
                self.watchdog();
            }
            Ev::FlushKick { dev } => {
                if self.devs[dev as usize].flush_kick_at == Some(now) {
                    self.devs[dev as usize].flush_kick_at = None;
                    self.flush_kick(now, dev);
                }
            }
            Ev::PolicyTimer => {
                if self.policy_timer == Some(now) {
                    self.policy_timer = None;
                    self.policy.timer(now);
                    self.drain_policy_wakes(now);
                    self.arm_policy_timer();
                }
            }
            Ev::FsTimer => self.btrfs_on_timer(now),
            Ev::FsWork { job } => self.btrfs_on_work(now, job),
            Ev::OeCpu { worker } => self.btrfs_on_oe_cpu(now, worker),
            Ev::FsSample => self.btrfs_on_sample(now),
            Ev::FsDelalloc { job } => self.btrfs_on_delalloc(now, job),
        }
    }

    /// Ends a run in which nothing has completed for ten simulated minutes
    /// while jobs remain (every submitter parked for good, only timers
    /// left): such a run would otherwise never end.
    ///
    /// Waiting that the input asked for is not a stall: a job sleeping to
    /// a time it was given (`thinktime`, a `rate` gap, `startdelay`), or
    /// spending CPU, or a device command still in flight (its completion
    /// is scheduled) is progress to come, however far off.
    fn watchdog(&mut self) {
        let progress = self.ops_done + self.events_dev;
        let scheduled = self
            .ctxs
            .iter()
            .any(|c| matches!(c.phase, Phase::Sleep | Phase::Cpu | Phase::Reap))
            || self.devs.iter().any(|d| d.dev.inflight() > 0)
            || self.jobs.iter().any(|j| {
                // A job of this section still in its startdelay.
                j.state == job::JobState::Waiting
                    && j.plan.wall == self.cur_wall
                    && j.plan.start_delay > self.q.now()
            });
        if scheduled {
            self.watch_last = progress;
            self.watch_idle = 0;
        } else if progress == self.watch_last {
            self.watch_idle += 1;
            if self.watch_idle >= STALL_TICKS {
                self.stalled = true;
                self.stop = true;
            }
        } else {
            self.watch_last = progress;
            self.watch_idle = 0;
        }
    }

    /// Schedules the policy's next deadline if it moved.
    pub fn arm_policy_timer(&mut self) {
        let want = self.policy.next_deadline();
        if want != self.policy_timer {
            self.policy_timer = want;
            if let Some(t) = want {
                let t = t.max(self.q.now());
                self.policy_timer = Some(t);
                self.q.push(t, Ev::PolicyTimer);
            }
        }
    }

    /// The request batching state of `actor`.
    pub fn batch_mut(&mut self, actor: Actor) -> &mut Batch {
        match actor {
            Actor::Ctx(c) => &mut self.ctxs[c as usize].batch,
            Actor::Flusher => &mut self.flusher.batch,
            Actor::Journal => &mut self.jn.batch,
        }
    }

    /// Resumes an actor whose parked bio just got its request.
    pub fn resume_actor(&mut self, now: Ns, actor: Actor) {
        match actor {
            // Not while another of its bios waits: an actor goes on when
            // all of a mirrored bio's copies have requests.
            Actor::Ctx(c) if self.ctxs[c as usize].parked > 0 => {}
            Actor::Ctx(c) => self.ctx_pump(now, c),
            Actor::Flusher if self.flusher.parked > 0 => {}
            Actor::Flusher => self.flusher_pump(now),
            Actor::Journal => {
                self.jn.blocked = false;
                self.journal_pump(now);
            }
        }
    }
}

impl<P: Policy> World<P> {
    /// The JSON `iolab` object: what fio has no field for.
    pub fn extra_json(
        &self,
        scenario: &crate::scenario::Scenario,
        variant: &str,
        cgroups: &[crate::block::Cgroup],
    ) -> serde_json::Value {
        use serde_json::json;
        let names: Vec<&str> = match &scenario.volume {
            Some(v) => v.devices.iter().map(|d| d.name.as_str()).collect(),
            None => vec![scenario.device.name.as_str()],
        };
        let devices: Vec<serde_json::Value> = self
            .devs
            .iter()
            .enumerate()
            .map(|(i, d)| {
                json!({
                    "name": names.get(i).copied().unwrap_or_default(),
                    "capacity": d.dev.capacity(),
                    "queue_depth": d.dev.queue_depth(),
                    "counters": d.counters,
                    "queue": d.issue.json(self.q.now()),
                    "disk": d.issue.disk_json(self.q.now()),
                })
            })
            .collect();
        let j = &self.journal.stats;
        json!({
            "version": env!("CARGO_PKG_VERSION"),
            "seed": scenario.seed,
            "variant": variant,
            "policy": self.policy.name(),
            "policy_report": self.policy.report(),
            "device": match &scenario.volume {
                Some(v) => format!(
                    "{}:{}",
                    v.profile.name(),
                    v.devices.iter().map(|d| d.name.as_str()).collect::<Vec<_>>().join(",")
                ),
                None => scenario.device.name.clone(),
            },
            "memory_bytes": scenario.mem_bytes,
            "fs": scenario.fs,
            "scheduler": scenario.scheduler,
            "sim_ns": self.q.now(),
            "events": self.events,
            "devices": devices,
            "cgroups": cgroups,
            "btrfs": self.btrfs_report(),
            "directory_lock": {
                "contended": self.dir_locks.iter().map(|d| d.contended).sum::<u64>(),
                "wait_ns_sum": self.dir_locks.iter().map(|d| d.wait_ns).sum::<u64>(),
                "wait_ns_max": self.dir_locks.iter().map(|d| d.wait_max_ns).max().unwrap_or(0),
            },
            "inode_lock": (!self.inode_locks.is_empty()).then(|| json!({
                "contended": self.inode_locks.iter().map(|d| d.contended).sum::<u64>(),
                "wait_ns_sum": self.inode_locks.iter().map(|d| d.wait_ns).sum::<u64>(),
                "wait_ns_max": self.inode_locks.iter().map(|d| d.wait_max_ns).max().unwrap_or(0),
            })),
            "metadata_calls": crate::fs::meta::CALLS
                .iter()
                .zip(self.meta_counts)
                .filter(|&(_, n)| n > 0)
                .map(|(c, n)| (c.name().to_owned(), serde_json::Value::from(n)))
                .collect::<serde_json::Map<_, _>>(),
            "volume": self.raid.as_ref().map(|r| json!({
                "profile": r.profile().name(),
                "data_chunks": r.chunks(),
                "logical_bytes": r.capacity(),
                "read_policy": r.policy_name(),
                "mirror_choices": r.choices,
                "allocator": r.alloc_name(),
                "system_chunk": chunk_json(r.mkfs_chunks().0),
                "metadata_chunk": chunk_json(r.mkfs_chunks().1),
                "metadata_chunks": r.metadata_chunks().iter().map(|m| {
                    let mut c = chunk_json(&m.map);
                    c["used"] = m.used.into();
                    c
                }).collect::<Vec<_>>(),
                "metadata_used_bytes": r.metadata_use().0,
                "metadata_total_bytes": r.metadata_total(),
                "overlapping_extents": r.overlapping_extents(),
                "metadata_chunks_refused": r.metadata_use().2,
                "first_data_chunk": r.map(0).map(|(c, _)| chunk_json(c)),
                // The chunk map's head, as `iolab kernel summary` shows a
                // real one: which device holds each chunk's stripe 0 is
                // what `read=pid` reads.
                "data_chunk_map": r.data_chunks().iter().take(DATA_CHUNKS_LISTED).map(|c| serde_json::json!({
                    "logical": c.logical,
                    "length": c.len,
                    "stripe_devices": c.stripes[..usize::from(c.copies)].iter().map(|s| s.0).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
                "log_syncs": r.log_syncs,
                "fsync_unseen_copies": r.fsync_unseen_copies,
                "supers_before_log": r.supers_before_log,
                "commits": self.commit.stats,
                "devices": self.devs.iter().map(|d| d.part).collect::<Vec<_>>(),
                "mirror_reads_series": self.mirror_reads_series,
            })),
            "page_cache": {
                "capacity_pages": self.cache.capacity,
                "cached_pages": self.cache.nr_cached,
                "dirty_pages": self.cache.nr_dirty,
                "writeback_pages": self.cache.nr_writeback,
                "bg_thresh_pages": self.cache.limits.bg_thresh,
                "thresh_pages": self.cache.limits.thresh,
                "dirty_pauses": self.bdp.pause_lengths.n,
                "dirty_pause_ns": u64::try_from(self.bdp.pause_lengths.sum).unwrap_or(u64::MAX),
                // As the kernel's `balance_dirty_pages` records count them.
                "dirty_throttle": {
                    "passes": self.bdp.pause_lengths.n + self.bdp.unpaused,
                    "unpaused": self.bdp.unpaused,
                    "pause_ns": self.bdp.pause_lengths.spread_json(),
                },
                "flusher_bios": self.flusher.bios,
                "flusher_pages": self.flusher.pages,
            },
            "journal": {
                "log_bytes": self.journal.log_size,
                "transactions": j.transactions,
                "conversions": j.conversions,
                "forces": j.forces,
                "checkpoints": j.checkpoints,
                "log_writes": j.log_writes,
                "log_writes_max_in_flight": j.log_writes_max_in_flight,
                "bare_flushes": j.bare_flushes,
                "ail_writes": j.ail_writes,
                "ail_done": j.ail_done,
                "log_used_bytes": self.journal.used,
            },
        })
    }
}

/// Data chunks listed in the report's `data_chunk_map` (the first ones;
/// `data_chunks` counts them all).
const DATA_CHUNKS_LISTED: usize = 64;

/// A chunk in the report: its copies as (device index, physical offset)
/// and its length.
fn chunk_json(c: &crate::fs::btrfs::volume::MapChunk) -> serde_json::Value {
    serde_json::json!({
        "len": c.len,
        "copies": c.stripes[..usize::from(c.copies)]
            .iter()
            .map(|&(dev, physical)| serde_json::json!({"device": dev, "physical": physical}))
            .collect::<Vec<_>>(),
    })
}
