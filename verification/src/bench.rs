//! A user's variant beside ours on the same recorded inputs, timed by
//! criterion (feature `bench`). From a user's `benches/variants.rs`:
//!
//! ```text
//! use iolab_verification::bench::{self, criterion::{criterion_group, criterion_main, Criterion}};
//!
//! fn variants(c: &mut Criterion) {
//!     bench::read_policy(c, || MyPolicy, || iolab_tiering::Queue);
//!     bench::allocator(c, || MyAllocator, || iolab_tiering::Stock);
//!     bench::admission(c, || MyGate::new(8), || our_throttle());
//! }
//! criterion_group!(benches, variants);
//! criterion_main!(benches);
//! ```
//!
//! Each function records its inputs once, from the suites' seeded
//! stream, and times both variants on them, one benchmark per variant in
//! one group: `read_policy/<name>` (one read choice),
//! `allocator/<name>/<devices>` (one chunk on a volume of that many
//! devices), `depth/<name>` (one window expiry), `admission/<name>` (one
//! admit and release, uncontended), `pool/<name>` (one reserve and
//! release, uncontended).

use std::hint::black_box;

pub use criterion;
use criterion::{BatchSize, BenchmarkId, Criterion};
use iolab_flush::ReservationPool;
use iolab_tiering::{
    ChunkAllocator, ChunkType, Device, DeviceClass, MirrorInfo, Profile, ReadPolicy, ReadRequest,
    Volume, VolumeParams, find_live_mirror,
};
use iolab_wbt::{Admission, DepthPolicy, DeviceParams, LocalSlots, Options, Variant, Verdict, Wbt};

use crate::cases::Rng;

/// Requests recorded for [`read_policy`].
const READS: usize = 1024;

/// One recorded read: the copies and the request's place among them.
struct Recorded {
    mirrors: Vec<MirrorInfo>,
    first: usize,
    n: usize,
    pid: u32,
    cpu: u32,
}

fn reads() -> Vec<Recorded> {
    let mut rng = Rng(0);
    (0..READS)
        .map(|_| {
            let total = 2 + rng.below(3) as usize;
            let mirrors = (0..total)
                .map(|k| MirrorInfo {
                    devid: 1 + k as u64,
                    present: true,
                    physical: rng.below(1 << 40),
                    read_ios: rng.below(1 << 20),
                    read_wait_ns: rng.below(1 << 40),
                    inflight: rng.below(64) as u32,
                    last_offset: rng.below(1 << 40),
                    queue_depth: 32,
                    rotational: rng.below(2) == 0,
                })
                .collect();
            Recorded {
                mirrors,
                first: 0,
                n: total,
                pid: rng.below(1 << 16) as u32,
                cpu: rng.below(64) as u32,
            }
        })
        .collect()
}

/// One read choice (policy, then the liveness filter) per iteration,
/// walking 1,024 recorded requests on stripes of two to four copies.
pub fn read_policy<P: ReadPolicy, Q: ReadPolicy>(
    c: &mut Criterion,
    mine: impl Fn() -> P,
    ours: impl Fn() -> Q,
) {
    let recorded = reads();
    let mut g = c.benchmark_group("read_policy");
    let mut one = |name: &str, policy: &mut dyn FnMut(&ReadRequest<'_>) -> usize| {
        let mut k = 0;
        g.bench_function(name, |b| {
            b.iter(|| {
                let r = &recorded[k % READS];
                k += 1;
                let Ok(mut req) = ReadRequest::new(&r.mirrors, r.first, r.n, r.pid) else {
                    return 0;
                };
                req.cpu = r.cpu;
                black_box(policy(black_box(&req)))
            })
        });
    };
    let mut a = mine();
    let name = a.name();
    one(name, &mut |req| {
        find_live_mirror(&mut a, req).unwrap_or(usize::MAX)
    });
    let mut b = ours();
    let name = b.name();
    one(name, &mut |req| {
        find_live_mirror(&mut b, req).unwrap_or(usize::MAX)
    });
    g.finish();
}

/// A volume of `n` devices of 1 TiB, every fourth an SSD, with eight
/// RAID1 data chunks already placed so the hole search has extents to
/// walk (the volume [`allocator`] times on).
pub fn volume(n: u64) -> Volume {
    let devices = (1..=n)
        .map(|id| {
            let class = if id % 4 == 1 {
                DeviceClass::Ssd
            } else {
                DeviceClass::Hdd
            };
            Device::new(id, 1 << 40).with_class(class)
        })
        .collect();
    let mut v = Volume::new(VolumeParams::default(), devices).expect("a valid volume");
    for _ in 0..8 {
        let _ = v.alloc_chunk(&iolab_tiering::Stock, ChunkType::Data, Profile::Raid1);
    }
    v
}

/// One RAID1 metadata chunk per iteration, on a fresh copy of the same
/// volume of 2 and of 16 devices.
pub fn allocator<A: ChunkAllocator, B: ChunkAllocator>(
    c: &mut Criterion,
    mine: impl Fn() -> A,
    ours: impl Fn() -> B,
) {
    let mut g = c.benchmark_group("allocator");
    for n in [2u64, 16] {
        let base = volume(n);
        let (a, b) = (mine(), ours());
        for (name, alloc) in [
            (a.name(), &a as &dyn ChunkAllocatorDyn),
            (b.name(), &b as &dyn ChunkAllocatorDyn),
        ] {
            g.bench_with_input(BenchmarkId::new(name, n), &n, |bench, _| {
                bench.iter_batched_ref(
                    || base.clone(),
                    |v| black_box(alloc.metadata_chunk(v)),
                    BatchSize::SmallInput,
                );
            });
        }
    }
    g.finish();
}

/// An allocator behind a reference, for the loop above.
trait ChunkAllocatorDyn {
    fn metadata_chunk(&self, v: &mut Volume) -> bool;
}

impl<A: ChunkAllocator> ChunkAllocatorDyn for A {
    fn metadata_chunk(&self, v: &mut Volume) -> bool {
        v.alloc_chunk(self, ChunkType::Metadata, Profile::Raid1)
            .is_ok()
    }
}

/// One window expiry per iteration through a core driven by each
/// scaling step, on a recorded stream of 1,024 verdicts (queue depth 32).
pub fn depth<D: DepthPolicy, R: DepthPolicy>(
    c: &mut Criterion,
    mine: impl Fn() -> D,
    ours: impl Fn() -> R,
) {
    let mut rng = Rng(0);
    let verdicts: Vec<Verdict> = (0..1024)
        .map(|_| {
            [
                Verdict::Ok,
                Verdict::Unknown,
                Verdict::UnknownWrites,
                Verdict::Exceeded,
            ][rng.below(4) as usize]
        })
        .collect();
    let params = DeviceParams {
        queue_depth: 32,
        rotational: false,
        write_cache: false,
    };
    let mut g = c.benchmark_group("depth");
    fn run<P: DepthPolicy>(
        g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
        verdicts: &[Verdict],
        params: DeviceParams,
        policy: P,
    ) {
        let name = policy.name().to_owned();
        let Ok(mut wbt) = Wbt::with_depth_policy(
            params,
            Variant::Modern,
            Options::default(),
            LocalSlots::default(),
            policy,
        ) else {
            return;
        };
        let (mut k, mut now) = (0usize, 0u64);
        g.bench_function(name, |b| {
            b.iter(|| {
                now += 100_000_000;
                let v = verdicts[k % verdicts.len()];
                k += 1;
                black_box(wbt.apply_verdict(now, v, 1))
            })
        });
    }
    run(&mut g, &verdicts, params, mine());
    run(&mut g, &verdicts, params, ours());
    g.finish();
}

/// One admit and release per iteration, uncontended (one thread).
pub fn admission<T: Admission, U: Admission>(
    c: &mut Criterion,
    mine: impl Fn() -> T,
    ours: impl Fn() -> U,
) {
    let mut g = c.benchmark_group("admission");
    let (a, b) = (mine(), ours());
    for (name, gate) in [
        ("mine", &a as &dyn Admission),
        ("ours", &b as &dyn Admission),
    ] {
        g.bench_function(name, |bench| {
            bench.iter(|| {
                if gate.admit().is_ok() {
                    gate.release();
                }
            })
        });
    }
    g.finish();
}

/// One reservation of 4 KiB and its release per iteration, uncontended
/// (one thread).
pub fn pool<P: ReservationPool, Q: ReservationPool>(
    c: &mut Criterion,
    mine: impl Fn() -> P,
    ours: impl Fn() -> Q,
) {
    let mut g = c.benchmark_group("pool");
    let (a, b) = (mine(), ours());
    for (name, pool) in [
        ("mine", &a as &dyn ReservationPool),
        ("ours", &b as &dyn ReservationPool),
    ] {
        g.bench_function(name, |bench| {
            bench.iter(|| {
                if pool.reserve_bytes(4096).is_ok() {
                    pool.release_bytes(4096);
                }
            })
        });
    }
    g.finish();
}
