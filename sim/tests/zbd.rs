//! fio's `zonemode=zbd` on the simulated device zoned by `zonesize`
//! (`world::zbd`). On this machine fio 3.33 runs `rw=randwrite bs=256k
//! direct=1 ioengine=psync zonemode=zbd zonesize=4M max_open_zones=4
//! size=64M io_size=256M` on a 64 MiB file (zones emulated, empty at the
//! start) and says `write: … (256MiB/…); 50 zone resets`. On the same
//! file with 4 MiB zones it reads 20 MiB back of a 32 MiB sequential read
//! after 20 MiB of sequential writes, nothing after eight zone-size trims
//! of eight written zones, and fails an 8 MiB write with error 22 (`I/O
//! buflen exceeds zone size`), as these tests expect of iolab.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{parse_reading, run_none, scenario, scenario_of};
use iolab_sim::device::DeviceConfig;
use iolab_sim::stats::{Dir, normal_output};
use iolab_sim::{parse_variant, run};

const GLOBAL: &str = "[global]\nfilename=/dev/sdb\nzonemode=zbd\nzonesize=4m\ndirect=1\n\
                      ioengine=psync\n";

fn text(jobs: &str) -> String {
    format!("{GLOBAL}{jobs}")
}

/// The run's error, for a job file iolab refuses.
fn refusal(jobs: &str) -> String {
    let parsed = parse_reading(&text(jobs), &[], 1 << 30).expect("parses");
    let s = scenario_of(
        parsed,
        DeviceConfig::preset("nvme").expect("preset"),
        1 << 30,
        1,
    );
    let v = parse_variant("none").expect("none");
    match run(&s, &v, &mut |_| {}) {
        Ok(_) => panic!("ran: {jobs}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn random_writes_reset_full_zones_as_fio_counts_them() {
    let out = run_none(&scenario(
        &text("[w]\nrw=randwrite\nbs=256k\nsize=64m\nio_size=256m\nmax_open_zones=4\n"),
        "nvme",
        1 << 30,
        1,
    ));
    let w = out.report.jobs[0].dir(Dir::Write);
    assert_eq!(w.io_bytes, 256 << 20);
    // 256 MiB through 16 zones of 4 MiB: at least 48 zones written full
    // and reset (at most 64 MiB stay); fio's draws came to 50.
    let resets = out.report.jobs[0].zone_resets.expect("a zoned job");
    assert!((48..=52).contains(&resets), "{resets}");
    let normal = normal_output(&out.report);
    assert!(
        normal.contains(&format!("msec); {resets} zone resets\n")),
        "{normal}"
    );
}

#[test]
fn reads_stay_below_the_write_pointer_and_end_past_the_last_data() {
    // Five zones written in order, then a read of all eight: the reads
    // find no data past the fifth zone and the job ends (fio's io_u_eof).
    let out = run_none(&scenario(
        &text(
            "[w]\nrw=write\nbs=1m\nsize=32m\nio_size=20m\n[r]\nstonewall\nrw=read\nbs=1m\nsize=32m\n",
        ),
        "nvme",
        1 << 30,
        1,
    ));
    assert_eq!(out.report.jobs[0].dir(Dir::Write).io_bytes, 20 << 20);
    assert_eq!(out.report.jobs[1].dir(Dir::Read).io_bytes, 20 << 20);
    // A device never written reads nothing at all.
    let empty = run_none(&scenario(
        &text("[r]\nrw=read\nbs=1m\nsize=32m\n"),
        "nvme",
        1 << 30,
        1,
    ));
    assert_eq!(empty.report.jobs[0].dir(Dir::Read).total_ios, 0);
    // read_beyond_wp=1 reads where the offsets fall.
    let beyond = run_none(&scenario(
        &text("[r]\nrw=read\nbs=1m\nsize=32m\nread_beyond_wp=1\n"),
        "nvme",
        1 << 30,
        1,
    ));
    assert_eq!(beyond.report.jobs[0].dir(Dir::Read).io_bytes, 32 << 20);
}

#[test]
fn a_trim_resets_a_zone_and_its_data_is_gone() {
    // Eight zones written, then every zone trimmed (a reset each), then
    // nothing is left to read.
    let out = run_none(&scenario(
        &text(
            "[w]\nrw=write\nbs=1m\nsize=32m\n[t]\nstonewall\nrw=trim\nbs=4m\nsize=32m\n\
             [r]\nstonewall\nrw=read\nbs=1m\nsize=32m\n",
        ),
        "nvme",
        1 << 30,
        1,
    ));
    let jobs = &out.report.jobs;
    assert_eq!(jobs[1].dir(Dir::Trim).total_ios, 8);
    assert_eq!(jobs[1].zone_resets, Some(8));
    assert_eq!(jobs[2].dir(Dir::Read).total_ios, 0);
    // A trim of an empty zone needs no command: it is far quicker than a
    // reset of a written one.
    let empty = run_none(&scenario(
        &text("[t]\nrw=trim\nbs=4m\nsize=32m\n"),
        "nvme",
        1 << 30,
        1,
    ));
    let e = empty.report.jobs[0].dir(Dir::Trim);
    assert_eq!(e.total_ios, 8);
    assert_eq!(empty.report.jobs[0].zone_resets, Some(0));
    assert!(e.clat.mean < jobs[1].dir(Dir::Trim).clat.mean);
}

#[test]
fn sizes_in_zones_and_whole_zones_for_writers() {
    // 2z from 1z: zones 1 and 2.
    let out = run_none(&scenario(
        &text("[w]\nrw=write\nbs=1m\nsize=2z\noffset=1z\n"),
        "nvme",
        1 << 30,
        1,
    ));
    assert_eq!(out.report.jobs[0].dir(Dir::Write).io_bytes, 8 << 20);
    // A writer's region is rounded to whole zones: 8m from 1m holds the
    // one zone from 4m to 8m.
    let rounded = run_none(&scenario(
        &text("[w]\nrw=write\nbs=1m\nsize=8m\noffset=1m\n"),
        "nvme",
        1 << 30,
        1,
    ));
    assert_eq!(rounded.report.jobs[0].dir(Dir::Write).io_bytes, 4 << 20);
}

#[test]
fn a_write_longer_than_a_zone_fails_the_job_with_einval() {
    let out = run_none(&scenario(
        &text("[w]\nrw=write\nbs=8m\nsize=32m\n"),
        "nvme",
        1 << 30,
        1,
    ));
    assert_eq!(out.report.jobs[0].error, 22);
    assert_eq!(out.report.jobs[0].dir(Dir::Write).total_ios, 0);
}

#[test]
fn jobs_sharing_the_device_take_turns_at_a_zone() {
    // Four writers and one open zone: each zone has one writer's IO at a
    // time, so the four together write no faster than one.
    let run_with = |numjobs: u32| {
        run_none(&scenario(
            &text(&format!(
                "[w]\nrw=randwrite\nbs=256k\nsize=64m\nio_size=16m\nmax_open_zones=1\n\
                 numjobs={numjobs}\ngroup_reporting\n"
            )),
            "nvme",
            1 << 30,
            1,
        ))
    };
    let one = run_with(1);
    let four = run_with(4);
    let bw = |o: &iolab_sim::RunOutput| o.report.jobs[0].dir(Dir::Write).bw_bytes;
    assert_eq!(four.report.jobs[0].dir(Dir::Write).io_bytes, 64 << 20);
    assert!(
        bw(&four) <= bw(&one) * 11 / 10,
        "{} {}",
        bw(&four),
        bw(&one)
    );
    // Without a limit each writer opens its own zones and the four go
    // faster than one.
    let free = run_none(&scenario(
        &text("[w]\nrw=randwrite\nbs=256k\nsize=64m\nio_size=16m\nnumjobs=4\ngroup_reporting\n"),
        "nvme",
        1 << 30,
        1,
    ));
    assert!(bw(&free) > bw(&one), "{} {}", bw(&free), bw(&one));
}

#[test]
fn what_fio_refuses_on_a_zoned_disk_is_refused_naming_the_option() {
    let cases: &[(&str, &str)] = &[
        ("[w]\nrw=write\nzonesize=0\nsize=32m\n", "zonesize"),
        ("[w]\nrw=write\nfilename=f\nsize=32m\n", "filename=/dev/"),
        ("[w]\nrw=write\ndirect=0\nsize=32m\n", "direct=1"),
        ("[t]\nrw=trim\nbs=1m\nsize=32m\n", "zone size"),
        (
            "[w]\nrw=write\nsize=32m\njob_max_open_zones=2\n",
            "max_open_zones",
        ),
        ("[w]\nrw=write\nsize=2m\n", "at least one zone"),
        ("[w]\nrw=write\nsize=32m\nzoneskip=1z\n", "zoneskip"),
    ];
    for (job, says) in cases {
        let e = refusal(job);
        assert!(e.contains(says), "{job}: {e}");
    }
    // Zone units need a zone size; libzbc needs the zoned device.
    let plain = |job: &str| {
        let parsed = parse_reading(job, &[], 1 << 30).expect("parses");
        let s = scenario_of(
            parsed,
            DeviceConfig::preset("nvme").expect("preset"),
            1 << 30,
            1,
        );
        let v = parse_variant("none").expect("none");
        run(&s, &v, &mut |_| {})
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    let e = plain("[w]\nfilename=/dev/sdb\nrw=write\nsize=2z\n");
    assert!(e.contains("zonesize"), "{e}");
    let e = plain("[w]\nfilename=/dev/sdb\nrw=write\nsize=32m\nioengine=libzbc\n");
    assert!(e.contains("zonemode=zbd"), "{e}");
}

/// A device file with `[zoned]` is zoned by itself, as a ZNS drive is:
/// a zonemode=zbd job takes its zone size and open-zone limit (the same
/// random writes as above reset as many zones without `zonesize` or
/// `max_open_zones`); a job's `zonesize` must be the device's and its
/// `max_open_zones` at most the device's, and a job that writes without
/// zonemode=zbd is refused.
#[test]
fn a_zoned_device_file_gives_the_zones_and_their_limit() {
    let zns = DeviceConfig::from_toml(
        "name = \"zns\"\nbase = \"nvme\"\n[zoned]\nzone_size_mib = 4\nmax_open_zones = 4\n",
    )
    .expect("loads");
    assert!(zns.describe().contains("zoned.zone_size_mib"));
    let on_zns = |jobs: &str| {
        let text = format!("[global]\nfilename=/dev/sdb\ndirect=1\nioengine=psync\n{jobs}");
        let parsed = parse_reading(&text, &[], 1 << 30).expect("parses");
        let s = scenario_of(parsed, zns.clone(), 1 << 30, 1);
        run(&s, &parse_variant("none").expect("none"), &mut |_| {})
    };
    let out =
        on_zns("[w]\nzonemode=zbd\nrw=randwrite\nbs=256k\nsize=64m\nio_size=256m\n").expect("runs");
    let resets = out.report.jobs[0].zone_resets.expect("a zoned job");
    assert!((48..=52).contains(&resets), "{resets}");
    for (jobs, says) in [
        (
            "[w]\nzonemode=zbd\nzonesize=8m\nrw=randwrite\nbs=256k\nsize=64m\n",
            "not the device's zone size, 4194304 bytes",
        ),
        (
            "[w]\nzonemode=zbd\nmax_open_zones=8\nrw=randwrite\nbs=256k\nsize=64m\n",
            "more than the device's limit of 4 open zones",
        ),
        (
            "[w]\nrw=randwrite\nbs=256k\nsize=64m\n",
            "a job that writes to it needs zonemode=zbd",
        ),
    ] {
        let e = on_zns(jobs)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains(says), "{jobs}: {e}");
    }
    // A reader needs no zone mode.
    on_zns("[r]\nrw=randread\nbs=4k\nsize=64m\n").expect("reads");
    // A zone larger than the device, or more open zones than fio tracks.
    for (text, key) in [
        (
            "name = \"z\"\nbase = \"nvme\"\n[zoned]\nzone_size_mib = 100000000\n",
            "zoned.zone_size_mib",
        ),
        (
            "name = \"z\"\nbase = \"nvme\"\n[zoned]\nzone_size_mib = 4\nmax_open_zones = 5000\n",
            "zoned.max_open_zones",
        ),
    ] {
        let e = DeviceConfig::from_toml(text).expect_err("refused");
        assert!(e.to_string().contains(key), "{e}");
    }
}

/// verify on a zoned device: the writes go to the write pointers, and
/// each block written is read back once, from where it went; a second
/// verifying writer on the same zones resets them before it writes (fio's
/// `zbd_file_reset`), and no zone is reset while it writes. Refused as
/// fio refuses or stops: a block size that does not divide the zone
/// size, and zone resets asked for while writing.
#[test]
fn verify_reads_back_each_block_written_to_the_zones() {
    let out = run_none(&scenario(
        &text(
            "verify=crc32c\nbs=256k\nsize=16m\n[a]\nrw=randwrite\n\
             [b]\nstonewall\nrw=write\n",
        ),
        "nvme",
        1 << 30,
        1,
    ));
    for (k, resets) in [(0, 0), (1, 4)] {
        let job = &out.report.jobs[k];
        let (r, w) = (job.dir(Dir::Read), job.dir(Dir::Write));
        assert_eq!(w.io_bytes, 16 << 20, "job {k}");
        assert_eq!(r.io_bytes, w.io_bytes, "job {k}: every block read back");
        assert_eq!(r.total_ios, w.total_ios, "job {k}");
        assert_eq!(job.zone_resets, Some(resets), "job {k}");
        assert_eq!(job.error, 0);
    }
    for (jobs, says) in [
        (
            "verify=crc32c\n[w]\nrw=randwrite\nbs=384k\nsize=16m\n",
            "not a divisor of the zone size",
        ),
        (
            "verify=crc32c\n[w]\nrw=randwrite\nbs=256k\nsize=16m\nzone_reset_frequency=0.5\n",
            "zone_reset_frequency",
        ),
    ] {
        let e = refusal(jobs);
        assert!(e.contains(says), "{jobs}: {e}");
    }
}
