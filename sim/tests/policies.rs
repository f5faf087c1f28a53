//! The rq-qos policies in the simulator.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{extra_u64, job, run_as, scenario};
use iolab_sim::Scenario;
use iolab_sim::stats::{self, Dir};

fn wbt_job() -> Scenario {
    common::posted_wbt_job(20)
}

#[test]
fn a_disabled_wbt_changes_nothing() {
    // wbt_lat_usec=0: every bio is admitted untracked.
    let s = wbt_job();
    let none = run_as(&s, "none");
    let off = run_as(&s, "wbt:lat=0");
    let a = serde_json::to_string(&stats::json_output(&none.report, serde_json::Value::Null))
        .expect("json");
    let b = serde_json::to_string(&stats::json_output(&off.report, serde_json::Value::Null))
        .expect("json");
    assert_eq!(a, b);
}

#[test]
fn wbt_throttles_the_fdatasync_writers() {
    let s = wbt_job();
    let none = run_as(&s, "none");
    let wbt = run_as(&s, "wbt");
    let (a, b) = (
        job(&none, "writer").dir(Dir::Write).total_ios,
        job(&wbt, "writer").dir(Dir::Write).total_ios,
    );
    assert!(b < a, "wbt writes {b}, none {a}");
    // The controller moved: reads missed the 2 ms target on this device.
    let steps = extra_u64(&wbt, "/policy_report/step_changes");
    assert!(steps > 0, "the step never changed");
    assert_eq!(wbt.extra["policy_report"]["name"], "wbt");
}

#[test]
fn wbt_v5_runs_its_own_generation() {
    let mut s = wbt_job();
    s.trace = true;
    let v5 = run_as(&s, "wbt-v5");
    assert_eq!(v5.extra["policy_report"]["name"], "wbt-v5");
    // v5 never goes below step 0.
    let trace = v5.extra["policy_report"]["trace"]
        .as_array()
        .expect("trace kept");
    assert!(!trace.is_empty());
    for rec in trace {
        if rec["event"] == "wbt_step" {
            assert!(rec["step"].as_i64().is_some_and(|s| s >= 0), "{rec}");
        }
    }
}

#[test]
fn every_tracked_request_is_released_even_a_bare_flush() {
    // Overwrites of a written-out file: each fdatasync is a bare cache
    // flush that never carries data to the device. Its tracked slot must
    // come back like any other.
    let s = scenario(
        "[w]\nrw=randrw\nrwmixread=10\nbs=4k\nsize=64m\nfdatasync=4\nruntime=5\ntime_based\n",
        "sata-ssd",
        1 << 30,
        1,
    );
    let out = run_as(&s, "wbt");
    assert!(extra_u64(&out, "/journal/bare_flushes") > 100);
    let inflight = out.extra["policy_report"]["classes"][0]["inflight"]
        .as_u64()
        .expect("inflight");
    let max = extra_u64(&out, "/policy_report/max_depth");
    assert!(
        inflight <= max,
        "{inflight} tracked requests left in flight, limit {max}"
    );
}
