//! A run: parsed jobs, a device, memory and a seed in; a report out.
//!
//! [`Scenario`] holds everything a run depends on. [`run`] builds the
//! simulated machine for one [`Variant`], runs it and returns the fio-shaped
//! report plus iolab's own counters. Same scenario and seed, same output,
//! byte for byte.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::block::{Cgroup, NoPolicy, Policy};
use crate::cache::dirty::BdpMode;
use crate::device::{Device, DeviceConfig, ZonedParams};
use crate::fio::iolog::LogAction;
use crate::fio::{self, JobSpec};
use crate::fs::btrfs::transaction::FULL_COMMIT_STREAM;
use crate::fs::btrfs::volume::{Member, Raid, SECTORSIZE};
use crate::fs::journal::{Journal, log_size_for};
use crate::fs::{self, Layout, PAGE, Prep};
use crate::policies::iocost::{IocostKnobs, IocostPolicy};
use crate::policies::wbt::{WbtKnobs, WbtPolicy};
use crate::rng::{Entity, Stream};
use crate::stats::{GroupBwMode, RunReport};
use crate::time::{MS, Ns};
use crate::variant::{BlockChoice, Variant};
use crate::volume::Volume;
use crate::workload::{self, EngineKind, FilePlan, JobPlan, OffsetGen, Skew, ZetaCache, ZoneIndex};
pub use crate::world::SchedKind;
use crate::world::{Ctx, Job, World};
use iolab_iocost::Variant as IocostVariant;
use iolab_tiering::ReadPolicyConfig;
use iolab_wbt::Variant as WbtVariant;

/// Which filesystem sits on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum FsKind {
    /// XFS-like journal (default).
    XfsLite,
    /// No journal: fsync is data writeback plus a cache flush.
    Raw,
    /// btrfs (`fs::btrfs`), one model on one device or a `--volume`: the
    /// chunk map and the read policy, reservations and tickets per
    /// `write()` in the `iolab-flush` model, ordered extents queueing
    /// delayed refs, flush states, the log tree and fsync, commits.
    Btrfs,
}

/// Everything one run depends on.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Job sections as parsed.
    pub jobs: Vec<JobSpec>,
    /// The device.
    pub device: DeviceConfig,
    /// RAM in bytes.
    pub mem_bytes: u64,
    /// Master seed.
    pub seed: u64,
    /// Filesystem.
    pub fs: FsKind,
    /// Dirty throttling flavour.
    pub bdp: BdpMode,
    /// How group bandwidth is aggregated (fio >= 3 sums).
    pub group_bw: GroupBwMode,
    /// The IO scheduler.
    pub scheduler: SchedKind,
    /// Keep policy trace records (the JSON `iolab.policy.trace`).
    pub trace: bool,
    /// A multi-device volume; when set, its devices replace `device`.
    pub volume: Option<VolumeSpec>,
    /// CPUs of the simulated machine (fio's `$ncpus`; the read policies'
    /// per-CPU state, and job `k` submits on CPU `k mod cpus`).
    pub cpus: u32,
    /// IOs after which the run stops with [`SimError::OverBudget`]: set
    /// for a run whose estimate ([`crate::cost`]) is above the bound only
    /// because steady-state detection (`ss=`) may end its jobs first.
    pub io_budget: Option<u64>,
}

/// A btrfs volume over one or more devices (`--volume PROFILE:DEV,...`;
/// `--fs btrfs` on a `--device` is [`VolumeSpec::one_device`]).
#[derive(Clone, Debug)]
pub struct VolumeSpec {
    /// Data profile (`single`, `dup`, `raid1`, `raid1c3`, `raid1c4`).
    pub profile: iolab_tiering::Profile,
    /// Member devices in devid order (devid 1 first).
    pub devices: Vec<DeviceConfig>,
    /// Each member's `allocation_hint` (Baroncelli's V12 property; only
    /// `alloc=allocation-hint` reads it). Empty: every device has the
    /// kernel's default, `DATA_PREFERRED`.
    pub hints: Vec<iolab_tiering::AllocHint>,
    /// Every chunk placed by the run's allocator, as after a full `btrfs
    /// balance`; otherwise a single volume keeps mkfs's first chunks on
    /// the device named first.
    pub balanced: bool,
    /// The parity split of the job processes' pids:
    /// `(even, odd)`, the first `even` processes get even pids and the
    /// rest odd ones, so `read=pid` sends them to copies 0 and 1. `None`:
    /// consecutive pids, as fio's clones have.
    pub pid_split: Option<(u32, u32)>,
    /// Metadata tree bytes the filesystem already holds at mount (an aged
    /// filesystem; `--metadata-used`). Metadata chunks are allocated for
    /// them, and for the job's files, by the run's allocator before the run.
    pub metadata_used: u64,
    /// fsyncs that fall back to a full commit instead of the log tree, per
    /// million (`p_full_commit`, an assumed figure;
    /// `--full-commit`). 0: none.
    pub full_commit_ppm: u32,
}

impl VolumeSpec {
    /// mkfs.btrfs on one device: the `single` profile, the device's
    /// default hint, mkfs's first chunks where mkfs puts them.
    pub fn one_device(device: DeviceConfig) -> VolumeSpec {
        VolumeSpec {
            profile: iolab_tiering::Profile::Single,
            devices: vec![device],
            hints: Vec::new(),
            balanced: false,
            pid_split: None,
            metadata_used: 0,
            full_commit_ppm: 0,
        }
    }
}

impl Scenario {
    /// The btrfs volume the run builds: the `--volume`, or on `--fs
    /// btrfs` the one device (`None`: no btrfs).
    pub fn btrfs_volume(&self) -> Option<std::borrow::Cow<'_, VolumeSpec>> {
        match (&self.volume, self.fs) {
            (Some(v), _) => Some(std::borrow::Cow::Borrowed(v)),
            (None, FsKind::Btrfs) => Some(std::borrow::Cow::Owned(VolumeSpec::one_device(
                self.device.clone(),
            ))),
            (None, _) => None,
        }
    }
}

/// Errors that stop a run before it starts.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The device configuration is unusable.
    #[error("device: {0}")]
    Device(#[from] crate::device::DeviceError),
    /// A job needs something the simulator cannot give it.
    #[error("{file}:{line}: {option}: job '{job}': {message}")]
    Job {
        /// Job file.
        file: String,
        /// Section line.
        line: usize,
        /// The option at fault.
        option: &'static str,
        /// Job name.
        job: String,
        /// What is wrong.
        message: String,
    },
    /// The files do not fit.
    #[error("{0}")]
    Fs(#[from] fs::FsError),
    /// The variant cannot run yet.
    #[error("{0}")]
    Variant(String),
    /// The files do not map onto the volume.
    #[error("{0}")]
    Layout(String),
    /// The volume cannot be built or run.
    #[error("{0}")]
    Volume(String),
    /// Nothing completed for ten simulated minutes while jobs remained: a
    /// policy or simulator bug parked every submitter for good.
    #[error("run stalled at {at_ns} ns: no IO completed for 600 simulated seconds")]
    Stalled {
        /// Simulated time when the run was stopped.
        at_ns: Ns,
    },
    /// Simulated time stopped advancing: a simulator or policy loop that
    /// reschedules itself at the same instant.
    #[error("run livelocked at {at_ns} ns: ten million events without simulated time advancing")]
    Livelock {
        /// Simulated time when the run was stopped.
        at_ns: Ns,
    },
    /// The run did the IOs it was allowed ([`Scenario::io_budget`]) with
    /// jobs still running: steady state was not reached in time.
    #[error(
        "run stopped at {:.1} s of simulated time: {ios} IOs done, the most a run may simulate, \
         before its jobs ended (steady state, ss=, was not reached): shorten runtime",
        *at_ns as f64 / 1e9
    )]
    OverBudget {
        /// Simulated time when the run was stopped.
        at_ns: Ns,
        /// IOs done by then.
        ios: u64,
    },
}

/// The result of one run.
#[derive(Debug)]
pub struct RunOutput {
    /// fio-shaped per-job/group statistics.
    pub report: RunReport,
    /// iolab's own counters (the JSON `iolab` object).
    pub extra: serde_json::Value,
    /// Simulated time at the end.
    pub sim_ns: Ns,
    /// Events processed.
    pub events: u64,
    /// The report as it stood at each status time of [`run_watched`]
    /// (fio's `--status-interval`): figures since the start, without the
    /// latency series.
    pub status: Vec<(Ns, RunReport)>,
}

/// Runs `scenario` under `variant`.
pub fn run(
    scenario: &Scenario,
    variant: &Variant,
    progress: &mut dyn FnMut(RunProgress),
) -> Result<RunOutput, SimError> {
    run_watched(scenario, variant, progress, None)
}

/// [`run`], keeping the report as it stands every `status_every` ns of
/// simulated time in [`RunOutput::status`].
pub fn run_watched(
    scenario: &Scenario,
    variant: &Variant,
    progress: &mut dyn FnMut(RunProgress),
    status_every: Option<Ns>,
) -> Result<RunOutput, SimError> {
    let watch = Watch {
        progress,
        status_every,
    };
    let raid = FsLayer {
        raid: build_raid(scenario, variant)?,
        flush: flush_policy(scenario, variant)?,
    };
    match &variant.block {
        BlockChoice::None => run_with(scenario, NoPolicy, raid, &variant.spec, watch),
        &BlockChoice::Wbt { v5, lat_usec } => {
            let knobs = WbtKnobs {
                variant: if v5 {
                    WbtVariant::V5_2016
                } else {
                    WbtVariant::Modern
                },
                lat_usec,
                trace: scenario.trace,
            };
            run_with(scenario, WbtPolicy::new(knobs), raid, &variant.spec, watch)
        }
        BlockChoice::Iocost { v54, qos, model } => {
            let knobs = IocostKnobs {
                variant: if *v54 {
                    IocostVariant::V5_4
                } else {
                    IocostVariant::Modern
                },
                qos: qos.clone(),
                model: model.clone(),
                trace: scenario.trace,
            };
            run_with(
                scenario,
                IocostPolicy::new(knobs),
                raid,
                &variant.spec,
                watch,
            )
        }
    }
}

fn job_err(spec: &JobSpec, option: &'static str, message: impl Into<String>) -> SimError {
    let (file, line) = spec.where_set(option);
    let set = spec.option_at.iter().any(|o| o.option == option);
    let message = message.into();
    SimError::Job {
        file: file.to_owned(),
        line,
        option,
        job: spec.name.clone(),
        // An option the file does not set is reported at the job's
        // section line, and says so.
        message: if set {
            message
        } else {
            format!("{message} ({option} is not set: the line is the job's section)")
        },
    }
}

/// The largest block size: Linux moves at most `MAX_RW_COUNT` (2 GiB less
/// a page) in one read or write.
pub const MAX_BS: u64 = (2 << 30) - 4096;

/// The block sizes against the data set, as fio checks them: the job's
/// size (capped by its files') must hold the smallest block (fio: "size
/// too small, must not be less than minimum block size"), and each file
/// must hold one too (fio issues no IO to a file smaller than its block
/// size, which would be a run of nothing). Blocks above [`MAX_BS`] are
/// refused: no single read or write moves that much.
fn check_block_sizes(
    spec: &JobSpec,
    size: Option<u64>,
    file_size: u64,
    nrfiles: u32,
) -> Result<(), SimError> {
    let set = |o: &str| spec.option_at.iter().any(|x| x.option == o);
    let option = if set("bsrange") { "bsrange" } else { "bs" };
    let files = file_size.saturating_mul(u64::from(nrfiles));
    // A data set too small for the default block is the fault of the
    // size that made it small.
    let small = match size {
        _ if set(option) => option,
        Some(s) if s < files => "size",
        _ if spec.filesize.is_some() => "filesize",
        _ => "size",
    };
    let min_bs = spec.bs.iter().map(|b| b.min).min().unwrap_or(PAGE);
    let max_bs = spec.bs.iter().map(|b| b.max).max().unwrap_or(PAGE);
    if max_bs > MAX_BS {
        return Err(job_err(
            spec,
            option,
            format!(
                "a block of {max_bs} bytes is above the {MAX_BS} bytes Linux moves in one read or write"
            ),
        ));
    }
    let data_set = size.map_or(files, |s| s.min(files));
    if data_set < min_bs {
        return Err(job_err(
            spec,
            small,
            format!(
                "the data set ({data_set} bytes) is smaller than the smallest block ({min_bs} bytes); fio refuses this too"
            ),
        ));
    }
    if file_size < min_bs {
        return Err(job_err(
            spec,
            small,
            format!(
                "each of the {nrfiles} files has {file_size} bytes, less than the smallest block ({min_bs} bytes): fio would issue no IO to them"
            ),
        ));
    }
    Ok(())
}

/// The IO contexts a job keeps: its `iodepth` for an asynchronous engine
/// doing direct IO (libaio queues buffered IO synchronously, as Linux's
/// does) or io_uring, else one.
fn contexts_of(engine: EngineKind, direct: bool, iodepth: u32) -> u32 {
    match engine {
        EngineKind::Libaio if direct => iodepth,
        EngineKind::IoUring => iodepth,
        _ => 1,
    }
}

/// `verify=` on a job that writes: its read-back, which iolab replays
/// from the job's own offset stream, so in the order written. fio reads
/// back in that order only what a random map or a sequential pass wrote
/// once; a random job without its map (`norandommap`) may write a block
/// twice, which fio reads back once, sorted by offset: refused. So is a
/// Poisson rate, whose draws share that stream.
fn verify_of(spec: &JobSpec, meta: bool) -> Result<Option<workload::VerifyPlan>, SimError> {
    // fio ends a job that fills the device at ENOSPC, as a runtime ends
    // one: no read-back.
    if !spec.verifies() || !spec.do_verify || !spec.rw.mode.writes() || meta || spec.fill_device {
        return Ok(None);
    }
    let option = if spec.verify.is_some() {
        "verify"
    } else {
        "verify_pattern"
    };
    if !spec.replay_logs.is_empty() {
        return Err(job_err(
            spec,
            option,
            "verify beside read_iolog is not simulated (a replayed log's writes are not read back)",
        ));
    }
    // With verify_backlog=1 and one IO at a time each write is read back
    // at once, so the order fio sorts its log in, and a block written
    // twice, change nothing (at depth fio's log can hold a block twice
    // and reads it once: 995 reads of 1,024 writes of `rw=write:112k` at
    // iodepth=8 on fio 3.33 here).
    let at_once = spec.verify_backlog == 1 && (spec.iodepth <= 1 || !spec.ioengine.is_async());
    if spec.rw.mode.is_random() && spec.norandommap && !at_once {
        return Err(job_err(
            spec,
            option,
            "verify of random writes without a random map (norandommap) is not simulated: \
             fio reads back the last write of each block, sorted by offset (with \
             verify_backlog=1 at iodepth=1, each read back at once, it is)",
        ));
    }
    if !spec.rw.mode.is_random() && spec.rw.seq_add != 0 && !at_once {
        return Err(job_err(
            spec,
            option,
            format!(
                "verify of rw={}:{} is not simulated: a pass with holes or backwards may write a \
                 block twice, which fio reads back once, sorted by offset (with \
                 verify_backlog=1 at iodepth=1, each read back at once, it is)",
                spec.rw.mode.name(),
                spec.rw.seq_add
            ),
        ));
    }
    if spec.rate_process == fio::RateProcess::Poisson {
        return Err(job_err(
            spec,
            option,
            "verify beside rate_process=poisson is not simulated",
        ));
    }
    Ok(Some(workload::VerifyPlan {
        backlog: spec.verify_backlog,
    }))
}

/// The job with its sizes given in zones (`524z`) turned into bytes by
/// its `zonesize`, as fio's `zbd_recalc_options_with_zone_granularity`
/// does once it knows the zone size. Without a zone size fio leaves them
/// unset; iolab refuses them.
fn zone_units_in_bytes(spec: &JobSpec) -> Result<JobSpec, SimError> {
    let u = spec.zone_units;
    let mut out = spec.clone();
    let zones = |option: &'static str, n: u64| -> Result<u64, SimError> {
        if spec.zonesize == 0 {
            return Err(job_err(
                spec,
                option,
                format!("{n}z is a count of zones, and the job has no zonesize to count them in"),
            ));
        }
        n.checked_mul(spec.zonesize).ok_or_else(|| {
            job_err(
                spec,
                option,
                format!("{n} zones of {} bytes are beyond 2^64 bytes", spec.zonesize),
            )
        })
    };
    let bytes = |b: u64| Some(fio::SizeSpec::Bytes(b));
    if let Some(n) = u.size {
        out.size = bytes(zones("size", n)?);
    }
    if let Some(n) = u.io_size {
        out.io_size = bytes(zones("io_size", n)?);
    }
    if let Some(n) = u.offset {
        out.offset = bytes(zones("offset", n)?);
    }
    if let Some(n) = u.offset_increment {
        out.offset_increment = bytes(zones("offset_increment", n)?);
    }
    if let Some(n) = u.zoneskip {
        out.zoneskip = zones("zoneskip", n)?;
    }
    out.zone_units = fio::ZoneUnits::default();
    Ok(out)
}

/// `zonemode=zbd`: the job's device file simulated as a host-managed
/// zoned disk, in the device's own zones when its file has `[zoned]`
/// (`zonesize`, if given, must be theirs, and `max_open_zones` at most
/// the device's limit, which it defaults to: fio's `parse_zone_info` and
/// `zbd_set_max_open_zones`), else in zones of `zonesize`; refused where
/// fio would fail the job on such a disk (its `zbd_setup_files`,
/// `zbd_verify_bs`, `init_zone_info`) or where iolab does not simulate
/// it. On a zoned device a job that writes without zonemode=zbd is
/// refused: its writes would miss the write pointers.
fn zbd_of(
    spec: &JobSpec,
    direct: bool,
    verify: bool,
    device: Option<&ZonedParams>,
) -> Result<Option<workload::ZbdPlan>, SimError> {
    if spec.zonemode != Some(fio::ZoneMode::Zbd) {
        if spec.ioengine == fio::Engine::Libzbc && device.is_none() {
            return Err(job_err(
                spec,
                "ioengine",
                "libzbc opens a zoned disk, and the simulated device is zoned only under \
                 zonemode=zbd or with [zoned] in its file (fio's libzbc fails on a disk that \
                 is not zoned)",
            ));
        }
        if device.is_some() && spec.rw.mode.writes() {
            return Err(job_err(
                spec,
                "zonemode",
                "the device is zoned ([zoned] in its file): a job that writes to it needs \
                 zonemode=zbd (without it fio writes where the zones' write pointers are not, \
                 and the device fails those writes)",
            ));
        }
        return Ok(None);
    }
    let z = match (spec.zonesize, device) {
        (0, None) => {
            return Err(job_err(
                spec,
                "zonesize",
                "zonemode=zbd needs a zonesize here: the simulated device has no zones of its \
                 own (no [zoned] in its file), so the zone size is the job's (fio requires it \
                 too on a disk that is not zoned)",
            ));
        }
        (0, Some(d)) => d.zone_size_mib << 20,
        (z, Some(d)) if z != d.zone_size_mib << 20 => {
            return Err(job_err(
                spec,
                "zonesize",
                format!(
                    "{z} bytes is not the device's zone size, {} bytes (fio: job parameter \
                     zonesize does not match disk zone size)",
                    d.zone_size_mib << 20
                ),
            ));
        }
        (z, _) => z,
    };
    let max_open_zones = match device.map_or(0, |d| d.max_open_zones) {
        0 => spec.max_open_zones,
        limit if spec.max_open_zones == 0 => limit,
        limit if spec.max_open_zones <= limit => spec.max_open_zones,
        limit => {
            return Err(job_err(
                spec,
                "max_open_zones",
                format!(
                    "{} is more than the device's limit of {limit} open zones (fio: Specified \
                     --max_open_zones is larger than max)",
                    spec.max_open_zones
                ),
            ));
        }
    };
    if z < 512 || !z.is_multiple_of(512) {
        return Err(job_err(
            spec,
            "zonesize",
            format!("{z} bytes is not a whole number of 512-byte sectors (fio: at least 512)"),
        ));
    }
    if spec.filename.is_empty() || spec.filename.iter().any(|f| !f.starts_with("/dev/")) {
        return Err(job_err(
            spec,
            "zonemode",
            "zonemode=zbd is simulated on a device (filename=/dev/…): on a file fio creates, \
             fio 3.33 fails (file size 0 is smaller than the zone size)",
        ));
    }
    let mode = spec.rw.mode;
    if mode.writes() && !direct {
        return Err(job_err(
            spec,
            "direct",
            "writes to a zoned disk need direct=1 (fio: Using direct I/O is mandatory for \
             writing to ZBD drives)",
        ));
    }
    let t = &spec.bs[fio::DDIR_TRIM];
    if mode.trims() && (t.min != t.max || !spec.bssplit[fio::DDIR_TRIM].is_empty()) {
        return Err(job_err(
            spec,
            "bs",
            "a trim's block size must be one size under zonemode=zbd (fio refuses bsrange and \
             bssplit for trims)",
        ));
    }
    if mode.trims() && t.min != z {
        return Err(job_err(
            spec,
            "bs",
            format!(
                "a trim resets a zone, so its block size must be the zone size, {z} (fio: trim \
                 block size {} is not the zone size)",
                t.min
            ),
        ));
    }
    if verify {
        // fio's zbd_verify_bs; and its zbd_adjust_block asserts that no
        // zone is reset while a verifying job writes.
        if let Some(bs) = spec
            .bs
            .iter()
            .flat_map(|b| [b.min, b.max])
            .find(|&b| b > 0 && z % b != 0)
        {
            return Err(job_err(
                spec,
                "bs",
                format!(
                    "{bs} bytes is not a divisor of the zone size, {z} (fio: block size is not \
                     a divisor of the zone size, with verify)"
                ),
            ));
        }
        if spec.zone_reset_frequency > 0.0 {
            return Err(job_err(
                spec,
                "zone_reset_frequency",
                "resets zones while the job writes what verify reads back (fio stops on an \
                 assertion: no zone may be reset while a verifying job writes)",
            ));
        }
    }
    if spec.zoneskip > 0 {
        return Err(job_err(
            spec,
            "zoneskip",
            "zoneskip with zonemode=zbd is not simulated (fio skips that much after each zone a \
             sequential job finishes)",
        ));
    }
    if spec.job_max_open_zones > 0 && max_open_zones == 0 {
        return Err(job_err(
            spec,
            "job_max_open_zones",
            "needs max_open_zones: without a device-wide limit fio keeps no open zones to \
             count (fio: 'job_max_open_zones' cannot be used without a global open zones limit)",
        ));
    }
    if spec.job_max_open_zones > max_open_zones && max_open_zones > 0 {
        return Err(job_err(
            spec,
            "job_max_open_zones",
            format!(
                "{} is above max_open_zones={}: the job cannot open more than the device",
                spec.job_max_open_zones, max_open_zones
            ),
        ));
    }
    Ok(Some(workload::ZbdPlan {
        zone_size: z,
        max_open_zones,
        job_max_open_zones: spec.job_max_open_zones,
        read_beyond_wp: spec.read_beyond_wp,
        reset_threshold: spec.zone_reset_threshold,
        reset_frequency: spec.zone_reset_frequency,
    }))
}

/// A writing job's region of a zoned device in whole zones, as fio's
/// `zbd_verify_sizes`: the start rounded up to a zone's, the end down
/// (the parser says so on stderr); less than a zone left is refused as
/// fio refuses it.
fn in_whole_zones(
    spec: &JobSpec,
    z: workload::ZbdPlan,
    start: u64,
    region: u64,
) -> Result<(u64, u64), SimError> {
    let zs = z.zone_size;
    let end = start.saturating_add(region);
    let first = start.div_ceil(zs).saturating_mul(zs);
    let last = end / zs * zs;
    if last <= first {
        return Err(job_err(
            spec,
            "size",
            format!(
                "the job's region, bytes {start} to {end}, holds no whole zone of {zs} bytes \
                 (fio: io_size must be at least one zone)"
            ),
        ));
    }
    Ok((first, last - first))
}

/// `zonemode=` as fio's `fixup_options` settles it: `strided` when a
/// `zonesize=` is given without a mode, `zonerange` defaulting to
/// `zonesize`, and strided zones for one open file only (with more, fio
/// drops them silently; iolab refuses, so nothing is dropped unsaid).
/// `zbd` needs a zoned device model, which iolab has not.
fn stride_of(spec: &JobSpec) -> Result<Option<workload::Stride>, SimError> {
    let mode = spec.zonemode.unwrap_or(if spec.zonesize > 0 {
        fio::ZoneMode::Strided
    } else {
        fio::ZoneMode::None
    });
    match mode {
        // zonerange and zoneskip alone do nothing, in fio too (the parser
        // says so).
        fio::ZoneMode::None => Ok(None),
        // The device's zones (`zbd_of`), not strided offsets.
        fio::ZoneMode::Zbd => Ok(None),
        fio::ZoneMode::Strided => {
            if spec.zonesize == 0 {
                return Err(job_err(
                    spec,
                    "zonesize",
                    "zonemode=strided needs a zonesize (as fio says)",
                ));
            }
            if spec.rw.mode.is_random() || spec.rw.seq_add != 0 {
                return Err(job_err(
                    spec,
                    "zonemode",
                    "strided zones are simulated for sequential jobs without holes",
                ));
            }
            let files = if spec.filename.is_empty() {
                spec.nrfiles.max(1) as usize
            } else {
                spec.filename.len()
            };
            if files > 1 {
                return Err(job_err(
                    spec,
                    "zonemode",
                    "strided zones over several files: fio turns them off without a word; give \
                     one file",
                ));
            }
            Ok(Some(workload::Stride {
                size: spec.zonesize,
                range: if spec.zonerange > 0 {
                    spec.zonerange
                } else {
                    spec.zonesize
                },
                skip: spec.zoneskip,
            }))
        }
    }
}

/// The jobs on a zoned device share its zones: each must zone it
/// (zonemode=zbd) with the same zone size and, when it sets one, the same
/// `max_open_zones` (fio: "Different 'max_open_zones' values").
fn check_zbd(scenario: &Scenario, plans: &[JobPlan]) -> Result<(), SimError> {
    for p in plans.iter().filter(|p| p.zbd.is_some()) {
        let z = p.zbd.expect("filtered");
        for o in plans.iter().filter(|o| {
            o.files
                .iter()
                .any(|f| p.files.iter().any(|g| g.name == f.name))
        }) {
            let spec = &scenario.jobs[o.section as usize];
            let Some(oz) = o.zbd else {
                return Err(job_err(
                    spec,
                    "zonemode",
                    format!(
                        "job '{}' zones the device this job uses (zonemode=zbd): every job on it \
                         must zone it too",
                        p.name
                    ),
                ));
            };
            if oz.zone_size != z.zone_size {
                return Err(job_err(
                    spec,
                    "zonesize",
                    format!(
                        "job '{}' zones the same device in zones of {} bytes, this one in {} \
                         (fio: zonesize does not match the disk's zone size)",
                        p.name, z.zone_size, oz.zone_size
                    ),
                ));
            }
        }
        // The first job on the device sets its limit (fio's
        // zbd_create_zone_info); another that sets one must agree.
        let first = plans
            .iter()
            .find(|o| {
                o.files
                    .iter()
                    .any(|f| p.files.iter().any(|g| g.name == f.name))
            })
            .and_then(|o| o.zbd)
            .expect("the job itself shares its files");
        // A job that sets none takes the device's (the plan's value is
        // then the device file's limit, or 0).
        let spec = &scenario.jobs[p.section as usize];
        if spec.max_open_zones > 0 && z.max_open_zones != first.max_open_zones {
            return Err(job_err(
                spec,
                "max_open_zones",
                format!(
                    "the first job on this device set max_open_zones={} (fio: Different \
                     'max_open_zones' values)",
                    first.max_open_zones
                ),
            ));
        }
    }
    Ok(())
}

/// Steady-state detection's options must be the same for every job of a
/// reporting group, as fio's `td_steadystate_init` rejects a job whose
/// `ss`, `ss_dur` or `ss_ramp` differ from another's of its group (one
/// without detection included).
fn check_steady(scenario: &Scenario, plans: &[JobPlan]) -> Result<(), SimError> {
    for p in plans {
        if let Some(o) = plans
            .iter()
            .find(|o| o.groupid == p.groupid && o.steady != p.steady)
            && p.steady.is_some()
        {
            let spec = &scenario.jobs[p.section as usize];
            return Err(job_err(
                spec,
                "steadystate_duration",
                format!(
                    "job '{}' of the same reporting group (groupid {}) has other steady-state \
                     options: fio rejects the job (steadystate options must be consistent \
                     within reporting groups)",
                    o.name, p.groupid
                ),
            ));
        }
    }
    Ok(())
}

/// `wait_for=`: the jobs it names must exist (fio would start at once
/// on a name no job has, which a typo makes silently; iolab refuses it),
/// and end before this one can start: in an earlier stonewall section or
/// in its own, without a circle of jobs waiting for each other.
fn check_wait_for(scenario: &Scenario, plans: &[JobPlan]) -> Result<(), SimError> {
    for p in plans.iter().filter(|p| p.clone == 0) {
        let Some(w) = p.wait_for.as_deref() else {
            continue;
        };
        let spec = &scenario.jobs[p.section as usize];
        let waitees: Vec<&JobPlan> = plans
            .iter()
            .filter(|o| o.name == w && o.name != p.name)
            .collect();
        if waitees.is_empty() {
            let why = if w == p.name {
                format!("'{w}' is this job's own name: it waits for other jobs of a name")
            } else {
                format!("no job is named '{w}'")
            };
            return Err(job_err(spec, "wait_for", why));
        }
        if waitees.iter().any(|o| o.wall > p.wall) {
            return Err(job_err(
                spec,
                "wait_for",
                format!(
                    "job '{w}' starts after a later stonewall, after this job's section has to \
                     end: it would wait forever"
                ),
            ));
        }
        // Follow the chain of waits inside the section: back here is a
        // circle.
        let mut at = w;
        for _ in 0..plans.len() {
            let next = plans
                .iter()
                .find(|o| o.name == at && o.wall == p.wall)
                .and_then(|o| o.wait_for.as_deref());
            match next {
                Some(n) if n == p.name => {
                    return Err(job_err(
                        spec,
                        "wait_for",
                        format!(
                            "jobs '{}' and '{w}' wait for each other (through wait_for)",
                            p.name
                        ),
                    ));
                }
                Some(n) => at = n,
                None => break,
            }
        }
    }
    Ok(())
}

/// Most files of metadata-engine jobs in one run (each is a count, not a
/// file record; fio's filecreate example makes 500,000).
pub const MAX_META_FILES: u64 = 1 << 26;

/// The calls a file-call engine (`falloc`, `ftruncate`, `e4defrag`)
/// makes, refusing what fio fails: a read or a trim of `ftruncate` and
/// `e4defrag` (`EINVAL`, which ends fio's job), a device as the file
/// (fio's falloc opens regular files only; a device has no size to
/// truncate and no ext4 ioctl), an `e4defrag` job without its donor.
fn file_call_of(spec: &JobSpec) -> Result<Option<workload::FileCall>, SimError> {
    let call = match spec.ioengine {
        fio::Engine::Falloc => workload::FileCall::Falloc,
        fio::Engine::Ftruncate => workload::FileCall::Ftruncate,
        fio::Engine::E4defrag => workload::FileCall::E4defrag {
            inplace: spec.inplace,
        },
        _ => return Ok(None),
    };
    let engine = spec.ioengine.name();
    let mode = spec.rw.mode;
    if call != workload::FileCall::Falloc && (mode.reads() || mode.trims()) {
        return Err(job_err(
            spec,
            "rw",
            format!(
                "rw={}: ioengine={engine} only writes; fio fails each read or trim with EINVAL, \
                 which ends the job",
                mode.name()
            ),
        ));
    }
    if let Some(dev) = spec.filename.iter().find(|f| f.starts_with("/dev/")) {
        return Err(job_err(
            spec,
            "filename",
            format!(
                "{dev}: ioengine={engine} acts on a regular file, and fio fails it on a device"
            ),
        ));
    }
    if !spec.replay_logs.is_empty() {
        return Err(job_err(
            spec,
            "read_iolog",
            format!("replaying a log with ioengine={engine} is not simulated"),
        ));
    }
    if spec.verifies() && spec.do_verify && mode.writes() {
        let option = if spec.verify.is_some() {
            "verify"
        } else {
            "verify_pattern"
        };
        return Err(job_err(
            spec,
            option,
            format!("ioengine={engine} moves no data of its own for verify to read back"),
        ));
    }
    if spec.ioengine == fio::Engine::E4defrag && spec.donorname.is_none() {
        return Err(job_err(
            spec,
            "ioengine",
            "ioengine=e4defrag needs donorname= (fio's too)",
        ));
    }
    Ok(Some(call))
}

/// `create_on_open` and `openfiles`: what iolab simulates of them. A data
/// engine's files are made before the run and all open at once; a
/// metadata engine handles one file at a time. A job that reads, with
/// `create_on_open`, reads files of its own that it creates empty and
/// that grow as it writes them (see [`empty_read_error`]).
/// Whether another job of the run names one of `spec`'s files.
fn shares_files(scenario: &Scenario, spec: &JobSpec) -> bool {
    !spec.filename.is_empty()
        && scenario
            .jobs
            .iter()
            .any(|o| !std::ptr::eq(o, spec) && o.filename.iter().any(|f| spec.filename.contains(f)))
}

/// A job that reads files it creates on open (`create_on_open`) finds
/// each empty until it writes it: a read from the furthest its writes
/// have reached on returns no data. fio then fails a synchronous engine's
/// first such read (`EIO`: the read came back short) and, in a job that
/// only reads, with `verify`, an asynchronous engine's first reads
/// (`EILSEQ`: no header to check); an asynchronous engine otherwise goes
/// on, counting the read as an IO of no bytes (fio 3.33 here, `size=16m
/// create_on_open=1`: `rw=read` with psync ends with error 5 after one
/// read, with libaio and `verify=crc32c` with error 84, with libaio alone
/// issues 4,096 reads of 0 bytes; `rw=randrw bs=4k fallocate=none` with
/// psync ends with error 5 at its first read, with libaio (direct or not,
/// with verify or not) reads 1,992 times, 4 of them before the writes
/// had reached them). `None` for a job that reads data; `Some(0)` when no
/// error ends it.
fn empty_read_error(spec: &JobSpec, meta: bool) -> Option<i32> {
    if meta || !spec.create_on_open || !spec.rw.mode.reads() {
        return None;
    }
    Some(if !spec.ioengine.is_async() {
        5
    } else if spec.verifies() && spec.do_verify && !spec.rw.mode.writes() {
        84
    } else {
        0
    })
}

fn check_file_options(
    scenario: &Scenario,
    spec: &JobSpec,
    meta: Option<fio::MetaEngine>,
) -> Result<(), SimError> {
    if meta.is_some() {
        return Ok(());
    }
    if spec.create_on_open
        && (spec.rw.mode.reads() || !spec.replay_logs.is_empty())
        && (!spec.replay_logs.is_empty() || shares_files(scenario, spec))
    {
        return Err(job_err(
            spec,
            "create_on_open",
            "a job that reads what another job writes to a file created as it opens it, or \
             replays a log on one, is not simulated; create_on_open is simulated for jobs \
             that write, and for jobs that read files of their own (which they find empty \
             until they write them)",
        ));
    }
    if let Some(n) = spec.openfiles
        && n < spec.nrfiles.max(spec.filename.len() as u32)
    {
        return Err(job_err(
            spec,
            "openfiles",
            format!(
                "{n}: limiting the open files below the job's {} is simulated for the \
                 metadata engines, not for data IO",
                spec.nrfiles.max(spec.filename.len() as u32)
            ),
        ));
    }
    Ok(())
}

/// What a metadata engine's job cannot ask for.
fn check_meta_job(spec: &JobSpec, m: fio::MetaEngine, file_size: u64) -> Result<(), SimError> {
    let name = m.name();
    let syncs = [
        (spec.fsync > 0, "fsync"),
        (spec.fdatasync > 0, "fdatasync"),
        (spec.end_fsync, "end_fsync"),
        (spec.fsync_on_close, "fsync_on_close"),
    ];
    for (set, option) in syncs {
        if set {
            return Err(job_err(
                spec,
                option,
                format!("ioengine={name} does no data IO: there is nothing to sync"),
            ));
        }
    }
    if !spec.replay_logs.is_empty() {
        return Err(job_err(
            spec,
            "read_iolog",
            format!("ioengine={name} replays no log: it makes one call per file"),
        ));
    }
    if m.deletes() && (spec.loops > 1 || spec.time_based) {
        return Err(job_err(
            spec,
            if spec.time_based {
                "time_based"
            } else {
                "loops"
            },
            format!(
                "ioengine={name} removes its files: a second pass would fail with ENOENT, as \
                 fio's does"
            ),
        ));
    }
    if !m.creates() && spec.create_on_open {
        return Err(job_err(
            spec,
            "create_on_open",
            format!(
                "ioengine={name} needs its files made before the run; with create_on_open=1 \
                 they would not exist"
            ),
        ));
    }
    let bs = spec.bs[0].min.max(PAGE);
    if !m.creates() && file_size != bs {
        return Err(job_err(
            spec,
            "filesize",
            format!(
                "{file_size} bytes a file with bs={bs}: fio would count {} fake IOs per call; \
                 iolab counts one (give filesize=bs)",
                file_size.div_ceil(bs)
            ),
        ));
    }
    Ok(())
}

/// The longest wait a job may ask for before its IO (a `startdelay`, a
/// replayed log's span): a year of simulated time. Its periodic timers
/// alone cost a run an event every 5 s, so a longer idle span is refused
/// before the run rather than simulated for hours of wall time.
pub const MAX_WAIT_NS: Ns = 365 * 24 * 3600 * 1_000_000_000;

/// Seeds the clones' draws of a `startdelay=` range apart from their IO.
const START_DELAY_STREAM: u64 = 0x7374_6172_7464_6c79;

/// Most job clones in one run (fio's own limit, `REAL_MAX_JOBS`).
pub const MAX_JOBS: u64 = 4096;
/// Largest `iodepth` the simulator accepts.
pub const MAX_IODEPTH: u32 = 65536;
/// Most files planned in one run, over all jobs and clones (about 1 KiB
/// of state each).
pub const MAX_FILES: u64 = 1 << 18;
/// Most IO contexts (a job's `iodepth` with direct libaio or io_uring,
/// else 1, summed over all jobs and clones) in one run (under 1 KiB of
/// state each).
pub const MAX_CONTEXTS: u64 = 1 << 18;

/// The jobs' clones planned, their cgroups, and what the plan changed of
/// what the jobs asked, to be said (a size cut at a device's end).
pub struct Planned {
    pub plans: Vec<JobPlan>,
    pub cgroups: Vec<Cgroup>,
    pub notes: Vec<String>,
}

/// Expands job sections into clones with reporting groups, stonewall
/// sections, files and offsets.
pub fn plan_jobs(scenario: &Scenario, capacity: u64) -> Result<Planned, SimError> {
    let mut plans = Vec::new();
    let mut notes = Vec::new();
    // Ordered by id (first use), so reports never depend on hash order.
    let mut cgroups: Vec<Cgroup> = Vec::new();
    let mut groupid = 0u32;
    let mut wall = 0u32;
    let mut clones = 0u64;
    let (mut files_planned, mut contexts, mut meta_files_planned) = (0u64, 0u64, 0u64);
    // The jobs' directories, numbered as first named.
    let mut job_dirs: BTreeMap<String, u32> = BTreeMap::new();
    // Files named by earlier jobs, and their sizes: a job without a size
    // on them takes theirs, as fio takes an existing file's.
    let mut named_sizes: BTreeMap<&str, u64> = BTreeMap::new();
    let mut planned_bytes: u64 = 0;
    let any_exitall = scenario.jobs.iter().any(|j| j.exitall);
    // Sizes given in zones, in bytes.
    let specs = scenario
        .jobs
        .iter()
        .map(|spec| {
            if spec.zone_units == fio::ZoneUnits::default() {
                Ok(std::borrow::Cow::Borrowed(spec))
            } else {
                zone_units_in_bytes(spec).map(std::borrow::Cow::Owned)
            }
        })
        .collect::<Result<Vec<_>, SimError>>()?;
    for (si, spec) in specs.iter().enumerate() {
        let spec: &JobSpec = spec;
        if si > 0 {
            if spec.stonewall {
                wall += 1;
                groupid += 1;
            } else if spec.new_group {
                groupid += 1;
            }
        }
        let mode = spec.rw.mode;
        if mode.trims() && mode.writes() {
            return Err(job_err(
                spec,
                "rw",
                format!(
                    "rw={} is not simulated (trim then write of the same blocks)",
                    mode.name()
                ),
            ));
        }
        let engine = match spec.ioengine {
            fio::Engine::Libaio | fio::Engine::Sg => EngineKind::Libaio,
            fio::Engine::IoUring => EngineKind::IoUring,
            fio::Engine::Null | fio::Engine::CppNull => EngineKind::Null,
            fio::Engine::PosixAio | fio::Engine::IoUringCmd => EngineKind::IoUring,
            fio::Engine::Meta(m) => EngineKind::Meta(m),
            fio::Engine::Cpuio => {
                if spec.cpuload == 0 {
                    return Err(job_err(
                        spec,
                        "cpuload",
                        "ioengine=cpuio needs a cpuload (fio's too)",
                    ));
                }
                if spec.runtime_ns.is_none() {
                    return Err(job_err(
                        spec,
                        "runtime",
                        "a cpuio job does no IO to end it: give it a runtime",
                    ));
                }
                EngineKind::Cpu(spec.cpuload)
            }
            fio::Engine::Sync
            | fio::Engine::Psync
            | fio::Engine::Vsync
            | fio::Engine::Pvsync
            | fio::Engine::Pvsync2
            | fio::Engine::Mmap
            | fio::Engine::Falloc
            | fio::Engine::Ftruncate
            | fio::Engine::E4defrag
            | fio::Engine::Libzbc => EngineKind::Sync,
        };
        let direct = spec.ioengine.forced_direct().unwrap_or(spec.direct);
        let verify = verify_of(spec, matches!(spec.ioengine, fio::Engine::Meta(_)))?;
        let zbd = zbd_of(
            spec,
            direct,
            verify.is_some(),
            scenario.device.zoned.as_ref(),
        )?;
        let meta = match spec.ioengine {
            fio::Engine::Meta(m) => Some(m),
            _ => None,
        };
        check_file_options(scenario, spec, meta)?;
        let file_call = file_call_of(spec)?;
        let pct = |p: u32| capacity / 100 * u64::from(p);
        let size = spec.size.map(|s| match s {
            fio::SizeSpec::Bytes(b) => b,
            fio::SizeSpec::Percent(p) => pct(p),
        });
        let io_size = spec.io_size.map(|s| match s {
            fio::SizeSpec::Bytes(b) => b,
            fio::SizeSpec::Percent(p) => pct(p),
        });
        if spec.start_delay_ns.1 > MAX_WAIT_NS {
            return Err(job_err(
                spec,
                "startdelay",
                format!(
                    "{} s is beyond the year a job may wait before its IO",
                    spec.start_delay_ns.1 / 1_000_000_000
                ),
            ));
        }
        if !spec.replay_logs.is_empty() && spec.loops > 1 {
            return Err(job_err(
                spec,
                "loops",
                "loops with read_iolog: fio replays a log once whatever loops says",
            ));
        }
        for log in &spec.replay_logs {
            if log.max_len() > MAX_BS {
                return Err(job_err(
                    spec,
                    "read_iolog",
                    format!(
                        "the log has an IO of {} bytes, above the {MAX_BS} bytes Linux moves in one read or write",
                        log.max_len()
                    ),
                ));
            }
            if log.has(LogAction::Trim) && log.has(LogAction::Write) {
                return Err(job_err(
                    spec,
                    "read_iolog",
                    "the log trims and writes: trims beside writes are not simulated (as rw=trimwrite)",
                ));
            }
            let span_us = log.span_us(spec.replay_time_scale);
            if !spec.replay_no_stall && span_us > MAX_WAIT_NS / 1000 {
                return Err(job_err(
                    spec,
                    "read_iolog",
                    format!(
                        "the log spans {} s (replay_time_scale included), beyond the year a run \
                         may simulate; replay_no_stall replays it without its times",
                        span_us / 1_000_000
                    ),
                ));
            }
        }
        // A replaying job's files are its log's, sized by its IOs.
        let replays = !spec.replay_logs.is_empty();
        let nrfiles = if replays {
            spec.replay_logs
                .iter()
                .map(|l| l.files.len())
                .max()
                .unwrap_or(1) as u32
        } else if spec.filename.is_empty() {
            spec.nrfiles.max(1)
        } else {
            spec.filename.len() as u32
        };
        // filecreate's files are one block each, as its `get_file_size`
        // sets them, whatever filesize says.
        let created = meta
            .filter(|m| m.creates())
            .map(|_| spec.bs[0].min.max(PAGE));
        let kept = log_size_for(capacity) + crate::fs::HEADER_BYTES;
        // Where a device (`filename=/dev/…`) ends for each of its files:
        // the simulated device less what the model keeps on it.
        let device_end = capacity.saturating_sub(kept) / u64::from(nrfiles) / PAGE * PAGE;
        let known = || {
            let sizes: Option<Vec<u64>> = spec
                .filename
                .iter()
                .map(|f| named_sizes.get(f.as_str()).copied())
                .collect();
            sizes.and_then(|s| s.into_iter().max())
        };
        let file_size = match created.or_else(|| file_size_of(spec, size, nrfiles)) {
            // fill_device: the device's free space, whatever size says.
            _ if spec.fill_device => {
                let free = capacity.saturating_sub(kept + planned_bytes);
                free / u64::from(nrfiles) / PAGE * PAGE
            }
            Some(b) => b,
            // cpuio does no IO: a page stands for its file.
            None if replays || spec.ioengine == fio::Engine::Cpuio => PAGE,
            // fio takes a block device's own size: the simulated
            // device (the CLI says so), less the headers and the log the
            // model keeps on it.
            None if spec.sized_by_device().is_some() => device_end,
            None if !spec.filename.is_empty() && known().is_some() => known().unwrap_or(PAGE),
            None => {
                return Err(job_err(
                    spec,
                    "size",
                    "no size given: set size= or filesize=",
                ));
            }
        };
        let whole_file = file_size;
        if spec.filename.is_empty() {
            let files = u64::from(nrfiles) * u64::from(spec.numjobs.max(1));
            planned_bytes = planned_bytes.saturating_add(whole_file.saturating_mul(files));
        }
        for f in &spec.filename {
            let known = named_sizes.entry(f.as_str()).or_insert(0);
            if *known == 0 {
                planned_bytes = planned_bytes.saturating_add(whole_file);
            }
            *known = (*known).max(whole_file);
        }
        let (_, file_size, _) = region_of(spec, 0, whole_file, device_end)?;
        if file_size < PAGE {
            return Err(job_err(
                spec,
                if spec.filesize.is_some() {
                    "filesize"
                } else {
                    "size"
                },
                format!("file size {file_size} is smaller than one 4 KiB page"),
            ));
        }
        if !replays {
            check_block_sizes(spec, size, file_size, nrfiles)?;
        }
        if let Some(m) = meta {
            check_meta_job(spec, m, file_size)?;
        }
        let cgroup = cgroup_of(spec, &mut cgroups)?;
        let random = mode.is_random();
        let fadvise = match spec.fadvise_hint {
            fio::Fadvise::Type if random => workload::Fadvise::Random,
            fio::Fadvise::Type => workload::Fadvise::Sequential,
            fio::Fadvise::Random => workload::Fadvise::Random,
            fio::Fadvise::Sequential => workload::Fadvise::Sequential,
            fio::Fadvise::None | fio::Fadvise::NoReuse => workload::Fadvise::None,
        };
        let rate_iops = spec.rate_iops.map(u64::from);
        clones += u64::from(spec.numjobs.max(1));
        if clones > MAX_JOBS {
            return Err(job_err(
                spec,
                "numjobs",
                format!("more than {MAX_JOBS} jobs in one run (fio's limit too)"),
            ));
        }
        if spec.iodepth > MAX_IODEPTH {
            return Err(job_err(
                spec,
                "iodepth",
                format!(
                    "{} is above the {MAX_IODEPTH} the simulator supports",
                    spec.iodepth
                ),
            ));
        }
        // Budgets of the whole run, checked before anything is planned:
        // each planned file and each IO context holds state for the run.
        let n = u64::from(spec.numjobs.max(1));
        if meta.is_some() {
            // A metadata engine's files hold no state of their own.
            meta_files_planned += n * u64::from(nrfiles);
            if meta_files_planned > MAX_META_FILES {
                return Err(job_err(
                    spec,
                    "nrfiles",
                    format!(
                        "{meta_files_planned} files for metadata engines in the run ({nrfiles} a \
                         job × numjobs={n}, with the jobs before), above the {MAX_META_FILES} \
                         the simulator takes"
                    ),
                ));
            }
        } else {
            files_planned += n * u64::from(nrfiles);
        }
        if files_planned > MAX_FILES {
            return Err(job_err(
                spec,
                if spec.filename.is_empty() {
                    "nrfiles"
                } else {
                    "filename"
                },
                format!(
                    "{files_planned} files in the run ({nrfiles} a job × numjobs={n}, with the jobs before), above the {MAX_FILES} the simulator holds"
                ),
            ));
        }
        let depth = u64::from(contexts_of(engine, direct, spec.iodepth.max(1)));
        contexts += n * depth;
        if contexts > MAX_CONTEXTS {
            return Err(job_err(
                spec,
                "iodepth",
                format!(
                    "{contexts} IOs in flight at once in the run (iodepth={depth} × numjobs={n}, with the jobs before), above the {MAX_CONTEXTS} the simulator holds"
                ),
            ));
        }
        // Each log's file sizes and directions, read once, not per clone.
        let log_facts: Vec<(Vec<u64>, [bool; 3])> = spec
            .replay_logs
            .iter()
            .map(|l| {
                let does = [LogAction::Read, LogAction::Write, LogAction::Trim].map(|a| l.has(a));
                (l.extents(), does)
            })
            .collect();
        // The first clone whose size, given by the job, is cut at the
        // device's end, and how many are: fio cuts them without a word.
        let mut cut: Option<(u32, u64, u64, u64)> = None;
        let mut cuts = 0u32;
        for clone in 0..spec.numjobs.max(1) {
            let (start, region, asked) = region_of(spec, clone, whole_file, device_end)?;
            if region < asked && spec.sized_by_device().is_none() {
                cut = cut.or(Some((clone, start, asked, region)));
                cuts += 1;
            }
            let (start, region) = match zbd {
                Some(z) if mode.writes() || mode.trims() => in_whole_zones(spec, z, start, region)?,
                _ => (start, region),
            };
            if region < PAGE {
                return Err(job_err(
                    spec,
                    "offset_increment",
                    format!(
                        "clone {clone}'s region of each file, from byte {start}, is {region} bytes, smaller than one 4 KiB page"
                    ),
                ));
            }
            let which = (clone as usize).min(spec.replay_logs.len().saturating_sub(1));
            let log = spec.replay_logs.get(which).cloned();
            let facts = log_facts.get(which);
            let files = match (&log, facts) {
                (Some(log), Some((ends, _))) => log
                    .files
                    .iter()
                    .zip(ends)
                    .map(|(name, &end)| FilePlan {
                        name: name.clone(),
                        offset: 0,
                        size: end.max(PAGE).div_ceil(PAGE) * PAGE,
                    })
                    .collect(),
                _ if meta.is_some() => Vec::new(),
                _ => (0..nrfiles)
                    .map(|k| {
                        let name = if spec.filename.is_empty() {
                            format!("{}.{}.{}", spec.name, clone, k)
                        } else {
                            spec.filename[k as usize].clone()
                        };
                        let name = match spec.directory.first() {
                            Some(d) => format!("{d}/{name}"),
                            None => name,
                        };
                        FilePlan {
                            name,
                            offset: start,
                            size: region,
                        }
                    })
                    .collect::<Vec<_>>(),
            };
            let total: u64 = files.iter().map(|f| f.size).sum();
            if random && let fio::RandomDistribution::ZonedAbs(zones) = &spec.random_distribution {
                zones_fit(
                    spec,
                    zones,
                    [mode.reads(), mode.writes(), mode.trims()],
                    region,
                )?;
            }
            plans.push(JobPlan {
                name: spec.name.clone(),
                section: si as u32,
                clone,
                groupid,
                wall,
                engine,
                iodepth: spec.iodepth.max(1),
                direct,
                reads: facts.map_or(mode.reads(), |f| f.1[0]),
                writes: facts.map_or(mode.writes(), |f| f.1[1]),
                trims: facts.map_or(mode.trims(), |f| f.1[2]),
                random,
                rw_suffix: u64::from(spec.rw.seq_n.max(1)),
                seq_add: if random { 0 } else { spec.rw.seq_add },
                rwmixread: spec.rwmixread,
                bs: spec.bs.map(|b| (b.min.max(1), b.max.max(b.min).max(1))),
                bssplit: spec.bssplit.clone(),
                replay: log,
                replay_no_stall: spec.replay_no_stall,
                replay_time_scale: spec.replay_time_scale,
                distribution: if random {
                    spec.random_distribution.clone()
                } else {
                    fio::RandomDistribution::Uniform
                },
                files,
                meta: meta.map(|op| workload::MetaPlan {
                    op,
                    files: nrfiles,
                    bytes: file_size,
                }),
                file_call,
                create_on_open: meta.is_none() && spec.create_on_open,
                dir: {
                    let d = spec.directory.first().cloned().unwrap_or_default();
                    let next = job_dirs.len() as u32;
                    *job_dirs.entry(d).or_insert(next)
                },
                name_len: (spec.name.len() + 8) as u64,
                file_service: (
                    match spec.file_service_type {
                        fio::FileServiceType::RoundRobin => workload::FileService::RoundRobin,
                        fio::FileServiceType::Random => workload::FileService::Random,
                        fio::FileServiceType::Sequential => workload::FileService::Sequential,
                    },
                    spec.file_service_nr.max(1),
                ),
                // time_based without a runtime would never end: fio then
                // stops at the byte limit as if time_based were unset.
                io_limit: if replays
                    || meta.is_some()
                    || matches!(engine, EngineKind::Cpu(_))
                    || spec.time_based && spec.runtime_ns.is_some()
                {
                    None
                } else if spec.fill_device {
                    // Until the device is full (its files' bytes), or
                    // io_size's bytes.
                    Some(io_size.unwrap_or(total) * u64::from(spec.loops.max(1)))
                } else {
                    Some(io_size.or(size).unwrap_or(total) * u64::from(spec.loops.max(1)))
                },
                more_passes_below: io_size.filter(|_| !spec.time_based),
                io_count_limit: (spec.number_ios > 0)
                    .then(|| spec.number_ios.saturating_mul(u64::from(spec.loops.max(1)))),
                start_delay: {
                    let (lo, hi) = spec.start_delay_ns;
                    if hi > lo {
                        // Each clone draws its own, as fio's rand_between.
                        let key = scenario.seed ^ START_DELAY_STREAM;
                        lo + Stream::new(key, Entity::Job(plans.len() as u32))
                            .below((hi - lo).saturating_add(1))
                    } else {
                        lo
                    }
                },
                runtime: spec.runtime_ns,
                time_based: spec.time_based && spec.runtime_ns.is_some(),
                ramp: spec.ramp_time_ns,
                fsync_every: spec.fsync,
                fdatasync_every: spec.fdatasync,
                end_fsync: spec.end_fsync || spec.fsync_on_close,
                invalidate: spec.invalidate,
                rate: spec.rate,
                rate_iops,
                poisson: spec.rate_process == fio::RateProcess::Poisson,
                offload: spec.submit_offload,
                thinktime: spec.thinktime_ns,
                thinktime_blocks: spec.thinktime_blocks,
                flow: spec.flow,
                wait_for: spec.wait_for.clone(),
                steady: (spec.steady.dur_s > 0).then_some(spec.steady),
                null_device: spec.on_null_device(),
                empty_reads: empty_read_error(spec, meta.is_some()),
                latency_target: (spec.latency_target_ns > 0).then_some(workload::LatencyTarget {
                    target_ns: spec.latency_target_ns,
                    window_ns: spec.latency_window_ns,
                    percentile: spec.latency_percentile,
                    run: spec.latency_run,
                }),
                verify,
                zbd,
                stride: stride_of(spec)?,
                block_align: spec
                    .blockalign
                    .iter()
                    .zip([mode.reads(), mode.writes(), mode.trims()])
                    .filter_map(|(a, does)| a.filter(|_| does))
                    .min(),
                device_reads_writes: spec.ioengine == fio::Engine::Sg
                    && spec.sg_write_mode == fio::SgWriteMode::Verify,
                cgroup,
                // fio's exitall is process-wide: set on any job, every
                // finishing job ends others by its own exit_what.
                exitall: any_exitall.then_some(match spec.exit_what {
                    fio::ExitWhat::Group => workload::ExitWhat::Group,
                    fio::ExitWhat::Stonewall => workload::ExitWhat::Stonewall,
                    fio::ExitWhat::All => workload::ExitWhat::All,
                }),
                group_reporting: spec.group_reporting,
                hist_log: (spec.logs.hist.is_some() && spec.logs.hist_msec > 0).then_some((
                    u64::from(spec.logs.hist_msec) * MS,
                    spec.logs.hist_coarseness,
                )),
                log_avg: if spec.log_avg_msec > 0 {
                    u64::from(spec.log_avg_msec) * MS
                } else {
                    DEFAULT_LOG_WINDOW_MS * MS
                },
                bw_sample: sample_period(spec.logs.bw.is_some(), spec.log_avg_msec),
                iops_sample: sample_period(spec.logs.iops.is_some(), spec.log_avg_msec),
                seed: spec.randseed,
                randrepeat: spec.randrepeat,
                norandommap: spec.norandommap,
                fadvise,
                // A log is replayed on files that hold data, as fio's are.
                written_out: meta.is_none()
                    && !spec.create_on_open
                    && (replays || spec.overwrite || mode.reads()),
                loops: spec.loops.max(1),
                options: spec.options[spec.global_count.min(spec.options.len())..].to_vec(),
                unified: spec.unified_rw,
                percentiles: crate::stats::Percentiles {
                    list: spec.percentile_list.clone(),
                    clat: spec.clat_percentiles,
                    lat: spec.lat_percentiles,
                    slat: spec.slat_percentiles,
                    precision: spec.percentile_precision,
                },
                global_options: spec.options[..spec.global_count.min(spec.options.len())].to_vec(),
            });
        }
        if let Some((clone, start, asked, region)) = cut {
            let option = if spec.filesize.is_some() {
                "filesize"
            } else {
                "size"
            };
            let more = match cuts {
                1 => String::new(),
                n => format!(" (and {} more clones after it)", n - 1),
            };
            let message = format!(
                "clone {clone}'s {asked} bytes from byte {start} run past the device's end \
                 ({device_end} bytes): it uses the {region} bytes before it{more}, as fio does"
            );
            notes.push(job_err(spec, option, message).to_string());
        }
    }
    check_wait_for(scenario, &plans)?;
    check_steady(scenario, &plans)?;
    check_zbd(scenario, &plans)?;
    Ok(Planned {
        plans,
        cgroups,
        notes,
    })
}

/// The averaging window of a job's logs and of its latency series when
/// `log_avg_msec` is 0 (fio would log every IO), ms.
pub const DEFAULT_LOG_WINDOW_MS: u64 = 10;

/// Mixed into a job's seed under `randrepeat=0`: its offsets, sizes and
/// mix are another stream of the run's seed than the repeating one.
const NO_RANDREPEAT: u64 = 0x5eed_0ff0_7e9e_a700;

/// fio's period for bandwidth (or IOPS) samples: `log_avg_msec` for a
/// job that writes that log with averaging, else its 500 ms default.
fn sample_period(logged: bool, log_avg_msec: u32) -> Ns {
    if logged && log_avg_msec > 0 {
        u64::from(log_avg_msec) * MS
    } else {
        500 * MS
    }
}

/// Bytes per file before any offset: `filesize=`, else `size=` shared by
/// the files; none without either.
fn file_size_of(spec: &fio::JobSpec, size: Option<u64>, nrfiles: u32) -> Option<u64> {
    match (spec.filesize, size) {
        (Some(r), _) => Some(r.min),
        (None, Some(s)) => Some(s / u64::from(nrfiles)),
        (None, None) => None,
    }
}

/// Where clone `clone`'s IO starts in each of its files and how many bytes
/// from there it uses (fio's `get_start_offset` and `setup_files`): the
/// start is `offset=` plus the clone number times `offset_increment=`, a
/// start made from a percent rounded up to `offset_align=` (else the
/// smallest block size); with `filesize=` the file keeps its size and the
/// region ends with it, otherwise the region is `size=`'s share and the
/// file grows to hold it. On a device (`filename=/dev/…`, ending at
/// `device_end`) the start must be inside it and the region ends with it,
/// as fio 3.33 does on a block device; the region before that cut is the
/// third figure returned. A percent is of the file's size
/// before the run: a device's, or, for a file fio creates, nothing, which
/// fio would take as 0 and iolab refuses.
fn region_of(
    spec: &fio::JobSpec,
    clone: u32,
    file_size: u64,
    device_end: u64,
) -> Result<(u64, u64, u64), SimError> {
    let device = spec.filename.iter().any(|f| f.starts_with("/dev/"));
    let mut align = false;
    let mut bytes = |option: &'static str, v: Option<fio::SizeSpec>| match v {
        None => Ok(0),
        Some(fio::SizeSpec::Bytes(b)) => Ok(b),
        Some(fio::SizeSpec::Percent(p)) if device => {
            align = true;
            Ok((u128::from(device_end) * u128::from(p) / 100) as u64)
        }
        Some(fio::SizeSpec::Percent(p)) => Err(job_err(
            spec,
            option,
            format!(
                "{option}={p}% is a share of the file's size before the run, and fio creates                  this file: it has none, so fio would take 0; give {option} in bytes"
            ),
        )),
    };
    let first = bytes("offset", spec.offset)?;
    let step = bytes("offset_increment", spec.offset_increment)?;
    let beyond = |option: &'static str| {
        job_err(
            spec,
            option,
            format!("clone {clone} would start beyond the 2^64 bytes a file can have"),
        )
    };
    let mut start = step
        .checked_mul(u64::from(clone))
        .and_then(|s| s.checked_add(first))
        .ok_or_else(|| {
            beyond(if clone > 0 && step > 0 {
                "offset_increment"
            } else {
                "offset"
            })
        })?;
    if align {
        let min_bs = spec.bs[fio::DDIR_READ]
            .min
            .min(spec.bs[fio::DDIR_WRITE].min);
        let a = if spec.offset_align > 0 {
            spec.offset_align
        } else {
            min_bs
        }
        .max(1);
        start = start
            .div_ceil(a)
            .checked_mul(a)
            .ok_or_else(|| beyond("offset_align"))?;
    }
    // A misplaced clone is said at the option that moved it there.
    let blame = if clone > 0 && step > 0 {
        "offset_increment"
    } else {
        "offset"
    };
    let region = if spec.filesize.is_some() {
        if start >= file_size {
            return Err(job_err(
                spec,
                blame,
                format!(
                    "clone {clone} would start at byte {start}, not inside its files of filesize={file_size} bytes"
                ),
            ));
        }
        file_size - start
    } else {
        file_size
    };
    if start.checked_add(region).is_none() {
        return Err(beyond(blame));
    }
    // On a device fio needs the start inside it ("you need to specify
    // valid offset=") and ends the region with the device.
    if device && start >= device_end {
        return Err(job_err(
            spec,
            blame,
            format!(
                "clone {clone} would start at byte {start}, beyond the device's {device_end} bytes \
                 (fio: \"you need to specify valid offset=\")"
            ),
        ));
    }
    let asked = region;
    let region = if device {
        region.min(device_end - start)
    } else {
        region
    };
    Ok((start, region, asked))
}

/// A `zoned_abs` distribution's zones must lie inside each file, for the
/// directions the job does (fio stops the job at the first IO drawn in a
/// zone beyond the file's end).
fn zones_fit(
    spec: &fio::JobSpec,
    zones: &[Vec<fio::Zone>; 3],
    does: [bool; 3],
    file_size: u64,
) -> Result<(), SimError> {
    for (d, list) in zones.iter().enumerate().filter(|(d, _)| does[*d]) {
        let end: u64 = list.iter().map(|z| z.size).fold(0, u64::saturating_add);
        if end > file_size {
            let dir = ["reads", "writes", "trims"][d];
            return Err(job_err(
                spec,
                "random_distribution",
                format!(
                    "the zones of the {dir} end at byte {end}, beyond the end of each file ({file_size} bytes)"
                ),
            ));
        }
    }
    Ok(())
}

/// The cgroup id of `spec`'s jobs (0: the root), adding its group to
/// `cgroups` on first use. Two sections naming one group with different
/// weights are an error: fio would let whichever job starts last win.
fn cgroup_of(spec: &fio::JobSpec, cgroups: &mut Vec<Cgroup>) -> Result<u16, SimError> {
    let Some(name) = &spec.cgroup else {
        if spec.cgroup_weight.is_some() {
            return Err(job_err(
                spec,
                "cgroup_weight",
                "cgroup_weight= needs cgroup= (the root group has no weight)",
            ));
        }
        return Ok(0);
    };
    if let Some(g) = cgroups.iter_mut().find(|g| &g.name == name) {
        match (g.weight, spec.cgroup_weight) {
            (Some(a), Some(b)) if a != b => {
                return Err(job_err(
                    spec,
                    "cgroup_weight",
                    format!("cgroup '{name}' already has weight {a} from an earlier job, not {b}"),
                ));
            }
            (None, Some(b)) => g.weight = Some(b),
            _ => {}
        }
        return Ok(g.id);
    }
    let id = u16::try_from(cgroups.len() + 1).map_err(|_| {
        job_err(
            spec,
            "cgroup",
            format!("more than {} cgroups", u16::MAX - 1),
        )
    })?;
    cgroups.push(Cgroup {
        id,
        name: name.clone(),
        weight: spec.cgroup_weight,
    });
    Ok(id)
}

/// Checks that `variant` can run on `scenario` without running it, so a
/// comparison can refuse a bad variant before spending time on the others;
/// returns what the plan changed of what the jobs asked, to be said
/// ([`plan_jobs`]'s notes).
pub fn check_variant(scenario: &Scenario, variant: &Variant) -> Result<Vec<String>, SimError> {
    let layer = FsLayer {
        raid: build_raid(scenario, variant)?,
        flush: flush_policy(scenario, variant)?,
    };
    // Builds the machine without running it: the files' layout and the
    // volume's metadata chunks depend on the allocator the variant names
    // (its metadata may not fit where another variant's does). The block
    // policy plays no part in those checks, so none stands in for it.
    build_world(scenario, NoPolicy, layer).map(|b| b.notes)
}

/// The chunk map and read policy of `scenario`'s btrfs volume (a
/// `--volume`, or the one device of `--fs btrfs`), `None` on other
/// filesystems. Checks what the volume model cannot run yet.
fn build_raid(scenario: &Scenario, variant: &Variant) -> Result<Option<Raid>, SimError> {
    let Some(spec) = scenario.btrfs_volume() else {
        for (set, what) in [
            (
                variant.read.is_some(),
                "read= chooses among a btrfs volume's copies",
            ),
            (
                variant.alloc.is_some(),
                "alloc= places the chunks of a btrfs volume",
            ),
        ] {
            if set {
                return Err(SimError::Variant(format!(
                    "variant '{}': {what}; run with --fs btrfs (on a --device or a --volume)",
                    variant.spec
                )));
            }
        }
        return Ok(None);
    };
    let spec = spec.as_ref();
    if variant.block != BlockChoice::None && spec.devices.len() > 1 {
        return Err(SimError::Variant(format!(
            "variant '{}': block-layer policies on a multi-device volume are not simulated yet \
             (one rq-qos instance per device)",
            variant.spec
        )));
    }
    match scenario.fs {
        FsKind::Btrfs => {}
        other => {
            return Err(SimError::Volume(format!(
                "a --volume is a btrfs filesystem; the scenario says {other:?}: use --fs btrfs"
            )));
        }
    }
    if spec.devices.len() > crate::fs::btrfs::volume::MAX_DEVICES {
        return Err(SimError::Volume(format!(
            "--volume: {} devices; the simulator takes at most {}",
            spec.devices.len(),
            crate::fs::btrfs::volume::MAX_DEVICES
        )));
    }
    if !spec.hints.is_empty() && spec.hints.len() != spec.devices.len() {
        return Err(SimError::Volume(format!(
            "--volume: {} allocation hints for {} devices",
            spec.hints.len(),
            spec.devices.len()
        )));
    }
    if let Some(cfg) = spec.devices.iter().find(|d| d.zoned.is_some()) {
        return Err(SimError::Volume(format!(
            "device '{}' is zoned ([zoned] in its file): btrfs on a zoned device is not \
             simulated",
            cfg.name
        )));
    }
    let mut members = Vec::with_capacity(spec.devices.len());
    for (i, cfg) in spec.devices.iter().enumerate() {
        let d = Device::new(cfg)?;
        members.push(Member {
            capacity: d.capacity(),
            rotational: d.rotational(),
            queue_depth: d.queue_depth(),
            hint: spec.hints.get(i).copied().unwrap_or_default(),
        });
    }
    let read = variant.read.unwrap_or(ReadPolicyConfig::Pid);
    if let ReadPolicyConfig::Devid {
        read_devid: Some(devid),
    } = read
    {
        // The kernel refuses a devid the filesystem does not have.
        if devid == 0 || devid > members.len() as u64 {
            return Err(SimError::Variant(format!(
                "variant '{}': read=devid:{devid}: the volume's devids are 1 to {}",
                variant.spec,
                members.len()
            )));
        }
    }
    // The mount's latest device (`devid`'s default): the last one added,
    // the highest devid *(assumed; the kernel picks by generation)*.
    let latest = members.len() as u64;
    let policy = read
        .build(latest, SECTORSIZE as u32, scenario.cpus.max(1) as usize)
        .map_err(|e| SimError::Variant(format!("variant '{}': {e}", variant.spec)))?;
    let alloc = variant.alloc.unwrap_or_default();
    if matches!(
        alloc.variant,
        iolab_tiering::AllocVariant::AllocationHint(_)
    ) && spec.hints.is_empty()
    {
        return Err(SimError::Variant(format!(
            "variant '{}': alloc=allocation-hint reads each device's hint; give them as \
             --volume PROFILE:DEV@HINT,... (data-preferred, metadata-preferred, metadata-only, \
             data-only, none)",
            variant.spec
        )));
    }
    Raid::build(spec.profile, &members, policy, alloc, spec.balanced)
        .map(Some)
        .map_err(|e| SimError::Volume(e.to_string()))
}

/// The filesystem-layer choices of a variant, checked against the
/// scenario.
#[derive(Debug)]
pub struct FsLayer {
    /// The chunk map and read policy of the btrfs volume.
    pub raid: Option<Raid>,
    /// btrfs's flush policy.
    pub flush: Option<iolab_flush::Policy>,
}

/// The flush policy a variant runs with on btrfs (`None` on other
/// filesystems). A variant without `flush=` runs what the kernel of
/// today (6.18) runs, `flush=on-demand:preempt=2021`.
fn flush_policy(
    scenario: &Scenario,
    variant: &Variant,
) -> Result<Option<iolab_flush::Policy>, SimError> {
    if scenario.fs != FsKind::Btrfs {
        if variant.flush.is_some() {
            return Err(SimError::Variant(format!(
                "variant '{}': flush= is btrfs's metadata flushing; run with --fs btrfs (on a \
                 --device or a --volume)",
                variant.spec
            )));
        }
        return Ok(None);
    }
    Ok(Some(
        variant
            .flush
            .unwrap_or(iolab_flush::Policy::on_demand_2021()),
    ))
}

/// The flush model of a btrfs run: its metadata space is the volume's
/// (the metadata chunks, their tree items, the devices' unallocated bytes
/// and the profile's copies); `ctxs` writer contexts.
fn btrfs_state(
    policy: iolab_flush::Policy,
    raid: &Raid,
    file_pages: &[u32],
    ctxs: usize,
    ncpu: u32,
) -> Result<crate::world::BtrfsState, SimError> {
    use iolab_flush::{Config, FlushModel, Params};
    const MIB: u64 = 1 << 20;
    let defaults = Params::default();
    // The global reserve: the 4.x/5.0 sizing (`calc_global_metadata_size`)
    // caps it at a third of the metadata in use and aligns it up to
    // `nodesize << 10`, so a young filesystem holds 16 MiB, far below the
    // 512 MiB cap.
    let (used, _, _) = raid.metadata_use();
    let params = Params {
        total: raid.metadata_total(),
        used,
        unallocated: raid.unallocated(),
        profile_factor: raid.copies(),
        chunk_size: raid.metadata_chunk_len(),
        global_rsv: 16 * MIB,
        ncpu: u64::from(ncpu.max(1)),
        max_handles: 4096,
        ticket_capacity: ctxs.max(16) * 2,
        ..defaults
    };
    let model = FlushModel::new(Config { policy, params })
        .map_err(|e| SimError::Variant(format!("flush model: {e}")))?;
    // The era decides how writes reserve (fs::btrfs::RsvScheme): the
    // refill scheme up to the 2019 space rework, the exact one by 5.12.
    let scheme = match policy.preempt {
        iolab_flush::Preempt::Clamped2021 => crate::fs::btrfs::RsvScheme::Exact,
        _ => crate::fs::btrfs::RsvScheme::Refill,
    };
    Ok(crate::world::BtrfsState::new(
        model,
        policy.to_string(),
        file_pages,
        ctxs,
        crate::fs::btrfs::endio_workers(ncpu.max(1)),
        scheme,
    ))
}

/// How far a run has come, for a progress bar: the simulated time, and
/// the share of its work done, 0 to 1 (each stonewall section an equal
/// part; in a section, the mean over its jobs of the larger of the share
/// of their runtime passed and of their bytes issued; a job done counts
/// whole).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunProgress {
    pub now: Ns,
    pub done: f64,
}

/// What a run reports as it goes: its progress now and then, and the
/// report every `status_every` ns.
pub struct Watch<'a> {
    pub progress: &'a mut dyn FnMut(RunProgress),
    pub status_every: Option<Ns>,
}

/// Runs `scenario` with block-layer policy `policy` and the filesystem
/// layer `layer` (btrfs's chunk map and flush
/// policy).
pub fn run_with<P: Policy>(
    scenario: &Scenario,
    policy: P,
    layer: FsLayer,
    variant: &str,
    watch: Watch<'_>,
) -> Result<RunOutput, SimError> {
    let Built {
        mut world, cgroups, ..
    } = build_world(scenario, policy, layer)?;
    world.io_budget = scenario.io_budget.unwrap_or(u64::MAX);
    world.status_every = watch.status_every.map(|e| (e, scenario.group_bw));
    world.run(&cgroups, watch.progress);
    if let Some(broken) = world.raid.as_ref().and_then(|r| r.contract_broken.clone()) {
        return Err(SimError::Volume(broken));
    }
    if world.livelocked {
        return Err(SimError::Livelock {
            at_ns: world.q.now(),
        });
    }
    if world.stalled {
        return Err(SimError::Stalled {
            at_ns: world.q.now(),
        });
    }
    if world.over_budget {
        return Err(SimError::OverBudget {
            at_ns: world.q.now(),
            ios: world.ops_done,
        });
    }

    let sim_ns = world.q.now();
    let inputs = world.job_inputs(sim_ns);
    let mut report = RunReport::build(inputs, scenario.group_bw);
    report.global_options = world.global_options();
    let extra = world.extra_json(scenario, variant, &cgroups);
    let mut status = std::mem::take(&mut world.status);
    for (_, r) in &mut status {
        r.global_options = report.global_options.clone();
    }
    Ok(RunOutput {
        report,
        extra,
        sim_ns,
        events: world.events,
        status,
    })
}

/// A world built for a run, its cgroups, and the plan's notes
/// ([`Planned`]).
struct Built<P: Policy> {
    world: World<P>,
    cgroups: Vec<Cgroup>,
    notes: Vec<String>,
}

/// The machine of `scenario` at time 0, ready to run, and its cgroups:
/// the devices, the files laid out, the volume's metadata chunks, the jobs
/// and their contexts. Every check a run makes before its first event is
/// made here.
fn build_world<P: Policy>(
    scenario: &Scenario,
    policy: P,
    layer: FsLayer,
) -> Result<Built<P>, SimError> {
    let FsLayer { raid, flush } = layer;
    let btrfs = scenario.btrfs_volume();
    if btrfs.is_some() != raid.is_some() || btrfs.is_some() != flush.is_some() {
        return Err(SimError::Volume(
            "a btrfs run needs its chunk map and its flush policy, and only a btrfs run has them"
                .into(),
        ));
    }
    let devices = match &btrfs {
        Some(v) => v
            .devices
            .iter()
            .enumerate()
            .map(|(i, d)| Device::seeded(d, scenario.seed, i as u32))
            .collect::<Result<Vec<_>, _>>()?,
        None => vec![Device::seeded(&scenario.device, scenario.seed, 0)?],
    };
    // The files live in the volume's logical space: the data chunks' on a
    // multi-device volume, the device's bytes otherwise.
    let capacity = raid.as_ref().map_or(devices[0].capacity(), Raid::capacity);
    let Planned {
        plans,
        cgroups,
        notes,
    } = plan_jobs(scenario, capacity)?;
    let log_size = log_size_for(capacity);
    let mut layout = Layout::new(capacity, log_size);
    let volume = Volume::single(capacity);
    let (log_off, log_len) = layout.log();
    let journal = Journal::new(log_off, log_len);
    let journal_on = scenario.fs == FsKind::XfsLite;
    let mut world = World::new(
        devices,
        scenario.mem_bytes,
        policy,
        journal,
        scenario.bdp,
        journal_on,
        scenario.scheduler,
    );
    let mut raid = raid;
    let split = btrfs.as_ref().and_then(|v| v.pid_split);
    if let (Some(r), Some((even, odd))) = (raid.as_mut(), split) {
        if r.profile() != iolab_tiering::Profile::Raid1 {
            return Err(SimError::Volume(format!(
                "--pid-split: pid parity picks one of two copies; the volume is {}, not raid1",
                r.profile().name()
            )));
        }
        if u64::from(even) + u64::from(odd) != plans.len() as u64 {
            return Err(SimError::Volume(format!(
                "--pid-split {even}/{odd}: the job file starts {} processes",
                plans.len()
            )));
        }
        r.set_pid_split(even, odd);
    }
    world.raid = raid;
    if let Some(v) = &btrfs {
        world.commit.full_commit_ppm = v.full_commit_ppm;
        world.commit.draws = Some(Stream::new(
            scenario.seed,
            Entity::Kernel(FULL_COMMIT_STREAM),
        ));
    }
    world.cpus = scenario.cpus.max(1);
    let host_us = |key: fn(&DeviceConfig) -> f64| -> Ns {
        let us = match &btrfs {
            Some(v) => v.devices.iter().map(key).fold(0.0, f64::max),
            None => key(&scenario.device),
        };
        (us * 1000.0).round() as Ns
    };
    world.host_io_ns = host_us(|d| d.host_io_us);
    world.host_wake_ns = host_us(|d| d.host_wake_us);
    world.host_submit_ns = host_us(|d| d.host_submit_us);

    // Files: one per distinct name, sized by the largest user; written out
    // if any user reads it or asks for overwrite (fio's layout rule).
    // (size, written out, the job section that sized it)
    let mut by_name: BTreeMap<String, (u64, bool, usize)> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for p in &plans {
        for f in &p.files {
            let e = by_name.entry(f.name.clone()).or_insert_with(|| {
                order.push(f.name.clone());
                (0, false, p.section as usize)
            });
            let end = f.offset + f.size;
            if end > e.0 {
                (e.0, e.2) = (end, p.section as usize);
            }
            e.1 |= p.written_out;
        }
    }
    let mut file_id: BTreeMap<String, u32> = BTreeMap::new();
    // The files a stat or delete engine finds were made before the run:
    // their items are in the filesystem already.
    let mut file_items: u64 = plans
        .iter()
        .filter_map(|p| Some((p.meta.filter(|m| !m.op.creates())?, p.name_len)))
        .map(|(m, name)| {
            u64::from(m.files) * fs::btrfs::metadata::item_bytes_for_file(m.bytes, name)
        })
        .sum();
    for name in &order {
        let (size, written, section) = by_name[name];
        // A file created on open gets its items during the run.
        if !scenario.jobs[section].create_on_open {
            file_items += fs::btrfs::metadata::item_bytes_for_file(size, name.len() as u64);
        }
        let place = layout.place(name, size).map_err(|e| {
            // Said at the option that sized the file.
            let spec = &scenario.jobs[section];
            let option = if !spec.replay_logs.is_empty() {
                "read_iolog"
            } else if spec.filesize.is_some() {
                "filesize"
            } else {
                "size"
            };
            job_err(spec, option, e.to_string())
        })?;
        let prep = if written {
            Prep::WrittenOut
        } else {
            Prep::Unwritten
        };
        // The layout hands out logical space; the volume says which device
        // and where. A file must not straddle devices.
        let map_part = |start: u64, len: u64| -> Result<(u16, u64), SimError> {
            match volume.map(start) {
                Some((dev, physical, contiguous)) if contiguous >= len => Ok((dev, physical)),
                Some(_) => Err(SimError::Layout(format!(
                    "file '{name}' would straddle two devices of the volume"
                ))),
                None => Err(SimError::Layout(format!(
                    "file '{name}' lies outside the volume"
                ))),
            }
        };
        let bytes = size.div_ceil(PAGE) * PAGE;
        let head = place.contiguous_from(0).min(bytes);
        let (dev, first) = map_part(place.first, head)?;
        let mut physical = fs::Placement::contiguous(first);
        if head < bytes {
            let (dev2, second) = map_part(place.second, bytes - head)?;
            if dev2 != dev {
                return Err(SimError::Layout(format!(
                    "file '{name}' would straddle two devices of the volume"
                )));
            }
            physical = fs::Placement {
                first,
                split: place.split,
                second,
            };
        }
        let file = fs::new_file(name, dev, physical, size, prep);
        let id = world.cache.add_file(file.pages);
        debug_assert_eq!(id as usize, world.files.len());
        world.files.push(file);
        file_id.insert(name.clone(), id);
    }

    // Only the files' data chunks exist (fio made them before the run);
    // then the metadata chunks the aged filesystem and the files' items
    // need, placed by the run's allocator.
    if let Some(r) = world.raid.as_mut() {
        r.trim_data(layout.end());
        let aged = btrfs.as_ref().map_or(0, |v| v.metadata_used);
        r.use_metadata(aged.saturating_add(file_items));
        let (used, capacity, _) = r.metadata_use();
        if used > capacity {
            return Err(SimError::Volume(format!(
                "{used} bytes of metadata ({aged} from --metadata-used, {file_items} for the \
                 job's files) do not fit: the devices have room for metadata chunks holding \
                 {capacity}"
            )));
        }
    }

    // Jobs and their contexts.
    let mut walls: Vec<u32> = Vec::new();
    let mut zeta = ZetaCache::default();
    for (i, plan) in plans.into_iter().enumerate() {
        // fio's `randseed` fixes the job's streams whatever the run's
        // seed; `randrepeat=0` draws them apart from the repeating ones.
        let base = match plan.seed {
            Some(s) => s,
            None if plan.randrepeat => scenario.seed,
            None => scenario.seed ^ NO_RANDREPEAT,
        };
        let rng = match plan.seed {
            Some(s) => Stream::from_seed(s ^ u64::from(plan.clone)),
            None => Stream::new(base, Entity::Job(i as u32)),
        };
        let ids: Vec<u32> = plan.files.iter().map(|f| file_id[&f.name]).collect();
        // fio draws random offsets as blocks of `ba` (its smallest block
        // size unless `blockalign=` says otherwise).
        let unit = plan
            .block_align
            .unwrap_or_else(|| plan.bs.iter().map(|b| b.0).min().unwrap_or(PAGE))
            .max(1);
        let zones = match &plan.distribution {
            fio::RandomDistribution::Zoned(z) => Some(Arc::new(ZoneIndex::new(z, false))),
            fio::RandomDistribution::ZonedAbs(z) => Some(Arc::new(ZoneIndex::new(z, true))),
            _ => None,
        };
        let gens = plan
            .files
            .iter()
            .enumerate()
            .map(|(k, f)| {
                let key = match plan.seed {
                    Some(s) => s ^ (u64::from(plan.clone) << 20) ^ k as u64,
                    None => base ^ ((i as u64) << 20) ^ k as u64,
                };
                let skew = Skew::new(
                    &plan.distribution,
                    zones.as_ref(),
                    f.size,
                    unit,
                    key,
                    &mut zeta,
                );
                OffsetGen::new(f.size, unit, key, !plan.norandommap)
                    .with_skew(skew)
                    .with_stride(plan.stride)
                    .starting_at(f.offset)
            })
            .collect();
        let nctx = contexts_of(plan.engine, plan.direct, plan.iodepth);
        let ctx_first = world.ctxs.len() as u32;
        for _ in 0..nctx {
            world.ctxs.push(Ctx::new(i as u32));
        }
        let wall = plan.wall as usize;
        if walls.len() <= wall {
            walls.resize(wall + 1, 0);
        }
        walls[wall] += 1;
        world
            .jobs
            .push(Job::new(plan, rng, ids, gens, ctx_first, nctx));
    }
    world.walls_left = walls;
    let dirs = world
        .jobs
        .iter()
        .map(|j| j.plan.dir as usize + 1)
        .max()
        .unwrap_or(0);
    world.dir_locks = vec![crate::world::DirLock::default(); dirs];
    if world.jobs.iter().any(|j| j.plan.file_call.is_some()) {
        world.inode_locks = vec![crate::world::DirLock::default(); world.files.len()];
    }
    world.zbd_setup();
    if let (Some(policy), Some(raid)) = (flush, world.raid.as_ref()) {
        let pages: Vec<u32> = world.files.iter().map(|f| f.pages).collect();
        let state = btrfs_state(policy, raid, &pages, world.ctxs.len(), scenario.cpus)?;
        world.btrfs = Some(Box::new(state));
        world.btrfs_start();
    }
    Ok(Built {
        world,
        cgroups,
        notes,
    })
}
