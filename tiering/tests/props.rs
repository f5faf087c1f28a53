//! Property tests: the allocator's and read policies' invariants (distinct
//! devices, counts, space, sizes, conservation, hints, class preference,
//! tier preservation, determinism, read range) over random volumes, random
//! allocation sequences and random read requests.

use iolab_tiering::*;
use proptest::prelude::*;

// ------------------------------------------------------------------ inputs

#[derive(Clone, Debug)]
struct DevSpec {
    size: u64,
    class: DeviceClass,
    hint: AllocHint,
    writable: bool,
    replace_target: bool,
    /// (gap MiB, length MiB) runs of pre-existing extents from 1 MiB.
    extents: Vec<(u64, u64)>,
}

fn dev_spec() -> impl Strategy<Value = DevSpec> {
    (
        1u64..=48,
        0u64..1024,
        prop_oneof![
            Just(DeviceClass::Hdd),
            Just(DeviceClass::Ssd),
            Just(DeviceClass::Nvme)
        ],
        0u64..5,
        prop::bool::weighted(0.9),
        prop::bool::weighted(0.08),
        prop::collection::vec((0u64..3000, 1u64..3000), 0..4),
    )
        .prop_map(
            |(g, m, class, h, writable, replace_target, extents)| DevSpec {
                size: g * GIB + m * MIB,
                class,
                hint: AllocHint::from_value(h).unwrap(),
                writable,
                replace_target,
                extents,
            },
        )
}

fn build(spec: &DevSpec, devid: u64) -> Device {
    let mut ext = Vec::new();
    let mut pos = MIB;
    for &(gap, len) in &spec.extents {
        let start = pos + gap * MIB;
        let end = start + len * MIB;
        if end > spec.size {
            break;
        }
        ext.push((start, len * MIB));
        pos = end;
    }
    let mut d = Device::new(devid, spec.size)
        .with_class(spec.class)
        .with_hint(spec.hint)
        .with_extents(ext)
        .unwrap();
    d.writable = spec.writable;
    d.replace_target = spec.replace_target;
    d
}

fn volume(specs: &[DevSpec], order: &[usize]) -> Volume {
    let devs = order
        .iter()
        .map(|&i| build(&specs[i], i as u64 + 1))
        .collect();
    Volume::new(VolumeParams::default(), devs).unwrap()
}

fn op() -> impl Strategy<Value = (ChunkType, Profile)> {
    (
        prop_oneof![
            4 => Just(ChunkType::Data),
            3 => Just(ChunkType::Metadata),
            1 => Just(ChunkType::System),
            1 => Just(ChunkType::Mixed),
        ],
        prop::sample::select(Profile::ALL.to_vec()),
    )
}

fn policy() -> impl Strategy<Value = AllocPolicy> {
    let variant = prop_oneof![
        Just(AllocVariant::Stock),
        Just(AllocVariant::SsdMetadata(SsdMetadata {
            rev: SsdMetadataRev::V3,
            strict: false
        })),
        Just(AllocVariant::SsdMetadata(SsdMetadata {
            rev: SsdMetadataRev::V1,
            strict: false
        })),
        Just(AllocVariant::SsdMetadata(SsdMetadata {
            rev: SsdMetadataRev::V3,
            strict: true
        })),
        Just(AllocVariant::AllocationHint(AllocationHint {
            mode: HintMode::V12
        })),
        Just(AllocVariant::AllocationHint(AllocationHint {
            mode: HintMode::Kakra
        })),
    ];
    let rules = prop_oneof![
        3 => Just(SizeRules::Mainline),
        1 => Just(SizeRules::Uncapped6_0),
        1 => Just(SizeRules::Pre6_0),
    ];
    (variant, rules).prop_map(|(variant, rules)| AllocPolicy { variant, rules })
}

/// A volume (specs plus a device-list order) and an allocation sequence.
fn scenario() -> impl Strategy<Value = (Vec<DevSpec>, Vec<usize>, Vec<(ChunkType, Profile)>)> {
    prop::collection::vec(dev_spec(), 1..=8).prop_flat_map(|specs| {
        let n = specs.len();
        (
            Just(specs),
            Just((0..n).collect::<Vec<_>>()).prop_shuffle(),
            prop::collection::vec(op(), 1..24),
        )
    })
}

// ------------------------------------------------------------------ oracle

/// `max_avail` of a device for limits `l`, or `None` if it would not pass
/// the gather step (`gather_device_info`).
fn gatherable(d: &Device, l: &Limits) -> Option<u64> {
    if !d.eligible() || d.total_avail() < l.dev_extent_min {
        return None;
    }
    let h = find_free_dev_extent(d, l.dev_extent_want);
    let max_avail = if h.fits { l.dev_extent_want } else { h.len };
    (max_avail >= l.dev_extent_min).then_some(max_avail)
}

fn preferred_class(ty: ChunkType, d: &Device) -> bool {
    if ty.is_metadata_like() {
        !d.rotational
    } else {
        d.rotational
    }
}

/// Checks one allocation against the state before it.
fn check_chunk(before: &Volume, after: &Volume, policy: &AllocPolicy, c: &Chunk) {
    let (ty, profile) = (c.ty, c.profile);
    let l = before.limits(ty, profile, policy.size_rules());
    let a = l.attr;
    // Counts.
    let mut devs: Vec<u64> = c.stripes.iter().map(|s| s.devid).collect();
    devs.dedup();
    let ndevs = devs.len() as u32;
    assert_eq!(c.stripes.len() as u32, ndevs * a.dev_stripes);
    assert_eq!(ndevs % a.devs_increment, 0);
    assert!(a.devs_min <= ndevs && ndevs <= a.devs_max);
    // Distinct devices; DUP: two non-overlapping stripes on one.
    let mut sorted = devs.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), devs.len(), "a device used twice");
    if profile == Profile::Dup {
        assert_eq!(c.stripes[0].devid, c.stripes[1].devid);
        assert_eq!(c.stripes[1].physical, c.stripes[0].physical + c.stripe_size);
    }
    // Sizes.
    assert!(c.stripe_size > 0 && c.stripe_size % STRIPE_LEN == 0);
    assert!(c.stripe_size <= GIB);
    let ds = a.data_stripes(ndevs);
    assert_eq!(c.length, c.stripe_size * u64::from(ds));
    let cap = (l.max_chunk_size / u64::from(ds)).div_ceil(16 * MIB) * 16 * MIB;
    assert!(c.length <= l.max_chunk_size || c.stripe_size <= cap);
    for &devid in &devs {
        let d = before.device(devid).unwrap();
        let max_avail = gatherable(d, &l).expect("chosen device was gatherable");
        assert!(c.stripe_size * u64::from(a.dev_stripes) <= max_avail);
    }
    // Space: inside the device, past the first MiB, on free space.
    for s in &c.stripes {
        let d = before.device(s.devid).unwrap();
        assert!(s.physical >= MIB && s.physical + s.len <= d.total_bytes());
        assert!(
            d.extents()
                .iter()
                .all(|&(o, l)| o + l <= s.physical || s.physical + s.len <= o)
        );
        assert!(
            after
                .device(s.devid)
                .unwrap()
                .extents()
                .contains(&(s.physical, s.len))
        );
    }
    // Conservation.
    let delta: u64 = after.devices().iter().map(|d| d.bytes_used()).sum::<u64>()
        - before.devices().iter().map(|d| d.bytes_used()).sum::<u64>();
    assert_eq!(delta, c.raw_bytes());
    for d in after.devices() {
        assert_eq!(
            d.bytes_used(),
            d.extents().iter().map(|&(_, l)| l).sum::<u64>()
        );
    }
    // Width: what the kept candidates allow, rounded
    // down to `devs_increment` and capped at `devs_max`.
    let width = |kept: usize| {
        let n = kept as u32 / a.devs_increment * a.devs_increment;
        n.min(a.devs_max)
    };
    let usable = |d: &&Device| gatherable(d, &l).is_some();
    let all = before.devices().iter().filter(usable).count();
    // Sort order: stock (and every mixed chunk) takes the roomiest
    // devices: larger capped hole, then more unallocated space, then the
    // lower devid. No device left out may rank above a chosen one.
    let roomiest = || {
        let rank = |d: &Device| {
            let max_avail = gatherable(d, &l).unwrap();
            (max_avail, d.total_avail(), core::cmp::Reverse(d.devid()))
        };
        let worst_chosen = devs
            .iter()
            .map(|&id| rank(before.device(id).unwrap()))
            .min()
            .unwrap();
        for d in before.devices().iter().filter(usable) {
            if !devs.contains(&d.devid()) {
                assert!(rank(d) < worst_chosen, "devid {} left out", d.devid());
            }
        }
    };
    if ty == ChunkType::Mixed {
        assert_eq!(ndevs, width(all));
        roomiest();
        return;
    }
    match policy.variant {
        AllocVariant::Stock => {
            assert_eq!(ndevs, width(all));
            roomiest();
        }
        AllocVariant::SsdMetadata(s) => {
            let pref = before
                .devices()
                .iter()
                .filter(usable)
                .filter(|d| preferred_class(ty, d))
                .count();
            let restricted = s.strict
                || match s.rev {
                    SsdMetadataRev::V1 => pref > a.devs_min as usize,
                    SsdMetadataRev::V3 => pref >= a.devs_min as usize,
                };
            assert_eq!(ndevs, width(if restricted { pref } else { all }));
        }
        AllocVariant::AllocationHint(_) => {}
    }
    match policy.variant {
        // Hints.
        AllocVariant::AllocationHint(h) => {
            for &devid in &devs {
                let hint = before.device(devid).unwrap().hint;
                assert!(hint_key(hint, ty).is_some(), "{hint:?} got a {ty} stripe");
                assert!(hint != AllocHint::None);
                assert!(!(ty == ChunkType::Data && hint == AllocHint::MetadataOnly));
                assert!(!(ty.is_metadata_like() && hint == AllocHint::DataOnly));
            }
            // Tier preservation in kakra's fixed-width mode.
            if h.mode == HintMode::Kakra && profile.is_fixed_width_mirror() {
                let key = |d: &Device| hint_key(d.hint, ty);
                let lowest_chosen = devs
                    .iter()
                    .map(|&i| key(before.device(i).unwrap()).unwrap())
                    .min()
                    .unwrap();
                for d in before.devices() {
                    if devs.contains(&d.devid()) || gatherable(d, &l).is_none() {
                        continue;
                    }
                    if let Some(k) = key(d) {
                        assert!(
                            k <= lowest_chosen,
                            "devid {} of tier {k} left out",
                            d.devid()
                        );
                    }
                }
            }
        }
        // Class preference: V2/V3 restrict with `>=`, V1 with `>`,
        // the strict variant always; otherwise the preferred class still
        // comes first, so a chunk never skips a gatherable preferred
        // device to use one of the other class.
        AllocVariant::SsdMetadata(s) => {
            let n_pref = before
                .devices()
                .iter()
                .filter(|d| preferred_class(ty, d) && gatherable(d, &l).is_some())
                .count();
            let min = a.devs_min as usize;
            let restricted = s.strict
                || match s.rev {
                    SsdMetadataRev::V1 => n_pref > min,
                    SsdMetadataRev::V3 => n_pref >= min,
                };
            let chosen_pref = devs
                .iter()
                .filter(|&&devid| preferred_class(ty, before.device(devid).unwrap()))
                .count();
            if restricted {
                assert_eq!(chosen_pref, devs.len(), "{s:?} left the preferred class");
            } else {
                assert_eq!(
                    chosen_pref,
                    n_pref.min(devs.len()),
                    "{s:?} skipped a preferred device"
                );
            }
        }
        _ => {}
    }
}

/// Whether the allocation must succeed (the space rule the other way round: no
/// ENOSPC while the variant still has enough devices with a usable hole).
/// Every `devs_min` is a multiple of its `devs_increment`, so rounding
/// never takes a sufficient count below the minimum.
fn must_succeed(v: &Volume, policy: &AllocPolicy, ty: ChunkType, profile: Profile) -> bool {
    let l = v.limits(ty, profile, policy.size_rules());
    let min = l.attr.devs_min as usize;
    let usable = |d: &&Device| gatherable(d, &l).is_some();
    let all = v.devices().iter().filter(usable).count();
    let n = match policy.variant {
        _ if ty == ChunkType::Mixed => all,
        AllocVariant::Stock => all,
        AllocVariant::SsdMetadata(s) => {
            let pref = v
                .devices()
                .iter()
                .filter(usable)
                .filter(|d| preferred_class(ty, d))
                .count();
            if s.strict { pref } else { all }
        }
        AllocVariant::AllocationHint(_) => v
            .devices()
            .iter()
            .filter(usable)
            .filter(|d| hint_key(d.hint, ty).is_some())
            .count(),
    };
    n >= min
}

/// Runs the sequence, checking every step; returns the outcomes.
fn run(
    v: &mut Volume,
    policy: &AllocPolicy,
    ops: &[(ChunkType, Profile)],
) -> Vec<Result<Chunk, AllocError>> {
    let mut out = Vec::new();
    for &(ty, profile) in ops {
        let before = v.clone();
        let r = v.alloc_chunk(policy, ty, profile);
        assert_eq!(
            r.is_ok(),
            must_succeed(&before, policy, ty, profile),
            "{ty} {profile} with {policy:?}: {r:?}"
        );
        match &r {
            Ok(c) => check_chunk(&before, v, policy, c),
            Err(_) => {
                // Nothing changes on ENOSPC.
                assert_eq!(before.devices(), v.devices());
                assert_eq!(before.chunks(), v.chunks());
            }
        }
        out.push(r);
    }
    // Conservation over the run: raw bytes of chunks equal the growth of bytes_used.
    out
}

// ------------------------------------------------------------------ tests

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn allocation_invariants_hold((specs, order, ops) in scenario(), policy in policy()) {
        let mut v = volume(&specs, &order);
        let initial: u64 = v.devices().iter().map(|d| d.bytes_used()).sum();
        let out = run(&mut v, &policy, &ops);
        let raw: u64 = out.iter().filter_map(|r| r.as_ref().ok()).map(Chunk::raw_bytes).sum();
        let used: u64 = v.devices().iter().map(|d| d.bytes_used()).sum();
        prop_assert_eq!(used - initial, raw);
    }

    #[test]
    fn same_inputs_same_chunks_in_any_device_order(
        (specs, order, ops) in scenario(),
        policy in policy(),
    ) {
        let identity: Vec<usize> = (0..specs.len()).collect();
        let a = run(&mut volume(&specs, &order), &policy, &ops);
        let b = run(&mut volume(&specs, &order), &policy, &ops);
        let c = run(&mut volume(&specs, &identity), &policy, &ops);
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(&a, &c);
    }

    #[test]
    fn default_hints_allocate_like_stock(
        (mut specs, order, ops) in scenario(),
        rules in prop_oneof![Just(SizeRules::Mainline), Just(SizeRules::Uncapped6_0)],
    ) {
        for s in &mut specs {
            s.hint = AllocHint::DataPreferred;
        }
        let stock = AllocPolicy { variant: AllocVariant::Stock, rules };
        let want = run(&mut volume(&specs, &order), &stock, &ops);
        for mode in [HintMode::V12, HintMode::Kakra] {
            let hint = AllocPolicy { variant: AllocVariant::AllocationHint(AllocationHint { mode }), rules };
            prop_assert_eq!(&run(&mut volume(&specs, &order), &hint, &ops), &want);
        }
    }
}

// ------------------------------------------------------------------ reads

#[derive(Clone, Debug)]
enum PolicyPick {
    Pid,
    Rr(u64),
    Devid(u64),
    Latency(LatencyForm),
    Load,
    Queue,
}

fn read_policy() -> impl Strategy<Value = PolicyPick> {
    prop_oneof![
        Just(PolicyPick::Pid),
        (1u64..1024).prop_map(|k| PolicyPick::Rr(k * 4096)),
        (1u64..6).prop_map(PolicyPick::Devid),
        Just(PolicyPick::Latency(LatencyForm::V2024)),
        Just(PolicyPick::Latency(LatencyForm::V2021)),
        Just(PolicyPick::Load),
        Just(PolicyPick::Queue),
    ]
}

fn make(p: &PolicyPick) -> ReadPolicyImpl {
    match *p {
        PolicyPick::Pid => ReadPolicyImpl::Pid(Pid),
        PolicyPick::Rr(b) => ReadPolicyImpl::RoundRobin(RoundRobin::new(b, 4096).unwrap()),
        PolicyPick::Devid(d) => ReadPolicyImpl::Devid(Devid { read_devid: d }),
        PolicyPick::Latency(form) => ReadPolicyImpl::Latency(Latency { form }),
        PolicyPick::Load => ReadPolicyImpl::Load(LoadBalance::new(4)),
        PolicyPick::Queue => ReadPolicyImpl::Queue(Queue),
    }
}

fn mirror() -> impl Strategy<Value = MirrorInfo> {
    (
        1u64..6,
        prop::bool::weighted(0.8),
        (0u64..4, 0u64..4),
        (0u64..1000, 0u64..100_000),
        0u32..40,
        1u32..33,
        any::<bool>(),
    )
        .prop_map(
            |(
                devid,
                present,
                (physical, last_offset),
                (ios, wait),
                inflight,
                queue_depth,
                rotational,
            )| {
                MirrorInfo {
                    devid,
                    present,
                    physical: physical * 4096,
                    read_ios: ios,
                    read_wait_ns: wait,
                    inflight,
                    last_offset: last_offset * 4096,
                    queue_depth,
                    rotational,
                }
            },
        )
}

/// A read: stripes, `first`, `n`, pid, cpu, replace source, mixed flag,
/// sectors submitted before it.
type ReadCase = (
    Vec<MirrorInfo>,
    usize,
    usize,
    u32,
    u32,
    Option<u64>,
    bool,
    Vec<u64>,
);

fn read_case() -> impl Strategy<Value = ReadCase> {
    prop::collection::vec(mirror(), 1..=8).prop_flat_map(|ms| {
        let len = ms.len();
        (0..len).prop_flat_map(move |first| {
            let ms = ms.clone();
            (
                Just(ms),
                Just(first),
                1..=(len - first).min(4),
                any::<u32>(),
                0u32..8,
                prop::option::of(1u64..6),
                any::<bool>(),
                prop::collection::vec(1u64..2048, 0..6),
            )
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn read_choice_in_range_live_and_deterministic(
        (ms, first, n, pid, cpu, src, mixed, history) in read_case(),
        pick in read_policy(),
    ) {
        let mut req = ReadRequest::new(&ms, first, n, pid).unwrap();
        req.cpu = cpu;
        req.replace_source = src;
        req.mixed_rotational = mixed;
        let mut p = make(&pick);
        for &s in &history {
            p.on_read_submitted(s);
            prop_assert!(find_live_mirror(&mut p, &req).is_ok());
        }
        let mut twin = p.clone();
        let i = find_live_mirror(&mut p, &req).expect("our policies stay in range");
        // Determinism: same state and inputs, same answer and same new state.
        prop_assert_eq!(find_live_mirror(&mut twin, &req), Ok(i));
        prop_assert_eq!(&twin, &p);
        // Read range, liveness, replace source.
        prop_assert!(req.range().contains(&i));
        let range = req.range();
        let any_present = range.clone().any(|j| ms[j].present);
        if any_present {
            prop_assert!(ms[i].present);
        }
        let other_ok = range.clone().any(|j| ms[j].present && Some(ms[j].devid) != src);
        if other_ok {
            prop_assert!(Some(ms[i].devid) != src);
        }
        // pid is a pure function of pid when its copy is usable.
        if matches!(pick, PolicyPick::Pid) {
            let pref = first + pid as usize % n;
            if ms[pref].present && Some(ms[pref].devid) != src {
                prop_assert_eq!(i, pref);
            }
        }
    }
}
