//! No job option vanishes: every name of the option table is simulated
//! (a job with it runs differently from the same job without it), refused
//! (a value that would change fio's behaviour is an error naming it), or
//! accepted and listed with its reason for the command to say on stderr.
//! A new option in the table fails here until it is given its check.

use super::super::cosmetic::{CHECKS, Check};
use super::super::table::{Class, Harmless, OPTIONS};
use super::*;

/// What a simulated option changes that a test can see.
#[derive(Clone, Copy, Debug)]
enum Shows {
    /// The run's JSON (its figures, its `iolab` section), the echoed
    /// options left out.
    Run,
    /// Read by the command, not the run: the parsed job differs, and the
    /// named test checks what the command does with it.
    Command(&'static str),
    /// This value is one fio acts on and iolab does not: listed among the
    /// accepted options with its reason, for the command to say.
    Said,
}

/// The job every check starts from: `@` is where the option's line goes.
const BASE: &str = "[j]\nrw=randrw\nsize=4m\nbs=4k\nioengine=libaio\niodepth=2\ndirect=1\n@\n";

/// A small fio iolog (version 2) for the replay options.
const LOG: &str = "fio version 3 iolog\n0 f add\n0 f open\n0 f read 0 4096\n\
                   1000 f read 4096 4096\n2000 f write 16384 4096\n3000 f read 8192 4096\n\
                   4000 f close\n";

/// Every simulated option by its canonical name: the line that sets it,
/// the job text around it (`@` for the line; empty: [`BASE`]), and where
/// it shows.
const SIMULATED: &[(&str, &str, &str, Shows)] = &[
    ("bs", "bs=8k", "", Shows::Run),
    ("bsrange", "bsrange=4k-16k", "", Shows::Run),
    ("bssplit", "bssplit=4k/50:16k/50", "", Shows::Run),
    ("number_ios", "number_ios=100", "", Shows::Run),
    (
        "offset",
        "offset=1m",
        "[j]\nrw=read\nfilesize=4m\n@\n",
        Shows::Run,
    ),
    (
        "offset_align",
        "offset_align=64k",
        "[j]\nrw=read\nsize=4m\nfilename=/dev/sdb\noffset=13%\n@\n",
        Shows::Run,
    ),
    (
        "offset_increment",
        "offset_increment=1m",
        "[j]\nrw=read\nsize=1m\nfilename=f\nnumjobs=2\n@\n",
        Shows::Run,
    ),
    (
        "random_distribution",
        "random_distribution=zipf:1.2",
        "",
        Shows::Run,
    ),
    ("buffered", "buffered=1", "", Shows::Run),
    (
        "cgroup",
        "cgroup=a",
        "[j]\n@\nrw=randread\nsize=4m\ndirect=1\n[k]\nrw=randread\nsize=4m\ndirect=1\ncgroup=b\n",
        Shows::Run,
    ),
    (
        "cgroup_weight",
        "cgroup_weight=500",
        "[j]\nrw=randread\nsize=4m\ndirect=1\ncgroup=a\n@\n[k]\nrw=randread\nsize=4m\ndirect=1\ncgroup=b\n",
        Shows::Run,
    ),
    ("clat_percentiles", "clat_percentiles=0", "", Shows::Run),
    ("create_fsync", "create_fsync=0", "", Shows::Said),
    (
        "create_on_open",
        "create_on_open=1",
        "[j]\n@\nrw=write\nsize=1m\nnrfiles=4\n",
        Shows::Run,
    ),
    ("description", "description=x", "", Shows::Run),
    ("direct", "direct=0", "", Shows::Run),
    (
        "directory",
        "directory=d",
        "[j]\nrw=read\nsize=1m\nfilename=f\n@\n[k]\nrw=read\nsize=1m\nfilename=f\n",
        Shows::Run,
    ),
    ("end_fsync", "end_fsync=1", "", Shows::Run),
    (
        "exit_what",
        "exit_what=all",
        "[j]\n@\nrw=read\nsize=1m\nexitall\n[k]\nrw=read\nsize=64m\nstonewall\n[l]\nrw=read\nsize=64m\n",
        Shows::Run,
    ),
    (
        "exitall",
        "exitall",
        "[j]\n@\nrw=read\nsize=1m\n[k]\nrw=read\nsize=64m\n",
        Shows::Run,
    ),
    (
        "fadvise_hint",
        "fadvise_hint=0",
        "[j]\n@\nrw=read\nsize=4m\n",
        Shows::Run,
    ),
    ("fallocate", "fallocate=none", "", Shows::Said),
    ("fdatasync", "fdatasync=4", "", Shows::Run),
    (
        "file_service_type",
        "file_service_type=sequential",
        "[j]\n@\nrw=randread\nsize=4m\nnrfiles=4\n",
        Shows::Run,
    ),
    (
        "filename",
        "filename=f",
        "[j]\n@\nrw=read\nsize=1m\n[k]\nrw=read\nsize=1m\nfilename=f\n",
        Shows::Run,
    ),
    ("filesize", "filesize=1m", "", Shows::Run),
    ("fsync", "fsync=4", "", Shows::Run),
    (
        "fsync_on_close",
        "fsync_on_close=1",
        "[j]\n@\nrw=write\nsize=1m\n",
        Shows::Run,
    ),
    (
        "group_reporting",
        "group_reporting",
        "[j]\n@\nrw=read\nsize=1m\nnumjobs=2\n",
        Shows::Run,
    ),
    (
        "invalidate",
        "invalidate=0",
        "[j]\n@\nrw=read\nsize=1m\nloops=2\n",
        Shows::Run,
    ),
    ("io_size", "io_size=1m", "", Shows::Run),
    ("iodepth", "iodepth=8", "", Shows::Run),
    ("ioengine", "ioengine=psync", "", Shows::Run),
    (
        "kb_base",
        "kb_base=1000",
        "[j]\n@\nrw=read\nsize=4m\n",
        Shows::Run,
    ),
    ("lat_percentiles", "lat_percentiles=1", "", Shows::Run),
    ("log_avg_msec", "log_avg_msec=100", "", Shows::Run),
    (
        "per_job_logs",
        "per_job_logs=0",
        "",
        Shows::Command("iolab --test cli fio_logs_of_several_runs_go_one_directory_each"),
    ),
    (
        "log_offset",
        "log_offset=1",
        "",
        Shows::Command("iolab --test fio_formats logs_and_samples_end_and_count_as_fios"),
    ),
    (
        "write_bw_log",
        "write_bw_log=b",
        "[j]\n@\nrw=read\nsize=64m\nruntime=1\ntime_based\nlog_avg_msec=100\n",
        Shows::Run,
    ),
    (
        "write_iops_log",
        "write_iops_log=b",
        "[j]\n@\nrw=read\nsize=64m\nruntime=1\ntime_based\nlog_avg_msec=100\n",
        Shows::Run,
    ),
    (
        "write_lat_log",
        "write_lat_log=b",
        "",
        Shows::Command("iolab --test cli fio_logs_are_written_and_add_up_to_the_report"),
    ),
    (
        "write_hist_log",
        "write_hist_log=h",
        "",
        Shows::Command("iolab --test cli a_hist_log_is_written_as_fio_writes_it"),
    ),
    (
        "log_hist_msec",
        "log_hist_msec=500",
        "[j]\nrw=read\nsize=4m\nwrite_hist_log=h\n@\n",
        Shows::Command("iolab --test cli a_hist_log_is_written_as_fio_writes_it"),
    ),
    (
        "log_hist_coarseness",
        "log_hist_coarseness=4",
        "[j]\nrw=read\nsize=4m\nwrite_hist_log=h\nlog_hist_msec=500\n@\n",
        Shows::Command("iolab --test cli a_hist_log_is_written_as_fio_writes_it"),
    ),
    ("loops", "loops=2", "", Shows::Run),
    ("name", "name=x", "", Shows::Run),
    (
        "new_group",
        "new_group",
        "[j]\nrw=read\nsize=1m\n[k]\n@\nrw=read\nsize=1m\n",
        Shows::Run,
    ),
    ("norandommap", "norandommap", "", Shows::Run),
    ("nrfiles", "nrfiles=2", "", Shows::Run),
    (
        "openfiles",
        "openfiles=1",
        "[j]\n@\nioengine=filecreate\nnrfiles=64\nfilesize=4k\nbs=4k\n",
        Shows::Said,
    ),
    ("numjobs", "numjobs=2", "", Shows::Run),
    (
        "overwrite",
        "overwrite=1",
        "[j]\n@\nrw=randwrite\nsize=4m\ndirect=1\n",
        Shows::Run,
    ),
    ("percentile_list", "percentile_list=50", "", Shows::Run),
    (
        "ramp_time",
        "ramp_time=10ms",
        "[j]\n@\nrw=randread\nsize=4m\nruntime=50ms\ntime_based\n",
        Shows::Run,
    ),
    ("randrepeat", "randrepeat=0", "", Shows::Run),
    ("randseed", "randseed=5", "", Shows::Run),
    ("rate", "rate=1m", "", Shows::Run),
    ("rate_iops", "rate_iops=100", "", Shows::Run),
    (
        "rate_process",
        "rate_process=poisson",
        "[j]\n@\nrw=randread\nsize=4m\ndirect=1\nrate_iops=1000\n",
        Shows::Run,
    ),
    ("runtime", "runtime=2ms", "", Shows::Run),
    (
        "read_iolog",
        "read_iolog=log.txt",
        "[j]\n@\nrw=randread\nsize=64k\n",
        Shows::Run,
    ),
    (
        "replay_align",
        "replay_align=8k",
        "[j]\nread_iolog=log.txt\n@\n",
        Shows::Run,
    ),
    (
        "replay_no_stall",
        "replay_no_stall=1",
        "[j]\nread_iolog=log.txt\n@\n",
        Shows::Run,
    ),
    (
        "replay_redirect",
        "replay_redirect=g",
        "[j]\nread_iolog=log.txt\n@\n[k]\nrw=randread\nsize=64k\nfilename=g\n",
        Shows::Run,
    ),
    (
        "replay_scale",
        "replay_scale=2",
        "[j]\nread_iolog=log.txt\n@\n",
        Shows::Run,
    ),
    (
        "replay_time_scale",
        "replay_time_scale=50",
        "[j]\nread_iolog=log.txt\n@\n",
        Shows::Run,
    ),
    ("startdelay", "startdelay=10ms", "", Shows::Run),
    ("rw", "rw=randread", "[j]\n@\nsize=4m\n", Shows::Run),
    ("rwmixread", "rwmixread=90", "", Shows::Run),
    ("rwmixwrite", "rwmixwrite=90", "", Shows::Run),
    ("size", "size=8m", "[j]\nrw=read\nsize=4m\n@\n", Shows::Run),
    (
        "stonewall",
        "stonewall",
        "[j]\nrw=read\nsize=1m\n[k]\n@\nrw=read\nsize=1m\n",
        Shows::Run,
    ),
    ("thinktime", "thinktime=100", "", Shows::Run),
    (
        "thinktime_blocks",
        "thinktime_blocks=4",
        "[j]\n@\nrw=read\nsize=1m\nthinktime=100\n",
        Shows::Run,
    ),
    (
        "flow",
        "flow=4",
        "[j]\nrw=read\nsize=1m\nflow=1\n[k]\n@\nrw=read\nsize=1m\n",
        Shows::Run,
    ),
    (
        "flow_id",
        "flow_id=1",
        "[j]\nrw=read\nsize=1m\nflow=1\n[k]\n@\nrw=read\nsize=1m\nflow=3\n",
        Shows::Run,
    ),
    (
        "flow_sleep",
        "flow_sleep=100",
        "[j]\nrw=read\nsize=1m\nflow=1\n[k]\n@\nrw=read\nsize=1m\nflow=3\n",
        Shows::Run,
    ),
    (
        "time_based",
        "time_based",
        "[j]\n@\nrw=read\nsize=1m\nruntime=20ms\n",
        Shows::Run,
    ),
    ("unit_base", "unit_base=1", "", Shows::Said),
    (
        "unified_rw_reporting",
        "unified_rw_reporting=mixed",
        "",
        Shows::Run,
    ),
    (
        "verify",
        "verify=crc32c",
        "[j]\nrw=randwrite\nsize=1m\n@\n",
        Shows::Run,
    ),
    (
        "verify_pattern",
        "verify_pattern=0xaa",
        "[j]\nrw=randwrite\nsize=1m\n@\n",
        Shows::Run,
    ),
    (
        "do_verify",
        "do_verify=0",
        "[j]\nrw=randwrite\nsize=1m\nverify=md5\n@\n",
        Shows::Run,
    ),
    (
        "verify_backlog",
        "verify_backlog=16",
        "[j]\nrw=randwrite\nsize=1m\nverify=md5\nioengine=libaio\niodepth=4\ndirect=1\n@\n",
        Shows::Run,
    ),
    (
        "fill_device",
        "fill_device=1",
        "[j]\nrw=write\nbs=1m\nsize=1m\nio_size=2m\n@\n",
        Shows::Run,
    ),
    (
        "sg_write_mode",
        "sg_write_mode=verify_bytchk_00",
        "[j]\nioengine=sg\nrw=write\nsize=1m\n@\n",
        Shows::Run,
    ),
    (
        "ba",
        "blockalign=16k",
        "[j]\nrw=randread\nsize=4m\nbs=4k\n@\n",
        Shows::Run,
    ),
    (
        "io_submit_mode",
        "io_submit_mode=offload",
        "[j]\nrw=randread\nsize=64m\ndirect=1\nioengine=libaio\niodepth=8\nrate_iops=20000\nnumber_ios=400\n@\n",
        Shows::Run,
    ),
    (
        // fio's e4defrag needs its donor: without one the job is refused
        // (the donor is no file of the run's own).
        "donorname",
        "donorname=d.def",
        "[j]\nioengine=e4defrag\nfilename=f\nrw=write\nsize=1m\nbs=32k\n@\n",
        Shows::Command(
            "iolab-sim --test file_call_engines what_fio_fails_is_refused_naming_the_option",
        ),
    ),
    (
        "inplace",
        "inplace=1",
        "[j]\nioengine=e4defrag\ndonorname=d.def\nfilename=f\nrw=write\nsize=1m\nbs=32k\n@\n",
        Shows::Run,
    ),
    (
        // A limit never met: the job runs its whole runtime.
        "steadystate",
        "ss=iops:0",
        "[j]\nioengine=null\nsize=1g\nrw=randread\nrate_iops=1000\nruntime=6\ntime_based\nss_dur=2\n@\n",
        Shows::Run,
    ),
    (
        "steadystate_duration",
        "ss_dur=2",
        "[j]\nioengine=null\nsize=1g\nrw=randread\nrate_iops=1000\nruntime=6\ntime_based\n@\n",
        Shows::Run,
    ),
    (
        "steadystate_ramp_time",
        "ss_ramp=2",
        "[j]\nioengine=null\nsize=1g\nrw=randread\nrate_iops=1000\nruntime=6\ntime_based\nss_dur=2\n@\n",
        Shows::Run,
    ),
    (
        "latency_target",
        "latency_target=100us",
        "[j]\nfilename=f\nsize=1g\nrw=randread\ndirect=1\nioengine=libaio\niodepth=16\nruntime=1\ntime_based\n@\n",
        Shows::Run,
    ),
    (
        "latency_window",
        "latency_window=50ms",
        "[j]\nfilename=f\nsize=1g\nrw=randread\ndirect=1\nioengine=libaio\niodepth=16\nruntime=1\ntime_based\nlatency_target=100us\n@\n",
        Shows::Run,
    ),
    (
        "latency_percentile",
        "latency_percentile=50",
        "[j]\nfilename=f\nsize=1g\nrw=randread\ndirect=1\nioengine=libaio\niodepth=16\nruntime=1\ntime_based\nlatency_target=100us\nlatency_window=20ms\n@\n",
        Shows::Run,
    ),
    (
        "latency_run",
        "latency_run=1",
        "[j]\nfilename=f\nsize=1g\nrw=randread\ndirect=1\nioengine=libaio\niodepth=16\nruntime=1\ntime_based\nlatency_target=100us\nlatency_window=20ms\n@\n",
        Shows::Run,
    ),
    (
        "cpuload",
        "cpuload=60",
        "[j]\nioengine=cpuio\nruntime=100ms\ncpuload=30\n@\n",
        Shows::Run,
    ),
    (
        "zonemode",
        // A zonesize alone makes the zones strided; none turns them off.
        "zonemode=none",
        "[j]\nrw=read\nsize=4m\nbs=64k\nzonesize=256k\nzoneskip=256k\n@\n",
        Shows::Run,
    ),
    (
        "zonesize",
        "zonesize=256k",
        "[j]\nrw=read\nsize=4m\nbs=64k\nzoneskip=256k\n@\n",
        Shows::Run,
    ),
    (
        "zonerange",
        "zonerange=512k",
        "[j]\nrw=read\nsize=4m\nbs=64k\nzonesize=256k\nzoneskip=256k\n@\n",
        Shows::Run,
    ),
    (
        "zoneskip",
        "zoneskip=256k",
        "[j]\nrw=read\nsize=4m\nbs=64k\nzonesize=256k\n@\n",
        Shows::Run,
    ),
    (
        "max_open_zones",
        // Two writers sharing one open zone take turns at it.
        "max_open_zones=1",
        "[j]\nfilename=/dev/sdb\nzonemode=zbd\nzonesize=1m\ndirect=1\nrw=randwrite\nbs=64k\nsize=16m\nio_size=8m\nnumjobs=2\n@\n",
        Shows::Run,
    ),
    (
        "job_max_open_zones",
        "job_max_open_zones=1",
        "[j]\nfilename=/dev/sdb\nzonemode=zbd\nzonesize=1m\ndirect=1\nrw=randwrite\nbs=64k\nsize=16m\nio_size=8m\nnumjobs=2\nmax_open_zones=8\n@\n",
        Shows::Run,
    ),
    (
        "read_beyond_wp",
        // Nothing written: only reads beyond the write pointers read.
        "read_beyond_wp=1",
        "[j]\nfilename=/dev/sdb\nzonemode=zbd\nzonesize=1m\ndirect=1\nrw=read\nbs=64k\nsize=4m\n@\n",
        Shows::Run,
    ),
    (
        "zone_reset_threshold",
        "zone_reset_threshold=0.1",
        "[j]\nfilename=/dev/sdb\nzonemode=zbd\nzonesize=1m\ndirect=1\nrw=randwrite\nbs=64k\nsize=4m\nio_size=16m\nzone_reset_frequency=0.5\n@\n",
        Shows::Run,
    ),
    (
        "zone_reset_frequency",
        "zone_reset_frequency=0.5",
        "[j]\nfilename=/dev/sdb\nzonemode=zbd\nzonesize=1m\ndirect=1\nrw=randwrite\nbs=64k\nsize=4m\nio_size=16m\nzone_reset_threshold=0.1\n@\n",
        Shows::Run,
    ),
    (
        "slat_percentiles",
        "slat_percentiles=1",
        "[j]\nrw=read\nsize=1m\nioengine=libaio\niodepth=4\ndirect=1\n@\n",
        Shows::Run,
    ),
    (
        "wait_for",
        "wait_for=j",
        "[j]\nrw=read\nsize=1m\n[k]\n@\nrw=read\nsize=1m\n",
        Shows::Run,
    ),
];

fn parse_with_log(text: &str) -> Result<JobFile, ParseError> {
    let include = |_: &str, name: &str| -> Result<(String, Vec<u8>), String> {
        if name == "log.txt" {
            Ok((name.to_owned(), LOG.as_bytes().to_vec()))
        } else {
            Err(format!("no such file: {name}"))
        }
    };
    parse_full(text, &[], &include)
}

/// The run of `text` as its JSON says it, without the options it echoes.
fn outcome(text: &str) -> String {
    let file = parse_with_log(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let device = crate::device::DeviceConfig::preset("nvme").expect("preset");
    let scenario = crate::Scenario {
        jobs: file.jobs,
        device,
        mem_bytes: GIB,
        seed: 1,
        fs: crate::FsKind::XfsLite,
        bdp: crate::cache::dirty::BdpMode::Paced,
        group_bw: crate::stats::GroupBwMode::Sum,
        scheduler: crate::SchedKind::None,
        trace: false,
        volume: None,
        cpus: 4,
        io_budget: None,
    };
    let variant = crate::parse_variant("none").expect("variant");
    let out =
        crate::run(&scenario, &variant, &mut |_| {}).unwrap_or_else(|e| panic!("{text}: {e}"));
    let mut v = crate::stats::json_output(&out.report, out.extra);
    if let Some(top) = v.as_object_mut() {
        top.remove("global options");
    }
    for job in v["jobs"].as_array_mut().into_iter().flatten() {
        if let Some(j) = job.as_object_mut() {
            j.remove("job options");
        }
    }
    v.to_string()
}

/// A value the option's type check takes.
fn valid_value(check: Check) -> Option<String> {
    Some(match check {
        Check::Bool => "1".to_owned(),
        Check::Flag => return None,
        Check::Int { min, max, .. } => (if (min..=max).contains(&1) { 1 } else { min }).to_string(),
        Check::Size => "4k".to_owned(),
        Check::Time => "1s".to_owned(),
        Check::Choice(list) => list[0].to_owned(),
        Check::Text => "x".to_owned(),
    })
}

#[test]
fn every_simulated_option_changes_the_run_or_the_command() {
    let typed: Vec<&str> = OPTIONS
        .iter()
        .filter(|e| matches!(e.class, Class::Typed(_)) && e.name == e.canonical)
        .map(|e| e.name)
        .collect();
    let listed: Vec<&str> = SIMULATED.iter().map(|s| s.0).collect();
    for name in &typed {
        assert!(
            listed.contains(name),
            "{name}: simulated, but not checked here"
        );
    }
    let mut unchanged = Vec::new();
    for &(name, line, around, shows) in SIMULATED {
        assert!(typed.contains(&name), "{name} is not a simulated option");
        let around = if around.is_empty() { BASE } else { around };
        let with = around.replace('@', line);
        let without = around.replace('@', "");
        match shows {
            Shows::Run => {
                if outcome(&with) == outcome(&without) {
                    unchanged.push(name);
                }
            }
            Shows::Said => {
                let f = parse_with_log(&with).unwrap_or_else(|e| panic!("{with}: {e}"));
                let said = f.accepted.iter().find(|a| a.option == name);
                assert!(
                    said.is_some_and(|a| a.standing == Standing::NotSimulated && !a.why.is_empty()),
                    "{name}: not said: {:?}",
                    f.accepted
                );
            }
            Shows::Command(test) => {
                let a = parse_with_log(&with).expect("parses");
                let b = parse_with_log(&without).expect("parses");
                let spec = |f: &JobFile| {
                    let mut j = f.jobs[0].clone();
                    j.options.clear();
                    j.option_at.clear();
                    j.global_count = 0;
                    format!("{j:?}")
                };
                assert_ne!(
                    spec(&a),
                    spec(&b),
                    "{name}: the job does not change ({test})"
                );
            }
        }
    }
    assert!(
        unchanged.is_empty(),
        "options that change nothing: {unchanged:?}"
    );
}

#[test]
fn every_accepted_option_is_listed_with_its_reason() {
    for e in OPTIONS {
        let why = match e.class {
            Class::Cosmetic(w) | Class::Inert(w) => w,
            _ => continue,
        };
        assert!(!why.is_empty(), "{}", e.name);
        // An option without a type check takes any text.
        let check = CHECKS
            .iter()
            .find(|(n, _)| *n == e.canonical)
            .map_or(Check::Text, |(_, c)| *c);
        let line = match valid_value(check) {
            Some(v) => format!("{}={v}", e.name),
            None => e.name.to_owned(),
        };
        let text = format!("[j]\nrw=read\nsize=1m\n{line}\n");
        let file = match parse_with_log(&text) {
            Ok(f) => f,
            // Some are only taken beside another option; their own line
            // is then named in the error, which is not vanishing either.
            Err(err) => {
                assert!(err.to_string().contains(e.name), "{line}: {err}");
                continue;
            }
        };
        let said = file
            .accepted
            .iter()
            .find(|a| a.option == e.name)
            .unwrap_or_else(|| panic!("{line}: accepted without a word"));
        assert!(!said.why.is_empty(), "{line}");
    }
}

#[test]
fn every_unsupported_option_is_refused_by_name() {
    for e in OPTIONS {
        let Class::Unsupported(ok, _) = e.class else {
            continue;
        };
        // A value that is not one of those keeping fio's default.
        let value = match ok {
            Harmless::Values(vals) if vals.contains(&"7") => "8",
            _ => "7",
        };
        let text = format!("[j]\nrw=read\nsize=1m\n{}={value}\n", e.name);
        let err = parse_with_log(&text).expect_err(&text);
        assert!(err.to_string().contains(e.name), "{text}: {err}");
    }
}
