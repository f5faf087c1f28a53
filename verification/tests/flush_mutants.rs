//! Historic btrfs space-reservation races as loom scenarios. Each
//! scenario passes on the real `Pool`; built with the matching test-only
//! mutant cfg of `iolab-flush` (`iolab_mutant`), loom must find the bug (a leaked
//! grant or a waiter overtaken).
//!
//! ```text
//! # the real code: both scenarios pass
//! RUSTFLAGS="--cfg iolab_loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target-loom \
//!   cargo test -p iolab-verification --release -j2 --test flush_mutants -- --test-threads=1
//! # one mutant at a time (f1, f2): its scenario must fail
//! RUSTFLAGS='--cfg iolab_loom --cfg iolab_mutant="f1"' LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target-mutant \
//!   cargo test -p iolab-verification --release -j2 --test flush_mutants -- --test-threads=1
//! ```
//!
//! How the failure is checked (as in `wbt_mutants.rs`): a panic inside a
//! loom model thread may abort the process rather than fail the test, so
//! with a mutant on, the scenario of that bug reruns its own test binary
//! as a child process (`IOLAB_CHECK_CHILD=1`, only that test) and asserts
//! that the child failed with a panic message from the model. The
//! scenarios of the other bugs are skipped under a mutant.
#![cfg(iolab_loom)]

mod flush_common;

use flush_common::{
    KIB, MIB, assert_settled, cancellable_reserver, flusher, model, pool, reserver,
};
use iolab_flush::FlushKind;
use iolab_flush::sync::{Arc, Ordering, thread};
use iolab_verification::check_mutant;

/// The mutant compiled in, if any.
fn active_mutant() -> Option<&'static str> {
    [
        (cfg!(iolab_mutant = "f1"), "f1"),
        (cfg!(iolab_mutant = "f2"), "f2"),
    ]
    .into_iter()
    .find_map(|(on, bug)| on.then_some(bug))
}

/// [`check_mutant`] with this suite's mutant.
fn check(bug: &str, test: &str, scenario: fn()) {
    check_mutant(active_mutant(), bug, test, scenario);
}

/// F1 (kernel 0cab7acc4afc, "Btrfs: fix race leading to metadata space
/// leak after task received signal", Filipe Manana, 2019): a waiter
/// that got a signal set EINTR on its ticket but left it on the list and
/// dropped the space lock; the reclaim job then granted the ticket
/// (`bytes_may_use += bytes`) and the task returned EINTR, so the bytes
/// were never given back. Fix: remove the ticket under the same lock that
/// notices the signal (the grant, if it came first, wins). Here the space
/// comes back while the owner is being interrupted; at the end `may_use`
/// must be the global reserve alone.
#[test]
fn f1_interrupted_ticket_is_removed() {
    check("f1", "f1_interrupted_ticket_is_removed", || {
        model("f1_interrupted_ticket_is_removed", || {
            let p = pool();
            let held = p.reserve(MIB, FlushKind::FlushAll).expect("fits");
            let (waiter, cancel) = cancellable_reserver(&p, 512 * KIB);
            cancel.store(true, Ordering::SeqCst);
            p.notify();
            drop(held); // may grant the ticket, removed or not
            waiter.join().expect("waiter");
            assert_settled(&p);
        });
    });
}

/// F2 ("btrfs: do not allow reservations if we have pending tickets",
/// Josef Bacik, posted 2019-08-09 as 1/7 of the series that stopped
/// partially filling tickets, merged for 5.4): without the check, a
/// reservation that fits is admitted even though tickets wait, so space
/// returned for the front ticket goes to a newcomer (the starvation the
/// ticketed design of 957780eb2788 set out to end; invariant 5). A
/// (768 KiB) waits, half the space comes back, B (256 KiB) arrives while
/// the flusher works: B must queue behind A.
#[test]
fn f2_newcomer_does_not_jump_the_queue() {
    check("f2", "f2_newcomer_does_not_jump_the_queue", || {
        model("f2_newcomer_does_not_jump_the_queue", || {
            let p = pool();
            let h1 = p.reserve(512 * KIB, FlushKind::FlushAll).expect("fits");
            let h2 = p.reserve(512 * KIB, FlushKind::FlushAll).expect("fits");
            let f = flusher(&p, 1);
            let a = reserver(&p, 768 * KIB);
            flush_common::wait_tickets(&p, 1);
            drop(h1);
            let b = {
                let p = Arc::clone(&p);
                thread::spawn(move || {
                    let r = p.reserve(256 * KIB, FlushKind::FlushAll).expect("B");
                    assert_eq!(p.snapshot().normal_tickets, 0, "B overtook A (FIFO)");
                    r.bytes()
                })
            };
            drop(h2);
            a.join().expect("a");
            b.join().expect("b");
            p.close();
            f.join().expect("flusher");
            assert_settled(&p);
        });
    });
}

/// The conformance models a user's pool goes through catch F1 too: a
/// cancelled waiter whose ticket stays queued leaks its later grant.
#[test]
fn f1_caught_by_the_conformance_models() {
    check("f1", "f1_caught_by_the_conformance_models", || {
        iolab_verification::flush::pool::cancellation_gives_back(flush_common::unshared_pool);
    });
}

/// ... and F2: a newcomer that fits takes space the front waiter needs.
#[test]
fn f2_caught_by_the_conformance_models() {
    check("f2", "f2_caught_by_the_conformance_models", || {
        iolab_verification::flush::pool::fifo_hand_off(flush_common::unshared_pool);
    });
}

/// ... and the flush-policy suite, which drives the core itself, catches
/// F2 in the core's admission: a reservation granted at once while
/// tickets wait.
#[test]
fn f2_caught_by_the_flush_policy_suite() {
    check("f2", "f2_caught_by_the_flush_policy_suite", || {
        let od = iolab_flush::Policy::on_demand();
        iolab_verification::flush::policy::check(move || od);
    });
}
