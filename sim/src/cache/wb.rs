//! What `balance_dirty_pages` throttles by: the writeback device's
//! estimates (kernel `mm/page-writeback.c`, the fields of `struct
//! bdi_writeback` it keeps): the device's write bandwidth
//! (`wb_update_write_bandwidth`), the base dirty rate of one dirtier
//! (`wb_update_dirty_ratelimit`), where the dirty count sits on the global
//! and the device's control lines (`pos_ratio_polynom`,
//! `wb_position_ratio`), and whether the device is over its share of the
//! limit (`dirty_exceeded`). [`super::pacing`] turns these into a pause.
//!
//! Units are the kernel's: pages, jiffies (`HZ` = 250), pages per second,
//! and position ratios in fixed point with [`RATELIMIT_CALC_SHIFT`] bits
//! of fraction; the arithmetic is the kernel's integer arithmetic, so its
//! roundings are too.
//!
//! The estimates are updated at most every [`BANDWIDTH_INTERVAL`] jiffies,
//! by whichever comes first once the interval has passed: a throttled
//! `balance_dirty_pages` call, which also moves the rate limit, or the
//! end of an inode's writeback slice (`do_writepages`), which moves only
//! the bandwidth. Both restart the interval. A slice is half a second of
//! the estimated bandwidth ([`writeback_chunk_size`]), so a throttled
//! writer, called back every few jiffies, usually comes first, as in the
//! kernel's traces (`kernel/fixtures/dirty-throttle-1.txt`: a rate-limit
//! update every 0.26 s at the median while the writer was throttled).
//!
//! Differences from the kernel, each because the simulated machine has
//! one page cache writing to one backing device (a btrfs volume is one
//! device to writeback, as in the kernel):
//!
//! - The device's share of the dirty limit (`__wb_calc_thresh`, its share
//!   of recent writeback completions) is all of it once any writeback has
//!   completed and none before; the kernel's share is a little less when
//!   other devices write too.
//! - The hard limit (`hard_dirty_limit`) is the threshold: the kernel's
//!   `dom->dirty_limit` follows the threshold when it moves, and the
//!   simulated threshold does not move.
//! - Not modelled: the bandwidth update queued `BANDWIDTH_INTERVAL` after
//!   an inode's writeback ends (`wb_inode_writeback_end`), cgroup
//!   writeback domains, `strictlimit` devices.

use super::dirty::DirtyLimits;
use super::pacing::HZ;

/// Fraction bits of a position ratio (`RATELIMIT_CALC_SHIFT`).
pub const RATELIMIT_CALC_SHIFT: u32 = 10;
/// A position ratio of one.
pub const POS_RATIO_ONE: u64 = 1 << RATELIMIT_CALC_SHIFT;
/// Jiffies between estimates (`BANDWIDTH_INTERVAL`: `max(HZ / 5, 1)`).
pub const BANDWIDTH_INTERVAL: u64 = if HZ / 5 > 1 { HZ / 5 } else { 1 };
/// A device idle this long (jiffies) starts its estimate afresh
/// (`WB_BANDWIDTH_IDLE_JIF`).
pub const WB_BANDWIDTH_IDLE_JIF: u64 = HZ;
/// The write bandwidth's averaging period in jiffies:
/// `roundup_pow_of_two(3 * HZ)`.
const BW_PERIOD: u64 = (3 * HZ).next_power_of_two();
/// Initial bandwidth and rate limits (`INIT_BW`: 100 MB/s), pages/s.
pub const INIT_BW: u64 = 100 << (20 - 12);

/// The least a background writeback slice writes of one inode
/// (`MIN_WRITEBACK_PAGES`: 4 MiB).
pub const MIN_WRITEBACK_PAGES: u64 = 1024;
/// A slice writes at most this fraction of the dirty limit (`DIRTY_SCOPE`).
const DIRTY_SCOPE: u64 = 8;

/// Pages the flusher writes of one inode before it moves to the next
/// (`writeback_chunk_size` for writeback that is not for data
/// integrity): half a second of the device's bandwidth, at most an eighth
/// of the dirty limit and at most the `asked` pages of the work, rounded
/// down to whole 4 MiB after adding 4 MiB (so at least 4 MiB).
pub fn writeback_chunk_size(avg_write_bandwidth: u64, dirty_limit: u64, asked: u64) -> u64 {
    let pages = (avg_write_bandwidth / 2)
        .min(dirty_limit / DIRTY_SCOPE)
        .min(asked);
    (pages + MIN_WRITEBACK_PAGES) / MIN_WRITEBACK_PAGES * MIN_WRITEBACK_PAGES
}

/// The cubic global control line (`pos_ratio_polynom`): 2 at the
/// free-run line, 1 at the setpoint, 0 at the limit, in fixed point.
pub fn pos_ratio_polynom(setpoint: u64, dirty: u64, limit: u64) -> u64 {
    // The kernel's s64 arithmetic, in i128 so that a dirty count far from
    // a narrow line cannot overflow; the clamp gives the same result.
    let one = 1i128 << RATELIMIT_CALC_SHIFT;
    let span = i128::from(limit.saturating_sub(setpoint) | 1);
    let x = ((i128::from(setpoint) - i128::from(dirty)) << RATELIMIT_CALC_SHIFT) / span;
    let x = x.clamp(-4 * one, 4 * one);
    let mut r = x;
    r = (r * x) >> RATELIMIT_CALC_SHIFT;
    r = (r * x) >> RATELIMIT_CALC_SHIFT;
    r += one;
    r.clamp(0, 2 * one) as u64
}

/// The global control line's marks, pages: the dirty threshold, the hard
/// limit the line reaches 0 at (`hard_dirty_limit`, at least the
/// threshold) and its setpoint (halfway from the free-run line to the
/// limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlLine {
    pub thresh: u64,
    pub limit: u64,
    pub setpoint: u64,
}

impl ControlLine {
    /// The simulated machine's line: its threshold does not move, so the
    /// hard limit is the threshold.
    pub fn of(limits: &DirtyLimits) -> ControlLine {
        ControlLine {
            thresh: limits.thresh,
            limit: limits.thresh,
            setpoint: limits.setpoint,
        }
    }
}

/// The position of the dirty count for one throttled call
/// (`wb_position_ratio`): the global cubic line, scaled by the device's
/// linear line around its share of the setpoint, and raised when the
/// device holds less than half its share. `dirty` counts the whole
/// machine's dirty and writeback pages, `wb_dirty` the device's,
/// `wb_thresh` is the device's share of the threshold and `write_bw` its
/// smoothed bandwidth (pages/s).
pub fn wb_position_ratio(
    line: ControlLine,
    dirty: u64,
    wb_dirty: u64,
    wb_thresh: u64,
    write_bw: u64,
) -> u64 {
    let ControlLine {
        thresh,
        limit,
        setpoint,
    } = line;
    if dirty >= limit {
        return 0;
    }
    let mut pos_ratio = pos_ratio_polynom(setpoint, dirty, limit);
    // The device's share, at least an eighth of the room left, so that a
    // device idle for long is not blocked by a share of nearly nothing.
    let wb_thresh = wb_thresh.min(thresh).max((limit - dirty) / 8);
    let x = (wb_thresh << 16) / (thresh | 1);
    let wb_setpoint = (setpoint * x) >> 16;
    // Span 8 × write_bw with one device, moving towards wb_thresh as the
    // device's share falls.
    let span = ((thresh.saturating_sub(wb_thresh) + 8 * write_bw) * x) >> 16;
    let x_intercept = wb_setpoint + span;
    if wb_dirty < x_intercept - span / 4 {
        pos_ratio = pos_ratio * (x_intercept - wb_dirty) / ((x_intercept - wb_setpoint) | 1);
    } else {
        pos_ratio /= 4;
    }
    // The reserve below half the device's share: keep it from running dry.
    let reserve = wb_thresh / 2;
    if wb_dirty < reserve {
        if wb_dirty > reserve / 8 {
            pos_ratio = pos_ratio * reserve / wb_dirty;
        } else {
            pos_ratio *= 8;
        }
    }
    pos_ratio
}

/// The device's writeback estimates and counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wb {
    /// Jiffies of the last estimate (`bw_time_stamp`).
    pub bw_time_stamp: u64,
    /// `dirtied` and `written` at the last estimate.
    dirtied_stamp: u64,
    written_stamp: u64,
    /// Pages dirtied (newly: a page already dirty counts once;
    /// `WB_DIRTIED`) and written back (`WB_WRITTEN`) so far.
    pub dirtied: u64,
    pub written: u64,
    /// Last interval's write bandwidth, and its smoothed value, which
    /// throttling uses (`write_bandwidth`, `avg_write_bandwidth`).
    pub write_bandwidth: u64,
    pub avg_write_bandwidth: u64,
    /// Base rate of one dirtier, and the last balanced estimate it
    /// follows (`dirty_ratelimit`, `balanced_dirty_ratelimit`).
    pub dirty_ratelimit: u64,
    pub balanced_dirty_ratelimit: u64,
    /// The device is over its share and the machine over the limit: tasks
    /// come back to throttling after 8 pages (`dirty_exceeded`). Set and
    /// cleared only by throttled calls.
    pub dirty_exceeded: bool,
}

impl Default for Wb {
    fn default() -> Self {
        Self {
            bw_time_stamp: 0,
            dirtied_stamp: 0,
            written_stamp: 0,
            dirtied: 0,
            written: 0,
            write_bandwidth: INIT_BW,
            avg_write_bandwidth: INIT_BW,
            dirty_ratelimit: INIT_BW,
            balanced_dirty_ratelimit: INIT_BW,
            dirty_exceeded: false,
        }
    }
}

/// What a throttled call hands the rate-limit update: the machine's
/// dirty count, the control line's setpoint and the position ratio it
/// computed.
#[derive(Clone, Copy, Debug)]
pub struct Position {
    pub dirty: u64,
    pub setpoint: u64,
    pub pos_ratio: u64,
}

impl Wb {
    /// The device's share of the dirty limit (`__wb_calc_thresh`): all of
    /// it once any of its writeback has completed (it is the only device
    /// writing), none before.
    pub fn wb_thresh(&self, limits: &DirtyLimits) -> u64 {
        if self.written > 0 { limits.thresh } else { 0 }
    }

    /// An estimate is due (`time_is_before_jiffies(bw_time_stamp +
    /// BANDWIDTH_INTERVAL)`).
    pub fn due(&self, now_j: u64) -> bool {
        now_j > self.bw_time_stamp + BANDWIDTH_INTERVAL
    }

    /// Writeback starts on the device (`wb_bandwidth_estimate_start`):
    /// after more than a second idle with nothing under writeback, the
    /// next estimate measures from now.
    pub fn estimate_start(&mut self, now_j: u64, writeback_in_flight: bool) {
        if now_j.saturating_sub(self.bw_time_stamp) > WB_BANDWIDTH_IDLE_JIF && !writeback_in_flight
        {
            self.dirtied_stamp = self.dirtied;
            self.written_stamp = self.written;
            self.bw_time_stamp = now_j;
        }
    }

    /// One estimate (`__wb_update_bandwidth`): the rate limit too when a
    /// throttled call asks (`position`), then the write bandwidth.
    pub fn update(&mut self, now_j: u64, position: Option<Position>) {
        let elapsed = now_j.saturating_sub(self.bw_time_stamp).max(1);
        if let Some(p) = position {
            self.update_dirty_ratelimit(p, elapsed);
        }
        self.update_write_bandwidth(elapsed);
        self.dirtied_stamp = self.dirtied;
        self.written_stamp = self.written;
        self.bw_time_stamp = now_j;
    }

    /// `wb_update_write_bandwidth`: the interval's bandwidth, averaged
    /// over about three seconds, and a second smoothing that ignores
    /// single spikes.
    fn update_write_bandwidth(&mut self, elapsed: u64) {
        let old = self.write_bandwidth;
        let mut avg = self.avg_write_bandwidth;
        let mut bw = (self.written - self.written.min(self.written_stamp)) * HZ;
        if elapsed > BW_PERIOD {
            bw /= elapsed;
            avg = bw;
        } else {
            bw += old * (BW_PERIOD - elapsed);
            bw >>= BW_PERIOD.trailing_zeros();
            if avg > old && old >= bw {
                avg -= (avg - old) >> 3;
            }
            if avg < old && old <= bw {
                avg += (old - avg) >> 3;
            }
        }
        self.write_bandwidth = bw;
        self.avg_write_bandwidth = avg.max(1);
    }

    /// `wb_update_dirty_ratelimit`, its statistics measured: the rate
    /// pages were dirtied over the interval and the rate a dirtier was
    /// held to at its position.
    fn update_dirty_ratelimit(&mut self, p: Position, elapsed: u64) {
        let dirty_rate = (self.dirtied - self.dirtied.min(self.dirtied_stamp)) * HZ / elapsed;
        // + 1 lets a tiny rate grow.
        let task_ratelimit = ((self.dirty_ratelimit * p.pos_ratio) >> RATELIMIT_CALC_SHIFT) + 1;
        let next = dirty_ratelimit_step(
            RateLimits {
                dirty_ratelimit: self.dirty_ratelimit,
                balanced_dirty_ratelimit: self.balanced_dirty_ratelimit,
            },
            RatelimitInput {
                task_ratelimit,
                write_bw: self.avg_write_bandwidth,
                dirty_rate,
                dirty: p.dirty,
                setpoint: p.setpoint,
            },
        );
        self.dirty_ratelimit = next.dirty_ratelimit;
        self.balanced_dirty_ratelimit = next.balanced_dirty_ratelimit;
    }
}

/// A device's base dirty rate and the balanced rate it last estimated,
/// pages/s (`wb->dirty_ratelimit`, `wb->balanced_dirty_ratelimit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimits {
    pub dirty_ratelimit: u64,
    pub balanced_dirty_ratelimit: u64,
}

/// What one rate-limit update measured (the statistics the kernel's
/// `bdi_dirty_ratelimit` event prints, with the dirty count and setpoint
/// of the call that made it). Rates in pages/s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RatelimitInput {
    /// The rate a dirtier was held to at its position, plus one.
    pub task_ratelimit: u64,
    /// The device's smoothed write bandwidth.
    pub write_bw: u64,
    /// The rate pages were dirtied over the interval.
    pub dirty_rate: u64,
    /// Pages dirty or under writeback, and the control line's setpoint.
    pub dirty: u64,
    pub setpoint: u64,
}

/// One update of the base rate (`wb_update_dirty_ratelimit`, after its
/// measurements): the balanced rate is the task rate times the bandwidth
/// over the dirty rate (what N dirtiers at the task rate would each need
/// to match the device), at most the bandwidth; the base rate follows it
/// only when the dirty count's side of the setpoint agrees, by a step
/// that is the distance to the nearest of the last and this balanced
/// rate and the task rate, divided by 8 and shrunk by powers of two when
/// small against the rate. The entry [`Wb::update`] uses, and the one
/// the kernel replay drives from traced statistics.
pub fn dirty_ratelimit_step(prev: RateLimits, m: RatelimitInput) -> RateLimits {
    let ratelimit = prev.dirty_ratelimit;
    let balanced = (m.task_ratelimit * m.write_bw / (m.dirty_rate | 1)).min(m.write_bw);
    let mut step = 0;
    if m.dirty < m.setpoint {
        let x = prev
            .balanced_dirty_ratelimit
            .min(balanced)
            .min(m.task_ratelimit);
        if ratelimit < x {
            step = x - ratelimit;
        }
    } else {
        let x = prev
            .balanced_dirty_ratelimit
            .max(balanced)
            .max(m.task_ratelimit);
        if ratelimit > x {
            step = ratelimit - x;
        }
    }
    let shift = ratelimit / (2 * step + 1);
    step = if shift < u64::from(u64::BITS) {
        (step >> shift).div_ceil(8)
    } else {
        0
    };
    let next = if ratelimit < balanced {
        ratelimit + step
    } else {
        ratelimit.saturating_sub(step)
    };
    RateLimits {
        dirty_ratelimit: next.max(1),
        balanced_dirty_ratelimit: balanced,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> DirtyLimits {
        DirtyLimits::for_memory(4 << 30)
    }

    #[test]
    fn the_constants_are_the_kernels_at_hz_250() {
        assert_eq!(BANDWIDTH_INTERVAL, 50);
        assert_eq!(BW_PERIOD, 1024);
        assert_eq!(INIT_BW, 25_600);
        assert_eq!(POS_RATIO_ONE, 1024);
    }

    #[test]
    fn a_slice_is_half_a_second_of_bandwidth_in_whole_4_mib() {
        // 100 MB/s: 12,800 pages, + 1024, down to 13,312.
        assert_eq!(writeback_chunk_size(INIT_BW, 1 << 30, u64::MAX), 13_312);
        // A slow device still writes 4 MiB.
        assert_eq!(writeback_chunk_size(100, 1 << 30, u64::MAX), 1024);
        // A small dirty limit caps it: an eighth of 80,000 is 10,000.
        assert_eq!(writeback_chunk_size(INIT_BW, 80_000, u64::MAX), 10_240);
        // So does the work's own count: 3,000 pages asked, 3,072 written.
        assert_eq!(writeback_chunk_size(INIT_BW, 1 << 30, 3_000), 3_072);
    }

    #[test]
    fn the_cubic_line_is_two_one_and_zero_at_its_marks() {
        let l = limits();
        let setpoint = (l.freerun + l.thresh) / 2;
        assert_eq!(pos_ratio_polynom(setpoint, setpoint, l.thresh), 1024);
        // At the limit x = -1 (a hair more in integers): 0 after clamping.
        assert_eq!(pos_ratio_polynom(setpoint, l.thresh, l.thresh), 0);
        assert_eq!(pos_ratio_polynom(setpoint, l.freerun, l.thresh), 2048);
        // Halfway from the setpoint to the limit: 1 - 1/8.
        let half = setpoint + (l.thresh - setpoint) / 2;
        assert_eq!(pos_ratio_polynom(setpoint, half, l.thresh), 896);
    }

    #[test]
    fn one_device_scales_the_global_line_by_its_own() {
        let l = limits();
        let setpoint = (l.freerun + l.thresh) / 2;
        let bw = 25_600;
        let global = pos_ratio_polynom(setpoint, setpoint, l.thresh);
        // At the setpoint the device's line is about 1 too (its setpoint
        // is the global one scaled by x = 65535/65536 or so).
        let r = wb_position_ratio(ControlLine::of(&l), setpoint, setpoint, l.thresh, bw);
        assert!((1023..=1024).contains(&r), "{r}");
        // 2 × write_bw above its setpoint: 1 - 2/8 of the global line.
        let above = setpoint + 2 * bw;
        let r = wb_position_ratio(ControlLine::of(&l), setpoint, above, l.thresh, bw);
        let want = global * 3 / 4;
        assert!(r.abs_diff(want) <= 2, "{r} against {want}");
        // Past three quarters of the span: a quarter, however far.
        let far = setpoint + 7 * bw;
        assert_eq!(
            wb_position_ratio(ControlLine::of(&l), setpoint, far, l.thresh, bw),
            global / 4
        );
        // At or over the limit: 0.
        assert_eq!(
            wb_position_ratio(ControlLine::of(&l), l.thresh, l.thresh, l.thresh, bw),
            0
        );
    }

    #[test]
    fn a_device_with_no_share_yet_gets_an_eighth_of_the_room() {
        let l = limits();
        let dirty = l.freerun + 1000;
        // wb_thresh 0 becomes (limit - dirty) / 8; the device holding
        // nothing sits under its reserve: the ratio is multiplied by 8.
        let line = ControlLine::of(&l);
        let global = pos_ratio_polynom(l.setpoint, dirty, l.thresh);
        let with_none = wb_position_ratio(line, dirty, 0, 0, 25_600);
        // 8 × the global ratio × the device line's (x_intercept - 0) /
        // (x_intercept - wb_setpoint), in the kernel's integers.
        let share = (l.thresh - dirty) / 8;
        let x = (share << 16) / (l.thresh | 1);
        let wb_setpoint = (l.setpoint * x) >> 16;
        let span = ((l.thresh - share + 8 * 25_600) * x) >> 16;
        let x_intercept = wb_setpoint + span;
        let want = global * x_intercept / ((x_intercept - wb_setpoint) | 1) * 8;
        assert_eq!(with_none, want);
        assert!(with_none > 8 * global);
    }

    #[test]
    fn below_half_its_share_a_device_is_pushed_up_in_proportion_up_to_eight() {
        // A device line made flat by a large bandwidth, at the global
        // setpoint (ratio 1): below half the share (the reserve) the ratio
        // grows as reserve / wb_dirty, and from an eighth of it down it is 8.
        let l = limits();
        let line = ControlLine::of(&l);
        let reserve = l.thresh / 2;
        let at = |wb_dirty: u64| {
            wb_position_ratio(line, l.setpoint, wb_dirty, l.thresh, 10_000_000) as f64
        };
        let base = at(reserve);
        assert!((base - 1024.0).abs() < 4.0, "{base}");
        for (wb_dirty, times) in [
            (reserve / 2, 2.0),
            (reserve / 4, 4.0),
            (reserve / 8, 8.0),
            (1, 8.0),
        ] {
            let got = at(wb_dirty) / base;
            assert!((got - times).abs() < times * 0.01, "{wb_dirty}: {got}");
        }
    }

    #[test]
    fn the_bandwidth_moves_an_interval_towards_the_measured_rate() {
        // 200 ms (50 jiffies) writing 51,200 pages/s: 10,240 pages.
        let mut wb = Wb {
            written: 10_240,
            ..Wb::default()
        };
        assert!(wb.due(51));
        assert!(!wb.due(50));
        wb.update(50, None);
        // (10,240 × 250 + 25,600 × (1024 - 50)) / 1024.
        let want = (10_240 * 250 + 25_600 * 974) / 1024;
        assert_eq!(wb.write_bandwidth, want);
        // The first step: avg == old, so avg stays.
        assert_eq!(wb.avg_write_bandwidth, INIT_BW);
        wb.written += 10_240;
        wb.update(100, None);
        // Now old > avg and the new bw above old: avg moves an eighth.
        assert_eq!(
            wb.avg_write_bandwidth,
            INIT_BW + (want - INIT_BW) / 8,
            "{wb:?}"
        );
        // After a long gap the interval's rate replaces both.
        wb.written += 2_000;
        wb.update(100 + 2000, None);
        assert_eq!(wb.write_bandwidth, 2_000 * 250 / 2000);
        assert_eq!(wb.avg_write_bandwidth, 250);
    }

    #[test]
    fn the_rate_limit_finds_the_bandwidth_shared_by_its_dirtiers() {
        // Four dirtiers, each held to the task rate, on a device writing
        // 20,000 pages/s, the dirty count following what they dirty less
        // what is written: the rate limit, from 100 MB/s (25,600 pages/s),
        // comes down to a quarter of the bandwidth, and the dirty count
        // settles near the setpoint.
        let l = DirtyLimits::for_memory(16 << 30);
        let bw = 20_000;
        // The estimates start at 100 MB/s (25,600 pages/s).
        let mut wb = Wb {
            written: 1,
            ..Wb::default()
        };
        let mut dirty = l.setpoint;
        let mut now = 0;
        for _ in 0..300 {
            now += 51;
            let pos_ratio = wb_position_ratio(
                ControlLine::of(&l),
                dirty,
                dirty,
                wb.wb_thresh(&l),
                wb.avg_write_bandwidth,
            );
            let task = (wb.dirty_ratelimit * pos_ratio) >> RATELIMIT_CALC_SHIFT;
            let dirtied = 4 * task * 51 / HZ;
            let written = bw * 51 / HZ;
            wb.dirtied += dirtied;
            wb.written += written;
            dirty = (dirty + dirtied).saturating_sub(written).min(l.thresh);
            wb.update(
                now,
                Some(Position {
                    dirty,
                    setpoint: l.setpoint,
                    pos_ratio,
                }),
            );
        }
        // The bandwidth estimate found the device's.
        assert!(wb.avg_write_bandwidth.abs_diff(bw) <= bw / 50, "{wb:?}");
        let r = wb.dirty_ratelimit;
        assert!((4_500..=5_500).contains(&r), "rate limit {r}");
        let off = dirty.abs_diff(l.setpoint) as f64 / (l.thresh - l.setpoint) as f64;
        assert!(off < 0.5, "dirty {dirty}, setpoint {}", l.setpoint);
    }

    #[test]
    fn the_rate_limit_holds_when_position_and_rate_disagree() {
        // Below the setpoint (tasks run above the base rate) but the
        // balanced rate is lower: the limit does not follow it down.
        let l = limits();
        let dirty = l.freerun + 10;
        let mut wb = Wb::default();
        let pos_ratio = wb_position_ratio(ControlLine::of(&l), dirty, dirty, l.thresh, INIT_BW);
        wb.dirtied = 1_000_000;
        wb.update(
            51,
            Some(Position {
                dirty,
                setpoint: l.setpoint,
                pos_ratio,
            }),
        );
        assert!(wb.balanced_dirty_ratelimit < INIT_BW);
        assert_eq!(wb.dirty_ratelimit, INIT_BW);
    }

    #[test]
    fn an_idle_device_starts_its_estimate_afresh() {
        let mut wb = Wb {
            written: 500,
            dirtied: 700,
            ..Wb::default()
        };
        wb.estimate_start(250, false);
        assert_eq!(wb.bw_time_stamp, 0, "not idle more than HZ");
        wb.estimate_start(251, true);
        assert_eq!(wb.bw_time_stamp, 0, "writeback in flight");
        wb.estimate_start(251, false);
        assert_eq!(wb.bw_time_stamp, 251);
        wb.written += 100;
        wb.update(302, None);
        // Only the 100 pages since the restart count.
        let want = (100 * 250 + INIT_BW * (1024 - 51)) / 1024;
        assert_eq!(wb.write_bandwidth, want);
    }
}
