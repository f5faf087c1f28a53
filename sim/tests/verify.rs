//! fio's verify on a job that writes (`world::verify`): the blocks written
//! are read back once the writes are done, as fio 3.33 does on this
//! machine. Its figures for `rw=randwrite bs=4k size=64m direct=1
//! ioengine=libaio iodepth=16 verify=crc32c` on a file: 16,384 writes,
//! then 16,384 reads; the read runtime the read-back's (303 ms), the write
//! runtime the writes' (428 ms), the job's their sum (729 ms). With
//! `verify_backlog=100` the reads go along with the writes; with
//! `time_based` fio warns that the read-back never starts and reads
//! nothing; `do_verify=0` reads nothing; a `randrw` job reads its mix's
//! reads and then every block it wrote.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{job, parse_reading, run_none, scenario, scenario_of};
use iolab_sim::device::DeviceConfig;
use iolab_sim::stats::Dir;

const BASE: &str = "[v]\nbs=4k\ndirect=1\nioengine=libaio\niodepth=16\nverify=crc32c\nsize=16m\n";

fn run(extra: &str) -> iolab_sim::RunOutput {
    run_none(&scenario(&format!("{BASE}{extra}\n"), "nvme", 1 << 30, 1))
}

#[test]
fn a_writer_reads_back_every_block_after_its_writes() {
    let out = run("rw=randwrite");
    let v = job(&out, "v");
    let (r, w) = (v.dir(Dir::Read), v.dir(Dir::Write));
    assert_eq!(w.total_ios, 4096);
    assert_eq!(r.total_ios, 4096);
    assert_eq!(r.io_bytes, w.io_bytes);
    // Timed apart, as fio's thread_main times its IO and verify phases:
    // each direction its own phase, the job the two together.
    assert!(r.runtime_ms > 0 && w.runtime_ms > 0);
    let sum = r.runtime_ms + w.runtime_ms;
    assert!(
        sum.abs_diff(v.job_runtime_ms) <= 2,
        "{sum} against {}",
        v.job_runtime_ms
    );
    // Without verify the same writes take only the write phase.
    let plain = run_none(&scenario(
        &format!("{}rw=randwrite\n", BASE.replace("verify=crc32c\n", "")),
        "nvme",
        1 << 30,
        1,
    ));
    let p = job(&plain, "v");
    assert_eq!(p.dir(Dir::Read).total_ios, 0);
    assert!(p.job_runtime_ms < v.job_runtime_ms);
}

#[test]
fn backlog_mixes_and_runtimes_follow_fio() {
    // Along the way: as many reads, the last few after the writes.
    let out = run("rw=randwrite\nverify_backlog=100");
    let v = job(&out, "v");
    assert_eq!(v.dir(Dir::Read).total_ios, 4096);
    assert!(v.dir(Dir::Read).runtime_ms < v.dir(Dir::Write).runtime_ms);
    // A mixed job: its own reads, then each of its writes read back.
    let out = run("rw=randrw\nrwmixread=30");
    let v = job(&out, "v");
    let (r, w) = (v.dir(Dir::Read).total_ios, v.dir(Dir::Write).total_ios);
    assert!(w > 2600 && w < 3200, "{w}");
    // Its do_io phase issues 4,096 IOs, 4,096 - w of them reads; each of
    // its w writes is read back after.
    assert_eq!(r, (4096 - w) + w, "reads {r}, writes {w}");
    assert!(v.dir(Dir::Read).runtime_ms > v.dir(Dir::Write).runtime_ms);
    // Ended by its runtime, or told not to: no read-back.
    for extra in [
        "rw=randwrite\nruntime=20ms\ntime_based",
        "rw=randwrite\ndo_verify=0",
    ] {
        let out = run(extra);
        assert_eq!(job(&out, "v").dir(Dir::Read).total_ios, 0, "{extra}");
    }
    // Two loops: each loop's writes read back, all after the writes.
    let out = run("rw=write\nloops=2");
    let v = job(&out, "v");
    assert_eq!(v.dir(Dir::Write).total_ios, 8192);
    assert_eq!(v.dir(Dir::Read).total_ios, 8192);
}

#[test]
fn read_back_order_is_the_write_order() {
    // On a disk the read-back of random writes seeks as the writes did
    // (fio keeps a random map's writes in the order written), so it takes
    // far longer than reading the same blocks in order would.
    let text = "[v]\nbs=4k\ndirect=1\nioengine=psync\nverify=md5\nsize=64m\nrw=randwrite\nnumber_ios=300\n";
    let out = run_none(&scenario(text, "hdd", 1 << 30, 1));
    let v = job(&out, "v");
    assert_eq!(v.dir(Dir::Read).total_ios, 300);
    // 300 random reads on a 7200 rpm disk: several ms each.
    assert!(
        v.dir(Dir::Read).runtime_ms > 300 * 3,
        "{}",
        v.dir(Dir::Read).runtime_ms
    );
}

#[test]
fn what_cannot_be_read_back_as_fio_does_is_refused() {
    for (extra, says) in [
        ("rw=randwrite\nnorandommap", "without a random map"),
        ("rw=write:8k", "holes or backwards"),
        (
            "rw=randwrite\nrate_iops=100\nrate_process=poisson",
            "poisson",
        ),
    ] {
        let s = scenario(&format!("{BASE}{extra}\n"), "nvme", 1 << 30, 1);
        let v = iolab_sim::parse_variant("none").expect("none parses");
        let e = iolab_sim::run(&s, &v, &mut |_| {}).expect_err(says);
        assert!(e.to_string().contains(says), "{extra}: {e}");
    }
}

/// A pass with holes, or random writes without a random map, read back
/// one write at a time (`verify_backlog=1` at depth 1): every write is
/// read back at once, as fio 3.33 does here (`rw=write:112k bs=16k
/// size=16m`: 1,024 writes, 1,024 reads; `rw=randwrite norandommap`:
/// the same). At depth fio's log can hold a block twice and reads it once
/// (995 reads at iodepth=8): refused.
#[test]
fn holes_and_no_random_map_are_read_back_write_by_write() {
    for rw in ["rw=write:112k", "rw=randwrite\nnorandommap"] {
        let text = format!(
            "[v]\nbs=16k\ndirect=1\nioengine=libaio\niodepth=1\nverify=crc32c\n\
             verify_backlog=1\nsize=16m\n{rw}\n"
        );
        let out = run_none(&scenario(&text, "nvme", 1 << 30, 1));
        let v = job(&out, "v");
        assert_eq!(v.dir(Dir::Write).total_ios, 1024, "{rw}");
        assert_eq!(v.dir(Dir::Read).total_ios, 1024, "{rw}");
        let deep = text.replace("iodepth=1", "iodepth=8");
        let s = scenario(&deep, "nvme", 1 << 30, 1);
        let none = iolab_sim::parse_variant("none").expect("none parses");
        let e = iolab_sim::run(&s, &none, &mut |_| {}).expect_err("refused at depth");
        assert!(e.to_string().contains("iodepth=1"), "{rw}: {e}");
    }
}

/// fio's `surface-scan.fio` in small: a writer fills the device
/// (`fill_device=1`: its file takes the free space, and it ends full as
/// fio's ends at ENOSPC, so its verify never reads back), then a reader of
/// the same file, without a size, reads what is there (fio takes an
/// existing file's size; fio 3.33 reads 8 MiB after an 8 MiB writer here).
#[test]
fn a_filled_device_is_read_back_by_the_next_job() {
    let text = "[w]\nfilename=scan.tmp\nrw=write\nbs=1m\nfill_device=1\nverify=md5\n\
                [r]\nstonewall\nfilename=scan.tmp\nrw=read\nbs=1m\nverify=md5\n";
    let jobs = parse_reading(text, &[], 1 << 30).unwrap_or_else(|e| panic!("{e}"));
    let mut dev = DeviceConfig::preset("nvme").expect("preset");
    if let Some(p) = dev.ssd.as_mut() {
        p.capacity_gb = 2;
    }
    let out = run_none(&scenario_of(jobs, dev, 1 << 30, 1));
    let (w, r) = (job(&out, "w"), job(&out, "r"));
    let written = w.dir(Dir::Write).io_bytes;
    // 2 GB less the log and the headers, in whole MiB blocks.
    assert!(
        written > 1_900_000_000 && written < 2_000_000_000,
        "{written}"
    );
    assert_eq!(w.dir(Dir::Read).total_ios, 0);
    assert_eq!(r.dir(Dir::Read).io_bytes, written);
    assert_eq!(r.dir(Dir::Write).total_ios, 0);
}

/// A runtime that ends the read-back ends the job (fio's do_verify stops
/// at it too): part of the blocks read back, the run over at the runtime.
#[test]
fn a_runtime_cuts_the_read_back_short() {
    let full = run("rw=randwrite");
    let v = job(&full, "v");
    let whole_ms = v.job_runtime_ms;
    let write_ms = v.dir(Dir::Write).runtime_ms;
    let cut = write_ms + (whole_ms - write_ms) / 2;
    let out = run(&format!("rw=randwrite\nruntime={cut}ms"));
    let v = job(&out, "v");
    let reads = v.dir(Dir::Read).total_ios;
    assert!(reads > 0 && reads < 4096, "{reads} read back in {cut} ms");
    assert!(
        v.job_runtime_ms <= cut + 1,
        "{} against {cut}",
        v.job_runtime_ms
    );
}
