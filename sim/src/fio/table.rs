//! The one table of every fio job option name (aliases included), sorted by
//! name, and how iolab treats each:
//!
//! - typed: parsed into a [`JobSpec`](super::JobSpec) field;
//! - cosmetic: does not change the simulated I/O; accepted and listed in
//!   [`JobFile::accepted`](super::JobFile::accepted), as not simulated
//!   (fio would act on it: a log, a priority, a CPU mask) or inert (it
//!   changes nothing fio measures either);
//! - unsupported: would change the simulated I/O but is not modelled; a
//!   parse error, unless the value is one that leaves fio's behaviour
//!   unchanged (usually its default, e.g. `offset=0`).
//!
//! Names come from fio's `options.c` (fio 3.3x up to the 2025 tree, the
//! union of both so older and newer job files parse) plus the common
//! `libaio`/`io_uring` engine options.

/// Options parsed into typed [`JobSpec`](super::JobSpec) fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Opt {
    Bs,
    Bsrange,
    Bssplit,
    NumberIos,
    Offset,
    OffsetAlign,
    OffsetIncrement,
    RandomDistribution,
    Buffered,
    Cgroup,
    CgroupWeight,
    ClatPercentiles,
    CreateFsync,
    CreateOnOpen,
    Description,
    Direct,
    Directory,
    EndFsync,
    ExitWhat,
    Exitall,
    FadviseHint,
    Fallocate,
    Fdatasync,
    FileServiceType,
    Filename,
    Filesize,
    Fsync,
    FsyncOnClose,
    GroupReporting,
    Invalidate,
    IoSize,
    Iodepth,
    Ioengine,
    KbBase,
    LatPercentiles,
    LogAvgMsec,
    PerJobLogs,
    LogOffset,
    UnifiedRw,
    WriteBwLog,
    WriteIopsLog,
    WriteLatLog,
    WriteHistLog,
    LogHistMsec,
    LogHistCoarseness,
    Loops,
    Name,
    NewGroup,
    Norandommap,
    Nrfiles,
    OpenFiles,
    Numjobs,
    Overwrite,
    PercentileList,
    RampTime,
    Randrepeat,
    Randseed,
    Rate,
    RateIops,
    RateProcess,
    Runtime,
    ReadIolog,
    ReplayAlign,
    ReplayNoStall,
    ReplayRedirect,
    ReplayScale,
    ReplayTimeScale,
    Startdelay,
    Rw,
    Rwmixread,
    Rwmixwrite,
    Size,
    Stonewall,
    Thinktime,
    ThinktimeBlocks,
    Flow,
    FlowId,
    FlowSleep,
    TimeBased,
    UnitBase,
    Verify,
    VerifyBacklog,
    VerifyPattern,
    DoVerify,
    FillDevice,
    SgWriteMode,
    Blockalign,
    IoSubmitMode,
    Cpuload,
    Donorname,
    Inplace,
    Steadystate,
    SsDur,
    SsRamp,
    LatencyTarget,
    LatencyWindow,
    LatencyPercentile,
    LatencyRun,
    ZoneMode,
    ZoneSize,
    ZoneRange,
    ZoneSkip,
    MaxOpenZones,
    JobMaxOpenZones,
    ReadBeyondWp,
    ZoneResetThreshold,
    ZoneResetFrequency,
    SlatPercentiles,
    WaitFor,
}

/// Values of an unsupported option that leave fio's behaviour unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Harmless {
    /// No value is harmless.
    Never,
    /// A value that reads as zero (`0`, `0k`, `0s`, `0,0`).
    Zero,
    /// One of these exact spellings.
    Values(&'static [&'static str]),
}

use Harmless as H;

/// How iolab treats one option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Typed(Opt),
    /// Not simulated, though fio would act on it in this job.
    Cosmetic(&'static str),
    /// Not simulated, and makes no difference to what fio measures either:
    /// fio's own mechanics (threads or processes, clock source, clean-up),
    /// or a detail of an option iolab rejects or a log it does not write.
    Inert(&'static str),
    Unsupported(Harmless, &'static str),
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Name as written in a job file.
    pub(crate) name: &'static str,
    /// fio's primary name (differs from `name` for aliases).
    pub(crate) canonical: &'static str,
    pub(crate) class: Class,
}

const fn typed(name: &'static str, canonical: &'static str, opt: Opt) -> Entry {
    Entry {
        name,
        canonical,
        class: Class::Typed(opt),
    }
}

const fn cosmetic(name: &'static str, canonical: &'static str, why: &'static str) -> Entry {
    Entry {
        name,
        canonical,
        class: Class::Cosmetic(why),
    }
}

const fn inert(name: &'static str, canonical: &'static str, why: &'static str) -> Entry {
    Entry {
        name,
        canonical,
        class: Class::Inert(why),
    }
}

const fn unsupported(
    name: &'static str,
    canonical: &'static str,
    ok: Harmless,
    what: &'static str,
) -> Entry {
    Entry {
        name,
        canonical,
        class: Class::Unsupported(ok, what),
    }
}

const R_BUF: &str = "buffer contents are not simulated";
const R_CPU: &str = "CPU placement is not simulated";
const R_CRED: &str = "process credentials do not affect simulated I/O";
const R_DP: &str = "only used with dataplacement, which iolab rejects";
const R_ENGINE: &str = "engine tuning that only changes CPU cost";
const R_ERR: &str = "simulated I/O never fails";
const R_IOLOG: &str = "how fio reads the log, not what it replays";
const R_LOG: &str = "a detail iolab's averaged logs do not have";
const R_LOGFILE: &str = "iolab writes fio's bandwidth, IOPS, latency and histogram logs only";
const R_LOGMAX: &str = "iolab's averaged logs hold each window's mean, not its maximum";
const R_LOGTIME: &str = "iolab's log times are ms since the job's start";
const R_LOGZ: &str = "iolab writes its logs uncompressed";
const R_MEM: &str = "I/O buffer memory is not simulated";
const R_PRIO: &str = "CPU and I/O priorities are not simulated";
// fio adds the options of its built-in profiles (`--profile=tiobench`,
// `--profile=act`) to every job's; in a job file they set the profile's
// parameters and nothing else.
const R_PROFILE: &str = "an option of fio's tiobench or act profile (--profile=), \
                         which does nothing in a job file";
const R_SOFTDEP: &str = "deprecated; fio ignores it";
const R_SPR: &str = "only used with sprandom, which iolab rejects";
const R_STAT: &str = "reporting detail only";
const R_TRIMV: &str = "only used with trim_percentage, which iolab rejects";
const R_VERIFY: &str = "the data's contents are not simulated, only verify's read-back IO, so nothing can fail to verify";
const R_ZBD: &str = "the simulated zoned device has no open-zone limit of its own (zonemode=zbd), so there is none to ignore";

/// Every known option name, sorted bytewise by `name`.
pub(crate) static OPTIONS: &[Entry] = &[
    inert(
        "allow_file_create",
        "allow_file_create",
        "only checks whether fio may create files",
    ),
    inert(
        "allow_mounted_write",
        "allow_mounted_write",
        "safety check against writing to mounted devices",
    ),
    typed("allrandrepeat", "randrepeat", Opt::Randrepeat),
    unsupported("atomic", "atomic", H::Zero, "atomic writes"),
    typed("ba", "ba", Opt::Blockalign),
    inert("block", "block", R_PROFILE),
    cosmetic("block_error_percentiles", "block_error_percentiles", R_STAT),
    typed("blockalign", "ba", Opt::Blockalign),
    typed("blocksize", "bs", Opt::Bs),
    typed("blocksize_range", "bsrange", Opt::Bsrange),
    unsupported(
        "blocksize_unaligned",
        "bs_unaligned",
        H::Zero,
        "unaligned block sizes",
    ),
    typed("bs", "bs", Opt::Bs),
    unsupported(
        "bs_is_seq_rand",
        "bs_is_seq_rand",
        H::Zero,
        "sequential/random block sizes",
    ),
    unsupported(
        "bs_unaligned",
        "bs_unaligned",
        H::Zero,
        "unaligned block sizes",
    ),
    typed("bsrange", "bsrange", Opt::Bsrange),
    typed("bssplit", "bssplit", Opt::Bssplit),
    cosmetic("buffer_compress_chunk", "buffer_compress_chunk", R_BUF),
    cosmetic(
        "buffer_compress_percentage",
        "buffer_compress_percentage",
        R_BUF,
    ),
    cosmetic("buffer_pattern", "buffer_pattern", R_BUF),
    typed("buffered", "buffered", Opt::Buffered),
    unsupported(
        "bwavgtime",
        "bwavgtime",
        H::Values(&["500"]),
        "bandwidth samples are taken every 500 ms",
    ),
    typed("cgroup", "cgroup", Opt::Cgroup),
    inert(
        "cgroup_nodelete",
        "cgroup_nodelete",
        "cgroup cleanup after the run",
    ),
    typed("cgroup_weight", "cgroup_weight", Opt::CgroupWeight),
    typed("clat_percentiles", "clat_percentiles", Opt::ClatPercentiles),
    inert(
        "clocksource",
        "clocksource",
        "clock source of the real fio process",
    ),
    unsupported(
        "cmd_type",
        "cmd_type",
        H::Values(&["nvme"]),
        "io_uring_cmd's SCSI generic commands (cmd_type=bsg)",
    ),
    cosmetic("cmdprio", "cmdprio", R_PRIO),
    cosmetic("cmdprio_bssplit", "cmdprio_bssplit", R_PRIO),
    cosmetic("cmdprio_class", "cmdprio_class", R_PRIO),
    cosmetic("cmdprio_percentage", "cmdprio_percentage", R_PRIO),
    cosmetic("comm", "comm", "process name only"),
    inert("continue_on_error", "continue_on_error", R_ERR),
    inert(
        "cpuchunks",
        "cpuchunks",
        "the length of cpuio's bursts: its share of the CPU is cpuload's whatever their length",
    ),
    typed("cpuload", "cpuload", Opt::Cpuload),
    cosmetic("cpumask", "cpumask", R_CPU),
    cosmetic(
        "cpumode",
        "cpumode",
        "the work cpuio does in its CPU time (noop or qsort): the time is cpuload's either way",
    ),
    cosmetic("cpus_allowed", "cpus_allowed", R_CPU),
    cosmetic("cpus_allowed_policy", "cpus_allowed_policy", R_CPU),
    typed("create_fsync", "create_fsync", Opt::CreateFsync),
    typed("create_on_open", "create_on_open", Opt::CreateOnOpen),
    unsupported("create_only", "create_only", H::Zero, "layout-only runs"),
    inert(
        "create_serialize",
        "create_serialize",
        "order in which jobs lay out their files",
    ),
    unsupported(
        "data_placement",
        "dataplacement",
        H::Values(&["none"]),
        "data placement",
    ),
    unsupported(
        "dataplacement",
        "dataplacement",
        H::Values(&["none"]),
        "data placement",
    ),
    cosmetic("dedupe_global", "dedupe_global", R_BUF),
    cosmetic("dedupe_mode", "dedupe_mode", R_BUF),
    cosmetic("dedupe_percentage", "dedupe_percentage", R_BUF),
    cosmetic(
        "dedupe_working_set_percentage",
        "dedupe_working_set_percentage",
        R_BUF,
    ),
    typed("description", "description", Opt::Description),
    inert("device-names", "device-names", R_PROFILE),
    inert("dir", "dir", R_PROFILE),
    typed("direct", "direct", Opt::Direct),
    typed("directory", "directory", Opt::Directory),
    cosmetic("disable_bw", "disable_bw_measurement", R_STAT),
    cosmetic("disable_bw_measurement", "disable_bw_measurement", R_STAT),
    cosmetic("disable_clat", "disable_clat", R_STAT),
    cosmetic("disable_lat", "disable_lat", R_STAT),
    cosmetic("disable_slat", "disable_slat", R_STAT),
    cosmetic("disk_util", "disk_util", R_STAT),
    typed("do_verify", "do_verify", Opt::DoVerify),
    typed("donorname", "donorname", Opt::Donorname),
    inert("dp_scheme", "dp_scheme", R_DP),
    typed("end_fsync", "end_fsync", Opt::EndFsync),
    unsupported(
        "end_syncfs",
        "end_syncfs",
        H::Zero,
        "syncfs at the end of the job",
    ),
    inert("error_dump", "error_dump", R_ERR),
    unsupported(
        "exec_postrun",
        "exec_postrun",
        H::Never,
        "running external commands",
    ),
    unsupported(
        "exec_prerun",
        "exec_prerun",
        H::Never,
        "running external commands",
    ),
    unsupported(
        "exit_on_io_done",
        "exit_on_io_done",
        H::Zero,
        "ending a cpuio job when the IO jobs are done",
    ),
    typed("exit_what", "exit_what", Opt::ExitWhat),
    typed("exitall", "exitall", Opt::Exitall),
    inert("exitall_on_error", "exitall_on_error", R_ERR),
    inert("experimental_verify", "experimental_verify", R_VERIFY),
    typed("fadvise_hint", "fadvise_hint", Opt::FadviseHint),
    typed("fallocate", "fallocate", Opt::Fallocate),
    typed("fdatasync", "fdatasync", Opt::Fdatasync),
    unsupported("fdp", "fdp", H::Zero, "flexible data placement"),
    inert("fdp_pli", "plids", R_DP),
    inert("fdp_pli_select", "plid_select", R_DP),
    unsupported(
        "file_append",
        "file_append",
        H::Zero,
        "appending at the end of files",
    ),
    typed(
        "file_service_type",
        "file_service_type",
        Opt::FileServiceType,
    ),
    typed("filename", "filename", Opt::Filename),
    unsupported(
        "filename_format",
        "filename_format",
        H::Values(&["$jobname.$jobnum.$filenum"]),
        "custom file names, which can make jobs share files",
    ),
    typed("fileoffset", "offset", Opt::Offset),
    typed("filesize", "filesize", Opt::Filesize),
    unsupported(
        "filetype",
        "filetype",
        H::Values(&["none"]),
        "forcing a file type",
    ),
    typed("fill_device", "fill_device", Opt::FillDevice),
    typed("fill_fs", "fill_device", Opt::FillDevice),
    cosmetic("fixedbufs", "fixedbufs", R_ENGINE),
    typed("flow", "flow", Opt::Flow),
    typed("flow_id", "flow_id", Opt::FlowId),
    typed("flow_sleep", "flow_sleep", Opt::FlowSleep),
    inert(
        "flow_watermark",
        "flow_watermark",
        "fio 3.33's flow control keeps shares by the weights (flow=) and no longer reads it",
    ),
    cosmetic("force_async", "force_async", R_ENGINE),
    typed("fsync", "fsync", Opt::Fsync),
    typed("fsync_on_close", "fsync_on_close", Opt::FsyncOnClose),
    inert("gid", "gid", R_CRED),
    cosmetic("gpu_dev_id", "gpu_dev_id", R_CPU),
    typed("group_reporting", "group_reporting", Opt::GroupReporting),
    cosmetic("gtod_cpu", "gtod_cpu", R_CPU),
    cosmetic("gtod_reduce", "gtod_reduce", R_STAT),
    unsupported("hipri", "hipri", H::Zero, "polled I/O"),
    cosmetic("hugepage-size", "hugepage-size", R_MEM),
    inert("ignore_error", "ignore_error", R_ERR),
    inert("ignore_zone_limits", "ignore_zone_limits", R_ZBD),
    typed("inplace", "inplace", Opt::Inplace),
    typed("invalidate", "invalidate", Opt::Invalidate),
    typed("io_limit", "io_size", Opt::IoSize),
    typed("io_size", "io_size", Opt::IoSize),
    typed("io_submit_mode", "io_submit_mode", Opt::IoSubmitMode),
    typed("iodepth", "iodepth", Opt::Iodepth),
    unsupported(
        "iodepth_batch",
        "iodepth_batch",
        H::Values(&["1"]),
        "batched submission",
    ),
    unsupported(
        "iodepth_batch_complete",
        "iodepth_batch_complete_min",
        H::Values(&["1"]),
        "batched completion",
    ),
    unsupported(
        "iodepth_batch_complete_max",
        "iodepth_batch_complete_max",
        H::Zero,
        "batched completion",
    ),
    unsupported(
        "iodepth_batch_complete_min",
        "iodepth_batch_complete_min",
        H::Values(&["1"]),
        "batched completion",
    ),
    unsupported(
        "iodepth_batch_submit",
        "iodepth_batch",
        H::Values(&["1"]),
        "batched submission",
    ),
    unsupported(
        "iodepth_low",
        "iodepth_low",
        H::Never,
        "a queue-depth low-water mark",
    ),
    typed("ioengine", "ioengine", Opt::Ioengine),
    cosmetic("iomem", "mem", R_MEM),
    cosmetic("iomem_align", "iomem_align", R_MEM),
    unsupported(
        "iopsavgtime",
        "iopsavgtime",
        H::Values(&["500"]),
        "IOPS samples are taken every 500 ms",
    ),
    unsupported(
        "ioscheduler",
        "ioscheduler",
        H::Never,
        "switching the I/O scheduler (set it in the iolab scenario)",
    ),
    typed(
        "job_max_open_zones",
        "job_max_open_zones",
        Opt::JobMaxOpenZones,
    ),
    inert("job_start_clock_id", "job_start_clock_id", R_LOG),
    typed("kb_base", "kb_base", Opt::KbBase),
    inert("large-block-op-kbytes", "large-block-op-kbytes", R_PROFILE),
    typed("lat_percentiles", "lat_percentiles", Opt::LatPercentiles),
    typed(
        "latency_percentile",
        "latency_percentile",
        Opt::LatencyPercentile,
    ),
    typed("latency_run", "latency_run", Opt::LatencyRun),
    typed("latency_target", "latency_target", Opt::LatencyTarget),
    typed("latency_window", "latency_window", Opt::LatencyWindow),
    inert("load", "load", R_PROFILE),
    unsupported("lockfile", "lockfile", H::Values(&["none"]), "file locking"),
    unsupported(
        "lockmem",
        "lockmem",
        H::Zero,
        "locking memory away from the page cache",
    ),
    cosmetic("log_alternate_epoch", "log_alternate_epoch", R_LOGTIME),
    inert(
        "log_alternate_epoch_clock_id",
        "log_alternate_epoch_clock_id",
        R_LOG,
    ),
    typed("log_avg_msec", "log_avg_msec", Opt::LogAvgMsec),
    cosmetic("log_compression", "log_compression", R_LOGZ),
    inert("log_compression_cpus", "log_compression_cpus", R_LOG),
    inert("log_entries", "log_entries", R_LOG),
    typed(
        "log_hist_coarseness",
        "log_hist_coarseness",
        Opt::LogHistCoarseness,
    ),
    typed("log_hist_msec", "log_hist_msec", Opt::LogHistMsec),
    inert("log_issue_time", "log_issue_time", R_LOG),
    cosmetic("log_max_value", "log_window_value", R_LOGMAX),
    typed("log_offset", "log_offset", Opt::LogOffset),
    inert("log_prio", "log_prio", R_LOG),
    cosmetic("log_store_compressed", "log_store_compressed", R_LOGZ),
    cosmetic("log_unix_epoch", "log_alternate_epoch", R_LOGTIME),
    cosmetic("log_window_value", "log_window_value", R_LOGMAX),
    typed("loops", "loops", Opt::Loops),
    unsupported(
        "max_latency",
        "max_latency",
        H::Zero,
        "stopping jobs on a latency limit",
    ),
    typed("max_open_zones", "max_open_zones", Opt::MaxOpenZones),
    cosmetic("mem", "mem", R_MEM),
    cosmetic("mem_align", "iomem_align", R_MEM),
    inert("merge_blktrace_file", "merge_blktrace_file", R_IOLOG),
    inert("merge_blktrace_iters", "merge_blktrace_iters", R_IOLOG),
    inert("merge_blktrace_scalars", "merge_blktrace_scalars", R_IOLOG),
    typed("name", "name", Opt::Name),
    typed("new_group", "new_group", Opt::NewGroup),
    cosmetic("nice", "nice", R_PRIO),
    cosmetic("nonvectored", "nonvectored", R_ENGINE),
    typed("norandommap", "norandommap", Opt::Norandommap),
    unsupported("nowait", "nowait", H::Zero, "RWF_NOWAIT I/O"),
    typed("nr_files", "nrfiles", Opt::Nrfiles),
    typed("nrfiles", "nrfiles", Opt::Nrfiles),
    unsupported(
        "num_range",
        "num_range",
        H::Values(&["1"]),
        "multi-range trims",
    ),
    cosmetic("numa_cpu_nodes", "numa_cpu_nodes", R_CPU),
    cosmetic("numa_mem_policy", "numa_mem_policy", R_CPU),
    typed("number_ios", "number_ios", Opt::NumberIos),
    typed("numjobs", "numjobs", Opt::Numjobs),
    inert("numruns", "numruns", R_PROFILE),
    typed("offset", "offset", Opt::Offset),
    typed("offset_align", "offset_align", Opt::OffsetAlign),
    typed("offset_increment", "offset_increment", Opt::OffsetIncrement),
    unsupported(
        "opendir",
        "opendir",
        H::Never,
        "using the files found in a directory",
    ),
    typed("openfiles", "openfiles", Opt::OpenFiles),
    typed("overwrite", "overwrite", Opt::Overwrite),
    typed("per_job_logs", "per_job_logs", Opt::PerJobLogs),
    unsupported(
        "percentage_random",
        "percentage_random",
        H::Values(&["100", "100,100", "100,100,100"]),
        "mixing sequential and random I/O",
    ),
    unsupported(
        "percentage_sequential",
        "percentage_sequential",
        H::Never,
        "a deprecated option that fio itself rejects",
    ),
    typed("percentile_list", "percentile_list", Opt::PercentileList),
    inert("plid_select", "plid_select", R_DP),
    inert("plids", "plids", R_DP),
    unsupported(
        "pre_read",
        "pre_read",
        H::Zero,
        "pre-reading files into the page cache",
    ),
    inert("prep", "prep", R_PROFILE),
    cosmetic("prio", "prio", R_PRIO),
    cosmetic("prioclass", "prioclass", R_PRIO),
    cosmetic("priohint", "priohint", R_PRIO),
    unsupported("profile", "profile", H::Never, "fio's built-in profiles"),
    unsupported(
        "ramp_size",
        "ramp_size",
        H::Never,
        "a ramp period measured in bytes",
    ),
    typed("ramp_time", "ramp_time", Opt::RampTime),
    typed(
        "random_distribution",
        "random_distribution",
        Opt::RandomDistribution,
    ),
    cosmetic(
        "random_generator",
        "random_generator",
        "iolab draws offsets from its own deterministic generator",
    ),
    typed("randrepeat", "randrepeat", Opt::Randrepeat),
    typed("randseed", "randseed", Opt::Randseed),
    typed("rate", "rate", Opt::Rate),
    cosmetic(
        "rate_cycle",
        "rate_cycle",
        "only used with rate_min, which iolab rejects",
    ),
    unsupported(
        "rate_ignore_thinktime",
        "rate_ignore_thinktime",
        H::Zero,
        "rate limits that ignore thinktime",
    ),
    typed("rate_iops", "rate_iops", Opt::RateIops),
    unsupported(
        "rate_iops_min",
        "rate_iops_min",
        H::Zero,
        "stopping jobs below a minimum rate",
    ),
    unsupported(
        "rate_min",
        "rate_min",
        H::Zero,
        "stopping jobs below a minimum rate",
    ),
    typed("rate_process", "rate_process", Opt::RateProcess),
    cosmetic(
        "ratecycle",
        "rate_cycle",
        "only used with rate_min, which iolab rejects",
    ),
    unsupported(
        "ratemin",
        "rate_min",
        H::Zero,
        "stopping jobs below a minimum rate",
    ),
    inert(
        "read-req-num-512-blocks",
        "read-req-num-512-blocks",
        R_PROFILE,
    ),
    typed("read_beyond_wp", "read_beyond_wp", Opt::ReadBeyondWp),
    typed("read_iolog", "read_iolog", Opt::ReadIolog),
    inert("read_iolog_chunked", "read_iolog_chunked", R_IOLOG),
    unsupported("readfua", "readfua", H::Zero, "forced unit access on reads"),
    typed("readwrite", "rw", Opt::Rw),
    inert("recover_zbd_write_error", "recover_zbd_write_error", R_ZBD),
    cosmetic("refill_buffers", "refill_buffers", R_BUF),
    cosmetic("registerfiles", "registerfiles", R_ENGINE),
    typed("replay_align", "replay_align", Opt::ReplayAlign),
    typed("replay_no_stall", "replay_no_stall", Opt::ReplayNoStall),
    typed("replay_redirect", "replay_redirect", Opt::ReplayRedirect),
    typed("replay_scale", "replay_scale", Opt::ReplayScale),
    unsupported(
        "replay_skip",
        "replay_skip",
        H::Never,
        "skipping kinds of a replayed log's actions",
    ),
    typed(
        "replay_time_scale",
        "replay_time_scale",
        Opt::ReplayTimeScale,
    ),
    typed("runtime", "runtime", Opt::Runtime),
    typed("rw", "rw", Opt::Rw),
    unsupported(
        "rw_sequencer",
        "rw_sequencer",
        H::Values(&["sequential"]),
        "identical-offset sequencing",
    ),
    unsupported(
        "rwmixcycle",
        "rwmixcycle",
        H::Never,
        "a deprecated option that fio itself rejects",
    ),
    typed("rwmixread", "rwmixread", Opt::Rwmixread),
    typed("rwmixwrite", "rwmixwrite", Opt::Rwmixwrite),
    cosmetic("scramble_buffers", "scramble_buffers", R_BUF),
    unsupported(
        "serialize_overlap",
        "serialize_overlap",
        H::Zero,
        "serialising overlapping in-flight I/O",
    ),
    typed("sg_write_mode", "sg_write_mode", Opt::SgWriteMode),
    cosmetic("significant_figures", "significant_figures", R_STAT),
    typed("size", "size", Opt::Size),
    typed("slat_percentiles", "slat_percentiles", Opt::SlatPercentiles),
    inert(
        "softrandommap",
        "softrandommap",
        "only matters when fio cannot allocate its random map",
    ),
    inert("spr_cs", "spr_cs", R_SPR),
    inert("spr_num_regions", "spr_num_regions", R_SPR),
    inert("spr_op", "spr_op", R_SPR),
    unsupported(
        "sprandom",
        "sprandom",
        H::Zero,
        "pseudo-random preconditioning",
    ),
    cosmetic("sqthread_poll", "sqthread_poll", R_ENGINE),
    cosmetic("sqthread_poll_cpu", "sqthread_poll_cpu", R_ENGINE),
    typed("ss", "steadystate", Opt::Steadystate),
    typed("ss_dur", "steadystate_duration", Opt::SsDur),
    unsupported(
        "ss_interval",
        "steadystate_check_interval",
        H::Values(&["1", "1s", "1000ms"]),
        "a steady-state check interval other than fio 3.33's fixed second",
    ),
    typed("ss_ramp", "steadystate_ramp_time", Opt::SsRamp),
    typed("startdelay", "startdelay", Opt::Startdelay),
    cosmetic(
        "stat_type",
        "stat_type",
        "filestat's system call (stat, lstat, statx): one cost in the model",
    ),
    cosmetic("stats", "stats", R_STAT),
    typed("steadystate", "steadystate", Opt::Steadystate),
    unsupported(
        "steadystate_check_interval",
        "steadystate_check_interval",
        H::Values(&["1", "1s", "1000ms"]),
        "a steady-state check interval other than fio 3.33's fixed second",
    ),
    typed("steadystate_duration", "steadystate_duration", Opt::SsDur),
    typed(
        "steadystate_ramp_time",
        "steadystate_ramp_time",
        Opt::SsRamp,
    ),
    typed("stonewall", "stonewall", Opt::Stonewall),
    inert(
        "stream_id",
        "stream_id",
        "only used with sg_write_mode=write_stream, which writes as write does here",
    ),
    unsupported(
        "sync",
        "sync",
        H::Values(&["none", "0"]),
        "O_SYNC/O_DSYNC writes",
    ),
    unsupported(
        "sync_file_range",
        "sync_file_range",
        H::Never,
        "sync_file_range(2)",
    ),
    inert("test-duration", "test-duration", R_PROFILE),
    unsupported(
        "thinkcycles",
        "thinkcycles",
        H::Zero,
        "CPU spinning between I/Os",
    ),
    typed("thinktime", "thinktime", Opt::Thinktime),
    typed("thinktime_blocks", "thinktime_blocks", Opt::ThinktimeBlocks),
    unsupported(
        "thinktime_blocks_type",
        "thinktime_blocks_type",
        H::Values(&["complete"]),
        "issue-side thinktime accounting",
    ),
    unsupported(
        "thinktime_iotime",
        "thinktime_iotime",
        H::Zero,
        "thinktime driven by I/O time",
    ),
    unsupported(
        "thinktime_spin",
        "thinktime_spin",
        H::Zero,
        "spinning thinktime",
    ),
    cosmetic(
        "thp",
        "thp",
        "ioengine=mmap's transparent huge pages for the mapping: page faults are not simulated",
    ),
    inert(
        "thread",
        "thread",
        "threads or processes: no effect on simulated I/O",
    ),
    inert("threads", "threads", R_PROFILE),
    inert("threads-per-queue", "threads-per-queue", R_PROFILE),
    typed("time_based", "time_based", Opt::TimeBased),
    typed("timeout", "runtime", Opt::Runtime),
    inert("trim_backlog", "trim_backlog", R_TRIMV),
    inert("trim_backlog_batch", "trim_backlog_batch", R_TRIMV),
    unsupported(
        "trim_percentage",
        "trim_percentage",
        H::Zero,
        "trimming verified blocks",
    ),
    inert("trim_verify_zero", "trim_verify_zero", R_TRIMV),
    inert("uid", "uid", R_CRED),
    unsupported("uncached", "uncached", H::Zero, "uncached buffered I/O"),
    typed(
        "unified_rw_reporting",
        "unified_rw_reporting",
        Opt::UnifiedRw,
    ),
    inert(
        "unique_filename",
        "unique_filename",
        "client/server file naming only",
    ),
    typed("unit_base", "unit_base", Opt::UnitBase),
    inert(
        "unlink",
        "unlink",
        "files are deleted after the job; measured I/O is unchanged",
    ),
    unsupported(
        "unlink_each_loop",
        "unlink_each_loop",
        H::Zero,
        "deleting files between loops",
    ),
    cosmetic("userspace_reap", "userspace_reap", R_ENGINE),
    typed("verify", "verify", Opt::Verify),
    inert("verify_async", "verify_async", R_VERIFY),
    inert("verify_async_cpus", "verify_async_cpus", R_VERIFY),
    typed("verify_backlog", "verify_backlog", Opt::VerifyBacklog),
    unsupported(
        "verify_backlog_batch",
        "verify_backlog_batch",
        H::Zero,
        "read-back batches of another size than verify_backlog",
    ),
    inert("verify_dump", "verify_dump", R_VERIFY),
    inert("verify_fatal", "verify_fatal", R_VERIFY),
    inert("verify_header_seed", "verify_header_seed", R_VERIFY),
    inert("verify_interval", "verify_interval", R_VERIFY),
    inert("verify_offset", "verify_offset", R_VERIFY),
    unsupported("verify_only", "verify_only", H::Zero, "verify-only runs"),
    typed("verify_pattern", "verify_pattern", Opt::VerifyPattern),
    inert(
        "verify_pattern_interval",
        "verify_pattern_interval",
        R_VERIFY,
    ),
    inert("verify_state_load", "verify_state_load", R_VERIFY),
    inert("verify_state_save", "verify_state_save", R_VERIFY),
    inert("verify_write_sequence", "verify_write_sequence", R_VERIFY),
    inert("verifysort", "verifysort", R_SOFTDEP),
    inert("verifysort_nr", "verifysort_nr", R_SOFTDEP),
    typed("wait_for", "wait_for", Opt::WaitFor),
    typed("wait_for_previous", "stonewall", Opt::Stonewall),
    unsupported("write_barrier", "write_barrier", H::Zero, "barrier writes"),
    typed("write_bw_log", "write_bw_log", Opt::WriteBwLog),
    cosmetic(
        "write_hint",
        "write_hint",
        "write-lifetime hints are ignored by iolab devices",
    ),
    typed("write_hist_log", "write_hist_log", Opt::WriteHistLog),
    cosmetic("write_iolog", "write_iolog", R_LOGFILE),
    typed("write_iops_log", "write_iops_log", Opt::WriteIopsLog),
    typed("write_lat_log", "write_lat_log", Opt::WriteLatLog),
    inert("write_zone_remainder", "write_zone_remainder", R_ZBD),
    unsupported(
        "writefua",
        "writefua",
        H::Zero,
        "forced unit access on writes",
    ),
    cosmetic("zero_buffers", "zero_buffers", R_BUF),
    typed(
        "zone_reset_frequency",
        "zone_reset_frequency",
        Opt::ZoneResetFrequency,
    ),
    typed(
        "zone_reset_threshold",
        "zone_reset_threshold",
        Opt::ZoneResetThreshold,
    ),
    unsupported(
        "zonecapacity",
        "zonecapacity",
        H::Zero,
        "zone capacities below the zone size: zonemode=zbd writes each zone whole",
    ),
    typed("zonemode", "zonemode", Opt::ZoneMode),
    typed("zonerange", "zonerange", Opt::ZoneRange),
    typed("zonesize", "zonesize", Opt::ZoneSize),
    typed("zoneskip", "zoneskip", Opt::ZoneSkip),
];

/// Finds an option by the name written in the job file (case-sensitive, as
/// in fio).
pub(crate) fn lookup(name: &str) -> Option<&'static Entry> {
    OPTIONS
        .binary_search_by(|e| e.name.cmp(name))
        .ok()
        .map(|i| &OPTIONS[i])
}

/// True when `value` is one of the harmless values in `ok`.
pub(crate) fn is_harmless(ok: Harmless, value: Option<&str>) -> bool {
    match (ok, value) {
        (Harmless::Never, _) | (_, None) => false,
        (Harmless::Values(list), Some(v)) => list.contains(&v.trim()),
        (Harmless::Zero, Some(v)) => {
            let mut any = false;
            for part in v.split(',') {
                let p = part.trim();
                if p.is_empty() {
                    continue;
                }
                let digits = p.strip_prefix("0x").unwrap_or(p);
                let n = digits
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(digits.len());
                let (num, suffix) = digits.split_at(n);
                let zero = !num.is_empty() && num.bytes().all(|b| b == b'0');
                // Zero of any unit fio knows is zero; `0zz` is no value.
                let unit = suffix.to_ascii_lowercase();
                let known = unit.is_empty()
                    || unit == "%"
                    || super::value::size_mult(&unit, 1024).is_some()
                    || super::value::time_mult_us(&unit).is_some();
                if !zero || !known {
                    return false;
                }
                any = true;
            }
            any
        }
    }
}

/// The option names offered as "did you mean" candidates.
pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    OPTIONS.iter().map(|e| e.name)
}

/// How iolab treats an fio option (see [`classify_option`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionClass {
    /// Parsed into a typed [`JobSpec`](super::JobSpec) field and simulated.
    Simulated,
    /// Accepted; does not change the simulated I/O. Carries the reason.
    Cosmetic(&'static str),
    /// Rejected (unless given a value that keeps fio's default behaviour);
    /// carries what the option would change.
    Unsupported(&'static str),
}

/// Classification of one option name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionInfo {
    /// fio's primary name for the option (the name itself unless an alias).
    pub canonical: &'static str,
    /// How iolab treats it.
    pub class: OptionClass,
}

fn info(e: &Entry) -> OptionInfo {
    OptionInfo {
        canonical: e.canonical,
        class: match e.class {
            Class::Typed(_) => OptionClass::Simulated,
            Class::Cosmetic(why) | Class::Inert(why) => OptionClass::Cosmetic(why),
            Class::Unsupported(_, what) => OptionClass::Unsupported(what),
        },
    }
}

/// Looks up how iolab treats the job option `name`; `None` when fio has no
/// such option.
pub fn classify_option(name: &str) -> Option<OptionInfo> {
    lookup(name).map(info)
}

/// Every known job option name with its classification, sorted by name.
pub fn known_options() -> impl Iterator<Item = (&'static str, OptionInfo)> {
    OPTIONS.iter().map(|e| (e.name, info(e)))
}
