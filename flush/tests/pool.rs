//! The thread-safe face: reservers block on tickets, a flusher thread does
//! the core's work and so lets it grant.
#![cfg(not(iolab_loom))] // std threads; the loom models are in iolab-verification

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use iolab_flush::{
    Config, FlushKind, ManualClock, Params, Policy, Pool, PoolError, Preempt, RefBatch,
    TicketError, Work,
};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

fn tight(policy: Policy) -> Config {
    Config {
        policy,
        params: Params {
            nodesize: 4096,
            total: 6 * MIB,
            used: 4 * MIB,
            global_rsv: MIB,
            unallocated: 0,
            ..Params::default()
        },
    }
}

fn flusher(pool: Arc<Pool<ManualClock>>) -> thread::JoinHandle<u64> {
    thread::spawn(move || {
        let mut done = 0;
        while let Some(w) = pool.wait_work() {
            if let Work::Refs { cpu_ns, .. } = w {
                pool.clock().advance(cpu_ns);
            }
            pool.work_done(w).expect("outstanding work");
            done += 1;
        }
        done
    })
}

type Outcome = Result<u64, PoolError>;

/// A thread that reserves with `reserve` (the bytes it got, or the error),
/// returned once its ticket is queued.
fn queued(
    pool: &Arc<Pool<ManualClock>>,
    reserve: impl FnOnce(&Pool<ManualClock>) -> Outcome + Send + 'static,
) -> thread::JoinHandle<Outcome> {
    let p = Arc::clone(pool);
    let waiter = thread::spawn(move || reserve(&p));
    while pool.snapshot().normal_tickets == 0 {
        thread::yield_now();
    }
    waiter
}

#[test]
fn fitting_reservation_returns_at_once() {
    let pool = Pool::with_clock(tight(Policy::on_demand()), ManualClock::new(0)).unwrap();
    let r = pool.reserve(512 * KIB, FlushKind::FlushAll).unwrap();
    assert_eq!(r.bytes(), 512 * KIB);
    assert_eq!(pool.snapshot().space.may_use, MIB + 512 * KIB);
    drop(r);
    assert_eq!(pool.snapshot().space.may_use, MIB);
    assert_eq!(pool.next_work(), None);
}

#[test]
fn waiter_is_granted_when_space_returns() {
    let pool = Arc::new(Pool::with_clock(tight(Policy::on_demand()), ManualClock::new(0)).unwrap());
    let big = pool.reserve(MIB, FlushKind::FlushAll).unwrap();
    let waiter = queued(&pool, |p| {
        p.reserve(512 * KIB, FlushKind::FlushAll).map(|r| r.bytes())
    });
    // The ticket is queued: give the space back.
    drop(big);
    assert_eq!(waiter.join().unwrap(), Ok(512 * KIB));
    let s = pool.snapshot();
    assert_eq!((s.grants, s.normal_tickets, s.space.may_use), (0, 0, MIB));
}

#[test]
fn cancelled_waiter_gets_eintr_and_holds_nothing() {
    let pool = Arc::new(Pool::with_clock(tight(Policy::on_demand()), ManualClock::new(0)).unwrap());
    let big = pool.reserve(MIB, FlushKind::FlushAll).unwrap();
    let cancel = Arc::new(AtomicBool::new(false));
    let c2 = Arc::clone(&cancel);
    let waiter = queued(&pool, move |p| {
        p.reserve_cancellable(768 * KIB, FlushKind::FlushAll, &c2)
            .map(|r| r.bytes())
    });
    cancel.store(true, Ordering::SeqCst);
    pool.notify();
    assert_eq!(
        waiter.join().unwrap(),
        Err(PoolError::Ticket(TicketError::Eintr))
    );
    drop(big);
    let s = pool.snapshot();
    assert_eq!((s.grants, s.reclaim_size, s.space.may_use), (0, 0, MIB));
}

#[test]
fn unsatisfiable_waiter_fails_once_the_flusher_gives_up() {
    // Without the 2019 preemptive trigger, so the count of work is exact.
    let policy = Policy {
        preempt: Preempt::Off,
        ..Policy::on_demand()
    };
    let pool = Arc::new(Pool::with_clock(tight(policy), ManualClock::new(0)).unwrap());
    let f = flusher(Arc::clone(&pool));
    let held = pool.reserve(MIB, FlushKind::FlushAll).unwrap();
    // Nothing can free space while `held` is kept: three passes, ENOSPC.
    assert_eq!(
        pool.reserve(512 * KIB, FlushKind::FlushAll)
            .map(|r| r.bytes()),
        Err(PoolError::Ticket(TicketError::Enospc))
    );
    drop(held);
    pool.close();
    // 3 passes × 4 caller states (items ×2, delalloc ×2) of the 5.0 list.
    assert_eq!(f.join().unwrap(), 12);
}

#[test]
fn many_reservers_and_a_flusher_settle_to_the_start() {
    for policy in [
        Policy::catch_up(),
        Policy::on_demand(),
        Policy::on_demand_2021(),
    ] {
        let pool = Arc::new(Pool::with_clock(tight(policy), ManualClock::new(0)).unwrap());
        let f = flusher(Arc::clone(&pool));
        let workers: Vec<_> = (0..4u64)
            .map(|i| {
                let p = Arc::clone(&pool);
                thread::spawn(move || {
                    let (mut ok, mut enospc) = (0u32, 0u32);
                    for k in 0..40u64 {
                        match p.reserve((1 + (i + k) % 6) * 64 * KIB, FlushKind::FlushAll) {
                            Ok(r) => {
                                ok += 1;
                                p.add_refs(RefBatch {
                                    new_heads: 1,
                                    refs: 2,
                                    ..RefBatch::default()
                                })
                                .expect("refs");
                                p.clock().advance(1_000);
                                drop(r);
                            }
                            Err(PoolError::Ticket(TicketError::Enospc)) => enospc += 1,
                            Err(e) => panic!("{e}"),
                        }
                        if k % 10 == 0 {
                            p.tick();
                        }
                    }
                    (ok, enospc)
                })
            })
            .collect();
        let mut ok = 0;
        for w in workers {
            ok += w.join().unwrap().0;
        }
        assert!(ok > 0, "{policy}: nobody got space");
        // Commit what is left: age the transaction past 30 s.
        pool.clock().advance(60_000_000_000);
        while pool.snapshot().txn.is_some() || pool.snapshot().writing.is_some() {
            pool.tick();
            pool.clock().advance(5_000_000_000);
            thread::yield_now();
        }
        pool.close();
        f.join().unwrap();
        let s = pool.snapshot();
        assert_eq!(
            (s.grants, s.normal_tickets, s.prio_tickets, s.handles),
            (0, 0, 0, 0),
            "{policy}"
        );
        assert_eq!(s.refs.entries(), 0, "{policy}");
        assert_eq!(s.refs.created_refs, s.refs.run_refs, "{policy}");
        assert_eq!(s.space.pinned, 0, "{policy}");
        assert_eq!(
            s.space.may_use,
            s.global.reserved + s.delayed_refs.reserved + s.trans.reserved,
            "{policy}"
        );
    }
}

/// The issue this closes: a reserver that must queue after the flusher is
/// gone used to sleep forever. Now `close` wakes the one waiting with
/// `Closed` (its ticket off the queue, nothing held), and every later
/// reservation and ref update is refused at once; a reservation held
/// across the close stays valid and returns its bytes.
#[test]
fn close_fails_the_waiting_and_later_reservations() {
    // No flusher runs (it has gone), so nothing but the close can end
    // the wait.
    let pool = Arc::new(Pool::with_clock(tight(Policy::on_demand()), ManualClock::new(0)).unwrap());
    let held = pool.reserve(MIB, FlushKind::FlushAll).unwrap();
    let waiter = queued(&pool, |p| {
        p.reserve(768 * KIB, FlushKind::FlushAll).map(|r| r.bytes())
    });
    pool.close();
    assert_eq!(waiter.join().unwrap(), Err(PoolError::Closed));
    assert_eq!(pool.snapshot().normal_tickets, 0);
    // The flusher's loop ends at the close, even with work still queued
    // (which `next_work` would still hand out).
    assert_eq!(pool.wait_work(), None);
    assert!(pool.next_work().is_some(), "work was queued at the close");
    assert_eq!(
        pool.reserve(KIB, FlushKind::FlushAll).map(|r| r.bytes()),
        Err(PoolError::Closed)
    );
    assert_eq!(
        pool.try_reserve(KIB).map(|r| r.bytes()),
        Err(PoolError::Closed)
    );
    assert_eq!(pool.add_refs(RefBatch::default()), Err(PoolError::Closed));
    assert_eq!(held.bytes(), MIB);
    drop(held);
    let s = pool.snapshot();
    assert_eq!((s.grants, s.reclaim_size, s.space.may_use), (0, 0, MIB));
}

/// `try_reserve` never queues: what fits is granted, what does not fails
/// at once with `WouldBlock` (not the ENOSPC a failed ticket gives),
/// leaving no ticket.
#[test]
fn try_reserve_grants_or_fails_at_once() {
    let pool = Pool::with_clock(tight(Policy::on_demand()), ManualClock::new(0)).unwrap();
    let r = pool.try_reserve(768 * KIB).unwrap();
    assert_eq!(r.bytes(), 768 * KIB);
    assert_eq!(
        pool.try_reserve(512 * KIB).map(|r| r.bytes()),
        Err(PoolError::WouldBlock)
    );
    let s = pool.snapshot();
    assert_eq!((s.normal_tickets, s.prio_tickets), (0, 0));
    drop(r);
    assert_eq!(pool.snapshot().space.may_use, MIB);
}

/// `reserve_timeout` gives up once its time on the pool's clock is up,
/// taking its ticket off the queue; a grant before then wins.
#[test]
fn reserve_timeout_gives_up_on_the_pools_clock() {
    let pool = Arc::new(Pool::with_clock(tight(Policy::on_demand()), ManualClock::new(0)).unwrap());
    let held = pool.reserve(MIB, FlushKind::FlushAll).unwrap();
    let timed = |p: &Pool<ManualClock>| {
        p.reserve_timeout(512 * KIB, FlushKind::FlushAll, Duration::from_millis(1))
            .map(|r| r.bytes())
    };
    let waiter = queued(&pool, timed);
    // Half the time: still waiting.
    pool.clock().advance(500_000);
    pool.notify();
    thread::sleep(std::time::Duration::from_millis(5));
    assert!(!waiter.is_finished(), "gave up before its time");
    pool.clock().advance(500_000);
    pool.notify();
    assert_eq!(waiter.join().unwrap(), Err(PoolError::TimedOut));
    let s = pool.snapshot();
    assert_eq!((s.normal_tickets, s.reclaim_size), (0, 0));
    // Granted in time.
    let waiter = queued(&pool, timed);
    drop(held);
    assert_eq!(waiter.join().unwrap(), Ok(512 * KIB));
    assert_eq!(pool.snapshot().space.may_use, MIB);
}

/// An owned reservation is `'static`: it moves to a thread that outlives
/// every borrow, keeps the pool alive after its last other owner is gone,
/// and returns its bytes there, granting a waiter; the borrowed
/// reservation it was made from returns nothing twice.
#[test]
fn an_owned_reservation_travels_and_keeps_its_pool_alive() {
    fn is_static<T: Send + 'static>(_: &T) {}
    let pool = Arc::new(Pool::with_clock(tight(Policy::on_demand()), ManualClock::new(0)).unwrap());
    let held: iolab_flush::OwnedReservation<ManualClock> =
        pool.reserve_owned(MIB, FlushKind::FlushAll).unwrap();
    is_static(&held);
    assert_eq!(held.bytes(), MIB);
    assert_eq!(pool.snapshot().space.may_use, 2 * MIB);
    assert_eq!(
        pool.try_reserve_owned(512 * KIB).map(|r| r.bytes()),
        Err(PoolError::WouldBlock)
    );
    let waiter = queued(&pool, |p| {
        p.reserve(512 * KIB, FlushKind::FlushAll).map(|r| r.bytes())
    });
    let weak = Arc::downgrade(&pool);
    let p = Arc::clone(&pool);
    drop(pool);
    thread::spawn(move || drop(held)).join().unwrap();
    assert_eq!(waiter.join().unwrap(), Ok(512 * KIB));
    let s = p.snapshot();
    assert_eq!((s.grants, s.normal_tickets, s.space.may_use), (0, 0, MIB));
    let timed = p
        .reserve_timeout_owned(256 * KIB, FlushKind::FlushAll, Duration::from_micros(1))
        .unwrap();
    drop(p);
    let pool = weak.upgrade().expect("alive while a reservation is held");
    assert_eq!(pool.snapshot().space.may_use, MIB + 256 * KIB);
    drop(pool);
    drop(timed);
    assert!(
        weak.upgrade().is_none(),
        "the last reservation freed the pool"
    );
}

mod async_face {
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use super::*;

    /// 1 MiB free, nothing can make room but returned bytes.
    fn one_mib() -> Arc<Pool<ManualClock>> {
        let config = Config {
            policy: Policy {
                preempt: Preempt::Off,
                ..Policy::on_demand()
            },
            params: Params {
                nodesize: 4096,
                total: 6 * MIB,
                used: 4 * MIB,
                global_rsv: MIB,
                unallocated: 0,
                ..Params::default()
            },
        };
        Arc::new(Pool::with_clock(config, ManualClock::new(0)).unwrap())
    }

    fn cx() -> Context<'static> {
        Context::from_waker(Waker::noop())
    }

    #[test]
    fn a_task_waits_behind_a_thread_and_is_granted_in_order() {
        let pool = one_mib();
        let held = pool.reserve(MIB, FlushKind::FlushAll).unwrap();
        let mut cx = cx();
        let mut a = pin!(pool.reserve_async(768 * KIB, FlushKind::FlushAll));
        let mut b = pin!(pool.reserve_async(256 * KIB, FlushKind::FlushAll));
        assert!(a.as_mut().poll(&mut cx).is_pending());
        assert!(b.as_mut().poll(&mut cx).is_pending());
        drop(held);
        let Poll::Ready(Ok(ra)) = a.as_mut().poll(&mut cx) else {
            panic!("the head is granted")
        };
        let Poll::Ready(Ok(rb)) = b.as_mut().poll(&mut cx) else {
            panic!("and the one behind it")
        };
        assert_eq!((ra.bytes(), rb.bytes()), (768 * KIB, 256 * KIB));
        drop((ra, rb));
        assert_eq!(pool.snapshot().grants, 0);
    }

    #[test]
    fn a_dropped_queued_future_leaves_the_queue_holding_nothing() {
        let pool = one_mib();
        let held = pool.reserve(512 * KIB, FlushKind::FlushAll).unwrap();
        let mut cx = cx();
        let mut a = Box::pin(pool.reserve_async(768 * KIB, FlushKind::FlushAll));
        let mut b = pin!(pool.reserve_async(256 * KIB, FlushKind::FlushAll));
        assert!(a.as_mut().poll(&mut cx).is_pending());
        assert!(b.as_mut().poll(&mut cx).is_pending(), "FIFO: behind a");
        drop(a);
        assert_eq!(pool.snapshot().normal_tickets, 1, "a left the queue");
        // As in the kernel (`remove_ticket` grants nothing), b is served
        // at the next change of space, not by a's leaving.
        assert!(b.as_mut().poll(&mut cx).is_pending());
        drop(held);
        let Poll::Ready(Ok(rb)) = b.as_mut().poll(&mut cx) else {
            panic!("the returned space serves b")
        };
        assert_eq!(pool.snapshot().grants, 256 * KIB, "nothing held for a");
        drop(rb);
        assert_eq!(pool.snapshot().grants, 0);
    }

    #[test]
    fn a_granted_future_dropped_before_its_poll_gives_the_bytes_back() {
        let pool = one_mib();
        let held = pool.reserve(MIB, FlushKind::FlushAll).unwrap();
        let mut cx = cx();
        let mut a = Box::pin(pool.reserve_async(512 * KIB, FlushKind::FlushAll));
        assert!(a.as_mut().poll(&mut cx).is_pending());
        drop(held);
        assert_eq!(pool.snapshot().grants, 512 * KIB, "granted, not yet polled");
        drop(a);
        assert_eq!(pool.snapshot().grants, 0);
    }

    #[test]
    fn close_fails_a_waiting_task_and_ends_the_async_flusher() {
        let pool = one_mib();
        let held = pool.reserve(MIB, FlushKind::FlushAll).unwrap();
        let mut cx = cx();
        let mut w = pin!(pool.wait_work_async());
        assert!(w.as_mut().poll(&mut cx).is_pending(), "no work yet");
        let mut a = pin!(pool.reserve_async(4 * KIB, FlushKind::FlushAll));
        assert!(a.as_mut().poll(&mut cx).is_pending());
        pool.close();
        assert!(matches!(
            a.as_mut().poll(&mut cx),
            Poll::Ready(Err(PoolError::Closed))
        ));
        assert!(matches!(w.as_mut().poll(&mut cx), Poll::Ready(None)));
        assert_eq!(pool.snapshot().normal_tickets, 0);
        drop(held);
        assert_eq!(pool.snapshot().grants, 0);
    }

    #[test]
    fn tasks_under_tokio_share_the_pool_with_an_async_flusher() {
        let pool = one_mib();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let (got, failed): (u64, u64) = rt.block_on(async {
            let flusher = {
                let pool = Arc::clone(&pool);
                tokio::spawn(async move {
                    while let Some(w) = pool.wait_work_async().await {
                        pool.work_done(w).unwrap();
                    }
                })
            };
            let tasks: Vec<_> = (0..16)
                .map(|_| {
                    let pool = Arc::clone(&pool);
                    tokio::spawn(async move {
                        let (mut got, mut failed) = (0, 0);
                        for _ in 0..50 {
                            // With nothing to reclaim, a ticket the flusher
                            // cannot serve fails with ENOSPC, as in btrfs.
                            match pool
                                .reserve_owned_async(384 * KIB, FlushKind::FlushAll)
                                .await
                            {
                                Ok(r) => got += r.bytes(),
                                Err(PoolError::Ticket(TicketError::Enospc)) => failed += 1,
                                Err(e) => panic!("{e}"),
                            }
                            tokio::task::yield_now().await;
                        }
                        (got, failed)
                    })
                })
                .collect();
            let (mut got, mut failed) = (0, 0);
            for t in tasks {
                let (g, f) = t.await.unwrap();
                got += g;
                failed += f;
            }
            pool.close();
            flusher.await.unwrap();
            (got, failed)
        });
        assert_eq!(
            got / (384 * KIB) + failed,
            16 * 50,
            "every request resolved"
        );
        assert!(got > 0);
        let s = pool.snapshot();
        assert_eq!(
            (s.grants, s.normal_tickets),
            (0, 0),
            "nothing held or queued"
        );
    }
}

/// Nobody ticks: the commit deadline found more than a second overdue
/// when the pool is next used counts once.
#[test]
fn an_unticked_pool_counts_its_missed_commit_deadline() {
    let pool = Pool::with_clock(tight(Policy::on_demand()), ManualClock::new(0)).unwrap();
    pool.add_refs(RefBatch {
        new_heads: 1,
        refs: 1,
        cancelled: 0,
        meta_used: 4096,
    })
    .unwrap(); // a transaction runs: the commit timer is armed
    let deadline = pool.tick().expect("a commit deadline");
    assert_eq!(pool.missed_ticks(), 0);
    pool.clock().set(deadline + 2 * iolab_flush::LATE_TICK_NS);
    drop(pool.reserve(4096, FlushKind::FlushAll).unwrap());
    assert_eq!(pool.missed_ticks(), 1);
    drop(pool.reserve(4096, FlushKind::FlushAll).unwrap());
    assert_eq!(pool.missed_ticks(), 1, "each deadline counts once");
}
