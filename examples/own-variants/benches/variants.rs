//! This crate's policies beside iolab's on the same recorded inputs:
//! `cargo bench -p iolab-example-own-variants`.

use iolab_clock::ManualClock;
use iolab_example_own_variants::{FifoGate, Halving, MetadataOnFlash, ShortestWait, TicketPool};
use iolab_flush::{Config, Pool};
use iolab_tiering::{Queue, Stock};
use iolab_verification::bench::{
    self,
    criterion::{Criterion, criterion_group, criterion_main},
};
use iolab_wbt::{DeviceParams, Options, Throttle, Variant};

fn variants(c: &mut Criterion) {
    bench::read_policy(c, || ShortestWait, || Queue);
    bench::allocator(c, || MetadataOnFlash, || Stock);
    bench::depth(c, || Halving, || Variant::Modern);
    bench::admission(
        c,
        || FifoGate::new(8),
        || {
            let ssd = DeviceParams {
                queue_depth: 32,
                rotational: false,
                write_cache: false,
            };
            Throttle::with_clock(
                ssd,
                Variant::Modern,
                Options::default(),
                ManualClock::new(0),
            )
        },
    );
    bench::pool(
        c,
        || TicketPool::new(1 << 30),
        || Pool::with_clock(Config::default(), ManualClock::new(0)).expect("default config"),
    );
}

criterion_group!(benches, variants);
criterion_main!(benches);
