//! Loom models of `iolab_flush::Pool`'s async face (`reserve_async`,
//! `wait_work_async`) beside its threads: no lost wakeup, FIFO, a dropped
//! future gives back what it holds, close wakes every waiter. The pool
//! has exactly 1 MiB free and nothing but returned bytes makes room
//! (`flush_common::pool`). Tasks run under `iolab_verification::block_on`,
//! whose lost wake is a deadlock to loom.
//!
//! ```text
//! RUSTFLAGS="--cfg iolab_loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target-loom \
//!   cargo test -p iolab-verification --release --test pool_async_loom -- --test-threads=1
//! ```
#![cfg(iolab_loom)]

mod flush_common;

use std::pin::pin;
use std::task::{Context, Waker};

use flush_common::{KIB, MIB, P, assert_settled, model, pool, wait_tickets};
use iolab_flush::sync::{Arc, AtomicBool, Ordering, thread};
use iolab_flush::{FlushKind, PoolError};
use iolab_verification::block_on;

fn task_reserving(p: &Arc<P>, bytes: u64) -> thread::JoinHandle<Result<u64, PoolError>> {
    let p = Arc::clone(p);
    thread::spawn(move || block_on(p.reserve_async(bytes, FlushKind::FlushAll)).map(|r| r.bytes()))
}

/// A task and a thread wait for space that comes back while they go to
/// sleep: both are granted and every byte comes back.
#[test]
fn async_no_lost_wakeup() {
    model("pool_async::no_lost_wakeup", || {
        let p = pool();
        let held = p.reserve(MIB, FlushKind::FlushAll).expect("free");
        let task = task_reserving(&p, 512 * KIB);
        let thread_waiter = {
            let p = Arc::clone(&p);
            thread::spawn(move || p.reserve(512 * KIB, FlushKind::FlushAll).map(|r| r.bytes()))
        };
        drop(held);
        assert_eq!(task.join().expect("task"), Ok(512 * KIB));
        assert_eq!(thread_waiter.join().expect("thread"), Ok(512 * KIB));
        assert_settled(&p);
    });
}

/// A big task ticket at the front, a small one behind it that would fit:
/// half the space back serves neither (FIFO), all of it serves both.
#[test]
fn async_fifo() {
    model("pool_async::fifo", || {
        let p = pool();
        let h1 = p.reserve(512 * KIB, FlushKind::FlushAll).expect("free");
        let h2 = p.reserve(512 * KIB, FlushKind::FlushAll).expect("free");
        let big = task_reserving(&p, 768 * KIB);
        wait_tickets(&p, 1);
        let small = task_reserving(&p, 256 * KIB);
        wait_tickets(&p, 2);
        drop(h1);
        assert_eq!(p.snapshot().grants, 512 * KIB, "the small one waits behind");
        drop(h2);
        assert_eq!(big.join().expect("big"), Ok(768 * KIB));
        assert_eq!(small.join().expect("small"), Ok(256 * KIB));
        assert_settled(&p);
    });
}

/// A task queues, then drops its future while the space comes back:
/// whichever comes first, no byte stays held and no ticket stays queued.
#[test]
fn async_cancellation_gives_back() {
    model("pool_async::cancellation_gives_back", || {
        let p = pool();
        let held = p.reserve(MIB, FlushKind::FlushAll).expect("free");
        let queued = Arc::new(AtomicBool::new(false));
        let task = {
            let (p, queued) = (Arc::clone(&p), Arc::clone(&queued));
            thread::spawn(move || {
                let mut f = pin!(p.reserve_async(512 * KIB, FlushKind::FlushAll));
                let mut cx = Context::from_waker(Waker::noop());
                assert!(f.as_mut().poll(&mut cx).is_pending(), "no space");
                queued.store(true, Ordering::SeqCst);
                // Dropped here, racing the grant.
            })
        };
        while !queued.load(Ordering::SeqCst) {
            thread::yield_now();
        }
        drop(held);
        task.join().expect("task");
        assert_settled(&p);
    });
}

/// A reserving task, a reserving thread and an async flusher wait while
/// the pool closes: the reservers fail with `Closed`, the flusher's wait
/// ends, nobody is left asleep.
#[test]
fn async_close_wakes_all() {
    model("pool_async::close_wakes_all", || {
        let p = pool();
        let held = p.reserve(MIB, FlushKind::FlushAll).expect("free");
        let task = task_reserving(&p, 4 * KIB);
        let flusher = {
            let p = Arc::clone(&p);
            thread::spawn(move || {
                let mut done = 0;
                while let Some(w) = block_on(p.wait_work_async()) {
                    p.work_done(w).expect("outstanding work");
                    done += 1;
                    if done == 2 {
                        break; // far below the passes that fail tickets
                    }
                }
            })
        };
        p.close();
        assert_eq!(task.join().expect("task"), Err(PoolError::Closed));
        flusher.join().expect("flusher");
        drop(held);
        assert_settled(&p);
    });
}
