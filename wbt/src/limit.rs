//! Admission limits (kernel: `get_limit`, `rq_wait_inc_below`) and
//! the signals they read: recent dirty throttling (`wb_recent_wait`) and
//! other IO close by (`close_io`), and the view of them a lockless fast
//! path admits from.

use crate::{
    CLOSE_IO_NS, Class, DepthPolicy, Op, OpFlags, RECENT_DIRTY_WAIT_NS, Slots, Variant, Wbt,
};

/// The three depths a tracked bio's limit is chosen from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// `max_depth`: high-priority writes, or while writers are dirty-throttled.
    pub max_depth: u32,
    /// `wb_normal`: other writes.
    pub normal: u32,
    /// `wb_background`: background writeback, discards, or other IO close by.
    pub background: u32,
}

/// The limit rule (kernel: `get_limit`) as a pure function:
/// modern: discards → background; SYNC/META/PRIO/SWAP or `dirty` → max;
/// BACKGROUND or `close` → background; otherwise normal. v5:
/// SYNC/META/PRIO or `dirty` → max, then the same. `dirty` is the
/// dirty-throttle signal, `close` is "other IO within 100 ms".
#[inline]
pub fn select_limit(
    variant: Variant,
    op: Op,
    flags: OpFlags,
    limits: Limits,
    dirty: bool,
    close: bool,
) -> u32 {
    let hiprio = OpFlags::SYNC | OpFlags::META | OpFlags::PRIO;
    let max_flags = match variant {
        Variant::Modern => {
            if op == Op::Discard {
                return limits.background;
            }
            hiprio | OpFlags::SWAP
        }
        Variant::V5_2016 => hiprio,
    };
    if flags.intersects(max_flags) || dirty {
        limits.max_depth
    } else if flags.intersects(OpFlags::BACKGROUND) || close {
        limits.background
    } else {
        limits.normal
    }
}

/// What a lockless fast path needs to admit tracked bios as the core
/// would, read from the core under its owner's lock and published
/// ([`Wbt::admission_view`]). The time-dependent signals are given as the
/// instants they expire, so a reader compares them with its own `now`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdmissionView {
    /// Requests are classified (WBT is enabled).
    pub enabled: bool,
    /// Admission is limited (the latency target is not 0).
    pub limited: bool,
    /// The depths the limit is chosen from.
    pub limits: Limits,
    /// The dirty-throttle signal holds while `now < dirty_until`.
    pub dirty_until: u64,
    /// "Other IO close by" holds while `now < close_until`.
    pub close_until: u64,
    /// A monitoring window runs (samples are being collected).
    pub window_armed: bool,
}

impl<S: Slots, D: DepthPolicy> Wbt<S, D> {
    /// Dirty-throttle signal: modern "a writer slept within the last
    /// second" (kernel: `wb_recent_wait`), v5 "a writer is sleeping now".
    pub(crate) fn dirty_signal(&self, now: u64) -> bool {
        match self.variant {
            Variant::Modern => now < self.dirty_until(),
            Variant::V5_2016 => self.dirty_sleeping > 0,
        }
    }

    /// When the dirty-throttle signal stops holding, absent new sleeps
    /// (`u64::MAX` while a v5 writer sleeps).
    fn dirty_until(&self) -> u64 {
        match self.variant {
            Variant::Modern => self
                .last_dirty_sleep
                .map_or(0, |t| t.saturating_add(RECENT_DIRTY_WAIT_NS)),
            Variant::V5_2016 if self.dirty_sleeping > 0 => u64::MAX,
            Variant::V5_2016 => 0,
        }
    }

    /// When "other IO within 100 ms" (kernel: `close_io`) stops holding.
    fn close_until(&self) -> u64 {
        self.last_issue
            .max(self.last_comp)
            .saturating_add(CLOSE_IO_NS)
    }

    /// The current depths.
    pub fn limits(&self) -> Limits {
        Limits {
            max_depth: self.max_depth,
            normal: self.normal,
            background: self.background,
        }
    }

    /// Admission limit for a tracked bio at `now` ([`select_limit`] on the
    /// current state).
    pub fn get_limit(&self, now: u64, op: Op, flags: OpFlags) -> u32 {
        let dirty = self.dirty_signal(now);
        let close = now < self.close_until();
        select_limit(self.variant, op, flags, self.limits(), dirty, close)
    }

    /// The limit a bio of `class` is admitted against, `None` while the
    /// latency target is 0 (everything admitted). The op is derived from
    /// the class, so a discard carrying `REQ_SWAP` is limited as a swap
    /// write; the kernel's `get_limit` would give it the discard limit, but
    /// only swap-out writes carry that flag there.
    pub(crate) fn admission_limit(&self, now: u64, class: Class, flags: OpFlags) -> Option<u32> {
        if self.min_lat_ns == 0 {
            return None;
        }
        let op = if class == Class::Discard {
            Op::Discard
        } else {
            Op::Write
        };
        Some(self.get_limit(now, op, flags))
    }

    /// The state a lockless fast path admits from (see [`AdmissionView`]).
    pub fn admission_view(&self) -> AdmissionView {
        AdmissionView {
            enabled: self.enabled(),
            limited: self.min_lat_ns != 0,
            limits: self.limits(),
            dirty_until: self.dirty_until(),
            close_until: self.close_until(),
            window_armed: self.deadline.is_some(),
        }
    }
}
