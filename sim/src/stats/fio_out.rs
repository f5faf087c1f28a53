//! fio-like normal (human) and JSON output of a [`RunReport`].

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::time::MS;

use super::Dir;
use super::report::{DirReport, JobReport, LAT_BUCKETS, LatSummary, RunReport, Shown, Unified};

/// Units of fio's `num2str` (lib/num2str.h) that the reports use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum N2sUnit {
    None,
    PerSec,
    Byte,
    BytePerSec,
}

/// fio's `num2str`: shortens `num` to at most `maxlen` digits with an SI
/// (`pow2 == false`) or IEC prefix, keeping as many decimals as fit and
/// with fio's own carry rounding. `base` is the multiplier of `num`.
pub fn num2str(num: u64, maxlen: usize, base: u64, pow2: bool, unit: N2sUnit) -> String {
    const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let prefixes = if pow2 { &IEC } else { &SI };
    let unit_str = match unit {
        N2sUnit::None => "",
        N2sUnit::PerSec => "/s",
        N2sUnit::Byte => "B",
        N2sUnit::BytePerSec => "B/s",
    };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let mut num = num;
    let mut post = 0usize;
    let mut b = base;
    while b > 1 {
        b /= thousand;
        post += 1;
    }
    let mut modulo: Option<u64> = None;
    let mut carry = false;
    while post < SI.len() {
        if digits(num) <= maxlen {
            break;
        }
        let m = num % thousand;
        modulo = Some(m);
        num /= thousand;
        carry = m >= thousand / 2;
        post += 1;
    }
    if post >= SI.len() {
        post = 0;
    }
    let Some(m) = modulo else {
        return format!("{num}{}{unit_str}", prefixes[post]);
    };
    let len = digits(num);
    if maxlen as i64 - len as i64 <= 1 {
        if carry {
            num += 1;
        }
        return format!("{num}{}{unit_str}", prefixes[post]);
    }
    let prec = maxlen - len - 1;
    let frac = format!("{:.*}", prec, m as f64 / thousand as f64);
    if frac.starts_with('1') {
        num += 1;
    }
    let decimals = frac.get(2..).unwrap_or("");
    format!("{num}.{decimals}{}{unit_str}", prefixes[post])
}

fn digits(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    n
}

const SIG_FIGS: usize = 4;

/// fio's human-readable summary (`--output-format=normal`), restricted to
/// what the simulator models: per entry the header line, per direction the
/// IOPS/BW line, the `slat` (an engine that queues), `clat` and `lat`
/// min/max/avg/stdev lines, their percentiles as the job asks (fio's
/// layout), `bw` and `iops` sample lines, then fsync/fdatasync latency;
/// finally the "Run status group" lines. No pid, date, cpu, IO-depth or
/// latency-bucket lines (nothing is measured for them). `kb_base=1024`
/// and `unit_base` bytes are assumed.
pub fn normal_output(r: &RunReport) -> String {
    let mut out = String::new();
    for j in &r.jobs {
        write_job(&mut out, j);
    }
    for g in &r.groups {
        let _ = writeln!(out, "\nRun status group {} (all jobs):", g.groupid);
        // A group of unified_rw_reporting=mixed entries only has its
        // MIXED line; =both adds it after the others.
        let only_mixed = r
            .jobs
            .iter()
            .filter(|j| j.groupid == g.groupid)
            .all(|j| j.unified == Unified::Mixed);
        let dirs = g
            .dirs
            .iter()
            .filter(|_| !only_mixed)
            .zip(["   READ", "  WRITE", "   TRIM"]);
        for (d, label) in dirs.chain(g.mixed.iter().zip(["  MIXED"])) {
            if d.max_run_ms == 0 {
                continue;
            }
            let rate = |v: u64, p2: bool| num2str(v, SIG_FIGS, 1, p2, N2sUnit::BytePerSec);
            let io = |p2: bool| num2str(d.io_bytes, SIG_FIGS, 1, p2, N2sUnit::Byte);
            let _ = writeln!(
                out,
                "{}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
                label,
                rate(d.agg, true),
                rate(d.agg, false),
                rate(d.min_bw, true),
                rate(d.max_bw, true),
                rate(d.min_bw, false),
                rate(d.max_bw, false),
                io(true),
                io(false),
                d.min_run_ms,
                d.max_run_ms
            );
        }
    }
    out
}

fn write_job(out: &mut String, j: &JobReport) {
    let any_io = j.dirs.iter().any(|d| d.io_bytes > 0 || d.total_ios > 0);
    if !any_io {
        return;
    }
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={}): err={:2}",
        j.name, j.groupid, j.members, j.error
    );
    if j.unified != Unified::Mixed {
        for d in Dir::ALL {
            let dr = j.dir(d);
            if dr.io_bytes > 0 && dr.runtime_ms > 0 {
                // fio 3.33 on Linux ends every write line with its zone
                // resets, 0 outside zonemode=zbd.
                let zones = (d == Dir::Write).then(|| j.zone_resets.unwrap_or(0));
                write_dir(out, d.name(), dr, j.shown, zones);
            }
        }
    }
    if let Some(dr) = j
        .mixed
        .as_ref()
        .filter(|d| d.io_bytes > 0 && d.runtime_ms > 0)
    {
        write_dir(out, "mixed", dr, j.shown, None);
    }
    if j.sync.total_ios > 0 && j.sync.lat.n > 0 {
        let _ = writeln!(out, "  fsync/fdatasync/sync_file_range:");
        display_lat(out, "sync", &j.sync.lat);
        if j.shown.clat || j.shown.lat {
            show_percentiles(out, &j.sync.lat.percentiles, "sync", j.shown.precision);
        }
    }
    if let Some(ss) = &j.steady {
        let (bw, iops) = ss.means();
        // fio 3.33 prints the decimal figure of the mean as if it were in
        // KiB/s times a thousand.
        let _ = writeln!(
            out,
            "  steadystate  : attained={}, bw={} ({}), iops={}, {}={:.3}{}",
            if ss.attained { "yes" } else { "no" },
            num2str(bw, SIG_FIGS, 1, true, N2sUnit::BytePerSec),
            num2str(bw * 1000 / 1024, SIG_FIGS, 1, false, N2sUnit::BytePerSec),
            iops,
            ss.what,
            ss.criterion,
            if ss.pct { "%" } else { "" }
        );
    }
}

/// One direction's lines; `zone_resets`: the write line's tail, as fio's
/// `zbd_write_status` words it.
fn write_dir(out: &mut String, name: &str, dr: &DirReport, shown: Shown, zone_resets: Option<u64>) {
    let runt = dr.runtime_ms;
    let bw = dr.bw_bytes;
    let iops = (u128::from(dr.total_ios) * 1000 / u128::from(runt)) as u64;
    let _ = writeln!(
        out,
        "  {}: IOPS={}, BW={} ({})({}/{}msec){}",
        name,
        num2str(iops, SIG_FIGS, 1, false, N2sUnit::None),
        num2str(bw, SIG_FIGS, 1, true, N2sUnit::BytePerSec),
        num2str(bw, SIG_FIGS, 1, false, N2sUnit::BytePerSec),
        num2str(dr.io_bytes, SIG_FIGS, 1, true, N2sUnit::Byte),
        runt,
        zone_resets.map_or(String::new(), |n| format!("; {n} zone resets"))
    );
    // fio's order: the three latencies, then their percentiles.
    if dr.slat.n > 0 {
        display_lat(out, "slat", &dr.slat);
    }
    if dr.clat.n > 0 {
        display_lat(out, "clat", &dr.clat);
    }
    if dr.lat.n > 0 {
        display_lat(out, " lat", &dr.lat);
    }
    if shown.slat && dr.slat.n > 0 {
        show_percentiles(out, &dr.slat.percentiles, "slat", shown.precision);
    }
    if shown.clat && dr.clat.n > 0 {
        show_percentiles(out, &dr.clat.percentiles, "clat", shown.precision);
    }
    if shown.lat && dr.lat.n > 0 {
        show_percentiles(out, &dr.lat.percentiles, "lat", shown.precision);
    }
    let b = &dr.bw_samples;
    if b.samples > 0 {
        let (mut min, mut max, mut mean, mut dev, mut unit) = (b.min, b.max, b.mean, b.dev, "KiB");
        if mean > 1024.0 * 1024.0 {
            min = (min as f64 / 1024.0) as u64;
            max = (max as f64 / 1024.0) as u64;
            mean /= 1024.0;
            dev /= 1024.0;
            unit = "MiB";
        }
        let _ = writeln!(
            out,
            "   bw ({unit:>5}/s): min={min:5}, max={max:5}, per={:3.2}%, avg={mean:5.2}, stdev={dev:5.2}, samples={}",
            dr.bw_agg, b.samples
        );
    }
    let i = &dr.iops_samples;
    if i.samples > 0 {
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
            i.min, i.max, i.mean, i.dev, i.samples
        );
    }
}

/// fio `display_lat`: switches to µs/ms only when min, max and stdev are all
/// large enough.
fn display_lat(out: &mut String, name: &str, l: &LatSummary) {
    let (mut min, mut max, mut mean, mut dev) = (l.min, l.max, l.mean, l.stddev);
    let base = if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        min /= 1_000_000;
        max /= 1_000_000;
        mean /= 1_000_000.0;
        dev /= 1_000_000.0;
        "(msec)"
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        min /= 1000;
        max /= 1000;
        mean /= 1000.0;
        dev /= 1000.0;
        "(usec)"
    } else {
        "(nsec)"
    };
    let _ = writeln!(
        out,
        "    {name} {base}: min={}, max={}, avg={mean:5.2}, stdev={dev:5.2}",
        num2str(min, 6, 1, false, N2sUnit::None),
        num2str(max, 6, 1, false, N2sUnit::None)
    );
}

/// fio `show_clat_percentiles`, the points with `precision` decimals.
fn show_percentiles(out: &mut String, pl: &[(f64, u64)], pre: &str, precision: u32) {
    if pl.is_empty() {
        return;
    }
    let minv = pl.iter().map(|p| p.1).min().unwrap_or(0);
    let maxv = pl.iter().map(|p| p.1).max().unwrap_or(0);
    let (scale, divisor, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (2, 1_000_000u64, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1, 1000, "usec")
    } else {
        (0, 1, "nsec")
    };
    let _ = write!(out, "    {pre} percentiles ({unit}):\n     |");
    let scaled_max = maxv / divisor;
    let tw = if scaled_max == 0 {
        5
    } else {
        digits(scaled_max).max(5)
    };
    let precision = precision as usize;
    let pw = precision + 3;
    let per_line = (80 - 7) / (precision + 10 + tw);
    let len = pl.len();
    for (j, &(p, v)) in pl.iter().enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let last = j == len - 1;
        let mut v = v;
        for _ in 0..scale {
            v = v.div_ceil(1000);
        }
        let _ = write!(
            out,
            " {p:pw$.precision$}th=[{v:>tw$}]{}",
            if last { '\n' } else { ',' }
        );
        if last {
            break;
        }
        if j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

fn num(v: f64) -> Value {
    if v.is_finite() {
        Value::from(v)
    } else {
        Value::from(0.0)
    }
}

fn lat_json(l: &LatSummary, percentiles: bool) -> Value {
    let mut m = Map::new();
    m.insert("min".into(), Value::from(l.min));
    m.insert("max".into(), Value::from(l.max));
    m.insert("mean".into(), num(l.mean));
    m.insert("stddev".into(), num(l.stddev));
    m.insert("N".into(), Value::from(l.n));
    if percentiles && l.n > 0 && !l.percentiles.is_empty() {
        let mut p = Map::new();
        for &(q, v) in &l.percentiles {
            p.insert(format!("{q:.6}"), Value::from(v));
        }
        m.insert("percentile".into(), Value::Object(p));
    }
    Value::Object(m)
}

fn dir_json(d: &DirReport, shown: Shown) -> Value {
    let mut m = Map::new();
    m.insert("io_bytes".into(), Value::from(d.io_bytes));
    m.insert("io_kbytes".into(), Value::from(d.io_bytes >> 10));
    m.insert("bw_bytes".into(), Value::from(d.bw_bytes));
    m.insert("bw".into(), Value::from(d.bw));
    m.insert("iops".into(), num(d.iops));
    m.insert("runtime".into(), Value::from(d.runtime_ms));
    m.insert("total_ios".into(), Value::from(d.total_ios));
    m.insert("short_ios".into(), Value::from(0u64));
    m.insert("drop_ios".into(), Value::from(0u64));
    m.insert("slat_ns".into(), lat_json(&d.slat, shown.slat));
    m.insert("clat_ns".into(), lat_json(&d.clat, shown.clat));
    m.insert("lat_ns".into(), lat_json(&d.lat, shown.lat));
    let b = &d.bw_samples;
    m.insert("bw_min".into(), Value::from(b.min));
    m.insert("bw_max".into(), Value::from(b.max));
    m.insert("bw_agg".into(), num(d.bw_agg));
    m.insert("bw_mean".into(), num(b.mean));
    m.insert("bw_dev".into(), num(b.dev));
    m.insert("bw_samples".into(), Value::from(b.samples));
    let i = &d.iops_samples;
    m.insert("iops_min".into(), Value::from(i.min));
    m.insert("iops_max".into(), Value::from(i.max));
    m.insert("iops_mean".into(), num(i.mean));
    m.insert("iops_stddev".into(), num(i.dev));
    m.insert("iops_samples".into(), Value::from(i.samples));
    Value::Object(m)
}

/// fio's JSON of one job; `elapsed` is the run's whole seconds, rounded
/// up, as fio's `elapsed` (its `eta` is `INT_MAX` before 3 s, as fio's is,
/// and 0 once the jobs have ended).
fn job_json(j: &JobReport, elapsed: u64) -> Value {
    let mut m = Map::new();
    m.insert("jobname".into(), Value::from(j.name.clone()));
    m.insert("groupid".into(), Value::from(j.groupid));
    m.insert("error".into(), Value::from(j.error));
    let eta: i64 = if elapsed >= 3 { 0 } else { i64::from(i32::MAX) };
    m.insert("eta".into(), Value::from(eta));
    m.insert("elapsed".into(), Value::from(elapsed));
    m.insert("job options".into(), options_json(&j.options));
    // unified_rw_reporting=mixed: one "mixed" direction in place of all
    // the others, sync included (fio's add_ddir_status_json); both: the
    // directions, then "mixed".
    let mixed = j.mixed.as_ref().map(|d| dir_json(d, j.shown));
    if j.unified == Unified::Mixed {
        m.insert("mixed".into(), mixed.clone().unwrap_or(Value::Null));
    } else {
        for d in Dir::ALL {
            m.insert(d.name().into(), dir_json(j.dir(d), j.shown));
        }
        let mut s = Map::new();
        s.insert("total_ios".into(), Value::from(j.sync.total_ios));
        s.insert(
            "lat_ns".into(),
            lat_json(&j.sync.lat, j.shown.clat || j.shown.lat),
        );
        m.insert("sync".into(), Value::Object(s));
        if let Some(mixed) = mixed.filter(|_| j.unified == Unified::Both) {
            m.insert("mixed".into(), mixed);
        }
    }
    m.insert("job_runtime".into(), Value::from(j.job_runtime_ms));
    // The simulated thread's host time as fio's CPU share (all of it
    // system time: the engine's submit and reap).
    let share = |ns: u64| {
        if j.job_runtime_ms > 0 {
            100.0 * ns as f64 / (j.job_runtime_ms as f64 * 1e6)
        } else {
            0.0
        }
    };
    let sys = share(j.host_ns);
    m.insert("usr_cpu".into(), num(share(j.user_ns)));
    m.insert("sys_cpu".into(), num(sys));
    m.insert("ctx".into(), Value::from(j.ctx));
    m.insert("majf".into(), Value::from(0u64));
    m.insert("minf".into(), Value::from(0u64));
    for (name, obj) in depth_distribution(j) {
        m.insert(name.into(), Value::Object(obj));
    }
    for (name, obj) in latency_distribution(j) {
        m.insert(name.into(), Value::Object(obj));
    }
    m.insert("latency_depth".into(), Value::from(j.latency_depth));
    m.insert("latency_target".into(), Value::from(j.latency_target_ns));
    m.insert("latency_percentile".into(), num(j.latency_percentile));
    m.insert("latency_window".into(), Value::from(j.latency_window_us));
    if let Some(ss) = &j.steady {
        m.insert("steadystate".into(), steady_json(ss));
    }
    if let Some((_, desc)) = j.options.iter().rev().find(|(k, _)| k == "description") {
        m.insert("desc".into(), Value::from(desc.clone()));
    }
    Value::Object(m)
}

/// fio's `steadystate` object: the criterion as a string (with `%` for a
/// percentage limit), the samples oldest first.
fn steady_json(ss: &super::SteadyReport) -> Value {
    let (bw_mean, iops_mean) = ss.means();
    serde_json::json!({
        "ss": ss.ss,
        "duration": ss.duration,
        "attained": u32::from(ss.attained),
        "criterion": format!("{:.6}{}", ss.criterion, if ss.pct { "%" } else { "" }),
        "max_deviation": num(ss.max_deviation),
        "slope": num(ss.slope),
        "data": {
            "bw_mean": bw_mean,
            "iops_mean": iops_mean,
            "iops": ss.iops,
            "bw": ss.bw,
        },
    })
}

/// Options as fio's JSON lists them: those given a value, in order (a
/// bare flag such as `time_based` is not listed, as fio leaves it out).
fn options_json(options: &[(String, String)]) -> Value {
    Value::Object(
        options
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| (k.clone(), Value::from(v.clone())))
            .collect(),
    )
}

/// fio's share of `map`'s count in each bucket, in percent, a bucket with
/// any shown as at least 0.1 (`stat_calc_dist`).
fn percent_of(map: &[u64; 7], total: u64) -> [f64; 7] {
    map.map(|c| {
        if total == 0 {
            return 0.0;
        }
        let p = 100.0 * c as f64 / total as f64;
        if c > 0 && p < 0.1 { 0.1 } else { p }
    })
}

/// fio's `iodepth_level`, `iodepth_submit` and `iodepth_complete`: the
/// depth at which the job's IOs were issued, and how many went in each
/// submit and each reap. iolab's engines submit and reap one IO per call
/// (fio's at `iodepth_batch=1`, its default), so every call is in the 1-4
/// bucket; fio's libaio reaps several at once when they are there, which
/// would fill the higher buckets.
fn depth_distribution(j: &JobReport) -> [(&'static str, Map<String, Value>); 3] {
    let issued: u64 = j.depth_map.iter().sum();
    let level_keys = ["1", "2", "4", "8", "16", "32", ">=64"];
    let call_keys = ["0", "4", "8", "16", "32", "64", ">=64"];
    let mut calls = [0u64; 7];
    calls[1] = issued;
    let obj = |keys: [&str; 7], pct: [f64; 7]| -> Map<String, Value> {
        keys.iter()
            .zip(pct)
            .map(|(k, p)| ((*k).to_owned(), num(p)))
            .collect()
    };
    let level = obj(level_keys, percent_of(&j.depth_map, issued));
    let call = obj(call_keys, percent_of(&calls, issued));
    [
        ("iodepth_level", level),
        ("iodepth_submit", call.clone()),
        ("iodepth_complete", call),
    ]
}

/// fio's `disk_util` entries: one per simulated device that received any
/// command, from its counters and its `disk` figures (see the world's
/// `iolab.devices`), `util` the share of the run it had a command.
/// iolab's block layer merges nothing across requests it counts, so the
/// merge counts are 0.
fn disk_util(extra: &Value, elapsed_ms: u64) -> Vec<Value> {
    let Some(devices) = extra.get("devices").and_then(Value::as_array) else {
        return Vec::new();
    };
    let field = |d: &Value, path: &str| d.pointer(path).and_then(Value::as_u64).unwrap_or(0);
    devices
        .iter()
        .filter(|d| {
            [
                "/counters/reads",
                "/counters/writes",
                "/counters/flushes",
                "/counters/discards",
            ]
            .iter()
            .any(|p| field(d, p) > 0)
        })
        .map(|d| {
            let io_ticks = field(d, "/disk/io_ticks");
            let util = if elapsed_ms > 0 {
                (100.0 * io_ticks as f64 / elapsed_ms as f64).min(100.0)
            } else {
                0.0
            };
            let mut m = Map::new();
            m.insert(
                "name".into(),
                d.get("name").cloned().unwrap_or(Value::from("")),
            );
            m.insert("read_ios".into(), Value::from(field(d, "/counters/reads")));
            m.insert(
                "write_ios".into(),
                Value::from(field(d, "/counters/writes")),
            );
            m.insert("read_merges".into(), Value::from(0u64));
            m.insert("write_merges".into(), Value::from(0u64));
            m.insert(
                "read_ticks".into(),
                Value::from(field(d, "/disk/read_ticks")),
            );
            m.insert(
                "write_ticks".into(),
                Value::from(field(d, "/disk/write_ticks")),
            );
            m.insert("in_queue".into(), Value::from(field(d, "/disk/in_queue")));
            m.insert("util".into(), num(util));
            Value::Object(m)
        })
        .collect()
}

/// `secs` after the Unix epoch as C's `ctime` prints it, without the
/// newline (`Thu Jan  1 00:00:01 1970`).
fn ctime(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (year, month, day) = crate::time::civil_date(days as i64);
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02} {}",
        DAYS[(days % 7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        year
    )
}

/// fio's `latency_ns`, `latency_us` and `latency_ms` objects: the share
/// of the job's IOs (all directions) whose completion latency falls in
/// each bucket, in percent, a bucket with any IO shown as at least 0.01
/// (`stat_calc_lat` in fio's `stat.c`).
fn latency_distribution(j: &JobReport) -> Vec<(&'static str, Map<String, Value>)> {
    let mut counts = [0u64; LAT_BUCKETS.len()];
    let mut total = 0u64;
    for d in Dir::ALL {
        let dr = j.dir(d);
        total += dr.total_ios;
        for (c, b) in counts.iter_mut().zip(&dr.clat.buckets) {
            *c += b;
        }
    }
    let mut out: Vec<(&'static str, Map<String, Value>)> = Vec::new();
    for (&(name, key, _), &c) in LAT_BUCKETS.iter().zip(&counts) {
        let mut pct = if total > 0 {
            100.0 * c as f64 / total as f64
        } else {
            0.0
        };
        if c > 0 && pct < 0.01 {
            pct = 0.01;
        }
        if out.last().is_none_or(|(n, _)| *n != name) {
            out.push((name, Map::new()));
        }
        if let Some((_, m)) = out.last_mut() {
            m.insert(key.into(), num(pct));
        }
    }
    out
}

/// The windowed latency series of every job, as placed under
/// `iolab.lat_log`.
pub fn lat_log_json(r: &RunReport) -> Value {
    let jobs: Vec<Value> = r
        .series
        .iter()
        .map(|s| {
            let mut m = Map::new();
            m.insert("jobname".into(), Value::from(s.name.clone()));
            m.insert("groupid".into(), Value::from(s.groupid));
            m.insert("log_avg_msec".into(), Value::from(s.window_ns / MS));
            for d in Dir::ALL {
                let pts: Vec<Value> = s.dirs[d.index()]
                    .iter()
                    .map(|(t, v)| Value::Array(vec![Value::from(t), Value::from(v)]))
                    .collect();
                m.insert(d.name().into(), Value::Array(pts));
            }
            Value::Object(m)
        })
        .collect();
    let mut m = Map::new();
    m.insert("jobs".into(), Value::Array(jobs));
    Value::Object(m)
}

/// fio-shaped JSON document.
///
/// Layout: fio 3.33's keys in its order, `{"fio version":
/// "iolab-<crate version>", "timestamp", "timestamp_ms", "time", "global
/// options" (when there are any), "jobs": [...], "disk_util" (devices that
/// received a command), "iolab": <extra>}`. The timestamps are the seed's
/// second after the epoch, not the wall clock, so the same run gives the
/// same document. Each job carries fio's key names (`jobname`, `groupid`,
/// `error`, `eta`, `elapsed`, `"job options"` (the section's own; the
/// `[global]` ones are the "global options"), `read`/`write`/`trim` with
/// `io_bytes` … `iops_samples`, `sync`, `job_runtime`, `sys_cpu` and `ctx`
/// from the thread's host time on direct IOs (0 without
/// `host_io_us`/`host_wake_us`), zeroed `usr_cpu`/`majf`/`minf`, the
/// `iodepth_*` distributions, fio's `latency_ns`/`latency_us`/`latency_ms`
/// distribution and the `latency_*` target fields at fio's defaults).
///
/// The 10 ms window series (fio's averaged latency log, one per job even
/// under group reporting) is stored at `iolab.lat_log`:
/// `{"jobs": [{"jobname", "groupid", "log_avg_msec", "read": [[end_ms,
/// avg_ns], ...], "write": [...], "trim": [...]}]}`. If `extra` is an
/// object the key `lat_log` is inserted into it (replacing one the caller
/// put there); `null` becomes an object holding only `lat_log`; any other
/// value is kept under `iolab.extra`.
///
/// Key order: objects are `serde_json::Map`s filled in fio's order, and
/// the workspace builds serde_json with `preserve_order`, so they serialise
/// in it (percentiles `1, 5, 10, …`, not sorted as text). The output is a
/// pure function of the report, so identical reports give byte-identical
/// text.
pub fn json_output(r: &RunReport, extra: Value) -> Value {
    let lat_log = lat_log_json(r);
    let iolab = match extra {
        Value::Object(mut m) => {
            m.insert("lat_log".into(), lat_log);
            Value::Object(m)
        }
        Value::Null => {
            let mut m = Map::new();
            m.insert("lat_log".into(), lat_log);
            Value::Object(m)
        }
        other => {
            let mut m = Map::new();
            m.insert("extra".into(), other);
            m.insert("lat_log".into(), lat_log);
            Value::Object(m)
        }
    };
    let seed = iolab.get("seed").and_then(Value::as_u64).unwrap_or(0);
    let sim_ms = iolab.get("sim_ns").and_then(Value::as_u64).unwrap_or(0) / 1_000_000;
    let elapsed = sim_ms.div_ceil(1000);
    let mut top = Map::new();
    top.insert(
        "fio version".into(),
        Value::from(format!("iolab-{}", env!("CARGO_PKG_VERSION"))),
    );
    // The run's clock starts at the seed's second after the epoch, so the
    // document is the same for the same run: no wall clock.
    top.insert("timestamp".into(), Value::from(seed));
    top.insert(
        "timestamp_ms".into(),
        Value::from(seed.saturating_mul(1000)),
    );
    top.insert("time".into(), Value::from(ctime(seed)));
    if !r.global_options.is_empty() {
        top.insert("global options".into(), options_json(&r.global_options));
    }
    top.insert(
        "jobs".into(),
        Value::Array(r.jobs.iter().map(|j| job_json(j, elapsed)).collect()),
    );
    let disks = disk_util(&iolab, sim_ms);
    if !disks.is_empty() {
        top.insert("disk_util".into(), Value::Array(disks));
    }
    top.insert("iolab".into(), iolab);
    Value::Object(top)
}

/// fio's `json+` document: [`json_output`]'s, with each latency that
/// lists percentiles also listing its histogram's non-empty buckets
/// (`bins`: fio's bucket value in ns, count), as `fio_jsonplus_clat2csv`
/// reads them.
pub fn json_plus_output(r: &RunReport, extra: Value) -> Value {
    let mut doc = json_output(r, extra);
    let add = |lat: &mut Value, l: &LatSummary| {
        if let Some(m) = lat.as_object_mut()
            && m.contains_key("percentile")
        {
            let bins = l
                .bins
                .iter()
                .map(|(v, n)| (v.to_string(), Value::from(*n)))
                .collect();
            m.insert("bins".into(), Value::Object(bins));
        }
    };
    if let Some(jobs) = doc.get_mut("jobs").and_then(Value::as_array_mut) {
        for (j, v) in r.jobs.iter().zip(jobs) {
            for d in Dir::ALL {
                add(&mut v[d.name()]["slat_ns"], &j.dir(d).slat);
                add(&mut v[d.name()]["clat_ns"], &j.dir(d).clat);
                add(&mut v[d.name()]["lat_ns"], &j.dir(d).lat);
            }
            add(&mut v["sync"]["lat_ns"], &j.sync.lat);
        }
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{GroupBwMode, JobInput, JobStats};
    use crate::time::{MS, SEC, US};

    #[test]
    fn num2str_matches_fio() {
        assert_eq!(
            num2str(48 << 20, 4, 1, true, N2sUnit::BytePerSec),
            "48.0MiB/s"
        );
        assert_eq!(
            num2str(50_331_648, 4, 1, false, N2sUnit::BytePerSec),
            "50.3MB/s"
        );
        assert_eq!(num2str(2880 << 20, 4, 1, true, N2sUnit::Byte), "2880MiB");
        assert_eq!(num2str(12_345, 4, 1, false, N2sUnit::None), "12.3k");
        assert_eq!(num2str(999, 4, 1, false, N2sUnit::None), "999");
        assert_eq!(num2str(0, 4, 1, true, N2sUnit::Byte), "0B");
        // Carry without room for decimals: 99_999 -> 99.999k -> "100k".
        assert_eq!(num2str(99_999, 4, 1, false, N2sUnit::None), "100.0k");
        assert_eq!(num2str(1_234_567, 6, 1, false, N2sUnit::None), "1234.6k");
        assert_eq!(num2str(12_345_678, 6, 1, false, N2sUnit::None), "12346k");
        assert_eq!(num2str(123_456, 6, 1, false, N2sUnit::None), "123456");
    }

    fn small_run() -> RunReport {
        small_run_of(Dir::Read)
    }

    fn small_run_of(dir: Dir) -> RunReport {
        let mut s = JobStats::new(0, 10 * MS, 500 * MS);
        // 1000 IOs of 4 KiB over 1 s, latency 100 µs .. 199.9 µs.
        for i in 0..1000u64 {
            s.record(dir, i * MS, 100 * US + i * 100, 4096);
        }
        s.record_sync(SEC - 1, 3 * MS);
        s.finish(SEC);
        RunReport::build(
            vec![JobInput {
                name: "reader".into(),
                groupid: 0,
                group_reporting: false,
                options: vec![("rw".into(), "randread".into()), ("bs".into(), "4k".into())],
                percentiles: Default::default(),
                unified: Default::default(),
                stats: s,
            }],
            GroupBwMode::Sum,
        )
    }

    /// fio 3.33 here: `write: IOPS=5688, BW=88.9MiB/s (93.2MB/s)(8192KiB/90msec); 0 zone resets`
    /// on a plain file, no zonemode.
    #[test]
    fn a_write_line_ends_with_its_zone_resets() {
        let out = normal_output(&small_run_of(Dir::Write));
        let line = out.lines().nth(1).expect("the write line");
        assert_eq!(
            line,
            "  write: IOPS=1000, BW=4000KiB/s (4096kB/s)(4000KiB/1000msec); 0 zone resets"
        );
    }

    #[test]
    fn normal_output_lines() {
        let r = small_run();
        let out = normal_output(&r);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "reader: (groupid=0, jobs=1): err= 0");
        // 1000 IOs / 1000 ms; 4 000 KiB/s = 4096000 B/s.
        assert_eq!(
            lines[1],
            "  read: IOPS=1000, BW=4000KiB/s (4096kB/s)(4000KiB/1000msec)"
        );
        assert!(
            lines[2].starts_with("    clat (usec): min=100, max=199, avg=149.95, stdev="),
            "{}",
            lines[2]
        );
        // No slat (a synchronous job); lat = clat here (no preparation
        // recorded), on fio's line with its leading space.
        assert_eq!(
            lines[3],
            "     lat (usec): min=100, max=199, avg=149.95, stdev=28.88"
        );
        let lines: Vec<&str> = lines[..3].iter().chain(&lines[4..]).copied().collect();
        assert_eq!(lines[3], "    clat percentiles (usec):");
        assert!(lines[4].starts_with("     |  1.00th=[  101],  5.00th=[  105], 10.00th=[  110],"));
        assert!(lines[8].starts_with("     | 99.99th=["), "{}", lines[8]);
        assert_eq!(
            lines[9],
            "   bw (  KiB/s): min= 4000, max= 4000, per=100.00%, avg=4000.00, stdev= 0.00, samples=2"
        );
        assert_eq!(
            lines[10],
            "   iops        : min= 1000, max= 1000, avg=1000.00, stdev= 0.00, samples=2"
        );
        assert_eq!(lines[11], "  fsync/fdatasync/sync_file_range:");
        assert_eq!(
            lines[12],
            "    sync (nsec): min=3000.0k, max=3000.0k, avg=3000000.00, stdev= 0.00"
        );
        assert_eq!(lines[13], "    sync percentiles (usec):");
        assert!(out.contains("\nRun status group 0 (all jobs):\n"));
        assert!(out.ends_with(
            "   READ: bw=4000KiB/s (4096kB/s), 4000KiB/s-4000KiB/s (4096kB/s-4096kB/s), io=4000KiB (4096kB), run=1000-1000msec\n"
        ));
    }

    #[test]
    fn latency_buckets_follow_fio_and_keys_keep_its_order() {
        // fio's bucket edges: below 2 ns, 2–3, …, 750–999 ns; 1–1.999 µs
        // is the first µs bucket; from 2 s all in the last.
        let cases = [
            (0, ("latency_ns", "2")),
            (3, ("latency_ns", "4")),
            (999, ("latency_ns", "1000")),
            (1_000, ("latency_us", "2")),
            (1_999, ("latency_us", "2")),
            (2_000, ("latency_us", "4")),
            (100_000, ("latency_us", "250")),
            (999_999, ("latency_us", "1000")),
            (1_000_000, ("latency_ms", "2")),
            (1_999_999_999, ("latency_ms", "2000")),
            (2_000_000_000, ("latency_ms", ">=2000")),
            (u64::MAX, ("latency_ms", ">=2000")),
        ];
        for (ns, want) in cases {
            let b = LAT_BUCKETS[super::super::lat_bucket(ns)];
            assert_eq!((b.0, b.1), want, "{ns} ns");
        }
        // small_run's 1000 reads take 100–199 µs: all in the 100–249 µs
        // bucket, and no other bucket has any.
        let v = json_output(&small_run(), Value::Null);
        let job = &v["jobs"][0];
        assert_eq!(job["latency_us"]["250"], 100.0);
        let total: f64 = ["latency_ns", "latency_us", "latency_ms"]
            .iter()
            .flat_map(|o| job[o].as_object().into_iter().flat_map(|m| m.values()))
            .filter_map(Value::as_f64)
            .sum();
        assert!((total - 100.0).abs() < 1e-9, "{total}");
        // Keys come out in fio's order, not sorted: percentiles by value,
        // the job's keys as fio writes them.
        let text = serde_json::to_string(&v).unwrap_or_default();
        let at = |k: &str| text.find(k).unwrap_or(usize::MAX);
        assert!(at("\"1.000000\"") < at("\"5.000000\""));
        assert!(at("\"5.000000\"") < at("\"10.000000\""));
        assert!(at("\"jobname\"") < at("\"groupid\""));
        assert!(at("\"latency_ns\"") < at("\"latency_us\""));
        assert!(at("\">=2000\"") < usize::MAX);
    }

    #[test]
    fn json_keys_and_determinism() {
        let r = small_run();
        let extra = serde_json::json!({"seed": 1, "device": "null"});
        let v = json_output(&r, extra.clone());
        assert!(
            v["fio version"]
                .as_str()
                .unwrap_or("")
                .starts_with("iolab-")
        );
        let job = &v["jobs"][0];
        for k in [
            "jobname",
            "groupid",
            "error",
            "job options",
            "read",
            "write",
            "trim",
            "sync",
            "job_runtime",
        ] {
            assert!(job.get(k).is_some(), "missing {k}");
        }
        let rd = &job["read"];
        for k in [
            "io_bytes",
            "io_kbytes",
            "bw_bytes",
            "bw",
            "iops",
            "runtime",
            "total_ios",
            "short_ios",
            "drop_ios",
            "clat_ns",
            "lat_ns",
            "slat_ns",
            "bw_min",
            "bw_max",
            "bw_agg",
            "bw_mean",
            "bw_dev",
            "bw_samples",
            "iops_min",
            "iops_max",
            "iops_mean",
            "iops_stddev",
            "iops_samples",
        ] {
            assert!(rd.get(k).is_some(), "missing read.{k}");
        }
        for k in ["min", "max", "mean", "stddev", "N", "percentile"] {
            assert!(rd["clat_ns"].get(k).is_some(), "missing clat_ns.{k}");
        }
        assert!(rd["clat_ns"]["percentile"].get("99.990000").is_some());
        assert!(rd["clat_ns"]["percentile"].get("1.000000").is_some());
        assert_eq!(rd["io_kbytes"], 4000);
        assert_eq!(rd["total_ios"], 1000);
        assert_eq!(rd["bw"], 4000);
        assert_eq!(job["sync"]["total_ios"], 1);
        assert!(job["sync"]["lat_ns"].get("N").is_some());
        assert_eq!(job["job options"]["rw"], "randread");
        assert_eq!(v["iolab"]["seed"], 1);
        let lat = &v["iolab"]["lat_log"]["jobs"][0];
        assert_eq!(lat["log_avg_msec"], 10);
        assert_eq!(lat["read"].as_array().map(|a| a.len()), Some(100));
        assert_eq!(lat["read"][0][0], 10);
        // Byte-identical on rebuild.
        let a = serde_json::to_string_pretty(&v).unwrap_or_default();
        let b = serde_json::to_string_pretty(&json_output(&small_run(), extra)).unwrap_or_default();
        assert!(!a.is_empty());
        assert_eq!(a, b);
        assert_eq!(normal_output(&r), normal_output(&small_run()));
        // Null extra.
        let n = json_output(&r, Value::Null);
        assert!(n["iolab"]["lat_log"].is_object());
    }
}
