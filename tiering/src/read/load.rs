//! Load-based round-robin: Michal Rostecki's RFC of February 2021 (not
//! merged).

use alloc::vec::Vec;

use super::{ReadPolicy, ReadRequest};

/// When the "not at the device's last position" penalty applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PenaltyScope {
    /// Only when the filesystem mixes rotational and non-rotational
    /// devices (the RFC's default).
    #[default]
    Mixed,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Per-CPU round-robin that skips busy copies. The load of a copy is its
/// device's in-flight count plus a penalty when the read would not start
/// where the device's last request ended (1 for rotational devices, 0 for
/// non-rotational ones by default). The scan starts at this CPU's last
/// choice, runs to the end of the range, then wraps from `first`; the first
/// copy whose load is below its queue depth wins; if none, the last choice
/// stays. The pick becomes the CPU's new last choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadBalance {
    last: Vec<usize>,
    /// When the penalty applies.
    pub scope: PenaltyScope,
    /// Penalty for a rotational device.
    pub rot_penalty: u32,
    /// Penalty for a non-rotational device.
    pub nonrot_penalty: u32,
}

impl LoadBalance {
    /// A policy for `ncpus` CPUs (at least one), state allocated here once.
    pub fn new(ncpus: usize) -> LoadBalance {
        LoadBalance {
            last: alloc::vec![0; ncpus.max(1)],
            scope: PenaltyScope::Mixed,
            rot_penalty: 1,
            nonrot_penalty: 0,
        }
    }

    /// This CPU's last choice (CPU ids wrap modulo the count given).
    pub fn last(&self, cpu: u32) -> usize {
        self.last[cpu as usize % self.last.len()]
    }
}

impl ReadPolicy for LoadBalance {
    fn name(&self) -> &'static str {
        "load"
    }

    /// Spreads reads by load.
    fn balances(&self) -> bool {
        true
    }

    fn preferred(&mut self, req: &ReadRequest<'_>) -> usize {
        let slot = req.cpu as usize % self.last.len();
        // A last choice from another chunk's range is meaningless here;
        // start from `first` then [our choice: the RFC does not say].
        let last = self.last[slot];
        let start = if req.range().contains(&last) {
            last
        } else {
            req.first()
        };
        let m = req.mirrors();
        let penalised = match self.scope {
            PenaltyScope::Mixed => req.mixed_rotational,
            PenaltyScope::Always => true,
            PenaltyScope::Never => false,
        };
        let load = |i: usize| {
            let mi = &m[i];
            let mut l = u64::from(mi.inflight);
            if penalised && mi.physical != mi.last_offset {
                l += u64::from(if mi.rotational {
                    self.rot_penalty
                } else {
                    self.nonrot_penalty
                });
            }
            l
        };
        let end = req.first() + req.n();
        let pick = (start..end)
            .chain(req.first()..start)
            .find(|&i| load(i) < u64::from(m[i].queue_depth))
            .unwrap_or(start);
        self.last[slot] = pick;
        pick
    }
}
