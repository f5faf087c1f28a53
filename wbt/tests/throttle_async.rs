//! The async face ([`Throttle::acquire_async`]) under a minimal executor
//! of our own: futures polled by hand with a waker that counts its wakes,
//! and a `block_on` that parks its thread. Tokio runs it in
//! `throttle_tokio.rs`; the loom models are in `iolab-verification`.
#![cfg(all(feature = "std", not(iolab_loom)))]

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

use common::assert_quiescent;
use iolab_wbt::{
    Acquire, ManualClock, Op, OpFlags, OwnedAcquire, Permit, Throttle, ThrottleClosed,
};

type T = Throttle<ManualClock>;
type Polled<'a> = Poll<Result<Permit<'a, ManualClock>, ThrottleClosed>>;

/// Queue depth 2: background limit 1; 8: background 2, normal 4.
fn throttle(queue_depth: u32) -> T {
    common::throttle_at(queue_depth, 0)
}

/// A waker that counts how often it was woken.
#[derive(Default)]
struct Counter(AtomicUsize);

impl Wake for Counter {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A future polled by hand, with its own counting waker.
struct Task<F> {
    future: Pin<Box<F>>,
    wakes: Arc<Counter>,
}

impl<F: Future> Task<F> {
    fn new(future: F) -> Task<F> {
        Task {
            future: Box::pin(future),
            wakes: Arc::default(),
        }
    }

    fn poll(&mut self) -> Poll<F::Output> {
        let waker = Waker::from(Arc::clone(&self.wakes));
        self.future.as_mut().poll(&mut Context::from_waker(&waker))
    }

    fn wakes(&self) -> usize {
        self.wakes.0.load(Ordering::SeqCst)
    }
}

fn bg(t: &T) -> Acquire<'_, ManualClock> {
    t.acquire_async(Op::Write, OpFlags::BACKGROUND)
}

fn is_pending(p: &Polled<'_>) -> bool {
    p.is_pending()
}

/// Unparks the thread that blocks on the future.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// The smallest executor: poll, park until woken, poll again.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
        thread::park();
    }
}

#[test]
fn the_async_face_is_send() {
    fn send<T: Send>() {}
    send::<Acquire<'static, ManualClock>>();
    send::<OwnedAcquire<ManualClock>>();
}

/// Below the limit and for untracked requests the future is ready on its
/// first poll, with nothing queued and no wake.
#[test]
fn an_acquire_that_fits_is_ready_at_once() {
    let t = throttle(2);
    let mut read = Task::new(t.acquire_async(Op::Read, OpFlags::NONE));
    let Poll::Ready(Ok(r)) = read.poll() else {
        panic!("a read is never throttled")
    };
    assert_eq!(r.class(), None);
    let mut write = Task::new(bg(&t));
    let Poll::Ready(Ok(w)) = write.poll() else {
        panic!("below the limit")
    };
    assert_eq!(w.class(), Some(iolab_wbt::Class::Bg));
    assert_eq!((read.wakes(), write.wakes()), (0, 0));
    drop((r, w));
    assert_quiescent(&t);
}

/// A task over the limit waits in the FIFO; the completion that frees the
/// slot grants it in the completer's context (at that time) and wakes it
/// once; the next poll hands out the permit.
#[test]
fn a_waiting_task_is_granted_and_woken_by_a_completion() {
    let t = throttle(2);
    let held = t.acquire(Op::Write, OpFlags::BACKGROUND).expect("open");
    let mut task = Task::new(bg(&t));
    assert!(is_pending(&task.poll()));
    assert!(is_pending(&task.poll()), "polled again: still waiting");
    assert_eq!(t.snapshot().queued[0], 1, "one entry, not one per poll");
    assert_eq!(task.wakes(), 0);
    t.clock().advance(2_000_000);
    held.complete();
    assert_eq!(task.wakes(), 1, "woken once by the grant");
    assert_eq!(t.snapshot().wbt.inflight[0], 1, "the slot is the task's");
    let Poll::Ready(Ok(p)) = task.poll() else {
        panic!("granted")
    };
    assert_eq!(p.issue_ns(), 2_000_000);
    p.complete();
    assert_quiescent(&t);
}

/// Threads and tasks share one FIFO: a thread queued first is served
/// first, then the task behind it.
#[test]
fn threads_and_tasks_are_served_in_one_fifo() {
    let t = throttle(2);
    let held = t.acquire(Op::Write, OpFlags::BACKGROUND).expect("open");
    thread::scope(|s| {
        let thread_first = s.spawn(|| {
            let p = t.acquire(Op::Write, OpFlags::BACKGROUND).expect("open");
            let at = p.issue_ns();
            t.clock().advance(1_000);
            p.complete();
            at
        });
        while t.snapshot().queued[0] < 1 {
            thread::yield_now();
        }
        let mut task = Task::new(bg(&t));
        assert!(is_pending(&task.poll()));
        assert_eq!(t.snapshot().queued[0], 2);
        t.clock().advance(5_000);
        held.complete();
        assert_eq!(thread_first.join().expect("thread"), 5_000);
        assert_eq!(task.wakes(), 1, "the thread's completion granted the task");
        let Poll::Ready(Ok(p)) = task.poll() else {
            panic!("granted after the thread")
        };
        assert_eq!(p.issue_ns(), 6_000);
    });
    assert_quiescent(&t);
}

/// Dropping a queued future gives its place back: the task behind it
/// moves up and is granted by the next completion.
#[test]
fn a_dropped_waiting_task_gives_its_place_back() {
    let t = throttle(2);
    let held = t.acquire(Op::Write, OpFlags::BACKGROUND).expect("open");
    let mut first = Task::new(bg(&t));
    let mut second = Task::new(bg(&t));
    assert!(is_pending(&first.poll()));
    assert!(is_pending(&second.poll()));
    drop(first);
    let s = t.snapshot();
    assert_eq!((s.queued[0], s.wbt.waiting[0]), (1, 1));
    held.complete();
    assert_eq!(second.wakes(), 1);
    assert!(matches!(second.poll(), Poll::Ready(Ok(_))));
    assert_quiescent(&t);
}

/// Dropping a future granted but not yet polled releases the slot (no
/// latency sample), which grants the next waiter.
#[test]
fn a_dropped_granted_task_gives_its_slot_back() {
    let t = throttle(2);
    let held = t.acquire(Op::Write, OpFlags::BACKGROUND).expect("open");
    let mut granted = Task::new(bg(&t));
    let mut next = Task::new(bg(&t));
    assert!(is_pending(&granted.poll()));
    assert!(is_pending(&next.poll()));
    held.complete();
    assert_eq!((granted.wakes(), next.wakes()), (1, 0));
    drop(granted);
    assert_eq!(next.wakes(), 1, "the slot went to the next in line");
    let Poll::Ready(Ok(p)) = next.poll() else {
        panic!("granted")
    };
    drop(p);
    assert_quiescent(&t);
}

/// A dropped head that was held to a smaller limit no longer holds up the
/// waiters behind it: a normal write queued behind a background write
/// goes as soon as the background write gives up.
#[test]
fn a_dropped_head_lets_those_behind_it_go() {
    let t = throttle(8);
    t.clock().set(1_000_000_000); // far from any read: normal writes get wb_normal
    let s = t.snapshot().wbt;
    assert_eq!((s.background, s.normal), (2, 4));
    let a = t.acquire(Op::Write, OpFlags::NONE).expect("open");
    let b = t.acquire(Op::Write, OpFlags::NONE).expect("open");
    let mut head = Task::new(bg(&t));
    let mut behind = Task::new(t.acquire_async(Op::Write, OpFlags::NONE));
    assert!(is_pending(&head.poll()), "background is at its limit 2");
    assert!(
        is_pending(&behind.poll()),
        "FIFO: nobody overtakes a waiter"
    );
    drop(head);
    assert_eq!(behind.wakes(), 1, "granted when the head left");
    let Poll::Ready(Ok(c)) = behind.poll() else {
        panic!("granted")
    };
    assert_eq!(t.snapshot().wbt.inflight[0], 3);
    drop((a, b, c));
    assert_quiescent(&t);
}

/// The close wakes a waiting task with the error and refuses later ones.
#[test]
fn close_wakes_a_waiting_task_with_the_error() {
    let t = throttle(2);
    let held = t.acquire(Op::Write, OpFlags::BACKGROUND).expect("open");
    let mut task = Task::new(bg(&t));
    assert!(is_pending(&task.poll()));
    t.close();
    assert_eq!(task.wakes(), 1);
    assert!(matches!(task.poll(), Poll::Ready(Err(ThrottleClosed))));
    let mut later = Task::new(t.acquire_async(Op::Read, OpFlags::NONE));
    assert!(matches!(later.poll(), Poll::Ready(Err(ThrottleClosed))));
    drop(held);
    assert_quiescent(&t);
}

/// A task that moves between polls (a new waker) is woken through the
/// newest one only.
#[test]
fn the_newest_waker_is_the_one_woken() {
    let t = throttle(2);
    let held = t.acquire(Op::Write, OpFlags::BACKGROUND).expect("open");
    let mut future = Box::pin(bg(&t));
    let (old, new) = (Arc::new(Counter::default()), Arc::new(Counter::default()));
    for w in [&old, &new] {
        let waker = Waker::from(Arc::clone(w));
        assert!(
            future
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_pending()
        );
    }
    held.complete();
    assert_eq!(
        (old.0.load(Ordering::SeqCst), new.0.load(Ordering::SeqCst)),
        (0, 1)
    );
    drop(future);
    assert_quiescent(&t);
}

/// Owned futures and permits are `'static`: eight tasks, each on its own
/// thread under `block_on`, pass one slot along; every one is served and
/// the throttle outlives its last other owner.
#[test]
fn owned_tasks_on_threads_of_their_own_share_one_slot() {
    let t = Arc::new(throttle(2));
    let held = t
        .acquire_owned(Op::Write, OpFlags::BACKGROUND)
        .expect("open");
    let (done, holders) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let future = t.acquire_owned_async(Op::Write, OpFlags::BACKGROUND);
            let (done, holders) = (Arc::clone(&done), Arc::clone(&holders));
            thread::spawn(move || {
                let permit = block_on(future).expect("open");
                assert_eq!(
                    holders.fetch_add(1, Ordering::SeqCst),
                    0,
                    "two holders of limit 1"
                );
                holders.fetch_sub(1, Ordering::SeqCst);
                done.fetch_add(1, Ordering::SeqCst);
                permit.complete();
            })
        })
        .collect();
    while t.snapshot().wbt.waiting[0] < 8 {
        thread::yield_now();
    }
    let weak = Arc::downgrade(&t);
    drop(t);
    held.complete();
    for task in tasks {
        task.join().expect("task");
    }
    assert_eq!(done.load(Ordering::SeqCst), 8);
    assert!(
        weak.upgrade().is_none(),
        "the last permit freed the throttle"
    );
}

#[test]
#[should_panic(expected = "polled after it resolved")]
fn polling_a_resolved_future_again_panics() {
    let t = throttle(2);
    let mut task = Task::new(bg(&t));
    let _permit = task.poll();
    let _ = task.poll();
}
