//! Variant names for the command line (`flush=catch-up`,
//! `flush=on-demand:preempt=2021`, ...): the parser from a knob string to a
//! [`Policy`], its typed errors, and the canonical name of a policy.
//!
//! Grammar: `[flush=]BASE(:KNOB=VALUE)*`. `BASE` is `catch-up` or
//! `on-demand`; knobs apply left to right, so a later knob overrides what an
//! earlier bundle set.
//!
//! | knob | values | meaning |
//! |---|---|---|
//! | `preempt` | `off`, `2019`, `2021` | preemptive generation; `2021` also selects the 5.12 bundle (unconditional commit, `preflush=heads`, `full=90`, `states=current`) |
//! | `run-at-end` | `on`, `off` | catch-up only: `on` is CU-legacy (≤ 4.20 accounting and states) |
//! | `commit` | `gate`, `always` | `COMMIT_TRANS` asks `may_commit_transaction` or not |
//! | `preflush` | `entries`, `heads` | extent of `run(0)` |
//! | `full` | `1`..=`100` | preemptive "plainly full" threshold in percent |
//! | `states` | `4.19`, `5.0`, `current` | ticket-worker state list |
//! | `fst` | `on`, `off` | free-space tree: two insert units per head |

use alloc::string::{String, ToString};
use core::fmt;

use crate::{Mode, Policy, Preempt, RunZero, StateList};

/// A knob string that does not name a variant. Every variant names the
/// knob at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KnobError {
    /// The base name is neither `catch-up` nor `on-demand`.
    UnknownPolicy(String),
    /// A `KNOB=VALUE` pair whose knob does not exist.
    UnknownKnob(String),
    /// A knob without `=VALUE`.
    MissingValue(String),
    /// A value the knob does not take.
    BadValue {
        /// The knob.
        knob: String,
        /// The rejected value.
        value: String,
        /// What it accepts.
        expected: &'static str,
    },
    /// A knob that only exists for the other base variant.
    WrongMode {
        /// The knob.
        knob: String,
        /// The base that has it.
        only_for: &'static str,
    },
}

impl fmt::Display for KnobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KnobError::UnknownPolicy(p) => write!(
                f,
                "flush: unknown policy `{p}` (expected `catch-up` or `on-demand`)"
            ),
            KnobError::UnknownKnob(k) => write!(
                f,
                "flush: unknown knob `{k}` (known: preempt, run-at-end, commit, preflush, full, states, fst)"
            ),
            KnobError::MissingValue(k) => write!(f, "flush: knob `{k}` needs `={k}-value`"),
            KnobError::BadValue {
                knob,
                value,
                expected,
            } => write!(
                f,
                "flush: {knob}: `{value}` is invalid (expected {expected})"
            ),
            KnobError::WrongMode { knob, only_for } => {
                write!(f, "flush: {knob}: only valid for `{only_for}`")
            }
        }
    }
}

impl core::error::Error for KnobError {}

fn bad(knob: &str, value: &str, expected: &'static str) -> KnobError {
    KnobError::BadValue {
        knob: knob.to_string(),
        value: value.to_string(),
        expected,
    }
}

fn on_off(knob: &str, value: &str) -> Result<bool, KnobError> {
    match value {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(bad(knob, value, "`on` or `off`")),
    }
}

/// Parse a variant name such as `flush=on-demand:preempt=2021` (the
/// `flush=` prefix is optional).
pub fn parse_policy(text: &str) -> Result<Policy, KnobError> {
    let text = text.trim();
    let text = text.strip_prefix("flush=").unwrap_or(text);
    let mut parts = text.split(':');
    let base = parts.next().unwrap_or("");
    let mut p = match base {
        "catch-up" => Policy::catch_up(),
        "on-demand" => Policy::on_demand(),
        _ => return Err(KnobError::UnknownPolicy(base.to_string())),
    };
    for part in parts {
        let Some((knob, value)) = part.split_once('=') else {
            return Err(KnobError::MissingValue(part.to_string()));
        };
        match knob {
            "preempt" => match value {
                "off" => p.preempt = Preempt::Off,
                "2019" => p.preempt = Preempt::Weak2019,
                "2021" => {
                    p.preempt = Preempt::Clamped2021;
                    p.commit_gate = false;
                    p.run_zero = RunZero::HeadsPresent;
                    p.preempt_full_pct = 90;
                    p.states = StateList::Current;
                }
                _ => return Err(bad(knob, value, "`off`, `2019` or `2021`")),
            },
            "run-at-end" => {
                if p.mode != Mode::CatchUp {
                    return Err(KnobError::WrongMode {
                        knob: knob.to_string(),
                        only_for: "catch-up",
                    });
                }
                let on = on_off(knob, value)?;
                p.legacy = on;
                p.states = if on {
                    StateList::V4_19
                } else {
                    StateList::V5_0
                };
            }
            "commit" => match value {
                "gate" => p.commit_gate = true,
                "always" => p.commit_gate = false,
                _ => return Err(bad(knob, value, "`gate` or `always`")),
            },
            "preflush" => match value {
                "entries" => p.run_zero = RunZero::TwiceEntries,
                "heads" => p.run_zero = RunZero::HeadsPresent,
                _ => return Err(bad(knob, value, "`entries` or `heads`")),
            },
            "full" => match value.parse::<u64>() {
                Ok(v) if (1..=100).contains(&v) => p.preempt_full_pct = v,
                _ => return Err(bad(knob, value, "a percentage in 1..=100")),
            },
            "states" => match value {
                "4.19" => p.states = StateList::V4_19,
                "5.0" => p.states = StateList::V5_0,
                "current" => p.states = StateList::Current,
                _ => return Err(bad(knob, value, "`4.19`, `5.0` or `current`")),
            },
            "fst" => p.free_space_tree = on_off(knob, value)?,
            _ => return Err(KnobError::UnknownKnob(knob.to_string())),
        }
    }
    Ok(p)
}

impl fmt::Display for Policy {
    /// The canonical name: the base, then every knob whose value differs
    /// from the base's default, in the order of the table above. Parsing
    /// the output gives the same policy back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let base = match self.mode {
            Mode::CatchUp => {
                f.write_str("flush=catch-up")?;
                Policy::catch_up()
            }
            Mode::OnDemand => {
                f.write_str("flush=on-demand")?;
                Policy::on_demand()
            }
        };
        if self.preempt != base.preempt {
            let v = match self.preempt {
                Preempt::Off => "off",
                Preempt::Weak2019 => "2019",
                Preempt::Clamped2021 => "2021",
            };
            write!(f, ":preempt={v}")?;
        }
        // After a `preempt=2021` bundle the remaining knobs are compared with
        // what the bundle set, so the name stays short.
        let bundle = if self.preempt == Preempt::Clamped2021 {
            Policy {
                mode: self.mode,
                ..Policy::on_demand_2021()
            }
        } else {
            base
        };
        if self.legacy {
            f.write_str(":run-at-end=on")?;
        }
        let states_default = if self.legacy {
            StateList::V4_19
        } else {
            bundle.states
        };
        if self.commit_gate != bundle.commit_gate {
            let v = if self.commit_gate { "gate" } else { "always" };
            write!(f, ":commit={v}")?;
        }
        if self.run_zero != bundle.run_zero {
            let v = match self.run_zero {
                RunZero::TwiceEntries => "entries",
                RunZero::HeadsPresent => "heads",
            };
            write!(f, ":preflush={v}")?;
        }
        if self.preempt_full_pct != bundle.preempt_full_pct {
            write!(f, ":full={}", self.preempt_full_pct)?;
        }
        if self.states != states_default {
            let v = match self.states {
                StateList::V4_19 => "4.19",
                StateList::V5_0 => "5.0",
                StateList::Current => "current",
            };
            write!(f, ":states={v}")?;
        }
        if self.free_space_tree {
            f.write_str(":fst=on")?;
        }
        Ok(())
    }
}
