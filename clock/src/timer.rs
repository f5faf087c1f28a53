//! Running a face's timers: [`Timed`], what a face with a `tick` offers;
//! [`Ticker`], a loop that ticks it on a thread or on any async runtime;
//! [`TimerWatch`], how a face notices that nobody ticks it.

use std::future::Future;
use std::time::Duration;

/// A face whose timers its user runs: iolab's throttle, pool and iocost
/// controller all implement it.
pub trait Timed {
    /// Run the timers due now; the next deadline (on the face's clock), if
    /// any.
    fn tick(&self) -> Option<u64>;

    /// The face's clock, ns.
    fn now_ns(&self) -> u64;

    /// The face was closed: its ticker stops.
    fn is_closed(&self) -> bool;
}

/// Ticks a [`Timed`] face at its deadlines until the face closes. With no
/// deadline armed (an idle face) it looks again every `idle`; a deadline
/// armed meanwhile (new IO starting a period) is therefore run up to
/// `idle` late, so keep `idle` well under the face's shortest period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticker {
    idle: Duration,
}

impl Default for Ticker {
    /// Looks again every millisecond when idle.
    fn default() -> Ticker {
        Ticker::new(Duration::from_millis(1))
    }
}

impl Ticker {
    /// A ticker that looks again every `idle` when no deadline is armed
    /// (and at least that often otherwise). A zero `idle` is taken as
    /// 1 µs, so the loop never spins.
    pub fn new(idle: Duration) -> Ticker {
        Ticker {
            idle: idle.max(Duration::from_micros(1)),
        }
    }

    /// Tick `face` once; how long to sleep before the next tick, or `None`
    /// once the face is closed. The building block of both loops, for a
    /// caller with its own.
    pub fn step<T: Timed + ?Sized>(&self, face: &T) -> Option<Duration> {
        if face.is_closed() {
            return None;
        }
        let next = face.tick();
        let now = face.now_ns();
        let wait = match next {
            Some(at) => Duration::from_nanos(at.saturating_sub(now)).min(self.idle),
            None => self.idle,
        };
        Some(wait)
    }

    /// Tick `face` on this thread until it closes (spawn a thread for it).
    pub fn run_blocking<T: Timed + ?Sized>(&self, face: &T) {
        while let Some(wait) = self.step(face) {
            if !wait.is_zero() {
                std::thread::sleep(wait);
            }
        }
    }

    /// Tick `face` in a task until it closes, sleeping with the runtime's
    /// own timer: `sleep` is, for tokio, `tokio::time::sleep`. No runtime
    /// is assumed.
    pub async fn run<T, F, S>(self, face: &T, mut sleep: S)
    where
        T: Timed + ?Sized,
        S: FnMut(Duration) -> F,
        F: Future<Output = ()>,
    {
        while let Some(wait) = self.step(face) {
            sleep(wait).await;
        }
    }
}

/// A deadline passed by more than this (1 s) when a face is next used
/// counts as a missed tick: every iolab face's [`TimerWatch`] grace.
pub const LATE_TICK_NS: u64 = 1_000_000_000;

/// Counts deadlines a face finds overdue by more than a grace period when
/// it is used: each is a timer nobody ran in time (no ticker, or one
/// starved). Each deadline counts once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerWatch {
    grace_ns: u64,
    counted: Option<u64>,
    missed: u64,
}

impl TimerWatch {
    /// A watch that forgives `grace_ns` of lateness.
    pub fn new(grace_ns: u64) -> TimerWatch {
        TimerWatch {
            grace_ns,
            counted: None,
            missed: 0,
        }
    }

    /// The face is used at `now` with `deadline` armed; `true` if this
    /// call found a deadline newly overdue.
    pub fn observe(&mut self, now: u64, deadline: Option<u64>) -> bool {
        let Some(d) = deadline else {
            return false;
        };
        if now.saturating_sub(d) <= self.grace_ns || self.counted == Some(d) {
            return false;
        }
        self.counted = Some(d);
        self.missed = self.missed.saturating_add(1);
        true
    }

    /// Deadlines found overdue so far.
    pub fn missed(&self) -> u64 {
        self.missed
    }
}

#[cfg(all(test, not(iolab_loom)))]
mod tests {
    use super::*;
    use crate::{Clock, ManualClock};
    use std::cell::Cell;

    /// A face with one deadline every `period`, counting ticks.
    struct Face {
        clock: ManualClock,
        period: u64,
        next: Cell<u64>,
        ticks: Cell<u32>,
        close_after: u32,
    }

    impl Timed for Face {
        fn tick(&self) -> Option<u64> {
            let now = self.clock.now_ns();
            if now >= self.next.get() {
                self.ticks.set(self.ticks.get() + 1);
                self.next.set(now + self.period);
            }
            Some(self.next.get())
        }
        fn now_ns(&self) -> u64 {
            self.clock.now_ns()
        }
        fn is_closed(&self) -> bool {
            self.ticks.get() >= self.close_after
        }
    }

    #[test]
    fn a_step_sleeps_until_the_deadline_but_never_past_idle() {
        let face = Face {
            clock: ManualClock::new(0),
            period: 5_000_000,
            next: Cell::new(0),
            ticks: Cell::new(0),
            close_after: 3,
        };
        let t = Ticker::new(Duration::from_millis(2));
        assert_eq!(t.step(&face), Some(Duration::from_millis(2)));
        assert_eq!(face.ticks.get(), 1);
        face.clock.advance(4_000_000);
        assert_eq!(t.step(&face), Some(Duration::from_millis(1)));
        face.clock.advance(1_000_000);
        t.step(&face);
        face.clock.advance(5_000_000);
        t.step(&face);
        assert_eq!(face.ticks.get(), 3);
        assert_eq!(t.step(&face), None, "closed");
    }

    #[test]
    fn the_async_loop_sleeps_what_step_says_and_ends_on_close() {
        let face = Face {
            clock: ManualClock::new(0),
            period: 3_000_000,
            next: Cell::new(0),
            ticks: Cell::new(0),
            close_after: 4,
        };
        let slept = Cell::new(Duration::ZERO);
        let fut = Ticker::new(Duration::from_millis(10)).run(&face, |d| {
            slept.set(slept.get() + d);
            face.clock.advance(d.as_nanos() as u64);
            std::future::ready(())
        });
        let mut fut = std::pin::pin!(fut);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(fut.as_mut().poll(&mut cx).is_ready());
        assert_eq!(face.ticks.get(), 4);
        assert_eq!(slept.get(), Duration::from_millis(12), "four 3 ms sleeps");
    }

    #[test]
    fn a_watch_counts_each_overdue_deadline_once() {
        let mut w = TimerWatch::new(100);
        assert!(!w.observe(50, Some(10)), "within grace");
        assert!(!w.observe(1_000, None));
        assert!(w.observe(1_000, Some(10)));
        assert!(!w.observe(2_000, Some(10)), "the same deadline");
        assert!(w.observe(5_000, Some(1_500)));
        assert_eq!(w.missed(), 2);
    }
}
