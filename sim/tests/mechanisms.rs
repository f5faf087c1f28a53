//! The simulator mechanisms other issues rely on, seen from the device:
//! readahead sizes, fadvise hints, FUA emulation, log forces.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{extra_u64, job, mean_clat, run_none, scenario, total_ios};
use iolab_sim::stats::Dir;

const MIB: u64 = 1 << 20;

fn mean_device_read(out: &iolab_sim::RunOutput) -> u64 {
    extra_u64(out, "/devices/0/counters/read_bytes")
        / extra_u64(out, "/devices/0/counters/reads").max(1)
}

#[test]
fn number_ios_stops_a_job_at_that_many_ios() {
    // Before its size ends it, with IOs in flight (QD8), and before a
    // time-based runtime ends it; with loops=2 the limit is per loop.
    for (extra, want) in [
        ("", 1000),
        ("runtime=10s\ntime_based\n", 1000),
        ("loops=2\n", 2000),
    ] {
        let out = run_none(&scenario(
            &format!(
                "[r]\nrw=randread\ndirect=1\nioengine=libaio\niodepth=8\nsize=64m\n\
                 number_ios=1000\n{extra}"
            ),
            "nvme",
            1024 * MIB,
            1,
        ));
        assert_eq!(job(&out, "r").dir(Dir::Read).total_ios, want, "{extra:?}");
    }
}

#[test]
fn a_skewed_distribution_keeps_its_hot_blocks_in_the_page_cache() {
    // A buffered 4 KiB random reader of 20,000 IOs over 256 MiB (65,536
    // blocks) with room to cache it all: uniform offsets with fio's random
    // map never read a block twice, so every IO goes to the device; a zipf
    // of theta 1.2 reads its hot ranks again and again from the cache; a
    // zoned split that sends 90 % of the reads to 1 % of the file as well.
    let device_reads = |dist: &str| {
        let out = run_none(&scenario(
            &format!("[r]\nrw=randread\nsize=256m\nnumber_ios=20000\nrandom_distribution={dist}\n"),
            "nvme",
            1024 * MIB,
            1,
        ));
        assert_eq!(job(&out, "r").dir(Dir::Read).total_ios, 20_000, "{dist}");
        extra_u64(&out, "/devices/0/counters/reads")
    };
    let uniform = device_reads("random");
    let zipf = device_reads("zipf:1.2");
    let zoned = device_reads("zoned:90/1:10/99");
    assert!(uniform >= 19_900, "{uniform}");
    assert!(zipf < uniform / 4, "zipf {zipf} against {uniform}");
    // The hot 655 blocks are read once each, the cold ~2,000 mostly once.
    assert!((2_300..3_400).contains(&zoned), "zoned {zoned}");
}

#[test]
fn offsets_place_each_clones_region() {
    // Two buffered sequential readers of one file: with offset_increment
    // each reads its own 64 MiB and the device serves both; without it they
    // read the same 64 MiB and the page cache serves what the other read.
    let device_mib = |extra: &str| {
        let out = run_none(&scenario(
            &format!("[r]\nrw=read\nfilename=shared\nsize=64m\nnumjobs=2\n{extra}"),
            "nvme",
            1024 * MIB,
            1,
        ));
        assert_eq!(total_ios(&out, Dir::Read) * 4096, 128 * MIB, "{extra}");
        extra_u64(&out, "/devices/0/counters/read_bytes") / MIB
    };
    let apart = device_mib("offset_increment=64m\n");
    let together = device_mib("");
    assert!((127..=129).contains(&apart), "{apart} MiB");
    assert!(together < 100, "{together} MiB");
    // With filesize= the region ends with the file: 48 of its 64 MiB.
    let out = run_none(&scenario(
        "[r]\nrw=read\nfilesize=64m\noffset=16m\n",
        "nvme",
        1024 * MIB,
        1,
    ));
    assert_eq!(total_ios(&out, Dir::Read) * 4096, 48 * MIB);
    // With size= the file grows to hold the region after the offset.
    let out = run_none(&scenario(
        "[r]\nrw=randread\nsize=32m\noffset=32m\ndirect=1\n",
        "nvme",
        1024 * MIB,
        1,
    ));
    assert_eq!(total_ios(&out, Dir::Read) * 4096, 32 * MIB);
}

#[test]
fn a_region_past_the_device_ends_with_the_device() {
    // As fio 3.33 on a 64 MiB loop device: `offset=1m` with no size writes
    // the 63 MiB after it, a clone starting beyond the end is refused
    // ("you need to specify valid offset=").
    let mut device = iolab_sim::device::DeviceConfig::preset("nvme").expect("nvme");
    device.ssd.as_mut().expect("an ssd").capacity_gb = 1;
    let v = iolab_sim::parse_variant("none").expect("none parses");
    let on_device = |extra: &str| {
        let text = format!("[w]\nrw=write\nbs=1m\ndirect=1\nfilename=/dev/x\n{extra}");
        let jobs = common::parse_reading(&text, &[], 1024 * MIB).expect("parses");
        common::scenario_of(jobs, device.clone(), 1024 * MIB, 1)
    };
    let run = |extra: &str| {
        iolab_sim::run(&on_device(extra), &v, &mut |_| {})
            .map(|out| total_ios(&out, Dir::Write) * MIB)
            .map_err(|e| e.to_string())
    };
    let whole = run("").expect("the whole device");
    assert!((800 * MIB..1000 * MIB).contains(&whole), "{whole}");
    assert_eq!(run("offset=64m\n"), Ok(whole - 64 * MIB));
    // A size past the end is cut there too.
    assert_eq!(run("offset=64m\nsize=2000m\n"), Ok(whole - 64 * MIB));
    // Each clone's region ends with the device.
    let clones = run("offset=100m\noffset_increment=400m\nnumjobs=2\n").expect("two clones");
    assert_eq!(clones, (whole - 100 * MIB) + (whole - 500 * MIB));
    let e =
        run("offset=100m\noffset_increment=500m\nnumjobs=3\n").expect_err("clone 2 past the end");
    assert!(
        e.contains("offset_increment") && e.contains("clone 2") && e.contains("valid offset="),
        "{e}"
    );
    // The plan says when it cuts a size the job gave (fio does not), once
    // a job; a size the device gave is not said here.
    let notes = |extra: &str| iolab_sim::check_variant(&on_device(extra), &v).expect("runs");
    let said = notes("offset=64m\nsize=2000m\nnumjobs=2\n");
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains(
            "size: job 'w': clone 0's 2097152000 bytes from byte 67108864 run past the device's end"
        ) && said[0].contains("(and 1 more clones after it)"),
        "{said:?}"
    );
    assert_eq!(notes("offset=64m\n"), Vec::<String>::new());
}

#[test]
fn io_size_above_size_goes_over_the_files_again_as_fio_does() {
    // IOs fio 3.33 did for each job here (direct, 16 KiB blocks unless
    // said, a file of 4 MiB): after its loops a job makes more passes
    // while io_size is not reached, its byte limit io_size x loops; a
    // pass with holes ends only with that limit; a random pass ends when
    // the map has given every block.
    for (extra, fio) in [
        ("rw=write\nio_size=10m\n", 640),
        ("rw=write\nio_size=10m\nloops=2\n", 768),
        ("rw=write:112k\nio_size=10m\n", 640),
        ("rw=write:112k\nio_size=10m\nloops=2\n", 1280),
        ("rw=randwrite\nio_size=10m\n", 640),
        ("rw=randwrite\nio_size=10m\nloops=2\n", 768),
        ("rw=randwrite\nloops=3\n", 768),
        ("rw=randread\nnrfiles=2\nio_size=10m\n", 640),
        ("rw=write\nbs=12k\nio_size=10m\n", 854),
        ("rw=randwrite\nnorandommap\nio_size=10m\n", 640),
        ("rw=read:-8k\nbs=4k\nsize=64k\nio_size=200k\n", 50),
        // Read-backs count: two passes of 256 writes, each read back.
        ("rw=write\nio_size=10m\nverify=crc32c\n", 1024),
        (
            "rw=write\nio_size=10m\nverify=crc32c\nverify_backlog=4\n",
            1024,
        ),
    ] {
        let out = run_none(&scenario(
            &format!("[j]\ndirect=1\nbs=16k\nsize=4m\n{extra}"),
            "nvme",
            1024 * MIB,
            1,
        ));
        let ios = total_ios(&out, Dir::Read) + total_ios(&out, Dir::Write);
        assert_eq!(ios, fio, "{extra:?}");
    }
}

#[test]
fn offsets_that_fio_would_misplace_are_errors() {
    let v = iolab_sim::parse_variant("none").expect("none parses");
    let err_of = |job: &str| {
        let s = scenario(job, "nvme", 1024 * MIB, 1);
        iolab_sim::run(&s, &v, &mut |_| {})
            .expect_err(job)
            .to_string()
    };
    // A percent of a file fio creates is of nothing.
    let e = err_of("[r]\nrw=read\nsize=64m\noffset=50%\n");
    assert!(
        e.contains("offset=50%") && e.contains("give offset in bytes"),
        "{e}"
    );
    // A clone that would start past its files' end.
    let e = err_of("[r]\nrw=read\nfilesize=64m\nnumjobs=3\noffset_increment=32m\n");
    assert!(
        e.contains("offset_increment") && e.contains("clone 2"),
        "{e}"
    );
    // Offsets past 2^64 are refused, not wrapped.
    let e = err_of("[r]\nrw=read\nsize=1m\noffset=10000p\noffset_increment=10000p\nnumjobs=2\n");
    assert!(e.contains("beyond the 2^64"), "{e}");
}

#[test]
fn startdelay_starts_a_job_that_long_after_the_run() {
    const S: u64 = 1_000_000_000;
    let run = |job: &str| run_none(&scenario(job, "nvme", 1024 * MIB, 1));
    let reader = "rw=randread\ndirect=1\nsize=64m\ntime_based\n";
    // A job delayed by 2 s that runs for 1 s ends the run at 3 s; its
    // runtime is its own second.
    let out = run(&format!("[late]\n{reader}runtime=1s\nstartdelay=2\n"));
    assert!(
        (3 * S..3 * S + S / 10).contains(&out.sim_ns),
        "{}",
        out.sim_ns
    );
    assert_eq!(job(&out, "late").job_runtime_ms, 1000);
    // A range: each of four clones draws its own delay in it, so the run
    // ends between 1 s + 0.5 s and 1 s + 1.5 s, and not at either bound.
    let out = run(&format!(
        "[r]\n{reader}runtime=1s\nstartdelay=500ms-1500ms\nnumjobs=4\n"
    ));
    assert!(
        (S + S / 2..S + 3 * S / 2).contains(&out.sim_ns),
        "{}",
        out.sim_ns
    );
    // An exitall ends a job still in its delay: it never starts.
    let out = run(&format!(
        "[first]\n{reader}runtime=1s\nexitall\n[late]\n{reader}runtime=1s\nstartdelay=5\n"
    ));
    assert_eq!(
        total_ios(&out, Dir::Read),
        job(&out, "first").dir(Dir::Read).total_ios
    );
    assert!(out.sim_ns < 2 * S, "{}", out.sim_ns);
    // A delay past the watchdog's ten idle minutes is no stall; one past
    // a year is refused before the run.
    let out = run(&format!("[late]\n{reader}runtime=1s\nstartdelay=700\n"));
    assert_eq!(job(&out, "late").job_runtime_ms, 1000);
    let s = scenario(
        &format!("[late]\n{reader}startdelay=40000000\n"),
        "nvme",
        1024 * MIB,
        1,
    );
    let v = iolab_sim::parse_variant("none").expect("none parses");
    let e = iolab_sim::run(&s, &v, &mut |_| {}).expect_err("a delay of over a year");
    assert!(e.to_string().contains("beyond the year"), "{e}");
    // A stonewall section waits for the delayed job before it (where
    // fio's creation loop would let it start beside a job not created yet).
    let out = run(&format!(
        "[late]\n{reader}runtime=1s\nstartdelay=1\n[after]\nstonewall\n{reader}runtime=1s\n"
    ));
    assert!(
        (3 * S..3 * S + S / 10).contains(&out.sim_ns),
        "{}",
        out.sim_ns
    );
}

/// `wait_for=`: a job starts once every clone of the job it names has
/// ended, inside one stonewall section, as fio's example `waitfor.fio`
/// chains four sections of four clones; its `startdelay` still counts from
/// the run's start. A name no job has, a circle of waits and a wait for a
/// later section are refused before the run.
#[test]
fn wait_for_starts_a_job_after_the_jobs_it_names() {
    const S: u64 = 1_000_000_000;
    let run = |job: &str| run_none(&scenario(job, "nvme", 1024 * MIB, 1));
    let reader = "rw=randread\ndirect=1\nsize=64m\ntime_based\n";
    let out = run(&format!(
        "[w]\n{reader}runtime=1s\nnumjobs=4\n[r]\n{reader}runtime=1s\nwait_for=w\nnumjobs=4\n\
         [r2]\n{reader}runtime=1s\nwait_for=r\n"
    ));
    // Three seconds one after another, not one second side by side.
    assert!(
        (3 * S..3 * S + S / 10).contains(&out.sim_ns),
        "{}",
        out.sim_ns
    );
    assert_eq!(job(&out, "r2").job_runtime_ms, 1000);
    // Its startdelay is from the run's start: past by the time w ends.
    let out = run(&format!(
        "[w]\n{reader}runtime=1s\n[r]\n{reader}runtime=1s\nwait_for=w\nstartdelay=500ms\n"
    ));
    assert!(
        (2 * S..2 * S + S / 10).contains(&out.sim_ns),
        "{}",
        out.sim_ns
    );
    // Without the wait the two run side by side.
    let out = run(&format!(
        "[w]\n{reader}runtime=1s\n[r]\n{reader}runtime=1s\n"
    ));
    assert!(out.sim_ns < S + S / 10, "{}", out.sim_ns);
    let refused = |job: &str, says: &str| {
        let s = scenario(job, "nvme", 1024 * MIB, 1);
        let v = iolab_sim::parse_variant("none").expect("none parses");
        let e = iolab_sim::run(&s, &v, &mut |_| {}).expect_err(says);
        assert!(e.to_string().contains(says), "{e}");
    };
    refused(
        &format!("[r]\n{reader}runtime=1s\nwait_for=writers\n"),
        "no job is named 'writers'",
    );
    refused(
        &format!("[a]\n{reader}runtime=1s\nwait_for=b\n[b]\n{reader}runtime=1s\nwait_for=a\n"),
        "wait for each other",
    );
    refused(
        &format!("[a]\n{reader}runtime=1s\nwait_for=b\n[b]\nstonewall\n{reader}runtime=1s\n"),
        "would wait forever",
    );
}

/// The engines simulated as others run exactly as those: `io_uring_cmd`
/// as `io_uring` with `direct=1` whatever the job says, `mmap` as buffered
/// `psync` whatever it says, `posixaio` as `io_uring`, `cpp_null` as
/// `null`, `sg` as direct `libaio`.
#[test]
fn engines_that_stand_in_for_others_run_as_them() {
    let run = |job: &str| run_none(&scenario(job, "nvme", 1024 * MIB, 1));
    let reads = "rw=randread\nsize=16m\nnumber_ios=3000\n";
    let same = |a: &str, b: &str| {
        let (x, y) = (
            run(&format!("[r]\n{a}\n{reads}")),
            run(&format!("[r]\n{b}\n{reads}")),
        );
        assert_eq!(x.sim_ns, y.sim_ns, "{a} against {b}");
        assert_eq!(
            mean_clat(&x, "r", Dir::Read),
            mean_clat(&y, "r", Dir::Read),
            "{a} against {b}"
        );
        x
    };
    let cmd = same(
        "ioengine=io_uring_cmd\niodepth=8",
        "ioengine=io_uring\niodepth=8\ndirect=1",
    );
    // Buffered io_uring reads of the same blocks are another run.
    let buffered = run(&format!("[r]\nioengine=io_uring\niodepth=8\n{reads}"));
    assert_ne!(cmd.sim_ns, buffered.sim_ns);
    let mmap = same("ioengine=mmap\ndirect=1", "ioengine=psync");
    let direct = run(&format!("[r]\nioengine=psync\ndirect=1\n{reads}"));
    assert_ne!(mmap.sim_ns, direct.sim_ns);
    same(
        "ioengine=posixaio\niodepth=4",
        "ioengine=io_uring\niodepth=4",
    );
    same("ioengine=cpp_null", "ioengine=null");
    same(
        "ioengine=sg\niodepth=4",
        "ioengine=libaio\niodepth=4\ndirect=1",
    );
    // cpuio (fio's cpuio.fio): its share of a CPU as fio's usr_cpu, no IO
    // (fio 3.33 here, cpuload=30 for 2 s: usr_cpu 30.0, job_runtime 2000).
    let out = run("[c]\nioengine=cpuio\ncpuload=30\nruntime=2\ntime_based\n");
    let v = iolab_sim::stats::json_output(&out.report, out.extra.clone());
    let c = &v["jobs"][0];
    assert_eq!(c["usr_cpu"].as_f64(), Some(30.0), "{c}");
    assert_eq!(c["job_runtime"].as_u64(), Some(2000));
    assert_eq!(job(&out, "c").dir(Dir::Read).total_ios, 0);
    // Ended early by another job's exitall: the same share of less time.
    let out = run("[c]\nioengine=cpuio\ncpuload=50\nruntime=2\ntime_based\n\
         [r]\nrw=read\nsize=256m\nbs=1m\ndirect=1\nexitall\n");
    let v = iolab_sim::stats::json_output(&out.report, out.extra.clone());
    let c = &v["jobs"][0];
    assert!(
        c["job_runtime"]
            .as_u64()
            .is_some_and(|ms| ms > 20 && ms < 1000),
        "{c}"
    );
    assert!(
        c["usr_cpu"]
            .as_f64()
            .is_some_and(|u| (49.0..=51.0).contains(&u)),
        "{c}"
    );
    // sg's SCSI VERIFY (fio's sg_verify.fio): the device reads each block,
    // the job counts the writes it was asked for.
    let out = run(
        "[v]\nioengine=sg\nfilename=/dev/sdb\nrw=write\nbs=512\nsize=1m\nnumber_ios=20\n\
         sg_write_mode=verify_bytchk_01\n",
    );
    assert_eq!(job(&out, "v").dir(Dir::Write).total_ios, 20);
    let v = iolab_sim::stats::json_output(&out.report, out.extra.clone());
    let disk = &v["disk_util"][0];
    assert_eq!(
        (disk["read_ios"].as_u64(), disk["write_ios"].as_u64()),
        (Some(20), Some(0)),
        "{disk}"
    );
}

#[test]
fn depths_and_disk_figures_are_fios() {
    // fio's iodepth_level: a libaio job at QD8 issues nearly every IO with
    // 8 in flight (the first few at 1 to 7), a psync one always at 1.
    let run = |job: &str| run_none(&scenario(job, "nvme", 1024 * MIB, 1));
    let deep = run(
        "[r]\nrw=randread\ndirect=1\nioengine=libaio\niodepth=8\nsize=128m\nnumber_ios=20000\n",
    );
    let j = job(&deep, "r");
    assert_eq!(j.depth_map.iter().sum::<u64>(), 20_000);
    assert!(j.depth_map[3] >= 19_990, "{:?}", j.depth_map);
    assert_eq!(j.latency_depth, 8);
    let one = run("[r]\nrw=randread\ndirect=1\nsize=64m\nnumber_ios=2000\n");
    assert_eq!(job(&one, "r").depth_map, [2000, 0, 0, 0, 0, 0, 0]);
    // The device's disk figures: the reads' ticks are their device time,
    // and a QD8 reader keeps the device busy all along.
    let v = iolab_sim::stats::json_output(&deep.report, deep.extra.clone());
    let disk = &v["disk_util"][0];
    assert_eq!(disk["read_ios"], 20_000);
    let ticks = disk["read_ticks"].as_u64().expect("ticks");
    let mean = deep.extra["devices"][0]["queue"]["read_ns"]["mean"]
        .as_f64()
        .expect("mean");
    let queue_ms = (mean * 20_000.0 / 1e6) as u64;
    assert!(ticks.abs_diff(queue_ms) <= 1, "{ticks} against {queue_ms}");
    assert!(disk["util"].as_f64().expect("util") > 95.0, "{disk}");
    // A reader that thinks 88 µs after each 88 µs read leaves the device
    // idle half the time.
    let idle = run("[r]\nrw=randread\ndirect=1\nsize=64m\nnumber_ios=2000\nthinktime=88\n");
    let v = iolab_sim::stats::json_output(&idle.report, idle.extra.clone());
    let util = v["disk_util"][0]["util"].as_f64().expect("util");
    assert!((45.0..55.0).contains(&util), "{util}");
}

#[test]
fn zoned_abs_zones_beyond_the_file_are_an_error() {
    let s = scenario(
        "[r]\nrw=randread\nsize=64m\nrandom_distribution=zoned_abs:50/32m:50/64m\n",
        "nvme",
        1024 * MIB,
        1,
    );
    let v = iolab_sim::parse_variant("none").expect("none parses");
    let e = iolab_sim::run(&s, &v, &mut |_| {}).expect_err("zones end beyond the file");
    let msg = e.to_string();
    assert!(msg.contains("random_distribution"), "{msg}");
    assert!(msg.contains("end at byte 100663296"), "{msg}");
    // Sizes whose sum passes 2^64 end beyond any file, without a wrap.
    let huge = scenario(
        "[r]\nrw=randread\nsize=64m\nrandom_distribution=zoned_abs:50/9223372036854775808:50/9223372036854775808\n",
        "nvme",
        1024 * MIB,
        1,
    );
    let e = iolab_sim::run(&huge, &v, &mut |_| {}).expect_err("zones past 2^64");
    assert!(
        e.to_string().contains("end at byte 18446744073709551615"),
        "{e}"
    );
    // A sequential job does not use the distribution, as in fio.
    let seq = scenario(
        "[r]\nrw=read\nsize=64m\nrandom_distribution=zoned_abs:50/32m:50/64m\n",
        "nvme",
        1024 * MIB,
        1,
    );
    assert!(iolab_sim::run(&seq, &v, &mut |_| {}).is_ok());
}

#[test]
fn bssplit_sizes_each_io_by_its_share() {
    // A direct random reader of 4 KiB and 64 KiB blocks, a quarter and
    // three quarters of its IOs: the device sees that mean size, and every
    // read is one of the two.
    let out = run_none(&scenario(
        "[r]\nrw=randread\ndirect=1\nbssplit=4k/25:64k/75\nsize=256m\nio_size=64m\n",
        "nvme",
        1024 * MIB,
        3,
    ));
    let r = job(&out, "r").dir(Dir::Read);
    let want = (4096 * 25 + 65_536 * 75) / 100;
    let mean = r.io_bytes / r.total_ios.max(1);
    assert!(
        mean.abs_diff(want) * 50 < want,
        "mean read {mean} B, want about {want}"
    );
    // Only whole 4 KiB and 64 KiB reads: the bytes are 4 KiB times the
    // small ones plus 64 KiB times the large ones.
    let large = (r.io_bytes - 4096 * r.total_ios) / (65_536 - 4096);
    assert_eq!(4096 * (r.total_ios - large) + 65_536 * large, r.io_bytes);
    assert_eq!(mean_device_read(&out), mean);
}

#[test]
fn a_sequential_reader_reads_ahead_in_256k_windows() {
    // fadvise_hint=1 gives a sequential job FADV_SEQUENTIAL: the window
    // ramps to 2 x 128 KiB.
    let out = run_none(&scenario(
        "[r]\nrw=read\nbs=4k\nsize=256m\n",
        "sata-ssd",
        1024 * MIB,
        1,
    ));
    let mean = mean_device_read(&out);
    assert!(
        (240 * 1024..=256 * 1024).contains(&mean),
        "mean device read {mean} B"
    );
    assert_eq!(job(&out, "r").dir(Dir::Read).io_bytes, 256 * MIB);
}

#[test]
fn without_the_hint_the_window_stops_at_128k() {
    let out = run_none(&scenario(
        "[r]\nrw=read\nbs=4k\nsize=256m\nfadvise_hint=0\n",
        "sata-ssd",
        1024 * MIB,
        1,
    ));
    let mean = mean_device_read(&out);
    assert!(
        (120 * 1024..=128 * 1024).contains(&mean),
        "mean device read {mean} B"
    );
}

#[test]
fn a_random_reader_reads_single_pages() {
    let out = run_none(&scenario(
        "[r]\nrw=randread\nbs=4k\nsize=1g\nruntime=2\ntime_based\n",
        "sata-ssd",
        1024 * MIB,
        1,
    ));
    assert_eq!(mean_device_read(&out), 4096);
}

fn force_flushes(device: &str) -> (u64, u64) {
    // Write-only job: fallocated file, every fdatasync converts extents and
    // forces the log.
    let out = run_none(&scenario(
        "[w]\nrw=randwrite\nbs=4k\nsize=64m\nfdatasync=1\nruntime=1\ntime_based\n",
        device,
        1024 * MIB,
        1,
    ));
    (
        extra_u64(&out, "/journal/forces"),
        extra_u64(&out, "/devices/0/counters/flushes"),
    )
}

#[test]
fn sata_emulates_fua_with_a_second_flush() {
    // libata without FUA: each force is a PREFLUSH before the iclog and a
    // post-flush after it.
    let (forces, flushes) = force_flushes("sata-ssd");
    assert!(forces > 50, "{forces} forces");
    assert_eq!(flushes, 2 * forces, "{flushes} flushes for {forces} forces");
}

#[test]
fn nvme_carries_fua_natively() {
    let (forces, flushes) = force_flushes("nvme");
    assert!(forces > 50, "{forces} forces");
    assert_eq!(flushes, forces, "{flushes} flushes for {forces} forces");
}

#[test]
fn the_log_writes_through_eight_iclog_buffers_and_relogging_spares_the_ail() {
    // Four fdatasync writers into fallocated files: every write completion
    // converts an extent, so checkpoints run to many iclogs. No more than
    // the eight iclog buffers are ever being written; the bmbt leaves are
    // logged again checkpoint after checkpoint, so the log's tail moves on
    // without writing them in place, though the log wraps many times.
    // An 8 GB device: a 64 MiB log, as mkfs.xfs makes it.
    let mut device = iolab_sim::device::DeviceConfig::preset("nvme").expect("nvme");
    device.ssd.as_mut().expect("an ssd").capacity_gb = 8;
    let jobs = common::parse_reading(
        "[w]\nrw=randwrite\nbs=4k\nfilesize=1g\nfdatasync=256\nnumjobs=4\nruntime=3\ntime_based\n",
        &[],
        4096 * MIB,
    )
    .expect("job");
    let out = run_none(&common::scenario_of(jobs, device, 4096 * MIB, 1));
    let writes = extra_u64(&out, "/journal/log_writes");
    let log = extra_u64(&out, "/journal/log_bytes");
    assert_eq!(extra_u64(&out, "/journal/log_writes_max_in_flight"), 8);
    assert!(
        writes * 32 * 1024 > 3 * log,
        "{writes} log writes in a {log}-byte log"
    );
    let conversions = extra_u64(&out, "/journal/conversions");
    let ail = extra_u64(&out, "/journal/ail_writes");
    assert!(
        ail * 20 < conversions,
        "{ail} in-place metadata writes for {conversions} conversions"
    );
}

#[test]
fn o_direct_bypasses_the_cache_and_the_journal_for_reads() {
    let out = run_none(&scenario(
        "[r]\nrw=randread\nbs=4k\ndirect=1\nsize=1g\nruntime=1\ntime_based\n",
        "nvme",
        1024 * MIB,
        1,
    ));
    assert_eq!(extra_u64(&out, "/page_cache/cached_pages"), 0);
    assert_eq!(extra_u64(&out, "/journal/transactions"), 0);
    let r = job(&out, "r").dir(Dir::Read);
    assert_eq!(extra_u64(&out, "/devices/0/counters/reads"), r.total_ios);
}

#[test]
fn the_legacy_layer_makes_reads_wait_behind_sync_writeback_for_slots() {
    // 4.x `blk-core.c`: reads share the 128-request sync pool with the
    // fdatasync writers' WB_SYNC_ALL writeback.
    let mut s = common::posted_wbt_job(30);
    let mq = run_none(&s);
    s.scheduler = iolab_sim::SchedKind::SqNoop;
    let sq = run_none(&s);
    assert!(sq.sim_ns < 30_200_000_000, "ended at {}", sq.sim_ns);
    let (a, b) = (
        job(&mq, "reader").dir(Dir::Read).clat.mean,
        job(&sq, "reader").dir(Dir::Read).clat.mean,
    );
    assert!(
        b > 2.0 * a,
        "read latency: blk-mq {a:.0} ns, legacy {b:.0} ns"
    );
    s.scheduler = iolab_sim::SchedKind::SqDeadline;
    let dl = run_none(&s);
    assert!(dl.sim_ns < 30_200_000_000, "ended at {}", dl.sim_ns);
    assert!(job(&dl, "writer").dir(Dir::Write).total_ios > 10_000);
}

#[test]
fn cgroups_and_their_weights_reach_the_run() {
    let s = scenario(
        "[global]\nrw=randread\nbs=4k\nsize=16m\nruntime=1\ntime_based\ndirect=1\n\
         [a]\ncgroup=fast\ncgroup_weight=500\n[b]\ncgroup=slow\n[c]\ncgroup=fast\n",
        "null",
        1 << 30,
        1,
    );
    let out = run_none(&s);
    assert_eq!(
        out.extra["cgroups"],
        serde_json::json!([
            {"id": 1, "name": "fast", "weight": 500},
            {"id": 2, "name": "slow", "weight": null},
        ])
    );
}

#[test]
fn conflicting_or_orphan_cgroup_weights_are_errors() {
    let v = iolab_sim::parse_variant("none").expect("none parses");
    for (job, needle) in [
        (
            "[a]\ncgroup=g\ncgroup_weight=200\n[b]\ncgroup=g\ncgroup_weight=300\n",
            "cgroup 'g' already has weight 200",
        ),
        ("[a]\ncgroup_weight=200\n", "needs cgroup="),
    ] {
        let text = format!("[global]\nrw=read\nbs=4k\nsize=1m\n{job}");
        let s = scenario(&text, "null", 1 << 30, 1);
        let err = iolab_sim::run(&s, &v, &mut |_| {})
            .err()
            .unwrap_or_else(|| panic!("{job:?} ran"))
            .to_string();
        assert!(err.contains("cgroup_weight"), "{err}");
        assert!(err.contains(needle), "{err}");
    }
}

#[test]
fn a_time_based_buffered_reader_drops_its_cache_at_every_pass() {
    // fio's invalidate=1 (the default) drops the file's pages again when a
    // time_based job wraps around its file (io_u.c loop_cache_invalidate):
    // a random reader of an 8 MiB file (2,048 blocks) over many passes
    // reads every block from the device, as on the first pass.
    let out = run_none(&scenario(
        "[r]\nrw=randread\nbs=4k\nsize=8m\nruntime=1\ntime_based\n",
        "nvme",
        1024 * MIB,
        1,
    ));
    let ios = job(&out, "r").dir(Dir::Read).total_ios;
    assert!(ios > 3 * 2048, "{ios} reads: fewer than three passes");
    assert_eq!(extra_u64(&out, "/devices/0/counters/reads"), ios);
    // invalidate=0 keeps the pages: one pass from the device, the rest hits.
    let out = run_none(&scenario(
        "[r]\nrw=randread\nbs=4k\nsize=8m\nruntime=1\ntime_based\ninvalidate=0\n",
        "nvme",
        1024 * MIB,
        1,
    ));
    assert_eq!(extra_u64(&out, "/devices/0/counters/reads"), 2048);
}

#[test]
fn a_time_based_sequential_reader_rereads_from_the_device_after_a_wrap() {
    let out = run_none(&scenario(
        "[r]\nrw=read\nbs=4k\nsize=8m\nruntime=1\ntime_based\n",
        "nvme",
        1024 * MIB,
        1,
    ));
    let bytes = job(&out, "r").dir(Dir::Read).io_bytes;
    assert!(
        bytes > 3 * 8 * MIB,
        "{bytes} B read: fewer than three passes"
    );
    let dev = extra_u64(&out, "/devices/0/counters/read_bytes");
    assert!(
        dev + 2 * MIB >= bytes,
        "{dev} B from the device for {bytes} B read"
    );
}

#[test]
fn host_time_per_direct_io_lowers_iops_and_leaves_clat_alone() {
    // A device file's `host_io_us`: the job's thread spends it after each
    // direct IO before the next, outside the completion latency.
    let text =
        "[r]\nrw=randread\nbs=4k\nsize=256m\ndirect=1\nioengine=psync\nruntime=2\ntime_based\n";
    let base = scenario(text, "nvme", 1 << 30, 1);
    let mut slow = base.clone();
    slow.device.host_io_us = 20.0;
    let (a, b) = (run_none(&base), run_none(&slow));
    let (ca, cb) = (mean_clat(&a, "r", Dir::Read), mean_clat(&b, "r", Dir::Read));
    assert!((ca - cb).abs() < 0.02 * ca, "clat {ca} vs {cb}");
    let ios = |o: &iolab_sim::RunOutput| total_ios(o, Dir::Read) as f64;
    // Each IO now takes clat + 20 µs of the thread's time.
    let want = ios(&a) * ca / (ca + 20_000.0);
    assert!(
        (ios(&b) - want).abs() < 0.02 * want,
        "{} IOs, want {want}",
        ios(&b)
    );
    // Buffered IO does not pay it (its CPU costs are the copy's).
    let buffered = text.replace("direct=1\n", "");
    let mut bs = scenario(&buffered, "nvme", 1 << 30, 1);
    let plain = run_none(&bs);
    bs.device.host_io_us = 20.0;
    assert_eq!(
        total_ios(&run_none(&bs), Dir::Read),
        total_ios(&plain, Dir::Read)
    );
}

#[test]
fn at_depth_the_jobs_thread_bounds_iops_and_completions_wait_for_it_in_clat() {
    // QD16 on a device much faster than the thread: the thread reaps one
    // IO per `host_io_us`, so IOPS is 1/host and a completion waits for
    // the fifteen before it (fio's clat ends at the reap); the thread is
    // busy all the time (sys_cpu) and hardly ever sleeps, so it hardly
    // ever pays `host_wake_us` (ctx). At QD1 every IO pays both.
    let deep = "[r]\nrw=randread\nbs=4k\nsize=256m\ndirect=1\nioengine=libaio\niodepth=16\nruntime=1\ntime_based\n";
    let mut sc = scenario(deep, "null", 1 << 30, 1);
    sc.device.host_io_us = 10.0;
    sc.device.host_wake_us = 5.0;
    let out = run_none(&sc);
    let secs = 1.0;
    let iops = total_ios(&out, Dir::Read) as f64 / secs;
    assert!((iops - 100_000.0).abs() < 2_000.0, "{iops} IOPS");
    let clat = mean_clat(&out, "r", Dir::Read);
    assert!((clat - 160_000.0).abs() < 0.1 * 160_000.0, "clat {clat} ns");
    let json = iolab_sim::stats::json_output(&out.report, out.extra.clone());
    let job = &json["jobs"][0];
    let sys = job["sys_cpu"].as_f64().expect("sys_cpu");
    assert!(sys > 95.0, "sys_cpu {sys}");
    assert!(job["ctx"].as_u64().expect("ctx") < 100, "{}", job["ctx"]);
    let qd1 = deep.replace("iodepth=16", "iodepth=1");
    let mut one = scenario(&qd1, "null", 1 << 30, 1);
    one.device.host_io_us = 10.0;
    one.device.host_wake_us = 5.0;
    let out = run_none(&one);
    // null completes in 10 µs: each IO is 10 + 5 + 10 µs.
    let iops = total_ios(&out, Dir::Read) as f64 / secs;
    assert!((iops - 40_000.0).abs() < 800.0, "{iops} IOPS at QD1");
    let json = iolab_sim::stats::json_output(&out.report, out.extra.clone());
    let ctx = json["jobs"][0]["ctx"].as_u64().expect("ctx") as f64;
    assert!((ctx - iops * secs).abs() < 0.01 * ctx, "{ctx} wake-ups");
}

/// A device's `queue` figures (what `iolab kernel summary` counts from the
/// block events) agree with its counters, and on a loop device every
/// FLUSH takes the fitted time exactly and holds up the reads issued
/// during it.
#[test]
fn a_devices_queue_figures_match_its_counters_and_its_flush_time() {
    let device = iolab_sim::device::DeviceConfig::from_toml(
        "name = \"l\"\nkind = \"loop\"\n[loop]\ncapacity_gb = 8\nqueue_depth = 16\nunits = 2\nwrite_units = 1\nread_us = 20.0\nwrite_us = 30.0\nread_mb_s = 1000\nwrite_mb_s = 500\nflush_us = 100.0\nflush_drains = false\nwrite_cache = true\nfua = false\nservice_sigma = 0.2\nwrite_sigma = 0.2\n",
    )
    .expect("loads");
    let job = "[global]\nruntime=2\ntime_based\nfilesize=64m\n[w]\nrw=randwrite\nbs=4k\nfdatasync=8\n[r]\nrw=randread\nbs=4k\ndirect=1\nioengine=libaio\niodepth=4\n";
    let vars = std::collections::BTreeMap::new();
    let include = |_: &str, _: &str| -> Result<(String, Vec<u8>), String> { Err("none".into()) };
    let env = iolab_sim::fio::ParseEnv {
        mem_bytes: 1 << 30,
        ncpus: 4,
        pagesize: 4096,
        vars: &vars,
        include: &include,
    };
    let jobs = iolab_sim::fio::parse_job_file("q.fio", job, &env)
        .expect("parses")
        .jobs;
    let out = common::run_none(&common::scenario_of(jobs, device, 1 << 30, 1));
    let d = &out.extra["devices"][0];
    let (c, q) = (&d["counters"], &d["queue"]);
    let n = |v: &serde_json::Value| v.as_u64().expect("a count");
    assert!(n(&c["flushes"]) > 100, "{c}");
    assert!(n(&c["reads"]) > 1_000, "{c}");
    assert_eq!(n(&q["flushes"]), n(&c["flushes"]));
    assert_eq!(n(&q["flush_ns"]["n"]), n(&c["flushes"]));
    assert_eq!(n(&q["read_ns"]["n"]), n(&c["reads"]));
    assert_eq!(n(&q["write_ns"]["n"]), n(&c["writes"]));
    // Issued: every completed one, and at most the tags still in flight.
    assert!((0..=16).contains(&(n(&q["reads"]) - n(&c["reads"]))), "{q}");
    assert!(
        (0..=16).contains(&(n(&q["writes"]) - n(&c["writes"]))),
        "{q}"
    );
    assert_eq!(n(&q["writes_at_read"]["n"]), n(&q["reads"]));
    assert!(n(&q["writes_at_read"]["max"]) <= 16, "{q}");
    assert_eq!(n(&q["writes_at_flush"]["n"]), n(&q["flushes"]));
    // Over time: the whole run, levels no deeper than the tags, in order.
    let w = &q["writes_in_flight"];
    assert!(n(&w["ns"]) > 1_900_000_000, "{q}");
    let (p10, p50, p90) = (n(&w["p10"]), n(&w["p50"]), n(&w["p90"]));
    assert!(p10 <= p50 && p50 <= p90 && p90 <= 16, "{q}");
    let mean = w["mean"].as_f64().expect("a mean");
    assert!(mean > 0.0 && mean <= 16.0, "{q}");
    // The loop worker's fsync: 100 µs, no spread, on no server.
    assert_eq!(n(&q["flush_ns"]["max"]), 100_000, "{q}");
    assert!(n(&q["flush_ns"]["p50"]).abs_diff(100_000) <= 100, "{q}");
    assert!(n(&q["reads_under_flush"]) > 0, "{q}");
    // A read issued behind a FLUSH waits for it: the slowest read takes
    // longer than a FLUSH.
    assert!(n(&q["read_ns"]["max"]) > 100_000, "{q}");
}

/// A job that replays `log` (given as the file `trace.log`) on the `null`
/// device, whose IOs take no time, so the log's timing is all there is.
fn replay(job: &str, log: &str) -> iolab_sim::RunOutput {
    let jobs = common::parse_reading(job, &[("trace.log", log.as_bytes())], 1 << 30)
        .unwrap_or_else(|e| panic!("{e}"));
    let device = iolab_sim::device::DeviceConfig::preset("null").expect("null preset");
    run_none(&common::scenario_of(jobs, device, 1 << 30, 1))
}

#[test]
fn a_replayed_log_issues_its_ios_at_its_times() {
    // 100 reads and 100 writes of 8 KiB, one every millisecond (version 3
    // timestamps in µs), then an fdatasync.
    let mut log = String::from("fio version 3 iolog\n0 data add\n0 data open\n");
    for i in 0..200u64 {
        let act = if i % 2 == 0 { "read" } else { "write" };
        log.push_str(&format!(
            "{} data {act} {} 8192\n",
            1000 * (i + 1),
            (i * 7919 % 512) * 8192
        ));
    }
    log.push_str("201000 data datasync 0 0\n201000 data close\n");
    let job = "[r]\nread_iolog=trace.log\ndirect=1\nioengine=libaio\niodepth=4\n";
    let out = replay(job, &log);
    let r = job_of(&out);
    assert_eq!(
        (r.dir(Dir::Read).total_ios, r.dir(Dir::Write).total_ios),
        (100, 100)
    );
    assert_eq!(r.dir(Dir::Read).io_bytes, 100 * 8192);
    assert_eq!(r.sync.total_ios, 1);
    // The log's pace: 200 ms of IOs (the first at 1 ms).
    let ms = out.sim_ns / 1_000_000;
    assert!((200..=202).contains(&ms), "{ms} ms");
    // Twice as fast, as fast as it goes, and twice over.
    let fast = replay(&format!("{job}replay_time_scale=200\n"), &log);
    assert!(
        (100..=102).contains(&(fast.sim_ns / 1_000_000)),
        "{}",
        fast.sim_ns
    );
    let free = replay(&format!("{job}replay_no_stall=1\n"), &log);
    assert!(free.sim_ns < 5_000_000, "{}", free.sim_ns);
    // fio replays a log once: loops with a log is refused, not ignored.
    let e = replay_err(&format!("{job}loops=2\n"), &log);
    assert!(e.contains("fio replays a log once"), "{e}");
    // A log whose times span more than a year is refused before the run
    // (its idle timers would take hours), unless replayed without them.
    let far =
        "fio version 3 iolog\n1 data add\n1 data read 0 4096\n40000000000001 data read 0 4096\n";
    let e = replay_err(job, far);
    assert!(e.contains("the log spans 40000000 s"), "{e}");
    let free = replay(&format!("{job}replay_no_stall=1\n"), far);
    assert_eq!(job_of(&free).dir(Dir::Read).total_ios, 2);
    // The file is as large as the log's furthest IO.
    assert!(out.extra["devices"][0]["counters"]["reads"].as_u64() >= Some(100));
}

/// The error the run of a replaying job ends with.
fn replay_err(job: &str, log: &str) -> String {
    let jobs = common::parse_reading(job, &[("trace.log", log.as_bytes())], 1 << 30)
        .unwrap_or_else(|e| panic!("{e}"));
    let device = iolab_sim::device::DeviceConfig::preset("null").expect("null preset");
    let v = iolab_sim::parse_variant("none").expect("none parses");
    iolab_sim::run(
        &common::scenario_of(jobs, device, 1 << 30, 1),
        &v,
        &mut |_| {},
    )
    .expect_err(job)
    .to_string()
}

fn job_of(out: &iolab_sim::RunOutput) -> &iolab_sim::stats::JobReport {
    job(out, "r")
}

#[test]
fn a_bad_log_is_named_at_its_line() {
    let files: [(&str, &[u8]); 1] = [(
        "bad.log",
        b"fio version 2 iolog\nd add\nd read 0 4096\nd scribble 0 1\n",
    )];
    let err = |job: &str| common::parse_reading(job, &files, 1 << 30).expect_err(job);
    let e = err("[r]\nread_iolog=bad.log\n");
    assert_eq!((e.file.as_str(), e.line), ("bad.log", 4), "{e}");
    assert!(e.message.contains("unknown action 'scribble'"), "{e}");
    let e = err("[r]\nread_iolog=gone.log\n");
    assert_eq!((e.file.as_str(), e.line), ("test.fio", 2), "{e}");
    assert!(e.message.contains("cannot read iolog 'gone.log'"), "{e}");
    let e = err("[r]\nnumjobs=3\nread_iolog=bad.log:bad.log\n");
    assert!(e.message.contains("2 logs for numjobs=3"), "{e}");
}

#[test]
fn a_blktrace_binary_replays_its_queue_events() {
    // Three queued reads 1 ms apart on device 7:0, with their completions,
    // as blkparse -d writes them; redirected to one file.
    let rec = |time: u64, sector: u64, action: u32| {
        let mut r = Vec::new();
        r.extend(0x6561_7407u32.to_le_bytes());
        r.extend(0u32.to_le_bytes());
        r.extend(time.to_le_bytes());
        r.extend(sector.to_le_bytes());
        r.extend(4096u32.to_le_bytes());
        r.extend(action.to_le_bytes());
        r.extend([0u8; 12]);
        r.extend([0u8; 4]);
        r
    };
    let queue = 1 | (1 << 20);
    let complete = 8 | (1 << 23);
    let mut trace = Vec::new();
    for i in 0..3u64 {
        trace.extend(rec(i * 1_000_000, i * 8, queue));
        trace.extend(rec(i * 1_000_000 + 50_000, i * 8, complete));
    }
    let job = "[r]\nread_iolog=trace.bin\nreplay_redirect=disk\ndirect=1\n";
    let jobs = common::parse_reading(job, &[("trace.bin", &trace)], 1 << 30)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(jobs[0].replay_logs[0].files, ["disk"]);
    let device = iolab_sim::device::DeviceConfig::preset("null").expect("null preset");
    let out = run_none(&common::scenario_of(jobs, device, 1 << 30, 1));
    assert_eq!(total_ios(&out, Dir::Read), 3);
    let ms = out.sim_ns / 1_000_000;
    assert!((2..=3).contains(&ms), "{ms} ms");
}
