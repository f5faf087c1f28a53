//! The per-variant summary printed under a comparison table: device
//! throughput (what `iostat` shows) and, per report entry, throughput and
//! completion-latency min/avg/max/stddev in milliseconds (and, for an
//! entry that syncs, its fsync latencies on a `sync` row) — the figures
//! Paolo Valente's benchmark scripts print, and that a reader of the
//! mmtests table otherwise has to dig out of the JSON.

use std::fmt::Write;

use super::Dir;
use super::columns::variant_width;
use super::figures::{DirFigures, LatFigures, RunFigures};
use super::spread::MeanCi;
use crate::time::Ns;

/// One run's inputs to the summary: its variant and its figures.
#[derive(Clone, Copy, Debug)]
pub struct SummaryRun<'a> {
    /// Column name (the variant spec).
    pub variant: &'a str,
    pub figures: &'a RunFigures,
}

fn mb_per_s(bytes: u64, ns: Ns) -> f64 {
    if ns == 0 {
        0.0
    } else {
        bytes as f64 * 1e3 / ns as f64
    }
}

/// The device table's caption.
const DEVICE_CAPTION: &str =
    "devices: bytes all devices completed, read and written, over the simulated run, MB/s\n";

/// The entry table's caption.
const ENTRY_CAPTION: &str = "entries: each entry's bandwidth in MB/s and its completion latency (clat) in ms; a sync row is its fsyncs' latency\n";

/// The summary text: a device block, then one row per report entry,
/// direction with IO and variant, in report order.
pub fn summary_table(runs: &[SummaryRun<'_>]) -> String {
    let mut out = String::new();
    let width = variant_width(runs.iter().map(|r| r.variant));
    let _ = write!(out, "\n{DEVICE_CAPTION}");
    let _ = writeln!(
        out,
        "{:<width$}  {:>12}  {:>12}",
        "variant", "dev read MB/s", "dev write MB/s"
    );
    for r in runs {
        let _ = writeln!(
            out,
            "{:<width$}  {:>13.2}  {:>14.2}",
            r.variant,
            mb_per_s(r.figures.device_bytes[0], r.figures.sim_ns),
            mb_per_s(r.figures.device_bytes[1], r.figures.sim_ns)
        );
    }
    let name_w = runs
        .iter()
        .flat_map(|r| r.figures.entries.iter().map(|j| j.name.len()))
        .chain(std::iter::once(5))
        .max()
        .unwrap_or(5);
    let _ = write!(out, "\n{ENTRY_CAPTION}");
    let _ = writeln!(
        out,
        "{:<name_w$}  {:<5}  {:<width$}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}",
        "entry", "dir", "variant", "MB/s", "lat min ms", "lat avg ms", "lat max ms", "lat sd ms"
    );
    let Some(first) = runs.first() else {
        return out;
    };
    for (e, job) in first.figures.entries.iter().enumerate() {
        for dir in Dir::ALL {
            if job.dir(dir).total_ios == 0 {
                continue;
            }
            for r in runs {
                let Some(j) = r.figures.entries.get(e) else {
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
        if job.sync.n == 0 {
            continue;
        }
        for r in runs {
            let Some(j) = r.figures.entries.get(e) else {
                continue;
            };
            let s = &j.sync;
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

/// Entry `e`'s direction `dir` in each of `runs` (one per seed), leaving
/// out runs without that entry.
pub(crate) fn entry_dirs<'r>(runs: &[SummaryRun<'r>], e: usize, dir: Dir) -> Vec<&'r DirFigures> {
    runs.iter()
        .filter_map(|r| r.figures.entries.get(e))
        .map(|j| j.dir(dir))
        .collect()
}

/// The 99th-percentile completion latency (ns) of each of `ds`, or `None`
/// when one of them has no such percentile.
pub(crate) fn clat_p99_ns(ds: &[&DirFigures]) -> Option<Vec<f64>> {
    ds.iter().map(|d| d.clat.p99.map(|ns| ns as f64)).collect()
}

/// Left-aligned first columns and right-aligned rest, each column as wide
/// as its widest cell, two spaces apart.
pub(crate) fn aligned(rows: &[Vec<String>], left: usize) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            let pad = widths[c].saturating_sub(cell.chars().count());
            if c < left {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', pad));
            } else {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The summary over seeds: each variant's runs (one per seed, all of the
/// same scenario) give every figure of [`summary_table`] as its mean ± the
/// half-width of its 95 % confidence interval over the seeds
/// ([`MeanCi`]), under a caption saying so. Entries are matched by their
/// position in the report, as in [`summary_table`].
pub fn summary_table_over_seeds(variants: &[&[SummaryRun<'_>]]) -> String {
    let seeds = variants.iter().map(|v| v.len()).max().unwrap_or(0);
    let mut out = format!(
        "\nmean ± 95 % confidence interval over {seeds} seeds (Student's t); MB/s are 10^6 bytes a second\n"
    );
    let name = |v: &[SummaryRun<'_>]| v.first().map_or("", |r| r.variant).to_owned();
    let ci = |xs: Vec<f64>, decimals: usize| MeanCi::of(&xs).format(decimals);
    let mut dev = vec![vec![
        "variant".to_owned(),
        "dev read MB/s".to_owned(),
        "dev write MB/s".to_owned(),
    ]];
    for v in variants {
        let rate = |i: usize| -> Vec<f64> {
            v.iter()
                .map(|r| mb_per_s(r.figures.device_bytes[i], r.figures.sim_ns))
                .collect()
        };
        dev.push(vec![name(v), ci(rate(0), 2), ci(rate(1), 2)]);
    }
    out.push_str(DEVICE_CAPTION);
    out.push_str(&aligned(&dev, 1));
    let mut rows = vec![
        [
            "entry",
            "dir",
            "variant",
            "MB/s",
            "lat min ms",
            "lat avg ms",
            "lat max ms",
            "lat sd ms",
        ]
        .map(str::to_owned)
        .to_vec(),
    ];
    let Some(first) = variants.first().and_then(|v| v.first()) else {
        out.push('\n');
        return out;
    };
    let ms = |ns: f64| ns / 1e6;
    for (e, job) in first.figures.entries.iter().enumerate() {
        for dir in Dir::ALL {
            if job.dir(dir).total_ios == 0 {
                continue;
            }
            for v in variants {
                let ds = entry_dirs(v, e, dir);
                let of = |f: &dyn Fn(&DirFigures) -> f64| -> String {
                    ci(ds.iter().map(|d| f(d)).collect(), 3)
                };
                rows.push(vec![
                    job.name.clone(),
                    dir.name().to_owned(),
                    name(v),
                    of(&|d| d.bw_bytes as f64 / 1e6),
                    of(&|d| ms(d.clat.min as f64)),
                    of(&|d| ms(d.clat.mean)),
                    of(&|d| ms(d.clat.max as f64)),
                    of(&|d| ms(d.clat.stddev)),
                ]);
            }
        }
        if job.sync.n == 0 {
            continue;
        }
        for v in variants {
            let ss: Vec<&LatFigures> = v
                .iter()
                .filter_map(|r| r.figures.entries.get(e))
                .map(|j| &j.sync)
                .collect();
            let of = |f: &dyn Fn(&LatFigures) -> f64| -> String {
                ci(ss.iter().map(|s| f(s)).collect(), 3)
            };
            rows.push(vec![
                job.name.clone(),
                "sync".to_owned(),
                name(v),
                "-".to_owned(),
                of(&|s| ms(s.min as f64)),
                of(&|s| ms(s.mean)),
                of(&|s| ms(s.max as f64)),
                of(&|s| ms(s.stddev)),
            ]);
        }
    }
    out.push('\n');
    out.push_str(ENTRY_CAPTION);
    out.push_str(&aligned(&rows, 3));
    out
}

/// `{"mean", "ci95"}` of `xs` for JSON: `ci95` is the interval's
/// half-width, null below two values.
fn mean_ci_json(xs: &[f64]) -> serde_json::Value {
    let ci = MeanCi::of(xs);
    let num = |v: f64| {
        serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number)
    };
    serde_json::json!({ "mean": num(ci.mean), "ci95": num(ci.half_width) })
}

/// The figures of [`summary_table_over_seeds`] for one variant as JSON:
/// `{"seeds": n, "device": {...}, "entries": [{"name", "dir", "bw_bytes",
/// "iops", "clat_mean_ns", "clat_p99_ns", "clat_max_ns"}]}`, each figure
/// `{"mean", "ci95"}` over the runs (`clat_p99_ns` from fio's 99th
/// percentile, left out when the runs have none).
pub fn aggregate_json(runs: &[SummaryRun<'_>]) -> serde_json::Value {
    let rate = |i: usize| -> Vec<f64> {
        runs.iter()
            .map(|r| mb_per_s(r.figures.device_bytes[i], r.figures.sim_ns))
            .collect()
    };
    let mut entries = Vec::new();
    if let Some(first) = runs.first() {
        for (e, job) in first.figures.entries.iter().enumerate() {
            for dir in Dir::ALL {
                if job.dir(dir).total_ios == 0 {
                    continue;
                }
                let ds = entry_dirs(runs, e, dir);
                let of = |f: &dyn Fn(&DirFigures) -> f64| {
                    mean_ci_json(&ds.iter().map(|d| f(d)).collect::<Vec<f64>>())
                };
                let mut entry = serde_json::json!({
                    "name": job.name,
                    "dir": dir.name(),
                    "bw_bytes": of(&|d| d.bw_bytes as f64),
                    "iops": of(&|d| d.iops),
                    "clat_mean_ns": of(&|d| d.clat.mean),
                    "clat_max_ns": of(&|d| d.clat.max as f64),
                });
                if let Some(p99) = clat_p99_ns(&ds) {
                    entry["clat_p99_ns"] = mean_ci_json(&p99);
                }
                entries.push(entry);
            }
        }
    }
    serde_json::json!({
        "seeds": runs.len(),
        "device": {
            "read_mb_s": mean_ci_json(&rate(0)),
            "write_mb_s": mean_ci_json(&rate(1)),
        },
        "entries": entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::report::{DirReport, JobReport, LatSummary, RunReport};

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
            buckets: Vec::new(),
            bins: Vec::new(),
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
        let a = RunFigures::of(
            &report(657_000, 6_237_300.0),
            [10_928_435_200, 0],
            20_000_000_000,
        );
        let b = RunFigures::of(
            &report(4_780_000, 860_000.0),
            [8_584_000_000, 0],
            20_000_000_000,
        );
        let t = summary_table(&[
            SummaryRun {
                variant: "none",
                figures: &a,
            },
            SummaryRun {
                variant: "iocost",
                figures: &b,
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
        assert!(
            !t.lines()
                .any(|l| l.split_whitespace().nth(1) == Some("sync")),
            "{t}"
        );
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
            buckets: Vec::new(),
            bins: Vec::new(),
        };
        let a = RunFigures::of(&a, [0, 0], 1);
        let t = summary_table(&[SummaryRun {
            variant: "alloc=stock",
            figures: &a,
        }]);
        assert!(
            t.contains(
                "interfered  sync   alloc=stock           -       4.000      38.655      63.125       6.371"
            ),
            "{t}"
        );
    }

    /// Each report's figures as one seed, at 200 MB/s of device reads.
    fn figures(reports: &[RunReport]) -> Vec<RunFigures> {
        reports
            .iter()
            .map(|r| RunFigures::of(r, [2_000_000_000, 0], 10_000_000_000))
            .collect()
    }

    /// Each run as one seed of `none`.
    fn as_seeds(figures: &[RunFigures]) -> Vec<SummaryRun<'_>> {
        figures
            .iter()
            .map(|f| SummaryRun {
                variant: "none",
                figures: f,
            })
            .collect()
    }

    #[test]
    fn over_seeds_every_figure_is_a_mean_with_its_interval() {
        let seeds = figures(&[report(600_000, 6_000_000.0), report(700_000, 7_000_000.0)]);
        let runs = as_seeds(&seeds);
        let t = summary_table_over_seeds(&[&runs, &runs[..1]]);
        assert!(t.contains("over 2 seeds"), "{t}");
        // Two values 0.6 and 0.7: mean 0.65, s = 0.0707, t(0.975, 1) = 12.706.
        let half = 12.7062 * (0.005f64).sqrt() / 2f64.sqrt();
        assert!(t.contains(&format!("0.650 ± {half:.3}")), "{t}");
        assert!(t.contains("6.500 ± 6.353"), "{t}");
        // The device rate does not vary: ± 0.
        assert!(t.contains("200.00 ± 0.00"), "{t}");
        // One seed: the value alone.
        let lines: Vec<&str> = t.lines().filter(|l| l.starts_with("interfered")).collect();
        assert_eq!(lines.len(), 2, "{t}");
        assert_eq!(lines[1].split_whitespace().nth(3), Some("0.600"), "{t}");
        assert!(!lines[1].contains('±'), "{t}");
    }

    #[test]
    fn the_aggregate_json_holds_each_figure_with_its_interval() {
        let seeds = figures(&[report(600_000, 6_000_000.0), report(700_000, 7_000_000.0)]);
        let runs = as_seeds(&seeds);
        let j = aggregate_json(&runs);
        assert_eq!(j["seeds"], 2);
        assert_eq!(j["device"]["read_mb_s"]["mean"], 200.0);
        assert_eq!(j["device"]["read_mb_s"]["ci95"], 0.0);
        let e = &j["entries"][0];
        assert_eq!(e["name"], "interfered");
        assert_eq!(e["dir"], "read");
        assert_eq!(e["bw_bytes"]["mean"], 650_000.0);
        let half = e["clat_mean_ns"]["ci95"].as_f64().unwrap_or(0.0);
        // 6 and 7 ms: s = 0.707 ms, so t(0.975, 1) · s / √2 = 12.7062 · 0.5 ms.
        assert!((half - 12.7062 * 500_000.0).abs() < 1.0, "{half}");
        // The reports carry no percentiles: no p99.
        assert!(e.get("clat_p99_ns").is_none());
        // One run: no interval.
        assert!(aggregate_json(&runs[..1])["entries"][0]["bw_bytes"]["ci95"].is_null());
    }
}
