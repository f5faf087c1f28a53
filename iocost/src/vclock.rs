//! The device virtual clock: `vnow` advances at `vtime_rate`
//! vtime per µs from the start of the period, so it is continuous and only
//! its slope changes at period boundaries; and loss compensation
//! (`ioc_refresh_vrate`), which re-emits budget thrown away in
//! one period as a faster clock in the next.

use crate::CostModel;
use crate::ioc::{IoCost, Now, Variant};

impl<M: CostModel> IoCost<M> {
    /// `ioc_now`: wall time in µs (truncated from ns) and `vnow`. A time
    /// earlier than the latest one seen (a caller breaking the monotonic
    /// contract) is taken as that latest time, so that no interval
    /// underflows.
    pub(crate) fn ioc_now(&self, now_ns: u64) -> Now {
        let now = (now_ns / 1000).max(self.last_now);
        debug_assert!(now >= self.period_at, "now before the period start");
        let vrate = self.vtime_rate;
        let vnow = self
            .period_at_vtime
            .wrapping_add(now.saturating_sub(self.period_at).wrapping_mul(vrate));
        Now {
            now_ns,
            now,
            vnow,
            vrate,
        }
    }

    /// The device's current `vnow` at `now` ns.
    pub fn vnow(&self, now_ns: u64) -> u64 {
        self.ioc_now(now_ns).vnow
    }

    /// `ioc_start_period`: a new period starts at `now`, continuing `vnow`,
    /// and the period timer is armed one period later.
    pub(crate) fn start_period(&mut self, now: &Now) {
        debug_assert!(self.running);
        self.period_at = now.now;
        self.period_at_vtime = now.vnow;
        self.timer_at = Some(now.now_ns.saturating_add(u64::from(self.period_us) * 1000));
    }

    /// `ioc_refresh_vrate`: spread the accumulated error `vtime_err` over
    /// what is left of the period, within −½ and +1 times the base rate,
    /// then bound the error to one period's worth. The 2019 code has no loss
    /// compensation: its single rate is the base rate.
    pub(crate) fn refresh_vrate(&mut self, now: &Now) {
        if self.variant == Variant::V5_4 {
            self.vtime_rate = self.vtime_base_rate;
            self.vtime_err = 0;
            return;
        }
        let base = self.vtime_base_rate as i64;
        let vperiod = i64::from(self.period_us).saturating_mul(base);
        let pleft = (self.period_at + u64::from(self.period_us)) as i64 - now.now as i64;
        if pleft > 0 {
            // The kernel negates a truncating signed division.
            let vcomp = (-(self.vtime_err / pleft)).clamp(-(base >> 1), base);
            self.vtime_err = self.vtime_err.saturating_add(vcomp.saturating_mul(pleft));
            self.vtime_rate = (base + vcomp) as u64;
        }
        self.vtime_err = self.vtime_err.clamp(-vperiod, vperiod);
        debug_assert!(
            !self.running
                || (2 * self.vtime_rate >= self.vtime_base_rate
                    && self.vtime_rate <= 2 * self.vtime_base_rate),
            "effective rate within [base/2, 2 base]"
        );
    }
}
