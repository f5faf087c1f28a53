//! `iolab kernel`: the wbt replay on the committed real-kernel captures,
//! bad traces and bundles, and a capture that leaves the machine as it
//! found it.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;

use common::{iolab, root, stderr};

/// Refused as bad input (exit 2), saying `says`.
fn refused(o: &Output, says: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    assert!(stderr(o).contains(says), "{}", stderr(o));
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            stderr(o)
        )
    })
}

const BUNDLES: [&str; 3] = [
    "kernel/fixtures/disk-default",
    "kernel/fixtures/disk-lat75",
    "kernel/fixtures/shm-deadline-lat300",
];
const CAT_TRACE: &str = "kernel/fixtures/wbt-only-cat-trace.txt";

fn assert_all_agree(o: &Output, what: &str) -> serde_json::Value {
    assert!(o.status.success(), "{what}: {}", stderr(o));
    let r = json(o);
    let windows = r["windows"].as_u64().expect("windows");
    assert!(windows >= 60, "{what}: only {windows} windows");
    assert_eq!(r["agree"], r["windows"], "{what}: {r:#}");
    assert!(r["first_divergence"].is_null(), "{what}: {r:#}");
    assert_eq!(r["divergences"], 0);
    r
}

#[test]
fn the_core_makes_the_kernels_decision_on_every_window_of_every_bundle() {
    let mut scaled_down = false;
    for b in BUNDLES {
        let o = iolab(&["kernel", "replay-wbt", b, "--output-format", "json"]);
        let r = assert_all_agree(&o, b);
        // Rebuilt windows are judged, not taken from the kernel.
        assert!(
            r["inputs"]["rebuilt"].as_u64().expect("rebuilt") > 10,
            "{b}: {r:#}"
        );
        assert!(
            r["inputs"]["printed"].as_u64().expect("printed") > 10,
            "{b}: {r:#}"
        );
        let trace = std::fs::read_to_string(root().join(b).join("trace.txt")).expect("trace");
        scaled_down |= trace.contains("scale down: step=4");
    }
    assert!(scaled_down, "one bundle goes through scale-down to step 4");
}

/// A sparse writer (`kernel/fixtures/sparse-idle.fio`) on a RAM-backed
/// loop device: its windows start from an idle timer.
const SPARSE_IDLE: &str = "kernel/fixtures/sparse-idle-shm";
/// `mixed.fio` at `wbt_lat_usec` 75 on a disk-backed loop device: scale
/// down to step 4, and a write that raced an expiry.
const SCALE_DOWN: &str = "kernel/fixtures/scaledown-disk-lat75";

#[test]
fn windows_that_start_from_an_idle_timer_are_rebuilt_as_the_kernel_arms_them() {
    let o = iolab(&[
        "kernel",
        "replay-wbt",
        SPARSE_IDLE,
        "--output-format",
        "json",
    ]);
    let r = assert_all_agree(&o, SPARSE_IDLE);
    // Every write of the job finds the timer idle and arms it; each such
    // window outlasts its 100 ms (the timer wheel rounds it up), so one
    // rebuilt as the 100 ms before its expiry would miss the write.
    let idle = r["from_idle"].as_u64().expect("from_idle");
    assert!(idle >= 15, "{r:#}");
    assert_eq!(r["from_idle_longer"], r["from_idle"], "{r:#}");
    assert!(
        r["inputs"]["rebuilt"].as_u64().expect("rebuilt") > 100,
        "{r:#}"
    );
}

#[test]
fn a_scale_down_capture_and_a_write_that_raced_its_expiry_replay_in_full() {
    let o = iolab(&[
        "kernel",
        "replay-wbt",
        SCALE_DOWN,
        "--output-format",
        "json",
    ]);
    let r = assert_all_agree(&o, SCALE_DOWN);
    assert!(r["windows"].as_u64().expect("windows") > 100, "{r:#}");
    assert!(r["raced"].as_u64().expect("raced") >= 1, "{r:#}");
    let trace = std::fs::read_to_string(root().join(SCALE_DOWN).join("trace.txt")).expect("trace");
    assert!(
        trace.contains("scale down: step=4"),
        "scales down to step 4"
    );
    assert!(trace.contains("scale up: step=3"), "and back up");
}

const BTRFS_BUNDLE: &str = "kernel/fixtures/btrfs-mirror";

#[test]
fn a_btrfs_capture_adds_up_to_the_keys_iolab_run_reports() {
    let o = iolab(&["kernel", "summary", BTRFS_BUNDLE, "--output-format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = json(&o);
    let b = &s["trace"]["btrfs"];
    // The traced commits are the ones commit_stats counted since mount.
    assert_eq!(b["commits"], s["commit_stats"]["commits"], "{s:#}");
    let flush = b["flush_space"].as_array().expect("flush_space");
    let calls = |state: &str, preempt: bool| {
        flush
            .iter()
            .filter(|f| f["state"] == state && f["preempt"] == preempt && f["space"] == "METADATA")
            .map(|f| f["calls"].as_u64().expect("calls"))
            .sum::<u64>()
    };
    assert!(calls("FLUSH_DELAYED_ITEMS_NR", false) > 100, "{s:#}");
    assert!(calls("FLUSH_DELALLOC", true) > 0, "{s:#}");
    // Every ticket's wait is measured: the bundle's trace clock is mono.
    assert_eq!(s["trace_clock"], "mono");
    let w = &b["ticket_wait_ns"];
    assert_eq!(w["n"], b["tickets"], "{s:#}");
    let (p50, max) = (
        w["p50"].as_u64().expect("p50"),
        w["max"].as_u64().expect("max"),
    );
    assert!(0 < p50 && p50 <= max && max < 10_000_000_000, "{w}");
    // Both copies were written alike; the chunk map says which device each
    // data chunk reads first.
    let devs = s["devices"].as_array().expect("devices");
    assert_eq!(devs.len(), 2);
    assert_eq!(devs[0]["write_bytes"], devs[1]["write_bytes"]);
    let data: Vec<&serde_json::Value> = s["chunks"]
        .as_array()
        .expect("chunks")
        .iter()
        .filter(|c| c["type"] == "DATA|RAID1")
        .collect();
    assert!(data.len() >= 2, "{s:#}");
    assert_eq!(data[0]["stripe_devids"], serde_json::json!([1, 2]));
    assert_eq!(data[1]["stripe_devids"], serde_json::json!([2, 1]));
    assert_eq!(s["read_policy"], "[pid]");
    let jobs = s["jobs"].as_array().expect("jobs");
    assert!(jobs[0]["write"]["total_ios"].as_u64().expect("ios") > 1000);
    // The text form says the same.
    let o = iolab(&["kernel", "summary", BTRFS_BUNDLE]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains("stripes on devids [2,1]"), "{text}");
    assert!(
        text.contains(&format!("btrfs: {} commits traced", b["commits"])),
        "{text}"
    );
}

#[test]
fn a_summary_measures_ticket_waits_only_on_the_mono_clock() {
    // An older bundle does not say its clock: no waits.
    let o = iolab(&["kernel", "summary", BUNDLES[0], "--output-format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = json(&o);
    assert!(s["trace_clock"].is_null());
    assert!(s["trace"]["btrfs"]["ticket_wait_ns"].is_null());
    // A bare trace: the user says.
    let trace = format!("{BTRFS_BUNDLE}/trace.txt");
    let bare = |extra: &[&str]| {
        let mut a = vec![
            "kernel",
            "summary",
            trace.as_str(),
            "--output-format",
            "json",
        ];
        a.extend_from_slice(extra);
        json(&iolab(&a))
    };
    assert!(bare(&[])["trace"]["btrfs"]["ticket_wait_ns"].is_null());
    assert_eq!(
        bare(&["--mono-clock"])["trace"]["btrfs"]["ticket_wait_ns"]["n"],
        bare(&[])["trace"]["btrfs"]["tickets"]
    );
    // A bundle records its clock; the flag would contradict it.
    let o = iolab(&["kernel", "summary", BTRFS_BUNDLE, "--mono-clock"]);
    refused(&o, "records its trace clock itself");
}

#[test]
fn a_summary_of_a_bad_trace_names_its_line() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("iolab-summary-bad");
    std::fs::create_dir_all(&dir).expect("dir");
    let good = std::fs::read_to_string(root().join(BTRFS_BUNDLE).join("trace.txt")).expect("trace");
    let mut lines: Vec<&str> = good.lines().take(20).collect();
    lines.push("this is no trace line");
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, lines.join("\n")).expect("write");
    let o = iolab(&["kernel", "summary", bad.to_str().expect("utf-8")]);
    refused(&o, "bad.txt:21:");
    // A bundle with a file it cannot read says which, and where.
    let copy = dir.join("bundle");
    std::fs::create_dir_all(&copy).expect("copy dir");
    for e in std::fs::read_dir(root().join(BTRFS_BUNDLE)).expect("fixture") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), copy.join(e.file_name())).expect("copy");
    }
    let bundle = copy.to_str().expect("utf-8");
    let chunks = std::fs::read_to_string(copy.join("chunks.txt")).expect("chunks");
    let at = chunks
        .lines()
        .position(|l| l.contains("length "))
        .expect("a chunk")
        + 1;
    let bad = chunks.replacen("length ", "length x", 1);
    std::fs::write(copy.join("chunks.txt"), bad).expect("write");
    refused(
        &iolab(&["kernel", "summary", bundle]),
        &format!("chunks.txt:{at}:"),
    );
    std::fs::write(copy.join("chunks.txt"), chunks).expect("write");
    std::fs::remove_file(copy.join("stat-loop1-after.txt")).expect("rm");
    refused(
        &iolab(&["kernel", "summary", bundle]),
        "stat-loop1-after.txt is missing",
    );
    let o = iolab(&["kernel", "summary", "no/such/bundle"]);
    refused(&o, "no/such/bundle: no such file or directory");
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

#[test]
fn a_cat_trace_of_the_wbt_events_alone_replays_for_each_of_its_devices() {
    let o = iolab(&[
        "kernel",
        "replay-wbt",
        CAT_TRACE,
        "--dev",
        "7:0",
        "--queue-depth",
        "128",
        "--lat-usec",
        "2000",
        "--output-format",
        "json",
    ]);
    let r = assert_all_agree(&o, "7:0");
    assert!(r["skipped"]["other_device_lines"].as_u64().expect("n") > 100);
    let o = iolab(&[
        "kernel",
        "replay-wbt",
        CAT_TRACE,
        "--dev",
        "254:0",
        "--queue-depth",
        "256",
        "--lat-usec",
        "75000",
        "--rotational",
        "--output-format",
        "json",
    ]);
    assert_all_agree(&o, "254:0");
}

#[test]
fn a_wrong_queue_depth_diverges_at_the_first_capped_step_and_exits_3() {
    let o = iolab(&[
        "kernel",
        "replay-wbt",
        BUNDLES[0],
        "--queue-depth",
        "32",
        "--output-format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let r = json(&o);
    let d = &r["first_divergence"];
    assert!(d["line"].as_u64().expect("line") > 0, "{r:#}");
    assert_eq!(d["kernel"]["status"], d["core"]["status"], "{r:#}");
    assert!(stderr(&o).contains("differently from the kernel"));
    let o = iolab(&["kernel", "replay-wbt", BUNDLES[0], "--queue-depth", "32"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("is --queue-depth 32 right?"), "{out}");
}

#[test]
fn a_wrong_latency_target_is_caught_too() {
    // 75 µs windows judged against 2 ms: the kernel's EXCEEDED windows are
    // OK to the core.
    let o = iolab(&[
        "kernel",
        "replay-wbt",
        BUNDLES[1],
        "--lat-usec",
        "2000",
        "--output-format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(r["first_divergence"]["field"], "status", "{r:#}");
}

const DIRTY_TRACES: [&str; 2] = [
    "kernel/fixtures/dirty-throttle-1.txt",
    "kernel/fixtures/dirty-throttle-2.txt",
];

fn replay_dirty(path: &Path) -> Output {
    let p = path.to_str().expect("utf-8 path");
    iolab(&[
        "kernel",
        "replay-dirty",
        p,
        "--dev",
        "7:0",
        "--output-format",
        "json",
    ])
}

#[test]
fn the_dirty_arithmetic_makes_the_kernels_rate_limit_updates_and_task_rates() {
    for t in DIRTY_TRACES {
        let o = replay_dirty(&root().join(t));
        assert!(o.status.success(), "{t}: {}", stderr(&o));
        let r = json(&o);
        assert!(r["first_divergence"].is_null(), "{t}: {r:#}");
        let updates = r["updates"].as_u64().expect("updates");
        assert!(updates >= 25, "{t}: {r:#}");
        assert_eq!(r["updates_agree"], r["updates"], "{t}: {r:#}");
        let passes = r["passes"].as_u64().expect("passes");
        assert!(passes >= 500, "{t}: {r:#}");
        assert_eq!(r["passes_agree"], r["passes"], "{t}: {r:#}");
        // Nearly every pass is exact: the tolerance covers the bandwidth
        // estimate moving untraced, not a different formula.
        let exact = r["passes_exact"].as_u64().expect("exact");
        assert!(exact * 100 >= passes * 85, "{t}: {r:#}");
    }
}

/// The fixture with the `n`-th line containing `event` changed by `edit`,
/// and that line's number.
fn tampered(event: &str, n: usize, edit: impl Fn(&str) -> String) -> (PathBuf, usize) {
    let text = std::fs::read_to_string(root().join(DIRTY_TRACES[0])).expect("fixture");
    let mut seen = 0;
    let mut at = 0;
    let lines: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if l.contains(event) {
                seen += 1;
                if seen == n {
                    at = i + 1;
                    return edit(l);
                }
            }
            l.to_owned()
        })
        .collect();
    assert!(at > 0, "the fixture has {n} {event} lines");
    let path = temp(&format!("tampered-{n}")).join("trace.txt");
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    (path, at)
}

/// `field=N` in `line` replaced by `field=f(N)`.
fn bump(line: &str, field: &str, f: impl Fn(u64) -> u64) -> String {
    let key = format!(" {field}=");
    let start = line.find(&key).expect("field") + key.len();
    let end = line[start..].find(' ').map_or(line.len(), |e| start + e);
    let v: u64 = line[start..end].parse().expect("number");
    format!("{}{}{}", &line[..start], f(v), &line[end..])
}

#[test]
fn a_changed_rate_limit_update_or_task_rate_diverges_at_its_line_and_exits_3() {
    // An update whose new base rate is one page/s off.
    let (path, line) = tampered("bdi_dirty_ratelimit:", 10, |l| {
        bump(l, "dirty_ratelimit", |v| v + 4)
    });
    let o = replay_dirty(&path);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let d = &json(&o)["first_divergence"];
    assert_eq!(d["line"], line, "{d:#}");
    assert_eq!(d["field"], "dirty_ratelimit", "{d:#}");
    // A pass held to 5 % less than its position gives.
    let (path, line) = tampered("balance_dirty_pages:", 200, |l| {
        bump(l, "task_ratelimit", |v| v - v / 20)
    });
    let o = replay_dirty(&path);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let d = &json(&o)["first_divergence"];
    assert_eq!(d["line"], line, "{d:#}");
    assert_eq!(d["field"], "task_ratelimit", "{d:#}");
}

#[test]
fn a_dirty_replay_starts_again_after_lost_events_and_refuses_absurd_values() {
    // A lost-events marker halfway: what straddles it is not checked, the
    // rest still agrees.
    let whole = json(&replay_dirty(&root().join(DIRTY_TRACES[0])));
    let (path, _) = tampered("bdi_dirty_ratelimit:", 20, |l| {
        format!("CPU:1 [LOST 42 EVENTS]\n{l}")
    });
    let o = replay_dirty(&path);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(r["lost_markers"], 1);
    assert_eq!(r["updates_agree"], r["updates"], "{r:#}");
    let unanchored = |v: &serde_json::Value| v["unanchored"]["updates"].as_u64().expect("n");
    assert_eq!(unanchored(&r), unanchored(&whole) + 1, "{r:#}");
    // A count no machine has is an input error at its line, not a wrong
    // answer.
    let (path, line) = tampered("balance_dirty_pages:", 30, |l| {
        bump(l, "wb_dirty", |_| u64::MAX / 2)
    });
    let o = replay_dirty(&path);
    refused(&o, &format!("trace.txt:{line}: wb_dirty="));
}

#[test]
fn a_dirty_replay_without_writeback_records_or_device_is_refused() {
    // The wbt bundles have no writeback records of their device.
    let o = iolab(&["kernel", "replay-dirty", BUNDLES[0]]);
    refused(&o, "no balance_dirty_pages records of device 7:0");
    let t = root().join(DIRTY_TRACES[0]);
    let o = iolab(&["kernel", "replay-dirty", t.to_str().expect("path")]);
    refused(&o, "--dev: needed when the trace is a file");
    let o = iolab(&[
        "kernel",
        "replay-dirty",
        t.to_str().expect("path"),
        "--dev",
        "7:1",
    ]);
    refused(&o, "no balance_dirty_pages records of device 7:1");
    // A capture without the rate-limit or the threshold records checks
    // nothing: refused, naming the event to enable.
    let text = std::fs::read_to_string(&t).expect("fixture");
    for (event, says) in [
        (
            "bdi_dirty_ratelimit:",
            "enable writeback:bdi_dirty_ratelimit",
        ),
        ("global_dirty_state:", "enable writeback:global_dirty_state"),
    ] {
        let kept: Vec<&str> = text.lines().filter(|l| !l.contains(event)).collect();
        let path = temp(&format!("without-{}", event.trim_end_matches(':'))).join("trace.txt");
        std::fs::write(&path, kept.join("\n") + "\n").expect("write");
        refused(&replay_dirty(&path), says);
    }
}

/// A fresh scratch directory `name` under Cargo's `target/tmp` (tests
/// leave nothing in the system's /tmp).
fn temp(name: &str) -> PathBuf {
    let d =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("iolab-kernel-test-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn replay_file(path: &Path) -> Output {
    let p = path.to_str().expect("utf-8 path");
    iolab(&[
        "kernel",
        "replay-wbt",
        p,
        "--dev",
        "7:0",
        "--queue-depth",
        "128",
        "--lat-usec",
        "2000",
    ])
}

#[test]
fn garbage_cut_or_foreign_traces_are_refused_at_their_file_and_line() {
    let dir = temp("bad-traces");
    let good = std::fs::read_to_string(root().join(CAT_TRACE)).expect("fixture");
    let lines: Vec<&str> = good.lines().collect();

    let garbage = dir.join("garbage.txt");
    let mut text = lines[..20].join("\n");
    text.push_str("\nthis is not a trace line\n");
    std::fs::write(&garbage, &text).expect("write");
    let o = replay_file(&garbage);
    refused(&o, &format!("{}:21: not a trace line", garbage.display()));

    let cut = dir.join("cut.txt");
    let last = lines[30];
    let text = format!("{}\n{}", lines[..30].join("\n"), &last[..last.len() - 12]);
    std::fs::write(&cut, text).expect("write");
    let o = replay_file(&cut);
    refused(&o, &format!("{}:31: wbt_", cut.display()));

    let foreign = dir.join("foreign.txt");
    let text: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.contains(" 7:0:"))
        .collect();
    std::fs::write(&foreign, text.join("\n")).expect("write");
    let o = replay_file(&foreign);
    refused(&o, "no wbt_timer records of device 7:0");
    assert!(
        stderr(&o).contains("lines name other devices"),
        "{}",
        stderr(&o)
    );

    let o = iolab(&[
        "kernel",
        "replay-wbt",
        "/dev/null",
        "--dev",
        "7:0",
        "--queue-depth",
        "1",
        "--lat-usec",
        "1",
    ]);
    refused(&o, "/dev/null: not a regular file");

    let o = replay_file(&dir.join("missing.txt"));
    refused(&o, "no such file or directory");
    let o = iolab(&[
        "kernel",
        "replay-wbt",
        CAT_TRACE,
        "--dev",
        "7:0",
        "--queue-depth",
        "128",
    ]);
    refused(&o, "--lat-usec: needed when the trace is a file");
    let o = iolab(&[
        "kernel",
        "replay-wbt",
        CAT_TRACE,
        "--dev",
        "sda",
        "--queue-depth",
        "1",
        "--lat-usec",
        "1",
    ]);
    refused(&o, "--dev: 'sda' is not a device number");
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

#[test]
fn a_bundle_without_its_metadata_or_with_broken_metadata_is_refused() {
    let dir = temp("bad-bundle");
    let src = root().join(BUNDLES[0]);
    std::fs::copy(src.join("trace.txt"), dir.join("trace.txt")).expect("copy");
    let d = dir.to_str().expect("utf-8");
    let o = iolab(&["kernel", "replay-wbt", d]);
    refused(&o, "not a capture bundle (no bundle.toml");
    let meta = std::fs::read_to_string(src.join("bundle.toml")).expect("meta");
    std::fs::write(
        dir.join("bundle.toml"),
        meta.replace("wbt_lat_usec = ", "wbt_lat_usec = \""),
    )
    .expect("write");
    let o = iolab(&["kernel", "replay-wbt", d]);
    assert_eq!(o.status.code(), Some(2));
    let line = meta
        .lines()
        .position(|l| l.starts_with("wbt_lat_usec"))
        .expect("key")
        + 1;
    assert!(
        stderr(&o).contains(&format!("bundle.toml:{line}:")),
        "{}",
        stderr(&o)
    );
    std::fs::write(
        dir.join("bundle.toml"),
        meta.replace("wbt_queue_depth = 128\n", ""),
    )
    .expect("write");
    let o = iolab(&["kernel", "replay-wbt", d]);
    refused(&o, "'wbt_queue_depth' is missing");
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

/// The tests that look at or change the machine run one at a time.
static MACHINE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// What a capture may change: loop devices, mounts, the queue settings of
/// every loop device, the files it makes, the tracing state.
fn machine_state() -> String {
    let mut s = String::new();
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    s.push_str(&mounts);
    let mut loops: Vec<_> = std::fs::read_dir("/sys/block")
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    loops.retain(|p: &PathBuf| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("loop"))
    });
    loops.sort();
    for l in loops {
        for f in [
            "loop/backing_file",
            "queue/wbt_lat_usec",
            "queue/nr_requests",
            "queue/scheduler",
        ] {
            let v = std::fs::read_to_string(l.join(f)).unwrap_or_else(|_| "-".into());
            s.push_str(&format!("{} {f} {}\n", l.display(), v.trim()));
        }
    }
    for dir in ["/var/tmp", "/dev/shm", "/tmp"] {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.retain(|n| n.starts_with("iolab-capture"));
        names.sort();
        s.push_str(&format!("{dir}: {names:?}\n"));
    }
    if let Some(t) = mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(2) == Some(&"tracefs")).then(|| f[1].to_owned())
    }) {
        for f in [
            "tracing_on",
            "buffer_size_kb",
            "trace_clock",
            "set_event",
            "current_tracer",
            "events/block/block_rq_issue/filter",
            "events/wbt/wbt_timer/filter",
        ] {
            let v = std::fs::read_to_string(Path::new(&t).join(f)).unwrap_or_default();
            s.push_str(&format!("{f}: {}\n", v.trim()));
        }
    }
    s
}

#[test]
fn a_capture_leaves_the_machine_as_it_found_it_or_changes_nothing_when_it_cannot_run() {
    let _one = MACHINE.lock().unwrap_or_else(|p| p.into_inner());
    let before = machine_state();
    let out = temp("capture").join("bundle");
    let out_s = out.to_str().expect("utf-8");
    let job = root().join("kernel/fixtures/mixed.fio");
    let job_text = std::fs::read_to_string(&job)
        .expect("job")
        .replace("runtime=6", "runtime=2");
    let short = out.with_file_name("short.fio");
    std::fs::write(&short, job_text).expect("write");
    let o = iolab(&[
        "kernel",
        "capture",
        short.to_str().expect("utf-8"),
        "--out",
        out_s,
        "--loop",
        "1g@/dev/shm",
        "--wbt-lat-usec",
        "500",
        "--nr-requests",
        "64",
    ]);
    let after = machine_state();
    assert_eq!(before, after, "the machine changed: {}", stderr(&o));
    if o.status.success() {
        // It ran: a bundle with everything, and the replay agrees on it.
        for f in [
            "bundle.toml",
            "trace.txt",
            "fio.json",
            "queue.txt",
            "vm.txt",
            "job.fio",
        ] {
            assert!(out.join(f).is_file(), "{f} missing");
        }
        let meta = std::fs::read_to_string(out.join("bundle.toml")).expect("meta");
        assert!(meta.contains("wbt_lat_usec = 500"), "{meta}");
        assert!(
            meta.contains("path = \"loop"),
            "the changed knobs are listed: {meta}"
        );
        let fio: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("fio.json")).expect("fio"))
                .expect("fio json");
        assert_eq!(fio["jobs"].as_array().map(Vec::len), Some(2));
        let o = iolab(&["kernel", "replay-wbt", out_s, "--output-format", "json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let r = json(&o);
        assert_eq!(r["agree"], r["windows"], "{r:#}");
    } else {
        // It could not: refused before any change (exit 2: missing tools,
        // tracing in use), or stopped by the machine (exit 1: a mount or a
        // loop device refused), saying why; either way it left nothing.
        let code = o.status.code();
        assert!(
            matches!(code, Some(1) | Some(2)),
            "{code:?}: {}",
            stderr(&o)
        );
        if code == Some(2) {
            assert!(
                stderr(&o).contains("nothing was changed")
                    || stderr(&o).contains("tracing is in use"),
                "{}",
                stderr(&o)
            );
        }
        assert!(!stderr(&o).is_empty());
        assert!(!out.exists());
    }
    std::fs::remove_dir_all(out.parent().expect("parent")).expect("cleanup");
}

#[test]
fn a_capture_takes_no_device_but_one_the_user_names_or_makes() {
    let _one = MACHINE.lock().unwrap_or_else(|p| p.into_inner());
    let before = machine_state();
    let dir = temp("refusals");
    let out = dir.join("b");
    let out_s = out.to_str().expect("utf-8");
    let job = "kernel/fixtures/mixed.fio";
    // No device given, a non-block device, a user device without consent.
    for (args, says) in [
        (vec![], "give the device"),
        (
            vec!["--dev", "/dev/null", "--destroy-data"],
            "/dev/null: not a block device",
        ),
        (vec!["--dev", "/dev/vda"], "add --destroy-data"),
        (
            vec!["--loop", "1g", "--loop", "1g"],
            "one device without --mirror",
        ),
        (
            vec!["--loop", "1g", "--mirror"],
            "--mirror: needs --fs btrfs and two devices",
        ),
        (vec!["--loop", "1m"], "too small"),
    ] {
        let mut a = vec!["kernel", "capture", job, "--out", out_s];
        a.extend(args.iter().copied());
        let o = iolab(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(!out.exists(), "{args:?} left {out_s}");
    }
    // A raw job must aim at the device it was given, nothing else.
    let raw = dir.join("raw.fio");
    std::fs::write(&raw, "[a]\nrw=read\nfilename=/dev/vda\nsize=1m\n").expect("write");
    let o = iolab(&[
        "kernel",
        "capture",
        raw.to_str().expect("utf-8"),
        "--out",
        out_s,
        "--loop",
        "1g",
        "--fs",
        "raw",
    ]);
    refused(
        &o,
        "raw.fio:3: filename: with --fs raw the job must say filename=${IOLAB_DEV}",
    );
    // A raw job that writes to a device the user named needs consent,
    // found before the device is even looked at (a name that is no
    // device: were the check missing, the run stops at "not a block
    // device" and writes nothing).
    let write = dir.join("write.fio");
    std::fs::write(
        &write,
        "[w]\nrw=randwrite\nfilename=${IOLAB_DEV}\nsize=1m\n",
    )
    .expect("write");
    let o = iolab(&[
        "kernel",
        "capture",
        write.to_str().expect("utf-8"),
        "--out",
        out_s,
        "--dev",
        "/dev/iolab-no-such-device",
        "--fs",
        "raw",
    ]);
    refused(
        &o,
        "writes to /dev/iolab-no-such-device (--fs raw), destroying its data there; add --destroy-data",
    );
    assert!(!out.exists());
    assert_eq!(before, machine_state());
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

#[test]
fn the_calibrated_device_files_load_and_name_their_probes() {
    for dev in CALIBRATED {
        let f = &format!("kernel/calibrated/{dev}.toml");
        let o = iolab(&["devices", f]);
        assert!(o.status.success(), "{f}: {}", stderr(&o));
        let text = std::fs::read_to_string(root().join(f)).expect("file");
        for key in [
            "host_io_us",
            "host_wake_us",
            "units",
            "read_us",
            "write_us",
            "read_mb_s",
            "write_mb_s",
            "flush_us",
            "service_sigma",
            "write_sigma",
        ] {
            let at = text
                .find(&format!("\n{key} = "))
                .unwrap_or_else(|| panic!("{f}: {key}"));
            let comment = text[..at].lines().last().unwrap_or("");
            assert!(
                comment.starts_with("# "),
                "{f}: {key} has no source comment"
            );
        }
        assert!(text.contains("# randread-4k-qd1 "), "{f}: the probe table");
        assert!(text.contains("\nkind = \"loop\"\n"), "{f}: the loop model");
    }
}

/// The committed device files (`kernel/calibrated/NAME.toml`), each
/// with its measurement (`NAME.probes/`).
const CALIBRATED: [&str; 7] = [
    "loop-disk",
    "loop-shm",
    "loop-disk-2026-12-03",
    "loop-shm-2026-12-03",
    "loop-disk-2026-12-04",
    "loop-disk-2026-12-07",
    "loop-disk-2026-12-07-pm",
];

/// The committed measurements with the repeated probes (the run
/// factor's): the first without the random writes' repeats.
const REPEATED: [&str; 2] = ["loop-disk-2026-12-07", "loop-disk-2026-12-07-pm"];

/// Each committed device file is what `iolab calibrate --from` fits from
/// the measurement kept beside it, byte for byte: the file is the tool's
/// output, and a change to the model or the fit shows up here. A QD1
/// probe whose median is no completion time is said on stderr once, as
/// the file's comments say it: on the RAM-backed device of 2026-12-03 for
/// both QD1 probes, on no other.
#[test]
fn the_calibrated_device_files_are_refitted_exactly_from_their_kept_probes() {
    let dir = temp("refit");
    for dev in CALIBRATED {
        let out = dir.join(format!("{dev}.toml"));
        let o = iolab(&[
            "calibrate",
            "--from",
            &format!("kernel/calibrated/{dev}.probes"),
            "--out",
            out.to_str().expect("utf-8"),
        ]);
        assert!(o.status.success(), "{dev}: {}", stderr(&o));
        let fitted = std::fs::read_to_string(&out).expect("fitted");
        let committed =
            std::fs::read_to_string(root().join(format!("kernel/calibrated/{dev}.toml")))
                .expect("committed");
        let said = |text: &str| text.matches("is no completion time of the device").count();
        let inline = if dev == "loop-shm-2026-12-03" { 2 } else { 0 };
        assert_eq!(said(&stderr(&o)), inline, "{dev}: {}", stderr(&o));
        assert_eq!(said(&committed), inline, "{dev}: the file's comments");
        // Only a measurement with the repeats fits a run factor; the
        // others say on stderr that they have none.
        let device = iolab_sim::device::DeviceConfig::from_toml(&committed).expect("loads");
        let runs = device.loop_dev.as_ref().expect("a loop device");
        let repeated = REPEATED.contains(&dev);
        assert_eq!(
            stderr(&o).contains("randwrite-4k-qd32 was not run again"),
            dev == REPEATED[0],
            "{dev}: {}",
            stderr(&o)
        );
        assert_eq!(
            runs.run_sigma > 0.0 && runs.write_run_sigma > 0.0,
            repeated,
            "{dev}: run factor"
        );
        assert_eq!(
            stderr(&o).contains("no repeated probes"),
            !repeated,
            "{dev}: {}",
            stderr(&o)
        );
        assert_eq!(
            fitted, committed,
            "{dev}: refit differs from the committed file"
        );
        // The printed table is the one appended to the file.
        let table = String::from_utf8_lossy(&o.stdout);
        for l in table.lines() {
            assert!(committed.contains(&format!("# {l}\n")), "{dev}: {l}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kept measurement with a file missing, a file that is not JSON, or a
/// fact of the wrong kind is refused naming the file; --from takes no
/// device.
#[test]
fn a_broken_kept_measurement_is_refused_at_its_file() {
    let dir = temp("kept");
    let kept = dir.join("probes");
    let src = root().join("kernel/calibrated/loop-shm.probes");
    let copy = || {
        let _ = std::fs::remove_dir_all(&kept);
        std::fs::create_dir_all(&kept).expect("dir");
        for e in std::fs::read_dir(&src).expect("probes") {
            let e = e.expect("entry");
            std::fs::copy(e.path(), kept.join(e.file_name())).expect("copy");
        }
    };
    let out = dir.join("out.toml");
    let refit = || {
        iolab(&[
            "calibrate",
            "--from",
            kept.to_str().expect("utf-8"),
            "--out",
            out.to_str().expect("utf-8"),
        ])
    };
    copy();
    std::fs::remove_file(kept.join("randread-4k-qd32.json")).expect("rm");
    refused(&refit(), "randread-4k-qd32.json");
    copy();
    std::fs::write(kept.join("write-1m-qd8.json"), "{\n\"jobs\": [\n").expect("cut");
    refused(&refit(), "write-1m-qd8.json:3: not JSON");
    copy();
    let facts = std::fs::read_to_string(kept.join("device.json")).expect("facts");
    std::fs::write(
        kept.join("device.json"),
        facts.replace("\"runtime\": 5", "\"runtime\": \"5\""),
    )
    .expect("facts");
    refused(
        &refit(),
        "device.json: \"runtime\" must be an integer from 1 to 600",
    );
    copy();
    std::fs::write(kept.join("read-1m-qd8.json"), "{\"jobs\": []}").expect("empty");
    refused(&refit(), "read-1m-qd8.json: no figures");
    // The repeated probes are all there or none; the random writes',
    // added later, each all or none.
    copy();
    let again = root().join(format!("kernel/calibrated/{}.probes", REPEATED[1]));
    for name in ["randread-4k-qd1.again-1.json", "write-1m-qd8.again-1.json"] {
        std::fs::copy(again.join(name), kept.join(name)).expect("copy");
    }
    refused(&refit(), "randread-4k-qd1.again-2.json: missing");
    for round in 1..=3 {
        for probe in ["randread-4k-qd1", "write-1m-qd8"] {
            let name = format!("{probe}.again-{round}.json");
            std::fs::copy(again.join(&name), kept.join(&name)).expect("copy");
        }
    }
    let name = "randwrite-4k-qd32.again-1.json";
    std::fs::copy(again.join(name), kept.join(name)).expect("copy");
    refused(&refit(), "randwrite-4k-qd32.again-2.json: missing");
    copy();
    std::fs::write(kept.join("read-1m-qd8.json"), "{\"jobs\": []}").expect("empty");
    refused(&refit(), "read-1m-qd8.json: no figures");
    assert!(!out.exists(), "nothing written on a refusal");
    let o = iolab(&[
        "calibrate",
        "--from",
        kept.to_str().expect("utf-8"),
        "--loop",
        "1g",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    refused(&o, "--loop");
    let _ = std::fs::remove_dir_all(&dir);
}

const FILECREATE_BUNDLE: &str = "kernel/fixtures/btrfs-filecreate";

/// The preemptive flusher's `FLUSH_DELAYED_REFS_NR` calls and the
/// tickets in a summary (`trace.btrfs`) or a run's report (`iolab.btrfs`).
fn preempt_refs_and_tickets(b: &serde_json::Value) -> (u64, u64) {
    let calls = b["flush_space"]
        .as_array()
        .expect("flush_space")
        .iter()
        .filter(|f| f["state"] == "FLUSH_DELAYED_REFS_NR" && f["preempt"] == true)
        .map(|f| f["calls"].as_u64().expect("calls"))
        .sum();
    (calls, b["tickets"].as_u64().expect("tickets"))
}

#[test]
fn creating_files_on_btrfs_is_kept_in_check_by_preemptive_flushing_alone_as_on_6_18() {
    // 6.18: four jobs create 100,000 files on a 4 GiB btrfs without one
    // ticket; the preemptive flusher runs delayed refs some twenty times.
    let o = iolab(&[
        "kernel",
        "summary",
        FILECREATE_BUNDLE,
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = json(&o);
    let (real_calls, real_tickets) = preempt_refs_and_tickets(&s["trace"]["btrfs"]);
    assert_eq!(real_tickets, 0, "{s:#}");
    assert!(real_calls >= 10, "{s:#}");
    // iolab on the calibrated loop device, at the capture's size, with the
    // flush policy 6.18 runs (a variant without flush=): no ticket either,
    // and the preemptive calls within a factor of two of the kernel's.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("iolab-filecreate");
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let device = dir.join("loop-disk-4g.toml");
    let calibrated =
        std::fs::read_to_string(root().join("kernel/calibrated/loop-disk.toml")).expect("device");
    let sized: String = calibrated
        .lines()
        .map(|l| {
            if l.starts_with("capacity_gb") {
                "capacity_gb = 4".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&device, sized).expect("write device");
    let job = format!("{FILECREATE_BUNDLE}/job.fio");
    let run = |policy: &str| {
        let o = iolab(&[
            "run",
            &job,
            "--device",
            device.to_str().expect("utf-8"),
            "--fs",
            "btrfs",
            "--cpus",
            "2",
            "--memory",
            "23g",
            "--policy",
            policy,
            "--output-format",
            "json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let r = json(&o);
        preempt_refs_and_tickets(&r["iolab"]["btrfs"])
    };
    let (calls, tickets) = run("none");
    assert_eq!(tickets, 0);
    assert!(
        calls * 2 >= real_calls && calls <= real_calls * 2,
        "iolab {calls} preemptive calls, 6.18 {real_calls}"
    );
    // Without preemptive flushing (5.0 to 5.11) the same creates wait on
    // tickets.
    let (calls, tickets) = run("flush=on-demand");
    assert_eq!(calls, 0);
    assert!(tickets > 100, "{tickets}");
}
