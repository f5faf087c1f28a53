//! Runs and comparisons over several seeds: every run kept, figures as
//! mean ± 95 % CI, significant differences starred, and output that does
//! not depend on the number of threads.

use std::path::PathBuf;

mod common;

use common::{iolab, root, stderr, stdout};

/// The bundled wbt job cut to 5 s, in a temporary directory of this test
/// process.
fn short_wbt() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("iolab-seeds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join("short-wbt.fio");
    let text = std::fs::read_to_string(root().join("scenarios/wbt-fdatasync-writers.fio"))
        .expect("scenario")
        .replace("runtime=300", "runtime=5");
    std::fs::write(&p, text).expect("write job");
    p
}

fn compare(job: &str, policies: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "compare",
        job,
        "--device",
        "sata-ssd",
        "--memory",
        "6g",
        "--policies",
        policies,
    ];
    args.extend_from_slice(extra);
    iolab(&args)
}

#[test]
fn output_is_the_same_on_one_thread_and_on_three() {
    let job = short_wbt();
    let j = job.to_str().expect("utf-8");
    for format in ["normal", "json"] {
        let run = |jobs: &str| {
            let o = compare(
                j,
                "none,wbt",
                &["--seeds", "3", "--jobs", jobs, "--output-format", format],
            );
            assert!(o.status.success(), "{}", stderr(&o));
            o.stdout
        };
        let one = run("1");
        assert!(!one.is_empty());
        assert_eq!(one, run("3"), "{format} output differs with --jobs");
    }
}

#[test]
fn the_json_keeps_every_run_as_its_own_seed_would_give_it() {
    let job = short_wbt();
    let j = job.to_str().expect("utf-8");
    let o = compare(
        j,
        "none,wbt",
        &["--seeds", "4..6", "--output-format", "json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["baseline"], "none");
    assert_eq!(v["seeds"], serde_json::json!([4, 5, 6]));
    let runs = v["runs"].as_array().cloned().unwrap_or_default();
    let order: Vec<(String, u64)> = runs
        .iter()
        .map(|r| {
            (
                r["variant"].as_str().unwrap_or("").to_owned(),
                r["seed"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let want: Vec<(String, u64)> = ["none", "wbt"]
        .iter()
        .flat_map(|p| [4, 5, 6].map(|s| ((*p).to_owned(), s)))
        .collect();
    assert_eq!(order, want);
    // The run for (wbt, 5) is the one `--seed 5` makes on its own.
    let single = compare(j, "none,wbt", &["--seed", "5", "--output-format", "json"]);
    assert!(single.status.success(), "{}", stderr(&single));
    let s: serde_json::Value = serde_json::from_slice(&single.stdout).expect("JSON");
    assert_eq!(runs[4]["result"], s["runs"][1]["result"]);
    // The aggregates: one per variant, each figure a mean and an interval.
    let agg = &v["aggregates"][1];
    assert_eq!(agg["variant"], "wbt");
    assert_eq!(agg["seeds"], 3);
    let reader = agg["entries"]
        .as_array()
        .and_then(|es| es.iter().find(|e| e["name"] == "reader"))
        .cloned()
        .unwrap_or_default();
    let bws: Vec<f64> = runs[3..6]
        .iter()
        .filter_map(|r| r["result"]["jobs"][1]["read"]["bw_bytes"].as_f64())
        .collect();
    assert_eq!(bws.len(), 3);
    let mean = bws.iter().sum::<f64>() / 3.0;
    assert!((reader["bw_bytes"]["mean"].as_f64().unwrap_or(0.0) - mean).abs() < 1e-6);
    assert!(reader["bw_bytes"]["ci95"].as_f64().is_some_and(|h| h > 0.0));
    assert!(reader["clat_p99_ns"]["mean"].as_f64().is_some());
}

#[test]
fn differences_are_starred_only_where_the_seeds_show_them() {
    let job = short_wbt();
    let j = job.to_str().expect("utf-8");
    let o = compare(j, "none,none", &["--seeds", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let same = stdout(&o);
    let table = &same[..same.find("seeds pooled").unwrap_or(same.len())];
    assert!(!table.contains('*'), "{same}");
    assert!(same.contains("Welch's t-test at 95 %"), "{same}");
    assert!(same.contains("over 3 seeds"), "{same}");
    // The Stddev row now ranges over seeds: not zero for the reader.
    let stddev = same
        .lines()
        .find(|l| l.starts_with("Stddev   kb/sec-reader-read"))
        .unwrap_or("");
    let value: f64 = stddev
        .split_whitespace()
        .nth(2)
        .and_then(|x| x.parse().ok())
        .unwrap_or(0.0);
    assert!(value > 0.0, "{stddev}");
    // WBT halves the writers: a starred Hmean.
    let o = compare(j, "none,wbt", &["--seeds", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let hmean = out
        .lines()
        .find(|l| l.starts_with("Hmean    kb/sec-writer-write"))
        .unwrap_or("");
    assert_eq!(hmean.matches('*').count(), 2, "{out}");
    assert!(out.contains(" ± "), "{out}");
}

#[test]
fn run_over_seeds_prints_intervals_and_writes_a_trace_per_seed() {
    let job = short_wbt();
    let j = job.to_str().expect("utf-8");
    let trace = job.with_extension("trace");
    let t = trace.to_str().expect("utf-8");
    let o = iolab(&[
        "run", j, "--device", "sata-ssd", "--memory", "6g", "--policy", "wbt", "--seeds", "1,3",
        "--trace", t,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("over 2 seeds"), "{out}");
    assert!(out.contains("reader  read   wbt"), "{out}");
    for seed in [1, 3] {
        let text = std::fs::read_to_string(format!("{t}.{seed}")).expect("trace per seed");
        assert!(text.contains("wbt_timer"));
    }
    assert!(!std::path::Path::new(&format!("{t}.2")).exists());
    let o = iolab(&[
        "run",
        j,
        "--device",
        "sata-ssd",
        "--memory",
        "6g",
        "--seeds",
        "2",
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["variant"], "none");
    assert_eq!(v["runs"][1]["seed"], 2);
    assert_eq!(v["runs"][1]["result"]["iolab"]["seed"], 2);
    assert_eq!(v["aggregate"]["seeds"], 2);
}

#[test]
fn bad_seed_lists_and_thread_counts_exit_2() {
    let job = short_wbt();
    let j = job.to_str().expect("utf-8");
    for (args, says) in [
        (vec!["--seeds", "0"], "at least one seed"),
        (vec!["--seeds", "3..1"], "empty"),
        (vec!["--seeds", "1,1"], "given twice"),
        (vec!["--seeds", "2000"], "more than 1000"),
        (vec!["--jobs", "0"], "--jobs 0"),
        (vec!["--jobs", "5000"], "at most 1024"),
        (vec!["--seeds", "2", "--seed", "4"], "cannot be used with"),
    ] {
        let o = compare(j, "none", &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
}
