//! fio's steady-state detection (`ss`, `ss_dur`, `ss_ramp`), as fio
//! 3.33's `steadystate.c` keeps it (`steadystate_check`, run by fio's
//! helper thread once a second of the run):
//!
//! * each tick, a running job's IOs and bytes completed since the last
//!   tick, over the milliseconds since it, are its IOPS and bandwidth; a
//!   reporting group (`group_reporting`) sums its jobs', and its last job
//!   keeps the group's samples;
//! * a job's samples count once `ss_ramp` and one more second have passed
//!   since it started (fio's helper ticks lead a job's clock, so a tick
//!   exactly then is still in the ramp here);
//! * with `ss_dur` samples kept, the criterion is their largest deviation
//!   from their mean (`iops`, `bw`) or the slope of their least-squares
//!   line (`iops_slope`, `bw_slope`), as a percentage of the mean when
//!   the limit ends in `%`; below the limit, steady state is attained and
//!   the job (or its whole group) ends as its runtime would end it.

use super::World;
use super::job::JobState;
use crate::block::Policy;
use crate::fio::{Steady, SteadyMetric};
use crate::stats::SteadyReport;
use crate::time::Ns;

/// fio 3.33's helper thread checks once a second.
pub(crate) const TICK_NS: Ns = 1_000_000_000;
const MS: Ns = 1_000_000;

/// A job's steady-state bookkeeping.
#[derive(Clone, Debug)]
pub(crate) struct SteadyState {
    pub spec: Steady,
    /// This job keeps its group's samples (the group's last job, or every
    /// job without group reporting).
    pub holder: bool,
    pub ramp_over: bool,
    pub prev_ios: u64,
    pub prev_bytes: u64,
    pub prev_at: Ns,
    pub window: SteadyWindow,
    pub attained: bool,
}

/// The last `ss_dur` per-second samples and the criterion over them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SteadyWindow {
    /// Samples, oldest first, at most `ss_dur` of them.
    pub iops: Vec<u64>,
    pub bw: Vec<u64>,
    pub criterion: f64,
    pub max_deviation: f64,
    pub slope: f64,
}

impl SteadyWindow {
    /// Adds a second's `iops` and `bw`; once `spec.dur_s` samples are
    /// kept, whether the criterion is below the limit.
    pub fn on_sample(&mut self, spec: &Steady, iops: u64, bw: u64) -> bool {
        let dur = spec.dur_s as usize;
        if dur == 0 {
            return false;
        }
        if self.iops.len() == dur {
            self.iops.remove(0);
            self.bw.remove(0);
        }
        self.iops.push(iops);
        self.bw.push(bw);
        if self.iops.len() < dur {
            return false;
        }
        let ys = match spec.metric {
            SteadyMetric::Iops => &self.iops,
            SteadyMetric::Bw => &self.bw,
        };
        let n = dur as u64;
        let sum_y: u64 = ys.iter().sum();
        if spec.slope {
            let sum_x = n * (n - 1) / 2;
            let sum_x_sq = (n - 1) * n * (2 * n - 1) / 6;
            let sum_xy: u64 = ys.iter().zip(0u64..).map(|(&y, x)| x * y).sum();
            let (nf, sx) = (n as f64, sum_x as f64);
            self.slope =
                (sum_xy as f64 - sx * sum_y as f64 / nf) / (sum_x_sq as f64 - sx * sx / nf);
            // fio divides by the mean in whole units here.
            self.criterion = if spec.pct {
                100.0 * self.slope / (sum_y / n) as f64
            } else {
                self.slope
            };
            self.criterion.abs() < spec.limit
        } else {
            let mean = sum_y as f64 / n as f64;
            self.max_deviation = ys
                .iter()
                .map(|&y| (y as f64 - mean).abs())
                .fold(0.0, f64::max);
            self.criterion = if spec.pct {
                100.0 * self.max_deviation / mean
            } else {
                self.max_deviation
            };
            self.criterion < spec.limit
        }
    }
}

impl SteadyState {
    /// Fresh bookkeeping for a job with `spec`.
    pub(crate) fn new(spec: Steady, holder: bool) -> SteadyState {
        SteadyState {
            spec,
            holder,
            ramp_over: false,
            prev_ios: 0,
            prev_bytes: 0,
            prev_at: 0,
            window: SteadyWindow::default(),
            attained: false,
        }
    }

    /// What the report shows of it, if this job kept the samples.
    pub(crate) fn report(&self) -> Option<SteadyReport> {
        if !self.holder {
            return None;
        }
        let dur = self.spec.dur_s as usize;
        let pad = |v: &[u64]| {
            let mut v = v.to_vec();
            v.resize(dur, 0);
            v
        };
        Some(SteadyReport {
            ss: self.spec.name(),
            duration: self.spec.dur_s,
            attained: self.attained,
            criterion: self.window.criterion,
            pct: self.spec.pct,
            what: format!(
                "{} {}",
                self.spec.metric.name(),
                if self.spec.slope { "slope" } else { "mean dev" }
            ),
            max_deviation: self.window.max_deviation,
            slope: self.window.slope,
            iops: pad(&self.window.iops),
            bw: pad(&self.window.bw),
        })
    }
}

impl<P: Policy> World<P> {
    /// The jobs' steady-state bookkeeping, before the run: the last job
    /// with `ss_dur` of each reporting group keeps the group's samples
    /// (fio's `steadystate_setup`), every job without group reporting its
    /// own. The first tick is one second into the run.
    pub(crate) fn steady_setup(&mut self) {
        let n = self.jobs.len();
        let mut any = false;
        for j in 0..n {
            let Some(spec) = self.jobs[j].plan.steady else {
                continue;
            };
            any = true;
            let plan = &self.jobs[j].plan;
            let holder = !plan.group_reporting
                || !self.jobs[j + 1..]
                    .iter()
                    .take_while(|o| o.plan.groupid == plan.groupid)
                    .any(|o| o.plan.steady.is_some());
            self.jobs[j].steady = Some(SteadyState::new(spec, holder));
        }
        if any {
            self.q.push(TICK_NS, super::Ev::SteadyTick);
        }
    }

    /// fio's `steadystate_check`: one tick of every job with steady-state
    /// detection, in job order, a reporting group's figures summed.
    pub(crate) fn steady_tick(&mut self, now: Ns) {
        let (mut group_iops, mut group_bw, mut group_over) = (0u64, 0u64, 0u32);
        let mut prev_gid = None;
        for j in 0..self.jobs.len() {
            let job = &mut self.jobs[j];
            let group_reporting = job.plan.group_reporting;
            let gid = job.plan.groupid;
            let running = job.state == JobState::Running;
            let (ios, bytes, start) = (job.done_ios, job.done_bytes, job.start_ns);
            let Some(ss) = job.steady.as_mut() else {
                continue;
            };
            if !running || ss.attained {
                continue;
            }
            if !group_reporting || prev_gid != Some(gid) {
                (group_iops, group_bw, group_over) = (0, 0, 0);
            }
            prev_gid = Some(gid);
            if !ss.ramp_over && (ss.spec.ramp_ns == 0 || now - start > ss.spec.ramp_ns + TICK_NS) {
                ss.ramp_over = true;
            }
            let rate_ms = (now - ss.prev_at) / MS;
            ss.prev_at = now;
            if ss.ramp_over && rate_ms > 0 {
                group_bw += 1000 * (bytes - ss.prev_bytes) / rate_ms;
                group_iops += 1000 * (ios - ss.prev_ios) / rate_ms;
                group_over += 1;
            }
            ss.prev_ios = ios;
            ss.prev_bytes = bytes;
            if (group_reporting && !ss.holder) || group_over == 0 {
                continue;
            }
            let spec = ss.spec;
            if ss.window.on_sample(&spec, group_iops, group_bw) {
                self.steady_attained(now, j, group_reporting, gid);
            }
        }
    }

    /// Job `j` attained steady state: it ends, and with group reporting
    /// every job of its group does (fio's `fio_mark_td_terminate`).
    fn steady_attained(&mut self, now: Ns, j: usize, group: bool, gid: u32) {
        for k in 0..self.jobs.len() {
            if k == j || (group && self.jobs[k].plan.groupid == gid) {
                if let Some(ss) = self.jobs[k].steady.as_mut() {
                    ss.attained = true;
                }
                self.on_deadline(now, k as u32);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(metric: SteadyMetric, slope: bool, pct: bool, limit: f64, dur_s: u32) -> Steady {
        Steady {
            metric,
            slope,
            pct,
            limit,
            dur_s,
            ramp_ns: 0,
        }
    }

    #[test]
    fn deviation_is_the_largest_distance_from_the_mean() {
        // fio 3.33, ss=iops:50 ss_dur=3: iops 5004, 5004, 5002 give a
        // criterion of 1.333333.
        let s = spec(SteadyMetric::Iops, false, false, 50.0, 3);
        let mut w = SteadyWindow::default();
        assert!(!w.on_sample(&s, 5004, 0));
        assert!(!w.on_sample(&s, 5004, 0));
        assert!(w.on_sample(&s, 5002, 0));
        assert!((w.criterion - 1.333_333).abs() < 1e-5, "{}", w.criterion);
        assert_eq!(w.slope, 0.0);
    }

    #[test]
    fn slope_is_the_least_squares_line_over_the_mean() {
        // fio 3.33, ss=bw_slope:1% ss_dur=3: bw 20484561, 20480000,
        // 20500500 give slope 7969.5 and criterion 0.038898 %.
        let s = spec(SteadyMetric::Bw, true, true, 1.0, 3);
        let mut w = SteadyWindow::default();
        for bw in [20_484_561, 20_480_000] {
            assert!(!w.on_sample(&s, 0, bw));
        }
        assert!(w.on_sample(&s, 0, 20_500_500));
        assert!((w.slope - 7969.5).abs() < 1e-9, "{}", w.slope);
        assert!((w.criterion - 0.038_898).abs() < 1e-6, "{}", w.criterion);
    }

    #[test]
    fn the_window_slides_and_a_ramp_up_is_not_steady() {
        let s = spec(SteadyMetric::Iops, false, true, 10.0, 3);
        let mut w = SteadyWindow::default();
        let attained: Vec<bool> = [100, 200, 300, 400, 410, 405, 400]
            .into_iter()
            .map(|v| w.on_sample(&s, v, 0))
            .collect();
        assert_eq!(
            attained,
            [false, false, false, false, false, true, true],
            "{:?}",
            w
        );
        assert_eq!(w.iops, [410, 405, 400]);
    }
}
