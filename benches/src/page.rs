//! The benchmarks page: each variant's cost per operation, from
//! criterion's estimates of one saved baseline (`--save-baseline`), with
//! the 95 % confidence interval criterion gives for the mean, and the
//! machine it ran on.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The baseline name `scripts/benchmarks.sh` saves under.
pub const BASELINE: &str = "benchmarks-page";

/// The groups the page shows, in order: criterion group id, title, and
/// what one operation is.
pub const GROUPS: [(&str, &str, &str); 7] = [
    (
        "wbt",
        "blk-wbt (`iolab-wbt`)",
        "one write admitted and completed: on the pure core, through the threaded `Throttle` (alone, two threads, the async face); tokio's `Semaphore`, a `Mutex`+`Condvar` semaphore and an atomic pair are the yardsticks",
    ),
    (
        "iocost",
        "blk-iocost issue path (`iolab-iocost`)",
        "one 4 KiB read submitted and completed on a controller with two groups",
    ),
    (
        "iocost_period_timer",
        "blk-iocost period timer (`iolab-iocost`)",
        "one period's timer with N active groups (the parameter)",
    ),
    (
        "flush",
        "btrfs delayed-ref flushing (`iolab-flush`)",
        "adding a ref; a commit running 32 heads' refs; a ticket queued and granted; one reclaim flush decision",
    ),
    (
        "tiering_alloc_chunk",
        "chunk allocators (`iolab-tiering`)",
        "one chunk placed on a volume of N devices (the parameter)",
    ),
    (
        "tiering_read_policy",
        "RAID1 read policies (`iolab-tiering`)",
        "one read's mirror chosen",
    ),
    (
        "faces",
        "threaded faces (`iolab-iocost`, `iolab-flush`)",
        "a grant acquired and completed, a reservation made and released; tokio's `Semaphore` as the yardstick",
    ),
];

/// One benchmark's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub group: String,
    pub function: String,
    /// The parameter (`BenchmarkId`'s second part), if any.
    pub value: Option<String>,
    /// Mean time per iteration and its 95 % interval, ns.
    pub mean_ns: f64,
    pub lower_ns: f64,
    pub upper_ns: f64,
}

/// Where the page's figures were measured.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Machine {
    pub cpu: String,
    pub cpus: usize,
    pub kernel: String,
    pub rustc: String,
    /// `YYYY-MM-DD`, UTC.
    pub date: String,
}

/// Every estimate saved under `baseline` below `criterion_dir` (criterion's
/// output directory), sorted by group (in [`GROUPS`]' order, others
/// last), then function and parameter.
pub fn read_estimates(criterion_dir: &Path, baseline: &str) -> Result<Vec<Estimate>, String> {
    let mut dirs = Vec::new();
    find(criterion_dir, baseline, &mut dirs)?;
    let mut out = Vec::new();
    for d in dirs {
        let read = |name: &str| -> Result<serde_json::Value, String> {
            let p = d.join(name);
            let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
        };
        let b = read("benchmark.json")?;
        let e = read("estimates.json")?;
        let num = |v: &serde_json::Value, what: &str| {
            v.as_f64()
                .ok_or_else(|| format!("{}: no {what}", d.join("estimates.json").display()))
        };
        let text = |v: &serde_json::Value| v.as_str().map(str::to_owned);
        out.push(Estimate {
            group: text(&b["group_id"]).ok_or_else(|| format!("{}: no group_id", d.display()))?,
            function: text(&b["function_id"]).unwrap_or_default(),
            value: text(&b["value_str"]),
            mean_ns: num(&e["mean"]["point_estimate"], "mean")?,
            lower_ns: num(
                &e["mean"]["confidence_interval"]["lower_bound"],
                "lower bound",
            )?,
            upper_ns: num(
                &e["mean"]["confidence_interval"]["upper_bound"],
                "upper bound",
            )?,
        });
    }
    // A parameter that is a number sorts as one (2 before 16).
    let key = |e: &Estimate| {
        let rank = GROUPS
            .iter()
            .position(|(id, _, _)| *id == e.group)
            .unwrap_or(usize::MAX);
        let number = e.value.as_deref().and_then(|v| v.parse::<u64>().ok());
        (
            rank,
            e.group.clone(),
            e.function.clone(),
            number,
            e.value.clone(),
        )
    };
    out.sort_by_key(key);
    Ok(out)
}

/// The directories named `baseline` below `dir`.
fn find(dir: &Path, baseline: &str, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut subdirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    for p in subdirs {
        if p.file_name().is_some_and(|n| n == baseline) {
            if p.join("estimates.json").is_file() {
                out.push(p);
            }
        } else {
            find(&p, baseline, out)?;
        }
    }
    Ok(())
}

/// A time in ns with three figures and its unit.
pub fn time(ns: f64) -> String {
    let (v, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let decimals = if v < 10.0 {
        2
    } else if v < 100.0 {
        1
    } else {
        0
    };
    format!("{v:.decimals$} {unit}")
}

/// The page: a table per group of [`GROUPS`] that has estimates (a group
/// without any is named as missing), each row one benchmark and variant
/// or parameter with its mean and interval; estimates of other groups
/// are left out and counted.
pub fn render(estimates: &[Estimate], machine: &Machine, command: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Benchmarks: each variant's cost per operation\n");
    let _ = writeln!(
        out,
        "Written by `{command}` from criterion's estimates; do not edit by hand. \
         Each row is one benchmark of `benches/benches/` for one variant (or \
         parameter): criterion's mean time per operation and the 95 % confidence \
         interval of that mean, over its samples of one run on one machine. \
         Compare rows within a table, run on the same machine at the same time; \
         figures from another machine or day differ.\n"
    );
    let _ = writeln!(
        out,
        "Machine: {} ({} logical CPUs), Linux {}, {}, measured {}.\n",
        machine.cpu, machine.cpus, machine.kernel, machine.rustc, machine.date
    );
    for (id, title, what) in GROUPS {
        let rows: Vec<&Estimate> = estimates.iter().filter(|e| e.group == id).collect();
        let _ = writeln!(out, "## {title}\n");
        let _ = writeln!(out, "Criterion group `{id}`: {what}.\n");
        if rows.is_empty() {
            let _ = writeln!(out, "Not measured in this run.\n");
            continue;
        }
        let _ = writeln!(out, "| benchmark | variant or parameter | mean | 95 % CI |");
        let _ = writeln!(out, "|---|---|---:|---:|");
        for e in rows {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} – {} |",
                e.function,
                e.value.as_deref().unwrap_or("—"),
                time(e.mean_ns),
                time(e.lower_ns),
                time(e.upper_ns),
            );
        }
        out.push('\n');
    }
    let others = estimates
        .iter()
        .filter(|e| !GROUPS.iter().any(|(id, _, _)| *id == e.group))
        .count();
    if others > 0 {
        let _ = writeln!(
            out,
            "{others} estimate{} of other groups under the same baseline are not shown.",
            if others == 1 { "" } else { "s" }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("iolab-page-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("scratch");
        d
    }

    /// Writes one benchmark's files as criterion does.
    fn bench(
        root: &Path,
        dir: &str,
        baseline: &str,
        group: &str,
        f: &str,
        v: Option<&str>,
        mean: f64,
    ) {
        let d = root.join(dir).join(baseline);
        std::fs::create_dir_all(&d).expect("dir");
        let b = serde_json::json!({ "group_id": group, "function_id": f, "value_str": v });
        std::fs::write(d.join("benchmark.json"), b.to_string()).expect("write");
        let e = serde_json::json!({ "mean": {
            "confidence_interval": { "confidence_level": 0.95, "lower_bound": mean * 0.9, "upper_bound": mean * 1.1 },
            "point_estimate": mean, "standard_error": 1.0 } });
        std::fs::write(d.join("estimates.json"), e.to_string()).expect("write");
    }

    #[test]
    fn the_page_has_a_row_per_variant_with_its_interval() {
        let root = scratch("rows");
        bench(
            &root,
            "wbt/core_admit_complete/v5",
            BASELINE,
            "wbt",
            "core_admit_complete",
            Some("v5"),
            41.0,
        );
        bench(
            &root,
            "wbt/core_admit_complete/modern",
            BASELINE,
            "wbt",
            "core_admit_complete",
            Some("modern"),
            38.25,
        );
        bench(
            &root,
            "flush/add_ref/catch-up",
            BASELINE,
            "flush",
            "add_ref",
            Some("catch-up"),
            2_500.0,
        );
        // Another baseline and another group: not on the page's tables.
        bench(
            &root,
            "wbt/core_admit_complete/old",
            "base",
            "wbt",
            "core_admit_complete",
            Some("old"),
            1.0,
        );
        bench(&root, "sim/x", BASELINE, "sim", "x", None, 5.0);
        let est = read_estimates(&root, BASELINE).expect("read");
        assert_eq!(est.len(), 4);
        assert_eq!(est[0].group, "wbt");
        assert_eq!(est.last().map(|e| e.group.as_str()), Some("sim"));
        let machine = Machine {
            cpu: "Test CPU".into(),
            cpus: 2,
            kernel: "6.18".into(),
            rustc: "rustc 1.95.0".into(),
            date: "2026-12-07".into(),
        };
        let page = render(&est, &machine, "scripts/benchmarks.sh");
        assert!(
            page.contains("| core_admit_complete | modern | 38.2 ns | 34.4 ns – 42.1 ns |"),
            "{page}"
        );
        assert!(
            page.contains("| core_admit_complete | v5 | 41.0 ns | 36.9 ns – 45.1 ns |"),
            "{page}"
        );
        assert!(
            page.contains("| add_ref | catch-up | 2.50 µs | 2.25 µs – 2.75 µs |"),
            "{page}"
        );
        assert!(!page.contains("| old |"), "{page}");
        assert!(
            page.contains(
                "Test CPU (2 logical CPUs), Linux 6.18, rustc 1.95.0, measured 2026-12-07"
            )
        );
        assert!(page.contains("1 estimate of other groups"), "{page}");
        // Groups without a result say so.
        assert!(page.contains("## RAID1 read policies (`iolab-tiering`)\n\nCriterion group `tiering_read_policy`: one read's mirror chosen.\n\nNot measured in this run."), "{page}");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_broken_estimate_is_named() {
        let root = scratch("broken");
        let d = root.join("wbt/x").join(BASELINE);
        std::fs::create_dir_all(&d).expect("dir");
        std::fs::write(d.join("benchmark.json"), "{\"group_id\": \"wbt\"}").expect("write");
        std::fs::write(d.join("estimates.json"), "{}").expect("write");
        let e = read_estimates(&root, BASELINE).expect_err("no mean");
        assert!(e.contains("estimates.json: no mean"), "{e}");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn times_have_three_figures() {
        assert_eq!(time(38.25), "38.2 ns");
        assert_eq!(time(1_234.0), "1.23 µs");
        assert_eq!(time(123_456.0), "123 µs");
        assert_eq!(time(2.5e9), "2.50 s");
    }
}
