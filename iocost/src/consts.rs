//! Every constant of blk-iocost, named as in `block/blk-iocost.c`.
//!
//! The enums at the top of the kernel file hold these; they are collected
//! here so that a reader can check them against the kernel file in one place.

/// Parts per million, the unit of the QoS percentiles and vrate bounds.
pub const MILLION: u64 = 1_000_000;

/// One second of device time in vtime units is `2^37`: fine enough that a
/// nanosecond is still 137 units, coarse enough that years fit in 64 bits.
pub const VTIME_PER_SEC_SHIFT: u32 = 37;
/// One second of device time in vtime units.
pub const VTIME_PER_SEC: u64 = 1 << VTIME_PER_SEC_SHIFT;
/// One microsecond of device time (truncated): also the 100 % vrate.
pub const VTIME_PER_USEC: u64 = VTIME_PER_SEC / 1_000_000;
/// One nanosecond of device time (truncated); used for latency sampling.
pub const VTIME_PER_NSEC: u64 = VTIME_PER_SEC / 1_000_000_000;

/// Hierarchical weights are fractions of this (`HWEIGHT_WHOLE` before the
/// 2020 rework); configured weights are stored multiplied by it as well.
pub const WEIGHT_ONE: u32 = 1 << 16;

/// Shortest period, µs.
pub const MIN_PERIOD: u32 = 1_000;
/// Longest period, µs.
pub const MAX_PERIOD: u32 = 1_000_000;

/// Below this budget (% of a period) a group never donates.
pub const MARGIN_MIN_PCT: u32 = 10;
/// Below this budget the issue path bumps `inuse` back up.
pub const MARGIN_LOW_PCT: u32 = 20;
/// Budget a group starts with and is trimmed to when it has surplus.
pub const MARGIN_TARGET_PCT: u32 = 50;
/// In-period `inuse` bump step, % of `active`.
pub const INUSE_ADJ_STEP_PCT: u32 = 25;
/// Waiter wake-up timer slack, % of a period.
pub const TIMER_SLACK_PCT: u32 = 1;

/// Lowest vrate bound a user may set: 1 %.
pub const VRATE_MIN_PPM: u32 = 10_000;
/// Highest vrate bound a user may set: 10 000 %.
pub const VRATE_MAX_PPM: u32 = 100_000_000;
/// 1 % as a rate (vtime per µs).
pub const VRATE_MIN: u64 = VTIME_PER_USEC * VRATE_MIN_PPM as u64 / MILLION;
/// Per-period step used to walk a vrate back inside changed bounds.
pub const VRATE_CLAMP_ADJ_PCT: u64 = 4;
/// Dwell before the built-in parameter set may switch (not modelled: the set
/// is frozen, see the crate docs).
pub const AUTOP_CYCLE_NSEC: u64 = 10 * 1_000_000_000;

/// Request-wait share of a period above which the device counts as busy.
pub const RQ_WAIT_BUSY_PCT: u32 = 5;
/// "Clearly fine" means below 75 % of every busy threshold.
pub const UNBUSY_THR_PCT: u32 = 75;
/// Overage (% of a period) where the issuer delay starts.
pub const MIN_DELAY_THR_PCT: i64 = 500;
/// Overage where the issuer delay saturates.
pub const MAX_DELAY_THR_PCT: i64 = 25_000;
/// Shortest issuer delay, µs.
pub const MIN_DELAY: u64 = 250;
/// Longest issuer delay, µs.
pub const MAX_DELAY: u64 = 250_000;
/// Debt is forgiven only while the device is used below this share.
pub const DFGV_USAGE_PCT: u64 = 50;
/// Debt-forgiveness window, µs.
pub const DFGV_PERIOD: u64 = 100_000;
/// An in-flight IO older than this many periods no longer counts as lagging.
pub const MAX_LAGGING_PERIODS: u64 = 10;

/// Cost is counted in 4 KiB pages.
pub const IOC_PAGE_SHIFT: u32 = 12;
/// 4 KiB.
pub const IOC_PAGE_SIZE: u64 = 1 << IOC_PAGE_SHIFT;
/// 512-byte sectors to pages.
pub const IOC_SECT_TO_PAGE_SHIFT: u32 = IOC_PAGE_SHIFT - 9;
/// Seek distance (pages) above which an IO is priced as random (16 MiB).
pub const LCOEF_RANDIO_PAGES: u64 = 4096;

/// `busy_level` is kept within ±this.
pub const BUSY_LEVEL_MAX: i32 = 1000;

/// Smallest user weight (`CGROUP_WEIGHT_MIN`).
pub const CGROUP_WEIGHT_MIN: u32 = 1;
/// Default user weight (`CGROUP_WEIGHT_DFL`).
pub const CGROUP_WEIGHT_DFL: u32 = 100;
/// Largest user weight (`CGROUP_WEIGHT_MAX`).
pub const CGROUP_WEIGHT_MAX: u32 = 10_000;

/// Pre-rework (`v5.4`): budget cap, % of a period.
pub const V54_MARGIN_PCT: u32 = 50;
/// Pre-rework: `inuse` snaps back when the budget is below this % of a period.
pub const V54_INUSE_MARGIN_PCT: u64 = 10;
/// Pre-rework: waiter timer margin, % of a period (a quarter of it is slack).
pub const V54_WAITQ_TIMER_MARGIN_PCT: u64 = 5;
/// Pre-rework: a group idle longer than this forgets its vtime, µs.
pub const V54_VTIME_VALID_DUR: u64 = 300 * 1_000_000;
/// Pre-rework: usage history slots.
pub const V54_NR_USAGE_SLOTS: usize = 3;
/// Pre-rework: non-zero usage samples needed before donating.
pub const V54_MIN_VALID_USAGES: usize = 2;
/// Pre-rework: usage is scaled by 125 % ...
pub const V54_SURPLUS_SCALE_PCT: u32 = 125;
/// ... plus 2 % of the whole ...
pub const V54_SURPLUS_SCALE_ABS: u32 = WEIGHT_ONE / 50;
/// ... and a donation must be worth at least 3 %.
pub const V54_SURPLUS_MIN_ADJ_DELTA: u32 = WEIGHT_ONE / 33;

/// vrate step (%) per period, indexed by `min(|busy_level|, 52)`: nothing for
/// the first three periods, then 1, 2, 4, 8 and finally 16 % as pressure
/// persists (`vrate_adj_pct[]`).
pub const VRATE_ADJ_PCT: [u32; 53] = {
    let mut t = [0u32; 53];
    let mut i = 0;
    while i < 53 {
        t[i] = match i {
            0..=3 => 0,
            4..=19 => 1,
            20..=35 => 2,
            36..=43 => 4,
            44..=51 => 8,
            _ => 16,
        };
        i += 1;
    }
    t
};
