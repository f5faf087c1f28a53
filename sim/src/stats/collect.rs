//! Hot-path collectors: one [`JobStats`] per fio job (thread).
//!
//! Everything here is O(1) per recorded IO and allocation-free once the
//! per-direction histogram exists and the window series has grown its buffer
//! (amortised `Vec` growth: a few bytes per 10 ms window of simulated time).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::time::{MS, Ns, SEC};

use super::Dir;

/// Highest latency the histograms track (100 s); larger values saturate.
pub(crate) const HIST_MAX_NS: u64 = 100 * SEC;
/// Significant digits of the latency histograms.
pub(crate) const HIST_SIGFIG: u8 = 3;

/// What one latency histogram's counts hold, bytes.
pub fn histogram_bytes() -> u64 {
    new_histogram().map_or(0, |h| h.distinct_values() as u64 * 8)
}

pub(crate) fn new_histogram() -> Option<Histogram<u64>> {
    Histogram::<u64>::new_with_bounds(1, HIST_MAX_NS, HIST_SIGFIG).ok()
}

/// Exact running latency statistics plus a lazily created HDR histogram.
///
/// Sums are kept in `u128`, so count, mean and variance are exact (up to the
/// final conversion to `f64`) and merging jobs of a group is exact as well.
#[derive(Clone, Debug, Default)]
pub(crate) struct LatAcc {
    pub(crate) n: u64,
    pub(crate) min: u64,
    pub(crate) max: u64,
    pub(crate) sum: u128,
    pub(crate) sumsq: u128,
    pub(crate) hist: Option<Histogram<u64>>,
}

impl LatAcc {
    /// Records `v`, in the histogram too only when `hist` (its
    /// percentiles are asked for).
    #[inline]
    pub(crate) fn record_as(&mut self, v: u64, hist: bool) {
        if hist {
            self.record(v);
        } else {
            self.moments(v);
        }
    }

    #[inline]
    pub(crate) fn record(&mut self, v: u64) {
        self.moments(v);
        if self.hist.is_none() {
            self.hist = new_histogram();
        }
        if let Some(h) = self.hist.as_mut() {
            h.saturating_record(v);
        }
    }

    /// Count, extremes and sums of `v`, without the histogram.
    #[inline]
    fn moments(&mut self, v: u64) {
        if self.n == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.n += 1;
        let w = u128::from(v);
        self.sum += w;
        self.sumsq += w * w;
    }

    /// Adds another accumulator (exact pooled statistics).
    pub(crate) fn merge(&mut self, o: &LatAcc) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            self.min = o.min;
            self.max = o.max;
        } else {
            self.min = self.min.min(o.min);
            self.max = self.max.max(o.max);
        }
        self.n += o.n;
        self.sum += o.sum;
        self.sumsq += o.sumsq;
        if let Some(oh) = o.hist.as_ref() {
            match self.hist.as_mut() {
                // Identical bounds on both sides: adding cannot fail.
                Some(h) => {
                    let _ = h.add(oh);
                }
                None => self.hist = Some(oh.clone()),
            }
        }
    }

    /// Count, mean, percentiles and maximum as a JSON object (the
    /// histogram's percentiles: within its 3 significant digits).
    pub(crate) fn spread_json(&self) -> serde_json::Value {
        let q = |q: f64| self.hist.as_ref().map_or(0, |h| h.value_at_quantile(q));
        serde_json::json!({
            "n": self.n,
            "mean": self.mean(),
            "p50": q(0.5),
            "p90": q(0.9),
            "p99": q(0.99),
            "max": if self.n == 0 { 0 } else { self.max },
        })
    }

    pub(crate) fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    /// Sample standard deviation (divisor n − 1), 0 for fewer than two
    /// samples: the same convention as fio's `calc_lat`.
    pub(crate) fn stddev(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = u128::from(self.n);
        // n·Σx² − (Σx)² is exact in u128 unless the run is enormous; fall
        // back to f64 arithmetic in that case.
        let exact = n
            .checked_mul(self.sumsq)
            .zip(self.sum.checked_mul(self.sum))
            .map(|(a, b)| a.saturating_sub(b));
        let var = match exact {
            Some(num) => num as f64 / (self.n as f64 * (self.n - 1) as f64),
            None => {
                let s = self.sum as f64;
                let v = (self.sumsq as f64 - s * s / self.n as f64) / (self.n - 1) as f64;
                v.max(0.0)
            }
        };
        var.sqrt()
    }
}

/// fio's `struct io_stat` for bandwidth / IOPS samples: min, max and a
/// Welford running mean and sum of squared deviations, in `f64` exactly like
/// fio's `add_stat_sample`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunningStat {
    pub samples: u64,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    /// Sum of squared deviations from the mean ("S" in fio).
    pub s: f64,
}

impl RunningStat {
    pub(crate) fn add(&mut self, v: u64) {
        if self.samples == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        let val = v as f64;
        let delta = val - self.mean;
        if delta != 0.0 {
            self.mean += delta / (self.samples as f64 + 1.0);
            self.s += delta * (val - self.mean);
        }
        self.samples += 1;
    }

    /// fio ≥ 3 group merge (`sum_stat(.., pure_sum = true)`): min, max, mean,
    /// S and sample counts are all added up.
    pub(crate) fn merge_sum(&mut self, o: &RunningStat) {
        if o.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = *o;
            return;
        }
        self.min += o.min;
        self.max += o.max;
        self.samples += o.samples;
        self.mean += o.mean;
        self.s += o.s;
    }

    /// 2016 fio group merge (parallel variance algorithm): the result
    /// describes the pool of all jobs' samples, i.e. a per-job mean.
    pub(crate) fn merge_pooled(&mut self, o: &RunningStat) {
        if o.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = *o;
            return;
        }
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        let (n1, n2) = (self.samples as f64, o.samples as f64);
        let delta = o.mean - self.mean;
        let mean = (o.mean * n2 + self.mean * n1) / (n1 + n2);
        let s = o.s + self.s + delta * delta * (n1 * n2) / (n1 + n2);
        self.samples += o.samples;
        self.mean = mean;
        self.s = s;
    }

    /// Sample standard deviation, 0 for fewer than two samples (fio).
    pub fn dev(&self) -> f64 {
        if self.samples > 1 {
            (self.s / (self.samples as f64 - 1.0)).sqrt()
        } else {
            0.0
        }
    }
}

/// The windows of fio's averaged logs (`log_avg_msec`): one entry per
/// window that saw at least one completion, with the window's end (ms since
/// the job's start), the mean completion latency (ns), the IOs completed
/// and their bytes, and the mean time before their issue. Stored as
/// parallel vectors (28 bytes per entry).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowSeries {
    end_ms: Vec<u32>,
    avg_ns: Vec<u64>,
    ios: Vec<u32>,
    bytes: Vec<u64>,
    /// The mean time before the window's IOs were issued, ns (their
    /// submission latency, or a synchronous call's preparation): their
    /// total latency is `avg_ns` plus it.
    #[serde(default)]
    before_ns: Vec<u32>,
}

/// One window of a [`WindowSeries`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// End of the window, ms since the job's start.
    pub end_ms: u32,
    /// Mean completion latency of the window's IOs, ns.
    pub avg_ns: u64,
    /// IOs completed in the window.
    pub ios: u32,
    /// Bytes those IOs moved.
    pub bytes: u64,
    /// Mean time before their issue, ns (see [`WindowSeries`]).
    pub before_ns: u32,
}

impl WindowSeries {
    pub fn len(&self) -> usize {
        self.end_ms.len()
    }
    pub fn is_empty(&self) -> bool {
        self.end_ms.is_empty()
    }
    pub fn push(&mut self, w: Window) {
        self.end_ms.push(w.end_ms);
        self.avg_ns.push(w.avg_ns);
        self.ios.push(w.ios);
        self.bytes.push(w.bytes);
        self.before_ns.push(w.before_ns);
    }
    /// `(window end ms, average latency ns)` pairs in time order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.end_ms.iter().copied().zip(self.avg_ns.iter().copied())
    }
    /// Every window whole, in time order.
    pub fn windows(&self) -> impl Iterator<Item = Window> + '_ {
        (0..self.len()).map(|i| Window {
            end_ms: self.end_ms[i],
            avg_ns: self.avg_ns[i],
            ios: self.ios[i],
            bytes: self.bytes[i],
            before_ns: self.before_ns.get(i).copied().unwrap_or(0),
        })
    }
    /// The average latencies (ns) alone, in time order.
    pub fn values(&self) -> &[u64] {
        &self.avg_ns
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct DirStats {
    /// Completion latency (fio's `clat`).
    pub(crate) lat: LatAcc,
    /// Submission latency (`slat`, engines that queue) and total latency
    /// (`lat`, issue preparation to completion).
    pub(crate) slat: LatAcc,
    pub(crate) tlat: LatAcc,
    pub(crate) io_bytes: u64,
    // Open latency-log window.
    win_end_ns: Ns,
    win_idx: u64,
    win_sum: u128,
    win_count: u64,
    win_bytes: u64,
    win_before: u128,
    pub(crate) series: WindowSeries,
    // 500 ms bandwidth / IOPS sampling.
    sampled_bytes: u64,
    sampled_ios: u64,
    pub(crate) bw: RunningStat,
    pub(crate) iops: RunningStat,
}

impl DirStats {
    /// A copy without the closed latency-log windows.
    fn without_series(&self) -> Self {
        DirStats {
            lat: self.lat.clone(),
            slat: self.slat.clone(),
            tlat: self.tlat.clone(),
            io_bytes: self.io_bytes,
            win_end_ns: self.win_end_ns,
            win_idx: self.win_idx,
            win_sum: self.win_sum,
            win_count: self.win_count,
            win_bytes: self.win_bytes,
            win_before: self.win_before,
            series: WindowSeries::default(),
            sampled_bytes: self.sampled_bytes,
            sampled_ios: self.sampled_ios,
            bw: self.bw,
            iops: self.iops,
        }
    }
}

/// Statistics of one fio job, fed by the simulator as IOs complete.
///
/// Directions are independent; completions must arrive in non-decreasing
/// `now` order (true for a discrete-event loop). A completion earlier than
/// the open window is folded into that window.
#[derive(Clone, Debug)]
pub struct JobStats {
    start_ns: Ns,
    window_ns: Ns,
    bw_sample_ns: Ns,
    iops_sample_ns: Ns,
    next_bw_ns: Ns,
    next_iops_ns: Ns,
    /// The earlier of the two.
    next_sample_ns: Ns,
    last_ns: Ns,
    end_ns: Option<Ns>,
    pub(crate) dirs: [DirStats; 3],
    pub(crate) sync: LatAcc,
    /// Host time the job's thread spent on its direct IOs (fio's
    /// `usr_cpu` + `sys_cpu` share) and the times it woke for one (fio's
    /// `ctx`).
    pub(crate) host_ns: u64,
    /// User CPU time the job burned (the `cpuio` engine's), fio's
    /// `usr_cpu` share.
    pub(crate) user_ns: u64,
    pub(crate) wakes: u64,
    /// IOs issued per depth bucket (see [`JobStats::record_depth`]).
    pub(crate) depth_map: [u64; 7],
    /// fio's `latency_depth` (the job's `iodepth`), for the report.
    pub latency_depth: u32,
    /// When verify's read-back phase began, and whether the job read in
    /// the phase before it: fio times its IO phase and its verify phase
    /// apart (see [`JobStats::dir_runtime_ns`]).
    verify_from: Option<(Ns, bool)>,
    /// The job's steady-state detection, when it kept its group's
    /// samples (`ss_dur`).
    pub steady: Option<super::SteadyReport>,
    /// fio's job error (`ETIMEDOUT` for a missed latency target), 0 if
    /// none.
    pub error: i32,
    /// The job's latency target, for the report.
    pub latency_target: Option<crate::workload::LatencyTarget>,
    /// zonemode=zbd: the zones the job reset (fio's `nr_zone_resets`);
    /// `None` for a job not zoned.
    pub zone_resets: Option<u64>,
    /// Keep the histograms of `slat` and `lat` (their percentiles are
    /// asked for: `slat_percentiles`, `lat_percentiles`).
    keep_hist: (bool, bool),
    /// fio's completion-latency histogram log (`write_hist_log`), when
    /// asked.
    pub(crate) hist_log: Option<Box<HistLog>>,
}

/// fio's histogram log of one job (`write_hist_log`, `log_hist_msec`,
/// `log_hist_coarseness`), as fio 3.33's `add_clat_sample` keeps it: per
/// direction a window that starts at its first completion in a whole
/// millisecond after the job's start (fio's `hist_last`, unset while 0)
/// and is written, with the completion that reaches `log_hist_msec`
/// past it, as the counts of fio's latency buckets since the last line;
/// the completions after a direction's last line are in no line.
#[derive(Clone, Debug)]
pub(crate) struct HistLog {
    interval_ms: u64,
    pub(crate) coarseness: u32,
    /// Per direction: where the window started (ms) and its bucket
    /// counts so far, sparse.
    last_ms: [u64; 3],
    window: [Vec<(u16, u32)>; 3],
    pub(crate) lines: Vec<HistLine>,
}

/// One line of a histogram log: when (ms since the job's start), the
/// direction, the block size of the completion that wrote it, and the
/// window's non-empty buckets (fio's index, count).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistLine {
    pub ms: u64,
    pub dir: u8,
    pub bs: u64,
    pub bins: Vec<(u16, u32)>,
}

impl HistLog {
    fn add(&mut self, dir: usize, elapsed_ms: u64, clat_ns: u64, bytes: u64) {
        let idx = super::fio_plat::plat_index(clat_ns) as u16;
        let w = &mut self.window[dir];
        match w.binary_search_by_key(&idx, |b| b.0) {
            Ok(at) => w[at].1 = w[at].1.saturating_add(1),
            Err(at) => w.insert(at, (idx, 1)),
        }
        if self.last_ms[dir] == 0 {
            self.last_ms[dir] = elapsed_ms;
        }
        if elapsed_ms - self.last_ms[dir] >= self.interval_ms {
            self.lines.push(HistLine {
                ms: elapsed_ms,
                dir: dir as u8,
                bs: bytes,
                bins: std::mem::take(&mut self.window[dir]),
            });
            self.last_ms[dir] = elapsed_ms;
        }
    }
}

/// What came before an IO's issue, for its total latency (`lat`): its
/// submission latency on an engine that queues (fio's `slat`), or the
/// preparation of a synchronous call, which fio counts in no `slat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Before {
    Slat(u64),
    Prep(u64),
}

impl Before {
    fn ns(self) -> u64 {
        match self {
            Before::Slat(v) | Before::Prep(v) => v,
        }
    }
}

impl JobStats {
    /// `window_ns` is fio's `log_avg_msec` window (10 ms in mmtests),
    /// `bw_sample_ns` fio's `bw_avg_time` and `iops_avg_time` (500 ms
    /// default; see [`JobStats::with_iops_sample`] for the second apart).
    /// Zero values are replaced by 1 ms and 500 ms respectively.
    pub fn new(start_ns: Ns, window_ns: Ns, bw_sample_ns: Ns) -> Self {
        let window_ns = if window_ns == 0 { MS } else { window_ns };
        let bw_sample_ns = if bw_sample_ns == 0 {
            500 * MS
        } else {
            bw_sample_ns
        };
        let mut dirs: [DirStats; 3] = Default::default();
        for d in &mut dirs {
            d.win_end_ns = start_ns.saturating_add(window_ns);
        }
        JobStats {
            start_ns,
            window_ns,
            bw_sample_ns,
            iops_sample_ns: bw_sample_ns,
            next_bw_ns: start_ns.saturating_add(bw_sample_ns),
            next_iops_ns: start_ns.saturating_add(bw_sample_ns),
            next_sample_ns: start_ns.saturating_add(bw_sample_ns),
            last_ns: start_ns,
            end_ns: None,
            verify_from: None,
            dirs,
            sync: LatAcc::default(),
            host_ns: 0,
            user_ns: 0,
            wakes: 0,
            depth_map: [0; 7],
            latency_depth: 0,
            steady: None,
            error: 0,
            latency_target: None,
            zone_resets: None,
            keep_hist: (false, false),
            hist_log: None,
        }
    }

    /// IOPS samples every `ns` (fio's `iops_avg_time`), bandwidth ones
    /// staying at theirs; 0 keeps them together.
    pub fn with_iops_sample(mut self, ns: Ns) -> Self {
        if ns > 0 {
            self.iops_sample_ns = ns;
            self.next_iops_ns = self.start_ns.saturating_add(ns);
            self.next_sample_ns = self.next_bw_ns.min(self.next_iops_ns);
        }
        self
    }

    /// A copy without the closed latency-log windows (a status report
    /// needs the figures, not the series).
    pub fn without_series(&self) -> Self {
        JobStats {
            start_ns: self.start_ns,
            window_ns: self.window_ns,
            bw_sample_ns: self.bw_sample_ns,
            iops_sample_ns: self.iops_sample_ns,
            next_bw_ns: self.next_bw_ns,
            next_iops_ns: self.next_iops_ns,
            next_sample_ns: self.next_sample_ns,
            last_ns: self.last_ns,
            end_ns: self.end_ns,
            dirs: std::array::from_fn(|i| self.dirs[i].without_series()),
            sync: self.sync.clone(),
            host_ns: self.host_ns,
            user_ns: self.user_ns,
            wakes: self.wakes,
            depth_map: self.depth_map,
            latency_depth: self.latency_depth,
            verify_from: self.verify_from,
            steady: self.steady.clone(),
            error: self.error,
            latency_target: self.latency_target,
            zone_resets: self.zone_resets,
            keep_hist: self.keep_hist,
            hist_log: None,
        }
    }

    /// Verify's read-back phase begins at `now`; `reads` says whether the
    /// job also reads in its IO phase.
    pub fn verify_began(&mut self, now: Ns, reads: bool) {
        self.verify_from = Some((now.max(self.start_ns), reads));
    }

    /// A direction's runtime as fio's `thread_main` adds it up: the IO
    /// phase's for the directions the job does, the read-back phase's
    /// added to the reads; the whole runtime without a read-back phase.
    pub fn dir_runtime_ns(&self, dir: Dir) -> Ns {
        let whole = self.runtime_ns();
        let Some((v, reads)) = self.verify_from else {
            return whole;
        };
        let io_phase = v - self.start_ns;
        match dir {
            Dir::Read => whole - io_phase + if reads { io_phase } else { 0 },
            Dir::Write | Dir::Trim => io_phase,
        }
    }

    /// The job's runtime is over: no bandwidth or IOPS sample from here
    /// on (fio samples them while the job runs, so the IOs still in flight
    /// at its end are in no sample).
    pub fn stop_sampling(&mut self) {
        self.next_bw_ns = Ns::MAX;
        self.next_iops_ns = Ns::MAX;
        self.next_sample_ns = Ns::MAX;
    }

    /// An IO issued with `depth` of the job's IOs in flight, itself
    /// included, counted in fio's buckets (`io_u_mark_depth`): 1, 2-3,
    /// 4-7, 8-15, 16-31, 32-63, 64 and more.
    #[inline]
    pub fn record_depth(&mut self, depth: u32) {
        let bucket = (depth.max(1).ilog2() as usize).min(6);
        self.depth_map[bucket] += 1;
    }

    /// The job's thread spent `ns` on a direct IO; `woke`: it had slept
    /// for the completion.
    #[inline]
    /// User CPU time burned (`cpuio`).
    pub fn record_user(&mut self, ns: u64) {
        self.user_ns += ns;
    }

    pub fn record_host(&mut self, ns: u64, woke: bool) {
        self.host_ns += ns;
        self.wakes += u64::from(woke);
    }

    /// One completed IO of `bytes` with completion latency `clat_ns`,
    /// completing at `now`.
    #[inline]
    pub fn record(&mut self, dir: Dir, now: Ns, clat_ns: u64, bytes: u64) {
        self.record_io(dir, now, clat_ns, Before::Prep(0), bytes);
    }

    /// Keeps the histograms of submission latency (`slat`) and of total
    /// latency (`lat`) too, for their percentiles.
    pub fn with_histograms(mut self, slat: bool, lat: bool) -> Self {
        self.keep_hist = (slat, lat);
        self
    }

    /// Keeps fio's histogram log at `(interval, coarseness)` (see
    /// [`HistLine`]).
    pub fn with_hist_log(mut self, log: Option<(Ns, u32)>) -> Self {
        self.hist_log = log.map(|(interval, coarseness)| {
            Box::new(HistLog {
                interval_ms: (interval / MS).max(1),
                coarseness,
                last_ms: [0; 3],
                window: Default::default(),
                lines: Vec::new(),
            })
        });
        self
    }

    /// One completed IO of `bytes` with completion latency `clat_ns`,
    /// completing at `now`, with `before` its issue: its total latency
    /// is `clat_ns` plus that.
    #[inline]
    pub fn record_io(&mut self, dir: Dir, now: Ns, clat_ns: u64, before: Before, bytes: u64) {
        if now >= self.next_sample_ns {
            self.take_samples(now);
        }
        self.last_ns = self.last_ns.max(now);
        let d = &mut self.dirs[dir.index()];
        if now >= d.win_end_ns {
            Self::roll_window(d, self.start_ns, self.window_ns, now);
        }
        d.win_sum += u128::from(clat_ns);
        d.win_before += u128::from(before.ns());
        d.win_count += 1;
        d.win_bytes += bytes;
        d.io_bytes += bytes;
        d.lat.record(clat_ns);
        let (keep_slat, keep_lat) = self.keep_hist;
        if let Before::Slat(v) = before {
            d.slat.record_as(v, keep_slat);
        }
        d.tlat
            .record_as(clat_ns.saturating_add(before.ns()), keep_lat);
        if let Some(h) = self.hist_log.as_mut() {
            h.add(
                dir.index(),
                now.saturating_sub(self.start_ns) / MS,
                clat_ns,
                bytes,
            );
        }
    }

    /// One completed fsync/fdatasync with latency `lat_ns`.
    pub fn record_sync(&mut self, now: Ns, lat_ns: u64) {
        if now >= self.next_sample_ns {
            self.take_samples(now);
        }
        self.last_ns = self.last_ns.max(now);
        self.sync.record(lat_ns);
    }

    /// Closes the open latency windows and every complete bandwidth period
    /// ending at or before `end_ns` (a trailing partial period yields no
    /// sample, as in fio). Runtime = `end_ns − start`.
    pub fn finish(&mut self, end_ns: Ns) {
        if self.end_ns.is_some() {
            return;
        }
        let end_ns = end_ns.max(self.start_ns);
        if end_ns >= self.next_sample_ns {
            self.take_samples(end_ns);
        }
        for d in &mut self.dirs {
            Self::flush_window(d, self.window_ns);
        }
        self.end_ns = Some(end_ns);
    }

    pub fn start_ns(&self) -> Ns {
        self.start_ns
    }
    pub fn window_ns(&self) -> Ns {
        self.window_ns
    }
    pub fn bw_sample_ns(&self) -> Ns {
        self.bw_sample_ns
    }
    pub fn is_finished(&self) -> bool {
        self.end_ns.is_some()
    }
    /// Latest completion time seen (or the start).
    pub fn last_ns(&self) -> Ns {
        self.last_ns
    }
    /// `end − start` once finished, else time up to the last completion.
    pub fn runtime_ns(&self) -> Ns {
        self.end_ns.unwrap_or(self.last_ns) - self.start_ns
    }
    pub fn io_bytes(&self, dir: Dir) -> u64 {
        self.dirs[dir.index()].io_bytes
    }
    pub fn total_ios(&self, dir: Dir) -> u64 {
        self.dirs[dir.index()].lat.n
    }
    pub fn sync_ios(&self) -> u64 {
        self.sync.n
    }
    /// Closed latency-log windows of one direction.
    pub fn windows(&self, dir: Dir) -> &WindowSeries {
        &self.dirs[dir.index()].series
    }
    /// Bandwidth samples (KiB/s) of one direction.
    pub fn bw_stat(&self, dir: Dir) -> RunningStat {
        self.dirs[dir.index()].bw
    }
    /// IOPS samples of one direction.
    pub fn iops_stat(&self, dir: Dir) -> RunningStat {
        self.dirs[dir.index()].iops
    }

    #[cold]
    fn roll_window(d: &mut DirStats, start: Ns, window: Ns, now: Ns) {
        Self::flush_window(d, window);
        let idx = (now - start) / window;
        d.win_idx = idx;
        d.win_end_ns = start.saturating_add((idx + 1).saturating_mul(window));
    }

    fn flush_window(d: &mut DirStats, window: Ns) {
        if d.win_count == 0 {
            return;
        }
        let n = u128::from(d.win_count);
        let avg = ((d.win_sum + n / 2) / n) as u64;
        let end_ms = (u128::from(d.win_idx + 1) * u128::from(window) / u128::from(MS))
            .min(u128::from(u32::MAX)) as u32;
        let before = ((d.win_before + n / 2) / n).min(u128::from(u32::MAX)) as u32;
        d.series.push(Window {
            end_ms,
            avg_ns: avg,
            ios: d.win_count.min(u64::from(u32::MAX)) as u32,
            bytes: d.win_bytes,
            before_ns: before,
        });
        d.win_before = 0;
        d.win_sum = 0;
        d.win_count = 0;
        d.win_bytes = 0;
    }

    /// Takes the bandwidth and IOPS samples of every period boundary
    /// `<= now`, each kind at its own period.
    #[cold]
    fn take_samples(&mut self, now: Ns) {
        // Only the first elapsed boundary can see new bytes; later ones in a
        // gap have zero delta and produce no sample (fio skips them too).
        if now >= self.next_bw_ns {
            let p = self.bw_sample_ns;
            for d in &mut self.dirs {
                let db = d.io_bytes - d.sampled_bytes;
                if db > 0 {
                    let bw = u128::from(db) * u128::from(SEC) / u128::from(p) / 1024;
                    d.bw.add(bw.min(u128::from(u64::MAX)) as u64);
                    d.sampled_bytes = d.io_bytes;
                }
            }
            let k = (now - self.start_ns) / p;
            self.next_bw_ns = self.start_ns.saturating_add((k + 1).saturating_mul(p));
        }
        if now >= self.next_iops_ns {
            let p = self.iops_sample_ns;
            for d in &mut self.dirs {
                let di = d.lat.n - d.sampled_ios;
                if di > 0 {
                    let iops = u128::from(di) * u128::from(SEC) / u128::from(p);
                    d.iops.add(iops.min(u128::from(u64::MAX)) as u64);
                    d.sampled_ios = d.lat.n;
                }
            }
            let k = (now - self.start_ns) / p;
            self.next_iops_ns = self.start_ns.saturating_add((k + 1).saturating_mul(p));
        }
        self.next_sample_ns = self.next_bw_ns.min(self.next_iops_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_window_ios_average_together_and_empty_windows_are_skipped() {
        let mut s = JobStats::new(0, 10 * MS, 500 * MS);
        s.record(Dir::Read, MS, 100, 4096);
        s.record(Dir::Read, 9 * MS, 201, 4096); // avg (100+201)/2 = 150.5 -> 151
        // window [10,20) empty
        s.record(Dir::Read, 25 * MS, 1000, 4096);
        s.record(Dir::Read, 29_999_999, 3000, 4096);
        s.record(Dir::Read, 30 * MS, 7, 4096); // boundary belongs to next window
        s.record(Dir::Write, 5 * MS, 50, 4096);
        s.finish(40 * MS);
        let r: Vec<_> = s.windows(Dir::Read).iter().collect();
        assert_eq!(r, vec![(10, 151), (30, 2000), (40, 7)]);
        let w: Vec<_> = s.windows(Dir::Write).iter().collect();
        assert_eq!(w, vec![(10, 50)]);
        assert!(s.windows(Dir::Trim).is_empty());
    }

    #[test]
    fn window_offset_by_job_start() {
        let mut s = JobStats::new(5 * SEC, 10 * MS, 500 * MS);
        s.record(Dir::Write, 5 * SEC + 15 * MS, 10, 512);
        s.finish(6 * SEC);
        assert_eq!(
            s.windows(Dir::Write).iter().collect::<Vec<_>>(),
            vec![(20, 10)]
        );
        assert_eq!(s.runtime_ns(), SEC);
    }

    #[test]
    fn bw_samples_follow_500ms_boundaries() {
        let mut s = JobStats::new(0, 10 * MS, 500 * MS);
        // Period 0: 4 x 1 MiB.
        for i in 0..4 {
            s.record(Dir::Write, i * 100 * MS, 1000, 1 << 20);
        }
        // Completion exactly at 500 ms belongs to period 1; 2 MiB in period 1.
        s.record(Dir::Write, 500 * MS, 1000, 1 << 20);
        s.record(Dir::Write, 999 * MS, 1000, 1 << 20);
        // Periods 2 and 3 idle, period 4 has 1 MiB, partial period 5 dropped.
        s.record(Dir::Write, 2100 * MS, 1000, 1 << 20);
        s.record(Dir::Write, 2600 * MS, 1000, 1 << 20);
        s.finish(2700 * MS);
        let bw = s.bw_stat(Dir::Write);
        // 4 MiB / 0.5 s = 8192 KiB/s; 2 MiB -> 4096; 1 MiB -> 2048.
        assert_eq!(bw.samples, 3);
        assert_eq!(bw.min, 2048);
        assert_eq!(bw.max, 8192);
        assert!((bw.mean - (8192.0 + 4096.0 + 2048.0) / 3.0).abs() < 1e-9);
        let m = bw.mean;
        let hand = (((8192.0 - m) * (8192.0 - m)
            + (4096.0 - m) * (4096.0 - m)
            + (2048.0 - m) * (2048.0 - m))
            / 2.0f64)
            .sqrt();
        assert!((bw.dev() - hand).abs() < 1e-9);
        let iops = s.iops_stat(Dir::Write);
        assert_eq!((iops.samples, iops.min, iops.max), (3, 2, 8));
        assert_eq!(s.bw_stat(Dir::Read).samples, 0);
    }

    #[test]
    fn bw_sample_at_finish_boundary_is_kept() {
        let mut s = JobStats::new(0, 10 * MS, 500 * MS);
        s.record(Dir::Read, 100 * MS, 10, 3000);
        s.finish(500 * MS);
        let bw = s.bw_stat(Dir::Read);
        assert_eq!(bw.samples, 1);
        assert_eq!(bw.min, 3000 * 2 / 1024); // floor(5.859) = 5
    }

    #[test]
    fn clat_stddev_matches_hand_computation() {
        let mut s = JobStats::new(0, 10 * MS, 500 * MS);
        for (i, v) in [2u64, 4, 4, 4, 5, 5, 7, 9].iter().enumerate() {
            s.record(Dir::Read, i as u64, *v, 4096);
        }
        let l = &s.dirs[0].lat;
        assert_eq!((l.n, l.min, l.max), (8, 2, 9));
        assert_eq!(l.mean(), 5.0);
        // Σ(x−5)² = 32, sample variance 32/7.
        assert!((l.stddev() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        let mut one = LatAcc::default();
        one.record(42);
        assert_eq!(one.stddev(), 0.0);
    }

    #[test]
    fn running_stat_merges() {
        let mut a = RunningStat::default();
        let mut b = RunningStat::default();
        for v in [10, 20, 30] {
            a.add(v);
        }
        for v in [100, 200] {
            b.add(v);
        }
        let mut sum = a;
        sum.merge_sum(&b);
        assert_eq!((sum.min, sum.max, sum.samples), (110, 230, 5));
        assert!((sum.mean - 170.0).abs() < 1e-9);
        let mut pool = a;
        pool.merge_pooled(&b);
        assert_eq!((pool.min, pool.max, pool.samples), (10, 200, 5));
        assert!((pool.mean - 72.0).abs() < 1e-9);
        let mut all = RunningStat::default();
        for v in [10, 20, 30, 100, 200] {
            all.add(v);
        }
        assert!((pool.dev() - all.dev()).abs() < 1e-9);
        let mut e = RunningStat::default();
        e.merge_sum(&RunningStat::default());
        assert_eq!(e.samples, 0);
    }
}
