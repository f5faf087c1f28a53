//! Running a command's runs: each (variant, seed) pair is an independent
//! simulation, so they go to `--jobs` threads, each taking the next run
//! not yet started; results come back in the order the runs were listed,
//! so what is printed does not depend on the number of threads.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use iolab_sim::{RunOutput, Scenario, Variant};

use crate::progress::{self, Progress};
use crate::{Failure, load};

/// One run: the scenario with its seed, the variant, and the file its
/// trace goes to.
pub struct Planned<'a> {
    pub scenario: Scenario,
    pub variant: &'a Variant,
    pub trace: Option<String>,
    /// `--status-interval`: the report every this many ns of simulated
    /// time.
    pub status_every: Option<u64>,
}

/// Where a run's outcome and wall time (s) wait for the others.
type Slot = Mutex<Option<Result<(RunOutput, f64), Failure>>>;

/// Stack of a worker thread: the main thread's usual 8 MiB, so a run
/// needs no more on a worker than it did alone.
const WORKER_STACK: usize = 8 << 20;

/// Runs every planned run on up to `jobs` threads (`jobs ≥ 1`) and returns
/// their outputs in plan order. On a failure no further run starts, and the
/// error of the earliest failed run in plan order is returned (every run
/// before it has finished by then, so it is the same error whatever the
/// threads did). With `timing`, one line per run goes to stderr afterwards,
/// in plan order, and a total for several runs.
pub fn run_all(
    plan: &[Planned<'_>],
    jobs: usize,
    timing: bool,
    eta: crate::Eta,
    timing_of_eta: progress::EtaTiming,
) -> Result<Vec<RunOutput>, Failure> {
    let workers = jobs.clamp(1, plan.len().max(1));
    let label = plan.first().map_or("", |p| p.variant.spec.as_str());
    let bar = Progress::new(label, plan.len(), workers, eta, timing_of_eta);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let slots: Vec<Slot> = plan.iter().map(|_| Mutex::new(None)).collect();
    let started = Instant::now();
    let work = |w: usize| {
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(p) = plan.get(i) else {
                break;
            };
            let result = run_one(p, &bar, w);
            if result.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            if let Ok(mut slot) = slots[i].lock() {
                *slot = Some(result);
            }
        }
    };
    if workers == 1 {
        work(0);
    } else {
        let spawned = std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    let work = &work;
                    std::thread::Builder::new()
                        .name(format!("run-{w}"))
                        .stack_size(WORKER_STACK)
                        .spawn_scoped(s, move || work(w))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.map(|h| h.join().is_ok()))
                .collect::<Result<Vec<bool>, _>>()
        });
        match spawned {
            Ok(joined) if joined.iter().all(|&ok| ok) => {}
            Ok(_) => {
                bar.finish();
                return Err(Failure {
                    code: 1,
                    message: "a run's thread panicked".to_owned(),
                });
            }
            Err(e) => {
                bar.finish();
                return Err(Failure {
                    code: 1,
                    message: format!("starting a thread for the runs: {e}"),
                });
            }
        }
    }
    bar.finish();
    let mut outs = Vec::with_capacity(plan.len());
    let mut walls = Vec::with_capacity(plan.len());
    for slot in slots {
        match slot.into_inner().ok().flatten() {
            Some(Ok((out, wall))) => {
                outs.push(out);
                walls.push(wall);
            }
            Some(Err(f)) => return Err(f),
            // Not started after an earlier failure, which was returned.
            None => break,
        }
    }
    if timing {
        // The process's peak is one run's only when there is one run; with
        // several it goes on the total's line.
        let one = plan.len() == 1;
        for ((p, out), wall) in plan.iter().zip(&outs).zip(&walls) {
            report_timing(p, out, *wall, one);
        }
        if !one {
            eprintln!(
                "iolab: {} runs on {workers} threads: {:.3} s wall, peak RSS {}",
                plan.len(),
                started.elapsed().as_secs_f64(),
                load::peak_rss().unwrap_or_else(|| "unknown".into()),
            );
        }
    }
    Ok(outs)
}

fn run_one(p: &Planned<'_>, bar: &Progress, w: usize) -> Result<(RunOutput, f64), Failure> {
    let started = Instant::now();
    let out = iolab_sim::run_watched(
        &p.scenario,
        p.variant,
        &mut |t| bar.update(w, t),
        p.status_every,
    )
    .map_err(|e| {
        let message = format!("{e} (variant {}, seed {})", p.variant.spec, p.scenario.seed);
        match e {
            // A stall or livelock is the simulator's fault, not the input's.
            iolab_sim::SimError::Stalled { .. } | iolab_sim::SimError::Livelock { .. } => {
                Failure { code: 1, message }
            }
            _ => Failure::input(message),
        }
    });
    bar.finished(w);
    let out = out?;
    if let Some(path) = &p.trace {
        load::write_trace(path, &out.extra)?;
    }
    Ok((out, started.elapsed().as_secs_f64()))
}

fn report_timing(p: &Planned<'_>, out: &RunOutput, wall: f64, peak: bool) {
    let ios: u64 = out
        .report
        .jobs
        .iter()
        .flat_map(|j| j.dirs.iter())
        .map(|d| d.total_ios)
        .sum();
    eprintln!(
        "iolab: variant {}, seed {}: {:.3} s wall, {:.1} s simulated, {} events, {} IOs, {:.2} M IOs/s of wall time{}",
        p.variant.spec,
        p.scenario.seed,
        wall,
        out.sim_ns as f64 / 1e9,
        out.events,
        ios,
        ios as f64 / wall / 1e6,
        if peak {
            format!(
                ", peak RSS {}",
                load::peak_rss().unwrap_or_else(|| "unknown".into())
            )
        } else {
            String::new()
        },
    );
}
