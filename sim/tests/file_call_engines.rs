//! fio's engines whose IOs are calls on a file rather than data moved
//! (`falloc`, `ftruncate`, `e4defrag`): each IO fio picks becomes the
//! call its direction makes, counted as fio counts the IO, on every
//! filesystem model; what fio fails is refused before the run.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{extra_u64, mean_clat, run_as, scenario};
use iolab_sim::stats::Dir;
use iolab_sim::{FsKind, RunOutput, Scenario, parse_variant, run};

fn on(fs: FsKind, text: &str) -> Scenario {
    let mut s = scenario(text, "nvme", 1 << 30, 1);
    s.fs = fs;
    s
}

fn calls(out: &RunOutput, call: &str) -> u64 {
    out.extra["metadata_calls"][call].as_u64().unwrap_or(0)
}

fn refusal(text: &str) -> String {
    let s = scenario(text, "nvme", 1 << 30, 1);
    match run(&s, &parse_variant("none").expect("variant"), &mut |_| {}) {
        Ok(_) => panic!("ran: {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn falloc_makes_one_call_per_io_by_direction_and_moves_no_data() {
    let text = "[global]\nioengine=falloc\nfilename=f\nsize=1m\nbs=4k\n\
                [a]\nrw=randwrite\n[b]\nrw=randread\n[c]\nrw=randtrim\n";
    for fs in [FsKind::XfsLite, FsKind::Raw, FsKind::Btrfs] {
        let out = run_as(&on(fs, text), "none");
        let what = format!("{fs:?}");
        assert_eq!(calls(&out, "fallocate"), 256, "{what}");
        assert_eq!(calls(&out, "fallocate_keep_size"), 256, "{what}");
        assert_eq!(calls(&out, "punch_hole"), 256, "{what}");
        // fio counts each call as the IO it stands for.
        let ios = |dir| {
            out.report
                .jobs
                .iter()
                .map(|j| j.dir(dir).total_ios)
                .sum::<u64>()
        };
        assert_eq!(
            (ios(Dir::Write), ios(Dir::Read), ios(Dir::Trim)),
            (256, 256, 256)
        );
        assert_eq!(extra_u64(&out, "/devices/0/counters/reads"), 0, "{what}");
        assert_eq!(extra_u64(&out, "/devices/0/counters/discards"), 0, "{what}");
        // Three jobs on one file take its inode's lock in turn.
        assert!(extra_u64(&out, "/inode_lock/contended") > 100, "{what}");
        let lat = mean_clat(&out, "c", Dir::Trim);
        assert!(
            lat >= 6_000.0,
            "{what}: a punch is at least its CPU time: {lat}"
        );
    }
}

#[test]
fn a_punched_hole_drops_the_cached_pages_a_keep_size_call_keeps() {
    // Read the file into the cache, make a pass of falloc calls over it,
    // read it again: after holes the second read goes to the device
    // (`invalidate=0`: fio drops the cache at each job's start by default).
    let text = |dir: &str| {
        format!(
            "[global]\nfilename=f\nsize=4m\nbs=64k\ninvalidate=0\n[warm]\nrw=read\n\
             [calls]\nstonewall\nioengine=falloc\nrw={dir}\n[again]\nstonewall\nrw=read\n"
        )
    };
    let punched = run_as(&on(FsKind::XfsLite, &text("trim")), "none");
    let kept = run_as(&on(FsKind::XfsLite, &text("read")), "none");
    let reads = |out: &RunOutput| extra_u64(out, "/devices/0/counters/read_bytes");
    assert!(
        reads(&punched) >= reads(&kept) + (4 << 20),
        "punched {} kept {}",
        reads(&punched),
        reads(&kept)
    );
    assert!(mean_clat(&punched, "again", Dir::Read) > 2.0 * mean_clat(&kept, "again", Dir::Read));
}

#[test]
fn ftruncate_truncates_once_per_write_and_its_calls_are_logged() {
    let text = "[t]\nioengine=ftruncate\nfilename=f\nsize=1m\nbs=4k\nrw=write\n";
    let out = run_as(&on(FsKind::XfsLite, text), "none");
    assert_eq!(calls(&out, "ftruncate"), 256);
    assert_eq!(out.report.jobs[0].dir(Dir::Write).total_ios, 256);
    assert_eq!(extra_u64(&out, "/devices/0/counters/write_bytes"), 0);
    assert!(extra_u64(&out, "/journal/transactions") >= 256);
}

#[test]
fn e4defrag_moves_each_range_and_writeback_writes_it_to_the_donor() {
    let text = |extra: &str| {
        format!(
            "[d]\nioengine=e4defrag\ndonorname=d.def\nfilename=f\nsize=1m\nbs=32k\n\
             rw=write\nend_fsync=1\n{extra}"
        )
    };
    let out = run_as(&on(FsKind::XfsLite, &text("")), "none");
    assert_eq!(calls(&out, "move_ext"), 32);
    assert!(extra_u64(&out, "/devices/0/counters/write_bytes") >= 1 << 20);
    let inplace = run_as(&on(FsKind::XfsLite, &text("inplace=1\n")), "none");
    assert_eq!(calls(&inplace, "move_ext_inplace"), 32);
    assert!(mean_clat(&inplace, "d", Dir::Write) > mean_clat(&out, "d", Dir::Write));
}

#[test]
fn what_fio_fails_is_refused_naming_the_option() {
    let e = refusal("[t]\nioengine=ftruncate\nfilename=f\nsize=1m\nrw=randread\n");
    assert!(e.contains("rw") && e.contains("EINVAL"), "{e}");
    let e = refusal("[t]\nioengine=e4defrag\nfilename=f\nsize=1m\nrw=write\n");
    assert!(e.contains("donorname"), "{e}");
    let e = refusal("[t]\nioengine=falloc\nfilename=/dev/sdb\nsize=1m\nrw=write\n");
    assert!(e.contains("filename") && e.contains("regular file"), "{e}");
    let e = refusal("[t]\nioengine=falloc\nfilename=f\nsize=1m\nrw=write\nverify=md5\n");
    assert!(e.contains("verify"), "{e}");
}
