//! The threaded faces of iocost and flush, uncontended, beside tokio's
//! `Semaphore` in the same run: the iocost controller's blocking acquire
//! and its future polled once, each with the grant's completion; the
//! pool's blocking and async reservation, each with its release.
//!
//! ```text
//! cargo bench -p iolab-benches --bench faces
//! ```

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use criterion::{Criterion, criterion_group, criterion_main};
use iolab_flush::{Config, FlushKind, Pool};
use iolab_iocost::{Controller, Device, GroupId, Io, IoCost, ManualClock, Op, Options};

/// A controller on an NVMe-like device with one group; the clock moves
/// 1 ms per IO (a 4 KiB read costs the built-in SSD model about 0.11 ms),
/// so every read finds budget and none waits.
fn controller() -> (Controller<ManualClock>, GroupId) {
    let dev = Device {
        devno: (259, 0),
        rotational: false,
        queue_depth: 64,
    };
    let mut ioc = IoCost::new(dev, Options::default());
    let g = ioc.add_group(0, 1);
    ioc.write_qos(0, "enable=1 rpct=95 rlat=5000 wpct=95 wlat=5000")
        .expect("qos");
    (
        Controller::with_clock(ioc, ManualClock::new(0)).expect("enabled"),
        g,
    )
}

fn faces(c: &mut Criterion) {
    let mut grp = c.benchmark_group("faces");

    grp.bench_function("iocost_controller_acquire_complete", |b| {
        let (ctl, g) = controller();
        let mut n = 0u64;
        b.iter(|| {
            ctl.clock().advance(1_000_000);
            n += 1;
            if n.is_multiple_of(64) {
                ctl.tick();
            }
            let grant = ctl
                .acquire(Io::new(g, Op::Read, 4096, n * 8))
                .expect("open");
            drop(black_box(grant));
        });
    });

    grp.bench_function("iocost_controller_async_acquire_complete", |b| {
        let (ctl, g) = controller();
        let mut cx = Context::from_waker(Waker::noop());
        let mut n = 0u64;
        b.iter(|| {
            ctl.clock().advance(1_000_000);
            n += 1;
            if n.is_multiple_of(64) {
                ctl.tick();
            }
            let future = pin!(ctl.acquire_async(Io::new(g, Op::Read, 4096, n * 8)));
            let Poll::Ready(grant) = future.poll(&mut cx) else {
                unreachable!("within budget")
            };
            drop(black_box(grant.expect("open")));
        });
    });

    grp.bench_function("pool_reserve_release", |b| {
        let pool = Pool::with_clock(Config::default(), ManualClock::new(0)).expect("config");
        b.iter(|| {
            let r = pool.reserve(64 * 1024, FlushKind::FlushAll).expect("room");
            drop(black_box(r));
        });
    });

    grp.bench_function("pool_async_reserve_release", |b| {
        let pool = Pool::with_clock(Config::default(), ManualClock::new(0)).expect("config");
        let mut cx = Context::from_waker(Waker::noop());
        b.iter(|| {
            let future = pin!(pool.reserve_async(64 * 1024, FlushKind::FlushAll));
            let Poll::Ready(r) = future.poll(&mut cx) else {
                unreachable!("room")
            };
            drop(black_box(r.expect("granted")));
        });
    });

    grp.bench_function("tokio_semaphore_acquire_release", |b| {
        let s = tokio::sync::Semaphore::new(16);
        let mut cx = Context::from_waker(Waker::noop());
        b.iter(|| {
            let future = pin!(s.acquire());
            let Poll::Ready(p) = future.poll(&mut cx) else {
                unreachable!("below the limit")
            };
            drop(black_box(p.expect("open")));
        });
    });
    grp.finish();
}

criterion_group!(benches, faces);
criterion_main!(benches);
