//! `--plot DIR`: SVG figures of a run or a comparison, drawn with plotters'
//! SVG backend alone (text is left to the viewer, so no font is needed):
//!
//! - `clat-pct-ENTRY-DIR.svg`: each variant's completion-latency
//!   percentiles for one report entry and direction (fio's, 1 % to
//!   99.99 %), drawn as HdrHistogram draws them: the percentile on a
//!   log(1/(1 − p)) axis, so 90, 99, 99.9 and 99.99 % are evenly apart,
//!   and the latency on a logarithmic axis;
//! - `sync-pct-ENTRY.svg`: the same of its fsync/fdatasync latency, for
//!   an entry that syncs;
//! - `read-latency-JOB.svg`: each variant's read latency over time in the
//!   10 ms windows mmtests' latency rows read, for one reading job;
//! - `bw-JOB-DIR.svg` and `iops-JOB-DIR.svg`: each variant's bandwidth
//!   and IOPS over time, in bins of those windows (at most 200 bins), for
//!   each job name (its clones summed) and direction with IO;
//! - the figures over time are small multiples, a panel per variant on a
//!   shared scale (drawn on one another the last would hide the rest);
//! - `policy-wbt.svg`, `policy-iocost.svg`, `policy-btrfs.svg`: the policies' own state
//!   over time from each variant's trace, a panel per variant with that
//!   policy (`policy::policy_figures`);
//! - `sweep-N-ENTRY-DIR-bw.svg` and `sweep-N-ENTRY-DIR-lat.svg`, for the
//!   N-th knob sweep of `--policies` (from 1) and each report entry and
//!   direction: its bandwidth, and its mean and 99th-percentile completion
//!   latency, against the sweep's points, each point the mean over the
//!   seeds with its 95 % confidence interval as a bar (no bar with one
//!   seed).
//!
//! The first four kinds draw one seed, and their titles name it: under
//! `--seeds`, the first. The sweep figures draw every seed.

use std::path::{Path, PathBuf};

use iolab_sim::stats::{self, Dir, MeanCi, RunReport};
use plotters::prelude::*;

use crate::Failure;

mod policy;

/// Series colours, one per variant in order; past eight, [`colour`]
/// draws more.
const COLOURS: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];

const SIZE: (u32, u32) = (800, 500);

/// The most variants the figures over time and the policy figures draw,
/// the first of the plan's (a sweep's figures draw every point): more
/// panels than this are no figure to read, and each variant drawn keeps
/// its first run whole until the end.
pub const MOST_DRAWN: usize = 40;

/// Series `i`'s colour: the eight above, then hues a golden angle apart
/// at two lightnesses, so no two of a sweep's series share one.
fn colour(i: usize) -> RGBColor {
    if let Some(&c) = COLOURS.get(i) {
        return c;
    }
    let k = (i - COLOURS.len()) as f64;
    let hue = (k * 0.618_033_988_75).fract();
    let light = if (i - COLOURS.len()).is_multiple_of(2) {
        0.35
    } else {
        0.55
    };
    let (r, g, b) = HSLColor(hue, 0.7, light).rgb();
    RGBColor(r, g, b)
}

/// One figure's data: its series, one per variant, as (x, y) points.
struct Figure {
    file: String,
    title: String,
    x_desc: String,
    y_desc: &'static str,
    log_x: bool,
    /// The percentile axis: x is log10(1/(1 − p)), labelled as p; y is
    /// log10 of the latency in µs, labelled as the latency.
    percentile: bool,
    series: Vec<(String, Vec<(f64, f64)>)>,
    /// Per series, each point's confidence half-width (drawn as a bar),
    /// or empty: no bars.
    bars: Vec<Vec<f64>>,
    /// Names of the x positions 0, 1, … (a sweep's points), or empty: a
    /// numeric axis.
    x_names: Vec<String>,
    /// One panel per series, stacked on a shared scale (small multiples),
    /// where drawn on one another they would hide each other.
    panels: bool,
    /// With `panels`: the panel of each series (several lines a panel,
    /// coloured by their place in it), or empty: a panel per series.
    panel_of: Vec<usize>,
}

/// A figure of lines over time in stacked panels on a shared scale:
/// `panel_of` gives each series' panel, or is empty for a panel per
/// series.
fn over_time(
    file: String,
    title: String,
    x_desc: &str,
    y_desc: &'static str,
    series: Vec<(String, Vec<(f64, f64)>)>,
    panel_of: Vec<usize>,
) -> Figure {
    Figure {
        file,
        title,
        x_desc: x_desc.to_owned(),
        y_desc,
        log_x: false,
        percentile: false,
        series,
        bars: Vec::new(),
        x_names: Vec::new(),
        panels: true,
        panel_of,
    }
}

/// One knob sweep of `--policies`: its text, and each point's variant
/// name with its runs' figures, one per seed.
pub struct Sweep<'a> {
    pub text: &'a str,
    pub points: Vec<(&'a str, Vec<&'a stats::RunFigures>)>,
}

/// A file-name-safe form of `s`.
fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn figures(runs: &[(&str, &RunReport)], seed: u64) -> Vec<Figure> {
    let of_seed = format!(", seed {seed}");
    let mut out = Vec::new();
    let Some((_, first)) = runs.first() else {
        return out;
    };
    for (e, job) in first.jobs.iter().enumerate() {
        for dir in [Dir::Read, Dir::Write] {
            if job.dir(dir).total_ios == 0 {
                continue;
            }
            let series = percentile_series(runs, e, |j| &j.dir(dir).clat.percentiles);
            out.push(Figure {
                file: format!("clat-pct-{}-{}.svg", slug(&job.name), dir.name()),
                title: format!(
                    "{} {}: completion latency percentiles{of_seed}",
                    job.name,
                    dir.name()
                ),
                x_desc: "percentile".to_owned(),
                y_desc: "completion latency (µs, log scale)",
                log_x: false,
                percentile: true,
                series,
                bars: Vec::new(),
                x_names: Vec::new(),
                panels: false,
                panel_of: Vec::new(),
            });
        }
    }
    for (e, job) in first.jobs.iter().enumerate() {
        if job.sync.lat.percentiles.is_empty() {
            continue;
        }
        let series = percentile_series(runs, e, |j| &j.sync.lat.percentiles);
        out.push(Figure {
            file: format!("sync-pct-{}.svg", slug(&job.name)),
            title: format!("{}: fsync/fdatasync latency percentiles{of_seed}", job.name),
            x_desc: "percentile".to_owned(),
            y_desc: "sync latency (µs, log scale)",
            log_x: false,
            percentile: true,
            series,
            bars: Vec::new(),
            x_names: Vec::new(),
            panels: false,
            panel_of: Vec::new(),
        });
    }
    let mut seen: Vec<&str> = Vec::new();
    for s in &first.series {
        if s.dirs[Dir::Read.index()].is_empty() || seen.contains(&s.name.as_str()) {
            continue;
        }
        seen.push(&s.name);
        let series = runs
            .iter()
            .map(|(name, r)| {
                let points = r
                    .series
                    .iter()
                    .find(|x| x.name == s.name)
                    .map(|x| {
                        x.dirs[Dir::Read.index()]
                            .iter()
                            .map(|(ms, ns)| (f64::from(ms) / 1e3, ns as f64 / 1e6))
                            .collect()
                    })
                    .unwrap_or_default();
                ((*name).to_owned(), points)
            })
            .collect();
        out.push(over_time(
            format!("read-latency-{}.svg", slug(&s.name)),
            format!(
                "{}: read latency, {} ms windows{of_seed}",
                s.name,
                s.window_ns / 1_000_000
            ),
            "time since the job started (s)",
            "mean read latency in the window (ms)",
            series,
            Vec::new(),
        ));
    }
    out.extend(over_time_figures(runs, &of_seed));
    out
}

/// Bandwidth and IOPS over time: for each job name (its clones summed)
/// and direction with IO, each variant's rate in bins of the windows of
/// fio's averaged logs (see [`binned`]).
fn over_time_figures(runs: &[(&str, &RunReport)], of_seed: &str) -> Vec<Figure> {
    let mut out = Vec::new();
    let Some((_, first)) = runs.first() else {
        return out;
    };
    let mut names: Vec<&str> = Vec::new();
    for s in &first.series {
        if !names.contains(&s.name.as_str()) {
            names.push(&s.name);
        }
    }
    for name in names {
        for dir in [Dir::Read, Dir::Write] {
            let all: Vec<_> = runs.iter().map(|(_, r)| windows_of(r, name, dir)).collect();
            // A job and direction the first variant did no IO in has no figure.
            let Some(window_ms) = all.first().filter(|w| !w.0.is_empty()).map(|w| w.1) else {
                continue;
            };
            // One bin length for every variant: the longest run's windows
            // in at most RATE_POINTS bins.
            let span = all
                .iter()
                .filter_map(|(w, _)| w.last().map(|l| l.0 + 1))
                .max()
                .unwrap_or(1);
            let per_bin = span.div_ceil(RATE_POINTS).max(1);
            let bin_ms = window_ms * per_bin;
            let kinds: [RateKind; 2] = [
                ("bw", "bandwidth", "bandwidth in the window (MB/s)", |p| p.1),
                ("iops", "IOPS", "IOs per second in the window", |p| p.2),
            ];
            for (kind, what, unit, pick) in kinds {
                let series = runs
                    .iter()
                    .zip(&all)
                    .map(|((v, _), (w, ms))| {
                        let pts = binned(w, *ms, per_bin)
                            .iter()
                            .map(|p| (p.0, pick(p)))
                            .collect();
                        ((*v).to_owned(), pts)
                    })
                    .collect();
                out.push(over_time(
                    format!("{kind}-{}-{}.svg", slug(name), dir.name()),
                    format!("{name} {}: {what}, {bin_ms} ms bins{of_seed}", dir.name()),
                    "time since the job started (s)",
                    unit,
                    series,
                    Vec::new(),
                ));
            }
        }
    }
    out
}

/// One window's `(end s, MB/s, IOPS)`.
type Rate = (f64, f64, f64);

/// An over-time figure's `(file prefix, title word, y axis, value)`.
type RateKind = (&'static str, &'static str, &'static str, fn(&Rate) -> f64);

/// Points a rate figure has at most: finer windows are added up into
/// bins of whole windows, so a line stays readable (a 1 MiB writer's
/// 10 ms windows hold zero or one IO each).
const RATE_POINTS: u64 = 200;

/// The log windows of the jobs called `name` in direction `dir`, clones
/// summed: `(window index from 0, bytes, IOs)` in time order, and the
/// window length, ms.
fn windows_of(r: &RunReport, name: &str, dir: Dir) -> (Vec<(u64, u64, u64)>, u64) {
    let mut sums: std::collections::BTreeMap<u64, (u64, u64)> = std::collections::BTreeMap::new();
    let mut window_ms = 1;
    for s in r.series.iter().filter(|s| s.name == name) {
        window_ms = (s.window_ns / 1_000_000).max(1);
        for w in s.dirs[dir.index()].windows() {
            // Window k (from 0) ends at k + 1 windows.
            let k = (u64::from(w.end_ms) / window_ms).saturating_sub(1);
            let e = sums.entry(k).or_default();
            e.0 += w.bytes;
            e.1 += u64::from(w.ios);
        }
    }
    (
        sums.into_iter().map(|(k, (b, n))| (k, b, n)).collect(),
        window_ms,
    )
}

/// `windows` (from [`windows_of`]) added up in bins of `per_bin` windows
/// from the job's start, from the first bin with a completion to the last
/// (a bin between without one is zero).
fn binned(windows: &[(u64, u64, u64)], window_ms: u64, per_bin: u64) -> Vec<Rate> {
    let (Some(first), Some(last)) = (windows.first(), windows.last()) else {
        return Vec::new();
    };
    let secs = (window_ms * per_bin) as f64 / 1e3;
    let mut pts = Vec::new();
    let mut bin = first.0 / per_bin;
    let mut i = 0;
    while bin <= last.0 / per_bin {
        let (mut bytes, mut ios) = (0, 0);
        while i < windows.len() && windows[i].0 / per_bin == bin {
            bytes += windows[i].1;
            ios += windows[i].2;
            i += 1;
        }
        let end_s = ((bin + 1) * per_bin * window_ms) as f64 / 1e3;
        pts.push((end_s, bytes as f64 / 1e6 / secs, ios as f64 / secs));
        bin += 1;
    }
    pts
}

/// The two figures of each entry and direction of each sweep.
fn sweep_figures(sweeps: &[Sweep<'_>]) -> Vec<Figure> {
    let mut out = Vec::new();
    for (n, sw) in sweeps.iter().enumerate() {
        let Some(first) = sw.points.first().and_then(|(_, r)| r.first()) else {
            continue;
        };
        let seeds = sw.points.iter().map(|(_, r)| r.len()).max().unwrap_or(0);
        let names: Vec<String> = sw.points.iter().map(|(v, _)| (*v).to_owned()).collect();
        // A numeric knob is drawn on its own axis (logarithmic where it
        // spans a decade or more); another as named points.
        let knob = numeric_knob(&names);
        let (xs, x_names, x_desc, log_x) = match &knob {
            Some((values, desc)) => {
                let (lo, hi) = values
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
                let log = lo > 0.0 && hi / lo >= 10.0;
                (values.clone(), Vec::new(), desc.clone(), log)
            }
            None => (
                (0..names.len()).map(|i| i as f64).collect(),
                names.clone(),
                "sweep point".to_owned(),
                false,
            ),
        };
        for (e, job) in first.entries.iter().enumerate() {
            for dir in [Dir::Read, Dir::Write] {
                if job.dir(dir).total_ios == 0 {
                    continue;
                }
                let figures: Vec<stats::PointFigures> = sw
                    .points
                    .iter()
                    .map(|(_, runs)| stats::point_figures(runs.iter().copied(), e, dir))
                    .collect();
                // One figure at every point: (x, mean) and the half-widths
                // (0 where the interval is undefined), points without a
                // mean left out.
                let line = |of: &dyn Fn(&stats::PointFigures) -> Option<MeanCi>| {
                    figures
                        .iter()
                        .enumerate()
                        .filter_map(|(i, f)| of(f).map(|c| (i, c)))
                        .filter(|(_, c)| c.mean.is_finite())
                        .map(|(i, c)| {
                            let h = if c.half_width.is_finite() {
                                c.half_width
                            } else {
                                0.0
                            };
                            ((xs[i], c.mean), h)
                        })
                        .unzip::<_, _, Vec<_>, Vec<_>>()
                };
                let (bw, bw_bars) = line(&|f| Some(f.bw_mb_s));
                let (avg, avg_bars) = line(&|f| Some(f.lat_avg_ms));
                let (p99, p99_bars) = line(&|f| f.lat_p99_ms);
                let stem = format!("sweep-{}-{}-{}", n + 1, slug(&job.name), dir.name());
                let title = |what: &str| {
                    format!(
                        "{} {}: {what} against {}, mean and 95 % CI over {seeds} seed{}",
                        job.name,
                        dir.name(),
                        sw.text,
                        if seeds == 1 { "" } else { "s" }
                    )
                };
                out.push(Figure {
                    file: format!("{stem}-bw.svg"),
                    title: title("bandwidth"),
                    x_desc: x_desc.clone(),
                    y_desc: "bandwidth (MB/s)",
                    log_x,
                    percentile: false,
                    series: vec![("MB/s".to_owned(), bw)],
                    bars: vec![bw_bars],
                    x_names: x_names.clone(),
                    panels: false,
                    panel_of: Vec::new(),
                });
                out.push(Figure {
                    file: format!("{stem}-lat.svg"),
                    title: title("completion latency"),
                    x_desc: x_desc.clone(),
                    y_desc: "completion latency (ms)",
                    log_x,
                    percentile: false,
                    series: vec![("mean".to_owned(), avg), ("p99".to_owned(), p99)],
                    bars: vec![avg_bars, p99_bars],
                    x_names: x_names.clone(),
                    panels: false,
                    panel_of: Vec::new(),
                });
            }
        }
    }
    out
}

fn bounds(f: &Figure) -> ((f64, f64), (f64, f64)) {
    let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0.0f64);
    for (i, (_, points)) in f.series.iter().enumerate() {
        let bars = f.bars.get(i);
        for (k, &(x, y)) in points.iter().enumerate() {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y1 = y1.max(y + bars.and_then(|b| b.get(k)).copied().unwrap_or(0.0));
        }
    }
    if !f.x_names.is_empty() {
        let last = (f.x_names.len() - 1) as f64;
        return ((-0.5, last + 0.5), (0.0, (y1 * 1.1).max(1e-3)));
    }
    if x0 > x1 {
        (x0, x1) = (1.0, 10.0);
    }
    if f.percentile {
        // Up to p99.99 (x = 4); the latency's range with room above and
        // below, a constant latency too.
        let (mut lo, mut hi) = (f64::MAX, 0.0f64);
        for (_, points) in &f.series {
            for &(_, y) in points {
                lo = lo.min(y);
                hi = hi.max(y);
            }
        }
        if lo > hi {
            (lo, hi) = (0.0, 1.0);
        }
        // A factor of two of room each side (log10 2 = 0.301).
        return ((0.0, x1.max(4.0)), (lo - 0.301, hi + 0.301));
    }
    if f.log_x {
        ((x0 / 1.5, x1 * 1.5), (0.0, (y1 * 1.1).max(1e-3)))
    } else {
        ((0.0, x1.max(x0 + 1e-3)), (0.0, (y1 * 1.1).max(1e-3)))
    }
}

/// Each variant's points of report entry `e`'s percentiles `of` it, on
/// the percentile figures' axes.
fn percentile_series(
    runs: &[(&str, &RunReport)],
    e: usize,
    of: impl Fn(&stats::JobReport) -> &Vec<(f64, u64)>,
) -> Vec<(String, Vec<(f64, f64)>)> {
    runs.iter()
        .map(|(name, r)| {
            let points = r
                .jobs
                .get(e)
                .map(|j| {
                    of(j)
                        .iter()
                        .map(|&(p, ns)| (percentile_x(p), log_us(ns)))
                        .collect()
                })
                .unwrap_or_default();
            ((*name).to_owned(), points)
        })
        .collect()
}

/// A sweep's knob as numbers, when its points' names differ only in a
/// number (`wbt:lat=2ms`, `wbt:lat=20ms`): each point's value, and the
/// axis's name (`wbt:lat=…ms`).
fn numeric_knob(names: &[String]) -> Option<(Vec<f64>, String)> {
    let first = names.first()?;
    if names.len() < 2 {
        return None;
    }
    let common = |a: &str, b: &str| a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let number = |c: char| c.is_ascii_digit() || c == '.';
    let mut pre = names.iter().map(|n| common(first, n)).min()?;
    let rev: Vec<String> = names.iter().map(|n| n.chars().rev().collect()).collect();
    let mut suf = rev.iter().map(|n| common(&rev[0], n)).min()?;
    let chars: Vec<char> = first.chars().collect();
    // Not into the number itself (2 and 20 share a 2).
    while pre > 0 && number(chars[pre - 1]) {
        pre -= 1;
    }
    while suf > 0 && number(chars[chars.len() - suf]) {
        suf -= 1;
    }
    let values = names
        .iter()
        .map(|n| {
            let c: Vec<char> = n.chars().collect();
            let mid: String = c.get(pre..c.len().checked_sub(suf)?)?.iter().collect();
            mid.parse::<f64>().ok().filter(|v| v.is_finite())
        })
        .collect::<Option<Vec<f64>>>()?;
    let head: String = chars[..pre].iter().collect();
    let tail: String = chars[chars.len() - suf..].iter().collect();
    Some((values, format!("{head}…{tail}")))
}

/// A latency in ns as log10 of µs, the percentile figures' y (drawn on a
/// linear axis, so ticks fall between the decades too).
fn log_us(ns: u64) -> f64 {
    (ns as f64 / 1e3).max(0.001).log10()
}

/// `v` to two significant figures: `0.63`, `35000`.
fn two_figures(v: f64) -> String {
    if v <= 0.0 {
        return "0".to_owned();
    }
    // A hair up, so 10^0 computed as 0.99999… counts as 1.
    let digits = (v * (1.0 + 1e-9)).log10().floor() as i32;
    let step = 10f64.powi(digits - 1);
    let r = (v / step).round() * step;
    if digits >= 1 {
        format!("{r:.0}")
    } else {
        format!("{r:.*}", (1 - digits) as usize)
    }
}

/// Percentile `p` (of 100) on the log(1/(1 − p)) axis: 90 % at 1, 99 %
/// at 2, 99.99 % at 4.
fn percentile_x(p: f64) -> f64 {
    let left = (1.0 - p / 100.0).max(1e-9);
    (1.0 / left).log10()
}

/// The percentile at `x` on that axis, as a label: `0%`, `90%`, `99.9%`.
fn percent_label(x: f64) -> String {
    let p = 100.0 * (1.0 - 10f64.powf(-x));
    let decimals = if x.fract().abs() < 1e-9 && x >= 2.0 {
        x as usize - 1
    } else {
        1
    };
    let text = format!("{p:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    };
    format!("{text}%")
}

type DrawResult<T> = Result<T, String>;

/// The title's face size: 20, smaller for a long title so it fits the
/// figure's width (at most 72 characters at 20).
fn title_face(title: &str) -> f64 {
    let chars = title.chars().count().max(1) as f64;
    (20.0 * 72.0 / chars).clamp(11.0, 20.0)
}

/// Small multiples: a panel per series, one above the other, on the same
/// axes, each with its variant's name.
fn draw_panels(f: &Figure) -> DrawResult<String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    // Each panel's series, by their index.
    let groups: Vec<Vec<usize>> = if f.panel_of.is_empty() {
        (0..f.series.len()).map(|i| vec![i]).collect()
    } else {
        let n = f.panel_of.iter().max().map_or(0, |&m| m + 1);
        (0..n)
            .map(|p| {
                (0..f.series.len())
                    .filter(|&i| f.panel_of[i] == p)
                    .collect()
            })
            .collect()
    };
    let n = groups.len().max(1);
    // Each panel tall enough for its legend, a line a series.
    let most = groups.iter().map(Vec::len).max().unwrap_or(1) as u32;
    let height = (150.max(20 * most + 30) * n as u32 + 60).max(SIZE.1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (SIZE.0, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let body = root
            .titled(&f.title, ("sans-serif", title_face(&f.title)))
            .map_err(|e| err(&e))?;
        let ((x0, x1), (y0, y1)) = bounds(f);
        let panels = body.split_evenly((n, 1));
        for (i, (panel, members)) in panels.iter().zip(&groups).enumerate() {
            let last = i + 1 == n;
            let mut chart = ChartBuilder::on(panel)
                .margin(8)
                .x_label_area_size(if last { 40 } else { 18 })
                .y_label_area_size(60)
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(|e| err(&e))?;
            // The unit alone: the title says what, and a long name would
            // run into the next panel's.
            let unit = f
                .y_desc
                .rsplit_once('(')
                .map_or(f.y_desc, |(_, u)| u.trim_end_matches(')'));
            let mut mesh = chart.configure_mesh();
            mesh.y_desc(unit).y_labels(6);
            if last {
                mesh.x_desc(f.x_desc.as_str());
            }
            mesh.draw().map_err(|e| err(&e))?;
            for (k, &s) in members.iter().enumerate() {
                let (name, points) = &f.series[s];
                // A panel per variant: its colour; several lines a
                // panel: each line's colour by its place, alike in every
                // panel.
                let c = if f.panel_of.is_empty() {
                    colour(i)
                } else {
                    colour(k)
                };
                chart
                    .draw_series(LineSeries::new(points.iter().copied(), c.stroke_width(2)))
                    .map_err(|e| err(&e))?
                    .label(name.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                    });
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

fn draw(f: &Figure) -> DrawResult<String> {
    if f.panels && f.series.len() > 1 {
        return draw_panels(f);
    }
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let ((x0, x1), (y0, y1)) = bounds(f);
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(&f.title, ("sans-serif", title_face(&f.title)))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(60);
        macro_rules! plot {
            ($chart:expr) => {{
                let mut chart = $chart.map_err(|e| err(&e))?;
                let name_of = |x: &f64| {
                    let i = x.round();
                    match f.x_names.get(i as usize) {
                        Some(n) if (x - i).abs() < 1e-6 && i >= 0.0 => n.clone(),
                        _ => String::new(),
                    }
                };
                let mut mesh = chart.configure_mesh();
                mesh.x_desc(f.x_desc.as_str()).y_desc(f.y_desc);
                if !f.x_names.is_empty() {
                    mesh.x_labels(f.x_names.len() + 1)
                        .x_label_formatter(&name_of);
                }
                let as_percent = |x: &f64| percent_label(*x);
                let as_number = |y: &f64| two_figures(10f64.powf(*y));
                if f.percentile {
                    mesh.x_labels(5)
                        .x_label_formatter(&as_percent)
                        .y_labels(10)
                        .y_label_formatter(&as_number);
                }
                mesh.draw().map_err(|e| err(&e))?;
                for (i, (name, points)) in f.series.iter().enumerate() {
                    let colour = colour(i);
                    if let Some(bars) = f.bars.get(i) {
                        // A dot per point, with its bar where the
                        // interval is not zero.
                        let (barred, bare): (Vec<_>, Vec<_>) =
                            points.iter().zip(bars).partition(|(_, h)| **h > 0.0);
                        chart
                            .draw_series(barred.into_iter().map(|(&(x, y), &h)| {
                                ErrorBar::new_vertical(x, y - h, y, y + h, colour.filled(), 8)
                            }))
                            .map_err(|e| err(&e))?;
                        chart
                            .draw_series(
                                bare.into_iter()
                                    .map(|(&p, _)| Circle::new(p, 4, colour.filled())),
                            )
                            .map_err(|e| err(&e))?;
                    }
                    chart
                        .draw_series(LineSeries::new(
                            points.iter().copied(),
                            colour.stroke_width(2),
                        ))
                        .map_err(|e| err(&e))?
                        .label(name.as_str())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                        });
                }
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::LowerRight)
                    .background_style(WHITE.mix(0.8))
                    .border_style(BLACK)
                    .draw()
                    .map_err(|e| err(&e))?;
            }};
        }
        if f.log_x {
            plot!(builder.build_cartesian_2d((x0..x1).log_scale(), y0..y1));
        } else {
            plot!(builder.build_cartesian_2d(x0..x1, y0..y1));
        }
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

/// Draws the figures of `runs` (variant name, report; all of seed `seed`)
/// and of `sweeps` into `dir` (made if missing) and returns the files
/// written.
pub fn write(
    dir: &Path,
    runs: &[(&str, &RunReport)],
    states: &[&serde_json::Value],
    seed: u64,
    sweeps: &[Sweep<'_>],
) -> Result<Vec<PathBuf>, Failure> {
    let io = |p: &Path, e: std::io::Error| Failure {
        code: 1,
        message: format!("--plot {}: {e}", p.display()),
    };
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut written = Vec::new();
    let policy = policy::policy_figures(runs, states, &format!(", seed {seed}"));
    for f in figures(runs, seed)
        .into_iter()
        .chain(policy)
        .chain(sweep_figures(sweeps))
    {
        let svg = draw(&f).map_err(|e| Failure {
            code: 1,
            message: format!("--plot: drawing {}: {e}", f.file),
        })?;
        let path = dir.join(&f.file);
        crate::outputs::write_atomic(&path, svg.as_bytes()).map_err(|e| Failure {
            code: 1,
            message: format!("--plot {e}"),
        })?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::{binned, colour};

    /// The percentile axis puts 90, 99, 99.9 and 99.99 % at 1 to 4 and
    /// labels them so.
    #[test]
    fn percentiles_sit_a_decade_of_tail_apart() {
        use super::{percent_label, percentile_x};
        for (p, x) in [(90.0, 1.0), (99.0, 2.0), (99.9, 3.0), (99.99, 4.0)] {
            assert!((percentile_x(p) - x).abs() < 1e-9, "{p}");
        }
        let labels: Vec<String> = (0..5).map(|x| percent_label(f64::from(x))).collect();
        assert_eq!(labels, ["0%", "90%", "99%", "99.9%", "99.99%"]);
    }

    #[test]
    fn latency_labels_have_two_figures() {
        use super::two_figures;
        assert_eq!(two_figures(34_567.0), "35000");
        assert_eq!(two_figures(0.6309), "0.63");
        assert_eq!(two_figures(1.0), "1.0");
        assert_eq!(two_figures(12.3), "12");
    }

    /// A knob that is a number is drawn on a numeric axis.
    #[test]
    fn a_numeric_knob_is_read_off_the_points_names() {
        use super::numeric_knob;
        let names = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let (values, desc) =
            numeric_knob(&names(&["wbt:lat=2ms", "wbt:lat=20ms", "wbt:lat=0.5ms"]))
                .expect("numbers");
        assert_eq!(values, [2.0, 20.0, 0.5]);
        assert_eq!(desc, "wbt:lat=…ms");
        assert!(numeric_knob(&names(&["read=pid", "read=round-robin"])).is_none());
        assert!(numeric_knob(&names(&["wbt"])).is_none());
    }

    /// Forty series have forty colours.
    #[test]
    fn a_sweep_of_forty_variants_has_forty_colours() {
        let mut seen: Vec<(u8, u8, u8)> = (0..40)
            .map(|i| {
                let c = colour(i);
                (c.0, c.1, c.2)
            })
            .collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 40);
    }

    /// Bins add whole windows up from the job's start: a bin's rate is
    /// its bytes and IOs over its length, and a bin between without a
    /// completion is zero.
    #[test]
    fn bins_keep_every_byte_and_fill_gaps_with_zero() {
        // 10 ms windows 0, 1, 5 and 6; bins of 2 windows (20 ms).
        let w = [(0, 1_000, 1), (1, 3_000, 3), (5, 2_000, 2), (6, 500, 1)];
        let pts = binned(&w, 10, 2);
        let ends: Vec<f64> = pts.iter().map(|p| p.0).collect();
        assert_eq!(ends, [0.02, 0.04, 0.06, 0.08]);
        // 4,000 B in 20 ms = 0.2 MB/s; 4 IOs = 200 IOPS.
        assert!((pts[0].1 - 0.2).abs() < 1e-12 && (pts[0].2 - 200.0).abs() < 1e-9);
        assert_eq!((pts[1].1, pts[1].2), (0.0, 0.0));
        assert_eq!((pts[2].1, pts[2].2), (0.1, 100.0));
        assert!((pts[3].1 - 0.025).abs() < 1e-12);
        assert!(binned(&[], 10, 2).is_empty());
    }
}
