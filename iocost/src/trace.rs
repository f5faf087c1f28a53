//! Trace records, after the kernel's `iocost_*` tracepoints. Recorded only
//! when [`crate::Options::trace`] is set; drained with
//! [`crate::IoCost::poll_trace`].

use crate::group::GroupId;
use crate::ioc::PeriodStats;

/// One traced transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Trace {
    /// A group became active (`iocost_iocg_activate`).
    Activate {
        /// ns.
        now: u64,
        /// The group.
        group: GroupId,
    },
    /// An idle group was deactivated (`iocost_iocg_idle`).
    Idle {
        /// ns.
        now: u64,
        /// The group.
        group: GroupId,
    },
    /// The issue path raised `inuse` (`iocost_inuse_adjust`).
    InuseAdjust {
        /// ns.
        now: u64,
        /// The group.
        group: GroupId,
        /// Before.
        old_inuse: u32,
        /// After.
        new_inuse: u32,
    },
    /// The timer set a donor's `inuse` (`iocost_inuse_transfer`, v5.4
    /// `inuse_giveaway`).
    InuseTransfer {
        /// ns.
        now: u64,
        /// The group.
        group: GroupId,
        /// Before.
        old_inuse: u32,
        /// After.
        new_inuse: u32,
    },
    /// Debt and delay were halved (`iocost_iocg_forgive_debt`).
    ForgiveDebt {
        /// ns.
        now: u64,
        /// The group.
        group: GroupId,
        /// Absolute debt before.
        old_debt: u64,
        /// After.
        new_debt: u64,
        /// Delay before, µs.
        old_delay: u64,
        /// After.
        new_delay: u64,
    },
    /// One period ended (`iocost_ioc_vrate_adj`, emitted every period).
    Period {
        /// ns.
        now: u64,
        /// Base vrate after the adjustment.
        vrate_base: u64,
        /// Effective vrate for the next period.
        vrate: u64,
        /// `busy_level` after the period.
        busy_level: i32,
        /// `busy_level` before.
        prev_busy_level: i32,
        /// The period's figures.
        stats: PeriodStats,
    },
}
