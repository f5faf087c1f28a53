//! Turning finished [`JobStats`] into fio-shaped per-job / per-group reports.

use serde::{Deserialize, Serialize};

use crate::time::{MS, Ns};

use super::Dir;
use super::collect::{JobStats, LatAcc, RunningStat, WindowSeries};

/// fio's default `percentile_list` (options.c).
pub const FIO_DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// One job handed to [`RunReport::build`].
#[derive(Clone, Debug)]
pub struct JobInput {
    pub name: String,
    pub groupid: u32,
    pub group_reporting: bool,
    /// Job options as written, echoed under `"job options"` in JSON.
    pub options: Vec<(String, String)>,
    pub percentiles: Percentiles,
    pub unified: Unified,
    pub stats: JobStats,
}

/// fio's `unified_rw_reporting`: the directions reported apart (`none`),
/// as one `mixed` direction instead (`mixed`), or both (`both`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unified {
    #[default]
    None,
    Mixed,
    Both,
}

/// fio's percentile options of a job: the points (`percentile_list`) and
/// which latencies list them (`clat_percentiles`, `lat_percentiles`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub list: Vec<f64>,
    pub clat: bool,
    pub lat: bool,
    /// `slat_percentiles`.
    #[serde(default)]
    pub slat: bool,
    /// Decimals the normal output prints the points with.
    pub precision: u32,
}

impl Default for Percentiles {
    /// fio's defaults: its 17 points, for completion latency only.
    fn default() -> Self {
        Percentiles {
            list: FIO_DEFAULT_PERCENTILES.to_vec(),
            clat: true,
            lat: false,
            slat: false,
            precision: 2,
        }
    }
}

/// Which of a job's latencies list their percentiles (fio's
/// `clat_percentiles` and `lat_percentiles`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shown {
    pub clat: bool,
    pub lat: bool,
    #[serde(default)]
    pub slat: bool,
    /// Decimals of the points in the normal output.
    pub precision: u32,
}

impl Default for Shown {
    fn default() -> Self {
        Shown {
            clat: true,
            lat: false,
            slat: false,
            precision: 2,
        }
    }
}

/// How bandwidth/IOPS sample statistics of the jobs of one reporting group
/// are combined (`fio_compat`; fio's `stat.c` `sum_thread_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum GroupBwMode {
    /// fio ≥ 3: min, max, mean and deviation sums are added up over jobs, so
    /// `bw_mean` is the group's total bandwidth.
    #[default]
    Sum,
    /// 2016 fio: the samples of all jobs are pooled, so `bw_mean` is the mean
    /// bandwidth of one job.
    PerJobMean,
}

/// Latency summary in ns, fio's `{min, max, mean, stddev, N, percentile}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatSummary {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    /// Sample standard deviation (n − 1), 0 below two samples (fio).
    pub stddev: f64,
    pub n: u64,
    /// `(percentile, ns)` from the HDR histogram (3 significant digits,
    /// highest equivalent value of the bucket); empty when `n == 0`.
    pub percentiles: Vec<(f64, u64)>,
    /// Completions in each of fio's latency buckets ([`LAT_BUCKETS`]),
    /// from the same histogram; empty when `n == 0`.
    #[serde(default)]
    pub buckets: Vec<u64>,
    /// `(value ns, count)` of fio's non-empty `io_u_plat` buckets, from
    /// the same histogram (`json+`'s `bins`); empty when `n == 0`.
    #[serde(default)]
    pub bins: Vec<(u64, u64)>,
}

/// fio's latency distribution buckets (`io_u_mark_latency` in `io_u.c`):
/// ten below 1 µs by ns, ten below 1 ms by µs, twelve by ms, each
/// `(JSON object, key, lower bound ns)`; a bucket holds the latencies from
/// its bound to the next one's, the last one everything from 2 s.
pub const LAT_BUCKETS: [(&str, &str, u64); 32] = {
    const KEYS: [&str; 10] = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
    ];
    const LOW: [u64; 10] = [0, 2, 4, 10, 20, 50, 100, 250, 500, 750];
    let mut out = [("", "", 0); 32];
    let mut i = 0;
    while i < 10 {
        out[i] = ("latency_ns", KEYS[i], LOW[i]);
        // The µs buckets start at 1 µs: fio's first holds 1 µs to 2 µs.
        out[10 + i] = (
            "latency_us",
            KEYS[i],
            if i == 0 { 1_000 } else { LOW[i] * 1_000 },
        );
        out[20 + i] = (
            "latency_ms",
            KEYS[i],
            if i == 0 {
                1_000_000
            } else {
                LOW[i] * 1_000_000
            },
        );
        i += 1;
    }
    out[30] = ("latency_ms", "2000", 1_000_000_000);
    out[31] = ("latency_ms", ">=2000", 2_000_000_000);
    out
};

/// The [`LAT_BUCKETS`] index of a latency of `ns`.
pub fn lat_bucket(ns: u64) -> usize {
    LAT_BUCKETS.iter().rposition(|b| ns >= b.2).unwrap_or(0)
}

impl LatSummary {
    pub(crate) fn from_acc(acc: &LatAcc, plist: &[f64]) -> Self {
        let percentiles = match (&acc.hist, acc.n) {
            (Some(h), n) if n > 0 => plist
                .iter()
                .map(|&p| (p, h.value_at_quantile(p / 100.0)))
                .collect(),
            _ => Vec::new(),
        };
        let buckets = match (&acc.hist, acc.n) {
            (Some(h), n) if n > 0 => {
                let mut b = vec![0; LAT_BUCKETS.len()];
                for v in h.iter_recorded() {
                    b[lat_bucket(h.highest_equivalent(v.value_iterated_to()))] +=
                        v.count_at_value();
                }
                b
            }
            _ => Vec::new(),
        };
        let bins = match (&acc.hist, acc.n) {
            (Some(h), n) if n > 0 => super::fio_plat::plat_bins(h.iter_recorded().map(|v| {
                (
                    h.highest_equivalent(v.value_iterated_to()),
                    v.count_at_value(),
                )
            })),
            _ => Vec::new(),
        };
        LatSummary {
            min: acc.min,
            max: acc.max,
            mean: acc.mean(),
            stddev: acc.stddev(),
            n: acc.n,
            percentiles,
            buckets,
            bins,
        }
    }
}

/// Summary of periodic samples (bandwidth in KiB/s or IOPS).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleSummary {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub dev: f64,
    pub samples: u64,
}

impl SampleSummary {
    fn from_stat(s: &RunningStat) -> Self {
        if s.samples == 0 {
            return SampleSummary::default();
        }
        SampleSummary {
            min: s.min,
            max: s.max,
            mean: s.mean,
            dev: s.dev(),
            samples: s.samples,
        }
    }
}

/// One direction of one report entry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirReport {
    pub io_bytes: u64,
    pub total_ios: u64,
    /// ms; the longest member runtime among jobs that did IO this direction.
    pub runtime_ms: u64,
    /// `1000·io_bytes / runtime_ms` (bytes/s, integer as in fio).
    pub bw_bytes: u64,
    /// `bw_bytes / 1024` (KiB/s).
    pub bw: u64,
    /// `1000·total_ios / runtime_ms`.
    pub iops: f64,
    pub clat: LatSummary,
    /// Submission latency (fio's `slat`: none for a synchronous engine)
    /// and total latency (`lat`: issue preparation to completion).
    #[serde(default)]
    pub slat: LatSummary,
    #[serde(default)]
    pub lat: LatSummary,
    /// 500 ms bandwidth samples, KiB/s.
    pub bw_samples: SampleSummary,
    /// Percent of the group aggregate bandwidth (fio `bw_agg` / `per=`).
    pub bw_agg: f64,
    pub iops_samples: SampleSummary,
}

/// fsync/fdatasync latencies.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncReport {
    pub total_ios: u64,
    pub lat: LatSummary,
}

/// What the report shows of a job's steady state (fio's `steadystate`
/// JSON object and its `steadystate  :` line).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyReport {
    /// fio's spelling of the criterion (`iops:10.000000%`).
    pub ss: String,
    pub duration: u32,
    pub attained: bool,
    pub criterion: f64,
    pub pct: bool,
    /// The criterion's name in the text line (`iops mean dev`, `bw slope`).
    pub what: String,
    pub max_deviation: f64,
    pub slope: f64,
    /// Each second's figures, oldest first, zeros for seconds not reached
    /// (fio's ring of `ss_dur` entries).
    pub iops: Vec<u64>,
    pub bw: Vec<u64>,
}

impl SteadyReport {
    /// fio's `bw_mean` and `iops_mean`: the ring's sums over `ss_dur`.
    pub fn means(&self) -> (u64, u64) {
        let d = u64::from(self.duration.max(1));
        (
            self.bw.iter().sum::<u64>() / d,
            self.iops.iter().sum::<u64>() / d,
        )
    }
}

/// One fio "thread status": a job, or a whole group under `group_reporting`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobReport {
    /// Name of the (first) job.
    pub name: String,
    pub groupid: u32,
    /// Number of jobs merged into this entry (`jobs=N`).
    pub members: u32,
    pub error: i32,
    pub options: Vec<(String, String)>,
    /// Indexed by [`Dir::index`]: read, write, trim.
    pub dirs: [DirReport; 3],
    pub sync: SyncReport,
    /// Sum of the member jobs' runtimes, ms (fio `job_runtime`).
    pub job_runtime_ms: u64,
    /// Host time of the member jobs' threads on their direct IOs, ns
    /// (fio's CPU share: `sys_cpu`), and their wake-ups (`ctx`).
    #[serde(default)]
    pub host_ns: u64,
    /// User CPU time (the `cpuio` engine's), summed over members.
    #[serde(default)]
    pub user_ns: u64,
    #[serde(default)]
    pub ctx: u64,
    /// IOs issued at each depth of the job's IOs in flight, theirs
    /// included: 1, 2-3, 4-7, 8-15, 16-31, 32-63, 64 and more (fio's
    /// `io_u_map`, its JSON `iodepth_level`), summed over the members.
    #[serde(default)]
    pub depth_map: [u64; 7],
    /// fio's `latency_depth`: the job's `iodepth` (the first member's).
    #[serde(default)]
    pub latency_depth: u32,
    /// Which latencies list percentiles.
    #[serde(default)]
    pub shown: Shown,
    /// `unified_rw_reporting`, and the directions as one when it is on.
    #[serde(default)]
    pub unified: Unified,
    #[serde(default)]
    pub mixed: Option<DirReport>,
    /// Steady-state detection (`ss_dur`): the member that kept the
    /// samples.
    #[serde(default)]
    pub steady: Option<SteadyReport>,
    /// fio's `latency_target` (ns), `latency_window` (µs) and
    /// `latency_percentile`: the first member's (0, 0, 100 without one).
    #[serde(default)]
    pub latency_target_ns: u64,
    #[serde(default)]
    pub latency_window_us: u64,
    #[serde(default = "hundred")]
    pub latency_percentile: f64,
    /// zonemode=zbd: the zones its jobs reset (fio's normal output says
    /// it on the write line; its JSON has no key for it).
    #[serde(default)]
    pub zone_resets: Option<u64>,
}

fn hundred() -> f64 {
    100.0
}

impl JobReport {
    pub fn dir(&self, d: Dir) -> &DirReport {
        &self.dirs[d.index()]
    }
}

/// One direction of a "Run status group" line. Rates in bytes/s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupDir {
    pub io_bytes: u64,
    /// `io_bytes·1000 / max_run`.
    pub agg: u64,
    pub min_bw: u64,
    pub max_bw: u64,
    pub min_run_ms: u64,
    pub max_run_ms: u64,
}

/// fio's `group_run_stats`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupReport {
    pub groupid: u32,
    pub dirs: [GroupDir; 3],
    /// The directions as one, for the entries under
    /// `unified_rw_reporting` (fio's `MIXED` line).
    #[serde(default)]
    pub mixed: Option<GroupDir>,
}

/// Latency-log windows of one job (never merged, even under
/// `group_reporting`: fio writes one log file per job and mmtests reads all).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSeries {
    pub name: String,
    pub groupid: u32,
    pub window_ns: Ns,
    /// Indexed by [`Dir::index`].
    pub dirs: [WindowSeries; 3],
    /// The job's end, ms since its start (its runtime, truncated).
    #[serde(default)]
    pub end_ms: u64,
    /// Its IOs had a submission latency (an engine that queues): its
    /// `slat` log has lines.
    #[serde(default)]
    pub slat: bool,
    /// Its histogram log (`write_hist_log`): `log_hist_coarseness` and
    /// the lines.
    #[serde(default)]
    pub hist: Option<(u32, Vec<super::HistLine>)>,
}

/// Everything the report printers need; plain data, serde-able.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub mode: GroupBwMode,
    /// Per job, or per group for consecutive `group_reporting` jobs of one
    /// group (fio's rule), in job order.
    pub jobs: Vec<JobReport>,
    /// One per group id present, ascending.
    pub groups: Vec<GroupReport>,
    /// One per input job, in job order.
    pub series: Vec<JobSeries>,
    /// The `[global]` options in force for the last job, canonical names
    /// and values as written (fio's JSON "global options").
    #[serde(default)]
    pub global_options: Vec<(String, String)>,
}

struct EntryAcc {
    name: String,
    groupid: u32,
    members: u32,
    options: Vec<(String, String)>,
    /// The first member's (fio reports a group by its first job's).
    percentiles: Percentiles,
    unified: Unified,
    io_bytes: [u64; 3],
    runtime_ms: [u64; 3],
    lat: [LatAcc; 3],
    slat: [LatAcc; 3],
    tlat: [LatAcc; 3],
    bw: [RunningStat; 3],
    iops: [RunningStat; 3],
    sync: LatAcc,
    job_runtime_ms: u64,
    host_ns: u64,
    user_ns: u64,
    ctx: u64,
    depth_map: [u64; 7],
    latency_depth: u32,
    steady: Option<SteadyReport>,
    error: i32,
    latency_target: Option<crate::workload::LatencyTarget>,
    zone_resets: Option<u64>,
}

impl RunReport {
    /// Builds the report. Jobs not yet finished are finished at their last
    /// completion. Entries follow fio: a job joins the previous entry when it
    /// has `group_reporting` and the same group id as the previous job.
    pub fn build(jobs: Vec<JobInput>, mode: GroupBwMode) -> RunReport {
        let mut entries: Vec<EntryAcc> = Vec::new();
        let mut series = Vec::with_capacity(jobs.len());
        let mut last_gid: Option<u32> = None;
        for mut job in jobs {
            if !job.stats.is_finished() {
                let end = job.stats.last_ns();
                job.stats.finish(end);
            }
            let JobInput {
                name,
                groupid,
                group_reporting,
                options,
                percentiles,
                unified,
                stats,
            } = job;
            let join = group_reporting && last_gid == Some(groupid) && !entries.is_empty();
            last_gid = Some(groupid);
            if !join {
                entries.push(EntryAcc {
                    name: name.clone(),
                    groupid,
                    members: 0,
                    options,
                    percentiles,
                    unified,
                    io_bytes: [0; 3],
                    runtime_ms: [0; 3],
                    lat: Default::default(),
                    slat: Default::default(),
                    tlat: Default::default(),
                    bw: Default::default(),
                    iops: Default::default(),
                    sync: LatAcc::default(),
                    job_runtime_ms: 0,
                    host_ns: 0,
                    user_ns: 0,
                    ctx: 0,
                    depth_map: [0; 7],
                    latency_depth: stats.latency_depth,
                    steady: None,
                    error: 0,
                    latency_target: stats.latency_target,
                    zone_resets: None,
                });
            }
            let e = entries.last_mut().expect("an entry was pushed above");
            e.members += 1;
            // fio's `update_runtime`: whole µs, rounded up to ms, so a job
            // shorter than a millisecond reports 1 ms, not 0 (its
            // `job_runtime` is `mtime_since`, truncated).
            let runtime_ms = |d| (stats.dir_runtime_ns(d) / 1000).div_ceil(1000);
            e.job_runtime_ms += stats.runtime_ns() / MS;
            e.host_ns += stats.host_ns;
            e.user_ns += stats.user_ns;
            e.ctx += stats.wakes;
            for (m, n) in e.depth_map.iter_mut().zip(stats.depth_map) {
                *m += n;
            }
            for i in 0..3 {
                let d = &stats.dirs[i];
                e.io_bytes[i] += d.io_bytes;
                if d.lat.n > 0 || d.io_bytes > 0 {
                    e.runtime_ms[i] = e.runtime_ms[i].max(runtime_ms(Dir::ALL[i]));
                }
                e.lat[i].merge(&d.lat);
                e.slat[i].merge(&d.slat);
                e.tlat[i].merge(&d.tlat);
                match mode {
                    GroupBwMode::Sum => {
                        e.bw[i].merge_sum(&d.bw);
                        e.iops[i].merge_sum(&d.iops);
                    }
                    GroupBwMode::PerJobMean => {
                        e.bw[i].merge_pooled(&d.bw);
                        e.iops[i].merge_pooled(&d.iops);
                    }
                }
            }
            e.sync.merge(&stats.sync);
            if stats.steady.is_some() {
                e.steady.clone_from(&stats.steady);
            }
            if e.error == 0 {
                e.error = stats.error;
            }
            if let Some(n) = stats.zone_resets {
                e.zone_resets = Some(e.zone_resets.unwrap_or(0) + n);
            }
            let window_ns = stats.window_ns();
            let end_ms = stats.runtime_ns() / MS;
            let slat = stats.dirs.iter().any(|d| d.slat.n > 0);
            let hist = stats.hist_log.map(|h| (h.coarseness, h.lines));
            let [r, w, t] = stats.dirs;
            series.push(JobSeries {
                name,
                groupid,
                window_ns,
                dirs: [r.series, w.series, t.series],
                end_ms,
                slat,
                hist,
            });
        }

        // Group run stats (fio __show_run_stats).
        let mut gids: Vec<u32> = entries.iter().map(|e| e.groupid).collect();
        gids.sort_unstable();
        gids.dedup();
        let mut groups: Vec<GroupReport> = gids
            .iter()
            .map(|&g| GroupReport {
                groupid: g,
                dirs: Default::default(),
                mixed: None,
            })
            .collect();
        // Each entry's directions as one (fio's
        // `gen_mixed_ddir_stats_from_ts`): bytes and IOs added up, the
        // longest runtime, latencies and samples pooled.
        let mixed: Vec<Option<MixedAcc>> = entries
            .iter()
            .map(|e| (e.unified != Unified::None).then(|| MixedAcc::of(e)))
            .collect();
        for e in &entries {
            let gi = gids.binary_search(&e.groupid).unwrap_or(0);
            let g = &mut groups[gi];
            for i in 0..3 {
                let rt = e.runtime_ms[i];
                if rt == 0 {
                    continue;
                }
                add_to_group(&mut g.dirs[i], e.io_bytes[i], rt);
            }
        }
        for (e, m) in entries.iter().zip(&mixed) {
            let Some(m) = m else { continue };
            if m.runtime_ms == 0 {
                continue;
            }
            let gi = gids.binary_search(&e.groupid).unwrap_or(0);
            let gd = groups[gi].mixed.get_or_insert_with(GroupDir::default);
            add_to_group(gd, m.io_bytes, m.runtime_ms);
        }
        for g in &mut groups {
            for gd in g.dirs.iter_mut().chain(g.mixed.as_mut()) {
                if gd.max_run_ms > 0 {
                    gd.agg = rate(gd.io_bytes, gd.max_run_ms);
                }
            }
        }

        let jobs = entries
            .iter()
            .zip(&mixed)
            .map(|(e, m)| {
                let p = &e.percentiles;
                let gi = gids.binary_search(&e.groupid).unwrap_or(0);
                let g = &groups[gi];
                let dirs = std::array::from_fn(|i| {
                    dir_report(
                        e.io_bytes[i],
                        e.runtime_ms[i],
                        [&e.lat[i], &e.slat[i], &e.tlat[i]],
                        (&e.bw[i], &e.iops[i]),
                        g.dirs[i].agg,
                        p,
                    )
                });
                let mixed = m.as_ref().map(|m| {
                    let agg = g.mixed.map_or(0, |gd| gd.agg);
                    dir_report(
                        m.io_bytes,
                        m.runtime_ms,
                        [&m.lat, &m.slat, &m.tlat],
                        (&m.bw, &m.iops),
                        agg,
                        p,
                    )
                });
                JobReport {
                    name: e.name.clone(),
                    groupid: e.groupid,
                    members: e.members,
                    error: e.error,
                    options: e.options.clone(),
                    dirs,
                    sync: SyncReport {
                        total_ios: e.sync.n,
                        lat: LatSummary::from_acc(
                            &e.sync,
                            if p.clat || p.lat { &p.list } else { &[] },
                        ),
                    },
                    job_runtime_ms: e.job_runtime_ms,
                    host_ns: e.host_ns,
                    user_ns: e.user_ns,
                    ctx: e.ctx,
                    depth_map: e.depth_map,
                    latency_depth: e.latency_depth,
                    shown: Shown {
                        clat: p.clat,
                        lat: p.lat,
                        slat: p.slat,
                        precision: p.precision,
                    },
                    unified: e.unified,
                    mixed,
                    steady: e.steady.clone(),
                    latency_target_ns: e.latency_target.map_or(0, |t| t.target_ns),
                    latency_window_us: e.latency_target.map_or(0, |t| t.window_ns / 1000),
                    latency_percentile: e.latency_target.map_or(100.0, |t| t.percentile),
                    zone_resets: e.zone_resets,
                }
            })
            .collect();

        RunReport {
            mode,
            jobs,
            groups,
            series,
            global_options: Vec::new(),
        }
    }
}

/// `bytes·1000 / ms` in integer arithmetic (fio), saturating.
fn rate(bytes: u64, ms: u64) -> u64 {
    if ms == 0 {
        return 0;
    }
    (u128::from(bytes) * 1000 / u128::from(ms)).min(u128::from(u64::MAX)) as u64
}

/// fio `convert_agg_kbytes_percent`: the mean (truncated to an integer, the
/// C parameter is `int`) as a percentage of the group aggregate, capped at
/// 100; 100 when the aggregate is at most 1 KiB/s.
fn agg_percent(agg_bytes: u64, mean_kib: f64) -> f64 {
    if agg_bytes > 1024 {
        let p = mean_kib.trunc() * 100.0 / (agg_bytes as f64 / 1024.0);
        p.min(100.0)
    } else {
        100.0
    }
}

/// An entry's directions as one (see [`Unified`]).
struct MixedAcc {
    io_bytes: u64,
    runtime_ms: u64,
    lat: LatAcc,
    slat: LatAcc,
    tlat: LatAcc,
    bw: RunningStat,
    iops: RunningStat,
}

impl MixedAcc {
    fn of(e: &EntryAcc) -> Self {
        let mut m = MixedAcc {
            io_bytes: 0,
            runtime_ms: 0,
            lat: LatAcc::default(),
            slat: LatAcc::default(),
            tlat: LatAcc::default(),
            bw: RunningStat::default(),
            iops: RunningStat::default(),
        };
        for i in 0..3 {
            m.io_bytes += e.io_bytes[i];
            m.runtime_ms = m.runtime_ms.max(e.runtime_ms[i]);
            m.lat.merge(&e.lat[i]);
            m.slat.merge(&e.slat[i]);
            m.tlat.merge(&e.tlat[i]);
            m.bw.merge_pooled(&e.bw[i]);
            m.iops.merge_pooled(&e.iops[i]);
        }
        m
    }
}

/// Adds an entry's direction (`io_bytes` in `rt` ms) to its group's.
fn add_to_group(gd: &mut GroupDir, io_bytes: u64, rt: u64) {
    let bw = rate(io_bytes, rt);
    if gd.max_run_ms == 0 {
        gd.min_run_ms = rt;
        gd.min_bw = bw;
    } else {
        gd.min_run_ms = gd.min_run_ms.min(rt);
        gd.min_bw = gd.min_bw.min(bw);
    }
    gd.max_run_ms = gd.max_run_ms.max(rt);
    gd.max_bw = gd.max_bw.max(bw);
    gd.io_bytes += io_bytes;
}

/// One direction's report from its accumulators; `group_agg` the group's
/// aggregate bandwidth in that direction.
fn dir_report(
    io_bytes: u64,
    rt: u64,
    [lat, slat, tlat]: [&LatAcc; 3],
    (bw, iops): (&RunningStat, &RunningStat),
    group_agg: u64,
    p: &Percentiles,
) -> DirReport {
    let list = |on: bool| if on { &p.list[..] } else { &[][..] };
    let total_ios = lat.n;
    let (bw_bytes, iops_rate) = if rt > 0 {
        (rate(io_bytes, rt), 1000.0 * total_ios as f64 / rt as f64)
    } else {
        (0, 0.0)
    };
    let bw_samples = SampleSummary::from_stat(bw);
    let bw_agg = if bw_samples.samples > 0 {
        agg_percent(group_agg, bw_samples.mean)
    } else {
        0.0
    };
    DirReport {
        io_bytes,
        total_ios,
        runtime_ms: rt,
        bw_bytes,
        bw: bw_bytes / 1024,
        iops: iops_rate,
        clat: LatSummary::from_acc(lat, list(p.clat || p.lat)),
        slat: LatSummary::from_acc(slat, list(p.slat)),
        lat: LatSummary::from_acc(tlat, list(p.lat)),
        bw_samples,
        bw_agg,
        iops_samples: SampleSummary::from_stat(iops),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SEC;

    /// A job writing `per_period` bytes in each 500 ms period for 1 s.
    fn writer(name: &str, gid: u32, gr: bool, per_period: u64, lat: u64) -> JobInput {
        let mut s = JobStats::new(0, 10 * MS, 500 * MS);
        s.record(Dir::Write, 100 * MS, lat, per_period);
        s.record(Dir::Write, 600 * MS, lat, per_period);
        s.finish(SEC);
        JobInput {
            name: name.into(),
            groupid: gid,
            group_reporting: gr,
            options: vec![("rw".into(), "write".into())],
            percentiles: Default::default(),
            unified: Default::default(),
            stats: s,
        }
    }

    #[test]
    fn group_reporting_sum_vs_per_job_mean() {
        // Job a: 1 MiB per 0.5 s = 2048 KiB/s; job b: 2 MiB -> 4096 KiB/s.
        let mk = || {
            vec![
                writer("a", 0, true, 1 << 20, 100),
                writer("b", 0, true, 2 << 20, 300),
            ]
        };
        let sum = RunReport::build(mk(), GroupBwMode::Sum);
        assert_eq!(sum.jobs.len(), 1);
        let j = &sum.jobs[0];
        assert_eq!((j.name.as_str(), j.members), ("a", 2));
        let w = j.dir(Dir::Write);
        assert_eq!(w.bw_samples.samples, 4);
        assert_eq!(w.bw_samples.min, 2048 + 4096);
        assert_eq!(w.bw_samples.max, 2048 + 4096);
        assert!((w.bw_samples.mean - 6144.0).abs() < 1e-9);
        assert_eq!(w.total_ios, 4);
        assert_eq!(w.io_bytes, 6 << 20);
        assert_eq!(w.runtime_ms, 1000);
        assert_eq!(w.bw_bytes, 6 << 20);
        assert_eq!(w.bw, 6144);
        assert!((w.iops - 4.0).abs() < 1e-12);
        assert_eq!((w.clat.min, w.clat.max), (100, 300));
        assert!((w.clat.mean - 200.0).abs() < 1e-12);
        assert_eq!(w.bw_agg, 100.0);
        assert_eq!(j.job_runtime_ms, 2000);

        let per = RunReport::build(mk(), GroupBwMode::PerJobMean);
        let w = per.jobs[0].dir(Dir::Write);
        assert_eq!(w.bw_samples.samples, 4);
        assert_eq!((w.bw_samples.min, w.bw_samples.max), (2048, 4096));
        assert!((w.bw_samples.mean - 3072.0).abs() < 1e-9);
        assert!((w.bw_agg - 50.0).abs() < 1e-9);

        // Same group ids without group_reporting: one entry per job.
        let sep = RunReport::build(
            vec![
                writer("a", 0, false, 1 << 20, 1),
                writer("b", 0, false, 1 << 20, 1),
            ],
            GroupBwMode::Sum,
        );
        assert_eq!(sep.jobs.len(), 2);
        assert_eq!(sep.groups.len(), 1);
        let g = &sep.groups[0].dirs[Dir::Write.index()];
        assert_eq!(g.io_bytes, 4 << 20);
        assert_eq!(g.agg, 4 << 20);
        assert_eq!((g.min_run_ms, g.max_run_ms), (1000, 1000));
        assert_eq!(sep.series.len(), 2);
    }

    #[test]
    fn new_group_starts_new_entry() {
        let r = RunReport::build(
            vec![
                writer("w", 0, true, 1 << 20, 1),
                writer("r", 1, true, 1 << 20, 1),
                writer("r2", 1, true, 1 << 20, 1),
            ],
            GroupBwMode::Sum,
        );
        assert_eq!(r.jobs.len(), 2);
        assert_eq!((r.jobs[1].name.as_str(), r.jobs[1].members), ("r", 2));
        assert_eq!(
            r.groups.iter().map(|g| g.groupid).collect::<Vec<_>>(),
            vec![0, 1]
        );
    }

    #[test]
    fn percentiles_from_histogram() {
        let mut s = JobStats::new(0, 10 * MS, 500 * MS);
        for i in 1..=1000u64 {
            s.record(Dir::Read, i, i * 1000, 4096);
        }
        s.finish(SEC);
        let r = RunReport::build(
            vec![JobInput {
                name: "p".into(),
                groupid: 0,
                group_reporting: false,
                options: vec![],
                percentiles: Default::default(),
                unified: Default::default(),
                stats: s,
            }],
            GroupBwMode::Sum,
        );
        let c = &r.jobs[0].dir(Dir::Read).clat;
        assert_eq!(c.percentiles.len(), 17);
        let p50 = c.percentiles[6];
        assert_eq!(p50.0, 50.0);
        // 500 µs within the 3-digit HDR resolution.
        assert!((p50.1 as i64 - 500_000).abs() <= 500, "{p50:?}");
        assert!(r.jobs[0].dir(Dir::Write).clat.percentiles.is_empty());
    }
}
