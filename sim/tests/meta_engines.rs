//! fio's metadata engines (`filecreate`, `filestat`, `filedelete` of fio
//! 3.33; `dircreate`, `dirstat`, `dirdelete` of fio 3.34): one call per
//! file, counted as one IO, on every filesystem model. The jobs are
//! written here with the options of fio's own example files for these
//! engines (`examples/*-ioengine.fio`: `create_on_open=1`, `openfiles=1`,
//! `fallocate=none`, `filesize=4k`, `unlink=0`, several jobs in one
//! directory), fewer files each.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{run_as, scenario};
use iolab_sim::stats::Dir;
use iolab_sim::{FsKind, RunOutput, Scenario, parse_variant, run};

fn job(engine: &str, files: u32, jobs: u32, extra: &str) -> String {
    let mut text = format!(
        "[global]\nioengine={engine}\nnrfiles={files}\nfilesize=4k\nopenfiles=1\n\
         fallocate=none\nunlink=0\n{extra}"
    );
    for k in 0..jobs {
        text.push_str(&format!("[t{k}]\n"));
    }
    text
}

fn on(fs: FsKind, text: &str) -> Scenario {
    let mut s = scenario(text, "nvme", 1 << 30, 1);
    s.fs = fs;
    s
}

fn calls(out: &RunOutput, call: &str) -> u64 {
    out.extra["metadata_calls"][call].as_u64().unwrap_or(0)
}

fn lock(out: &RunOutput, key: &str) -> u64 {
    out.extra["directory_lock"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("no directory_lock.{key}"))
}

#[test]
fn each_engine_makes_one_call_per_file_on_every_filesystem() {
    let cases = [
        ("filecreate", "create_on_open=1\n", "create"),
        ("filestat", "stat_type=statx\n", "stat"),
        ("filedelete", "", "unlink"),
        ("dircreate", "create_on_open=1\n", "mkdir"),
        ("dirstat", "", "stat"),
        ("dirdelete", "", "rmdir"),
    ];
    for fs in [FsKind::XfsLite, FsKind::Raw, FsKind::Btrfs] {
        for (engine, extra, call) in cases {
            let what = format!("{engine} on {fs:?}");
            let out = run_as(&on(fs, &job(engine, 200, 3, extra)), "none");
            assert_eq!(calls(&out, call), 600, "{what}");
            for j in &out.report.jobs {
                // One IO of the file's block per call, in the read
                // direction (the jobs do not write), as fio counts them.
                let r = j.dir(Dir::Read);
                assert_eq!(r.total_ios, 200, "{what}");
                assert_eq!(r.io_bytes, 200 * 4096, "{what}");
                assert_eq!(j.dir(Dir::Write).total_ios, 0, "{what}");
                assert!(r.clat.mean >= 1_000.0, "{what}: {}", r.clat.mean);
            }
            // Creates and deletes take the directory's lock in turn; a
            // stat takes none.
            let contended = lock(&out, "contended");
            if call == "stat" {
                assert_eq!(contended, 0, "{what}");
            } else {
                assert!(contended > 300, "{what}: {contended}");
                assert!(lock(&out, "wait_ns_sum") > 0, "{what}");
            }
        }
    }
}

#[test]
fn creates_in_one_directory_queue_for_its_lock_and_a_second_directory_does_not() {
    let shared = run_as(&on(FsKind::XfsLite, &job("filecreate", 500, 4, "")), "none");
    let apart = {
        let mut text =
            "[global]\nioengine=filecreate\nnrfiles=500\nfilesize=4k\ncreate_on_open=1\n"
                .to_owned();
        for k in 0..4 {
            text.push_str(&format!("[t{k}]\ndirectory=d{k}\n"));
        }
        run_as(&on(FsKind::XfsLite, &text), "none")
    };
    let mean = |o: &RunOutput| o.report.jobs[0].dir(Dir::Read).clat.mean;
    // Four creators in one directory wait about three calls for each of
    // theirs; in four directories none waits.
    assert!(
        mean(&shared) > 3.0 * mean(&apart),
        "{} vs {}",
        mean(&shared),
        mean(&apart)
    );
    assert_eq!(lock(&apart, "contended"), 0);
    // xfs-lite logs each create: inode, directory block, AGI.
    assert_eq!(shared.extra["journal"]["transactions"], 2000);
}

#[test]
fn btrfs_creates_reserve_change_items_cow_leaves_and_are_committed() {
    // 4,000 creates 10 ms apart: the commit at 30 s writes their items
    // and runs the refs of the leaves they COWed.
    let text = job("filecreate", 4000, 1, "create_on_open=1\nthinktime=10ms\n");
    let out = run_as(&on(FsKind::Btrfs, &text), "flush=on-demand");
    let b = &out.extra["btrfs"];
    assert!(b["meta_tree_cows"].as_u64().expect("cows") > 0, "{b}");
    assert!(b["commits"].as_u64().expect("commits") >= 1, "{b}");
    assert!(b["refs_run"].as_u64().expect("refs") > 0, "{b}");
    let tree_blocks = out.extra["volume"]["commits"]["tree_blocks"]
        .as_u64()
        .expect("tree_blocks");
    assert!(tree_blocks > 0);
    // Every create's items stay: the metadata in use grew by them.
    let used = out.extra["volume"]["metadata_used_bytes"]
        .as_u64()
        .expect("used");
    assert!(used > 4000 * 300, "{used}");
    // The same job with stat finds the files made before the run.
    let stat = run_as(&on(FsKind::Btrfs, &job("filestat", 4000, 1, "")), "none");
    let pre = stat.extra["volume"]["metadata_used_bytes"]
        .as_u64()
        .expect("used");
    assert!(pre > 4000 * 300, "{pre}");
    assert_eq!(
        stat.extra["btrfs"]["meta_tree_cows"], 0,
        "a stat changes nothing"
    );
}

#[test]
fn later_passes_of_a_create_engine_open_what_the_first_made() {
    let text = job("filecreate", 100, 1, "loops=3\n");
    let out = run_as(&on(FsKind::XfsLite, &text), "none");
    assert_eq!(calls(&out, "create"), 100);
    assert_eq!(calls(&out, "open"), 200);
    assert_eq!(out.report.jobs[0].dir(Dir::Read).total_ios, 300);
}

#[test]
fn what_the_metadata_engines_cannot_do_is_an_error() {
    let err = |text: &str| {
        let v = parse_variant("none").expect("none");
        run(&on(FsKind::XfsLite, text), &v, &mut |_| {})
            .err()
            .map(|e| e.to_string())
            .unwrap_or_else(|| panic!("ran: {text}"))
    };
    let cases = [
        (
            job("filedelete", 10, 1, "time_based\nruntime=1\n"),
            "ENOENT",
        ),
        (job("filedelete", 10, 1, "loops=2\n"), "ENOENT"),
        (
            job("filestat", 10, 1, "create_on_open=1\n"),
            "would not exist",
        ),
        (job("filecreate", 10, 1, "fsync=1\n"), "nothing to sync"),
        (job("filestat", 10, 1, "filesize=8k\n"), "fake IOs per call"),
        (
            "[w]\nrw=write\nsize=1m\nfilename=f\n[j]\nrw=randrw\nsize=1m\ncreate_on_open=1\nfilename=f\n"
                .to_owned(),
            "a job that reads what another job writes",
        ),
        (
            "[j]\nrw=write\nsize=1m\nnrfiles=4\nopenfiles=1\n".to_owned(),
            "simulated for the metadata engines",
        ),
    ];
    for (text, needle) in cases {
        let e = err(&text);
        assert!(e.contains(needle), "{text}: {e}");
    }
}

#[test]
fn a_writer_with_create_on_open_creates_each_file_as_it_first_reaches_it() {
    // dpkg's way: a file is made, written and synced, then the next.
    let text = |create: u32| {
        format!(
            "[unpack]\nrw=write\nbs=4k\nnrfiles=200\nfilesize=32k\n\
             file_service_type=sequential\nfsync=8\ncreate_on_open={create}\n"
        )
    };
    for fs in [FsKind::XfsLite, FsKind::Btrfs] {
        let made = run_as(&on(fs, &text(1)), "none");
        let laid = run_as(&on(fs, &text(0)), "none");
        assert_eq!(calls(&made, "create"), 200, "{fs:?}");
        assert_eq!(calls(&laid, "create"), 0, "{fs:?}");
        let writes = |o: &RunOutput| o.report.jobs[0].dir(Dir::Write).total_ios;
        assert_eq!(writes(&made), 1600, "{fs:?}");
        assert_eq!(writes(&laid), 1600, "{fs:?}");
        // The creates take time the writes' latencies do not count.
        let sim = |o: &RunOutput| o.extra["sim_ns"].as_u64().expect("sim_ns");
        assert!(
            sim(&made) >= sim(&laid) + 200 * 15_000,
            "{fs:?}: {} vs {}",
            sim(&made),
            sim(&laid)
        );
    }
}

#[test]
fn rate_iops_paces_metadata_calls_as_fio_paces_their_ios() {
    // 400 creates at 1,000 a second take 0.4 s; unpaced, the same job
    // ends in milliseconds. Poisson gaps keep the same mean.
    for (process, lo, hi) in [("linear", 395, 405), ("poisson", 300, 500)] {
        let text = job(
            "filecreate",
            400,
            1,
            &format!("create_on_open=1\nrate_iops=1000\nrate_process={process}\n"),
        );
        for fs in [FsKind::XfsLite, FsKind::Btrfs] {
            let out = run_as(&on(fs, &text), "none");
            let r = out.report.jobs[0].dir(Dir::Read);
            assert_eq!(r.total_ios, 400, "{process} on {fs:?}");
            assert!(
                (lo..=hi).contains(&r.runtime_ms),
                "{process} on {fs:?}: {} ms",
                r.runtime_ms
            );
        }
    }
    let free = run_as(
        &on(
            FsKind::XfsLite,
            &job("filecreate", 400, 1, "create_on_open=1\n"),
        ),
        "none",
    );
    assert!(free.report.jobs[0].dir(Dir::Read).runtime_ms < 100);
}

#[test]
fn btrfs_without_flush_runs_the_kernels_preemptive_flushing() {
    // A variant without flush= runs 6.18's flush=on-demand:preempt=2021:
    // the same run, byte for byte, as naming it.
    let s = on(
        FsKind::Btrfs,
        &job("filecreate", 3000, 4, "create_on_open=1\n"),
    );
    let plain = run_as(&s, "none");
    let named = run_as(&s, "flush=on-demand:preempt=2021");
    assert_eq!(plain.extra["btrfs"], named.extra["btrfs"]);
    assert_eq!(plain.report.jobs, named.report.jobs);
    let bare = run_as(&s, "flush=on-demand");
    assert_ne!(plain.extra["btrfs"], bare.extra["btrfs"]);
}

/// A job that reads and writes a file it creates on open finds it empty
/// until its writes reach a read's offset (fio 3.33 here, `rw=randrw
/// bs=4k size=16m create_on_open=1 fallocate=none`): libaio counts such
/// a read as an IO of no bytes and goes on, 4 of its 1,992 reads; psync
/// ends with EIO at the first.
#[test]
fn a_reader_of_a_file_it_creates_finds_nothing_past_what_it_wrote() {
    let text = |engine: &str| {
        format!(
            "[j]\nrw=randrw\nbs=4k\nsize=16m\ncreate_on_open=1\nfallocate=none\n\
             ioengine={engine}\ndirect=1\niodepth=4\n"
        )
    };
    let out = run_as(&on(FsKind::XfsLite, &text("libaio")), "none");
    let job = &out.report.jobs[0];
    assert_eq!(job.error, 0);
    let (r, w) = (job.dir(Dir::Read), job.dir(Dir::Write));
    assert_eq!(
        (r.total_ios + w.total_ios) * 4096,
        16 << 20,
        "every IO issued"
    );
    let empty = r.total_ios - r.io_bytes / 4096;
    assert!((1..=40).contains(&empty), "{empty} reads found nothing");
    let sync = run_as(&on(FsKind::XfsLite, &text("psync")), "none");
    assert_eq!(sync.report.jobs[0].error, 5, "EIO");
    assert!(sync.report.jobs[0].dir(Dir::Read).total_ios <= 1);
}
