//! How long a count stayed at each level: a queue's occupancy weighted by
//! time, where a figure taken at each read's issue is weighted by the
//! reads (which come faster when the queue is short). Used alike for the
//! writes a real device holds (`iolab kernel summary`, from the block
//! events) and a simulated one.

/// Levels above this are counted at it.
pub const MAX_LEVEL: usize = 4096;

/// Time at each level of a count since its first change.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Occupancy {
    /// Nanoseconds spent at each level (index), grown as levels are seen.
    ns: Vec<u64>,
    level: u64,
    since: u64,
    started: bool,
}

/// What [`Occupancy`] adds up to: the time-weighted mean and percentiles
/// (the smallest level at or below which that share of the time was
/// spent), over `ns` nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OccupancySummary {
    pub ns: u64,
    pub mean: f64,
    pub p10: u64,
    pub p50: u64,
    pub p90: u64,
}

impl Occupancy {
    /// The count became `level` at `now` (ns, not before the last call).
    pub fn set(&mut self, now: u64, level: u64) {
        if self.started {
            add_at(&mut self.ns, self.level, now.saturating_sub(self.since));
        }
        self.started = true;
        self.level = level;
        self.since = now;
    }

    /// The summary up to `now` (the level it is at counted until then).
    pub fn summary(&self, now: u64) -> OccupancySummary {
        let mut ns = self.ns.clone();
        if self.started {
            add_at(&mut ns, self.level, now.saturating_sub(self.since));
        }
        let total: u64 = ns.iter().sum();
        if total == 0 {
            return OccupancySummary::default();
        }
        let weighted: u128 = ns
            .iter()
            .enumerate()
            .map(|(level, &t)| level as u128 * u128::from(t))
            .sum();
        let level_at = |q: f64| {
            let want = (q * total as f64).ceil() as u64;
            let mut seen = 0;
            for (level, &t) in ns.iter().enumerate() {
                seen += t;
                if seen >= want.max(1) {
                    return level as u64;
                }
            }
            (ns.len() - 1) as u64
        };
        OccupancySummary {
            ns: total,
            mean: weighted as f64 / total as f64,
            p10: level_at(0.10),
            p50: level_at(0.50),
            p90: level_at(0.90),
        }
    }
}

/// Adds `t` ns at `level` (at most [`MAX_LEVEL`]) to `ns`.
fn add_at(ns: &mut Vec<u64>, level: u64, t: u64) {
    let at = (level as usize).min(MAX_LEVEL);
    if ns.len() <= at {
        ns.resize(at + 1, 0);
    }
    ns[at] += t;
}

impl OccupancySummary {
    /// The JSON object both reports carry.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "ns": self.ns,
            "mean": self.mean,
            "p10": self.p10,
            "p50": self.p50,
            "p90": self.p90,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_weighted_by_the_time_spent_at_them() {
        let mut o = Occupancy::default();
        // 0 for 70 ns, 100 for 20 ns, 4 for 10 ns.
        o.set(1000, 0);
        o.set(1070, 100);
        o.set(1090, 4);
        let s = o.summary(1100);
        assert_eq!(s.ns, 100);
        assert!((s.mean - 20.4).abs() < 1e-9, "{}", s.mean);
        assert_eq!((s.p10, s.p50, s.p90), (0, 0, 100));
        // Nothing before the first change counts.
        assert_eq!(Occupancy::default().summary(5), OccupancySummary::default());
    }
}
