//! Running a command's runs: each (variant, seed) pair is an independent
//! simulation, so they go to `--jobs` threads, each taking the next run
//! not yet started; each output is handed on in the order the runs were
//! listed, as soon as the runs before it have been, so what is printed
//! does not depend on the number of threads. A thread starts a run only
//! within a window of the oldest not yet handed on, so at most a few runs
//! per thread are held finished.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use iolab_sim::{RunOutput, Scenario, Variant};

use crate::progress::{self, Progress};
use crate::{Failure, load};

/// One run: the scenario and its seed (the scenario is shared by the
/// runs, and given its seed when the run starts), the variant, and the
/// file its trace goes to.
pub struct Planned<'a> {
    pub scenario: &'a Scenario,
    pub seed: u64,
    pub variant: &'a Variant,
    pub trace: Option<String>,
    /// `--status-interval`: the report every this many ns of simulated
    /// time.
    pub status_every: Option<u64>,
}

/// A finished run's outcome and wall time (s).
type Done = Result<(RunOutput, f64), Failure>;

/// Stack of a worker thread: the main thread's usual 8 MiB, so a run
/// needs no more on a worker than it did alone.
const WORKER_STACK: usize = 8 << 20;

/// Runs a thread may start ahead of the oldest run not yet handed on, per
/// thread.
const AHEAD_PER_THREAD: usize = 2;

/// What `--timing` reports of a run once its output has gone.
struct Timed {
    wall: f64,
    sim_ns: u64,
    events: u64,
    ios: u64,
}

/// The finished runs waiting for those before them, and the count handed
/// on.
struct Board<T> {
    done: BTreeMap<usize, Result<T, Failure>>,
    handed: usize,
}

/// Runs every planned run on up to `jobs` threads (`jobs ≥ 1`) and hands
/// each output to `each` with its plan index, in plan order, on the
/// calling thread. On a failure (a run's or `each`'s) no further run
/// starts and that error is returned; a run's error is that of the
/// earliest failed run in plan order (every run before it has been
/// handed on by then, so it is the same error whatever the threads did).
/// With `timing`, one line per run goes to stderr afterwards, in plan
/// order, and a total for several runs.
pub fn run_all(
    plan: &[Planned<'_>],
    jobs: usize,
    timing: bool,
    eta: crate::Eta,
    timing_of_eta: progress::EtaTiming,
    each: &mut dyn FnMut(usize, RunOutput) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let workers = jobs.clamp(1, plan.len().max(1));
    let label = plan.first().map_or("", |p| p.variant.spec.as_str());
    let bar = Progress::new(label, plan.len(), workers, eta, timing_of_eta);
    let started = Instant::now();
    let mut timed = Vec::with_capacity(plan.len());
    let mut hand_on = |i: usize, done: Done| -> Result<(), Failure> {
        let (out, wall) = done?;
        timed.push(Timed {
            wall,
            sim_ns: out.sim_ns,
            events: out.events,
            ios: out
                .report
                .jobs
                .iter()
                .flat_map(|j| j.dirs.iter())
                .map(|d| d.total_ios)
                .sum(),
        });
        each(i, out)
    };
    let result = if workers == 1 {
        let mut r = Ok(());
        for (i, p) in plan.iter().enumerate() {
            r = hand_on(i, run_one(p, &bar, 0));
            if r.is_err() {
                break;
            }
        }
        r
    } else {
        run_threaded(
            plan.len(),
            workers,
            &|i, w| run_one(&plan[i], &bar, w),
            &mut hand_on,
        )
    };
    bar.finish();
    result?;
    if timing {
        // The process's peak is one run's only when there is one run; with
        // several it goes on the total's line.
        let one = plan.len() == 1;
        for (p, t) in plan.iter().zip(&timed) {
            report_timing(p, t, one);
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
    Ok(())
}

/// [`run_all`]'s runs on `workers` threads, the calling thread handing
/// the outputs on in order.
/// `run(i, thread)` runs run `i` of `n`.
fn run_threaded<T: Send>(
    n: usize,
    workers: usize,
    run: &(dyn Fn(usize, usize) -> Result<T, Failure> + Sync),
    hand_on: &mut dyn FnMut(usize, Result<T, Failure>) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let window = workers * AHEAD_PER_THREAD;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let board = Mutex::new(Board {
        done: BTreeMap::new(),
        handed: 0,
    });
    // Signalled when a run finishes and when one is handed on.
    let changed = Condvar::new();
    let lock = || {
        board
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    // Sets `stop` under the board's lock, so that a thread about to wait
    // for the window sees it or is woken.
    let halt = || {
        let b = lock();
        stop.store(true, Ordering::Relaxed);
        drop(b);
        changed.notify_all();
    };
    /// Stops the others if its thread unwinds, so none waits for a run
    /// that will not come.
    struct OnPanic<'s>(&'s dyn Fn());
    impl Drop for OnPanic<'_> {
        fn drop(&mut self) {
            if std::thread::panicking() {
                (self.0)();
            }
        }
    }
    let work = |w: usize| {
        let _guard = OnPanic(&halt);
        // A run taken is run, unless it waits outside the window when a
        // run before it has failed (the failure is handed on first).
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                break;
            }
            {
                let mut b = lock();
                while i >= b.handed + window {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    b = changed
                        .wait(b)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                }
            }
            let result = run(i, w);
            if result.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            lock().done.insert(i, result);
            changed.notify_all();
        }
    };
    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(workers);
        let mut failed = None;
        for w in 0..workers {
            let work = &work;
            match std::thread::Builder::new()
                .name(format!("run-{w}"))
                .stack_size(WORKER_STACK)
                .spawn_scoped(s, move || work(w))
            {
                Ok(h) => handles.push(h),
                Err(e) => {
                    failed = Some(Failure {
                        code: 1,
                        message: format!("starting a thread for the runs: {e}"),
                    });
                    break;
                }
            }
        }
        let mut result = match failed {
            Some(f) => Err(f),
            None => Ok(()),
        };
        // Hand the outputs on in order until every run is or one fails.
        let mut handed = 0;
        while result.is_ok() && handed < n {
            let done = {
                let mut b = lock();
                loop {
                    if let Some(d) = b.done.remove(&handed) {
                        break Some(d);
                    }
                    // Every thread gone without run `handed`: one panicked.
                    if handles.iter().all(|h| h.is_finished()) && !b.done.contains_key(&handed) {
                        break None;
                    }
                    b = changed
                        .wait_timeout(b, std::time::Duration::from_millis(100))
                        .map(|(b, _)| b)
                        .unwrap_or_else(|e| e.into_inner().0);
                }
            };
            result = match done {
                Some(d) => hand_on(handed, d),
                None => Err(Failure {
                    code: 1,
                    message: "a run's thread panicked".to_owned(),
                }),
            };
            handed += 1;
            lock().handed = handed;
            changed.notify_all();
        }
        if result.is_err() {
            halt();
        }
        let panicked = handles.into_iter().any(|h| h.join().is_err());
        match result {
            Ok(()) if panicked => Err(Failure {
                code: 1,
                message: "a run's thread panicked".to_owned(),
            }),
            r => r,
        }
    })
}

fn run_one(p: &Planned<'_>, bar: &Progress, w: usize) -> Result<(RunOutput, f64), Failure> {
    let started = Instant::now();
    let out = iolab_sim::run_watched(
        &Scenario {
            seed: p.seed,
            ..p.scenario.clone()
        },
        p.variant,
        &mut |t| bar.update(w, t),
        p.status_every,
    )
    .map_err(|e| {
        let message = format!("{e} (variant {}, seed {})", p.variant.spec, p.seed);
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

fn report_timing(p: &Planned<'_>, t: &Timed, peak: bool) {
    eprintln!(
        "iolab: variant {}, seed {}: {:.3} s wall, {:.1} s simulated, {} events, {} IOs, {:.2} M IOs/s of wall time{}",
        p.variant.spec,
        p.seed,
        t.wall,
        t.sim_ns as f64 / 1e9,
        t.events,
        t.ios,
        t.ios as f64 / t.wall / 1e6,
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

#[cfg(test)]
mod tests {
    use super::{AHEAD_PER_THREAD, run_threaded};
    use crate::Failure;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// Outputs come back in plan order whatever the threads do, and no
    /// run starts further than the window ahead of the oldest not yet
    /// handed on, so few finished runs wait in memory.
    #[test]
    fn outputs_come_in_order_and_runs_stay_within_the_window() {
        let workers = 3;
        let handed = AtomicUsize::new(0);
        let furthest = AtomicUsize::new(0);
        let run = |i: usize, _w: usize| -> Result<usize, Failure> {
            let ahead = i - handed.load(Ordering::SeqCst);
            furthest.fetch_max(ahead, Ordering::SeqCst);
            // Early runs slow, so later ones would race ahead unbounded.
            std::thread::sleep(Duration::from_micros(if i.is_multiple_of(7) {
                3_000
            } else {
                100
            }));
            Ok(i * 10)
        };
        let mut got = Vec::new();
        run_threaded(60, workers, &run, &mut |i, r| {
            got.push((i, r?));
            handed.store(i + 1, Ordering::SeqCst);
            Ok(())
        })
        .expect("all runs");
        let want: Vec<(usize, usize)> = (0..60).map(|i| (i, i * 10)).collect();
        assert_eq!(got, want);
        let furthest = furthest.load(Ordering::SeqCst);
        assert!(furthest < workers * AHEAD_PER_THREAD, "{furthest}");
        assert!(furthest > 0, "the threads ran side by side");
    }

    /// The earliest failed run's error is returned, after every run
    /// before it was handed on, and nothing after it is.
    #[test]
    fn the_earliest_failure_ends_the_runs() {
        let run = |i: usize, _w: usize| -> Result<usize, Failure> {
            if i == 9 || i == 12 {
                Err(Failure::input(format!("run {i}")))
            } else {
                Ok(i)
            }
        };
        let mut got = Vec::new();
        let e = run_threaded(40, 4, &run, &mut |i, r| {
            got.push(r?);
            assert_eq!(got.len(), i + 1);
            Ok(())
        })
        .expect_err("run 9 fails");
        assert_eq!(e.message, "run 9");
        assert_eq!(got, (0..9).collect::<Vec<_>>());
        // A failure of the receiver ends them too.
        let e = run_threaded(40, 4, &|i, _| Ok(i), &mut |i, _| {
            if i == 5 {
                Err(Failure::input("full"))
            } else {
                Ok(())
            }
        })
        .expect_err("the receiver fails");
        assert_eq!(e.message, "full");
    }
}
