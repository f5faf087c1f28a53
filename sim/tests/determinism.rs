//! A run is (scenario, seed): identical inputs give byte-identical output,
//! another seed gives other numbers.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{run_none, scenario};
use iolab_sim::stats;

const JOB: &str = "[global]\nruntime=5\ntime_based\nbs=4k\n\
[w]\nrw=randwrite\nsize=256m\nfdatasync=16\nnumjobs=2\n\
[r]\nnew_group\nrw=randread\nfilesize=64m\nnrfiles=4\nfile_service_type=random:8\n";

fn json(seed: u64) -> String {
    let out = run_none(&scenario(JOB, "sata-ssd", 1 << 30, seed));
    serde_json::to_string(&stats::json_output(&out.report, out.extra)).expect("serialises")
}

#[test]
fn same_seed_same_bytes_other_seed_other_numbers() {
    let a = json(11);
    let b = json(11);
    assert_eq!(a, b, "seed 11 gave two different outputs");
    let c = json(12);
    assert_ne!(a, c, "seeds 11 and 12 gave identical output");
}
