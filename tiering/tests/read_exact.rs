//! Exact tests of the read-mirror policies and the liveness filter
//! (`find_live_mirror` and the policies it calls).

use iolab_tiering::*;

fn m(devid: u64) -> MirrorInfo {
    MirrorInfo {
        devid,
        present: true,
        queue_depth: 32,
        ..MirrorInfo::default()
    }
}

fn pick<P: ReadPolicy>(
    p: &mut P,
    mirrors: &[MirrorInfo],
    first: usize,
    n: usize,
    pid: u32,
) -> usize {
    let req = ReadRequest::new(mirrors, first, n, pid).unwrap();
    find_live_mirror(p, &req).expect("in range")
}

#[test]
fn pid_is_pid_modulo_copies() {
    let two = [m(1), m(2)];
    let got: Vec<usize> = (100..106)
        .map(|pid| pick(&mut Pid, &two, 0, 2, pid))
        .collect();
    assert_eq!(got, vec![0, 1, 0, 1, 0, 1]);
    let three = [m(1), m(2), m(3)];
    assert_eq!(pick(&mut Pid, &three, 0, 3, 7), 1);
    // RAID10: the pair starting at stripe 2 of four.
    let four = [m(1), m(2), m(3), m(4)];
    assert_eq!(pick(&mut Pid, &four, 2, 2, 7), 3);
    assert_eq!(pick(&mut Pid, &four, 2, 2, 8), 2);
}

#[test]
fn round_robin_switches_every_min_contig_read_in_devid_order() {
    let mut rr = RoundRobin::new(256 * KIB, 4096).unwrap();
    assert_eq!(rr.sectors_per_dev(), 64);
    // Stripes listed with devids out of order: 7, 3.
    let mirrors = [m(7), m(3)];
    let mut got = Vec::new();
    for _ in 0..6 {
        got.push(pick(&mut rr, &mirrors, 0, 2, 1));
        rr.on_read_submitted(32); // 128 KiB reads
    }
    // Sorted by devid: index 1 (devid 3) first, two reads per device.
    assert_eq!(got, vec![1, 1, 0, 0, 1, 1]);
    assert_eq!(rr.read_sectors(), 192);
}

#[test]
fn round_robin_counter_wraps_at_32_bits() {
    let mut rr = RoundRobin::new(4096, 4096).unwrap();
    let mirrors = [m(1), m(2), m(3)];
    rr.set_read_sectors(u32::MAX);
    // 4294967295 / 1 = 4294967295, mod 3 = 0.
    assert_eq!(pick(&mut rr, &mirrors, 0, 3, 0), 0);
    rr.on_read_submitted(2);
    assert_eq!(rr.read_sectors(), 1);
    assert_eq!(pick(&mut rr, &mirrors, 0, 3, 0), 1);
}

#[test]
fn round_robin_rounds_up_to_sectors_and_rejects_zero() {
    assert_eq!(RoundRobin::new(5000, 4096).unwrap().min_contig_read(), 8192);
    assert_eq!(RoundRobin::new(0, 4096), Err(RoundRobinError::Zero));
    assert_eq!(
        RoundRobin::new(4096, 3000),
        Err(RoundRobinError::Sectorsize(3000))
    );
    assert_eq!(RoundRobin::default().min_contig_read(), 256 * KIB);
}

#[test]
fn devid_prefers_its_device_else_first() {
    let mut p = Devid { read_devid: 2 };
    assert_eq!(pick(&mut p, &[m(1), m(2)], 0, 2, 0), 1);
    assert_eq!(pick(&mut p, &[m(5), m(6), m(1), m(3)], 2, 2, 0), 2);
}

fn stat(devid: u64, ios: u64, wait: u64) -> MirrorInfo {
    MirrorInfo {
        read_ios: ios,
        read_wait_ns: wait,
        ..m(devid)
    }
}

#[test]
fn latency_average_rules() {
    assert_eq!(latency_avg(0, 500), 0);
    assert_eq!(latency_avg(10, 0), 0);
    assert_eq!(latency_avg(10, 9), 0);
    assert_eq!(latency_avg(10, 10), 1);
    assert_eq!(latency_avg(3, 1000), 333);
}

#[test]
fn latency_2024_picks_lowest_average_and_probes_idle_devices() {
    let mut p = Latency {
        form: LatencyForm::V2024,
    };
    assert_eq!(
        pick(&mut p, &[stat(1, 10, 5000), stat(2, 10, 3000)], 0, 2, 0),
        1
    );
    // Ties: lowest index.
    assert_eq!(
        pick(&mut p, &[stat(1, 10, 3000), stat(2, 20, 6000)], 0, 2, 0),
        0
    );
    // A device with no history scores 0 and wins wherever it is.
    assert_eq!(pick(&mut p, &[stat(1, 0, 0), stat(2, 10, 10)], 0, 2, 0), 0);
    assert_eq!(
        pick(
            &mut p,
            &[stat(1, 10, 10), stat(2, 0, 0), stat(3, 10, 10)],
            0,
            3,
            0
        ),
        1
    );
}

#[test]
fn latency_2021_lets_a_zero_score_win_only_last() {
    let mut p = Latency {
        form: LatencyForm::V2021,
    };
    assert_eq!(
        pick(&mut p, &[stat(1, 10, 5000), stat(2, 10, 3000)], 0, 2, 0),
        1
    );
    // Zero first: replaced by the next copy even though it is slower.
    assert_eq!(
        pick(&mut p, &[stat(1, 0, 0), stat(2, 10, 9000)], 0, 2, 0),
        1
    );
    // Zero last: wins.
    assert_eq!(
        pick(&mut p, &[stat(1, 10, 9000), stat(2, 0, 0)], 0, 2, 0),
        1
    );
    // Zero in the middle of three: the third replaces it.
    assert_eq!(
        pick(
            &mut p,
            &[stat(1, 10, 500), stat(2, 0, 0), stat(3, 10, 9000)],
            0,
            3,
            0
        ),
        2
    );
    // Equal averages: the first stays.
    assert_eq!(
        pick(&mut p, &[stat(1, 10, 3000), stat(2, 10, 3000)], 0, 2, 0),
        0
    );
}

#[test]
fn load_balance_skips_busy_copies_and_remembers_per_cpu() {
    let mut p = LoadBalance::new(2);
    let busy = |devid, inflight| MirrorInfo {
        inflight,
        queue_depth: 4,
        ..m(devid)
    };
    let mirrors = [busy(1, 4), busy(2, 1), busy(3, 0)];
    let mut req = ReadRequest::new(&mirrors, 0, 3, 0).unwrap();
    assert_eq!(find_live_mirror(&mut p, &req), Ok(1));
    assert_eq!(p.last(0), 1);
    // Scan starts at the last pick.
    assert_eq!(find_live_mirror(&mut p, &req), Ok(1));
    // CPU 1 has its own last choice (0), which is full.
    req.cpu = 1;
    assert_eq!(find_live_mirror(&mut p, &req), Ok(1));
    // All full: the last choice stays.
    let full = [busy(1, 4), busy(2, 4), busy(3, 4)];
    let req = ReadRequest::new(&full, 0, 3, 0).unwrap();
    assert_eq!(find_live_mirror(&mut p, &req), Ok(1));
}

#[test]
fn load_balance_scans_from_the_last_pick_and_wraps_to_first() {
    let q = |devid, inflight| MirrorInfo {
        inflight,
        queue_depth: 2,
        ..m(devid)
    };
    let mut p = LoadBalance::new(1);
    // Only copy 2 has room: it becomes this CPU's last pick.
    let only_last = [q(1, 2), q(2, 2), q(3, 0)];
    let req = ReadRequest::new(&only_last, 0, 3, 0).unwrap();
    assert_eq!(find_live_mirror(&mut p, &req), Ok(2));
    // Copies 1 and 2 have room: the scan starts at 2, not at `first`.
    let two_free = [q(1, 2), q(2, 0), q(3, 0)];
    let req = ReadRequest::new(&two_free, 0, 3, 0).unwrap();
    assert_eq!(find_live_mirror(&mut p, &req), Ok(2));
    // Copy 2 is busy now: the scan runs off the end and wraps to 0.
    let wrap = [q(1, 0), q(2, 0), q(3, 2)];
    let req = ReadRequest::new(&wrap, 0, 3, 0).unwrap();
    assert_eq!(find_live_mirror(&mut p, &req), Ok(0));
    assert_eq!(p.last(0), 0);
    // A last pick outside a RAID10 pair's range restarts at its first.
    let pair = [q(1, 0), q(2, 0), q(3, 2), q(4, 0)];
    let mut p = LoadBalance::new(1);
    let req = ReadRequest::new(&pair, 0, 2, 0).unwrap();
    assert_eq!(find_live_mirror(&mut p, &req), Ok(0));
    let req = ReadRequest::new(&pair, 2, 2, 0).unwrap();
    assert_eq!(find_live_mirror(&mut p, &req), Ok(3));
    assert_eq!(p.last(0), 3);
}

#[test]
fn load_balance_penalises_seeks_on_rotational_devices_in_mixed_arrays() {
    let mut p = LoadBalance::new(1);
    let rot = MirrorInfo {
        rotational: true,
        inflight: 0,
        queue_depth: 1,
        physical: 4096,
        last_offset: 0,
        ..m(1)
    };
    let ssd = MirrorInfo {
        rotational: false,
        inflight: 0,
        queue_depth: 1,
        physical: 4096,
        last_offset: 0,
        ..m(2)
    };
    let mirrors = [rot, ssd];
    let mut req = ReadRequest::new(&mirrors, 0, 2, 0).unwrap();
    req.mixed_rotational = true;
    assert_eq!(find_live_mirror(&mut p, &req), Ok(1));
    // Without the mixed flag the HDD is not penalised.
    let mut q = LoadBalance::new(1);
    req.mixed_rotational = false;
    assert_eq!(find_live_mirror(&mut q, &req), Ok(0));
    // Sequential on the HDD: no penalty.
    let seq = [
        MirrorInfo {
            last_offset: 4096,
            ..rot
        },
        ssd,
    ];
    let mut req = ReadRequest::new(&seq, 0, 2, 0).unwrap();
    req.mixed_rotational = true;
    let mut r = LoadBalance::new(1);
    assert_eq!(find_live_mirror(&mut r, &req), Ok(0));
}

#[test]
fn queue_picks_fewest_inflight() {
    let q = |devid, inflight| MirrorInfo {
        inflight,
        ..m(devid)
    };
    assert_eq!(pick(&mut Queue, &[q(1, 3), q(2, 1), q(3, 1)], 0, 3, 0), 1);
}

#[test]
fn liveness_filter() {
    let gone = |devid| MirrorInfo {
        present: false,
        ..m(devid)
    };
    // Preferred (pid 1 -> index 1) missing: the lowest present index.
    assert_eq!(pick(&mut Pid, &[m(1), gone(2), m(3)], 0, 3, 1), 0);
    // Replace source avoided while another copy is present.
    let mirrors = [m(1), m(2)];
    let mut req = ReadRequest::new(&mirrors, 0, 2, 0).unwrap();
    req.replace_source = Some(1);
    assert_eq!(find_live_mirror(&mut Pid, &req), Ok(1));
    // ... but used when it is the only present copy.
    let mirrors = [m(1), gone(2)];
    let mut req = ReadRequest::new(&mirrors, 0, 2, 1).unwrap();
    req.replace_source = Some(1);
    assert_eq!(find_live_mirror(&mut Pid, &req), Ok(0));
    // Nothing present: the preferred copy, for the error path.
    assert_eq!(pick(&mut Pid, &[gone(1), gone(2)], 0, 2, 1), 1);
    // RAID10: the filter stays inside the pair.
    assert_eq!(pick(&mut Pid, &[m(1), m(2), gone(3), m(4)], 2, 2, 0), 3);
}

#[test]
fn bad_ranges_are_errors() {
    let mirrors = [m(1), m(2)];
    assert_eq!(
        ReadRequest::new(&mirrors, 1, 2, 0).err(),
        Some(ReadError::BadRange {
            first: 1,
            n: 2,
            stripes: 2
        })
    );
    assert!(ReadRequest::new(&mirrors, 0, 0, 0).is_err());
    assert!(ReadRequest::new(&mirrors, usize::MAX, 2, 0).is_err());
}
