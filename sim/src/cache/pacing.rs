//! How long a dirtying task sleeps in `balance_dirty_pages`, and after how
//! many pages it comes back (kernel `mm/page-writeback.c`: `wb_max_pause`,
//! `wb_min_pause`, `dirty_poll_interval` and the pause arithmetic of
//! `balance_dirty_pages`).
//!
//! Times are whole jiffies, as in the kernel: the reference kernel runs
//! with `HZ=250`, so pauses are multiples of 4 ms. A task returns to
//! throttling after `nr_dirtied_pause` pages, sized so that a pause lasts
//! about 10 ms (more with many dirtiers); a pause shorter than the
//! computed minimum is not slept, and the time a task spent between calls
//! ("think time") is credited against its next pause.
//!
//! The rates a pause is computed from are the device's estimates
//! ([`super::wb`]); the caller also calls a task back after 8 pages while
//! the device is `dirty_exceeded` (`balance_dirty_pages_ratelimited`).
//!
//! Not modelled: the per-CPU count that calls a task back early when many
//! tasks dirty on one CPU (`bdp_ratelimits` against `ratelimit_pages`),
//! the pages of exited tasks charged to running ones
//! (`dirty_throttle_leaks`), and cgroup writeback domains.

use super::dirty::{DirtyLimits, MAX_PAUSE_NS};
use super::wb::RATELIMIT_CALC_SHIFT;
use crate::time::{Ns, SEC};

/// Timer ticks per second of the simulated kernel (the reference
/// machine's `CONFIG_HZ`).
pub const HZ: u64 = 250;
/// One jiffy.
pub const JIFFY_NS: Ns = SEC / HZ;
/// Longest pause (`MAX_PAUSE`: 200 ms) in jiffies.
pub const MAX_PAUSE_JIFFIES: u64 = MAX_PAUSE_NS / JIFFY_NS;
/// Pages a task dirties before its first call, and the least the pause
/// sizing aims for (`DIRTY_POLL_THRESH`: 128 KiB of 4 KiB pages).
pub const DIRTY_POLL_THRESH: u32 = 32;

/// One task's throttling state (kernel: `current->nr_dirtied_pause`,
/// `current->dirty_paused_when`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskPacing {
    /// Pages to dirty before the next call.
    pub nr_dirtied_pause: u32,
    /// When the task's last pause ended (or should have), if it paused.
    pub paused_when: Option<Ns>,
}

impl Default for TaskPacing {
    fn default() -> Self {
        Self {
            nr_dirtied_pause: DIRTY_POLL_THRESH,
            paused_when: None,
        }
    }
}

/// The device's write bandwidth and the per-task dirty rate limit, both in
/// pages per second (kernel: `wb->avg_write_bandwidth`,
/// `wb->dirty_ratelimit`), and where the dirty count sits on the control
/// lines (`pos_ratio`, in fixed point, [`super::wb::wb_position_ratio`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rates {
    /// Write bandwidth.
    pub write_bw: u64,
    /// Base rate of one dirtier.
    pub dirty_ratelimit: u64,
    /// Position ratio: the task's rate is the base rate times this.
    pub pos_ratio: u64,
}

/// What one call does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// At or below the free-run line: no throttling (and no trace record).
    FreeRun,
    /// Throttled, but the pause is below the minimum and is not slept (the
    /// kernel traces it with `pause` ≤ 0). `reset`: the task's dirtied
    /// count starts again.
    Skip {
        /// The dirtied count restarts.
        reset: bool,
    },
    /// Sleep this long.
    Sleep(Ns),
}

fn ilog2(x: u64) -> i64 {
    i64::from(63 - x.max(1).leading_zeros())
}

/// `dirty_poll_interval`: below the free-run line, pages until the next
/// check, the square root of the distance to the limit rounded down to a
/// power of two.
pub fn dirty_poll_interval(dirty: u64, thresh: u64) -> u32 {
    if thresh > dirty {
        let shift = ilog2(thresh - dirty) >> 1;
        u32::try_from(1u64 << shift).unwrap_or(u32::MAX)
    } else {
        1
    }
}

/// `wb_max_pause`: no longer than what lets the device drain an eighth of
/// a second's worth of the dirty pages, nor than 200 ms. In jiffies.
pub fn wb_max_pause(wb_dirty: u64, write_bw: u64) -> u64 {
    let per_jiffy_share = write_bw / (1 + HZ / 8).next_power_of_two();
    (wb_dirty / (1 + per_jiffy_share) + 1).min(MAX_PAUSE_JIFFIES)
}

/// `wb_min_pause`: the shortest pause worth sleeping (jiffies) and the
/// pages the task dirties before its next call. The target pause is
/// 10 ms, plus 10 ms per doubling of the dirtiers (write bandwidth over
/// the per-task rate), at most half the longest pause.
pub fn wb_min_pause(max_pause: u64, task_ratelimit: u64, rates: Rates) -> (i64, u32) {
    let hz_pow2 = HZ.next_power_of_two() as i64;
    let (hi, lo) = (ilog2(rates.write_bw), ilog2(rates.dirty_ratelimit));
    let max_pause = max_pause as i64;
    let dirty_rl = rates.dirty_ratelimit as i64;
    let mut t = (HZ as i64 / 100).max(1);
    if hi > lo {
        t += (hi - lo) * (10 * HZ as i64) / 1024;
    }
    t = t.min(1 + max_pause / 2);
    let mut pages = dirty_rl * t / hz_pow2;
    let poll = i64::from(DIRTY_POLL_THRESH);
    if pages < poll {
        t = max_pause;
        pages = dirty_rl * t / hz_pow2;
        if pages > poll {
            pages = poll;
            t = HZ as i64 * poll / dirty_rl.max(1);
        }
    }
    let pause = HZ as i64 * pages / (task_ratelimit as i64 + 1);
    if pause > max_pause {
        t = max_pause;
        pages = task_ratelimit as i64 * t / hz_pow2;
    }
    let pages = u32::try_from(pages.max(0)).unwrap_or(u32::MAX);
    let min_pause = if i64::from(pages) >= poll {
        1 + t / 2
    } else {
        t
    };
    (min_pause, pages)
}

/// One call of `balance_dirty_pages` (its `Paced` throttling) for a task
/// that dirtied `pages` pages, with `dirty` pages dirty or under
/// writeback (the device's `wb_dirty` is the same: one device). Updates
/// the task's pacing state.
pub fn pass(
    limits: &DirtyLimits,
    now: Ns,
    task: &mut TaskPacing,
    pages: u32,
    dirty: u64,
    rates: Rates,
) -> Pass {
    if dirty <= limits.freerun {
        task.paused_when = Some(now);
        task.nr_dirtied_pause = dirty_poll_interval(dirty, limits.thresh);
        return Pass::FreeRun;
    }
    let task_ratelimit = (rates.dirty_ratelimit * rates.pos_ratio) >> RATELIMIT_CALC_SHIFT;
    let max_pause = wb_max_pause(dirty, rates.write_bw);
    let (min_pause, next_pages) = wb_min_pause(max_pause, task_ratelimit, rates);
    let jiffies = |ns: Ns| (ns / JIFFY_NS) as i64;
    let mut now_j = jiffies(now);
    // A rate of 0 (at the limit): the longest pause, no think-time credit.
    let (period, mut pause) = match (HZ * u64::from(pages)).checked_div(task_ratelimit) {
        None => (max_pause as i64, max_pause as i64),
        Some(p) => {
            let think = task.paused_when.map_or(0, |w| now_j - jiffies(w));
            (p as i64, p as i64 - think)
        }
    };
    if task_ratelimit != 0 && pause < min_pause {
        let reset = if pause < -(HZ as i64) {
            task.paused_when = Some(now);
            true
        } else if period > 0 {
            let since = task.paused_when.unwrap_or(now);
            task.paused_when = Some(since + period as u64 * JIFFY_NS);
            true
        } else {
            if task.nr_dirtied_pause <= pages {
                task.nr_dirtied_pause = task.nr_dirtied_pause.saturating_add(pages);
            }
            false
        };
        return Pass::Skip { reset };
    }
    if pause > max_pause as i64 {
        now_j += (pause - max_pause as i64).min(max_pause as i64);
        pause = max_pause as i64;
    }
    let pause = pause.max(1) as u64;
    task.paused_when = Some((now_j as u64 + pause) * JIFFY_NS);
    task.nr_dirtied_pause = next_pages.max(1);
    Pass::Sleep(pause * JIFFY_NS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    const RATES: Rates = Rates {
        write_bw: 100_000,
        dirty_ratelimit: 100_000,
        pos_ratio: crate::cache::wb::POS_RATIO_ONE,
    };

    #[test]
    fn jiffies_are_four_milliseconds_and_the_longest_pause_is_fifty() {
        assert_eq!(JIFFY_NS, 4 * MS);
        // The kernel's MAX_PAUSE is HZ / 5.
        assert_eq!(MAX_PAUSE_JIFFIES, HZ / 5);
    }

    #[test]
    fn the_poll_interval_is_the_distance_to_the_limits_root() {
        assert_eq!(dirty_poll_interval(0, 1 << 20), 1 << 10);
        assert_eq!(dirty_poll_interval(1000, 1000 + 17), 4);
        assert_eq!(dirty_poll_interval(5, 5), 1);
    }

    #[test]
    fn the_longest_pause_lets_an_eighth_second_of_writeback_drain() {
        // 100,000 pages/s over 32 jiffies' worth: 3125 pages a jiffy.
        assert_eq!(wb_max_pause(3125 * 10, 100_000), 10);
        assert_eq!(wb_max_pause(u64::MAX / 2, 100_000), MAX_PAUSE_JIFFIES);
        assert_eq!(wb_max_pause(0, 100_000), 1);
    }

    #[test]
    fn one_dirtier_aims_for_two_jiffies_many_for_longer() {
        // One dirtier at the device's rate: t = HZ/100 = 2 jiffies, pages
        // = rate × 2 / 256.
        let (min, pages) = wb_min_pause(50, 100_000, RATES);
        assert_eq!(pages, 781);
        assert_eq!(min, 2);
        // Sixteen dirtiers (rate / 16): four doublings add 4 × 10 ms, 9
        // jiffies in the kernel's integer arithmetic.
        let sixteen = Rates {
            dirty_ratelimit: 6_250,
            ..RATES
        };
        let (min, pages) = wb_min_pause(50, 6_250, sixteen);
        assert_eq!(pages, 6_250 * 11 / 256);
        assert_eq!(min, 6);
        // A slow rate: the target stretches to max_pause, capped at 32 pages.
        let slow = Rates {
            write_bw: 100,
            dirty_ratelimit: 100,
            ..RATES
        };
        let (min, pages) = wb_min_pause(50, 100, slow);
        assert_eq!(pages, 19);
        assert_eq!(min, 50);
    }

    #[test]
    fn a_pass_sleeps_whole_jiffies_credits_think_time_and_skips_short_pauses() {
        let l = DirtyLimits::for_memory(1 << 30);
        let mut task = TaskPacing::default();
        assert_eq!(pass(&l, 0, &mut task, 32, l.freerun, RATES), Pass::FreeRun);
        assert_eq!(task.paused_when, Some(0));
        // At the setpoint the task rate is the base rate: 781 pages take
        // 250 × 781 / 100,000 = 1 jiffy, less than the 2-jiffy minimum,
        // and already spent since the free-run call: skipped.
        let at = 8 * MS;
        assert_eq!(
            pass(&l, at, &mut task, 781, l.setpoint, RATES),
            Pass::Skip { reset: true }
        );
        // The period moved the task's clock on by one jiffy.
        assert_eq!(task.paused_when, Some(JIFFY_NS));
        // 10,000 pages at once: 25 jiffies less the 2 already thought, cut
        // to the longest pause (14 jiffies for this much dirty data); the
        // rest moves the task's clock on.
        let at = 3 * JIFFY_NS;
        assert_eq!(wb_max_pause(l.setpoint, RATES.write_bw), 14);
        let got = pass(&l, at, &mut task, 10_000, l.setpoint, RATES);
        assert_eq!(got, Pass::Sleep(14 * JIFFY_NS));
        assert_eq!(task.paused_when, Some((3 + 9 + 14) * JIFFY_NS));
        assert_eq!(task.nr_dirtied_pause, 781);
        // At the limit the rate is 0: the longest pause.
        let at_limit = Rates {
            pos_ratio: 0,
            ..RATES
        };
        let got = pass(&l, 30 * JIFFY_NS, &mut task, 32, l.thresh, at_limit);
        assert_eq!(
            got,
            Pass::Sleep(wb_max_pause(l.thresh, RATES.write_bw) * JIFFY_NS)
        );
    }
}
