//! The input contract on the reproducers of inputs that once aborted,
//! hung, ran for ever, were blamed on the simulator, or were dropped
//! without a word: each now exits 2 naming its file, line and option (or
//! the flag), or runs to the end, within a wall-time bound.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{root, stderr};

/// Longer than any case takes; a case still running then has hung.
const WALL: Duration = Duration::from_secs(60);

/// This suite's scratch directory under Cargo's `target/tmp`.
fn dir() -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("iolab-contract");
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn write(name: &str, text: &str) -> String {
    let p = dir().join(name);
    std::fs::write(&p, text).expect("write");
    p.to_str().expect("utf-8").to_owned()
}

/// `iolab ARGS` killed after [`WALL`] (a failure: it hung).
fn bounded(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iolab starts");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > WALL {
            let _ = child.kill();
            panic!("{args:?} still running after {WALL:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// Exit 2, saying `says`, nothing on stdout, no panic.
fn refused(args: &[&str], says: &str) {
    let o = bounded(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(says), "{args:?}: expected '{says}' in: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?} printed a report");
}

/// Exit 0.
fn runs(args: &[&str]) -> Output {
    let o = bounded(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    o
}

const SMALL: &str = "[j]\nrw=randread\nbs=4k\nsize=1m\nruntime=10ms\ntime_based\n";

/// Products of limits, each accepted alone, once aborted or exhausted
/// memory: files, IO contexts, the largest block.
#[test]
fn resource_products_are_refused_before_the_run() {
    let nrfiles = write(
        "nrfiles.fio",
        "[j]\nrw=read\nnrfiles=4000000000\nsize=16t\n",
    );
    refused(
        &["run", &nrfiles, "--device", "nvme"],
        &format!("{nrfiles}:3: nrfiles: job 'j': 4000000000 files in the run"),
    );
    let many = write("nrfiles2.fio", "[j]\nrw=read\nnrfiles=100000000\nsize=1t\n");
    refused(&["run", &many, "--device", "nvme"], ":3: nrfiles:");
    let ctx = write(
        "ctx.fio",
        "[j]\nioengine=io_uring\niodepth=65536\nnumjobs=512\nrw=read\nsize=1g\n",
    );
    refused(
        &["run", &ctx, "--device", "nvme"],
        "iodepth: job 'j': 33554432 IOs in flight at once in the run (iodepth=65536 × numjobs=512",
    );
    // A null or buffered job keeps one context whatever its iodepth.
    let null = write(
        "null.fio",
        "[j]\nioengine=null\niodepth=65536\nnumjobs=8\nrw=read\nsize=1m\nruntime=1ms\n",
    );
    runs(&["run", &null, "--device", "nvme"]);
    let bsr = write("bsrange.fio", "[j]\nrw=read\nbsrange=1-1p\nsize=8g\n");
    refused(
        &["run", &bsr, "--device", "nvme"],
        &format!("{bsr}:3: bsrange: job 'j': a block of 1125899906842624 bytes"),
    );
}

/// A buffered write larger than the page cache once rescanned every
/// dirty page for each new one (254 s of wall time for this job); huge
/// simulated RAM once allocated its bookkeeping up front (31 GB at 16
/// TiB). Both now finish at once.
#[test]
fn a_write_larger_than_the_cache_and_huge_ram_run_at_once() {
    let job = write("big.fio", "[j]\nbs=1g\nsize=1g\nrw=write\n");
    let sixteen = write(
        "sixteen.fio",
        "[global]\nbs=256m\nsize=256m\nrw=write\nnumjobs=16\n[w]\n",
    );
    for (job, memory) in [(&job, "1g"), (&job, "16t"), (&sixteen, "4g")] {
        let start = Instant::now();
        runs(&["run", job, "--device", "nvme", "--memory", memory]);
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{job} --memory {memory}: {:?}",
            start.elapsed()
        );
    }
}

/// An include that is a FIFO would block for ever, `/dev/zero` would
/// read until memory ran out.
#[cfg(unix)]
#[test]
fn includes_are_regular_files_only() {
    let fifo = dir().join("fifo");
    let _ = std::fs::remove_file(&fifo);
    let made = Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let job = write("fifo.fio", "[j]\ninclude fifo\nrw=read\nsize=1m\n");
        refused(
            &["run", &job, "--device", "nvme"],
            &format!("{job}:2: include: cannot include 'fifo'"),
        );
    }
    let job = write("zero.fio", "[j]\ninclude /dev/zero\nrw=read\nsize=1m\n");
    refused(
        &["run", &job, "--device", "nvme"],
        "/dev/zero: not a regular file",
    );
    refused(
        &["run", "/dev/zero", "--device", "nvme"],
        "not a regular file",
    );
}

/// Devices whose commands cost nothing (the run never ends, or is
/// called a livelock) are refused with the plausible range.
#[test]
fn devices_of_no_cost_are_refused() {
    for (name, text, key) in [
        (
            "null0.toml",
            "name = \"n\"\nbase = \"null\"\n[null]\ncompletion_ns = 0\n",
            "`null.completion_ns`: must be at least 1000",
        ),
        (
            "null1.toml",
            "name = \"n\"\nbase = \"null\"\n[null]\ncompletion_ns = 1\n",
            "`null.completion_ns`: must be at least 1000",
        ),
        (
            "ssd0.toml",
            "name = \"s\"\nbase = \"nvme\"\n[ssd]\nread_us = 0\nprogram_us = 0\nack_us = 0\ncmd_overhead_us = 0\nlink_mb_s = 1000000000\nchannel_mb_s = 1000000000\n",
            "`ssd.read_us`: must be at least 1",
        ),
    ] {
        let dev = write(name, text);
        let job = write("small.fio", SMALL);
        refused(&["run", &job, "--device", &dev], key);
    }
}

/// Valid jobs that wait a long time by design are not stalls: a
/// `thinktime` of 700 s, a `rate` of one IO per 1024 s.
#[test]
fn long_waits_the_job_asked_for_are_not_stalls() {
    let think = write(
        "think.fio",
        "[j]\nrw=read\nsize=1m\nthinktime=700000000\nruntime=1500\ntime_based\n",
    );
    runs(&["run", &think, "--device", "nvme"]);
    let rate = write(
        "rate.fio",
        "[j]\nrw=read\nsize=64k\nrate=4\nbs=4k\nruntime=2100\n",
    );
    runs(&["run", &rate, "--device", "nvme"]);
}

/// What was once dropped or defaulted without a word.
#[test]
fn silent_defaults_are_errors() {
    let job = write("small.fio", SMALL);
    for flag in [
        vec!["--pid-split", "garbage"],
        vec!["--balance"],
        vec!["--metadata-used", "1g"],
        vec!["--full-commit", "5"],
    ] {
        let mut args = vec!["run", &job, "--device", "nvme"];
        args.extend(&flag);
        refused(
            &args,
            &format!("{} describes a multi-device volume", flag[0]),
        );
    }
    for (policy, says) in [
        ("wbt=foo", "'wbt=foo': policy 'wbt' takes no '=' value"),
        ("none=foo", "policy 'none' takes no '=' value"),
        ("iocost=garbage", "policy 'iocost' takes no '=' value"),
        ("wbt:lat=1ns", "not a whole number of microseconds"),
        ("wbt:lat=999ns", "not a whole number of microseconds"),
        ("wbtt=1", "unknown policy 'wbtt' (did you mean 'wbt'?)"),
    ] {
        refused(&["run", &job, "--device", "nvme", "--policy", policy], says);
    }
    refused(
        &[
            "run",
            &job,
            "--volume",
            "raid1:nvme,nvme",
            "--policy",
            "read=devid:99",
        ],
        "read=devid:99: the volume's devids are 1 to 2",
    );
    refused(
        &["run", &job, "--device", "nvme", "--cpus", "0"],
        "--cpus 0",
    );
    let big_bs = write("bs.fio", "[j]\nrw=read\nbs=1m\nsize=8k\n");
    refused(
        &["run", &big_bs, "--device", "nvme"],
        &format!(
            "{big_bs}:3: bs: job 'j': the data set (8192 bytes) is smaller than the smallest block"
        ),
    );
    let per_file = write(
        "bsfile.fio",
        "[j]\nrw=read\nbs=64k\nfilesize=4k\nnrfiles=32\n",
    );
    refused(
        &["run", &per_file, "--device", "nvme"],
        "less than the smallest block",
    );
    let small = write("smallsize.fio", "[j]\nrw=read\nfilesize=1m\nsize=2k\n");
    refused(
        &["run", &small, "--device", "nvme"],
        &format!("{small}:4: size:"),
    );
    let tera = write("tera.fio", "[j]\nrw=read\nbs=2t\nsize=8t\n");
    refused(&["run", &tera, "--device", "nvme"], ":3: bs:");
}

/// A volume of many devices costs no more per IO than the devices'
/// own work: its chunk search no longer rescans every device extent,
/// and the device count and chunk map are bounded.
#[test]
fn volumes_are_bounded_in_devices_and_chunks() {
    let job = write(
        "vol.fio",
        "[j]\nioengine=libaio\niodepth=32\ndirect=1\nrw=randread\nbs=4k\nsize=1g\nruntime=20ms\ntime_based\n",
    );
    let many = |n: usize| format!("single:{}", vec!["nvme"; n].join(","));
    runs(&["run", &job, "--volume", &many(128)]);
    refused(
        &["run", &job, "--volume", &many(257)],
        "257 devices; the simulator takes at most 256",
    );
    let huge = write(
        "huge.toml",
        "name = \"h\"\nbase = \"nvme\"\n[ssd]\ncapacity_gb = 1000000\n",
    );
    refused(
        &["run", &job, "--volume", &format!("single:{huge},{huge}")],
        "more than 262144 data chunks",
    );
}

/// Options accepted without simulating them still have fio's types and
/// ranges; a zero with a unit fio does not know is not zero.
#[test]
fn cosmetic_options_are_type_checked() {
    for (line, says) in [
        (
            "cmdprio_percentage=500",
            ":4: cmdprio_percentage: 500 is outside 0 to 100",
        ),
        (
            "allow_file_create==4kb",
            ":4: allow_file_create: expected 0 or 1",
        ),
        ("clocksource=tsc", ":4: clocksource: 'tsc' is not one of"),
        ("offset=0zz", ":4: offset:"),
    ] {
        let job = write("cosmetic.fio", &format!("[j]\nrw=read\nsize=1m\n{line}\n"));
        refused(&["run", &job, "--device", "nvme"], &format!("{job}{says}"));
    }
    let fine = write(
        "fine.fio",
        "[j]\nrw=read\nsize=1m\ncmdprio_percentage=10,90\noffset=0k\n",
    );
    runs(&["run", &fine, "--device", "nvme"]);
}

/// Every accepted option is said on stderr with its reason, always: one
/// fio would act on and iolab does not (a histogram log, a priority) a line
/// each, those that change nothing fio measures either (`thread`, a detail
/// of an unset option) on one line; `--verbose` lists every one a line.
#[test]
fn options_not_simulated_are_said() {
    let job = write(
        "unsaid.fio",
        "[j]\nrw=read\nsize=1m\nthread\nwrite_iolog=h\nverify_fatal=1\nprioclass=2\n",
    );
    let err = stderr(&runs(&["run", &job, "--device", "nvme"]));
    let want = format!(
        "iolab: {job}:5: write_iolog: accepted, not simulated: iolab writes fio's \
         bandwidth, IOPS, latency and histogram logs only\n\
         iolab: {job}:7: prioclass: accepted, not simulated: CPU and I/O priorities are not \
         simulated\n\
         iolab: 2 job options change nothing fio measures, here or in fio: thread ({job}:4: \
         threads or processes: no effect on simulated I/O), verify_fatal ({job}:6: the data's \
         contents are not simulated, only verify's read-back IO, so nothing can fail to verify)"
    );
    assert_eq!(err.trim_end(), want);
    let all = stderr(&runs(&["run", &job, "--device", "nvme", "--verbose"]));
    for (line, option) in [
        (4, "thread"),
        (5, "write_iolog"),
        (6, "verify_fatal"),
        (7, "prioclass"),
    ] {
        assert!(
            all.contains(&format!(
                "{job}:{line}: {option}: accepted, not simulated: "
            )),
            "{option} missing from: {all}"
        );
    }
    // A value that keeps fio's default is simulated: nothing to say.
    let quiet = write("quiet.fio", "[j]\nrw=read\nsize=1m\noffset=0\n");
    assert_eq!(stderr(&runs(&["run", &quiet, "--device", "nvme"])), "");
}

/// A `bs=` that a `bssplit=` overrides, as fio's does, is said on stderr
/// with both lines, and the run goes on with fio's sizes.
#[test]
fn an_overridden_block_size_is_said() {
    let job = write(
        "split.fio",
        "[global]
bs=8k
[j]
rw=randread
size=1m
bssplit=4k/50:16k/50
",
    );
    let err = stderr(&runs(&["run", &job, "--device", "nvme"]));
    assert_eq!(
        err.trim_end(),
        format!(
            "iolab: {job}:2: bs: has no effect on the reads: bssplit ({job}:6) decides \
             their block sizes, as in fio"
        )
    );
}

/// A job file with several problems gets them all, one line each, exit 2:
/// an engine iolab does not simulate first, its options named as its.
#[test]
fn every_problem_of_a_job_file_is_said_at_once() {
    let job = write(
        "netjob.fio",
        "[global]\nioengine=net\nhostname=localhost\nport=8888\n[rx]\nlisten\nrw=read\nbss=4k\n\
         [tx]\nioengine=libaio\nrbdname=x\n",
    );
    let o = bounded(&["run", &job, "--device", "nvme"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 6, "{err}");
    assert!(
        lines[0].starts_with(&format!(
            "iolab: {job}:2: ioengine: ioengine net is not simulated; iolab simulates sync"
        )),
        "{err}"
    );
    for (i, line, opt) in [(1, 3, "hostname"), (2, 4, "port"), (3, 6, "listen")] {
        assert_eq!(
            lines[i],
            format!(
                "{job}:{line}: {opt}: an option of ioengine net, which iolab does not simulate"
            )
        );
    }
    assert_eq!(
        lines[4],
        format!("{job}:8: bss: Bad option <bss> (did you mean 'bs'?)")
    );
    // The second job runs with libaio, so rbd's option is nobody's there.
    assert_eq!(
        lines[5],
        format!(
            "{job}:11: rbdname: Bad option <rbdname>: an option of fio's ioengine rbd, \
             and this job's ioengine is libaio"
        )
    );
    assert!(!err.contains("filename"), "no misleading suggestion: {err}");
}

/// A job on a raw device without a size takes the simulated device's, as
/// fio takes the device's own, and says so on stderr; sized, it says
/// nothing of it.
#[test]
fn a_raw_device_job_without_a_size_takes_the_devices_and_says_so() {
    let bare = "[j]\nfilename=/dev/sdb\nrw=randread\ndirect=1\nruntime=10ms\ntime_based\n";
    let job = write("rawdev.fio", bare);
    let out = runs(&["run", &job, "--device", "nvme", "--output-format", "json"]);
    let err = stderr(&out);
    assert!(
        err.contains("rawdev.fio:1: size: not given: fio takes the size of the device /dev/sdb"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["jobs"][0]["read"]["io_bytes"].as_u64().unwrap() > 0);
    let sized = write("rawdev-sized.fio", &format!("{bare}size=1g\n"));
    let out = runs(&["run", &sized, "--device", "nvme"]);
    assert!(!stderr(&out).contains("size: not given"));
}

/// Device-file errors of type, range or name carry the key's line; an
/// empty file says what a device file needs; a trace path that cannot be
/// written is refused before the run.
#[test]
fn device_errors_carry_their_line_and_trace_paths_are_checked_first() {
    let job = write("small.fio", SMALL);
    for (name, text, says) in [
        (
            "type.toml",
            "name = \"x\"\nbase = \"nvme\"\n[ssd]\nqueue_depth = \"deep\"\n",
            ":4: device file: invalid type",
        ),
        (
            "range.toml",
            "name = \"x\"\nbase = \"nvme\"\n\n[ssd]\nqueue_depth = 0\n",
            ":5: invalid value for `ssd.queue_depth`",
        ),
        (
            "unknown.toml",
            "name = \"x\"\nbase = \"nvme\"\nhost_io_us = 1.0\nfoo = 1\n",
            ":4: unknown key `foo`",
        ),
        (
            "missing.toml",
            "name = \"x\"\nkind = \"loop\"\n[loop]\ncapacity_gb = 8\n",
            ":3: device file: missing field `queue_depth` in `loop`",
        ),
        ("empty.toml", "", "the file is empty"),
    ] {
        let dev = write(name, text);
        refused(&["run", &job, "--device", &dev], says);
    }
    let start = Instant::now();
    refused(
        &[
            "run",
            WBT,
            "--device",
            "sata-ssd",
            "--trace",
            "/nonexistent/dir/t",
        ],
        "--trace /nonexistent/dir/t",
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "refused before the run"
    );
}

const WBT: &str = "scenarios/wbt-fdatasync-writers.fio";

#[test]
fn every_flag_error_is_listed_at_once() {
    let o = bounded(&[
        "compare",
        "--device",
        "nvme",
        "--memory",
        "0",
        "--cpus",
        "0",
        "--seeds",
        "0",
        "--jobs",
        "0",
        "--policies",
        "none,bogus",
        "--",
        "--name=x",
        "--rw=read",
        "--size=1m",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    for flag in [
        "--memory",
        "--cpus 0",
        "--seeds 0",
        "--jobs 0",
        "--policies",
    ] {
        assert!(err.contains(flag), "{flag} not named in: {err}");
    }
    assert_eq!(err.lines().count(), 5, "{err}");
}

#[test]
fn a_trace_out_of_time_order_is_refused_at_its_line() {
    let text = std::fs::read_to_string(root().join("kernel/fixtures/disk-default/trace.txt"))
        .expect("fixture");
    // Two event lines swapped, as a shuffle or a cut-and-joined trace has.
    let mut lines: Vec<&str> = text.lines().collect();
    let first = lines
        .iter()
        .position(|l| l.contains("block_rq_issue"))
        .expect("an event");
    lines.swap(first + 10, first + 20);
    let path = write("shuffled.txt", &(lines.join("\n") + "\n"));
    refused(
        &[
            "kernel",
            "replay-wbt",
            &path,
            "--dev",
            "7:0",
            "--queue-depth",
            "128",
            "--lat-usec",
            "2000",
        ],
        "not in time order",
    );
}

#[test]
fn a_kept_measurement_of_an_absurd_size_is_refused_at_the_fact() {
    let kept = dir().join("absurd.probes");
    let _ = std::fs::remove_dir_all(&kept);
    std::fs::create_dir_all(&kept).expect("dir");
    let src = root().join("kernel/calibrated/loop-shm.probes");
    for e in std::fs::read_dir(&src).expect("kept") {
        let p = e.expect("entry").path();
        std::fs::copy(&p, kept.join(p.file_name().expect("name"))).expect("copy");
    }
    let facts = kept.join("device.json");
    let text = std::fs::read_to_string(&facts).expect("facts");
    std::fs::write(&facts, text.replace("2147483648", "1125899906842624")).expect("write");
    let out = dir().join("absurd.toml");
    let _ = std::fs::remove_file(&out);
    let o = bounded(&[
        "calibrate",
        "--from",
        kept.to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("device.json: \"size\" must be"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

/// What a run will cost is weighed before it runs: memory (job clones'
/// statistics, device state such as an HDD's cache bookkeeping) and the
/// IOs it will simulate; above the bounds it is refused at the option or
/// device key that makes the cost.
#[test]
fn a_run_that_would_cost_too_much_is_refused_before_it_runs() {
    let fast = write(
        "fast-null.toml",
        "base = \"null\"\n[null]\nqueue_depth = 65536\ncompletion_ns = 1000\n",
    );
    let deep = write(
        "deep.fio",
        "[j]\nioengine=libaio\ndirect=1\niodepth=65536\nnumjobs=4\nrw=randread\nsize=1g\nruntime=20ms\ntime_based\n",
    );
    refused(
        &["run", &deep, "--device", &fast],
        "job 'j': about 1.3e9 IOs in the run",
    );
    let cache = write(
        "big-cache.toml",
        "base = \"hdd\"\n[hdd]\ncache_mib = 65536\n",
    );
    let volume = format!("raid1:{cache},{cache},{cache},{cache}");
    refused(
        &[
            "run",
            "--volume",
            &volume,
            "--",
            "--name=x",
            "--rw=read",
            "--size=1m",
        ],
        "sized by hdd.cache_mib",
    );
    // fio's 4,096 clones hold 1.4 GiB a run; three runs at once, more
    // than a command may plan.
    let clones = write("clones.fio", "[j]\nrw=randread\nsize=1m\nnumjobs=4096\n");
    refused(
        &[
            "run", &clones, "--device", "null", "--seeds", "3", "--jobs", "3",
        ],
        &format!("{clones}:4: numjobs: the run holds about 1408 MiB"),
    );
}

/// A job that steady-state detection may end early (fio's
/// steadystate.fio: 300 s on /dev/null) is not refused for its runtime's
/// IOs: the run goes on, held to the bound as it goes, and says so.
#[test]
fn a_steady_state_job_is_held_to_the_io_bound_as_it_runs() {
    let job = |ss: &str| {
        format!(
            "[s]\nfilename=/dev/null\nsize=128m\nrw=write\nbs=128k\nruntime=30m\ntime_based\n{ss}"
        )
    };
    let steady = write("steady-null.fio", &job("ss=iops:10%\nss_dur=2\n"));
    let o = bounded(&["run", &steady, "--device", "nvme"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("if steady state (ss=) is never reached"),
        "{}",
        stderr(&o)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("attained=yes"), "{out}");
    // Without ss= the same job is refused before it runs.
    let plain = write("plain-null.fio", &job(""));
    refused(
        &["run", &plain, "--device", "nvme"],
        "job 's': about 3.0e9 IOs in the run",
    );
}

#[test]
fn control_bytes_a_user_gave_are_shown_escaped() {
    let o = bounded(&[
        "run",
        "--device",
        "nvme",
        "--output",
        "x\u{1b}[31m/y",
        "--",
        "--name=a",
        "--rw=read",
        "--size=1m",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        !o.stderr.contains(&0x1b),
        "a raw escape reached the terminal"
    );
    assert!(stderr(&o).contains("x\\u{1b}[31m/y"), "{}", stderr(&o));
}
