//! A progress bar on stderr for commands that take more than about a
//! second; hidden when stderr is not a terminal. One bar covers every run
//! of a command: the share of their work done (each run's
//! [`RunProgress`]: its stonewall sections in turn, its jobs' runtime or
//! bytes, whichever they end by), the runs done of the total (or one
//! run's simulated time), and the time left at the rate so far, on one
//! line of at most 80 columns.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use iolab_sim::RunProgress;

use crate::Eta;

/// A run's work in the bar's units.
const WHOLE: u64 = 1000;
/// Characters of a run's label the bar shows.
const LABEL: usize = 16;

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
    started: Instant,
    enabled: bool,
    /// Draw on stderr as lines, once a second (or as `--eta-newline` or
    /// `--eta-interval` says): `--eta always` when stderr is not a
    /// terminal, or `--eta-newline`.
    lines: bool,
    timing: EtaTiming,
    done: AtomicUsize,
    /// Each worker's current run's share done (of [`WHOLE`]), or
    /// [`IDLE`], and its simulated ms.
    at: Vec<AtomicU64>,
    at_ms: Vec<AtomicU64>,
    bar: Mutex<Option<ProgressBar>>,
}

impl Progress {
    /// A bar for `runs` runs, run by `workers` threads; `label` names a
    /// single run. `eta` as fio's `--eta`: auto draws on a terminal,
    /// always draws anyway (one line a second when stderr is not a
    /// terminal), never does not draw.
    pub fn new(label: &str, runs: usize, workers: usize, eta: Eta, timing: EtaTiming) -> Self {
        let terminal = std::io::stderr().is_terminal();
        Self {
            label: label.chars().take(LABEL).collect(),
            runs,
            started: Instant::now(),
            enabled: match eta {
                Eta::Auto => terminal,
                Eta::Always => true,
                Eta::Never => false,
            },
            lines: !terminal || timing.newline.is_some(),
            timing,
            done: AtomicUsize::new(0),
            at: (0..workers).map(|_| AtomicU64::new(IDLE)).collect(),
            at_ms: (0..workers).map(|_| AtomicU64::new(0)).collect(),
            bar: Mutex::new(None),
        }
    }

    /// Worker `w`'s run has come to `p`.
    pub fn update(&self, w: usize, p: RunProgress) {
        if !self.enabled {
            return;
        }
        if let (Some(at), Some(ms)) = (self.at.get(w), self.at_ms.get(w)) {
            // A run still going is not done, whatever its share says.
            at.store(
                ((p.done.clamp(0.0, 1.0) * WHOLE as f64) as u64).min(WHOLE - 1),
                Ordering::Relaxed,
            );
            ms.store(p.now / 1_000_000, Ordering::Relaxed);
        }
        self.redraw();
    }

    /// Worker `w` finished a run.
    pub fn finished(&self, w: usize) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(slot) = self.at.get(w) {
            slot.store(IDLE, Ordering::Relaxed);
        }
        // The last run's end is the bar's: it is cleared, not drawn at
        // 100 % (a line drawn then would only repeat what the output says).
        if self.enabled && done < self.runs {
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
            // Drawn first once it has its figures (a bar drawn at once
            // would show 0 % with no message).
            let b = ProgressBar::with_draw_target(
                Some(WHOLE.saturating_mul(self.runs as u64)),
                ProgressDrawTarget::hidden(),
            );
            let t = self.timing;
            let target = if self.lines {
                let every = t.newline.or(t.interval).unwrap_or(Duration::from_secs(1));
                ProgressDrawTarget::term_like_with_hz(
                    Box::new(Lines {
                        every,
                        last: Mutex::new(None),
                    }),
                    hz(every),
                )
            } else if let Some(every) = t.interval {
                ProgressDrawTarget::stderr_with_hz(hz(every))
            } else {
                ProgressDrawTarget::stderr()
            };
            // At most 80 columns: a label of 16, the bar's 20, 4 for the
            // percent, what has run (at most 16) and the times (at most
            // 20).
            if let Ok(style) =
                ProgressStyle::with_template("{prefix} [{bar:20}] {percent:>3}% {msg}")
            {
                b.set_style(style.progress_chars("=> "));
            }
            b.set_prefix(if self.runs == 1 {
                self.label.clone()
            } else {
                "runs".to_owned()
            });
            self.set_figures(&b);
            b.set_draw_target(target);
            *bar = Some(b);
        }
        if let Some(b) = bar.as_ref() {
            self.set_figures(b);
        }
    }

    /// The bar's position and message from the workers' figures.
    fn set_figures(&self, b: &ProgressBar) {
        let done = self.done.load(Ordering::Relaxed);
        let running: u64 = self
            .at
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .filter(|&t| t != IDLE)
            .sum();
        let position = (done as u64 * WHOLE).saturating_add(running);
        b.set_position(position);
        let what = if self.runs == 1 {
            let ms = self.at_ms.first().map_or(0, |m| m.load(Ordering::Relaxed));
            format!("{:.1} s sim", ms as f64 / 1000.0)
        } else {
            format!("{done}/{} runs", self.runs)
        };
        // The time left at the rate since the command started (the bar's
        // own clock starts only when it is first drawn).
        let elapsed = self.started.elapsed().as_secs_f64();
        let share = position as f64 / (WHOLE * self.runs.max(1) as u64) as f64;
        let left = if share > 0.0 {
            clock(elapsed * (1.0 - share) / share)
        } else {
            "?".to_owned()
        };
        b.set_message(format!("{what} ({}, {left} left)", clock(elapsed)));
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

/// `s` seconds as `42s`, `3m05s` or `1h20m`.
fn clock(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s / 60 % 60),
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
