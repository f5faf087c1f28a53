//! Linux writeback throttling (blk-wbt) as a pure, deterministic state
//! machine, in its modern form and in the 2016 "v5" form.
//!
//! WBT caps how many *tracked* requests (buffered writes and discards) a
//! block device may have outstanding. Once per monitoring window it looks at
//! the fastest read completion of that window; if even that read missed the
//! latency target, the write depth is halved (and the window shortened), and
//! if reads were fine the depth is relaxed again. Reads are never throttled;
//! they only provide the signal. The full rules, with the kernel constants,
//! are in `shared/spec/wbt.md`; section numbers below (§n) refer to it.
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
//! blocking is the kernel's design, §8).
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
//! # Variants
//!
//! * [`Variant::Modern`] (default): mainline `block/blk-wbt.c` (6.x) with
//!   `block/blk-rq-qos.c` depth rules: base depth 16, negative steps up to
//!   3/4 of the queue depth, three classes (background, swap, discard), the
//!   UNKNOWN_WRITES verdict, dirty throttling remembered for one second.
//! * [`Variant::V5_2016`]: the April 2016 `lib/wbt.c` posting (spec §11,
//!   fidelity F1.7): base depth min(64, QD), steps never negative, one queue
//!   woken one waiter at a time, discards untracked, and the dirty-throttle
//!   signal is "someone is sleeping in balance_dirty_pages right now"
//!   ([`Wbt::on_dirty_throttle`] / [`Wbt::on_dirty_throttle_end`]).
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
//!   never gets there because sysfs freezes the queue (spec §9 B9).
//! * A release of an empty class saturates at 0 and is counted in
//!   [`Snapshot::underflows`] instead of going negative (spec §9 B8).
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

use core::fmt;

/// Base depth at step 0, before the queue-depth cap (kernel: `RWB_DEF_DEPTH`).
pub const DEF_DEPTH: u32 = 16;
/// Base depth of the 2016 v5 code (kernel v5: `RWB_MAX_DEPTH`).
pub const V5_MAX_DEPTH: u32 = 64;
/// Base monitoring window (kernel: `RWB_WINDOW_NSEC`).
pub const WINDOW_NS: u64 = 100_000_000;
/// Read completions needed for a valid window.
pub const MIN_READ_SAMPLES: u32 = 1;
/// Write-direction completions needed for a valid window (kernel: `RWB_MIN_WRITE_SAMPLES`).
pub const MIN_WRITE_SAMPLES: u32 = 3;
/// Consecutive no-data windows before drifting one step toward 0 (kernel: `RWB_UNKNOWN_BUMP`).
pub const UNKNOWN_BUMP: u32 = 5;
/// Default latency target on non-rotational devices (2 ms).
pub const DEFAULT_LAT_NONROT_NS: u64 = 2_000_000;
/// Default latency target on rotational devices (75 ms).
pub const DEFAULT_LAT_ROT_NS: u64 = 75_000_000;
/// "Other IO happened recently" horizon (kernel: `HZ / 10` in `close_io`).
pub const CLOSE_IO_NS: u64 = 100_000_000;
/// "A writer was dirty-throttled recently" horizon (kernel: `HZ` in `wb_recent_wait`).
pub const RECENT_DIRTY_WAIT_NS: u64 = 1_000_000_000;
/// Records the trace ring holds before it overwrites the oldest.
pub const TRACE_CAPACITY: usize = 64;
/// Number of throttling classes (kernel: `WBT_NUM_RWQ`).
pub const NUM_CLASSES: usize = 3;

/// Floor square root (kernel: `int_sqrt`).
pub const fn isqrt(x: u64) -> u64 {
    if x < 2 {
        return x;
    }
    // Newton iteration from a power of two above the root.
    let mut r = 1u64 << (64 - x.leading_zeros()).div_ceil(2);
    loop {
        let next = (r + x / r) / 2;
        if next >= r {
            return r;
        }
        r = next;
    }
}

/// Monitoring window length at `step` (kernel: `rwb_arm_timer`):
/// `(WINDOW_NS << 4) / isqrt((step + 1) << 8)` for step > 0, else `WINDOW_NS`.
/// The v5 code used the same formula at every step ≥ 0, which gives the same
/// numbers.
pub const fn window_ns(step: i32) -> u64 {
    if step > 0 {
        (WINDOW_NS << 4) / isqrt(((step as u64) + 1) << 8)
    } else {
        WINDOW_NS
    }
}

/// Maximum depth at `step` for queue depth `qd`, and whether a cap was hit
/// (kernel: `rq_depth_calc_max_depth`; v5: the `wb_max` line of
/// `calc_wb_limits`, which has no cap).
pub fn calc_max_depth(variant: Variant, qd: u32, step: i32) -> (u32, bool) {
    let qd = qd.max(1);
    match variant {
        Variant::V5_2016 => {
            let d = u64::from(V5_MAX_DEPTH.min(qd));
            let shift = step.clamp(0, 31) as u32;
            ((1 + ((d - 1) >> shift)) as u32, false)
        }
        Variant::Modern => {
            if qd == 1 {
                // One request in service and one ready behind it.
                return if step > 0 { (1, false) } else { (2, true) };
            }
            let d = u64::from(DEF_DEPTH.min(qd));
            if step > 0 {
                let shift = step.min(31) as u32;
                ((1 + ((d - 1) >> shift)) as u32, false)
            } else if step < 0 {
                let cap = 3 * u64::from(qd) / 4;
                let shift = step.unsigned_abs().min(63);
                let depth = if d - 1 > u64::MAX >> (shift + 1) {
                    u64::MAX
                } else {
                    1 + ((d - 1) << shift)
                };
                if depth > cap {
                    (cap as u32, true)
                } else {
                    (depth as u32, false)
                }
            } else {
                (d as u32, false)
            }
        }
    }
}

/// Normal and background limits for a maximum depth (kernel: `calc_wb_limits`).
/// Returns `(normal, background)`; both are 0 when the target is 0.
pub fn calc_limits(variant: Variant, max_depth: u32, min_lat_ns: u64) -> (u32, u32) {
    if min_lat_ns == 0 {
        return (0, 0);
    }
    match variant {
        Variant::Modern if max_depth <= 2 => (max_depth, 1),
        _ => (max_depth.div_ceil(2), max_depth.div_ceil(4)),
    }
}

/// Which generation of the algorithm to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Mainline blk-wbt (6.x), spec §3–8.
    #[default]
    Modern,
    /// The April 2016 v5 posting (`lib/wbt.c`), spec §11–12 and fidelity F1.7.
    V5_2016,
}

/// Static facts about the device (spec §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceParams {
    /// Device queue depth; 0 is treated as 1.
    pub queue_depth: u32,
    /// Rotational (HDD): the default target is 75 ms instead of 2 ms.
    pub rotational: bool,
    /// A volatile write-back cache is present (kernel: `QUEUE_FLAG_WC`).
    pub write_cache: bool,
}

/// Optional behaviour beyond the device parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Time at which the instance is created. The kernel stamps the last
    /// read issue and completion with the init time, so for the first
    /// 100 ms every write counts as being close to other IO.
    pub start_ns: u64,
    /// If set, window deadlines are truncated to timer ticks of this rate,
    /// as the kernel does (`jiffies + nsecs_to_jiffies(window)`). `None`
    /// keeps exact nanoseconds.
    pub tick_hz: Option<u32>,
}

/// Request operation, as far as WBT cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `REQ_OP_READ`.
    Read,
    /// `REQ_OP_WRITE`.
    Write,
    /// `REQ_OP_DISCARD`.
    Discard,
    /// `REQ_OP_WRITE_ZEROES`: write direction (counts in write stats), never throttled.
    WriteZeroes,
    /// `REQ_OP_FLUSH`: neither throttled nor counted.
    Flush,
}

impl Op {
    fn is_write_dir(self) -> bool {
        matches!(self, Op::Write | Op::Discard | Op::WriteZeroes)
    }
}

/// Request operation flags (`REQ_*`), a bit set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OpFlags(pub u32);

impl OpFlags {
    /// No flags.
    pub const NONE: OpFlags = OpFlags(0);
    /// `REQ_SYNC`.
    pub const SYNC: OpFlags = OpFlags(1);
    /// `REQ_IDLE`; with SYNC on a write it is the O_DIRECT signature.
    pub const IDLE: OpFlags = OpFlags(2);
    /// `REQ_META`.
    pub const META: OpFlags = OpFlags(4);
    /// `REQ_PRIO`.
    pub const PRIO: OpFlags = OpFlags(8);
    /// `REQ_BACKGROUND` (background writeback).
    pub const BACKGROUND: OpFlags = OpFlags(16);
    /// `REQ_SWAP` (swap-out; exempt class in the modern kernel).
    pub const SWAP: OpFlags = OpFlags(32);

    /// True if every bit of `other` is set.
    pub const fn contains(self, other: OpFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// True if any bit of `other` is set.
    pub const fn intersects(self, other: OpFlags) -> bool {
        self.0 & other.0 != 0
    }
}

impl core::ops::BitOr for OpFlags {
    type Output = OpFlags;
    fn bitor(self, rhs: OpFlags) -> OpFlags {
        OpFlags(self.0 | rhs.0)
    }
}

/// WBT's per-request flags (kernel: `enum wbt_flags`), stored on the request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ReqFlags(pub u8);

impl ReqFlags {
    /// Not WBT's business.
    pub const NONE: ReqFlags = ReqFlags(0);
    /// Counted in a class's inflight counter (`WBT_TRACKED`).
    pub const TRACKED: ReqFlags = ReqFlags(1);
    /// A read: feeds the stuck-read tracker and `close_io` (`WBT_READ`).
    pub const READ: ReqFlags = ReqFlags(2);
    /// Swap class (`WBT_SWAP`, formerly `WBT_KSWAPD`).
    pub const SWAP: ReqFlags = ReqFlags(4);
    /// Discard class (`WBT_DISCARD`).
    pub const DISCARD: ReqFlags = ReqFlags(8);

    /// True if every bit of `other` is set.
    pub const fn contains(self, other: ReqFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// The flags a tracked request of `class` carries (what a waiter granted
    /// through [`Wbt::try_admit`] stores on its request).
    pub const fn tracked(class: Class) -> ReqFlags {
        match class {
            Class::Bg => ReqFlags::TRACKED,
            Class::Swap => ReqFlags(ReqFlags::TRACKED.0 | ReqFlags::SWAP.0),
            Class::Discard => ReqFlags(ReqFlags::TRACKED.0 | ReqFlags::DISCARD.0),
        }
    }

    /// The class of a tracked request (kernel: `get_rq_wait`), `None` if untracked.
    pub const fn class(self) -> Option<Class> {
        if !self.contains(ReqFlags::TRACKED) {
            None
        } else if self.contains(ReqFlags::SWAP) {
            Some(Class::Swap)
        } else if self.contains(ReqFlags::DISCARD) {
            Some(Class::Discard)
        } else {
            Some(Class::Bg)
        }
    }
}

/// Throttling class: each has its own inflight counter and wait queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Buffered writes (`WBT_RWQ_BG`). The only class of the v5 variant.
    Bg = 0,
    /// Swap-out writes (`WBT_RWQ_SWAP`).
    Swap = 1,
    /// Discards (`WBT_RWQ_DISCARD`).
    Discard = 2,
}

impl Class {
    /// All classes in index order.
    pub const ALL: [Class; NUM_CLASSES] = [Class::Bg, Class::Swap, Class::Discard];

    /// Index into per-class arrays.
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// A class index outside 0..3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownClass(pub usize);

impl fmt::Display for UnknownClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown wbt class {} (0 = background, 1 = swap, 2 = discard)",
            self.0
        )
    }
}

impl core::error::Error for UnknownClass {}

impl TryFrom<usize> for Class {
    type Error = UnknownClass;

    fn try_from(i: usize) -> Result<Class, UnknownClass> {
        Class::ALL.get(i).copied().ok_or(UnknownClass(i))
    }
}

/// Outcome of [`Wbt::on_throttle`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Proceed; store these flags on the request (they may be empty).
    Go(ReqFlags),
    /// Over the limit: queue the bio at the tail of your FIFO for this class
    /// and wait for a [`Wake`].
    Wait(Class),
}

/// How to serve a class's waiters after a wake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeMode {
    /// Modern: walk the FIFO from the head calling [`Wbt::try_admit`] with
    /// each waiter's flags; stop at the first `false` (kernel:
    /// `rq_qos_wake_function` granting under the queue lock).
    GrantFifo,
    /// v5 `wake_up_all`: every waiter rechecks once, in FIFO order; those
    /// refused stay queued and later ones may still succeed.
    RecheckAll,
    /// v5 `wake_up_nr(1)`: only the head waiter rechecks.
    RecheckOne,
}

/// A wake request for one class, drained with [`Wbt::poll_wake`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wake {
    /// The class whose waiters should be served.
    pub class: Class,
    /// How to serve them.
    pub mode: WakeMode,
}

/// A request as WBT sees it at issue and completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rq {
    /// Caller's request identity (kernel: the request pointer, used as the
    /// stuck-read cookie). Must be unique among requests in flight.
    pub id: u64,
    /// Operation.
    pub op: Op,
    /// Flags from [`Admit::Go`], [`ReqFlags::tracked`] or [`Wbt::on_track`].
    pub flags: ReqFlags,
}

/// Enable state (kernel: `WBT_STATE_*`, spec §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnableState {
    /// On by default.
    OnDefault = 1,
    /// Turned on (or retargeted) through the knob.
    OnManual = 2,
    /// Turned off by default (e.g. BFQ or iocost asked for it).
    OffDefault = 3,
    /// Turned off through the knob (`wbt_lat_usec = 0`).
    OffManual = 4,
}

/// Window verdict (kernel: `LAT_*` returned by `latency_exceeded`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Reads met the target: relax (`LAT_OK`).
    Ok = 1,
    /// Not enough data and nothing going on (`LAT_UNKNOWN`).
    Unknown = 2,
    /// Not enough data but writes are going on: relax (`LAT_UNKNOWN_WRITES`, modern only).
    UnknownWrites = 3,
    /// Reads missed the target, or a read is stuck: squeeze (`LAT_EXCEEDED`).
    Exceeded = 4,
}

/// Direction of a depth step, as the `wbt_step` tracepoint's message says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepDir {
    /// Depth relaxed: "scale up" (modern) / "step up" (v5).
    Up,
    /// Depth squeezed: "scale down" (modern) / "step down" (v5).
    Down,
}

/// Completion-latency accumulator of one direction over one window
/// (kernel: `struct blk_rq_stat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowStat {
    /// Samples recorded.
    pub nr_samples: u32,
    /// Smallest sample; `u64::MAX` when empty.
    pub min: u64,
    /// Largest sample; 0 when empty.
    pub max: u64,
    /// Sum of samples (the tracepoint's `time`, the kernel's `batch`).
    pub sum: u64,
}

impl WindowStat {
    /// An empty accumulator.
    pub const EMPTY: WindowStat = WindowStat {
        nr_samples: 0,
        min: u64::MAX,
        max: 0,
        sum: 0,
    };

    fn add(&mut self, v: u64) {
        self.nr_samples = self.nr_samples.saturating_add(1);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum = self.sum.saturating_add(v);
    }

    /// Mean sample, 0 when empty.
    pub fn mean(&self) -> u64 {
        if self.nr_samples == 0 {
            0
        } else {
            self.sum / u64::from(self.nr_samples)
        }
    }
}

/// One transition, mirroring a kernel tracepoint. `now` is the time of the
/// call that produced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceRecord {
    /// `wbt_step`: the depth changed (after the change).
    Step {
        /// Time of the transition.
        now: u64,
        /// Message: scale up or scale down.
        dir: StepDir,
        /// New `scale_step`.
        step: i32,
        /// `cur_win_nsec` at the time (the window re-arm follows the step).
        window_ns: u64,
        /// `wb_background`.
        background: u32,
        /// `wb_normal`.
        normal: u32,
        /// `max_depth` (v5: `wb_max`).
        max: u32,
    },
    /// `wbt_stat`: the window's read and write statistics (emitted on an
    /// EXCEEDED by read latency, and on OK while the step is not 0).
    Stat {
        /// Time of the window expiry.
        now: u64,
        /// Read bucket (`rmean`, `rmin`, `rmax`, `rnr_samples`, `rtime`).
        read: WindowStat,
        /// Write bucket (`wmean`, ...).
        write: WindowStat,
    },
    /// `wbt_lat`: the latency that caused an EXCEEDED (stuck read or window
    /// minimum). The kernel prints it in microseconds: `lat_ns / 1000`.
    Lat {
        /// Time of the window expiry.
        now: u64,
        /// The offending latency in nanoseconds.
        lat_ns: u64,
    },
    /// `wbt_timer`: a window expired. The v5 code had no such tracepoint;
    /// the v5 variant emits it anyway for uniform output.
    Timer {
        /// Time of the window expiry.
        now: u64,
        /// The verdict.
        verdict: Verdict,
        /// `scale_step` before this expiry's scaling.
        step: i32,
        /// Total tracked inflight at the start of the expiry.
        inflight: u32,
    },
}

/// Rejected value of the `wbt_lat_usec` knob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KnobError {
    /// Values below −1 are invalid (the kernel answers `EINVAL`).
    BelowMinusOne(i64),
    /// The value in nanoseconds does not fit in 64 bits.
    Overflow(i64),
    /// The text is not a signed 64-bit decimal number.
    NotANumber,
}

impl fmt::Display for KnobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KnobError::BelowMinusOne(v) => write!(
                f,
                "wbt_lat_usec: {v} is invalid (use -1 for the default, 0 to disable, or a positive latency in microseconds)"
            ),
            KnobError::Overflow(v) => {
                write!(f, "wbt_lat_usec: {v} microseconds is too large")
            }
            KnobError::NotANumber => {
                write!(
                    f,
                    "wbt_lat_usec: not a number (expected an integer, in microseconds)"
                )
            }
        }
    }
}

impl core::error::Error for KnobError {}

/// A copy of the controller state for export (kernel: the debugfs view plus
/// the step).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Which variant runs.
    pub variant: Variant,
    /// Enable state.
    pub enable_state: EnableState,
    /// Whether requests are classified and throttled.
    pub enabled: bool,
    /// Latency target in ns (`min_lat_nsec`); 0 = disabled.
    pub min_lat_ns: u64,
    /// `scale_step`.
    pub step: i32,
    /// `scaled_max`: the 3/4-QD cap was hit; scale-ups are refused.
    pub scaled_max: bool,
    /// `max_depth`.
    pub max_depth: u32,
    /// `wb_normal`.
    pub normal: u32,
    /// `wb_background`.
    pub background: u32,
    /// Tracked inflight per class (index with [`Class::index`]).
    pub inflight: [u32; NUM_CLASSES],
    /// Waiters per class, as counted by the core.
    pub waiting: [u32; NUM_CLASSES],
    /// `cur_win_nsec`.
    pub window_ns: u64,
    /// Deadline of the armed window, if any.
    pub window_deadline: Option<u64>,
    /// `unknown_cnt`.
    pub unknown_cnt: u32,
    /// Device queue depth in use.
    pub queue_depth: u32,
    /// Trace records overwritten before they were drained.
    pub trace_dropped: u64,
    /// Releases of a class whose counter was already 0 (should stay 0).
    pub underflows: u64,
}

/// The WBT controller of one device. See the crate docs for how to drive it.
#[derive(Clone, Debug)]
pub struct Wbt {
    variant: Variant,
    queue_depth: u32,
    rotational: bool,
    write_cache: bool,
    tick_ns: Option<u64>,

    min_lat_ns: u64,
    enable_state: EnableState,

    step: i32,
    scaled_max: bool,
    max_depth: u32,
    normal: u32,
    background: u32,

    unknown_cnt: u32,
    cur_win_ns: u64,
    deadline: Option<u64>,
    stats: [WindowStat; 2],

    /// Stuck-read tracker: (cookie, issue time).
    sync: Option<(u64, u64)>,
    last_issue: u64,
    last_comp: u64,
    /// Modern: last time a writer slept in dirty balancing.
    last_dirty_sleep: Option<u64>,
    /// v5: writers sleeping in dirty balancing right now.
    dirty_sleeping: u32,

    inflight: [u32; NUM_CLASSES],
    waiting: [u32; NUM_CLASSES],
    wakes: [Option<WakeMode>; NUM_CLASSES],
    underflows: u64,

    ring: [Option<TraceRecord>; TRACE_CAPACITY],
    ring_head: usize,
    ring_len: usize,
    trace_dropped: u64,
}

const READ_BUCKET: usize = 0;
const WRITE_BUCKET: usize = 1;

impl Wbt {
    /// A controller created at time 0, enabled by default with the default
    /// target for the device (kernel: `wbt_init`).
    pub fn new(params: DeviceParams, variant: Variant) -> Wbt {
        Wbt::with_options(params, variant, Options::default())
    }

    /// A controller with explicit [`Options`].
    pub fn with_options(params: DeviceParams, variant: Variant, options: Options) -> Wbt {
        let tick_ns = options
            .tick_hz
            .filter(|hz| *hz > 0)
            .map(|hz| (1_000_000_000 / u64::from(hz)).max(1));
        let mut wbt = Wbt {
            variant,
            queue_depth: params.queue_depth.max(1),
            rotational: params.rotational,
            write_cache: params.write_cache,
            tick_ns,
            min_lat_ns: default_lat_ns(params.rotational),
            enable_state: EnableState::OnDefault,
            step: 0,
            scaled_max: false,
            max_depth: 0,
            normal: 0,
            background: 0,
            unknown_cnt: 0,
            cur_win_ns: WINDOW_NS,
            deadline: None,
            stats: [WindowStat::EMPTY; 2],
            sync: None,
            last_issue: options.start_ns,
            last_comp: options.start_ns,
            last_dirty_sleep: None,
            dirty_sleeping: 0,
            inflight: [0; NUM_CLASSES],
            waiting: [0; NUM_CLASSES],
            wakes: [None; NUM_CLASSES],
            underflows: 0,
            ring: [None; TRACE_CAPACITY],
            ring_head: 0,
            ring_len: 0,
            trace_dropped: 0,
        };
        wbt.reset_limits();
        wbt
    }

    /// The variant this instance runs.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Whether requests are classified and throttled (kernel: `rwb_enabled`;
    /// v5: `wb_normal != 0`).
    pub fn enabled(&self) -> bool {
        let on = matches!(
            self.enable_state,
            EnableState::OnDefault | EnableState::OnManual
        );
        match self.variant {
            Variant::Modern => on,
            Variant::V5_2016 => on && self.normal != 0,
        }
    }

    /// Current `scale_step`.
    pub fn step(&self) -> i32 {
        self.step
    }

    /// Current `max_depth`.
    pub fn max_depth(&self) -> u32 {
        self.max_depth
    }

    /// Current `wb_normal`.
    pub fn normal(&self) -> u32 {
        self.normal
    }

    /// Current `wb_background`.
    pub fn background(&self) -> u32 {
        self.background
    }

    /// Tracked inflight of one class.
    pub fn inflight(&self, class: Class) -> u32 {
        self.inflight[class.index()]
    }

    // ---------------------------------------------------------------
    // Classification and limits
    // ---------------------------------------------------------------

    /// Classify a bio (kernel: `bio_to_wbt_flags`, spec §5). Empty when
    /// disabled. In v5 only buffered writes are tracked (no READ bit, no
    /// discard or swap classes).
    pub fn classify(&self, op: Op, flags: OpFlags) -> ReqFlags {
        if !self.enabled() {
            return ReqFlags::NONE;
        }
        let odirect = flags.contains(OpFlags::SYNC | OpFlags::IDLE);
        match self.variant {
            Variant::Modern => match op {
                Op::Read => ReqFlags::READ,
                Op::Write if odirect => ReqFlags::NONE,
                Op::Write | Op::Discard => {
                    let mut f = ReqFlags::TRACKED.0;
                    if flags.contains(OpFlags::SWAP) {
                        f |= ReqFlags::SWAP.0;
                    }
                    if op == Op::Discard {
                        f |= ReqFlags::DISCARD.0;
                    }
                    ReqFlags(f)
                }
                Op::WriteZeroes | Op::Flush => ReqFlags::NONE,
            },
            // v5 `wbt_should_throttle`: writes that are not O_DIRECT. The
            // 2016 O_DIRECT test was "SYNC without NOIDLE", which is SYNC|IDLE
            // in today's flag vocabulary.
            Variant::V5_2016 => match op {
                Op::Write if !odirect => ReqFlags::TRACKED,
                _ => ReqFlags::NONE,
            },
        }
    }

    /// Dirty-throttle signal: modern "a writer slept within the last
    /// second" (kernel: `wb_recent_wait`), v5 "a writer is sleeping now".
    fn dirty_signal(&self, now: u64) -> bool {
        match self.variant {
            Variant::Modern => self
                .last_dirty_sleep
                .is_some_and(|t| now < t.saturating_add(RECENT_DIRTY_WAIT_NS)),
            Variant::V5_2016 => self.dirty_sleeping > 0,
        }
    }

    /// Other IO within 100 ms (kernel: `close_io`).
    fn close_io(&self, now: u64) -> bool {
        now < self.last_issue.saturating_add(CLOSE_IO_NS)
            || now < self.last_comp.saturating_add(CLOSE_IO_NS)
    }

    /// Admission limit for a tracked bio (kernel: `get_limit`, spec §7):
    /// discards → background; SYNC/META/PRIO/SWAP or recent dirty
    /// throttling → max; BACKGROUND or recent other IO → background;
    /// otherwise normal. v5: SYNC/META/PRIO or someone dirty-sleeping → max.
    pub fn get_limit(&self, now: u64, op: Op, flags: OpFlags) -> u32 {
        let hiprio = OpFlags::SYNC | OpFlags::META | OpFlags::PRIO;
        match self.variant {
            Variant::Modern => {
                if op == Op::Discard {
                    return self.background;
                }
                if flags.intersects(hiprio | OpFlags::SWAP) || self.dirty_signal(now) {
                    self.max_depth
                } else if flags.intersects(OpFlags::BACKGROUND) || self.close_io(now) {
                    self.background
                } else {
                    self.normal
                }
            }
            Variant::V5_2016 => {
                if flags.intersects(hiprio) || self.dirty_signal(now) {
                    self.max_depth
                } else if flags.intersects(OpFlags::BACKGROUND) || self.close_io(now) {
                    self.background
                } else {
                    self.normal
                }
            }
        }
    }

    fn class_limit(&self, now: u64, class: Class, flags: OpFlags) -> u32 {
        let op = if class == Class::Discard {
            Op::Discard
        } else {
            Op::Write
        };
        self.get_limit(now, op, flags)
    }

    /// Increment the class counter if it is below the limit (kernel:
    /// `rq_wait_inc_below`). With the target at 0 everything is admitted.
    fn inc_below(&mut self, now: u64, class: Class, flags: OpFlags) -> bool {
        let i = class.index();
        if self.min_lat_ns != 0 {
            let limit = self.class_limit(now, class, flags);
            if self.inflight[i] >= limit {
                return false;
            }
        }
        self.inflight[i] = self.inflight[i].saturating_add(1);
        true
    }

    // ---------------------------------------------------------------
    // Hooks
    // ---------------------------------------------------------------

    /// A bio is submitted (kernel: `wbt_wait`). Untracked bios go at once
    /// (a read stamps "recent read issue"). A tracked bio goes if its class
    /// has no waiters and is below the live limit; otherwise the core
    /// counts it as a waiter and you queue it. An admission arms the
    /// window if none runs. The v5 variant lets newcomers overtake
    /// sleepers, as the 2016 code did.
    pub fn on_throttle(&mut self, now: u64, op: Op, flags: OpFlags) -> Admit {
        let f = self.classify(op, flags);
        let Some(class) = f.class() else {
            let stamp = match self.variant {
                Variant::Modern => f.contains(ReqFlags::READ),
                Variant::V5_2016 => self.enabled(),
            };
            if stamp {
                self.last_issue = now;
            }
            return Admit::Go(f);
        };
        let queue_empty = self.waiting[class.index()] == 0;
        let may_try = queue_empty || self.variant == Variant::V5_2016;
        if may_try && self.inc_below(now, class, flags) {
            self.arm_if_idle(now);
            Admit::Go(f)
        } else {
            self.waiting[class.index()] += 1;
            Admit::Wait(class)
        }
    }

    /// Try to grant a slot to a queued waiter of `class` with op flags
    /// `flags` (kernel: the `wbt_inflight_cb` check run by the waker, or
    /// the v5 waiter's own recheck). On `true` the waiter leaves the
    /// core's waiter count and holds a slot; give its request
    /// [`ReqFlags::tracked`]`(class)`. Arms the window if none runs.
    pub fn try_admit(&mut self, now: u64, class: Class, flags: OpFlags) -> bool {
        if !self.inc_below(now, class, flags) {
            return false;
        }
        let i = class.index();
        self.waiting[i] = self.waiting[i].saturating_sub(1);
        self.arm_if_idle(now);
        true
    }

    /// A queued waiter gave up without a slot (e.g. its task was killed).
    pub fn on_wait_cancelled(&mut self, class: Class) {
        let i = class.index();
        self.waiting[i] = self.waiting[i].saturating_sub(1);
    }

    /// A bio becomes a request (kernel: `wbt_track`): the flags to store,
    /// recomputed from scratch like the kernel does. They equal the flags
    /// [`on_throttle`](Self::on_throttle) gave unless the enable state
    /// changed in between, which the caller must prevent by quiescing
    /// (spec §9 B8).
    pub fn on_track(&self, op: Op, flags: OpFlags) -> ReqFlags {
        self.classify(op, flags)
    }

    /// A request goes to the device at `now` (kernel: `wbt_issue`). The
    /// first read issued while no read is watched becomes the stuck-read
    /// cookie (v5: any untracked request).
    pub fn on_issue(&mut self, now: u64, rq: Rq) {
        if !self.enabled() || self.sync.is_some() {
            return;
        }
        let watch = match self.variant {
            Variant::Modern => rq.flags.contains(ReqFlags::READ),
            Variant::V5_2016 => !rq.flags.contains(ReqFlags::TRACKED),
        };
        if watch {
            self.sync = Some((rq.id, now));
        }
    }

    /// A request is put back for reissue (kernel: `wbt_requeue`).
    pub fn on_requeue(&mut self, rq: Rq) {
        if self.enabled() && self.sync.is_some_and(|(id, _)| id == rq.id) {
            self.sync = None;
        }
    }

    /// A request completed at `now`, or was freed after a merge (kernel:
    /// `blk_stat_add` + `wbt_done`). `issue_ns` is its device-issue time,
    /// `None` if it never reached the device (no latency sample). Returns
    /// whether this completion wakes its class's waiters (the wake is also
    /// queued for [`poll_wake`](Self::poll_wake)).
    pub fn on_done(&mut self, now: u64, rq: Rq, issue_ns: Option<u64>) -> bool {
        if let Some(issue) = issue_ns {
            self.record_sample(now, rq.op, issue);
        }
        match rq.flags.class() {
            None => {
                if self.sync.is_some_and(|(id, _)| id == rq.id) {
                    self.sync = None;
                }
                let stamp = match self.variant {
                    Variant::Modern => rq.flags.contains(ReqFlags::READ) && self.enabled(),
                    Variant::V5_2016 => self.enabled(),
                };
                if stamp {
                    self.last_comp = now;
                }
                false
            }
            Some(class) => self.release(now, class, rq.flags),
        }
    }

    /// A throttled bio did not become its own request (kernel:
    /// `wbt_cleanup`): give back its slot. Classification is recomputed, as
    /// in the kernel. Returns whether waiters are woken.
    pub fn on_cleanup(&mut self, now: u64, op: Op, flags: OpFlags) -> bool {
        let f = self.classify(op, flags);
        match f.class() {
            Some(class) => self.release(now, class, f),
            None => false,
        }
    }

    /// A writer went to sleep in dirty-page balancing at `now` (modern:
    /// stamps `last_bdp_sleep`; v5: one more sleeper until
    /// [`on_dirty_throttle_end`](Self::on_dirty_throttle_end)).
    pub fn on_dirty_throttle(&mut self, now: u64) {
        self.last_dirty_sleep = Some(now);
        self.dirty_sleeping = self.dirty_sleeping.saturating_add(1);
    }

    /// A writer left dirty-page balancing (only the v5 variant cares).
    pub fn on_dirty_throttle_end(&mut self, _now: u64) {
        self.dirty_sleeping = self.dirty_sleeping.saturating_sub(1);
    }

    fn record_sample(&mut self, now: u64, op: Op, issue: u64) {
        if self.deadline.is_none() {
            return;
        }
        let bucket = match op {
            Op::Read => READ_BUCKET,
            o if o.is_write_dir() => WRITE_BUCKET,
            _ => return,
        };
        self.stats[bucket].add(now.saturating_sub(issue));
    }

    /// Give back a slot and decide whether to wake (kernel: `wbt_rqw_done`,
    /// spec §7 release; v5: `__wbt_done`).
    fn release(&mut self, now: u64, class: Class, flags: ReqFlags) -> bool {
        let i = class.index();
        if self.inflight[i] == 0 {
            self.underflows += 1;
        }
        let n = self.inflight[i].saturating_sub(1);
        self.inflight[i] = n;
        let has_waiters = self.waiting[i] > 0;
        match self.variant {
            Variant::Modern => {
                let wake_limit = if flags.contains(ReqFlags::DISCARD) {
                    self.background
                } else if self.write_cache && !self.dirty_signal(now) {
                    0
                } else {
                    self.normal
                };
                if n > 0 && n >= wake_limit {
                    return false;
                }
                let diff = i64::from(wake_limit) - i64::from(n);
                if has_waiters && (n == 0 || diff >= i64::from(self.background / 2)) {
                    self.queue_wake(class, WakeMode::GrantFifo);
                    return true;
                }
                false
            }
            Variant::V5_2016 => {
                let limit = if self.write_cache && !self.dirty_signal(now) {
                    0
                } else {
                    self.normal
                };
                if limit != 0 && n >= limit {
                    if self.max_depth == 0 && has_waiters {
                        self.queue_wake(class, WakeMode::RecheckAll);
                        return true;
                    }
                    return false;
                }
                let diff = i64::from(limit) - i64::from(n);
                if has_waiters && (n == 0 || diff >= i64::from(self.background / 2)) {
                    self.queue_wake(class, WakeMode::RecheckOne);
                    return true;
                }
                false
            }
        }
    }

    fn queue_wake(&mut self, class: Class, mode: WakeMode) {
        let slot = &mut self.wakes[class.index()];
        *slot = match (*slot, mode) {
            (Some(WakeMode::GrantFifo), _) | (_, WakeMode::GrantFifo) => Some(WakeMode::GrantFifo),
            (Some(WakeMode::RecheckAll), _) | (_, WakeMode::RecheckAll) => {
                Some(WakeMode::RecheckAll)
            }
            _ => Some(WakeMode::RecheckOne),
        };
    }

    /// Wake every class that has waiters (kernel: `rwb_wake_all`).
    fn wake_all(&mut self) {
        let mode = match self.variant {
            Variant::Modern => WakeMode::GrantFifo,
            Variant::V5_2016 => WakeMode::RecheckAll,
        };
        for class in Class::ALL {
            if self.waiting[class.index()] > 0 {
                self.queue_wake(class, mode);
            }
        }
    }

    /// The next class whose waiters should be served, in class order.
    pub fn poll_wake(&mut self) -> Option<Wake> {
        for class in Class::ALL {
            if let Some(mode) = self.wakes[class.index()].take() {
                return Some(Wake { class, mode });
            }
        }
        None
    }

    // ---------------------------------------------------------------
    // Depth controller (§6)
    // ---------------------------------------------------------------

    fn recompute(&mut self) -> bool {
        let (mut d, cap) = calc_max_depth(self.variant, self.queue_depth, self.step);
        if self.variant == Variant::V5_2016 && self.min_lat_ns == 0 {
            // v5 zeroes wb_max along with the other limits.
            d = 0;
        }
        self.max_depth = d;
        let (n, b) = calc_limits(self.variant, d, self.min_lat_ns);
        self.normal = n;
        self.background = b;
        cap
    }

    /// Step toward deeper queues (kernel: `scale_up`). Returns whether
    /// anything changed.
    fn scale_up(&mut self, now: u64) -> bool {
        match self.variant {
            Variant::Modern => {
                if self.scaled_max {
                    return false;
                }
                self.step -= 1;
                self.scaled_max = self.recompute();
            }
            Variant::V5_2016 => {
                if self.step == 0 {
                    return false;
                }
                self.step -= 1;
                self.recompute();
            }
        }
        self.unknown_cnt = 0;
        self.wake_all();
        self.trace_step(now, StepDir::Up);
        true
    }

    /// Step toward shallower queues (kernel: `scale_down`); `hard` snaps a
    /// negative step back to 0.
    fn scale_down(&mut self, now: u64, hard: bool) -> bool {
        if self.max_depth == 1 {
            return false;
        }
        match self.variant {
            Variant::Modern => {
                if self.step < 0 && hard {
                    self.step = 0;
                } else {
                    self.step += 1;
                }
                self.scaled_max = false;
            }
            Variant::V5_2016 => self.step += 1,
        }
        self.recompute();
        self.unknown_cnt = 0;
        self.trace_step(now, StepDir::Down);
        true
    }

    /// Step 0, limits recomputed, everyone woken (kernel: `wbt_update_limits`).
    fn reset_limits(&mut self) {
        self.step = 0;
        self.scaled_max = false;
        self.recompute();
        self.wake_all();
    }

    fn trace_step(&mut self, now: u64, dir: StepDir) {
        self.push_trace(TraceRecord::Step {
            now,
            dir,
            step: self.step,
            window_ns: self.cur_win_ns,
            background: self.background,
            normal: self.normal,
            max: self.max_depth,
        });
    }

    // ---------------------------------------------------------------
    // Window (§7)
    // ---------------------------------------------------------------

    fn arm_if_idle(&mut self, now: u64) {
        if self.deadline.is_none() {
            self.arm_window(now);
        }
    }

    /// Start a window at the current step (kernel: `rwb_arm_timer`); the
    /// accumulators start empty.
    fn arm_window(&mut self, now: u64) {
        self.cur_win_ns = window_ns(self.step);
        let deadline = match self.tick_ns {
            None => now.saturating_add(self.cur_win_ns),
            Some(tick) => {
                let ticks = (self.cur_win_ns / tick).max(1);
                (now / tick).saturating_add(ticks).saturating_mul(tick)
            }
        };
        self.deadline = Some(deadline);
        self.stats = [WindowStat::EMPTY; 2];
    }

    /// When [`on_timer`](Self::on_timer) must next be called, if a window runs.
    pub fn next_deadline(&self) -> Option<u64> {
        self.deadline
    }

    fn evaluate(&mut self, now: u64, stats: &[WindowStat; 2]) -> Verdict {
        let read = stats[READ_BUCKET];
        let write = stats[WRITE_BUCKET];
        let stuck = match self.sync {
            Some((_, issue)) if self.enabled() => now.saturating_sub(issue),
            _ => 0,
        };
        if stuck > self.cur_win_ns || (stuck > self.min_lat_ns && read.nr_samples == 0) {
            self.push_trace(TraceRecord::Lat { now, lat_ns: stuck });
            return Verdict::Exceeded;
        }
        let valid = read.nr_samples >= MIN_READ_SAMPLES && write.nr_samples >= MIN_WRITE_SAMPLES;
        if !valid {
            return match self.variant {
                Variant::Modern
                    if write.nr_samples > 0
                        || self.dirty_signal(now)
                        || self.total_inflight() > 0 =>
                {
                    Verdict::UnknownWrites
                }
                _ => Verdict::Unknown,
            };
        }
        if read.min > self.min_lat_ns {
            self.push_trace(TraceRecord::Lat {
                now,
                lat_ns: read.min,
            });
            self.push_trace(TraceRecord::Stat { now, read, write });
            return Verdict::Exceeded;
        }
        if self.step != 0 {
            self.push_trace(TraceRecord::Stat { now, read, write });
        }
        Verdict::Ok
    }

    fn total_inflight(&self) -> u32 {
        self.inflight.iter().fold(0u32, |a, b| a.saturating_add(*b))
    }

    /// Timer callback (kernel: `wb_timer_fn`). Does nothing unless a window
    /// is armed and `now` has reached its deadline. Evaluates the window,
    /// scales, and re-arms if the step is not 0 or tracked IO was inflight
    /// when the expiry started.
    pub fn on_timer(&mut self, now: u64) {
        match self.deadline {
            Some(d) if now >= d => {}
            _ => return,
        }
        self.deadline = None;
        let inflight = self.total_inflight();
        let stats = self.stats;
        self.stats = [WindowStat::EMPTY; 2];
        let verdict = self.evaluate(now, &stats);
        self.push_trace(TraceRecord::Timer {
            now,
            verdict,
            step: self.step,
            inflight,
        });
        match verdict {
            Verdict::Exceeded => {
                self.scale_down(now, true);
            }
            Verdict::Ok | Verdict::UnknownWrites => {
                self.scale_up(now);
            }
            Verdict::Unknown => {
                self.unknown_cnt = self.unknown_cnt.saturating_add(1);
                if self.unknown_cnt >= UNKNOWN_BUMP {
                    if self.step > 0 {
                        self.scale_up(now);
                    } else if self.step < 0 {
                        self.scale_down(now, false);
                    }
                }
            }
        }
        if self.step != 0 || inflight > 0 {
            self.arm_window(now);
        }
    }

    // ---------------------------------------------------------------
    // Configuration (§10)
    // ---------------------------------------------------------------

    /// Write the `wbt_lat_usec` knob (kernel: `queue_wb_lat_store` +
    /// `wbt_set_min_lat`): −1 restores the device default (2 ms
    /// non-rotational, 75 ms rotational), 0 disables, a positive value sets
    /// the target in microseconds; below −1 is an error. Writing the
    /// current target changes nothing; any other value sets the enable
    /// state to manual (on if the target is positive) and resets the depth
    /// to step 0, waking all waiters. The kernel freezes the queue around
    /// this: drain your IO first.
    pub fn set_lat_usec(&mut self, value: i64) -> Result<(), KnobError> {
        if value < -1 {
            return Err(KnobError::BelowMinusOne(value));
        }
        let ns = if value == -1 {
            default_lat_ns(self.rotational)
        } else {
            (value as u64)
                .checked_mul(1000)
                .ok_or(KnobError::Overflow(value))?
        };
        if ns == self.min_lat_ns {
            return Ok(());
        }
        self.min_lat_ns = ns;
        self.enable_state = if ns > 0 {
            EnableState::OnManual
        } else {
            EnableState::OffManual
        };
        self.reset_limits();
        Ok(())
    }

    /// Write the `wbt_lat_usec` knob from text, as sysfs receives it
    /// (surrounding whitespace, such as the trailing newline of `echo`, is
    /// ignored). See [`set_lat_usec`](Self::set_lat_usec).
    pub fn set_lat_usec_str(&mut self, text: &str) -> Result<(), KnobError> {
        let v: i64 = text.trim().parse().map_err(|_| KnobError::NotANumber)?;
        self.set_lat_usec(v)
    }

    /// Read the `wbt_lat_usec` knob: 0 when disabled, else the target in µs.
    pub fn lat_usec(&self) -> u64 {
        if self.enabled() {
            self.min_lat_ns / 1000
        } else {
            0
        }
    }

    /// The device queue depth changed (kernel: `wbt_queue_depth_changed`):
    /// resets to step 0.
    pub fn set_queue_depth(&mut self, queue_depth: u32) {
        self.queue_depth = queue_depth.max(1);
        self.reset_limits();
    }

    /// The volatile write cache appeared or went away.
    pub fn set_write_cache(&mut self, write_cache: bool) {
        self.write_cache = write_cache;
    }

    /// Turn off a default-enabled instance (kernel: `wbt_disable_default`,
    /// e.g. BFQ or iocost): ON_DEFAULT → OFF_DEFAULT and the window stops.
    /// Manual states are left alone.
    pub fn disable_default(&mut self) {
        if self.enable_state == EnableState::OnDefault {
            self.deadline = None;
            self.enable_state = EnableState::OffDefault;
        }
    }

    /// Turn a default-disabled instance back on (kernel: `wbt_enable_default`).
    pub fn enable_default(&mut self) {
        if self.enable_state == EnableState::OffDefault {
            self.enable_state = EnableState::OnDefault;
        }
    }

    // ---------------------------------------------------------------
    // Outputs
    // ---------------------------------------------------------------

    fn push_trace(&mut self, rec: TraceRecord) {
        let slot = (self.ring_head + self.ring_len) % TRACE_CAPACITY;
        self.ring[slot] = Some(rec);
        if self.ring_len < TRACE_CAPACITY {
            self.ring_len += 1;
        } else {
            self.ring_head = (self.ring_head + 1) % TRACE_CAPACITY;
            self.trace_dropped += 1;
        }
    }

    /// The oldest undrained trace record.
    pub fn poll_trace(&mut self) -> Option<TraceRecord> {
        if self.ring_len == 0 {
            return None;
        }
        let rec = self.ring[self.ring_head].take();
        self.ring_head = (self.ring_head + 1) % TRACE_CAPACITY;
        self.ring_len -= 1;
        rec
    }

    /// Trace records overwritten because the ring was full.
    pub fn trace_dropped(&self) -> u64 {
        self.trace_dropped
    }

    /// A copy of the state for export.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            variant: self.variant,
            enable_state: self.enable_state,
            enabled: self.enabled(),
            min_lat_ns: self.min_lat_ns,
            step: self.step,
            scaled_max: self.scaled_max,
            max_depth: self.max_depth,
            normal: self.normal,
            background: self.background,
            inflight: self.inflight,
            waiting: self.waiting,
            window_ns: self.cur_win_ns,
            window_deadline: self.deadline,
            unknown_cnt: self.unknown_cnt,
            queue_depth: self.queue_depth,
            trace_dropped: self.trace_dropped,
            underflows: self.underflows,
        }
    }
}

/// Default latency target (kernel: `wbt_default_latency_nsec`).
pub const fn default_lat_ns(rotational: bool) -> u64 {
    if rotational {
        DEFAULT_LAT_ROT_NS
    } else {
        DEFAULT_LAT_NONROT_NS
    }
}

#[cfg(test)]
mod tests;
