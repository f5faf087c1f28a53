//! The policies' own state over time, from each variant's first run:
//! `policy-wbt.svg`, `policy-iocost.svg` (and `policy-iocost-debt.svg`),
//! `policy-btrfs.svg` and `policy-btrfs-flush.svg`, `policy-raid1.svg`.

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

/// Rows of counts so far (`[ms, count, …]`, numbers) as each count's
/// change per second over each row's interval, the run starting from
/// zero: a line per count.
fn per_second(rows: &[serde_json::Value]) -> Vec<Vec<(f64, f64)>> {
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
    let counts = rows
        .first()
        .map_or(0, |r: &Vec<f64>| r.len().saturating_sub(1));
    // Nothing was counted before the run started.
    rows.insert(0, vec![0.0; counts + 1]);
    (0..counts)
        .map(|c| {
            rows.windows(2)
                .map(|w| {
                    let secs = ((w[1][0] - w[0][0]) / 1e3).max(1e-3);
                    (w[1][0] / 1e3, (w[1][c + 1] - w[0][c + 1]) / secs)
                })
                .collect()
        })
        .collect()
}

/// A count's name, its total and its line of changes per second.
type Counted = (String, u64, Vec<(f64, f64)>);

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
///   each period's end, in % of the device; the vrate's label says how
///   many periods ended with a group in debt;
/// - `policy-iocost-debt.svg`, when any did: each group's debt at each
///   period's end, in ms of device time at the nominal rate;
/// - `policy-btrfs.svg`: the metadata space's `may_use` and the delayed
///   refs' reserve each second, with the most tickets waiting at a
///   sample and the commits in the legend;
/// - `policy-btrfs-flush.svg`: tickets queued and granted, each flush
///   state entered and the commits, each second, with their totals;
/// - `policy-raid1.svg`: on a volume of two devices or more, the reads
///   the read policy sent to each device in each second.
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
    let mut debt_panels = Panels::default();
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
        // Each group's hweight (inuse) and debt at each period's end, by
        // name.
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
        let of_group = |group: &str, key: &str, scale: f64| -> Vec<(f64, f64)> {
            periods
                .iter()
                .filter_map(|p| {
                    let g = p["groups"]
                        .as_array()?
                        .iter()
                        .find(|g| g["name"].as_str() == Some(group))?;
                    Some((secs(p), g[key].as_f64()? * scale))
                })
                .collect()
        };
        // Debt in ms of device time at the nominal rate.
        let debts: Vec<(&str, Vec<(f64, f64)>)> = names
            .iter()
            .map(|&g| (g, of_group(g, "debt", 1.0 / nominal / 1e3)))
            .collect();
        let in_debt = periods
            .iter()
            .filter(|p| {
                p["groups"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|g| g["debt"].as_f64().unwrap_or(0.0) > 0.0)
            })
            .count();
        let debt_word = match (periods.is_empty(), in_debt) {
            (true, _) => String::new(),
            (false, 0) => " (no group in debt at the end of any period)".to_owned(),
            (false, n) => format!(
                " (a group in debt at the end of {n} of {} periods: policy-iocost-debt.svg)",
                periods.len()
            ),
        };
        panels.line(
            format!("{name}: vrate, % of nominal{debt_word}"),
            steps(&changes, end_s(report)),
        );
        for &group in &names {
            let shown = if group.is_empty() { "root" } else { group };
            // The panel's first line names the variant.
            panels.line(
                format!("{shown}: hweight (inuse), % of the device"),
                steps(&of_group(group, "hwi_pct", 1.0), end_s(report)),
            );
        }
        if in_debt > 0 {
            debt_panels.next_panel();
            for (k, (group, points)) in debts.into_iter().enumerate() {
                let shown = if group.is_empty() { "root" } else { group };
                let label = match k {
                    0 => format!("{name}: {shown}"),
                    _ => shown.to_owned(),
                };
                debt_panels.line(label, steps(&points, end_s(report)));
            }
        }
    }
    out.extend(panels.figure(
        "policy-iocost.svg",
        format!("iocost: vrate and each group's share at each period{of_seed}"),
        "percent (%)",
    ));
    out.extend(debt_panels.figure(
        "policy-iocost-debt.svg",
        format!("iocost: each group's debt at each period's end{of_seed}"),
        "device time owed at the nominal rate (ms)",
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
    // btrfs: what the flushers did, each second.
    let mut panels = Panels::default();
    for ((name, _), state) in runs.iter().zip(states) {
        let b = &state["btrfs"];
        let (Some(cols), Some(rows)) = (
            b["flush_series_columns"].as_array(),
            b["flush_series"].as_array(),
        ) else {
            continue;
        };
        // Each count's name, its total and its line.
        let last = rows.last().and_then(|r| r.as_array());
        let total = |k: usize| last.and_then(|r| r.get(k)?.as_u64()).unwrap_or(0);
        let mut lines: Vec<Counted> = cols
            .iter()
            .enumerate()
            .skip(1)
            .zip(per_second(rows))
            .map(|((k, c), points)| {
                // The flush states by the kernel's names.
                let c = c.as_str().unwrap_or("");
                let what = match c.strip_prefix("tickets_") {
                    Some(rest) => format!("tickets {rest}"),
                    None => c.to_owned(),
                };
                (what, total(k), points)
            })
            .collect();
        // The commits, from the space series sampled at the same times.
        if let (Some(space_cols), Some(space)) =
            (b["series_columns"].as_array(), b["series"].as_array())
            && let (Some(ms), Some(commits)) = (
                space_cols.iter().position(|c| c == "ms"),
                space_cols.iter().position(|c| c == "commits"),
            )
        {
            let rows: Vec<serde_json::Value> = space
                .iter()
                .map(|r| serde_json::json!([r[ms], r[commits]]))
                .collect();
            let commits = b["commits"].as_u64().unwrap_or(0);
            lines.extend(
                per_second(&rows)
                    .into_iter()
                    .map(|points| ("commits".to_owned(), commits, points)),
            );
        }
        if lines.first().is_none_or(|l| l.2.is_empty()) {
            continue;
        }
        panels.next_panel();
        for (k, (what, total, points)) in lines.into_iter().enumerate() {
            // Each line's total in its label: a rare state's line lies
            // along the axis beside the tickets' thousands.
            let label = match k {
                0 => format!("{name}: {what} ({total} in all)"),
                _ => format!("{what} ({total})"),
            };
            panels.line(label, points);
        }
    }
    out.extend(panels.figure(
        "policy-btrfs-flush.svg",
        format!("btrfs: tickets, flush states entered and commits, each second{of_seed}"),
        "events each second (per s)",
    ));
    // RAID1: where the read policy sent the reads, each second.
    let mut panels = Panels::default();
    for ((name, _), state) in runs.iter().zip(states) {
        let Some(rows) = state["volume"]["mirror_reads_series"].as_array() else {
            continue;
        };
        let lines = per_second(rows);
        // One device (btrfs's `single` profile) has no choice to draw.
        if lines.len() < 2 {
            continue;
        }
        panels.next_panel();
        for (d, points) in lines.into_iter().enumerate() {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(f: &Figure) -> Vec<&str> {
        f.series.iter().map(|(l, _)| l.as_str()).collect()
    }

    /// A group in debt at a period's end gets the debt figure, its debt in
    /// ms of device time at the nominal rate; the vrate's label says how
    /// many periods ended in debt.
    #[test]
    fn a_group_in_debt_is_drawn_in_ms_of_device_time() {
        let nominal = (1u64 << 37) as f64 / 1e6;
        let state = serde_json::json!({
            "policy_report": {
                "trace": [
                    {"event": "iocost_ioc_vrate_adj", "t_ns": 0, "vrate": nominal},
                    {"event": "iocost_ioc_vrate_adj", "t_ns": 50_000_000u64, "vrate": nominal / 2.0},
                ],
                "group_periods": [
                    {"t_ns": 50_000_000u64, "groups": [
                        {"name": "a", "hwi_pct": 25.0, "debt": 0},
                        {"name": "b", "hwi_pct": 75.0, "debt": 0},
                    ]},
                    {"t_ns": 100_000_000u64, "groups": [
                        {"name": "a", "hwi_pct": 25.0, "debt": (3.0 * nominal * 1e3) as u64},
                        {"name": "b", "hwi_pct": 75.0, "debt": 0},
                    ]},
                ],
            },
        });
        let report = RunReport::default();
        let figures = policy_figures(&[("iocost", &report)], &[&state], ", seed 1");
        let names: Vec<&str> = figures.iter().map(|f| f.file.as_str()).collect();
        assert_eq!(names, ["policy-iocost.svg", "policy-iocost-debt.svg"]);
        assert!(
            labels(&figures[0])[0].contains("a group in debt at the end of 1 of 2 periods"),
            "{:?}",
            labels(&figures[0])
        );
        let debt = &figures[1];
        assert_eq!(labels(debt), ["iocost: a", "b"]);
        // Held from each period's end: 0 ms, then 3 ms.
        let a = &debt.series[0].1;
        assert_eq!(a.first(), Some(&(0.05, 0.0)));
        assert!(
            a.iter().any(|&(t, v)| t == 0.1 && (v - 3.0).abs() < 1e-3),
            "{a:?}"
        );
        // No debt: no debt figure, and the label says so.
        let mut clear = state.clone();
        clear["policy_report"]["group_periods"][1]["groups"][0]["debt"] = 0.into();
        let figures = policy_figures(&[("iocost", &report)], &[&clear], "");
        assert_eq!(figures.len(), 1);
        assert!(labels(&figures[0])[0].contains("no group in debt"));
    }

    /// The flushers' counts so far become events each second, each line
    /// with its total, the flush states by the kernel's names; the
    /// commits come from the space series.
    #[test]
    fn the_flush_figure_draws_each_count_per_second() {
        let state = serde_json::json!({
            "btrfs": {
                "commits": 1,
                "series_columns": ["ms", "may_use", "delayed_refs_size", "tickets_waiting", "commits"],
                "series": [[1000, 1, 1, 0, 0], [2000, 1, 1, 0, 1]],
                "flush_series_columns": ["ms", "tickets_queued", "tickets_granted", "preempt FLUSH_DELALLOC"],
                "flush_series": [[1000, 10, 8, 0], [2000, 30, 30, 4]],
            },
            "volume": {"mirror_reads_series": [[1000, 5], [2000, 9]]},
        });
        let report = RunReport::default();
        let figures = policy_figures(&[("flush=on-demand", &report)], &[&state], "");
        let flush = figures
            .iter()
            .find(|f| f.file == "policy-btrfs-flush.svg")
            .expect("the flush figure");
        assert_eq!(
            labels(flush),
            [
                "flush=on-demand: tickets queued (30 in all)",
                "tickets granted (30)",
                "preempt FLUSH_DELALLOC (4)",
                "commits (1)"
            ]
        );
        assert_eq!(flush.series[0].1, [(1.0, 10.0), (2.0, 20.0)]);
        assert_eq!(flush.series[3].1, [(1.0, 0.0), (2.0, 1.0)]);
        // One device: no RAID1 figure.
        assert!(figures.iter().all(|f| f.file != "policy-raid1.svg"));
    }
}
