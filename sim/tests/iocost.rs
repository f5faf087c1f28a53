//! blk-iocost in the simulator (issue 4 part 4): the bandwidth-latency case
//! B1 of `docs/iocost-reproduction.md`, weights from `cgroup_weight=`,
//! knobs, a disabled controller, determinism.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{extra_u64, job, run_as, scenario};
use iolab_sim::stats::{self, Dir};
use iolab_sim::variant::VariantError;
use iolab_sim::{RunOutput, Scenario, parse_variant, run};

fn report_f64(out: &RunOutput, pointer: &str) -> f64 {
    out.extra
        .pointer(pointer)
        .and_then(serde_json::Value::as_f64)
        .unwrap_or_else(|| panic!("no {pointer} in {}", out.extra["policy_report"]))
}

/// scenarios/iocost-bandwidth-latency.fio unchanged but for its runtime,
/// on `sata-ssd`.
fn bw_lat(secs: u32) -> Scenario {
    let text = include_str!("../../scenarios/iocost-bandwidth-latency.fio")
        .replace("runtime=20", &format!("runtime={secs}"));
    scenario(&text, "sata-ssd", 8 << 30, 1)
}

/// The QoS of the scenario's header (Tejun's SSD parameters, S commit
/// 69ce861); the model stays the built-in SSD_DFL set the header lists.
const B1_QOS: &str = "iocost:rpct=95:rlat=2500:wpct=95:wlat=5000";

/// What Paolo Valente's script reports.
#[derive(Debug)]
struct B1 {
    /// Device read throughput, MB/s (iostat's view).
    aggregate_mbs: f64,
    /// The interfered job's read bandwidth, MB/s.
    interfered_mbs: f64,
    /// Its mean completion latency, ms.
    interfered_lat_ms: f64,
}

fn b1(out: &RunOutput, secs: u32) -> B1 {
    let bytes = extra_u64(out, "/devices/0/counters/read_bytes");
    let r = job(out, "interfered").dir(Dir::Read);
    B1 {
        aggregate_mbs: bytes as f64 / f64::from(secs) / 1e6,
        interfered_mbs: r.bw_bytes as f64 / 1e6,
        interfered_lat_ms: r.clat.mean / 1e6,
    }
}

#[test]
fn b1_iocost_trades_aggregate_throughput_for_the_interfered_latency() {
    // Our analysis of B1 expects the interfered random reader to be a donor
    // whose latency is queueing behind the interferers' readahead inside the
    // device; iocost moves it only through vrate: QoS misses lower (or hold
    // down) vrate, which holds the interferers' readahead back — a shorter
    // device queue, lower interfered latency, lower aggregate (the QoS
    // trade-off of B1 (d), as `cgroup-v2.rst` documents it). The simulator
    // shows that direction.
    // Why, here: the SSD_DFL model prices a 256 KiB sequential read at
    // ≈ 0.64 ms while `sata-ssd` streams ≈ 547 MB/s, so at vrate 100 % the
    // seven interferers are over budget; vrate climbs only to ≈ 150 %
    // because periods keep landing near the 95th-percentile 2.5 ms target
    // (busy_level stays ≥ 0). The interfered reader then uses more than its
    // 12.5 % share (≈ 1 200 IOPS × 117 µs) and mostly does not donate.
    // Figures (3 s; 20 s in parentheses): none: aggregate 547 (546) MB/s,
    // interfered 0.66 (0.66) MB/s at 6.19 (6.24) ms; iocost: aggregate 441
    // (429) MB/s, interfered 4.14 (4.78) MB/s at 0.99 (0.86) ms. Published
    // (kernel 5.3, thread of Sep 2019): 319 MB/s, 2.27 MB/s at 1.75 ms.
    let secs = 3;
    let s = bw_lat(secs);
    let none_out = run_as(&s, "none");
    let ioc_out = run_as(&s, B1_QOS);
    let none = b1(&none_out, secs);
    let ioc = b1(&ioc_out, secs);
    // The B1 check: at depth 1, throughput × latency ≈ 4 KiB.
    for m in [&none, &ioc] {
        let bytes = m.interfered_mbs * 1e6 * m.interfered_lat_ms / 1e3;
        assert!((bytes / 4096.0 - 1.0).abs() < 0.05, "{m:?}: {bytes} B");
    }
    assert!(
        ioc.interfered_lat_ms < 0.5 * none.interfered_lat_ms,
        "latency: none {none:?}, iocost {ioc:?}"
    );
    assert!(
        ioc.interfered_mbs > 2.0 * none.interfered_mbs,
        "interfered: none {none:?}, iocost {ioc:?}"
    );
    assert!(
        ioc.aggregate_mbs < 0.95 * none.aggregate_mbs
            && ioc.aggregate_mbs > 0.6 * none.aggregate_mbs,
        "aggregate: none {none:?}, iocost {ioc:?}"
    );
    // The mechanism: interferers parked over budget, some periods above the
    // read target, vrate within [100 %, 200 %) for the whole run.
    let p = "/policy_report/run";
    assert!(extra_u64(&ioc_out, &format!("{p}/parked_bios")) > 1000);
    assert!(extra_u64(&ioc_out, &format!("{p}/periods_over_target")) > 0);
    assert_eq!(
        extra_u64(&ioc_out, &format!("{p}/periods")),
        300,
        "10 ms periods"
    );
    let vmin = report_f64(&ioc_out, &format!("{p}/vrate_min_pct"));
    let vmax = report_f64(&ioc_out, &format!("{p}/vrate_max_pct"));
    assert!(
        vmin >= 100.0 && vmax > 110.0 && vmax < 200.0,
        "vrate {vmin}..{vmax}"
    );
    assert_eq!(
        ioc_out.extra["policy_report"]["qos"],
        "8:0 enable=1 ctrl=user rpct=95.00 rlat=2500 wpct=95.00 wlat=5000 min=1.00 max=10000.00"
    );
    assert_eq!(
        ioc_out.extra["policy_report"]["model"],
        "8:0 ctrl=auto model=linear rbps=488636629 rseqiops=8932 rrandiops=8518 \
         wbps=427891549 wseqiops=28755 wrandiops=21940"
    );
}

#[test]
fn b1_v5_4_judges_unsized_latencies_and_drives_vrate_down() {
    // The thread's kernel (5.3) ran the 2019 code. Its latency sampling
    // compared on_q with rlat directly (no deduction of the transfer time),
    // so the interferers' 256 KiB readahead reads miss 2.5 ms far more
    // often: most periods are over target and vrate falls to ≈ 21 %,
    // throttling everyone, the interfered reader included. Figures (3 s):
    // aggregate 108 MB/s, interfered 1.31 MB/s at 3.14 ms, vrate mean 30 %.
    // That is not the published outcome (319 MB/s, 1.75 ms); reproducing
    // B1 is part 5 of the issue.
    let secs = 3;
    let s = bw_lat(secs);
    let modern = run_as(&s, B1_QOS);
    let v54 = run_as(&s, "iocost-v5.4:rpct=95:rlat=2500:wpct=95:wlat=5000");
    assert_eq!(v54.extra["policy_report"]["name"], "iocost-v5.4");
    let p = "/policy_report/run";
    let over = |o: &RunOutput| extra_u64(o, &format!("{p}/periods_over_target"));
    assert!(
        over(&v54) > 2 * over(&modern),
        "{} vs {}",
        over(&v54),
        over(&modern)
    );
    assert!(report_f64(&v54, &format!("{p}/vrate_min_pct")) < 50.0);
    let (a, b) = (b1(&modern, secs), b1(&v54, secs));
    assert!(b.aggregate_mbs < 0.5 * a.aggregate_mbs, "{a:?} vs {b:?}");
}

/// Two direct 4 KiB random readers at iodepth 32 in cgroups weighted 100
/// and 400: together they saturate `sata-ssd`.
fn weighted(secs: u32) -> Scenario {
    let text = format!(
        "[global]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\niodepth=32\nfilesize=1g\n\
         runtime={secs}\ntime_based\n\
         [light]\ncgroup=light\ncgroup_weight=100\n\
         [heavy]\ncgroup=heavy\ncgroup_weight=400\n"
    );
    scenario(&text, "sata-ssd", 8 << 30, 1)
}

fn iops(out: &RunOutput, name: &str) -> f64 {
    job(out, name).dir(Dir::Read).iops
}

#[test]
fn cgroup_weights_split_a_saturated_device_one_to_four() {
    // Figures (3 s): none 47 764 / 47 760 IOPS; iocost (built-in QoS, no
    // latency target, vrate climbing from 100 %) 3 994 / 15 877 (3.98);
    // with the B1 QoS 15 890 / 63 515 (4.00).
    let s = weighted(3);
    let none = run_as(&s, "none");
    let r = iops(&none, "heavy") / iops(&none, "light");
    assert!((r - 1.0).abs() < 0.05, "none: {r}");
    for v in ["iocost", B1_QOS, "iocost-v5.4"] {
        let out = run_as(&s, v);
        let r = iops(&out, "heavy") / iops(&out, "light");
        assert!((r / 4.0 - 1.0).abs() < 0.2, "{v}: heavy/light {r}");
        let groups = out.extra["policy_report"]["groups"]
            .as_array()
            .expect("groups");
        let w: Vec<(&str, u64)> = groups
            .iter()
            .map(|g| {
                (
                    g["name"].as_str().unwrap_or(""),
                    g["weight"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        assert_eq!(w, [("light", 100), ("heavy", 400)], "{v}");
        // io.stat: the heavy group used about four times the light one.
        let usage = |i: usize| groups[i]["usage_us"].as_u64().unwrap_or(0) as f64;
        assert!(usage(1) > 2.0 * usage(0), "{v}: {groups:?}");
    }
}

#[test]
fn a_disabled_iocost_changes_nothing() {
    let s = weighted(1);
    let none = run_as(&s, "none");
    let off = run_as(&s, "iocost:enable=0:rpct=95:rlat=2500");
    let json = |o: &RunOutput| {
        serde_json::to_string(&stats::json_output(&o.report, serde_json::Value::Null))
            .expect("json")
    };
    assert_eq!(json(&none), json(&off));
    assert_eq!(off.extra["policy_report"]["enabled"], false);
    assert_eq!(extra_u64(&off, "/policy_report/run/parked_bios"), 0);
}

#[test]
fn iocost_runs_are_deterministic_and_trace_every_period() {
    let mut s = weighted(1);
    s.trace = true;
    let a = run_as(&s, B1_QOS);
    let b = run_as(&s, B1_QOS);
    let json =
        |o: &RunOutput| serde_json::to_string(&stats::json_output(&o.report, o.extra.clone()));
    assert_eq!(json(&a).expect("json"), json(&b).expect("json"));
    let trace = a.extra["policy_report"]["trace"]
        .as_array()
        .expect("trace kept");
    let periods = trace
        .iter()
        .filter(|r| r["event"] == "iocost_ioc_vrate_adj")
        .count() as u64;
    assert_eq!(periods, extra_u64(&a, "/policy_report/run/periods"));
    assert_eq!(periods, 100, "10 ms periods over 1 s");
    assert!(trace.iter().any(|r| r["event"] == "iocost_iocg_activate"));
    // Without trace, nothing is kept.
    s.trace = false;
    assert!(run_as(&s, B1_QOS).extra["policy_report"]["trace"].is_null());
}

#[test]
fn bad_iocost_knobs_are_errors_naming_the_key() {
    let err = |t: &str| parse_variant(t).expect_err(t);
    for (text, key) in [
        ("iocost:rlat=2.5ms", "rlat"),
        ("iocost:wpct=100.5", "wpct"),
        ("iocost:min=x", "min"),
        ("iocost:min=200:max=150", "min"),
        ("iocost-v5.4:wrandiops=lots", "wrandiops"),
        ("iocost:enable=on", "enable"),
    ] {
        match err(text) {
            VariantError::BadValue { knob, name, .. } => {
                assert_eq!(knob, key, "{text}");
                assert!(name.starts_with("iocost"));
            }
            other => panic!("{text}: {other:?}"),
        }
        assert!(err(text).to_string().contains(key), "{text}");
    }
    assert_eq!(
        err("iocost:wbps=1:rseqops=5").to_string(),
        "policy 'iocost' has no knob 'rseqops' (did you mean 'rseqiops'?)"
    );
}

#[test]
fn iocost_is_refused_on_a_multi_device_volume() {
    // One rq-qos instance per device is not simulated yet (build_raid).
    let mut s = weighted(1);
    s.fs = iolab_sim::FsKind::Btrfs;
    s.volume = Some(iolab_sim::VolumeSpec {
        profile: iolab_sim::Profile::Raid1,
        devices: ["nvme", "nvme"]
            .iter()
            .map(|d| iolab_sim::device::DeviceConfig::preset(d).expect("a preset"))
            .collect(),
        hints: Vec::new(),
        balanced: false,
        pid_split: None,
        metadata_used: 0,
        full_commit_ppm: 0,
    });
    let v = parse_variant("iocost").expect("parses");
    match run(&s, &v, &mut |_| {}) {
        Err(iolab_sim::SimError::Variant(m)) => {
            assert!(m.contains("block-layer policies"), "{m}")
        }
        other => panic!("{:?}", other.map(|o| o.sim_ns)),
    }
}
