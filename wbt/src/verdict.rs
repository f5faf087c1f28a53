//! Window expiry (kernel: `wb_timer_fn`) and its [`Verdict`] (kernel:
//! `latency_exceeded`).

use crate::window::{READ_BUCKET, WRITE_BUCKET};
use crate::{
    Class, MIN_READ_SAMPLES, MIN_WRITE_SAMPLES, Slots, TraceRecord, UNKNOWN_BUMP, Variant, Wbt,
    WindowStat,
};

/// Window verdict (kernel: `LAT_*` returned by `latency_exceeded`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Reads met the target: relax (`LAT_OK`).
    Ok = 1,
    /// Not enough data and nothing going on (`LAT_UNKNOWN`).
    Unknown = 2,
    /// Not enough data but writes are going on: relax (`LAT_UNKNOWN_WRITES`, modern only).
    UnknownWrites = 3,
    /// Reads missed the target, or a read is stuck: squeeze (`LAT_EXCEEDED`).
    Exceeded = 4,
}

impl<S: Slots> Wbt<S> {
    fn evaluate(&mut self, now: u64, stats: &[WindowStat; 2]) -> Verdict {
        let read = stats[READ_BUCKET];
        let write = stats[WRITE_BUCKET];
        let stuck = match self.sync {
            Some((_, issue)) if self.enabled() => now.saturating_sub(issue),
            _ => 0,
        };
        if stuck > self.cur_win_ns || (stuck > self.min_lat_ns && read.nr_samples == 0) {
            self.push_trace(TraceRecord::Lat { now, lat_ns: stuck });
            return Verdict::Exceeded;
        }
        let valid = read.nr_samples >= MIN_READ_SAMPLES && write.nr_samples >= MIN_WRITE_SAMPLES;
        if !valid {
            return match self.variant {
                Variant::Modern
                    if write.nr_samples > 0
                        || self.dirty_signal(now)
                        || self.total_inflight() > 0 =>
                {
                    Verdict::UnknownWrites
                }
                _ => Verdict::Unknown,
            };
        }
        if read.min > self.min_lat_ns {
            self.push_trace(TraceRecord::Lat {
                now,
                lat_ns: read.min,
            });
            self.push_trace(TraceRecord::Stat { now, read, write });
            return Verdict::Exceeded;
        }
        if self.step != 0 {
            self.push_trace(TraceRecord::Stat { now, read, write });
        }
        Verdict::Ok
    }

    fn total_inflight(&self) -> u32 {
        Class::ALL
            .iter()
            .fold(0u32, |a, c| a.saturating_add(self.slots.inflight(*c)))
    }

    /// Timer callback (kernel: `wb_timer_fn`). Does nothing unless a window
    /// is armed and `now` has reached its deadline. Evaluates the window,
    /// scales, and re-arms if the step is not 0 or tracked IO was inflight
    /// when the expiry started.
    pub fn on_timer(&mut self, now: u64) {
        match self.deadline {
            Some(d) if now >= d => {}
            _ => return,
        }
        self.deadline = None;
        let inflight = self.total_inflight();
        let stats = self.stats;
        self.stats = [WindowStat::EMPTY; 2];
        let verdict = self.evaluate(now, &stats);
        self.push_trace(TraceRecord::Timer {
            now,
            verdict,
            step: self.step,
            inflight,
        });
        match verdict {
            Verdict::Exceeded => {
                self.scale_down(now, true);
            }
            Verdict::Ok | Verdict::UnknownWrites => {
                self.scale_up(now);
            }
            Verdict::Unknown => {
                self.unknown_cnt = self.unknown_cnt.saturating_add(1);
                if self.unknown_cnt >= UNKNOWN_BUMP {
                    if self.step > 0 {
                        self.scale_up(now);
                    } else if self.step < 0 {
                        self.scale_down(now, false);
                    }
                }
            }
        }
        if self.step != 0 || inflight > 0 {
            self.arm_window(now);
        }
    }
}
