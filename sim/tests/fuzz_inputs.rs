//! A bounded fuzz harness of the input contract: job files and device
//! files from the repository, mutated, go through parsing, planning and
//! a few simulated milliseconds. Every case must end as a clean run or an
//! input error that names its place (a job file's `file:line`, a device
//! file's key); never a panic, a stall or a livelock, never more than a
//! wall-time budget. `IOLAB_FUZZ_CASES` sets the case count (CI runs the
//! default); the seed of each case is printed with any finding.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use iolab_sim::device::DeviceConfig;
use iolab_sim::fio::{self, JobSpec, ParseEnv};
use iolab_sim::{SimError, parse_variant, run};

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::scenario_of;

/// Cases when `IOLAB_FUZZ_CASES` is not set.
const DEFAULT_CASES: u64 = 5000;
/// Simulated time a case may run.
const SIM_NS: u64 = 5_000_000;
/// Wall time one case may take.
const CASE_WALL: Duration = Duration::from_secs(10);
/// Peak memory the whole harness may reach, kB.
const PEAK_KB: u64 = 2 << 20;

/// splitmix64: the harness's own deterministic stream.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The files of `dir` ending in `ext`, sorted, as text.
fn corpus(dirs: &[&str], ext: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for d in dirs {
        let mut names: Vec<PathBuf> = std::fs::read_dir(root().join(d))
            .expect("corpus dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == ext))
            .collect();
        names.sort();
        for p in names {
            if let Ok(text) = std::fs::read_to_string(&p) {
                out.push((p.display().to_string(), text));
            }
        }
    }
    out
}

/// Values that probe the edges of options: zero, one, negatives, powers
/// of two at the type limits, suffixes, ranges, lists, expressions,
/// junk.
const ODD: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "4095",
    "4097",
    "65536",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999",
    "1p",
    "16t",
    "1e",
    "1k",
    "0k",
    "1-1p",
    "4k-1g",
    "4k,1m",
    "1m:4k",
    "0%",
    "100%",
    "101%",
    "50%",
    "1ms",
    "700000000",
    "1h",
    "0.5",
    "$((1<<62))",
    "$((0**0))",
    "${UNDEFINED}",
    "",
    "=",
    "yes",
    "garbage",
    "randrw:8k",
    "\u{0}",
    "😀",
    "1,2,3,4,5,6,7,8,9",
];

/// Options the mutations set (a mix of typed, cosmetic and unsupported).
const OPTIONS: &[&str] = &[
    "bs",
    "bsrange",
    "size",
    "filesize",
    "nrfiles",
    "numjobs",
    "iodepth",
    "runtime",
    "time_based",
    "rw",
    "rwmixread",
    "direct",
    "ioengine",
    "thinktime",
    "thinktime_blocks",
    "rate",
    "rate_iops",
    "startdelay",
    "offset",
    "io_size",
    "fsync",
    "fdatasync",
    "loops",
    "stonewall",
    "new_group",
    "filename",
    "directory",
    "invalidate",
    "fadvise_hint",
    "file_service_type",
    "randrepeat",
    "norandommap",
    "cgroup",
    "cgroup_weight",
    "exitall",
    "cmdprio_percentage",
    "allow_file_create",
    "group_reporting",
    "zonemode",
    "verify",
    "include",
    "end_fsync",
    "sync",
    "buffered",
    "rate_process",
    "ramp_time",
    "blocksize",
];

/// One to four random edits of a job file's text.
fn mutate_job(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(lines.len() + 1);
        match rng.below(8) {
            0 if !lines.is_empty() => {
                lines.remove(at.min(lines.len() - 1));
            }
            1 if !lines.is_empty() => {
                let l = lines[at.min(lines.len() - 1)].clone();
                lines.insert(at, l);
            }
            2 | 3 => {
                let line = format!("{}={}", rng.pick(OPTIONS), rng.pick(ODD));
                lines.insert(at, line);
            }
            4 if !lines.is_empty() => {
                // A value replaced by an odd one.
                let i = at.min(lines.len() - 1);
                if let Some((k, _)) = lines[i].split_once('=') {
                    lines[i] = format!("{k}={}", rng.pick(ODD));
                }
            }
            5 => {
                const SECTIONS: [&str; 5] = ["j", "global", "", "a b", "x"];
                lines.insert(at, format!("[{}]", rng.pick(&SECTIONS)));
            }
            6 if !lines.is_empty() => {
                // A line cut short.
                let i = at.min(lines.len() - 1);
                let cut = rng.below(lines[i].len() + 1);
                let cut = (0..=cut)
                    .rev()
                    .find(|&c| lines[i].is_char_boundary(c))
                    .unwrap_or(0);
                lines[i].truncate(cut);
            }
            _ => lines.insert(at, rng.pick(ODD).to_string()),
        }
    }
    lines.join("\n") + "\n"
}

/// One to three edits of a device file: a number replaced, a line
/// dropped, a key added.
fn mutate_device(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    for _ in 0..1 + rng.below(3) {
        let i = rng.below(lines.len().max(1));
        match rng.below(4) {
            0 | 1 if i < lines.len() => {
                if let Some((k, _)) = lines[i].split_once('=') {
                    const VALUES: [&str; 12] = [
                        "0",
                        "1",
                        "-1",
                        "0.0",
                        "1e300",
                        "4294967296",
                        "\"x\"",
                        "true",
                        "18446744073709551615",
                        "0.05",
                        "1000000000",
                        "nan",
                    ];
                    let v = rng.pick(&VALUES);
                    lines[i] = format!("{k}= {v}");
                }
            }
            2 if i < lines.len() => {
                lines.remove(i);
            }
            _ => lines.insert(i.min(lines.len()), format!("{} = 1", rng.pick(OPTIONS))),
        }
    }
    lines.join("\n") + "\n"
}

/// How a case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    ParseError,
    InputError,
    DeviceError,
    Ran,
}

/// A finding: a case that broke the contract.
struct Finding {
    seed: u64,
    what: String,
    input: String,
}

/// Runs `jobs` for at most [`SIM_NS`] on `device`.
fn simulate(mut jobs: Vec<JobSpec>, device: DeviceConfig) -> Result<(), SimError> {
    // The job's own IO time is what the harness bounds (a long ramp or
    // runtime is a long run by request, not a hang).
    for j in &mut jobs {
        j.runtime_ns = Some(j.runtime_ns.map_or(SIM_NS, |r| r.min(SIM_NS)));
        j.ramp_time_ns = j.ramp_time_ns.min(SIM_NS);
    }
    let none = parse_variant("none").expect("none parses");
    run(&scenario_of(jobs, device, 1 << 30, 1), &none, &mut |_| {}).map(drop)
}

/// Whether `msg` carries `file:LINE:`.
fn has_line(msg: &str, file: &str) -> bool {
    msg.split(&format!("{file}:")).skip(1).any(|rest| {
        rest.split(':')
            .next()
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// Parses job-file `text` as `name`, on 1 GiB and 4 CPUs, with no
/// includes.
fn parse(name: &str, text: &str) -> Result<fio::JobFile, String> {
    parse_with(name, text, None)
}

/// [`parse`], with `log` as the file `fuzz.log` a job may replay.
fn parse_with(name: &str, text: &str, log: Option<&[u8]>) -> Result<fio::JobFile, String> {
    let vars = BTreeMap::new();
    let include = |_: &str, inc: &str| -> Result<(String, Vec<u8>), String> {
        match log {
            Some(bytes) if inc == "fuzz.log" => Ok(("fuzz.log".to_owned(), bytes.to_vec())),
            _ => Err(format!("{inc}: not read by the harness")),
        }
    };
    // The machine of `common::scenario_of`: 4 CPUs.
    let env = ParseEnv {
        mem_bytes: 1 << 30,
        ncpus: 4,
        pagesize: 4096,
        vars: &vars,
        include: &include,
    };
    fio::parse_job_file(name, text, &env).map_err(|e| e.to_string())
}

fn job_case(rng: &mut Rng, base: &str) -> Result<Outcome, String> {
    let text = mutate_job(rng, base);
    let jobs = match parse("fuzz.fio", &text) {
        Ok(jf) => jf.jobs,
        Err(msg) => {
            return if has_line(&msg, "fuzz.fio") {
                Ok(Outcome::ParseError)
            } else {
                Err(format!("parse error without a line: {msg}"))
            };
        }
    };
    const PRESETS: [&str; 4] = ["nvme", "sata-ssd", "hdd", "null"];
    let device = DeviceConfig::preset(PRESETS[rng.below(PRESETS.len())]).expect("preset");
    judged(simulate(jobs, device), &["fuzz.fio"])
}

/// How a run of a case ended: it ran, or it stopped on an input error
/// naming its place in one of `files`; a stall, a livelock or an error
/// naming no place is a finding.
fn judged(run: Result<(), SimError>, files: &[&str]) -> Result<Outcome, String> {
    match run {
        Ok(()) => Ok(Outcome::Ran),
        Err(e @ (SimError::Stalled { .. } | SimError::Livelock { .. })) => {
            Err(format!("blamed on the simulator: {e}"))
        }
        Err(SimError::Job { .. }) => Ok(Outcome::InputError),
        Err(e) => {
            let msg = e.to_string();
            if files.iter().any(|f| has_line(&msg, f)) {
                Ok(Outcome::InputError)
            } else {
                Err(format!("input error without its place: {msg}"))
            }
        }
    }
}

fn device_case(rng: &mut Rng, base: &str) -> Result<Outcome, String> {
    let text = mutate_device(rng, base);
    let device = match DeviceConfig::from_toml(&text) {
        Ok(d) => d,
        Err(e) => {
            let located =
                e.key().is_some() || matches!(e, iolab_sim::device::DeviceError::Syntax(_));
            let empty = e.to_string().contains("the file is empty");
            return if located || empty {
                Ok(Outcome::DeviceError)
            } else {
                Err(format!("device error naming no key: {e}"))
            };
        }
    };
    let job = "[j]\nrw=randrw\nbs=4k\nsize=64m\niodepth=8\nioengine=libaio\ndirect=1\ntime_based\n";
    let jobs = parse("probe.fio", job).expect("probe parses").jobs;
    match simulate(jobs, device) {
        Ok(()) => Ok(Outcome::Ran),
        Err(e @ (SimError::Stalled { .. } | SimError::Livelock { .. })) => {
            Err(format!("a device validation accepted stops the run: {e}"))
        }
        Err(SimError::Job { .. }) => Ok(Outcome::InputError),
        Err(e) => Err(format!("device accepted, then refused: {e}")),
    }
}

/// Every outcome class was reached: the mutations still probe each stage.
fn every_class_reached(counts: &BTreeMap<Outcome, u64>) {
    for o in [
        Outcome::ParseError,
        Outcome::InputError,
        Outcome::DeviceError,
        Outcome::Ran,
    ] {
        assert!(
            counts.get(&o).copied().unwrap_or(0) > 0,
            "no {o:?} case: {counts:?}"
        );
    }
}

fn peak_kb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn mutated_job_and_device_files_end_cleanly_or_say_where() {
    let cases = std::env::var("IOLAB_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    let jobs = corpus(&["scenarios", "kernel/jobs", "cli/tests/broken"], "fio");
    let devices = corpus(&["scenarios/devices", "kernel/calibrated"], "toml");
    assert!(jobs.len() >= 10 && devices.len() >= 2, "corpus");
    let mut counts: BTreeMap<Outcome, u64> = BTreeMap::new();
    let mut findings = Vec::new();
    let started = Instant::now();
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let first: u64 = std::env::var("IOLAB_FUZZ_FIRST")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let verbose = std::env::var_os("IOLAB_FUZZ_VERBOSE").is_some();
    for seed in first..first + cases {
        if verbose {
            eprintln!("fuzz: case {seed}");
        }
        let mut rng = Rng(seed);
        let device_turn = rng.below(4) == 0;
        let (name, base) = if device_turn {
            rng.pick(&devices)
        } else {
            rng.pick(&jobs)
        };
        if verbose {
            let mut shown = Rng(seed ^ 0xA5A5);
            let text = if device_turn {
                mutate_device(&mut shown, base)
            } else {
                mutate_job(&mut shown, base)
            };
            eprintln!("fuzz: from {name}:\n{text}");
        }
        let t = Instant::now();
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let mut inner = Rng(seed ^ 0xA5A5);
            if device_turn {
                device_case(&mut inner, base)
            } else {
                job_case(&mut inner, base)
            }
        }));
        let took = t.elapsed();
        let result = match outcome {
            Ok(r) => r,
            Err(p) => Err(format!(
                "panicked: {}",
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default()
            )),
        };
        let result = result.and_then(|o| {
            if took > CASE_WALL {
                Err(format!("took {took:?}"))
            } else {
                Ok(o)
            }
        });
        match result {
            Ok(o) => *counts.entry(o).or_default() += 1,
            Err(what) => {
                let mut rng = Rng(seed ^ 0xA5A5);
                let input = if device_turn {
                    mutate_device(&mut rng, base)
                } else {
                    mutate_job(&mut rng, base)
                };
                findings.push(Finding {
                    seed,
                    what: format!("{what} (from {name})"),
                    input,
                });
            }
        }
    }
    std::panic::set_hook(quiet);
    eprintln!(
        "fuzz: {cases} cases in {:?}: {counts:?}, {} findings",
        started.elapsed(),
        findings.len()
    );
    if let Some(kb) = peak_kb() {
        assert!(kb <= PEAK_KB, "peak memory {kb} kB");
    }
    for f in &findings {
        eprintln!("finding: seed {}: {}", f.seed, f.what);
    }
    let report: Vec<String> = findings
        .iter()
        .take(3)
        .map(|f| format!("seed {}: {}\n---\n{}---", f.seed, f.what, f.input))
        .collect();
    assert!(
        findings.is_empty(),
        "{} findings; the first:\n{}",
        findings.len(),
        report.join("\n")
    );
    // Every class is reached, so the mutations still probe each stage.
    every_class_reached(&counts);
}

/// Cases of the log and device-extreme harness when
/// `IOLAB_FUZZ_LOG_CASES` is not set.
const DEFAULT_LOG_CASES: u64 = 1000;

/// Numbers that probe a log's fields: zero, the edges of 32 and 64
/// bits, the largest file offset and past it, junk.
const ODD_NUMBERS: &[&str] = &[
    "0",
    "1",
    "511",
    "4095",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854771712",
    "9223372036854775808",
    "18446744073709547520",
    "18446744073709551615",
    "99999999999999999999",
    "-1",
    "x",
    "",
];

/// A small text log of `version` 2 or 3 over two files.
fn base_log(version: u8) -> String {
    let mut s = format!("fio version {version} iolog\n");
    let mut t = 0u64;
    let mut line = |s: &mut String, rest: &str| {
        t += 250;
        if version == 3 {
            s.push_str(&format!("{t} {rest}\n"));
        } else {
            s.push_str(&format!("{rest}\n"));
        }
    };
    for f in ["a", "b"] {
        line(&mut s, &format!("{f} add"));
        line(&mut s, &format!("{f} open"));
    }
    for k in 0..8u64 {
        line(&mut s, &format!("a read {} 4096", k * 8192));
        line(&mut s, &format!("b write {} 8192", k * 65536));
    }
    line(&mut s, "b sync 0 0");
    if version == 2 {
        line(&mut s, "a wait 3 0");
    }
    line(&mut s, "a close");
    s
}

/// A text log with one to four edits: a number replaced by an odd one,
/// a line dropped, doubled or cut short, an action changed.
fn mutate_log(rng: &mut Rng, text: &str) -> Vec<u8> {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    for _ in 0..1 + rng.below(4) {
        let i = rng
            .below(lines.len().max(1))
            .min(lines.len().saturating_sub(1));
        match rng.below(6) {
            0 | 1 => {
                let mut words: Vec<String> =
                    lines[i].split_whitespace().map(str::to_owned).collect();
                if !words.is_empty() {
                    let w = rng.below(words.len());
                    words[w] = rng.pick(ODD_NUMBERS).to_string();
                    lines[i] = words.join(" ");
                }
            }
            2 if lines.len() > 1 => {
                lines.remove(i);
            }
            3 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            4 => {
                const ACTIONS: [&str; 6] = ["read", "write", "trim", "wait", "datasync", "zap"];
                let to = *rng.pick(&ACTIONS);
                lines[i] = lines[i].replace("read", to);
            }
            _ => {
                let cut = rng.below(lines[i].len() + 1);
                lines[i].truncate(cut);
            }
        }
    }
    (lines.join("\n") + "\n").into_bytes()
}

/// A blktrace binary (version 7, little-endian) of queue events, with one
/// to three edits: a field replaced by an edge value, a byte flipped, the
/// trace cut.
fn mutated_blktrace(rng: &mut Rng) -> Vec<u8> {
    const QUEUE: u32 = 1 | (1 << (4 + 16));
    const WRITE: u32 = 1 << (1 + 16);
    let dev: u32 = (7 << 20) | 1;
    let mut t = Vec::new();
    for k in 0..12u64 {
        let action = if k % 3 == 0 { QUEUE | WRITE } else { QUEUE };
        let mut r = Vec::with_capacity(48);
        r.extend((0x6561_7400u32 | 7).to_le_bytes());
        r.extend(0u32.to_le_bytes());
        r.extend((k * 100_000).to_le_bytes());
        r.extend((k * 64).to_le_bytes());
        r.extend(4096u32.to_le_bytes());
        r.extend(action.to_le_bytes());
        r.extend(1u32.to_le_bytes());
        r.extend(dev.to_le_bytes());
        r.extend(0u32.to_le_bytes());
        r.extend(0u16.to_le_bytes());
        r.extend(0u16.to_le_bytes());
        t.extend(r);
    }
    for _ in 0..1 + rng.below(3) {
        let rec = rng.below(12) * 48;
        if rec + 48 > t.len() {
            continue;
        }
        match rng.below(4) {
            0 => {
                const SECTORS: [u64; 5] = [0, 1 << 54, (1 << 55) - 1, 1 << 55, u64::MAX];
                t[rec + 16..rec + 24].copy_from_slice(&rng.pick(&SECTORS).to_le_bytes());
            }
            1 => {
                const LENS: [u32; 4] = [0, 1, 1 << 31, u32::MAX];
                t[rec + 24..rec + 28].copy_from_slice(&rng.pick(&LENS).to_le_bytes());
            }
            2 => {
                let at = rng.below(t.len());
                t[at] ^= 1 << rng.below(8);
            }
            _ => {
                let cut = rng.below(t.len() + 1);
                t.truncate(cut);
            }
        }
    }
    t
}

/// A device file of `base` with one key at an extreme it accepts or
/// refuses: the largest caches, the deepest queues, the fastest null.
fn extreme_device(rng: &mut Rng) -> String {
    const CASES: [&str; 8] = [
        "base = \"hdd\"\n[hdd]\ncache_mib = 65536\n",
        "base = \"hdd\"\n[hdd]\ncache_mib = 4096\nqueue_depth = 65536\n",
        "base = \"null\"\n[null]\nqueue_depth = 65536\ncompletion_ns = 1000\n",
        "base = \"null\"\n[null]\nqueue_depth = 1\ncompletion_ns = 1000\n",
        "base = \"nvme\"\n[ssd]\nbuffer_mib = 1048576\n",
        "base = \"nvme\"\n[ssd]\nqueue_depth = 65536\n",
        "base = \"sata-ssd\"\n[ssd]\nqueue_depth = 0\n",
        "base = \"null\"\n[null]\ncompletion_ns = 0\n",
    ];
    rng.pick(&CASES).to_string()
}

/// One case of the log harness: a mutated text log or blktrace replayed,
/// or an extreme device under a deep job, each judged as the CLI judges
/// it (its cost bounds included).
fn log_case(rng: &mut Rng) -> Result<Outcome, String> {
    // One case in ten an extreme device (each builds its device, the
    // slow part), the rest logs.
    let kind = match rng.below(10) {
        0 => 3,
        k => k % 3,
    };
    if kind == 3 {
        let text = extreme_device(rng);
        let device = match DeviceConfig::from_toml(&text) {
            Ok(d) => d,
            Err(e) if e.key().is_some() => return Ok(Outcome::DeviceError),
            Err(e) => return Err(format!("device error naming no key: {e}")),
        };
        let job = "[j]\nrw=randrw\nbs=4k\nsize=64m\niodepth=256\nioengine=libaio\ndirect=1\ntime_based\nruntime=1ms\n";
        let jobs = parse("deep.fio", job).expect("deep parses").jobs;
        let held = iolab_sim::cost::device_bytes(&device).0;
        let ios = iolab_sim::cost::estimate_ios(&jobs, std::slice::from_ref(&device)).ios;
        if held > iolab_sim::cost::MAX_BYTES || ios > iolab_sim::cost::MAX_IOS {
            return Ok(Outcome::InputError);
        }
        return match simulate(jobs, device) {
            Ok(()) => Ok(Outcome::Ran),
            Err(SimError::Job { .. }) => Ok(Outcome::InputError),
            Err(e) => Err(format!("an extreme device accepted, then: {e}")),
        };
    }
    let log = match kind {
        0 => mutate_log(rng, &base_log(2)),
        1 => mutate_log(rng, &base_log(3)),
        _ => mutated_blktrace(rng),
    };
    let direct = if rng.below(2) == 0 { "direct=1\n" } else { "" };
    let job = format!("[r]\nread_iolog=fuzz.log\n{direct}");
    let jobs = match parse_with("replay.fio", &job, Some(&log)) {
        Ok(jf) => jf.jobs,
        Err(msg) => {
            return if has_line(&msg, "fuzz.log") || has_line(&msg, "replay.fio") {
                Ok(Outcome::ParseError)
            } else {
                Err(format!("a log refused without its place: {msg}"))
            };
        }
    };
    let device = DeviceConfig::preset("nvme").expect("preset");
    judged(simulate(jobs, device), &["replay.fio", "fuzz.log"])
}

#[test]
fn mutated_logs_blktraces_and_extreme_devices_end_cleanly_or_say_where() {
    let cases = std::env::var("IOLAB_FUZZ_LOG_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_LOG_CASES);
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut counts: BTreeMap<Outcome, u64> = BTreeMap::new();
    let mut findings: Vec<String> = Vec::new();
    let started = Instant::now();
    for seed in 0..cases {
        let t = Instant::now();
        let outcome =
            std::panic::catch_unwind(AssertUnwindSafe(|| log_case(&mut Rng(seed ^ 0x10_6106))));
        let took = t.elapsed();
        if std::env::var_os("IOLAB_FUZZ_VERBOSE").is_some() {
            eprintln!("fuzz logs: case {seed}: {took:?}");
        }
        let result = match outcome {
            Ok(r) => r,
            Err(p) => Err(format!(
                "panicked: {}",
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default()
            )),
        };
        match result.and_then(|o| {
            if took > CASE_WALL {
                Err(format!("took {took:?}"))
            } else {
                Ok(o)
            }
        }) {
            Ok(o) => *counts.entry(o).or_default() += 1,
            Err(what) => findings.push(format!("seed {seed}: {what}")),
        }
    }
    std::panic::set_hook(quiet);
    eprintln!(
        "fuzz logs: {cases} cases in {:?}: {counts:?}, {} findings",
        started.elapsed(),
        findings.len()
    );
    assert!(
        findings.is_empty(),
        "{} findings; the first: {:?}",
        findings.len(),
        findings.iter().take(5).collect::<Vec<_>>()
    );
    every_class_reached(&counts);
}
