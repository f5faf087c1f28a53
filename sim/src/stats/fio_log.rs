//! fio's averaged log files (`write_bw_log`, `write_iops_log`,
//! `write_lat_log` under `log_avg_msec`) from a job's windows.
//!
//! One line per window and direction that saw a completion, in time order,
//! reads before writes before trims within a window:
//! `time, value, direction, 0, 0` — the window's end in ms since the
//! job's start, the value, 0/1/2 for read/write/trim, and the block size
//! and offset fio 3.33 writes as 0 for an averaged entry.
//! Values:
//!
//! - bandwidth: the window's bytes over its length, KiB/s;
//! - IOPS: the window's completions over its length, per second;
//! - completion latency (`clat`), submission latency (`slat`) and total
//!   latency (`lat`, their sum; a synchronous call's preparation and its
//!   `clat` without one): the mean of the window's IOs, ns. The `slat`
//!   log is empty for a synchronous engine, as fio's is.
//!
//! Where fio closes a window at the first sample past its end, these
//! windows are aligned to `start + k·window` (the collector's rule, see
//! [`JobStats`](super::JobStats)). At the job's end, as fio 3.33's logs
//! end (checked on this machine): the bandwidth and IOPS logs have the
//! windows that ended before the job did (fio samples them while the job
//! runs); the latency logs have those too, then one line at the job's end
//! for everything after, the IOs still in flight at the end included.
//! With `log_offset=1` a line has a sixth column, the offset, 0 for an
//! averaged entry as fio writes it.

use std::fmt::Write as _;

use super::Dir;
use super::report::JobSeries;
use crate::time::MS;

/// One of fio's log kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    /// `write_bw_log`: KiB/s.
    Bw,
    /// `write_iops_log`: IOs per second.
    Iops,
    /// `write_lat_log`, its `clat` file: ns.
    Clat,
    /// `write_lat_log`, its `lat` file: ns.
    Lat,
    /// `write_lat_log`, its `slat` file: ns (empty for a synchronous
    /// engine).
    Slat,
    /// `write_hist_log`: completion-latency histograms, fio's buckets.
    Hist,
}

impl LogKind {
    /// The kind's part of fio's file name (`PREFIX_bw.1.log`).
    pub fn suffix(self) -> &'static str {
        match self {
            LogKind::Bw => "bw",
            LogKind::Iops => "iops",
            LogKind::Clat => "clat",
            LogKind::Lat => "lat",
            LogKind::Slat => "slat",
            LogKind::Hist => "clat_hist",
        }
    }
}

/// fio's file name for a log of `prefix`: `PREFIX_KIND.N.log` for job `N`
/// (1-based, clones counted) with `per_job_logs` on (fio's default), or
/// `PREFIX_KIND.log` shared by the jobs of that prefix with it off.
pub fn log_file_name(prefix: &str, kind: LogKind, job_number: Option<usize>) -> String {
    match job_number {
        Some(n) => format!("{prefix}_{}.{n}.log", kind.suffix()),
        None => format!("{prefix}_{}.log", kind.suffix()),
    }
}

/// Appends the log lines of `kind` for one job's windows to `out`;
/// `offset`: fio's `log_offset=1` column.
pub fn write_log(out: &mut String, series: &JobSeries, kind: LogKind, offset: bool) {
    if kind == LogKind::Slat && !series.slat {
        return;
    }
    if kind == LogKind::Hist {
        write_hist(out, series);
        return;
    }
    let window_ms = (series.window_ns / MS).max(1);
    let end = series.end_ms;
    let mut lines: Vec<(u64, usize, u64)> = Vec::new();
    for d in Dir::ALL {
        // The latency windows from the job's end on, as one.
        let (mut tail_sum, mut tail_ios) = (0u128, 0u64);
        for w in series.dirs[d.index()].windows() {
            let t = u64::from(w.end_ms);
            let value = match kind {
                LogKind::Bw => per_second(w.bytes, window_ms) / 1024,
                LogKind::Iops => per_second(u64::from(w.ios), window_ms),
                LogKind::Clat => w.avg_ns,
                LogKind::Lat => w.avg_ns + u64::from(w.before_ns),
                LogKind::Slat => u64::from(w.before_ns),
                // Written by `write_hist` above.
                LogKind::Hist => return,
            };
            if t < end {
                lines.push((t, d.index(), value));
            } else if matches!(kind, LogKind::Clat | LogKind::Lat | LogKind::Slat) {
                tail_sum += u128::from(value) * u128::from(w.ios);
                tail_ios += u64::from(w.ios);
            }
        }
        if tail_ios > 0 {
            let n = u128::from(tail_ios);
            lines.push((end, d.index(), ((tail_sum + n / 2) / n) as u64));
        }
    }
    // Each direction is in time order already; a stable sort by time
    // keeps read, write, trim within a window.
    lines.sort_by_key(|&(t, _, _)| t);
    let offset = if offset { "0, " } else { "" };
    for (t, dir, value) in lines {
        let _ = writeln!(out, "{t}, {value}, {dir}, 0, {offset}0");
    }
}

/// The histogram log's lines, as fio 3.33 writes them: `ms, direction,
/// block size, ` then fio's 1856 latency buckets, merged `2^coarseness`
/// at a time, each the count since the direction's last line.
fn write_hist(out: &mut String, series: &JobSeries) {
    let Some((coarseness, lines)) = &series.hist else {
        return;
    };
    let columns = super::fio_plat::PLAT_NR >> coarseness;
    let mut counts = vec![0u64; columns];
    for l in lines {
        counts.iter_mut().for_each(|c| *c = 0);
        for &(idx, n) in &l.bins {
            counts[usize::from(idx) >> coarseness] += u64::from(n);
        }
        let _ = write!(out, "{}, {}, {}", l.ms, l.dir, l.bs);
        for c in &counts {
            let _ = write!(out, ", {c}");
        }
        out.push('\n');
    }
}

/// `count` per `window_ms` as a rate per second, rounded to nearest.
fn per_second(count: u64, window_ms: u64) -> u64 {
    let r = (u128::from(count) * 1000 + u128::from(window_ms) / 2) / u128::from(window_ms);
    r.min(u128::from(u64::MAX)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Window, WindowSeries};

    fn series() -> JobSeries {
        let mut r = WindowSeries::default();
        r.push(Window {
            end_ms: 100,
            avg_ns: 80_000,
            ios: 1000,
            bytes: 4096 * 1000,
            before_ns: 0,
        });
        r.push(Window {
            end_ms: 300,
            avg_ns: 90_000,
            ios: 10,
            bytes: 40_960,
            before_ns: 0,
        });
        let mut w = WindowSeries::default();
        w.push(Window {
            end_ms: 100,
            avg_ns: 2_000_000,
            ios: 5,
            bytes: 5 << 20,
            before_ns: 0,
        });
        JobSeries {
            name: "j".into(),
            groupid: 0,
            window_ns: 100 * MS,
            dirs: [r, w, WindowSeries::default()],
            end_ms: 1_000,
            slat: false,
            hist: None,
        }
    }

    #[test]
    fn values_and_order_follow_fio_units() {
        let s = series();
        let mut bw = String::new();
        write_log(&mut bw, &s, LogKind::Bw, false);
        // 4,096,000 B in 100 ms = 40,000 KiB/s; 5 MiB in 100 ms = 51,200.
        assert_eq!(
            bw,
            "100, 40000, 0, 0, 0\n100, 51200, 1, 0, 0\n300, 400, 0, 0, 0\n"
        );
        let mut iops = String::new();
        write_log(&mut iops, &s, LogKind::Iops, false);
        assert_eq!(
            iops,
            "100, 10000, 0, 0, 0\n100, 50, 1, 0, 0\n300, 100, 0, 0, 0\n"
        );
        let (mut clat, mut lat) = (String::new(), String::new());
        write_log(&mut clat, &s, LogKind::Clat, false);
        write_log(&mut lat, &s, LogKind::Lat, false);
        assert_eq!(clat, lat);
        let mut slat = String::new();
        write_log(&mut slat, &s, LogKind::Slat, false);
        assert_eq!(slat, "");
        assert!(clat.starts_with("100, 80000, 0, 0, 0\n100, 2000000, 1,"));
    }

    /// fio 3.33's logs of a 2 s job at 500 ms windows end at 1500 ms for
    /// bandwidth and IOPS and at 2000 ms for latency; a 777 ms job's
    /// latency log ends with a line at 777.
    #[test]
    fn logs_end_as_fios_do_at_the_jobs_end() {
        let mut s = series();
        s.end_ms = 300;
        let mut bw = String::new();
        write_log(&mut bw, &s, LogKind::Bw, false);
        assert_eq!(bw, "100, 40000, 0, 0, 0\n100, 51200, 1, 0, 0\n");
        let mut clat = String::new();
        write_log(&mut clat, &s, LogKind::Clat, false);
        assert!(clat.ends_with("300, 90000, 0, 0, 0\n"), "{clat}");
        // The window in progress at the end and the tail after it, as one
        // line at the end, weighted by their IOs.
        s.end_ms = 250;
        let mut clat = String::new();
        write_log(&mut clat, &s, LogKind::Clat, false);
        assert!(clat.ends_with("250, 90000, 0, 0, 0\n"), "{clat}");
        s.end_ms = 50;
        let mut clat = String::new();
        write_log(&mut clat, &s, LogKind::Clat, false);
        // (80,000 × 1000 + 90,000 × 10) / 1010 for reads.
        assert_eq!(clat, "50, 80099, 0, 0, 0\n50, 2000000, 1, 0, 0\n");
        let mut iops = String::new();
        write_log(&mut iops, &s, LogKind::Iops, false);
        assert_eq!(iops, "");
        // log_offset=1: fio's sixth column, 0 for an averaged entry.
        let mut bw = String::new();
        write_log(&mut bw, &series(), LogKind::Bw, true);
        assert!(bw.starts_with("100, 40000, 0, 0, 0, 0\n"), "{bw}");
    }

    #[test]
    fn file_names_are_fios() {
        assert_eq!(log_file_name("x", LogKind::Bw, Some(3)), "x_bw.3.log");
        assert_eq!(log_file_name("d/x", LogKind::Clat, None), "d/x_clat.log");
    }

    #[test]
    fn slat_and_lat_logs_carry_the_time_before_issue() {
        let mut s = series();
        // A synchronous engine: no slat log; lat is clat plus the call's
        // preparation.
        let mut r = WindowSeries::default();
        r.push(Window {
            end_ms: 100,
            avg_ns: 80_000,
            ios: 10,
            bytes: 40_960,
            before_ns: 70,
        });
        s.dirs = [r, WindowSeries::default(), WindowSeries::default()];
        let log = |s: &JobSeries, kind| {
            let mut out = String::new();
            write_log(&mut out, s, kind, false);
            out
        };
        assert_eq!(log(&s, LogKind::Slat), "");
        assert_eq!(log(&s, LogKind::Lat), "100, 80070, 0, 0, 0\n");
        // An engine that queues: its slat log has the windows' means.
        s.slat = true;
        assert_eq!(log(&s, LogKind::Slat), "100, 70, 0, 0, 0\n");
        assert_eq!(log(&s, LogKind::Clat), "100, 80000, 0, 0, 0\n");
    }
}
