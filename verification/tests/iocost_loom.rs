//! Loom models of `iolab_iocost::Controller`, its blocking and async
//! faces: no lost wakeup, FIFO within a group, a dropped future gives
//! back what it holds, close wakes every waiter.
//!
//! The controller is a slow device (1 MB/s) with one group, on a manual
//! clock: the first 64 KiB read goes at once, a second waits about 45 ms
//! of budget, so the models move the clock and tick to release waiters.
//! Tasks run under `iolab_verification::block_on`, whose lost wake is a
//! deadlock to loom.
//!
//! ```text
//! RUSTFLAGS="--cfg iolab_loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target-loom \
//!   cargo test -p iolab-verification --release --test iocost_loom -- --test-threads=1
//! ```
#![cfg(iolab_loom)]

use std::pin::pin;
use std::task::{Context, Waker};

use iolab_iocost::sync::{Arc, AtomicBool, Ordering, thread};
use iolab_iocost::{
    Controller, ControllerError, Device, GroupId, Io, IoCost, ManualClock, Op, Options,
};
use iolab_verification::{block_on, model};

type C = Controller<ManualClock>;

fn controller() -> (Arc<C>, GroupId) {
    let dev = Device {
        devno: (8, 0),
        rotational: false,
        queue_depth: 32,
    };
    let mut ioc = IoCost::new(dev, Options::default());
    let g = ioc.add_group(0, 1);
    ioc.write_model(
        0,
        "ctrl=user model=linear rbps=1000000 rseqiops=100 rrandiops=100 \
         wbps=1000000 wseqiops=100 wrandiops=100",
    )
    .expect("model");
    ioc.write_qos(0, "enable=1 rpct=95 rlat=100000 wpct=95 wlat=100000")
        .expect("qos");
    let c = Controller::with_clock(ioc, ManualClock::new(0)).expect("enabled");
    (Arc::new(c), g)
}

fn read(g: GroupId, n: u64) -> Io {
    Io::new(g, Op::Read, 64 * 1024, n * 8192)
}

fn inflight(c: &C, g: GroupId) -> u64 {
    c.configure(|ioc, now| ioc.group_stat(now, g).expect("group").inflight)
}

fn wait_parked(c: &C, n: usize) {
    while c.waiting() < n {
        thread::yield_now();
    }
}

/// Let `ms` pass and run the timers.
fn pass(c: &C, ms: u64) {
    c.clock().advance(ms * 1_000_000);
    c.tick();
}

/// A thread and a task wait for budget; the timer releases both while
/// they go to sleep. Both wake, and every cost comes back.
#[test]
fn no_lost_wakeup() {
    model("iocost::no_lost_wakeup", || {
        let (c, g) = controller();
        let a = c.acquire(read(g, 0)).expect("budget");
        let thread_waiter = {
            let c = Arc::clone(&c);
            thread::spawn(move || c.acquire(read(g, 1)).map(|p| p.cost()))
        };
        let task = {
            let c = Arc::clone(&c);
            thread::spawn(move || block_on(c.acquire_async(read(g, 2))).map(|p| p.cost()))
        };
        wait_parked(&c, 2);
        pass(&c, 1_000);
        assert!(thread_waiter.join().expect("thread").expect("granted") > 0);
        assert!(task.join().expect("task").expect("granted") > 0);
        drop(a);
        assert_eq!((c.waiting(), inflight(&c, g)), (0, 0));
    });
}

/// Two waiters of one group: budget for one releases the first parked.
#[test]
fn fifo_within_a_group() {
    model("iocost::fifo_within_a_group", || {
        let (c, g) = controller();
        let _a = c.acquire(read(g, 0)).expect("budget");
        let first = {
            let c = Arc::clone(&c);
            thread::spawn(move || block_on(c.acquire_async(read(g, 1))).map(|p| p.cost()))
        };
        wait_parked(&c, 1);
        let second = {
            let c = Arc::clone(&c);
            thread::spawn(move || c.acquire(read(g, 2)).map(|p| p.cost()))
        };
        wait_parked(&c, 2);
        pass(&c, 60);
        assert!(first.join().expect("first").is_ok(), "the head goes first");
        assert_eq!(c.waiting(), 1, "the second still waits");
        pass(&c, 1_000);
        assert!(second.join().expect("second").is_ok());
    });
}

/// A task parks, then drops its future while the timer releases it:
/// whichever comes first, nothing stays charged and nothing waits.
#[test]
fn cancellation_gives_back() {
    model("iocost::cancellation_gives_back", || {
        let (c, g) = controller();
        let a = c.acquire(read(g, 0)).expect("budget");
        let parked = Arc::new(AtomicBool::new(false));
        let task = {
            let (c, parked) = (Arc::clone(&c), Arc::clone(&parked));
            thread::spawn(move || {
                let mut f = pin!(c.acquire_async(read(g, 1)));
                let mut cx = Context::from_waker(Waker::noop());
                assert!(f.as_mut().poll(&mut cx).is_pending(), "no budget");
                parked.store(true, Ordering::SeqCst);
                // Dropped here, racing the release.
            })
        };
        while !parked.load(Ordering::SeqCst) {
            thread::yield_now();
        }
        pass(&c, 1_000);
        task.join().expect("task");
        assert_eq!(c.waiting(), 0);
        assert_eq!(
            inflight(&c, g),
            a.cost(),
            "the dropped future holds nothing"
        );
    });
}

/// A thread and a task wait (or arrive) while the controller closes:
/// both fail with `Closed`, nobody is left asleep, nothing is charged.
#[test]
fn close_wakes_all() {
    model("iocost::close_wakes_all", || {
        let (c, g) = controller();
        let a = c.acquire(read(g, 0)).expect("budget");
        let thread_waiter = {
            let c = Arc::clone(&c);
            thread::spawn(move || c.acquire(read(g, 1)).err())
        };
        let task = {
            let c = Arc::clone(&c);
            thread::spawn(move || block_on(c.acquire_async(read(g, 2))).err())
        };
        c.close();
        assert_eq!(
            thread_waiter.join().expect("thread"),
            Some(ControllerError::Closed)
        );
        assert_eq!(task.join().expect("task"), Some(ControllerError::Closed));
        assert_eq!((c.waiting(), inflight(&c, g)), (0, a.cost()));
    });
}
