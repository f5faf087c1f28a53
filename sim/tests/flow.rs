//! fio's flow control between jobs (`flow`, `flow_id`, `flow_sleep`), as
//! fio 3.33 keeps it: each job of a flow to its share of the flow's IOs,
//! its weight over the flow's weights. On this machine fio 3.33 gives
//! psync jobs with `flow=1` and `flow=3` 8,608 and 25,828 IOs in 1 s
//! (3.0), with `flow=3` and `flow=1` 9,101 and 3,035 (0.33), and without
//! flow 7,687 and 112,815.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{run_as, scenario};
use iolab_sim::RunOutput;
use iolab_sim::stats::Dir;

fn ios(out: &RunOutput, job: usize) -> u64 {
    let j = &out.report.jobs[job];
    j.dir(Dir::Read).total_ios + j.dir(Dir::Write).total_ios
}

fn pair(a: &str, b: &str, extra: &str) -> (u64, u64) {
    let text = format!(
        "[global]\nruntime=1\ntime_based\ndirect=1\nioengine=psync\nsize=256m\n{extra}\
         [a]\nrw=randread\n{a}\n[b]\nrw=randwrite\n{b}\n"
    );
    let out = run_as(&scenario(&text, "nvme", 1 << 30, 2), "none");
    (ios(&out, 0), ios(&out, 1))
}

#[test]
fn the_jobs_of_a_flow_keep_to_the_shares_of_their_weights() {
    let (free_a, free_b) = pair("", "", "");
    assert!(free_b > 3 * free_a, "{free_a} {free_b}");
    for extra in ["", "flow_sleep=100\n"] {
        for (wa, wb) in [(1u64, 3u64), (3, 1), (1, 1)] {
            let (a, b) = pair(&format!("flow={wa}"), &format!("flow={wb}"), extra);
            assert!(a > 1_000, "{extra}{wa}:{wb}: a {a}");
            // Each within one IO (and a sleep's worth) of its share.
            let want = b as f64 * wa as f64 / wb as f64;
            assert!(
                (a as f64 - want).abs() <= want * 0.02 + 2.0,
                "{extra}{wa}:{wb}: a {a}, b {b}"
            );
        }
    }
}

#[test]
fn flows_are_apart_by_id_and_a_job_goes_on_once_its_flow_is_alone() {
    // b and c are in flow 1 at 1:1, a is alone in flow 0: a runs free. c
    // stops after 100 IOs, b is held to c's pace until then, and goes on
    // alone to its 4,000 once c's IOs and weight have left the flow.
    let text = "[global]\ndirect=1\nioengine=psync\nsize=64m\nbs=4k\n\
                [a]\nrw=randread\nnumber_ios=3000\nflow=1\n\
                [b]\nrw=randread\nnumber_ios=4000\nflow=1\nflow_id=1\n\
                [c]\nrw=randwrite\nnumber_ios=100\nflow=1\nflow_id=1\n";
    let out = run_as(&scenario(text, "nvme", 1 << 30, 3), "none");
    assert_eq!(
        (ios(&out, 0), ios(&out, 1), ios(&out, 2)),
        (3000, 4000, 100)
    );
}

#[test]
fn a_negative_weight_wraps_as_fio_keeps_it_and_holds_no_job_back() {
    // fio's butterfly.fio on a 64 MiB file: fio 3.33 reads all 16,384
    // blocks forwards and all 16,384 backwards (its flow's unsigned total
    // of 2 and -2 is 0, so neither job is ever behind its share).
    let text = "[global]\nfilename=f\nsize=64m\nbs=4k\ndirect=1\n\
                [forward]\nrw=read\nflow=2\n[backward]\nrw=read:-8k\nflow=-2\n";
    let out = run_as(&scenario(text, "nvme", 1 << 30, 1), "none");
    assert_eq!((ios(&out, 0), ios(&out, 1)), (16_384, 16_384));
    let file = iolab_sim::fio::parse_job_file(
        "t.fio",
        text,
        &iolab_sim::fio::ParseEnv {
            mem_bytes: 1 << 30,
            ncpus: 2,
            pagesize: 4096,
            vars: &std::collections::BTreeMap::new(),
            include: &|_: &str, n: &str| Err(n.to_owned()),
        },
    )
    .expect("parses");
    let said = file.accepted.iter().find(|a| a.option == "flow");
    assert!(
        said.is_some_and(|a| a.why.contains("4294967294")),
        "{:?}",
        file.accepted
    );
}
