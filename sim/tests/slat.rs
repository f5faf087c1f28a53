//! Submission latency (fio's `slat`) and total latency (`lat`). On the
//! calibrated loop device of the root disk fio 3.33 measured (its probes,
//! `kernel/calibrated/loop-disk.probes`, libaio, 4 KiB random reads):
//! `slat` 14.3 µs at QD1 (the submission, 5.5 µs at QD32 less its few
//! wake-ups, and the 8.5 µs wake-up of a thread that slept), 6.0 µs at
//! QD32; `lat` = `slat` + `clat`. With psync on a file of the root disk:
//! no `slat` (N = 0) and `lat` 71 ns above `clat`.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{parse_reading, run_none, scenario_of};
use iolab_sim::device::DeviceConfig;
use iolab_sim::stats::{Dir, json_output, normal_output};

fn loop_disk() -> DeviceConfig {
    DeviceConfig::from_toml(include_str!("../../kernel/calibrated/loop-disk.toml"))
        .expect("the calibrated device parses")
}

fn run(job: &str, device: DeviceConfig) -> iolab_sim::RunOutput {
    let jobs = parse_reading(job, &[], 1 << 30).expect("parses");
    run_none(&scenario_of(jobs, device, 1 << 30, 1))
}

fn job(engine: &str, depth: u32, extra: &str) -> String {
    format!(
        "[r]\nfilename=/dev/sdb\nsize=1g\nrw=randread\nbs=4k\ndirect=1\nioengine={engine}\n\
         iodepth={depth}\nruntime=1\ntime_based\n{extra}"
    )
}

#[test]
fn an_engine_that_queues_has_a_slat_and_lat_is_slat_plus_clat() {
    let out = run(&job("libaio", 1, ""), loop_disk());
    let r = out.report.jobs[0].dir(Dir::Read);
    assert_eq!(r.slat.n, r.clat.n);
    // The submission and a wake-up: fio measured 14.3 µs.
    assert!(
        (13_000.0..15_500.0).contains(&r.slat.mean),
        "{}",
        r.slat.mean
    );
    assert!((r.lat.mean - r.clat.mean - r.slat.mean).abs() < 1.0);
    let v = json_output(&out.report, out.extra.clone());
    let read = &v["jobs"][0]["read"];
    assert_eq!(read["slat_ns"]["N"], read["clat_ns"]["N"]);
    let normal = normal_output(&out.report);
    let at = |w: &str| normal.find(w).unwrap_or_else(|| panic!("{w}: {normal}"));
    assert!(at("    slat (") < at("    clat (") && at("    clat (") < at("     lat ("));
}

#[test]
fn a_synchronous_engine_has_no_slat_and_its_lat_is_its_call() {
    let out = run(&job("psync", 1, ""), loop_disk());
    let r = out.report.jobs[0].dir(Dir::Read);
    assert_eq!(r.slat.n, 0);
    assert_eq!(r.lat.n, r.clat.n);
    assert!(
        (r.lat.mean - r.clat.mean - 71.0).abs() < 0.5,
        "{}",
        r.lat.mean
    );
    let normal = normal_output(&out.report);
    assert!(!normal.contains("slat ("), "{normal}");
}

#[test]
fn the_presets_have_no_host_time_so_no_submission_time() {
    let out = run(
        &job("io_uring", 8, ""),
        DeviceConfig::preset("nvme").expect("preset"),
    );
    let r = out.report.jobs[0].dir(Dir::Read);
    assert_eq!(r.slat.n, r.clat.n);
    assert_eq!((r.slat.mean, r.slat.max), (0.0, 0));
}

#[test]
fn slat_and_lat_percentiles_are_listed_when_asked() {
    let asked = "slat_percentiles=1\nlat_percentiles=1\npercentile_list=50:99\n";
    let out = run(&job("libaio", 8, asked), loop_disk());
    let r = out.report.jobs[0].dir(Dir::Read);
    assert_eq!(r.slat.percentiles.len(), 2);
    assert_eq!(r.lat.percentiles.len(), 2);
    // Each point of lat is at least the same point of clat.
    for (l, c) in r.lat.percentiles.iter().zip(&r.clat.percentiles) {
        assert!(l.1 >= c.1, "{l:?} {c:?}");
    }
    let normal = normal_output(&out.report);
    assert!(normal.contains("    slat percentiles ("), "{normal}");
    assert!(normal.contains("    lat percentiles ("), "{normal}");
    let v = json_output(&out.report, out.extra.clone());
    let slat = &v["jobs"][0]["read"]["slat_ns"];
    assert!(slat["percentile"]["99.000000"].as_u64().is_some(), "{slat}");
    // Not asked: none listed.
    let plain = run(&job("libaio", 8, ""), loop_disk());
    assert!(
        plain.report.jobs[0]
            .dir(Dir::Read)
            .slat
            .percentiles
            .is_empty()
    );
}
