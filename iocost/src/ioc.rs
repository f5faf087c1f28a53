//! The device controller (`struct ioc`) and its public, sans-IO face.
//!
//! The state transitions themselves live in the concept modules
//! (`weights`, `vclock`, `issue`, `waitq`, `debt`, `timer`, `donation`,
//! `completion`); this module holds the state, construction, group
//! management and the queues the caller drains.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::vec::Vec;

use crate::consts::{CGROUP_WEIGHT_DFL, VTIME_PER_USEC, WEIGHT_ONE};
use crate::group::{Group, GroupId};
use crate::model::{Lcoefs, LinearModel, Op};
use crate::params::{Autop, Margins, Qos, period_us, timer_slack_ns, vrate_bound};
use crate::trace::Trace;
use crate::{CostError, CostModel, Linear};

/// Which generation of the algorithm runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Variant {
    /// v5.10+ (2020 rework onwards, fixes through 2026): exact donation
    /// targets ("Andy's method"), in-period `inuse` bump-up, 10/20/50 %
    /// margins, loss compensation, debt forgiveness.
    #[default]
    Modern,
    /// The 2019 original (v5.4–v5.9) donation: usage history, surplus
    /// heuristics, one vrate, a 50 % budget cap.
    V5_4,
}

/// The device as the controller sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Device {
    /// `MAJ:MIN`, checked against the prefix of configuration lines.
    pub devno: (u32, u32),
    /// Rotational media (selects the HDD parameter set).
    pub rotational: bool,
    /// Hardware queue depth (1 selects the SSD_QD1 set).
    pub queue_depth: u32,
}

/// Construction options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Options {
    /// Algorithm generation.
    pub variant: Variant,
    /// Per-group FIFO capacity reserved up front; deeper queues still work
    /// but grow the FIFO (one allocation, amortised).
    pub waitq_capacity: usize,
    /// Capacity of the release queue reserved up front.
    pub release_capacity: usize,
    /// Record [`Trace`] records (off: nothing is queued).
    pub trace: bool,
    /// Let the built-in set step between SSD_DFL and SSD_FAST on sustained
    /// vrate, as the kernel does (off: the set chosen at construction stays).
    pub autop_switching: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            variant: Variant::Modern,
            waitq_capacity: 64,
            release_capacity: 256,
            trace: false,
            autop_switching: true,
        }
    }
}

/// A bio offered to the controller (`ioc_rqos_throttle`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bio {
    /// Caller's identifier, echoed in [`Release`].
    pub id: u64,
    /// The issuing cgroup's group.
    pub group: GroupId,
    /// Direction.
    pub op: Op,
    /// Size in bytes (counted in 512-byte sectors, truncated).
    pub bytes: u64,
    /// Start sector (512 bytes).
    pub sector: u64,
    /// Must be issued even over budget (swap, metadata charged to root, a
    /// task with a fatal signal): charged as debt instead of waiting.
    pub must_issue: bool,
}

/// The controller's answer to [`IoCost::on_submit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Admit {
    /// Issue now. Keep `cost` with the request and hand it back in
    /// [`Done::cost`]. `delay_ns` > 0 asks the caller to make the issuing
    /// task sleep that long on its way back to user space (debt delay).
    Go {
        /// vtime charged to the group for this bio (0: uncharged).
        cost: u64,
        /// Issuer delay to apply, ns.
        delay_ns: u64,
    },
    /// Over budget: the bio is parked in the group's FIFO. It comes back
    /// through [`IoCost::poll_release`].
    Wait,
    /// The cost model's price for the bio broke its contract (see
    /// [`CostModel`]): the bio is neither admitted nor charged nor
    /// parked; the caller fails it. Never for [`Linear`] on a bio the
    /// kernel could carry.
    Refused(CostError),
}

/// A parked bio that may now be issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Release {
    /// The bio's [`Bio::id`].
    pub bio: u64,
    /// Its group.
    pub group: GroupId,
    /// vtime charged; hand back in [`Done::cost`].
    pub cost: u64,
}

/// A completed request (`ioc_rqos_done_bio` + `ioc_rqos_done`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Done {
    /// The bio's group.
    pub group: GroupId,
    /// The cost from [`Admit::Go`] or [`Release`].
    pub cost: u64,
    /// Direction.
    pub op: Op,
    /// Request size in bytes.
    pub bytes: u64,
    /// When the block layer started allocating the request, ns.
    pub alloc_ns: u64,
    /// When the request got its tag (started), ns.
    pub start_ns: u64,
}

/// Per-period figures of the last timer run, for traces and the snapshot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PeriodStats {
    /// Read and write missed ppm.
    pub missed_ppm: [u32; 2],
    /// Request-wait share of the period, %.
    pub rq_wait_pct: u32,
    /// Completions sampled.
    pub nr_done: u32,
    /// Groups with IO in flight for longer than a period.
    pub nr_lagging: u32,
    /// Groups short of budget.
    pub nr_shortages: u32,
    /// Donors (modern) or surplus groups (v5.4).
    pub nr_surpluses: u32,
    /// Groups with debt or delay.
    pub nr_debtors: u32,
}

/// The blk-iocost controller of one device. See the crate docs. `M`
/// prices bios ([`CostModel`]); the default is the kernel's linear model.
#[derive(Clone, Debug)]
pub struct IoCost<M = Linear> {
    /// The cost model: the kernel's linear one, or a user's.
    pub(crate) cost_model: M,
    pub(crate) variant: Variant,
    pub(crate) device: Device,
    pub(crate) enabled: bool,
    pub(crate) user_qos: bool,
    pub(crate) user_model: bool,
    pub(crate) autop: Autop,
    /// Since when (ns) the vrate has been fast / slow enough to switch sets.
    pub(crate) autop_too_fast_at: Option<u64>,
    pub(crate) autop_too_slow_at: Option<u64>,
    pub(crate) qos: Qos,
    pub(crate) model: LinearModel,
    pub(crate) lcoefs: Lcoefs,

    pub(crate) period_us: u32,
    pub(crate) margins: Margins,
    pub(crate) timer_slack_ns: u64,
    pub(crate) vrate_min: u64,
    pub(crate) vrate_max: u64,
    /// Pre-rework: `inuse_margin_vtime`.
    pub(crate) inuse_margin_vtime: u64,

    pub(crate) running: bool,
    pub(crate) vtime_rate: u64,
    pub(crate) vtime_base_rate: u64,
    pub(crate) vtime_err: i64,
    pub(crate) period_at: u64,
    pub(crate) period_at_vtime: u64,
    pub(crate) cur_period: u64,
    pub(crate) busy_level: i32,
    /// Period timer, ns.
    pub(crate) timer_at: Option<u64>,

    /// Active groups, most recently activated first (the kernel's list_add).
    pub(crate) active_list: Vec<GroupId>,
    pub(crate) child_active_sum: u64,
    pub(crate) child_inuse_sum: u64,
    pub(crate) hweight_gen: u64,
    pub(crate) weights_updated: bool,

    pub(crate) dfgv_period_at: u64,
    pub(crate) dfgv_period_rem: u64,
    pub(crate) dfgv_usage_us_sum: u64,

    pub(crate) nr_met: [u32; 2],
    pub(crate) nr_missed: [u32; 2],
    pub(crate) rq_wait_ns: u64,
    pub(crate) last_period: PeriodStats,

    pub(crate) groups: Vec<Group>,
    pub(crate) by_cgroup: BTreeMap<u64, GroupId>,
    pub(crate) surpluses: Vec<GroupId>,
    pub(crate) releases: VecDeque<Release>,
    pub(crate) traces: VecDeque<Trace>,
    pub(crate) trace_on: bool,
    pub(crate) opts: Options,
    /// Last `now` seen (µs): no reading of the clock goes before it.
    pub(crate) last_now: u64,
    /// The same in ns, which every entry point clamps its `now` to.
    pub(crate) last_ns: u64,
    /// Reads and writes of a group let through uncharged while disabled.
    pub(crate) passed_disabled: u64,
}

/// A consistent reading of the clock (`struct ioc_now`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Now {
    pub now_ns: u64,
    pub now: u64,
    pub vnow: u64,
    /// The effective rate used for `vnow`.
    pub vrate: u64,
}

impl IoCost {
    /// A controller for `device`, disabled (write `enable=1` through
    /// [`IoCost::write_qos`] or call [`IoCost::set_enabled`]), with the
    /// built-in parameter set the device selects.
    pub fn new(device: Device, opts: Options) -> IoCost {
        IoCost::with_cost_model(device, opts, Linear)
    }
}

impl<M: CostModel> IoCost<M> {
    /// [`IoCost::new`] with bios priced by `cost_model` instead of the
    /// linear model.
    pub fn with_cost_model(device: Device, opts: Options, cost_model: M) -> IoCost<M> {
        let autop = Autop::select(device.rotational, device.queue_depth);
        let mut ioc = IoCost {
            cost_model,
            variant: opts.variant,
            device,
            enabled: false,
            user_qos: false,
            user_model: false,
            autop,
            autop_too_fast_at: None,
            autop_too_slow_at: None,
            qos: autop.qos(),
            model: autop.model(),
            lcoefs: autop.model().lcoefs(),
            period_us: 0,
            margins: Margins::default(),
            timer_slack_ns: 0,
            vrate_min: 0,
            vrate_max: 0,
            inuse_margin_vtime: 0,
            running: false,
            vtime_rate: VTIME_PER_USEC,
            vtime_base_rate: VTIME_PER_USEC,
            vtime_err: 0,
            period_at: 0,
            period_at_vtime: 0,
            cur_period: 0,
            busy_level: 0,
            timer_at: None,
            active_list: Vec::new(),
            child_active_sum: 0,
            child_inuse_sum: 0,
            hweight_gen: 0,
            weights_updated: false,
            dfgv_period_at: 0,
            dfgv_period_rem: 0,
            dfgv_usage_us_sum: 0,
            nr_met: [0; 2],
            nr_missed: [0; 2],
            rq_wait_ns: 0,
            last_period: PeriodStats::default(),
            groups: Vec::new(),
            by_cgroup: BTreeMap::new(),
            surpluses: Vec::new(),
            releases: VecDeque::with_capacity(opts.release_capacity),
            traces: VecDeque::new(),
            trace_on: opts.trace,
            opts,
            last_now: 0,
            last_ns: 0,
            passed_disabled: 0,
        };
        ioc.refresh_params();
        ioc
    }

    /// Recomputes everything derived from the parameters
    /// (`ioc_refresh_params`): the active QoS and model (user values or the
    /// built-in set), period, slack, vrate bounds and margins.
    pub(crate) fn refresh_params(&mut self) {
        if !self.user_qos {
            self.qos = self.autop.qos();
        }
        if !self.user_model {
            self.model = self.autop.model();
        }
        self.lcoefs = self.model.lcoefs();
        self.period_us = period_us(&self.qos);
        self.timer_slack_ns = timer_slack_ns(self.period_us);
        self.vrate_min = vrate_bound(self.qos.min);
        self.vrate_max = vrate_bound(self.qos.max);
        self.refresh_margins();
        debug_assert!(
            (crate::consts::MIN_PERIOD..=crate::consts::MAX_PERIOD).contains(&self.period_us)
        );
        debug_assert!(self.vrate_min <= self.vrate_max);
    }

    /// `ioc_refresh_margins` (and the pre-rework `inuse_margin_vtime`).
    pub(crate) fn refresh_margins(&mut self) {
        self.margins = Margins::new(self.period_us, self.vtime_base_rate);
        self.inuse_margin_vtime = crate::units::div_ceil(
            u128::from(self.period_us)
                * u128::from(self.vtime_base_rate)
                * u128::from(crate::consts::V54_INUSE_MARGIN_PCT),
            100,
        );
    }

    /// Creates the group of cgroup `cgroup` (any id but each only once) at
    /// `now` ns, with the default weight 100. Allocates: call it while
    /// configuring, not per IO.
    pub fn add_group(&mut self, now: u64, cgroup: u64) -> GroupId {
        if let Some(&g) = self.by_cgroup.get(&cgroup) {
            return g;
        }
        let n = self.ioc_now(now);
        let id = GroupId(self.groups.len() as u32);
        let dfl = CGROUP_WEIGHT_DFL * self.weight_unit();
        self.groups.push(Group::new(
            cgroup,
            n.vnow,
            self.cur_period,
            dfl,
            self.opts.waitq_capacity,
        ));
        self.by_cgroup.insert(cgroup, id);
        self.active_list
            .reserve(self.groups.len() - self.active_list.len());
        self.surpluses
            .reserve(self.groups.len().saturating_sub(self.surpluses.len()));
        id
    }

    /// The group of a cgroup, if created.
    pub fn group_of(&self, cgroup: u64) -> Option<GroupId> {
        self.by_cgroup.get(&cgroup).copied()
    }

    /// Number of groups (the root not counted).
    pub fn nr_groups(&self) -> usize {
        self.groups.len()
    }

    pub(crate) fn gidx(&self, g: GroupId) -> Option<usize> {
        let i = g.0 as usize;
        (i < self.groups.len()).then_some(i)
    }

    /// Turns the controller on or off, like `enable=` in `io.cost.qos`.
    /// Turning it off releases every parked bio uncharged (the kernel
    /// freezes the queue instead; a simulator has nothing to freeze).
    pub fn set_enabled(&mut self, enabled: bool) {
        if self.enabled && !enabled {
            for i in 0..self.groups.len() {
                while let Some(w) = self.groups[i].waitq.pop_front() {
                    self.releases.push_back(Release {
                        bio: w.bio,
                        group: GroupId(i as u32),
                        cost: 0,
                    });
                }
                self.groups[i].waitq_timer = None;
            }
        }
        self.enabled = enabled;
    }

    /// Configured weights are stored times this: `WEIGHT_ONE` in modern
    /// kernels (finer `inuse` steps), 1 in the 2019 code.
    pub(crate) fn weight_unit(&self) -> u32 {
        match self.variant {
            Variant::Modern => WEIGHT_ONE,
            Variant::V5_4 => 1,
        }
    }

    /// Whether the controller is enabled.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The linear model's coefficients in force (`io.cost.model`, or the
    /// device's built-in set), which [`CostModel::abs_cost`] is given.
    pub fn lcoefs(&self) -> Lcoefs {
        self.lcoefs
    }

    /// The cost model that prices bios.
    pub fn cost_model(&self) -> &M {
        &self.cost_model
    }

    /// The algorithm generation.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The next bio that may leave its FIFO, in release order.
    pub fn poll_release(&mut self) -> Option<Release> {
        self.releases.pop_front()
    }

    /// The next trace record, oldest first.
    pub fn poll_trace(&mut self) -> Option<Trace> {
        self.traces.pop_front()
    }

    pub(crate) fn trace(&mut self, t: Trace) {
        if self.trace_on {
            self.traces.push_back(t);
        }
    }

    /// When [`IoCost::on_timer`] must be called next, ns: the period timer
    /// or the earliest waiter wake-up.
    pub fn next_deadline(&self) -> Option<u64> {
        let mut best = self.timer_at;
        for g in &self.groups {
            if let Some(t) = g.waitq_timer {
                best = Some(best.map_or(t, |b| b.min(t)));
            }
        }
        best
    }

    /// Fires every timer due at `now` ns, the period timer first on ties,
    /// then waiter timers in group order.
    pub fn on_timer(&mut self, now: u64) {
        let now = self.note_time(now);
        loop {
            let mut best: Option<(u64, Option<usize>)> = None;
            if let Some(t) = self.timer_at.filter(|&t| t <= now) {
                best = Some((t, None));
            }
            for (i, g) in self.groups.iter().enumerate() {
                if let Some(t) = g
                    .waitq_timer
                    .filter(|&t| t <= now && best.is_none_or(|(b, _)| t < b))
                {
                    best = Some((t, Some(i)));
                }
            }
            match best {
                None => break,
                Some((_, None)) => {
                    self.timer_at = None;
                    self.period_timer(now);
                }
                Some((_, Some(i))) => {
                    self.groups[i].waitq_timer = None;
                    self.waitq_timer_fn(i, now);
                }
            }
        }
        self.debug_check();
    }

    /// The time an entry point works with: `now_ns`, or the latest time
    /// seen if `now_ns` is earlier (a caller breaking the monotonic
    /// contract), in every build, as the other crates' faces clamp it.
    #[must_use]
    pub(crate) fn note_time(&mut self, now_ns: u64) -> u64 {
        let now_ns = now_ns.max(self.last_ns);
        self.last_ns = now_ns;
        self.last_now = now_ns / 1000;
        now_ns
    }

    /// Debug-build check of the device-wide invariants: debt owns `inuse`,
    /// the weight sums, `busy_level` bounds, running iff the timer is armed.
    pub(crate) fn debug_check(&self) {
        if !cfg!(debug_assertions) {
            return;
        }
        let mut sa = 0u64;
        let mut si = 0u64;
        for (i, g) in self.groups.iter().enumerate() {
            g.debug_check();
            if self.variant == Variant::Modern && g.on_list {
                debug_assert!(g.abs_vdebt == 0 || g.inuse == 1, "debt owns inuse");
            }
            debug_assert_eq!(g.on_list, self.active_list.contains(&GroupId(i as u32)));
            sa += u64::from(g.active);
            si += u64::from(g.inuse);
        }
        debug_assert_eq!(sa, self.child_active_sum, "active sum");
        debug_assert_eq!(si, self.child_inuse_sum, "inuse sum");
        debug_assert!(
            (-crate::consts::BUSY_LEVEL_MAX..=crate::consts::BUSY_LEVEL_MAX)
                .contains(&self.busy_level)
        );
        debug_assert_eq!(
            self.running,
            self.timer_at.is_some(),
            "running iff the period timer is armed"
        );
        debug_assert!(
            self.active_list.is_empty() || self.running,
            "active groups imply running"
        );
    }
}
