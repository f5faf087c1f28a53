//! Per-cgroup state (`struct ioc_gq`). Groups are leaves directly
//! under the root: the hierarchy is flat.

use alloc::collections::VecDeque;

use crate::consts::{V54_NR_USAGE_SLOTS, WEIGHT_ONE};

/// Index of a group inside one [`crate::IoCost`], handed out by
/// [`crate::IoCost::add_group`]. [`GroupId::ROOT`] is the root cgroup, whose
/// IO is never controlled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupId(pub u32);

impl GroupId {
    /// The root cgroup: its bios bypass the controller (`ioc_rqos_throttle`).
    pub const ROOT: GroupId = GroupId(u32::MAX);
}

/// One bio parked in a group's FIFO (`struct iocg_wait`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Waiter {
    pub bio: u64,
    pub abs_cost: u64,
}

/// Cumulative statistics (`iocg_stat` plus the open intervals).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stats {
    pub usage_us: u64,
    pub wait_us: u64,
    pub indebt_us: u64,
    pub indelay_us: u64,
}

#[derive(Clone, Debug)]
pub(crate) struct Group {
    pub cgroup: u64,
    /// Per-device weight (`MAJ:MIN N`), ×ONE; 0 when unset.
    pub cfg_weight: u32,
    /// The cgroup's `default N`, ×ONE.
    pub dfl_weight: u32,
    /// Effective configured weight, ×ONE.
    pub weight: u32,
    pub active: u32,
    pub inuse: u32,
    pub last_inuse: u32,
    pub saved_margin: i64,
    /// On the device's active list.
    pub on_list: bool,

    pub cursor: u64,
    pub vtime: u64,
    pub done_vtime: u64,
    pub abs_vdebt: u64,

    /// Issuer delay, µs, and when it was set (µs).
    pub delay: u64,
    pub delay_at: u64,
    /// `blkg->use_delay`: the delay is currently in force.
    pub use_delay: bool,
    /// `blkg->delay_nsec` while `use_delay`.
    pub delay_ns_in_force: u64,

    pub active_period: u64,
    pub activated_at: u64,

    /// Cached hierarchical weights and the generation they belong to.
    pub hweight_gen: u64,
    pub hwa: u32,
    pub hwi: u32,
    pub hweight_donating: u32,
    pub hweight_after_donation: u32,

    pub waitq: VecDeque<Waiter>,
    /// Waiter wake-up timer, ns.
    pub waitq_timer: Option<u64>,

    pub stat: Stats,
    /// Snapshot published at each period end (`last_stat`), what io.stat shows.
    pub last_stat: Stats,
    pub wait_since: Option<u64>,
    pub indebt_since: Option<u64>,
    pub indelay_since: Option<u64>,
    pub abs_vusage: u64,
    pub last_stat_abs_vusage: u64,
    pub usage_delta_us: u64,

    /// Pre-rework only: vtime at the last usage sample and the usage ring.
    pub last_vtime: u64,
    pub usages: [u32; V54_NR_USAGE_SLOTS],
    pub usage_idx: usize,
    pub has_surplus: bool,
}

impl Group {
    pub fn new(
        cgroup: u64,
        vnow: u64,
        cur_period: u64,
        dfl_weight: u32,
        waitq_cap: usize,
    ) -> Group {
        Group {
            cgroup,
            cfg_weight: 0,
            dfl_weight,
            weight: dfl_weight,
            active: 0,
            inuse: 0,
            last_inuse: 0,
            saved_margin: 0,
            on_list: false,
            cursor: 0,
            vtime: vnow,
            done_vtime: vnow,
            abs_vdebt: 0,
            delay: 0,
            delay_at: 0,
            use_delay: false,
            delay_ns_in_force: 0,
            active_period: cur_period,
            activated_at: 0,
            hweight_gen: u64::MAX,
            hwa: WEIGHT_ONE,
            hwi: WEIGHT_ONE,
            hweight_donating: 0,
            hweight_after_donation: 0,
            waitq: VecDeque::with_capacity(waitq_cap),
            waitq_timer: None,
            stat: Stats::default(),
            last_stat: Stats::default(),
            wait_since: None,
            indebt_since: None,
            indelay_since: None,
            abs_vusage: 0,
            last_stat_abs_vusage: 0,
            usage_delta_us: 0,
            last_vtime: vnow,
            usages: [0; V54_NR_USAGE_SLOTS],
            usage_idx: 0,
            has_surplus: false,
        }
    }

    /// Checks the per-group invariants (weight bounds, debt, delay,
    /// `done_vtime <= vtime`) in debug builds.
    #[inline]
    pub fn debug_check(&self) {
        if self.on_list {
            debug_assert!(
                self.active == self.weight,
                "an active leaf's active is its weight"
            );
            debug_assert!(
                self.inuse >= 1 && self.inuse <= self.active,
                "1 <= inuse <= active"
            );
        } else {
            debug_assert!(self.active == 0 && self.inuse <= 1);
            debug_assert!(self.waitq.is_empty() && self.abs_vdebt == 0);
        }
        debug_assert!(self.delay <= crate::consts::MAX_DELAY, "delay <= 250 ms");
        debug_assert!(
            crate::units::vdiff(self.vtime, self.done_vtime) >= 0,
            "done_vtime <= vtime"
        );
    }
}
