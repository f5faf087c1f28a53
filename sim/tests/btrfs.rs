//! btrfs-lite (`--fs btrfs-lite`): the buffered-write metadata path around
//! the `iolab-flush` model (flush.md, fidelity.md §2).

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::scenario;
use iolab_sim::stats::{self, Dir};
use iolab_sim::{FsKind, RunOutput, Scenario, parse_variant, run};

/// The LKP fio-basic job (scenarios/flush-randwrite-sync.fio) cut to
/// `secs` seconds, 64 GiB of RAM as the robot's machine had.
fn lkp(secs: u32) -> Scenario {
    let text = include_str!("../../scenarios/flush-randwrite-sync.fio")
        .replace("runtime=300", &format!("runtime={secs}"));
    let mut s = scenario(&text, "sata-ssd", 64 << 30, 1);
    s.fs = FsKind::BtrfsLite;
    s
}

fn run_as(s: &Scenario, variant: &str) -> RunOutput {
    let v = parse_variant(variant).expect("variant parses");
    run(s, &v, &mut |_| {}).unwrap_or_else(|e| panic!("seed {}: {variant}: {e}", s.seed))
}

fn btrfs_u64(out: &RunOutput, key: &str) -> u64 {
    out.extra["btrfs"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("no btrfs.{key} in {}", out.extra["btrfs"]))
}

#[test]
fn writes_reserve_metadata_and_ordered_extents_queue_refs() {
    let out = run_as(&lkp(2), "flush=on-demand");
    let writes: u64 = out
        .report
        .jobs
        .iter()
        .map(|j| j.dir(Dir::Write).total_ios)
        .sum();
    assert!(writes > 10_000, "{writes} writes");
    // Every write() reserved (a granted reservation or a ticket).
    assert!(btrfs_u64(&out, "reservations") >= writes);
    // Writeback bios became ordered extents whose refs were run.
    assert!(btrfs_u64(&out, "ordered_extents") > 1_000);
    assert!(btrfs_u64(&out, "refs_run") > 0);
    assert_eq!(btrfs_u64(&out, "enospc"), 0);
    assert_eq!(out.extra["btrfs"]["flush_policy"], "flush=on-demand");
    let series = out.extra["btrfs"]["series"].as_array().expect("series");
    assert_eq!(series.len(), 2, "one sample a second");
    // may_use stays below the metadata space plus the overcommit share
    // (1 GiB total + unallocated / 8 on the 512 GB device).
    let cap = (1u64 << 30) + 512_000_000_000 / 8;
    for row in series {
        let may_use = row[1].as_u64().expect("may_use");
        assert!(may_use <= cap, "may_use {may_use} above {cap}");
    }
}

#[test]
fn catch_up_runs_refs_at_handle_ends_and_on_demand_only_in_flushers() {
    // flush.md §3 and §7 item 10: catch-up handle ends queue ref runs
    // (the throttle's async worker); on-demand handle ends never run refs,
    // so its refs are run by the ticket flusher and the committer.
    let s = lkp(10);
    let cu = run_as(&s, "flush=catch-up:run-at-end=on");
    let od = run_as(&s, "flush=on-demand");
    let by = |o: &RunOutput, actor: &str| {
        o.extra["btrfs"]["refs_run_by"][actor]
            .as_u64()
            .unwrap_or_else(|| panic!("no refs_run_by.{actor}"))
    };
    assert!(by(&cu, "ref_worker") > 0);
    assert_eq!(by(&od, "ref_worker"), 0);
    assert!(by(&od, "reclaim") > 0);
    // Catch-up keeps the queue short: fewer refs pending at the end.
    let pending = |o: &RunOutput| {
        o.extra["btrfs"]["final"]["delayed_refs_size"]
            .as_u64()
            .expect("size")
    };
    assert!(
        pending(&cu) < pending(&od),
        "{} vs {}",
        pending(&cu),
        pending(&od)
    );
}

#[test]
fn preemptive_flushing_2021_writes_faster_and_waits_less_than_on_demand() {
    // flush.md §9 item 5: the 5.12 preemptive worker starts delalloc
    // writeback before tickets pile up. Each of its `shrink_delalloc`
    // calls starts writeback once and sleeps a jiffy, so it also ends.
    let s = lkp(20);
    let od = run_as(&s, "flush=on-demand");
    let pre = run_as(&s, "flush=on-demand:preempt=2021");
    let bw = |o: &RunOutput| o.report.jobs[0].dir(Dir::Write).bw_bytes;
    assert!(
        bw(&pre) > bw(&od) * 11 / 10,
        "preempt=2021 {} B/s, on-demand {} B/s",
        bw(&pre),
        bw(&od)
    );
    let max_wait = |o: &RunOutput| {
        o.extra["btrfs"]["ticket_wait_ns"]["max"]
            .as_u64()
            .expect("max")
    };
    assert!(
        max_wait(&pre) < max_wait(&od),
        "{} vs {}",
        max_wait(&pre),
        max_wait(&od)
    );
}

#[test]
fn btrfs_runs_are_deterministic() {
    let s = lkp(1);
    let json = |o: &RunOutput| {
        serde_json::to_string(&stats::json_output(&o.report, o.extra.clone())).expect("json")
    };
    assert_eq!(
        json(&run_as(&s, "flush=catch-up")),
        json(&run_as(&s, "flush=catch-up"))
    );
}

#[test]
fn what_btrfs_lite_cannot_run_is_an_error() {
    let err = |s: &Scenario, v: &str| {
        let v = parse_variant(v).expect("variant parses");
        run(s, &v, &mut |_| {})
            .err()
            .unwrap_or_else(|| panic!("ran"))
            .to_string()
    };
    // flush= without btrfs-lite.
    let mut xfs = lkp(1);
    xfs.fs = FsKind::XfsLite;
    assert!(err(&xfs, "flush=on-demand").contains("--fs btrfs-lite"));
    // O_DIRECT and fsync are not on the btrfs-lite path yet.
    let mut direct = scenario(
        "[w]\nrw=randwrite\nsize=64m\ndirect=1\nruntime=1\ntime_based\n",
        "sata-ssd",
        1 << 30,
        1,
    );
    direct.fs = FsKind::BtrfsLite;
    assert!(err(&direct, "none").contains("direct"));
    let mut fsync = scenario(
        "[w]\nrw=randwrite\nsize=64m\nfsync=8\nruntime=1\ntime_based\n",
        "sata-ssd",
        1 << 30,
        1,
    );
    fsync.fs = FsKind::BtrfsLite;
    assert!(err(&fsync, "none").contains("fsync"));
    // Bad flush knobs name the knob.
    let e = parse_variant("flush=on-demand:preempt=2030").unwrap_err();
    assert!(e.to_string().contains("preempt"), "{e}");
}
