//! Loom models of `iolab_flush::Pool` for the ticket races (btrfs
//! `fs/btrfs/space-info.c`) that concern the face: concurrent reservers
//! and a flusher, grant versus interrupt, space returned while a
//! ticket is being queued, and the pool's close against a waiting
//! reserver and against a grant.
//!
//! Run (normal test runs skip this file):
//!
//! ```text
//! RUSTFLAGS="--cfg iolab_loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target-loom \
//!   cargo test -p iolab-verification --release -j2 --test flush_loom -- --test-threads=1
//! ```
//!
//! Each model is 2–4 threads and a handful of operations on a pool with
//! exactly 1 MiB free (see `flush_common::pool`). Loom reports a lost
//! wakeup as a deadlock (every thread blocked), which fails the test; the
//! models end by checking that every byte came back (invariants 4 and 6).
#![cfg(iolab_loom)]

mod flush_common;

use flush_common::{
    KIB, MIB, assert_settled, cancellable_reserver, closable_reserver, flusher, model, pool,
    pool_with_chunk, reserver, wait_tickets,
};
use iolab_flush::sync::{Arc, Ordering, thread};
use iolab_flush::{FlushKind, PoolError};

/// Two reservers and a flusher: A (768 KiB) waits; half the space
/// comes back, which is not enough for A; B (256 KiB) arrives and would
/// fit, but must queue behind A (the pending-tickets check, invariant 5),
/// while the flusher works the reclaim states concurrently. When the rest
/// comes back both are served, A first, and nobody is left asleep.
#[test]
fn reservers_and_flusher_keep_fifo() {
    model("reservers_and_flusher_keep_fifo", || {
        let p = pool();
        let h1 = p.reserve(512 * KIB, FlushKind::FlushAll).expect("fits");
        let h2 = p.reserve(512 * KIB, FlushKind::FlushAll).expect("fits");
        let f = flusher(&p, 2);
        let a = reserver(&p, 768 * KIB);
        wait_tickets(&p, 1);
        drop(h1); // 512 KiB free: A, at the front, still does not fit
        let b = {
            let p = Arc::clone(&p);
            thread::spawn(move || {
                let r = p.reserve(256 * KIB, FlushKind::FlushAll).expect("B");
                assert_eq!(p.snapshot().normal_tickets, 0, "B overtook A (FIFO)");
                r.bytes()
            })
        };
        drop(h2);
        assert_eq!(a.join().expect("a"), 768 * KIB);
        assert_eq!(b.join().expect("b"), 256 * KIB);
        p.close();
        f.join().expect("flusher");
        assert_settled(&p);
    });
}

/// Nobody left asleep: two reservers wait behind the holder; one
/// release of enough space serves both.
#[test]
fn two_waiters_one_release() {
    model("two_waiters_one_release", || {
        let p = pool();
        let held = p.reserve(MIB, FlushKind::FlushAll).expect("fits");
        let a = reserver(&p, 256 * KIB);
        let b = reserver(&p, 256 * KIB);
        drop(held);
        assert_eq!(a.join().expect("a") + b.join().expect("b"), 512 * KIB);
        assert_settled(&p);
    });
}

/// Grant versus interrupt: the space comes back (and grants the
/// ticket) while its owner is being interrupted. The owner either keeps
/// the grant or gets EINTR holding nothing; no bytes leak either way.
#[test]
fn grant_versus_interrupt() {
    model("grant_versus_interrupt", || {
        let p = pool();
        let held = p.reserve(MIB, FlushKind::FlushAll).expect("fits");
        let (waiter, cancel) = cancellable_reserver(&p, 512 * KIB);
        let killer = {
            let (p, cancel) = (Arc::clone(&p), Arc::clone(&cancel));
            thread::spawn(move || {
                cancel.store(true, Ordering::SeqCst);
                p.notify();
            })
        };
        drop(held); // may grant the waiter
        killer.join().expect("killer");
        let got = waiter.join().expect("waiter");
        assert!(got == 0 || got == 512 * KIB, "got {got}");
        assert_settled(&p);
    });
}

/// Grant versus interrupt with the flusher as the granter: the flusher's
/// ALLOC_CHUNK grants the ticket (fourth piece of work) while its owner is
/// being interrupted. Grant wins or the ticket is removed first; either way the
/// flusher winds down and no bytes leak.
#[test]
fn flusher_grant_versus_interrupt() {
    model("flusher_grant_versus_interrupt", || {
        let p = pool_with_chunk();
        let held = p.reserve(MIB, FlushKind::FlushAll).expect("fits");
        let (waiter, cancel) = cancellable_reserver(&p, 512 * KIB);
        let f = flusher(&p, 4);
        cancel.store(true, Ordering::SeqCst);
        p.notify();
        let got = waiter.join().expect("waiter");
        assert!(got == 0 || got == 512 * KIB, "got {got}");
        p.close();
        f.join().expect("flusher");
        drop(held);
        assert_settled(&p);
    });
}

/// Invariant 7, no ticket without a flusher: A's grant (by the returned
/// space, or by the chunk the flusher allocates) may empty the queue just
/// as B (1.5 MiB, more than can ever be returned) queues, while the
/// flusher decides to stop. B must get the flusher going again, and the
/// chunk (with the returned space) serves it; loom reports a stranded B
/// as a deadlock.
#[test]
fn ticket_queued_as_flusher_stops() {
    model("ticket_queued_as_flusher_stops", || {
        let p = pool_with_chunk();
        let held = p.reserve(MIB, FlushKind::FlushAll).expect("fits");
        let f = flusher(&p, 8);
        let a = reserver(&p, 512 * KIB);
        let b = reserver(&p, 1536 * KIB);
        drop(held);
        assert_eq!(a.join().expect("a"), 512 * KIB);
        assert_eq!(b.join().expect("b"), 1536 * KIB);
        p.close();
        f.join().expect("flusher");
        assert_settled(&p);
    });
}

/// Space returned while a ticket is being queued: the reserver never
/// sleeps through the release that makes it fit (no lost wakeup), and
/// it is served whether it queued before or after the release.
#[test]
fn release_races_with_queueing() {
    model("release_races_with_queueing", || {
        let p = pool();
        let held = p.reserve(MIB, FlushKind::FlushAll).expect("fits");
        let waiter = reserver(&p, MIB);
        drop(held);
        assert_eq!(waiter.join().expect("waiter"), MIB);
        assert_settled(&p);
    });
}

/// A reserver waits on a ticket nothing will grant (no flusher; the
/// holder keeps its bytes) and the pool is closed: whether it queued
/// before the close or arrives after it, it gets `Closed` holding nothing,
/// its ticket off the queue, and no interleaving leaves it asleep (loom
/// reports that as a deadlock). A reservation after the close is refused.
#[test]
fn close_wakes_a_waiting_reserver() {
    model("close_wakes_a_waiting_reserver", || {
        let p = pool();
        let held = p.reserve(MIB, FlushKind::FlushAll).expect("fits");
        let waiter = closable_reserver(&p, 512 * KIB);
        p.close();
        assert_eq!(waiter.join().expect("waiter"), 0);
        assert!(matches!(
            p.reserve(KIB, FlushKind::FlushAll),
            Err(PoolError::Closed)
        ));
        drop(held);
        assert_settled(&p);
    });
}

/// Close versus grant: the holder returns its space while another thread
/// closes the pool. The waiter ends with the grant or with `Closed`, never
/// asleep, and no byte or ticket is left behind either way.
#[test]
fn close_versus_grant() {
    model("close_versus_grant", || {
        let p = pool();
        let held = p.reserve(MIB, FlushKind::FlushAll).expect("fits");
        let waiter = closable_reserver(&p, 512 * KIB);
        let closer = {
            let p = Arc::clone(&p);
            thread::spawn(move || p.close())
        };
        drop(held);
        closer.join().expect("closer");
        let got = waiter.join().expect("waiter");
        assert!(got == 0 || got == 512 * KIB, "got {got}");
        assert_settled(&p);
    });
}
