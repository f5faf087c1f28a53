//! The async face under tokio's multi-threaded runtime: many tasks on two
//! worker threads, moved between workers by work stealing, some of them
//! aborted while they wait. The library itself knows no runtime; tokio is
//! a dev-dependency only.
#![cfg(all(feature = "std", not(iolab_loom)))]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::assert_quiescent;
use iolab_wbt::{ManualClock, Op, OpFlags, Throttle, ThrottleClosed};

type T = Throttle<ManualClock>;

/// Queue depth 8 at 1 s, far from any read: background limit 2, normal 4.
fn throttle() -> Arc<T> {
    Arc::new(common::throttle_at(8, 1_000_000_000))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("a tokio runtime")
}

/// Counts holders of one class and fails if they ever exceed the limit.
struct Holders {
    now: AtomicUsize,
    peak: AtomicUsize,
}

impl Holders {
    fn enter(&self, limit: usize) {
        let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(n, Ordering::SeqCst);
        assert!(n <= limit, "{n} holders of limit {limit}");
    }

    fn leave(&self) {
        self.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// 64 tasks each take a background permit 20 times, yielding to the
/// runtime while they hold it (so other tasks run and queue meanwhile);
/// never more than the limit hold one, every acquire is served, and the
/// throttle ends with nothing in flight or queued.
#[test]
fn many_tasks_never_exceed_the_limit() {
    let t = throttle();
    let holders = Arc::new(Holders {
        now: AtomicUsize::new(0),
        peak: AtomicUsize::new(0),
    });
    let served = Arc::new(AtomicUsize::new(0));
    runtime().block_on(async {
        let tasks: Vec<_> = (0..64)
            .map(|_| {
                let (t, holders, served) =
                    (Arc::clone(&t), Arc::clone(&holders), Arc::clone(&served));
                tokio::spawn(async move {
                    for _ in 0..20 {
                        let permit = t
                            .acquire_owned_async(Op::Write, OpFlags::BACKGROUND)
                            .await
                            .expect("open");
                        holders.enter(2);
                        tokio::task::yield_now().await;
                        t.clock().advance(1_000);
                        holders.leave();
                        served.fetch_add(1, Ordering::SeqCst);
                        permit.complete();
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.expect("a task panicked");
        }
    });
    assert_eq!(served.load(Ordering::SeqCst), 64 * 20);
    assert_eq!(
        holders.peak.load(Ordering::SeqCst),
        2,
        "the limit was reached"
    );
    assert_quiescent(&t);
}

/// 64 tasks queue behind two held slots; every other one is aborted while
/// it waits (tokio drops its future on a worker thread). The rest are all
/// served once the slots go, and nothing is left behind.
#[test]
fn aborted_waiting_tasks_give_their_places_back() {
    let t = throttle();
    let served = Arc::new(AtomicUsize::new(0));
    runtime().block_on(async {
        let held = [
            t.acquire_owned(Op::Write, OpFlags::BACKGROUND)
                .expect("open"),
            t.acquire_owned(Op::Write, OpFlags::BACKGROUND)
                .expect("open"),
        ];
        let tasks: Vec<_> = (0..64)
            .map(|_| {
                let (t, served) = (Arc::clone(&t), Arc::clone(&served));
                tokio::spawn(async move {
                    let permit = t
                        .acquire_owned_async(Op::Write, OpFlags::BACKGROUND)
                        .await
                        .expect("open");
                    tokio::task::yield_now().await;
                    served.fetch_add(1, Ordering::SeqCst);
                    permit.complete();
                })
            })
            .collect();
        while t.snapshot().queued[0] < 64 {
            tokio::task::yield_now().await;
        }
        let mut kept = Vec::new();
        for (i, task) in tasks.into_iter().enumerate() {
            if i % 2 == 0 {
                task.abort();
                let e = task.await.expect_err("aborted while it waited");
                assert!(e.is_cancelled());
            } else {
                kept.push(task);
            }
        }
        assert_eq!(t.snapshot().queued[0], 32, "the aborted left the queue");
        drop(held);
        for task in kept {
            task.await.expect("a task panicked");
        }
    });
    assert_eq!(served.load(Ordering::SeqCst), 32);
    assert_quiescent(&t);
}

/// Closing the throttle fails every waiting task with the error.
#[test]
fn close_fails_every_waiting_task() {
    let t = throttle();
    let refused = runtime().block_on(async {
        let held = [
            t.acquire_owned(Op::Write, OpFlags::BACKGROUND)
                .expect("open"),
            t.acquire_owned(Op::Write, OpFlags::BACKGROUND)
                .expect("open"),
        ];
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                let t = Arc::clone(&t);
                tokio::spawn(async move {
                    t.acquire_owned_async(Op::Write, OpFlags::BACKGROUND)
                        .await
                        .map(drop)
                })
            })
            .collect();
        while t.snapshot().queued[0] < 16 {
            tokio::task::yield_now().await;
        }
        t.close();
        let mut refused = 0;
        for task in tasks {
            if task.await.expect("a task panicked") == Err(ThrottleClosed) {
                refused += 1;
            }
        }
        drop(held);
        refused
    });
    assert_eq!(refused, 16);
    assert_quiescent(&t);
}
