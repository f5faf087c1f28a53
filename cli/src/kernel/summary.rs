//! `iolab kernel summary`: what a capture adds up to, as the figures
//! `iolab run` reports for the same job (fio's group figures, each
//! device's IO, btrfs flushing, dirty throttling, the chunk map; the
//! mapping of keys is in `docs/kernel-validation.md`), so a real run and a
//! simulated one compare figure by figure.

use std::fmt::Write;
use std::path::Path;

use iolab_kernel::tally::{self, Spread, Tally, flush_state_name};
use serde_json::{Value, json};

use super::replay::read_trace;
use crate::{Failure, ReportFormat as Format, pretty, write_out};

#[derive(clap::Args, Debug)]
pub struct SummaryArgs {
    /// A bundle directory (`iolab kernel capture --out`), or a bare trace
    /// file.
    pub trace: String,
    /// For a bare trace: it was recorded with `trace_clock` set to `mono`,
    /// so ticket waits can be measured (a bundle says so itself).
    #[arg(long)]
    pub mono_clock: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "normal")]
    pub output_format: Format,
}

/// One device's IO during the run, from its `stat` before and after.
struct DeviceIo {
    name: String,
    reads: u64,
    read_bytes: u64,
    writes: u64,
    write_bytes: u64,
}

/// `/sys/block/NAME/stat`'s read and write IOs and sectors.
fn stat_fields(text: &str) -> Option<[u64; 4]> {
    let f: Vec<u64> = text
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    (f.len() >= 7).then(|| [f[0], f[2], f[4], f[6]])
}

fn device_io(dir: &Path, node: &str) -> Result<Option<DeviceIo>, Failure> {
    let name = node.rsplit('/').next().unwrap_or(node).to_owned();
    let read = |when: &str| {
        optional(dir, &format!("stat-{name}-{when}.txt"), |t| {
            stat_fields(t).ok_or((
                1,
                "not a /sys/block/NAME/stat line (seven or more numbers)".to_owned(),
            ))
        })
    };
    let (b, a) = match (read("before")?, read("after")?) {
        (Some(b), Some(a)) => (b, a),
        // A bundle from before the counters were kept.
        (None, None) => return Ok(None),
        (b, _) => {
            let missing = if b.is_none() { "before" } else { "after" };
            return Err(Failure::input(format!(
                "{}: stat-{name}-{missing}.txt is missing, so {name}'s IO during the run is not known",
                dir.display()
            )));
        }
    };
    let d = |i: usize| a[i].saturating_sub(b[i]);
    Ok(Some(DeviceIo {
        name,
        reads: d(0),
        read_bytes: d(1) * 512,
        writes: d(2),
        write_bytes: d(3) * 512,
    }))
}

/// The machine's CPU use during the run, from the `cpu` lines of
/// `/proc/stat` before and after: (CPUs, busy share of all of them, iowait
/// share). Busy is everything but idle and iowait.
/// Only the first eight counters (user … steal) are summed: `guest` and
/// `guest_nice` are counted inside `user` and `nice` already.
fn cpu_use(before: &str, after: &str) -> Option<(usize, f64, f64)> {
    let total = |text: &str| -> Option<Vec<u64>> {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some("cpu"))?;
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .take(8)
            .map(|v| v.parse().ok())
            .collect::<Option<_>>()?;
        (v.len() >= 5).then_some(v)
    };
    let (b, a) = (total(before)?, total(after)?);
    if a.len() != b.len() {
        return None;
    }
    let d: Vec<u64> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| x.saturating_sub(*y))
        .collect();
    let all: u64 = d.iter().sum();
    if all == 0 {
        return None;
    }
    let (idle, iowait) = (d[3], d[4]);
    let cpus = after
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    let busy = (all - idle - iowait) as f64 / all as f64;
    Some((cpus, busy, iowait as f64 / all as f64))
}

/// `commit_stats`: `key value` lines.
fn commit_stats(text: &str) -> Result<Value, (usize, String)> {
    let mut m = serde_json::Map::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let (k, v) = line
            .split_once(' ')
            .ok_or_else(|| (i + 1, format!("'{line}' is not 'NAME NUMBER'")))?;
        let n: u64 = v
            .trim()
            .parse()
            .map_err(|_| (i + 1, format!("'{}' is not a number", v.trim())))?;
        m.insert(k.to_owned(), json!(n));
    }
    Ok(Value::Object(m))
}

/// One chunk of `btrfs inspect-internal dump-tree -t chunk`.
#[derive(Debug, PartialEq, Eq)]
struct Chunk {
    logical: u64,
    length: u64,
    kind: String,
    /// Device ids in stripe order.
    stripes: Vec<u64>,
}

/// The chunk items of a chunk-tree dump (what capture writes as
/// `chunks.txt`): `item N key (FIRST_CHUNK_TREE CHUNK_ITEM LOGICAL)`, then
/// `length L … type T`, then one `stripe I devid D …` per copy.
fn chunk_map(text: &str) -> Result<Vec<Chunk>, (usize, String)> {
    let mut chunks: Vec<Chunk> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let bad = |what: &str| (i + 1, format!("{what}: '{}'", line.trim()));
        let words: Vec<&str> = line.split_whitespace().collect();
        let after = |key: &str| {
            words
                .iter()
                .position(|w| *w == key)
                .and_then(|i| words.get(i + 1))
                .copied()
        };
        if let Some(at) = words.iter().position(|w| *w == "CHUNK_ITEM") {
            let logical = words
                .get(at + 1)
                .and_then(|w| w.trim_end_matches(')').parse().ok())
                .ok_or_else(|| bad("a CHUNK_ITEM key without its logical address"))?;
            chunks.push(Chunk {
                logical,
                length: 0,
                kind: String::new(),
                stripes: Vec::new(),
            });
        } else if let Some(c) = chunks.last_mut() {
            if words.first() == Some(&"length") {
                c.length = after("length")
                    .and_then(|w| w.parse().ok())
                    .ok_or_else(|| bad("a chunk length that is not a number"))?;
                c.kind = after("type")
                    .ok_or_else(|| bad("a chunk without its type"))?
                    .to_owned();
            } else if words.first() == Some(&"stripe") {
                let d = after("devid")
                    .and_then(|w| w.parse().ok())
                    .ok_or_else(|| bad("a stripe without its devid"))?;
                c.stripes.push(d);
            }
        }
    }
    Ok(chunks)
}

/// fio's per-job figures iolab's own JSON has too.
fn fio_groups(fio: &Value) -> Value {
    let jobs = fio.get("jobs").and_then(Value::as_array);
    let dir = |j: &Value, d: &str| {
        let x = j.get(d).cloned().unwrap_or(Value::Null);
        let pct = |q: &str| {
            x.pointer(&format!("/clat_ns/percentile/{q}"))
                .cloned()
                .unwrap_or(Value::Null)
        };
        json!({
            "bw_kib_s": x.get("bw").cloned().unwrap_or(Value::Null),
            "iops": x.get("iops").cloned().unwrap_or(Value::Null),
            "total_ios": x.get("total_ios").cloned().unwrap_or(Value::Null),
            "clat_p50_ns": pct("50.000000"),
            "clat_p99_ns": pct("99.000000"),
        })
    };
    Value::Array(
        jobs.map(|js| {
            js.iter()
                .map(|j| {
                    json!({
                        "name": j.get("jobname").cloned().unwrap_or(Value::Null),
                        "read": dir(j, "read"),
                        "write": dir(j, "write"),
                    })
                })
                .collect()
        })
        .unwrap_or_default(),
    )
}

fn spread_json(s: &Spread) -> Value {
    json!({
        "n": s.n,
        "mean": if s.n == 0 { 0.0 } else { s.sum as f64 / s.n as f64 },
        "p50": s.p50, "p90": s.p90, "p99": s.p99, "max": s.max,
    })
}

fn space_name(flags: u64) -> String {
    let mut names = Vec::new();
    for (bit, n) in [(1, "DATA"), (2, "SYSTEM"), (4, "METADATA")] {
        if flags & bit != 0 {
            names.push(n);
        }
    }
    if names.is_empty() {
        format!("{flags:#x}")
    } else {
        names.join("|")
    }
}

fn tally_json(t: &Tally) -> Value {
    let b = &t.btrfs;
    let flush: Vec<Value> = b
        .flush_space
        .iter()
        .map(|(k, n)| {
            json!({
                "space": space_name(k.flags),
                "state": flush_state_name(k.state),
                "number": k.state,
                "preempt": k.preempt,
                "calls": n,
            })
        })
        .collect();
    json!({
        "records": t.records,
        "lost_markers": t.lost_markers,
        "lost_events": t.lost_events,
        "btrfs": {
            "commits": b.commits,
            "flush_space": flush,
            "tickets": b.tickets.values().sum::<u64>(),
            "tickets_by_space": b.tickets,
            "ticket_errors": b.ticket_errors,
            "ticket_wait_ns": b.ticket_wait_ns.as_ref().map(spread_json),
            "metadata_ticket_wait_ns": b.metadata_wait_ns.as_ref().map(spread_json),
            "triggers": b.triggers,
        },
        "queues": t.queues.iter().map(|(dev, q)| json!({
            "dev": dev.to_string(),
            "reads": q.reads,
            "writes": q.writes,
            "flushes": q.flushes,
            "read_ns": spread_json(&q.read_ns),
            "write_ns": spread_json(&q.write_ns),
            "flush_ns": spread_json(&q.flush_ns),
            "writes_at_read": spread_json(&q.writes_at_read),
            "writes_at_flush": spread_json(&q.writes_at_flush),
            "writes_in_flight": q.writes_in_flight.json(),
            "reads_under_flush": q.reads_under_flush,
            "max_flushes_in_flight": q.max_flushes_in_flight,
            "unmatched": q.unmatched,
        })).collect::<Vec<_>>(),
        "dirty_throttle": {
            "passes": t.dirty.passes,
            "unpaused": t.dirty.unpaused,
            "pause_ms": spread_json(&t.dirty.pause_ms),
            "global_dirty_states": t.dirty.states,
            "bg_thresh_pages": t.dirty.bg_thresh,
            "thresh_pages": t.dirty.thresh,
            "limit_pages": t.dirty.limit,
        },
    })
}

/// `DIR/FILE` read by `parse`, if the bundle has it; a parse error names
/// the file and the line.
fn optional<T>(
    dir: &Path,
    file: &str,
    parse: impl FnOnce(&str) -> Result<T, (usize, String)>,
) -> Result<Option<T>, Failure> {
    let p = dir.join(file);
    if !p.exists() {
        return Ok(None);
    }
    let text = crate::load::read_text(&p).map_err(Failure::input)?;
    parse(&text)
        .map(Some)
        .map_err(|(line, m)| Failure::input(format!("{}:{line}: {m}", p.display())))
}

/// The whole summary as JSON.
fn summarize(a: &SummaryArgs) -> Result<Value, Failure> {
    let path = Path::new(&a.trace);
    if !path.exists() {
        return Err(Failure::input(format!(
            "{}: no such file or directory",
            a.trace
        )));
    }
    let mut out = serde_json::Map::new();
    let (trace_path, mono) = if path.is_dir() {
        let meta = super::bundle::read(path)?;
        if a.mono_clock {
            return Err(Failure::input(format!(
                "--mono-clock: {} is a bundle, which records its trace clock itself",
                a.trace
            )));
        }
        let mono = meta.trace_clock.as_deref() == Some("mono");
        out.insert("kernel".into(), json!(meta.kernel));
        out.insert("fs".into(), json!(meta.fs));
        out.insert("trace_clock".into(), json!(meta.trace_clock));
        let fio_path = path.join("fio.json");
        if fio_path.exists() {
            let text = crate::load::read_text(&fio_path).map_err(Failure::input)?;
            let fio: Value = serde_json::from_str(&text)
                .map_err(|e| Failure::input(format!("{}:{}: {e}", fio_path.display(), e.line())))?;
            out.insert("jobs".into(), fio_groups(&fio));
        }
        let mut devs = Vec::new();
        for d in &meta.devices {
            if let Some(io) = device_io(path, &d.node)? {
                devs.push(json!({
                    "dev": d.dev, "name": io.name,
                    "reads": io.reads, "read_bytes": io.read_bytes,
                    "writes": io.writes, "write_bytes": io.write_bytes,
                }));
            }
        }
        out.insert("devices".into(), Value::Array(devs));
        let (cb, ca) = (path.join("cpu-before.txt"), path.join("cpu-after.txt"));
        if cb.exists() && ca.exists() {
            let read = |p: &Path| crate::load::read_text(p).map_err(Failure::input);
            let (cpus, busy, iowait) = cpu_use(&read(&cb)?, &read(&ca)?).ok_or_else(|| {
                Failure::input(format!(
                    "{}: cpu-before.txt and cpu-after.txt are not /proc/stat 'cpu' lines with the same counters",
                    path.display()
                ))
            })?;
            out.insert(
                "cpu".into(),
                json!({"cpus": cpus, "busy_share": busy, "iowait_share": iowait}),
            );
        }
        if let Some(chunks) = optional(path, "chunks.txt", chunk_map)? {
            let chunks: Vec<Value> = chunks
                .into_iter()
                .map(|c| {
                    json!({"logical": c.logical, "length": c.length, "type": c.kind, "stripe_devids": c.stripes})
                })
                .collect();
            out.insert("chunks".into(), Value::Array(chunks));
        }
        if let Some(v) = optional(path, "commit_stats.txt", commit_stats)? {
            out.insert("commit_stats".into(), v);
        }
        if let Some(v) = optional(path, "read_policy.txt", |t| Ok(json!(t.trim())))? {
            out.insert("read_policy".into(), v);
        }
        (path.join("trace.txt"), mono)
    } else {
        (path.to_owned(), a.mono_clock)
    };
    let text = read_trace(&trace_path)?;
    let t = tally::tally(&text, mono).map_err(|e| {
        Failure::input(format!(
            "{}:{}: {}",
            trace_path.display(),
            e.line,
            e.message
        ))
    })?;
    out.insert("trace".into(), tally_json(&t));
    Ok(Value::Object(out))
}

fn ms(ns: &Value) -> f64 {
    ns.as_f64().unwrap_or(0.0) / 1e6
}

/// The summary as text.
fn normal(v: &Value) -> String {
    let mut s = String::new();
    let get = |p: &str| v.pointer(p).cloned().unwrap_or(Value::Null);
    if let Some(k) = v.get("kernel") {
        let _ = writeln!(
            s,
            "kernel {}, {}",
            k.as_str().unwrap_or("?"),
            get("/fs").as_str().unwrap_or("?")
        );
    }
    for j in get("/jobs").as_array().into_iter().flatten() {
        for d in ["read", "write"] {
            let x = &j[d];
            if x["total_ios"].as_u64().unwrap_or(0) == 0 {
                continue;
            }
            let _ = writeln!(
                s,
                "{} {d}: {} KiB/s, {:.0} IOPS, {} IOs, clat p50 {:.1} µs, p99 {:.1} µs",
                j["name"].as_str().unwrap_or("?"),
                x["bw_kib_s"],
                x["iops"].as_f64().unwrap_or(0.0),
                x["total_ios"],
                x["clat_p50_ns"].as_f64().unwrap_or(0.0) / 1e3,
                x["clat_p99_ns"].as_f64().unwrap_or(0.0) / 1e3,
            );
        }
    }
    for d in get("/devices").as_array().into_iter().flatten() {
        let _ = writeln!(
            s,
            "device {} ({}): {} reads ({:.1} MiB), {} writes ({:.1} MiB)",
            d["name"].as_str().unwrap_or("?"),
            d["dev"].as_str().unwrap_or("?"),
            d["reads"],
            d["read_bytes"].as_f64().unwrap_or(0.0) / 1048576.0,
            d["writes"],
            d["write_bytes"].as_f64().unwrap_or(0.0) / 1048576.0,
        );
    }
    if let Some(c) = v.get("cpu") {
        let _ = writeln!(
            s,
            "cpu: {} CPUs, {:.1} % busy, {:.1} % iowait over the run",
            c["cpus"],
            c["busy_share"].as_f64().unwrap_or(0.0) * 100.0,
            c["iowait_share"].as_f64().unwrap_or(0.0) * 100.0
        );
    }
    if let Some(p) = v.get("read_policy") {
        let _ = writeln!(s, "btrfs read_policy: {}", p.as_str().unwrap_or("?"));
    }
    for c in get("/chunks").as_array().into_iter().flatten() {
        let kind = c["type"].as_str().unwrap_or("");
        if kind.starts_with("DATA") {
            let _ = writeln!(
                s,
                "data chunk at {:.1} MiB, {:.1} MiB, {kind}, stripes on devids {}",
                c["logical"].as_f64().unwrap_or(0.0) / 1048576.0,
                c["length"].as_f64().unwrap_or(0.0) / 1048576.0,
                c["stripe_devids"]
            );
        }
    }
    let b = get("/trace/btrfs");
    if b["commits"].as_u64().unwrap_or(0) > 0
        || !b["flush_space"].as_array().is_none_or(Vec::is_empty)
    {
        let _ = write!(s, "btrfs: {} commits traced", b["commits"]);
        if let Some(c) = v.get("commit_stats") {
            let _ = write!(
                s,
                "; commit_stats: {} commits since mount, max {} ms, total {} ms",
                c["commits"], c["max_commit_ms"], c["total_commit_ms"]
            );
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "  {:<9} {:<24} {:<8} {:>9}",
            "space", "flush state", "flusher", "calls"
        );
        for f in b["flush_space"].as_array().into_iter().flatten() {
            let _ = writeln!(
                s,
                "  {:<9} {:<24} {:<8} {:>9}",
                f["space"].as_str().unwrap_or("?"),
                f["state"].as_str().unwrap_or("?"),
                if f["preempt"].as_bool() == Some(true) {
                    "preempt"
                } else {
                    "reclaim"
                },
                f["calls"].as_u64().unwrap_or(0),
            );
        }
        let _ = write!(
            s,
            "  tickets: {} ({} errors)",
            b["tickets"], b["ticket_errors"]
        );
        match b.get("ticket_wait_ns").filter(|w| !w.is_null()) {
            Some(w) => {
                let _ = writeln!(
                    s,
                    ", wait p50/p90/p99/max {:.2}/{:.2}/{:.2}/{:.1} ms",
                    ms(&w["p50"]),
                    ms(&w["p90"]),
                    ms(&w["p99"]),
                    ms(&w["max"])
                );
            }
            None => {
                let _ = writeln!(s, ", waits not measured (trace clock not mono)");
            }
        }
    }
    let d = get("/trace/dirty_throttle");
    if d["passes"].as_u64().unwrap_or(0) > 0 || d["global_dirty_states"].as_u64().unwrap_or(0) > 0 {
        let p = &d["pause_ms"];
        let _ = writeln!(
            s,
            "dirty throttling: {} passes, {} without a pause; pauses p50/p90/p99/max {}/{}/{}/{} ms; thresholds bg/dirty/limit {}/{}/{} pages",
            d["passes"],
            d["unpaused"],
            p["p50"],
            p["p90"],
            p["p99"],
            p["max"],
            d["bg_thresh_pages"],
            d["thresh_pages"],
            d["limit_pages"]
        );
    }
    for q in get("/trace/queues").as_array().into_iter().flatten() {
        let us = |k: &str, p: &str| q[k][p].as_f64().unwrap_or(0.0) / 1e3;
        let _ = writeln!(
            s,
            "queue {} (block events): {} reads, {} writes, {} flushes issued; issue to completion p50/p99 µs: reads {:.1}/{:.1}, writes {:.1}/{:.1}, flushes {:.1}/{:.1}; writes in flight at a read's issue p50/p90/p99/max {}/{}/{}/{}, at a flush's p50/p90 {}/{}, over time p10/p50/p90 {}/{}/{} (mean {:.1}); {} reads issued during a flush",
            q["dev"].as_str().unwrap_or("?"),
            q["reads"],
            q["writes"],
            q["flushes"],
            us("read_ns", "p50"),
            us("read_ns", "p99"),
            us("write_ns", "p50"),
            us("write_ns", "p99"),
            us("flush_ns", "p50"),
            us("flush_ns", "p99"),
            q["writes_at_read"]["p50"],
            q["writes_at_read"]["p90"],
            q["writes_at_read"]["p99"],
            q["writes_at_read"]["max"],
            q["writes_at_flush"]["p50"],
            q["writes_at_flush"]["p90"],
            q["writes_in_flight"]["p10"],
            q["writes_in_flight"]["p50"],
            q["writes_in_flight"]["p90"],
            q["writes_in_flight"]["mean"].as_f64().unwrap_or(0.0),
            q["reads_under_flush"],
        );
    }
    let _ = writeln!(
        s,
        "trace: {} records, {} lost-event markers ({} events)",
        get("/trace/records"),
        get("/trace/lost_markers"),
        get("/trace/lost_events")
    );
    s
}

pub fn summary(a: &SummaryArgs) -> Result<(), Failure> {
    let v = summarize(a)?;
    let text = match a.output_format {
        Format::Json => pretty(&v),
        Format::Normal => normal(&v),
    };
    write_out(&mut std::io::stdout().lock(), &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_ios_and_sectors() {
        let l =
            "   41927        0  2113624   4523   601000   12   4808000   93312    0  1000  97835";
        assert_eq!(stat_fields(l), Some([41927, 2113624, 601000, 4808000]));
        assert_eq!(stat_fields("1 2 3"), None);
        assert_eq!(stat_fields("a b c d e f g"), None);
    }

    #[test]
    fn the_chunk_map_gives_each_chunks_stripe_order() {
        let dump = "\titem 1 key (DEV_ITEMS DEV_ITEM 2) itemoff 16087 itemsize 98
\t\tdevid 2 total_bytes 1073741824 bytes_used 223084544
\titem 4 key (FIRST_CHUNK_TREE CHUNK_ITEM 137756672) itemoff 15751 itemsize 112
\t\tlength 107347968 owner 2 stripe_len 65536 type DATA|RAID1
\t\tnum_stripes 2 sub_stripes 1
\t\t\tstripe 0 devid 2 offset 137756672
\t\t\tdev_uuid 4977987b-f92a-4363-935b-71fb79a0050e
\t\t\tstripe 1 devid 1 offset 116785152
";
        assert_eq!(
            chunk_map(dump).expect("reads"),
            vec![Chunk {
                logical: 137_756_672,
                length: 107_347_968,
                kind: "DATA|RAID1".into(),
                stripes: vec![2, 1],
            }]
        );
        assert!(chunk_map("no chunks here\n").expect("reads").is_empty());
        let cut = dump.replace("length 107347968", "length many");
        assert_eq!(chunk_map(&cut).expect_err("bad length").0, 4);
        let cut = dump.replace("CHUNK_ITEM 137756672)", "CHUNK_ITEM x)");
        assert_eq!(chunk_map(&cut).expect_err("bad key").0, 3);
    }

    #[test]
    fn cpu_use_is_the_busy_share_of_the_counters_difference() {
        let before = "cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 50 0 50 350 50 0 0 0 0 0\ncpu1 50 0 50 350 50 0 0 0 0 0\n";
        let after = "cpu  400 0 200 900 200 0 100 0 0 0\ncpu0 1 0 0 0 0 0 0 0 0 0\ncpu1 1 0 0 0 0 0 0 0 0 0\n";
        // Differences: user 300, system 100, idle 200, iowait 100, softirq 100.
        let (cpus, busy, iowait) = cpu_use(before, after).expect("reads");
        assert_eq!(cpus, 2);
        assert!((busy - 500.0 / 800.0).abs() < 1e-12);
        assert!((iowait - 100.0 / 800.0).abs() < 1e-12);
        assert_eq!(cpu_use("cpu 1 2\n", after), None);
        // guest and guest_nice (fields 9 and 10) are inside user and nice.
        let guest = after.replace(
            "cpu  400 0 200 900 200 0 100 0 0 0",
            "cpu  400 0 200 900 200 0 100 0 300 0",
        );
        assert_eq!(cpu_use(before, &guest), cpu_use(before, after));
        assert_eq!(cpu_use("", after), None);
    }

    #[test]
    fn commit_stats_and_space_names_read() {
        let c = commit_stats("commits 44\ncur_commit_ms 0\nmax_commit_ms 853\n").expect("reads");
        assert_eq!(
            commit_stats("commits 44\nmax_commit_ms lots\n")
                .expect_err("bad")
                .0,
            2
        );
        assert_eq!(c["commits"], 44);
        assert_eq!(c["max_commit_ms"], 853);
        assert_eq!(space_name(4), "METADATA");
        assert_eq!(space_name(5), "DATA|METADATA");
        assert_eq!(space_name(0x40), "0x40");
    }
}
