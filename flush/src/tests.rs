//! Exact unit tests: figures of the model's rules (sizing, space checks,
//! refs and reserves, tickets, handle ends, preemptive flushing) worked by
//! hand.

use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;

use super::*;
use crate::consts::*;

const KIB: u64 = 1024;
const U: u64 = 256 * KIB;

fn params() -> Params {
    Params {
        total: 1024 * MIB,
        used: 256 * MIB,
        unallocated: 0,
        global_rsv: 64 * MIB,
        ..Params::default()
    }
}

fn model(policy: Policy, params: Params) -> FlushModel {
    FlushModel::new(Config { policy, params }).expect("valid config")
}

/// Drain decisions, completing every job and commit at `now`, until none
/// is left. Returns everything seen, in order.
fn settle(fs: &mut FlushModel, now: u64) -> Vec<Decision> {
    let mut seen = Vec::new();
    while let Some(d) = fs.poll_decision() {
        seen.push(d);
        match d {
            Decision::RunRefs { job, .. } | Decision::Flush { job, .. } => {
                fs.on_work_done(now, job).expect("job outstanding");
            }
            Decision::CommitIo { txn, .. } => fs.on_commit_done(now, txn).expect("committing"),
            _ => {}
        }
    }
    seen
}

fn traces(fs: &mut FlushModel) -> Vec<TraceRecord> {
    let mut v = Vec::new();
    while let Some(r) = fs.poll_trace() {
        v.push(r);
    }
    v
}

fn open(fs: &mut FlushModel, now: u64, kind: HandleKind, items: u64) -> HandleId {
    match fs.on_handle_start(now, kind, items) {
        Ok(Start::Ready(h)) => h,
        other => panic!("handle must open at once, got {other:?}"),
    }
}

fn heads(n: u64) -> RefBatch {
    RefBatch {
        new_heads: n,
        refs: n,
        ..RefBatch::default()
    }
}

// ------------------------------------------------------------------
// Constants and sizing
// ------------------------------------------------------------------

#[test]
fn units_for_16k_nodes() {
    assert_eq!(insert_unit(DEFAULT_NODESIZE), 262_144);
    assert_eq!(update_unit(DEFAULT_NODESIZE), 131_072);
    assert_eq!(AVG_REF_RUNTIME_INIT_NS, 15_625_000);
    assert_eq!(pct(1000, 98), 980);
    assert_eq!(pct(u64::MAX, 100), u64::MAX);
}

#[test]
fn free_space_tree_doubles_head_bytes() {
    let mut p = Policy::on_demand();
    p.free_space_tree = true;
    let mut fs = model(p, params());
    let h = open(&mut fs, 0, HandleKind::Join, 0);
    fs.on_refs_added(1, h, heads(3)).unwrap();
    assert_eq!(fs.snapshot().delayed_refs.size, 6 * U);
}

// ------------------------------------------------------------------
// Overcommit, space checks, throttle, average
// ------------------------------------------------------------------

#[test]
fn overcommit_shares() {
    let s = Space {
        total: 1000,
        used: 900,
        unallocated: 800,
        profile_factor: 2,
        ..Space::default()
    };
    // unallocated/factor = 400; FlushAll gets 1/8 = 50, others 1/2 = 200.
    assert_eq!(s.avail(FlushKind::FlushAll), 50);
    assert_eq!(s.avail(FlushKind::FlushAllSteal), 200);
    assert_eq!(s.avail(FlushKind::NoFlush), 200);
    assert!(s.can_overcommit(149, FlushKind::FlushAll));
    assert!(!s.can_overcommit(150, FlushKind::FlushAll)); // strict <
    assert!(s.fits(100, FlushKind::FlushAll)); // fits in total exactly
    assert!(!s.fits(300, FlushKind::NoFlush));
    assert!(s.fits(299, FlushKind::NoFlush));
}

#[test]
fn space_check_rsv_and_global_low() {
    let dr = Rsv {
        size: 100,
        reserved: 30,
        full: false,
    };
    let g = Rsv {
        size: 100,
        reserved: 70,
        full: false,
    };
    assert!(space::check_space_rsv(&dr, &g)); // 100 >= 30 + 70
    let g2 = Rsv { reserved: 71, ..g };
    assert!(!space::check_space_rsv(&dr, &g2));
    assert!(space::global_low(&Rsv {
        size: 100,
        reserved: 49,
        full: false
    }));
    assert!(!space::global_low(&Rsv {
        size: 100,
        reserved: 50,
        full: false
    }));
}

#[test]
fn legacy_space_check_figures() {
    // 16 KiB nodes hold (16384 - 101) / 33 = 493 heads per leaf.
    assert_eq!(space::legacy_leaves(1000, 16384), 2);
    // need = (U + 1 leaf × 16 KiB) × 2 = 557 056 bytes.
    assert!(space::check_space_legacy(1000, 0, 0, false, 557_056, 16384));
    assert!(!space::check_space_legacy(
        1000, 0, 0, false, 557_057, 16384
    ));
    // A full space doubles it.
    assert!(space::check_space_legacy(
        1000, 0, 0, true, 1_114_112, 16384
    ));
    // Dirty block groups add U each.
    assert!(space::check_space_legacy(0, 0, 1, false, 3 * U, 16384));
}

#[test]
fn throttle_levels_and_average() {
    let avg = AVG_REF_RUNTIME_INIT_NS;
    assert_eq!(space::throttle_level(64, avg, false), 1); // 64 × 15.625 ms = 1 s
    assert_eq!(space::throttle_level(63, avg, false), 2);
    assert_eq!(space::throttle_level(32, avg, false), 2); // 0.5 s
    assert_eq!(space::throttle_level(31, avg, false), 0);
    assert_eq!(space::throttle_level(31, avg, true), 1);
    assert_eq!(space::avg_update(15_625_000, 1_000_000), 11_968_750);
}

// ------------------------------------------------------------------
// Refs and reserves
// ------------------------------------------------------------------

#[test]
fn refs_grow_rsv_size_not_reserved() {
    let mut fs = model(Policy::on_demand(), params());
    let before = fs.may_use();
    let h = open(&mut fs, 0, HandleKind::Join, 0);
    fs.on_refs_added(
        1,
        h,
        RefBatch {
            new_heads: 4,
            refs: 6,
            ..RefBatch::default()
        },
    )
    .unwrap();
    let s = fs.snapshot();
    assert_eq!(s.delayed_refs.size, 4 * U);
    assert_eq!(s.delayed_refs.reserved, 0);
    assert!(!s.delayed_refs.full);
    assert_eq!(s.refs.entries(), 10);
    assert_eq!(fs.may_use(), before);
}

#[test]
fn cancel_annihilates_pairs() {
    let mut fs = model(Policy::on_demand(), params());
    let h = open(&mut fs, 0, HandleKind::Join, 0);
    fs.on_refs_added(
        1,
        h,
        RefBatch {
            new_heads: 1,
            refs: 3,
            ..RefBatch::default()
        },
    )
    .unwrap();
    fs.on_refs_added(
        2,
        h,
        RefBatch {
            cancelled: 2,
            ..RefBatch::default()
        },
    )
    .unwrap();
    let q = fs.snapshot().refs;
    assert_eq!(
        (q.ready_refs, q.created_refs, q.annihilated, q.entries()),
        (1, 5, 4, 2)
    );
    assert_eq!(
        fs.on_refs_added(
            3,
            h,
            RefBatch {
                cancelled: 2,
                ..RefBatch::default()
            }
        ),
        Err(Error::NothingToCancel)
    );
    let mut fs2 = model(Policy::on_demand(), params());
    let h2 = open(&mut fs2, 0, HandleKind::Join, 0);
    assert_eq!(
        fs2.on_refs_added(
            1,
            h2,
            RefBatch {
                refs: 1,
                ..RefBatch::default()
            }
        ),
        Err(Error::RefsWithoutHead)
    );
}

#[test]
fn start_reserves_twice_and_release_backfills_delayed_refs() {
    let mut fs = model(Policy::on_demand(), params());
    let g = 64 * MIB;
    // The delayed-ref reserve is empty-and-full (0/0) at first: no extra.
    let h = open(&mut fs, 0, HandleKind::Start, 2);
    assert_eq!(fs.may_use(), g + 2 * U);
    assert_eq!(fs.snapshot().trans.reserved, 2 * U);
    fs.on_refs_added(1, h, heads(3)).unwrap();
    assert_eq!(fs.snapshot().delayed_refs.size, 3 * U);
    // End: the unused 2 U leave the trans reserve and fill 2 U of the
    // delayed-ref deficit of 3 U; nothing leaves may_use.
    assert_eq!(fs.on_handle_end(2, h, false), Ok(End::Done));
    let s = fs.snapshot();
    assert_eq!((s.trans.size, s.trans.reserved), (0, 0));
    assert_eq!(s.delayed_refs.reserved, 2 * U);
    assert_eq!(fs.may_use(), g + 2 * U);
    // Now the reserve is short: a 1-item start reserves 2 × U, U goes to
    // the trans reserve, U fills the last U of the deficit.
    let h2 = open(&mut fs, 3, HandleKind::Start, 1);
    let s = fs.snapshot();
    assert_eq!(s.trans.reserved, U);
    assert_eq!(s.delayed_refs.reserved, 3 * U);
    assert!(s.delayed_refs.full);
    assert_eq!(fs.may_use(), g + 4 * U);
    fs.on_handle_end(4, h2, false).unwrap();
    // Nothing to back-fill: U leaves may_use.
    assert_eq!(fs.may_use(), g + 3 * U);
}

#[test]
fn zero_item_start_refills_one_head() {
    let mut fs = model(Policy::on_demand(), params());
    let h = open(&mut fs, 0, HandleKind::Join, 0);
    fs.on_refs_added(1, h, heads(5)).unwrap();
    fs.on_handle_end(2, h, false).unwrap();
    let h2 = open(&mut fs, 3, HandleKind::Start, 0);
    assert_eq!(fs.snapshot().delayed_refs.reserved, U);
    assert_eq!(fs.snapshot().trans.reserved, 0);
    fs.on_handle_end(4, h2, false).unwrap();
    assert_eq!(fs.snapshot().delayed_refs.reserved, U);
}

#[test]
fn running_heads_pins_meta_and_releases_head_bytes() {
    let mut p = params();
    p.meta_per_head = 16 * KIB;
    p.c_head_ns = 20_000;
    p.c_ref_ns = 5_000;
    let mut fs = model(Policy::on_demand_2021(), p);
    let h = open(&mut fs, 0, HandleKind::Start, 4);
    fs.on_refs_added(
        1,
        h,
        RefBatch {
            new_heads: 2,
            refs: 5,
            ..RefBatch::default()
        },
    )
    .unwrap();
    fs.on_handle_end(2, h, false).unwrap();
    // 4 U unused went to the 2 U deficit, 2 U left may_use.
    assert_eq!(fs.snapshot().delayed_refs.reserved, 2 * U);
    // Commit at 30 s: pre-flush runs both heads (heads present).
    fs.on_timer(30 * SEC);
    let d = fs.poll_decision();
    let Some(Decision::RunRefs {
        job,
        actor,
        heads,
        refs,
        cpu_ns,
        meta_bytes,
    }) = d
    else {
        panic!("expected the pre-flush, got {d:?}");
    };
    assert_eq!((actor, heads, refs), (Actor::Commit, 2, 5));
    assert_eq!(cpu_ns, 2 * 20_000 + 5 * 5_000);
    assert_eq!(meta_bytes, 32 * KIB);
    fs.on_work_done(30 * SEC + cpu_ns, job).unwrap();
    let s = fs.snapshot();
    assert_eq!(s.space.pinned, 32 * KIB);
    // 2 U − 32 KiB used, then size drops by 2 U: the reserve is 0/0.
    assert_eq!((s.delayed_refs.size, s.delayed_refs.reserved), (0, 0));
    assert_eq!(fs.may_use(), 64 * MIB);
    let d = fs.poll_decision();
    assert_eq!(
        d,
        Some(Decision::CommitIo {
            txn: 1,
            meta_bytes: 32 * KIB
        })
    );
    fs.on_commit_done(31 * SEC, 1).unwrap();
    let s = fs.snapshot();
    assert_eq!(
        (s.space.pinned, s.commits, s.completed_txn, s.txn),
        (0, 1, 1, None)
    );
    let t = traces(&mut fs);
    assert!(t.contains(&TraceRecord::CommitDone {
        now: 31 * SEC,
        txn: 1,
        unpinned: 32 * KIB,
        duration_ns: SEC,
    }));
}

#[test]
fn run_calls_never_split_a_head_and_chunk() {
    let mut p = params();
    p.chunk_heads = 2;
    let mut fs = model(Policy::on_demand(), p);
    let h = open(&mut fs, 0, HandleKind::Join, 0);
    fs.on_refs_added(
        0,
        h,
        RefBatch {
            new_heads: 5,
            refs: 12,
            ..RefBatch::default()
        },
    )
    .unwrap();
    fs.on_handle_end(0, h, false).unwrap();
    fs.on_timer(30 * SEC);
    // run(0) before 5.12: 2 × 17 entries = 34 units covers everything,
    // in chunks of two heads: refs 3+3, 2+2, 2 (shared out evenly).
    let mut got = Vec::new();
    while let Some(d) = fs.poll_decision() {
        if let Decision::RunRefs {
            job, heads, refs, ..
        } = d
        {
            got.push((heads, refs));
            fs.on_work_done(30 * SEC, job).unwrap();
        } else if let Decision::CommitIo { txn, .. } = d {
            fs.on_commit_done(30 * SEC, txn).unwrap();
        }
    }
    assert_eq!(got, [(2, 6), (2, 4), (1, 2)]);
    let q = fs.snapshot().refs;
    assert_eq!((q.run_heads, q.run_refs, q.entries()), (5, 12, 0));
}

// ------------------------------------------------------------------
// Tickets
// ------------------------------------------------------------------

/// On-demand 2019 without the preemptive trigger, so ticket tests see only
/// the ticket worker.
fn od() -> Policy {
    Policy {
        preempt: Preempt::Off,
        ..Policy::on_demand()
    }
}

/// A space where only `room` bytes fit: no overcommit, no chunks.
fn tight(policy: Policy, room: u64) -> FlushModel {
    let p = Params {
        total: 64 * MIB + 16 * MIB + room,
        used: 16 * MIB,
        unallocated: 0,
        global_rsv: 64 * MIB,
        ..Params::default()
    };
    model(policy, p)
}

#[test]
fn fifo_head_of_line_and_priority_jump() {
    let mut fs = tight(od(), 100);
    assert_eq!(
        fs.on_reserve(0, 1, 60, FlushKind::FlushAll),
        Ok(Reserve::Granted)
    );
    let Ok(Reserve::Queued(t2)) = fs.on_reserve(1, 2, 50, FlushKind::FlushAll) else {
        panic!()
    };
    // 30 would fit, but a normal ticket waits: FIFO.
    let Ok(Reserve::Queued(t3)) = fs.on_reserve(2, 3, 30, FlushKind::FlushAll) else {
        panic!()
    };
    // NoFlush neither jumps nor tickets.
    assert_eq!(
        fs.on_reserve(3, 4, 10, FlushKind::NoFlush),
        Ok(Reserve::Failed(TicketError::Enospc))
    );
    // A priority reserver jumps normal tickets.
    assert_eq!(
        fs.on_reserve(4, 5, 30, FlushKind::FlushLimit),
        Ok(Reserve::Granted)
    );
    // Emergency ignores may_use: 16 MiB used of 80 MiB + 100.
    assert_eq!(
        fs.on_reserve(5, 6, MIB, FlushKind::FlushEmergency),
        Ok(Reserve::Granted)
    );
    fs.on_release(6, MIB).unwrap();
    // The reclaim worker started at the first ticket (to_reclaim = its
    // 50 bytes) and hands out its first state.
    let d = fs.poll_decision();
    assert!(matches!(
        d,
        Some(Decision::Flush {
            actor: Actor::Reclaim,
            state: FlushState::DelayedItemsNr,
            bytes: 50,
            ..
        })
    ));
    // Releasing 60 leaves 30 (the priority grant) + 50 = 80: t2 fits, and
    // t3 (30) would make 110 > 100.
    fs.on_release(7, 60).unwrap();
    let Some(Decision::Grant {
        ticket,
        owner,
        bytes,
        waited_ns,
    }) = fs.poll_decision()
    else {
        panic!()
    };
    assert_eq!((ticket, owner, bytes, waited_ns), (t2, 2, 50, 6));
    assert_eq!(fs.poll_decision(), None);
    fs.on_release(8, 30).unwrap();
    let Some(Decision::Grant { ticket, .. }) = fs.poll_decision() else {
        panic!()
    };
    assert_eq!(ticket, t3);
    assert_eq!(fs.snapshot().reclaim_size, 0);
}

#[test]
fn interrupt_removes_waiting_ticket_and_keeps_grants() {
    let mut fs = tight(od(), 100);
    fs.on_reserve(0, 1, 100, FlushKind::FlushAll).unwrap();
    let Ok(Reserve::Queued(t)) = fs.on_reserve(1, 2, 50, FlushKind::FlushAll) else {
        panic!()
    };
    let Ok(Reserve::Queued(t2)) = fs.on_reserve(1, 3, 40, FlushKind::FlushAll) else {
        panic!()
    };
    assert_eq!(fs.on_interrupt(2, t), Ok(Interrupted::Removed));
    let d: Vec<_> = core::iter::from_fn(|| fs.poll_decision()).collect();
    assert!(d.contains(&Decision::Fail {
        ticket: t,
        owner: 2,
        error: TicketError::Eintr,
        waited_ns: 1
    }));
    assert_eq!(fs.snapshot().reclaim_size, 40);
    // No re-grant pass on interruption; the next release grants t2.
    fs.on_release(3, 40).unwrap();
    let d: Vec<_> = core::iter::from_fn(|| fs.poll_decision()).collect();
    assert!(
        d.iter()
            .any(|x| matches!(x, Decision::Grant { ticket, .. } if *ticket == t2))
    );
    assert_eq!(fs.on_interrupt(4, t2), Ok(Interrupted::AlreadyResolved));
    assert_eq!(
        fs.on_interrupt(4, TicketId(99)),
        Err(Error::UnknownTicket(TicketId(99)))
    );
    assert_eq!(fs.snapshot().grants, 100);
}

#[test]
fn normal_ticket_fails_after_three_passes() {
    let mut fs = tight(od(), 100);
    fs.on_reserve(0, 1, 100, FlushKind::FlushAll).unwrap();
    let Ok(Reserve::Queued(t)) = fs.on_reserve(1, 2, 50, FlushKind::FlushAll) else {
        panic!()
    };
    let seen = settle(&mut fs, 2);
    assert!(seen.contains(&Decision::Fail {
        ticket: t,
        owner: 2,
        error: TicketError::Enospc,
        waited_ns: 1
    }));
    let tr = traces(&mut fs);
    let commits = tr
        .iter()
        .filter(|r| {
            matches!(
                r,
                TraceRecord::Flush {
                    state: FlushState::CommitTrans,
                    ..
                }
            )
        })
        .count();
    let flushes = tr
        .iter()
        .filter(|r| matches!(r, TraceRecord::Flush { .. }))
        .count();
    // Three passes over the 8 states of 5.0, each ending in COMMIT_TRANS
    // (declined by may_commit: nothing pinned).
    assert_eq!((commits, flushes), (3, 24));
    assert_eq!(
        tr.iter()
            .filter(|r| matches!(r, TraceRecord::CommitDeclined { need: 50, .. }))
            .count(),
        3
    );
    assert!(!fs.snapshot().flush_active);
}

#[test]
fn fail_front_lets_smaller_tickets_through() {
    let mut fs = tight(od(), 100);
    fs.on_reserve(0, 1, 70, FlushKind::FlushAll).unwrap();
    let Ok(Reserve::Queued(big)) = fs.on_reserve(1, 2, 50, FlushKind::FlushAll) else {
        panic!()
    };
    let Ok(Reserve::Queued(small)) = fs.on_reserve(1, 3, 30, FlushKind::FlushAll) else {
        panic!()
    };
    let seen = settle(&mut fs, 2);
    let outcome: Vec<_> = seen
        .iter()
        .filter_map(|d| match d {
            Decision::Grant { ticket, .. } => Some((*ticket, true)),
            Decision::Fail { ticket, .. } => Some((*ticket, false)),
            _ => None,
        })
        .collect();
    assert_eq!(outcome, [(big, false), (small, true)]);
}

#[test]
fn steal_from_global_keeps_floor() {
    let mut fs = tight(od(), 100);
    fs.on_reserve(0, 1, 100, FlushKind::FlushAll).unwrap();
    let Ok(Reserve::Queued(t)) = fs.on_reserve(1, 2, MIB, FlushKind::FlushAllSteal) else {
        panic!()
    };
    let seen = settle(&mut fs, 2);
    assert!(seen.contains(&Decision::Grant {
        ticket: t,
        owner: 2,
        bytes: MIB,
        waited_ns: 1
    }));
    let s = fs.snapshot();
    assert_eq!(s.global.reserved, 63 * MIB);
    assert_eq!(s.grants, 100 + MIB);
    assert_eq!(s.space.may_use, 64 * MIB + 100);
    // Refilled at the next commit.
    let t = traces(&mut fs);
    assert!(
        t.iter()
            .any(|r| matches!(r, TraceRecord::TicketGranted { stolen: true, .. }))
    );
}

#[test]
fn priority_ticket_walks_its_list_then_fails() {
    let mut fs = tight(od(), 100);
    fs.on_reserve(0, 1, 100, FlushKind::FlushAll).unwrap();
    let Ok(Reserve::Queued(t)) = fs.on_reserve(1, 2, 50, FlushKind::FlushLimit) else {
        panic!()
    };
    let seen = settle(&mut fs, 2);
    let states: Vec<_> = seen
        .iter()
        .filter_map(|d| match d {
            Decision::Flush {
                actor: Actor::Priority(x),
                state,
                ..
            } if *x == t => Some(*state),
            _ => None,
        })
        .collect();
    // ALLOC_CHUNK is the core's own work; the two item states are the caller's.
    assert_eq!(
        states,
        [FlushState::DelayedItemsNr, FlushState::DelayedItems]
    );
    assert!(seen.contains(&Decision::Fail {
        ticket: t,
        owner: 2,
        error: TicketError::Enospc,
        waited_ns: 1
    }));
}

#[test]
fn abort_fails_everything() {
    let mut fs = tight(od(), 100);
    fs.on_reserve(0, 1, 100, FlushKind::FlushAll).unwrap();
    let Ok(Reserve::Queued(a)) = fs.on_reserve(1, 2, 50, FlushKind::FlushAll) else {
        panic!()
    };
    fs.on_abort(2);
    let d: Vec<_> = core::iter::from_fn(|| fs.poll_decision()).collect();
    assert!(d.contains(&Decision::Fail {
        ticket: a,
        owner: 2,
        error: TicketError::Aborted,
        waited_ns: 1
    }));
    assert_eq!(
        fs.on_reserve(3, 3, 1, FlushKind::FlushAll),
        Ok(Reserve::Failed(TicketError::Aborted))
    );
    fs.on_release(4, 100).unwrap();
    assert_eq!(fs.snapshot().normal_tickets, 0);
}

#[test]
fn chunk_allocation_grants() {
    let p = Params {
        total: 64 * MIB + 16 * MIB + 100,
        used: 16 * MIB,
        unallocated: 256 * MIB,
        chunk_size: 256 * MIB,
        global_rsv: 64 * MIB,
        ..Params::default()
    };
    // 5.0: ALLOC_CHUNK without force needs used (not may_use) near 80 %;
    // the ticket fails after three passes.
    let mut fs = model(od(), p);
    // 256 MiB unallocated: FlushAll may overcommit up to 32 MiB.
    assert_eq!(
        fs.on_reserve(0, 1, 32 * MIB, FlushKind::FlushAll),
        Ok(Reserve::Granted)
    );
    let Ok(Reserve::Queued(t)) = fs.on_reserve(1, 2, 100, FlushKind::FlushAll) else {
        panic!()
    };
    let seen = settle(&mut fs, 2);
    assert!(
        seen.iter()
            .any(|d| matches!(d, Decision::Fail { ticket, .. } if *ticket == t))
    );
    assert_eq!(fs.snapshot().space.total, p.total);
    // Current list: ALLOC_CHUNK_FORCE after the first commit cycle.
    let mut fs = model(Policy::on_demand_2021(), p);
    assert_eq!(
        fs.on_reserve(0, 1, 32 * MIB, FlushKind::FlushAll),
        Ok(Reserve::Granted)
    );
    let Ok(Reserve::Queued(t)) = fs.on_reserve(1, 2, 100, FlushKind::FlushAll) else {
        panic!()
    };
    let seen = settle(&mut fs, 2);
    assert!(
        seen.iter()
            .any(|d| matches!(d, Decision::Grant { ticket, .. } if *ticket == t))
    );
    let s = fs.snapshot();
    assert_eq!(
        (s.space.total, s.space.unallocated),
        (p.total + 256 * MIB, 0)
    );
    let tr = traces(&mut fs);
    assert!(tr.contains(&TraceRecord::ChunkAlloc {
        now: 2,
        bytes: 256 * MIB
    }));
}

// ------------------------------------------------------------------
// Catch-up and on-demand handle ends
// ------------------------------------------------------------------

/// Short on delayed-ref reserve: 400 heads × U = 100 MiB ≥ 0 + 64 MiB.
fn make_short(fs: &mut FlushModel, now: u64) -> HandleId {
    let h = open(fs, now, HandleKind::Join, 0);
    fs.on_refs_added(now, h, heads(400)).unwrap();
    h
}

#[test]
fn on_demand_end_never_blocks_or_runs() {
    let mut fs = model(Policy::on_demand(), params());
    let h = make_short(&mut fs, 0);
    assert!(fs.check_space());
    assert_eq!(fs.on_handle_end(1, h, true), Ok(End::Done));
    assert_eq!(fs.snapshot().txn, Some((1, TxnState::Running)));
    assert_eq!(fs.poll_decision(), None);
    assert_eq!(fs.snapshot().refs.ready_heads, 400);
}

#[test]
fn catch_up_end_blocks_and_kthread_commits() {
    let mut fs = model(Policy::catch_up(), params());
    let h = make_short(&mut fs, 0);
    let waiter = open(&mut fs, 0, HandleKind::Start, 0);
    assert_eq!(fs.on_handle_end(1, h, false), Ok(End::Done));
    // Blocked and a commit started at once: pre-flush of 2 × 800 units.
    assert_eq!(fs.snapshot().txn, Some((1, TxnState::Blocked)));
    let t = traces(&mut fs);
    assert!(t.contains(&TraceRecord::TxnBlocked { now: 1, txn: 1 }));
    assert!(t.contains(&TraceRecord::CommitStart {
        now: 1,
        txn: 1,
        source: CommitSource::Kthread
    }));
    // A new Start handle waits while blocked; a Join does not.
    let Ok(Start::Wait {
        handle: w,
        ticket: None,
    }) = fs.on_handle_start(2, HandleKind::Start, 0)
    else {
        panic!()
    };
    let j = open(&mut fs, 2, HandleKind::Join, 0);
    fs.on_handle_end(3, j, false).unwrap();
    fs.on_handle_end(3, waiter, false).unwrap();
    let seen = settle(&mut fs, 4);
    assert!(seen.contains(&Decision::CommitIo {
        txn: 1,
        meta_bytes: 400 * 4096
    }));
    assert!(seen.contains(&Decision::HandleReady { handle: w }));
    assert_eq!(fs.snapshot().txn, Some((2, TxnState::Running)));
    assert_eq!(fs.snapshot().commits, 1);
}

#[test]
fn catch_up_throttle_end_commits_itself() {
    let mut fs = model(Policy::catch_up(), params());
    let h = make_short(&mut fs, 0);
    assert_eq!(fs.on_handle_end(1, h, true), Ok(End::Wait(h)));
    let seen = settle(&mut fs, 2);
    assert_eq!(seen.last(), Some(&Decision::HandleReleased { handle: h }));
    assert_eq!(fs.on_handle_end(3, h, false), Err(Error::UnknownHandle(h)));
}

#[test]
fn join_nolock_never_blocks() {
    let mut fs = model(Policy::catch_up(), params());
    let h = open(&mut fs, 0, HandleKind::JoinNoLock, 0);
    fs.on_refs_added(0, h, heads(400)).unwrap();
    fs.on_handle_end(1, h, true).unwrap();
    assert_eq!(fs.snapshot().txn, Some((1, TxnState::Running)));
}

#[test]
fn legacy_throttle_queues_catch_up_batch() {
    let mut fs = model(Policy::catch_up_legacy(), params());
    // 40 entries × 15.625 ms = 0.625 s: level 2, fire and forget; the
    // global reserve (64 MiB) covers the legacy need.
    let h = open(&mut fs, 0, HandleKind::Join, 0);
    fs.on_refs_added(
        0,
        h,
        RefBatch {
            new_heads: 20,
            refs: 20,
            ..RefBatch::default()
        },
    )
    .unwrap();
    assert_eq!(fs.should_throttle(), 2);
    assert_eq!(fs.on_handle_end(1, h, false), Ok(End::Done));
    let d = fs.poll_decision();
    // max(20 updates, 32) = 32 units: 16 heads of 1 ref each.
    let Some(Decision::RunRefs {
        actor: Actor::RefWorker,
        heads,
        refs,
        job,
        ..
    }) = d
    else {
        panic!("{d:?}")
    };
    assert_eq!((heads, refs), (16, 16));
    fs.on_work_done(1 + 100_000_000, job).unwrap();
    // avg = (3 × 15.625 ms + 100 ms) / 4
    assert_eq!(fs.snapshot().avg_ref_ns, 36_718_750);
    // 8 entries × 36.7 ms = 0.29 s: level 0 now.
    assert_eq!(fs.should_throttle(), 0);
}

#[test]
fn legacy_level_one_waits_for_batch() {
    let mut fs = model(Policy::catch_up_legacy(), params());
    let h = open(&mut fs, 0, HandleKind::Join, 0);
    fs.on_refs_added(
        0,
        h,
        RefBatch {
            new_heads: 40,
            refs: 40,
            ..RefBatch::default()
        },
    )
    .unwrap();
    assert_eq!(fs.should_throttle(), 1);
    assert_eq!(fs.on_handle_end(1, h, false), Ok(End::Wait(h)));
    let seen = settle(&mut fs, 2);
    assert_eq!(seen.last(), Some(&Decision::HandleReleased { handle: h }));
    // An Attach handle at level 1 is downgraded to async.
    let a = open(&mut fs, 3, HandleKind::Join, 0);
    fs.on_refs_added(
        3,
        a,
        RefBatch {
            new_heads: 80,
            refs: 80,
            ..RefBatch::default()
        },
    )
    .unwrap();
    fs.on_handle_end(3, a, false).unwrap();
    let b = open(&mut fs, 4, HandleKind::Attach, 0);
    assert_eq!(fs.should_throttle(), 1);
    assert_eq!(fs.on_handle_end(5, b, false), Ok(End::Done));
}

// ------------------------------------------------------------------
// Preemptive flushing
// ------------------------------------------------------------------

#[test]
fn need_preempt_2021_figures() {
    let p = Params {
        total: 1024 * MIB,
        used: 256 * MIB,
        unallocated: 0,
        global_rsv: 64 * MIB,
        ..Params::default()
    };
    let mut fs = model(Policy::on_demand_2021(), p);
    // flushable − global must exceed 128 MiB.
    fs.on_reserve(0, 1, 128 * MIB, FlushKind::FlushAll).unwrap();
    assert!(!fs.need_preempt());
    // Free = 1024 − 256 − 64 = 704 MiB; >> clamp 1 = 352 MiB. With no
    // delalloc reported, only the delayed reserves count (0): no.
    fs.on_reserve(1, 1, MIB, FlushKind::FlushAll).unwrap();
    assert!(!fs.need_preempt());
    // Delalloc-heavy: x = may_use − global = 129 MiB < 352 MiB.
    fs.on_writeback(2, 100 * MIB, 0);
    assert!(!fs.need_preempt());
    fs.on_reserve(3, 1, 223 * MIB, FlushKind::FlushAll).unwrap();
    // x = 352 MiB ≥ 352 MiB: the preemptive worker ran delalloc.
    let d = fs.poll_decision();
    assert!(
        matches!(d, Some(Decision::Flush { actor: Actor::Preempt, state: FlushState::Delalloc, bytes, .. }) if bytes == 88 * MIB),
        "{d:?}"
    );
}

#[test]
fn weak_2019_runs_one_state_then_stops() {
    let p = Params {
        total: 100 * MIB,
        used: 16 * MIB,
        unallocated: 0,
        global_rsv: 16 * MIB,
        ncpu: 4,
        ..Params::default()
    };
    let mut fs = model(Policy::on_demand(), p);
    // used_all = 32 MiB + 66 MiB = 98 MiB = 98 % of total.
    fs.on_reserve(0, 1, 66 * MIB, FlushKind::FlushAll).unwrap();
    // 4 MiB (4 CPUs) cannot overcommit but 1 MiB can: to_reclaim =
    // used_all − 95 % = 3 MiB.
    let d = fs.poll_decision();
    let Some(Decision::Flush {
        job,
        actor: Actor::Reclaim,
        state: FlushState::DelayedItemsNr,
        bytes,
        ..
    }) = d
    else {
        panic!("{d:?}")
    };
    assert_eq!(bytes, 98 * MIB - pct(100 * MIB, 95));
    assert_eq!(bytes, 3 * MIB);
    fs.on_work_done(1, job).unwrap();
    assert_eq!(fs.poll_decision(), None);
    assert!(!fs.snapshot().flush_active);
}

#[test]
fn clamp_rises_when_delalloc_heavy_writers_make_tickets() {
    let mut fs = tight(Policy::on_demand_2021(), 100);
    fs.on_writeback(0, 10, 0);
    fs.on_reserve(0, 1, 100, FlushKind::FlushAll).unwrap();
    fs.on_reserve(1, 2, 50, FlushKind::FlushAll).unwrap();
    assert_eq!(fs.snapshot().clamp, 2);
    // Ordered ≥ delalloc: no bump for the next ticket run.
    let mut fs = tight(Policy::on_demand_2021(), 100);
    fs.on_writeback(0, 10, 10);
    fs.on_reserve(0, 1, 100, FlushKind::FlushAll).unwrap();
    fs.on_reserve(1, 2, 50, FlushKind::FlushAll).unwrap();
    assert_eq!(fs.snapshot().clamp, 1);
}

// ------------------------------------------------------------------
// Commit interval, deadlines, errors
// ------------------------------------------------------------------

#[test]
fn kthread_commits_after_thirty_seconds() {
    let mut fs = model(Policy::on_demand(), params());
    let h = open(&mut fs, 2 * SEC, HandleKind::Join, 0);
    fs.on_handle_end(2 * SEC, h, false).unwrap();
    let mut t = 0;
    while t < 30 * SEC {
        t = fs.next_deadline().unwrap();
        fs.on_timer(t);
        if t < 35 * SEC {
            assert_eq!(fs.snapshot().commits, 0);
        }
        let _ = settle(&mut fs, t);
    }
    // Started at 2 s: age reaches 30 s at the 35 s tick.
    t = fs.next_deadline().unwrap();
    assert_eq!(t, 35 * SEC);
    fs.on_timer(t);
    settle(&mut fs, t);
    assert_eq!(fs.snapshot().commits, 1);
}

#[test]
fn event_errors_are_typed() {
    let mut fs = model(Policy::on_demand(), params());
    assert_eq!(
        fs.on_reserve(0, 1, 0, FlushKind::FlushAll),
        Err(Error::ZeroBytes)
    );
    assert_eq!(
        fs.on_release(0, 5),
        Err(Error::ReleaseExceedsGrants { bytes: 5, held: 0 })
    );
    assert_eq!(
        fs.on_work_done(0, JobId(3)),
        Err(Error::UnknownJob(JobId(3)))
    );
    assert_eq!(fs.on_commit_done(0, 1), Err(Error::NotCommitting(1)));
    assert_eq!(
        fs.on_handle_start(0, HandleKind::Attach, 0),
        Ok(Start::NoTransaction)
    );
    assert_eq!(
        Error::ZeroBytes.to_string(),
        "a reservation or release of 0 bytes"
    );
    let bad = Config {
        params: Params {
            nodesize: 5000,
            ..params()
        },
        ..Config::default()
    };
    assert_eq!(
        FlushModel::new(bad).err(),
        Some(ConfigError::NodeSize(5000))
    );
    let small = Config {
        params: Params {
            total: MIB,
            ..params()
        },
        ..Config::default()
    };
    assert_eq!(
        FlushModel::new(small).err(),
        Some(ConfigError::TooSmall {
            needed: 320 * MIB,
            total: MIB
        })
    );
}

#[test]
fn handle_table_capacity_is_an_error() {
    let p = Params {
        max_handles: 2,
        ..params()
    };
    let mut fs = model(Policy::on_demand(), p);
    open(&mut fs, 0, HandleKind::Join, 0);
    open(&mut fs, 0, HandleKind::Join, 0);
    assert_eq!(
        fs.on_handle_start(0, HandleKind::Join, 0),
        Err(Error::HandleTableFull)
    );
}

// ------------------------------------------------------------------
// Knobs
// ------------------------------------------------------------------

#[test]
fn named_variants_parse() {
    assert_eq!(parse_policy("flush=catch-up"), Ok(Policy::catch_up()));
    assert_eq!(parse_policy("on-demand"), Ok(Policy::on_demand()));
    assert_eq!(
        parse_policy("flush=on-demand:preempt=2021"),
        Ok(Policy::on_demand_2021())
    );
    assert_eq!(
        parse_policy("flush=catch-up:run-at-end=on"),
        Ok(Policy::catch_up_legacy())
    );
    let p = parse_policy("flush=on-demand:preempt=2021:full=98:commit=gate").unwrap();
    assert_eq!(
        (p.preempt_full_pct, p.commit_gate, p.preempt),
        (98, true, Preempt::Clamped2021)
    );
}

#[test]
fn knob_errors_name_the_knob() {
    assert_eq!(
        parse_policy("flush=lazy"),
        Err(KnobError::UnknownPolicy("lazy".to_string()))
    );
    let e = parse_policy("flush=on-demand:preempt=2020").unwrap_err();
    assert_eq!(
        e.to_string(),
        "flush: preempt: `2020` is invalid (expected `off`, `2019` or `2021`)"
    );
    let e = parse_policy("flush=on-demand:run-at-end=on").unwrap_err();
    assert_eq!(
        e.to_string(),
        "flush: run-at-end: only valid for `catch-up`"
    );
    assert_eq!(
        parse_policy("flush=catch-up:turbo=1"),
        Err(KnobError::UnknownKnob("turbo".to_string()))
    );
    assert_eq!(
        parse_policy("flush=catch-up:fst"),
        Err(KnobError::MissingValue("fst".to_string()))
    );
    assert!(matches!(
        parse_policy("flush=catch-up:full=0"),
        Err(KnobError::BadValue { .. })
    ));
}

#[test]
fn canonical_names_round_trip() {
    for name in [
        "flush=catch-up",
        "flush=on-demand",
        "flush=on-demand:preempt=2021",
        "flush=catch-up:run-at-end=on",
        "flush=on-demand:preempt=off",
        "flush=on-demand:preempt=2021:commit=gate:full=98",
        "flush=catch-up:preflush=heads:states=current:fst=on",
    ] {
        let p = parse_policy(name).unwrap();
        assert_eq!(format!("{p}"), name);
        assert_eq!(parse_policy(&format!("{p}")), Ok(p));
    }
}

/// Before 5.12 the commit pre-flush (`2 × entries` units) also
/// runs heads added while it runs; from 5.12 it stops at the heads present.
#[test]
fn preflush_chases_new_heads_only_before_5_12() {
    for (policy, left_for_run_all) in [(Policy::on_demand(), 0), (Policy::on_demand_2021(), 2)] {
        let p = Params {
            chunk_heads: 1,
            ..params()
        };
        let mut fs = model(policy, p);
        let h = open(&mut fs, 0, HandleKind::Join, 0);
        fs.on_refs_added(0, h, heads(2)).unwrap();
        fs.on_timer(30 * SEC);
        let Some(Decision::RunRefs { job, .. }) = fs.poll_decision() else {
            panic!()
        };
        // A producer adds two heads while the first head runs.
        fs.on_refs_added(30 * SEC, h, heads(2)).unwrap();
        fs.on_work_done(30 * SEC + 1, job).unwrap();
        let mut preflush = 1;
        while let Some(Decision::RunRefs { job, .. }) = fs.poll_decision() {
            preflush += 1;
            fs.on_work_done(30 * SEC + 2, job).unwrap();
        }
        // The pre-flush is over: the commit waits for the open handle.
        assert_eq!(
            fs.snapshot().txn,
            Some((1, TxnState::CommitDoing)),
            "{policy}"
        );
        assert_eq!(fs.snapshot().refs.ready_heads, left_for_run_all, "{policy}");
        assert_eq!(preflush, 4 - left_for_run_all, "{policy}");
        fs.on_handle_end(30 * SEC + 3, h, false).unwrap();
        let seen = settle(&mut fs, 30 * SEC + 4);
        assert_eq!(fs.snapshot().refs.run_heads, 4, "{policy}");
        assert!(
            seen.iter()
                .any(|d| matches!(d, Decision::CommitIo { txn: 1, .. }))
        );
    }
}

#[test]
fn absurd_inputs_are_refused_not_panicking() {
    let mut fs = model(Policy::on_demand(), params());
    assert_eq!(
        fs.on_reserve(0, 1, u64::MAX, FlushKind::FlushAll),
        Err(Error::TooLarge(u64::MAX))
    );
    assert_eq!(
        fs.on_handle_start(0, HandleKind::Start, u64::MAX),
        Err(Error::TooLarge(u64::MAX))
    );
    let h = open(&mut fs, 0, HandleKind::Join, 0);
    let huge = RefBatch {
        new_heads: 1 << 41,
        ..RefBatch::default()
    };
    assert_eq!(fs.on_refs_added(0, h, huge), Err(Error::TooLarge(1 << 41)));
    // The largest accepted reservation queues a ticket (it never fits).
    assert!(matches!(
        fs.on_reserve(0, 1, MAX_BYTES, FlushKind::FlushAll),
        Ok(Reserve::Queued(_))
    ));
    let cfg = Config {
        params: Params {
            total: u64::MAX,
            ..params()
        },
        ..Config::default()
    };
    assert_eq!(
        FlushModel::new(cfg).err(),
        Some(ConfigError::TooLarge("total"))
    );
    let s = Space {
        total: 10,
        profile_factor: 0,
        unallocated: 100,
        used: u64::MAX,
        ..Space::default()
    };
    assert_eq!(s.avail(FlushKind::FlushAll), 0);
    assert!(!s.fits(u64::MAX, FlushKind::NoFlush));
    assert_eq!(space::legacy_leaves(u64::MAX, 50), 0);
}

// ------------------------------------------------------------------
// Regressions found in review
// ------------------------------------------------------------------

/// A far-future timer must neither loop once per missed tick nor overflow
/// `next_tick`.
#[test]
fn timer_far_in_the_future_is_one_check() {
    let mut fs = model(Policy::on_demand(), params());
    let h = open(&mut fs, 0, HandleKind::Join, 0);
    fs.on_handle_end(0, h, false).unwrap();
    fs.on_timer(u64::MAX - 1);
    // The old transaction is being committed; the deadline saturated.
    assert!(matches!(
        fs.poll_decision(),
        Some(Decision::CommitIo { txn: 1, .. })
    ));
    assert_eq!(fs.next_deadline(), Some(u64::MAX));
    fs.on_timer(u64::MAX);
    fs.on_timer(u64::MAX);
    // Missed ticks collapse: from 5 s, a call at 17 s checks once and
    // schedules 20 s.
    let mut fs = model(Policy::on_demand(), params());
    fs.on_timer(17 * SEC);
    assert_eq!(fs.next_deadline(), Some(20 * SEC));
}

fn tight_params(room: u64) -> Params {
    Params {
        total: 64 * MIB + 16 * MIB + room,
        used: 16 * MIB,
        unallocated: 0,
        global_rsv: 64 * MIB,
        ..Params::default()
    }
}

/// A refused handle start (ticket queue full) leaves no handle behind: a
/// leftover slot would later join the transaction as a writer nobody ends.
#[test]
fn refused_start_leaves_no_handle() {
    let p = Params {
        ticket_capacity: 1,
        ..tight_params(100)
    };
    let mut fs = model(od(), p);
    fs.on_reserve(0, 1, 100, FlushKind::FlushAll).unwrap();
    assert!(matches!(
        fs.on_reserve(0, 2, 50, FlushKind::FlushAll),
        Ok(Reserve::Queued(_))
    ));
    assert_eq!(
        fs.on_handle_start(0, HandleKind::Start, 1),
        Err(Error::TicketQueueFull)
    );
    assert_eq!(fs.snapshot().handles, 0);
    // A later waiting handle is the only one to get ready.
    let w = fs.on_handle_start(0, HandleKind::Join, 0);
    assert!(matches!(w, Ok(Start::Ready(_))), "{w:?}");
    assert_eq!(fs.snapshot().handles, 1);
}

/// The preemptive worker whose chosen state can do nothing (every head is
/// claimed by another runner) waits for the next event instead of spinning
/// the pump.
#[test]
fn preempt_parks_when_its_state_can_do_nothing() {
    let p = Params {
        chunk_heads: 5000,
        ..params()
    };
    let mut fs = model(Policy::on_demand_2021(), p);
    let h = open(&mut fs, 0, HandleKind::Join, 0);
    fs.on_refs_added(0, h, heads(1600)).unwrap();
    fs.on_handle_end(0, h, false).unwrap();
    // The commit pre-flush claims every head.
    fs.on_timer(30 * SEC);
    let Some(Decision::RunRefs {
        job, heads: 1600, ..
    }) = fs.poll_decision()
    else {
        panic!()
    };
    // 400 MiB of returned reservations fill the delayed-ref reserve.
    fs.on_reserve(30 * SEC, 1, 500 * MIB, FlushKind::FlushAll)
        .unwrap();
    fs.on_release(30 * SEC, 400 * MIB).unwrap();
    assert!(fs.need_preempt());
    let _ = traces(&mut fs);
    fs.on_reserve(30 * SEC, 1, 10 * MIB, FlushKind::FlushAll)
        .unwrap();
    let flushes = traces(&mut fs)
        .iter()
        .filter(|r| {
            matches!(
                r,
                TraceRecord::Flush {
                    actor: Actor::Preempt,
                    ..
                }
            )
        })
        .count();
    assert_eq!(flushes, 1, "one try, then parked");
    // The heads come back and the commit goes on.
    fs.on_work_done(30 * SEC + 1, job).unwrap();
    settle(&mut fs, 30 * SEC + 2);
    assert_eq!(fs.snapshot().commits, 1);
}

/// The commit refills the global reserve only from free space: after a
/// steal, a refill must not overcommit a full filesystem.
#[test]
fn global_refill_never_overcommits() {
    let mut fs = tight(od(), 100);
    fs.on_reserve(0, 1, 100, FlushKind::FlushAll).unwrap();
    let Ok(Reserve::Queued(_)) = fs.on_reserve(1, 2, MIB, FlushKind::FlushAllSteal) else {
        panic!()
    };
    settle(&mut fs, 2);
    fs.on_release(3, MIB).unwrap();
    assert_eq!(
        fs.on_reserve(3, 9, MIB, FlushKind::FlushAll),
        Ok(Reserve::Granted)
    );
    let h = open(&mut fs, 4, HandleKind::Join, 0);
    fs.on_handle_end(4, h, false).unwrap();
    fs.on_timer(35 * SEC);
    settle(&mut fs, 35 * SEC);
    let s = fs.snapshot();
    assert_eq!(s.commits, 1);
    assert!(s.space.used_all() <= s.space.total, "{s:?}");
    assert_eq!(s.global.reserved, 63 * MIB);
    // Once space is returned, the next commit tops it up.
    fs.on_release(36 * SEC, MIB).unwrap();
    let h = open(&mut fs, 36 * SEC, HandleKind::Join, 0);
    fs.on_handle_end(36 * SEC, h, false).unwrap();
    fs.on_timer(70 * SEC);
    settle(&mut fs, 70 * SEC);
    assert_eq!(fs.snapshot().global.reserved, 64 * MIB);
}

/// Since 4.20 `run(count)` counts heads: `FLUSH_DELAYED_REFS_NR` for
/// 4 U runs four heads whatever their refs; the legacy count is of units.
#[test]
fn run_count_is_heads_except_legacy() {
    for (policy, want) in [(Policy::on_demand(), 4), (Policy::catch_up_legacy(), 1)] {
        let p = Params {
            chunk_heads: 100,
            ..params()
        };
        let mut fs = model(policy, p);
        let h = open(&mut fs, 0, HandleKind::Join, 0);
        fs.on_refs_added(
            0,
            h,
            RefBatch {
                new_heads: 8,
                refs: 24,
                ..RefBatch::default()
            },
        )
        .unwrap();
        let job = fs.start_run(Actor::Reclaim, fs.count_budget(4));
        assert!(job.is_some());
        let Some(Decision::RunRefs { heads, refs, .. }) = fs.poll_decision() else {
            panic!()
        };
        assert_eq!((heads, refs), (want, 3 * want), "{policy}");
    }
}

/// Emergency reservations ignore `may_use`; repeating them must not
/// overflow it.
#[test]
fn emergency_reservations_cannot_overflow_may_use() {
    let p = Params {
        total: 1 << 60,
        ..params()
    };
    let mut fs = model(Policy::on_demand(), p);
    let mut granted = 0;
    for i in 0..64 {
        if fs.on_reserve(i, 1, 1 << 59, FlushKind::FlushEmergency) == Ok(Reserve::Granted) {
            granted += 1;
        }
    }
    assert!(granted > 1 && granted < 64, "{granted}");
}

/// `try_grant` serves the priority queue first: returned space that fits
/// either the priority front or the normal front goes to the priority one.
#[test]
fn returned_space_goes_to_priority_tickets_first() {
    let mut fs = tight(od(), 100);
    fs.on_reserve(0, 1, 100, FlushKind::FlushAll).unwrap();
    let Ok(Reserve::Queued(normal)) = fs.on_reserve(1, 2, 50, FlushKind::FlushAll) else {
        panic!()
    };
    let Ok(Reserve::Queued(prio)) = fs.on_reserve(2, 3, 60, FlushKind::FlushLimit) else {
        panic!()
    };
    // Both owners are flushing (their first jobs are out); 60 bytes return.
    while fs.poll_decision().is_some() {}
    fs.on_release(3, 60).unwrap();
    let grants: Vec<TicketId> = core::iter::from_fn(|| fs.poll_decision())
        .filter_map(|d| match d {
            Decision::Grant { ticket, .. } => Some(ticket),
            _ => None,
        })
        .collect();
    assert_eq!(grants, [prio]);
    assert_eq!(fs.snapshot().normal_tickets, 1);
    let _ = normal;
}

/// The 2021 preemptive worker backs its clamp off by one when a run needed
/// a single state and no ticket waits.
#[test]
fn preempt_clamp_falls_after_a_single_state_run() {
    let mut fs = model(Policy::on_demand_2021(), params());
    fs.on_writeback(0, 100 * MIB, 0);
    // 700 MiB reserved: the preemptive worker starts flushing delalloc.
    assert_eq!(
        fs.on_reserve(1, 1, 700 * MIB, FlushKind::FlushAll),
        Ok(Reserve::Granted)
    );
    let Some(Decision::Flush {
        job,
        actor: Actor::Preempt,
        state: FlushState::Delalloc,
        ..
    }) = fs.poll_decision()
    else {
        panic!()
    };
    // A ticket while delalloc outruns ordered: clamp 1 → 2.
    assert!(matches!(
        fs.on_reserve(2, 2, 10 * MIB, FlushKind::FlushAll),
        Ok(Reserve::Queued(_))
    ));
    assert_eq!(fs.snapshot().clamp, 2);
    fs.on_release(3, 700 * MIB).unwrap();
    assert_eq!(fs.snapshot().normal_tickets, 0);
    // One state was enough and no ticket waits: back to 1.
    fs.on_work_done(4, job).unwrap();
    assert_eq!(fs.snapshot().clamp, 1);
}

#[test]
fn a_task_commits_the_running_transaction_on_request() {
    let mut fs = model(Policy::on_demand(), params());
    // Nothing changed: nothing to commit.
    assert_eq!(fs.on_commit_request(0), None);
    let h = open(&mut fs, 0, HandleKind::Join, 0);
    fs.on_refs_added(1, h, heads(2)).unwrap();
    fs.on_handle_end(2, h, false).unwrap();
    settle(&mut fs, 2);
    // Long before the 30 s interval, the task's commit runs the refs and
    // writes transaction 1 out.
    assert_eq!(fs.on_commit_request(SEC), Some(1));
    let mut io = None;
    while let Some(d) = fs.poll_decision() {
        match d {
            Decision::RunRefs { job, .. } => fs.on_work_done(SEC, job).unwrap(),
            Decision::CommitIo { txn, .. } => io = Some(txn),
            _ => {}
        }
    }
    assert_eq!(io, Some(1));
    assert!(traces(&mut fs).contains(&TraceRecord::CommitStart {
        now: SEC,
        txn: 1,
        source: CommitSource::Sync
    }));
    // While it is written out, asking again waits for the same commit;
    // a change meanwhile starts transaction 2, committed next.
    assert_eq!(fs.on_commit_request(SEC + 1), Some(1));
    let h = open(&mut fs, SEC + 2, HandleKind::Join, 0);
    fs.on_handle_end(SEC + 3, h, false).unwrap();
    assert_eq!(fs.on_commit_request(SEC + 4), Some(2));
    fs.on_commit_done(2 * SEC, 1).unwrap();
    assert_eq!(fs.snapshot().completed_txn, 1);
    let mut io = None;
    while let Some(d) = fs.poll_decision() {
        match d {
            Decision::RunRefs { job, .. } => fs.on_work_done(2 * SEC, job).unwrap(),
            Decision::CommitIo { txn, .. } => io = Some(txn),
            _ => {}
        }
    }
    assert_eq!(
        io,
        Some(2),
        "the request made during write-out commits txn 2"
    );
}

#[test]
fn the_commit_thread_ages_transactions_in_whole_seconds() {
    // Begun at 0.4 s, the transaction is 30 s old at the tick at 30 s
    // (the kernel's `ktime_get_seconds` stamps), not at 30.4 s.
    let mut fs = model(Policy::on_demand(), params());
    let h = open(&mut fs, 400_000_000, HandleKind::Join, 0);
    fs.on_handle_end(400_000_000, h, false).unwrap();
    settle(&mut fs, 400_000_000);
    for tick in 1..=5 {
        fs.on_timer(tick * 5 * SEC);
    }
    assert!(
        !traces(&mut fs)
            .iter()
            .any(|t| matches!(t, TraceRecord::CommitStart { .. }))
    );
    fs.on_timer(30 * SEC);
    assert!(traces(&mut fs).contains(&TraceRecord::CommitStart {
        now: 30 * SEC,
        txn: 1,
        source: CommitSource::Kthread
    }));
}
