//! The scaling step as an extension point: [`DepthPolicy`] decides the
//! depths at a step and which way a window moves the step; the core
//! checks every answer against [`DepthRule`] where it uses it, in every
//! build, and refuses one that breaks a rule with a [`DepthError`].
//!
//! Our two variants implement it ([`Variant`]), and the core consults
//! them through it alone, so a user's policy runs on exactly the path
//! ours do.

use core::fmt;

use crate::{Limits, Variant, calc_limits, calc_max_depth};

/// Where the depth controller stands when a policy is asked to move it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DepthNow {
    /// Device queue depth (at least 1).
    pub queue_depth: u32,
    /// Current `scale_step`: positive is shallower, negative deeper.
    pub step: i32,
    /// The depths at `step`.
    pub limits: Limits,
    /// The last step up reached a cap ([`DepthAt::capped`]) and no step
    /// down has happened since (kernel: `scaled_max`).
    pub scaled_max: bool,
}

/// A policy's depths at one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DepthAt {
    /// The three depths a tracked write's limit is chosen from.
    pub limits: Limits,
    /// The depth was cut to a cap at this step (kernel: the return value
    /// of `rq_depth_calc_max_depth`); a step up that reaches a capped step
    /// sets [`DepthNow::scaled_max`].
    pub capped: bool,
}

/// The scaling step of writeback throttling: the part of blk-wbt a user
/// replaces to try another depth rule. The verdict of each window, the
/// window's length and the admission rule stay the core's.
///
/// The core calls [`limits`](Self::limits) whenever the step or the queue
/// depth changes (the latency target enabled), and
/// [`scale_up`](Self::scale_up) / [`scale_down`](Self::scale_down) when a
/// window's verdict asks to relax or squeeze. Each answer is checked
/// against every [`DepthRule`]; one that breaks a rule is not applied, the
/// core keeps its depths, and the error is returned in the window's
/// [`WindowOutcome::refused`](crate::WindowOutcome::refused) and kept
/// for [`Wbt::depth_error`](crate::Wbt::depth_error).
///
/// Implementations must be pure: the same arguments give the same answer.
///
/// ```
/// use iolab_wbt::{DepthAt, DepthNow, DepthPolicy, Limits};
///
/// /// Halve the depth per step down, never deeper than the queue.
/// #[derive(Clone, Debug)]
/// struct Halving;
///
/// impl DepthPolicy for Halving {
///     fn name(&self) -> &str { "halving" }
///     fn limits(&self, queue_depth: u32, step: i32) -> DepthAt {
///         let max = (queue_depth >> step.clamp(0, 31)).max(1);
///         let limits = Limits { max_depth: max, normal: max.div_ceil(2), background: max.div_ceil(4) };
///         DepthAt { limits, capped: step <= 0 }
///     }
///     fn scale_up(&self, now: DepthNow) -> Option<i32> {
///         (now.step > 0).then(|| now.step - 1)
///     }
///     fn scale_down(&self, now: DepthNow, _hard: bool) -> Option<i32> {
///         (now.limits.max_depth > 1).then(|| now.step + 1)
///     }
/// }
/// ```
pub trait DepthPolicy: Clone + fmt::Debug {
    /// A short name for messages.
    fn name(&self) -> &str;

    /// The depths at `step` for a device of `queue_depth` (at least 1).
    fn limits(&self, queue_depth: u32, step: i32) -> DepthAt;

    /// The step after a window asked to relax (an `OK` or
    /// `UNKNOWN_WRITES` verdict, or a drift of unknown windows above step
    /// 0); `None` leaves the depth alone.
    fn scale_up(&self, now: DepthNow) -> Option<i32>;

    /// The step after a window asked to squeeze: `hard` for a window whose
    /// reads missed the target, not for a drift of unknown windows below
    /// step 0; `None` leaves the depth alone.
    fn scale_down(&self, now: DepthNow, hard: bool) -> Option<i32>;
}

/// A rule every [`DepthPolicy`] answer must keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DepthRule {
    /// `background ≤ normal ≤ max_depth`.
    Ordered,
    /// `background ≥ 1`: every class of write can make progress.
    AtLeastOne,
    /// `max_depth ≤ max(queue depth, 2)`: the device's queue, or one
    /// request in service and one behind it on a queue of one (the
    /// kernel's rule for a queue depth of 1).
    WithinQueue,
    /// A step moves by one, or snaps back to 0 (the kernel's hard step
    /// down from a negative step), and in the direction asked: a step up
    /// lowers the step, a step down raises it.
    StepBounded,
}

impl DepthRule {
    /// The rule in words.
    pub fn says(self) -> &'static str {
        match self {
            DepthRule::Ordered => "background <= normal <= max_depth",
            DepthRule::AtLeastOne => "background >= 1",
            DepthRule::WithinQueue => "max_depth <= max(queue depth, 2)",
            DepthRule::StepBounded => {
                "a step moves by one in the direction asked, or snaps a negative step to 0"
            }
        }
    }
}

/// A [`DepthPolicy`] answer the core refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DepthError {
    /// The rule broken.
    pub rule: DepthRule,
    /// The queue depth asked for.
    pub queue_depth: u32,
    /// The step the policy stood at.
    pub step: i32,
    /// The step the policy moved to (for [`DepthRule::StepBounded`] and
    /// for the depths at that step), or `step` for depths asked directly.
    pub next_step: i32,
    /// The depths the policy gave, when it gave depths.
    pub limits: Option<Limits>,
}

impl fmt::Display for DepthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "depth policy broke the rule {}: queue depth {}, step {} -> {}",
            self.rule.says(),
            self.queue_depth,
            self.step,
            self.next_step
        )?;
        if let Some(l) = self.limits {
            write!(
                f,
                ", gave background {} normal {} max_depth {}",
                l.background, l.normal, l.max_depth
            )?;
        }
        Ok(())
    }
}

#[cfg(feature = "std")]
impl std::error::Error for DepthError {}

/// Check depths a policy gave at `next_step` (from `step`).
pub fn check_limits(
    queue_depth: u32,
    step: i32,
    next_step: i32,
    at: DepthAt,
) -> Result<DepthAt, DepthError> {
    let l = at.limits;
    let rule = if l.background > l.normal || l.normal > l.max_depth {
        Some(DepthRule::Ordered)
    } else if l.background == 0 {
        Some(DepthRule::AtLeastOne)
    } else if l.max_depth > queue_depth.max(2) {
        Some(DepthRule::WithinQueue)
    } else {
        None
    };
    match rule {
        None => Ok(at),
        Some(rule) => Err(DepthError {
            rule,
            queue_depth,
            step,
            next_step,
            limits: Some(l),
        }),
    }
}

/// Check a step a policy moved to: `up` for a step up.
pub fn check_step(now: DepthNow, next: i32, up: bool) -> Result<i32, DepthError> {
    let step = i64::from(now.step);
    let to = i64::from(next);
    let ok = if up {
        to == step - 1
    } else {
        to == step + 1 || (step < 0 && to == 0)
    };
    if ok {
        Ok(next)
    } else {
        Err(DepthError {
            rule: DepthRule::StepBounded,
            queue_depth: now.queue_depth,
            step: now.step,
            next_step: next,
            limits: None,
        })
    }
}

/// Our variants' scaling step: the kernel's (`rq_depth_calc_max_depth`,
/// `calc_wb_limits`, `rq_depth_scale_up`, `rq_depth_scale_down`) and the
/// 2016 posting's.
impl DepthPolicy for Variant {
    fn name(&self) -> &str {
        match self {
            Variant::Modern => "wbt",
            Variant::V5_2016 => "wbt-v5",
        }
    }

    fn limits(&self, queue_depth: u32, step: i32) -> DepthAt {
        let (max_depth, capped) = calc_max_depth(*self, queue_depth, step);
        // Any non-zero target: the core zeroes the limits for a target of 0.
        let (normal, background) = calc_limits(*self, max_depth, 1);
        DepthAt {
            limits: Limits {
                max_depth,
                normal,
                background,
            },
            capped,
        }
    }

    fn scale_up(&self, now: DepthNow) -> Option<i32> {
        let refused = match self {
            Variant::Modern => now.scaled_max,
            Variant::V5_2016 => now.step == 0,
        };
        (!refused).then(|| now.step.saturating_sub(1))
    }

    fn scale_down(&self, now: DepthNow, hard: bool) -> Option<i32> {
        if now.limits.max_depth == 1 {
            return None;
        }
        Some(match self {
            Variant::Modern if now.step < 0 && hard => 0,
            _ => now.step.saturating_add(1),
        })
    }
}
