//! Typed job specification produced by the parser.
//!
//! One [`JobSpec`] per job section, with every `[global]` section above it
//! already applied. Defaults are fio's (Linux build); each field documents
//! its default and the option(s) that set it.

/// Index of the read direction in per-direction arrays (`bs`, `rate`, ...).
pub const DDIR_READ: usize = 0;
/// Index of the write direction in per-direction arrays.
pub const DDIR_WRITE: usize = 1;
/// Index of the trim direction in per-direction arrays.
pub const DDIR_TRIM: usize = 2;

/// I/O engine (`ioengine=`).
///
/// `vsync`, `pvsync` and `pvsync2` are vectored variants of `sync`/`psync`;
/// they issue one I/O at a time exactly like their plain counterparts and the
/// simulator treats them the same way. The variant is kept so that reports can
/// print the engine name the job file asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// `sync`: read(2)/write(2) plus lseek(2).
    Sync,
    /// `psync`: pread(2)/pwrite(2). fio's default engine on Linux.
    Psync,
    /// `vsync`: readv(2)/writev(2); simulated like `sync`.
    Vsync,
    /// `pvsync`: preadv(2)/pwritev(2); simulated like `psync`.
    Pvsync,
    /// `pvsync2`: preadv2(2)/pwritev2(2); simulated like `psync`.
    Pvsync2,
    /// `libaio`: Linux native AIO; `iodepth` I/Os in flight when `direct=1`.
    Libaio,
    /// `io_uring`.
    IoUring,
    /// `null`: completes every I/O immediately, no device involved.
    Null,
    /// `cpp_null`: fio's `null` engine built as C++ (its external-engine
    /// example); simulated as `null`.
    CppNull,
    /// `posixaio`: POSIX `aio_read`/`aio_write` (glibc's threads);
    /// `iodepth` in flight, buffered too, simulated as `io_uring`'s.
    PosixAio,
    /// `io_uring_cmd`: NVMe passthrough commands through io_uring
    /// (`cmd_type=nvme`) to the namespace's character device: simulated
    /// as `io_uring` with `direct=1`, the page cache never in the path.
    IoUringCmd,
    /// `cpuio`: burns `cpuload` percent of a CPU for its runtime, no IO.
    Cpuio,
    /// `sg`: SCSI commands through the sg driver (`sg_write_mode`):
    /// simulated as direct IO at `iodepth` on the device.
    Sg,
    /// `mmap`: the file mapped, each IO a `memcpy` to or from the mapping:
    /// simulated as buffered `psync` (the page cache's reads and writes;
    /// the faults' own CPU is not simulated).
    Mmap,
    /// `falloc`: each IO a `fallocate(2)` of its range (a read keeps the
    /// size, a write extends it, a trim punches a hole): the filesystem's
    /// extent change, no data moved.
    Falloc,
    /// `ftruncate`: each write an `ftruncate(2)` of the file to its
    /// offset; fio fails a read or a trim with `EINVAL`.
    Ftruncate,
    /// `e4defrag`: each write an `EXT4_IOC_MOVE_EXT` of its range into a
    /// donor file (`donorname`, `inplace`): the range's data written again
    /// through the page cache to the donor's blocks, both files' extents
    /// changed; fio fails a read or a trim with `EINVAL`.
    E4defrag,
    /// `libzbc`: ZBC/ZAC commands through libzbc to a zoned disk, one at a
    /// time: simulated as `psync` with `direct=1` on the device zoned by
    /// `zonemode=zbd` (which it needs).
    Libzbc,
    /// A metadata engine: each file is one operation on the filesystem
    /// (`filecreate`, `filestat`, `filedelete` in fio 3.33; `dircreate`,
    /// `dirstat`, `dirdelete` from fio 3.34), its latency the call's.
    Meta(MetaEngine),
}

/// `zonemode=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ZoneMode {
    /// `none`.
    None,
    /// `strided`: zones of `zonesize` every `zonerange + zoneskip`.
    Strided,
    /// `zbd`: a zoned block device's zones and write pointers (refused:
    /// no zoned device model yet).
    Zbd,
}

/// `sg_write_mode=`: the SCSI command the `sg` engine sends for a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SgWriteMode {
    /// `write`: WRITE (the default).
    Write,
    /// `write_and_verify` (`verify`): WRITE AND VERIFY; simulated as a
    /// write (the device's compare is not).
    WriteAndVerify,
    /// `write_same` (`same`), `write_same_ndob`: WRITE SAME; simulated as
    /// a write of the range.
    WriteSame,
    /// `verify_bytchk_00`, `_01`, `_11`: VERIFY: the device reads the
    /// range; simulated as a read on the device, counted as the write fio
    /// counts it.
    Verify,
    /// `write_stream`: WRITE STREAM(16); simulated as a write.
    WriteStream,
}

/// What a metadata engine does to each of a job's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetaEngine {
    /// `filecreate`: `open(O_CREAT)`.
    FileCreate,
    /// `filestat`: `stat(2)` (`stat_type`).
    FileStat,
    /// `filedelete`: `unlink(2)`.
    FileDelete,
    /// `dircreate`: `mkdir(2)`.
    DirCreate,
    /// `dirstat`: `stat(2)` of a directory.
    DirStat,
    /// `dirdelete`: `rmdir(2)`.
    DirDelete,
}

impl MetaEngine {
    /// The engine's name.
    pub fn name(self) -> &'static str {
        match self {
            MetaEngine::FileCreate => "filecreate",
            MetaEngine::FileStat => "filestat",
            MetaEngine::FileDelete => "filedelete",
            MetaEngine::DirCreate => "dircreate",
            MetaEngine::DirStat => "dirstat",
            MetaEngine::DirDelete => "dirdelete",
        }
    }

    /// The engine creates its files (or directories) during the run.
    pub fn creates(self) -> bool {
        matches!(self, MetaEngine::FileCreate | MetaEngine::DirCreate)
    }

    /// The engine removes its files, so a second pass finds none.
    pub fn deletes(self) -> bool {
        matches!(self, MetaEngine::FileDelete | MetaEngine::DirDelete)
    }

    /// It acts on directories.
    pub fn dirs(self) -> bool {
        matches!(
            self,
            MetaEngine::DirCreate | MetaEngine::DirStat | MetaEngine::DirDelete
        )
    }
}

impl Engine {
    /// The name fio uses for this engine.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Sync => "sync",
            Engine::Psync => "psync",
            Engine::Vsync => "vsync",
            Engine::Pvsync => "pvsync",
            Engine::Pvsync2 => "pvsync2",
            Engine::Libaio => "libaio",
            Engine::IoUring => "io_uring",
            Engine::Null => "null",
            Engine::CppNull => "cpp_null",
            Engine::PosixAio => "posixaio",
            Engine::IoUringCmd => "io_uring_cmd",
            Engine::Mmap => "mmap",
            Engine::Sg => "sg",
            Engine::Cpuio => "cpuio",
            Engine::Falloc => "falloc",
            Engine::Ftruncate => "ftruncate",
            Engine::E4defrag => "e4defrag",
            Engine::Libzbc => "libzbc",
            Engine::Meta(m) => m.name(),
        }
    }

    /// True for engines that can keep more than one I/O in flight per job.
    pub fn is_async(self) -> bool {
        matches!(
            self,
            Engine::Libaio
                | Engine::IoUring
                | Engine::Null
                | Engine::CppNull
                | Engine::PosixAio
                | Engine::IoUringCmd
                | Engine::Sg
        )
    }

    /// The `direct=` an engine works with whatever the job says: a
    /// passthrough engine never goes through the page cache, `mmap` always
    /// does.
    pub fn forced_direct(self) -> Option<bool> {
        match self {
            Engine::IoUringCmd | Engine::Sg | Engine::Libzbc => Some(true),
            // The calls go to the filesystem, not through the page cache
            // or around it (e4defrag's copy is the page cache's).
            Engine::Mmap | Engine::Falloc | Engine::Ftruncate | Engine::E4defrag => Some(false),
            _ => None,
        }
    }

    /// How iolab runs an engine it simulates as another, for a note on
    /// stderr; `None` for the engines simulated as themselves.
    pub fn stands_in(self) -> Option<&'static str> {
        match self {
            Engine::CppNull => Some("simulated as null (fio's null engine built as C++)"),
            Engine::PosixAio => Some(
                "simulated as io_uring's queue: iodepth IOs in flight, buffered too (glibc's \
                 aio threads are not simulated)",
            ),
            Engine::IoUringCmd => Some(
                "NVMe passthrough: simulated as io_uring with direct=1 on the device (the page \
                 cache is never in the path)",
            ),
            Engine::Cpuio => Some(
                "CPU time and no IO: the job holds cpuload percent of a CPU for its runtime, its \
                 usr_cpu; the simulated CPUs are not shared, so it slows no other job",
            ),
            Engine::Libzbc => Some(
                "ZBC/ZAC commands through libzbc: simulated as psync with direct=1 on the \
                 device that zonemode=zbd zones (libzbc's own costs are not simulated)",
            ),
            Engine::Sg => Some(
                "SCSI commands through the sg driver: simulated as direct IO at iodepth on the \
                 device (the SCSI layer's own costs are not simulated)",
            ),
            Engine::Mmap => Some(
                "simulated as buffered psync: each IO the page cache's read or write of its \
                 pages (the page faults' own CPU is not simulated); direct= has no effect",
            ),
            Engine::Falloc => Some(
                "each IO is a fallocate(2) of its range on the simulated filesystem (a read keeps \
                 the file's size, a write may extend it, a trim punches a hole and drops the \
                 range's clean cached pages): the call's CPU time, the inode's lock and the \
                 extent change's log items or transaction; no data moves; direct= has no effect",
            ),
            Engine::Ftruncate => Some(
                "each write is an ftruncate(2) of the file to its offset on the simulated \
                 filesystem (the call's CPU time, the inode's lock, the size and extent change \
                 logged; a shrink drops the clean cached pages past the new end); no data moves",
            ),
            Engine::E4defrag => Some(
                "EXT4_IOC_MOVE_EXT is ext4's; iolab simulates what it does on the simulated \
                 filesystem: both inodes' extent change (logged as falloc's), then the range's \
                 pages dirtied in the page cache for writeback to the donor's blocks (a range \
                 not cached is not read first here, where ext4 reads it)",
            ),
            _ => None,
        }
    }
}

/// I/O pattern (`rw=` / `readwrite=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RwMode {
    /// `read`: sequential reads (fio's default).
    Read,
    /// `write`: sequential writes.
    Write,
    /// `trim`: sequential trims.
    Trim,
    /// `randread`.
    RandRead,
    /// `randwrite`.
    RandWrite,
    /// `randtrim`.
    RandTrim,
    /// `rw` or `readwrite`: sequential mix, split by `rwmixread`.
    ReadWrite,
    /// `randrw`: random mix, split by `rwmixread`.
    RandRw,
    /// `trimwrite`: sequential trim then write of the same blocks.
    TrimWrite,
    /// `randtrimwrite`: like `trimwrite` with random offsets.
    RandTrimWrite,
}

impl RwMode {
    /// The canonical fio spelling.
    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::Trim => "trim",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::RandTrim => "randtrim",
            RwMode::ReadWrite => "rw",
            RwMode::RandRw => "randrw",
            RwMode::TrimWrite => "trimwrite",
            RwMode::RandTrimWrite => "randtrimwrite",
        }
    }

    /// True when offsets are chosen at random.
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandTrim
                | RwMode::RandRw
                | RwMode::RandTrimWrite
        )
    }

    /// True when the pattern issues reads.
    pub fn reads(self) -> bool {
        matches!(
            self,
            RwMode::Read | RwMode::RandRead | RwMode::ReadWrite | RwMode::RandRw
        )
    }

    /// True when the pattern issues writes.
    pub fn writes(self) -> bool {
        matches!(
            self,
            RwMode::Write
                | RwMode::RandWrite
                | RwMode::ReadWrite
                | RwMode::RandRw
                | RwMode::TrimWrite
                | RwMode::RandTrimWrite
        )
    }

    /// True when the pattern issues trims.
    pub fn trims(self) -> bool {
        matches!(
            self,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite
        )
    }
}

/// `rw=` value including its optional `:N` postfix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rw {
    /// The pattern. Default [`RwMode::Read`].
    pub mode: RwMode,
    /// Random patterns only: number of I/Os issued (sequentially) before a new
    /// random offset is drawn, from `rw=randread:N`. Default 1.
    pub seq_n: u32,
    /// Sequential patterns only: bytes skipped after every I/O, from
    /// `rw=write:4k` (sequential I/O with holes); negative goes backwards
    /// (`rw=read:-8k`). Default 0.
    pub seq_add: i64,
    /// `rw=filecreate`, `filestat` or `filedelete` as fio's example files
    /// for those engines write it (fio 3.33's parser refuses the value):
    /// the engine it names; `mode` is then `read`.
    pub engine_value: Option<MetaEngine>,
}

impl Default for Rw {
    fn default() -> Self {
        Rw {
            mode: RwMode::Read,
            seq_n: 1,
            seq_add: 0,
            engine_value: None,
        }
    }
}

/// Block-size range for one direction, in bytes. `min == max` for a fixed size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BsRange {
    /// Smallest block size.
    pub min: u64,
    /// Largest block size.
    pub max: u64,
}

impl BsRange {
    /// A fixed block size.
    pub fn fixed(bs: u64) -> Self {
        BsRange { min: bs, max: bs }
    }
}

/// fio's flow control (3.33): the jobs of one `flow_id` keep to shares
/// of the flow's IOs in proportion to their weights; a job that is ahead
/// of its share waits (`flow=3` beside `flow=1` issues three IOs to one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flow {
    /// `flow=`: the weight (0, the default: the job takes no part).
    pub weight: u32,
    /// `flow_id=`. Default 0.
    pub id: u32,
    /// `flow_sleep=`: how long a held-back job sleeps before it looks
    /// again; 0 (the default): until another job of the flow issues.
    pub sleep_ns: u64,
}

/// `/dev/null` or `/dev/zero`: character devices whose reads and writes
/// the kernel completes in the call, no device behind them.
pub fn is_null_device(name: &str) -> bool {
    matches!(name, "/dev/null" | "/dev/zero")
}

/// What fio's steady-state detection (`ss=`) watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SteadyMetric {
    /// IOs per second.
    Iops,
    /// Bytes per second.
    Bw,
}

impl SteadyMetric {
    /// fio's name (`iops`, `bw`).
    pub fn name(self) -> &'static str {
        match self {
            SteadyMetric::Iops => "iops",
            SteadyMetric::Bw => "bw",
        }
    }
}

/// `ss=`, `ss_dur=`, `ss_ramp=`: a job (or its reporting group) ends once
/// its last `ss_dur` seconds of per-second IOPS or bandwidth hold still
/// (fio 3.33's `steadystate.c`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Steady {
    /// The figure watched.
    pub metric: SteadyMetric,
    /// The criterion is a slope (`iops_slope`, `bw_slope`), else the
    /// largest deviation from the mean.
    pub slope: bool,
    /// The limit is a percentage of the mean (`10%`).
    pub pct: bool,
    /// The limit.
    pub limit: f64,
    /// `ss_dur`, whole seconds (0: detection off, fio's default).
    pub dur_s: u32,
    /// `ss_ramp`: the time after the job's start before data is kept.
    pub ramp_ns: u64,
}

impl Default for Steady {
    /// fio's defaults: `ss=iops:3%`, no duration (off), no ramp.
    fn default() -> Self {
        Steady {
            metric: SteadyMetric::Iops,
            slope: false,
            pct: true,
            limit: 3.0,
            dur_s: 0,
            ramp_ns: 0,
        }
    }
}

impl Steady {
    /// fio's spelling of the criterion (`iops:10.000000%`).
    pub fn name(&self) -> String {
        format!(
            "{}{}:{:.6}{}",
            self.metric.name(),
            if self.slope { "_slope" } else { "" },
            self.limit,
            if self.pct { "%" } else { "" }
        )
    }
}

/// A size that is either absolute or a percentage of the file/device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SizeSpec {
    /// Bytes.
    Bytes(u64),
    /// Percentage, 1..=100.
    Percent(u32),
}

/// Options given as a count of zones (fio's `size_nz` and friends): each
/// is multiplied by `zonesize` once the job's options are all read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ZoneUnits {
    pub size: Option<u64>,
    pub io_size: Option<u64>,
    pub offset: Option<u64>,
    pub offset_increment: Option<u64>,
    pub zoneskip: Option<u64>,
}

/// Per-file size range (`filesize=`), in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SizeRange {
    /// Smallest file size.
    pub min: u64,
    /// Largest file size (equal to `min` unless a range was given).
    pub max: u64,
}

/// How the next file is chosen (`file_service_type=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileServiceType {
    /// `roundrobin` (fio's default).
    RoundRobin,
    /// `random`: uniform choice.
    Random,
    /// `sequential`: finish one file before moving to the next.
    Sequential,
}

/// `fadvise_hint=` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fadvise {
    /// `0`: no fadvise call.
    None,
    /// `1` (fio's default): `FADV_RANDOM` for random jobs, `FADV_SEQUENTIAL` for
    /// sequential ones.
    Type,
    /// `random`: always `FADV_RANDOM`.
    Random,
    /// `sequential`: always `FADV_SEQUENTIAL`.
    Sequential,
    /// `noreuse`: `FADV_NOREUSE`.
    NoReuse,
}

/// `fallocate=` value: how files are preallocated at layout time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fallocate {
    /// `none` or `0`: no preallocation.
    None,
    /// `native` (fio's default on Linux): fallocate(2), falling back to none.
    Native,
    /// `posix` or `1`: `posix_fallocate(3)`.
    Posix,
    /// `keep`: fallocate(2) with `FALLOC_FL_KEEP_SIZE`.
    Keep,
    /// `truncate`: only ftruncate(2) to the final size.
    Truncate,
}

/// `exit_what=`: which jobs an `exitall` job stops when it finishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExitWhat {
    /// `group` (fio's default): the jobs of its reporting group.
    Group,
    /// `stonewall`: the currently running jobs; continue after the next stonewall.
    Stonewall,
    /// `all`: every job.
    All,
}

/// `rate_process=`: how rate-limited I/O is spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RateProcess {
    /// `linear` (fio's default): evenly spaced.
    Linear,
    /// `poisson`: exponential inter-arrival times.
    Poisson,
}

/// `random_distribution=`: how a random job picks its offsets (fio's
/// `FIO_RAND_DIST_*`). Only random patterns (`rw=rand*`) use it, as in fio.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum RandomDistribution {
    /// `random` (the default): uniform, with fio's random map unless
    /// `norandommap`.
    #[default]
    Uniform,
    /// `zipf:THETA[:CENTER]`: Zipf with exponent `theta` (not 1; fio's
    /// default 1.1).
    Zipf {
        /// Zipf exponent.
        theta: f64,
        /// Where rank 1 lands, as a fraction of the file; none: a random
        /// place per file.
        center: Option<f64>,
    },
    /// `pareto:H[:CENTER]`: Pareto with `0 < h < 1` (fio's default 0.2).
    Pareto {
        /// Pareto parameter.
        h: f64,
        /// As for zipf.
        center: Option<f64>,
    },
    /// `normal:DEV[:CENTER]`: fio's approximate Gaussian, `dev` a
    /// percentage of the file in `[0, 100)`.
    Normal {
        /// Deviation, percent of the blocks.
        dev: f64,
        /// Fraction of the file the mean is moved by from the middle; none:
        /// no move.
        center: Option<f64>,
    },
    /// `zoned:A/S:...`: per direction, zones of `S` percent of the file that
    /// take `A` percent of the accesses, in file order.
    Zoned([Vec<Zone>; 3]),
    /// `zoned_abs:A/SIZE:...`: zones given in bytes.
    ZonedAbs([Vec<Zone>; 3]),
}

impl RandomDistribution {
    /// Uniform random offsets, the only kind fio keeps a random map for.
    pub fn is_uniform(&self) -> bool {
        matches!(self, RandomDistribution::Uniform)
    }
}

/// One zone of a zoned distribution: `access` percent of a direction's
/// random offsets fall, uniformly, in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zone {
    /// Percent of the accesses, 1 to 100.
    pub access: u32,
    /// Its extent: percent of the file (`zoned`) or bytes (`zoned_abs`).
    pub size: u64,
}

/// Where an option was set: for errors found after parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionAt {
    /// Canonical option name.
    pub option: String,
    /// File (the job file or an included one).
    pub file: String,
    /// 1-based line.
    pub line: usize,
}

/// fio's default `percentile_list`.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// One job section with all `[global]` defaults above it applied.
///
/// The log files of `write_bw_log=`, `write_iops_log=`, `write_lat_log=`
/// and `per_job_logs=`; the CLI writes them (see
/// [`write_log`](crate::stats::write_log)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRequest {
    /// Prefix of the bandwidth log; empty: the job's name. Default none.
    pub bw: Option<String>,
    /// Prefix of the IOPS log.
    pub iops: Option<String>,
    /// Prefix of the latency logs.
    pub lat: Option<String>,
    /// `write_hist_log`: prefix of the completion-latency histogram log.
    pub hist: Option<String>,
    /// `log_hist_msec`: its interval, ms (0, the default: no lines).
    pub hist_msec: u32,
    /// `log_hist_coarseness`: 2^N of fio's buckets per column, 0 to 6.
    pub hist_coarseness: u32,
    /// `per_job_logs`: one file per job (`PREFIX_bw.N.log`), else one per
    /// prefix (`PREFIX_bw.log`). Default true.
    pub per_job: bool,
    /// `log_offset`: each line has the IO's offset before its priority
    /// (0 for an averaged entry, as fio writes it). Default false.
    pub offset: bool,
}

impl Default for LogRequest {
    fn default() -> Self {
        LogRequest {
            bw: None,
            iops: None,
            lat: None,
            hist: None,
            hist_msec: 0,
            hist_coarseness: 0,
            per_job: true,
            offset: false,
        }
    }
}

/// `numjobs` is not expanded: a section with `numjobs=4` is one `JobSpec`.
/// Times are nanoseconds, sizes bytes. Per-direction arrays are indexed by
/// [`DDIR_READ`], [`DDIR_WRITE`], [`DDIR_TRIM`].
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// Job name: the section name, or the job's own `name=` (a `name=` in
    /// `[global]` does not rename jobs, as in fio).
    pub name: String,
    /// The section header's name, `[this]` (fio's `--section` matches it).
    pub section: String,
    /// File that holds the section header.
    pub file: String,
    /// 1-based line of the section header.
    pub line: usize,
    /// Effective options as written (after variable expansion), `[global]`
    /// options first, in file order; canonical option names. Bare options have
    /// an empty value. Used for fio's JSON "job options".
    pub options: Vec<(String, String)>,
    /// Where each option was set, globals first (the last entry for a name
    /// wins, as its value does).
    pub option_at: Vec<OptionAt>,
    /// How many of [`options`](Self::options) come from the `[global]`
    /// sections before the job: fio's JSON lists those as "global options"
    /// and only the rest, the section's own, as the job's "job options".
    pub global_count: usize,
    /// `description=`. Default none.
    pub description: Option<String>,

    /// `ioengine=`. Default [`Engine::Psync`].
    pub ioengine: Engine,
    /// `iodepth=`. Default 1 (minimum 1).
    pub iodepth: u32,
    /// `direct=` / inverse of `buffered=`. Default false (buffered I/O).
    pub direct: bool,
    /// `rw=` / `readwrite=`. Default `read`.
    pub rw: Rw,
    /// `rwmixread=` (and `100 - rwmixwrite=`): percentage of reads in mixed
    /// patterns. Default 50.
    pub rwmixread: u32,
    /// Block size per direction from `bs=`/`blocksize=` and
    /// `bsrange=`/`blocksize_range=` (a range set for a direction wins over
    /// `bs=` for that direction, whatever the order, as in fio). Default 4096.
    pub bs: [BsRange; 3],
    /// `bssplit=` per direction: `(block size, percent)` sorted by percent,
    /// ascending and stable, as fio sorts it (`bssplit_ddir` in fio's
    /// `options.c`); a direction with entries draws each IO's size from
    /// them and its [`bs`](Self::bs) is their smallest to largest. Empty:
    /// no split.
    pub bssplit: [Vec<(u64, u32)>; 3],
    /// `size=`: total I/O region per job. Default none (fio then uses the
    /// file sizes); `size=0` also means none.
    pub size: Option<SizeSpec>,
    /// `io_size=` / `io_limit=`: bytes of I/O to issue. Default none (= size).
    pub io_size: Option<SizeSpec>,
    /// `filesize=`: per-file size (or range). Default none (size / nrfiles).
    pub filesize: Option<SizeRange>,
    /// `nrfiles=` / `nr_files=`. Default 1. fio ignores it when `filename=` is
    /// given and uses the listed files instead.
    pub nrfiles: u32,
    /// `filename=`: `:`-separated list (`\:` escapes a colon). Default empty
    /// (fio generates `jobname.jobnum.filenum`).
    pub filename: Vec<String>,
    /// `directory=`: `:`-separated list. Default empty (current directory).
    pub directory: Vec<String>,
    /// `file_service_type=`. Default [`FileServiceType::RoundRobin`].
    pub file_service_type: FileServiceType,
    /// `file_service_type=...:N`: I/Os issued to a file before switching.
    /// Default 1.
    pub file_service_nr: u32,
    /// `numjobs=`: clones of this job. Default 1.
    pub numjobs: u32,
    /// `runtime=` / `timeout=`. Default none (no time limit); `runtime=0` also
    /// means none.
    pub runtime_ns: Option<u64>,
    /// `time_based`. Default false.
    pub time_based: bool,
    /// `startdelay=`: the job starts this long after the run does, in ns;
    /// a range `(low, high)` draws each clone's delay in it (fio's
    /// `rand_between`). Default `(0, 0)`.
    pub start_delay_ns: (u64, u64),
    /// `ramp_time=`. Default 0.
    pub ramp_time_ns: u64,
    /// `loops=`. Default 1.
    pub loops: u32,
    /// `number_ios=`: the job stops once it has issued this many IOs (all
    /// directions) per loop, whatever else would end it later; 0: no such
    /// limit (fio's default).
    pub number_ios: u64,
    /// `offset=` / `fileoffset=`: where each file's IO region starts, bytes
    /// or a percent of the file's size before the run. Default none (0).
    pub offset: Option<SizeSpec>,
    /// `offset_increment=`: added to the start once per clone number
    /// (fio's `subjob_number`), bytes or a percent. Default none (0).
    pub offset_increment: Option<SizeSpec>,
    /// `offset_align=`: a start made from a percent is rounded up to a
    /// multiple of it. Default 0: the smallest block size.
    pub offset_align: u64,
    /// `read_iolog=`: the logs to replay (`:`-separated, one per clone),
    /// as named. Default none.
    pub read_iolog: Vec<String>,
    /// The logs of [`read_iolog`](Self::read_iolog), read and parsed.
    pub replay_logs: Vec<std::sync::Arc<super::iolog::IoLog>>,
    /// `replay_no_stall=`: replay as fast as the depth allows, not by the
    /// log's times. Default false.
    pub replay_no_stall: bool,
    /// `replay_time_scale=`: the log's pace in percent (200: twice as
    /// fast). Default 100.
    pub replay_time_scale: u32,
    /// `replay_redirect=`, `replay_scale=`, `replay_align=`.
    pub replay: super::iolog::Replay,
    /// `random_distribution=`. Default uniform.
    pub random_distribution: RandomDistribution,
    /// `fsync=`: fsync after this many writes. Default 0 (never).
    pub fsync: u32,
    /// `fdatasync=`: fdatasync after this many writes. Default 0 (never).
    pub fdatasync: u32,
    /// `end_fsync=`. Default false.
    pub end_fsync: bool,
    /// `fsync_on_close=`. Default false.
    pub fsync_on_close: bool,
    /// `invalidate=`: drop the file's page cache at job start. Default true.
    pub invalidate: bool,
    /// `overwrite=`. Default false. As written; fio also lays files out with
    /// data for any job that reads, see [`JobSpec::layout_writes_data`].
    pub overwrite: bool,
    /// `create_fsync=`: fsync a laid-out file after creation. Default true.
    pub create_fsync: bool,
    /// `create_on_open=`: create files when the job opens them, not
    /// before the run. Default false.
    pub create_on_open: bool,
    /// `openfiles=`: files open at once (`None`: all of them).
    pub openfiles: Option<u32>,
    /// `fallocate=`. Default [`Fallocate::Native`].
    pub fallocate: Fallocate,
    /// `fadvise_hint=`. Default [`Fadvise::Type`].
    pub fadvise_hint: Fadvise,
    /// `rate=`: bytes/s cap per direction. Default 0 (no cap).
    pub rate: [u64; 3],
    /// `rate_iops=`: IOPS cap per direction. Default 0 (no cap).
    pub rate_iops: [u32; 3],
    /// `rate_process=`. Default [`RateProcess::Linear`].
    pub rate_process: RateProcess,
    /// `thinktime=`: stall after I/O completion (unitless = microseconds).
    /// Default 0.
    pub thinktime_ns: u64,
    /// `thinktime_blocks=`: I/Os between stalls. Default 1.
    pub thinktime_blocks: u32,
    /// `flow=`, `flow_id=`, `flow_sleep=`: IOs kept in proportion
    /// between the jobs of one flow.
    pub flow: Flow,
    /// `cgroup=`. Default none (the root group).
    pub cgroup: Option<String>,
    /// `cgroup_weight=` (100..=1000). Default none (the cgroup's default).
    pub cgroup_weight: Option<u32>,
    /// `new_group`: start a new reporting group. Default false.
    pub new_group: bool,
    /// `stonewall` / `wait_for_previous`: wait for earlier jobs and start a new
    /// group. Default false.
    pub stonewall: bool,
    /// `verify=`: a method given (anything but `0`): the job reads back
    /// what it wrote. `None` when not given (`verify_pattern` then turns
    /// it on, as fio's does).
    pub verify: Option<bool>,
    /// `verify_pattern=` given.
    pub verify_pattern: bool,
    /// `do_verify=`: the read-back phase after the writes. Default true.
    pub do_verify: bool,
    /// `verify_backlog=`: read back every N written blocks as the job
    /// goes (0: only after the writes). Default 0.
    pub verify_backlog: u64,
    /// `cpuload=` (`cpuio`): percent of a CPU. Default 0 (none given).
    pub cpuload: u32,
    /// `io_submit_mode=offload`: IOs handed to submission threads, so a
    /// rated job does not wait for its IOs in flight before it sleeps
    /// to its next IO's time. Default false (`inline`).
    pub submit_offload: bool,
    /// `zonemode=`: `None` when not given (fio then takes `strided` if a
    /// `zonesize=` is given, else `none`).
    pub zonemode: Option<ZoneMode>,
    /// `zonesize=`, `zonerange=`, `zoneskip=`. Default 0.
    pub zonesize: u64,
    pub zonerange: u64,
    pub zoneskip: u64,
    /// Sizes given in zones (`524z`), turned into bytes by the zone size
    /// when the job's options are all read.
    pub zone_units: ZoneUnits,
    /// `max_open_zones=`, `job_max_open_zones=` (0: no limit, the
    /// default), `read_beyond_wp=` (default false),
    /// `zone_reset_threshold=` and `zone_reset_frequency=` (fractions,
    /// default 0): zonemode=zbd's.
    pub max_open_zones: u32,
    pub job_max_open_zones: u32,
    pub read_beyond_wp: bool,
    pub zone_reset_threshold: f64,
    pub zone_reset_frequency: f64,
    /// `blockalign=` / `ba=`: the boundary random offsets are drawn on,
    /// per direction (fio's `td->o.ba`; default the smallest block size).
    pub blockalign: [Option<u64>; 3],
    /// `sg_write_mode=` (the `sg` engine's). Default
    /// [`SgWriteMode::Write`].
    pub sg_write_mode: SgWriteMode,
    /// `latency_target=` (ns; 0, the default: none), `latency_window=`
    /// (ns), `latency_percentile=` (default 100), `latency_run=`.
    pub latency_target_ns: u64,
    pub latency_window_ns: u64,
    pub latency_percentile: f64,
    pub latency_run: bool,
    /// `ss=`, `ss_dur=`, `ss_ramp=`: steady-state detection. Default off.
    pub steady: Steady,
    /// `donorname=` (the `e4defrag` engine's donor file; fio requires it).
    /// Default none.
    pub donorname: Option<String>,
    /// `inplace=` (`e4defrag`'s): allocate the donor's range before each
    /// move and truncate it after, instead of once at the start. Default
    /// false.
    pub inplace: bool,
    /// `fill_device` / `fill_fs`: the job's files take the device's free
    /// space, whatever `size=` says, and the job ends when it is full
    /// (fio's ENOSPC, which ends it as its runtime would). Default false.
    pub fill_device: bool,
    /// `wait_for=`: the name of the jobs this one starts after (fio's
    /// `waitee_running`: every other job of that name has exited).
    /// Default none.
    pub wait_for: Option<String>,
    /// `exitall`: when this job finishes, stop the jobs chosen by
    /// `exit_what`. Default false. Note: fio sets a process-wide flag, so one
    /// `exitall` job makes every finishing job stop the others; and any value
    /// (even `exitall=0`) turns it on.
    pub exitall: bool,
    /// `exit_what=`. Default [`ExitWhat::Group`].
    pub exit_what: ExitWhat,
    /// `group_reporting`. Default false.
    pub group_reporting: bool,
    /// `log_avg_msec=`: averaging window of the bw/iops/lat logs. Default 0
    /// (one entry per I/O).
    pub log_avg_msec: u32,
    /// The fio log files the job asks for.
    pub logs: LogRequest,
    /// `randseed=`. Default none (fio then seeds from `randrepeat`; its
    /// option table default is 0x89).
    pub randseed: Option<u64>,
    /// `randrepeat=` / `allrandrepeat=`: repeatable random sequence. Default
    /// true.
    pub randrepeat: bool,
    /// `norandommap`. Default false.
    pub norandommap: bool,
    /// `kb_base=`: 1024 (default) or 1000. Applied to the whole section before
    /// its other options, as fio does.
    pub kb_base: u32,
    /// `unit_base=`: 0 (auto, default), 8 (bytes) or 1 (bits) for reports.
    pub unit_base: u32,
    /// `unified_rw_reporting=`: the directions reported apart, as one, or
    /// both. Default apart.
    pub unified_rw: crate::stats::Unified,
    /// `percentile_list=`. Default [`DEFAULT_PERCENTILES`].
    pub percentile_list: Vec<f64>,
    /// Decimals fio prints the points with: the most any point of
    /// `percentile_list=` was written with (2 for the default list).
    pub percentile_precision: u32,
    /// `clat_percentiles=`. Default true.
    pub clat_percentiles: bool,
    /// `lat_percentiles=`. Default false.
    /// `slat_percentiles=`: list submission latency's percentiles too.
    /// Default false.
    pub slat_percentiles: bool,
    pub lat_percentiles: bool,
}

impl JobSpec {
    /// Whether the job verifies: `verify=` a method, or a
    /// `verify_pattern=` without a `verify=`.
    pub fn verifies(&self) -> bool {
        self.verify.unwrap_or(self.verify_pattern)
    }

    /// The block device a job without `size=` or `filesize=` takes its
    /// size from, as fio does (`filename=/dev/…`): the simulated device's
    /// capacity stands for it, which the CLI says on stderr.
    pub fn sized_by_device(&self) -> Option<&str> {
        if self.size.is_some()
            || self.filesize.is_some()
            || !self.replay_logs.is_empty()
            || self.fill_device
        {
            return None;
        }
        self.filename
            .iter()
            .find(|f| f.starts_with("/dev/") && !is_null_device(f))
            .map(String::as_str)
    }

    /// Every file of the job is the kernel's `/dev/null` or `/dev/zero`
    /// (fio's `steadystate.fio`): its IO reaches no device.
    pub fn on_null_device(&self) -> bool {
        !self.filename.is_empty() && self.filename.iter().all(|f| is_null_device(f))
    }

    /// File and line where `option` (canonical name) was last set, or the
    /// section's own when it was not set at all.
    pub fn where_set(&self, option: &str) -> (&str, usize) {
        self.option_at
            .iter()
            .rev()
            .find(|o| o.option == option)
            .map_or((self.file.as_str(), self.line), |o| {
                (o.file.as_str(), o.line)
            })
    }

    /// A job with every field at fio's default.
    pub fn fio_default(name: &str, file: &str, line: usize) -> Self {
        JobSpec {
            name: name.to_string(),
            section: name.to_string(),
            file: file.to_string(),
            line,
            options: Vec::new(),
            option_at: Vec::new(),
            global_count: 0,
            description: None,
            ioengine: Engine::Psync,
            iodepth: 1,
            direct: false,
            rw: Rw::default(),
            rwmixread: 50,
            bs: [BsRange::fixed(4096); 3],
            bssplit: [Vec::new(), Vec::new(), Vec::new()],
            size: None,
            io_size: None,
            filesize: None,
            nrfiles: 1,
            filename: Vec::new(),
            directory: Vec::new(),
            file_service_type: FileServiceType::RoundRobin,
            file_service_nr: 1,
            numjobs: 1,
            runtime_ns: None,
            time_based: false,
            start_delay_ns: (0, 0),
            ramp_time_ns: 0,
            loops: 1,
            number_ios: 0,
            offset: None,
            offset_increment: None,
            offset_align: 0,
            read_iolog: Vec::new(),
            replay_logs: Vec::new(),
            replay_no_stall: false,
            replay_time_scale: 100,
            replay: super::iolog::Replay::default(),
            random_distribution: RandomDistribution::Uniform,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            fsync_on_close: false,
            invalidate: true,
            overwrite: false,
            create_fsync: true,
            create_on_open: false,
            openfiles: None,
            fallocate: Fallocate::Native,
            fadvise_hint: Fadvise::Type,
            rate: [0; 3],
            rate_iops: [0; 3],
            rate_process: RateProcess::Linear,
            thinktime_ns: 0,
            thinktime_blocks: 1,
            flow: Flow::default(),
            cgroup: None,
            cgroup_weight: None,
            new_group: false,
            stonewall: false,
            wait_for: None,
            verify: None,
            fill_device: false,
            sg_write_mode: SgWriteMode::Write,
            steady: Steady::default(),
            latency_target_ns: 0,
            latency_window_ns: 0,
            latency_percentile: 100.0,
            latency_run: false,
            donorname: None,
            inplace: false,
            blockalign: [None; 3],
            zonemode: None,
            submit_offload: false,
            cpuload: 0,
            zonesize: 0,
            zone_units: ZoneUnits::default(),
            max_open_zones: 0,
            job_max_open_zones: 0,
            read_beyond_wp: false,
            zone_reset_threshold: 0.0,
            zone_reset_frequency: 0.0,
            zonerange: 0,
            zoneskip: 0,
            verify_pattern: false,
            do_verify: true,
            verify_backlog: 0,
            exitall: false,
            exit_what: ExitWhat::Group,
            group_reporting: false,
            log_avg_msec: 0,
            logs: LogRequest::default(),
            randseed: None,
            randrepeat: true,
            norandommap: false,
            kb_base: 1024,
            unit_base: 0,
            unified_rw: crate::stats::Unified::None,
            percentile_list: DEFAULT_PERCENTILES.to_vec(),
            percentile_precision: 2,
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
        }
    }

    /// True when fio lays the job's files out by writing them (then fsyncs
    /// them if `create_fsync`): the job reads, or has `overwrite=1`. Otherwise
    /// fio only sizes them (ftruncate plus `fallocate`), leaving unwritten
    /// extents.
    pub fn layout_writes_data(&self) -> bool {
        self.overwrite || self.rw.mode.reads()
    }

    /// `rwmixwrite`: percentage of writes in mixed patterns (`100 - rwmixread`).
    pub fn rwmixwrite(&self) -> u32 {
        100u32.saturating_sub(self.rwmixread)
    }
}
