//! `--plot DIR`: SVG figures of a run or a comparison, drawn with plotters'
//! SVG backend alone (text is left to the viewer, so no font is needed):
//!
//! - `clat-cdf-ENTRY-DIR.svg`: each variant's completion-latency
//!   distribution for one report entry and direction, from fio's
//!   percentiles (1 % to 99.99 %) on a logarithmic latency axis;
//! - `read-latency-JOB.svg`: each variant's read latency over time in the
//!   10 ms windows mmtests' latency rows read, for one reading job.
//!
//! Each title names the seed drawn: under `--seeds`, the first.

use std::path::{Path, PathBuf};

use iolab_sim::stats::{Dir, RunReport};
use plotters::prelude::*;

use crate::Failure;

/// Series colours, one per variant in order (cycled past eight).
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

/// One figure's data: its series, one per variant, as (x, y) points.
struct Figure {
    file: String,
    title: String,
    x_desc: &'static str,
    y_desc: &'static str,
    log_x: bool,
    series: Vec<(String, Vec<(f64, f64)>)>,
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
            let series = runs
                .iter()
                .map(|(name, r)| {
                    let points = r
                        .jobs
                        .get(e)
                        .map(|j| {
                            j.dir(dir)
                                .clat
                                .percentiles
                                .iter()
                                .map(|&(p, ns)| ((ns as f64 / 1e3).max(0.001), p / 100.0))
                                .collect()
                        })
                        .unwrap_or_default();
                    ((*name).to_owned(), points)
                })
                .collect();
            out.push(Figure {
                file: format!("clat-cdf-{}-{}.svg", slug(&job.name), dir.name()),
                title: format!(
                    "{} {}: completion latency distribution{of_seed}",
                    job.name,
                    dir.name()
                ),
                x_desc: "completion latency (µs, log scale)",
                y_desc: "fraction of IOs at or below",
                log_x: true,
                series,
            });
        }
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
        out.push(Figure {
            file: format!("read-latency-{}.svg", slug(&s.name)),
            title: format!(
                "{}: read latency, {} ms windows{of_seed}",
                s.name,
                s.window_ns / 1_000_000
            ),
            x_desc: "time since the job started (s)",
            y_desc: "mean read latency in the window (ms)",
            log_x: false,
            series,
        });
    }
    out
}

fn bounds(f: &Figure) -> ((f64, f64), (f64, f64)) {
    let pts = || f.series.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0.0f64);
    for &(x, y) in pts() {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        (x0, x1) = (1.0, 10.0);
    }
    if f.log_x {
        ((x0 / 1.5, x1 * 1.5), (0.0, 1.0))
    } else {
        ((0.0, x1.max(x0 + 1e-3)), (0.0, (y1 * 1.1).max(1e-3)))
    }
}

type DrawResult<T> = Result<T, String>;

fn draw(f: &Figure) -> DrawResult<String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let ((x0, x1), (y0, y1)) = bounds(f);
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(&f.title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(60);
        macro_rules! plot {
            ($chart:expr) => {{
                let mut chart = $chart.map_err(|e| err(&e))?;
                chart
                    .configure_mesh()
                    .x_desc(f.x_desc)
                    .y_desc(f.y_desc)
                    .draw()
                    .map_err(|e| err(&e))?;
                for (i, (name, points)) in f.series.iter().enumerate() {
                    let colour = COLOURS[i % COLOURS.len()];
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
/// into `dir` (made if missing) and returns the files written.
pub fn write(dir: &Path, runs: &[(&str, &RunReport)], seed: u64) -> Result<Vec<PathBuf>, Failure> {
    let io = |p: &Path, e: std::io::Error| Failure {
        code: 1,
        message: format!("--plot {}: {e}", p.display()),
    };
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut written = Vec::new();
    for f in figures(runs, seed) {
        let svg = draw(&f).map_err(|e| Failure {
            code: 1,
            message: format!("--plot: drawing {}: {e}", f.file),
        })?;
        let path = dir.join(&f.file);
        std::fs::write(&path, svg).map_err(|e| io(&path, e))?;
        written.push(path);
    }
    Ok(written)
}
