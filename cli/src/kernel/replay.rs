//! `iolab kernel replay-wbt`: the wbt core replayed on a captured trace,
//! and its report.

use std::path::Path;

use iolab_kernel::replay::wbt::{self, Config, Decision, Divergence, Report, Source};
use iolab_kernel::trace::{Dev, LineReader};
use serde_json::{Value, json};

use super::bundle::{BundleDevice, BundleMeta};
use crate::{Failure, ReportFormat as Format, pretty, write_out};

/// The largest trace read (the wbt replay streams it; `summary` and
/// `replay-dirty` hold it in memory whole).
const MAX_TRACE_BYTES: u64 = 4 << 30;

#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    /// The trace: a bundle directory (`iolab kernel capture --out`), or a
    /// file of `cat /sys/kernel/tracing/trace`, `trace_pipe` or `trace-cmd
    /// report` output with the wbt events enabled (`block_rq_issue`,
    /// `block_rq_complete` and `balance_dirty_pages` let more windows be
    /// judged).
    pub trace: String,
    /// The device, MAJ:MIN as the wbt events name it (e.g. 7:0). Default
    /// for a bundle: its first device.
    #[arg(long)]
    pub dev: Option<String>,
    /// The queue depth wbt computes its limits from (a loop device: 128).
    /// Default for a bundle: the one it recorded.
    #[arg(long)]
    pub queue_depth: Option<u32>,
    /// `wbt_lat_usec` during the capture. Default for a bundle: the one it
    /// recorded.
    #[arg(long)]
    pub lat_usec: Option<u64>,
    /// The device is rotational (default for a bundle: as recorded).
    #[arg(long)]
    pub rotational: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "normal")]
    pub output_format: Format,
}

/// A replay's trace argument, which must exist, and its `--dev`, read.
pub fn trace_arg<'a>(
    trace: &'a str,
    dev: Option<&str>,
) -> Result<(&'a Path, Option<Dev>), Failure> {
    let path = Path::new(trace);
    if !path.exists() {
        return Err(Failure::input(format!(
            "{trace}: no such file or directory"
        )));
    }
    let dev = dev
        .map(|d| {
            d.parse::<Dev>()
                .map_err(|e| Failure::input(format!("--dev: {e}")))
        })
        .transpose()?;
    Ok((path, dev))
}

/// The device of bundle `trace` a replay reads: the one `--dev` names
/// (which must be the bundle's), else its first; and its number.
pub fn bundle_device<'m>(
    trace: &str,
    meta: &'m BundleMeta,
    dev_flag: Option<Dev>,
) -> Result<(&'m BundleDevice, Dev), Failure> {
    let device = match dev_flag {
        None => &meta.devices[0],
        Some(d) => meta
            .devices
            .iter()
            .find(|b| b.dev == d.to_string())
            .ok_or_else(|| {
                Failure::input(format!(
                    "--dev {d}: the bundle's devices are {}",
                    meta.devices
                        .iter()
                        .map(|b| b.dev.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?,
    };
    let dev: Dev = device.dev.parse().map_err(|e: String| {
        Failure::input(format!(
            "{trace}/{}: [[device]] dev: {e}",
            super::bundle::META
        ))
    })?;
    Ok((device, dev))
}

/// The trace's path and the replay's configuration, from a bundle's
/// metadata or the flags alone.
fn configure(a: &ReplayArgs) -> Result<(std::path::PathBuf, Config), Failure> {
    let (path, dev_flag) = trace_arg(&a.trace, a.dev.as_deref())?;
    let (trace_path, dev, qd, lat, rot) = if path.is_dir() {
        let meta = super::bundle::read(path)?;
        let (device, dev) = bundle_device(&a.trace, &meta, dev_flag)?;
        (
            path.join("trace.txt"),
            dev,
            a.queue_depth.unwrap_or(device.wbt_queue_depth),
            a.lat_usec.unwrap_or(device.wbt_lat_usec),
            a.rotational || device.rotational,
        )
    } else {
        let need = |what: &str| {
            Failure::input(format!(
                "{what}: needed when the trace is a file (a bundle directory records it)"
            ))
        };
        (
            path.to_owned(),
            dev_flag.ok_or_else(|| need("--dev"))?,
            a.queue_depth.ok_or_else(|| need("--queue-depth"))?,
            a.lat_usec.ok_or_else(|| need("--lat-usec"))?,
            a.rotational,
        )
    };
    if qd == 0 {
        return Err(Failure::input(
            "--queue-depth: 0 is not a queue depth (a loop device's is 128)",
        ));
    }
    if lat == 0 {
        return Err(Failure::input(
            "--lat-usec: 0 means wbt was off, and an off wbt traces no windows",
        ));
    }
    Ok((
        trace_path,
        Config {
            dev,
            queue_depth: qd,
            lat_usec: lat,
            rotational: rot,
        },
    ))
}

pub fn replay_wbt(a: ReplayArgs) -> Result<(), Failure> {
    let (path, cfg) = configure(&a)?;
    let trace = path.display().to_string();
    // Streamed: a line is read, typed and replayed, then dropped.
    let mut lines = LineReader::new(Some(cfg.dev));
    let mut replayer = wbt::Replayer::new(&cfg);
    crate::load::for_each_line(&path, MAX_TRACE_BYTES, |n, line| {
        let pushed = match lines.line(n, line) {
            Ok(Some(item)) => replayer.push(&item),
            Ok(None) => Ok(()),
            Err(e) => Err(e),
        };
        pushed.map_err(|e| Failure::input(format!("{trace}:{}: {}", e.line, e.message)))
    })?;
    let report = replayer.finish(lines.skipped());
    if report.windows + report.adopted == 0 {
        return Err(Failure::input(format!(
            "{trace}: no wbt_timer records of device {} ({} lines name other devices): is --dev right, and were the wbt events enabled?",
            cfg.dev, report.other_device_lines
        )));
    }
    let out = match a.output_format {
        Format::Json => pretty(&report_json(&report)),
        Format::Normal => report_text(&trace, &cfg, &report),
    };
    write_out(&mut std::io::stdout().lock(), &out)?;
    if report.divergences > 0 {
        return Err(Failure {
            code: 3,
            message: format!(
                "the core decided {} of {} windows differently from the kernel",
                report.divergences, report.windows
            ),
        });
    }
    Ok(())
}

/// A trace file's text: a regular file, bounded in size, UTF-8.
pub fn read_trace(path: &Path) -> Result<String, Failure> {
    crate::load::read_text_up_to(path, MAX_TRACE_BYTES).map_err(Failure::input)
}

fn source_name(s: Source) -> &'static str {
    match s {
        Source::Printed => "printed",
        Source::Rebuilt => "rebuilt",
        Source::Unobserved => "unobserved",
    }
}

fn decision_json(d: &Decision) -> Value {
    json!({
        "status": d.status,
        "step_before": d.step_before,
        "step": d.step.map(|s| json!({
            "dir": if s.up { "up" } else { "down" },
            "step": s.step,
            "window_us": s.window_us,
            "background": s.background,
            "normal": s.normal,
            "max": s.max,
        })),
    })
}

fn divergence_json(d: &Divergence) -> Value {
    json!({
        "line": d.line,
        "field": d.field,
        "source": source_name(d.source),
        "kernel": decision_json(&d.kernel),
        "core": decision_json(&d.core),
    })
}

pub fn report_json(r: &Report) -> Value {
    let c = &r.rebuild_check;
    json!({
        "windows": r.windows,
        "agree": r.agree,
        "first_divergence": r.first_divergence.as_ref().map(divergence_json),
        "divergences": r.divergences,
        "adopted": r.adopted,
        "raced": r.raced,
        "from_idle": r.from_idle,
        "from_idle_longer": r.from_idle_longer,
        "inputs": {
            "printed": r.printed,
            "rebuilt": r.rebuilt,
            "unobserved": r.unobserved,
        },
        "rebuild_check": {
            "windows": c.windows,
            "reads_exact": c.reads_exact,
            "writes_exact": c.writes_exact,
            "max_read_diff": c.max_read_diff,
            "max_write_diff": c.max_write_diff,
            "read_min_flips": c.read_min_flips,
        },
        "lost_markers": r.lost_markers,
        "lost_events": r.lost_events,
        "orphan_steps": r.orphan_steps,
        "incomplete": r.incomplete,
        "unpaired_completions": r.unpaired_completions,
        "records": r.records,
        "skipped": {
            "unknown_event_lines": r.unknown_event_lines,
            "other_device_lines": r.other_device_lines,
        },
    })
}

fn describe(d: &Decision) -> String {
    let step = match d.step {
        None => "no step".to_owned(),
        Some(s) => format!(
            "scale {} to step {} (window {} us, background {}, normal {}, max {})",
            if s.up { "up" } else { "down" },
            s.step,
            s.window_us,
            s.background,
            s.normal,
            s.max
        ),
    };
    format!("status {} at step {}, {step}", d.status, d.step_before)
}

/// The queue depths whose depth at `step` is `max`: `(qd, true)` when only
/// one fits (the depth is capped at 3/4 of it), `(least, false)` when every
/// depth from `least` up fits; `None` if none of 1..=4096 does.
fn depth_for(step: i32, max: u32) -> Option<(u32, bool)> {
    let fits = |qd: u32| iolab_wbt::calc_max_depth(iolab_wbt::Variant::Modern, qd, step).0 == max;
    let least = (1..=4096).find(|&qd| fits(qd))?;
    let capped = iolab_wbt::calc_max_depth(iolab_wbt::Variant::Modern, least, step).1;
    Some((least, capped && !fits(least + 1)))
}

fn report_text(trace: &str, cfg: &Config, r: &Report) -> String {
    let pct = if r.windows == 0 {
        0.0
    } else {
        100.0 * r.agree as f64 / r.windows as f64
    };
    let c = &r.rebuild_check;
    let mut s = format!(
        "wbt replay of {trace}, device {} (queue depth {}, wbt_lat_usec {}{})\n",
        cfg.dev,
        cfg.queue_depth,
        cfg.lat_usec,
        if cfg.rotational { ", rotational" } else { "" }
    );
    s.push_str(&format!(
        "windows checked  {}, agree {} ({pct:.2} %), adopted while the UNKNOWN count was unknown {}\n",
        r.windows, r.agree, r.adopted
    ));
    s.push_str(&format!(
        "inputs           printed by the kernel {}, rebuilt from block events {}, unobserved {}\n",
        r.printed, r.rebuilt, r.unobserved
    ));
    if c.windows > 0 {
        s.push_str(&format!(
            "rebuilt vs printed over {} windows: read counts exact {}, write counts exact {} (largest differences {} and {}), read minimum on the other side of the target {}\n",
            c.windows, c.reads_exact, c.writes_exact, c.max_read_diff, c.max_write_diff, c.read_min_flips
        ));
    }
    if r.from_idle > 0 {
        s.push_str(&format!(
            "from idle        {} windows started when a write armed the idle timer ({} of them longer than their length)\n",
            r.from_idle, r.from_idle_longer
        ));
    }
    if r.raced > 0 {
        s.push_str(&format!(
            "raced            {} windows printed the new step's window length (a write armed the timer while the expiry ran)\n",
            r.raced
        ));
    }
    if r.lost_markers > 0 {
        s.push_str(&format!(
            "lost events      {} markers, {} events (the core rejoined the kernel after each)\n",
            r.lost_markers, r.lost_events
        ));
    }
    match &r.first_divergence {
        None => s.push_str("first divergence none\n"),
        Some(d) => {
            s.push_str(&format!(
                "first divergence {trace}:{}: {} differs (inputs {})\n",
                d.line,
                d.field,
                source_name(d.source)
            ));
            s.push_str(&format!("  kernel: {}\n", describe(&d.kernel)));
            s.push_str(&format!("  core:   {}\n", describe(&d.core)));
            if matches!(d.field, "stepped" | "max" | "normal" | "background")
                && let Some(k) = d.kernel.step
                && let Some((qd, exact)) = depth_for(k.step, k.max)
                && (exact && qd != cfg.queue_depth || !exact && qd > cfg.queue_depth)
            {
                let fits = if exact {
                    format!("fits a queue depth of {qd}")
                } else {
                    format!("needs a queue depth of at least {qd}")
                };
                s.push_str(&format!(
                    "  the kernel's max={} at step {} {fits}: is --queue-depth {} right?\n",
                    k.max, k.step, cfg.queue_depth
                ));
            }
        }
    }
    s
}
