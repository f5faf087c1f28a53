//! Loom models of the face ([`Pool`]) for the scenarios of spec §8 that
//! concern it. Run with
//! `RUSTFLAGS="--cfg iolab_loom" cargo test -p iolab-flush --test loom --release`.
//! Every sync type comes from `iolab_flush::sync`, so the models and the
//! face both live in loom's world.
#![cfg(iolab_loom)]

use iolab_flush::sync::{Arc, AtomicBool, Ordering, thread};
use iolab_flush::{
    Config, FlushKind, ManualClock, Params, Policy, Pool, PoolError, Preempt, TicketError,
};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

/// 1 MiB of room; no preemption so the models only see ticket traffic.
fn pool() -> Pool<ManualClock> {
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
            ticket_capacity: 4,
            max_handles: 4,
            trace_capacity: 64,
            decision_capacity: 16,
            ..Params::default()
        },
    };
    Pool::with_clock(config, ManualClock::new(0)).expect("valid")
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

/// §8.2 grant versus interrupt: the owner either keeps the grant or gets
/// EINTR holding nothing; no bytes leak either way.
#[test]
fn grant_versus_interrupt() {
    model(|| {
        let p = Arc::new(pool());
        let held = p.reserve(MIB, FlushKind::FlushAll).expect("fits");
        let cancel = Arc::new(AtomicBool::new(false));
        let (p2, c2) = (p.clone(), cancel.clone());
        let waiter = thread::spawn(move || {
            match p2.reserve_cancellable(512 * KIB, FlushKind::FlushAll, &c2) {
                Ok(r) => r.bytes(),
                Err(PoolError::Ticket(TicketError::Eintr)) => 0,
                Err(e) => panic!("unexpected {e}"),
            }
        });
        let (p3, c3) = (p.clone(), cancel.clone());
        let killer = thread::spawn(move || {
            c3.store(true, Ordering::SeqCst);
            p3.notify();
        });
        drop(held); // may grant the waiter
        killer.join().unwrap();
        let got = waiter.join().unwrap();
        assert!(got == 0 || got == 512 * KIB);
        let s = p.snapshot();
        assert_eq!((s.grants, s.reclaim_size, s.space.may_use), (0, 0, MIB));
    });
}

/// Space returned while a ticket is being queued: the reserver never
/// sleeps through the release that makes it fit.
#[test]
fn release_races_with_queueing() {
    model(|| {
        let p = Arc::new(pool());
        let held = p.reserve(MIB, FlushKind::FlushAll).expect("fits");
        let p2 = p.clone();
        let waiter = thread::spawn(move || p2.reserve(MIB, FlushKind::FlushAll).map(|r| r.bytes()));
        drop(held);
        assert_eq!(waiter.join().unwrap(), Ok(MIB));
        assert_eq!(p.snapshot().grants, 0);
    });
}

/// §8.1 two reservers: both wait behind the holder; one release of
/// enough space serves them in FIFO order, and nobody is left asleep.
#[test]
fn two_waiters_one_release() {
    model(|| {
        let p = Arc::new(pool());
        let held = p.reserve(MIB, FlushKind::FlushAll).expect("fits");
        let spawn = |p: Arc<Pool<ManualClock>>| {
            thread::spawn(move || {
                let r = p.reserve(256 * KIB, FlushKind::FlushAll).expect("granted");
                r.bytes()
            })
        };
        let a = spawn(p.clone());
        let b = spawn(p.clone());
        drop(held);
        assert_eq!(a.join().unwrap() + b.join().unwrap(), 512 * KIB);
        let s = p.snapshot();
        assert_eq!((s.grants, s.normal_tickets), (0, 0));
    });
}
