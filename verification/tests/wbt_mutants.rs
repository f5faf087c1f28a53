//! Historic blk-wbt / rq-qos bugs as loom scenarios. Each scenario passes on the
//! real `Throttle`; built with the matching test-only mutant cfg of
//! `iolab-wbt` (`iolab_mutant`), loom must find the bug (a deadlock, a FIFO violation or a
//! leaked token).
//!
//! ```text
//! # the real code: all four scenarios pass
//! RUSTFLAGS="--cfg iolab_loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=/tmp/wbt-loom-target \
//!   cargo test -p iolab-verification --release -j1 --test wbt_mutants -- --test-threads=1
//! # one mutant at a time (b2, b3, b4, b5): its scenario must fail
//! RUSTFLAGS='--cfg iolab_loom --cfg iolab_mutant="b3"' LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=/tmp/wbt-mutant-target \
//!   cargo test -p iolab-verification --release -j1 --test wbt_mutants -- --test-threads=1
//! ```
//!
//! How the failure is checked: when loom finds a deadlock it panics inside
//! a parked model thread, and unwinding through loom's runtime often
//! aborts the process instead of failing the test. So with a mutant on,
//! the scenario of that bug reruns its own test binary as a child process
//! (`IOLAB_CHECK_CHILD=1`, only that test) and asserts that the child
//! failed with a panic message from the model (not, say, a missing test).
//! The scenarios of the other bugs are skipped under a mutant: a mutant may
//! break them too, and that says nothing about the mutant they target.
#![cfg(iolab_loom)]

mod common;

use common::{assert_quiescent, model, throttle, wait_queued, wait_waiting, write, writer};
use iolab_verification::{check_mutant, model_min_preemptions};
use iolab_wbt::sync::{Arc, AtomicUsize, Ordering, thread};

/// The mutant compiled in, if any.
fn active_mutant() -> Option<&'static str> {
    [
        (cfg!(iolab_mutant = "b2"), "b2"),
        (cfg!(iolab_mutant = "b3"), "b3"),
        (cfg!(iolab_mutant = "b4"), "b4"),
        (cfg!(iolab_mutant = "b5"), "b5"),
    ]
    .into_iter()
    .find_map(|(on, bug)| on.then_some(bug))
}

/// [`check_mutant`] with this suite's mutant.
fn check(bug: &str, test: &str, scenario: fn()) {
    check_mutant(active_mutant(), bug, test, scenario);
}

/// B2 (fixed 2018, 2887e41b910b + 38cfb5a45ee0): the waker used to wake
/// every sleeper to recheck for itself, so the second in the queue could
/// win the slot. Fix: the waker grants in FIFO order in its own context.
#[test]
fn b2_waker_grants_in_fifo_order() {
    check("b2", "b2_waker_grants_in_fifo_order", || {
        model("b2_waker_grants_in_fifo_order", || {
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
            assert_eq!(a.join().expect("a"), 0, "B overtook A (FIFO, I3)");
            assert_eq!(b.join().expect("b"), 1);
        });
    });
}

/// B3 (fixed v5.3, 545fbd0775ba): a writer fails the fast path, the only
/// slot is released (its wake finds an empty queue), the writer enqueues
/// and must recheck, or it sleeps forever.
#[test]
fn b3_recheck_after_enqueue() {
    check("b3", "b3_recheck_after_enqueue", || {
        model("b3_recheck_after_enqueue", || {
            let t = throttle(2);
            let held = write(&t);
            let a = writer(&t);
            held.complete();
            a.join().expect("a");
            assert_quiescent(&t);
        });
    });
}

/// B4 (fixed v5.14, 11c7aa0ddea8): two writers fail the fast path, IO
/// drains, both enqueue; if "first" is decided after both enqueued, both
/// see two sleepers and neither rechecks. The bug needs three preemptions
/// (stop each writer after its fast path, and the first again between
/// enqueueing and looking), so this model runs with a bound of at least 3;
/// it waits until both failed the fast path before draining, which saves
/// one more.
#[test]
fn b4_first_waiter_rechecks() {
    check("b4", "b4_first_waiter_rechecks", || {
        model_min_preemptions("b4_first_waiter_rechecks", 3, || {
            let t = throttle(2);
            let held = write(&t);
            let a = writer(&t);
            let b = writer(&t);
            wait_waiting(&t, 2);
            held.complete();
            a.join().expect("a");
            b.join().expect("b");
            assert_quiescent(&t);
        });
    });
}

/// B5 (2019, "use a mb for got_token"): the first waiter's recheck succeeds
/// while the waker also grants it a slot; unless the second token is
/// noticed, it leaks and capacity is lost for good.
#[test]
fn b5_no_double_token() {
    check("b5", "b5_no_double_token", || {
        model("b5_no_double_token", || {
            let t = throttle(8); // limit 2
            let p1 = write(&t);
            let p2 = write(&t);
            let a = writer(&t);
            p1.complete();
            p2.complete();
            a.join().expect("a");
            assert_quiescent(&t);
        });
    });
}

/// The conformance models a user's throttle goes through (the `Admission`
/// face, `iolab_verification::wbt::admission`) catch B2, B3 and B4 too:
/// the FIFO hand-off model sees B2's overtaking waiter, the lost-wakeup
/// and close models deadlock on B3 and B4.
#[test]
fn b2_caught_by_the_conformance_models() {
    check("b2", "b2_caught_by_the_conformance_models", || {
        iolab_verification::wbt::admission::check(|| common::unshared_throttle(2));
    });
}

/// See [`b2_caught_by_the_conformance_models`].
#[test]
fn b3_caught_by_the_conformance_models() {
    check("b3", "b3_caught_by_the_conformance_models", || {
        iolab_verification::wbt::admission::check(|| common::unshared_throttle(2));
    });
}

/// See [`b2_caught_by_the_conformance_models`].
#[test]
fn b4_caught_by_the_conformance_models() {
    check("b4", "b4_caught_by_the_conformance_models", || {
        iolab_verification::wbt::admission::check(|| common::unshared_throttle(2));
    });
}
