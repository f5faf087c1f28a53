//! Policy names and knobs as the command line spells them (design.md,
//! "Naming variants"): `read=pid`, `read=round-robin:min_contig_read=256k`,
//! `read=devid:2`, `read=latency`, `alloc=stock`, `alloc=ssd-metadata`,
//! `alloc=allocation-hint`, ... The simulator splits a variant on `+` and
//! hands each `read=`/`alloc=` part to [`parse_policy`].
//!
//! Grammar of one part: `LAYER=NAME[:KNOB]...`, a knob being `KEY=VALUE`,
//! a bare flag (`strict`), or for `devid` and `round-robin` a bare value
//! as sysfs accepts it (`devid:2`, `round-robin:262144`).

use alloc::borrow::ToOwned;
use alloc::string::String;
use core::fmt;

use crate::{
    AllocPolicy, AllocVariant, AllocationHint, DEFAULT_RR_MIN_CONTIG_READ, Devid, HintMode,
    Latency, LatencyForm, LoadBalance, PenaltyScope, Pid, Queue, ReadPolicyImpl, RoundRobin,
    SizeRules, SsdMetadata, SsdMetadataRev,
};

/// A parsed `read=` or `alloc=` choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyChoice {
    /// A read-mirror policy.
    Read(ReadPolicyConfig),
    /// A chunk placement policy.
    Alloc(AllocPolicy),
}

/// A configured read policy before the volume-dependent parts are known
/// (the default `devid` is the mount's `latest_dev`; the sector size; the
/// CPU count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadPolicyConfig {
    /// `read=pid`.
    Pid,
    /// `read=round-robin[:min_contig_read=SIZE]` (default 256 KiB).
    RoundRobin {
        /// Bytes per device before switching.
        min_contig_read: u64,
    },
    /// `read=devid[:N]`; `None` means the mount's `latest_dev`.
    Devid {
        /// The preferred device.
        read_devid: Option<u64>,
    },
    /// `read=latency[:tiebreak=2024|2021]`.
    Latency(LatencyForm),
    /// `read=load[:penalty=mixed|always|never][:rot=N][:nonrot=N]`.
    Load {
        /// When the position penalty applies.
        scope: PenaltyScope,
        /// Penalty of a rotational device.
        rot_penalty: u32,
        /// Penalty of a non-rotational device.
        nonrot_penalty: u32,
    },
    /// `read=queue`.
    Queue,
}

impl ReadPolicyConfig {
    /// Builds the policy: `latest_devid` is the default for `devid`,
    /// `sectorsize` the filesystem's, `ncpus` sizes the per-CPU state of
    /// `load`.
    pub fn build(
        &self,
        latest_devid: u64,
        sectorsize: u32,
        ncpus: usize,
    ) -> Result<ReadPolicyImpl, KnobError> {
        Ok(match *self {
            ReadPolicyConfig::Pid => ReadPolicyImpl::Pid(Pid),
            ReadPolicyConfig::RoundRobin { min_contig_read } => ReadPolicyImpl::RoundRobin(
                RoundRobin::new(min_contig_read, sectorsize).map_err(|e| KnobError::BadValue {
                    policy: "read=round-robin".into(),
                    knob: "min_contig_read".into(),
                    value: alloc::format!("{min_contig_read}"),
                    why: alloc::format!("{e}"),
                })?,
            ),
            ReadPolicyConfig::Devid { read_devid } => ReadPolicyImpl::Devid(Devid {
                read_devid: read_devid.unwrap_or(latest_devid),
            }),
            ReadPolicyConfig::Latency(form) => ReadPolicyImpl::Latency(Latency { form }),
            ReadPolicyConfig::Load {
                scope,
                rot_penalty,
                nonrot_penalty,
            } => {
                let mut p = LoadBalance::new(ncpus);
                p.scope = scope;
                p.rot_penalty = rot_penalty;
                p.nonrot_penalty = nonrot_penalty;
                ReadPolicyImpl::Load(p)
            }
            ReadPolicyConfig::Queue => ReadPolicyImpl::Queue(Queue),
        })
    }
}

/// A `read=`/`alloc=` text that does not parse. Every variant names the
/// policy and, where there is one, the knob.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KnobError {
    /// Empty text or an empty `:` part.
    Empty(String),
    /// Not `read=...` or `alloc=...`.
    UnknownLayer(String),
    /// A policy name the layer does not have.
    UnknownPolicy {
        /// `read` or `alloc`.
        layer: &'static str,
        /// The name given.
        name: String,
    },
    /// A knob the policy does not have.
    UnknownKnob {
        /// `layer=name`.
        policy: String,
        /// The knob given.
        knob: String,
    },
    /// A knob given twice.
    Duplicate {
        /// `layer=name`.
        policy: String,
        /// The knob.
        knob: String,
    },
    /// A knob value that does not parse or is out of range.
    BadValue {
        /// `layer=name`.
        policy: String,
        /// The knob.
        knob: String,
        /// The value given.
        value: String,
        /// What is wrong.
        why: String,
    },
}

impl fmt::Display for KnobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KnobError::Empty(t) => write!(f, "empty policy or knob in '{t}'"),
            KnobError::UnknownLayer(t) => {
                write!(f, "'{t}' is not a read= or alloc= policy")
            }
            KnobError::UnknownPolicy { layer, name } => {
                let known = match *layer {
                    "read" => "pid, round-robin, devid, latency, load, queue",
                    _ => "stock, ssd-metadata, allocation-hint",
                };
                write!(f, "unknown {layer} policy '{name}' (known: {known})")
            }
            KnobError::UnknownKnob { policy, knob } => {
                write!(f, "{policy} has no knob '{knob}'")
            }
            KnobError::Duplicate { policy, knob } => {
                write!(f, "{policy}: knob '{knob}' given twice")
            }
            KnobError::BadValue {
                policy,
                knob,
                value,
                why,
            } => write!(f, "{policy}: {knob}={value}: {why}"),
        }
    }
}

impl core::error::Error for KnobError {}

/// Parses a size: a decimal number with an optional binary suffix `k`,
/// `m`, `g`, `t` (case-insensitive, optionally followed by `i`, `ib` or
/// `b`; powers of 1024), e.g. `256k`, `1MiB`, `262144`.
pub fn parse_size(text: &str) -> Result<u64, &'static str> {
    let t = text.trim();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err("expected a number with an optional k/m/g/t suffix");
    }
    let n: u64 = t[..digits].parse().map_err(|_| "number too large")?;
    let suffix = t[digits..].to_ascii_lowercase();
    // A unit letter, then nothing, `i`, `ib` or `b` (`k`, `ki`, `kib`,
    // `kb`); nothing else, so typos such as `5iib` or `1kbb` are errors.
    let (unit, rest) = match suffix.char_indices().nth(1) {
        Some((i, _)) => suffix.split_at(i),
        None => (suffix.as_str(), ""),
    };
    let shift = match unit {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err("unknown size suffix (use k, m, g or t)"),
    };
    if !matches!(rest, "" | "i" | "ib" | "b") {
        return Err("unknown size suffix (use k, m, g or t)");
    }
    n.checked_mul(1u64 << shift).ok_or("size too large")
}

/// Parses one `read=...` or `alloc=...` part.
pub fn parse_policy(text: &str) -> Result<PolicyChoice, KnobError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(KnobError::Empty(text.to_owned()));
    }
    let Some((layer, rest)) = t.split_once('=') else {
        return Err(KnobError::UnknownLayer(t.to_owned()));
    };
    let mut parts = rest.split(':');
    let name = parts.next().unwrap_or_default().trim();
    if name.is_empty() {
        return Err(KnobError::Empty(t.to_owned()));
    }
    let mut knobs = Knobs {
        policy: alloc::format!("{}={name}", layer.trim()),
        text: t,
        parts,
    };
    match layer.trim() {
        "read" => parse_read(name, &mut knobs).map(PolicyChoice::Read),
        "alloc" => parse_alloc(name, &mut knobs).map(PolicyChoice::Alloc),
        _ => Err(KnobError::UnknownLayer(t.to_owned())),
    }
}

/// Iterator over the `:` parts of one policy.
struct Knobs<'a> {
    policy: String,
    text: &'a str,
    parts: core::str::Split<'a, char>,
}

/// One knob: key and optional value.
struct Knob<'a> {
    key: &'a str,
    value: Option<&'a str>,
}

impl<'a> Knobs<'a> {
    fn next(&mut self) -> Result<Option<Knob<'a>>, KnobError> {
        let Some(p) = self.parts.next() else {
            return Ok(None);
        };
        let p = p.trim();
        if p.is_empty() {
            return Err(KnobError::Empty(self.text.to_owned()));
        }
        Ok(Some(match p.split_once('=') {
            Some((k, v)) => Knob {
                key: k.trim(),
                value: Some(v.trim()),
            },
            None => Knob {
                key: p,
                value: None,
            },
        }))
    }

    fn unknown(&self, knob: &str) -> KnobError {
        KnobError::UnknownKnob {
            policy: self.policy.clone(),
            knob: knob.to_owned(),
        }
    }

    fn bad(&self, knob: &str, value: &str, why: &str) -> KnobError {
        KnobError::BadValue {
            policy: self.policy.clone(),
            knob: knob.to_owned(),
            value: value.to_owned(),
            why: why.to_owned(),
        }
    }

    fn dup(&self, knob: &str) -> KnobError {
        KnobError::Duplicate {
            policy: self.policy.clone(),
            knob: knob.to_owned(),
        }
    }

    fn value(&self, k: &Knob<'a>) -> Result<&'a str, KnobError> {
        match k.value {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(self.bad(k.key, "", "a value is required")),
        }
    }

    fn u32_value(&self, k: &Knob<'a>) -> Result<u32, KnobError> {
        let v = self.value(k)?;
        v.parse()
            .map_err(|_| self.bad(k.key, v, "expected a whole number below 2^32"))
    }
}

fn set_once<T>(slot: &mut Option<T>, v: T, knobs: &Knobs<'_>, key: &str) -> Result<(), KnobError> {
    if slot.replace(v).is_some() {
        return Err(knobs.dup(key));
    }
    Ok(())
}

fn parse_read(name: &str, knobs: &mut Knobs<'_>) -> Result<ReadPolicyConfig, KnobError> {
    match name {
        "pid" | "queue" => {
            if let Some(k) = knobs.next()? {
                return Err(knobs.unknown(k.key));
            }
            Ok(if name == "pid" {
                ReadPolicyConfig::Pid
            } else {
                ReadPolicyConfig::Queue
            })
        }
        "round-robin" => {
            let mut size = None;
            while let Some(k) = knobs.next()? {
                let (key, text) = match k.value {
                    Some(_) if k.key == "min_contig_read" => ("min_contig_read", knobs.value(&k)?),
                    None => ("min_contig_read", k.key),
                    Some(_) => return Err(knobs.unknown(k.key)),
                };
                let v = parse_size(text).map_err(|why| knobs.bad(key, text, why))?;
                if v == 0 {
                    return Err(knobs.bad(key, text, "must be at least one sector"));
                }
                set_once(&mut size, v, knobs, key)?;
            }
            Ok(ReadPolicyConfig::RoundRobin {
                min_contig_read: size.unwrap_or(DEFAULT_RR_MIN_CONTIG_READ),
            })
        }
        "devid" => {
            let mut devid = None;
            while let Some(k) = knobs.next()? {
                let (key, text) = match k.value {
                    Some(_) if k.key == "devid" => ("devid", knobs.value(&k)?),
                    None => ("devid", k.key),
                    Some(_) => return Err(knobs.unknown(k.key)),
                };
                let v: u64 = text
                    .parse()
                    .map_err(|_| knobs.bad(key, text, "expected a device id"))?;
                if v == 0 {
                    return Err(knobs.bad(key, text, "device ids start at 1"));
                }
                set_once(&mut devid, v, knobs, key)?;
            }
            Ok(ReadPolicyConfig::Devid { read_devid: devid })
        }
        "latency" => {
            let mut form = None;
            while let Some(k) = knobs.next()? {
                if k.key != "tiebreak" {
                    return Err(knobs.unknown(k.key));
                }
                let v = knobs.value(&k)?;
                let f = match v {
                    "2024" => LatencyForm::V2024,
                    "2021" => LatencyForm::V2021,
                    _ => return Err(knobs.bad(k.key, v, "expected 2024 or 2021")),
                };
                set_once(&mut form, f, knobs, k.key)?;
            }
            Ok(ReadPolicyConfig::Latency(form.unwrap_or_default()))
        }
        "load" => {
            let (mut scope, mut rot, mut nonrot) = (None, None, None);
            while let Some(k) = knobs.next()? {
                match k.key {
                    "penalty" => {
                        let v = knobs.value(&k)?;
                        let s = match v {
                            "mixed" => PenaltyScope::Mixed,
                            "always" => PenaltyScope::Always,
                            "never" => PenaltyScope::Never,
                            _ => {
                                return Err(knobs.bad(k.key, v, "expected mixed, always or never"));
                            }
                        };
                        set_once(&mut scope, s, knobs, k.key)?;
                    }
                    "rot" => set_once(&mut rot, knobs.u32_value(&k)?, knobs, k.key)?,
                    "nonrot" => set_once(&mut nonrot, knobs.u32_value(&k)?, knobs, k.key)?,
                    other => return Err(knobs.unknown(other)),
                }
            }
            Ok(ReadPolicyConfig::Load {
                scope: scope.unwrap_or_default(),
                rot_penalty: rot.unwrap_or(1),
                nonrot_penalty: nonrot.unwrap_or(0),
            })
        }
        _ => Err(KnobError::UnknownPolicy {
            layer: "read",
            name: name.to_owned(),
        }),
    }
}

fn parse_sizing<'a>(knobs: &Knobs<'a>, k: &Knob<'a>) -> Result<SizeRules, KnobError> {
    let v = knobs.value(k)?;
    Ok(match v {
        "mainline" => SizeRules::Mainline,
        "6.0" => SizeRules::Uncapped6_0,
        "pre-6.0" => SizeRules::Pre6_0,
        _ => return Err(knobs.bad(k.key, v, "expected mainline, 6.0 or pre-6.0")),
    })
}

fn parse_alloc(name: &str, knobs: &mut Knobs<'_>) -> Result<AllocPolicy, KnobError> {
    let mut rules = None;
    let variant = match name {
        "stock" => {
            while let Some(k) = knobs.next()? {
                match k.key {
                    "sizing" => set_once(&mut rules, parse_sizing(knobs, &k)?, knobs, k.key)?,
                    other => return Err(knobs.unknown(other)),
                }
            }
            AllocVariant::Stock
        }
        "ssd-metadata" => {
            let (mut rev, mut strict) = (None, None);
            while let Some(k) = knobs.next()? {
                match k.key {
                    "sizing" => set_once(&mut rules, parse_sizing(knobs, &k)?, knobs, k.key)?,
                    "rev" => {
                        let v = knobs.value(&k)?;
                        let r = match v {
                            "v1" | "1" => SsdMetadataRev::V1,
                            "v2" | "2" | "v3" | "3" => SsdMetadataRev::V3,
                            _ => return Err(knobs.bad(k.key, v, "expected v1, v2 or v3")),
                        };
                        set_once(&mut rev, r, knobs, k.key)?;
                    }
                    "strict" => {
                        let s = match k.value {
                            None => true,
                            Some(_) => {
                                let v = knobs.value(&k)?;
                                match v {
                                    "yes" | "on" | "1" | "true" => true,
                                    "no" | "off" | "0" | "false" => false,
                                    _ => return Err(knobs.bad(k.key, v, "expected yes or no")),
                                }
                            }
                        };
                        set_once(&mut strict, s, knobs, k.key)?;
                    }
                    other => return Err(knobs.unknown(other)),
                }
            }
            AllocVariant::SsdMetadata(SsdMetadata {
                rev: rev.unwrap_or_default(),
                strict: strict.unwrap_or(false),
            })
        }
        "allocation-hint" => {
            let mut mode = None;
            while let Some(k) = knobs.next()? {
                match k.key {
                    "sizing" => set_once(&mut rules, parse_sizing(knobs, &k)?, knobs, k.key)?,
                    "mode" => {
                        let v = knobs.value(&k)?;
                        let m = match v {
                            "v12" => HintMode::V12,
                            "kakra" => HintMode::Kakra,
                            _ => return Err(knobs.bad(k.key, v, "expected v12 or kakra")),
                        };
                        set_once(&mut mode, m, knobs, k.key)?;
                    }
                    other => return Err(knobs.unknown(other)),
                }
            }
            AllocVariant::AllocationHint(AllocationHint {
                mode: mode.unwrap_or_default(),
            })
        }
        _ => {
            return Err(KnobError::UnknownPolicy {
                layer: "alloc",
                name: name.to_owned(),
            });
        }
    };
    Ok(AllocPolicy {
        variant,
        rules: rules.unwrap_or_default(),
    })
}
