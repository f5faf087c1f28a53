use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::vec::Vec;

use super::*;
use crate::{Device, ManualClock, Options};

const MIB: u64 = 1 << 20;

/// One group on a slow device (1 MB/s, 100 IOPS) so that a second 1 MiB
/// read finds no budget.
fn slow() -> (IoCost, GroupId) {
    let dev = Device {
        devno: (8, 0),
        rotational: false,
        queue_depth: 32,
    };
    let mut ioc = IoCost::new(dev, Options::default());
    let g = ioc.add_group(0, 1);
    ioc.write_model(
        0,
        "ctrl=user model=linear rbps=1000000 rseqiops=100 rrandiops=100 wbps=1000000 wseqiops=100 wrandiops=100",
    )
    .unwrap();
    ioc.write_qos(0, "enable=1 rpct=95 rlat=100000 wpct=95 wlat=100000")
        .unwrap();
    (ioc, g)
}

fn ctl() -> (Arc<Controller<Arc<ManualClock>>>, GroupId, Arc<ManualClock>) {
    let (ioc, g) = slow();
    let clock = Arc::new(ManualClock::new(0));
    let c = Controller::with_clock(ioc, Arc::clone(&clock)).unwrap();
    (Arc::new(c), g, clock)
}

/// A 64 KiB read: on the slow device the first goes at once, the second
/// waits about 45 ms.
fn read(g: GroupId, n: u64) -> Io {
    Io::new(g, Op::Read, 64 * 1024, n * 8192)
}

fn noop() -> Context<'static> {
    Context::from_waker(Waker::noop())
}

fn inflight(c: &Controller<Arc<ManualClock>>, g: GroupId) -> u64 {
    c.configure(|ioc, now| ioc.group_stat(now, g).expect("group").inflight)
}

/// Move the clock 1 ms at a time and tick until `ready()`; the ms taken.
fn ms_until(
    c: &Controller<Arc<ManualClock>>,
    clock: &ManualClock,
    mut ready: impl FnMut() -> bool,
) -> u32 {
    for ms in 1..=5_000 {
        clock.advance(1_000_000);
        c.tick();
        if ready() {
            return ms;
        }
    }
    panic!("not released within 5 s");
}

#[test]
fn a_disabled_core_is_refused_at_construction_and_at_acquire() {
    let dev = Device {
        devno: (8, 0),
        rotational: false,
        queue_depth: 32,
    };
    let ioc = IoCost::new(dev, Options::default());
    assert_eq!(Controller::new(ioc).err(), Some(ControllerError::Disabled));
    let (c, g, _) = ctl();
    c.configure(|ioc, _| ioc.set_enabled(false));
    assert_eq!(c.acquire(read(g, 0)).err(), Some(ControllerError::Disabled));
}

#[test]
fn an_unknown_group_is_refused_and_the_root_goes_uncharged() {
    let (c, g, _) = ctl();
    let stranger = GroupId(g.0 + 7);
    assert_eq!(
        c.acquire(read(stranger, 0)).err(),
        Some(ControllerError::UnknownGroup(stranger))
    );
    let root = c
        .acquire(Io::new(GroupId::ROOT, Op::Write, MIB, 0))
        .unwrap();
    assert_eq!(root.cost(), 0);
}

#[test]
fn a_grant_charges_while_held_and_its_drop_returns_the_cost() {
    let (c, g, clock) = ctl();
    let a = c.acquire(read(g, 0)).unwrap();
    assert!(a.cost() > 0);
    assert_eq!(inflight(&c, g), a.cost());
    drop(a);
    assert_eq!(inflight(&c, g), 0);
    clock.advance(1_000_000_000); // budget for another
    let b = c.acquire(read(g, 1)).unwrap();
    b.cancel();
    assert_eq!(inflight(&c, g), 0, "a cancelled grant returns its cost too");
}

#[test]
fn a_parked_thread_is_released_by_the_timer() {
    let (c, g, clock) = ctl();
    let _a = c.acquire(read(g, 0)).unwrap();
    let t = {
        let c = Arc::clone(&c);
        std::thread::spawn(move || c.acquire_owned(read(g, 1)).map(|p| p.cost()))
    };
    while c.waiting() == 0 {
        std::thread::yield_now();
    }
    let ms = ms_until(&c, &clock, || c.waiting() == 0);
    assert!((20..200).contains(&ms), "released after {ms} ms");
    assert!(t.join().unwrap().unwrap() > 0);
}

#[test]
fn waiters_are_released_in_fifo_order() {
    let (c, g, clock) = ctl();
    let _a = c.acquire(read(g, 0)).unwrap();
    let mut cx = noop();
    let mut b = pin!(c.acquire_async(read(g, 1)));
    let mut d = pin!(c.acquire_async(read(g, 2)));
    assert!(b.as_mut().poll(&mut cx).is_pending());
    assert!(d.as_mut().poll(&mut cx).is_pending());
    let mut first = None;
    let mut held = Vec::new();
    ms_until(&c, &clock, || {
        if let Poll::Ready(r) = d.as_mut().poll(&mut cx) {
            held.push(r.unwrap());
            first.get_or_insert("d");
            return true;
        }
        if held.is_empty()
            && let Poll::Ready(r) = b.as_mut().poll(&mut cx)
        {
            held.push(r.unwrap());
            first.get_or_insert("b");
        }
        false
    });
    assert_eq!(first, Some("b"), "the head of the FIFO goes first");
}

#[test]
fn a_dropped_future_leaves_the_fifo_uncharged_and_serves_the_one_behind_sooner() {
    // Control: b then d wait; d's wait.
    let (c, g, clock) = ctl();
    let _a = c.acquire(read(g, 0)).unwrap();
    let mut cx = noop();
    let mut b = pin!(c.acquire_async(read(g, 1)));
    let mut d = pin!(c.acquire_async(read(g, 2)));
    assert!(b.as_mut().poll(&mut cx).is_pending());
    assert!(d.as_mut().poll(&mut cx).is_pending());
    let mut got = Vec::new();
    let behind = ms_until(&c, &clock, || {
        if got.is_empty()
            && let Poll::Ready(r) = b.as_mut().poll(&mut cx)
        {
            got.push(r.unwrap());
        }
        d.as_mut().poll(&mut cx).is_ready()
    });

    let (c, g, clock) = ctl();
    let _a = c.acquire(read(g, 0)).unwrap();
    let mut b = std::boxed::Box::pin(c.acquire_async(read(g, 1)));
    let mut d = pin!(c.acquire_async(read(g, 2)));
    assert!(b.as_mut().poll(&mut cx).is_pending());
    assert!(d.as_mut().poll(&mut cx).is_pending());
    let before = inflight(&c, g);
    drop(b);
    assert_eq!(c.waiting(), 1);
    assert_eq!(inflight(&c, g), before, "withdrawn uncharged");
    let alone = ms_until(&c, &clock, || d.as_mut().poll(&mut cx).is_ready());
    assert!(alone < behind, "{alone} ms alone, {behind} ms behind b");
}

#[test]
fn a_released_future_dropped_before_its_poll_returns_the_cost() {
    let (c, g, clock) = ctl();
    let a = c.acquire(read(g, 0)).unwrap();
    let mut cx = noop();
    let mut b = std::boxed::Box::pin(c.acquire_async(read(g, 1)));
    assert!(b.as_mut().poll(&mut cx).is_pending());
    ms_until(&c, &clock, || c.waiting() == 0);
    assert!(inflight(&c, g) > a.cost(), "b's release was charged");
    drop(b);
    assert_eq!(inflight(&c, g), a.cost(), "and given back");
}

#[test]
fn close_fails_every_waiter_and_every_later_acquire_but_keeps_grants() {
    let (c, g, _) = ctl();
    let a = c.acquire(read(g, 0)).unwrap();
    let t = {
        let c = Arc::clone(&c);
        std::thread::spawn(move || c.acquire(read(g, 1)).err())
    };
    while c.waiting() == 0 {
        std::thread::yield_now();
    }
    let mut cx = noop();
    let mut f = pin!(c.acquire_async(read(g, 2)));
    assert!(f.as_mut().poll(&mut cx).is_pending());
    c.close();
    assert_eq!(t.join().unwrap(), Some(ControllerError::Closed));
    assert!(matches!(
        f.as_mut().poll(&mut cx),
        Poll::Ready(Err(ControllerError::Closed))
    ));
    assert_eq!(c.waiting(), 0);
    assert_eq!(
        inflight(&c, g),
        a.cost(),
        "nothing charged for the failed waiters"
    );
    assert_eq!(c.acquire(read(g, 3)).err(), Some(ControllerError::Closed));
    drop(a);
    assert_eq!(inflight(&c, g), 0);
}

#[test]
fn an_unticked_controller_counts_its_missed_deadlines() {
    let (c, g, clock) = ctl();
    drop(c.acquire(read(g, 0)).unwrap());
    assert_eq!(c.missed_ticks(), 0);
    clock.advance(3_000_000_000);
    drop(c.acquire(read(g, 1)).unwrap());
    assert_eq!(c.missed_ticks(), 1);
    c.tick();
    drop(c.acquire(read(g, 2)).unwrap());
    assert_eq!(c.missed_ticks(), 1, "ticked: nothing more missed");
}

#[test]
fn a_ticker_on_a_thread_serves_a_blocked_waiter_on_the_system_clock() {
    let (ioc, g) = slow();
    let c = Arc::new(Controller::new(ioc).unwrap());
    let ticker = {
        let c = Arc::clone(&c);
        std::thread::spawn(move || iolab_clock::Ticker::default().run_blocking(&*c))
    };
    let a = c.acquire(read(g, 0)).unwrap();
    let b = c.acquire(read(g, 1)).unwrap();
    assert!(b.cost() > 0);
    drop((a, b));
    c.close();
    ticker.join().unwrap();
}
