//! The four kernel-thread scenarios parse with exact values.

use super::*;

pub(super) const FLUSH: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../scenarios/flush-randwrite-sync.fio"
));
pub(super) const IOCOST: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../scenarios/iocost-bandwidth-latency.fio"
));
pub(super) const RAID1: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../scenarios/raid1-randrw-iops.fio"
));
pub(super) const WBT: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../scenarios/wbt-fdatasync-writers.fio"
));

fn opts(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn wbt_fdatasync_writers() {
    let f = parse_full(WBT, &[], &no_include).expect("parses");
    assert_eq!(f.jobs.len(), 2);
    assert!(f.accepted.is_empty());
    let (w, r) = (&f.jobs[0], &f.jobs[1]);

    assert_eq!(w.name, "writer");
    assert_eq!((w.file.as_str(), w.line), ("test.fio", 17));
    assert_eq!(w.numjobs, 4);
    assert_eq!(w.fdatasync, 256);
    assert_eq!(w.fsync, 0);
    assert_eq!(w.nrfiles, 1);
    assert_eq!(w.filesize, Some(SizeRange { min: GIB, max: GIB }));
    assert_eq!(w.rw.mode, RwMode::RandWrite);
    assert!(!w.new_group);
    // Common [global] values, including `size=10g # comment`.
    for j in [w, r] {
        assert_eq!(j.ioengine, Engine::Sync);
        assert!(!j.direct);
        assert_eq!(j.runtime_ns, Some(300 * SEC));
        assert!(j.time_based);
        assert!(j.invalidate);
        assert_eq!(j.bs, [BsRange::fixed(4096); 3]);
        assert_eq!(j.size, Some(SizeSpec::Bytes(10 * GIB)));
        assert_eq!(j.log_avg_msec, 10);
        assert!(j.group_reporting);
        assert_eq!(j.iodepth, 1);
        assert_eq!(j.fadvise_hint, Fadvise::Type);
        assert_eq!(j.fallocate, Fallocate::Native);
    }

    assert_eq!(r.name, "reader");
    assert_eq!(r.line, 24);
    assert!(r.new_group);
    assert_eq!(
        r.filesize,
        Some(SizeRange {
            min: 100 * MIB,
            max: 100 * MIB
        })
    );
    assert_eq!(r.nrfiles, 20);
    assert_eq!(r.file_service_type, FileServiceType::Random);
    assert_eq!(r.file_service_nr, 16);
    assert_eq!(r.rw.mode, RwMode::RandRead);
    assert_eq!(r.numjobs, 1);
    assert_eq!(r.fdatasync, 0);

    let global = [
        ("direct", "0"),
        ("ioengine", "sync"),
        ("runtime", "300"),
        ("time_based", ""),
        ("invalidate", "1"),
        ("bs", "4096"),
        ("size", "10g"),
        ("log_avg_msec", "10"),
        ("group_reporting", "1"),
    ];
    assert_eq!(f.global_options, opts(&global));
    let mut writer = global.to_vec();
    writer.extend([
        ("nrfiles", "1"),
        ("filesize", "1g"),
        ("fdatasync", "256"),
        ("rw", "randwrite"),
        ("numjobs", "4"),
    ]);
    assert_eq!(w.options, opts(&writer));
}

#[test]
fn flush_randwrite_sync() {
    let j = job(FLUSH);
    assert_eq!(j.name, "randwrite");
    assert_eq!(j.line, 22);
    assert_eq!(j.ioengine, Engine::Sync);
    assert!(!j.direct);
    assert_eq!(
        j.rw,
        Rw {
            mode: RwMode::RandWrite,
            seq_n: 1,
            seq_add: 0,
            engine_value: None,
        }
    );
    assert_eq!(j.bs, [BsRange::fixed(4 * KIB); 3]);
    assert_eq!(j.runtime_ns, Some(300 * SEC));
    assert!(j.time_based);
    assert!(j.invalidate);
    assert_eq!(j.fallocate, Fallocate::Posix);
    assert_eq!(j.filename, vec!["fio_testfile".to_string()]);
    assert_eq!(j.size, Some(SizeSpec::Bytes(50 * GIB)));
    assert!(j.group_reporting);
    assert_eq!(j.numjobs, 8);
    assert_eq!(j.options.len(), 12);
    assert_eq!(j.options[11], ("numjobs".to_string(), "8".to_string()));
}

#[test]
fn iocost_bandwidth_latency() {
    let f = parse(IOCOST).expect("parses");
    assert_eq!(f.jobs.len(), 8);
    for (i, j) in f.jobs.iter().enumerate().take(7) {
        assert_eq!(j.name, format!("interferer{i}"));
        assert_eq!(j.line, 22 + 4 * i);
        assert_eq!(j.rw.mode, RwMode::Read);
        assert_eq!(j.cgroup.as_deref(), Some(j.name.as_str()));
        assert!(!j.new_group);
    }
    let last = &f.jobs[7];
    assert_eq!(last.name, "interfered");
    assert_eq!(last.line, 50);
    assert!(last.new_group);
    assert_eq!(last.rw.mode, RwMode::RandRead);
    assert_eq!(last.cgroup.as_deref(), Some("interfered"));
    for j in &f.jobs {
        assert_eq!(j.ioengine, Engine::Sync);
        assert!(!j.direct);
        assert_eq!(j.bs, [BsRange::fixed(4096); 3]);
        assert_eq!(j.runtime_ns, Some(20 * SEC));
        assert!(j.time_based);
        assert_eq!(
            j.filesize,
            Some(SizeRange {
                min: 2 * GIB,
                max: 2 * GIB
            })
        );
        assert_eq!(j.size, None);
        assert_eq!(j.cgroup_weight, None);
        assert_eq!(j.numjobs, 1);
    }
}

#[test]
fn raid1_randrw_iops() {
    let j = job(RAID1);
    assert_eq!(j.name, "iops-randomreadwrite");
    assert_eq!(j.line, 7);
    assert_eq!(j.filename, vec!["foo".to_string()]);
    // "500GB" is 500 GiB under fio's default kb_base=1024.
    assert_eq!(j.size, Some(SizeSpec::Bytes(500 * GIB)));
    assert!(j.direct);
    assert_eq!(j.rw.mode, RwMode::RandRw);
    assert_eq!(j.rwmixread, 50);
    assert_eq!(j.bs, [BsRange::fixed(4096); 3]);
    assert_eq!(j.ioengine, Engine::Libaio);
    assert_eq!(j.iodepth, 256);
    assert_eq!(j.runtime_ns, Some(120 * SEC));
    assert_eq!(j.numjobs, 4);
    assert!(j.time_based);
    assert!(j.group_reporting);
    assert_eq!(
        j.options.first(),
        Some(&("filename".to_string(), "foo".to_string()))
    );
}
