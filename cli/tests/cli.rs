//! The `iolab` command end to end: the bundled wbt job, comparisons,
//! determinism, bad input, memory.

use std::path::PathBuf;
use std::process::Output;

mod common;

use common::{iolab, root, stderr, stdout};

const WBT: &str = "scenarios/wbt-fdatasync-writers.fio";

#[test]
fn the_posted_wbt_job_runs_unchanged_and_prints_both_groups() {
    let o = iolab(&["run", WBT, "--device", "sata-ssd", "--memory", "6g"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("writer: (groupid=0, jobs=4)"), "{out}");
    assert!(out.contains("reader: (groupid=1, jobs=1)"), "{out}");
    assert!(out.contains("Run status group 0 (all jobs):"));
    assert!(out.contains("Run status group 1 (all jobs):"));
    assert!(
        out.contains("run=300"),
        "runtime is the posted 300 s: {out}"
    );
}

#[test]
fn compare_none_none_shows_zero_deltas_everywhere() {
    let o = iolab(&[
        "compare",
        WBT,
        "--device",
        "sata-ssd",
        "--memory",
        "6g",
        "--policies",
        "none,none",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let rows: Vec<String> = out
        .lines()
        .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .collect();
    for row in [
        "Hmean kb/sec-writer-write",
        "Hmean kb/sec-reader-read",
        "1st-qrtle latency-read",
        "Max-99% latency-read",
        "Max latency-read",
        "Mean latency-read",
    ] {
        assert!(
            rows.iter().any(|r| r == row),
            "missing row '{row}' in\n{out}"
        );
    }
    // The cells' deltas: the table rows, not the captions above them.
    let cells: String = out
        .lines()
        .filter(|l| l.contains(" kb/sec-") || l.contains(" latency-"))
        .collect::<Vec<_>>()
        .join("\n");
    let out = cells;
    let deltas: Vec<&str> = out
        .match_indices('(')
        .map(|(i, _)| &out[i..])
        .map(|s| &s[..s.find(')').unwrap_or(0) + 1])
        .collect();
    assert!(deltas.len() > 20, "{out}");
    for d in deltas {
        assert_eq!(
            d.trim_start_matches('(').trim(),
            "0.00%)",
            "non-zero delta {d} in\n{out}"
        );
    }
}

/// Every table `compare` prints has a caption line right above its
/// header saying what its figures are and in which unit, and the two
/// mmtests blocks, whose cells carry signed deltas, a legend saying which
/// sign is better: one seed or several, one device, btrfs or a
/// volume.
#[test]
fn every_printed_table_has_a_caption_and_its_sign_legend() {
    let job = temp_job(
        "captions.fio",
        "[w]\nfilename=f\nsize=64m\nrw=randwrite\nbs=4k\nruntime=1\ntime_based\n\
         [r]\nnew_group\nfilename=g\nsize=64m\nrw=randread\nbs=4k\nruntime=1\ntime_based\n",
    );
    let job = job.to_str().expect("utf-8 path");
    // (arguments, [(header start, caption start)]) of each command.
    let mmtests = [
        (
            "Min ",
            "(x%) = change against the first column, signed so that + is better (higher",
        ),
        (
            "Min ",
            "(x%) = change against the first column, signed so that + is better (lower latency)",
        ),
    ];
    type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>);
    let cases: [Case<'_>; 4] = [
        (
            vec!["--device", "nvme", "--policies", "none,wbt"],
            vec![("variant ", "devices: "), ("entry ", "entries: ")],
        ),
        (
            vec!["--device", "nvme", "--policies", "none,wbt", "--seeds", "2"],
            vec![("variant ", "devices: "), ("entry ", "entries: ")],
        ),
        (
            vec![
                "--device",
                "nvme",
                "--fs",
                "btrfs",
                "--policies",
                "none,wbt",
            ],
            vec![("variant ", "btrfs: ")],
        ),
        (
            vec![
                "--volume",
                "raid1:nvme,sata-ssd",
                "--policies",
                "read=pid,read=latency",
            ],
            vec![("variant ", "volume: ")],
        ),
    ];
    for (args, tables) in cases {
        let mut argv = vec!["compare", job];
        argv.extend(&args);
        let o = iolab(&argv);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let out = stdout(&o);
        let lines: Vec<&str> = out.lines().collect();
        // The mmtests blocks: legend, then the variants' header, then rows.
        let starts: Vec<usize> = (0..lines.len())
            .filter(|&i| {
                lines[i].starts_with("Min ") && (i == 0 || !lines[i - 1].starts_with("Min "))
            })
            .collect();
        assert_eq!(starts.len(), 2, "{args:?}: two mmtests blocks in\n{out}");
        for (&at, (_, legend)) in starts.iter().zip(mmtests) {
            assert!(at >= 3, "{args:?}: no room for a caption in\n{out}");
            assert!(
                lines[at - 2].starts_with(legend),
                "{args:?}: legend of\n{}",
                lines[at - 2]
            );
            assert!(
                lines[at - 3].contains(" in KiB/s") || lines[at - 3].contains(", in us"),
                "{args:?}: caption with a unit: {}",
                lines[at - 3]
            );
        }
        for (header, caption) in tables {
            let found = (1..lines.len())
                .any(|i| lines[i].starts_with(header) && lines[i - 1].starts_with(caption));
            assert!(
                found,
                "{args:?}: no '{caption}' caption above '{header}' in\n{out}"
            );
        }
    }
}

/// `target/tmp/NAME`, emptied: a test's own output directory.
fn empty_scratch_dir(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A job file in this suite's scratch directory under Cargo's
/// `target/tmp`.
fn temp_job(name: &str, text: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("iolab-cli");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write job");
    p
}

#[test]
fn json_is_byte_identical_for_a_seed_and_differs_across_seeds() {
    let job = temp_job(
        "det.fio",
        "[global]\nruntime=3\ntime_based\n[w]\nrw=randwrite\nsize=128m\nfdatasync=32\n[r]\nnew_group\nrw=randread\nsize=128m\n",
    );
    let j = job.to_str().expect("utf-8 path");
    let run = |seed: &str| {
        let o = iolab(&[
            "run",
            j,
            "--device",
            "sata-ssd",
            "--seed",
            seed,
            "--output-format",
            "json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        o.stdout
    };
    let a = run("5");
    assert_eq!(a, run("5"));
    assert_ne!(a, run("6"));
    let v: serde_json::Value = serde_json::from_slice(&a).expect("valid JSON");
    assert!(
        v["jobs"][0]["write"]["iops"]
            .as_f64()
            .is_some_and(|x| x > 0.0)
    );
    assert!(
        v["jobs"][1]["read"]["clat_ns"]["percentile"]["99.000000"]
            .as_u64()
            .is_some()
    );
    assert_eq!(v["iolab"]["seed"], 5);
}

#[test]
fn compare_json_lists_every_run_in_order() {
    let job = temp_job(
        "cmp.fio",
        "[r]\nrw=randread\nsize=64m\nruntime=1\ntime_based\n",
    );
    let o = iolab(&[
        "compare",
        job.to_str().expect("utf-8"),
        "--device",
        "nvme",
        "--policies",
        "none,none",
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v["baseline"], "none");
    assert_eq!(v["runs"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        v["runs"][0]["result"]["jobs"],
        v["runs"][1]["result"]["jobs"]
    );
}

/// Each broken job file: exit 2, the expected `file:line: option` prefix,
/// no panic.
#[test]
fn broken_job_files_exit_2_and_name_the_line() {
    let cases = [
        ("unknown-option.fio", ":4: blocksze:"),
        ("typo-value.fio", ":2: rw:"),
        ("bad-suffix.fio", ":3: bs:"),
        ("outside-section.fio", ":1: bs:"),
        ("empty.fio", ":1:"),
        ("binary-bytes.fio", ":4:"),
        ("invalid-utf8.fio", ":4:"),
        ("absurd-size.fio", ":3: size:"),
        ("absurd-numjobs.fio", ":4: numjobs:"),
        ("absurd-runtime.fio", ":4: runtime:"),
        ("unknown-variable.fio", ":3: size:"),
        ("division-by-zero.fio", ":3: size:"),
        ("unsupported-option.fio", ":4: zonecapacity:"),
        ("missing-include.fio", ":4: include:"),
    ];
    let dir = root().join("cli/tests/broken");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("corpus") {
        let name = entry
            .expect("entry")
            .file_name()
            .into_string()
            .expect("utf-8 name");
        assert!(
            cases.iter().any(|(n, _)| *n == name),
            "corpus file {name} has no expectation"
        );
        seen += 1;
    }
    assert_eq!(seen, cases.len());
    for (file, want) in cases {
        let path = format!("cli/tests/broken/{file}");
        let o = iolab(&["run", &path, "--device", "null"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{file}: {err}");
        assert!(
            err.contains(&format!("{path}{want}")),
            "{file}: expected '{path}{want}' in: {err}"
        );
        assert!(!err.contains("panicked"), "{file}: {err}");
        assert!(o.stdout.is_empty(), "{file} printed a report");
    }
}

#[test]
fn bad_flags_and_devices_exit_2() {
    for args in [
        vec!["run", WBT, "--device", "floppy"],
        vec!["run", WBT, "--device", "null", "--memory", "lots"],
        vec!["run", WBT, "--device", "null", "--memory", "1k"],
        vec!["run", WBT, "--device", "null", "--policy", "nonee"],
        vec!["compare", WBT, "--device", "null", "--policies", "none,"],
        vec!["run", "no/such/job.fio", "--device", "null"],
        vec!["run", WBT, "--device", "null", "--seed", "-1"],
        vec!["frobnicate"],
    ] {
        let o = iolab(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
    let o = iolab(&["run", WBT, "--device", "null", "--policy", "nonee"]);
    assert!(stderr(&o).contains("did you mean 'none'"), "{}", stderr(&o));
}

#[test]
fn device_toml_overrides_and_errors() {
    let good = temp_job(
        "fast-flush.toml",
        "base = \"sata-ssd\"\n[ssd]\nflush_fixed_us = 10\n",
    );
    let o = iolab(&["devices", good.to_str().expect("utf-8")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("flush_fixed_us"), "{}", stdout(&o));
    let bad = temp_job(
        "bad.toml",
        "base = \"sata-ssd\"\n[ssd]\nflsh_fixed_us = 10\n",
    );
    let o = iolab(&["run", WBT, "--device", bad.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("flsh_fixed_us"), "{}", stderr(&o));
}

#[test]
fn devices_lists_every_preset() {
    let o = iolab(&["devices"]);
    assert!(o.status.success());
    let out = stdout(&o);
    for p in ["nvme", "sata-ssd", "hdd", "null"] {
        assert!(out.contains(p), "{p} missing from\n{out}");
    }
}

/// Every source `iolab devices` cites resolves inside the repository:
/// each bracketed tag is listed in docs/sources.md, and no parameter
/// points at a document the repository does not have.
#[test]
fn devices_cite_only_sources_the_repository_lists() {
    let out = stdout(&iolab(&["devices"]));
    let sources = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/sources.md"),
    )
    .expect("docs/sources.md");
    let mut tags = 0;
    for (i, _) in out.match_indices('[') {
        let rest = &out[i..];
        let Some(end) = rest.find(']') else { continue };
        let tag = &rest[..=end];
        let inner = &tag[1..tag.len() - 1];
        let is_tag = inner.len() >= 2
            && inner.starts_with(['S', 'F'])
            && inner[1..].bytes().all(|b| b.is_ascii_digit());
        if is_tag {
            tags += 1;
            assert!(
                sources.contains(&format!("**{tag}**")),
                "{tag} is cited by `iolab devices` but not listed in docs/sources.md"
            );
        }
    }
    assert!(tags > 0, "no bracketed source in\n{out}");
    assert!(out.contains("docs/sources.md"), "{out}");
    for private in [".md ", ".md:", "fidelity", "spec/"] {
        for line in out.lines().filter(|l| l.contains(private)) {
            assert!(
                line.contains("docs/sources.md"),
                "`iolab devices` cites a document outside the repository: {line}"
            );
        }
    }
}

/// The progress bar, as lines on stderr that is not a terminal (`--eta
/// always`): one line of at most 80 columns a second, its share of the
/// work growing across three stonewalled sections of jobs bound by their
/// size (no runtime), never at 100 % before the end.
#[test]
fn the_progress_bar_counts_every_section_and_jobs_bound_by_size() {
    let section = "rw=read\nbs=4k\nsize=32g\nfilename=/dev/nullb0\n";
    let job = temp_job(
        "progress.fio",
        &format!("[a]\n{section}[b]\nstonewall\n{section}[c]\nstonewall\n{section}"),
    );
    let o = iolab(&[
        "run",
        job.to_str().expect("utf-8 path"),
        "--device",
        "null",
        "--eta",
        "always",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let shares: Vec<u32> = err
        .lines()
        .filter(|l| l.starts_with("none ["))
        .inspect(|l| assert!(l.chars().count() <= 80, "{l}"))
        .map(|l| {
            let pct = l.split("] ").nth(1).and_then(|r| r.split('%').next());
            pct.and_then(|p| p.trim().parse().ok())
                .unwrap_or_else(|| panic!("no percent in {l}"))
        })
        .collect();
    assert!(!shares.is_empty(), "no progress drawn: {err}");
    assert!(shares.windows(2).all(|w| w[0] <= w[1]), "{shares:?}");
    assert!(shares.iter().all(|&p| p < 100), "{shares:?}");
}

fn peak_rss_kb(o: &Output) -> u64 {
    let err = stderr(o);
    let tail = err
        .split("peak RSS ")
        .nth(1)
        .unwrap_or_else(|| panic!("no peak RSS in {err}"));
    tail.split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("bad RSS in {err}"))
}

/// Peak memory follows the pages a run uses, not the memory it models
/// nor how long it runs: the same buffered 1 GiB write peaks within 10 %
/// on 6 GiB and on 16 TiB of simulated RAM (the page cache's bookkeeping
/// was once sized for all of RAM: 31 GB at 16 TiB), and a reader of a
/// 256 MiB file peaks within 10 % whether it runs 3 or 30 simulated
/// seconds.
#[test]
fn peak_memory_follows_the_pages_used_not_the_ram_or_the_duration() {
    let write = temp_job("write1g.fio", "[w]\nrw=write\nbs=1m\nsize=1g\n");
    let peak = |job: &std::path::Path, memory: &str| {
        let o = iolab(&[
            "run",
            job.to_str().expect("utf-8"),
            "--device",
            "nvme",
            "--memory",
            memory,
            "--timing",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        peak_rss_kb(&o) as f64
    };
    let (small, huge) = (peak(&write, "6g"), peak(&write, "16t"));
    assert!(
        huge <= small * 1.10,
        "6 GiB peak {small} kB, 16 TiB peak {huge} kB"
    );
    let read = |secs: u32| {
        temp_job(
            &format!("read{secs}.fio"),
            &format!("[r]\nrw=randread\nbs=4k\nsize=256m\ntime_based\nruntime={secs}\n"),
        )
    };
    let (short, long) = (peak(&read(3), "6g"), peak(&read(30), "6g"));
    assert!(
        long <= short * 1.10,
        "3 s peak {short} kB, 30 s peak {long} kB"
    );
}

#[test]
fn wbt_knobs_are_checked_and_traces_written() {
    let o = iolab(&[
        "compare",
        WBT,
        "--device",
        "sata-ssd",
        "--policies",
        "none,wbt:lat=-2",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("lat=-2"), "{}", stderr(&o));
    let o = iolab(&[
        "run",
        WBT,
        "--device",
        "sata-ssd",
        "--policy",
        "wbt:lat=soon",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let job = temp_job(
        "short-wbt.fio",
        &std::fs::read_to_string(root().join(WBT))
            .expect("scenario")
            .replace("runtime=300", "runtime=5"),
    );
    let trace = job.with_extension("trace");
    let o = iolab(&[
        "run",
        job.to_str().expect("utf-8"),
        "--device",
        "sata-ssd",
        "--memory",
        "6g",
        "--policy",
        "wbt",
        "--trace",
        trace.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&trace).expect("trace written");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert!(lines.iter().any(|r| r["event"] == "wbt_timer"), "{text}");
    assert!(lines.iter().all(|r| r["t_ns"].as_u64().is_some()));
}

#[test]
fn volumes_compare_read_policies_and_reject_bad_specs() {
    let job = temp_job(
        "volume.fio",
        "[r]\nfilename=f\nsize=256m\ndirect=1\nrw=randread\nbs=4k\nioengine=libaio\n\
         iodepth=8\nnumjobs=2\nruntime=1\ntime_based\ngroup_reporting\n",
    );
    let job = job.to_str().expect("utf-8 path");
    let o = iolab(&[
        "compare",
        job,
        "--volume",
        "raid1:nvme,sata-ssd",
        "--policies",
        "read=pid,read=latency",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("read=latency") && out.contains("Hmean"),
        "{out}"
    );
    for (args, needle) in [
        (
            vec!["--volume", "raid7:nvme,nvme"],
            "--volume: unknown profile 'raid7'",
        ),
        (vec!["--volume", "raid1"], "is not PROFILE:DEV"),
        (
            vec!["--volume", "raid1:nvme,floppy"],
            "'floppy' is neither a preset",
        ),
        (vec!["--volume", "raid1:nvme,"], "empty device name"),
        (
            vec!["--volume", "raid1:nvme,nvme", "--device", "nvme"],
            "cannot be used with",
        ),
        (
            vec!["--volume", "raid0:nvme,nvme"],
            "'raid0' is not simulated yet",
        ),
        (
            vec!["--device", "nvme", "--policy", "read=fastest"],
            "unknown read policy",
        ),
        (
            vec!["--volume", "single:nvme@metadata-only,sata-ssd"],
            "every device an @HINT or none",
        ),
        (
            vec!["--volume", "single:nvme@fast,sata-ssd@data-only"],
            "unknown allocation hint 'fast'",
        ),
        (
            vec!["--device", "nvme", "--policy", "alloc=ssd-metadata"],
            "run with --fs btrfs",
        ),
        (
            vec!["--volume", "raid1:nvme,nvme", "--pid-split", "3-1"],
            "--pid-split: '3-1' is not EVEN/ODD",
        ),
        (
            vec!["--volume", "single:nvme", "--metadata-used", "19q"],
            "--metadata-used: ",
        ),
        (
            vec!["--volume", "single:nvme", "--metadata-used", "2048t"],
            "--metadata-used: 2251799813685248 bytes is above the 1 PiB",
        ),
        (
            vec!["--volume", "single:nvme", "--metadata-used", "2t"],
            "do not fit: the devices have room for metadata chunks holding",
        ),
        (
            vec!["--volume", "single:nvme", "--full-commit", "101"],
            "--full-commit: '101' is not a percentage from 0 to 100",
        ),
        (
            vec!["--volume", "single:nvme", "--full-commit", "2.12345"],
            "(at most four decimals)",
        ),
        (
            vec!["--volume", "single:nvme", "--full-commit", "5%"],
            "--full-commit: '5%'",
        ),
    ] {
        let mut a = vec!["run", job];
        a.extend(args);
        let o = iolab(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{a:?}: {}", stderr(&o));
    }
}

#[test]
fn compare_runs_iocost_on_the_bandwidth_latency_scenario() {
    let o = iolab(&[
        "compare",
        "scenarios/iocost-bandwidth-latency.fio",
        "--device",
        "sata-ssd",
        "--policies",
        "none,iocost",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    // The variants' header, under the caption and the legend.
    let header = out.lines().nth(2).unwrap_or_default();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        ["none", "iocost"],
        "{out}"
    );
    let row = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" ") == name)
            .unwrap_or_else(|| panic!("missing row '{name}' in\n{out}"))
            .to_owned()
    };
    for i in 0..7 {
        row(&format!("Hmean kb/sec-interferer{i}-read"));
    }
    row("Mean latency-read");
    // iocost moves the interfered reader (none ≈ 641 KB/s, iocost ≈ 943
    // KB/s with the built-in QoS over the posted 20 s).
    let interfered = row("Hmean kb/sec-interfered-read");
    let nums: Vec<f64> = interfered
        .split_whitespace()
        .filter_map(|t| t.parse().ok())
        .collect();
    assert_eq!(nums.len(), 2, "{interfered}");
    assert!(nums[1] > 1.2 * nums[0], "{interfered}");
}

#[test]
fn btrfs_lite_compares_flush_policies_and_refuses_what_it_cannot_run() {
    let job = temp_job(
        "btrfs.fio",
        "[w]\nfilename=f\nsize=4g\nfallocate=posix\nrw=randwrite\nbs=4k\n\
         numjobs=4\nruntime=2\ntime_based\ngroup_reporting\n",
    );
    let job = job.to_str().expect("utf-8 path");
    let o = iolab(&[
        "compare",
        job,
        "--device",
        "sata-ssd",
        "--memory",
        "8g",
        "--fs",
        "btrfs-lite",
        "--policies",
        "flush=catch-up,flush=on-demand:preempt=2021",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The old name still runs, and says the new one.
    assert!(
        stderr(&o).contains("--fs btrfs-lite is now --fs btrfs"),
        "{}",
        stderr(&o)
    );
    let out = stdout(&o);
    // The btrfs table follows the mmtests table, one row per variant.
    let header = out
        .lines()
        .position(|l| l.contains("refs run: worker/reclaim/preempt/commit"))
        .unwrap_or_else(|| panic!("no btrfs table in\n{out}"));
    let rows: Vec<&str> = out.lines().skip(header + 1).take(2).collect();
    assert!(rows[0].starts_with("flush=catch-up "), "{rows:?}");
    assert!(
        rows[1].starts_with("flush=on-demand:preempt=2021 "),
        "{rows:?}"
    );
    for (args, needle) in [
        (
            vec!["--device", "sata-ssd", "--policy", "flush=on-demand"],
            "run with --fs btrfs (on a --device or a --volume)",
        ),
        (
            vec![
                "--device",
                "sata-ssd",
                "--fs",
                "btrfs",
                "--policy",
                "flush=on-demand:preempt=2030",
            ],
            "preempt",
        ),
    ] {
        let mut a = vec!["run", job];
        a.extend(args);
        let o = iolab(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{a:?}: {}", stderr(&o));
    }
}

/// The integer columns of an fio log file.
fn log_lines(path: &std::path::Path) -> Vec<[u64; 5]> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    text.lines()
        .map(|l| {
            let v: Vec<u64> = l
                .split(", ")
                .map(|f| f.parse().unwrap_or_else(|_| panic!("{path:?}: {l}")))
                .collect();
            v.try_into().unwrap_or_else(|_| panic!("{path:?}: {l}"))
        })
        .collect()
}

/// `write_bw_log`, `write_iops_log` and `write_lat_log` write fio's
/// averaged logs under their fio names, and their windows add up to the
/// run's own totals: the IOPS log's entries times the window are the IOs,
/// the bandwidth log's the bytes (to a KiB/s per line), the latency log's
/// mean weighted by IOs is the clat mean.
/// A log option in [global] that three jobs inherit is noted once.
#[test]
fn a_log_note_is_said_once_per_line() {
    let job = temp_job(
        "lognote.fio",
        "[global]\nruntime=10ms\ntime_based\nsize=1m\nwrite_lat_log=n\n[a]\n[b]\n[c]\n",
    );
    let dir = empty_scratch_dir("iolab-lognote");
    let o = iolab(&[
        "run",
        job.to_str().expect("utf-8"),
        "--device",
        "nvme",
        "--log-dir",
        dir.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.matches("log_avg_msec is 0").count(), 1, "{err}");
    assert_eq!(err.matches("no submission latency").count(), 1, "{err}");
    assert!(err.contains("iolab: wrote 9 log files"), "{err}");
}

#[test]
fn fio_logs_are_written_and_add_up_to_the_report() {
    let job = temp_job(
        "logs.fio",
        "[global]\nruntime=1\ntime_based\nlog_avg_msec=100\n\
         [r]\nrw=randread\nbs=4k\nsize=64m\nwrite_bw_log=x\nwrite_iops_log=x\nwrite_lat_log\n",
    );
    let dir = empty_scratch_dir("iolab-logs");
    let j = job.to_str().expect("utf-8 path");
    let d = dir.to_str().expect("utf-8 path");
    let o = iolab(&[
        "run",
        j,
        "--device",
        "nvme",
        "--log-dir",
        d,
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("its r_slat log is empty"), "{err}");
    assert!(err.contains("iolab: wrote 5 log files"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let read = &v["jobs"][0]["read"];
    let ios = read["total_ios"].as_u64().expect("ios");
    let bytes = read["io_bytes"].as_u64().expect("bytes");
    let clat_mean = read["clat_ns"]["mean"].as_f64().expect("mean");
    let iops = log_lines(&dir.join("x_iops.1.log"));
    let bw = log_lines(&dir.join("x_bw.1.log"));
    let (lat, clat) = (
        log_lines(&dir.join("r_lat.1.log")),
        log_lines(&dir.join("r_clat.1.log")),
    );
    assert!(log_lines(&dir.join("r_slat.1.log")).is_empty());
    // As fio's: the IOPS and bandwidth logs hold the windows that ended
    // before the job did (100 to 900 ms), the latency logs those and a
    // line at the end (1000 ms) for the rest, the IOs in flight included.
    assert_eq!(iops.len(), 9, "{iops:?}");
    assert_eq!(bw.len(), 9, "{bw:?}");
    for (k, l) in iops.iter().enumerate() {
        assert_eq!(l[0], 100 * (k as u64 + 1), "window ends");
        assert_eq!(&l[2..], [0, 0, 0], "reads, averaged entries");
    }
    // A synchronous engine: lat is clat and fio's 71 ns of preparation.
    assert_eq!(lat.len(), clat.len());
    for (l, c) in lat.iter().zip(&clat) {
        assert_eq!(l[1], c[1] + 71, "{l:?} {c:?}");
        assert_eq!((l[0], &l[2..]), (c[0], &c[2..]));
    }
    assert_eq!(clat.len(), 10, "{clat:?}");
    assert_eq!(clat[9][0], 1000);
    // The logged windows hold all but the last window's IOs and bytes.
    let logged = iops.iter().map(|l| l[1]).sum::<u64>() / 10;
    let per_window = iops.iter().map(|l| l[1]).max().unwrap_or(0) / 10;
    assert!(
        logged < ios && ios - logged <= 2 * per_window,
        "{logged} of {ios}"
    );
    let kib = bw.iter().map(|l| l[1]).sum::<u64>() / 10;
    assert!(kib < bytes / 1024, "{kib} KiB against {bytes} B");
    // Their latencies, weighted by their IOs, are the run's.
    let weighted: f64 = clat
        .iter()
        .zip(&iops)
        .map(|(c, i)| c[1] as f64 * i[1] as f64)
        .sum::<f64>()
        / iops.iter().map(|i| i[1] as f64).sum::<f64>();
    assert!(
        (weighted / clat_mean - 1.0).abs() < 0.05,
        "{weighted} {clat_mean}"
    );
}

/// `write_hist_log` as fio 3.33 writes it on this machine (a 2 s randrw
/// psync job at `log_hist_msec=500`, `log_hist_coarseness=4`): per
/// direction a line at 501, 1001 and 1501 ms, each `ms, direction, block
/// size` and 116 columns (fio's 1856 buckets 16 at a time) of the IOs
/// since the direction's last line; none for the IOs after the last. Where
/// fio's `fiologparser_hist.py` is installed (with its numpy and pandas),
/// it reads the file.
#[test]
fn a_hist_log_is_written_as_fio_writes_it() {
    let job = temp_job(
        "hist.fio",
        "[a]\nfilename=/dev/sdb\nsize=64m\nrw=randrw\nbs=4k\ndirect=1\nioengine=psync\n\
         runtime=2\ntime_based\nwrite_hist_log=h\nlog_hist_msec=500\nlog_hist_coarseness=4\n",
    );
    let dir = empty_scratch_dir("iolab-hist");
    let o = iolab(&[
        "run",
        job.to_str().expect("utf-8 path"),
        "--device",
        "nvme",
        "--log-dir",
        dir.to_str().expect("utf-8 path"),
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let path = dir.join("h_clat_hist.1.log");
    let text = std::fs::read_to_string(&path).expect("hist log");
    let lines: Vec<Vec<u64>> = text
        .lines()
        .map(|l| {
            l.split(", ")
                .map(|f| f.parse().expect("a number"))
                .collect()
        })
        .collect();
    let mut when: Vec<(u64, u64)> = lines.iter().map(|l| (l[0], l[1])).collect();
    when.sort_unstable();
    assert_eq!(
        when,
        [
            (501, 0),
            (501, 1),
            (1001, 0),
            (1001, 1),
            (1501, 0),
            (1501, 1)
        ]
    );
    for (d, name) in [(0, "read"), (1, "write")] {
        let logged: u64 = lines
            .iter()
            .filter(|l| l[1] == d)
            .inspect(|l| assert_eq!((l[2], l.len()), (4096, 3 + 116)))
            .map(|l| l[3..].iter().sum::<u64>())
            .sum();
        let ios = v["jobs"][0][name]["total_ios"].as_u64().expect("ios");
        // About three quarters of the 2 s are in the lines.
        assert!(
            logged * 10 > ios * 7 && logged < ios,
            "{name}: {logged} of {ios}"
        );
    }
    let parser = std::path::Path::new("/usr/share/doc/fio/fiologparser_hist.py.gz");
    let python_ok = std::process::Command::new("python3")
        .args(["-c", "import numpy, pandas"])
        .status()
        .is_ok_and(|s| s.success());
    if parser.exists() && python_ok {
        let script = dir.join("fiologparser_hist.py");
        let unzipped = std::process::Command::new("gzip")
            .args(["-dc", parser.to_str().expect("utf-8")])
            .output()
            .expect("gzip");
        std::fs::write(&script, unzipped.stdout).expect("script");
        let out = std::process::Command::new("python3")
            .arg(&script)
            .arg(&path)
            .output()
            .expect("python3");
        let table = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{table}{}", stderr(&out));
        assert!(
            table.starts_with("end-time, samples, min, avg, median"),
            "{table}"
        );
        assert!(table.lines().count() >= 2, "{table}");
    }
}

/// Several runs put their logs in one directory each, named as --trace
/// names its files; without --log-dir they are refused before any run, and
/// `per_job_logs=0` puts the clones of a job in one file.
#[test]
fn fio_logs_of_several_runs_go_one_directory_each() {
    let job = temp_job(
        "logs2.fio",
        "[w]\nrw=randwrite\nbs=4k\nsize=8m\nruntime=200ms\ntime_based\nnumjobs=2\n\
         log_avg_msec=50\nper_job_logs=0\nwrite_iops_log=w\n",
    );
    let j = job.to_str().expect("utf-8 path");
    let o = iolab(&["compare", j, "--device", "nvme", "--policies", "none,wbt"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("{j}:10: write_iops_log: a comparison")),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
    let dir = empty_scratch_dir("iolab-logs2");
    let d = dir.to_str().expect("utf-8 path");
    let o = iolab(&[
        "compare",
        j,
        "--device",
        "nvme",
        "--policies",
        "none,wbt",
        "--seeds",
        "2",
        "--log-dir",
        d,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for run in ["0.1", "0.2", "1.1", "1.2"] {
        let lines = log_lines(&dir.join(run).join("w_iops.log"));
        // Two clones one after the other, each with the 50 ms windows
        // that ended before it did, as fio's.
        let times: Vec<u64> = lines.iter().map(|l| l[0]).collect();
        let (a, b) = times.split_at(times.len() / 2);
        assert_eq!(a, b, "{run}: {lines:?}");
        assert_eq!(a.len(), 3, "{run}: {lines:?}");
        assert!(a.iter().zip(1..).all(|(&t, k)| t == 50 * k), "{run}: {a:?}");
        assert!(lines.iter().all(|l| l[2] == 1 && l[1] > 0), "{run}");
    }
    // One run writes in --log-dir itself, the same lines as that run's
    // directory of the comparison.
    let one = dir.join("one");
    let o = iolab(&[
        "run",
        j,
        "--device",
        "nvme",
        "--log-dir",
        one.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(one.join("w_iops.log")).expect("read"),
        std::fs::read(dir.join("0.1/w_iops.log")).expect("read")
    );
}

/// `--section` runs only the named sections, in file order, with
/// `[global]` still applied, as fio's does; `--output FILE` writes what
/// stdout would have shown, byte for byte, and leaves stdout empty.
#[test]
fn sections_and_an_output_file_work_as_in_fio() {
    let job = temp_job(
        "sections.fio",
        "[global]\nsize=8m\nbs=64k\n[a]\nrw=read\n[b]\nrw=write\nprioclass=2\n[c]\nrw=randread\n",
    );
    let j = job.to_str().expect("utf-8 path");
    let json = |extra: &[&str]| {
        let mut args = vec!["run", j, "--device", "nvme", "--output-format", "json"];
        args.extend_from_slice(extra);
        let o = iolab(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        o
    };
    let o = json(&["--section", "c", "--section", "a"]);
    // The note on [b]'s prioclass is [b]'s, which does not run.
    assert_eq!(stderr(&o), "");
    assert!(stderr(&json(&["--section", "b"])).contains("prioclass"));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    let names: Vec<&str> = v["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .filter_map(|j| j["jobname"].as_str())
        .collect();
    assert_eq!(names, ["a", "c"]);
    assert!(v["jobs"][0]["read"]["io_bytes"].as_u64() == Some(8 << 20));
    let file = empty_scratch_dir("iolab-output").join("out.json");
    std::fs::create_dir_all(file.parent().expect("dir")).expect("dir");
    let f = file.to_str().expect("utf-8 path");
    let to_file = json(&["--section", "c", "--section", "a", "--output", f]);
    assert!(to_file.stdout.is_empty());
    assert_eq!(std::fs::read(&file).expect("written"), o.stdout);
    let missing = iolab(&["run", j, "--device", "nvme", "--section", "d"]);
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(
        stderr(&missing).trim_end(),
        format!("iolab: --section d: no job section [d] in {j} (the job sections: [a], [b], [c])")
    );
    let itself = iolab(&["run", j, "--device", "nvme", "--output", j]);
    assert_eq!(itself.status.code(), Some(2));
    assert!(stderr(&itself).contains("an input of this command"));
    assert!(std::fs::read_to_string(&job).expect("kept").contains("[c]"));
    let nowhere = iolab(&[
        "run",
        j,
        "--device",
        "nvme",
        "--output",
        "/nonexistent/dir/x",
    ]);
    assert_eq!(nowhere.status.code(), Some(2));
    assert!(
        stderr(&nowhere).contains("iolab: --output /nonexistent/dir/x: "),
        "{}",
        stderr(&nowhere)
    );
}

/// fio's command line and several job files, as fio 3.33 reads them: the
/// options after `--` are jobs (each `--name` one, those before it
/// `[global]`'s, reaching the first file), the files run one after
/// another, and an include is found beside the file that includes it.
#[test]
fn command_line_jobs_and_several_job_files() {
    let dir = empty_scratch_dir("iolab-several");
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).expect("dir");
    std::fs::write(sub.join("common.inc"), "size=1m\n").expect("include");
    std::fs::write(sub.join("a.fio"), "[x]\nrw=read\ninclude common.inc\n").expect("a");
    std::fs::write(dir.join("b.fio"), "[y]\nrw=read\nsize=1m\n").expect("b");
    let (a, b) = (sub.join("a.fio"), dir.join("b.fio"));
    let (a, b) = (a.to_str().expect("utf-8"), b.to_str().expect("utf-8"));
    let run = |args: &[&str]| {
        let mut all = vec!["run", "--device", "nvme", "--output-format", "json"];
        all.extend_from_slice(args);
        let o = iolab(&all);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
        v["jobs"]
            .as_array()
            .expect("jobs")
            .iter()
            .map(|j| {
                let name = j["jobname"].as_str().unwrap_or_default().to_owned();
                (name, j["groupid"].as_u64(), j["read"]["total_ios"].as_u64())
            })
            .collect::<Vec<_>>()
    };
    // fio --bs=8k a.fio b.fio: 8 KiB blocks in a.fio only, b.fio after it.
    assert_eq!(
        run(&[a, b, "--", "--bs=8k"]),
        [
            ("x".to_owned(), Some(0), Some(128)),
            ("y".to_owned(), Some(1), Some(256))
        ]
    );
    // A pasted fio command line alone.
    assert_eq!(
        run(&[
            "--",
            "fio",
            "--size=1m",
            "--name=r",
            "--rw=read",
            "--name=w",
            "--rw=write"
        ]),
        [
            ("r".to_owned(), Some(0), Some(256)),
            ("w".to_owned(), Some(0), Some(0))
        ]
    );
    // Bad arguments: every one named by its place, exit 2.
    let o = iolab(&[
        "run",
        "--device",
        "nvme",
        "--",
        "--name=r",
        "--rw=randomread",
        "b.fio",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("<command line>:2: rw: unknown value 'randomread'"),
        "{err}"
    );
    assert!(
        err.contains("<command line>:3: 'b.fio' is not a job option"),
        "{err}"
    );
    let o = iolab(&["run", "--device", "nvme"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("give a job file, or fio job options after --"));
    let o = iolab(&["run", "--device", "nvme", "-", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("given more than once"),
        "{}",
        stderr(&o)
    );
}

/// `-` reads the job file from stdin, as fio does: the same report as
/// from the file, and errors named `<stdin>` with their line; a sharded
/// command, which every shard must read again, wants a path.
#[test]
fn a_job_file_from_stdin() {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let text = "[global]\nsize=8m\n[a]\nrw=randread\n";
    let job = temp_job("stdin.fio", text);
    let piped = |input: &str, extra: &[&str]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_iolab"))
            .args(["run", "-", "--device", "nvme", "--output-format", "json"])
            .args(extra)
            .current_dir(root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("iolab starts");
        let mut stdin = child.stdin.take().expect("stdin");
        // A refusal before the job is read closes the pipe early.
        let _ = stdin.write_all(input.as_bytes());
        drop(stdin);
        child.wait_with_output().expect("output")
    };
    let from_file = iolab(&[
        "run",
        job.to_str().expect("utf-8 path"),
        "--device",
        "nvme",
        "--output-format",
        "json",
    ]);
    let o = piped(text, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, from_file.stdout);
    let bad = piped("[a]\nrw=sideways\n", &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).starts_with("iolab: <stdin>:2: rw: "),
        "{}",
        stderr(&bad)
    );
    let shard = piped(text, &["--shard", "0/2"]);
    assert_eq!(shard.status.code(), Some(2));
    assert!(stderr(&shard).contains("--shard: give the job file as a path"));
}

/// Every key path of a JSON document in document order, arrays by their
/// first element, a job's options collapsed to `job options/*`.
fn key_paths(v: &serde_json::Value) -> Vec<String> {
    fn walk(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) if !at.ends_with("/job options") => {
                for (k, x) in m {
                    walk(x, format!("{at}/{k}"), out);
                }
            }
            serde_json::Value::Object(_) => out.push(format!("{at}/*")),
            serde_json::Value::Array(a) if a.first().is_some_and(|x| x.is_object()) => {
                walk(&a[0], format!("{at}/0"), out);
            }
            _ => out.push(at),
        }
    }
    let mut out = Vec::new();
    walk(v, String::new(), &mut out);
    out
}

/// The key paths fio 3.33 writes for one mixed job with direct IO on a
/// file, in its order (`show_thread_status_json` and `show_disk_util` in
/// its `stat.c` and `diskutil.c`).
fn fio_key_paths() -> Vec<String> {
    let lat = |name: &str, with_percentiles: bool| {
        let mut v: Vec<String> = ["min", "max", "mean", "stddev", "N"]
            .iter()
            .map(|k| format!("{name}/{k}"))
            .collect();
        if with_percentiles {
            v.extend(
                [
                    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0,
                ]
                .iter()
                .chain(&[99.5, 99.9, 99.95, 99.99])
                .map(|p| format!("{name}/percentile/{p:.6}")),
            );
        }
        v
    };
    let dir = |d: &str, ios: bool| {
        let mut v: Vec<String> = [
            "io_bytes",
            "io_kbytes",
            "bw_bytes",
            "bw",
            "iops",
            "runtime",
            "total_ios",
            "short_ios",
            "drop_ios",
        ]
        .iter()
        .map(|k| (*k).to_owned())
        .collect();
        v.extend(lat("slat_ns", false));
        v.extend(lat("clat_ns", ios));
        v.extend(lat("lat_ns", false));
        v.extend(
            [
                "bw_min",
                "bw_max",
                "bw_agg",
                "bw_mean",
                "bw_dev",
                "bw_samples",
                "iops_min",
                "iops_max",
                "iops_mean",
                "iops_stddev",
                "iops_samples",
            ]
            .iter()
            .map(|k| (*k).to_owned()),
        );
        v.into_iter()
            .map(|k| format!("/jobs/0/{d}/{k}"))
            .collect::<Vec<String>>()
    };
    let buckets = |name: &str, keys: &[&str]| -> Vec<String> {
        keys.iter().map(|k| format!("/jobs/0/{name}/{k}")).collect()
    };
    let calls = ["0", "4", "8", "16", "32", "64", ">=64"];
    let lat_keys = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
    ];
    let mut v: Vec<String> = ["/fio version", "/timestamp", "/timestamp_ms", "/time"]
        .iter()
        .map(|k| (*k).to_owned())
        .collect();
    for k in [
        "jobname",
        "groupid",
        "error",
        "eta",
        "elapsed",
        "job options/*",
    ] {
        v.push(format!("/jobs/0/{k}"));
    }
    v.extend(dir("read", true));
    v.extend(dir("write", true));
    v.extend(dir("trim", false));
    v.push("/jobs/0/sync/total_ios".to_owned());
    v.extend(
        lat("lat_ns", false)
            .iter()
            .map(|k| format!("/jobs/0/sync/{k}")),
    );
    for k in ["job_runtime", "usr_cpu", "sys_cpu", "ctx", "majf", "minf"] {
        v.push(format!("/jobs/0/{k}"));
    }
    v.extend(buckets(
        "iodepth_level",
        &["1", "2", "4", "8", "16", "32", ">=64"],
    ));
    v.extend(buckets("iodepth_submit", &calls));
    v.extend(buckets("iodepth_complete", &calls));
    v.extend(buckets("latency_ns", &lat_keys));
    v.extend(buckets("latency_us", &lat_keys));
    let mut ms = lat_keys.to_vec();
    ms.extend(["2000", ">=2000"]);
    v.extend(buckets("latency_ms", &ms));
    for k in [
        "latency_depth",
        "latency_target",
        "latency_percentile",
        "latency_window",
    ] {
        v.push(format!("/jobs/0/{k}"));
    }
    for k in [
        "name",
        "read_ios",
        "write_ios",
        "read_merges",
        "write_merges",
        "read_ticks",
        "write_ticks",
        "in_queue",
        "util",
    ] {
        v.push(format!("/disk_util/0/{k}"));
    }
    v
}

/// iolab's JSON has the keys fio 3.33 writes for the same job, in fio's
/// order (its own under `iolab` after them). Where fio is installed, the
/// same job runs on it too (a 16 MiB scratch file) and its document must
/// have exactly these key paths, so the list cannot drift from fio's.
#[test]
fn json_has_fios_keys_in_fios_order() {
    let dir = empty_scratch_dir("iolab-fio-keys");
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("kp.dat");
    let args = |file: &str| -> Vec<String> {
        [
            "--name=kp",
            &format!("--filename={file}"),
            "--rw=randrw",
            "--size=16m",
            "--direct=1",
            "--ioengine=libaio",
            "--iodepth=4",
            "--runtime=1",
            "--time_based",
        ]
        .iter()
        .map(|a| (*a).to_owned())
        .collect()
    };
    let f = file.to_str().expect("utf-8 path");
    let mut cmd = vec!["run", "--device", "nvme", "--output-format", "json", "--"];
    let job = args(f);
    cmd.extend(job.iter().map(String::as_str));
    let o = iolab(&cmd);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    let ours: Vec<String> = key_paths(&v)
        .into_iter()
        .filter(|k| !k.starts_with("/iolab/"))
        .collect();
    assert_eq!(ours, fio_key_paths());
    assert_eq!(v["jobs"][0]["job options"]["name"], "kp");
    assert_eq!(v["time"], "Thu Jan  1 00:00:01 1970");
    let real = std::process::Command::new("fio")
        .args(&job)
        .arg("--output-format=json")
        .output();
    match real {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            let start = text.find('{').expect("fio printed JSON");
            let fio: serde_json::Value =
                serde_json::from_str(&text[start..]).expect("fio's JSON parses");
            assert_eq!(key_paths(&fio), fio_key_paths(), "fio's own document");
        }
        // No fio here: the committed list stands for it.
        _ => eprintln!("fio not run: the key list is checked against iolab only"),
    }
    let _ = std::fs::remove_file(&file);
}

/// A fio iolog replays through the policies: the log beside the job file
/// (found as fio finds it), compared under none and wbt; a bad line is
/// named in the log, exit 2.
#[test]
fn an_iolog_replays_through_a_comparison() {
    let dir = empty_scratch_dir("iolab-replay");
    std::fs::create_dir_all(&dir).expect("dir");
    let mut log = String::from("fio version 3 iolog\n0 data add\n0 data open\n");
    for i in 0..400u64 {
        let act = if i % 4 == 0 { "read" } else { "write" };
        log.push_str(&format!(
            "{} data {act} {} 4096\n",
            250 * i,
            (i * 7919 % 4096) * 4096
        ));
    }
    std::fs::write(dir.join("trace.log"), &log).expect("log");
    let job = dir.join("replay.fio");
    std::fs::write(
        &job,
        "[replay]\nread_iolog=trace.log\nioengine=libaio\ndirect=1\niodepth=8\n",
    )
    .expect("job");
    let j = job.to_str().expect("utf-8");
    let o = iolab(&[
        "compare",
        j,
        "--device",
        "sata-ssd",
        "--policies",
        "none,wbt",
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    for run in v["runs"].as_array().expect("runs") {
        let job = &run["result"]["jobs"][0];
        assert_eq!(job["read"]["total_ios"], 100, "{}", run["variant"]);
        assert_eq!(job["write"]["total_ios"], 300, "{}", run["variant"]);
    }
    std::fs::write(
        dir.join("trace.log"),
        "fio version 3 iolog\n0 data add\n5 data read 0\n",
    )
    .expect("bad log");
    let o = iolab(&["run", j, "--device", "nvme"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("trace.log:3: read_iolog: read needs an offset and a length"),
        "{err}"
    );
}

/// fio's six example files for its metadata engines
/// (`examples/{file,dir}{create,stat,delete}-ioengine.fio`), described by
/// their options (their file and job counts cut): each runs on xfs-lite
/// and on btrfs and makes one call per file of each job. Three of them
/// carry `rw=filecreate` (`filestat`, `filedelete`), which fio 3.33's
/// parser refuses: iolab runs them and says so, once.
#[test]
fn fios_metadata_engine_examples_run_unchanged_but_for_their_counts() {
    let examples = [
        (
            "filecreate",
            "rw=filecreate\ncreate_on_open=1\nnrfiles=300\nioengine=filecreate\nfallocate=none\nfilesize=4k\nopenfiles=1\n",
            16,
            "create",
            true,
        ),
        (
            "filestat",
            "rw=filestat\nioengine=filestat\nnumjobs=1\nfilesize=4k\nnrfiles=200\nthread\n",
            6,
            "stat",
            true,
        ),
        (
            "filedelete",
            "rw=filedelete\nioengine=filedelete\nfilesize=4k\nnrfiles=200\nunlink=0\n",
            6,
            "unlink",
            true,
        ),
        (
            "dircreate",
            "create_on_open=1\nnrfiles=30\nioengine=dircreate\nfallocate=none\nfilesize=4k\nopenfiles=1\n",
            6,
            "mkdir",
            false,
        ),
        (
            "dirstat",
            "ioengine=dirstat\nnumjobs=10\nfilesize=4k\nnrfiles=5\nthread\n",
            60,
            "stat",
            false,
        ),
        (
            "dirdelete",
            "ioengine=dirdelete\nfilesize=4k\nnrfiles=200\nunlink=0\n",
            6,
            "rmdir",
            false,
        ),
    ];
    for (engine, global, clones, call, rw_line) in examples {
        let jobs = if engine == "filecreate" { 16 } else { 6 };
        let mut text = format!("[global]\n{global}\n");
        for k in 0..jobs {
            text.push_str(&format!("[t{k}]\n"));
        }
        let nrfiles: u64 = global
            .lines()
            .find_map(|l| l.strip_prefix("nrfiles="))
            .and_then(|v| v.parse().ok())
            .expect("nrfiles");
        let job = temp_job(&format!("{engine}-ioengine.fio"), &text);
        for fs in ["xfs-lite", "btrfs"] {
            let o = iolab(&[
                "run",
                job.to_str().expect("utf-8"),
                "--device",
                "nvme",
                "--fs",
                fs,
                "--output-format",
                "json",
            ]);
            let what = format!("{engine} on {fs}");
            assert!(o.status.success(), "{what}: {}", stderr(&o));
            let r: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
            assert_eq!(r["jobs"].as_array().expect("jobs").len(), clones, "{what}");
            assert_eq!(
                r["iolab"]["metadata_calls"][call].as_u64(),
                Some(nrfiles * clones as u64),
                "{what}"
            );
            let said = stderr(&o).matches("fio 3.33 refuses this value").count();
            assert_eq!(said, usize::from(rw_line), "{what}: {}", stderr(&o));
        }
    }
    // rw=filecreate names its engine: with another engine it is an error
    // at its line.
    let job = temp_job(
        "rw-filecreate-sync.fio",
        "[global]\nioengine=sync\nsize=1m\n[t0]\nrw=filecreate\n",
    );
    let o = iolab(&["run", job.to_str().expect("utf-8"), "--device", "nvme"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(":5: rw") && stderr(&o).contains("ioengine=sync"),
        "{}",
        stderr(&o)
    );
}

/// The dbench-like scenario keeps each client's metadata calls in step
/// with its data IO by fio's flow control, in dbench4's proportions
/// (data 10 : opens 4 : creates 1 : unlinks 1 : stats 5), and its first
/// group is the data alone.
#[test]
fn dbench_like_clients_keep_their_operations_in_dbench_proportions() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "run",
            "scenarios/dbench-like.fio",
            "--device",
            "sata-ssd",
            "--memory",
            "6g",
            "--output-format",
            "json",
        ])
        .env("CLIENTS", "2")
        .current_dir(root())
        .output()
        .expect("iolab starts");
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let jobs = r["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 2, "the data group and the metadata group");
    let ios = |j: &serde_json::Value| {
        j["read"]["total_ios"].as_u64().expect("ios")
            + j["write"]["total_ios"].as_u64().expect("ios")
    };
    let data = ios(&jobs[0]) as f64;
    assert!(data > 100_000.0, "{data}");
    assert!(jobs[0]["sync"]["total_ios"].as_u64().expect("syncs") > 1000);
    let calls = &r["iolab"]["metadata_calls"];
    let n = |k: &str| calls[k].as_u64().unwrap_or(0) as f64;
    let near = |got: f64, share: f64, what: &str| {
        let want = data * share;
        assert!(
            (got - want).abs() <= want * 0.02 + 4.0,
            "{what}: {got} against {want} ({calls})"
        );
    };
    // The open job's first pass creates its 64 files a client.
    near(n("open") + 128.0, 0.4, "opens");
    near(n("create") - 128.0, 0.1, "creates");
    near(n("unlink"), 0.1, "unlinks");
    near(n("stat"), 0.5, "stats");
}
