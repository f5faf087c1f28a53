//! The sweep table printed under a comparison whose `--policies` swept a
//! knob (`wbt:lat={1,2,5}ms`): one row per point of the grid, and for
//! each report entry and direction its bandwidth, mean completion latency
//! and 99th-percentile completion latency, each as mean ± the half-width
//! of its 95 % confidence interval over the seeds ([`MeanCi`]), so a
//! metric reads down a column against the knob.

use super::Dir;
use super::figures::{DirFigures, RunFigures};
use super::spread::MeanCi;
use super::summary::{SummaryRun, aligned, clat_p99_ns};

/// What a sweep shows of one point for one report entry and direction,
/// over its runs (one per seed): each figure's mean and 95 % interval.
#[derive(Clone, Copy, Debug)]
pub struct PointFigures {
    /// Bandwidth, MB/s (10^6 bytes a second).
    pub bw_mb_s: MeanCi,
    /// Mean completion latency, ms.
    pub lat_avg_ms: MeanCi,
    /// 99th-percentile completion latency, ms; `None` when a run has no
    /// 99th percentile.
    pub lat_p99_ms: Option<MeanCi>,
}

/// The [`PointFigures`] of entry `e`'s direction `dir` over `runs`,
/// leaving out runs without that entry. The sweep table prints them, and
/// `--plot` draws them.
pub fn point_figures<'r>(
    runs: impl IntoIterator<Item = &'r RunFigures>,
    e: usize,
    dir: Dir,
) -> PointFigures {
    let ds: Vec<&DirFigures> = runs
        .into_iter()
        .filter_map(|r| r.entries.get(e))
        .map(|j| j.dir(dir))
        .collect();
    let ci =
        |f: &dyn Fn(&DirFigures) -> f64| MeanCi::of(&ds.iter().map(|d| f(d)).collect::<Vec<_>>());
    PointFigures {
        bw_mb_s: ci(&|d| d.bw_bytes as f64 / 1e6),
        lat_avg_ms: ci(&|d| d.clat.mean / 1e6),
        lat_p99_ms: clat_p99_ns(&ds)
            .map(|p99| MeanCi::of(&p99.iter().map(|ns| ns / 1e6).collect::<Vec<_>>())),
    }
}

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
    for (e, job) in first.figures.entries.iter().enumerate() {
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
            let f = point_figures(p.iter().map(|r| r.figures), e, dir);
            row.push(f.bw_mb_s.format(3));
            row.push(f.lat_avg_ms.format(3));
            row.push(f.lat_p99_ms.map_or_else(|| "-".to_owned(), |c| c.format(3)));
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
                buckets: Vec::new(),
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
        ]
        .map(|r| RunFigures::of(&r, [0, 0], 1));
        let run = |variant, figures| SummaryRun { variant, figures };
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
