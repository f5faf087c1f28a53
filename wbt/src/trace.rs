//! Trace records (kernel tracepoints `wbt_step`, `wbt_stat`, `wbt_lat`,
//! `wbt_timer`) and the ring that holds them.

use crate::{DepthPolicy, Slots, StepDir, TRACE_CAPACITY, Verdict, Wbt, WindowStat};

/// One transition, mirroring a kernel tracepoint. `now` is the time of the
/// call that produced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceRecord {
    /// `wbt_step`: the depth changed (after the change).
    Step {
        /// Time of the transition.
        now: u64,
        /// Message: scale up or scale down.
        dir: StepDir,
        /// New `scale_step`.
        step: i32,
        /// `cur_win_nsec` at the time (the window re-arm follows the step).
        window_ns: u64,
        /// `wb_background`.
        background: u32,
        /// `wb_normal`.
        normal: u32,
        /// `max_depth` (v5: `wb_max`).
        max: u32,
    },
    /// `wbt_stat`: the window's read and write statistics (emitted on an
    /// EXCEEDED by read latency, and on OK while the step is not 0).
    Stat {
        /// Time of the window expiry.
        now: u64,
        /// Read bucket (`rmean`, `rmin`, `rmax`, `rnr_samples`, `rtime`).
        read: WindowStat,
        /// Write bucket (`wmean`, ...).
        write: WindowStat,
    },
    /// `wbt_lat`: the latency that caused an EXCEEDED (stuck read or window
    /// minimum). The kernel prints it in microseconds: `lat_ns / 1000`.
    Lat {
        /// Time of the window expiry.
        now: u64,
        /// The offending latency in nanoseconds.
        lat_ns: u64,
    },
    /// `wbt_timer`: a window expired. The v5 code had no such tracepoint;
    /// the v5 variant emits it anyway for uniform output.
    Timer {
        /// Time of the window expiry.
        now: u64,
        /// The verdict.
        verdict: Verdict,
        /// `scale_step` before this expiry's scaling.
        step: i32,
        /// Total tracked inflight at the start of the expiry.
        inflight: u32,
    },
}

impl<S: Slots, D: DepthPolicy> Wbt<S, D> {
    pub(crate) fn push_trace(&mut self, rec: TraceRecord) {
        let slot = (self.ring_head + self.ring_len) % TRACE_CAPACITY;
        self.ring[slot] = Some(rec);
        if self.ring_len < TRACE_CAPACITY {
            self.ring_len += 1;
        } else {
            self.ring_head = (self.ring_head + 1) % TRACE_CAPACITY;
            self.trace_dropped += 1;
        }
    }

    /// The oldest undrained trace record.
    pub fn poll_trace(&mut self) -> Option<TraceRecord> {
        if self.ring_len == 0 {
            return None;
        }
        let rec = self.ring[self.ring_head].take();
        self.ring_head = (self.ring_head + 1) % TRACE_CAPACITY;
        self.ring_len -= 1;
        rec
    }

    /// Trace records overwritten because the ring was full.
    pub fn trace_dropped(&self) -> u64 {
        self.trace_dropped
    }
}
