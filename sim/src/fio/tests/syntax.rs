//! Job-file syntax: sections, comments, values, expansion, includes.

use super::*;

#[test]
fn repeated_global_only_affects_later_jobs() {
    let f = parse(
        "[global]\nbs=8k\nrw=randread\n[a]\n[global]\nbs=16k\niodepth=4\n[b]\n[c]\niodepth=2\n",
    )
    .expect("parses");
    let [a, b, c] = [&f.jobs[0], &f.jobs[1], &f.jobs[2]];
    assert_eq!((a.bs[DDIR_READ].min, a.iodepth), (8 * KIB, 1));
    assert_eq!((b.bs[DDIR_READ].min, b.iodepth), (16 * KIB, 4));
    assert_eq!((c.bs[DDIR_READ].min, c.iodepth), (16 * KIB, 2));
    // The first [global] still applies after the second one.
    assert!(f.jobs.iter().all(|j| j.rw.mode == RwMode::RandRead));
    assert_eq!(a.options.len(), 2);
    assert_eq!(b.options.len(), 4);
    assert_eq!(
        c.options.last(),
        Some(&("iodepth".to_string(), "2".to_string()))
    );
    assert_eq!(f.global_options.len(), 4);
}

#[test]
fn any_section_starting_with_global_is_global() {
    let f = parse("[global-settings]\nbs=8k\n[a]\n").expect("parses");
    assert_eq!(f.jobs.len(), 1);
    assert_eq!(f.jobs[0].bs[DDIR_WRITE].max, 8 * KIB);
}

#[test]
fn job_name_option_renames_only_its_job() {
    let f = parse("[global]\nname=ignored\n[a]\n[b]\nname=renamed\n").expect("parses");
    assert_eq!(f.jobs[0].name, "a");
    assert_eq!(f.jobs[1].name, "renamed");
}

#[test]
fn comments_and_trailing_comments() {
    let j = job(concat!(
        "; leading comment\n",
        "# another\n",
        "   ; indented comment\n",
        "[job] # comment after header\n",
        "ramp_time=5\t# tab then comment\n",
        "bs=8k;semicolon comment\n",
        "filename=/tmp/a#b\n",
        "description=hello world ; trailing\n",
        "\n",
        "   \r\n",
    ));
    assert_eq!(j.ramp_time_ns, 5 * SEC);
    assert_eq!(j.bs[DDIR_READ].min, 8 * KIB);
    assert_eq!(j.filename, vec!["/tmp/a".to_string()]);
    assert_eq!(j.description.as_deref(), Some("hello world"));
}

#[test]
fn whitespace_and_crlf() {
    let j = job("\u{feff}[job]\r\n  bs = 16k \r\n\trw\t=\trandwrite\r\n");
    assert_eq!(j.bs[DDIR_TRIM].min, 16 * KIB);
    assert_eq!(j.rw.mode, RwMode::RandWrite);
}

#[test]
fn bare_booleans_and_flags() {
    let j = job(concat!(
        "[job]\ndirect\ntime_based\ngroup_reporting\nnorandommap\nend_fsync\n",
        "invalidate=0\nstonewall\nnew_group\nexitall\nruntime=1\n",
    ));
    assert!(j.direct && j.time_based && j.group_reporting && j.norandommap && j.end_fsync);
    assert!(!j.invalidate);
    assert!(j.stonewall && j.new_group && j.exitall);
    let j = job("[job]\ntime_based=0\ngroup_reporting=2\nexitall=0\nbuffered=0\n");
    assert!(!j.time_based);
    assert!(j.group_reporting);
    // fio's exitall handler ignores its value.
    assert!(j.exitall);
    assert!(j.direct);
    let j = job("[job]\ndirect=1\nbuffered\nwait_for_previous\n");
    assert!(!j.direct);
    assert!(j.stonewall);
}

#[test]
fn defaults_match_fio() {
    let j = job("[job]\n");
    assert_eq!(j, JobSpec::fio_default("job", "test.fio", 1));
    assert_eq!(j.ioengine, Engine::Psync);
    assert_eq!(
        j.rw,
        Rw {
            mode: RwMode::Read,
            seq_n: 1,
            seq_add: 0,
            engine_value: None,
        }
    );
    assert_eq!(j.rwmixwrite(), 50);
    assert_eq!(j.percentile_list.len(), 17);
    assert!(j.create_fsync && j.invalidate && j.randrepeat && j.clat_percentiles);
}

#[test]
fn kb_base_1024_default() {
    let cases = [
        ("4k", 4096),
        ("4ki", 4000),
        ("4KiB", 4000),
        ("1mi", 1_000_000),
        ("1MiB", 1_000_000),
        ("1m", MIB),
        ("1g", GIB),
        ("1t", 1 << 40),
        ("1p", 1 << 50),
        ("1ti", 1_000_000_000_000),
    ];
    for (v, want) in cases {
        let j = job(&format!("[job]\nsize={v}\n"));
        assert_eq!(j.size, Some(SizeSpec::Bytes(want)), "size={v}");
    }
}

#[test]
fn kb_base_1000() {
    let cases = [
        ("4k", 4000),
        ("4ki", 4096),
        ("4KiB", 4096),
        ("1m", 1_000_000),
        ("1mi", MIB),
        ("1g", 1_000_000_000),
        ("1gib", GIB),
    ];
    for (v, want) in cases {
        let j = job(&format!("[job]\nkb_base=1000\nsize={v}\n"));
        assert_eq!(j.size, Some(SizeSpec::Bytes(want)), "size={v}");
    }
    // kb_base applies to the whole section, even when written last, and is
    // inherited from [global].
    let j = job("[job]\nbs=4k\nkb_base=1000\n");
    assert_eq!(j.bs[DDIR_READ].min, 4000);
    let f = parse("[global]\nkb_base=1000\n[a]\nbs=8k\n[b]\nkb_base=1024\nbs=8k\n").expect("ok");
    assert_eq!(f.jobs[0].bs[DDIR_READ].min, 8000);
    assert_eq!(f.jobs[1].bs[DDIR_READ].min, 8 * KIB);
    assert_eq!(f.jobs[0].kb_base, 1000);
}

#[test]
fn size_suffix_table() {
    for v in [
        "4096", "4096b", "4096B", "4k", "4kb", "4kB", "4K", "4KB", "0x1000",
    ] {
        let j = job(&format!("[job]\nbs={v}\n"));
        assert_eq!(j.bs[DDIR_READ].min, 4096, "bs={v}");
    }
    let j = job("[job]\nsize=20%\nio_size=50%\n");
    assert_eq!(j.size, Some(SizeSpec::Percent(20)));
    assert_eq!(j.io_size, Some(SizeSpec::Percent(50)));
    let j = job("[job]\nsize=0\nio_limit=1m\n");
    assert_eq!(j.size, None);
    assert_eq!(j.io_size, Some(SizeSpec::Bytes(MIB)));
}

#[test]
fn time_suffixes() {
    let cases = [
        ("10", 10 * SEC),
        ("10s", 10 * SEC),
        ("10sec", 10 * SEC),
        ("500ms", SEC / 2),
        ("500msec", SEC / 2),
        ("250us", 250_000),
        ("250usec", 250_000),
        ("2m", 120 * SEC),
        ("1h", 3600 * SEC),
        ("1d", 86_400 * SEC),
        ("1D", 86_400 * SEC),
    ];
    for (v, want) in cases {
        assert_eq!(
            job(&format!("[job]\nruntime={v}\n")).runtime_ns,
            Some(want),
            "{v}"
        );
        assert_eq!(
            job(&format!("[job]\nramp_time={v}\n")).ramp_time_ns,
            want,
            "{v}"
        );
    }
    assert_eq!(job("[job]\nruntime=0\n").runtime_ns, None);
    assert_eq!(job("[job]\ntimeout=3\n").runtime_ns, Some(3 * SEC));
    // thinktime's bare unit is microseconds.
    assert_eq!(job("[job]\nthinktime=10\n").thinktime_ns, 10_000);
    assert_eq!(job("[job]\nthinktime=2ms\n").thinktime_ns, 2_000_000);
}

#[test]
fn bs_lists_follow_fio_rules() {
    let bs = |v: &str| job(&format!("[job]\nbs={v}\n")).bs.map(|r| r.min);
    assert_eq!(bs("256k"), [256 * KIB; 3]);
    assert_eq!(bs("8k,32k"), [8 * KIB, 32 * KIB, 32 * KIB]);
    assert_eq!(bs("8k,32k,"), [8 * KIB, 32 * KIB, 4096]);
    assert_eq!(bs(",8k"), [4096, 8 * KIB, 8 * KIB]);
    assert_eq!(bs(",8k,"), [4096, 8 * KIB, 4096]);
    assert_eq!(bs("8k,"), [8 * KIB, 4096, 4096]);
    assert_eq!(bs("1k,2k,3k"), [KIB, 2 * KIB, 3 * KIB]);
    // Without a comma, fio also splits bs at ':' or '-' (not a range).
    assert_eq!(bs("4k-8k"), [4 * KIB, 8 * KIB, 8 * KIB]);
    assert_eq!(bs("4k:8k"), [4 * KIB, 8 * KIB, 8 * KIB]);
    // An empty entry keeps the value inherited from [global].
    let f = parse("[global]\nbs=2k\n[j]\nbs=,8k\n").expect("ok");
    assert_eq!(f.jobs[0].bs.map(|r| r.min), [2 * KIB, 8 * KIB, 8 * KIB]);
}

#[test]
fn bssplit_follows_fio_rules() {
    let j = job("[job]\nbssplit=4k/10:64k/50:32k/40\n");
    // Sorted by percent, as fio sorts it; the same list in every direction.
    let want = vec![(4 * KIB, 10), (32 * KIB, 40), (64 * KIB, 50)];
    assert_eq!(j.bssplit, [want.clone(), want.clone(), want]);
    assert_eq!(j.bs.map(|r| (r.min, r.max)), [(4 * KIB, 64 * KIB); 3]);
    // Entries without a percent share what is left; 0 counts as none.
    let j = job("[job]\nbssplit=4k:8k/50:16k/0\n");
    assert_eq!(j.bssplit[0], [(4 * KIB, 25), (16 * KIB, 25), (8 * KIB, 50)]);
    // Per direction: two lists give trim the write one; an empty list
    // keeps that direction's bs.
    let j = job("[job]\nbs=8k\nbssplit=4k/100,64k/100\n");
    assert_eq!(j.bssplit[1], [(64 * KIB, 100)]);
    assert_eq!(j.bssplit[2], [(64 * KIB, 100)]);
    let j = job("[job]\nbs=8k\nbssplit=,64k/100\n");
    assert!(j.bssplit[0].is_empty());
    assert_eq!(j.bs[0].min, 8 * KIB);
    // Over 100 with an entry left to fill, too many entries, bad sizes.
    let e = err("[job]\nbssplit=4k/60:8k/50:16k\n");
    assert_err(&e, 2, Some("bssplit"), "add up to 110");
    let many: Vec<String> = (1..=65).map(|i| format!("{i}k/1")).collect();
    let e = err(&format!("[job]\nbssplit={}\n", many.join(":")));
    assert_err(&e, 2, Some("bssplit"), "more than 64 entries");
    let e = err("[job]\nbssplit=4q/50\n");
    assert_eq!(e.line, 2);
}

#[test]
fn random_distribution_follows_fio_rules() {
    use crate::fio::{RandomDistribution as D, Zone};
    let dist = |t: &str| {
        job(&format!("[job]\nrw=randread\nrandom_distribution={t}\n")).random_distribution
    };
    assert_eq!(dist("random"), D::Uniform);
    // fio's defaults: zipf 1.1, pareto 0.2, normal 0; a centre after a colon.
    assert_eq!(
        dist("zipf"),
        D::Zipf {
            theta: 1.1,
            center: None
        }
    );
    assert_eq!(
        dist("zipf:1.2:0.25"),
        D::Zipf {
            theta: 1.2,
            center: Some(0.25)
        }
    );
    assert_eq!(
        dist("pareto"),
        D::Pareto {
            h: 0.2,
            center: None
        }
    );
    assert_eq!(
        dist("normal:5"),
        D::Normal {
            dev: 5.0,
            center: None
        }
    );
    // fio's example rand-zones.fio: the last zone takes what is left.
    let z = |access, size| Zone { access, size };
    let want = vec![z(50, 5), z(30, 15), z(20, 80)];
    assert_eq!(
        dist("zoned:50/5:30/15:20/"),
        D::Zoned([want.clone(), want.clone(), want.clone()])
    );
    // Per direction, as bssplit: two lists give trims the writes' one.
    let D::Zoned(per) = dist("zoned:50/5:30/15:20/,50/10:50/90") else {
        panic!("zoned")
    };
    assert_eq!(per[0], want);
    assert_eq!(per[1], [z(50, 10), z(50, 90)]);
    assert_eq!(per[2], per[1]);
    let abs = dist("zoned_abs:60/20m:40/100m");
    assert_eq!(
        abs,
        D::ZonedAbs([0, 1, 2].map(|_| vec![z(60, 20 << 20), z(40, 100 << 20)]))
    );
    let bad = [
        ("zipf:1", "must not be 1"),
        ("zipf:1.2:1.5", "center 1.5 is outside 0..1"),
        ("pareto:1", "outside 0..1"),
        ("normal:100", "outside 0..100"),
        ("normal:x", "'x' is not a number"),
        (
            "zipf:1.2,pareto:0.3",
            "only zoned and zoned_abs take one per direction",
        ),
        ("random:3", "takes no parameter"),
        ("uniform", "unknown value 'uniform'"),
        ("zoned", "needs its zones"),
        ("zoned:50/10:40/20", "add up to 90, not 100"),
        ("zoned:50/60:50/60", "sizes add up to 120"),
        ("zoned:50/100:50", "leaving nothing"),
        ("zoned:100", "has no size"),
        ("zoned_abs:50/1g:50", "has no size"),
        (
            "zoned:4294967295/10:101/90",
            "add up to 4294967295, not 100",
        ),
    ];
    for (value, want) in bad {
        let e = err(&format!("[job]\nrandom_distribution={value}\n"));
        assert_err(&e, 2, Some("random_distribution"), want);
    }
}

#[test]
fn options_fio_takes_and_then_ignores_are_said() {
    // A distribution of a sequential job and a replay option without a log:
    // fio accepts both and does nothing with them; iolab says so.
    let f = parse("[job]\nrw=read\nrandom_distribution=zipf:1.2\nreplay_no_stall=1\n[rand]\nrw=randread\nrandom_distribution=zipf\n")
        .expect("parses");
    let said: Vec<(&str, usize, Standing)> = f
        .accepted
        .iter()
        .map(|a| (a.option.as_str(), a.line, a.standing))
        .collect();
    assert_eq!(
        said,
        [
            ("random_distribution", 3, Standing::Overridden),
            ("replay_no_stall", 4, Standing::Overridden),
        ]
    );
    assert!(
        f.accepted[0].why.contains("sequential"),
        "{}",
        f.accepted[0]
    );
}

#[test]
fn offsets_are_bytes_or_percents() {
    use crate::fio::SizeSpec;
    let j = job("[job]\noffset=4k\noffset_increment=10%\noffset_align=64k\n");
    assert_eq!(j.offset, Some(SizeSpec::Bytes(4096)));
    assert_eq!(j.offset_increment, Some(SizeSpec::Percent(10)));
    assert_eq!(j.offset_align, 64 * KIB);
    // fileoffset is fio's alias; 0 is the default.
    assert_eq!(
        job("[job]\nfileoffset=1m\n").offset,
        Some(SizeSpec::Bytes(1 << 20))
    );
    assert_eq!(job("[job]\noffset=0\n").offset, None);
    // A count of zones waits for the zone size.
    let z = job("[job]\noffset=4z\nsize=2z\nzoneskip=1z\n");
    assert_eq!(z.offset, None);
    assert_eq!(z.zone_units.offset, Some(4));
    assert_eq!(z.zone_units.size, Some(2));
    assert_eq!(z.zone_units.zoneskip, Some(1));
    // A later size in bytes replaces it.
    assert_eq!(job("[job]\nsize=2z\nsize=1m\n").zone_units.size, None);
}

#[test]
fn startdelay_is_a_time_or_a_range() {
    const S: u64 = 1_000_000_000;
    assert_eq!(job("[job]\nstartdelay=5\n").start_delay_ns, (5 * S, 5 * S));
    assert_eq!(
        job("[job]\nstartdelay=2-10\n").start_delay_ns,
        (2 * S, 10 * S)
    );
    assert_eq!(
        job("[job]\nstartdelay=500ms:2s\n").start_delay_ns,
        (S / 2, 2 * S)
    );
    let e = err("[job]\nstartdelay=10-2\n");
    assert_err(&e, 2, Some("startdelay"), "ends before it starts");
}

#[test]
fn bsrange_and_ranges() {
    let j = job("[job]\nbsrange=1k-4k\n");
    assert_eq!(
        j.bs,
        [BsRange {
            min: KIB,
            max: 4 * KIB
        }; 3]
    );
    let j = job("[job]\nblocksize_range=4k:1k,2k-8k\n");
    assert_eq!(
        j.bs[DDIR_READ],
        BsRange {
            min: KIB,
            max: 4 * KIB
        }
    );
    assert_eq!(
        j.bs[DDIR_WRITE],
        BsRange {
            min: 2 * KIB,
            max: 8 * KIB
        }
    );
    assert_eq!(
        j.bs[DDIR_TRIM],
        BsRange {
            min: 2 * KIB,
            max: 8 * KIB
        }
    );
    // A range wins over bs= for its direction, whatever the order.
    let j = job("[job]\nbsrange=1k-4k,\nbs=16k\n");
    assert_eq!(
        j.bs[DDIR_READ],
        BsRange {
            min: KIB,
            max: 4 * KIB
        }
    );
    assert_eq!(j.bs[DDIR_WRITE], BsRange::fixed(16 * KIB));
    let j = job("[job]\nfilesize=1g-2g\n");
    assert_eq!(
        j.filesize,
        Some(SizeRange {
            min: GIB,
            max: 2 * GIB
        })
    );
    let j = job("[job]\nfilesize=2g:1g\n");
    assert_eq!(
        j.filesize,
        Some(SizeRange {
            min: GIB,
            max: 2 * GIB
        })
    );
}

#[test]
fn rate_lists() {
    // fio refuses rate and rate_iops for one direction together.
    let j = job("[job]\nrate=1m,2m\nrate_process=poisson\n");
    assert_eq!(j.rate, [MIB, 2 * MIB, 2 * MIB]);
    let j = job("[job]\nrate_iops=100,200,300\nrate_process=poisson\n");
    assert_eq!(j.rate_iops, [100, 200, 300]);
    assert_eq!(j.rate_process, RateProcess::Poisson);
    let j = job("[job]\nrate=,500k\n");
    assert_eq!(j.rate, [0, 500 * KIB, 500 * KIB]);
}

#[test]
fn rw_postfix_and_mix() {
    let j = job("[job]\nrw=randread:8\n");
    assert_eq!(
        j.rw,
        Rw {
            mode: RwMode::RandRead,
            seq_n: 8,
            seq_add: 0,
            engine_value: None,
        }
    );
    let j = job("[job]\nreadwrite=write:4k\n");
    assert_eq!(
        j.rw,
        Rw {
            mode: RwMode::Write,
            seq_n: 1,
            seq_add: 4096,
            engine_value: None,
        }
    );
    let j = job("[job]\nrw=randrw\nrwmixread=70\n");
    assert_eq!((j.rwmixread, j.rwmixwrite()), (70, 30));
    let j = job("[job]\nrw=rw\nrwmixread=70\nrwmixwrite=10\n");
    assert_eq!(j.rwmixread, 90);
    assert_eq!(j.rw.mode, RwMode::ReadWrite);
    assert!(RwMode::RandTrimWrite.is_random() && RwMode::RandTrimWrite.trims());
}

#[test]
fn enumerated_options() {
    let j = job(concat!(
        "[job]\nfadvise_hint=random\nfallocate=keep\nexit_what=all\nfile_service_type=sequential\n",
        "ioengine=io_uring\niodepth=32\ncgroup=a/b\ncgroup_weight=500\nunit_base=8\n",
        "percentile_list=50:99:99.9\nrandseed=0x1234\nrandrepeat=0\noverwrite=1\n",
        "create_fsync=0\nfsync_on_close=1\nloops=3\nthinktime_blocks=4\nlog_avg_msec=500\n",
        "lat_percentiles=1\nclat_percentiles=0\nfsync=32\nnrfiles=3\nnumjobs=2\n",
    ));
    assert_eq!(j.fadvise_hint, Fadvise::Random);
    assert_eq!(j.fallocate, Fallocate::Keep);
    assert_eq!(j.exit_what, ExitWhat::All);
    assert_eq!(
        (j.file_service_type, j.file_service_nr),
        (FileServiceType::Sequential, 1)
    );
    assert_eq!((j.ioengine, j.iodepth), (Engine::IoUring, 32));
    assert!(j.ioengine.is_async());
    assert_eq!(j.cgroup.as_deref(), Some("a/b"));
    assert_eq!(j.cgroup_weight, Some(500));
    assert_eq!(j.unit_base, 8);
    assert_eq!(j.percentile_list, vec![50.0, 99.0, 99.9]);
    assert_eq!(j.randseed, Some(0x1234));
    assert!(!j.randrepeat && j.overwrite && !j.create_fsync && j.fsync_on_close);
    assert_eq!((j.loops, j.thinktime_blocks, j.log_avg_msec), (3, 4, 500));
    assert!(j.lat_percentiles && !j.clat_percentiles);
    assert_eq!((j.fsync, j.nrfiles, j.numjobs), (32, 3, 2));
    for (v, want) in [
        ("0", Fallocate::None),
        ("1", Fallocate::Posix),
        ("truncate", Fallocate::Truncate),
    ] {
        assert_eq!(job(&format!("[j]\nfallocate={v}\n")).fallocate, want);
    }
    for (v, want) in [("0", Fadvise::None), ("sequential", Fadvise::Sequential)] {
        assert_eq!(job(&format!("[j]\nfadvise_hint={v}\n")).fadvise_hint, want);
    }
    for e in [
        "sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "null",
    ] {
        assert_eq!(job(&format!("[j]\nioengine={e}\n")).ioengine.name(), e);
    }
}

#[test]
fn filename_lists_and_escapes() {
    let j = job("[job]\nfilename=/dev/sda:/dev/sdb\ndirectory=/mnt/a:/mnt/b\n");
    assert_eq!(
        j.filename,
        vec!["/dev/sda".to_string(), "/dev/sdb".to_string()]
    );
    assert_eq!(
        j.directory,
        vec!["/mnt/a".to_string(), "/mnt/b".to_string()]
    );
    let j = job("[job]\nfilename=/dev/dsk/foo@3,0\\:c::bar\n");
    assert_eq!(
        j.filename,
        vec!["/dev/dsk/foo@3,0:c".to_string(), "bar".to_string()]
    );
}

#[test]
fn mmtests_arith_pre_expansion() {
    let j = job("[job]\nsize=$((MEMTOTAL_BYTES*2))\n");
    assert_eq!(j.size, Some(SizeSpec::Bytes(2 * MEM)));
    let f = parse_vars(
        "[job]\nsize=$((MEMTOTAL_BYTES*2/1048576/$FIO_NR_JOBS))m\nnumjobs=$((NUM_LOGICAL_CPUS/2))\n",
        &[("FIO_NR_JOBS", "4")],
    )
    .expect("parses");
    let j = &f.jobs[0];
    assert_eq!(j.size, Some(SizeSpec::Bytes(2 * MEM / 4)));
    assert_eq!(j.numjobs, 4);
    assert_eq!(j.options[0], ("size".to_string(), "8192m".to_string()));
    // Braced and bare names, nesting, a job name computed by bash.
    let f = parse_vars(
        "[job$((1+1))]\nfilesize=$(( ${N} * $((2**10)) ))k\n",
        &[("N", " 3 ")],
    )
    .expect("parses");
    assert_eq!(f.jobs[0].name, "job2");
    assert_eq!(
        f.jobs[0].filesize,
        Some(SizeRange {
            min: 3 * MIB,
            max: 3 * MIB
        })
    );
}

#[test]
fn env_vars_and_keywords() {
    let f = parse_vars(
        "[job]\nsize=${SIZE}\nfilename=${DIR}/f\n",
        &[("SIZE", "64m"), ("DIR", "/x")],
    )
    .expect("parses");
    assert_eq!(f.jobs[0].size, Some(SizeSpec::Bytes(64 * MIB)));
    assert_eq!(f.jobs[0].filename, vec!["/x/f".to_string()]);
    let j = job("[job]\nnumjobs=$ncpus\nbs=$pagesize\nsize=$mb_memory\n");
    assert_eq!(j.numjobs, 8);
    assert_eq!(j.bs[DDIR_READ].min, 4096);
    assert_eq!(j.size, Some(SizeSpec::Bytes(16 * 1024)));
    // Keyword math is evaluated like bc: plain integers, no unit.
    let j = job("[job]\nsize=8*$mb_memory\niodepth=$ncpus/3\n");
    assert_eq!(j.size, Some(SizeSpec::Bytes(8 * 16 * 1024)));
    assert_eq!(j.iodepth, 2);
    let j = job("[job]\nsize=$mb_memorym\n");
    assert_eq!(j.size, Some(SizeSpec::Bytes(16 * GIB)));
}

#[test]
fn parenthesised_arithmetic() {
    assert_eq!(
        job("[j]\nsize=(2*4096)\n").size,
        Some(SizeSpec::Bytes(8192))
    );
    assert_eq!(job("[j]\nbs=(1024^2)\n").bs[DDIR_READ].min, MIB);
    assert_eq!(
        job("[j]\nbs=(4k+4k),(1k*2)\n").bs.map(|r| r.min),
        [8 * KIB, 2 * KIB, 2 * KIB]
    );
    assert_eq!(job("[j]\niodepth=(10%3)\n").iodepth, 1);
    // Time operands default to microseconds inside expressions.
    assert_eq!(job("[j]\nruntime=(2*1000000)\n").runtime_ns, Some(2 * SEC));
    assert_eq!(
        job("[j]\nruntime=(1s+500ms)\n").runtime_ns,
        Some(3 * SEC / 2)
    );
    assert_eq!(job("[j]\nthinktime=(100+50)\n").thinktime_ns, 150_000);
    assert_eq!(
        job("[j]\nsize=((1+2)*(3+4))\n").size,
        Some(SizeSpec::Bytes(21))
    );
}

#[test]
fn includes() {
    let include = |_: &str, name: &str| -> Result<(String, Vec<u8>), String> {
        match name {
            "common.fio" => Ok((
                "inc/common.fio".into(),
                "; shared\nbs=8k\ninclude deeper.fio\n".into(),
            )),
            "deeper.fio" => Ok(("inc/deeper.fio".into(), "iodepth=16\n".into())),
            "job.fio" => Ok(("inc/job.fio".into(), "rw=randwrite\n".into())),
            other => Err(format!("no such file {other}")),
        }
    };
    let f = parse_full(
        "[global]\ninclude common.fio\n[a]\ninclude job.fio\nnumjobs=2\n[b]\n",
        &[],
        &include,
    )
    .expect("parses");
    let (a, b) = (&f.jobs[0], &f.jobs[1]);
    assert_eq!(
        (a.bs[DDIR_READ].min, a.iodepth, a.rw.mode),
        (8 * KIB, 16, RwMode::RandWrite)
    );
    assert_eq!(
        (b.bs[DDIR_READ].min, b.iodepth, b.rw.mode),
        (8 * KIB, 16, RwMode::Read)
    );
    assert_eq!(a.numjobs, 2);
    assert_eq!(
        a.options,
        [
            ("bs", "8k"),
            ("iodepth", "16"),
            ("rw", "randwrite"),
            ("numjobs", "2")
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
    );
}

#[test]
fn include_errors() {
    let looping = |_: &str, name: &str| -> Result<(String, Vec<u8>), String> {
        match name {
            "a.fio" => Ok(("a.fio".into(), "bs=4k\ninclude b.fio\n".into())),
            "b.fio" => Ok(("b.fio".into(), "\ninclude a.fio\n".into())),
            "self.fio" => Ok(("test.fio".into(), "bs=4k\n".into())),
            "section.fio" => Ok(("section.fio".into(), "bs=4k\n[other]\n".into())),
            "bad.fio" => Ok(("bad.fio".into(), "iodepth=1\nblocksze=4k\n".into())),
            other => Err(format!("no such file {other}")),
        }
    };
    let e = parse_full("[j]\ninclude a.fio\n", &[], &looping).expect_err("loop");
    assert_eq!((e.file.as_str(), e.line), ("b.fio", 2));
    assert!(
        e.message
            .contains("include loop: test.fio -> a.fio -> b.fio -> a.fio"),
        "{e}"
    );
    let e = parse_full("[j]\ninclude self.fio\n", &[], &looping).expect_err("loop");
    assert!(e.message.contains("include loop"), "{e}");
    let e = parse_full("[j]\ninclude section.fio\n", &[], &looping).expect_err("section");
    assert_eq!((e.file.as_str(), e.line), ("section.fio", 2));
    let e = parse_full("[j]\n\ninclude missing.fio\n", &[], &looping).expect_err("missing");
    assert_err(&e, 3, Some("include"), "no such file missing.fio");
    let e = parse_full("include a.fio\n[j]\n", &[], &looping).expect_err("outside");
    assert_err(&e, 1, Some("include"), "outside of [] job section");
    let e = parse_full("[j]\ninclude bad.fio\n", &[], &looping).expect_err("bad");
    assert_eq!(
        (e.file.as_str(), e.line, e.section.as_deref()),
        ("bad.fio", 2, Some("j"))
    );
    assert_eq!(e.suggestion.as_deref(), Some("blocksize"));
}

#[test]
fn cosmetic_and_harmless_options_are_accepted() {
    let f = parse(concat!(
        "[global]\nthread\ncpus_allowed=0-3\nverify_fatal=1\nwrite_lat_log=lat\n",
        "[job]\nrandom_distribution=random\noffset=0\nnice=5\nbwavgtime=500\n",
    ))
    .expect("parses");
    let got: Vec<(&str, usize)> = f
        .accepted
        .iter()
        .map(|a| (a.option.as_str(), a.line))
        .collect();
    assert_eq!(
        got,
        [
            ("thread", 2),
            ("cpus_allowed", 3),
            ("verify_fatal", 4),
            ("nice", 9),
            ("bwavgtime", 10),
        ]
    );
    assert!(
        f.accepted
            .iter()
            .all(|a| !a.why.is_empty() && a.file == "test.fio")
    );
    let standings: Vec<Standing> = f.accepted.iter().map(|a| a.standing).collect();
    assert_eq!(
        standings,
        [
            Standing::Inert,
            Standing::NotSimulated,
            Standing::Inert,
            Standing::NotSimulated,
            Standing::Inert,
        ]
    );
    // A log asked for is the job's, for the CLI to write.
    assert_eq!(f.jobs[0].logs.lat.as_deref(), Some("lat"));
    assert!(f.jobs[0].logs.per_job && f.jobs[0].logs.bw.is_none());
    // Accepted options still appear in the job's options, canonical names.
    assert!(
        f.jobs[0]
            .options
            .contains(&("write_lat_log".to_string(), "lat".to_string()))
    );
}

#[test]
fn layout_rule_and_expanded_control_chars() {
    assert!(job("[j]\nrw=randread\n").layout_writes_data());
    assert!(job("[j]\nrw=randrw\n").layout_writes_data());
    assert!(!job("[j]\nrw=randwrite\n").layout_writes_data());
    assert!(job("[j]\nrw=write\noverwrite=1\n").layout_writes_data());
    let e = parse_vars("[j]\nfilename=${BAD}\n", &[("BAD", "a\u{0}b")]).expect_err("nul");
    assert_err(&e, 2, Some("filename"), "control character U+0000");
}

#[test]
fn option_lines_are_remembered_for_later_errors() {
    let f = parse("[global]\nsize=1g\n\n[a]\nrw=read\nnumjobs=2\n[b]\nsize=2g\n").expect("parses");
    let (a, b) = (&f.jobs[0], &f.jobs[1]);
    assert_eq!(a.where_set("numjobs"), ("test.fio", 6));
    assert_eq!(a.where_set("size"), ("test.fio", 2));
    assert_eq!(b.where_set("size"), ("test.fio", 8));
    // Never set: the section's own line.
    assert_eq!(b.where_set("iodepth"), ("test.fio", 7));
}

/// `(line, option, why)` of each option listed as overridden.
fn overridden(f: &JobFile) -> Vec<(usize, &str, &str)> {
    f.accepted
        .iter()
        .filter(|a| a.standing == Standing::Overridden)
        .map(|a| (a.line, a.option.as_str(), a.why.as_str()))
        .collect()
}

/// A block size another block-size option overrides, as fio's choice of
/// sizes does (a `bssplit=` picks every size of its directions, a
/// `bsrange=` sets the bounds a `bs=` would), is listed once with both
/// places, for the directions the job does only; the sizes are fio's.
#[test]
fn overridden_block_sizes_are_named() {
    let f = parse(concat!(
        "[global]\nbs=8k\n",
        "[a]\nrw=randread\nbssplit=4k/50:16k/50\n",
        "[b]\nrw=randread\nbssplit=4k/50:16k/50\n",
        "[c]\nrw=randrw\nbsrange=4k-64k,\n",
        "[d]\nrw=randwrite\nbssplit=,4k\n",
        "[e]\nrw=randwrite\n",
    ))
    .expect("parses");
    let over = overridden(&f);
    let by = |dirs: &str, opt: &str, line: usize| {
        format!(
            "has no effect on the {dirs}: {opt} (test.fio:{line}) decides their block sizes, as in fio"
        )
    };
    assert_eq!(
        over,
        [
            (2, "bs", by("reads", "bssplit", 5).as_str()),
            (2, "bs", by("reads", "bssplit", 8).as_str()),
            (2, "bs", by("reads", "bsrange", 11).as_str()),
            (2, "bs", by("writes", "bssplit", 14).as_str()),
        ]
    );
    assert_eq!(
        f.jobs[0].bs[DDIR_READ],
        BsRange {
            min: 4 * KIB,
            max: 16 * KIB
        }
    );
    assert_eq!(f.jobs[2].bs[DDIR_WRITE], BsRange::fixed(8 * KIB));
    assert_eq!(f.jobs[4].bs[DDIR_WRITE], BsRange::fixed(8 * KIB));
    let shown = f
        .accepted
        .iter()
        .find(|a| a.standing == Standing::Overridden);
    assert_eq!(
        shown.map(ToString::to_string).as_deref(),
        Some(format!("test.fio:2: bs: {}", by("reads", "bssplit", 5)).as_str())
    );
    // In one section both, and a bsrange the bssplit overrides too.
    let f = parse("[j]\nrw=randrw\nbs=4k\nbsrange=4k-8k\nbssplit=4k/10:8k/90\n").expect("parses");
    let over = overridden(&f);
    assert_eq!(
        over,
        [
            (3, "bs", by("reads and writes", "bssplit", 5).as_str()),
            (4, "bsrange", by("reads and writes", "bssplit", 5).as_str()),
        ]
    );
}
