//! blk-wbt costs, each for both variants (`modern`, `v5`): the pure
//! core's admit+complete pair, the userspace `Throttle` uncontended and
//! with two threads, its async face polled once (a future that is ready
//! at once); and beside them tokio's `Semaphore` doing the same, a
//! `Mutex`+`Condvar` counting semaphore and a bare atomic pair.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use iolab_wbt::{
    Admit, DeviceParams, ManualClock, Op, OpFlags, Options, Rq, Throttle, Variant, Wbt,
};

const DEV: DeviceParams = DeviceParams {
    queue_depth: 32,
    rotational: false,
    write_cache: true,
};

/// A counting semaphore from a mutex and a condition variable.
struct Semaphore {
    count: Mutex<usize>,
    cv: Condvar,
    limit: usize,
}

impl Semaphore {
    fn acquire(&self) {
        let mut n = self.count.lock().expect("not poisoned");
        while *n >= self.limit {
            n = self.cv.wait(n).expect("not poisoned");
        }
        *n += 1;
    }

    fn release(&self) {
        let mut n = self.count.lock().expect("not poisoned");
        *n -= 1;
        self.cv.notify_one();
    }
}

/// The costs of one variant.
fn variant_pair(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    variant: Variant,
) {
    g.bench_function(BenchmarkId::new("core_admit_complete", name), |b| {
        let mut w = Wbt::new(DEV, variant);
        let mut now = 1_000_000_000u64;
        let mut id = 0u64;
        b.iter(|| {
            now += 1_000;
            id += 1;
            let Admit::Go(flags) = w.on_throttle(now, Op::Write, OpFlags::BACKGROUND) else {
                unreachable!("one write at a time is always admitted")
            };
            let rq = Rq {
                id,
                op: Op::Write,
                flags,
            };
            w.on_issue(now, rq);
            black_box(w.on_done(now + 500, rq, Some(now)));
            while w.poll_wake().is_some() {}
            while w.poll_trace().is_some() {}
            if w.next_deadline().is_some_and(|d| d <= now) {
                w.on_timer(now);
            }
        });
    });

    g.bench_function(BenchmarkId::new("throttle_uncontended", name), |b| {
        let t = Throttle::with_clock(
            DEV,
            variant,
            Options::default(),
            ManualClock::new(1_000_000_000),
        );
        b.iter(|| {
            let p = t.acquire(Op::Write, OpFlags::BACKGROUND).expect("open");
            p.complete();
        });
    });

    g.bench_function(BenchmarkId::new("throttle_two_threads", name), |b| {
        let t = Arc::new(Throttle::with_clock(
            DEV,
            variant,
            Options::default(),
            ManualClock::new(1_000_000_000),
        ));
        b.iter_custom(|iters| {
            let start = std::time::Instant::now();
            let other = {
                let t = Arc::clone(&t);
                thread::spawn(move || {
                    for _ in 0..iters {
                        t.acquire(Op::Write, OpFlags::BACKGROUND)
                            .expect("open")
                            .complete();
                    }
                })
            };
            for _ in 0..iters {
                t.acquire(Op::Write, OpFlags::BACKGROUND)
                    .expect("open")
                    .complete();
            }
            other.join().expect("no panic");
            // Per pair of operations on one thread.
            start.elapsed() / 2
        });
    });

    g.bench_function(BenchmarkId::new("throttle_async_uncontended", name), |b| {
        let t = Throttle::with_clock(
            DEV,
            variant,
            Options::default(),
            ManualClock::new(1_000_000_000),
        );
        let mut cx = Context::from_waker(Waker::noop());
        b.iter(|| {
            let future = pin!(t.acquire_async(Op::Write, OpFlags::BACKGROUND));
            let Poll::Ready(p) = future.poll(&mut cx) else {
                unreachable!("below the limit")
            };
            p.expect("open").complete();
        });
    });
}

/// The variants, as the simulator's `--policies` names them.
const VARIANTS: [(&str, Variant); 2] = [("modern", Variant::Modern), ("v5", Variant::V5_2016)];

fn core_pair(c: &mut Criterion) {
    let mut g = c.benchmark_group("wbt");
    for (name, variant) in VARIANTS {
        variant_pair(&mut g, name, variant);
    }
    g.bench_function("tokio_semaphore_uncontended", |b| {
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

    g.bench_function("mutex_condvar_semaphore", |b| {
        let s = Semaphore {
            count: Mutex::new(0),
            cv: Condvar::new(),
            limit: 16,
        };
        b.iter(|| {
            s.acquire();
            s.release();
        });
    });

    g.bench_function("atomic_fetch_add_sub", |b| {
        let a = AtomicUsize::new(0);
        b.iter(|| {
            black_box(a.fetch_add(1, Ordering::AcqRel));
            black_box(a.fetch_sub(1, Ordering::AcqRel));
        });
    });
    g.finish();
}

criterion_group!(benches, core_pair);
criterion_main!(benches);
