//! fio's search for the deepest queue that meets a latency target
//! (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`). On this machine fio 3.33 runs `ioengine=null
//! iodepth=16 latency_target=10us latency_window=100ms
//! latency_percentile=99` to depth 16 and reports only its last window
//! (`latency_depth` 16, 101 ms, `latency_target` 10000, `latency_window`
//! 100000); on a file of the root disk with libaio at `iodepth=64` and a
//! 200 µs target at p99 it settles at depth 3.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{run_as, scenario};
use iolab_sim::RunOutput;
use iolab_sim::stats::{Dir, json_output};

fn job(out: &RunOutput) -> serde_json::Value {
    json_output(&out.report, out.extra.clone())["jobs"][0].clone()
}

#[test]
fn a_target_always_met_doubles_to_the_iodepth_and_reports_its_last_window() {
    let text = "[l]\nioengine=null\nsize=1g\nrw=randread\niodepth=16\nlatency_target=10us\n\
                latency_window=100ms\nlatency_percentile=99\nruntime=10\ntime_based\n";
    let out = run_as(&scenario(text, "nvme", 1 << 30, 1), "none");
    let j = job(&out);
    assert_eq!(j["latency_depth"], 16);
    assert_eq!(j["latency_target"], 10_000);
    assert_eq!(j["latency_window"], 100_000);
    assert_eq!(j["latency_percentile"], 99.0);
    // 1, 2, 4, 8, 16, then 16 again: the last window is the report.
    assert_eq!(out.report.jobs[0].dir(Dir::Read).runtime_ms, 100);
}

#[test]
fn a_tight_target_holds_the_depth_down_and_latency_run_keeps_it() {
    let text = |extra: &str| {
        format!(
            "[l]\nfilename=f\nsize=1g\nrw=randread\ndirect=1\nioengine=libaio\niodepth=64\n\
             latency_target=100us\nlatency_window=50ms\nlatency_percentile=99\nruntime=3\n\
             time_based\n{extra}"
        )
    };
    let found = run_as(&scenario(&text(""), "nvme", 1 << 30, 1), "none");
    let depth = job(&found)["latency_depth"].as_u64().expect("depth");
    assert!(depth < 64, "{depth}");
    let free = run_as(
        &scenario(&text("latency_target=0\n"), "nvme", 1 << 30, 1),
        "none",
    );
    let p99 = |out: &RunOutput| out.report.jobs[0].dir(Dir::Read).clat.mean;
    assert!(p99(&found) < p99(&free), "{} {}", p99(&found), p99(&free));
    // The search ends the job; with latency_run it never settles and the
    // job runs to its runtime, reported whole (fio 3.33: 2,000 ms of a
    // 2 s null job).
    let ended = found.report.jobs[0].dir(Dir::Read).runtime_ms;
    assert!(ended < 3_000, "{ended}");
    let run = run_as(
        &scenario(&text("latency_run=1\n"), "nvme", 1 << 30, 1),
        "none",
    );
    let kept = job(&run)["latency_depth"].as_u64().expect("depth");
    assert!(kept < 64, "{kept}");
    assert!(run.report.jobs[0].dir(Dir::Read).runtime_ms >= 2_999);
}

#[test]
fn a_target_missed_at_depth_one_with_every_io_counted_ends_the_job_with_etimedout() {
    let text = "[l]\nfilename=f\nsize=1g\nrw=randread\ndirect=1\nioengine=libaio\niodepth=8\n\
                latency_target=1us\nruntime=3\ntime_based\n";
    let out = run_as(&scenario(text, "nvme", 1 << 30, 1), "none");
    assert_eq!(out.report.jobs[0].error, 110);
    assert!(out.report.jobs[0].dir(Dir::Read).total_ios < 10);
}
