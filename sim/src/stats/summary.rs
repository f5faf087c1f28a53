//! The per-variant summary printed under a comparison table: device
//! throughput (what `iostat` shows) and, per report entry, throughput and
//! completion-latency min/avg/max/stddev in milliseconds (and, for an
//! entry that syncs, its fsync latencies on a `sync` row) — the figures
//! Paolo Valente's benchmark scripts print, and that a reader of the
//! mmtests table otherwise has to dig out of the JSON.

use std::fmt::Write;

use super::Dir;
use super::columns::variant_width;
use super::report::RunReport;
use crate::time::Ns;

/// One variant's inputs to the summary.
#[derive(Clone, Copy, Debug)]
pub struct SummaryRun<'a> {
    /// Column name (the variant spec).
    pub variant: &'a str,
    /// The run's report.
    pub report: &'a RunReport,
    /// Bytes every device completed, read and written.
    pub device_bytes: [u64; 2],
    /// Simulated duration of the run.
    pub sim_ns: Ns,
}

fn mb_per_s(bytes: u64, ns: Ns) -> f64 {
    if ns == 0 {
        0.0
    } else {
        bytes as f64 * 1e3 / ns as f64
    }
}

/// The summary text: a device block, then one row per report entry,
/// direction with IO and variant, in report order.
pub fn summary_table(runs: &[SummaryRun<'_>]) -> String {
    let mut out = String::new();
    let width = variant_width(runs.iter().map(|r| r.variant));
    let _ = writeln!(
        out,
        "\n{:<width$}  {:>12}  {:>12}",
        "variant", "dev read MB/s", "dev write MB/s"
    );
    for r in runs {
        let _ = writeln!(
            out,
            "{:<width$}  {:>13.2}  {:>14.2}",
            r.variant,
            mb_per_s(r.device_bytes[0], r.sim_ns),
            mb_per_s(r.device_bytes[1], r.sim_ns)
        );
    }
    let name_w = runs
        .iter()
        .flat_map(|r| r.report.jobs.iter().map(|j| j.name.len()))
        .chain(std::iter::once(5))
        .max()
        .unwrap_or(5);
    let _ = writeln!(
        out,
        "\n{:<name_w$}  {:<5}  {:<width$}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}",
        "entry", "dir", "variant", "MB/s", "lat min ms", "lat avg ms", "lat max ms", "lat sd ms"
    );
    let Some(first) = runs.first() else {
        return out;
    };
    for (e, job) in first.report.jobs.iter().enumerate() {
        for dir in Dir::ALL {
            if job.dir(dir).total_ios == 0 {
                continue;
            }
            for r in runs {
                let Some(j) = r.report.jobs.get(e) else {
                    continue;
                };
                let d = j.dir(dir);
                let ms = |ns: f64| ns / 1e6;
                let _ = writeln!(
                    out,
                    "{:<name_w$}  {:<5}  {:<width$}  {:>10.3}  {:>10.3}  {:>10.3}  {:>10.3}  {:>10.3}",
                    job.name,
                    dir.name(),
                    r.variant,
                    d.bw_bytes as f64 / 1e6,
                    ms(d.clat.min as f64),
                    ms(d.clat.mean),
                    ms(d.clat.max as f64),
                    ms(d.clat.stddev),
                );
            }
        }
        if job.sync.lat.n == 0 {
            continue;
        }
        for r in runs {
            let Some(j) = r.report.jobs.get(e) else {
                continue;
            };
            let s = &j.sync.lat;
            let ms = |ns: f64| ns / 1e6;
            let _ = writeln!(
                out,
                "{:<name_w$}  {:<5}  {:<width$}  {:>10}  {:>10.3}  {:>10.3}  {:>10.3}  {:>10.3}",
                job.name,
                "sync",
                r.variant,
                "-",
                ms(s.min as f64),
                ms(s.mean),
                ms(s.max as f64),
                ms(s.stddev),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::report::{DirReport, JobReport, LatSummary};

    fn report(bw_bytes: u64, mean_ns: f64) -> RunReport {
        let mut read = DirReport {
            total_ios: 10,
            bw_bytes,
            ..DirReport::default()
        };
        read.clat = LatSummary {
            min: 110_000,
            max: 6_250_000,
            mean: mean_ns,
            stddev: 210_000.0,
            n: 10,
            percentiles: Vec::new(),
        };
        RunReport {
            jobs: vec![JobReport {
                name: "interfered".into(),
                dirs: [read, DirReport::default(), DirReport::default()],
                ..JobReport::default()
            }],
            ..RunReport::default()
        }
    }

    #[test]
    fn rows_give_device_rates_and_entry_latencies_in_ms() {
        let (a, b) = (report(657_000, 6_237_300.0), report(4_780_000, 860_000.0));
        let t = summary_table(&[
            SummaryRun {
                variant: "none",
                report: &a,
                device_bytes: [10_928_435_200, 0],
                sim_ns: 20_000_000_000,
            },
            SummaryRun {
                variant: "iocost",
                report: &b,
                device_bytes: [8_584_000_000, 0],
                sim_ns: 20_000_000_000,
            },
        ]);
        assert!(t.contains("none            546.42            0.00"), "{t}");
        assert!(t.contains("iocost          429.20            0.00"), "{t}");
        assert!(
            t.contains("interfered  read   none          0.657       0.110       6.237       6.250       0.210"),
            "{t}"
        );
        assert!(
            t.contains("interfered  read   iocost        4.780       0.110       0.860       6.250       0.210"),
            "{t}"
        );
        // No write rows: no entry wrote; no sync rows: none synced.
        assert!(!t.contains("write  none"), "{t}");
        assert!(!t.contains("sync"), "{t}");
    }

    #[test]
    fn an_entry_that_syncs_gets_a_row_of_fsync_latencies() {
        let mut a = report(657_000, 6_237_300.0);
        a.jobs[0].sync.lat = LatSummary {
            min: 4_000_000,
            max: 63_125_000,
            mean: 38_654_610.0,
            stddev: 6_370_940.0,
            n: 16_000,
            percentiles: Vec::new(),
        };
        let t = summary_table(&[SummaryRun {
            variant: "alloc=stock",
            report: &a,
            device_bytes: [0, 0],
            sim_ns: 1,
        }]);
        assert!(
            t.contains(
                "interfered  sync   alloc=stock           -       4.000      38.655      63.125       6.371"
            ),
            "{t}"
        );
    }
}
