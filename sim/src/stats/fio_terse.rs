//! fio's terse output (`--minimal`, `--output-format=terse`), version 3 by
//! default and 2, 4, 5 on request (`--terse-version`):
//! one semicolon-separated line a job, written from the JSON document
//! [`json_output`](super::json_output) makes of the same run, so both
//! always say the same figures.
//!
//! Fields, as fio 3.33 writes them: version, fio version, job name, group,
//! error; for read then write: KiB, KiB/s, IOPS, runtime ms, submission,
//! completion and total latency (min, max in whole µs, mean and deviation
//! in µs) with twenty completion percentiles between them, bandwidth
//! samples (min, max, share of the group, mean, deviation); CPU (user and
//! system %, context switches, major and minor faults); the share of IOs
//! at each of seven depths; latency shares in ten µs buckets (the ns ones
//! added to the first) and twelve ms buckets; each disk's name, IOs,
//! merges, ticks, time in queue and utilisation; the description, if any.

use std::fmt::Write as _;

use serde_json::Value;

/// Completion percentiles a terse line always has room for
/// (`FIO_IO_U_LIST_MAX_LEN`); the unused ones are written `0%=0`.
const PERCENTILE_SLOTS: usize = 20;

fn u(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn f(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

/// min, max, mean, deviation of one of the job's latencies, in µs (min
/// and max truncated to whole µs, as fio divides integers); zeros without
/// samples.
fn latency(out: &mut String, lat: &Value) {
    if u(lat, "N") == 0 {
        out.push_str(";0;0;0.000000;0.000000");
        return;
    }
    let _ = write!(
        out,
        ";{};{};{:.6};{:.6}",
        u(lat, "min") / 1000,
        u(lat, "max") / 1000,
        f(lat, "mean") / 1000.0,
        f(lat, "stddev") / 1000.0
    );
}

/// One direction's fields; `plist` the job's percentile names, which fio
/// lists (at 0) for a direction without IO too; version 5 adds the
/// bandwidth samples' count and the IOPS samples.
fn direction(out: &mut String, d: &Value, plist: &[String], version: u32) {
    let runtime = u(d, "runtime");
    let iops = (1000 * u(d, "total_ios")).checked_div(runtime).unwrap_or(0);
    let _ = write!(
        out,
        ";{};{};{iops};{runtime}",
        u(d, "io_kbytes"),
        u(d, "bw")
    );
    latency(out, &d["slat_ns"]);
    latency(out, &d["clat_ns"]);
    // fio lists total-latency percentiles here when lat_percentiles is
    // on, else completion ones.
    let listed = d["lat_ns"]
        .get("percentile")
        .or_else(|| d["clat_ns"].get("percentile"))
        .and_then(Value::as_object);
    let mut written = 0;
    for p in plist.iter().take(PERCENTILE_SLOTS) {
        let v = listed.and_then(|l| l.get(p)).and_then(Value::as_u64);
        let _ = write!(out, ";{p}%={}", v.unwrap_or(0) / 1000);
        written += 1;
    }
    for _ in written..PERCENTILE_SLOTS {
        out.push_str(";0%=0");
    }
    latency(out, &d["lat_ns"]);
    if u(d, "bw_samples") > 0 {
        let _ = write!(
            out,
            ";{};{};{:.6}%;{:.6};{:.6}",
            u(d, "bw_min"),
            u(d, "bw_max"),
            f(d, "bw_agg"),
            f(d, "bw_mean"),
            f(d, "bw_dev")
        );
    } else {
        out.push_str(";0;0;0.000000%;0.000000;0.000000");
    }
    if version == 5 {
        let _ = write!(out, ";{}", u(d, "bw_samples"));
        if u(d, "iops_samples") > 0 {
            let _ = write!(
                out,
                ";{};{};{:.6};{:.6};{}",
                u(d, "iops_min"),
                u(d, "iops_max"),
                f(d, "iops_mean"),
                f(d, "iops_stddev"),
                u(d, "iops_samples")
            );
        } else {
            out.push_str(";0;0;0.000000;0.000000;0");
        }
    }
}

/// The job's percentile names as its JSON writes them (`"99.900000"`):
/// those of the first latency that lists any, else fio's default list.
fn percentile_names(job: &Value) -> Vec<String> {
    let lats = ["read", "write", "trim", "mixed"]
        .iter()
        .flat_map(|d| [&job[d]["lat_ns"], &job[d]["clat_ns"]])
        .chain([&job["sync"]["lat_ns"]]);
    for lat in lats {
        if let Some(p) = lat.get("percentile").and_then(Value::as_object) {
            return p.keys().cloned().collect();
        }
    }
    super::report::FIO_DEFAULT_PERCENTILES
        .iter()
        .map(|p| format!("{p:.6}"))
        .collect()
}

/// The values of one of the JSON's distribution objects, in its order.
fn shares(v: &Value) -> Vec<f64> {
    v.as_object()
        .into_iter()
        .flatten()
        .map(|(_, x)| x.as_f64().unwrap_or(0.0))
        .collect()
}

/// fio's terse lines of the run `doc` (a [`json_output`](super::json_output)
/// document), one a job, in terse `version` 2 to 5 (fio's
/// `--terse-version`; 3 its default): version 2 has no fio version, a trim
/// section and no disks, and puts a description on a line of its own; 4
/// adds the trim section to 3; 5 adds to 4 each direction's bandwidth
/// sample count and IOPS samples.
pub fn terse_output(doc: &Value, version: u32) -> String {
    let fio_version = doc["fio version"].as_str().unwrap_or("");
    let mut out = String::new();
    for job in doc["jobs"].as_array().into_iter().flatten() {
        let (name, group, error) = (
            job["jobname"].as_str().unwrap_or(""),
            u(job, "groupid"),
            job["error"].as_i64().unwrap_or(0),
        );
        if version == 2 {
            let _ = write!(out, "2;{name};{group};{error}");
        } else {
            let _ = write!(out, "{version};{fio_version};{name};{group};{error}");
        }
        let plist = percentile_names(job);
        // unified_rw_reporting=mixed: the mixed figures in read's place,
        // no write; =both: read, write, then mixed (fio's terse v3).
        if job.get("read").is_none() {
            direction(&mut out, &job["mixed"], &plist, version);
        } else {
            direction(&mut out, &job["read"], &plist, version);
            direction(&mut out, &job["write"], &plist, version);
            if version != 3 {
                direction(&mut out, &job["trim"], &plist, version);
            }
            if let Some(mixed) = job.get("mixed") {
                direction(&mut out, mixed, &plist, version);
            }
        }
        let _ = write!(
            out,
            ";{:.6}%;{:.6}%;{};{};{}",
            f(job, "usr_cpu"),
            f(job, "sys_cpu"),
            u(job, "ctx"),
            u(job, "majf"),
            u(job, "minf")
        );
        for p in shares(&job["iodepth_level"]) {
            let _ = write!(out, ";{p:3.1}%");
        }
        let mut micro = shares(&job["latency_us"]);
        if let Some(first) = micro.first_mut() {
            *first += shares(&job["latency_ns"]).iter().sum::<f64>();
        }
        for p in micro.into_iter().chain(shares(&job["latency_ms"])) {
            let _ = write!(out, ";{p:3.2}%");
        }
        let disks = doc["disk_util"].as_array().filter(|_| version >= 3);
        for d in disks.into_iter().flatten() {
            let _ = write!(
                out,
                ";{};{};{};{};{};{};{};{};{:3.2}%",
                d["name"].as_str().unwrap_or(""),
                u(d, "read_ios"),
                u(d, "write_ios"),
                u(d, "read_merges"),
                u(d, "write_merges"),
                u(d, "read_ticks"),
                u(d, "write_ticks"),
                u(d, "in_queue"),
                f(d, "util")
            );
        }
        if let Some(desc) = job.get("desc").and_then(Value::as_str) {
            if version == 2 {
                out.push('\n');
            }
            let _ = write!(out, ";{desc}");
        }
        out.push('\n');
    }
    out
}
