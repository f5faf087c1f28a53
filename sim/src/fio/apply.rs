//! Applying one typed option to a job under construction.

use super::spec::{
    BsRange, DDIR_READ, DDIR_TRIM, Engine, ExitWhat, Fadvise, Fallocate, FileServiceType, JobSpec,
    MetaEngine, RandomDistribution, RateProcess, RwMode, SgWriteMode, SizeRange, SizeSpec, Zone,
    ZoneMode,
};
use super::table::Opt;
use super::value::{
    Size, name_list, parse_bool, parse_bytes, parse_flag, parse_percentiles, parse_plain_u32,
    parse_range, parse_size, parse_time_ns, parse_u32, per_dir,
};

/// One second in microseconds: the unit of a bare `runtime`/`ramp_time`.
const SECOND_US: u64 = 1_000_000;

/// A job (or the `[global]` defaults) while its sections are being applied.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JobState {
    pub(crate) spec: JobSpec,
    /// `bs=` per direction.
    bs: [u64; 3],
    /// `bsrange=` per direction; wins over `bs=` where set.
    bsrange: [Option<BsRange>; 3],
    /// The job's own `name=`.
    pub(crate) name: Option<String>,
    /// Where each direction's block size was last given, per option:
    /// `[bs, bsrange, bssplit]`, so an option another one overrides can be
    /// named ([`JobState::superseded`]).
    size_at: [[Option<(String, usize)>; 3]; 3],
}

/// One block-size option that has no effect in a job because a later
/// stage of fio's choice of sizes overrides it, for some directions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Overridden {
    /// The option without effect, and where it is.
    pub(crate) option: &'static str,
    pub(crate) at: (String, usize),
    /// The option that decides instead, and where it is.
    pub(crate) by: &'static str,
    pub(crate) by_at: (String, usize),
    /// The directions concerned, among those the job does.
    pub(crate) dirs: Vec<&'static str>,
}

/// The block-size options in the order fio lets them decide: `bsrange=`
/// sets the bounds `bs=` would, and a `bssplit=` picks every size.
const SIZE_OPTIONS: [&str; 3] = ["bs", "bsrange", "bssplit"];

impl JobState {
    /// fio's defaults.
    pub(crate) fn new() -> Self {
        JobState {
            spec: JobSpec::fio_default("", "", 0),
            bs: [4096; 3],
            bsrange: [None; 3],
            name: None,
            size_at: Default::default(),
        }
    }

    /// The block-size options this job gives that others override (fio's
    /// `fixup_options` takes `bs=` only where no `bsrange=` or `bssplit=`
    /// set the bounds, and a direction with a `bssplit=` draws its sizes
    /// from it whatever else is set), for the directions the job does.
    pub(crate) fn superseded(&self) -> Vec<Overridden> {
        let mode = self.spec.rw.mode;
        let does = [mode.reads(), mode.writes(), mode.trims()];
        let names = ["reads", "writes", "trims"];
        let mut out: Vec<Overridden> = Vec::new();
        for (lower, &option) in SIZE_OPTIONS.iter().enumerate().take(2) {
            for d in DDIR_READ..=DDIR_TRIM {
                let Some(at) = self.size_at[lower][d].clone().filter(|_| does[d]) else {
                    continue;
                };
                let Some((by, by_at)) = (lower + 1..3)
                    .rev()
                    .find_map(|h| Some((SIZE_OPTIONS[h], self.size_at[h][d].clone()?)))
                else {
                    continue;
                };
                match out
                    .iter_mut()
                    .find(|o| o.option == option && o.at == at && o.by == by && o.by_at == by_at)
                {
                    Some(o) => o.dirs.push(names[d]),
                    None => out.push(Overridden {
                        option,
                        at,
                        by,
                        by_at,
                        dirs: vec![names[d]],
                    }),
                }
            }
        }
        out
    }

    fn given(&mut self, option: usize, d: usize, at: (&str, usize)) {
        self.size_at[option][d] = Some((at.0.to_owned(), at.1));
    }

    /// The finished job spec for a section.
    pub(crate) fn finish(
        mut self,
        section: &str,
        file: &str,
        line: usize,
        options: Vec<(String, String)>,
    ) -> JobSpec {
        for d in DDIR_READ..=DDIR_TRIM {
            self.spec.bs[d] = self.bsrange[d].unwrap_or(BsRange::fixed(self.bs[d]));
            let split = &self.spec.bssplit[d];
            if let (Some(min), Some(max)) = (
                split.iter().map(|e| e.0).min(),
                split.iter().map(|e| e.0).max(),
            ) {
                self.spec.bs[d] = BsRange { min, max };
            }
        }
        self.spec.name = self.name.unwrap_or_else(|| section.to_string());
        self.spec.section = section.to_string();
        self.spec.file = file.to_string();
        self.spec.line = line;
        self.spec.options = options;
        self.spec
    }

    fn kb(&self) -> u32 {
        self.spec.kb_base
    }

    /// Applies `opt` with its expanded value (`None` for a bare option),
    /// written at `at` (file, line).
    pub(crate) fn apply(
        &mut self,
        opt: Opt,
        value: Option<&str>,
        at: (&str, usize),
    ) -> Result<(), String> {
        let s = &mut self.spec;
        match opt {
            // Booleans and flags accept a bare option as "true".
            Opt::Direct => s.direct = parse_bool(value)?,
            Opt::Buffered => s.direct = !parse_bool(value)?,
            Opt::Invalidate => s.invalidate = parse_bool(value)?,
            Opt::Overwrite => s.overwrite = parse_bool(value)?,
            Opt::Inplace => s.inplace = parse_bool(value)?,
            Opt::ReadBeyondWp => s.read_beyond_wp = parse_bool(value)?,
            Opt::LatencyRun => s.latency_run = parse_bool(value)?,
            Opt::CreateFsync => s.create_fsync = parse_bool(value)?,
            Opt::CreateOnOpen => s.create_on_open = parse_bool(value)?,
            Opt::EndFsync => s.end_fsync = parse_bool(value)?,
            Opt::FsyncOnClose => s.fsync_on_close = parse_bool(value)?,
            Opt::Randrepeat => s.randrepeat = parse_bool(value)?,
            Opt::DoVerify => s.do_verify = parse_bool(value)?,
            Opt::FillDevice => s.fill_device = parse_bool(value)?,
            Opt::ClatPercentiles => s.clat_percentiles = parse_bool(value)?,
            Opt::LatPercentiles => s.lat_percentiles = parse_bool(value)?,
            Opt::SlatPercentiles => s.slat_percentiles = parse_bool(value)?,
            Opt::TimeBased => s.time_based = parse_flag(value)?,
            Opt::Norandommap => s.norandommap = parse_flag(value)?,
            Opt::ReplayNoStall => s.replay_no_stall = parse_flag(value)?,
            Opt::NewGroup => s.new_group = parse_flag(value)?,
            Opt::Stonewall => s.stonewall = parse_flag(value)?,
            Opt::GroupReporting => s.group_reporting = parse_flag(value)?,
            Opt::PerJobLogs => s.logs.per_job = parse_bool(value)?,
            Opt::LogOffset => s.logs.offset = parse_bool(value)?,
            Opt::UnifiedRw => {
                s.unified_rw = match value.map(str::trim).unwrap_or("") {
                    "none" | "0" => crate::stats::Unified::None,
                    "mixed" | "1" => crate::stats::Unified::Mixed,
                    "both" | "2" => crate::stats::Unified::Both,
                    other => {
                        return Err(format!(
                            "unknown value '{other}' (none, mixed, both, or 0, 1, 2)"
                        ));
                    }
                }
            }
            // Bare: fio names the logs after the job.
            Opt::WriteBwLog => s.logs.bw = Some(log_prefix(value)),
            Opt::WriteIopsLog => s.logs.iops = Some(log_prefix(value)),
            Opt::WriteLatLog => s.logs.lat = Some(log_prefix(value)),
            Opt::WriteHistLog => s.logs.hist = Some(log_prefix(value)),
            Opt::Exitall => {
                // fio's handler ignores the value: any `exitall` turns it on.
                parse_flag(value)?;
                s.exitall = true;
            }
            _ => {
                let v = value.ok_or_else(|| "requires a value".to_string())?;
                self.apply_value(opt, v, at)?;
            }
        }
        Ok(())
    }

    fn apply_value(&mut self, opt: Opt, v: &str, at: (&str, usize)) -> Result<(), String> {
        let kb = self.kb();
        let t = v.trim();
        let s = &mut self.spec;
        match opt {
            Opt::Description => s.description = Some(t.to_string()),
            Opt::Name => self.name = Some(non_empty(t)?.to_string()),
            Opt::Filename => s.filename = non_empty_list(name_list(t))?,
            Opt::Directory => s.directory = non_empty_list(name_list(t))?,
            Opt::Cgroup => s.cgroup = Some(non_empty(t)?.to_string()),
            Opt::Rw => {
                let (mode, post) = split_postfix(t);
                s.rw.engine_value = match mode {
                    "filecreate" => Some(MetaEngine::FileCreate),
                    "filestat" => Some(MetaEngine::FileStat),
                    "filedelete" => Some(MetaEngine::FileDelete),
                    _ => None,
                };
                s.rw.mode = if s.rw.engine_value.is_some() && post.is_none() {
                    // Checked against the job's engine when the job ends.
                    RwMode::Read
                } else {
                    parse_rw_mode(mode)?
                };
                s.rw.seq_n = 1;
                s.rw.seq_add = 0;
                if let Some(p) = post {
                    if s.rw.mode.is_random() {
                        s.rw.seq_n = at_least(parse_plain_u32(p)?, 1)?;
                    } else {
                        // fio's rw_sequencer offset may be negative:
                        // backwards IO.
                        s.rw.seq_add = match p.trim().strip_prefix('-') {
                            Some(back) => {
                                let b = parse_bytes(back, kb)?;
                                -i64::try_from(b).map_err(|_| format!("'{p}' is out of range"))?
                            }
                            None => i64::try_from(parse_bytes(p, kb)?)
                                .map_err(|_| format!("'{p}' is out of range"))?,
                        };
                    }
                }
            }
            Opt::Ioengine => s.ioengine = parse_engine(t)?,
            Opt::WaitFor => s.wait_for = Some(non_empty(t)?.to_owned()),
            Opt::Verify => s.verify = Some(parse_verify(t)?),
            Opt::SgWriteMode => {
                s.sg_write_mode = match t {
                    "write" => SgWriteMode::Write,
                    "write_and_verify" | "verify" => SgWriteMode::WriteAndVerify,
                    "write_same" | "same" | "write_same_ndob" => SgWriteMode::WriteSame,
                    "verify_bytchk_00" | "verify_bytchk_01" | "verify_bytchk_11" => {
                        SgWriteMode::Verify
                    }
                    "write_stream" => SgWriteMode::WriteStream,
                    other => {
                        return Err(bad_choice(
                            other,
                            "write, write_and_verify, verify, write_same, same, write_same_ndob, \
                             verify_bytchk_00, verify_bytchk_01, verify_bytchk_11, write_stream",
                        ));
                    }
                }
            }
            Opt::Steadystate => s.steady = parse_steady(t, s.steady)?,
            // fio keeps the target in ns, the window in µs; both default
            // to µs when no unit is given.
            Opt::LatencyTarget => s.latency_target_ns = parse_time_ns(t, 1)?,
            Opt::LatencyWindow => s.latency_window_ns = parse_time_ns(t, 1)?,
            Opt::LatencyPercentile => {
                s.latency_percentile = t
                    .trim()
                    .trim_end_matches('%')
                    .parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=100.0).contains(p))
                    .ok_or_else(|| format!("'{t}': expected a percentage from 0 to 100"))?;
            }
            Opt::SsDur => {
                let ns = parse_time_ns(t, 1_000_000)?;
                // fio keeps whole seconds.
                s.steady.dur_s = u32::try_from(ns / 1_000_000_000)
                    .map_err(|_| format!("value '{t}' is out of range"))?;
            }
            Opt::SsRamp => s.steady.ramp_ns = parse_time_ns(t, 1_000_000)?,
            Opt::Donorname => s.donorname = Some(non_empty(t)?.to_owned()),
            Opt::VerifyPattern => s.verify_pattern = !non_empty(t)?.is_empty(),
            Opt::VerifyBacklog => s.verify_backlog = parse_bytes(t, kb)?,
            Opt::Iodepth => s.iodepth = at_least(parse_u32(t, kb)?, 1)?,
            Opt::Size => s.size = parse_size_spec(t, kb, &mut s.zone_units.size)?,
            Opt::IoSize => s.io_size = parse_size_spec(t, kb, &mut s.zone_units.io_size)?,
            Opt::Filesize => {
                let (min, max) = parse_range(t, kb, true)?;
                if min == 0 {
                    return Err("must be at least 1".to_string());
                }
                s.filesize = Some(SizeRange { min, max });
            }
            Opt::Bs => {
                // `-1` splits as a read,write pair with no read size.
                if t.trim_start().starts_with('-') {
                    return Err(format!(
                        "'{t}' has no read size before its '-' (fio 3.33 reads bs=-1 as 16 EiB reads and 1-byte writes, and the job fails); give a block size"
                    ));
                }
                for (d, e) in per_dir(t, true)? {
                    self.bs[d] = at_least_u64(parse_bytes(e, kb)?, 1)?;
                    self.given(0, d, at);
                }
            }
            Opt::ZoneMode => {
                s.zonemode = Some(match t {
                    "none" => ZoneMode::None,
                    "strided" => ZoneMode::Strided,
                    "zbd" => ZoneMode::Zbd,
                    other => return Err(bad_choice(other, "none, strided, zbd")),
                });
            }
            Opt::ZoneSize => s.zonesize = parse_bytes(t, kb)?,
            Opt::LogHistMsec => s.logs.hist_msec = parse_u32(t, kb)?,
            Opt::LogHistCoarseness => {
                let v = parse_u32(t, kb)?;
                if v > 6 {
                    return Err(format!("{v} is above fio's largest coarseness, 6"));
                }
                s.logs.hist_coarseness = v;
            }
            Opt::MaxOpenZones => s.max_open_zones = open_zones(t, kb)?,
            Opt::JobMaxOpenZones => s.job_max_open_zones = open_zones(t, kb)?,
            Opt::ZoneResetThreshold => s.zone_reset_threshold = fraction(t)?,
            Opt::ZoneResetFrequency => s.zone_reset_frequency = fraction(t)?,
            Opt::Cpuload => {
                let v = parse_u32(t, kb)?;
                if !(1..=100).contains(&v) {
                    return Err(format!("{v} is not a percent of a CPU (1 to 100)"));
                }
                s.cpuload = v;
            }
            Opt::IoSubmitMode => {
                s.submit_offload = match t {
                    "inline" => false,
                    "offload" => true,
                    other => return Err(bad_choice(other, "inline, offload")),
                }
            }
            Opt::ZoneRange => s.zonerange = parse_bytes(t, kb)?,
            Opt::ZoneSkip => {
                s.zone_units.zoneskip = None;
                s.zoneskip = match parse_size(t, kb, true)? {
                    Size::Bytes(b) => b,
                    Size::Zones(n) => {
                        s.zone_units.zoneskip = Some(n);
                        0
                    }
                    Size::Percent(_) => {
                        return Err(format!("a percentage ('{t}') is not allowed here"));
                    }
                }
            }
            Opt::Blockalign => {
                for (d, e) in per_dir(t, true)? {
                    s.blockalign[d] = Some(at_least_u64(parse_bytes(e, kb)?, 1)?);
                }
            }
            Opt::Bsrange => {
                for (d, e) in per_dir(t, false)? {
                    let (min, max) = parse_range(e, kb, false)?;
                    at_least_u64(min, 1)?;
                    self.bsrange[d] = Some(BsRange { min, max });
                    self.given(1, d, at);
                }
            }
            Opt::Bssplit => {
                for (d, e) in per_dir(t, false)? {
                    self.spec.bssplit[d] = parse_bssplit(e, kb)?;
                    self.given(2, d, at);
                }
            }
            Opt::Randseed => s.randseed = Some(parse_bytes(t, kb)?),
            Opt::Nrfiles => s.nrfiles = at_least(parse_u32(t, kb)?, 1)?,
            Opt::OpenFiles => s.openfiles = Some(at_least(parse_u32(t, kb)?, 1)?),
            Opt::FileServiceType => {
                let (kind, post) = split_postfix(t);
                s.file_service_type = match kind {
                    "roundrobin" => FileServiceType::RoundRobin,
                    "random" => FileServiceType::Random,
                    "sequential" => FileServiceType::Sequential,
                    "zipf" | "pareto" | "normal" | "gauss" => {
                        return Err(format!("file_service_type={kind} is not simulated"));
                    }
                    other => return Err(bad_choice(other, "roundrobin, random, sequential")),
                };
                s.file_service_nr = match post {
                    Some(p) => at_least(parse_plain_u32(p)?, 1)?,
                    None => 1,
                };
            }
            Opt::Fallocate => {
                s.fallocate = match t {
                    "none" | "0" => Fallocate::None,
                    "native" => Fallocate::Native,
                    "posix" | "1" => Fallocate::Posix,
                    "keep" => Fallocate::Keep,
                    "truncate" => Fallocate::Truncate,
                    other => {
                        return Err(bad_choice(
                            other,
                            "none, native, posix, keep, truncate, 0, 1",
                        ));
                    }
                }
            }
            Opt::FadviseHint => {
                s.fadvise_hint = match t {
                    "0" => Fadvise::None,
                    "1" => Fadvise::Type,
                    "random" => Fadvise::Random,
                    "sequential" => Fadvise::Sequential,
                    "noreuse" => Fadvise::NoReuse,
                    other => return Err(bad_choice(other, "0, 1, random, sequential, noreuse")),
                }
            }
            Opt::Fsync => s.fsync = parse_u32(t, kb)?,
            Opt::Fdatasync => s.fdatasync = parse_u32(t, kb)?,
            Opt::Loops => s.loops = at_least(parse_u32(t, kb)?, 1)?,
            Opt::NumberIos => s.number_ios = parse_bytes(t, kb)?,
            Opt::Offset => s.offset = parse_size_spec(t, kb, &mut s.zone_units.offset)?,
            Opt::OffsetIncrement => {
                s.offset_increment = parse_size_spec(t, kb, &mut s.zone_units.offset_increment)?
            }
            Opt::OffsetAlign => s.offset_align = parse_bytes(t, kb)?,
            Opt::ReadIolog => s.read_iolog = non_empty_list(name_list(t))?,
            Opt::ReplayTimeScale => s.replay_time_scale = at_least(parse_u32(t, kb)?, 1)?,
            Opt::ReplayRedirect => s.replay.redirect = Some(non_empty(t)?.to_string()),
            Opt::ReplayScale => s.replay.scale = parse_bytes(t, kb)?,
            Opt::ReplayAlign => {
                let a = parse_bytes(t, kb)?;
                if a > 0 && !a.is_power_of_two() {
                    return Err(format!("{a} is not a power of 2"));
                }
                s.replay.align = a;
            }
            Opt::RandomDistribution => s.random_distribution = parse_distribution(t, kb)?,
            Opt::Numjobs => s.numjobs = at_least(parse_u32(t, kb)?, 1)?,
            Opt::Runtime => {
                let ns = parse_time_ns(t, SECOND_US)?;
                s.runtime_ns = (ns != 0).then_some(ns);
            }
            Opt::RampTime => s.ramp_time_ns = parse_time_ns(t, SECOND_US)?,
            Opt::Startdelay => s.start_delay_ns = parse_time_range(t)?,
            Opt::Rwmixread => s.rwmixread = at_most(parse_u32(t, kb)?, 100)?,
            Opt::Rwmixwrite => s.rwmixread = 100 - at_most(parse_u32(t, kb)?, 100)?,
            Opt::Thinktime => {
                let ns = parse_time_ns(t, 1)?;
                if ns / 1_000 > u64::from(u32::MAX) {
                    return Err(format!("value '{t}' is out of range"));
                }
                s.thinktime_ns = ns;
            }
            Opt::ThinktimeBlocks => s.thinktime_blocks = at_least(parse_u32(t, kb)?, 1)?,
            Opt::Flow => {
                // fio 3.33 stores the weight in an unsigned int: a negative
                // one (older fio's counter scheme) wraps, as it does there.
                s.flow.weight = match t.trim().strip_prefix('-') {
                    Some(n) => {
                        let v = parse_plain_u32(n)?;
                        if v > 1 << 31 {
                            return Err(format!("value '{t}' is out of range"));
                        }
                        v.wrapping_neg()
                    }
                    None => parse_plain_u32(t)?,
                };
            }
            Opt::FlowId => s.flow.id = parse_plain_u32(t)?,
            Opt::FlowSleep => s.flow.sleep_ns = parse_time_ns(t, 1)?,
            Opt::Rate => {
                for (d, e) in per_dir(t, true)? {
                    s.rate[d] = parse_bytes(e, kb)?;
                }
            }
            Opt::RateIops => {
                for (d, e) in per_dir(t, true)? {
                    s.rate_iops[d] = parse_u32(e, kb)?;
                }
            }
            Opt::RateProcess => {
                s.rate_process = match t {
                    "linear" => RateProcess::Linear,
                    "poisson" => RateProcess::Poisson,
                    other => return Err(bad_choice(other, "linear, poisson")),
                }
            }
            Opt::CgroupWeight => {
                let w = at_least(parse_u32(t, kb)?, 100)?;
                s.cgroup_weight = Some(at_most(w, 1000)?);
            }
            Opt::ExitWhat => {
                s.exit_what = match t {
                    "group" => ExitWhat::Group,
                    "stonewall" => ExitWhat::Stonewall,
                    "all" => ExitWhat::All,
                    other => return Err(bad_choice(other, "group, stonewall, all")),
                }
            }
            Opt::LogAvgMsec => s.log_avg_msec = parse_u32(t, kb)?,
            Opt::KbBase => {
                s.kb_base = match t {
                    "1024" => 1024,
                    "1000" => 1000,
                    other => return Err(bad_choice(other, "1024, 1000")),
                }
            }
            Opt::UnitBase => {
                s.unit_base = match t {
                    "0" => 0,
                    "8" => 8,
                    "1" => 1,
                    other => return Err(bad_choice(other, "0, 8, 1")),
                }
            }
            Opt::PercentileList => {
                s.percentile_list = parse_percentiles(t)?;
                // fio counts the digits after the first '.' from each
                // point on: the most any point was written with.
                s.percentile_precision = t
                    .split(':')
                    .filter_map(|p| p.split_once('.'))
                    .map(|(_, d)| d.bytes().take_while(u8::is_ascii_digit).count() as u32)
                    .max()
                    .unwrap_or(0);
            }
            // Booleans and flags are handled in `apply`.
            Opt::Direct
            | Opt::Buffered
            | Opt::Invalidate
            | Opt::Overwrite
            | Opt::CreateFsync
            | Opt::CreateOnOpen
            | Opt::EndFsync
            | Opt::FsyncOnClose
            | Opt::Randrepeat
            | Opt::DoVerify
            | Opt::Inplace
            | Opt::ReadBeyondWp
            | Opt::LatencyRun
            | Opt::FillDevice
            | Opt::ClatPercentiles
            | Opt::LatPercentiles
            | Opt::SlatPercentiles
            | Opt::TimeBased
            | Opt::Norandommap
            | Opt::ReplayNoStall
            | Opt::NewGroup
            | Opt::Stonewall
            | Opt::GroupReporting
            | Opt::PerJobLogs
            | Opt::LogOffset
            | Opt::UnifiedRw
            | Opt::WriteBwLog
            | Opt::WriteIopsLog
            | Opt::WriteLatLog
            | Opt::WriteHistLog
            | Opt::Exitall => {}
        }
        Ok(())
    }
}

/// `startdelay=`: a time (bare numbers are seconds) or a range of two,
/// `low-high` or `low:high`, low first.
fn parse_time_range(t: &str) -> Result<(u64, u64), String> {
    let sep = if t.contains(':') { ':' } else { '-' };
    match t.split_once(sep) {
        None => {
            let v = parse_time_ns(t, SECOND_US)?;
            Ok((v, v))
        }
        Some((a, b)) => {
            let (lo, hi) = (parse_time_ns(a, SECOND_US)?, parse_time_ns(b, SECOND_US)?);
            if lo > hi {
                return Err(format!("the range '{t}' ends before it starts"));
            }
            Ok((lo, hi))
        }
    }
}

/// A `write_*_log` prefix: empty when bare or blank (the job's name then).
fn log_prefix(value: Option<&str>) -> String {
    value.map_or_else(String::new, |v| v.trim().to_string())
}

/// Splits `name:postfix`.
fn split_postfix(t: &str) -> (&str, Option<&str>) {
    match t.split_once(':') {
        Some((a, b)) => (a.trim(), Some(b)),
        None => (t, None),
    }
}

fn parse_rw_mode(m: &str) -> Result<RwMode, String> {
    Ok(match m {
        "read" => RwMode::Read,
        "write" => RwMode::Write,
        "trim" => RwMode::Trim,
        "randread" => RwMode::RandRead,
        "randwrite" => RwMode::RandWrite,
        "randtrim" => RwMode::RandTrim,
        "rw" | "readwrite" => RwMode::ReadWrite,
        "randrw" => RwMode::RandRw,
        "trimwrite" => RwMode::TrimWrite,
        "randtrimwrite" => RwMode::RandTrimWrite,
        "filecreate" | "filestat" | "filedelete" => {
            // Only with a postfix here: fio 3.33's parser refuses them.
            return Err(format!(
                "{}; fio 3.33 has no rw={m} either: the engine is ioengine={m}",
                bad_choice(
                    m,
                    "read, write, trim, randread, randwrite, randtrim, rw, readwrite, randrw, \
                     trimwrite, randtrimwrite"
                )
            ));
        }
        other => {
            return Err(bad_choice(
                other,
                "read, write, trim, randread, randwrite, randtrim, rw, readwrite, randrw, \
                 trimwrite, randtrimwrite",
            ));
        }
    })
}

/// Most entries in one direction's `bssplit=` (fio's `BSSPLIT_MAX`).
const BSSPLIT_MAX: usize = 64;

/// One direction of `bssplit=`: `bs[/percent]:bs[/percent]:...`. An entry
/// without a percent (or with 0) shares what the others leave, evenly
/// (integer division, as fio divides); a percent above 100 counts as 100.
/// Where fio stops at 64 entries with a message and at a sum above 100
/// only when two or more entries lack a percent, iolab refuses both, and
/// any sum above 100 with an entry left to fill.
fn parse_bssplit(t: &str, kb: u32) -> Result<Vec<(u64, u32)>, String> {
    let mut out: Vec<(u64, Option<u32>)> = Vec::new();
    for (_, bs, perc) in split_entries(t, BSSPLIT_MAX, "entries")? {
        let perc = match perc {
            Some(p) => {
                let p = parse_plain_u32(p)?;
                if p == 0 { None } else { Some(p.min(100)) }
            }
            None => None,
        };
        let bs = at_least_u64(parse_bytes(bs, kb)?, 1)?;
        out.push((bs, perc));
    }
    if out.is_empty() {
        return Err("missing value".to_string());
    }
    let given: u32 = out.iter().filter_map(|e| e.1).sum();
    let missing = out.iter().filter(|e| e.1.is_none()).count() as u32;
    if missing > 0 && given > 100 {
        return Err(format!(
            "the percentages of '{t}' add up to {given}, leaving nothing for the entries without one"
        ));
    }
    let share = 100u32
        .saturating_sub(given)
        .checked_div(missing)
        .unwrap_or(0);
    let mut split: Vec<(u64, u32)> = out
        .into_iter()
        .map(|(b, p)| (b, p.unwrap_or(share)))
        .collect();
    split.sort_by_key(|e| e.1);
    Ok(split)
}

/// Most zones in one direction of a zoned distribution (fio's
/// `ZONESPLIT_MAX`).
const ZONES_MAX: usize = 256;

/// `random_distribution=`, as fio's `str_random_distribution_cb` reads it:
/// `random`, `zipf[:THETA[:CENTER]]`, `pareto[:H[:CENTER]]`,
/// `normal[:DEV[:CENTER]]`, `zoned:A/S:...` and `zoned_abs:A/SIZE:...`
/// (zones per direction, split by commas as `bssplit=` is). Where fio
/// would ignore a value (`random:1`) or take a degenerate zone (one zone
/// without a size gets none in fio, so every IO goes to block 0), iolab
/// refuses.
fn parse_distribution(t: &str, kb: u32) -> Result<RandomDistribution, String> {
    let (kind, post) = split_postfix(t.trim());
    let zones = |abs: bool| -> Result<[Vec<Zone>; 3], String> {
        let post = post
            .filter(|p| !p.trim().is_empty())
            .ok_or_else(|| format!("{kind} needs its zones, e.g. {kind}:60/10:40/90"))?;
        let mut out: [Vec<Zone>; 3] = Default::default();
        for (d, e) in per_dir(post, false)? {
            out[d] = parse_zones(e, abs, kb)?;
        }
        Ok(out)
    };
    let (value, center) = match kind {
        "random" => {
            return match post {
                None => Ok(RandomDistribution::Uniform),
                Some(p) => Err(format!("random takes no parameter (got '{p}')")),
            };
        }
        "zoned" => return Ok(RandomDistribution::Zoned(zones(false)?)),
        "zoned_abs" => return Ok(RandomDistribution::ZonedAbs(zones(true)?)),
        "zipf" | "pareto" | "normal" => {
            let post = post.map(str::trim).filter(|p| !p.is_empty());
            if post.is_some_and(|p| p.contains(',')) {
                return Err(format!(
                    "one {kind} serves every direction; only zoned and zoned_abs take one per direction"
                ));
            }
            match post.map(|p| split_postfix(p)) {
                None => (None, None),
                Some((v, c)) => (Some(parse_float(v)?), c.map(parse_float).transpose()?),
            }
        }
        other => {
            return Err(bad_choice(
                other,
                "random, zipf, pareto, normal, zoned, zoned_abs",
            ));
        }
    };
    if let Some(c) = center
        && !(0.0..=1.0).contains(&c)
    {
        return Err(format!("center {c} is outside 0..1"));
    }
    match kind {
        "zipf" => {
            let theta = value.unwrap_or(1.1);
            if theta == 1.0 {
                return Err("zipf's theta must not be 1".to_string());
            }
            if theta <= 0.0 {
                return Err(format!("zipf's theta {theta} is not above 0"));
            }
            Ok(RandomDistribution::Zipf { theta, center })
        }
        "pareto" => {
            let h = value.unwrap_or(0.2);
            if !(h > 0.0 && h < 1.0) {
                return Err(format!(
                    "pareto's value {h} is outside 0..1 (both excluded)"
                ));
            }
            Ok(RandomDistribution::Pareto { h, center })
        }
        _ => {
            let dev = value.unwrap_or(0.0);
            if !(0.0..100.0).contains(&dev) {
                return Err(format!(
                    "normal's deviation {dev} is outside 0..100 (100 excluded)"
                ));
            }
            Ok(RandomDistribution::Normal { dev, center })
        }
    }
}

/// `max_open_zones=`, `job_max_open_zones=`: 0 to fio's 4096
/// (`ZBD_MAX_OPEN_ZONES`).
fn open_zones(t: &str, kb: u32) -> Result<u32, String> {
    let v = parse_u32(t, kb)?;
    if v > 4096 {
        return Err(format!("{v} is above fio's limit of 4096 open zones"));
    }
    Ok(v)
}

/// `zone_reset_threshold=`, `zone_reset_frequency=`: a fraction, 0 to 1.
fn fraction(t: &str) -> Result<f64, String> {
    let v = parse_float(t)?;
    if !(0.0..=1.0).contains(&v) {
        return Err(format!("{v} is not a fraction between 0 and 1"));
    }
    Ok(v)
}

/// A finite decimal number.
fn parse_float(t: &str) -> Result<f64, String> {
    match t.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("'{t}' is not a number")),
    }
}

/// One direction's zones, `access/size:...` (fio's `zone_split_ddir`): the
/// accesses must add up to 100; sizes are percents of the file (a percent
/// above 100 counts as 100, sizes left out or 0 share what the others
/// leave, and all of them add up to at most 100) or, with `abs`, bytes.
fn parse_zones(t: &str, abs: bool, kb: u32) -> Result<Vec<Zone>, String> {
    let mut out: Vec<(u32, Option<u64>)> = Vec::new();
    for (entry, access, size) in split_entries(t, ZONES_MAX, "zones")? {
        let size = size.filter(|s| !s.is_empty());
        let access = parse_plain_u32(access)?;
        let size = match size {
            None => None,
            Some(s) if abs => Some(parse_bytes(s, kb)?),
            Some(s) => Some(u64::from(parse_plain_u32(s)?.min(100))).filter(|&p| p > 0),
        };
        if abs && size.is_none_or(|b| b == 0) {
            return Err(format!("zone '{entry}' has no size"));
        }
        out.push((access, size));
    }
    if out.is_empty() {
        return Err("missing zones".to_string());
    }
    let access: u32 = out.iter().map(|z| z.0).fold(0, u32::saturating_add);
    if access != 100 {
        return Err(format!(
            "the zones' access percentages add up to {access}, not 100"
        ));
    }
    if let [(_, None)] = out[..] {
        return Err(format!(
            "the one zone of '{t}' has no size: fio gives it none (every IO at offset 0); give it one"
        ));
    }
    let given: u64 = out.iter().filter_map(|z| z.1).fold(0, u64::saturating_add);
    let missing = out.iter().filter(|z| z.1.is_none()).count() as u64;
    if !abs && given > 100 {
        return Err(format!("the zones' sizes add up to {given} %, above 100"));
    }
    if missing > 0 && given >= 100 {
        return Err(format!(
            "the zones' sizes add up to {given} %, leaving nothing for the zones without one"
        ));
    }
    let share = 100u64
        .saturating_sub(given)
        .checked_div(missing)
        .unwrap_or(0);
    Ok(out
        .into_iter()
        .map(|(access, size)| Zone {
            access,
            size: size.unwrap_or(share),
        })
        .collect())
}

/// A split option's entry as written, its first part, and its second.
type SplitEntry<'t> = (&'t str, &'t str, Option<&'t str>);

/// One direction's entries of a split option, `first[/second]:...`, as
/// fio's `split_parse_ddir` reads them: each entry trimmed, with its two
/// parts (the second `None` without a slash), up to the first empty entry;
/// more than `max` is refused, naming them `what`.
fn split_entries<'t>(t: &'t str, max: usize, what: &str) -> Result<Vec<SplitEntry<'t>>, String> {
    let mut out = Vec::new();
    for entry in t.split(':') {
        let entry = entry.trim();
        if entry.is_empty() {
            break;
        }
        if out.len() == max {
            return Err(format!("more than {max} {what} in '{t}'"));
        }
        out.push(match entry.split_once('/') {
            Some((a, b)) => (entry, a.trim(), Some(b.trim())),
            None => (entry, entry, None),
        });
    }
    Ok(out)
}

/// `verify=`: fio 3.33's methods; `0` (fio's "none") turns it off.
fn parse_verify(t: &str) -> Result<bool, String> {
    const METHODS: &[&str] = &[
        "md5",
        "crc64",
        "crc32c",
        "crc32c-intel",
        "crc32",
        "crc16",
        "crc7",
        "xxhash",
        "sha512",
        "sha256",
        "sha1",
        "sha3-224",
        "sha3-256",
        "sha3-384",
        "sha3-512",
        "meta",
        "pattern",
        "null",
    ];
    match t {
        "0" => Ok(false),
        m if METHODS.contains(&m) => Ok(true),
        other => Err(bad_choice(other, &format!("0, {}", METHODS.join(", ")))),
    }
}

/// `ss=`: `iops`, `bw`, `iops_slope` or `bw_slope`, a colon, and a limit
/// (a percentage of the mean when it ends in `%`), as fio's
/// `str_steadystate_cb` reads it.
fn parse_steady(t: &str, mut ss: crate::fio::Steady) -> Result<crate::fio::Steady, String> {
    use crate::fio::SteadyMetric;
    let (kind, limit) = t
        .split_once(':')
        .ok_or_else(|| format!("'{t}': expected a criterion and a limit, such as iops:10%"))?;
    (ss.metric, ss.slope) = match kind.trim() {
        "iops" => (SteadyMetric::Iops, false),
        "iops_slope" => (SteadyMetric::Iops, true),
        "bw" => (SteadyMetric::Bw, false),
        "bw_slope" => (SteadyMetric::Bw, true),
        other => return Err(bad_choice(other, "iops, iops_slope, bw, bw_slope")),
    };
    let limit = limit.trim();
    let (num, pct) = match limit.strip_suffix('%') {
        Some(n) => (n, true),
        None => (limit, false),
    };
    ss.limit = num
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("'{limit}': expected a limit of 0 or more"))?;
    ss.pct = pct;
    Ok(ss)
}

/// `ioengine=`: one of the engines iolab simulates.
pub(crate) fn parse_engine(t: &str) -> Result<Engine, String> {
    Ok(match t {
        "sync" => Engine::Sync,
        "psync" => Engine::Psync,
        "vsync" => Engine::Vsync,
        "pvsync" => Engine::Pvsync,
        "pvsync2" => Engine::Pvsync2,
        "libaio" => Engine::Libaio,
        "io_uring" => Engine::IoUring,
        "null" => Engine::Null,
        "cpp_null" => Engine::CppNull,
        "posixaio" => Engine::PosixAio,
        "io_uring_cmd" => Engine::IoUringCmd,
        "mmap" => Engine::Mmap,
        "sg" => Engine::Sg,
        "cpuio" => Engine::Cpuio,
        "falloc" => Engine::Falloc,
        "ftruncate" => Engine::Ftruncate,
        "e4defrag" => Engine::E4defrag,
        "libzbc" => Engine::Libzbc,
        "filecreate" => Engine::Meta(MetaEngine::FileCreate),
        "filestat" => Engine::Meta(MetaEngine::FileStat),
        "filedelete" => Engine::Meta(MetaEngine::FileDelete),
        "dircreate" => Engine::Meta(MetaEngine::DirCreate),
        "dirstat" => Engine::Meta(MetaEngine::DirStat),
        "dirdelete" => Engine::Meta(MetaEngine::DirDelete),
        other => return Err(format!("ioengine {other} is not simulated")),
    })
}

/// `size=` / `io_size=` / `offset=` / `offset_increment=`: bytes, 1..=100
/// percent or a count of zones (`z`, kept in `zones` until the zone size
/// is known); zero means "not set".
fn parse_size_spec(t: &str, kb: u32, zones: &mut Option<u64>) -> Result<Option<SizeSpec>, String> {
    *zones = None;
    Ok(match parse_size(t, kb, true)? {
        Size::Bytes(0) | Size::Zones(0) => None,
        Size::Bytes(b) => Some(SizeSpec::Bytes(b)),
        Size::Zones(n) => {
            *zones = Some(n);
            None
        }
        Size::Percent(p) if (1..=100).contains(&p) => {
            // `p` is at most 100 here, so the conversion cannot fail.
            Some(SizeSpec::Percent(u32::try_from(p).unwrap_or(100)))
        }
        Size::Percent(p) => return Err(format!("percentage {p}% is outside 1..100")),
    })
}

fn bad_choice(got: &str, expected: &str) -> String {
    format!("unknown value '{got}' (expected one of: {expected})")
}

fn non_empty(t: &str) -> Result<&str, String> {
    if t.is_empty() {
        Err("requires a value".to_string())
    } else {
        Ok(t)
    }
}

fn non_empty_list(l: Vec<String>) -> Result<Vec<String>, String> {
    if l.is_empty() {
        Err("requires at least one name".to_string())
    } else {
        Ok(l)
    }
}

fn at_least(v: u32, min: u32) -> Result<u32, String> {
    if v < min {
        Err(format!("value {v} is below the minimum {min}"))
    } else {
        Ok(v)
    }
}

fn at_least_u64(v: u64, min: u64) -> Result<u64, String> {
    if v < min {
        Err(format!("value {v} is below the minimum {min}"))
    } else {
        Ok(v)
    }
}

fn at_most(v: u32, max: u32) -> Result<u32, String> {
    if v > max {
        Err(format!("value {v} is above the maximum {max}"))
    } else {
        Ok(v)
    }
}
