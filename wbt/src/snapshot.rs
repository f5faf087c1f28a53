//! A copy of the controller state for export.

use crate::{Class, DepthError, DepthPolicy, EnableState, NUM_CLASSES, Slots, Variant, Wbt};

/// A copy of the controller state for export (kernel: the debugfs view plus
/// the step).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Which variant runs.
    pub variant: Variant,
    /// Enable state.
    pub enable_state: EnableState,
    /// Whether requests are classified and throttled.
    pub enabled: bool,
    /// Latency target in ns (`min_lat_nsec`); 0 = disabled.
    pub min_lat_ns: u64,
    /// `scale_step`.
    pub step: i32,
    /// `scaled_max`: the 3/4-QD cap was hit; scale-ups are refused.
    pub scaled_max: bool,
    /// `max_depth`.
    pub max_depth: u32,
    /// `wb_normal`.
    pub normal: u32,
    /// `wb_background`.
    pub background: u32,
    /// Tracked inflight per class (index with [`Class::index`](crate::Class::index)).
    pub inflight: [u32; NUM_CLASSES],
    /// Waiters per class, as counted by the core.
    pub waiting: [u32; NUM_CLASSES],
    /// `cur_win_nsec`.
    pub window_ns: u64,
    /// Deadline of the armed window, if any.
    pub window_deadline: Option<u64>,
    /// `unknown_cnt`.
    pub unknown_cnt: u32,
    /// Device queue depth in use.
    pub queue_depth: u32,
    /// Trace records overwritten before they were drained.
    pub trace_dropped: u64,
    /// Releases of a class whose counter was already 0 (should stay 0).
    pub underflows: u64,
    /// The first answer of the depth policy the core refused, if any.
    pub depth_error: Option<DepthError>,
}

impl<S: Slots, D: DepthPolicy> Wbt<S, D> {
    /// A copy of the state for export.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            variant: self.variant,
            enable_state: self.enable_state,
            enabled: self.enabled(),
            min_lat_ns: self.min_lat_ns,
            step: self.step,
            scaled_max: self.scaled_max,
            max_depth: self.max_depth,
            normal: self.normal,
            background: self.background,
            inflight: Class::ALL.map(|c| self.slots.inflight(c)),
            waiting: Class::ALL.map(|c| self.slots.waiting(c)),
            window_ns: self.cur_win_ns,
            window_deadline: self.deadline,
            unknown_cnt: self.unknown_cnt,
            queue_depth: self.queue_depth,
            trace_dropped: self.trace_dropped,
            underflows: self.underflows,
            depth_error: self.depth_error,
        }
    }
}
