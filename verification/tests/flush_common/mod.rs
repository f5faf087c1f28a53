//! Shared pieces of the loom models of `iolab_flush::Pool`.
#![allow(dead_code)] // each test file uses a subset

use iolab_flush::sync::{Arc, AtomicBool, thread};
use iolab_flush::{
    Config, FlushKind, ManualClock, Params, Policy, Pool, PoolError, Preempt, TicketError,
};

pub const KIB: u64 = 1024;
pub const MIB: u64 = 1024 * KIB;

pub type P = Pool<ManualClock>;

/// On-demand (OD-2019) without the preemptive trigger, so the models see
/// ticket traffic only, on a space of 6 MiB with 4 MiB used and a 1 MiB
/// global reserve: exactly 1 MiB is free for reservations, nothing can
/// overcommit (no unallocated space), and the flusher cannot free space
/// (no refs, nothing pinned), so grants come only from returned
/// reservations, as `btrfs_try_granting_tickets` runs in the context of
/// whoever returns space.
pub fn pool() -> Arc<P> {
    with_unallocated(0)
}

/// [`pool`] plus 1 MiB of unallocated device space, one 1 MiB chunk: too
/// little to overcommit the models' requests, but the flusher's
/// ALLOC_CHUNK state (after DELAYED_ITEMS_NR, DELAYED_ITEMS, DELALLOC and
/// DELALLOC_WAIT, four pieces of work) grows the space by 1 MiB and grants
/// from the flusher's context, as in the kernel.
pub fn pool_with_chunk() -> Arc<P> {
    with_unallocated(MIB)
}

fn with_unallocated(unallocated: u64) -> Arc<P> {
    Arc::new(unshared(unallocated))
}

/// [`pool`] not yet shared: for the conformance models, which share it
/// themselves.
pub fn unshared_pool() -> P {
    unshared(0)
}

fn unshared(unallocated: u64) -> P {
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
            unallocated,
            chunk_size: MIB,
            ticket_capacity: 4,
            max_handles: 4,
            trace_capacity: 64,
            decision_capacity: 16,
            ..Params::default()
        },
    };
    Pool::with_clock(config, ManualClock::new(0)).expect("valid config")
}

/// A thread that reserves `bytes` (`FlushAll`, a normal ticket if it does
/// not fit), gives them back, and returns how many it got.
pub fn reserver(p: &Arc<P>, bytes: u64) -> thread::JoinHandle<u64> {
    let p = Arc::clone(p);
    thread::spawn(move || match p.reserve(bytes, FlushKind::FlushAll) {
        Ok(r) => r.bytes(),
        Err(e) => panic!("reserve({bytes}): {e}"),
    })
}

/// A thread that reserves `bytes` (`FlushAll`) until granted or until
/// the returned flag is raised (then `notify` the pool), and returns how
/// many bytes it holds (0 for EINTR).
pub fn cancellable_reserver(p: &Arc<P>, bytes: u64) -> (thread::JoinHandle<u64>, Arc<AtomicBool>) {
    let cancel = Arc::new(AtomicBool::new(false));
    let waiter = {
        let (p, cancel) = (Arc::clone(p), Arc::clone(&cancel));
        thread::spawn(move || {
            bytes_or_eintr(
                p.reserve_cancellable(bytes, FlushKind::FlushAll, &cancel)
                    .map(|r| r.bytes()),
            )
        })
    };
    (waiter, cancel)
}

/// A thread that reserves `bytes` (`FlushAll`) until granted or the pool
/// closes, and returns how many bytes it got (0 for `Closed`).
pub fn closable_reserver(p: &Arc<P>, bytes: u64) -> thread::JoinHandle<u64> {
    let p = Arc::clone(p);
    thread::spawn(move || match p.reserve(bytes, FlushKind::FlushAll) {
        Ok(r) => r.bytes(),
        Err(PoolError::Closed) => 0,
        Err(e) => panic!("reserve({bytes}): {e}"),
    })
}

/// The reclaim worker's thread, bounded: it does at most `max` pieces of
/// work (in the pool's FIFO order) and stops early once the pool is
/// closed. Three full passes of the flush states would fail the waiters
/// with ENOSPC; `max` stays far below that, so the models' outcomes do
/// not depend on how far the flusher got.
pub fn flusher(p: &Arc<P>, max: usize) -> thread::JoinHandle<usize> {
    let p = Arc::clone(p);
    thread::spawn(move || {
        let mut done = 0;
        while done < max {
            let Some(w) = p.wait_work() else { break };
            p.work_done(w).expect("outstanding work");
            done += 1;
        }
        done
    })
}

/// Spin (yielding to the model checker) until `n` normal tickets wait.
pub fn wait_tickets(p: &P, n: usize) {
    while p.snapshot().normal_tickets < n {
        thread::yield_now();
    }
}

/// The outcome of a cancellable reservation: bytes held (0 for EINTR).
pub fn bytes_or_eintr(r: Result<u64, PoolError>) -> u64 {
    match r {
        Ok(b) => b,
        Err(PoolError::Ticket(TicketError::Eintr)) => 0,
        Err(e) => panic!("unexpected {e}"),
    }
}

/// Invariants 4 and 6 at the end of a model: every reservation returned,
/// no ticket left (granted or waiting), `may_use` back to the global
/// reserve alone.
pub fn assert_settled(p: &P) {
    let s = p.snapshot();
    assert_eq!(s.grants, 0, "granted bytes never returned (leak)");
    assert_eq!(s.normal_tickets + s.prio_tickets, 0, "ticket stranded");
    assert_eq!(s.reclaim_size, 0, "reclaim_size off");
    assert_eq!(s.space.may_use, MIB, "may_use leaked");
}

#[allow(unused_imports)] // each test file uses a subset
pub use iolab_verification::model;
