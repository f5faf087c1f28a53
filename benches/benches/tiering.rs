//! btrfs device choice (issue 5, part 6): one chunk allocation on volumes
//! of 2, 16 and 256 devices, and one read-mirror choice per policy.

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use iolab_tiering::{
    ChunkType, GIB, MirrorInfo, PolicyChoice, Profile, ReadPolicy, ReadRequest, find_live_mirror,
    parse_policy,
};

// `n` devices of 1 TiB, every fourth one an SSD, with some chunks already
// placed so the hole search has extents to walk: the volume the
// conformance kit's bench harness times allocators on.
use iolab_verification::bench::volume;

fn alloc(c: &mut Criterion) {
    let mut g = c.benchmark_group("tiering_alloc_chunk");
    for n in [2u64, 16, 256] {
        let base = volume(n);
        for spec in ["alloc=stock", "alloc=ssd-metadata", "alloc=allocation-hint"] {
            let PolicyChoice::Alloc(policy) = parse_policy(spec).expect("known policy") else {
                unreachable!("an alloc= spec gives an allocator")
            };
            g.bench_with_input(BenchmarkId::new(spec, n), &n, |b, _| {
                b.iter_batched_ref(
                    || base.clone(),
                    |v| {
                        black_box(
                            v.alloc_chunk(&policy, ChunkType::Metadata, Profile::Raid1)
                                .expect("room for metadata"),
                        )
                    },
                    BatchSize::SmallInput,
                );
            });
        }
    }
    g.finish();
}

fn read(c: &mut Criterion) {
    let mut g = c.benchmark_group("tiering_read_policy");
    let mirrors: Vec<MirrorInfo> = (1..=2u64)
        .map(|devid| MirrorInfo {
            devid,
            present: true,
            physical: devid * GIB,
            read_ios: 1_000 * devid,
            read_wait_ns: 90_000_000 * devid,
            inflight: 3,
            last_offset: GIB,
            queue_depth: 32,
            rotational: false,
        })
        .collect();
    for spec in [
        "read=pid",
        "read=round-robin",
        "read=devid:2",
        "read=latency",
        "read=latency:tiebreak=2021",
        "read=load",
        "read=queue",
    ] {
        let PolicyChoice::Read(cfg) = parse_policy(spec).expect("known policy") else {
            unreachable!("a read= spec gives a read policy")
        };
        let mut policy = cfg.build(2, 4096, 4).expect("valid for this volume");
        let mut pid = 0u32;
        g.bench_function(spec, |b| {
            b.iter(|| {
                pid = pid.wrapping_add(1);
                let req = ReadRequest::new(&mirrors, 0, 2, pid).expect("two copies");
                let i = find_live_mirror(&mut policy, black_box(&req)).expect("in range");
                policy.on_read_submitted(8);
                black_box(i)
            });
        });
    }
    g.finish();
}

criterion_group!(benches, alloc, read);
criterion_main!(benches);
