//! `iolab`: run fio job files on a synthetic device and compare policy
//! variants. Only this crate reads files and talks to the terminal.

mod kernel;
mod load;
mod progress;

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};
use iolab_sim::cache::dirty::BdpMode;
use iolab_sim::device::DeviceConfig;
use iolab_sim::stats::{self, GroupBwMode};
use iolab_sim::{FsKind, Scenario, SchedKind, Variant};

/// Compare storage-stack policies on a simulated device, from fio job files.
#[derive(Parser, Debug)]
#[command(name = "iolab", version, about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Normal,
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Fs {
    /// XFS-like journal (log forces on fsync).
    XfsLite,
    /// No journal: fsync writes data and flushes the cache.
    Raw,
    /// btrfs's buffered-write metadata path with delayed-ref flushing
    /// (`flush=` variants).
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

#[derive(clap::Args, Debug)]
struct Common {
    /// fio job file.
    job: String,
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
    /// instead of the log tree, e.g. 5 or 2.5 (fidelity F3.2's
    /// p_full_commit: renames and unlinks of logged inodes; default 0).
    #[arg(long, value_name = "PERCENT", requires = "volume")]
    full_commit: Option<String>,
    /// RAM of the simulated machine (page cache, MEMTOTAL_BYTES), e.g. 6g.
    #[arg(long, default_value = "4g")]
    memory: String,
    /// Master seed; a run is (scenario, seed).
    #[arg(long, default_value_t = 1)]
    seed: u64,
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
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Normal)]
    output_format: Format,
    /// List job options accepted without effect on the simulation.
    #[arg(long)]
    verbose: bool,
    /// Print wall time and simulated IO rate on stderr.
    #[arg(long)]
    timing: bool,
    /// Write the policy's trace records (JSON lines, one file per variant:
    /// FILE, or FILE.<n> for the n-th variant of a comparison).
    #[arg(long, value_name = "FILE")]
    trace: Option<String>,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Run one job file under one policy.
    Run {
        #[command(flatten)]
        common: Common,
        /// Policy variant (default `none`).
        #[arg(long, default_value = "none")]
        policy: String,
    },
    /// Run a job file under several variants on identical inputs and print
    /// the mmtests comparison table (first variant is the baseline).
    Compare {
        #[command(flatten)]
        common: Common,
        /// Comma-separated variants, e.g. none,none.
        #[arg(long)]
        policies: String,
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
            eprintln!("iolab: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

fn real_main(cli: Cli) -> Result<(), Failure> {
    match cli.cmd {
        Cmd::Devices { name } => devices(name),
        Cmd::Kernel { cmd } => kernel::run(cmd),
        Cmd::Calibrate(a) => kernel::calibrate(&a),
        Cmd::Run { common, policy } => {
            let variant = iolab_sim::parse_variant(&policy)
                .map_err(|e| Failure::input(format!("--policy: {e}")))?;
            let scenario = build_scenario(&common)?;
            if let Some(path) = &common.trace {
                load::open_trace(path)?;
            }
            let out = run_one(&common, &scenario, &variant)?;
            if let Some(path) = &common.trace {
                load::write_trace(path, &out.extra)?;
            }
            let mut stdout = std::io::stdout().lock();
            let text = match common.output_format {
                Format::Normal => stats::normal_output(&out.report),
                Format::Json => pretty(&stats::json_output(&out.report, out.extra)),
            };
            write_out(&mut stdout, &text)
        }
        Cmd::Compare { common, policies } => {
            let variants = iolab_sim::parse_policies(&policies)
                .map_err(|e| Failure::input(format!("--policies: {e}")))?;
            let scenario = build_scenario(&common)?;
            // Refuse a variant that cannot run before running the others.
            for v in &variants {
                iolab_sim::check_variant(&scenario, v).map_err(|e| {
                    Failure::input(format!("{e} (variant {}, seed {})", v.spec, scenario.seed))
                })?;
            }
            if let Some(path) = &common.trace {
                for n in 0..variants.len() {
                    load::open_trace(&format!("{path}.{n}"))?;
                }
            }
            let mut outs = Vec::with_capacity(variants.len());
            for (n, v) in variants.iter().enumerate() {
                let out = run_one(&common, &scenario, v)?;
                if let Some(path) = &common.trace {
                    load::write_trace(&format!("{path}.{n}"), &out.extra)?;
                }
                outs.push(out);
            }
            let text = match common.output_format {
                Format::Normal => {
                    let runs: Vec<(&str, &stats::RunReport)> = variants
                        .iter()
                        .zip(&outs)
                        .map(|(v, o)| (v.spec.as_str(), &o.report))
                        .collect();
                    let mut text = stats::mmtests_table(&runs);
                    let summary: Vec<stats::SummaryRun<'_>> = variants
                        .iter()
                        .zip(&outs)
                        .map(|(v, o)| stats::SummaryRun {
                            variant: v.spec.as_str(),
                            report: &o.report,
                            device_bytes: device_bytes(&o.extra),
                            sim_ns: o.sim_ns,
                        })
                        .collect();
                    text.push_str(&stats::summary_table(&summary));
                    let btrfs: Vec<stats::BtrfsRun<'_>> = variants
                        .iter()
                        .zip(&outs)
                        .map(|(v, o)| (v.spec.as_str(), &o.extra["btrfs"], o.sim_ns))
                        .collect();
                    text.push_str(&stats::btrfs_table(&btrfs));
                    let volume: Vec<stats::VolumeRun<'_>> = variants
                        .iter()
                        .zip(&outs)
                        .map(|(v, o)| (v.spec.as_str(), &o.extra["volume"]))
                        .collect();
                    text.push_str(&stats::volume_table(&volume));
                    text
                }
                Format::Json => {
                    let runs: Vec<serde_json::Value> = variants
                        .iter()
                        .zip(outs)
                        .map(|(v, o)| {
                            serde_json::json!({
                                "variant": v.spec,
                                "result": stats::json_output(&o.report, o.extra),
                            })
                        })
                        .collect();
                    pretty(&serde_json::json!({ "baseline": variants[0].spec, "runs": runs }))
                }
            };
            write_out(&mut std::io::stdout().lock(), &text)
        }
    }
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

fn pretty(v: &serde_json::Value) -> String {
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
    let jobfile = load::job_file(&c.job, mem_bytes, c.cpus)?;
    if c.verbose {
        for a in &jobfile.accepted {
            eprintln!("iolab: {a}");
        }
    }
    Ok(Scenario {
        jobs: jobfile.jobs,
        device,
        mem_bytes,
        seed: c.seed,
        fs: match (c.fs, &volume) {
            (Some(Fs::XfsLite), _) | (None, None) => FsKind::XfsLite,
            (Some(Fs::Raw), _) | (None, Some(_)) => FsKind::Raw,
            (Some(Fs::BtrfsLite), _) => FsKind::BtrfsLite,
        },
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
        trace: c.trace.is_some(),
        volume,
        cpus: c.cpus,
    })
}

fn run_one(
    c: &Common,
    scenario: &Scenario,
    variant: &Variant,
) -> Result<iolab_sim::RunOutput, Failure> {
    let started = Instant::now();
    let horizon = progress::horizon(scenario);
    let mut bar = progress::Bar::new(&variant.spec, horizon);
    let out = iolab_sim::run(scenario, variant, &mut |t| bar.update(t)).map_err(|e| {
        let message = format!("{e} (variant {}, seed {})", variant.spec, scenario.seed);
        match e {
            // A stall or livelock is the simulator's fault, not the input's.
            iolab_sim::SimError::Stalled { .. } | iolab_sim::SimError::Livelock { .. } => {
                Failure { code: 1, message }
            }
            _ => Failure::input(message),
        }
    })?;
    bar.finish();
    if c.timing {
        let wall = started.elapsed().as_secs_f64();
        let ios: u64 = out
            .report
            .jobs
            .iter()
            .flat_map(|j| j.dirs.iter())
            .map(|d| d.total_ios)
            .sum();
        eprintln!(
            "iolab: variant {}: {:.3} s wall, {:.1} s simulated, {} events, {} IOs, {:.2} M IOs/s of wall time, peak RSS {}",
            variant.spec,
            wall,
            out.sim_ns as f64 / 1e9,
            out.events,
            ios,
            ios as f64 / wall / 1e6,
            load::peak_rss().unwrap_or_else(|| "unknown".into()),
        );
    }
    Ok(out)
}
