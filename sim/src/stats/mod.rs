//! Statistics: hot-path collectors and fio / mmtests reports.
//!
//! * [`JobStats`] — one per fio job; [`JobStats::record`] per completed IO,
//!   [`JobStats::record_sync`] per fsync/fdatasync, [`JobStats::finish`] at
//!   the end. Per direction it keeps exact clat sums (min/max/mean/stddev),
//!   an HDR histogram (1 ns..100 s, 3 digits, created on first use) for
//!   percentiles, fio's `log_avg_msec` window series and fio's 500 ms
//!   bandwidth/IOPS samples.
//! * [`RunReport::build`] merges jobs into fio "thread status" entries (per
//!   job, or per group with `group_reporting`) and group run stats.
//! * [`normal_output`], [`json_output`] print fio-like reports;
//!   [`write_log`] writes fio's averaged bandwidth, IOPS and latency logs;
//!   [`mmtests_table`] prints an mmtests `compare-kernels.sh` style table.
//!
//! Semantics follow fio `stat.c` (sampling, group merge, JSON keys, normal
//! layout) and mmtests `ExtractFio*.pm`, `SummariseVariabletime.pm`,
//! `Stat.pm`, `Compare.pm`; see the submodule docs for details and the
//! deliberate simplifications:
//! - latency-log windows are aligned to `start + k·window` (fio closes a
//!   window at the first sample past its end and timestamps it then);
//! - bandwidth periods are aligned to `start + k·500 ms`; a trailing partial
//!   period yields no sample; periods without bytes yield no sample (fio);
//! - percentiles come from the HDR histogram (highest equivalent value of
//!   the bucket), not fio's 64-bucket-per-octave scheme, so they can differ
//!   from real fio by the bucket widths (≤ 0.1 % vs ≈ 1.6 %).
//!
//! Output is a pure function of the inputs: no hash maps, fixed formatting.

mod btrfs;
mod collect;
mod columns;
mod figures;
mod fio_log;
mod fio_out;
mod fio_plat;
mod fio_terse;
mod mmtests;
pub mod occupancy;
mod report;
mod spread;
mod summary;
mod sweep;
mod volume;

use serde::{Deserialize, Serialize};

pub use btrfs::{BtrfsRun, btrfs_table};
pub(crate) use collect::LatAcc;
pub use collect::{Before, HistLine, JobStats, RunningStat, Window, WindowSeries, histogram_bytes};
pub use figures::{DirFigures, EntryFigures, LatFigures, RunFigures};
pub use fio_log::{LogKind, log_file_name, write_log};
pub use fio_out::{N2sUnit, json_output, json_plus_output, lat_log_json, normal_output, num2str};
pub use fio_terse::terse_output;
pub use mmtests::{
    LatencyUnit, MmtestsColumn, MmtestsFold, MmtestsOptions, StddevForm, amean, coeffvar, hmean,
    kbsec_samples, latency_samples, mmtests_table, mmtests_table_of_columns, mmtests_table_of_runs,
    mmtests_table_with, pdiff, pndiff, quantile, quantile_index, stddev,
};
pub use occupancy::{Occupancy, OccupancySummary};
pub use report::{
    DirReport, FIO_DEFAULT_PERCENTILES, GroupBwMode, GroupDir, GroupReport, JobInput, JobReport,
    JobSeries, LAT_BUCKETS, LatSummary, Percentiles, RunReport, SampleSummary, Shown, SteadyReport,
    SyncReport, Unified, lat_bucket,
};
pub use spread::{MeanCi, hedges_g, t975, welch_differs};
pub use summary::{SummaryRun, aggregate_json, summary_table, summary_table_over_seeds};
pub use sweep::{PointFigures, point_figures, sweep_table};
pub use volume::{VolumeRun, volume_table};

/// IO direction, in fio's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Dir {
    Read,
    Write,
    Trim,
}

impl Dir {
    /// All directions in fio's order.
    pub const ALL: [Dir; 3] = [Dir::Read, Dir::Write, Dir::Trim];

    /// 0 read, 1 write, 2 trim (fio's `enum fio_ddir`, also the direction
    /// field of fio's log lines).
    #[inline]
    pub const fn index(self) -> usize {
        match self {
            Dir::Read => 0,
            Dir::Write => 1,
            Dir::Trim => 2,
        }
    }

    /// fio's `io_ddir_name`: "read", "write", "trim".
    pub const fn name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::Trim => "trim",
        }
    }
}
