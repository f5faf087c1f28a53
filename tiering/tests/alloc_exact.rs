//! Exact allocator tests: the profile table, size limits, hole search,
//! allocation vectors, full ties, Zygo Blaxell's capped-hole example (2023)
//! and the placement scenarios of the ssd_metadata and allocation_hint
//! series.

use iolab_tiering::*;

fn vol(devices: Vec<Device>) -> Volume {
    Volume::new(VolumeParams::default(), devices).expect("valid volume")
}

fn devids(c: &Chunk) -> Vec<u64> {
    c.stripes.iter().map(|s| s.devid).collect()
}

fn ssd(devid: u64, size: u64) -> Device {
    Device::new(devid, size).with_class(DeviceClass::Ssd)
}

fn hdd(devid: u64, size: u64) -> Device {
    Device::new(devid, size).with_class(DeviceClass::Hdd)
}

fn hinted(devid: u64, size: u64, hint: AllocHint) -> Device {
    Device::new(devid, size).with_hint(hint)
}

// ---------------------------------------------------------------- profiles, limits

#[test]
fn device_count_limits_follow_the_on_disk_sizes() {
    assert_eq!(max_devs(16 * 1024), 506);
    assert_eq!(max_devs(4096), 122);
    assert_eq!(max_devs(65536), 2042);
    assert_eq!(MAX_DEVS_SYS_CHUNK, 58);
}

#[test]
fn profile_table_rows() {
    // (sub, dev_stripes, min, max, incr, ncopies, nparity, tolerated)
    let rows = [
        (Profile::Single, (1, 1, 1, 1, 1, 1, 0, 0)),
        (Profile::Dup, (1, 2, 1, 1, 1, 2, 0, 0)),
        (Profile::Raid0, (1, 1, 1, 0, 1, 1, 0, 0)),
        (Profile::Raid1, (1, 1, 2, 2, 2, 2, 0, 1)),
        (Profile::Raid1C3, (1, 1, 3, 3, 3, 3, 0, 2)),
        (Profile::Raid1C4, (1, 1, 4, 4, 4, 4, 0, 3)),
        (Profile::Raid10, (2, 1, 2, 0, 2, 2, 0, 1)),
        (Profile::Raid5, (1, 1, 2, 0, 1, 1, 1, 1)),
        (Profile::Raid6, (1, 1, 3, 0, 1, 1, 2, 2)),
    ];
    for (p, r) in rows {
        let a = p.attr();
        assert_eq!(
            (
                a.sub_stripes,
                a.dev_stripes,
                a.devs_min,
                a.devs_max,
                a.devs_increment,
                a.ncopies,
                a.nparity,
                a.tolerated_failures
            ),
            r,
            "{p}"
        );
        assert_eq!(Profile::from_name(p.name()), Some(p));
    }
    assert_eq!(Profile::Raid0.attr_with(true).devs_min, 2);
    assert_eq!(Profile::Raid10.attr_with(true).devs_min, 4);
    assert_eq!(Profile::Raid1.attr_with(true).devs_min, 2);
}

#[test]
fn data_stripes_per_profile() {
    let n = 6;
    let got: Vec<u32> = Profile::ALL
        .iter()
        .map(|p| p.attr().data_stripes(n))
        .collect();
    // single, dup, raid0, raid1, c3, c4, raid10, raid5, raid6
    assert_eq!(got, vec![6, 12 / 2, 6, 3, 2, 1, 3, 5, 4]);
    // At the widths the profiles are really used with:
    assert_eq!(Profile::Single.attr().data_stripes(1), 1);
    assert_eq!(Profile::Dup.attr().data_stripes(1), 1);
    assert_eq!(Profile::Raid1.attr().data_stripes(2), 1);
    assert_eq!(Profile::Raid1C3.attr().data_stripes(3), 1);
    assert_eq!(Profile::Raid1C4.attr().data_stripes(4), 1);
    assert_eq!(Profile::Raid10.attr().data_stripes(8), 4);
    assert_eq!(Profile::Raid5.attr().data_stripes(4), 3);
    assert_eq!(Profile::Raid6.attr().data_stripes(5), 3);
}

#[test]
fn chunk_size_defaults_and_the_50_gib_rule() {
    assert_eq!(
        ChunkSizes::defaults(50 * GIB),
        ChunkSizes {
            data: 10 * GIB,
            metadata: 256 * MIB,
            system: 32 * MIB
        }
    );
    assert_eq!(ChunkSizes::defaults(50 * GIB + 1).metadata, GIB);
    assert_eq!(ChunkSizes::defaults(0).get(ChunkType::Mixed), 10 * GIB);
}

#[test]
fn limits_per_generation() {
    let cs = ChunkSizes::defaults(100 * GIB);
    let l = Limits::new(
        ChunkType::Data,
        Profile::Raid1,
        false,
        16384,
        cs,
        100 * GIB,
        SizeRules::Mainline,
    );
    assert_eq!(
        (
            l.max_stripe_size,
            l.max_chunk_size,
            l.dev_extent_min,
            l.dev_extent_want
        ),
        (GIB, 10 * GIB, 64 * KIB, GIB)
    );
    let l = Limits::new(
        ChunkType::Data,
        Profile::Raid1,
        false,
        16384,
        cs,
        100 * GIB,
        SizeRules::Uncapped6_0,
    );
    assert_eq!((l.max_stripe_size, l.dev_extent_want), (10 * GIB, 10 * GIB));
    let l = Limits::new(
        ChunkType::System,
        Profile::Raid0,
        false,
        16384,
        cs,
        100 * GIB,
        SizeRules::Pre6_0,
    );
    assert_eq!(
        (l.max_stripe_size, l.max_chunk_size, l.attr.devs_max),
        (32 * MIB, 64 * MIB, 58)
    );
    let l = Limits::new(
        ChunkType::Metadata,
        Profile::Dup,
        false,
        16384,
        cs,
        100 * GIB,
        SizeRules::Mainline,
    );
    assert_eq!(
        (l.dev_extent_min, l.dev_extent_want, l.max_chunk_size),
        (128 * KIB, 2 * GIB, GIB)
    );
    // The 10 % cap, integer arithmetic.
    let l = Limits::new(
        ChunkType::Data,
        Profile::Single,
        false,
        16384,
        cs,
        4 * GIB,
        SizeRules::Mainline,
    );
    assert_eq!(l.max_chunk_size, 429_496_729);
    // Unlimited devs_max resolves to MAX_DEVS.
    let l = Limits::new(
        ChunkType::Data,
        Profile::Raid6,
        false,
        16384,
        cs,
        100 * GIB,
        SizeRules::Mainline,
    );
    assert_eq!(l.attr.devs_max, 506);
}

// ---------------------------------------------------------------- hole search

#[test]
fn hole_search_first_fit_else_largest_earliest() {
    // Extents leave holes [1M,3M) 2M, [4M,9M) 5M, [10M,15M) 5M, [16M,20M) 4M.
    let d = Device::new(1, 20 * MIB)
        .with_extents(vec![(3 * MIB, MIB), (9 * MIB, MIB), (15 * MIB, MIB)])
        .unwrap();
    assert_eq!(
        find_free_dev_extent(&d, 2 * MIB),
        Hole {
            start: MIB,
            len: 2 * MIB,
            fits: true
        }
    );
    assert_eq!(
        find_free_dev_extent(&d, 3 * MIB),
        Hole {
            start: 4 * MIB,
            len: 5 * MIB,
            fits: true
        }
    );
    // Nothing fits 6M: the largest hole, the earlier of the two 5M ones.
    assert_eq!(
        find_free_dev_extent(&d, 6 * MIB),
        Hole {
            start: 4 * MIB,
            len: 5 * MIB,
            fits: false
        }
    );
    // The first MiB is never offered.
    let e = Device::new(2, 10 * MIB);
    assert_eq!(
        find_free_dev_extent(&e, GIB),
        Hole {
            start: MIB,
            len: 9 * MIB,
            fits: false
        }
    );
    // An extent overlapping the reserved MiB moves the search start.
    let f = Device::new(3, 10 * MIB)
        .with_extents(vec![(0, 2 * MIB)])
        .unwrap();
    assert_eq!(
        find_free_dev_extent(&f, MIB),
        Hole {
            start: 2 * MIB,
            len: 8 * MIB,
            fits: true
        }
    );
    // Full device: length 0.
    let g = Device::new(4, 4 * MIB)
        .with_extents(vec![(MIB, 3 * MIB)])
        .unwrap();
    assert_eq!(
        find_free_dev_extent(&g, 64 * KIB),
        Hole {
            start: MIB,
            len: 0,
            fits: false
        }
    );
}

// ---------------------------------------------------------------- allocation vectors

#[test]
fn raid0_over_twenty_devices_gets_512_mib_stripes() {
    let devs = (1..=20).map(|i| Device::new(i, 100 * GIB)).collect();
    let mut v = vol(devs);
    let c = v
        .alloc_chunk(&Stock, ChunkType::Data, Profile::Raid0)
        .unwrap();
    assert_eq!(c.stripe_size, 512 * MIB);
    assert_eq!(c.length, 10 * GIB);
    assert_eq!(c.stripes.len(), 20);
    assert_eq!(devids(&c), (1..=20).collect::<Vec<_>>());
    assert!(c.stripes.iter().all(|s| s.physical == MIB));
}

#[test]
fn four_gib_filesystem_gets_a_416_mib_data_chunk() {
    let mut v = vol(vec![Device::new(1, 4 * GIB)]);
    let c = v
        .alloc_chunk(&Stock, ChunkType::Data, Profile::Single)
        .unwrap();
    assert_eq!(c.stripe_size, 416 * MIB);
    assert_eq!(c.length, 416 * MIB);
    assert_eq!(c.logical, 0);
    let c2 = v
        .alloc_chunk(&Stock, ChunkType::Data, Profile::Single)
        .unwrap();
    assert_eq!(c2.logical, 416 * MIB);
    assert_eq!(c2.stripes[0].physical, MIB + 416 * MIB);
    assert_eq!(v.device(1).unwrap().bytes_used(), 832 * MIB);
}

#[test]
fn dup_puts_both_copies_back_to_back_on_one_device() {
    let mut v = vol(vec![Device::new(1, 100 * GIB), Device::new(2, 200 * GIB)]);
    let c = v
        .alloc_chunk(&Stock, ChunkType::Metadata, Profile::Dup)
        .unwrap();
    assert_eq!(c.stripe_size, GIB);
    assert_eq!(c.length, GIB);
    assert_eq!(
        c.stripes,
        vec![
            Stripe {
                devid: 2,
                physical: MIB,
                len: GIB
            },
            Stripe {
                devid: 2,
                physical: MIB + GIB,
                len: GIB
            }
        ]
    );
    assert_eq!(
        v.device(2).unwrap().extents(),
        &[(MIB, GIB), (MIB + GIB, GIB)]
    );
}

#[test]
fn system_chunks_are_32_mib() {
    let mut v = vol(vec![Device::new(1, 100 * GIB), Device::new(2, 100 * GIB)]);
    let c = v
        .alloc_chunk(&Stock, ChunkType::System, Profile::Raid1)
        .unwrap();
    assert_eq!(
        (c.stripe_size, c.length, devids(&c)),
        (32 * MIB, 32 * MIB, vec![1, 2])
    );
    let c = v
        .alloc_chunk(
            &AllocPolicy {
                variant: AllocVariant::Stock,
                rules: SizeRules::Pre6_0,
            },
            ChunkType::System,
            Profile::Raid1,
        )
        .unwrap();
    // Before 6.0 system stripes were 32 MiB too (chunk cap 64 MiB).
    assert_eq!((c.stripe_size, c.length), (32 * MIB, 32 * MIB));
}

// ---------------------------------------------------------------- full ties

#[test]
fn raid1_over_three_equal_devices_rotates() {
    let mut v = vol((1..=3).map(|i| Device::new(i, 100 * GIB)).collect());
    let got: Vec<Vec<u64>> = (0..6)
        .map(|_| {
            devids(
                &v.alloc_chunk(&Stock, ChunkType::Data, Profile::Raid1)
                    .unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            vec![1, 2],
            vec![3, 1],
            vec![2, 3],
            vec![1, 2],
            vec![3, 1],
            vec![2, 3]
        ]
    );
}

#[test]
fn stock_fills_the_big_hdd_until_its_free_space_falls_to_the_ssds() {
    let mut v = vol(vec![ssd(1, 20 * GIB), hdd(2, 230 * GIB)]);
    for k in 0..210 {
        let c = v
            .alloc_chunk(&Stock, ChunkType::Data, Profile::Single)
            .unwrap();
        assert_eq!((devids(&c), c.stripe_size), (vec![2], GIB), "chunk {k}");
    }
    // Equal unallocated space now (20 GiB each, the reserved first MiB
    // included): devid decides.
    let c = v
        .alloc_chunk(&Stock, ChunkType::Data, Profile::Single)
        .unwrap();
    assert_eq!(devids(&c), vec![1]);
    let c = v
        .alloc_chunk(&Stock, ChunkType::Data, Profile::Single)
        .unwrap();
    assert_eq!(devids(&c), vec![2]);
    // Metadata follows the same rule under stock (1 GiB chunks above 50 GiB).
    let c = v
        .alloc_chunk(&Stock, ChunkType::Metadata, Profile::Single)
        .unwrap();
    assert_eq!((devids(&c), c.length), (vec![1], GIB));
}

// ---------------------------------------------------------------- capped holes

/// Device 1: ten separate 1 GiB holes; devices 2 and 3: one 10 GiB hole.
fn zygo_volume() -> Volume {
    let gap = 16 * MIB;
    let mut extents = Vec::new();
    let mut pos = MIB + GIB;
    for _ in 0..9 {
        extents.push((pos, gap));
        pos += gap + GIB;
    }
    let d1 = Device::new(1, pos).with_extents(extents).unwrap();
    let d2 = Device::new(2, MIB + 10 * GIB);
    let d3 = Device::new(3, MIB + 10 * GIB);
    vol(vec![d1, d2, d3])
}

/// Allocates RAID1 data chunks until ENOSPC; returns them and how many
/// devices still had space at the end.
fn run_until_enospc(v: &mut Volume, policy: &AllocPolicy) -> (Vec<Chunk>, usize) {
    let mut out = Vec::new();
    loop {
        match v.alloc_chunk(policy, ChunkType::Data, Profile::Raid1) {
            Ok(c) => out.push(c),
            Err(AllocError::NoSpace {
                candidates,
                devs_min: 2,
                ..
            }) => return (out, candidates),
            Err(e) => panic!("{e}"),
        }
        assert!(out.len() < 100);
    }
}

#[test]
fn capped_hole_request_fills_all_thirty_gib() {
    let mut v = zygo_volume();
    let policy = AllocPolicy::default();
    let (chunks, left) = run_until_enospc(&mut v, &policy);
    assert_eq!((chunks.len(), left), (15, 0));
    assert!(chunks.iter().all(|c| c.stripe_size == GIB));
    let unallocated: Vec<u64> = (1..=3)
        .map(|d| find_free_dev_extent(v.device(d).unwrap(), 1).len)
        .collect();
    assert_eq!(unallocated, vec![0, 0, 0]);
    assert_eq!(v.device(1).unwrap().bytes_used(), 10 * GIB + 9 * 16 * MIB);
    assert_eq!(v.device(2).unwrap().bytes_used(), 10 * GIB);
    assert_eq!(v.device(3).unwrap().bytes_used(), 10 * GIB);
}

#[test]
fn uncapped_hole_request_strands_eight_gib_on_device_one() {
    let mut v = zygo_volume();
    let policy = AllocPolicy {
        variant: AllocVariant::Stock,
        rules: SizeRules::Uncapped6_0,
    };
    let (chunks, left) = run_until_enospc(&mut v, &policy);
    assert_eq!((chunks.len(), left), (11, 1));
    let pairs: Vec<Vec<u64>> = chunks.iter().map(devids).collect();
    let mut want = vec![vec![2, 3]; 9];
    want.push(vec![1, 2]);
    want.push(vec![1, 3]);
    assert_eq!(pairs, want);
    assert!(chunks.iter().all(|c| c.stripe_size == GIB));
    let d1 = v.device(1).unwrap();
    assert_eq!(d1.bytes_used(), 2 * GIB + 9 * 16 * MIB);
    // Eight 1 GiB holes left, unusable for RAID1.
    assert_eq!(d1.total_avail() - MIB, 8 * GIB);
}

// ---------------------------------------------------------------- errors

#[test]
fn allocation_errors_are_values() {
    let mut v = vol(vec![Device::new(1, 10 * GIB)]);
    assert_eq!(
        v.alloc_chunk(&Stock, ChunkType::Data, Profile::Raid1),
        Err(AllocError::TooFewDevices {
            profile: Profile::Raid1,
            eligible: 1,
            devs_min: 2
        })
    );
    v.device_mut(1).unwrap().set_writable(false);
    assert_eq!(
        v.alloc_chunk(&Stock, ChunkType::Data, Profile::Single),
        Err(AllocError::NoWritableDevices)
    );
    assert_eq!(
        v.device_mut(9).map(|_| ()),
        Err(DeviceError::UnknownDevid(9))
    );

    let full = Device::new(1, 2 * MIB)
        .with_extents(vec![(MIB, MIB - 32 * KIB)])
        .unwrap();
    let mut v = vol(vec![full]);
    assert_eq!(
        v.alloc_chunk(&Stock, ChunkType::Data, Profile::Single),
        Err(AllocError::NoSpace {
            ty: ChunkType::Data,
            profile: Profile::Single,
            candidates: 0,
            devs_min: 1
        })
    );
    assert_eq!(v.device(1).unwrap().bytes_used(), MIB - 32 * KIB);

    assert_eq!(
        Volume::new(
            VolumeParams::default(),
            vec![Device::new(3, GIB), Device::new(3, GIB)]
        )
        .err(),
        Some(VolumeError::Device(DeviceError::DuplicateDevid(3)))
    );
    assert_eq!(
        Volume::new(
            VolumeParams {
                nodesize: 3000,
                ..Default::default()
            },
            vec![]
        )
        .err(),
        Some(VolumeError::Nodesize(3000))
    );
    assert_eq!(
        Device::new(1, 10 * MIB)
            .with_extents(vec![(2 * MIB, 2 * MIB), (3 * MIB, MIB)])
            .err(),
        Some(DeviceError::ExtentOverlap {
            devid: 1,
            offset: 3 * MIB
        })
    );
    assert_eq!(
        Device::new(1, 10 * MIB)
            .with_extents(vec![(9 * MIB, 2 * MIB)])
            .err(),
        Some(DeviceError::ExtentBeyondEnd {
            devid: 1,
            offset: 9 * MIB,
            len: 2 * MIB
        })
    );
    assert_eq!(
        AllocError::NoSpace {
            ty: ChunkType::Metadata,
            profile: Profile::Raid1,
            candidates: 1,
            devs_min: 2
        }
        .to_string(),
        "no space for a metadata raid1 chunk: 1 devices with free space, 2 needed (ENOSPC)"
    );
}

#[test]
fn replace_target_and_removed_devices_get_nothing() {
    let mut v = vol(vec![
        Device::new(1, 10 * GIB),
        Device::new(2, 50 * GIB),
        Device::new(3, 20 * GIB),
    ]);
    v.device_mut(2).unwrap().set_replace_target(true);
    let c = v
        .alloc_chunk(&Stock, ChunkType::Data, Profile::Raid1)
        .unwrap();
    assert_eq!(devids(&c), vec![3, 1]);
}

#[test]
fn replace_target_is_not_writable_space_for_the_ten_percent_cap() {
    // The kernel counts a replace target out of `total_rw_bytes`: the cap
    // stays 10 % of the 4 GiB device (416 MiB after rounding up).
    let mut v = vol(vec![Device::new(1, 4 * GIB), Device::new(2, 100 * GIB)]);
    v.device_mut(2).unwrap().set_replace_target(true);
    assert_eq!(v.total_rw_bytes(), 4 * GIB);
    let c = v
        .alloc_chunk(&Stock, ChunkType::Data, Profile::Single)
        .unwrap();
    assert_eq!((devids(&c), c.length), (vec![1], 416 * MIB));
    // Absurd sizes saturate instead of wrapping (or panicking).
    let mut v = vol(vec![Device::new(1, u64::MAX), Device::new(2, u64::MAX)]);
    assert_eq!(v.total_rw_bytes(), u64::MAX);
    assert_eq!(v.chunk_sizes().metadata, GIB);
    let c = v
        .alloc_chunk(&Stock, ChunkType::Data, Profile::Raid1)
        .unwrap();
    assert_eq!((devids(&c), c.stripe_size), (vec![1, 2], GIB));
}

#[test]
fn free_chunk_returns_space_and_logical_range() {
    let mut v = vol(vec![Device::new(1, 100 * GIB), Device::new(2, 100 * GIB)]);
    let a = v
        .alloc_chunk(&Stock, ChunkType::Data, Profile::Raid1)
        .unwrap();
    let b = v
        .alloc_chunk(&Stock, ChunkType::Metadata, Profile::Raid1)
        .unwrap();
    assert_eq!((a.logical, b.logical), (0, GIB));
    assert_eq!(v.next_logical(), 2 * GIB);
    v.free_chunk(&b).unwrap();
    assert_eq!(v.next_logical(), GIB);
    assert_eq!(
        v.free_chunk(&b),
        Err(AllocError::UnknownChunk { logical: GIB })
    );
    // A chunk that does not match the recorded one changes nothing.
    let mut wrong = a.clone();
    wrong.length += STRIPE_LEN;
    assert_eq!(
        v.free_chunk(&wrong),
        Err(AllocError::UnknownChunk { logical: 0 })
    );
    let mut wrong = a.clone();
    wrong.stripes[1].physical += STRIPE_LEN;
    assert_eq!(
        v.free_chunk(&wrong),
        Err(AllocError::UnknownChunk { logical: 0 })
    );
    assert_eq!(v.device(1).unwrap().bytes_used(), GIB);
    v.free_chunk(&a).unwrap();
    assert_eq!(v.device(1).unwrap().bytes_used(), 0);
    assert_eq!(v.device(2).unwrap().extents(), &[]);
}

// ---------------------------------------------------------------- ssd_metadata

fn ssd_meta(rev: SsdMetadataRev, strict: bool) -> SsdMetadata {
    SsdMetadata { rev, strict }
}

#[test]
fn ssd_metadata_splits_the_classes_and_spills_when_the_ssd_is_full() {
    let mut v = vol(vec![ssd(1, 20 * GIB), hdd(2, 230 * GIB)]);
    let p = ssd_meta(SsdMetadataRev::V3, false);
    let d = v.alloc_chunk(&p, ChunkType::Data, Profile::Single).unwrap();
    assert_eq!(devids(&d), vec![2]);
    let s = v
        .alloc_chunk(&p, ChunkType::System, Profile::Single)
        .unwrap();
    assert_eq!(devids(&s), vec![1]);
    // Fill the SSD with metadata: 1 GiB chunks, then the 991 MiB left.
    let mut on_ssd = Vec::new();
    loop {
        let c = v
            .alloc_chunk(&p, ChunkType::Metadata, Profile::Single)
            .unwrap();
        if devids(&c) != vec![1] {
            // The SSD class is empty now: the chunk spills to the HDD.
            assert_eq!(devids(&c), vec![2]);
            break;
        }
        on_ssd.push(c.stripe_size);
    }
    let mut want = vec![GIB; 19];
    want.push(20 * GIB - MIB - 32 * MIB - 19 * GIB);
    assert_eq!(on_ssd, want);
    assert_eq!(v.device(1).unwrap().total_avail(), MIB);
}

#[test]
fn ssd_metadata_v1_compares_strictly() {
    // RAID10 metadata, two SSDs, two bigger HDDs: exactly devs_min SSDs.
    let devs = || {
        vec![
            ssd(1, 100 * GIB),
            ssd(2, 100 * GIB),
            hdd(3, 400 * GIB),
            hdd(4, 400 * GIB),
        ]
    };
    let mut v3 = vol(devs());
    let c = v3
        .alloc_chunk(
            &ssd_meta(SsdMetadataRev::V3, false),
            ChunkType::Metadata,
            Profile::Raid10,
        )
        .unwrap();
    assert_eq!(devids(&c), vec![1, 2]);
    let mut v1 = vol(devs());
    let c = v1
        .alloc_chunk(
            &ssd_meta(SsdMetadataRev::V1, false),
            ChunkType::Metadata,
            Profile::Raid10,
        )
        .unwrap();
    // V1 keeps everyone (preferred class first): the chunk spans both.
    assert_eq!(devids(&c), vec![1, 2, 3, 4]);
}

#[test]
fn ssd_metadata_cover_letter_examples() {
    // RAID1 data, one HDD with space and three SSDs: HDD + emptiest SSD.
    let mut v = vol(vec![
        hdd(1, 50 * GIB),
        ssd(2, 30 * GIB),
        ssd(3, 40 * GIB),
        ssd(4, 35 * GIB),
    ]);
    let c = v
        .alloc_chunk(
            &ssd_meta(SsdMetadataRev::V3, false),
            ChunkType::Data,
            Profile::Raid1,
        )
        .unwrap();
    assert_eq!(devids(&c), vec![1, 3]);
    // RAID6 data with only two HDDs spans all disks; RAID6 metadata on
    // three SSDs stays there.
    let devs = vec![
        hdd(1, 500 * GIB),
        hdd(2, 500 * GIB),
        ssd(3, 100 * GIB),
        ssd(4, 100 * GIB),
        ssd(5, 100 * GIB),
    ];
    let mut v = vol(devs);
    let p = ssd_meta(SsdMetadataRev::V3, false);
    let d = v.alloc_chunk(&p, ChunkType::Data, Profile::Raid6).unwrap();
    assert_eq!(devids(&d), vec![1, 2, 3, 4, 5]);
    let m = v
        .alloc_chunk(&p, ChunkType::Metadata, Profile::Raid6)
        .unwrap();
    assert_eq!(devids(&m), vec![3, 4, 5]);
    // Strict mode: a too-small class is ENOSPC, not spill-over.
    let mut v = vol(vec![hdd(1, 50 * GIB), ssd(2, 30 * GIB), ssd(3, 40 * GIB)]);
    assert_eq!(
        v.alloc_chunk(
            &ssd_meta(SsdMetadataRev::V3, true),
            ChunkType::Data,
            Profile::Raid1
        ),
        Err(AllocError::NoSpace {
            ty: ChunkType::Data,
            profile: Profile::Raid1,
            candidates: 1,
            devs_min: 2
        })
    );
}

#[test]
fn mixed_chunks_bypass_the_variants() {
    let devs = || vec![ssd(1, 20 * GIB), hdd(2, 230 * GIB)];
    let mut a = vol(devs());
    let mut b = vol(devs());
    let hint = AllocationHint::default();
    a.device_mut(2).unwrap().set_hint(AllocHint::None);
    b.device_mut(2).unwrap().set_hint(AllocHint::None);
    let ca = a
        .alloc_chunk(
            &ssd_meta(SsdMetadataRev::V3, true),
            ChunkType::Mixed,
            Profile::Single,
        )
        .unwrap();
    let cb = b
        .alloc_chunk(&hint, ChunkType::Mixed, Profile::Single)
        .unwrap();
    assert_eq!((devids(&ca), devids(&cb)), (vec![2], vec![2]));
}

// ---------------------------------------------------------------- allocation_hint

#[test]
fn allocation_hint_v12_loop_device_demo() {
    use AllocHint::*;
    let mut v = vol(vec![
        hinted(1, 10 * GIB, DataOnly),
        hinted(2, 10 * GIB, DataOnly),
        hinted(3, 5 * GIB, MetadataOnly),
        hinted(4, 5 * GIB, MetadataOnly),
        hinted(5, 40 * GIB, DataPreferred),
        hinted(6, 40 * GIB, MetadataPreferred),
    ]);
    let p = AllocationHint::default();
    for _ in 0..3 {
        let d = v.alloc_chunk(&p, ChunkType::Data, Profile::Raid1).unwrap();
        assert_eq!(devids(&d), vec![1, 2]);
        let m = v
            .alloc_chunk(&p, ChunkType::Metadata, Profile::Raid1)
            .unwrap();
        assert_eq!(devids(&m), vec![3, 4]);
        let s = v
            .alloc_chunk(&p, ChunkType::System, Profile::Raid1)
            .unwrap();
        assert_eq!(devids(&s), vec![3, 4]);
    }
    // NONE takes nothing, not even when it is the emptiest.
    v.device_mut(5).unwrap().set_hint(None);
    v.device_mut(1).unwrap().set_hint(DataPreferred);
    let d = v.alloc_chunk(&p, ChunkType::Data, Profile::Raid1).unwrap();
    // Tier DATA_ONLY has one device (2), DATA_PREFERRED adds 1: union {2, 1}.
    assert_eq!(devids(&d), vec![1, 2]);
}

#[test]
fn allocation_hint_raid10_uses_the_eight_data_only_disks() {
    let mut devs: Vec<Device> = (1..=8)
        .map(|i| {
            hinted(i, 100 * GIB, AllocHint::DataOnly)
                .with_extents(vec![(MIB, 50 * GIB)])
                .unwrap()
        })
        .collect();
    devs.push(hinted(9, 100 * GIB, AllocHint::DataPreferred));
    devs.push(hinted(10, 100 * GIB, AllocHint::DataPreferred));
    for mode in [HintMode::V12, HintMode::Kakra] {
        let mut v = vol(devs.clone());
        let c = v
            .alloc_chunk(&AllocationHint { mode }, ChunkType::Data, Profile::Raid10)
            .unwrap();
        assert_eq!(devids(&c), (1..=8).collect::<Vec<_>>(), "{mode:?}");
    }
    // Stock would take the two empty new disks first (all ten).
    let mut v = vol(devs);
    let c = v
        .alloc_chunk(&Stock, ChunkType::Data, Profile::Raid10)
        .unwrap();
    assert_eq!(devids(&c), vec![9, 10, 1, 2, 3, 4, 5, 6, 7, 8]);
}

#[test]
fn allocation_hint_raid1c3_v12_drops_the_preferred_nvme_kakra_keeps_it() {
    let nvme = hinted(1, 100 * GIB, AllocHint::MetadataPreferred)
        .with_class(DeviceClass::Nvme)
        .with_extents(vec![(MIB, 60 * GIB)])
        .unwrap();
    let devs: Vec<Device> = core::iter::once(nvme)
        .chain((2..=5).map(|i| hdd(i, 100 * GIB + i * GIB)))
        .collect();
    let mut v = vol(devs.clone());
    let c = v
        .alloc_chunk(
            &AllocationHint {
                mode: HintMode::V12,
            },
            ChunkType::Metadata,
            Profile::Raid1C3,
        )
        .unwrap();
    assert_eq!(devids(&c), vec![5, 4, 3]);
    let mut v = vol(devs);
    let c = v
        .alloc_chunk(
            &AllocationHint {
                mode: HintMode::Kakra,
            },
            ChunkType::Metadata,
            Profile::Raid1C3,
        )
        .unwrap();
    assert_eq!(devids(&c), vec![5, 4, 1]);
}

#[test]
fn allocation_hint_baroncelli_raid1_tie_goes_to_the_lower_devid() {
    use AllocHint::*;
    // sda D_PREF 1 GiB free, sdc M_PREF 2 GiB, sdd M_PREF 1 GiB.
    let devs = vec![
        hinted(1, GIB + MIB, DataPreferred),
        hinted(3, 2 * GIB + MIB, MetadataPreferred),
        hinted(4, GIB + MIB, MetadataPreferred),
    ];
    let mut v = vol(devs);
    let c = v
        .alloc_chunk(&AllocationHint::default(), ChunkType::Data, Profile::Raid1)
        .unwrap();
    // All holes reach the capped request, so sda and sdd tie behind sdc.
    assert_eq!(devids(&c), vec![3, 1]);
    assert_eq!(c.stripe_size, 416 * MIB);
}

#[test]
fn hint_keys() {
    use AllocHint::*;
    let md: Vec<Option<i8>> = [
        DataPreferred,
        MetadataPreferred,
        MetadataOnly,
        DataOnly,
        None,
    ]
    .iter()
    .map(|&h| hint_key(h, ChunkType::Metadata))
    .collect();
    assert_eq!(
        md,
        vec![Some(0), Some(1), Some(2), Option::None, Option::None]
    );
    let d: Vec<Option<i8>> = [
        DataPreferred,
        MetadataPreferred,
        MetadataOnly,
        DataOnly,
        None,
    ]
    .iter()
    .map(|&h| hint_key(h, ChunkType::Data))
    .collect();
    assert_eq!(
        d,
        vec![Some(0), Some(-1), Option::None, Some(1), Option::None]
    );
    assert_eq!(hint_key(None, ChunkType::Mixed), Some(0));
    assert_eq!(hint_key(DataOnly, ChunkType::System), Option::None);
    assert_eq!(AllocHint::from_value(4), Some(None));
    assert_eq!(AllocHint::from_value(5), Option::None);
}

#[test]
fn ssd_metadata_fallback_never_overcommits_a_small_preferred_hole() {
    // RAID1 data: the only HDD has 500 MiB left, the SSDs 1 GiB holes and
    // more. Class-first order puts the HDD first and an SSD last; the
    // stripe must still fit the HDD's hole.
    let h = hdd(1, 100 * GIB)
        .with_extents(vec![(MIB, 100 * GIB - MIB - 500 * MIB)])
        .unwrap();
    let mut v = vol(vec![h, ssd(2, 30 * GIB), ssd(3, 40 * GIB)]);
    let c = v
        .alloc_chunk(
            &ssd_meta(SsdMetadataRev::V3, false),
            ChunkType::Data,
            Profile::Raid1,
        )
        .unwrap();
    assert_eq!(devids(&c), vec![1, 3]);
    assert_eq!(c.stripe_size, 500 * MIB);
    // Only the reserved first MiB stays unallocated.
    assert_eq!(v.device(1).unwrap().total_avail(), MIB);
}

// ---------------------------------------------------------------- steps 5-6

#[test]
fn width_and_stripe_decisions() {
    let cs = ChunkSizes::defaults(100 * GIB);
    let l = |p| {
        Limits::new(
            ChunkType::Data,
            p,
            false,
            16384,
            cs,
            100 * GIB,
            SizeRules::Mainline,
        )
    };
    // RAID10 rounds 5 devices down to 4; RAID1C3 needs 3.
    assert_eq!(decide_ndevs(&l(Profile::Raid10), 5), Some(4));
    assert_eq!(decide_ndevs(&l(Profile::Raid10), 1), None);
    assert_eq!(decide_ndevs(&l(Profile::Raid1C3), 2), None);
    assert_eq!(decide_ndevs(&l(Profile::Raid1C3), 7), Some(3));
    assert_eq!(decide_ndevs(&l(Profile::Raid0), 600), Some(506));
    // RAID5 over 4 devices with 1 GiB holes: 3 GiB chunk, no cap.
    let d = decide_stripe_size(&l(Profile::Raid5), 4, GIB);
    assert_eq!(
        d,
        StripeDecision {
            ndevs: 4,
            stripe_size: GIB,
            num_stripes: 4,
            data_stripes: 3,
            chunk_size: 3 * GIB,
            capped: false
        }
    );
    // RAID6 over 12: 10 data stripes make exactly the 10 GiB cap, which is
    // allowed; over 13, 11 data stripes shrink to 10 GiB / 11 rounded up to
    // 16 MiB = 944 MiB.
    let d = decide_stripe_size(&l(Profile::Raid6), 12, GIB);
    assert_eq!(
        (d.stripe_size, d.chunk_size, d.capped),
        (GIB, 10 * GIB, false)
    );
    let d = decide_stripe_size(&l(Profile::Raid6), 13, GIB);
    assert_eq!(
        (d.stripe_size, d.chunk_size, d.capped),
        (944 * MIB, 11 * 944 * MIB, true)
    );
    // A small smallest hole wins over the cap and is rounded to 64 KiB.
    let d = decide_stripe_size(&l(Profile::Raid1), 2, 100 * MIB + 1000);
    assert_eq!((d.stripe_size, d.capped), (100 * MIB, false));
}

#[test]
fn pre_6_0_metadata_chunks_follow_the_current_size() {
    let policy = AllocPolicy {
        variant: AllocVariant::Stock,
        rules: SizeRules::Pre6_0,
    };
    let mut v = vol(vec![Device::new(1, 40 * GIB)]);
    let c = policy
        .alloc_chunk(&mut v, ChunkType::Metadata, Profile::Dup)
        .unwrap();
    assert_eq!((c.stripe_size, c.length), (256 * MIB, 256 * MIB));
    v.add_device(Device::new(2, 40 * GIB)).unwrap();
    assert_eq!(
        v.add_device(Device::new(2, GIB)),
        Err(DeviceError::DuplicateDevid(2))
    );
    // 80 GiB writable now: the pre-6.0 rule looks at it on every call.
    let c = policy
        .alloc_chunk(&mut v, ChunkType::Metadata, Profile::Dup)
        .unwrap();
    assert_eq!((c.stripe_size, c.stripes[0].devid), (GIB, 2));
    // Mainline fixed the metadata chunk size at mount (256 MiB here).
    let c = v
        .alloc_chunk(&Stock, ChunkType::Metadata, Profile::Dup)
        .unwrap();
    assert_eq!(c.stripe_size, 256 * MIB);
}
