//! QoS parameters, the built-in parameter sets ("autop", `autop[]`) and the
//! parameters derived from them whenever the configuration or the base vrate
//! changes: period, margins, timer slack, vrate bounds.

use crate::consts::{
    MARGIN_LOW_PCT, MARGIN_MIN_PCT, MARGIN_TARGET_PCT, MAX_PERIOD, MILLION, MIN_PERIOD,
    TIMER_SLACK_PCT, VRATE_MAX_PPM, VRATE_MIN_PPM, VTIME_PER_USEC,
};
use crate::model::LinearModel;
use crate::units::div_ceil;

/// The six values of `io.cost.qos` (besides `enable` and `ctrl`), in the
/// kernel's units (`ioc->params.qos[]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Qos {
    /// Read percentile, ppm (0: no read latency target).
    pub rppm: u32,
    /// Read latency target, µs.
    pub rlat: u32,
    /// Write percentile, ppm.
    pub wppm: u32,
    /// Write latency target, µs.
    pub wlat: u32,
    /// Lowest vrate, ppm of 100 %.
    pub min: u32,
    /// Highest vrate, ppm of 100 %.
    pub max: u32,
}

/// The built-in parameter sets (`autop[]`). The device selects one at
/// construction; SSD_DFL and SSD_FAST then step into each other on sustained
/// vrate unless the user configured QoS or model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Autop {
    /// Rotational devices.
    Hdd,
    /// Non-rotational with queue depth 1 (SATA SSDs with broken NCQ).
    SsdQd1,
    /// Other non-rotational devices.
    SsdDfl,
    /// Fast SSDs (the kernel steps here from DFL when vrate stays ≥ 500 %).
    SsdFast,
}

impl Autop {
    /// The set the kernel starts with for a device (`ioc_autop_idx`, without
    /// the vrate-driven stepping).
    pub fn select(rotational: bool, queue_depth: u32) -> Autop {
        if rotational {
            Autop::Hdd
        } else if queue_depth == 1 {
            Autop::SsdQd1
        } else {
            Autop::SsdDfl
        }
    }

    /// Latency targets of the set; percentiles are 0 (latency QoS off) and
    /// the vrate may roam over the whole 1 %–10 000 % range.
    pub fn qos(self) -> Qos {
        let lat = match self {
            Autop::Hdd => 250_000,
            Autop::SsdQd1 | Autop::SsdDfl => 25_000,
            Autop::SsdFast => 5_000,
        };
        Qos {
            rppm: 0,
            rlat: lat,
            wppm: 0,
            wlat: lat,
            min: VRATE_MIN_PPM,
            max: VRATE_MAX_PPM,
        }
    }

    /// vrate (%) at or above which the set steps up after
    /// [`crate::consts::AUTOP_CYCLE_NSEC`] (`too_fast_vrate_pct`; 0: never).
    pub fn too_fast_vrate_pct(self) -> u64 {
        match self {
            Autop::SsdDfl => 500,
            _ => 0,
        }
    }

    /// vrate (%) at or below which the set steps down (`too_slow_vrate_pct`).
    pub fn too_slow_vrate_pct(self) -> u64 {
        match self {
            Autop::SsdFast => 10,
            _ => 0,
        }
    }

    /// The set's linear model.
    pub fn model(self) -> LinearModel {
        let m = |rbps, rseqiops, rrandiops, wbps, wseqiops, wrandiops| LinearModel {
            rbps,
            rseqiops,
            rrandiops,
            wbps,
            wseqiops,
            wrandiops,
        };
        match self {
            Autop::Hdd => m(174_019_176, 41_708, 370, 178_075_866, 42_705, 378),
            Autop::SsdQd1 => m(245_855_193, 61_575, 6_946, 141_365_009, 33_716, 26_796),
            Autop::SsdDfl => m(488_636_629, 8_932, 8_518, 427_891_549, 28_755, 21_940),
            Autop::SsdFast => m(
                3_102_524_156,
                724_816,
                778_122,
                1_742_780_862,
                425_702,
                443_193,
            ),
        }
    }
}

/// The period (`ioc_refresh_period_us`): the direction with the longer
/// latency target decides (read on ties); a period spans at least two of its
/// latency targets, more for low percentiles, so that a percentile can be
/// judged from one period of samples.
pub fn period_us(qos: &Qos) -> u32 {
    let (ppm, lat) = if qos.rlat >= qos.wlat {
        (qos.rppm, qos.rlat)
    } else {
        (qos.wppm, qos.wlat)
    };
    let multi: u64 = if ppm != 0 {
        (MILLION.saturating_sub(u64::from(ppm)) / 50_000).max(2)
    } else {
        2
    };
    let p = (multi * u64::from(lat)).clamp(u64::from(MIN_PERIOD), u64::from(MAX_PERIOD));
    p as u32
}

/// Waiter timer slack in ns: 1 % of the period.
pub fn timer_slack_ns(period_us: u32) -> u64 {
    u64::from(period_us) * 1000 * u64::from(TIMER_SLACK_PCT) / 100
}

/// A vrate bound from ppm of 100 % (rounded up).
pub fn vrate_bound(ppm: u32) -> u64 {
    div_ceil(
        u128::from(ppm) * u128::from(VTIME_PER_USEC),
        u128::from(MILLION),
    )
}

/// Budget margins in vtime at the current base rate (`ioc_margins`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Margins {
    /// Below this a group never donates.
    pub min: i64,
    /// Below this the issue path raises `inuse` again.
    pub low: i64,
    /// Starting budget, and the cap on unused budget.
    pub target: i64,
}

impl Margins {
    /// `ioc_refresh_margins`: the µs share is truncated before scaling.
    pub fn new(period_us: u32, base_rate: u64) -> Margins {
        let m = |pct: u32| -> i64 {
            let us = u64::from(period_us) * u64::from(pct) / 100;
            us.saturating_mul(base_rate).min(i64::MAX as u64) as i64
        };
        Margins {
            min: m(MARGIN_MIN_PCT),
            low: m(MARGIN_LOW_PCT),
            target: m(MARGIN_TARGET_PCT),
        }
    }
}

impl<M: crate::CostModel> crate::ioc::IoCost<M> {
    /// `ioc_autop_idx`: the set the device should use now. Non-rotational
    /// devices with a queue deeper than 1 start at SSD_DFL; while the user
    /// has set neither QoS nor model, a base vrate at or above the set's
    /// "too fast" mark for 10 s steps up, at or below its "too slow" mark
    /// steps down.
    pub(crate) fn autop_idx(&mut self, now_ns: u64) -> Autop {
        let idx = self.autop;
        if self.device.rotational {
            return Autop::Hdd;
        }
        if self.device.queue_depth == 1 {
            return Autop::SsdQd1;
        }
        if matches!(idx, Autop::Hdd | Autop::SsdQd1) {
            return Autop::SsdDfl;
        }
        if self.user_qos || self.user_model {
            return idx;
        }
        let vrate_pct = self.vtime_base_rate * 100 / crate::consts::VTIME_PER_USEC;
        let fast = idx.too_fast_vrate_pct();
        if fast != 0 && fast <= vrate_pct {
            let at = *self.autop_too_fast_at.get_or_insert(now_ns);
            if now_ns.saturating_sub(at) >= crate::consts::AUTOP_CYCLE_NSEC {
                return Autop::SsdFast;
            }
        } else {
            self.autop_too_fast_at = None;
        }
        let slow = idx.too_slow_vrate_pct();
        if slow != 0 && slow >= vrate_pct {
            let at = *self.autop_too_slow_at.get_or_insert(now_ns);
            if now_ns.saturating_sub(at) >= crate::consts::AUTOP_CYCLE_NSEC {
                return Autop::SsdDfl;
            }
        } else {
            self.autop_too_slow_at = None;
        }
        idx
    }

    /// `ioc_refresh_params(ioc, false)` from the period timer: on a change
    /// of set, both vrates restart at 100 % and everything derived is
    /// recomputed.
    pub(crate) fn refresh_autop(&mut self, now_ns: u64) {
        if !self.opts.autop_switching {
            return;
        }
        let idx = self.autop_idx(now_ns);
        if idx == self.autop {
            return;
        }
        self.vtime_rate = crate::consts::VTIME_PER_USEC;
        self.vtime_base_rate = crate::consts::VTIME_PER_USEC;
        self.autop = idx;
        self.autop_too_fast_at = None;
        self.autop_too_slow_at = None;
        self.refresh_params();
    }
}
