//! A progress bar on stderr for runs longer than about a second; hidden
//! when stderr is not a terminal.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use iolab_sim::Scenario;

/// Simulated time the run is expected to last (the longest runtime plus
/// ramp, summed over stonewall sections), for the bar's length.
pub fn horizon(s: &Scenario) -> u64 {
    s.jobs
        .iter()
        .map(|j| j.runtime_ns.unwrap_or(0) + j.ramp_time_ns)
        .max()
        .unwrap_or(0)
}

/// The bar, created only once a run has taken more than a second.
pub struct Bar {
    label: String,
    horizon: u64,
    started: Instant,
    bar: Option<ProgressBar>,
    enabled: bool,
}

impl Bar {
    /// A bar for `label` over `horizon` ns of simulated time.
    pub fn new(label: &str, horizon: u64) -> Self {
        Self {
            label: label.to_owned(),
            horizon,
            started: Instant::now(),
            bar: None,
            enabled: std::io::stderr().is_terminal() && horizon > 0,
        }
    }

    /// Simulated time reached `t`.
    pub fn update(&mut self, t: u64) {
        if !self.enabled {
            return;
        }
        if self.bar.is_none() && self.started.elapsed() > Duration::from_secs(1) {
            let bar = ProgressBar::new(self.horizon / 1_000_000);
            if let Ok(style) = ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} ms simulated ({elapsed})",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_prefix(self.label.clone());
            self.bar = Some(bar);
        }
        if let Some(b) = &self.bar {
            b.set_position((t / 1_000_000).min(self.horizon / 1_000_000));
        }
    }

    /// Removes the bar.
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
