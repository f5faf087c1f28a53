//! Monitoring window: its length at a step and its arming
//! (kernel: `rwb_arm_timer`), and the per-direction latency accumulators
//! (kernel: `struct blk_rq_stat`, `blk_stat_add`).

use crate::{DepthPolicy, Op, Slots, WINDOW_NS, Wbt};

/// Floor square root (kernel: `int_sqrt`).
pub const fn isqrt(x: u64) -> u64 {
    if x < 2 {
        return x;
    }
    // Newton iteration from a power of two above the root.
    let mut r = 1u64 << (64 - x.leading_zeros()).div_ceil(2);
    loop {
        let next = (r + x / r) / 2;
        if next >= r {
            return r;
        }
        r = next;
    }
}

/// Monitoring window length at `step` (kernel: `rwb_arm_timer`):
/// `(WINDOW_NS << 4) / isqrt((step + 1) << 8)` for step > 0, else `WINDOW_NS`.
/// The v5 code used the same formula at every step ≥ 0, which gives the same
/// numbers.
pub const fn window_ns(step: i32) -> u64 {
    if step > 0 {
        (WINDOW_NS << 4) / isqrt(((step as u64) + 1) << 8)
    } else {
        WINDOW_NS
    }
}

/// Completion-latency accumulator of one direction over one window
/// (kernel: `struct blk_rq_stat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowStat {
    /// Samples recorded.
    pub nr_samples: u32,
    /// Smallest sample; `u64::MAX` when empty.
    pub min: u64,
    /// Largest sample; 0 when empty.
    pub max: u64,
    /// Sum of samples (the tracepoint's `time`, the kernel's `batch`).
    pub sum: u64,
}

impl WindowStat {
    /// An empty accumulator.
    pub const EMPTY: WindowStat = WindowStat {
        nr_samples: 0,
        min: u64::MAX,
        max: 0,
        sum: 0,
    };

    #[inline]
    pub(crate) fn add(&mut self, v: u64) {
        self.nr_samples = self.nr_samples.saturating_add(1);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum = self.sum.saturating_add(v);
    }

    /// Fold another accumulator into this one (kernel: `blk_rq_stat_sum`,
    /// which folds the per-CPU accumulators).
    pub fn merge(&mut self, other: &WindowStat) {
        self.nr_samples = self.nr_samples.saturating_add(other.nr_samples);
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum = self.sum.saturating_add(other.sum);
    }

    /// Mean sample, 0 when empty.
    pub fn mean(&self) -> u64 {
        if self.nr_samples == 0 {
            0
        } else {
            self.sum / u64::from(self.nr_samples)
        }
    }
}

pub(crate) const READ_BUCKET: usize = 0;
pub(crate) const WRITE_BUCKET: usize = 1;

impl<S: Slots, D: DepthPolicy> Wbt<S, D> {
    pub(crate) fn arm_if_idle(&mut self, now: u64) {
        if self.deadline.is_none() {
            self.arm_window(now);
        }
    }

    /// Start a window at `now` unless one runs (kernel: the
    /// `blk_stat_is_active` check after an admission in `wbt_wait`). For a
    /// face that admits on a fast path outside the core.
    pub fn ensure_window(&mut self, now: u64) {
        self.arm_if_idle(now);
    }

    /// Write-direction samples collected outside the core (a fast path's
    /// accumulator) join the running window; dropped while none runs, as
    /// [`on_done`](Self::on_done) drops its sample.
    pub fn add_write_samples(&mut self, stat: &WindowStat) {
        if self.deadline.is_some() && stat.nr_samples > 0 {
            self.stats[WRITE_BUCKET].merge(stat);
        }
    }

    /// Start a window at the current step (kernel: `rwb_arm_timer`); the
    /// accumulators start empty.
    pub(crate) fn arm_window(&mut self, now: u64) {
        self.cur_win_ns = window_ns(self.step);
        let deadline = match self.tick_ns {
            None => now.saturating_add(self.cur_win_ns),
            Some(tick) => {
                let ticks = (self.cur_win_ns / tick).max(1);
                (now / tick).saturating_add(ticks).saturating_mul(tick)
            }
        };
        self.deadline = Some(deadline);
        self.stats = [WindowStat::EMPTY; 2];
    }

    /// When [`on_timer`](Self::on_timer) must next be called, if a window runs.
    pub fn next_deadline(&self) -> Option<u64> {
        self.deadline
    }

    pub(crate) fn record_sample(&mut self, now: u64, op: Op, issue: u64) {
        if self.deadline.is_none() {
            return;
        }
        let bucket = match op {
            Op::Read => READ_BUCKET,
            o if o.is_write_dir() => WRITE_BUCKET,
            _ => return,
        };
        self.stats[bucket].add(now.saturating_sub(issue));
    }
}
