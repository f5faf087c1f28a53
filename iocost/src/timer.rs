//! The period timer (`ioc_timer_fn`): latency statistics, idle
//! groups, usage, donation, `busy_level`, the base vrate, debt forgiveness
//! and the next period.

use crate::CostModel;
use crate::consts::{
    BUSY_LEVEL_MAX, MAX_LAGGING_PERIODS, MILLION, RQ_WAIT_BUSY_PCT, UNBUSY_THR_PCT, VRATE_ADJ_PCT,
    VRATE_CLAMP_ADJ_PCT, VRATE_MIN, WEIGHT_ONE,
};
use crate::group::GroupId;
use crate::ioc::{IoCost, Now, PeriodStats, Variant};
use crate::trace::Trace;
use crate::units::{after, before, cost_to_abs_cost, div_ceil, div_floor};

impl<M: CostModel> IoCost<M> {
    /// `ioc_lat_stat`: missed ppm per direction (rounded up), request-wait
    /// share of the period and the number of completions; resets the
    /// counters.
    pub(crate) fn lat_stat(&mut self) -> ([u32; 2], u32, u32) {
        let mut missed_ppm = [0u32; 2];
        for (rw, ppm) in missed_ppm.iter_mut().enumerate() {
            let total = u64::from(self.nr_met[rw]) + u64::from(self.nr_missed[rw]);
            if total != 0 {
                *ppm = div_ceil(
                    u128::from(self.nr_missed[rw]) * u128::from(MILLION),
                    u128::from(total),
                ) as u32;
            }
        }
        let rq_wait_pct = div_floor(
            u128::from(self.rq_wait_ns) * 100,
            u128::from(self.period_us) * 1000,
        )
        .min(u64::from(u32::MAX)) as u32;
        let nr_done = self.nr_met[0]
            .saturating_add(self.nr_met[1])
            .saturating_add(self.nr_missed[0])
            .saturating_add(self.nr_missed[1]);
        self.nr_met = [0; 2];
        self.nr_missed = [0; 2];
        self.rq_wait_ns = 0;
        (missed_ppm, rq_wait_pct, nr_done)
    }

    /// `iocg_is_idle`: nothing issued this period and nothing in flight.
    fn is_idle(&self, i: usize) -> bool {
        let g = &self.groups[i];
        g.active_period != self.cur_period && g.done_vtime == g.vtime
    }

    /// `ioc_check_iocgs`: flush the open wait/debt/delay intervals, kick
    /// groups with waiters, debt or delay, and deactivate idle ones (their
    /// budget above the target is recorded as error). Returns the number of
    /// groups still in debt or delay.
    fn check_iocgs(&mut self, now: &Now) -> u32 {
        let mut nr_debtors = 0;
        let mut k = 0;
        while k < self.active_list.len() {
            let i = self.active_list[k].0 as usize;
            let busy = {
                let g = &self.groups[i];
                // The 2019 code did not look at the delay here.
                !g.waitq.is_empty()
                    || g.abs_vdebt != 0
                    || (g.delay != 0 && self.variant == Variant::Modern)
            };
            if !busy && !self.is_idle(i) {
                k += 1;
                continue;
            }
            {
                let g = &mut self.groups[i];
                if let Some(s) = g.wait_since.as_mut() {
                    g.stat.wait_us += now.now - *s;
                    *s = now.now;
                }
                if let Some(s) = g.indebt_since.as_mut() {
                    g.stat.indebt_us += now.now - *s;
                    *s = now.now;
                }
                if let Some(s) = g.indelay_since.as_mut() {
                    g.stat.indelay_us += now.now - *s;
                    *s = now.now;
                }
            }
            if busy {
                self.kick_waitq(i, true, now);
                if self.variant == Variant::V5_4 {
                    self.kick_delay(i, now);
                }
                let g = &self.groups[i];
                if g.abs_vdebt != 0 || g.delay != 0 {
                    nr_debtors += 1;
                }
                k += 1;
            } else {
                if self.variant == Variant::Modern {
                    let excess = now
                        .vnow
                        .wrapping_sub(self.groups[i].vtime)
                        .wrapping_sub(self.margins.target as u64)
                        as i64;
                    if excess > 0 {
                        let (_, old_hwi) = self.current_hweight(i);
                        let e = div_floor(
                            u128::from(excess as u64) * u128::from(old_hwi),
                            u128::from(WEIGHT_ONE),
                        );
                        self.vtime_err =
                            self.vtime_err.saturating_sub(e.min(i64::MAX as u64) as i64);
                    }
                }
                self.trace(Trace::Idle {
                    now: now.now_ns,
                    group: GroupId(i as u32),
                });
                // Remembers the current inuse in last_inuse for reactivation.
                self.propagate_weights_nocommit(i, 0, 0, false, now);
                self.groups[i].on_list = false;
                self.groups[i].waitq_timer = None;
                self.active_list.remove(k);
            }
        }
        self.commit_weights();
        nr_debtors
    }

    /// `iocg_flush_stat`: per active group, the usage of the period in µs at
    /// the base rate (truncated), accumulated into the cumulative stats and
    /// published for io.stat.
    fn flush_stat(&mut self) {
        let rate = self.vtime_base_rate.max(1);
        for k in 0..self.active_list.len() {
            let g = &mut self.groups[self.active_list[k].0 as usize];
            let delta = g.abs_vusage.wrapping_sub(g.last_stat_abs_vusage);
            g.last_stat_abs_vusage = g.abs_vusage;
            g.usage_delta_us = delta / rate;
            g.stat.usage_us += g.usage_delta_us;
            g.last_stat = g.stat;
        }
    }

    /// `ioc_timer_fn`.
    pub(crate) fn period_timer(&mut self, now_ns: u64) {
        let (missed_ppm, rq_wait_pct, nr_done) = self.lat_stat();
        let ppm_rthr = MILLION as u32 - self.qos.rppm.min(MILLION as u32);
        let ppm_wthr = MILLION as u32 - self.qos.wppm.min(MILLION as u32);
        let now = self.ioc_now(now_ns);
        let period_vtime = now.vnow.wrapping_sub(self.period_at_vtime);
        debug_assert!(period_vtime != 0, "a period always advances vnow");

        let nr_debtors = self.check_iocgs(&now);
        self.flush_stat();

        let mut st = PeriodStats {
            missed_ppm,
            rq_wait_pct,
            nr_done,
            nr_debtors,
            ..PeriodStats::default()
        };
        let mut usage_us_sum = 0u64;
        self.surpluses.clear();
        let v54 = self.variant == Variant::V5_4;
        for k in 0..self.active_list.len() {
            let i = self.active_list[k].0 as usize;
            let vdone = self.groups[i].done_vtime;
            let vtime = self.groups[i].vtime;
            let (hwa, hwi) = self.current_hweight(i);

            if (ppm_rthr != MILLION as u32 || ppm_wthr != MILLION as u32)
                && !self.groups[i].use_delay
                && after(vtime, vdone)
                && after(
                    vtime,
                    now.vnow
                        .wrapping_sub(MAX_LAGGING_PERIODS.wrapping_mul(period_vtime)),
                )
                && before(vdone, now.vnow.wrapping_sub(period_vtime))
            {
                st.nr_lagging += 1;
            }

            if v54 {
                self.v54_donation_pass(i, &now, period_vtime, hwa, hwi, &mut st);
                continue;
            }

            let mut usage_us = self.groups[i].usage_delta_us;
            usage_us_sum = usage_us_sum.saturating_add(usage_us);

            let g = &self.groups[i];
            if hwi < hwa
                || (g.waitq.is_empty()
                    && before(vtime, now.vnow.wrapping_sub(self.margins.low as u64)))
            {
                if vdone != vtime {
                    let inflight = cost_to_abs_cost(vtime.wrapping_sub(vdone), hwi);
                    let inflight_us =
                        div_ceil(u128::from(inflight), u128::from(self.vtime_base_rate));
                    usage_us = usage_us.max(inflight_us);
                }
                let usage_dur = if after(g.activated_at, self.period_at) {
                    now.now.saturating_sub(g.activated_at).max(1)
                } else {
                    now.now.saturating_sub(self.period_at).max(1)
                };
                let usage = div_ceil(
                    u128::from(usage_us) * u128::from(WEIGHT_ONE),
                    u128::from(usage_dur),
                )
                .clamp(1, u64::from(WEIGHT_ONE)) as u32;
                let (hwa, old_hwi) = self.current_hweight(i);
                let hwm = self.current_hweight_max(i);
                let new_hwi = self.hweight_after_donation(i, old_hwi, hwm, usage, &now);
                if new_hwi < hwm && hwa >= 2 {
                    let g = &mut self.groups[i];
                    g.hweight_donating = hwa;
                    g.hweight_after_donation = new_hwi;
                    self.surpluses.push(GroupId(i as u32));
                } else if self.groups[i].abs_vdebt == 0 {
                    let a = self.groups[i].active;
                    self.propagate_weights_nocommit(i, a, a, true, &now);
                    st.nr_shortages += 1;
                }
            } else {
                st.nr_shortages += 1;
            }
        }
        if v54 {
            // The 2019 code had no forgiveness; its usage sum is unused.
            self.v54_transfer(&now, &st);
        } else {
            st.nr_surpluses = self.surpluses.len() as u32;
            if !self.surpluses.is_empty() && st.nr_shortages != 0 {
                self.transfer_surpluses(&now);
            }
        }
        self.commit_weights();

        let prev_busy_level = self.busy_level;
        self.update_busy_level(&st, ppm_rthr, ppm_wthr);
        self.adjust_base_vrate(&st);
        self.refresh_autop(now_ns);
        if !v54 {
            self.forgive_debts(usage_us_sum, nr_debtors, &now);
        }

        self.cur_period += 1;
        if !self.active_list.is_empty() {
            self.start_period(&now);
        } else {
            self.busy_level = 0;
            self.vtime_err = 0;
            self.running = false;
        }
        self.refresh_vrate(&now);
        self.last_period = st;
        self.trace(Trace::Period {
            now: now_ns,
            vrate_base: self.vtime_base_rate,
            vrate: self.vtime_rate,
            busy_level: self.busy_level,
            prev_busy_level,
            stats: st,
        });
    }

    /// The `busy_level` rules (kernel: `ioc_timer_fn`).
    pub(crate) fn update_busy_level(&mut self, st: &PeriodStats, ppm_rthr: u32, ppm_wthr: u32) {
        let unbusy = |thr: u32| (u64::from(thr) * u64::from(UNBUSY_THR_PCT) / 100) as u32;
        let busy = st.rq_wait_pct > RQ_WAIT_BUSY_PCT
            || st.missed_ppm[0] > ppm_rthr
            || st.missed_ppm[1] > ppm_wthr;
        let fine = st.rq_wait_pct <= RQ_WAIT_BUSY_PCT * UNBUSY_THR_PCT / 100
            && st.missed_ppm[0] <= unbusy(ppm_rthr)
            && st.missed_ppm[1] <= unbusy(ppm_wthr);
        if self.variant == Variant::Modern && st.nr_done == 0 && st.nr_lagging != 0 {
            // No completions to judge by while old IO is still in flight:
            // keep the level (the 2026 fix).
        } else if busy {
            self.busy_level = self.busy_level.max(0) + 1;
        } else if fine {
            match self.variant {
                Variant::Modern => {
                    if st.nr_shortages != 0 {
                        self.busy_level = self.busy_level.min(0);
                        if st.nr_lagging == 0 {
                            self.busy_level -= 1;
                        }
                    } else {
                        self.busy_level = 0;
                    }
                }
                Variant::V5_4 => {
                    if st.nr_shortages != 0 && st.nr_lagging == 0 {
                        self.busy_level = self.busy_level.min(0);
                        if st.nr_surpluses == 0 {
                            self.busy_level -= 1;
                        }
                    }
                }
            }
        } else {
            self.busy_level = 0;
        }
        self.busy_level = self.busy_level.clamp(-BUSY_LEVEL_MAX, BUSY_LEVEL_MAX);
    }

    /// `ioc_adjust_base_vrate`: outside the bounds walk back by 4 % per
    /// period; inside, step by `vrate_adj_pct[|busy_level|]` (down when
    /// busy, up when groups are short of budget).
    fn adjust_base_vrate(&mut self, st: &PeriodStats) {
        let bl = self.busy_level;
        if bl == 0 || (bl < 0 && st.nr_lagging != 0) {
            return;
        }
        let mut vrate = self.vtime_base_rate;
        let mut vrate_min = self.vrate_min;
        let vrate_max = self.vrate_max;
        if self.variant == Variant::V5_4 && st.rq_wait_pct > RQ_WAIT_BUSY_PCT {
            // The 2019 code trusted the request-wait signal over the user's
            // minimum.
            vrate_min = VRATE_MIN;
        }
        if vrate < vrate_min {
            vrate = div_floor(
                u128::from(vrate) * u128::from(100 + VRATE_CLAMP_ADJ_PCT),
                100,
            )
            .min(vrate_min);
        } else if vrate > vrate_max {
            vrate = div_floor(
                u128::from(vrate) * u128::from(100 - VRATE_CLAMP_ADJ_PCT),
                100,
            )
            .max(vrate_max);
        } else {
            let idx = (bl.unsigned_abs() as usize).min(VRATE_ADJ_PCT.len() - 1);
            let p = VRATE_ADJ_PCT[idx];
            let adj = if bl > 0 { 100 - p } else { 100 + p };
            vrate = div_ceil(u128::from(vrate) * u128::from(adj), 100).clamp(vrate_min, vrate_max);
        }
        self.vtime_base_rate = vrate;
        self.refresh_margins();
    }
}
