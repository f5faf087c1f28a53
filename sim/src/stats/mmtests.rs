//! mmtests-style comparison tables (`compare-kernels.sh` output).
//!
//! # What mmtests compares for fio (checked against gormanm/mmtests)
//!
//! * `kb/sec-<job>-read|write` — `bin/lib/MMTests/ExtractFio.pm` reads
//!   `fio.log`, the `--minimal` (terse v3) output, and adds **one sample per
//!   terse line**: field 44 (read) or 85 (write), i.e. fio's `bw_mean`, the
//!   mean of the 500 ms bandwidth samples in KiB/s, for lines whose total
//!   read (field 5) / write (field 46) KiB is > 0. One terse line is one fio
//!   "thread status": a job, or a whole group named after its first job
//!   under `group_reporting`. So the Min/Hmean/Stddev/CoeffVar/Max rows range
//!   over *those per-entry means* — one value per job (jobs sharing a name,
//!   e.g. `numjobs` clones without `group_reporting`, pool into one row) per
//!   iteration — never over the 500 ms samples themselves. With one
//!   group-reported run, n = 1: Min = Hmean = Max = `bw_mean`, and the
//!   sample Stddev is undefined (mmtests prints it as 0). The terse field is
//!   printed with `%f`, so samples are rounded to 6 decimals here as well.
//!   Comparison ops (`CompareFio.pm` / `SummariseMultiops.pm`): Min pdiff,
//!   Hmean pdiff, Stddev pndiff, CoeffVar pndiff, Max pdiff.
//! * `latency-read|write` — `ExtractFiolatency.pm` globs every
//!   `fio_lat.*.log` (one per job, regardless of group reporting) and takes
//!   the raw value column of each line (direction 0 read, 1 write; trim lines
//!   are skipped) without any unit conversion. With `log_avg_msec=10` each
//!   line is a 10 ms window average. fio < 3.0 logged µs (integers, the
//!   window mean rounded), fio ≥ 3.0 logs ns; mmtests prints whichever it
//!   got (its unit label was `DATA_TIME_MSECONDS` in 2016–2017 and
//!   `DATA_TIME_NSECONDS` later). [`LatencyUnit::Usec`] (default) reproduces
//!   the 2016–2019 reports. Rows (`SummariseVariabletime.pm`): Min,
//!   1st/2nd/3rd-qrtle, Max-90%/93%/95%/99% (element `int((n−1)·p + 0.5)` of
//!   the sorted samples, `calc_quartiles`), Max, Mean; all pndiff.
//! * `Stat.pm`: Hmean returns −1 when a sample is ≤ 0 (we return NaN);
//!   `Compare.pm` prints a cell whose value (or whose baseline) is −1/NaN as
//!   `0.00 (0.00%)`, which is what [`mmtests_table`] does for any NaN.
//!   `calc_stddev` uses n − 1 and returns NaN for n ≤ 1; CoeffVar treats a
//!   NaN stddev as 0.
//!
//! Layout: one block per comparison module (throughput, then latency), rows
//! statistic-major (all `Min` rows, then all `Hmean` rows, …) as in
//! `Compare.pm`; row label `%-Ss %-Os`; cells `%12.2f (%7.2f%%)`; a single
//! header line with the variant names right-aligned over their cells.

use std::fmt::Write as _;

use super::Dir;
use super::report::RunReport;
use super::spread::{hedges_g, welch_differs};

/// Index of mmtests' quantile rule: element `int((n−1)·p + 0.5)` of the
/// ascending samples (`n ≥ 1`), computed in `f64` like Perl.
pub fn quantile_index(n: usize, p: f64) -> usize {
    if n == 0 {
        return 0;
    }
    let i = ((n - 1) as f64 * p + 0.5) as usize;
    i.min(n - 1)
}

/// mmtests quantile of already sorted samples; NaN when empty.
pub fn quantile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[quantile_index(sorted.len(), p)]
}

/// Higher-is-better percentage difference (`Stat.pm` `pdiff`):
/// equal ⇒ 0, new 0 ⇒ 0, base 0 or NaN ⇒ 100, else `new·100/base − 100`.
pub fn pdiff(new: f64, base: f64) -> f64 {
    if new == base || new == 0.0 {
        return 0.0;
    }
    if base == 0.0 || base.is_nan() {
        return 100.0;
    }
    new * 100.0 / base - 100.0
}

/// Lower-is-better percentage difference (`Stat.pm` `pndiff`):
/// equal ⇒ 0, new 0 ⇒ 100, base 0 ⇒ −99, else `100 − new·100/base`.
pub fn pndiff(new: f64, base: f64) -> f64 {
    if new == base {
        return 0.0;
    }
    if new == 0.0 {
        return 100.0;
    }
    if base == 0.0 {
        return -99.0;
    }
    100.0 - new * 100.0 / base
}

/// Harmonic mean `n / Σ 1/xᵢ`; NaN when empty or when any sample is ≤ 0.
pub fn hmean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut sum = 0.0;
    for &x in xs {
        if x.is_nan() || x <= 0.0 {
            return f64::NAN;
        }
        sum += 1.0 / x;
    }
    xs.len() as f64 / sum
}

/// Arithmetic mean; NaN when empty.
pub fn amean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Divisor of the standard deviation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StddevForm {
    /// `÷(n−1)`, NaN for n ≤ 1 (`calc_stddev` in the mmtests trees read).
    #[default]
    Sample,
    /// `÷n`, 0 for n = 1 (the older population form).
    Population,
}

/// Standard deviation in the chosen form; NaN when undefined.
pub fn stddev(xs: &[f64], form: StddevForm) -> f64 {
    let n = xs.len();
    let div = match form {
        StddevForm::Sample if n <= 1 => return f64::NAN,
        StddevForm::Sample => (n - 1) as f64,
        StddevForm::Population if n == 0 => return f64::NAN,
        StddevForm::Population => n as f64,
    };
    let m = amean(xs);
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    (ss / div).sqrt()
}

/// `100·stddev/mean`, with a NaN stddev or mean taken as 0 and 0 returned
/// for a zero mean (`calc_coeffvar`).
pub fn coeffvar(xs: &[f64], form: StddevForm) -> f64 {
    let mut sd = stddev(xs, form);
    let mut m = amean(xs);
    if sd.is_nan() {
        sd = 0.0;
    }
    if m.is_nan() {
        m = 0.0;
    }
    if m != 0.0 { sd * 100.0 / m } else { 0.0 }
}

fn min_of(xs: &[f64]) -> f64 {
    xs.iter().copied().reduce(f64::min).unwrap_or(f64::NAN)
}

fn max_of(xs: &[f64]) -> f64 {
    xs.iter().copied().reduce(f64::max).unwrap_or(f64::NAN)
}

/// Unit of the `latency-*` rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LatencyUnit {
    /// fio < 3.0 latency logs: integer µs (window mean in ns, rounded).
    #[default]
    Usec,
    /// fio ≥ 3.0 latency logs: ns.
    Nsec,
}

/// Formatting and statistics knobs of [`mmtests_table_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmtestsOptions {
    pub stddev: StddevForm,
    pub latency_unit: LatencyUnit,
    /// Width of the value field (`%12.2f`).
    pub field_width: usize,
    /// Width of the percentage field (`%7.2f`).
    pub compare_width: usize,
    /// Mark a cell whose difference from the baseline is significant:
    /// Welch's t-test at 95 % ([`welch_differs`]) on the values the row's
    /// statistic takes in each iteration of the two variants, printed
    /// `*  5.00%*` in place of `(  5.00%)` as mmtests prints it. Needs two
    /// iterations or more on both sides; rows whose statistic is undefined
    /// for one iteration (Stddev, CoeffVar of one sample) are never marked.
    pub mark_significant: bool,
    /// Put a caption (what the rows measure, in which unit) and a legend
    /// (which sign is better) above each block. Off by default: the
    /// blocks are then exactly mmtests' layout.
    pub captions: bool,
}

impl Default for MmtestsOptions {
    fn default() -> Self {
        MmtestsOptions {
            stddev: StddevForm::Sample,
            latency_unit: LatencyUnit::Usec,
            field_width: 12,
            compare_width: 7,
            mark_significant: false,
            captions: false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmp {
    PDiff,
    PnDiff,
}

#[derive(Clone, Copy, Debug)]
enum Stat {
    Min,
    Max,
    Hmean,
    Amean,
    Stddev,
    CoeffVar,
    Quantile(f64),
}

const THROUGHPUT_ROWS: [(&str, Stat, Cmp); 5] = [
    ("Min", Stat::Min, Cmp::PDiff),
    ("Hmean", Stat::Hmean, Cmp::PDiff),
    ("Stddev", Stat::Stddev, Cmp::PnDiff),
    ("CoeffVar", Stat::CoeffVar, Cmp::PnDiff),
    ("Max", Stat::Max, Cmp::PDiff),
];

const LATENCY_ROWS: [(&str, Stat, Cmp); 10] = [
    ("Min", Stat::Min, Cmp::PnDiff),
    ("1st-qrtle", Stat::Quantile(0.25), Cmp::PnDiff),
    ("2nd-qrtle", Stat::Quantile(0.50), Cmp::PnDiff),
    ("3rd-qrtle", Stat::Quantile(0.75), Cmp::PnDiff),
    ("Max-90%", Stat::Quantile(0.90), Cmp::PnDiff),
    ("Max-93%", Stat::Quantile(0.93), Cmp::PnDiff),
    ("Max-95%", Stat::Quantile(0.95), Cmp::PnDiff),
    ("Max-99%", Stat::Quantile(0.99), Cmp::PnDiff),
    ("Max", Stat::Max, Cmp::PnDiff),
    ("Mean", Stat::Amean, Cmp::PnDiff),
];

fn compute(stat: Stat, xs: &[f64], form: StddevForm) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    match stat {
        Stat::Min => min_of(xs),
        Stat::Max => max_of(xs),
        Stat::Hmean => hmean(xs),
        Stat::Amean => amean(xs),
        Stat::Stddev => stddev(xs, form),
        Stat::CoeffVar => coeffvar(xs, form),
        Stat::Quantile(p) => {
            let mut s = xs.to_vec();
            s.sort_by(f64::total_cmp);
            quantile(&s, p)
        }
    }
}

/// Named sample sets of one variant, in first-appearance order.
type SampleSets = Vec<(String, Vec<f64>)>;

fn push_sample(sets: &mut SampleSets, op: String, v: f64) {
    match sets.iter_mut().find(|(name, _)| *name == op) {
        Some((_, xs)) => xs.push(v),
        None => sets.push((op, vec![v])),
    }
}

/// `kb/sec-<job>-read|write` samples of one variant (see module docs).
pub fn kbsec_samples(iterations: &[&RunReport]) -> Vec<(String, Vec<f64>)> {
    let mut sets = SampleSets::new();
    for r in iterations {
        for j in &r.jobs {
            for d in [Dir::Read, Dir::Write] {
                let dr = j.dir(d);
                if dr.io_bytes >> 10 == 0 {
                    continue;
                }
                // What mmtests parses back from fio's "%f".
                let mean = format!("{:.6}", dr.bw_samples.mean)
                    .parse::<f64>()
                    .unwrap_or(0.0);
                push_sample(&mut sets, format!("kb/sec-{}-{}", j.name, d.name()), mean);
            }
        }
    }
    sets
}

/// A latency-log window's mean as the table reads it: whole µs, or ns.
fn window_value(ns: u64, unit: LatencyUnit) -> u64 {
    match unit {
        LatencyUnit::Usec => ns.saturating_add(500) / 1000,
        LatencyUnit::Nsec => ns,
    }
}

/// `latency-read|write` samples of one variant: every 10 ms window average
/// of every job (see module docs).
pub fn latency_samples(iterations: &[&RunReport], unit: LatencyUnit) -> Vec<(String, Vec<f64>)> {
    let mut sets = SampleSets::new();
    for d in [Dir::Read, Dir::Write] {
        let mut xs = Vec::new();
        for r in iterations {
            for s in &r.series {
                xs.extend(
                    s.dirs[d.index()]
                        .values()
                        .iter()
                        .map(|&ns| window_value(ns, unit) as f64),
                );
            }
        }
        if !xs.is_empty() {
            sets.push((format!("latency-{}", d.name()), xs));
        }
    }
    sets
}

/// One formatted cell, `Compare.pm` style: NaN on either side prints
/// `0.00 (0.00%)`.
fn cell(v: f64, base: f64, cmp: Cmp, significant: bool, opts: &MmtestsOptions) -> String {
    let (val, pct) = if v.is_nan() || base.is_nan() {
        (0.0, 0.0)
    } else {
        let p = match cmp {
            Cmp::PDiff => pdiff(v, base),
            Cmp::PnDiff => pndiff(v, base),
        };
        (v, p)
    };
    let (open, close) = if significant { ('*', '*') } else { ('(', ')') };
    format!(
        "{:fw$.2} {open}{:cw$.2}%{close}",
        val,
        pct,
        fw = opts.field_width,
        cw = opts.compare_width
    )
}

/// A variant's latency windows of one direction pooled over its
/// iterations, as a count of each value: the values are whole µs or ns,
/// so the rows of [`LATENCY_ROWS`] come out as they would from the
/// samples in a row (their sum is exact), in memory that grows with the
/// distinct values only.
#[derive(Clone, Debug, Default)]
struct Counts {
    of: std::collections::BTreeMap<u64, u64>,
    n: u64,
}

impl Counts {
    fn add(&mut self, v: u64) {
        *self.of.entry(v).or_insert(0) += 1;
        self.n += 1;
    }

    /// The `i`-th smallest value.
    fn nth(&self, i: u64) -> f64 {
        let mut seen = 0;
        for (&v, &c) in &self.of {
            seen += c;
            if i < seen {
                return v as f64;
            }
        }
        f64::NAN
    }

    fn compute(&self, stat: Stat, form: StddevForm) -> f64 {
        if self.n == 0 {
            return f64::NAN;
        }
        match stat {
            Stat::Min => self.of.keys().next().map_or(f64::NAN, |&v| v as f64),
            Stat::Max => self.of.keys().next_back().map_or(f64::NAN, |&v| v as f64),
            // Whole numbers below 2^53 add up exactly in any order.
            Stat::Amean => {
                self.of
                    .iter()
                    .map(|(&v, &c)| v as f64 * c as f64)
                    .sum::<f64>()
                    / self.n as f64
            }
            Stat::Quantile(p) => self.nth(quantile_index(self.n as usize, p) as u64),
            Stat::Hmean | Stat::Stddev | Stat::CoeffVar => {
                let xs: Vec<f64> = self
                    .of
                    .iter()
                    .flat_map(|(&v, &c)| std::iter::repeat_n(v as f64, c as usize))
                    .collect();
                compute(stat, &xs, form)
            }
        }
    }
}

/// One operation's cells in one variant's column: each row's value over
/// the pooled samples, then (for the significance marks) each
/// iteration's value of every row, NaN where it is undefined, in one
/// run of numbers.
#[derive(Clone, Debug, Default)]
struct OpCells {
    op: String,
    rows: usize,
    cells: Vec<f64>,
}

impl OpCells {
    fn pooled(&self, row: usize) -> f64 {
        self.cells[row]
    }

    /// Row `row`'s values in the iterations where it is defined.
    fn each(&self, row: usize) -> Vec<f64> {
        self.cells[self.rows..]
            .chunks(self.rows)
            .map(|c| c[row])
            .filter(|v| !v.is_nan())
            .collect()
    }
}

/// What one variant puts in an mmtests table: its name and, per block,
/// its cells. Built by [`MmtestsFold`] one iteration at a time, so a
/// variant's iterations need not be held together.
#[derive(Clone, Debug, Default)]
pub struct MmtestsColumn {
    pub name: String,
    tput: Vec<OpCells>,
    lat: Vec<OpCells>,
}

/// Appends one iteration's value of each of `rows`.
fn push_each(each: &mut Vec<f64>, rows: &[(&str, Stat, Cmp)], value: impl Fn(Stat) -> f64) {
    each.extend(rows.iter().map(|&(_, stat, _)| value(stat)));
}

/// Pooled row values then the iterations' ones, as [`OpCells`] holds them.
fn cells(pooled: impl Iterator<Item = f64>, each: &[f64]) -> Vec<f64> {
    let mut c: Vec<f64> = pooled.collect();
    c.extend_from_slice(each);
    c
}

/// One variant's column of an mmtests table, fed one iteration (run) at a
/// time: throughput samples (one per entry and run) are kept, latency
/// windows counted by value; each iteration's own row values are kept for
/// the significance marks.
#[derive(Clone, Debug)]
pub struct MmtestsFold {
    name: String,
    opts: MmtestsOptions,
    /// Per operation: its samples, and each iteration's row values.
    tput: Vec<(String, Vec<f64>, Vec<f64>)>,
    /// Read, write.
    lat: [Option<(Counts, Vec<f64>)>; 2],
}

impl MmtestsFold {
    pub fn new(name: &str, opts: &MmtestsOptions) -> Self {
        MmtestsFold {
            name: name.to_owned(),
            opts: *opts,
            tput: Vec::new(),
            lat: [None, None],
        }
    }

    /// Adds one iteration.
    pub fn push(&mut self, report: &RunReport) {
        let form = self.opts.stddev;
        for (op, xs) in kbsec_samples(&[report]) {
            let k = match self.tput.iter().position(|(name, _, _)| *name == op) {
                Some(k) => k,
                None => {
                    self.tput.push((op, Vec::new(), Vec::new()));
                    self.tput.len() - 1
                }
            };
            let (_, pooled, each) = &mut self.tput[k];
            pooled.extend_from_slice(&xs);
            push_each(each, &THROUGHPUT_ROWS, |stat| compute(stat, &xs, form));
        }
        for (i, d) in [Dir::Read, Dir::Write].into_iter().enumerate() {
            let xs: Vec<f64> = report
                .series
                .iter()
                .flat_map(|s| s.dirs[d.index()].values().iter())
                .map(|&ns| window_value(ns, self.opts.latency_unit) as f64)
                .collect();
            if xs.is_empty() {
                continue;
            }
            let (counts, each) = self.lat[i].get_or_insert_with(Default::default);
            for &x in &xs {
                counts.add(x as u64);
            }
            push_each(each, &LATENCY_ROWS, |stat| compute(stat, &xs, form));
        }
    }

    /// The column, each row computed over the pooled samples.
    pub fn finish(self) -> MmtestsColumn {
        let form = self.opts.stddev;
        let tput = self
            .tput
            .into_iter()
            .map(|(op, xs, each)| OpCells {
                cells: cells(
                    THROUGHPUT_ROWS
                        .iter()
                        .map(|&(_, stat, _)| compute(stat, &xs, form)),
                    &each,
                ),
                rows: THROUGHPUT_ROWS.len(),
                op,
            })
            .collect();
        let lat = self
            .lat
            .into_iter()
            .zip([Dir::Read, Dir::Write])
            .filter_map(|(l, d)| {
                let (counts, each) = l?;
                Some(OpCells {
                    op: format!("latency-{}", d.name()),
                    rows: LATENCY_ROWS.len(),
                    cells: cells(
                        LATENCY_ROWS
                            .iter()
                            .map(|&(_, stat, _)| counts.compute(stat, form)),
                        &each,
                    ),
                })
            })
            .collect();
        MmtestsColumn {
            name: self.name,
            tput,
            lat,
        }
    }
}

/// Which block of a column.
fn block_of(c: &MmtestsColumn, latency: bool) -> &[OpCells] {
    if latency { &c.lat } else { &c.tput }
}

/// The value every window of every column of a latency operation takes,
/// when it takes one only (every column has it, its Min equal to its
/// Max, and the same in each): a row of it says nothing.
fn constant_value(columns: &[MmtestsColumn], op: &str) -> Option<f64> {
    let (min, max) = (0, LATENCY_ROWS.len() - 2);
    let mut value = None;
    for c in columns {
        let cells = c.lat.iter().find(|cells| cells.op == op)?;
        let (lo, hi) = (cells.pooled(min), cells.pooled(max));
        if lo != hi || value.is_some_and(|v| v != lo) {
            return None;
        }
        value = Some(lo);
    }
    value
}

/// What the table says below its blocks: latency operations left out as
/// constant, and each starred cell's effect size.
#[derive(Default)]
struct Notes {
    constant: Vec<(String, f64)>,
    /// (row label, operation, column, Hedges' g).
    effects: Vec<(String, String, String, f64)>,
}

fn render_block(
    out: &mut String,
    columns: &[MmtestsColumn],
    latency: bool,
    rows: &[(&str, Stat, Cmp)],
    opts: &MmtestsOptions,
    notes: &mut Notes,
) {
    // Union of operations, baseline first; a latency constant in every
    // window of every column left out (said below the table).
    let mut ops: Vec<&str> = Vec::new();
    for c in columns {
        for cells in block_of(c, latency) {
            if !ops.contains(&cells.op.as_str()) {
                ops.push(&cells.op);
            }
        }
    }
    if latency {
        ops.retain(|op| match constant_value(columns, op) {
            Some(v) => {
                notes.constant.push(((*op).to_owned(), v));
                false
            }
            None => true,
        });
    }
    if ops.is_empty() {
        return;
    }
    let sw = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let ow = ops.iter().map(|o| o.len()).max().unwrap_or(0);
    let cellw = opts.field_width + opts.compare_width + 4;
    let _ = write!(out, "{:w$}", "", w = sw + 1 + ow);
    for c in columns {
        let _ = write!(out, "{:>cellw$}", c.name);
    }
    out.push('\n');
    for (k, &(label, _, cmp)) in rows.iter().enumerate() {
        for op in &ops {
            let found: Vec<Option<&OpCells>> = columns
                .iter()
                .map(|c| block_of(c, latency).iter().find(|cells| cells.op == *op))
                .collect();
            let vals: Vec<f64> = found
                .iter()
                .map(|f| f.map_or(f64::NAN, |cells| cells.pooled(k)))
                .collect();
            let base = vals.first().copied().unwrap_or(f64::NAN);
            let each: Vec<Vec<f64>> = if opts.mark_significant {
                found
                    .iter()
                    .map(|f| f.map_or_else(Vec::new, |cells| cells.each(k)))
                    .collect()
            } else {
                Vec::new()
            };
            let _ = write!(out, "{label:<sw$} {op:<ow$}");
            for (i, &v) in vals.iter().enumerate() {
                let marked = match (each.get(i), each.first()) {
                    (Some(xs), Some(b)) => welch_differs(xs, b),
                    _ => false,
                };
                if marked
                    && let (Some(xs), Some(b)) = (each.get(i), each.first())
                    && let Some(g) = hedges_g(xs, b)
                {
                    notes.effects.push((
                        label.to_owned(),
                        (*op).to_owned(),
                        columns[i].name.clone(),
                        g,
                    ));
                }
                out.push_str(&cell(v, base, cmp, marked, opts));
            }
            out.push('\n');
        }
    }
}

/// mmtests comparison of single runs; the first run is the baseline.
pub fn mmtests_table(runs: &[(&str, &RunReport)]) -> String {
    mmtests_table_of_runs(runs, &MmtestsOptions::default())
}

/// [`mmtests_table`] with the knobs of [`MmtestsOptions`].
pub fn mmtests_table_of_runs(runs: &[(&str, &RunReport)], opts: &MmtestsOptions) -> String {
    let iters: Vec<[&RunReport; 1]> = runs.iter().map(|(_, r)| [*r]).collect();
    let with: Vec<(&str, &[&RunReport])> = runs
        .iter()
        .zip(iters.iter())
        .map(|((n, _), it)| (*n, &it[..]))
        .collect();
    mmtests_table_with(&with, opts)
}

/// mmtests comparison where each variant may have several iterations (their
/// samples pool, as mmtests pools iterations). Throughput block first, then
/// a blank line and the latency block; empty blocks are left out.
pub fn mmtests_table_with(runs: &[(&str, &[&RunReport])], opts: &MmtestsOptions) -> String {
    let columns: Vec<MmtestsColumn> = runs
        .iter()
        .map(|(name, its)| {
            let mut fold = MmtestsFold::new(name, opts);
            for r in *its {
                fold.push(r);
            }
            fold.finish()
        })
        .collect();
    mmtests_table_of_columns(&columns, opts)
}

/// The table of variants' columns, the first the baseline.
pub fn mmtests_table_of_columns(columns: &[MmtestsColumn], opts: &MmtestsOptions) -> String {
    let mut out = String::new();
    let mut notes = Notes::default();
    render_block(&mut out, columns, false, &THROUGHPUT_ROWS, opts, &mut notes);
    let mut lat_out = String::new();
    render_block(&mut lat_out, columns, true, &LATENCY_ROWS, opts, &mut notes);
    if opts.captions {
        if !out.is_empty() {
            out.insert_str(0, &throughput_caption());
        }
        if !lat_out.is_empty() {
            lat_out.insert_str(0, &latency_caption(opts.latency_unit));
        }
    }
    if !out.is_empty() && !lat_out.is_empty() {
        out.push('\n');
    }
    out.push_str(&lat_out);
    let unit = match opts.latency_unit {
        LatencyUnit::Usec => "us",
        LatencyUnit::Nsec => "ns",
    };
    for (op, v) in &notes.constant {
        let _ = writeln!(
            out,
            "{op}: {v:.2} {unit} in every window of every column, a constant such as buffered writes completing in the page cache give: its rows are left out"
        );
    }
    if !notes.effects.is_empty() {
        let _ = writeln!(
            out,
            "\neffect size of each starred cell: Hedges' g of the column's values over the iterations against the first column's (|g| 0.2 small, 0.5 medium, 0.8 large)"
        );
        let rows: Vec<Vec<String>> = notes
            .effects
            .iter()
            .map(|(label, op, name, g)| {
                vec![label.clone(), op.clone(), name.clone(), format!("{g:+.2}")]
            })
            .collect();
        out.push_str(&super::summary::aligned(&rows, 3));
    }
    out
}

/// The throughput block's caption and sign legend.
fn throughput_caption() -> String {
    "throughput: kb/sec = an entry's mean bandwidth in KiB/s (fio's bw_mean), one sample per entry and run\n\
     (x%) = change against the first column, signed so that + is better (higher Min, Hmean, Max; lower Stddev, CoeffVar)\n"
        .to_owned()
}

/// The latency block's caption and sign legend.
fn latency_caption(unit: LatencyUnit) -> String {
    let unit = match unit {
        LatencyUnit::Usec => "us",
        LatencyUnit::Nsec => "ns",
    };
    format!(
        "latency: every job's latency log, one sample per log_avg_msec window (its mean), in {unit}\n\
         (x%) = change against the first column, signed so that + is better (lower latency)\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{GroupBwMode, JobInput, JobStats};
    use crate::time::{MS, SEC, US};

    /// Counting the windows by value gives every row what the windows in
    /// a row give, bit for bit.
    #[test]
    fn counted_windows_give_the_rows_of_the_samples() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut counts = Counts::default();
        let mut xs = Vec::new();
        for _ in 0..2_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let v = (state >> 33) % 5_000 + 100;
            counts.add(v);
            xs.push(v as f64);
        }
        for &(_, stat, _) in &LATENCY_ROWS {
            let want = compute(stat, &xs, StddevForm::Sample);
            let got = counts.compute(stat, StddevForm::Sample);
            assert_eq!(got.to_bits(), want.to_bits(), "{stat:?}");
        }
        // The others sum in another order: the same to rounding.
        for &(_, stat, _) in &THROUGHPUT_ROWS {
            let want = compute(stat, &xs, StddevForm::Sample);
            let got = counts.compute(stat, StddevForm::Sample);
            assert!((got - want).abs() <= want.abs() * 1e-12, "{stat:?}");
        }
        assert!(
            Counts::default()
                .compute(Stat::Max, StddevForm::Sample)
                .is_nan()
        );
    }

    #[test]
    fn quantile_rule_on_known_vectors() {
        let v: Vec<f64> = vec![1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile(&v, 0.25), 2.0);
        assert_eq!(quantile(&v, 0.50), 3.0);
        assert_eq!(quantile(&v, 0.75), 4.0);
        assert_eq!(quantile(&v, 0.90), 5.0); // int(4·0.9+0.5) = int(4.1) = 4
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        // n−1 = 9: 2.75→2, 5.0→5, 7.25→7, 8.6→8, 8.87→8, 9.05→9, 9.41→9
        let got: Vec<f64> = [0.25, 0.5, 0.75, 0.9, 0.93, 0.95, 0.99]
            .iter()
            .map(|&p| quantile(&ten, p))
            .collect();
        assert_eq!(got, vec![3.0, 6.0, 8.0, 9.0, 9.0, 10.0, 10.0]);
        let hundred_one: Vec<f64> = (0..=100).map(f64::from).collect();
        assert_eq!(quantile(&hundred_one, 0.93), 93.0);
        assert_eq!(quantile(&hundred_one, 0.99), 99.0);
        assert_eq!(quantile(&[7.0], 0.99), 7.0);
        assert!(quantile(&[], 0.5).is_nan());
        assert_eq!(quantile_index(4, 0.5), 2); // int(1.5+0.5) = 2
    }

    #[test]
    fn pdiff_pndiff_and_edge_cases() {
        assert_eq!(pdiff(110.0, 100.0), 10.0);
        assert_eq!(pdiff(90.0, 100.0), -10.0);
        assert_eq!(pdiff(5.0, 5.0), 0.0);
        assert_eq!(pdiff(0.0, 0.0), 0.0);
        assert_eq!(pdiff(0.0, 100.0), 0.0); // new 0 => 0
        assert_eq!(pdiff(50.0, 0.0), 100.0); // base 0 => 100
        assert_eq!(pdiff(50.0, f64::NAN), 100.0); // base NaN => 100
        assert_eq!(pndiff(90.0, 100.0), 10.0);
        assert_eq!(pndiff(110.0, 100.0), -10.0);
        assert_eq!(pndiff(5.0, 5.0), 0.0);
        assert_eq!(pndiff(0.0, 0.0), 0.0); // equal wins over new 0
        assert_eq!(pndiff(0.0, 100.0), 100.0); // new 0 => 100
        assert_eq!(pndiff(50.0, 0.0), -99.0); // base 0 => -99
        assert_eq!(pndiff(-5.0, 0.0), -99.0);
    }

    #[test]
    fn hmean_amean_stddev_coeffvar() {
        let h = hmean(&[1.0, 2.0, 4.0]);
        assert!((h - 3.0 / 1.75).abs() < 1e-12);
        assert!(hmean(&[1.0, 0.0]).is_nan());
        assert!(hmean(&[3.0, -1.0]).is_nan());
        assert!(hmean(&[]).is_nan());
        assert_eq!(amean(&[1.0, 2.0, 6.0]), 3.0);
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert!((stddev(&xs, StddevForm::Population) - 2.0).abs() < 1e-12);
        assert!((stddev(&xs, StddevForm::Sample) - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert!(stddev(&[3.0], StddevForm::Sample).is_nan());
        assert_eq!(stddev(&[3.0], StddevForm::Population), 0.0);
        assert!((coeffvar(&xs, StddevForm::Population) - 40.0).abs() < 1e-12);
        assert_eq!(coeffvar(&[3.0], StddevForm::Sample), 0.0);
        assert_eq!(coeffvar(&[0.0, 0.0], StddevForm::Sample), 0.0);
        // A NaN cell (e.g. Hmean of a zero sample) prints like mmtests.
        let o = MmtestsOptions::default();
        assert_eq!(
            cell(f64::NAN, 5.0, Cmp::PDiff, false, &o),
            "        0.00 (   0.00%)"
        );
        assert_eq!(
            cell(5.0, f64::NAN, Cmp::PDiff, false, &o),
            "        0.00 (   0.00%)"
        );
        assert_eq!(
            cell(110.0, 100.0, Cmp::PDiff, false, &o),
            "      110.00 (  10.00%)"
        );
        assert_eq!(
            cell(150.0, 100.0, Cmp::PnDiff, false, &o),
            "      150.00 ( -50.00%)"
        );
    }

    fn run(lat_scale: u64, bytes: u64) -> RunReport {
        let mut w = JobStats::new(0, 10 * MS, 500 * MS);
        let mut r = JobStats::new(0, 10 * MS, 500 * MS);
        for i in 0..200u64 {
            w.record(Dir::Write, i * 5 * MS, 50 * US, bytes);
            r.record(Dir::Read, i * 5 * MS + 1, (100 + i) * US * lat_scale, 4096);
        }
        w.finish(SEC);
        r.finish(SEC);
        let job = |name: &str, gid: u32, stats| JobInput {
            name: name.into(),
            groupid: gid,
            group_reporting: true,
            options: vec![],
            percentiles: Default::default(),
            unified: Default::default(),
            stats,
        };
        RunReport::build(
            vec![job("writer", 0, w), job("reader", 1, r)],
            GroupBwMode::Sum,
        )
    }

    #[test]
    fn identical_variants_show_zero_deltas() {
        let a = run(1, 65536);
        let b = run(1, 65536);
        let t = mmtests_table(&[("baseline", &a), ("same", &b)]);
        let cells = t.matches('(').count();
        assert_eq!(cells, t.matches("(   0.00%)").count());
        // 5 throughput rows x 2 ops + 10 latency rows of the reader, 2
        // columns each: the writer's latency is 50 µs in every window of
        // both, so its rows are left out and said so.
        assert_eq!(cells, (5 * 2 + 10) * 2);
        assert!(t.contains("Hmean    kb/sec-writer-write"), "{t}");
        assert!(t.contains("Max-99%   latency-read "), "{t}");
        assert!(!t.contains("Max-99%   latency-write"), "{t}");
        assert!(
            t.contains("latency-write: 50.00 us in every window of every column"),
            "{t}"
        );
    }

    #[test]
    fn table_values_and_layout() {
        let a = run(1, 65536);
        let b = run(2, 32768);
        let t = mmtests_table(&[("base", &a), ("slow", &b)]);
        let lines: Vec<&str> = t.lines().collect();
        // Header: label width 8 + 1 + len("kb/sec-writer-write") = 28, then 23-wide names.
        assert_eq!(lines[0], format!("{:28}{:>23}{:>23}", "", "base", "slow"));
        // writer: 64 KiB every 5 ms = 12800 KiB/s; halved in the variant.
        assert_eq!(
            lines[1],
            "Min      kb/sec-writer-write    12800.00 (   0.00%)     6400.00 ( -50.00%)"
        );
        assert!(lines[2].starts_with("Min      kb/sec-reader-read "));
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("Stddev   kb/sec-writer-write")
                    && l.ends_with("        0.00 (   0.00%)        0.00 (   0.00%)"))
        );
        // Latency block: reader windows average two IOs each; µs values.
        let min_line = lines
            .iter()
            .find(|l| l.starts_with("Min       latency-read"))
            .copied()
            .unwrap_or("");
        // Window 1 holds IOs 0 and 1: (100 + 101)/2 = 100.5 µs -> 101 (rounded).
        assert_eq!(
            min_line,
            "Min       latency-read      101.00 (   0.00%)      201.00 ( -99.01%)"
        );
        // The writer's 50 µs in every window of both: said, not tabled.
        assert!(!t.contains("Max       latency-write"), "{t}");
        assert!(t.contains("latency-write: 50.00 us in every window"), "{t}");
        assert!(t.contains("\n\n"));
    }

    #[test]
    fn short_job_without_bw_samples_prints_hmean_as_zero() {
        // 100 ms of IO: no complete 500 ms period, so bw_mean = 0 and the
        // Hmean of {0} is undefined (mmtests: -1, printed as 0.00).
        let mk = |lat: u64| {
            let mut s = JobStats::new(0, 10 * MS, 500 * MS);
            for i in 0..10u64 {
                s.record(Dir::Read, i * 10 * MS, lat, 4096);
            }
            s.finish(100 * MS);
            RunReport::build(
                vec![JobInput {
                    name: "r".into(),
                    groupid: 0,
                    group_reporting: false,
                    options: vec![],
                    percentiles: Default::default(),
                    unified: Default::default(),
                    stats: s,
                }],
                GroupBwMode::Sum,
            )
        };
        let (a, b) = (mk(100 * US), mk(50 * US));
        let t = mmtests_table(&[("a", &a), ("b", &b)]);
        assert!(
            t.contains("Hmean    kb/sec-r-read        0.00 (   0.00%)        0.00 (   0.00%)\n"),
            "{t}"
        );
        assert!(
            t.contains("Min      kb/sec-r-read        0.00 (   0.00%)        0.00 (   0.00%)\n"),
            "{t}"
        );
        // Halved latency: pndiff = +50 %.
        assert!(
            t.contains("Mean      latency-read      100.00 (   0.00%)       50.00 (  50.00%)\n"),
            "{t}"
        );
    }

    #[test]
    fn significant_differences_over_iterations_are_starred() {
        let its = |base: u64| -> Vec<RunReport> {
            [base, base + 4096, base - 4096]
                .into_iter()
                .map(|b| run(1, b))
                .collect()
        };
        let (a, b) = (its(65536), its(32768));
        let near: Vec<RunReport> = [65536 + 2048, 65536 - 2048, 65536]
            .into_iter()
            .map(|b| run(1, b))
            .collect();
        let (ra, rb, rn): (Vec<&RunReport>, Vec<&RunReport>, Vec<&RunReport>) = (
            a.iter().collect(),
            b.iter().collect(),
            near.iter().collect(),
        );
        let opts = MmtestsOptions {
            mark_significant: true,
            ..MmtestsOptions::default()
        };
        let t = mmtests_table_with(&[("a", &ra), ("half", &rb), ("near", &rn)], &opts);
        let line =
            |prefix: &str| -> &str { t.lines().find(|l| l.starts_with(prefix)).unwrap_or("") };
        // Halved bandwidth, three iterations each: starred (the middle
        // cell); the nearby one and the baseline against itself are not.
        let hmean = line("Hmean    kb/sec-writer-write");
        assert_eq!(hmean.matches('*').count(), 2, "{hmean}");
        assert_eq!(hmean.matches('(').count(), 2, "{hmean}");
        assert!(hmean.contains("(   0.00%)"), "{hmean}");
        let star = hmean.find('*').unwrap_or(0);
        let open = hmean.rfind('(').unwrap_or(0);
        assert!(
            hmean.find('(').unwrap_or(0) < star && star < open,
            "{hmean}"
        );
        // Stddev of one sample per iteration is undefined: never starred.
        assert!(!line("Stddev   kb/sec-writer-write").contains('*'));
        // The reader is the same in every run: nothing to mark.
        assert!(!line("Mean      latency-read").contains('*'), "{t}");
        // Without the option, the same table has no marks at all.
        let plain = mmtests_table_with(
            &[("a", &ra), ("half", &rb), ("near", &rn)],
            &MmtestsOptions::default(),
        );
        assert!(!plain.contains('*'));
        assert!(!plain.contains("effect size"));
        // Each starred cell's effect size, below: 12800 ± 800 against
        // 6400 ± 800 KiB/s over three iterations, d = −8, g = −8 · 0.8.
        assert!(
            t.contains("effect size of each starred cell: Hedges' g"),
            "{t}"
        );
        assert!(
            t.lines().any(|l| l.starts_with("Hmean")
                && l.contains("kb/sec-writer-write")
                && l.contains("half")
                && l.ends_with("-6.40")),
            "{t}"
        );
        assert!(
            !t.lines()
                .any(|l| l.contains("near") && l.ends_with('0') && l.starts_with("Hmean")),
            "{t}"
        );
    }

    /// A latency that changes in one column is kept, even where the other
    /// column holds one value in every window.
    #[test]
    fn a_latency_that_varies_somewhere_keeps_its_rows() {
        let a = run(1, 65536);
        let mut b = run(1, 65536);
        // The variant's writer windows: one of them slower.
        let mut w = JobStats::new(0, 10 * MS, 500 * MS);
        for i in 0..200u64 {
            let lat = if i == 7 { 90 * US } else { 50 * US };
            w.record(Dir::Write, i * 5 * MS, lat, 65536);
        }
        w.finish(SEC);
        let slow = RunReport::build(
            vec![JobInput {
                name: "writer".into(),
                groupid: 0,
                group_reporting: true,
                options: vec![],
                percentiles: Default::default(),
                unified: Default::default(),
                stats: w,
            }],
            GroupBwMode::Sum,
        );
        b.series[0] = slow.series[0].clone();
        let t = mmtests_table(&[("a", &a), ("b", &b)]);
        assert!(t.contains("Max       latency-write"), "{t}");
        assert!(!t.contains("in every window"), "{t}");
    }

    #[test]
    fn kbsec_samples_pool_same_named_entries() {
        let a = run(1, 65536);
        let s = kbsec_samples(&[&a, &a]);
        assert_eq!(s[0].0, "kb/sec-writer-write");
        assert_eq!(s[0].1, vec![12800.0, 12800.0]);
        let l = latency_samples(&[&a], LatencyUnit::Nsec);
        assert_eq!(l[0].0, "latency-read");
        assert_eq!(l[0].1.len(), 100);
        assert_eq!(l[1].0, "latency-write");
    }
}
