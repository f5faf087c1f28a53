//! What one run gives the tables printed under a comparison or over
//! seeds (the summary, the sweep table, the JSON aggregate) and the sweep
//! figures: a few numbers per report entry and direction, taken from the
//! run's report when it ends, so the report itself (its latency series
//! and histograms) need not be kept while the other runs go on.

use super::Dir;
use super::report::{LatSummary, RunReport};
use crate::time::Ns;

/// A latency's figures (ns).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LatFigures {
    pub n: u64,
    pub min: u64,
    pub mean: f64,
    pub max: u64,
    pub stddev: f64,
    /// fio's 99th percentile, when the report lists it.
    pub p99: Option<u64>,
}

impl LatFigures {
    fn of(s: &LatSummary) -> Self {
        LatFigures {
            n: s.n,
            min: s.min,
            mean: s.mean,
            max: s.max,
            stddev: s.stddev,
            p99: s
                .percentiles
                .iter()
                .find(|(p, _)| *p == 99.0)
                .map(|&(_, ns)| ns),
        }
    }
}

/// One direction of one report entry.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DirFigures {
    pub total_ios: u64,
    /// Bytes a second (fio's `bw_bytes`).
    pub bw_bytes: u64,
    pub iops: f64,
    /// Completion latency.
    pub clat: LatFigures,
}

/// One report entry (a job, or a group under `group_reporting`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EntryFigures {
    pub name: String,
    /// Indexed by [`Dir::index`].
    pub dirs: [DirFigures; 3],
    /// fsync/fdatasync latency.
    pub sync: LatFigures,
}

impl EntryFigures {
    pub fn dir(&self, d: Dir) -> &DirFigures {
        &self.dirs[d.index()]
    }
}

/// One run's figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunFigures {
    /// Bytes every device completed, read and written.
    pub device_bytes: [u64; 2],
    /// Simulated duration of the run.
    pub sim_ns: Ns,
    /// In report order.
    pub entries: Vec<EntryFigures>,
}

impl RunFigures {
    /// The figures of `report`, with the devices' bytes and the simulated
    /// duration of its run.
    pub fn of(report: &RunReport, device_bytes: [u64; 2], sim_ns: Ns) -> Self {
        let entries = report
            .jobs
            .iter()
            .map(|j| EntryFigures {
                name: j.name.clone(),
                dirs: Dir::ALL.map(|d| {
                    let r = j.dir(d);
                    DirFigures {
                        total_ios: r.total_ios,
                        bw_bytes: r.bw_bytes,
                        iops: r.iops,
                        clat: LatFigures::of(&r.clat),
                    }
                }),
                sync: LatFigures::of(&j.sync.lat),
            })
            .collect();
        RunFigures {
            device_bytes,
            sim_ns,
            entries,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::report::{DirReport, JobReport};

    #[test]
    fn figures_keep_the_entries_numbers_and_the_99th_percentile() {
        let write = DirReport {
            total_ios: 7,
            bw_bytes: 4096,
            iops: 1.5,
            clat: LatSummary {
                n: 7,
                min: 10,
                max: 90,
                mean: 40.5,
                stddev: 3.0,
                percentiles: vec![(50.0, 30), (99.0, 88)],
                ..LatSummary::default()
            },
            ..DirReport::default()
        };
        let report = RunReport {
            jobs: vec![JobReport {
                name: "w".into(),
                dirs: [DirReport::default(), write, DirReport::default()],
                ..JobReport::default()
            }],
            ..RunReport::default()
        };
        let f = RunFigures::of(&report, [1, 2], 3);
        assert_eq!((f.device_bytes, f.sim_ns), ([1, 2], 3));
        let e = &f.entries[0];
        assert_eq!(e.name, "w");
        let w = e.dir(Dir::Write);
        assert_eq!((w.total_ios, w.bw_bytes, w.iops), (7, 4096, 1.5));
        assert_eq!((w.clat.min, w.clat.max, w.clat.p99), (10, 90, Some(88)));
        assert_eq!(e.dir(Dir::Read).clat.p99, None);
        assert_eq!(e.sync.n, 0);
    }
}
