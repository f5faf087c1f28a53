//! A progress bar on stderr for commands that take more than about a
//! second; hidden when stderr is not a terminal. One bar covers every run
//! of a command: the runs done of the total, the simulated time of the
//! slowest run still going, and the time left at the rate so far.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use iolab_sim::Scenario;

use crate::Eta;

/// Simulated time the run is expected to last (the longest runtime plus
/// ramp, summed over stonewall sections), for the bar's length.
pub fn horizon(s: &Scenario) -> u64 {
    s.jobs
        .iter()
        .map(|j| j.runtime_ns.unwrap_or(0) + j.ramp_time_ns)
        .max()
        .unwrap_or(0)
}

/// fio's `--eta-interval` and `--eta-newline`: how often the bar is
/// drawn (default: as often as it changes on a terminal, once a second as
/// lines), and whether each drawing is a line of its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EtaTiming {
    pub interval: Option<Duration>,
    pub newline: Option<Duration>,
}

/// A worker slot that runs nothing.
const IDLE: u64 = u64::MAX;

/// The bar, shared by the threads that run a command's runs.
pub struct Progress {
    label: String,
    runs: usize,
    /// ms of simulated time one run is expected to last.
    horizon_ms: u64,
    started: Instant,
    enabled: bool,
    /// Draw on stderr as lines, once a second (or as `--eta-newline` or
    /// `--eta-interval` says): `--eta always` when stderr is not a
    /// terminal, or `--eta-newline`.
    lines: bool,
    timing: EtaTiming,
    done: AtomicUsize,
    /// Each worker's current run's simulated ms, or [`IDLE`].
    at_ms: Vec<AtomicU64>,
    bar: Mutex<Option<ProgressBar>>,
}

impl Progress {
    /// A bar for `runs` runs of `horizon` ns each, run by `workers`
    /// threads; `label` names a single run. `eta` as fio's `--eta`: auto
    /// draws on a terminal, always draws anyway (one line a second when
    /// stderr is not a terminal), never does not draw.
    pub fn new(
        label: &str,
        runs: usize,
        horizon: u64,
        workers: usize,
        eta: Eta,
        timing: EtaTiming,
    ) -> Self {
        let terminal = std::io::stderr().is_terminal();
        Self {
            label: label.to_owned(),
            runs,
            horizon_ms: horizon / 1_000_000,
            started: Instant::now(),
            enabled: horizon > 0
                && match eta {
                    Eta::Auto => terminal,
                    Eta::Always => true,
                    Eta::Never => false,
                },
            lines: !terminal || timing.newline.is_some(),
            timing,
            done: AtomicUsize::new(0),
            at_ms: (0..workers).map(|_| AtomicU64::new(IDLE)).collect(),
            bar: Mutex::new(None),
        }
    }

    /// Worker `w`'s run reached simulated time `t` (ns).
    pub fn update(&self, w: usize, t: u64) {
        if !self.enabled {
            return;
        }
        if let Some(slot) = self.at_ms.get(w) {
            slot.store((t / 1_000_000).min(self.horizon_ms), Ordering::Relaxed);
        }
        self.redraw();
    }

    /// Worker `w` finished a run.
    pub fn finished(&self, w: usize) {
        self.done.fetch_add(1, Ordering::Relaxed);
        if let Some(slot) = self.at_ms.get(w) {
            slot.store(IDLE, Ordering::Relaxed);
        }
        if self.enabled {
            self.redraw();
        }
    }

    fn redraw(&self) {
        let Ok(mut bar) = self.bar.lock() else {
            return;
        };
        if bar.is_none() {
            if self.started.elapsed() <= Duration::from_secs(1) {
                return;
            }
            let b = ProgressBar::new(self.horizon_ms.saturating_mul(self.runs as u64));
            let t = self.timing;
            if self.lines {
                let every = t.newline.or(t.interval).unwrap_or(Duration::from_secs(1));
                b.set_draw_target(ProgressDrawTarget::term_like_with_hz(
                    Box::new(Lines {
                        every,
                        last: Mutex::new(None),
                    }),
                    hz(every),
                ));
            } else if let Some(every) = t.interval {
                b.set_draw_target(ProgressDrawTarget::stderr_with_hz(hz(every)));
            }
            if let Ok(style) =
                ProgressStyle::with_template("{prefix} [{bar:30}] {msg} ({elapsed}, {eta} left)")
            {
                b.set_style(style.progress_chars("=> "));
            }
            b.set_prefix(if self.runs == 1 {
                self.label.clone()
            } else {
                "runs".to_owned()
            });
            *bar = Some(b);
        }
        let Some(b) = bar.as_ref() else {
            return;
        };
        let done = self.done.load(Ordering::Relaxed);
        let running: Vec<u64> = self
            .at_ms
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .filter(|&t| t != IDLE)
            .collect();
        let slowest = running.iter().min().copied();
        b.set_position((done as u64 * self.horizon_ms).saturating_add(running.iter().sum::<u64>()));
        let at = slowest.map_or(String::new(), |t| {
            format!("{t}/{} ms simulated", self.horizon_ms)
        });
        b.set_message(if self.runs == 1 {
            at
        } else if at.is_empty() {
            format!("{done}/{} runs done", self.runs)
        } else {
            format!("{done}/{} runs done, slowest at {at}", self.runs)
        });
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Ok(mut bar) = self.bar.lock()
            && let Some(b) = bar.take()
        {
            b.finish_and_clear();
        }
    }
}

/// stderr when it is not a terminal: a drawing of the bar a line of its
/// own (no cursor to move back) at most once a second, as fio prints its
/// ETA lines to a file.
#[derive(Debug)]
struct Lines {
    /// At most one line this often.
    every: Duration,
    last: Mutex<Option<Instant>>,
}

/// Redraws a second for a drawing every `every` (at least one, at most
/// four: fio's 250 ms).
fn hz(every: Duration) -> u8 {
    let ms = every.as_millis().max(1);
    u8::try_from((1000 / ms).clamp(1, 4)).unwrap_or(1)
}

impl TermLike for Lines {
    fn width(&self) -> u16 {
        80
    }
    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.write_str(s)
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        // The bar's clearing of its last drawing is blanks: not a line.
        if s.trim().is_empty() {
            return Ok(());
        }
        if let Ok(mut last) = self.last.lock() {
            if last.is_some_and(|t| t.elapsed() < self.every) {
                return Ok(());
            }
            *last = Some(Instant::now());
        }
        let mut err = std::io::stderr().lock();
        std::io::Write::write_all(&mut err, s.as_bytes())?;
        std::io::Write::write_all(&mut err, b"\n")
    }
    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&self) -> std::io::Result<()> {
        std::io::Write::flush(&mut std::io::stderr())
    }
}
