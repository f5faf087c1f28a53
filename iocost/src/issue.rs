//! The issue path: activation (`iocg_activate`), the in-period
//! `inuse` bump (`adjust_inuse_and_calc_cost`) and the throttle decision
//! (`ioc_rqos_throttle`): issue within budget, charge must-issue bios as
//! debt, park the rest in the group's FIFO.

use crate::consts::{INUSE_ADJ_STEP_PCT, V54_MARGIN_PCT, V54_VTIME_VALID_DUR};
use crate::group::{GroupId, Waiter};
use crate::ioc::{Admit, Bio, IoCost, Now, Variant};
use crate::trace::Trace;
use crate::units::{abs_cost_to_cost, after, before, div_ceil, vdiff};
use crate::{CostModel, check_cost};

impl<M: CostModel> IoCost<M> {
    /// Offers a bio at `now` ns (`ioc_rqos_throttle`).
    ///
    /// [`Admit::Go`] means issue now; [`Admit::Wait`] means the bio waits in
    /// its group's FIFO until [`IoCost::poll_release`] returns it. Bios of
    /// the root or of an unknown group, zero-cost bios and everything while
    /// disabled go uncharged; reads and writes of a known group let
    /// through while disabled are counted ([`Snapshot::passed_disabled`](crate::Snapshot::passed_disabled)).
    pub fn on_submit(&mut self, now_ns: u64, bio: &Bio) -> Admit {
        const BYPASS: Admit = Admit::Go {
            cost: 0,
            delay_ns: 0,
        };
        let now_ns = self.note_time(now_ns);
        let Some(i) = self.gidx(bio.group) else {
            return BYPASS;
        };
        if !self.enabled {
            // Counted, so a caller who forgot `enable=1` can see it.
            if matches!(bio.op, crate::Op::Read | crate::Op::Write) {
                self.passed_disabled = self.passed_disabled.saturating_add(1);
            }
            return BYPASS;
        }
        let sectors = bio.bytes >> 9;
        let v54 = self.variant == Variant::V5_4;
        if v54 {
            // The 2019 code activated before pricing, so even zero-cost bios
            // kept a group active.
            let now = self.ioc_now(now_ns);
            if !self.activate(i, &now) {
                return BYPASS;
            }
        }
        let price = self.cost_model.abs_cost(
            &self.lcoefs,
            bio.op,
            sectors,
            bio.sector,
            self.groups[i].cursor,
        );
        let abs_cost = match check_cost(bio.op, sectors, price) {
            Ok(c) => c,
            Err(e) => return Admit::Refused(e),
        };
        if abs_cost == 0 {
            return BYPASS;
        }
        let now = self.ioc_now(now_ns);
        if !v54 && !self.activate(i, &now) {
            return BYPASS;
        }
        self.groups[i].cursor = bio.sector.saturating_add(sectors);
        let vtime = self.groups[i].vtime;
        let cost = if v54 {
            self.v54_calc_cost(i, vtime, abs_cost, &now)
        } else {
            self.adjust_inuse_and_calc_cost(i, vtime, abs_cost, &now)
        };

        let g = &self.groups[i];
        if g.waitq.is_empty() && g.abs_vdebt == 0 && !after(vtime.wrapping_add(cost), now.vnow) {
            self.commit_bio(i, abs_cost, cost);
            let r = Admit::Go { cost, delay_ns: 0 };
            self.debug_check();
            return r;
        }

        // Over budget.
        let use_debt = bio.must_issue;
        let mut ioc_locked = use_debt || g.abs_vdebt != 0;
        if !g.on_list {
            self.commit_bio(i, abs_cost, cost);
            return Admit::Go { cost, delay_ns: 0 };
        }
        if use_debt {
            let delay_ns = if v54 {
                self.groups[i].abs_vdebt = self.groups[i].abs_vdebt.saturating_add(abs_cost);
                self.groups[i].abs_vusage = self.groups[i].abs_vusage.wrapping_add(abs_cost);
                if self.kick_delay(i, &now) {
                    // The decayed delay in force, not the undecayed peak.
                    self.groups[i].delay_ns_in_force
                } else {
                    0
                }
            } else {
                self.incur_debt(i, abs_cost, &now);
                if self.kick_delay(i, &now) {
                    // The decayed delay in force, not the undecayed peak.
                    self.groups[i].delay_ns_in_force
                } else {
                    0
                }
            };
            self.debug_check();
            return Admit::Go { cost: 0, delay_ns };
        }
        // A group with waiters never donates (work conservation).
        let g = &self.groups[i];
        if !v54 && g.abs_vdebt == 0 && g.inuse != g.active {
            ioc_locked = true;
            let a = g.active;
            self.propagate_weights(i, a, a, true, &now);
        }
        self.groups[i].waitq.push_back(Waiter {
            bio: bio.id,
            abs_cost,
        });
        let before_len = self.releases.len();
        self.kick_waitq(i, ioc_locked, &now);
        // Released by its own kick: the kernel's waiter finds itself
        // committed and never sleeps.
        let r = if self.releases.len() > before_len
            && self
                .releases
                .back()
                .is_some_and(|r| r.bio == bio.id && r.group == bio.group)
        {
            let rel = self.releases.pop_back().map_or(0, |r| r.cost);
            Admit::Go {
                cost: rel,
                delay_ns: 0,
            }
        } else {
            Admit::Wait
        };
        self.debug_check();
        r
    }

    /// `iocg_commit_bio`: charge `cost` to the group's vtime and `abs_cost`
    /// to its usage.
    pub(crate) fn commit_bio(&mut self, i: usize, abs_cost: u64, cost: u64) {
        let g = &mut self.groups[i];
        g.vtime = g.vtime.wrapping_add(cost);
        g.abs_vusage = g.abs_vusage.wrapping_add(abs_cost);
    }

    /// `iocg_activate`: mark the group active for this period; on a fresh
    /// activation start it with the target budget (half a period of credit),
    /// put it on the active list and start the period timer if the device
    /// was idle. Never refuses in the flat hierarchy (the leaf-only rule
    /// has no inner nodes to refuse for), hence always `true`.
    pub(crate) fn activate(&mut self, i: usize, now: &Now) -> bool {
        let cur = self.cur_period;
        if self.groups[i].on_list {
            self.groups[i].active_period = cur;
            return true;
        }
        let last_period = self.groups[i].active_period;
        self.groups[i].active_period = cur;
        let vtime = self.groups[i].vtime;
        if self.variant == Variant::V5_4 {
            // Cap the starting budget at half a period; forget vtime after
            // five idle minutes.
            let max_period_delta =
                div_ceil(u128::from(V54_VTIME_VALID_DUR), u128::from(self.period_us));
            let margin_us = u64::from(self.period_us) * u64::from(V54_MARGIN_PCT) / 100;
            let vmin = now.vnow.wrapping_sub(margin_us.wrapping_mul(now.vrate));
            if last_period.saturating_add(max_period_delta) < cur || before(vtime, vmin) {
                let d = vmin.wrapping_sub(vtime);
                let g = &mut self.groups[i];
                g.vtime = g.vtime.wrapping_add(d);
                g.done_vtime = g.done_vtime.wrapping_add(d);
            }
            self.groups[i].last_vtime = self.groups[i].vtime;
        } else {
            let vtarget = now.vnow.wrapping_sub(self.margins.target as u64);
            let d = vtarget.wrapping_sub(vtime);
            let g = &mut self.groups[i];
            g.vtime = g.vtime.wrapping_add(d);
            g.done_vtime = g.done_vtime.wrapping_add(d);
        }
        self.groups[i].hweight_gen = self.hweight_gen.wrapping_sub(1);
        self.active_list.insert(0, GroupId(i as u32));
        self.groups[i].on_list = true;
        let (w, li) = (self.groups[i].weight, self.groups[i].last_inuse);
        self.propagate_weights(i, w, if li != 0 { li } else { w }, true, now);
        self.groups[i].activated_at = now.now;
        self.trace(Trace::Activate {
            now: now.now_ns,
            group: GroupId(i as u32),
        });
        if !self.running {
            self.running = true;
            self.dfgv_period_at = now.now;
            self.dfgv_period_rem = 0;
            self.start_period(now);
        }
        true
    }

    /// `adjust_inuse_and_calc_cost`: the cost of `abs_cost` at the current
    /// `hwi`; if the group is donating and its budget has shrunk below the
    /// low margin (and since the last adjustment), raise `inuse` in 25 %
    /// steps until the bio fits or nothing is donated any more.
    pub(crate) fn adjust_inuse_and_calc_cost(
        &mut self,
        i: usize,
        vtime: u64,
        abs_cost: u64,
        now: &Now,
    ) -> u64 {
        let (_, mut hwi) = self.current_hweight(i);
        let mut cost = abs_cost_to_cost(abs_cost, hwi);
        let margin = vdiff(now.vnow.wrapping_sub(cost), vtime);
        let g = &self.groups[i];
        if g.abs_vdebt != 0 {
            return cost;
        }
        if margin >= g.saved_margin || margin >= self.margins.low || g.inuse == g.active {
            return cost;
        }
        if !g.on_list {
            return cost;
        }
        let active = g.active;
        let step =
            (div_ceil(u128::from(active) * u128::from(INUSE_ADJ_STEP_PCT), 100) as u32).max(1);
        let mut new_inuse = g.inuse;
        let old_inuse = g.inuse;
        loop {
            new_inuse = new_inuse.saturating_add(step);
            self.propagate_weights(i, active, new_inuse, true, now);
            hwi = self.current_hweight(i).1;
            cost = abs_cost_to_cost(abs_cost, hwi);
            if !after(vtime.wrapping_add(cost), now.vnow) || self.groups[i].inuse == active {
                break;
            }
        }
        let new = self.groups[i].inuse;
        self.trace(Trace::InuseAdjust {
            now: now.now_ns,
            group: GroupId(i as u32),
            old_inuse,
            new_inuse: new,
        });
        cost
    }

    /// Pre-rework pricing: if donating and the budget fell below 10 % of a
    /// period, snap `inuse` back to the full weight at once.
    fn v54_calc_cost(&mut self, i: usize, vtime: u64, abs_cost: u64, now: &Now) -> u64 {
        let (hwa, hwi) = self.current_hweight(i);
        if hwi < hwa && !before(vtime.wrapping_add(self.inuse_margin_vtime), now.vnow) {
            let w = self.groups[i].weight;
            self.propagate_weights(i, w, w, false, now);
        }
        let (_, hwi) = self.current_hweight(i);
        abs_cost_to_cost(abs_cost, hwi)
    }
}
