//! Donation: groups that use less than their share lend it to the others.
//!
//! Modern (v5.10+, in `ioc_timer_fn`): each group's usage gives an exact target
//! (`hweight_after_donation`), and the flat closed form of Andy Newell's
//! method (`transfer_surpluses`) sets donors' `inuse` so that each ends at
//! its target while every non-donor's share grows by one common factor.
//!
//! Pre-rework `v5.4` (v5.4–v5.9): a three-slot usage history and margin
//! heuristics lower a surplus group's `inuse` step by step and take it back
//! when the group runs short.

use crate::CostModel;
use crate::consts::{
    MARGIN_TARGET_PCT, V54_MARGIN_PCT, V54_MIN_VALID_USAGES, V54_NR_USAGE_SLOTS,
    V54_SURPLUS_MIN_ADJ_DELTA, V54_SURPLUS_SCALE_ABS, V54_SURPLUS_SCALE_PCT, WEIGHT_ONE,
};
use crate::group::GroupId;
use crate::ioc::{IoCost, Now, PeriodStats};
use crate::trace::Trace;
use crate::units::{after, before, div_ceil, div_floor, vdiff};

impl<M: CostModel> IoCost<M> {
    /// `hweight_after_donation`: the `hwi` that, at this period's usage,
    /// would leave the group with exactly the target budget (50 % of a
    /// period) at the end of the next one. Debtors get 1 (debt owns their
    /// `inuse`); groups with waiters or below the minimum margin get `hwm`
    /// (no donation). Budget above the target is thrown away first and
    /// booked as error for loss compensation.
    pub(crate) fn hweight_after_donation(
        &mut self,
        i: usize,
        old_hwi: u32,
        hwm: u32,
        usage: u32,
        now: &Now,
    ) -> u32 {
        let g = &self.groups[i];
        if g.abs_vdebt != 0 {
            return 1;
        }
        let mut vtime = g.vtime;
        if !g.waitq.is_empty() || after(vtime, now.vnow.wrapping_sub(self.margins.min as u64)) {
            return hwm;
        }
        let excess = vdiff(now.vnow.wrapping_sub(vtime), self.margins.target as u64);
        if excess > 0 {
            let e = excess as u64;
            let g = &mut self.groups[i];
            g.vtime = g.vtime.wrapping_add(e);
            g.done_vtime = g.done_vtime.wrapping_add(e);
            vtime = vtime.wrapping_add(e);
            let err = div_floor(u128::from(e) * u128::from(old_hwi), u128::from(WEIGHT_ONE));
            self.vtime_err = self
                .vtime_err
                .saturating_sub(err.min(i64::MAX as u64) as i64);
        }
        let span = i128::from(vdiff(now.vnow, self.period_at_vtime)).max(1);
        let delta = i128::from(WEIGHT_ONE) * i128::from(vdiff(now.vnow, vtime)) / span;
        let target = i128::from(WEIGHT_ONE) * i128::from(MARGIN_TARGET_PCT) / 100;
        let denom = (i128::from(WEIGHT_ONE) - target + delta).max(1);
        let new_hwi = i128::from(WEIGHT_ONE) * i128::from(usage) / denom;
        new_hwi.clamp(1, i128::from(hwm)) as u32
    }

    /// `transfer_surpluses` for the flat hierarchy. With `s = Σactive`, the
    /// adjusted sum `s' = ⌈s·(ONE − Σdonating)/(ONE − Σafter)⌉` is the weight
    /// sum under which the non-donors keep their `active` weights and each
    /// donor with `inuse = ⌈s'·after/ONE⌉` gets exactly its target share.
    pub(crate) fn transfer_surpluses(&mut self, now: &Now) {
        let one = u64::from(WEIGHT_ONE);
        // Keep the targets' sum below the whole, trimming those above their
        // active share proportionally.
        let mut after_sum = 0u64;
        let mut over_sum = 0u64;
        for k in 0..self.surpluses.len() {
            let i = self.surpluses[k].0 as usize;
            let (hwa, _) = self.current_hweight(i);
            let a = u64::from(self.groups[i].hweight_after_donation);
            after_sum += a;
            if a > u64::from(hwa) {
                over_sum += a;
            }
        }
        let over_target = if after_sum >= one {
            let over_delta = after_sum - (one - 1);
            debug_assert!(over_sum > over_delta);
            over_sum.saturating_sub(over_delta)
        } else {
            0
        };
        if over_target != 0 {
            for k in 0..self.surpluses.len() {
                let i = self.surpluses[k].0 as usize;
                let (hwa, _) = self.current_hweight(i);
                let g = &mut self.groups[i];
                if g.hweight_after_donation > hwa {
                    g.hweight_after_donation = div_floor(
                        u128::from(g.hweight_after_donation) * u128::from(over_target),
                        u128::from(over_sum),
                    ) as u32;
                }
            }
        }
        let mut donating = 0u64;
        let mut after_tot = 0u64;
        for k in 0..self.surpluses.len() {
            let g = &self.groups[self.surpluses[k].0 as usize];
            donating += u64::from(g.hweight_donating);
            after_tot += u64::from(g.hweight_after_donation);
        }
        // The root's own bounds (its hwa is the whole).
        let donating = donating.min(one);
        let after_tot = after_tot.min(donating.saturating_sub(1));
        debug_assert!(donating > 1 && after_tot > 0);
        let adjusted = div_ceil(
            u128::from(self.child_active_sum) * u128::from(one - donating),
            u128::from(one - after_tot),
        );
        for k in 0..self.surpluses.len() {
            let i = self.surpluses[k].0 as usize;
            if self.groups[i].abs_vdebt != 0 {
                debug_assert!(self.groups[i].inuse <= 1);
                continue;
            }
            let inuse = Self::inuse_for(adjusted, self.groups[i].hweight_after_donation);
            let (a, old) = (self.groups[i].active, self.groups[i].inuse);
            self.propagate_weights_nocommit(i, a, inuse, true, now);
            let new = self.groups[i].inuse;
            self.trace(Trace::InuseTransfer {
                now: now.now_ns,
                group: GroupId(i as u32),
                old_inuse: old,
                new_inuse: new,
            });
        }
    }

    /// Pre-rework per-group pass of the timer: usage sample, surplus
    /// detection, take-back, shortage counting.
    pub(crate) fn v54_donation_pass(
        &mut self,
        i: usize,
        now: &Now,
        period_vtime: u64,
        hwa: u32,
        hwi: u32,
        st: &mut PeriodStats,
    ) {
        let margin_us = u64::from(self.period_us) * u64::from(V54_MARGIN_PCT) / 100;
        let vmin = now.vnow.wrapping_sub(margin_us.wrapping_mul(now.vrate));
        let g = &mut self.groups[i];
        let (vdone, vtime) = (g.done_vtime, g.vtime);
        let waiting = !g.waitq.is_empty();
        let mut vusage = if waiting {
            now.vnow.wrapping_sub(g.last_vtime)
        } else if before(g.last_vtime, vtime) {
            vtime.wrapping_sub(g.last_vtime)
        } else {
            0
        };
        g.last_vtime = g.last_vtime.wrapping_add(vusage);
        vusage = vusage.max(vtime.wrapping_sub(vdone));
        let usage = if vusage != 0 {
            let u = div_ceil(
                u128::from(vusage) * u128::from(hwi),
                u128::from(period_vtime.max(1)),
            )
            .min(u64::from(u32::MAX)) as u32;
            g.usage_idx = (g.usage_idx + 1) % V54_NR_USAGE_SLOTS;
            g.usages[g.usage_idx] = u;
            u
        } else {
            0
        };
        g.has_surplus = false;
        if !waiting && before(vtime, vmin) {
            let d = vmin.wrapping_sub(vtime);
            g.vtime = g.vtime.wrapping_add(d);
            g.done_vtime = g.done_vtime.wrapping_add(d);
            g.last_vtime = g.last_vtime.wrapping_add(d);
            if v54_surplus_adjusted(usage, hwi) != 0 {
                g.has_surplus = true;
                st.nr_surpluses += 1;
            }
        } else if hwi < hwa {
            let new_hwi = if waiting {
                hwa
            } else {
                hwi.max(usage.saturating_mul(V54_SURPLUS_SCALE_PCT) / 100 + V54_SURPLUS_SCALE_ABS)
            };
            let new_inuse = div_floor(u128::from(g.inuse) * u128::from(new_hwi), u128::from(hwi))
                .clamp(1, u64::from(g.active)) as u32;
            if new_inuse > g.inuse {
                let w = g.weight;
                self.propagate_weights_nocommit(i, w, new_inuse, false, now);
            }
        } else {
            st.nr_shortages += 1;
        }
    }

    /// Pre-rework transfer: with both shortages and surpluses, each surplus
    /// group with enough history lowers its `inuse` to its scaled peak usage.
    pub(crate) fn v54_transfer(&mut self, now: &Now, st: &PeriodStats) {
        if st.nr_shortages == 0 || st.nr_surpluses == 0 {
            return;
        }
        for k in 0..self.active_list.len() {
            let i = self.active_list[k].0 as usize;
            if !self.groups[i].has_surplus {
                continue;
            }
            let g = &self.groups[i];
            let nr_valid = g.usages.iter().filter(|&&u| u != 0).count();
            let usage = g.usages.iter().copied().max().unwrap_or(0);
            if nr_valid < V54_MIN_VALID_USAGES {
                continue;
            }
            let (_, hwi) = self.current_hweight(i);
            let new_hwi = v54_surplus_adjusted(usage, hwi);
            if new_hwi == 0 {
                continue;
            }
            let g = &self.groups[i];
            let new_inuse =
                div_ceil(u128::from(g.inuse) * u128::from(new_hwi), u128::from(hwi)) as u32;
            if new_inuse < g.inuse {
                let (w, old) = (g.weight, g.inuse);
                self.propagate_weights_nocommit(i, w, new_inuse, false, now);
                self.trace(Trace::InuseTransfer {
                    now: now.now_ns,
                    group: GroupId(i as u32),
                    old_inuse: old,
                    new_inuse,
                });
            }
        }
    }
}

/// `surplus_adjusted_hweight_inuse` (v5.4): usage plus 25 % plus 2 % of the
/// whole, or 0 when that would free less than 3 %.
pub(crate) fn v54_surplus_adjusted(usage: u32, hw_inuse: u32) -> u32 {
    let u = (u64::from(usage) * u64::from(V54_SURPLUS_SCALE_PCT)).div_ceil(100)
        + u64::from(V54_SURPLUS_SCALE_ABS);
    if u + u64::from(V54_SURPLUS_MIN_ADJ_DELTA) > u64::from(hw_inuse) {
        0
    } else {
        u as u32
    }
}
