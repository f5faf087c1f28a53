//! The [`Wbt`] state machine: its state, construction and read-only
//! accessors. The behaviour lives in the concept modules (`classify`,
//! `limit`, `hooks`, `wake`, `depth`, `window`, `verdict`, `knob`, `trace`,
//! `snapshot`).

use crate::{
    Class, DepthError, DepthPolicy, DeviceParams, EnableState, LocalSlots, NUM_CLASSES, Options,
    Slots, TRACE_CAPACITY, TraceRecord, Variant, WINDOW_NS, WakeMode, WindowStat, default_lat_ns,
};

/// The WBT controller of one device. See the crate docs for how to drive it.
/// `S` stores the per-class counters ([`Slots`]); the default keeps them
/// in plain integers.
#[derive(Clone, Debug)]
pub struct Wbt<S = LocalSlots, D = Variant> {
    pub(crate) variant: Variant,
    /// The scaling step: the variant's own, or a user's.
    pub(crate) depth: D,
    /// The first answer of `depth` the core refused.
    pub(crate) depth_error: Option<DepthError>,
    pub(crate) queue_depth: u32,
    pub(crate) rotational: bool,
    pub(crate) write_cache: bool,
    pub(crate) tick_ns: Option<u64>,

    pub(crate) min_lat_ns: u64,
    pub(crate) enable_state: EnableState,

    pub(crate) step: i32,
    pub(crate) scaled_max: bool,
    pub(crate) max_depth: u32,
    pub(crate) normal: u32,
    pub(crate) background: u32,

    pub(crate) unknown_cnt: u32,
    pub(crate) cur_win_ns: u64,
    pub(crate) deadline: Option<u64>,
    pub(crate) stats: [WindowStat; 2],

    /// Stuck-read tracker: (cookie, issue time).
    pub(crate) sync: Option<(u64, u64)>,
    pub(crate) last_issue: u64,
    pub(crate) last_comp: u64,
    /// Modern: last time a writer slept in dirty balancing.
    pub(crate) last_dirty_sleep: Option<u64>,
    /// v5: writers sleeping in dirty balancing right now.
    pub(crate) dirty_sleeping: u32,

    pub(crate) slots: S,
    pub(crate) wakes: [Option<WakeMode>; NUM_CLASSES],
    pub(crate) underflows: u64,

    pub(crate) ring: [Option<TraceRecord>; TRACE_CAPACITY],
    pub(crate) ring_head: usize,
    pub(crate) ring_len: usize,
    pub(crate) trace_dropped: u64,
}

impl Wbt {
    /// A controller created at time 0, enabled by default with the default
    /// target for the device (kernel: `wbt_init`).
    pub fn new(params: DeviceParams, variant: Variant) -> Wbt {
        Wbt::with_options(params, variant, Options::default())
    }

    /// A controller with explicit [`Options`].
    pub fn with_options(params: DeviceParams, variant: Variant, options: Options) -> Wbt {
        Wbt::with_slots(params, variant, options, LocalSlots::default())
    }
}

impl<S: Slots> Wbt<S> {
    /// A controller keeping its per-class counters in `slots` (which should
    /// start at zero).
    pub fn with_slots(params: DeviceParams, variant: Variant, options: Options, slots: S) -> Self {
        Wbt::build(params, variant, options, slots, variant)
    }
}

impl<S: Slots, D: DepthPolicy> Wbt<S, D> {
    /// A controller whose scaling step is `depth` instead of the
    /// variant's own; the variant keeps every other rule (verdicts,
    /// windows, admission, wake-ups). Refused when the depths `depth`
    /// gives at step 0 break a [`DepthRule`](crate::DepthRule).
    pub fn with_depth_policy(
        params: DeviceParams,
        variant: Variant,
        options: Options,
        slots: S,
        depth: D,
    ) -> Result<Self, DepthError> {
        let wbt = Wbt::build(params, variant, options, slots, depth);
        match wbt.depth_error {
            Some(e) => Err(e),
            None => Ok(wbt),
        }
    }

    fn build(params: DeviceParams, variant: Variant, options: Options, slots: S, depth: D) -> Self {
        let tick_ns = options
            .tick_hz
            .filter(|hz| *hz > 0)
            .map(|hz| (1_000_000_000 / u64::from(hz)).max(1));
        let mut wbt = Wbt {
            variant,
            depth,
            depth_error: None,
            queue_depth: params.queue_depth.max(1),
            rotational: params.rotational,
            write_cache: params.write_cache,
            tick_ns,
            min_lat_ns: default_lat_ns(params.rotational),
            enable_state: EnableState::OnDefault,
            step: 0,
            scaled_max: false,
            max_depth: 0,
            normal: 0,
            background: 0,
            unknown_cnt: 0,
            cur_win_ns: WINDOW_NS,
            deadline: None,
            stats: [WindowStat::EMPTY; 2],
            sync: None,
            last_issue: options.start_ns,
            last_comp: options.start_ns,
            last_dirty_sleep: None,
            dirty_sleeping: 0,
            slots,
            wakes: [None; NUM_CLASSES],
            underflows: 0,
            ring: [None; TRACE_CAPACITY],
            ring_head: 0,
            ring_len: 0,
            trace_dropped: 0,
        };
        wbt.reset_limits();
        wbt
    }
}

impl<S: Slots, D: DepthPolicy> Wbt<S, D> {
    /// The variant this instance runs.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Current `scale_step`.
    pub fn step(&self) -> i32 {
        self.step
    }

    /// Current `max_depth`.
    pub fn max_depth(&self) -> u32 {
        self.max_depth
    }

    /// Current `wb_normal`.
    pub fn normal(&self) -> u32 {
        self.normal
    }

    /// Current `wb_background`.
    pub fn background(&self) -> u32 {
        self.background
    }

    /// Tracked inflight of one class.
    pub fn inflight(&self, class: Class) -> u32 {
        self.slots.inflight(class)
    }

    /// The store of the per-class counters.
    pub fn slots(&self) -> &S {
        &self.slots
    }
}
