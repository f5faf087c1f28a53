//! Reading and replaying real-kernel traces: the trace reader alone and
//! the whole wbt replay, on a committed capture (6 s, block events on),
//! and the dirty-throttling replay of a 60 s writer's records.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use iolab_kernel::replay::dirty;
use iolab_kernel::replay::wbt::{self, Config};
use iolab_kernel::trace::{Dev, Reader};

fn fixture_at(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kernel/fixtures")
        .join(rel);
    std::fs::read_to_string(p).expect("the committed capture")
}

fn fixture() -> String {
    fixture_at("disk-lat75/trace.txt")
}

fn bench(c: &mut Criterion) {
    let text = fixture();
    let dev = Dev { major: 7, minor: 0 };
    let mut g = c.benchmark_group("kernel_trace");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("read_6s_capture", |b| {
        b.iter(|| {
            let n = Reader::new(black_box(&text), Some(dev))
                .filter(|r| r.is_ok())
                .count();
            black_box(n)
        })
    });
    let cfg = Config {
        dev,
        queue_depth: 128,
        lat_usec: 75,
        rotational: true,
    };
    g.bench_function("replay_wbt_6s_capture", |b| {
        b.iter(|| black_box(wbt::replay(black_box(&text), &cfg).expect("replays").agree))
    });
    let records = fixture_at("dirty-throttle-1.txt");
    g.throughput(Throughput::Bytes(records.len() as u64));
    g.bench_function("replay_dirty_60s_capture", |b| {
        b.iter(|| {
            black_box(
                dirty::replay(black_box(&records), dev)
                    .expect("replays")
                    .updates_agree,
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
