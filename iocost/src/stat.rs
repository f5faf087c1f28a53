//! An `io.stat`-style snapshot: the base vrate, and per group
//! usage, wait, debt and delay, plus the controller state a simulator
//! wants to plot.
//!
//! `usage`, `wait`, `indebt` and `indelay` are the values published at the
//! last period end (the kernel's `last_stat`), in µs; the other fields are
//! live.

use alloc::vec::Vec;
use core::fmt;

use crate::CostModel;
use crate::consts::VTIME_PER_USEC;
use crate::group::GroupId;
use crate::ioc::{IoCost, PeriodStats};
use crate::units::vdiff;

/// One group's line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GroupStat {
    /// The group.
    pub group: GroupId,
    /// Its cgroup id.
    pub cgroup: u64,
    /// Configured weight, user units.
    pub weight: u32,
    /// On the active list.
    pub active: bool,
    /// `active` weight (×ONE).
    pub active_weight: u32,
    /// `inuse` weight (×ONE).
    pub inuse_weight: u32,
    /// Cached hierarchical active weight, fraction of 65 536.
    pub hwa: u32,
    /// Cached hierarchical inuse weight.
    pub hwi: u32,
    /// `cost.usage`, µs of model time at the base vrate.
    pub usage_us: u64,
    /// `cost.wait`, µs with bios parked.
    pub wait_us: u64,
    /// `cost.indebt`, µs in debt.
    pub indebt_us: u64,
    /// `cost.indelay`, µs with an issuer delay in force.
    pub indelay_us: u64,
    /// Outstanding absolute debt, vtime.
    pub abs_vdebt: u64,
    /// Current delay, µs.
    pub delay_us: u64,
    /// Bios parked now.
    pub waiting: usize,
    /// Budget `vnow − vtime` at the snapshot time, vtime.
    pub budget: i64,
    /// In flight `vtime − done_vtime`, vtime.
    pub inflight: u64,
}

/// The whole device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// `MAJ:MIN`.
    pub devno: (u32, u32),
    /// Base vrate in 1/100 % (`cost.vrate` × 100, rounded to nearest).
    pub vrate_pct100: u64,
    /// Effective vrate, vtime per µs.
    pub vrate: u64,
    /// Base vrate, vtime per µs.
    pub vrate_base: u64,
    /// `busy_level`.
    pub busy_level: i32,
    /// Period, µs.
    pub period_us: u32,
    /// Periods completed.
    pub cur_period: u64,
    /// The last period's figures.
    pub last_period: PeriodStats,
    /// Every group in creation order.
    pub groups: Vec<GroupStat>,
    /// Reads and writes of a group let through uncharged because the
    /// controller was disabled (a controller built by `IoCost::new`
    /// starts so, until `enable=1` is written): not 0 says IO went
    /// uncontrolled.
    pub passed_disabled: u64,
}

impl<M: CostModel> IoCost<M> {
    /// One group's statistics at `now` ns.
    pub fn group_stat(&self, now: u64, group: GroupId) -> Option<GroupStat> {
        let i = self.gidx(group)?;
        let g = &self.groups[i];
        let vnow = self.ioc_now(now).vnow;
        Some(GroupStat {
            group,
            cgroup: g.cgroup,
            weight: g.weight / self.weight_unit(),
            active: g.on_list,
            active_weight: g.active,
            inuse_weight: g.inuse,
            hwa: g.hwa,
            hwi: g.hwi,
            usage_us: g.last_stat.usage_us,
            wait_us: g.last_stat.wait_us,
            indebt_us: g.last_stat.indebt_us,
            indelay_us: g.last_stat.indelay_us,
            abs_vdebt: g.abs_vdebt,
            delay_us: g.delay,
            waiting: g.waitq.len(),
            budget: vdiff(vnow, g.vtime),
            inflight: g.vtime.wrapping_sub(g.done_vtime),
        })
    }

    /// Snapshot of the device at `now` ns. Allocates the group vector.
    pub fn snapshot(&self, now: u64) -> Snapshot {
        let groups = (0..self.groups.len())
            .filter_map(|i| self.group_stat(now, GroupId(i as u32)))
            .collect();
        Snapshot {
            devno: self.device.devno,
            vrate_pct100: (u128::from(self.vtime_base_rate) * 10_000
                + u128::from(VTIME_PER_USEC / 2))
            .checked_div(u128::from(VTIME_PER_USEC))
            .unwrap_or(0) as u64,
            vrate: self.vtime_rate,
            vrate_base: self.vtime_base_rate,
            busy_level: self.busy_level,
            period_us: self.period_us,
            cur_period: self.cur_period,
            last_period: self.last_period,
            groups,
            passed_disabled: self.passed_disabled,
        }
    }
}

impl fmt::Display for Snapshot {
    /// io.stat lines: the root line carries `cost.vrate`, then one line per
    /// group (`cgroup=ID`, since a flat simulator has no paths) with
    /// `cost.usage` and the debug-stat fields `cost.wait`, `cost.indebt`,
    /// `cost.indelay`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (maj, min) = self.devno;
        writeln!(
            f,
            "root {maj}:{min} cost.vrate={}.{:02}",
            self.vrate_pct100 / 100,
            self.vrate_pct100 % 100
        )?;
        for g in &self.groups {
            writeln!(
                f,
                "cgroup={} {maj}:{min} cost.usage={} cost.wait={} cost.indebt={} cost.indelay={}",
                g.cgroup, g.usage_us, g.wait_us, g.indebt_us, g.indelay_us
            )?;
        }
        Ok(())
    }
}
