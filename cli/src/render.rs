//! What `run` and `compare` print, from their runs' outputs: fio's report
//! or the comparison tables, as text or JSON, for one seed or several.
//! The runs are folded in one at a time as they end ([`Fold`]): each
//! run's JSON document is written out at once and the run is dropped,
//! keeping only what the tables need of it (its [`stats::RunFigures`],
//! its variant's mmtests column), so memory does not grow with the
//! number of runs. `merge` folds through the same code, so a merged
//! sharded command prints what the unsharded one does.

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

/// Where folded text goes, piece by piece in order.
pub type Sink<'s> = dyn FnMut(&str) -> Result<(), Failure> + 's;

/// A JSON object written a piece at a time in serde_json's pretty layout
/// (two spaces a level), so that an array of run documents is written
/// item by item; the bytes are those of the whole object pretty-printed.
#[derive(Default)]
struct JsonPieces {
    fields: usize,
    items: usize,
}

/// `text` with every line after the first indented by `by`.
fn indent_after_first(text: &str, by: &str) -> String {
    text.replace('\n', &format!("\n{by}"))
}

fn pretty_bare(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

impl JsonPieces {
    fn key(&mut self, key: &str) -> String {
        let sep = if self.fields == 0 { "{\n" } else { ",\n" };
        self.fields += 1;
        format!("{sep}  {}: ", serde_json::Value::from(key))
    }

    fn field(&mut self, key: &str, v: &serde_json::Value) -> String {
        let mut s = self.key(key);
        s.push_str(&indent_after_first(&pretty_bare(v), "  "));
        s
    }

    fn open_array(&mut self, key: &str) -> String {
        self.items = 0;
        let mut s = self.key(key);
        s.push('[');
        s
    }

    fn item(&mut self, v: &serde_json::Value) -> String {
        let sep = if self.items == 0 { "\n    " } else { ",\n    " };
        self.items += 1;
        format!("{sep}{}", indent_after_first(&pretty_bare(v), "    "))
    }

    fn close_array(&mut self) -> String {
        if self.items == 0 {
            "]".to_owned()
        } else {
            "\n  ]".to_owned()
        }
    }

    fn end(self) -> String {
        if self.fields == 0 {
            "{}\n".to_owned()
        } else {
            "\n}\n".to_owned()
        }
    }
}

/// What `--plot` draws of a fold.
pub struct Plotted<'f> {
    /// Each variant's first report (kept when the fold was asked to).
    pub firsts: Vec<(&'f str, &'f stats::RunReport)>,
    /// Each variant's first run's policy state: `{"policy_report",
    /// "btrfs", "volume"}`, the JSON's `iolab` objects of those names, the
    /// policy report with its trace records.
    pub states: Vec<&'f serde_json::Value>,
    /// The seed of the first run.
    pub seed: u64,
    /// Every run's figures, by variant, then seed.
    pub figures: &'f [Vec<stats::RunFigures>],
}

/// The output of `kind` for its runs, folded in plan order (by variant,
/// then seed): over `seeds` when `--seeds` was given, else the one run of
/// each variant; a comparison's text ends with a table for each sweep of
/// `policies`. Each of `formats` in fio's order: terse lines, JSON,
/// normal text. A JSON document over several runs is written as they
/// come; the rest at [`Fold::finish`].
pub struct Fold<'v> {
    kind: Kind,
    policies: String,
    variants: &'v [Variant],
    seeds: Option<Vec<u64>>,
    formats: Formats,
    per_variant: usize,
    /// `--plot`: keep each variant's first report whole (the first
    /// [`crate::plot::MOST_DRAWN`] variants').
    keep_firsts: bool,
    /// The policy traces were recorded for `--plot` alone: left out of
    /// the JSON (`null`, as without `--trace`).
    traces_for_plot_only: bool,
    folded: usize,
    /// `run` without seeds: its one run, whole.
    single: Option<RunOutput>,
    json: Option<JsonPieces>,
    mm: Option<stats::MmtestsFold>,
    columns: Vec<stats::MmtestsColumn>,
    /// By variant, then seed.
    figures: Vec<Vec<stats::RunFigures>>,
    /// (label, the run's `btrfs` object, its simulated ns), runs with one.
    btrfs: Vec<(String, serde_json::Value, u64)>,
    volume: Vec<(String, serde_json::Value)>,
    firsts: Vec<stats::RunReport>,
    first_states: Vec<serde_json::Value>,
    first_seed: Option<u64>,
}

impl<'v> Fold<'v> {
    pub fn new(
        kind: Kind,
        policies: &str,
        variants: &'v [Variant],
        seeds: Option<Vec<u64>>,
        formats: Formats,
        keep_firsts: bool,
    ) -> Self {
        Fold {
            kind,
            policies: policies.to_owned(),
            variants,
            per_variant: seeds.as_ref().map_or(1, Vec::len).max(1),
            seeds,
            formats,
            keep_firsts,
            traces_for_plot_only: false,
            folded: 0,
            single: None,
            json: None,
            mm: None,
            columns: Vec::with_capacity(variants.len()),
            figures: Vec::with_capacity(variants.len()),
            btrfs: Vec::new(),
            volume: Vec::new(),
            firsts: Vec::new(),
            first_states: Vec::new(),
            first_seed: None,
        }
    }

    /// Says that the policy traces were recorded only for `--plot`'s
    /// figures, so the JSON leaves them out.
    pub fn traces_for_plot_only(mut self, only: bool) -> Self {
        self.traces_for_plot_only = only;
        self
    }

    /// `run` without `--seeds`: one run, printed as fio prints it.
    fn is_single(&self) -> bool {
        self.kind == Kind::Run && self.seeds.is_none()
    }

    fn mm_options(&self) -> stats::MmtestsOptions {
        stats::MmtestsOptions {
            mark_significant: self.seeds.is_some(),
            captions: true,
            ..stats::MmtestsOptions::default()
        }
    }

    /// Folds in the next run in plan order, writing what can be written
    /// now to `sink`.
    pub fn push(&mut self, mut o: RunOutput, sink: &mut Sink<'_>) -> Result<(), Failure> {
        let v = self.folded / self.per_variant;
        let k = self.folded % self.per_variant;
        let variant = self.variants.get(v).ok_or_else(|| Failure {
            code: 1,
            message: "more runs than planned".to_owned(),
        })?;
        self.folded += 1;
        if self.first_seed.is_none() {
            self.first_seed = o.extra["seed"].as_u64();
        }
        // A variant's first run's state, for --plot (taken before the
        // trace leaves the report).
        let state = if self.keeps_first() && (k == 0 || self.is_single()) {
            serde_json::json!({
                "policy_report": o.extra["policy_report"],
                "btrfs": o.extra["btrfs"],
                "volume": o.extra["volume"],
            })
        } else {
            serde_json::Value::Null
        };
        // What the trace added to the report, taken back out: `trace`
        // is null and `group_periods` absent without it.
        if self.traces_for_plot_only
            && let Some(r) = o
                .extra
                .get_mut("policy_report")
                .and_then(serde_json::Value::as_object_mut)
        {
            if let Some(t) = r.get_mut("trace") {
                *t = serde_json::Value::Null;
            }
            r.shift_remove("group_periods");
        }
        if self.is_single() {
            self.figures.push(vec![figures_of(&o)]);
            if self.keeps_first() {
                self.firsts.push(o.report.clone());
                self.first_states.push(state);
            }
            self.single = Some(o);
            return Ok(());
        }
        let seed = self.seeds.as_ref().and_then(|s| s.get(k).copied());
        if let Some(plus) = self.formats.json {
            let mut text = String::new();
            let j = match &mut self.json {
                Some(j) => j,
                None => {
                    let mut j = JsonPieces::default();
                    match (self.kind, &self.seeds) {
                        (Kind::Run, seeds) => {
                            text.push_str(&j.field("variant", &variant.spec.as_str().into()));
                            text.push_str(&j.field("seeds", &serde_json::json!(seeds)));
                        }
                        (Kind::Compare, seeds) => {
                            text.push_str(
                                &j.field("baseline", &self.variants[0].spec.as_str().into()),
                            );
                            if let Some(seeds) = seeds {
                                text.push_str(&j.field("seeds", &serde_json::json!(seeds)));
                            }
                        }
                    }
                    text.push_str(&j.open_array("runs"));
                    self.json.insert(j)
                }
            };
            let result = doc(&o.report, o.extra.clone(), plus);
            let item = match (self.kind, seed) {
                (Kind::Run, _) => serde_json::json!({ "seed": seed, "result": result }),
                (Kind::Compare, None) => {
                    serde_json::json!({ "variant": variant.spec, "result": result })
                }
                (Kind::Compare, Some(seed)) => serde_json::json!({
                    "variant": variant.spec,
                    "seed": seed,
                    "result": result,
                }),
            };
            text.push_str(&j.item(&item));
            sink(&text)?;
        }
        if k == 0 {
            self.figures.push(Vec::with_capacity(self.per_variant));
            if self.keeps_first() {
                self.firsts.push(o.report.clone());
                self.first_states.push(state);
            }
        }
        if let Some(f) = self.figures.last_mut() {
            f.push(figures_of(&o));
        }
        if self.kind == Kind::Compare {
            let opts = self.mm_options();
            self.mm
                .get_or_insert_with(|| stats::MmtestsFold::new(&variant.spec, &opts))
                .push(&o.report);
            if k + 1 == self.per_variant
                && let Some(mm) = self.mm.take()
            {
                self.columns.push(mm.finish());
            }
        }
        let label = match seed {
            Some(s) => format!("{} seed {s}", variant.spec),
            None => variant.spec.clone(),
        };
        if o.extra["btrfs"].is_object() {
            self.btrfs
                .push((label.clone(), o.extra["btrfs"].clone(), o.sim_ns));
        }
        if o.extra["volume"].is_object() {
            self.volume.push((label, o.extra["volume"].clone()));
        }
        Ok(())
    }

    /// Whether the next variant's first run is kept for `--plot`: at most
    /// [`crate::plot::MOST_DRAWN`] are, so that a sweep's memory stays
    /// bounded whatever its points.
    fn keeps_first(&self) -> bool {
        self.keep_firsts && self.firsts.len() < crate::plot::MOST_DRAWN
    }

    /// What `--plot` draws.
    pub fn plotted(&self) -> Plotted<'_> {
        let firsts = self
            .variants
            .iter()
            .zip(&self.firsts)
            .map(|(v, r)| (v.spec.as_str(), r))
            .collect();
        let seed = self
            .seeds
            .as_ref()
            .and_then(|s| s.first().copied())
            .or(self.first_seed)
            .unwrap_or(0);
        Plotted {
            firsts,
            states: self.first_states.iter().collect(),
            seed,
            figures: &self.figures,
        }
    }

    /// Writes the rest: the single run's report, or the JSON document's
    /// end and the tables.
    pub fn finish(mut self, sink: &mut Sink<'_>) -> Result<(), Failure> {
        if self.folded == 0 {
            return Err(no_run());
        }
        if self.folded != self.variants.len() * self.per_variant {
            return Err(Failure {
                code: 1,
                message: format!(
                    "{} runs folded of {} planned",
                    self.folded,
                    self.variants.len() * self.per_variant
                ),
            });
        }
        if let Some(o) = &self.single {
            return sink(&single_text(o, self.formats));
        }
        let mut text = String::new();
        if let Some(mut j) = self.json.take() {
            text.push_str(&j.close_array());
            if self.seeds.is_some() {
                let aggregates: Vec<serde_json::Value> = self
                    .variants
                    .iter()
                    .zip(&self.figures)
                    .map(|(v, f)| {
                        let mut a = stats::aggregate_json(&summary_runs(v, f));
                        if self.kind == Kind::Compare {
                            a["variant"] = serde_json::Value::from(v.spec.as_str());
                        }
                        a
                    })
                    .collect();
                text.push_str(&match self.kind {
                    Kind::Run => j.field("aggregate", &aggregates[0]),
                    Kind::Compare => j.field("aggregates", &serde_json::Value::Array(aggregates)),
                });
            }
            text.push_str(&j.end());
        }
        sink(&text)?;
        if self.formats.normal {
            self.tables(sink)?;
        }
        Ok(())
    }

    /// The normal text over several runs, a table at a time.
    fn tables(&self, sink: &mut Sink<'_>) -> Result<(), Failure> {
        if self.kind == Kind::Compare {
            let mut text = stats::mmtests_table_of_columns(&self.columns, &self.mm_options());
            if let Some(seeds) = &self.seeds {
                text.push_str(&format!(
                    "\n{} seeds pooled as mmtests pools iterations; *  x%* differs from the baseline by Welch's t-test at 95 % over the seeds' values of that row\n",
                    seeds.len()
                ));
            }
            sink(&text)?;
        }
        let summaries: Vec<Vec<stats::SummaryRun<'_>>> = self
            .variants
            .iter()
            .zip(&self.figures)
            .map(|(v, f)| summary_runs(v, f))
            .collect();
        if self.seeds.is_some() {
            let slices: Vec<&[stats::SummaryRun<'_>]> =
                summaries.iter().map(Vec::as_slice).collect();
            sink(&stats::summary_table_over_seeds(&slices))?;
        } else {
            let ones: Vec<stats::SummaryRun<'_>> = summaries.into_iter().flatten().collect();
            sink(&stats::summary_table(&ones))?;
        }
        let mut text = String::new();
        let btrfs: Vec<stats::BtrfsRun<'_>> = self
            .btrfs
            .iter()
            .map(|(l, b, ns)| (l.as_str(), b, *ns))
            .collect();
        text.push_str(&stats::btrfs_table(&btrfs));
        let volume: Vec<stats::VolumeRun<'_>> =
            self.volume.iter().map(|(l, b)| (l.as_str(), b)).collect();
        text.push_str(&stats::volume_table(&volume));
        if self.kind == Kind::Compare {
            text.push_str(&sweep_tables(&self.policies, self.variants, &self.figures)?);
        }
        sink(&text)
    }
}

/// One run of `run` as fio prints it: fio's --status-interval reports (the
/// report as it stood at each status time, in the same formats), then the
/// final one.
fn single_text(o: &RunOutput, formats: Formats) -> String {
    let mut text = String::new();
    let one = |text: &mut String, report: &stats::RunReport, extra: serde_json::Value| {
        if formats.terse {
            let d = doc(report, extra.clone(), false);
            text.push_str(&stats::terse_output(&d, formats.terse_version));
        }
        if let Some(plus) = formats.json {
            text.push_str(&pretty(&doc(report, extra, plus)));
        }
    };
    for (t, report) in &o.status {
        let extra = serde_json::json!({ "seed": o.extra["seed"], "sim_ns": t });
        one(&mut text, report, extra);
        if formats.normal {
            text.push_str(&stats::normal_output(report));
            text.push('\n');
        }
    }
    one(&mut text, &o.report, o.extra.clone());
    if formats.normal {
        text.push_str(&stats::normal_output(&o.report));
    }
    text
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
    figures: &[Vec<stats::RunFigures>],
) -> Result<String, Failure> {
    let mut text = String::new();
    for (part, range) in iolab_sim::sweep::sweeps(policies)
        .map_err(|e| Failure::input(format!("--policies: {e}")))?
    {
        let points: Vec<Vec<stats::SummaryRun<'_>>> = range
            .filter_map(|i| Some(summary_runs(variants.get(i)?, figures.get(i)?)))
            .collect();
        let slices: Vec<&[stats::SummaryRun<'_>]> = points.iter().map(Vec::as_slice).collect();
        text.push_str(&stats::sweep_table(&part, &slices));
    }
    Ok(text)
}

fn no_run() -> Failure {
    Failure {
        code: 1,
        message: "no run was made".to_owned(),
    }
}

/// What the tables keep of a run.
fn figures_of(o: &RunOutput) -> stats::RunFigures {
    stats::RunFigures::of(&o.report, device_bytes(&o.extra), o.sim_ns)
}

fn summary_runs<'a>(v: &'a Variant, f: &'a [stats::RunFigures]) -> Vec<stats::SummaryRun<'a>> {
    f.iter()
        .map(|f| stats::SummaryRun {
            variant: v.spec.as_str(),
            figures: f,
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::JsonPieces;

    /// The pieces make the bytes serde_json's pretty printer makes of the
    /// whole object, with an empty array and with items.
    #[test]
    fn pieces_are_the_pretty_printed_object() {
        let a = serde_json::json!({ "x": 1, "nested": { "s": "two\nlines", "v": [1, 2] } });
        let b = serde_json::json!([{ "deep": { "er": [] } }, "s"]);
        for items in [vec![], vec![a.clone()], vec![a.clone(), b.clone()]] {
            let whole = serde_json::json!({
                "baseline": "none",
                "seeds": [1, 2],
                "runs": items,
                "aggregates": [b.clone(), {}],
            });
            let mut j = JsonPieces::default();
            let mut text = j.field("baseline", &whole["baseline"]);
            text.push_str(&j.field("seeds", &whole["seeds"]));
            text.push_str(&j.open_array("runs"));
            for it in &items {
                text.push_str(&j.item(it));
            }
            text.push_str(&j.close_array());
            text.push_str(&j.field("aggregates", &whole["aggregates"]));
            text.push_str(&j.end());
            assert_eq!(text, crate::pretty(&whole));
        }
    }
}
