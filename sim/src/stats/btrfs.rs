//! The btrfs block printed under a comparison: per variant, what
//! the delayed-ref comparison needs beside bandwidth and latency — commits and
//! their rate, time in `Blocked`, ticket waits, and who ran the delayed
//! refs. It reads the run's `btrfs` JSON object (`world::btrfs`), so the
//! text and the JSON cannot disagree.

use std::fmt::Write;

use super::columns::{u64_at, variant_width};

use crate::time::Ns;

/// One variant: its name, its `iolab.btrfs` object, its simulated length.
pub type BtrfsRun<'a> = (&'a str, &'a serde_json::Value, Ns);

/// The table, or an empty string when no run used btrfs.
pub fn btrfs_table(runs: &[BtrfsRun<'_>]) -> String {
    let runs: Vec<&BtrfsRun<'_>> = runs.iter().filter(|r| r.1.is_object()).collect();
    if runs.is_empty() {
        return String::new();
    }
    let width = variant_width(runs.iter().map(|r| r.0));
    let mut out = String::from(
        "\nbtrfs: transaction commits (count, per minute of simulated time, their length in s), time writers were blocked in s, reservation tickets and their waits in ms, delayed-ref runs by context\n",
    );
    let _ = writeln!(
        out,
        "{:<width$}  {:>7}  {:>8}  {:>15}  {:>9}  {:>9}  {:>20}  {:>35}",
        "variant",
        "commits",
        "per min",
        "commit avg/max s",
        "blocked s",
        "tickets",
        "wait p50/p99/max ms",
        "refs run: worker/reclaim/preempt/commit"
    );
    for (name, b, sim_ns) in runs {
        let u = |path: &str| u64_at(b, path);
        let f = |path: &str| {
            b.pointer(path)
                .and_then(serde_json::Value::as_f64)
                .unwrap_or(0.0)
        };
        let commits = u("/commits");
        let per_min = if *sim_ns == 0 {
            0.0
        } else {
            commits as f64 * 60e9 / *sim_ns as f64
        };
        let ms = |path: &str| u(path) as f64 / 1e6;
        let _ = writeln!(
            out,
            "{:<width$}  {:>7}  {:>8.2}  {:>15}  {:>9.1}  {:>9}  {:>20}  {:>35}",
            name,
            commits,
            per_min,
            format!(
                "{:.1}/{:.1}",
                f("/commit_ms/mean") / 1e3,
                f("/commit_ms/max") / 1e3
            ),
            f("/blocked_ms") / 1e3,
            u("/tickets"),
            format!(
                "{:.2}/{:.2}/{:.1}",
                ms("/ticket_wait_ns/p50"),
                ms("/ticket_wait_ns/p99"),
                ms("/ticket_wait_ns/max")
            ),
            format!(
                "{}/{}/{}/{}",
                u("/refs_run_by/ref_worker"),
                u("/refs_run_by/reclaim"),
                u("/refs_run_by/preempt"),
                u("/refs_run_by/commit")
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_from_the_btrfs_object_and_other_runs_are_skipped() {
        let b = serde_json::json!({
            "commits": 2,
            "commit_ms": {"mean": 1500.0, "max": 2500.0},
            "blocked_ms": 250.0,
            "tickets": 7,
            "ticket_wait_ns": {"p50": 1_000_000, "p99": 2_500_000, "max": 30_000_000},
            "refs_run_by": {"ref_worker": 1, "reclaim": 2, "preempt": 3, "commit": 4},
        });
        let none = serde_json::Value::Null;
        assert_eq!(btrfs_table(&[("xfs", &none, 1)]), "");
        let t = btrfs_table(&[("od", &b, 60_000_000_000), ("xfs", &none, 1)]);
        let row = t.lines().find(|l| l.starts_with("od")).expect("od row");
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells,
            [
                "od",
                "2",
                "2.00",
                "1.5/2.5",
                "0.2",
                "7",
                "1.00/2.50/30.0",
                "1/2/3/4"
            ]
        );
        assert!(!t.contains("xfs"));
    }
}
