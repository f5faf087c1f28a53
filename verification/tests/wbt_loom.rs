//! Loom models of `iolab_wbt::Throttle` (the `rq_qos_wait` protocol of
//! `block/blk-rq-qos.c`). Invariants: I1 no token leaked or released twice,
//! I2 no waiter stranded, I3 FIFO, I4 the waker never touches an unlinked
//! entry, I5 a waiter ends with exactly one token, I6 a waiter that sees
//! its entry unlinked also sees its grant.
//!
//! Run (normal test runs skip this file):
//!
//! ```text
//! RUSTFLAGS="--cfg iolab_loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=/tmp/wbt-loom-target \
//!   cargo test -p iolab-verification --release -j1 -- --test-threads=1
//! ```
//!
//! Each model is 2–3 threads and a handful of operations. Loom reports a
//! lost wakeup as a deadlock (every thread blocked), which fails the test.
#![cfg(iolab_loom)]

mod common;

use common::{assert_quiescent, model, throttle, wait_queued, write, writer};
use iolab_wbt::sync::{Arc, AtomicUsize, Ordering, thread};
use iolab_wbt::{Op, OpFlags, ThrottleClosed, TryAcquireError};

/// No lost wakeup: two writers arrive while the only slot is held and it
/// is released concurrently; everyone finishes (I2) and no token leaks (I1).
#[test]
fn no_lost_wakeup() {
    model("no_lost_wakeup", || {
        let t = throttle(2);
        let held = write(&t);
        let a = writer(&t);
        let b = writer(&t);
        held.complete();
        a.join().expect("a");
        b.join().expect("b");
        assert_quiescent(&t);
    });
}

/// Inflight never above the limit: three threads compete for one slot;
/// at most one holds it at any time, and the core agrees.
#[test]
fn inflight_never_above_limit() {
    model("inflight_never_above_limit", || {
        let t = throttle(2);
        let holders = Arc::new(AtomicUsize::new(0));
        let run = |t: &common::T, holders: &AtomicUsize| {
            let p = write(t);
            let n = holders.fetch_add(1, Ordering::SeqCst) + 1;
            assert!(n <= 1, "{n} holders with limit 1");
            assert!(t.snapshot().wbt.inflight[0] <= 1);
            holders.fetch_sub(1, Ordering::SeqCst);
            p.complete();
        };
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let (t, holders) = (Arc::clone(&t), Arc::clone(&holders));
                thread::spawn(move || run(&t, &holders))
            })
            .collect();
        run(&t, &holders);
        for h in hs {
            h.join().expect("writer");
        }
        assert_quiescent(&t);
    });
}

/// FIFO (I3): A queues before B; when the slot frees, A is served first.
#[test]
fn fifo_order() {
    model("fifo_order", || {
        let t = throttle(2);
        let ticket = Arc::new(AtomicUsize::new(0));
        let held = write(&t);
        let spawn = |t: &Arc<common::T>, ticket: &Arc<AtomicUsize>| {
            let (t, ticket) = (Arc::clone(t), Arc::clone(ticket));
            thread::spawn(move || {
                let p = write(&t);
                let mine = ticket.fetch_add(1, Ordering::SeqCst);
                p.complete();
                mine
            })
        };
        let a = spawn(&t, &ticket);
        wait_queued(&t, 1);
        let b = spawn(&t, &ticket);
        wait_queued(&t, 2);
        held.complete();
        assert_eq!(a.join().expect("a"), 0, "B overtook A");
        assert_eq!(b.join().expect("b"), 1);
        assert_quiescent(&t);
    });
}

/// The limit is lowered while a writer sleeps: it is not granted until the
/// new, lower limit allows it, and it is not stranded.
#[test]
fn limit_lowered_while_sleeping() {
    model("limit_lowered_while_sleeping", || {
        let t = throttle(8); // limit 2
        let released = Arc::new(AtomicUsize::new(0));
        let p1 = write(&t);
        let p2 = write(&t);
        let a = {
            let (t, released) = (Arc::clone(&t), Arc::clone(&released));
            thread::spawn(move || {
                let p = write(&t);
                assert_eq!(released.load(Ordering::SeqCst), 2, "granted above limit 1");
                p.complete();
            })
        };
        t.set_queue_depth(2); // limit 1
        released.fetch_add(1, Ordering::SeqCst);
        p1.complete();
        released.fetch_add(1, Ordering::SeqCst);
        p2.complete();
        a.join().expect("a");
        assert_quiescent(&t);
    });
}

/// The limit is raised while two writers sleep behind a held slot: the
/// raise alone must grant both (the slot is released only after they finish).
#[test]
fn limit_raised_while_sleeping() {
    model("limit_raised_while_sleeping", || {
        let t = throttle(2); // limit 1
        let held = write(&t);
        let a = writer(&t);
        let b = writer(&t);
        t.set_queue_depth(12); // limit 3
        a.join().expect("a");
        b.join().expect("b");
        held.complete();
        assert_quiescent(&t);
    });
}

/// Permits dropped (one cancelled, one completed) while two writers sleep:
/// both are served, the tokens balance.
#[test]
fn drop_with_sleepers() {
    model("drop_with_sleepers", || {
        let t = throttle(8); // limit 2
        let p1 = write(&t);
        let p2 = write(&t);
        let a = writer(&t);
        let b = writer(&t);
        p1.cancel();
        drop(p2);
        a.join().expect("a");
        b.join().expect("b");
        assert_quiescent(&t);
    });
}

/// Turning WBT off (latency target 0) while a writer sleeps grants it
/// (disabled means unlimited, as `get_limit` did in 5.x), and the counters still balance.
#[test]
fn disable_with_sleeper() {
    model("disable_with_sleeper", || {
        let t = throttle(2);
        let held = write(&t);
        let a = writer(&t);
        t.set_lat_usec(0).expect("0 disables");
        a.join().expect("a");
        held.complete();
        assert_quiescent(&t);
    });
}

/// A lockless admission racing the timer that ends the window (step 0,
/// nothing in flight when it counts) is never left unmonitored: either the
/// timer counts it and re-arms, or it sees no window and starts one.
#[test]
fn lockless_admission_vs_window_end() {
    model("lockless_admission_vs_window_end", || {
        let t = throttle(2);
        write(&t).cancel(); // arms the window at 0 (deadline 100 ms)
        t.clock().set(100_000_000);
        let ticker = {
            let t = Arc::clone(&t);
            thread::spawn(move || {
                t.tick();
            })
        };
        let p = write(&t);
        ticker.join().expect("ticker");
        assert!(
            t.next_deadline().is_some(),
            "a write is in flight but no window runs: {:?}",
            t.snapshot().wbt
        );
        p.cancel();
        assert_quiescent(&t);
    });
}

/// A publication changes the board's word and its expiry together: a
/// lockless admission never pairs an expired dirty-throttle bit with the
/// new expiry (which would admit against max depth, not background).
#[test]
fn board_is_never_read_half_published() {
    model("board_is_never_read_half_published", || {
        let t = throttle(8); // max 8, normal 4, background 2
        let held = [write(&t), write(&t)]; // background limit reached
        t.clock().set(150_000_000); // other IO is no longer close by
        t.dirty_throttle(); // dirty signal until 1.15 s
        t.clock().set(1_200_000_000); // ...expired, not yet republished
        let other = {
            let t = Arc::clone(&t);
            thread::spawn(move || t.try_acquire(Op::Write, OpFlags::BACKGROUND).is_ok())
        };
        let mine = t.try_acquire(Op::Write, OpFlags::BACKGROUND).is_ok();
        let theirs = other.join().expect("other");
        assert!(
            !mine && !theirs,
            "a third background write got in (limit 2)"
        );
        drop(held);
        assert_quiescent(&t);
    });
}

/// The throttle is closed while a writer waits for the only slot: whether
/// it queued before the close or arrives after it, it gets the error
/// holding nothing (a sleeper the close missed would never wake: loom
/// reports that as a deadlock). The held permit still releases.
#[test]
fn close_wakes_a_sleeper() {
    model("close_wakes_a_sleeper", || {
        let t = throttle(2);
        let held = write(&t);
        let a = {
            let t = Arc::clone(&t);
            thread::spawn(move || t.acquire(Op::Write, OpFlags::BACKGROUND).map(|_| ()))
        };
        t.close();
        assert_eq!(a.join().expect("a"), Err(ThrottleClosed));
        held.complete();
        assert_quiescent(&t);
    });
}

/// A writer waits while one thread completes the held permit and another
/// closes the throttle. The writer ends with the grant (and releases it)
/// or with the error, never asleep; nothing leaks either way.
#[test]
fn close_versus_grant() {
    model("close_versus_grant", || {
        let t = throttle(2);
        let held = write(&t);
        let a = {
            let t = Arc::clone(&t);
            thread::spawn(move || {
                t.acquire(Op::Write, OpFlags::BACKGROUND)
                    .map(|p| p.complete())
            })
        };
        let closer = {
            let t = Arc::clone(&t);
            thread::spawn(move || t.close())
        };
        held.complete();
        let _ = a.join().expect("a"); // either outcome is allowed
        closer.join().expect("closer");
        assert_quiescent(&t);
    });
}

/// A lockless admission races the close with a slot free: it may come
/// first and get its permit, but once `close` has returned nobody is
/// admitted, on the fast path or off it.
#[test]
fn close_versus_lockless_admission() {
    model("close_versus_lockless_admission", || {
        let t = throttle(2);
        write(&t).cancel(); // arms the window: later admissions stay lockless
        let a = {
            let t = Arc::clone(&t);
            thread::spawn(move || {
                t.try_acquire(Op::Write, OpFlags::BACKGROUND)
                    .map(|p| p.cancel())
            })
        };
        t.close();
        assert_eq!(
            t.try_acquire(Op::Write, OpFlags::BACKGROUND).map(|_| ()),
            Err(TryAcquireError::Closed),
            "admitted after the close returned"
        );
        let _ = a.join().expect("a"); // before the close or refused
        assert_quiescent(&t);
    });
}
