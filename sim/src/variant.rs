//! Variant names on the command line (`--policies`, design.md): one
//! variant is one or more layer choices joined by `+`, each a name with
//! `:`-separated knobs, e.g. `wbt:lat=2ms+read=latency`.

/// The block-layer (rq-qos) choice of a variant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockChoice {
    /// No rq-qos policy.
    None,
    /// Writeback throttling.
    Wbt {
        /// The 2016 v5 generation instead of the modern one.
        v5: bool,
        /// `wbt_lat_usec` to write (`None`: the device default).
        lat_usec: Option<i64>,
    },
    /// blk-iocost.
    Iocost {
        /// The 2019 (`v5.4`) donation instead of the modern one.
        v54: bool,
        /// The `io.cost.qos` line the knobs make (always starts with
        /// `enable=`), e.g. `enable=1 rpct=95 rlat=2500`.
        qos: String,
        /// The `io.cost.model` line the model knobs make; empty: the
        /// built-in parameter set the device selects (`ctrl=auto`).
        model: String,
    },
}

/// One parsed variant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    /// The text as given (the report's column name).
    pub spec: String,
    /// Block-layer policy.
    pub block: BlockChoice,
    /// RAID read-mirror policy (`read=...`; `None`: the kernel default,
    /// `pid`). Only meaningful on a multi-device volume.
    pub read: Option<iolab_tiering::ReadPolicyConfig>,
    /// Chunk placement (`alloc=...`; `None`: the stock allocator). Only
    /// meaningful on a multi-device volume.
    pub alloc: Option<iolab_tiering::AllocPolicy>,
    /// btrfs delayed-ref flushing (`flush=...`); only meaningful with
    /// `--fs btrfs` (any `--volume`).
    pub flush: Option<iolab_flush::Policy>,
}

/// A variant that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VariantError {
    /// Empty text or an empty part.
    #[error("empty variant in '{0}'")]
    Empty(String),
    /// A knob grid (`{a,b}`) that cannot be expanded.
    #[error("sweep {0}")]
    Sweep(String),
    /// A name this project knows but has not built yet.
    #[error("policy '{name}' is not available yet: {why}")]
    NotBuilt {
        /// The name.
        name: String,
        /// Which piece of work brings it.
        why: &'static str,
    },
    /// An unknown name.
    #[error("unknown policy '{name}'{}", suggestion.as_ref().map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default())]
    Unknown {
        /// The name.
        name: String,
        /// The closest known name.
        suggestion: Option<String>,
    },
    /// Two choices for one layer.
    #[error("variant '{0}' chooses the block-layer policy twice")]
    Twice(String),
    /// Two read policies.
    #[error("variant '{0}' chooses the read policy twice")]
    TwiceRead(String),
    /// Two flush policies.
    #[error("variant '{0}' chooses the flush policy twice")]
    TwiceFlush(String),
    /// Two chunk allocators.
    #[error("variant '{0}' chooses the chunk allocator twice")]
    TwiceAlloc(String),
    /// A `flush=` part the flush crate rejects.
    #[error("{0}")]
    Flush(String),
    /// A `read=` part the tiering crate rejects.
    #[error("{0}")]
    Read(String),
    /// A value after a policy name that takes none (`wbt=foo`).
    #[error("'{part}': policy '{name}' takes no '=' value; knobs go after ':' (e.g. wbt:lat=2ms)")]
    HeadValue {
        /// The policy.
        name: String,
        /// The part as given.
        part: String,
    },
    /// A knob on a policy that has none.
    #[error("policy '{name}' takes no knobs, got '{knob}'")]
    Knob {
        /// The policy.
        name: String,
        /// The knob.
        knob: String,
    },
    /// A knob the policy does not have.
    #[error("policy '{name}' has no knob '{knob}'{}", suggestion.as_ref().map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default())]
    UnknownKnob {
        /// The policy.
        name: String,
        /// The knob.
        knob: String,
        /// The closest knob.
        suggestion: Option<String>,
    },
    /// A knob value that does not parse or is out of range.
    #[error("policy '{name}': {knob}={value}: {why}")]
    BadValue {
        /// The policy.
        name: String,
        /// The knob.
        knob: String,
        /// The value.
        value: String,
        /// What is wrong.
        why: String,
    },
}

/// Names the grammar knows but the simulator does not run yet, with the
/// work that brings each (none at the moment).
const PLANNED: &[(&str, &str)] = &[];

/// Parses one variant.
pub fn parse_variant(text: &str) -> Result<Variant, VariantError> {
    let spec = text.trim();
    if spec.is_empty() {
        return Err(VariantError::Empty(text.to_owned()));
    }
    let mut block = None;
    let mut read = None;
    let mut flush = None;
    let mut alloc = None;
    for part in spec.split('+') {
        let part = part.trim();
        if part.is_empty() {
            return Err(VariantError::Empty(spec.to_owned()));
        }
        let mut pieces = part.split(':');
        let head = pieces.next().unwrap_or_default();
        let name = head.split('=').next().unwrap_or_default();
        // Only `read=`, `alloc=` and `flush=` name a policy after '='.
        if head != name && matches!(name, "none" | "wbt" | "wbt-v5" | "iocost" | "iocost-v5.4") {
            return Err(VariantError::HeadValue {
                name: name.to_owned(),
                part: part.to_owned(),
            });
        }
        match name {
            "none" => {
                if let Some(knob) = pieces.next() {
                    return Err(VariantError::Knob {
                        name: "none".into(),
                        knob: knob.into(),
                    });
                }
                if block.replace(BlockChoice::None).is_some() {
                    return Err(VariantError::Twice(spec.to_owned()));
                }
            }
            "flush" => {
                let policy = iolab_flush::parse_policy(part)
                    .map_err(|e| VariantError::Flush(e.to_string()))?;
                if flush.replace(policy).is_some() {
                    return Err(VariantError::TwiceFlush(spec.to_owned()));
                }
            }
            "alloc" => {
                let choice = iolab_tiering::parse_policy(part)
                    .map_err(|e| VariantError::Read(e.to_string()))?;
                let iolab_tiering::PolicyChoice::Alloc(cfg) = choice else {
                    return Err(VariantError::Read(format!(
                        "'{part}' is not a chunk allocator"
                    )));
                };
                if alloc.replace(cfg).is_some() {
                    return Err(VariantError::TwiceAlloc(spec.to_owned()));
                }
            }
            "read" => {
                let choice = iolab_tiering::parse_policy(part)
                    .map_err(|e| VariantError::Read(e.to_string()))?;
                let iolab_tiering::PolicyChoice::Read(cfg) = choice else {
                    return Err(VariantError::Read(format!("'{part}' is not a read policy")));
                };
                if read.replace(cfg).is_some() {
                    return Err(VariantError::TwiceRead(spec.to_owned()));
                }
            }
            "wbt" | "wbt-v5" => {
                let mut lat_usec = None;
                for knob in pieces {
                    let (k, v) = knob.split_once('=').unwrap_or((knob, ""));
                    match k {
                        "lat" => lat_usec = Some(parse_lat(name, v)?),
                        _ => {
                            return Err(VariantError::UnknownKnob {
                                name: name.to_owned(),
                                knob: k.to_owned(),
                                suggestion: crate::fio::closest(k, ["lat"]).map(str::to_owned),
                            });
                        }
                    }
                }
                let choice = BlockChoice::Wbt {
                    v5: name == "wbt-v5",
                    lat_usec,
                };
                if block.replace(choice).is_some() {
                    return Err(VariantError::Twice(spec.to_owned()));
                }
            }
            "iocost" | "iocost-v5.4" => {
                let choice = parse_iocost(name, pieces)?;
                if block.replace(choice).is_some() {
                    return Err(VariantError::Twice(spec.to_owned()));
                }
            }
            _ => {
                if let Some((_, why)) = PLANNED.iter().find(|(n, _)| *n == name) {
                    return Err(VariantError::NotBuilt {
                        name: name.to_owned(),
                        why,
                    });
                }
                let known = [
                    "none",
                    "wbt",
                    "wbt-v5",
                    "iocost",
                    "iocost-v5.4",
                    "read",
                    "alloc",
                    "flush",
                ]
                .into_iter()
                .chain(PLANNED.iter().map(|(n, _)| *n));
                return Err(VariantError::Unknown {
                    name: name.to_owned(),
                    suggestion: crate::fio::closest(name, known).map(str::to_owned),
                });
            }
        }
    }
    Ok(Variant {
        spec: spec.to_owned(),
        block: block.unwrap_or(BlockChoice::None),
        read,
        alloc,
        flush,
    })
}

/// The `lat` knob of `wbt`: `wbt_lat_usec` semantics (a bare number is
/// microseconds; 0 disables; -1 restores the default), or a duration with
/// a unit (`ns`, `us`, `ms`, `s`).
fn parse_lat(name: &str, value: &str) -> Result<i64, VariantError> {
    let bad = |why: &str| VariantError::BadValue {
        name: name.to_owned(),
        knob: "lat".to_owned(),
        value: value.to_owned(),
        why: why.to_owned(),
    };
    let v = value.trim();
    let (digits, scale_ns): (&str, i64) = if let Some(d) = v.strip_suffix("ms") {
        (d, 1_000_000)
    } else if let Some(d) = v.strip_suffix("us") {
        (d, 1_000)
    } else if let Some(d) = v.strip_suffix("ns") {
        (d, 1)
    } else if let Some(d) = v.strip_suffix('s') {
        (d, 1_000_000_000)
    } else {
        (v, 1_000)
    };
    let n: i64 = digits
        .trim()
        .parse()
        .map_err(|_| bad("not a number (e.g. lat=2ms, lat=2000, lat=0, lat=-1)"))?;
    if n < -1 || (n == -1 && scale_ns != 1_000) {
        return Err(bad("below -1; -1 (bare) restores the default, 0 disables"));
    }
    if n == -1 {
        return Ok(-1);
    }
    let ns = n.checked_mul(scale_ns).ok_or_else(|| bad("too large"))?;
    if ns % 1_000 != 0 {
        // wbt_lat_usec counts whole microseconds; 1 to 999 ns would be
        // 0, which disables wbt.
        return Err(bad(
            "not a whole number of microseconds (wbt_lat_usec counts whole µs)",
        ));
    }
    Ok(ns / 1_000)
}

/// `io.cost.qos` keys that are knobs of `iocost`: `enable` and the
/// numeric ones (the `io.cost.model` knobs are `iolab_iocost::MODEL_KEYS`).
fn is_qos_knob(k: &str) -> bool {
    k == "enable" || iolab_iocost::QOS_KEYS.contains(&k)
}

/// The knobs of `iocost` / `iocost-v5.4`: each is one key of the kernel's
/// `io.cost.qos` (`enable`, `rpct`, `rlat`, `wpct`, `wlat`, `min`, `max`)
/// or `io.cost.model` (`rbps`, `rseqiops`, `rrandiops`, `wbps`,
/// `wseqiops`, `wrandiops`) with the value written as in that file
/// (percentages with up to two decimals, latencies in µs, bytes/s, IOPS).
/// `iocost` alone is `enable=1` with the device's built-in parameter set;
/// naming any QoS key makes the QoS `ctrl=user` (unnamed keys keep the
/// built-in values), naming any model key likewise for the model. A later
/// knob overrides an earlier one. The lines are checked against the
/// controller's own parser here, so a bad value is reported with its key.
fn parse_iocost<'a>(
    name: &str,
    knobs: impl Iterator<Item = &'a str>,
) -> Result<BlockChoice, VariantError> {
    let mut qos = String::new();
    let mut enable = "1";
    let mut model = String::new();
    for knob in knobs {
        let Some((k, v)) = knob.split_once('=') else {
            if is_qos_knob(knob) || iolab_iocost::MODEL_KEYS.contains(&knob) {
                return Err(VariantError::BadValue {
                    name: name.to_owned(),
                    knob: knob.to_owned(),
                    value: String::new(),
                    why: "missing value (write KEY=VALUE)".to_owned(),
                });
            }
            return Err(unknown_iocost_knob(name, knob));
        };
        if v.is_empty() || v.contains(char::is_whitespace) {
            return Err(VariantError::BadValue {
                name: name.to_owned(),
                knob: k.to_owned(),
                value: v.to_owned(),
                why: "expected one value without spaces".to_owned(),
            });
        }
        if k == "enable" {
            enable = v;
        } else if is_qos_knob(k) {
            qos.push(' ');
            qos.push_str(knob);
        } else if iolab_iocost::MODEL_KEYS.contains(&k) {
            if !model.is_empty() {
                model.push(' ');
            }
            model.push_str(knob);
        } else {
            return Err(unknown_iocost_knob(name, k));
        }
    }
    let qos = format!("enable={enable}{qos}");
    // Check both lines with the controller's own parser.
    let mut probe = iolab_iocost::IoCost::new(
        iolab_iocost::Device {
            devno: crate::policies::iocost::DEVNO,
            rotational: false,
            queue_depth: 32,
        },
        iolab_iocost::Options::default(),
    );
    let bad = |e: iolab_iocost::ConfigError| {
        use iolab_iocost::ConfigError as E;
        match e {
            E::InvalidValue {
                key,
                value,
                expected,
                ..
            } => VariantError::BadValue {
                name: name.to_owned(),
                knob: key.to_owned(),
                value,
                why: format!("expected {expected}"),
            },
            E::UnknownKey { key, .. } => unknown_iocost_knob(name, &key),
            E::MinAboveMax { .. } => VariantError::BadValue {
                name: name.to_owned(),
                knob: "min".to_owned(),
                value: last_value(&qos, "min").unwrap_or_default(),
                why: e.to_string(),
            },
            other => VariantError::BadValue {
                name: name.to_owned(),
                knob: "qos".to_owned(),
                value: qos.clone(),
                why: other.to_string(),
            },
        }
    };
    if !model.is_empty() {
        probe.write_model(0, &model).map_err(bad)?;
    }
    probe.write_qos(0, &qos).map_err(bad)?;
    Ok(BlockChoice::Iocost {
        v54: name == "iocost-v5.4",
        qos,
        model,
    })
}

/// The last value given to `key` in a line of `key=value` tokens.
fn last_value(line: &str, key: &str) -> Option<String> {
    line.split(' ')
        .rev()
        .filter_map(|t| t.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.to_owned())
}

fn unknown_iocost_knob(name: &str, knob: &str) -> VariantError {
    VariantError::UnknownKnob {
        name: name.to_owned(),
        knob: knob.to_owned(),
        suggestion: crate::fio::closest(
            knob,
            std::iter::once("enable")
                .chain(iolab_iocost::QOS_KEYS)
                .chain(iolab_iocost::MODEL_KEYS),
        )
        .map(str::to_owned),
    }
}

/// Parses a comma-separated list of variants, knob grids
/// (`wbt:lat={1,2,5}ms`, [`crate::sweep`]) expanded; the first is the
/// baseline.
pub fn parse_policies(list: &str) -> Result<Vec<Variant>, VariantError> {
    crate::sweep::expand(list)?
        .iter()
        .map(|v| parse_variant(v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_parses_and_lists_keep_order() {
        let v = parse_policies("none,none").unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].block, BlockChoice::None);
        assert_eq!(v[1].spec, "none");
    }

    #[test]
    fn wbt_knobs_parse_like_the_sysfs_file() {
        let lat = |s: &str| match parse_variant(s).map(|v| v.block) {
            Ok(BlockChoice::Wbt { lat_usec, .. }) => Ok(lat_usec),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e),
        };
        assert_eq!(lat("wbt"), Ok(None));
        assert_eq!(lat("wbt:lat=2ms"), Ok(Some(2000)));
        assert_eq!(lat("wbt:lat=75000"), Ok(Some(75_000)));
        assert_eq!(lat("wbt:lat=0"), Ok(Some(0)));
        assert_eq!(lat("wbt:lat=-1"), Ok(Some(-1)));
        assert_eq!(lat("wbt-v5:lat=1s"), Ok(Some(1_000_000)));
        assert!(matches!(
            lat("wbt:lat=-2"),
            Err(VariantError::BadValue { .. })
        ));
        assert!(matches!(
            lat("wbt:lat=fast"),
            Err(VariantError::BadValue { .. })
        ));
        assert!(matches!(
            lat("wbt:lat=99999999999999999s"),
            Err(VariantError::BadValue { .. })
        ));
        // Sub-microsecond targets would be 0, which disables wbt.
        for odd in ["wbt:lat=1ns", "wbt:lat=999ns", "wbt:lat=1500ns"] {
            let e = parse_variant(odd).unwrap_err();
            assert!(
                e.to_string().contains("whole number of microseconds"),
                "{e}"
            );
        }
        assert_eq!(lat("wbt:lat=2000ns"), Ok(Some(2)));
        let e = parse_variant("wbt:latt=2ms").unwrap_err();
        assert_eq!(
            e.to_string(),
            "policy 'wbt' has no knob 'latt' (did you mean 'lat'?)"
        );
        assert_eq!(
            parse_variant("wbt-v5").map(|v| v.block),
            Ok(BlockChoice::Wbt {
                v5: true,
                lat_usec: None
            })
        );
    }

    /// `wbt=foo` is not `wbt`: a value after a name that takes none is
    /// refused, not dropped.
    #[test]
    fn a_value_after_a_plain_policy_name_is_an_error() {
        for part in [
            "wbt=foo",
            "none=foo",
            "iocost=garbage",
            "wbt-v5=",
            "iocost-v5.4=x",
        ] {
            let e = parse_variant(part).unwrap_err();
            assert!(matches!(e, VariantError::HeadValue { .. }), "{part}: {e}");
            assert!(e.to_string().contains("takes no '=' value"), "{e}");
        }
        assert!(parse_variant("none+read=pid").is_ok());
    }

    #[test]
    fn planned_unknown_and_malformed_names_are_errors() {
        assert!(parse_variant("flush=catch-up").unwrap().flush.is_some());
        assert!(matches!(
            parse_variant("flush=on-demand+flush=catch-up"),
            Err(VariantError::TwiceFlush(_))
        ));
        let e = parse_variant("flush=on-demand:clamp=3").unwrap_err();
        assert!(e.to_string().contains("clamp"), "{e}");
        assert_eq!(
            parse_variant("alloc=ssd-metadata")
                .unwrap()
                .alloc
                .map(|a| iolab_tiering::ChunkAllocator::name(&a)),
            Some("ssd-metadata")
        );
        assert!(matches!(
            parse_variant("alloc=stock+alloc=stock"),
            Err(VariantError::TwiceAlloc(_))
        ));
        // Read policies parse through the tiering crate, errors included.
        assert!(parse_variant("read=latency").unwrap().read.is_some());
        assert!(matches!(
            parse_variant("read=pid+read=devid:1"),
            Err(VariantError::TwiceRead(_))
        ));
        let e = parse_variant("read=round-robin:min_contig_read=0").unwrap_err();
        assert!(e.to_string().contains("min_contig_read"), "{e}");
        let e = parse_variant("nonee").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown policy 'nonee' (did you mean 'none'?)"
        );
        assert!(matches!(parse_variant(""), Err(VariantError::Empty(_))));
        assert!(matches!(
            parse_variant("none+"),
            Err(VariantError::Empty(_))
        ));
        assert!(matches!(
            parse_variant("none+none"),
            Err(VariantError::Twice(_))
        ));
        assert!(matches!(
            parse_variant("none:x=1"),
            Err(VariantError::Knob { .. })
        ));
    }

    fn iocost(text: &str) -> Result<(bool, String, String), VariantError> {
        match parse_variant(text)?.block {
            BlockChoice::Iocost { v54, qos, model } => Ok((v54, qos, model)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn iocost_knobs_become_the_kernel_lines() {
        assert_eq!(
            iocost("iocost"),
            Ok((false, "enable=1".into(), String::new()))
        );
        assert_eq!(
            iocost("iocost:rpct=95:rlat=2500:wpct=95:wlat=5000:min=50:max=150"),
            Ok((
                false,
                "enable=1 rpct=95 rlat=2500 wpct=95 wlat=5000 min=50 max=150".into(),
                String::new()
            ))
        );
        assert_eq!(
            iocost("iocost-v5.4:rbps=488636629:rseqiops=8932:enable=0:rlat=1000"),
            Ok((
                true,
                "enable=0 rlat=1000".into(),
                "rbps=488636629 rseqiops=8932".into()
            ))
        );
        assert!(parse_variant("iocost+read=pid").is_ok());
        assert!(matches!(
            parse_variant("iocost+wbt"),
            Err(VariantError::Twice(_))
        ));
    }

    #[test]
    fn iocost_bad_knobs_name_the_key() {
        let msg = |t: &str| parse_variant(t).unwrap_err().to_string();
        assert_eq!(
            msg("iocost:rlatt=2500"),
            "policy 'iocost' has no knob 'rlatt' (did you mean 'rlat'?)"
        );
        assert_eq!(
            msg("iocost:rpct=101"),
            "policy 'iocost': rpct=101: expected a percentage in [0, 100] with at most two decimals"
        );
        assert_eq!(
            msg("iocost:rlat=fast"),
            "policy 'iocost': rlat=fast: expected microseconds, an unsigned 32-bit integer"
        );
        assert_eq!(
            msg("iocost-v5.4:rbps=-1"),
            "policy 'iocost-v5.4': rbps=-1: expected an unsigned 64-bit integer"
        );
        assert!(msg("iocost:min=150:max=50").starts_with("policy 'iocost': min=150: "));
        assert!(matches!(
            parse_variant("iocost:enable=yes"),
            Err(VariantError::BadValue { knob, .. }) if knob == "enable"
        ));
        assert!(matches!(
            parse_variant("iocost:rpct"),
            Err(VariantError::BadValue { knob, .. }) if knob == "rpct"
        ));
        assert!(matches!(
            parse_variant("iocost:wlat="),
            Err(VariantError::BadValue { knob, .. }) if knob == "wlat"
        ));
        assert!(matches!(
            parse_variant("iocost:ctrl=user"),
            Err(VariantError::UnknownKnob { knob, .. }) if knob == "ctrl"
        ));
        assert_eq!(
            msg("iocots"),
            "unknown policy 'iocots' (did you mean 'iocost'?)"
        );
    }
}
