//! Linux writeback throttling (blk-wbt) as a pure, deterministic state
//! machine, in its modern form and in the 2016 "v5" form.
//!
//! WBT caps how many *tracked* requests (buffered writes and discards) a
//! block device may have outstanding. Once per monitoring window it looks at
//! the fastest read completion of that window; if even that read missed the
//! latency target, the write depth is halved (and the window shortened), and
//! if reads were fine the depth is relaxed again. Reads are never throttled;
//! they only provide the signal. The rules and constants are those of
//! `block/blk-wbt.c` and `block/blk-rq-qos.c`.
//!
//! # Shape: sans-IO
//!
//! [`Wbt`] never reads a clock, never sleeps, never spawns a thread and never
//! allocates. Time is an input (`now`, `u64` nanoseconds from any fixed
//! origin, non-decreasing). You drive it from your own engine:
//!
//! ```text
//! submit a bio      -> wbt.on_throttle(now, op, flags)  -> Admit::Go(rq_flags) | Admit::Wait(class)
//! turned into rq    -> (store rq_flags on the request; wbt.on_track recomputes, like the kernel)
//! sent to device    -> wbt.on_issue(now, rq)
//! completed / freed -> wbt.on_done(now, rq, issue_ns)
//! dirty throttling  -> wbt.on_dirty_throttle(now)     (a writer slept in balance_dirty_pages)
//! timer             -> wbt.next_deadline(), then wbt.on_timer(now) when it is due
//! after any call    -> drain wbt.poll_wake() and wbt.poll_trace()
//! ```
//!
//! The core keeps per-class inflight counters and the *number* of waiters
//! per class; the FIFO of waiting bios is yours. When [`Wbt::poll_wake`]
//! yields a [`Wake`] for a class, walk your FIFO for that class as its
//! [`WakeMode`] says, calling [`Wbt::try_admit`] for each waiter you try; a
//! `true` means the waiter now holds a slot and may proceed with the flags
//! [`ReqFlags::tracked`] gives for its class. In the modern variant the
//! waker grants in FIFO order and stops at the first refusal (head-of-line
//! blocking is the kernel's design, `rq_qos_wake_function`).
//!
//! ```
//! use iolab_wbt::{Admit, DeviceParams, Op, OpFlags, Rq, Variant, Wbt};
//!
//! let mut wbt = Wbt::new(
//!     DeviceParams { queue_depth: 32, rotational: false, write_cache: false },
//!     Variant::Modern,
//! );
//! let now = 200_000_000; // 200 ms into the run
//! let Admit::Go(flags) = wbt.on_throttle(now, Op::Write, OpFlags::BACKGROUND) else {
//!     panic!("an idle device admits the first write");
//! };
//! let rq = Rq { id: 1, op: Op::Write, flags };
//! wbt.on_issue(now, rq);
//! assert_eq!(wbt.next_deadline(), Some(now + 100_000_000)); // the window is armed
//! wbt.on_done(now + 1_000_000, rq, Some(now));
//! while let Some(_wake) = wbt.poll_wake() { /* grant waiters */ }
//! while let Some(_rec) = wbt.poll_trace() { /* log it */ }
//! ```
//!
//! # Userspace face (feature `std`, on by default)
//!
//! [`Throttle`] shares one [`Wbt`] between threads: [`Throttle::acquire`]
//! blocks until a request may go and returns a [`Permit`], completing the
//! permit releases the slot and records its latency; waiters are served in
//! FIFO order by whoever releases a slot (kernel: `rq_qos_wait`). [`Throttle::close`]
//! shuts it down: sleepers wake with [`ThrottleClosed`] and every later
//! acquire is refused. Like the kernel, it
//! admits and releases tracked writes without a lock while nobody waits:
//! the core keeps its per-class counters in a [`Slots`] store, which the
//! face makes atomic. Time comes from an
//! injected [`Clock`] ([`SystemClock`] in production, [`ManualClock`] in
//! tests) and the window timer is driven by the caller through
//! [`Throttle::tick`]. Its synchronisation types come from [`sync`], which
//! swaps in loom under `--cfg iolab_loom`. Without the feature the crate
//! is `no_std` and holds the core only.
//!
//! # Extension points
//!
//! * The scaling step: [`DepthPolicy`] gives the depths at a step and
//!   moves the step when a window asks; [`Variant`] is ours, and
//!   [`Wbt::with_depth_policy`] runs yours inside a variant's other rules.
//!   The core checks every answer where it uses it ([`DepthRule`]) and
//!   refuses a broken one with a [`DepthError`], in every build.
//! * A threaded throttle of your own implements [`Admission`] (feature
//!   `std`), which [`Throttle`] implements too.
//!
//! `iolab-verification` runs the rules on either from your tests
//! (`wbt::depth::check`, and the loom models `wbt::admission::check`).
//!
//! # Variants
//!
//! * [`Variant::Modern`] (default): mainline `block/blk-wbt.c` (6.x) with
//!   `block/blk-rq-qos.c` depth rules: base depth 16, negative steps up to
//!   3/4 of the queue depth, three classes (background, swap, discard), the
//!   UNKNOWN_WRITES verdict, dirty throttling remembered for one second.
//! * [`Variant::V5_2016`]: the April 2016 `lib/wbt.c` posting (v5, "wbt: add
//!   general throttling mechanism", 26 Apr 2016): base depth min(64, QD),
//!   steps never negative, one queue woken one waiter at a time, discards
//!   untracked, and the dirty-throttle signal is "someone is sleeping in
//!   balance_dirty_pages right now" ([`Wbt::on_dirty_throttle`] /
//!   [`Wbt::on_dirty_throttle_end`]).
//!
//! # Traces
//!
//! Every transition the kernel traces yields a [`TraceRecord`] mirroring
//! the `wbt_step`, `wbt_stat`, `wbt_lat` and `wbt_timer` tracepoints. They
//! sit in a fixed ring of [`TRACE_CAPACITY`] records inside [`Wbt`]; when the
//! ring is full the oldest record is overwritten (like ftrace's default
//! overwrite mode) and [`Wbt::trace_dropped`] counts the loss.
//!
//! # Deliberate differences from the kernel
//!
//! * The stuck-read tracker uses `Option` instead of "issue time 0 means
//!   none", so a read issued at `now == 0` is watched too.
//! * With the latency target at 0 (disabled), [`Wbt::try_admit`] admits
//!   unconditionally instead of failing against a limit of 0; the kernel
//!   never gets there because sysfs freezes the queue.
//! * A release of an empty class saturates at 0 and is counted in
//!   [`Snapshot::underflows`] instead of going negative (the 2022
//!   negative-inflight hang).
//! * Depth arithmetic is done in 64 bits, so absurd queue depths cannot
//!   overflow; for every realistic depth the results are the kernel's.
//! * No dirty-page sleep is assumed before the first
//!   [`Wbt::on_dirty_throttle`]. The kernel initialises that timestamp when
//!   the backing device is created, so a freshly created device sees
//!   "recent dirty throttling" for its first second.
//! * v5: window statistics are cleared at every expiry, like the modern
//!   code. The 2016 code read them from the block layer's own stat window
//!   and cleared them only when it changed step.
//! * The kernel time-stamps recent reads and dirty sleeps in jiffies; the
//!   core keeps nanoseconds (100 ms and 1 s horizons, compared with `<`).
//!   [`Options::tick_hz`] rounds window deadlines only.

#![no_std]

#[cfg(feature = "std")]
extern crate std;

mod classify;
mod consts;
mod depth;
mod depth_policy;
mod hooks;
mod knob;
mod limit;
mod machine;
mod params;
mod slots;
mod snapshot;
#[cfg(feature = "std")]
pub mod sync;
#[cfg(feature = "std")]
pub mod throttle;
mod trace;
mod verdict;
mod wake;
mod window;

pub use classify::{Class, Op, OpFlags, ReqFlags, UnknownClass, classify_request};
pub use consts::{
    CLOSE_IO_NS, DEF_DEPTH, DEFAULT_LAT_NONROT_NS, DEFAULT_LAT_ROT_NS, MIN_READ_SAMPLES,
    MIN_WRITE_SAMPLES, NUM_CLASSES, RECENT_DIRTY_WAIT_NS, TRACE_CAPACITY, UNKNOWN_BUMP,
    V5_MAX_DEPTH, WINDOW_NS,
};
pub use depth::{StepDir, calc_limits, calc_max_depth};
pub use depth_policy::{
    DepthAt, DepthError, DepthNow, DepthPolicy, DepthRule, check_limits, check_step,
};
pub use hooks::{Admit, Rq};
pub use knob::{EnableState, KnobError, default_lat_ns};
pub use limit::{AdmissionView, Limits, select_limit};
pub use machine::Wbt;
pub use params::{DeviceParams, Options, Variant};
pub use slots::{LocalSlots, Released, Slots};
pub use snapshot::Snapshot;
#[cfg(feature = "std")]
pub use throttle::{
    Acquire, Admission, Clock, LATE_TICK_NS, ManualClock, OwnedAcquire, OwnedPermit, Permit,
    SystemClock, Throttle, ThrottleClosed, ThrottleSnapshot, Ticker, Timed, TryAcquireError,
};
pub use trace::TraceRecord;
pub use verdict::{Verdict, WindowInputs, WindowOutcome};
pub use wake::{Wake, WakeMode};
pub use window::{WindowStat, isqrt, window_ns};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod window_tests;

/// What an engine imports to run the throttle, with names that do not
/// collide with the other iolab crates' preludes: `use iolab_wbt::prelude::*;`
/// beside `iolab_iocost::prelude::*`, `iolab_flush::prelude::*` and
/// `iolab_tiering::prelude::*`. The names the crates share (`Op`,
/// `Variant`, `Options`) carry the crate's name here.
pub mod prelude {
    #[cfg(feature = "std")]
    pub use crate::{
        Acquire, Admission, Clock, ManualClock, OwnedAcquire, OwnedPermit, Permit, SystemClock,
        Throttle, ThrottleClosed, ThrottleSnapshot, Ticker, Timed, TryAcquireError,
    };
    pub use crate::{
        DepthPolicy, DeviceParams, Op as WbtOp, OpFlags, Options as WbtOptions,
        Variant as WbtVariant, Wbt,
    };
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
