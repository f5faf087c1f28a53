//! Loom models of `iolab_wbt::Throttle`'s async face (`acquire_async`):
//! a task waits in the same FIFO as threads, with its waker in its entry.
//! The invariants are those of `wbt_loom.rs` (I1 no token leaked or
//! released twice, I2 no waiter stranded, I3 FIFO), plus cancellation: a
//! dropped future gives back its place or the slot granted to it.
//!
//! Tasks run under a minimal `block_on` whose waker sets a flag under a
//! loom mutex and signals a loom condition variable: a grant whose wake is
//! lost leaves the task asleep for good, which loom reports as a deadlock.
//! Run as `wbt_loom.rs` says.
#![cfg(iolab_loom)]

mod common;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Wake, Waker};

use common::{assert_quiescent, model, throttle, wait_queued, write, writer};
use iolab_wbt::sync::{Arc, AtomicUsize, Condvar, Mutex, Ordering, thread};
use iolab_wbt::{Op, OpFlags, ThrottleClosed};

/// A waker's signal: "woken since the last poll", under a loom mutex.
#[derive(Default)]
struct Signal {
    woken: Mutex<bool>,
    cv: Condvar,
}

impl Wake for Signal {
    fn wake(self: std::sync::Arc<Self>) {
        *self.woken.lock().expect("signal") = true;
        self.cv.notify_one();
    }
}

/// Poll, sleep until woken, poll again.
fn block_on<F: Future>(future: F) -> F::Output {
    let signal = std::sync::Arc::new(Signal::default());
    let waker = Waker::from(std::sync::Arc::clone(&signal));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
        let mut woken = signal.woken.lock().expect("signal");
        while !*woken {
            woken = signal.cv.wait(woken).expect("signal");
        }
        *woken = false;
    }
}

/// A task that takes a background slot through the async face and gives
/// it back.
fn task(t: &Arc<common::T>) -> thread::JoinHandle<()> {
    let t = Arc::clone(t);
    thread::spawn(move || {
        block_on(t.acquire_async(Op::Write, OpFlags::BACKGROUND))
            .expect("open")
            .complete();
    })
}

/// No lost wakeup: a task and a thread wait for the only slot, which is
/// released concurrently; both finish and nothing leaks.
#[test]
fn async_no_lost_wakeup() {
    model("async_no_lost_wakeup", || {
        let t = throttle(2);
        let held = write(&t);
        let a = task(&t);
        let b = writer(&t);
        held.complete();
        a.join().expect("task");
        b.join().expect("thread");
        assert_quiescent(&t);
    });
}

/// FIFO (I3) across faces: a thread queued before a task is served first.
#[test]
fn async_fifo_with_a_thread() {
    model("async_fifo_with_a_thread", || {
        let t = throttle(2);
        let ticket = Arc::new(AtomicUsize::new(0));
        let held = write(&t);
        let thread_first = {
            let (t, ticket) = (Arc::clone(&t), Arc::clone(&ticket));
            thread::spawn(move || {
                let p = write(&t);
                let mine = ticket.fetch_add(1, Ordering::SeqCst);
                p.complete();
                mine
            })
        };
        wait_queued(&t, 1);
        let task_second = {
            let (t, ticket) = (Arc::clone(&t), Arc::clone(&ticket));
            thread::spawn(move || {
                let p = block_on(t.acquire_async(Op::Write, OpFlags::BACKGROUND)).expect("open");
                let mine = ticket.fetch_add(1, Ordering::SeqCst);
                p.complete();
                mine
            })
        };
        wait_queued(&t, 2);
        held.complete();
        assert_eq!(thread_first.join().expect("thread"), 0, "the task overtook");
        assert_eq!(task_second.join().expect("task"), 1);
        assert_quiescent(&t);
    });
}

/// Cancellation gives back: a task polls once (queued, or granted at
/// once) and drops its future while the held slot is released and a
/// thread waits behind it. Whatever the order, the thread is served (the
/// dropped task's place or slot was given back) and nothing leaks.
#[test]
fn async_cancel_gives_back() {
    model("async_cancel_gives_back", || {
        let t = throttle(2);
        let held = write(&t);
        let quitter = {
            let t = Arc::clone(&t);
            thread::spawn(move || {
                let mut future = pin!(t.acquire_async(Op::Write, OpFlags::BACKGROUND));
                let mut cx = Context::from_waker(Waker::noop());
                if let Poll::Ready(p) = future.as_mut().poll(&mut cx) {
                    p.expect("open").cancel();
                }
                // Dropped here: queued, granted unpolled, or done.
            })
        };
        let b = writer(&t);
        held.complete();
        quitter.join().expect("quitter");
        b.join().expect("thread behind");
        assert_quiescent(&t);
    });
}

/// The close races a waiting task: it ends with the grant (and releases
/// it) or with the error, never parked; nothing leaks.
#[test]
fn async_close_versus_grant() {
    model("async_close_versus_grant", || {
        let t = throttle(2);
        let held = write(&t);
        let a = {
            let t = Arc::clone(&t);
            thread::spawn(move || {
                block_on(t.acquire_async(Op::Write, OpFlags::BACKGROUND)).map(|p| p.complete())
            })
        };
        let closer = {
            let t = Arc::clone(&t);
            thread::spawn(move || t.close())
        };
        held.complete();
        let outcome = a.join().expect("task");
        assert!(matches!(outcome, Ok(()) | Err(ThrottleClosed)));
        closer.join().expect("closer");
        assert_quiescent(&t);
    });
}

/// A task polled first under one waker and then under another (it moved
/// to another worker) is woken through the second: the new waker is
/// stored under the throttle's lock, so a grant never falls between the
/// poll's check and the store.
#[test]
fn async_task_moves_to_a_new_waker() {
    model("async_task_moves_to_a_new_waker", || {
        let t = throttle(2);
        let held = write(&t);
        let mover = {
            let t = Arc::clone(&t);
            thread::spawn(move || {
                let mut future = t.acquire_async(Op::Write, OpFlags::BACKGROUND);
                let mut cx = Context::from_waker(Waker::noop());
                let permit = match std::pin::Pin::new(&mut future).poll(&mut cx) {
                    Poll::Ready(p) => p,
                    Poll::Pending => block_on(future),
                };
                permit.expect("open").complete();
            })
        };
        held.complete();
        mover.join().expect("mover");
        assert_quiescent(&t);
    });
}
