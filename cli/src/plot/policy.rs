//! The policies' own state over time, from each variant's first run:
//! `policy-wbt.svg`, `policy-iocost.svg`, `policy-btrfs.svg`,
//! `policy-raid1.svg`.

use iolab_sim::stats::RunReport;

use super::{Figure, over_time};

/// The lines of a policy figure, a panel per variant, built a panel at a
/// time.
#[derive(Default)]
struct Panels {
    series: Vec<(String, Vec<(f64, f64)>)>,
    panel_of: Vec<usize>,
    panels: usize,
}

impl Panels {
    /// Starts the next variant's panel.
    fn next_panel(&mut self) {
        self.panels += 1;
    }

    /// A line in the panel started last.
    fn line(&mut self, label: String, points: Vec<(f64, f64)>) {
        self.series.push((label, points));
        self.panel_of.push(self.panels.saturating_sub(1));
    }

    /// The figure, if any variant had a panel.
    fn figure(self, file: &str, title: String, y_desc: &'static str) -> Option<Figure> {
        (!self.series.is_empty()).then(|| {
            over_time(
                file.to_owned(),
                title,
                "time since the run started (s)",
                y_desc,
                self.series,
                self.panel_of,
            )
        })
    }
}

/// `(t, value)` changes as a step line: each value held until the next.
fn steps(changes: &[(f64, f64)], end: f64) -> Vec<(f64, f64)> {
    let mut pts = Vec::with_capacity(changes.len() * 2 + 1);
    for (i, &(t, v)) in changes.iter().enumerate() {
        if i > 0 {
            pts.push((t, changes[i - 1].1));
        }
        pts.push((t, v));
    }
    if let Some(&(t, v)) = changes.last()
        && end > t
    {
        pts.push((end, v));
    }
    pts
}

/// The records of `event` in a trace, in order.
fn records<'t>(trace: &'t serde_json::Value, event: &str) -> Vec<&'t serde_json::Value> {
    trace
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["event"] == event)
        .collect()
}

/// The policies' own state over time, from each variant's first run's
/// state (`{"policy_report", "btrfs"}`: the policy report with its
/// trace, btrfs's space series): a figure per policy family, a panel per
/// variant that has it.
///
/// - `policy-wbt.svg`: the three request limits (max, normal,
///   background) each `wbt_step` sets (the report's, all along, when the
///   step never changed), and how many windows' verdict was that reads
///   missed the target (`wbt_timer`'s `LAT_EXCEEDED`);
/// - `policy-iocost.svg`: the device's vrate (`iocost_ioc_vrate_adj`), in
///   % of the nominal rate, and each group's hierarchical inuse weight at
///   each period's end, in % of the device;
/// - `policy-btrfs.svg`: the metadata space's `may_use` and the delayed
///   refs' reserve each second, with the most tickets waiting at a
///   sample and the commits in the legend;
/// - `policy-raid1.svg`: on a volume, the reads the read policy sent to
///   each device in each second.
pub(super) fn policy_figures(
    runs: &[(&str, &RunReport)],
    states: &[&serde_json::Value],
    of_seed: &str,
) -> Vec<Figure> {
    let policies: Vec<&serde_json::Value> = states.iter().map(|s| &s["policy_report"]).collect();
    let traces: Vec<&serde_json::Value> = policies.iter().map(|p| &p["trace"]).collect();
    let end_s = |r: &RunReport| {
        r.series
            .iter()
            .map(|s| s.end_ms as f64 / 1e3)
            .fold(0.0, f64::max)
    };
    let mut out = Vec::new();
    let secs = |rec: &serde_json::Value| rec["t_ns"].as_f64().unwrap_or(0.0) / 1e9;
    // WBT: limits and verdicts.
    let mut panels = Panels::default();
    for (((name, report), trace), policy) in runs.iter().zip(&traces).zip(&policies) {
        let timers = records(trace, "wbt_timer");
        if timers.is_empty() {
            continue;
        }
        let step_recs = records(trace, "wbt_step");
        // Never stepped: the report's limits held all along.
        let constant = serde_json::json!({
            "t_ns": 0,
            "max": policy["max_depth"],
            "normal": policy["normal"],
            "bg": policy["background"],
        });
        let step_recs = if step_recs.is_empty() && policy["step_changes"] == 0 {
            vec![&constant]
        } else {
            step_recs
        };
        let exceeded = timers.iter().filter(|r| r["status"] == 4).count();
        panels.next_panel();
        for (key, what) in [("max", "max"), ("normal", "normal"), ("bg", "background")] {
            let changes: Vec<(f64, f64)> = step_recs
                .iter()
                .map(|r| (secs(r), r[key].as_f64().unwrap_or(0.0)))
                .collect();
            let label = if key == "max" {
                format!(
                    "{name}: {what} ({exceeded} of {} windows over the target)",
                    timers.len()
                )
            } else {
                format!("{name}: {what}")
            };
            panels.line(label, steps(&changes, end_s(report)));
        }
    }
    out.extend(panels.figure(
        "policy-wbt.svg",
        format!("wbt: request limits each scaling step sets{of_seed}"),
        "requests in flight allowed (requests)",
    ));
    // iocost: vrate, and each group's inuse share of the device. The
    // kernel's nominal rate is 2^37 / 10^6 vtime a µs.
    let nominal = (1u64 << 37) as f64 / 1e6;
    let mut panels = Panels::default();
    for (((name, report), trace), policy) in runs.iter().zip(&traces).zip(&policies) {
        let recs = records(trace, "iocost_ioc_vrate_adj");
        if recs.is_empty() {
            continue;
        }
        panels.next_panel();
        let changes: Vec<(f64, f64)> = recs
            .iter()
            .map(|r| {
                (
                    secs(r),
                    r["vrate"].as_f64().unwrap_or(0.0) / nominal * 100.0,
                )
            })
            .collect();
        panels.line(
            format!("{name}: vrate, % of nominal"),
            steps(&changes, end_s(report)),
        );
        // Each group's hweight (inuse) at each period's end, by name.
        let periods = policy["group_periods"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        let mut names: Vec<&str> = Vec::new();
        for p in periods {
            for g in p["groups"].as_array().into_iter().flatten() {
                let n = g["name"].as_str().unwrap_or("");
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        for group in names {
            let changes: Vec<(f64, f64)> = periods
                .iter()
                .filter_map(|p| {
                    let g = p["groups"]
                        .as_array()?
                        .iter()
                        .find(|g| g["name"].as_str() == Some(group))?;
                    Some((secs(p), g["hwi_pct"].as_f64()?))
                })
                .collect();
            let shown = if group.is_empty() { "root" } else { group };
            // The panel's first line names the variant.
            panels.line(
                format!("{shown}: hweight (inuse), % of the device"),
                steps(&changes, end_s(report)),
            );
        }
    }
    out.extend(panels.figure(
        "policy-iocost.svg",
        format!("iocost: vrate and each group's share at each period{of_seed}"),
        "percent (%)",
    ));
    // btrfs: the metadata space and the delayed refs over time.
    let mut panels = Panels::default();
    for ((name, _), state) in runs.iter().zip(states) {
        let b = &state["btrfs"];
        let (Some(cols), Some(rows)) = (b["series_columns"].as_array(), b["series"].as_array())
        else {
            continue;
        };
        let col = |key: &str| cols.iter().position(|c| c == key);
        let (Some(ms), Some(may_use), Some(refs), Some(tickets)) = (
            col("ms"),
            col("may_use"),
            col("delayed_refs_size"),
            col("tickets_waiting"),
        ) else {
            continue;
        };
        let at = |r: &serde_json::Value, k: usize| r[k].as_f64().unwrap_or(0.0);
        let most_waiting = rows.iter().map(|r| at(r, tickets)).fold(0.0, f64::max);
        let commits = b["commits"].as_u64().unwrap_or(0);
        panels.next_panel();
        for (k, what) in [(may_use, "may_use"), (refs, "delayed refs")] {
            let points = rows
                .iter()
                .map(|r| (at(r, ms) / 1e3, at(r, k) / f64::from(1u32 << 20)))
                .collect();
            let label = if k == may_use {
                format!(
                    "{name}: {what} ({most_waiting} tickets waiting at most, {commits} commits)"
                )
            } else {
                format!("{name}: {what}")
            };
            panels.line(label, points);
        }
    }
    out.extend(panels.figure(
        "policy-btrfs.svg",
        format!("btrfs: metadata space reserved and delayed refs, each second{of_seed}"),
        "bytes (MiB)",
    ));
    // RAID1: where the read policy sent the reads, each second.
    let mut panels = Panels::default();
    for ((name, _), state) in runs.iter().zip(states) {
        let Some(rows) = state["volume"]["mirror_reads_series"].as_array() else {
            continue;
        };
        let mut rows: Vec<Vec<f64>> = rows
            .iter()
            .filter_map(|r| {
                Some(
                    r.as_array()?
                        .iter()
                        .filter_map(serde_json::Value::as_f64)
                        .collect(),
                )
            })
            .collect();
        let devices = rows
            .first()
            .map_or(0, |r: &Vec<f64>| r.len().saturating_sub(1));
        if devices == 0 {
            continue;
        }
        // No read was sent before the run started.
        rows.insert(0, vec![0.0; devices + 1]);
        panels.next_panel();
        for d in 0..devices {
            // Reads in each second: the counts' difference over the
            // sample's interval.
            let points = rows
                .windows(2)
                .map(|w| {
                    let secs = ((w[1][0] - w[0][0]) / 1e3).max(1e-3);
                    (w[1][0] / 1e3, (w[1][d + 1] - w[0][d + 1]) / secs)
                })
                .collect();
            let label = if d == 0 {
                format!("{name}: devid {}", d + 1)
            } else {
                format!("devid {}", d + 1)
            };
            panels.line(label, points);
        }
    }
    out.extend(panels.figure(
        "policy-raid1.svg",
        format!("RAID1 reads: where the read policy sent them, each second{of_seed}"),
        "reads sent to the device (reads/s)",
    ));
    out
}
