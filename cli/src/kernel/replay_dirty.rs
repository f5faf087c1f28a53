//! `iolab kernel replay-dirty`: the simulator's dirty-throttling
//! arithmetic replayed on a captured trace's `writeback` records, and its
//! report.

use iolab_kernel::replay::dirty::{self, PASS_TOLERANCE, Report};
use iolab_kernel::trace::Dev;
use serde_json::{Value, json};

use super::replay::{bundle_device, read_trace, trace_arg};
use crate::{Failure, ReportFormat as Format, pretty, write_out};

#[derive(clap::Args, Debug)]
pub struct ReplayDirtyArgs {
    /// The trace: a bundle directory (`iolab kernel capture --out`), or a
    /// trace file, with the events `writeback:balance_dirty_pages`,
    /// `writeback:bdi_dirty_ratelimit` and `writeback:global_dirty_state`.
    pub trace: String,
    /// The device, MAJ:MIN as the writeback events name it (`bdi 7:0`).
    /// Default for a bundle: its first device.
    #[arg(long)]
    pub dev: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "normal")]
    pub output_format: Format,
}

pub fn replay_dirty(a: ReplayDirtyArgs) -> Result<(), Failure> {
    let (path, dev_flag) = trace_arg(&a.trace, a.dev.as_deref())?;
    let (trace_path, dev) = if path.is_dir() {
        let meta = super::bundle::read(path)?;
        let (_, dev) = bundle_device(&a.trace, &meta, dev_flag)?;
        (path.join("trace.txt"), dev)
    } else {
        let dev = dev_flag.ok_or_else(|| {
            Failure::input("--dev: needed when the trace is a file (a bundle directory records it)")
        })?;
        (path.to_owned(), dev)
    };
    let text = read_trace(&trace_path)?;
    let shown = trace_path.display().to_string();
    let report = dirty::replay(&text, dev)
        .map_err(|e| Failure::input(format!("{shown}:{}: {}", e.line, e.message)))?;
    if report.passes + report.passes_unanchored == 0 {
        return Err(Failure::input(format!(
            "{shown}: no balance_dirty_pages records of device {dev}: is --dev right, was writeback:balance_dirty_pages enabled, and did a writer go past the free-run line?"
        )));
    }
    if report.updates + report.updates_unanchored == 0 {
        return Err(Failure::input(format!(
            "{shown}: no bdi_dirty_ratelimit records of device {dev}: the replay needs the device's bandwidth and rate-limit updates (enable writeback:bdi_dirty_ratelimit)"
        )));
    }
    if report.passes == 0 {
        return Err(Failure::input(format!(
            "{shown}: none of the {} passes could be checked: no global_dirty_state record comes before them (enable writeback:global_dirty_state)",
            report.passes_unanchored
        )));
    }
    let out = match a.output_format {
        Format::Json => pretty(&report_json(&report)),
        Format::Normal => report_text(&shown, dev, &report),
    };
    write_out(&mut std::io::stdout().lock(), &out)?;
    let failed = (report.passes - report.passes_agree) + (report.updates - report.updates_agree);
    if failed > 0 {
        return Err(Failure {
            code: 3,
            message: format!(
                "{failed} of {} passes and {} rate-limit updates replayed differently from the kernel",
                report.passes, report.updates
            ),
        });
    }
    Ok(())
}

fn report_json(r: &Report) -> Value {
    json!({
        "passes": r.passes,
        "passes_agree": r.passes_agree,
        "passes_exact": r.passes_exact,
        "pass_tolerance": PASS_TOLERANCE,
        "max_pass_error": r.max_pass_error,
        "updates": r.updates,
        "updates_agree": r.updates_agree,
        "unanchored": {
            "passes": r.passes_unanchored,
            "updates": r.updates_unanchored,
        },
        "first_divergence": r.first_divergence.map(|d| json!({
            "line": d.line,
            "field": d.field,
            "kernel_kib_s": d.kernel,
            "core_kib_s": d.core,
        })),
        "lost_markers": r.lost_markers,
    })
}

fn report_text(trace: &str, dev: Dev, r: &Report) -> String {
    let mut s = format!("dirty-throttling replay of {trace}, device {dev}\n");
    s.push_str(&format!(
        "passes checked   {}, task rate within {:.1} % {} (exact {}), largest difference {:.3} %; not checkable (before the thresholds were traced, or cut by lost events) {}\n",
        r.passes,
        PASS_TOLERANCE * 100.0,
        r.passes_agree,
        r.passes_exact,
        r.max_pass_error * 100.0,
        r.passes_unanchored
    ));
    s.push_str(&format!(
        "rate-limit updates checked {}, exact {}; not checkable {} (the first, or no pass of the same task after it)\n",
        r.updates, r.updates_agree, r.updates_unanchored
    ));
    if r.lost_markers > 0 {
        s.push_str(&format!(
            "lost events      {} markers (records may be missing)\n",
            r.lost_markers
        ));
    }
    match r.first_divergence {
        None => s.push_str("first divergence none\n"),
        Some(d) => s.push_str(&format!(
            "first divergence {trace}:{}: {} kernel {} KiB/s, replay {} KiB/s\n",
            d.line, d.field, d.kernel, d.core
        )),
    }
    s
}
