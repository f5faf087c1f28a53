//! fio's rate control (`rate`, `rate_iops`) at depth: fio's thread, ahead
//! of the rate, waits for its IOs in flight before it sleeps
//! (`io_u_quiesce` in `rate_ddir`), so a rate the device keeps up with goes
//! out one IO at a time whatever the `iodepth`. On this machine fio 3.33
//! (libaio, direct, 4 KiB random reads, 2 s) issues 99.6 % of its IOs at
//! depth 1 with `iodepth=16 rate_iops=2000`, 98.9 % with `rate=8m`, and
//! 53.5 % / 22.2 % / 24.3 % at depths 1 / 2 / 4 with `iodepth=4
//! rate_iops=20000`.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{run_as, scenario};
use iolab_sim::stats::Dir;

/// Share of the job's IOs issued at depth 1, and its read IOPS.
fn depth_one_and_iops(rate: &str, depth: u32) -> (f64, f64) {
    let text = format!(
        "[r]\nrw=randread\nsize=64m\ndirect=1\nioengine=libaio\niodepth={depth}\n\
         runtime=2\ntime_based\n{rate}\n"
    );
    let out = run_as(&scenario(&text, "nvme", 1 << 30, 1), "none");
    let j = &out.report.jobs[0];
    let all: u64 = j.depth_map.iter().sum();
    (j.depth_map[0] as f64 / all as f64, j.dir(Dir::Read).iops)
}

#[test]
fn a_rate_the_device_keeps_up_with_goes_out_one_io_at_a_time() {
    for rate in ["rate_iops=2000", "rate=8m"] {
        let (one, iops) = depth_one_and_iops(rate, 16);
        assert!(one > 0.95, "{rate}: {:.1} % at depth 1", 100.0 * one);
        assert!((iops - 2000.0).abs() < 2000.0 * 0.03, "{rate}: {iops} IOPS");
    }
    // Faster than one IO's latency allows: the depth is used, and the
    // rate still holds.
    let (one, iops) = depth_one_and_iops("rate_iops=20000", 4);
    assert!(one < 0.8, "{:.1} % at depth 1", 100.0 * one);
    assert!((iops - 20_000.0).abs() < 20_000.0 * 0.03, "{iops} IOPS");
    // Without a rate, the queue stays full.
    let (one, _) = depth_one_and_iops("", 16);
    assert!(one < 0.01, "{:.1} % at depth 1", 100.0 * one);
}

/// A rated job at depth that stops on its own (`number_ios`) while some
/// of its contexts wait behind its rate ends, and the stonewalled job
/// after it runs.
#[test]
fn a_rated_job_that_stops_early_ends_and_lets_the_next_run() {
    let text = "[r]\nrw=randread\nsize=64m\ndirect=1\nioengine=libaio\niodepth=16\n\
                rate_iops=2000\nnumber_ios=100\n[s]\nstonewall\nrw=read\nsize=1m\n";
    let out = run_as(&scenario(text, "nvme", 1 << 30, 1), "none");
    assert_eq!(out.report.jobs[0].dir(Dir::Read).total_ios, 100);
    assert_eq!(out.report.jobs[1].dir(Dir::Read).total_ios, 256);
}

/// `io_submit_mode=offload` (fio's `fixed-rate-submission.fio`): fio's
/// `rate_ddir` waits for the IOs in flight only when it submits inline.
/// On a disk whose reads take longer than the rate's gap, inline
/// submission falls behind, then catches up in bursts (IOs issued 8 and
/// 16 deep); offloaded, each IO goes out at its time, as many in flight
/// as the latency holds (here about 4), and waits less.
#[test]
fn offloaded_submission_goes_out_at_its_times() {
    let run = |mode: &str| {
        let text = format!(
            "[r]\nrw=randread\nsize=1g\ndirect=1\nioengine=libaio\niodepth=32\n\
             rate_iops=600\nruntime=2\ntime_based\nio_submit_mode={mode}\n"
        );
        let out = run_as(&scenario(&text, "hdd", 1 << 30, 1), "none");
        let j = &out.report.jobs[0];
        let all: u64 = j.depth_map.iter().sum();
        let share = |k: usize| j.depth_map[k] as f64 / all as f64;
        (j.dir(Dir::Read).iops, share(2), share(3) + share(4))
    };
    let (inline, _, inline_deep) = run("inline");
    let (offload, offload_at_4, offload_deep) = run("offload");
    assert!((590.0..=601.0).contains(&offload), "{offload}");
    assert!((580.0..=601.0).contains(&inline), "{inline}");
    assert!(offload_at_4 > 0.8, "{offload_at_4}");
    assert!(
        inline_deep > 0.3 && offload_deep < 0.05,
        "{inline_deep} {offload_deep}"
    );
}
