//! The one btrfs model across its choices: every profile × every `flush=`
//! policy × every `alloc=` allocator × every `read=` policy (where the
//! profile has copies to choose from) × buffered writes, fsyncs and file
//! creates (`ioengine=filecreate`), each run checked for the invariants
//! that must hold whatever the variant:
//! no two device extents overlap, the flush model's metadata space is the
//! volume's, every ticket is granted, failed or still waiting, and every
//! fsync's log and superblocks are down, in order, before it returns.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{run_as, scenario};
use iolab_sim::device::DeviceConfig;
use iolab_sim::stats::Dir;
use iolab_sim::{AllocHint, FsKind, Profile, RunOutput, Scenario, VolumeSpec};

const FLUSH: [&str; 3] = [
    "flush=catch-up",
    "flush=on-demand",
    "flush=on-demand:preempt=2021",
];
const ALLOC: [&str; 3] = ["alloc=stock", "alloc=ssd-metadata", "alloc=allocation-hint"];
const READ: [&str; 3] = ["read=pid", "read=round-robin", "read=latency"];

/// What the jobs do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Work {
    /// Two writers of 4 KiB random buffered writes and a reader.
    Buffered,
    /// The same with an fsync every four writes.
    Fsync,
    /// Two jobs creating 300 files each in one directory, beside a writer.
    Create,
}

/// `work` for 0.3 s on the bundled 20 GB SSD and 230 GB HDD (hinted
/// metadata-preferred and data-preferred).
fn volume(profile: Profile, work: Work) -> Scenario {
    let job = match work {
        Work::Buffered | Work::Fsync => format!(
            "[global]\nsize=32m\nbs=4k\nruntime=300ms\ntime_based\n\
             [w]\nrw=randwrite\nnumjobs=2\nfsync={}\n\
             [r]\nrw=randread\n",
            if work == Work::Fsync { 4 } else { 0 }
        ),
        Work::Create => "[w]\nrw=randwrite\nsize=32m\nbs=4k\nruntime=300ms\ntime_based\n\
                         [c]\nioengine=filecreate\nnrfiles=300\nfilesize=4k\ncreate_on_open=1\n\
                         openfiles=1\nnumjobs=2\n"
            .to_owned(),
    };
    let mut s = scenario(&job, "nvme", 1 << 30, 1);
    s.fs = FsKind::Btrfs;
    s.volume = Some(VolumeSpec {
        profile,
        devices: [
            include_str!("../../scenarios/devices/ssd-20g.toml"),
            include_str!("../../scenarios/devices/hdd-230g.toml"),
        ]
        .iter()
        .map(|t| DeviceConfig::from_toml(t).expect("bundled device file parses"))
        .collect(),
        hints: vec![AllocHint::MetadataPreferred, AllocHint::DataPreferred],
        balanced: true,
        pid_split: None,
        metadata_used: 0,
        full_commit_ppm: 0,
    });
    s
}

fn u(v: &serde_json::Value, path: &[&str]) -> u64 {
    let mut x = v;
    for k in path {
        x = &x[*k];
    }
    x.as_u64()
        .unwrap_or_else(|| panic!("no {} in {v}", path.join(".")))
}

/// The invariants of one run.
fn check(out: &RunOutput, what: &str, work: Work) {
    let (vol, fs) = (&out.extra["volume"], &out.extra["btrfs"]);
    assert_eq!(u(vol, &["overlapping_extents"]), 0, "{what}");
    // One metadata space: the chunks the volume placed are the flush
    // model's total, whoever allocated them.
    assert_eq!(
        u(vol, &["metadata_total_bytes"]),
        u(fs, &["final", "total"]),
        "{what}"
    );
    // Every ticket was granted, failed, or is still waiting at the end.
    assert_eq!(
        u(fs, &["tickets"]),
        u(fs, &["ticket_wait_ns", "n"])
            + u(fs, &["tickets_failed"])
            + u(fs, &["final", "normal_tickets"]),
        "{what}"
    );
    assert_eq!(u(fs, &["enospc"]), 0, "{what}");
    // Reservations match what the inodes hold.
    let acc = &fs["accounting"];
    assert_eq!(acc["runs"], acc["runs_by_bits"], "{what}: {acc}");
    // Every fsync: its copies seen, its log before its superblocks, and
    // the fsyncs of a batch done only once the leader's superblocks are.
    assert_eq!(u(vol, &["fsync_unseen_copies"]), 0, "{what}");
    assert_eq!(u(vol, &["supers_before_log"]), 0, "{what}");
    assert_eq!(u(vol, &["commits", "fsyncs_before_super"]), 0, "{what}");
    let writes = out.report.jobs[0].dirs[Dir::Write.index()].total_ios;
    assert!(writes > 8, "{what}: {writes} writes");
    if work == Work::Create {
        // Every file made, each a call under its directory's lock.
        assert_eq!(out.extra["metadata_calls"]["create"], 600, "{what}");
        let c = out.report.jobs[1].dirs[Dir::Read.index()].total_ios;
        assert_eq!(c, 300, "{what}");
    }
    if work == Work::Fsync {
        let syncs = out.report.jobs[0].sync.total_ios;
        assert!(syncs > 2, "{what}: {syncs} fsyncs");
        // Each fsync with something to log wrote its log tree.
        assert!(u(vol, &["log_syncs"]) > 0, "{what}");
        assert_eq!(
            u(vol, &["commits", "fsyncs_batched"]),
            u(vol, &["log_syncs"]),
            "{what}: every logged fsync was served by a superblock write"
        );
    }
}

#[test]
fn every_profile_flush_alloc_and_read_choice_keeps_the_invariants() {
    let mut runs = 0;
    for profile in [Profile::Single, Profile::Dup, Profile::Raid1] {
        let reads: &[&str] = if profile.has_read_mirrors() || profile == Profile::Dup {
            &READ
        } else {
            &[""]
        };
        for work in [Work::Buffered, Work::Fsync, Work::Create] {
            let s = volume(profile, work);
            for flush in FLUSH {
                for alloc in ALLOC {
                    for read in reads {
                        let variant = [flush, alloc, read]
                            .iter()
                            .filter(|p| !p.is_empty())
                            .copied()
                            .collect::<Vec<_>>()
                            .join("+");
                        let what = format!("{} {work:?} {variant}", profile.name());
                        let out = run_as(&s, &variant);
                        check(&out, &what, work);
                        runs += 1;
                    }
                }
            }
        }
    }
    assert_eq!(runs, 3 * (9 + 27 + 27));
}

#[test]
fn btrfs_on_one_device_is_the_one_device_volume() {
    // `--fs btrfs` on a `--device` and a `single:` volume of that device
    // are the same run.
    let job = "[w]\nrw=randwrite\nsize=32m\nbs=4k\nfsync=4\nruntime=300ms\ntime_based\n";
    let mut device = scenario(job, "sata-ssd", 1 << 30, 1);
    device.fs = FsKind::Btrfs;
    let mut volume = device.clone();
    volume.volume = Some(VolumeSpec::one_device(device.device.clone()));
    let json = |o: &RunOutput| {
        let mut x = o.extra.clone();
        x["device"] = serde_json::Value::Null;
        serde_json::to_string(&x).expect("json")
    };
    let a = run_as(&device, "flush=on-demand+alloc=stock");
    let b = run_as(&volume, "flush=on-demand+alloc=stock");
    check(&a, "one device", Work::Fsync);
    assert_eq!(json(&a), json(&b));
    assert_eq!(a.report.jobs, b.report.jobs);
}
