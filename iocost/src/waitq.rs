//! Waking parked bios (`iocg_kick_waitq`) and the per-group
//! waiter timer (`iocg_waitq_timer_fn`).
//!
//! The FIFO is served strictly in order at the group's current `hwi`: the
//! first bio that does not fit stops the walk, and the timer is armed for
//! when the budget will have grown enough for it (plus slack, so that
//! wake-ups come in chunks).

use crate::CostModel;
use crate::consts::V54_WAITQ_TIMER_MARGIN_PCT;
use crate::group::GroupId;
use crate::ioc::{IoCost, Now, Release, Variant};
use crate::units::{abs_cost_to_cost, cost_to_abs_cost, div_ceil, vdiff};

impl<M: CostModel> IoCost<M> {
    /// `iocg_kick_waitq`: pay debt from the budget if allowed, refresh the
    /// delay, release the waiters that fit and arm the wake-up timer for
    /// the next one.
    pub(crate) fn kick_waitq(&mut self, i: usize, pay_debt: bool, now: &Now) {
        if self.variant == Variant::V5_4 {
            return self.v54_kick_waitq(i, now);
        }
        let (hwa, _) = self.current_hweight(i);
        let mut vbudget = vdiff(now.vnow, self.groups[i].vtime);

        if pay_debt && self.groups[i].abs_vdebt != 0 && vbudget > 0 {
            let abs_vbudget = cost_to_abs_cost(vbudget as u64, hwa);
            let abs_vpay = abs_vbudget.min(self.groups[i].abs_vdebt);
            let vpay = abs_cost_to_cost(abs_vpay, hwa);
            let g = &mut self.groups[i];
            g.vtime = g.vtime.wrapping_add(vpay);
            g.done_vtime = g.done_vtime.wrapping_add(vpay);
            self.pay_debt(i, abs_vpay, now);
            vbudget = vbudget.wrapping_sub(vpay as i64);
        }

        if self.groups[i].abs_vdebt != 0 || self.groups[i].delay != 0 {
            self.kick_delay(i, now);
        }

        if self.groups[i].abs_vdebt != 0 {
            let vdebt = abs_cost_to_cost(self.groups[i].abs_vdebt, hwa).min(i64::MAX as u64) as i64;
            vbudget = vbudget.saturating_sub(vdebt).min(0);
        }

        // Debt payment may have restored inuse: read hwi afterwards.
        let (_, hwi) = self.current_hweight(i);
        let vbudget = self.wake_waiters(i, vbudget, hwi);
        let slack = self.timer_slack_ns;
        let rate = self.vtime_base_rate;
        self.after_wake(i, vbudget, now, rate, slack);
    }

    /// Releases waiters from the head while the budget stays non-negative;
    /// returns the budget after the first waiter that did not fit.
    fn wake_waiters(&mut self, i: usize, mut vbudget: i64, hwi: u32) -> i64 {
        while let Some(&w) = self.groups[i].waitq.front() {
            let cost = abs_cost_to_cost(w.abs_cost, hwi);
            vbudget = vbudget.saturating_sub(cost.min(i64::MAX as u64) as i64);
            if vbudget < 0 {
                break;
            }
            self.groups[i].waitq.pop_front();
            self.commit_bio(i, w.abs_cost, cost);
            self.releases.push_back(Release {
                bio: w.bio,
                group: GroupId(i as u32),
                cost,
            });
        }
        vbudget
    }

    /// Wait-time accounting and the wake-up timer, common to both variants.
    fn after_wake(&mut self, i: usize, vbudget: i64, now: &Now, rate: u64, slack: u64) {
        let g = &mut self.groups[i];
        if g.waitq.is_empty() {
            if let Some(since) = g.wait_since.take() {
                g.stat.wait_us += now.now - since;
            }
            return;
        }
        if g.wait_since.is_none() {
            g.wait_since = Some(now.now);
        }
        debug_assert!(vbudget < 0, "a waiter is left only when the budget ran out");
        if vbudget >= 0 {
            return;
        }
        let vshortage = vbudget.unsigned_abs();
        let expires = now
            .now_ns
            .saturating_add(
                div_ceil(u128::from(vshortage), u128::from(rate.max(1))).saturating_mul(1000),
            )
            .saturating_add(slack);
        if g.waitq_timer
            .is_some_and(|old| old.abs_diff(expires) <= slack)
        {
            return;
        }
        g.waitq_timer = Some(expires);
    }

    /// A parked bio given up by its issuer (a userspace face's cancelled
    /// or closed wait): taken out of `group`'s FIFO uncharged, and the
    /// waiters behind it served as the waiter timer would serve them (the
    /// head's place no longer holds them up). `false` if `bio` is not
    /// parked there (never was, or was released: then it was charged and
    /// its cost comes back through [`IoCost::on_done`] or
    /// [`IoCost::on_unused`]). The kernel has no counterpart: a bio
    /// sleeping in `ioc_rqos_throttle` cannot be withdrawn.
    pub fn on_withdraw(&mut self, now_ns: u64, group: GroupId, bio: u64) -> bool {
        let now_ns = self.note_time(now_ns);
        let Some(i) = self.gidx(group) else {
            return false;
        };
        let Some(at) = self.groups[i].waitq.iter().position(|w| w.bio == bio) else {
            return false;
        };
        self.groups[i].waitq.remove(at);
        self.waitq_timer_fn(i, now_ns);
        true
    }

    /// The waiter timer fired (`iocg_waitq_timer_fn`).
    pub(crate) fn waitq_timer_fn(&mut self, i: usize, now_ns: u64) {
        let now = self.ioc_now(now_ns);
        let pay = self.groups[i].abs_vdebt != 0;
        self.kick_waitq(i, pay, &now);
    }

    /// The 2019 waker: debt is paid at `hwi`, the waiters' deadline uses the
    /// (single) vrate and the slack is a quarter of 5 % of a period.
    fn v54_kick_waitq(&mut self, i: usize, now: &Now) {
        let (_, hwi) = self.current_hweight(i);
        let vbudget = vdiff(now.vnow, self.groups[i].vtime);
        let abs_vdebt = self.groups[i].abs_vdebt;
        let vdebt = abs_cost_to_cost(abs_vdebt, hwi);
        if vdebt != 0 && vbudget > 0 {
            let delta = (vbudget as u64).min(vdebt);
            let abs_delta = cost_to_abs_cost(delta, hwi).min(abs_vdebt);
            let g = &mut self.groups[i];
            g.vtime = g.vtime.wrapping_add(delta);
            g.done_vtime = g.done_vtime.wrapping_add(delta);
            g.abs_vdebt -= abs_delta;
            if g.abs_vdebt == 0 {
                if let Some(s) = g.indebt_since.take() {
                    g.stat.indebt_us += now.now - s;
                }
            }
        }
        let start = vbudget.saturating_sub(vdebt.min(i64::MAX as u64) as i64);
        let left = self.wake_waiters(i, start, hwi);
        let margin_ns = u64::from(self.period_us) * V54_WAITQ_TIMER_MARGIN_PCT / 100 * 1000;
        let rate = now.vrate;
        self.after_wake(i, left, now, rate, margin_ns / 4);
    }
}
