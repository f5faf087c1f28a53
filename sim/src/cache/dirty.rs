//! Dirty-page limits and the pre-3.2 throttle (kernel
//! `mm/page-writeback.c`); today's throttle positions the dirty count on
//! its control lines in [`super::wb`] and sizes its pauses in
//! [`super::pacing`].

use crate::time::{MS, Ns, SEC};

/// Longest pause of a dirtying task (`MAX_PAUSE`, 200 ms).
pub const MAX_PAUSE_NS: Ns = 200 * MS;
/// Flusher period (`dirty_writeback_centisecs` = 500).
pub const WRITEBACK_INTERVAL_NS: Ns = 5 * SEC;
/// Age after which dirty data is written (`dirty_expire_centisecs` = 3000).
pub const DIRTY_EXPIRE_NS: Ns = 30 * SEC;

/// Thresholds in pages, from memory size and the default ratios
/// (`dirty_background_ratio` 10 %, `dirty_ratio` 20 %).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirtyLimits {
    /// Memory that can hold dirty pages: 90 % of RAM *(assumed: free plus
    /// reclaimable file pages of an otherwise idle machine)*.
    pub dirtyable: u64,
    /// Background writeback starts above this.
    pub bg_thresh: u64,
    /// The dirty limit.
    pub thresh: u64,
    /// Below this a writer is never throttled: `(thresh + bg_thresh) / 2`.
    pub freerun: u64,
    /// The control line's setpoint: `(freerun + thresh) / 2` (the line is
    /// [`super::wb::pos_ratio_polynom`]).
    pub setpoint: u64,
}

/// How `balance_dirty_pages` throttles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BdpMode {
    /// IO-less pacing along the kernel's control line (default).
    Paced,
    /// Block until dirty falls below the limit (pre-3.2 behaviour).
    Legacy,
}

impl DirtyLimits {
    /// Limits for `mem_bytes` of RAM.
    pub fn for_memory(mem_bytes: u64) -> Self {
        let dirtyable = mem_bytes / 4096 * 9 / 10;
        let bg_thresh = dirtyable / 10;
        let thresh = dirtyable / 5;
        let freerun = (thresh + bg_thresh) / 2;
        let setpoint = (freerun + thresh) / 2;
        Self {
            dirtyable,
            bg_thresh,
            thresh,
            freerun,
            setpoint,
        }
    }

    /// The pre-3.2 throttle (`BdpMode::Legacy`): a writer at or above the
    /// limit sleeps a tenth of the longest pause, below it not at all.
    /// (`BdpMode::Paced` sizes its pauses in `cache::pacing`.)
    pub fn legacy_pause(&self, dirty: u64) -> Option<Ns> {
        (dirty >= self.thresh).then_some(MAX_PAUSE_NS / 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_for_six_gib() {
        let l = DirtyLimits::for_memory(6 << 30);
        assert_eq!(l.dirtyable, 1_415_577);
        assert_eq!(l.bg_thresh, 141_557);
        assert_eq!(l.thresh, 283_115);
        assert_eq!(l.freerun, 212_336);
        assert_eq!(l.setpoint, 247_725);
    }

    #[test]
    fn the_legacy_throttle_blocks_only_at_the_limit() {
        let l = DirtyLimits::for_memory(1 << 30);
        assert_eq!(l.legacy_pause(l.setpoint), None);
        assert_eq!(l.legacy_pause(l.thresh), Some(20 * MS));
    }
}
