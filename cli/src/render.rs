//! What `run` and `compare` print, from their runs' outputs: fio's report
//! or the comparison tables, as text or JSON, for one seed or several.
//! `merge` prints through the same functions, so a merged sharded command
//! prints what the unsharded one does.

use iolab_sim::{RunOutput, Variant, stats};

use crate::formats::Formats;
use crate::{Failure, pretty};

/// Which command's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Run,
    Compare,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Compare => "compare",
        }
    }
}

/// The output of `kind` for `outs` (by variant, then seed): over `seeds`
/// when `--seeds` was given, else the one run of each variant; a
/// comparison's text ends with a table for each sweep of `policies`.
/// Each of `formats` in fio's order: terse lines, JSON, normal text.
pub fn render(
    kind: Kind,
    policies: &str,
    variants: &[Variant],
    seeds: Option<Vec<u64>>,
    formats: Formats,
    outs: Vec<Vec<RunOutput>>,
) -> Result<String, Failure> {
    let mut text = String::new();
    // fio's --status-interval: the report as it stood at each status time,
    // in the same formats, before the final one.
    if let (Kind::Run, None) = (kind, &seeds) {
        for o in outs.iter().flatten().take(1) {
            for (t, report) in &o.status {
                let extra = serde_json::json!({ "seed": o.extra["seed"], "sim_ns": t });
                if formats.terse {
                    let d = doc(report, extra.clone(), false);
                    text.push_str(&stats::terse_output(&d, formats.terse_version));
                }
                if let Some(plus) = formats.json {
                    text.push_str(&pretty(&doc(report, extra.clone(), plus)));
                }
                if formats.normal {
                    text.push_str(&stats::normal_output(report));
                    text.push('\n');
                }
            }
        }
    }
    if formats.terse {
        // One run of one variant (checked with the flags).
        let o = outs.iter().flatten().next().ok_or_else(no_run)?;
        let d = doc(&o.report, o.extra.clone(), false);
        text.push_str(&stats::terse_output(&d, formats.terse_version));
    }
    if let Some(plus) = formats.json {
        text.push_str(&match kind {
            Kind::Run => json_run(variants, seeds.as_deref(), plus, &outs)?,
            Kind::Compare => json_compare(variants, seeds.as_deref(), plus, &outs),
        });
    }
    if formats.normal {
        text.push_str(&match kind {
            Kind::Run => normal_run(variants, seeds.as_deref(), &outs)?,
            Kind::Compare => normal_compare(policies, variants, seeds.as_deref(), &outs)?,
        });
    }
    Ok(text)
}

/// fio's JSON document of a report (`json+` when `plus`).
fn doc(report: &stats::RunReport, extra: serde_json::Value, plus: bool) -> serde_json::Value {
    if plus {
        stats::json_plus_output(report, extra)
    } else {
        stats::json_output(report, extra)
    }
}

/// The table of each sweep of `policies` (none without one).
fn sweep_tables(
    policies: &str,
    variants: &[Variant],
    outs: &[Vec<RunOutput>],
) -> Result<String, Failure> {
    let mut text = String::new();
    for (part, range) in iolab_sim::sweep::sweeps(policies)
        .map_err(|e| Failure::input(format!("--policies: {e}")))?
    {
        let points: Vec<Vec<stats::SummaryRun<'_>>> = range
            .filter_map(|i| Some(summary_runs(variants.get(i)?, outs.get(i)?)))
            .collect();
        let slices: Vec<&[stats::SummaryRun<'_>]> = points.iter().map(Vec::as_slice).collect();
        text.push_str(&stats::sweep_table(&part, &slices));
    }
    Ok(text)
}

fn normal_run(
    variants: &[Variant],
    seeds: Option<&[u64]>,
    outs: &[Vec<RunOutput>],
) -> Result<String, Failure> {
    Ok(match seeds {
        None => {
            let out = outs.iter().flatten().next().ok_or_else(no_run)?;
            stats::normal_output(&out.report)
        }
        Some(seeds) => over_seeds_text(variants, outs, seeds, false),
    })
}

fn json_run(
    variants: &[Variant],
    seeds: Option<&[u64]>,
    plus: bool,
    outs: &[Vec<RunOutput>],
) -> Result<String, Failure> {
    Ok(match seeds {
        None => {
            let o = outs.iter().flatten().next().ok_or_else(no_run)?;
            pretty(&doc(&o.report, o.extra.clone(), plus))
        }
        Some(seeds) => {
            let aggregate = stats::aggregate_json(&summary_runs(&variants[0], &outs[0]));
            let runs: Vec<serde_json::Value> = seeds
                .iter()
                .zip(outs.iter().flatten())
                .map(|(seed, o)| serde_json::json!({ "seed": seed, "result": doc(&o.report, o.extra.clone(), plus) }))
                .collect();
            pretty(&serde_json::json!({
                "variant": variants[0].spec,
                "seeds": seeds,
                "runs": runs,
                "aggregate": aggregate,
            }))
        }
    })
}

fn normal_compare(
    policies: &str,
    variants: &[Variant],
    seeds: Option<&[u64]>,
    outs: &[Vec<RunOutput>],
) -> Result<String, Failure> {
    let Some(seeds) = seeds else {
        // One run per variant.
        let ones: Vec<&RunOutput> = outs.iter().flatten().collect();
        let runs: Vec<(&str, &stats::RunReport)> = variants
            .iter()
            .zip(&ones)
            .map(|(v, o)| (v.spec.as_str(), &o.report))
            .collect();
        let opts = stats::MmtestsOptions {
            captions: true,
            ..stats::MmtestsOptions::default()
        };
        let mut text = stats::mmtests_table_of_runs(&runs, &opts);
        let summary: Vec<stats::SummaryRun<'_>> = variants
            .iter()
            .zip(&ones)
            .map(|(v, o)| summary_run(v, o))
            .collect();
        text.push_str(&stats::summary_table(&summary));
        let btrfs: Vec<stats::BtrfsRun<'_>> = variants
            .iter()
            .zip(&ones)
            .map(|(v, o)| (v.spec.as_str(), &o.extra["btrfs"], o.sim_ns))
            .collect();
        text.push_str(&stats::btrfs_table(&btrfs));
        let volume: Vec<stats::VolumeRun<'_>> = variants
            .iter()
            .zip(&ones)
            .map(|(v, o)| (v.spec.as_str(), &o.extra["volume"]))
            .collect();
        text.push_str(&stats::volume_table(&volume));
        text.push_str(&sweep_tables(policies, variants, outs)?);
        return Ok(text);
    };
    let mut text = over_seeds_text(variants, outs, seeds, true);
    text.push_str(&sweep_tables(policies, variants, outs)?);
    Ok(text)
}

fn json_compare(
    variants: &[Variant],
    seeds: Option<&[u64]>,
    plus: bool,
    outs: &[Vec<RunOutput>],
) -> String {
    let Some(seeds) = seeds else {
        let runs: Vec<serde_json::Value> = variants
            .iter()
            .zip(outs.iter().flatten())
            .map(|(v, o)| serde_json::json!({ "variant": v.spec, "result": doc(&o.report, o.extra.clone(), plus) }))
            .collect();
        return pretty(&serde_json::json!({ "baseline": variants[0].spec, "runs": runs }));
    };
    let aggregates: Vec<serde_json::Value> = variants
        .iter()
        .zip(outs)
        .map(|(v, o)| {
            let mut a = stats::aggregate_json(&summary_runs(v, o));
            a["variant"] = serde_json::Value::from(v.spec.as_str());
            a
        })
        .collect();
    let mut runs = Vec::with_capacity(variants.len() * seeds.len());
    for (v, per_seed) in variants.iter().zip(outs) {
        for (seed, o) in seeds.iter().zip(per_seed) {
            runs.push(serde_json::json!({
                "variant": v.spec,
                "seed": seed,
                "result": doc(&o.report, o.extra.clone(), plus),
            }));
        }
    }
    pretty(&serde_json::json!({
        "baseline": variants[0].spec,
        "seeds": seeds,
        "runs": runs,
        "aggregates": aggregates,
    }))
}

fn no_run() -> Failure {
    Failure {
        code: 1,
        message: "no run was made".to_owned(),
    }
}

fn summary_run<'a>(v: &'a Variant, o: &'a RunOutput) -> stats::SummaryRun<'a> {
    stats::SummaryRun {
        variant: v.spec.as_str(),
        report: &o.report,
        device_bytes: device_bytes(&o.extra),
        sim_ns: o.sim_ns,
    }
}

fn summary_runs<'a>(v: &'a Variant, outs: &'a [RunOutput]) -> Vec<stats::SummaryRun<'a>> {
    outs.iter().map(|o| summary_run(v, o)).collect()
}

/// The text of a run or a comparison over seeds: for a comparison the
/// mmtests table over the pooled seeds with significant differences
/// starred and a legend; then every variant's figures as mean ± 95 % CI;
/// then the btrfs and volume blocks with a row per variant and seed.
fn over_seeds_text(
    variants: &[Variant],
    outs: &[Vec<RunOutput>],
    seeds: &[u64],
    compare: bool,
) -> String {
    let mut text = String::new();
    if compare {
        let reports: Vec<Vec<&stats::RunReport>> = outs
            .iter()
            .map(|per_seed| per_seed.iter().map(|o| &o.report).collect())
            .collect();
        let runs: Vec<(&str, &[&stats::RunReport])> = variants
            .iter()
            .zip(&reports)
            .map(|(v, r)| (v.spec.as_str(), r.as_slice()))
            .collect();
        let opts = stats::MmtestsOptions {
            mark_significant: true,
            captions: true,
            ..stats::MmtestsOptions::default()
        };
        text.push_str(&stats::mmtests_table_with(&runs, &opts));
        text.push_str(&format!(
            "\n{} seeds pooled as mmtests pools iterations; *  x%* differs from the baseline by Welch's t-test at 95 % over the seeds' values of that row\n",
            seeds.len()
        ));
    }
    let summaries: Vec<Vec<stats::SummaryRun<'_>>> = variants
        .iter()
        .zip(outs)
        .map(|(v, o)| summary_runs(v, o))
        .collect();
    let slices: Vec<&[stats::SummaryRun<'_>]> = summaries.iter().map(Vec::as_slice).collect();
    text.push_str(&stats::summary_table_over_seeds(&slices));
    let labels: Vec<Vec<String>> = variants
        .iter()
        .map(|v| {
            seeds
                .iter()
                .map(|s| format!("{} seed {s}", v.spec))
                .collect()
        })
        .collect();
    let mut btrfs: Vec<stats::BtrfsRun<'_>> = Vec::new();
    let mut volume: Vec<stats::VolumeRun<'_>> = Vec::new();
    for (names, per_seed) in labels.iter().zip(outs) {
        for (name, o) in names.iter().zip(per_seed) {
            btrfs.push((name.as_str(), &o.extra["btrfs"], o.sim_ns));
            volume.push((name.as_str(), &o.extra["volume"]));
        }
    }
    text.push_str(&stats::btrfs_table(&btrfs));
    text.push_str(&stats::volume_table(&volume));
    text
}

/// Bytes read and written by every device of a run, from its report.
fn device_bytes(extra: &serde_json::Value) -> [u64; 2] {
    let mut sum = [0u64; 2];
    for d in extra["devices"].as_array().into_iter().flatten() {
        for (i, key) in ["read_bytes", "write_bytes"].into_iter().enumerate() {
            sum[i] += d["counters"][key].as_u64().unwrap_or(0);
        }
    }
    sum
}
