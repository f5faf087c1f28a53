//! Cases that once broke a run: each asserts the value the run must give.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{extra_u64, job, run_none, scenario};
use iolab_sim::stats::Dir;

const MIB: u64 = 1 << 20;

#[test]
fn writers_sharing_a_small_file_do_not_stall_the_flusher() {
    // Every dirty page can be under writeback at once: the flusher must
    // sleep until writeback completes instead of looping.
    let s = scenario(
        "[w]\nioengine=sync\nrw=randwrite\nbs=1m\nfilename=hot\nsize=6m\nnumjobs=16\nruntime=2\ntime_based\ngroup_reporting\n",
        "nvme",
        64 * MIB,
        1,
    );
    let out = run_none(&s);
    let w = job(&out, "w");
    assert_eq!(w.members, 16);
    assert!(w.dir(Dir::Write).total_ios > 1000);
    assert!(
        out.sim_ns >= 2_000_000_000 && out.sim_ns < 2_100_000_000,
        "ended at {}",
        out.sim_ns
    );
}

#[test]
fn the_ail_writes_back_and_frees_log_space() {
    // A minute of buffered random writes on a 16 GB device (a 64 MiB log):
    // the log worker forces the log every 30 s and has the AIL write back
    // all it holds.
    let mut s = scenario(
        "[w]\nrw=randwrite\nbs=4k\nsize=6g\nruntime=60\ntime_based\n",
        "nvme",
        2048 * MIB,
        1,
    );
    if let Some(ssd) = s.device.ssd.as_mut() {
        ssd.capacity_gb = 16;
    }
    let out = run_none(&s);
    let queued = extra_u64(&out, "/journal/ail_writes");
    let done = extra_u64(&out, "/journal/ail_done");
    let used = extra_u64(&out, "/journal/log_used_bytes");
    let size = extra_u64(&out, "/journal/log_bytes");
    assert!(queued > 0, "no AIL push");
    assert!(done > queued / 2, "{done} of {queued} AIL writes completed");
    assert!(used <= size, "log overcommitted: {used} of {size}");
}

#[test]
fn rate_limits_hold_past_eighteen_gigabytes() {
    let s = scenario(
        "[w]\nioengine=null\nrw=write\nbs=1m\nsize=1g\nrate=200m\nruntime=200\ntime_based\n",
        "null",
        1024 * MIB,
        1,
    );
    let out = run_none(&s);
    let bw = job(&out, "w").dir(Dir::Write).bw_bytes as f64;
    let want = 200.0 * MIB as f64;
    assert!((bw - want).abs() < want * 0.01, "{bw} B/s, want {want}");
}

#[test]
fn sequential_readahead_streams_whatever_the_request_size() {
    let bw = |bs: &str| {
        let s = scenario(
            &format!("[r]\nrw=read\nbs={bs}\nsize=256m\n"),
            "sata-ssd",
            1024 * MIB,
            1,
        );
        job(&run_none(&s), "r").dir(Dir::Read).bw_bytes as f64
    };
    let small = bw("4k");
    for bs in ["12k", "128k", "256k"] {
        let b = bw(bs);
        assert!(
            b > small * 0.9,
            "bs={bs}: {b} B/s against {small} B/s at 4k"
        );
    }
}

#[test]
fn a_sequential_job_reads_every_file_to_its_end() {
    let s = scenario(
        "[r]\nrw=read\nnrfiles=4\nfilesize=16m\nfile_service_type=random\n",
        "null",
        1024 * MIB,
        1,
    );
    let out = run_none(&s);
    assert_eq!(job(&out, "r").dir(Dir::Read).io_bytes, 64 * MIB);
}

#[test]
fn end_fsync_over_many_files_does_not_recurse() {
    let s = scenario(
        "[r]\nrw=read\nnrfiles=100000\nfilesize=4k\nend_fsync=1\n",
        "null",
        4096 * MIB,
        1,
    );
    let out = run_none(&s);
    let r = job(&out, "r");
    assert_eq!(r.dir(Dir::Read).total_ios, 100_000);
    assert_eq!(r.sync.total_ios, 100_000);
}

#[test]
fn exit_what_all_skips_later_stonewall_sections() {
    let s = scenario(
        "[a]\nrw=read\nsize=8m\nexitall\nexit_what=all\n[b]\nstonewall\nrw=read\nsize=8m\n",
        "null",
        1024 * MIB,
        1,
    );
    let out = run_none(&s);
    assert_eq!(job(&out, "a").dir(Dir::Read).io_bytes, 8 * MIB);
    assert_eq!(job(&out, "b").dir(Dir::Read).io_bytes, 0);
}

#[test]
fn a_file_larger_than_half_the_device_runs() {
    // The log sits mid-device: a 600 GB file on a 1 TB drive goes around it.
    let s = scenario(
        "[r]\nrw=randread\ndirect=1\nioengine=libaio\niodepth=8\nsize=600g\nruntime=1\ntime_based\n",
        "nvme",
        1024 * MIB,
        1,
    );
    let out = run_none(&s);
    assert!(job(&out, "r").dir(Dir::Read).total_ios > 10_000);
}

#[test]
fn mq_deadline_never_starves_the_flush_of_tags() {
    // The posted fdatasync-writers job on SATA, cut to 30 s: requests
    // waiting for their post-flush must not hold every driver tag while
    // the FLUSH they wait for needs one.
    let mut s = common::posted_wbt_job(30);
    let none = run_none(&s);
    s.scheduler = iolab_sim::SchedKind::MqDeadline;
    let dl = run_none(&s);
    assert!(
        dl.sim_ns < 30_200_000_000,
        "a job overran its runtime: ended at {}",
        dl.sim_ns
    );
    let (a, b) = (
        job(&none, "writer").dir(Dir::Write).total_ios as f64,
        job(&dl, "writer").dir(Dir::Write).total_ios as f64,
    );
    assert!(
        b > a * 0.5,
        "mq-deadline writes {b} against {a} without a scheduler"
    );
    assert!(job(&dl, "reader").dir(Dir::Read).total_ios > 10_000);
}
