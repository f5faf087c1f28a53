//! `iolab`: run fio job files on a synthetic device and compare policy
//! variants. Only this crate reads files and talks to the terminal.

mod formats;
mod kernel;
mod load;
mod logs;
mod outputs;
mod plot;
mod progress;
mod render;
mod runs;
mod seeds;
mod shard;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use iolab_sim::cache::dirty::BdpMode;
use iolab_sim::device::DeviceConfig;
use iolab_sim::stats::GroupBwMode;
use iolab_sim::{FsKind, Scenario, SchedKind, Variant};

/// Compare storage-stack policies on a simulated device, from fio job files.
#[derive(Parser, Debug)]
#[command(name = "iolab", version, about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    Normal,
    Json,
    /// JSON with each latency's histogram buckets (fio's `bins`).
    #[value(name = "json+")]
    JsonPlus,
    /// fio's terse lines, one a job (version 3, or --terse-version).
    Terse,
}

/// The `kernel` commands' reports: text or JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ReportFormat {
    Normal,
    Json,
}

/// When the progress bar is drawn (fio's `--eta`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Eta {
    /// On a terminal.
    Auto,
    /// Always: a line a second when stderr is not a terminal.
    Always,
    /// Never.
    Never,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Fs {
    /// XFS-like journal (log forces on fsync).
    XfsLite,
    /// No journal: fsync writes data and flushes the cache.
    Raw,
    /// btrfs on the --device or the --volume: chunks (`alloc=`), RAID1
    /// reads (`read=`), metadata reservations and delayed-ref flushing
    /// (`flush=`), the log tree, commits.
    Btrfs,
    /// The earlier name of `btrfs` (said on stderr).
    BtrfsLite,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FioCompat {
    /// fio >= 3: a group's bandwidth is the sum of its jobs.
    Current,
    /// fio of 2016: a group's bandwidth is the mean over its jobs.
    #[value(name = "2016")]
    Y2016,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Scheduler {
    /// blk-mq pass-through.
    None,
    /// blk-mq with mq-deadline (read FIFO 500 ms, write 5 s, fifo_batch 16).
    MqDeadline,
    /// The 2016 legacy request layer (sync/async pools of 128) with noop.
    SqNoop,
    /// The legacy request layer with deadline.
    SqDeadline,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Bdp {
    /// IO-less pacing along the kernel's control line.
    Paced,
    /// Block until dirty pages fall below the limit.
    Legacy,
}

#[derive(clap::Args, Clone, Debug)]
struct Common {
    /// fio job files (- reads one from stdin), run one after another as
    /// fio runs several: each after the first starts from fio's defaults
    /// and its first job waits for the jobs before it.
    #[arg(value_name = "JOB")]
    job_files: Vec<String>,
    /// fio job options after --, as fio takes them on its command line
    /// (-- --name=r --rw=randread --size=1g; a leading `fio` is skipped):
    /// each --name starts a job, the options before the first are
    /// [global]'s and reach the first job file too; these jobs come first.
    #[arg(last = true, value_name = "FIO_OPTION")]
    fio: Vec<String>,
    /// Device: a preset name (see `iolab devices`) or a TOML file.
    #[arg(long, required_unless_present = "volume", conflicts_with = "volume")]
    device: Option<String>,
    /// Several devices as one btrfs-like volume: PROFILE:DEV,DEV,... with
    /// PROFILE single|dup|raid1|raid1c3|raid1c4 and each DEV a preset or a
    /// TOML file, e.g. raid1:nvme,sata-ssd; DEV@HINT gives every device an
    /// allocation hint (data-preferred, metadata-preferred, metadata-only,
    /// data-only, none) for alloc=allocation-hint.
    #[arg(long, value_name = "PROFILE:DEV,...")]
    volume: Option<String>,
    /// Place every chunk of the --volume by the variant's allocator, as
    /// after `btrfs balance start` (without it a single volume keeps
    /// mkfs's first chunks on the device named first).
    #[arg(long, requires = "volume")]
    balance: bool,
    /// pids of the job processes by parity, EVEN/ODD (e.g. 3/1): the first
    /// EVEN processes get even pids, the rest odd ones, which decides the
    /// copy read=pid reads (fio's clones have consecutive pids).
    #[arg(long, value_name = "EVEN/ODD", requires = "volume")]
    pid_split: Option<String>,
    /// Metadata the --volume's filesystem already holds, e.g. 19g (an
    /// aged filesystem): its metadata chunks are allocated by the run's
    /// allocator before the run, and an fsync's log blocks go to the
    /// emptiest metadata chunk.
    #[arg(long, value_name = "SIZE", requires = "volume")]
    metadata_used: Option<String>,
    /// Percent of the --volume's fsyncs that fall back to a full commit
    /// instead of the log tree, e.g. 5 or 2.5 (p_full_commit: renames and
    /// unlinks of logged inodes; default 0).
    #[arg(long, value_name = "PERCENT", requires = "volume")]
    full_commit: Option<String>,
    /// RAM of the simulated machine (page cache, MEMTOTAL_BYTES), e.g. 6g.
    #[arg(long, default_value = "4g")]
    memory: String,
    /// Master seed; a run is (scenario, seed).
    #[arg(long, default_value_t = 1, conflicts_with = "seeds")]
    seed: u64,
    /// Repeat over several seeds: N (seeds 1..N), A..B, or a list 1,4,9.
    /// Tables then give each figure's mean ± 95 % confidence interval, the
    /// comparison table pools the seeds as mmtests pools iterations and
    /// stars differences that are significant, and the JSON keeps every
    /// run with the aggregates.
    #[arg(long, value_name = "N|A..B|LIST")]
    seeds: Option<String>,
    /// Draw SVG figures into DIR: each variant's completion-latency
    /// distribution per entry and direction, and read latency over time
    /// per reading job (the first seed's under --seeds; a sharded
    /// command's are drawn by `merge --plot`).
    #[arg(long, value_name = "DIR", conflicts_with = "shard")]
    plot: Option<String>,
    /// Put the fio logs the job asks for (write_bw_log, write_iops_log,
    /// write_lat_log) under DIR instead of the current directory: DIR/N
    /// for the N-th variant of a comparison, with .SEED after it under
    /// --seeds (DIR/SEED for a run). Needed when there are several runs.
    #[arg(long, value_name = "DIR")]
    log_dir: Option<String>,
    /// Run only slice I of N of the (variant, seed) runs (I from 0 to
    /// N-1; the runs whose index is I modulo N) and print a shard document
    /// instead of the tables; `iolab merge` puts the N documents together.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Runs at a time, each on its own thread (default: the CPUs this
    /// process may use). Output does not depend on it.
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// CPUs of the simulated machine ($ncpus, NUM_LOGICAL_CPUS).
    #[arg(long, default_value_t = 4)]
    cpus: u32,
    /// Filesystem model (default: xfs-lite on one device, raw on a volume).
    #[arg(long, value_enum)]
    fs: Option<Fs>,
    /// fio version whose group bandwidth rule to follow.
    #[arg(long, value_enum, default_value_t = FioCompat::Current)]
    fio_compat: FioCompat,
    /// Dirty-page throttling flavour.
    #[arg(long, value_enum, default_value_t = Bdp::Paced)]
    bdp: Bdp,
    /// IO scheduler of the device queue.
    #[arg(long, value_enum, default_value_t = Scheduler::None)]
    scheduler: Scheduler,
    /// Output formats, as fio's: normal, json, json+ (JSON with each
    /// latency's histogram buckets) or terse (fio's lines, `run` of one
    /// seed); several comma-separated are written in fio's order: terse,
    /// JSON, normal. fio's own options after -- (--output-format,
    /// --minimal, --output, --section, --parse-only, --eta, ...) set these
    /// flags too.
    #[arg(long, value_enum, value_delimiter = ',')]
    output_format: Vec<Format>,
    /// Terse output only (fio's --minimal: --output-format terse).
    #[arg(long)]
    minimal: bool,
    /// Terse lines as well as the chosen format (fio's --append-terse).
    #[arg(long)]
    append_terse: bool,
    /// Terse version, fio's: 2 to 5 (3 by default).
    #[arg(long, value_name = "2..5")]
    terse_version: Option<u32>,
    /// Read and check everything (job files, devices, variants, the
    /// planned memory), run nothing and exit 0, as fio's --parse-only.
    #[arg(long)]
    parse_only: bool,
    /// When the progress bar is drawn on stderr (fio's --eta) [default: auto]
    #[arg(long, value_enum)]
    eta: Option<Eta>,
    /// How often the progress bar is drawn, at least 250 ms (a bare
    /// number is seconds), as fio's --eta-interval [default: 1 s]
    #[arg(long, value_name = "TIME")]
    eta_interval: Option<String>,
    /// Draw the progress as a line of its own every TIME (a bare number
    /// is seconds), on a terminal too, as fio's --eta-newline keeps its
    /// ETA lines
    #[arg(long, value_name = "TIME")]
    eta_newline: Option<String>,
    /// Print the report as it stands every TIME of simulated time (a bare
    /// number is seconds), in the output formats, before the final one, as
    /// fio's --status-interval does (`run` of one seed).
    #[arg(long, value_name = "TIME")]
    status_interval: Option<String>,
    /// Write the output (the tables, the JSON or a shard document) to FILE
    /// instead of stdout, as fio's --output does. The path is checked
    /// before the runs start (not an input, not a directory or device, in
    /// a directory that can be written), and the file is replaced only
    /// when the output is whole.
    #[arg(long, value_name = "FILE")]
    output: Option<String>,
    /// Run only the job file's section [NAME] (again for several), as
    /// fio's --section does; [global] sections still apply.
    #[arg(long, value_name = "NAME")]
    section: Vec<String>,
    /// List every job option accepted without effect on the simulation
    /// one a line with its reason (without it, the same reasons are said,
    /// those of options that change nothing fio measures on one line).
    #[arg(long)]
    verbose: bool,
    /// Print wall time and simulated IO rate on stderr.
    #[arg(long)]
    timing: bool,
    /// Write the policy's trace records (JSON lines, one file per run:
    /// FILE, or FILE.<n> for the n-th variant of a comparison, each with
    /// .<seed> after it under --seeds).
    #[arg(long, value_name = "FILE")]
    trace: Option<String>,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Run job files (or fio job options after --) under one policy.
    Run {
        #[command(flatten)]
        common: Common,
        /// Policy variant (default `none`).
        #[arg(long, default_value = "none")]
        policy: String,
    },
    /// Run job files (or fio job options after --) under several variants
    /// on identical inputs and print the mmtests comparison table (first
    /// variant is the baseline).
    Compare {
        #[command(flatten)]
        common: Common,
        /// Comma-separated variants, e.g. none,wbt; braces sweep a knob,
        /// one variant per choice: none,wbt:lat={1,2,5,10,20}ms (several
        /// braces multiply).
        #[arg(long)]
        policies: String,
    },
    /// Put the shard documents of one sharded `run` or `compare` (its
    /// `--shard I/N` outputs, all N of them) together and print what the
    /// command prints without `--shard`.
    Merge {
        /// The N shard documents, in any order.
        #[arg(required = true)]
        files: Vec<String>,
        /// Draw the figures `--plot DIR` draws for the unsharded command.
        #[arg(long, value_name = "DIR")]
        plot: Option<String>,
        /// Write the output to FILE instead of stdout.
        #[arg(long, value_name = "FILE")]
        output: Option<String>,
    },
    /// List device presets and their parameters.
    Devices {
        /// Show one preset or TOML file in full.
        name: Option<String>,
    },
    /// Fit a device file from short fio probes on a real device (a loop
    /// device this command makes, or one you name), and show how well the
    /// model reproduces each probe.
    Calibrate(kernel::CalibrateArgs),
    /// The real kernel as the reference: replay its traces through the cores.
    Kernel {
        #[command(subcommand)]
        cmd: kernel::KernelCmd,
    },
}

/// An error for the user: exit code 2 for bad input, 1 for internal.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

/// A message about what the user gave (a file that cannot be read as
/// one, say): exit 2, as [`Failure::input`].
impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::input(message)
    }
}

impl Failure {
    pub fn input(message: impl Into<String>) -> Self {
        Self {
            code: 2,
            message: message.into(),
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match real_main(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("iolab: {}", shown(&f.message));
            ExitCode::from(f.code)
        }
    }
}

/// A message as the terminal should show it: control characters a user's
/// file or flag carried (an escape sequence, a bell, a NUL) written as
/// `\u{..}`, so none acts on the terminal; line breaks, which separate
/// the problems listed, stay.
pub(crate) fn shown(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for c in message.chars() {
        if c.is_control() && c != '\n' {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

fn real_main(cli: Cli) -> Result<(), Failure> {
    match cli.cmd {
        Cmd::Devices { name } => devices(name),
        Cmd::Kernel { cmd } => kernel::run(cmd),
        Cmd::Calibrate(a) => kernel::calibrate(&a),
        Cmd::Merge {
            files,
            plot,
            output,
        } => {
            let m = shard::merge(&files)?;
            let mut claims = outputs::Claims::default();
            let mut out = Output::open(output.as_deref(), &mut claims)?;
            if let Some(dir) = &plot {
                claims.dir("--plot", std::path::Path::new(dir), ".svg")?;
            }
            let mut fold = render::Fold::new(
                m.kind,
                &m.policies,
                &m.variants,
                m.seeds,
                m.formats,
                plot.is_some(),
            );
            m.runs
                .for_each_run(|o| fold.push(o, &mut |text| out.write(text)))?;
            if let Some(dir) = &plot {
                draw(dir, &m.policies, &m.variants, &fold.plotted())?;
            }
            fold.finish(&mut |text| out.write(text))?;
            out.finish()
        }
        Cmd::Run { mut common, policy } => {
            lift_fio_flags(&mut common)?;
            flags_all_at_once(&common, render::Kind::Run, &policy)?;
            let variant = iolab_sim::parse_variant(&policy)
                .map_err(|e| Failure::input(format!("--policy: {e}")))?;
            run_or_compare(render::Kind::Run, &common, &policy, vec![variant])
        }
        Cmd::Compare {
            mut common,
            policies,
        } => {
            lift_fio_flags(&mut common)?;
            flags_all_at_once(&common, render::Kind::Compare, &policies)?;
            let variants = iolab_sim::parse_policies(&policies)
                .map_err(|e| Failure::input(format!("--policies: {e}")))?;
            run_or_compare(render::Kind::Compare, &common, &policies, variants)
        }
    }
}

/// What a command's output depends on, for telling its shards from
/// another command's: every option as parsed, except the job file's path
/// (a shard may run where the file lies elsewhere; its contents are
/// hashed instead, not the files it includes) and the ones that change
/// nothing printed (`--shard`, `--jobs`, `--timing`, `--verbose`,
/// `--plot`, `--log-dir`, `--eta`); the output formats as resolved.
fn identity(c: &Common) -> String {
    let formats = formats_of(c).name();
    let c = Common {
        job_files: Vec::new(),
        shard: None,
        jobs: None,
        timing: false,
        verbose: false,
        plot: None,
        log_dir: None,
        output: None,
        // The formats as resolved below, however they were spelled.
        output_format: Vec::new(),
        minimal: false,
        append_terse: false,
        eta: None,
        eta_interval: None,
        eta_newline: None,
        ..c.clone()
    };
    format!("{c:?} formats {formats}")
}

/// `run` and `compare`: every run of the command, or with `--shard` its
/// slice, then the tables, or the slice's shard document.
fn run_or_compare(
    kind: render::Kind,
    common: &Common,
    policies: &str,
    variants: Vec<Variant>,
) -> Result<(), Failure> {
    if common.job_files.iter().any(|j| j == "-") && common.shard.is_some() {
        return Err(Failure::input(
            "--shard: give the job file as a path, not - (every shard reads the same file)",
        ));
    }
    let mut scenario = build_scenario(common)?;
    // The devices' state is allocated as they are built, by the variant
    // checks below too: weighed first.
    let devices_state: u64 = scenario_devices(&scenario)
        .iter()
        .map(|d| iolab_sim::cost::device_bytes(d).0)
        .fold(0, u64::saturating_add);
    if devices_state > iolab_sim::cost::MAX_BYTES {
        return within_budget(&mut scenario, 1);
    }
    // Refuse a variant that cannot run (its layout, its limits) before
    // its cost is weighed and before running the others.
    let mut said: Vec<String> = Vec::new();
    for v in &variants {
        let notes = iolab_sim::check_variant(&scenario, v).map_err(|e| {
            Failure::input(format!("{e} (variant {}, seed {})", v.spec, scenario.seed))
        })?;
        // What the plan changed of the jobs, once whatever the variants.
        for note in notes {
            if !said.contains(&note) {
                eprintln!("iolab: note: {}", shown(&note));
                said.push(note);
            }
        }
    }
    let per_variant = common
        .seeds
        .as_deref()
        .map(seeds::parse)
        .transpose()?
        .map_or(1, |s| s.len());
    within_budget(
        &mut scenario,
        jobs_flag(common.jobs)?.min(variants.len() * per_variant),
    )?;
    // Every input is read by now: the outputs are checked against them
    // before any run.
    let mut claims = outputs::Claims::default();
    let mut out = Output::open(common.output.as_deref(), &mut claims)?;
    if let Some(dir) = &common.plot {
        claims.dir("--plot", std::path::Path::new(dir), ".svg")?;
    }
    let mut notes = Vec::new();
    let logs = logs::Logs::plan(&scenario.jobs, common.log_dir.as_deref(), &mut notes);
    if let (false, Some(dir)) = (logs.any(), &common.log_dir) {
        notes.push(format!(
            "iolab: --log-dir {dir}: no job asks for a log (write_bw_log, write_iops_log, \
             write_lat_log), so none is written"
        ));
    }
    for n in &notes {
        eprintln!("{n}");
    }
    if common.parse_only {
        eprintln!(
            "iolab: --parse-only: {} job{} read and checked with {} variant{}; nothing run",
            scenario.jobs.len(),
            if scenario.jobs.len() == 1 { "" } else { "s" },
            variants.len(),
            if variants.len() == 1 { "" } else { "s" },
        );
        return Ok(());
    }
    let seeds = common.seeds.as_deref().map(seeds::parse).transpose()?;
    let slice = common.shard.as_deref().map(shard::parse).transpose()?;
    let per_variant = seeds.as_ref().map_or(1, Vec::len);
    let total = variants.len() * per_variant;
    let numbered = kind == render::Kind::Compare;
    let run = |each: &mut dyn FnMut(usize, iolab_sim::RunOutput) -> Result<(), Failure>,
               claims: &mut outputs::Claims| {
        execute(
            common,
            &scenario,
            &variants,
            seeds.as_deref(),
            numbered,
            slice,
            &logs,
            claims,
            each,
        )
    };
    if let Some((i, n)) = slice {
        // Each run's line written as it ends, in plan order.
        let (mut doc, head) = shard::Writer::start(i, n, total);
        out.write(&head)?;
        run(&mut |index, o| out.write(&doc.run(index, o)), &mut claims)?;
        // Every job file's bytes, each after its length, so two
        // commands whose files split the same bytes differently differ.
        let mut job = Vec::new();
        for path in &common.job_files {
            let bytes = std::fs::read(path).map_err(|e| Failure::input(format!("{path}: {e}")))?;
            job.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            job.extend_from_slice(&bytes);
        }
        let cmd = shard::Command {
            kind,
            policies: policies.to_owned(),
            seeds,
            formats: formats_of(common),
            identity: identity(common),
            job_hash: shard::fnv_hex(&job),
            inputs_digest: outputs::inputs_digest(),
        };
        out.write(&doc.finish(&cmd))?;
        return out.finish();
    }
    // Each run folded in as it ends, its JSON written at once.
    let mut fold = render::Fold::new(
        kind,
        policies,
        &variants,
        seeds.clone(),
        formats_of(common),
        common.plot.is_some(),
    )
    .traces_for_plot_only(common.plot.is_some() && common.trace.is_none());
    run(
        &mut |_, o| fold.push(o, &mut |text| out.write(text)),
        &mut claims,
    )?;
    if let Some(dir) = &common.plot {
        draw(dir, policies, &variants, &fold.plotted())?;
    }
    fold.finish(&mut |text| out.write(text))?;
    out.finish()
}

/// fio's own options among the job options after `--` (a pasted fio
/// command line: `fio --minimal --output-format=json --name=x ...`) set
/// iolab's flags of the same name: formats and sections add to the
/// flags', a value given both ways must be the same. Every problem is
/// said at once, each at its argument's place.
fn lift_fio_flags(c: &mut Common) -> Result<(), Failure> {
    fn once<T: PartialEq + std::fmt::Debug>(
        slot: &mut Option<T>,
        v: T,
        at: &str,
        problems: &mut Vec<String>,
    ) {
        match slot {
            Some(old) if *old != v => problems.push(format!(
                "{at}: given as {v:?} here and as {old:?} to iolab; give it once"
            )),
            _ => *slot = Some(v),
        }
    }
    let mut problems = Vec::new();
    for o in iolab_sim::fio::own_options(&c.fio) {
        let at = format!("{}:{}: {}", load::ARGS_NAME, o.line, o.key);
        let value = o.value.clone().unwrap_or_default();
        match o.key.as_str() {
            "output" => once(&mut c.output, value, &at, &mut problems),
            "output-format" => {
                for part in value.split(',') {
                    match Format::from_str(part.trim(), false) {
                        Ok(f) => c.output_format.push(f),
                        Err(_) => problems.push(format!(
                            "{at}: '{part}' is not an output format (normal, json, json+, terse)"
                        )),
                    }
                }
            }
            "minimal" => c.minimal = true,
            "append-terse" => c.append_terse = true,
            "terse-version" => match value.trim().parse::<u32>() {
                Ok(v) => once(&mut c.terse_version, v, &at, &mut problems),
                Err(_) => problems.push(format!("{at}: '{value}' is not a version number")),
            },
            "section" => c.section.push(value),
            "parse-only" => c.parse_only = true,
            "status-interval" => once(&mut c.status_interval, value, &at, &mut problems),
            "eta-interval" => once(&mut c.eta_interval, value, &at, &mut problems),
            "eta-newline" => once(&mut c.eta_newline, value, &at, &mut problems),
            "eta" => match Eta::from_str(value.trim(), false) {
                Ok(e) => once(&mut c.eta, e, &at, &mut problems),
                Err(_) => problems.push(format!(
                    "{at}: '{value}' is not when to draw progress (auto, always, never)"
                )),
            },
            other => problems.push(format!("{at}: --{other} is not iolab's to take")),
        }
    }
    match problems.len() {
        0 => Ok(()),
        _ => Err(Failure::input(problems.join("\n"))),
    }
}

/// The output formats `c` asks for.
fn formats_of(c: &Common) -> formats::Formats {
    let mut asked = c.output_format.clone();
    if c.minimal {
        asked.push(Format::Terse);
    }
    let mut f = formats::Formats::of(&asked, c.append_terse);
    f.terse_version = c.terse_version.unwrap_or(3);
    f
}

/// Every flag that can be checked on its own, checked before anything
/// is read, and every problem said at once (one line each), as a job
/// file's are.
fn flags_all_at_once(c: &Common, kind: render::Kind, policies: &str) -> Result<(), Failure> {
    let mut problems: Vec<String> = Vec::new();
    let mut check = |r: Result<(), Failure>| {
        if let Err(f) = r {
            problems.push(f.message);
        }
    };
    check(load::memory(&c.memory).map(drop));
    if !(1..=MAX_CPUS).contains(&c.cpus) {
        check(Err(Failure::input(format!(
            "--cpus {}: a machine has 1 to {MAX_CPUS} CPUs",
            c.cpus
        ))));
    }
    if let Some(text) = &c.seeds {
        check(seeds::parse(text).map(drop));
    }
    if let Some(text) = &c.shard {
        check(shard::parse(text).map(drop));
    }
    check(jobs_flag(c.jobs).map(drop));
    let formats = formats_of(c);
    check(formats.check(kind == render::Kind::Compare, c.seeds.is_some()));
    check(eta_timing(c).map(drop));
    if let Some(t) = &c.status_interval {
        match iolab_sim::fio::parse_time_secs(t) {
            Ok(0) => check(Err(Failure::input(format!(
                "--status-interval {t}: give a time above 0"
            )))),
            Ok(ns) if ns < 1_000_000 => check(Err(Failure::input(format!(
                "--status-interval {t}: at least 1 ms, as fio takes it"
            )))),
            Ok(_) => {}
            Err(e) => check(Err(Failure::input(format!("--status-interval {t}: {e}")))),
        }
        if kind == render::Kind::Compare || c.seeds.is_some() || c.shard.is_some() {
            check(Err(Failure::input(
                "--status-interval: a status is one run's report; give it to `iolab run` \
                 of one seed, without --shard",
            )));
        }
    }
    match c.terse_version {
        Some(2..=5) | None => {}
        Some(v) => check(Err(Failure::input(format!(
            "--terse-version {v}: fio's terse versions are 2 to 5 (3 by default)"
        )))),
    }
    if c.terse_version.is_some() && !formats.terse {
        check(Err(Failure::input(
            "--terse-version without terse output: add --minimal or --output-format terse",
        )));
    }
    let parsed = match kind {
        render::Kind::Run if policies.contains('{') => Err(Failure::input(format!(
            "--policy {policies}: a sweep ({{...}}) makes several variants; give it to compare --policies"
        ))),
        render::Kind::Run => iolab_sim::parse_variant(policies)
            .map(drop)
            .map_err(|e| Failure::input(format!("--policy: {e}"))),
        render::Kind::Compare => iolab_sim::parse_policies(policies)
            .map(drop)
            .map_err(|e| Failure::input(format!("--policies: {e}"))),
    };
    check(parsed);
    match problems.len() {
        0 => Ok(()),
        _ => Err(Failure::input(problems.join("\n"))),
    }
}

/// The devices a scenario runs on: its volume's, or its one.
fn scenario_devices(sc: &Scenario) -> Vec<DeviceConfig> {
    match &sc.volume {
        Some(v) => v.devices.clone(),
        None => vec![sc.device.clone()],
    }
}

/// What the run will cost ([`iolab_sim::cost`]), checked before it
/// runs: refused above the bounds, said on stderr above the warnings;
/// a run above the IO bound only for jobs with steady-state detection
/// gets the bound as its budget ([`Scenario::io_budget`]). `at_once`
/// runs hold their memory together.
fn within_budget(sc: &mut Scenario, at_once: usize) -> Result<(), Failure> {
    use iolab_sim::cost;
    let devices = scenario_devices(sc);
    let mib = |b: u64| b >> 20;
    // Memory: the jobs' statistics and the devices' state, per run.
    let jobs = cost::jobs_bytes(&sc.jobs);
    let (dev_bytes, dev_key) = devices.iter().fold((0u64, None), |(sum, key), d| {
        let (b, k) = cost::device_bytes(d);
        (
            sum.saturating_add(b),
            key.or(k.filter(|_| b > 0).map(|k| (k, d.name.clone()))),
        )
    });
    let per_run = jobs.saturating_add(dev_bytes);
    let total = per_run.saturating_mul(at_once.max(1) as u64);
    let said = format!(
        "the run holds about {} MiB ({} MiB for {} job clones' statistics, {} MiB of device state{}){}",
        mib(per_run),
        mib(jobs),
        sc.jobs
            .iter()
            .map(|j| u64::from(j.numjobs.max(1)))
            .sum::<u64>(),
        mib(dev_bytes),
        dev_key
            .as_ref()
            .map(|(k, n)| format!(", sized by {k} of device '{n}'"))
            .unwrap_or_default(),
        if at_once > 1 {
            format!(", {at_once} runs at once: {} MiB", mib(total))
        } else {
            String::new()
        }
    );
    // Named at the job whose clones hold the most when the jobs do.
    let place = sc
        .jobs
        .iter()
        .max_by_key(|j| j.numjobs)
        .filter(|_| jobs >= dev_bytes)
        .map(|j| {
            let at = j.option_at.iter().rev().find(|a| a.option == "numjobs");
            match at {
                Some(a) => format!("{}:{}: numjobs: ", a.file, a.line),
                None => format!("{}:{}: ", j.file, j.line),
            }
        })
        .unwrap_or_default();
    if total > cost::MAX_BYTES {
        return Err(Failure::input(format!(
            "{place}{said}; above the {} MiB a command may plan (fewer clones, a smaller device cache, or fewer --jobs)",
            mib(cost::MAX_BYTES)
        )));
    }
    if total > cost::WARN_BYTES {
        eprintln!("iolab: note: {said}");
    }
    // Work: the IOs it will simulate, at most.
    let e = cost::estimate_ios(&sc.jobs, &devices);
    // Jobs that steady-state detection may end before their runtime are
    // held to the bound as the run goes instead: weighed without them.
    let steady = |j: &iolab_sim::fio::JobSpec| j.steady.dur_s > 0;
    let others_within = || {
        let others: Vec<_> = sc.jobs.iter().filter(|j| !steady(j)).cloned().collect();
        cost::estimate_ios(&others, &devices).ios <= cost::MAX_IOS
    };
    if let Some(j) = sc.jobs.get(e.job) {
        let said = format!(
            "{}:{}: job '{}': about {:.1e} IOs in the run, this job's from {}",
            j.file, j.line, j.name, e.ios as f64, e.why
        );
        if e.ios > cost::MAX_IOS && steady(j) && others_within() {
            eprintln!(
                "iolab: note: {said}, if steady state (ss=) is never reached; the run stops with an error at the {:.0e} IOs a run may simulate",
                cost::MAX_IOS as f64
            );
            sc.io_budget = Some(cost::MAX_IOS);
            return Ok(());
        }
        if e.ios > cost::MAX_IOS {
            return Err(Failure::input(format!(
                "{said}; above the {:.0e} IOs a run may simulate (minutes of wall time): shorten runtime or size, or lower iodepth or numjobs",
                cost::MAX_IOS as f64
            )));
        }
        if e.ios > cost::WARN_IOS {
            eprintln!("iolab: note: {said}: the run may take a minute or more");
        }
    }
    Ok(())
}

/// `--eta-interval` and `--eta-newline`: how often the progress is drawn,
/// and whether each drawing is a line of its own. fio takes both as
/// times in seconds when no unit is given and refuses an interval below
/// 250 ms.
fn eta_timing(c: &Common) -> Result<progress::EtaTiming, Failure> {
    let time = |flag: &str, t: &str| -> Result<std::time::Duration, Failure> {
        let ns = iolab_sim::fio::parse_time_secs(t)
            .map_err(|e| Failure::input(format!("{flag} {t}: {e}")))?;
        if ns == 0 {
            return Err(Failure::input(format!("{flag} {t}: give a time above 0")));
        }
        Ok(std::time::Duration::from_nanos(ns))
    };
    let interval = c
        .eta_interval
        .as_deref()
        .map(|t| time("--eta-interval", t))
        .transpose()?;
    if let (Some(i), Some(t)) = (interval, c.eta_interval.as_deref())
        && i < std::time::Duration::from_millis(250)
    {
        return Err(Failure::input(format!(
            "--eta-interval {t}: at least 250 ms, as fio takes it"
        )));
    }
    let newline = c
        .eta_newline
        .as_deref()
        .map(|t| time("--eta-newline", t))
        .transpose()?;
    Ok(progress::EtaTiming { interval, newline })
}

/// `--jobs`: threads for the runs (default: the CPUs this process may use).
fn jobs_flag(jobs: Option<usize>) -> Result<usize, Failure> {
    match jobs {
        Some(0) => Err(Failure::input("--jobs 0: give at least one thread")),
        Some(n) if n > MAX_JOBS => Err(Failure::input(format!(
            "--jobs {n}: at most {MAX_JOBS} threads"
        ))),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, usize::from)),
    }
}

/// Where a command's output goes: stdout, or the `--output` file,
/// claimed before the runs, written piece by piece beside it and put in
/// place at [`Output::finish`] (left as it was if the command fails).
enum Output {
    Stdout,
    File(String, Option<outputs::AtomicFile>),
}

impl Output {
    /// Claims the `--output` file (see [`outputs::Claims::file`]): an
    /// input of the command is refused rather than overwritten.
    fn open(path: Option<&str>, claims: &mut outputs::Claims) -> Result<Self, Failure> {
        match path {
            None => Ok(Output::Stdout),
            Some(p) => {
                claims.file("--output", std::path::Path::new(p))?;
                Ok(Output::File(p.to_owned(), None))
            }
        }
    }

    /// Appends `text`.
    fn write(&mut self, text: &str) -> Result<(), Failure> {
        let failed = |message: String| Failure {
            code: 1,
            message: format!("--output {message}"),
        };
        match self {
            Output::Stdout => write_out(&mut std::io::stdout().lock(), text),
            Output::File(p, file) => {
                let f = match file {
                    Some(f) => f,
                    None => file.insert(
                        outputs::AtomicFile::create(std::path::Path::new(p)).map_err(failed)?,
                    ),
                };
                f.write(text.as_bytes()).map_err(failed)
            }
        }
    }

    /// Puts the `--output` file in place (an empty one if nothing was
    /// written).
    fn finish(mut self) -> Result<(), Failure> {
        if let Output::File(_, None) = self {
            self.write("")?;
        }
        match self {
            Output::Stdout | Output::File(_, None) => Ok(()),
            Output::File(_, Some(f)) => f.commit().map_err(|message| Failure {
                code: 1,
                message: format!("--output {message}"),
            }),
        }
    }
}

/// `--plot DIR`: the figures of each variant's first run, titled with the
/// seed, and those of each knob sweep of `policies` over every seed.
fn draw(
    dir: &str,
    policies: &str,
    variants: &[Variant],
    plotted: &render::Plotted<'_>,
) -> Result<(), Failure> {
    let figures = plotted.figures;
    let parts = iolab_sim::sweep::sweeps(policies)
        .map_err(|e| Failure::input(format!("--policies: {e}")))?;
    let sweeps: Vec<plot::Sweep<'_>> = parts
        .iter()
        .map(|(text, range)| plot::Sweep {
            text,
            points: range
                .clone()
                .filter_map(|i| {
                    let runs = figures.get(i)?.iter().collect();
                    Some((variants.get(i)?.spec.as_str(), runs))
                })
                .collect(),
        })
        .collect();
    let written = plot::write(
        std::path::Path::new(dir),
        &plotted.firsts,
        &plotted.states,
        plotted.seed,
        &sweeps,
    )?;
    // Say what was drawn, or that nothing was: a job without IO has no
    // figure to draw.
    if variants.len() > plot::MOST_DRAWN {
        eprintln!(
            "iolab: --plot {dir}: the figures over time and the policy figures draw the first {} of the {} variants; the sweep figures draw every one",
            plot::MOST_DRAWN,
            variants.len()
        );
    }
    match written.len() {
        0 => eprintln!("iolab: --plot {dir}: no figure (no entry did any IO)"),
        n => eprintln!(
            "iolab: --plot {dir}: {n} figure{} written",
            if n == 1 { "" } else { "s" }
        ),
    }
    Ok(())
}

/// The most threads `--jobs` starts.
const MAX_JOBS: usize = 1024;

/// Runs every variant over the seeds (the scenario's own seed without
/// `--seeds`), or only slice `(I, N)` of those runs (the runs whose index
/// is I modulo N), on `--jobs` threads, after checking every variant and
/// claiming every trace and log file, and hands `(index, output)` to
/// `each` in plan order (by variant, then seed), after writing the run's
/// logs. `numbered` names trace files by variant as a comparison does.
#[allow(clippy::too_many_arguments)]
fn execute(
    c: &Common,
    scenario: &Scenario,
    variants: &[Variant],
    seeds: Option<&[u64]>,
    numbered: bool,
    slice: Option<(usize, usize)>,
    logs: &logs::Logs,
    claims: &mut outputs::Claims,
    each: &mut dyn FnMut(usize, iolab_sim::RunOutput) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let seed_list = seeds.map_or_else(|| vec![scenario.seed], <[u64]>::to_vec);
    let jobs = jobs_flag(c.jobs)?;
    let (take, of) = slice.unwrap_or((0, 1));
    let mut plan = Vec::with_capacity(variants.len() * seed_list.len());
    let mut indices = Vec::with_capacity(plan.capacity());
    let mut log_dirs = Vec::with_capacity(plan.capacity());
    for (n, v) in variants.iter().enumerate() {
        for (k, &seed) in seed_list.iter().enumerate() {
            let index = n * seed_list.len() + k;
            if index % of != take {
                continue;
            }
            indices.push(index);
            let mut suffix = String::new();
            if numbered {
                suffix.push_str(&format!(".{n}"));
            }
            if seeds.is_some() {
                suffix.push_str(&format!(".{seed}"));
            }
            let trace = c.trace.as_ref().map(|base| format!("{base}{suffix}"));
            if let Some(path) = &trace {
                claims.file("--trace", std::path::Path::new(path))?;
            }
            if logs.any() {
                log_dirs.push(logs.prepare(&suffix, claims)?);
            }
            plan.push(runs::Planned {
                scenario,
                seed,
                variant: v,
                trace,
                status_every: c
                    .status_interval
                    .as_deref()
                    .map(iolab_sim::fio::parse_time_secs)
                    .transpose()
                    .map_err(|e| Failure::input(format!("--status-interval: {e}")))?,
            });
        }
    }
    let mut files = 0;
    runs::run_all(
        &plan,
        jobs,
        c.timing,
        c.eta.unwrap_or(Eta::Auto),
        eta_timing(c)?,
        &mut |k, out| {
            if let Some(dir) = log_dirs.get(k) {
                files += logs.write(dir, &out)?;
            }
            each(indices[k], out)
        },
    )?;
    if logs.any() {
        eprintln!(
            "iolab: wrote {files} log file{}",
            if files == 1 { "" } else { "s" }
        );
    }
    Ok(())
}

pub(crate) fn pretty(v: &serde_json::Value) -> String {
    let mut s =
        serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

pub(crate) fn write_out(w: &mut impl Write, text: &str) -> Result<(), Failure> {
    match w.write_all(text.as_bytes()).and_then(|()| w.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`| head`) is not an error worth a message.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure {
            code: 1,
            message: format!("writing output: {e}"),
        }),
    }
}

fn devices(name: Option<String>) -> Result<(), Failure> {
    let mut out = String::new();
    match name {
        Some(n) => {
            let cfg = load::device(&n)?;
            out.push_str(&cfg.describe());
        }
        None => {
            for n in DeviceConfig::preset_names() {
                if let Some(cfg) = DeviceConfig::preset(n) {
                    out.push_str(&cfg.describe());
                    out.push('\n');
                }
            }
        }
    }
    if out.contains("[S") || out.contains("[F") {
        out.push_str("Bracketed sources ([S5], [F4], ...) are listed in docs/sources.md.\n");
    }
    write_out(&mut std::io::stdout().lock(), &out)
}

/// The most CPUs a simulated machine has (the kernel's `NR_CPUS` limit).
const MAX_CPUS: u32 = 8192;

fn build_scenario(c: &Common) -> Result<Scenario, Failure> {
    let mem_bytes = load::memory(&c.memory)?;
    if !(1..=MAX_CPUS).contains(&c.cpus) {
        return Err(Failure::input(format!(
            "--cpus {}: a machine has 1 to {MAX_CPUS} CPUs",
            c.cpus
        )));
    }
    if c.volume.is_none() {
        // Each of these describes the --volume; without one it would be
        // dropped without a word.
        let given = [
            ("--balance", c.balance),
            ("--pid-split", c.pid_split.is_some()),
            ("--metadata-used", c.metadata_used.is_some()),
            ("--full-commit", c.full_commit.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, on)| *on) {
            return Err(Failure::input(format!(
                "{flag} describes a multi-device volume: give --volume PROFILE:DEV,... with it"
            )));
        }
    }
    let mut volume = c.volume.as_deref().map(load::volume).transpose()?;
    if let Some(v) = volume.as_mut() {
        v.balanced = c.balance;
        v.pid_split = c.pid_split.as_deref().map(load::pid_split).transpose()?;
        if let Some(text) = c.metadata_used.as_deref() {
            v.metadata_used = load::size_flag("--metadata-used", text)?;
        }
        if let Some(text) = c.full_commit.as_deref() {
            v.full_commit_ppm = load::full_commit(text)?;
        }
    }
    let device = match (&c.device, &volume) {
        (Some(d), _) => load::device(d)?,
        (None, Some(v)) => v.devices[0].clone(),
        (None, None) => return Err(Failure::input("give --device or --volume".to_owned())),
    };
    let mut jobfile = load::jobs(&c.job_files, &c.fio, mem_bytes, c.cpus)?;
    load::keep_sections(
        &load::sources_named(&c.job_files, &c.fio),
        &mut jobfile,
        &c.section,
    )?;
    if c.verbose {
        for a in &jobfile.accepted {
            eprintln!("iolab: {}", shown(&a.to_string()));
        }
    } else {
        for note in load::accepted_notes(&jobfile.accepted) {
            eprintln!("{}", shown(&note));
        }
    }
    for j in &jobfile.jobs {
        if let Some(dev) = j.sized_by_device() {
            eprintln!(
                "{}",
                shown(&format!(
                    "iolab: {}:{}: size: not given: fio takes the size of the device {dev}; \
                     the simulated device's is used (size= or filesize= sets one)",
                    j.file, j.line
                ))
            );
        }
    }
    Ok(Scenario {
        jobs: jobfile.jobs,
        device,
        mem_bytes,
        seed: c.seed,
        fs: fs_kind(c.fs, volume.is_some()),
        bdp: match c.bdp {
            Bdp::Paced => BdpMode::Paced,
            Bdp::Legacy => BdpMode::Legacy,
        },
        group_bw: match c.fio_compat {
            FioCompat::Current => GroupBwMode::Sum,
            FioCompat::Y2016 => GroupBwMode::PerJobMean,
        },
        scheduler: match c.scheduler {
            Scheduler::None => SchedKind::None,
            Scheduler::MqDeadline => SchedKind::MqDeadline,
            Scheduler::SqNoop => SchedKind::SqNoop,
            Scheduler::SqDeadline => SchedKind::SqDeadline,
        },
        // --plot draws the policies' traces too.
        trace: c.trace.is_some() || c.plot.is_some(),
        volume,
        cpus: c.cpus,
        io_budget: None,
    })
}

/// The filesystem `--fs` names (none: xfs-lite on a `--device`, btrfs on a
/// `--volume`). The spellings from before the one btrfs model keep
/// working and say so on stderr.
fn fs_kind(fs: Option<Fs>, volume: bool) -> FsKind {
    match (fs, volume) {
        (Some(Fs::XfsLite), _) | (None, false) => FsKind::XfsLite,
        (Some(Fs::Raw), false) => FsKind::Raw,
        (Some(Fs::Btrfs), _) | (None, true) => FsKind::Btrfs,
        (Some(Fs::Raw), true) => {
            eprintln!("iolab: --fs raw: a --volume is btrfs; running --fs btrfs (the name to use)");
            FsKind::Btrfs
        }
        (Some(Fs::BtrfsLite), _) => {
            eprintln!(
                "iolab: --fs btrfs-lite is now --fs btrfs, one btrfs model on a --device or a \
                 --volume; running --fs btrfs"
            );
            FsKind::Btrfs
        }
    }
}
