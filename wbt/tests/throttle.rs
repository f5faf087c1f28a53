//! The userspace face with real threads and a manual clock. (The loom
//! models of the same protocol live in `iolab-verification`.)
#![cfg(all(feature = "std", not(iolab_loom)))]

mod common;

use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use iolab_wbt::{
    Class, DeviceParams, ManualClock, Op, OpFlags, Options, OwnedPermit, Permit, Throttle,
    ThrottleClosed, TraceRecord, TryAcquireError, Variant, WindowStat,
};

/// Queue depth 2: background limit 1, normal 2, max 2.
fn throttle(queue_depth: u32) -> Throttle<ManualClock> {
    common::throttle_at(queue_depth, 0)
}

fn bg(t: &Throttle<ManualClock>) -> Permit<'_, ManualClock> {
    t.acquire(Op::Write, OpFlags::BACKGROUND).expect("open")
}

/// Spin until `f` holds (the waiter threads get there on their own).
fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "timed out: {what}"
        );
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn throttle_is_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<Throttle>();
    shared::<Throttle<ManualClock>>();
}

#[test]
fn blocking_acquire_is_released_by_a_completion() {
    let t = throttle(2);
    let held = bg(&t);
    assert_eq!(held.class(), Some(Class::Bg));
    thread::scope(|s| {
        let waiter = s.spawn(|| {
            let p = bg(&t);
            (p.issue_ns(), p.class())
        });
        wait_until("waiter queued", || t.snapshot().queued[0] == 1);
        assert!(!waiter.is_finished());
        assert_eq!(t.snapshot().wbt.inflight[0], 1);
        t.clock().advance(3_000_000);
        held.complete();
        let (issue, class) = waiter.join().expect("waiter");
        // Granted in the completer's context, at the completion's time.
        assert_eq!(issue, 3_000_000);
        assert_eq!(class, Some(Class::Bg));
    });
    let snap = t.snapshot();
    assert_eq!(snap.wbt.inflight, [0, 0, 0]);
    assert_eq!(snap.wbt.waiting, [0, 0, 0]);
    assert_eq!(snap.queued, [0, 0, 0]);
    assert_eq!(snap.wbt.underflows, 0);
}

/// An owned permit is `'static`: it moves to a thread that outlives every
/// borrow, keeps the throttle alive after its last other owner is gone,
/// and releases its slot there; a waiter blocked by it is granted. The
/// lockless and the locked path both hand out owned permits.
#[test]
fn an_owned_permit_travels_and_keeps_its_throttle_alive() {
    fn is_static<T: Send + 'static>(_: &T) {}
    let t = std::sync::Arc::new(throttle(2));
    let held: OwnedPermit<ManualClock> = t
        .acquire_owned(Op::Write, OpFlags::BACKGROUND)
        .expect("open");
    is_static(&held);
    assert_eq!(held.class(), Some(Class::Bg));
    assert_eq!(
        t.try_acquire_owned(Op::Write, OpFlags::BACKGROUND).err(),
        Some(TryAcquireError::WouldBlock)
    );
    let waiter = {
        let t = std::sync::Arc::clone(&t);
        thread::spawn(move || t.acquire_owned(Op::Write, OpFlags::BACKGROUND))
    };
    wait_until("waiter queued", || t.snapshot().queued[0] == 1);
    let weak = std::sync::Arc::downgrade(&t);
    drop(t);
    // The permits keep the throttle alive; the completion on another
    // thread grants the waiter.
    thread::spawn(move || held.complete())
        .join()
        .expect("completer");
    let granted = waiter.join().expect("waiter").expect("granted");
    let t = weak.upgrade().expect("alive while a permit is held");
    assert_eq!(t.snapshot().wbt.inflight, [1, 0, 0]);
    drop(t);
    drop(granted);
    assert!(
        weak.upgrade().is_none(),
        "the last permit freed the throttle"
    );
}

/// `close` wakes every sleeper of every class with the error and takes it
/// off its queue; later acquires of any kind are refused; a permit granted
/// before the close still releases, and the counters balance.
#[test]
fn close_refuses_the_sleepers_and_every_later_acquire() {
    let t = throttle(2);
    let held = bg(&t);
    let swap = t.acquire_class(Class::Swap).expect("open"); // swap limit is max_depth 2
    let swap2 = t.acquire_class(Class::Swap).expect("open");
    thread::scope(|s| {
        let a = s.spawn(|| t.acquire(Op::Write, OpFlags::BACKGROUND).map(|_| ()));
        wait_until("a queued", || t.snapshot().queued[0] == 1);
        let b = s.spawn(|| t.acquire_class(Class::Swap).map(|_| ()));
        wait_until("b queued", || t.snapshot().queued[1] == 1);
        assert!(!t.is_closed());
        t.close();
        assert!(t.is_closed());
        assert_eq!(a.join().expect("a"), Err(ThrottleClosed));
        assert_eq!(b.join().expect("b"), Err(ThrottleClosed));
    });
    let snap = t.snapshot();
    assert_eq!(snap.queued, [0, 0, 0], "refused sleepers left their queues");
    assert_eq!(snap.wbt.waiting, [0, 0, 0], "and their waiter counts");
    assert_eq!(
        snap.wbt.inflight,
        [1, 2, 0],
        "granted permits are untouched"
    );
    // Refused from now on: tracked writes (fast path), reads (locked path),
    // blocking and not.
    assert_eq!(
        t.acquire(Op::Read, OpFlags::NONE).map(|_| ()),
        Err(ThrottleClosed)
    );
    assert_eq!(
        t.try_acquire(Op::Read, OpFlags::NONE).map(|_| ()),
        Err(TryAcquireError::Closed)
    );
    held.complete();
    assert_eq!(
        t.try_acquire_class(Class::Bg).map(|_| ()),
        Err(TryAcquireError::Closed),
        "a free slot after the close is still refused"
    );
    assert_eq!(t.acquire_class(Class::Bg).map(|_| ()), Err(ThrottleClosed));
    swap.complete();
    swap2.cancel();
    t.close(); // closing twice is closing once
    let snap = t.snapshot();
    assert_eq!(snap.wbt.inflight, [0, 0, 0]);
    assert_eq!(snap.wbt.waiting, [0, 0, 0]);
    assert_eq!(snap.wbt.underflows, 0);
}

/// The two ways `try_acquire` says no are told apart.
#[test]
fn try_acquire_says_would_block_while_open() {
    let t = throttle(2);
    let held = bg(&t);
    assert_eq!(
        t.try_acquire(Op::Write, OpFlags::BACKGROUND).map(|_| ()),
        Err(TryAcquireError::WouldBlock)
    );
    t.close();
    assert_eq!(
        t.try_acquire(Op::Write, OpFlags::BACKGROUND).map(|_| ()),
        Err(TryAcquireError::Closed)
    );
    assert_eq!(
        TryAcquireError::Closed.to_string(),
        ThrottleClosed.to_string()
    );
    drop(held);
}

#[test]
fn three_waiters_are_served_in_fifo_order() {
    let t = throttle(2);
    let order = Mutex::new(Vec::new());
    let held = bg(&t);
    thread::scope(|s| {
        for id in 1..=3 {
            let (t, order) = (&t, &order);
            s.spawn(move || {
                let p = bg(t);
                order.lock().expect("order").push(id);
                t.clock().advance(1_000);
                drop(p);
            });
            wait_until("waiter queued", || t.snapshot().queued[0] == id);
        }
        // A newcomer never overtakes the sleepers: a SYNC write's limit is
        // max_depth = 2 > 1 in flight, yet it is refused while they wait.
        assert_eq!(t.snapshot().wbt.max_depth, 2);
        assert!(t.try_acquire(Op::Write, OpFlags::SYNC).is_err());
        drop(held);
    });
    assert_eq!(*order.lock().expect("order"), vec![1, 2, 3]);
    assert_eq!(t.snapshot().wbt.inflight, [0, 0, 0]);
}

#[test]
fn try_acquire_is_refused_at_the_limit() {
    let t = throttle(2);
    let a = t
        .try_acquire(Op::Write, OpFlags::BACKGROUND)
        .expect("below the limit");
    assert!(t.try_acquire(Op::Write, OpFlags::BACKGROUND).is_err());
    // The refusal is not counted as a waiter.
    assert_eq!(t.snapshot().wbt.waiting, [0, 0, 0]);
    // Other classes and untracked requests are unaffected.
    let d = t.try_acquire_class(Class::Discard).expect("own class");
    let r = t
        .try_acquire(Op::Read, OpFlags::NONE)
        .expect("reads never wait");
    assert_eq!(r.class(), None);
    drop((r, d));
    a.cancel();
    assert!(t.try_acquire(Op::Write, OpFlags::BACKGROUND).is_ok());
}

#[test]
fn raising_the_queue_depth_grants_sleepers() {
    let t = throttle(2);
    let held = bg(&t);
    thread::scope(|s| {
        let a = s.spawn(|| bg(&t).complete());
        let b = s.spawn(|| bg(&t).complete());
        wait_until("two queued", || t.snapshot().queued[0] == 2);
        t.set_queue_depth(12); // background limit 3
        a.join().expect("a");
        b.join().expect("b");
    });
    assert_eq!(t.snapshot().wbt.background, 3);
    drop(held);
    assert_eq!(t.snapshot().wbt.inflight, [0, 0, 0]);
}

#[test]
fn disabling_grants_every_sleeper() {
    let t = throttle(2);
    let held = bg(&t);
    thread::scope(|s| {
        let a = s.spawn(|| bg(&t).complete());
        let b = s.spawn(|| bg(&t).complete());
        wait_until("two queued", || t.snapshot().queued[0] == 2);
        t.set_lat_usec(0).expect("0 disables");
        a.join().expect("a");
        b.join().expect("b");
    });
    assert_eq!(t.lat_usec(), 0);
    drop(held);
    let snap = t.snapshot();
    assert_eq!(snap.wbt.inflight, [0, 0, 0]);
    assert_eq!(snap.wbt.underflows, 0);
    // Disabled: nothing is tracked, nothing waits.
    let many: Vec<_> = (0..8).map(|_| bg(&t)).collect();
    assert!(many.iter().all(|p| p.class().is_none()));
    assert!(t.set_lat_usec(-2).is_err());
    assert!(t.set_lat_usec_str("fast").is_err());
}

#[test]
fn the_caller_drives_the_window_timer() {
    let t = throttle(32);
    assert_eq!(t.next_deadline(), None);
    let p = bg(&t);
    let deadline = t.next_deadline().expect("an admission arms the window");
    assert_eq!(t.tick(), Some(deadline), "not due yet");
    t.clock().set(deadline);
    drop(p);
    // Due: the window is evaluated; it re-arms only if the step moved (no
    // write was in flight at the expiry), so the deadline moves on or stops.
    let next = t.tick();
    assert!(next.is_none_or(|n| n > deadline));
    let mut records = 0;
    t.drain_trace(|_| records += 1);
    assert!(records >= 1, "the expiry is traced");
    assert_eq!(t.snapshot().now_ns, deadline);
}

#[test]
fn the_system_clock_works() {
    let t = Throttle::new(
        DeviceParams {
            queue_depth: 2,
            rotational: false,
            write_cache: false,
        },
        Variant::Modern,
    );
    let p = t.acquire_class(Class::Bg).expect("open");
    assert!(t.try_acquire_class(Class::Bg).is_err());
    p.complete();
    assert!(t.try_acquire_class(Class::Bg).is_ok());
}

#[test]
fn the_v5_variant_serves_its_waiters_too() {
    // v5 at queue depth 2: max 2, normal 1, background 1; one waiter
    // rechecked per completion (WakeMode::RecheckOne).
    let t = Throttle::with_clock(
        DeviceParams {
            queue_depth: 2,
            rotational: false,
            write_cache: false,
        },
        Variant::V5_2016,
        Options::default(),
        ManualClock::new(0),
    );
    let held = bg(&t);
    thread::scope(|s| {
        let a = s.spawn(|| bg(&t).complete());
        let b = s.spawn(|| bg(&t).complete());
        wait_until("two queued", || t.snapshot().queued[0] == 2);
        drop(held);
        a.join().expect("a");
        b.join().expect("b");
    });
    assert_eq!(t.snapshot().wbt.inflight, [0, 0, 0]);
    assert_eq!(t.snapshot().queued, [0, 0, 0]);
}

/// Expire the window at `at` and return its `wbt_stat` record.
fn window_stat(t: &Throttle<ManualClock>, at: u64) -> (WindowStat, WindowStat) {
    t.clock().set(at);
    t.tick();
    let mut stat = None;
    t.drain_trace(|r| {
        if let TraceRecord::Stat { read, write, .. } = r {
            stat = Some((read, write));
        }
    });
    stat.expect("a slow read makes the window EXCEEDED, which is traced with its stats")
}

#[test]
fn write_latencies_recorded_without_the_lock_reach_the_window() {
    let t = throttle(32);
    let read = t.acquire(Op::Read, OpFlags::NONE).expect("open");
    let w1 = bg(&t); // the first admission arms the window at 0
    t.clock().set(1_000_000);
    let w2 = bg(&t);
    t.clock().set(2_000_000);
    let w3 = bg(&t);
    t.clock().set(5_000_000);
    w1.complete(); // 5 ms
    w2.complete(); // 4 ms
    w3.complete(); // 3 ms
    read.complete(); // 5 ms, above the 2 ms target
    let (r, w) = window_stat(&t, 100_000_000);
    assert_eq!((r.nr_samples, r.min), (1, 5_000_000));
    assert_eq!(
        (w.nr_samples, w.min, w.max, w.sum),
        (3, 3_000_000, 5_000_000, 12_000_000)
    );
}

#[test]
fn a_very_long_write_latency_counts_exactly() {
    let t = throttle(32);
    let read = t.acquire(Op::Read, OpFlags::NONE).expect("open");
    let writes = [bg(&t), bg(&t), bg(&t)];
    let long = 1u64 << 45; // ten hours: the sum exceeds 2^46
    t.clock().set(long);
    read.complete();
    for w in writes {
        w.complete();
    }
    let (_, w) = window_stat(&t, long + 1);
    assert_eq!((w.nr_samples, w.min, w.max), (3, long, long));
    assert_eq!(w.sum, 3 * long);
}

#[test]
fn write_latencies_completed_on_other_threads_reach_the_window() {
    // Each completing thread records into its own bucket; the threads have
    // exited before the window ends, so their buckets are folded a last
    // time and forgotten.
    let t = throttle(32);
    let read = t.acquire(Op::Read, OpFlags::NONE).expect("open");
    let writes: Vec<_> = (0..4).map(|_| bg(&t)).collect();
    t.clock().set(5_000_000);
    read.complete();
    thread::scope(|s| {
        let mut writes = writes.into_iter();
        for _ in 0..2 {
            let mine: Vec<_> = writes.by_ref().take(2).collect();
            s.spawn(move || mine.into_iter().for_each(Permit::complete));
        }
    });
    let (_, w) = window_stat(&t, 100_000_000);
    assert_eq!(
        (w.nr_samples, w.min, w.max, w.sum),
        (4, 5_000_000, 5_000_000, 20_000_000)
    );
    // The next window sees only its own samples.
    let read = t.acquire(Op::Read, OpFlags::NONE).expect("open");
    // At step 1, with a read close, every write but a swap write is held
    // to the background limit, 2.
    let writes = [bg(&t), bg(&t), t.acquire_class(Class::Swap).expect("open")];
    t.clock().set(110_000_000);
    read.complete();
    writes.into_iter().for_each(Permit::complete);
    let (_, w) = window_stat(&t, 200_000_000);
    assert_eq!((w.nr_samples, w.sum), (3, 30_000_000));
}

#[test]
fn a_trace_callback_may_complete_a_permit() {
    // The completion records the thread's first sample for this throttle,
    // which registers a bucket: that must not need the throttle's lock.
    let t = throttle(32);
    let a = bg(&t);
    let mut b = Some(bg(&t));
    let deadline = t.next_deadline().expect("an admission arms the window");
    t.clock().set(deadline);
    t.tick();
    assert!(
        t.next_deadline().is_some(),
        "writes in flight: a new window"
    );
    let mut completed = 0;
    t.drain_trace(|_| {
        if let Some(p) = b.take() {
            p.complete();
            completed += 1;
        }
    });
    assert_eq!(completed, 1);
    a.complete();
    assert_eq!(t.snapshot().wbt.inflight, [0, 0, 0]);
}

#[test]
fn the_lockless_path_sees_a_lowered_limit() {
    let t = throttle(32); // background limit 4
    let held: Vec<_> = (0..2).map(|_| bg(&t)).collect();
    t.set_queue_depth(2); // background limit 1
    assert!(t.try_acquire(Op::Write, OpFlags::BACKGROUND).is_err());
    drop(held);
    let p = t
        .try_acquire(Op::Write, OpFlags::BACKGROUND)
        .expect("below 1 again");
    assert!(t.try_acquire(Op::Write, OpFlags::BACKGROUND).is_err());
    drop(p);
    assert_eq!(t.snapshot().wbt.inflight, [0, 0, 0]);
}

#[test]
fn the_lockless_path_limits_a_class_as_the_core_does() {
    // A discard carrying REQ_SWAP is class Swap, which the core limits as a
    // swap write (max depth 16 at queue depth 32, not background 4).
    let mut core = iolab_wbt::Wbt::new(
        DeviceParams {
            queue_depth: 32,
            rotational: false,
            write_cache: false,
        },
        Variant::Modern,
    );
    let t = throttle(32);
    for n in 0..17 {
        let core_admits = matches!(
            core.on_throttle(0, Op::Discard, OpFlags::SWAP),
            iolab_wbt::Admit::Go(_)
        );
        let held = t.try_acquire(Op::Discard, OpFlags::SWAP);
        assert_eq!(held.is_ok(), core_admits, "request {n}");
        std::mem::forget(held); // keep the slot
        assert_eq!(core_admits, n < 16, "request {n}");
    }
}

#[test]
fn the_cores_try_throttle_admits_like_on_throttle_and_leaves_no_waiter() {
    let mut w = iolab_wbt::Wbt::new(
        DeviceParams {
            queue_depth: 2,
            rotational: false,
            write_cache: false,
        },
        Variant::Modern,
    ); // background limit 1
    let f = w
        .on_try_throttle(0, Op::Write, OpFlags::BACKGROUND)
        .expect("an idle device admits");
    assert_eq!(f.class(), Some(Class::Bg));
    assert!(w.next_deadline().is_some(), "an admission arms the window");
    assert_eq!(w.on_try_throttle(0, Op::Write, OpFlags::BACKGROUND), None);
    assert_eq!(w.snapshot().waiting, [0, 0, 0]);
    assert_eq!(w.snapshot().inflight, [1, 0, 0]);
    let read = w
        .on_try_throttle(0, Op::Read, OpFlags::NONE)
        .expect("reads go");
    assert_eq!(read.class(), None);
}

/// Nobody ticks: a window's deadline found more than a second overdue
/// when the throttle takes its lock counts once; a tick ends the count.
#[test]
fn an_unticked_throttle_counts_its_missed_windows() {
    let t = throttle(32);
    bg(&t).complete(); // starts a monitoring window
    let deadline = t.next_deadline().expect("a window runs");
    assert_eq!(t.missed_ticks(), 0);
    t.clock().set(deadline + iolab_wbt::LATE_TICK_NS / 2);
    assert_eq!(t.missed_ticks(), 0, "late, but within the grace");
    t.clock().set(deadline + 2 * iolab_wbt::LATE_TICK_NS);
    assert_eq!(t.missed_ticks(), 1);
    assert_eq!(t.missed_ticks(), 1, "each deadline counts once");
    t.tick();
    bg(&t).complete();
    assert_eq!(t.missed_ticks(), 1, "ticked: nothing more missed");
}
