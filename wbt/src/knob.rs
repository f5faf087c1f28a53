//! Configuration: the enable state (kernel: `WBT_STATE_*`,
//! `rwb_enabled`, `wbt_disable_default`, `wbt_enable_default`), the
//! `wbt_lat_usec` knob (kernel: `queue_wb_lat_store`, `wbt_set_min_lat`,
//! `wbt_default_latency_nsec`) and device changes.

use core::fmt;

use crate::{DEFAULT_LAT_NONROT_NS, DEFAULT_LAT_ROT_NS, DepthPolicy, Slots, Variant, Wbt};

/// Enable state (kernel: `WBT_STATE_*`).
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

/// Rejected value of the `wbt_lat_usec` knob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
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

/// Default latency target (kernel: `wbt_default_latency_nsec`).
pub const fn default_lat_ns(rotational: bool) -> u64 {
    if rotational {
        DEFAULT_LAT_ROT_NS
    } else {
        DEFAULT_LAT_NONROT_NS
    }
}

impl<S: Slots, D: DepthPolicy> Wbt<S, D> {
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
}
