//! Debt and issuer delay: bios that must be issued over budget
//! are charged as absolute debt (`iocg_incur_debt`), repaid from the budget
//! at the group's *active* share (`iocg_pay_debt`), turned into a sleep for
//! the issuing tasks when the overage is large (`iocg_kick_delay`), and
//! forgiven by halving while the device is mostly idle
//! (`ioc_forgive_debts`).

use crate::CostModel;
use crate::consts::{
    DFGV_PERIOD, DFGV_USAGE_PCT, MAX_DELAY, MAX_DELAY_THR_PCT, MIN_DELAY, MIN_DELAY_THR_PCT,
};
use crate::group::GroupId;
use crate::ioc::{IoCost, Now};
use crate::trace::Trace;
use crate::units::{abs_cost_to_cost, vdiff};

impl<M: CostModel> IoCost<M> {
    /// `iocg_incur_debt`: the first debt takes the group's `inuse` down to 1
    /// (it donates everything while in debt); debt counts as usage.
    pub(crate) fn incur_debt(&mut self, i: usize, abs_cost: u64, now: &Now) {
        debug_assert!(self.groups[i].on_list);
        if self.groups[i].abs_vdebt == 0 && abs_cost != 0 {
            self.groups[i].indebt_since = Some(now.now);
            let a = self.groups[i].active;
            self.propagate_weights(i, a, 0, false, now);
        }
        let g = &mut self.groups[i];
        g.abs_vdebt = g.abs_vdebt.saturating_add(abs_cost);
        g.abs_vusage = g.abs_vusage.wrapping_add(abs_cost);
    }

    /// `iocg_pay_debt`: once the debt is gone, `inuse` returns to where it
    /// was before the debt.
    pub(crate) fn pay_debt(&mut self, i: usize, abs_vpay: u64, now: &Now) {
        debug_assert!(self.groups[i].on_list && self.groups[i].inuse <= 1);
        let g = &mut self.groups[i];
        g.abs_vdebt -= abs_vpay.min(g.abs_vdebt);
        if g.abs_vdebt == 0 {
            if let Some(s) = g.indebt_since.take() {
                g.stat.indebt_us += now.now - s;
            }
            let (a, li) = (g.active, g.last_inuse);
            self.propagate_weights(i, a, li, false, now);
        }
    }

    /// `iocg_kick_delay`: decay the current delay (halving per second),
    /// raise it to what the overage calls for, and report whether a delay
    /// of at least 250 µs is now in force.
    pub(crate) fn kick_delay(&mut self, i: usize, now: &Now) -> bool {
        if now.now < self.groups[i].delay_at {
            return false;
        }
        let (hwa, _) = self.current_hweight(i);
        let period_vtime = i128::from(self.period_us) * i128::from(self.vtime_base_rate);
        let g = &mut self.groups[i];
        let shift = (now.now - g.delay_at) / 1_000_000;
        let mut delay = if g.delay != 0 && shift < 64 {
            g.delay >> shift
        } else {
            0
        };

        let vover = vdiff(
            g.vtime.wrapping_add(abs_cost_to_cost(g.abs_vdebt, hwa)),
            now.vnow,
        );
        let vover_pct = (100 * i128::from(vover) / period_vtime.max(1)) as i64;
        let new_delay = if vover_pct <= MIN_DELAY_THR_PCT {
            0
        } else if vover_pct >= MAX_DELAY_THR_PCT {
            MAX_DELAY
        } else {
            MIN_DELAY
                + (MAX_DELAY - MIN_DELAY) * (vover_pct - MIN_DELAY_THR_PCT) as u64
                    / (MAX_DELAY_THR_PCT - MIN_DELAY_THR_PCT) as u64
        };
        if new_delay > delay {
            g.delay = new_delay;
            g.delay_at = now.now;
            delay = new_delay;
        }
        if delay >= MIN_DELAY {
            if g.indelay_since.is_none() {
                g.indelay_since = Some(now.now);
            }
            g.use_delay = true;
            g.delay_ns_in_force = delay * 1000;
            true
        } else {
            if let Some(s) = g.indelay_since.take() {
                g.stat.indelay_us += now.now - s;
            }
            g.delay = 0;
            g.use_delay = false;
            g.delay_ns_in_force = 0;
            false
        }
    }

    /// `ioc_forgive_debts`: while debtors exist, measure device usage over
    /// windows of at least 100 ms; a window used at most 50 % halves every
    /// debt and delay once per 100 ms it spanned (never to 0), then retries
    /// the waiters.
    pub(crate) fn forgive_debts(&mut self, mut usage_us_sum: u64, nr_debtors: u32, now: &Now) {
        if nr_debtors == 0 {
            self.dfgv_period_at = now.now;
            self.dfgv_period_rem = 0;
            self.dfgv_usage_us_sum = 0;
            return;
        }
        if self.busy_level > 0 {
            usage_us_sum = usage_us_sum.max(u64::from(self.period_us));
        }
        self.dfgv_usage_us_sum = self.dfgv_usage_us_sum.saturating_add(usage_us_sum);
        if now.now < self.dfgv_period_at + DFGV_PERIOD {
            return;
        }
        let dur = now.now - self.dfgv_period_at;
        let usage_pct = (u128::from(self.dfgv_usage_us_sum) * 100 / u128::from(dur.max(1))) as u64;
        self.dfgv_period_at = now.now;
        self.dfgv_usage_us_sum = 0;
        if usage_pct > DFGV_USAGE_PCT {
            self.dfgv_period_rem = 0;
            return;
        }
        let total = dur + self.dfgv_period_rem;
        let nr_cycles = total / DFGV_PERIOD;
        self.dfgv_period_rem = total % DFGV_PERIOD;
        let shift = nr_cycles.min(63) as u32;
        for k in 0..self.active_list.len() {
            let i = self.active_list[k].0 as usize;
            let g = &mut self.groups[i];
            if g.abs_vdebt == 0 && g.delay == 0 {
                continue;
            }
            let (old_debt, old_delay) = (g.abs_vdebt, g.delay);
            if g.abs_vdebt != 0 {
                g.abs_vdebt = (g.abs_vdebt >> shift).max(1);
            }
            if g.delay != 0 {
                g.delay = (g.delay >> shift).max(1);
            }
            let (nd, ndl) = (g.abs_vdebt, g.delay);
            self.kick_waitq(i, true, now);
            self.trace(Trace::ForgiveDebt {
                now: now.now_ns,
                group: GroupId(i as u32),
                old_debt,
                new_debt: nd,
                old_delay,
                new_delay: ndl,
            });
        }
    }
}
