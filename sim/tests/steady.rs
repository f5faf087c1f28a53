//! fio's steady-state detection (`ss`, `ss_dur`, `ss_ramp`) as fio 3.33
//! runs it: a check each second of the run, samples kept once the ramp
//! and one more second have passed, the job (or its reporting group)
//! ended once the last `ss_dur` samples hold still. On this machine fio
//! 3.33 ends `ioengine=null rate_iops=5000 ss=iops:10% ss_dur=3 ss_ramp=1`
//! at 4,898 ms with samples 5003, 5003, 5004, and the same job without a
//! ramp at 2,899 ms.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{run_as, scenario};
use iolab_sim::stats::{Dir, json_output};
use iolab_sim::{RunOutput, parse_variant, run};

fn job(extra: &str) -> String {
    format!(
        "[global]\nioengine=null\nsize=1g\nrw=randread\nrate_iops=5000\nruntime=20\n\
         time_based\n{extra}[s]\n"
    )
}

fn runtime_ms(out: &RunOutput, k: usize) -> u64 {
    out.report.jobs[k].dir(Dir::Read).runtime_ms
}

#[test]
fn a_steady_job_ends_after_its_ramp_a_second_and_its_duration() {
    let out = run_as(
        &scenario(
            &job("ss=iops:10%\nss_dur=3\nss_ramp=1\n"),
            "nvme",
            1 << 30,
            1,
        ),
        "none",
    );
    assert_eq!(runtime_ms(&out, 0), 5_000, "fio 3.33: 4,898 ms");
    let ss = out.report.jobs[0].steady.as_ref().expect("steadystate");
    assert!(ss.attained);
    assert_eq!(ss.iops, [5000, 5000, 5000]);
    assert_eq!(ss.bw, [5000 * 4096; 3]);
    let v = json_output(&out.report, out.extra.clone());
    let s = &v["jobs"][0]["steadystate"];
    assert_eq!(s["ss"], "iops:10.000000%");
    assert_eq!(s["attained"], 1);
    assert_eq!(s["criterion"], "0.000000%");
    assert_eq!(s["data"]["iops_mean"], 5000);
    // Without a ramp the first sample is the first second's.
    let out = run_as(
        &scenario(&job("ss=iops:10%\nss_dur=3\n"), "nvme", 1 << 30, 1),
        "none",
    );
    assert_eq!(runtime_ms(&out, 0), 3_000, "fio 3.33: 2,899 ms");
}

#[test]
fn a_job_never_steady_runs_its_runtime_and_says_so() {
    // A limit of 0 is never met: the job runs its 20 s, and the report
    // keeps the last three seconds.
    let out = run_as(
        &scenario(&job("ss=iops:0\nss_dur=3\n"), "nvme", 1 << 30, 1),
        "none",
    );
    assert_eq!(runtime_ms(&out, 0), 20_000);
    let ss = out.report.jobs[0].steady.as_ref().expect("steadystate");
    assert!(!ss.attained);
    assert_eq!(ss.iops.len(), 3);
}

#[test]
fn a_reporting_group_is_steady_together_and_its_last_job_keeps_the_samples() {
    // Two jobs at 5000 and 1000 IOPS: the group's samples are their sum,
    // and both end at once.
    let text = "[global]\nioengine=null\nsize=1g\nrw=randread\nruntime=20\ntime_based\n\
                group_reporting\nss=iops:5%\nss_dur=2\n\
                [a]\nrate_iops=5000\n[b]\nrate_iops=1000\n";
    let out = run_as(&scenario(text, "nvme", 1 << 30, 1), "none");
    assert_eq!(out.report.jobs.len(), 1, "one entry for the group");
    let ss = out.report.jobs[0].steady.as_ref().expect("steadystate");
    assert!(ss.attained);
    assert_eq!(ss.iops, [6000, 6000]);
    assert_eq!(runtime_ms(&out, 0), 2_000);
}

#[test]
fn a_group_with_other_steady_options_is_refused_as_fio_rejects_it() {
    let text = "[global]\nioengine=null\nsize=1g\nruntime=5\ntime_based\n\
                [a]\nss_dur=2\n[b]\n";
    let s = scenario(text, "nvme", 1 << 30, 1);
    let e = match run(&s, &parse_variant("none").expect("variant"), &mut |_| {}) {
        Ok(_) => panic!("ran"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("consistent within reporting groups"), "{e}");
}

#[test]
fn the_null_devices_use_no_device() {
    // fio 3.33's psync on /dev/null and /dev/zero: about 0.6 µs a call.
    let text = "[w]\nfilename=/dev/null\nrw=write\nbs=128k\nsize=128m\n\
                [r]\nfilename=/dev/zero\nrw=randread\nsize=16m\n";
    let out = run_as(&scenario(text, "hdd", 1 << 30, 1), "none");
    for (k, dir) in [(0, Dir::Write), (1, Dir::Read)] {
        let d = out.report.jobs[k].dir(dir);
        assert!(d.total_ios > 0);
        assert!((d.clat.mean - 600.0).abs() < 1.0, "{}", d.clat.mean);
    }
    assert_eq!(
        out.extra["devices"][0]["counters"]["writes"].as_u64(),
        Some(0)
    );
}

#[test]
fn a_run_with_an_io_budget_stops_at_it_unless_its_jobs_end_first() {
    // 5,000 IOs a second: a job steady after 5 s does about 25,000 IOs;
    // one never steady would do its 20 s, 100,000.
    let v = parse_variant("none").expect("none parses");
    let with_budget = |extra: &str| {
        let mut s = scenario(&job(extra), "nvme", 1 << 30, 1);
        s.io_budget = Some(50_000);
        run(&s, &v, &mut |_| {})
    };
    let out = with_budget("ss=iops:10%\nss_dur=3\nss_ramp=1\n").expect("steady first");
    assert_eq!(runtime_ms(&out, 0), 5_000);
    let e = with_budget("ss=iops:0\nss_dur=3\n").expect_err("never steady");
    match &e {
        iolab_sim::SimError::OverBudget { at_ns, ios } => {
            assert_eq!(*ios, 50_000);
            assert!((9_000_000_000..11_000_000_000).contains(at_ns), "{at_ns}");
        }
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains("ss="), "{e}");
}
