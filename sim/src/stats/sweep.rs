//! The sweep table printed under a comparison whose `--policies` swept a
//! knob (`wbt:lat={1,2,5}ms`): one row per point of the grid, and for
//! each report entry and direction its bandwidth, mean completion latency
//! and 99th-percentile completion latency, each as mean ± the half-width
//! of its 95 % confidence interval over the seeds ([`MeanCi`]), so a
//! metric reads down a column against the knob.

use super::Dir;
use super::spread::MeanCi;
use super::summary::{SummaryRun, aligned, clat_p99_ns, entry_dirs};

/// The table of one sweep: `text` as the user wrote it, and each point's
/// runs (one per seed).
pub fn sweep_table(text: &str, points: &[&[SummaryRun<'_>]]) -> String {
    let seeds = points.iter().map(|p| p.len()).max().unwrap_or(0);
    let mut out = format!(
        "\nsweep {text}: mean ± 95 % confidence interval over {seeds} seed{}; MB/s are 10^6 bytes a second, latencies ms\n",
        if seeds == 1 { "" } else { "s" }
    );
    let Some(first) = points.first().and_then(|p| p.first()) else {
        return out;
    };
    // (entry index, direction, header) of each column group.
    let mut cols: Vec<(usize, Dir, String)> = Vec::new();
    for (e, job) in first.report.jobs.iter().enumerate() {
        for dir in [Dir::Read, Dir::Write, Dir::Trim] {
            if job.dir(dir).total_ios > 0 {
                cols.push((e, dir, format!("{} {}", job.name, dir.name())));
            }
        }
    }
    let mut header = vec!["point".to_owned()];
    for (_, _, name) in &cols {
        header.push(format!("{name} MB/s"));
        header.push(format!("{name} lat avg"));
        header.push(format!("{name} lat p99"));
    }
    let mut rows = vec![header];
    for p in points {
        let mut row = vec![p.first().map_or("", |r| r.variant).to_owned()];
        for &(e, dir, _) in &cols {
            let ds = entry_dirs(p, e, dir);
            let ci = |xs: Vec<f64>| MeanCi::of(&xs).format(3);
            row.push(ci(ds.iter().map(|d| d.bw_bytes as f64 / 1e6).collect()));
            row.push(ci(ds.iter().map(|d| d.clat.mean / 1e6).collect()));
            row.push(clat_p99_ns(&ds).map_or_else(
                || "-".to_owned(),
                |p99| ci(p99.iter().map(|ns| ns / 1e6).collect()),
            ));
        }
        rows.push(row);
    }
    out.push_str(&aligned(&rows, 1));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::report::{DirReport, JobReport, LatSummary, RunReport};

    fn report(bw: u64, p99_ns: u64) -> RunReport {
        let read = DirReport {
            total_ios: 10,
            bw_bytes: bw,
            clat: LatSummary {
                mean: 2_000_000.0,
                percentiles: vec![(50.0, 1_000_000), (99.0, p99_ns)],
                n: 10,
                ..LatSummary::default()
            },
            ..DirReport::default()
        };
        RunReport {
            jobs: vec![JobReport {
                name: "reader".into(),
                dirs: [read, DirReport::default(), DirReport::default()],
                ..JobReport::default()
            }],
            ..RunReport::default()
        }
    }

    #[test]
    fn one_row_per_point_and_a_column_per_metric() {
        let reps = [
            report(1_000_000, 4_000_000),
            report(3_000_000, 6_000_000),
            report(5_000_000, 9_000_000),
        ];
        let run = |variant, r| SummaryRun {
            variant,
            report: r,
            device_bytes: [0, 0],
            sim_ns: 1,
        };
        let a = [run("wbt:lat=1ms", &reps[0]), run("wbt:lat=1ms", &reps[1])];
        let b = [run("wbt:lat=5ms", &reps[2])];
        let t = sweep_table("wbt:lat={1,5}ms", &[&a, &b]);
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[1].starts_with("sweep wbt:lat={1,5}ms: mean ± 95 %"),
            "{t}"
        );
        assert!(lines[1].contains("over 2 seeds"), "{t}");
        let cols: Vec<&str> = lines[2].split("  ").filter(|c| !c.is_empty()).collect();
        assert_eq!(
            cols.iter().map(|c| c.trim()).collect::<Vec<_>>(),
            [
                "point",
                "reader read MB/s",
                "reader read lat avg",
                "reader read lat p99"
            ]
        );
        // 1 and 3 MB/s: 2 ± 12.706 · 1.414 / 1.414.
        assert!(lines[3].starts_with("wbt:lat=1ms"), "{t}");
        assert!(lines[3].contains("2.000 ± 12.706"), "{t}");
        assert!(lines[3].contains("5.000 ± 12.706"), "{t}");
        assert!(lines[4].starts_with("wbt:lat=5ms"), "{t}");
        assert!(
            lines[4].contains("5.000") && lines[4].contains("9.000"),
            "{t}"
        );
        assert!(!lines[4].contains('±'), "one seed: values alone: {t}");
    }
}
