//! blk-iocost, the cost-model, work-conserving proportional IO controller of
//! Linux (`block/blk-iocost.c`), as a pure, deterministic state machine, in
//! its modern form and in the 2019 `v5.4` form.
//!
//! iocost prices every bio with a linear device model (a per-IO part for
//! sequential or random access plus a per-page part) and gives each cgroup
//! a budget of *device virtual time* in proportion to its weight. A device
//! virtual clock (`vnow`) runs at `vrate` × wall time; a group may issue as
//! long as its own vtime, advanced by each bio's cost scaled by its share,
//! stays behind `vnow`, and otherwise its bios wait in a FIFO. Once a period
//! (10 ms to 1 s, derived from the latency targets) a timer looks at
//! completion latencies and request-allocation waits: when the device
//! misses its targets `vrate` drops, when groups are throttled while the
//! device is fine `vrate` rises. Groups that use less than their share lend
//! it (donation) so that the controller stays work-conserving.
//!
//! # Shape: sans-IO
//!
//! [`IoCost`] never reads a clock, never sleeps and spawns nothing. Time is
//! an input: `now`, `u64` nanoseconds from any fixed origin, never
//! decreasing (the controller works in µs internally, truncating, like the
//! kernel); a `now` earlier than one already given is taken as the latest
//! one, in every build. Groups, their FIFOs and the release queue are
//! allocated when groups are created; the per-IO path does not allocate
//! unless a FIFO outgrows [`Options::waitq_capacity`].
//!
//! ```text
//! configure        -> IoCost::new(device, options); add_group(now, cgroup) per cgroup;
//!                     write_qos(now, "enable=1 rpct=95 rlat=2500 wpct=95 wlat=5000"),
//!                     write_model(now, "..."), write_weight(now, group, "default 300")
//! submit a bio     -> on_submit(now, &Bio) -> Admit::Go { cost, delay_ns } | Admit::Wait
//! parked bios      -> drain poll_release(): each Release may now be issued
//! completion       -> on_done(now, &Done { cost, alloc_ns, start_ns, .. })
//! timers           -> next_deadline(), then on_timer(now) when due
//! observe          -> snapshot(now) (io.stat-like, Display prints io.stat lines),
//!                     qos_line(), model_line(), poll_trace()
//! ```
//!
//! ```
//! use iolab_iocost::{Admit, Bio, Device, Done, IoCost, Op, Options};
//!
//! let dev = Device { devno: (8, 0), rotational: false, queue_depth: 32 };
//! let mut ioc = IoCost::new(dev, Options::default());
//! let a = ioc.add_group(0, 1);
//! ioc.write_qos(0, "enable=1 rpct=95 rlat=2500 wpct=95 wlat=5000").unwrap();
//! assert_eq!(ioc.qos_line().to_string(),
//!     "8:0 enable=1 ctrl=user rpct=95.00 rlat=2500 wpct=95.00 wlat=5000 min=1.00 max=10000.00");
//!
//! let bio = Bio { id: 7, group: a, op: Op::Read, bytes: 4096, sector: 0, must_issue: false };
//! let Admit::Go { cost, .. } = ioc.on_submit(1_000, &bio) else { panic!("fresh budget") };
//! assert_eq!(ioc.next_deadline(), Some(1_000 + 10_000_000)); // a 10 ms period started
//! ioc.on_done(120_000, &Done { group: a, cost, op: Op::Read, bytes: 4096,
//!                              alloc_ns: 1_000, start_ns: 1_000 });
//! ioc.on_timer(10_001_000);
//! while let Some(_released) = ioc.poll_release() {}
//! assert_eq!(ioc.snapshot(10_001_000).vrate_pct100, 10_000); // 100.00 %
//! ```
//!
//! # Threaded face
//!
//! With the `std` feature (on by default), [`Controller`] shares one core
//! between threads and tasks: [`Controller::acquire`] (blocking),
//! [`Controller::acquire_owned`], [`Controller::acquire_async`] give a
//! [`Grant`] whose drop is the IO's completion; the period and waiter
//! timers run from [`Controller::tick`] or a [`Ticker`]. Its protocol,
//! cancellation and close: [the module docs](controller).
//!
//! # Extension point
//!
//! [`CostModel`] prices bios; [`Linear`], the kernel's linear model on the
//! `io.cost.model` coefficients, is the default, and
//! [`IoCost::with_cost_model`] runs another. A price past
//! [`MAX_BIO_COST`] is answered [`Admit::Refused`], in every build.
//! `iolab-verification` checks a model from your tests
//! (`iocost::cost_model::check`). QoS latency sampling keeps subtracting
//! the linear model's size cost.
//!
//! # Hierarchy: flat for now
//!
//! Groups are leaves directly under the root (root + leaves). The flat
//! closed form of the donation transfer (`transfer_surpluses`) is exact for this
//! shape; nested shares, the leaf-only activation refusal and stat
//! roll-up are not modelled. The root's own IO ([`GroupId::ROOT`]) is never
//! controlled.
//!
//! # Variants
//!
//! * [`Variant::Modern`] (default): v5.10+ with fixes through 2026 — exact
//!   donation targets with Andy Newell's transfer, in-period `inuse`
//!   bump-up, 10/20/50 % margins, loss compensation (`vtime_err`), debt
//!   paid at the active share, delay hysteresis, debt forgiveness, the
//!   `nr_done` fix to `busy_level`.
//! * [`Variant::V5_4`]: the 2019 original donation (v5.4–v5.9): a 50 % budget cap
//!   at activation and in the timer, snap-back of `inuse` below 10 % of a
//!   period, a three-slot usage history with surplus heuristics, one vrate
//!   (no loss compensation), debt paid at `hwi`, the request-wait signal
//!   overriding the user's `min`, no debt forgiveness.
//!
//! # Modules, and their kernel counterparts
//!
//! | module | concept | kernel functions |
//! |---|---|---|
//! | `consts` | every constant, `vrate_adj_pct[]` | the enums at the top of `blk-iocost.c` |
//! | `units` | fixed point, abs↔cost, wrapping vtime comparisons | `abs_cost_to_cost`, `cost_to_abs_cost`, `time_after64` |
//! | `model` | linear cost model | `calc_lcoefs`, `calc_vtime_cost_builtin`, `calc_size_vtime_cost_builtin` |
//! | `params` | QoS, built-in sets, derived parameters | `autop[]`, `ioc_autop_idx`, `ioc_refresh_period_us`, `ioc_refresh_margins` |
//! | `group` | per-cgroup state | `struct ioc_gq` |
//! | `ioc` | device state, construction, public glue | `struct ioc`, `ioc_pd_init` |
//! | `vclock` | device virtual clock, loss compensation | `ioc_now`, `ioc_start_period`, `ioc_refresh_vrate` |
//! | `weights` | hierarchical weights (flat) | `current_hweight`, `current_hweight_max`, `__propagate_weights`, `commit_weights`, `weight_updated` |
//! | `issue` | activation, in-period inuse bump, throttle | `iocg_activate`, `adjust_inuse_and_calc_cost`, `ioc_rqos_throttle`, `iocg_commit_bio` |
//! | `waitq` | waking parked bios | `iocg_kick_waitq`, `iocg_wake_fn`, `iocg_waitq_timer_fn` |
//! | `debt` | debt, delay, forgiveness | `iocg_incur_debt`, `iocg_pay_debt`, `iocg_kick_delay`, `ioc_forgive_debts` |
//! | `timer` | the period timer | `ioc_timer_fn`, `ioc_lat_stat`, `ioc_check_iocgs`, `iocg_is_idle`, `iocg_flush_stat`, `ioc_adjust_base_vrate` |
//! | `donation` | donation, both generations | `hweight_after_donation`, `transfer_surpluses`, `surplus_adjusted_hweight_inuse` |
//! | `completion` | completion, latency sampling | `ioc_rqos_done_bio`, `ioc_rqos_done` |
//! | `config` | io.cost.qos / io.cost.model / io.weight | `ioc_qos_write`, `ioc_cost_model_write`, `ioc_weight_write`, `ioc_qos_prfill` |
//! | `stat` | io.stat-like snapshot | `ioc_pd_stat` |
//! | `trace` | trace records | the `iocost_*` tracepoints |
//!
//! # Where the kernel departs from the simple rules (the kernel is followed)
//!
//! * vtime can decrease: activation resets the budget by
//!   shifting vtime and done_vtime together, which moves them back when
//!   the group had less than the target budget (always on a group's first
//!   activation, since a new group starts at `vtime = vnow`).
//! * Σhwi can exceed ONE: the floor of 1 on each hweight can push the sum
//!   past ONE (a debtor's `inuse` of 1). The bound holds before the floor.
//! * Work conservation (a group with waiters has `inuse == active`) fails
//!   transiently:
//!   `weight_updated` keeps the old `inuse` when the weight changes, and
//!   paying off debt restores `last_inuse`; both last until the group's
//!   next submission (or, for some, the next period end).
//! * The size-only cost (latency sampling) truncates pages with no floor of 1.
//! * A deactivated group could drop to `inuse = 0`; the modern
//!   variant follows mainline (v6.13+) and leaves 1 in the root's inuse
//!   sum, so idle groups dilute active groups' `hwi` by 1/Σinuse each —
//!   which also lets `hwa` exceed `hwm` by that share.
//! * `v5.4`: 2019 weights were plain (not ×ONE), a weight change scaled
//!   `inuse` with it, and latency sampling compared `on_q` with the target
//!   directly (no size deduction).
//!
//! # Deliberate differences from the kernel
//!
//! * The built-in parameter set may step DFL↔FAST on sustained vrate like
//!   the kernel's; [`Options::autop_switching`] turns that off (a frozen
//!   set). Device changes (rotational, queue depth) after
//!   construction are not modelled.
//! * No bio merging: every bio is priced as a new IO.
//! * Timers are exact: the period timer fires exactly one period after the
//!   period started, with no jiffies rounding; the waiter timer keeps the
//!   kernel's slack as a margin.
//! * The active list is a vector, most recently activated first like the
//!   kernel's `list_add`; iteration is therefore deterministic.
//! * `rlat`/`wlat` above `u32::MAX` are refused instead of truncated.
//! * Disabling the controller releases every parked bio uncharged.
//! * A request's `alloc_ns == 0` is a valid time here (the kernel treats 0
//!   as "not recorded").
//! * `v5.4`: issuer delay uses the modern overage→delay ramp and its
//!   hysteresis instead of the 2019 auto-decaying blkcg delay and delay
//!   timer.
//! * Arithmetic that could overflow in the kernel (products of huge user
//!   values) is done in 128 bits or saturates; vtimes wrap like the kernel's.

#![no_std]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod completion;
mod config;
pub mod consts;
#[cfg(feature = "std")]
pub mod controller;
mod cost_model;
mod debt;
mod donation;
mod group;
mod ioc;
mod issue;
mod model;
mod params;
mod stat;
#[cfg(feature = "std")]
pub mod sync;
mod timer;
mod trace;
mod units;
mod vclock;
mod waitq;
mod weights;

pub use config::{ConfigError, ConfigFile, MODEL_KEYS, ModelLine, QOS_KEYS, QosLine};
#[cfg(feature = "std")]
pub use controller::{
    Controller, ControllerError, Grant, GrantFuture, Io, LATE_TICK_NS, OwnedGrant, OwnedGrantFuture,
};
pub use cost_model::{CostError, CostModel, Linear, MAX_BIO_COST, check_cost};
pub use group::GroupId;
pub use ioc::{Admit, Bio, Device, Done, IoCost, Options, PeriodStats, Release, Variant};
#[cfg(feature = "std")]
pub use iolab_clock::{Clock, ManualClock, SystemClock, Ticker, Timed};
pub use model::{DirCoefs, Lcoefs, LinearModel, Op, calc_lcoefs};
pub use params::{Autop, Margins, Qos, period_us, timer_slack_ns, vrate_bound};
pub use stat::{GroupStat, Snapshot};
pub use trace::Trace;
pub use units::{abs_cost_to_cost, cost_to_abs_cost};

#[cfg(test)]
mod tests;

/// What an engine imports to run the controller, with names that do not
/// collide with the other iolab crates' preludes: `use
/// iolab_iocost::prelude::*;` beside theirs. The names the crates share
/// (`Device`, `Op`, `Options`, `Variant`, `Snapshot`) carry the crate's
/// name here.
pub mod prelude {
    pub use crate::{
        Admit as IoCostAdmit, CostModel, Device as IoCostDevice, GroupId, IoCost, Linear,
        Op as IoCostOp, Options as IoCostOptions, Snapshot as IoCostSnapshot,
        Variant as IoCostVariant,
    };
    #[cfg(feature = "std")]
    pub use crate::{
        Clock, Controller, ControllerError, Grant, GrantFuture, Io, ManualClock, OwnedGrant,
        OwnedGrantFuture, SystemClock, Ticker, Timed,
    };
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
