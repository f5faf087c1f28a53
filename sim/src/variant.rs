//! Variant names on the command line (`--policies`, design.md): one
//! variant is one or more layer choices joined by `+`, each a name with
//! `:`-separated knobs, e.g. `wbt:lat=2ms+read=latency`.

/// The block-layer (rq-qos) choice of a variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockChoice {
    /// No rq-qos policy.
    None,
}

/// One parsed variant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    /// The text as given (the report's column name).
    pub spec: String,
    /// Block-layer policy.
    pub block: BlockChoice,
}

/// A variant that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VariantError {
    /// Empty text or an empty part.
    #[error("empty variant in '{0}'")]
    Empty(String),
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
    /// A knob on a policy that has none.
    #[error("policy '{name}' takes no knobs, got '{knob}'")]
    Knob {
        /// The policy.
        name: String,
        /// The knob.
        knob: String,
    },
}

/// Names the grammar knows, with the work that brings each.
const PLANNED: &[(&str, &str)] = &[
    ("wbt", "writeback throttling lands with its own issue"),
    ("wbt-v5", "writeback throttling lands with its own issue"),
    ("iocost", "blk-iocost lands with its own issue"),
    ("read", "RAID1 read policies land with the tiering issue"),
    ("alloc", "chunk allocation lands with the tiering issue"),
    ("flush", "delayed-ref flushing lands with its own issue"),
];

/// Parses one variant.
pub fn parse_variant(text: &str) -> Result<Variant, VariantError> {
    let spec = text.trim();
    if spec.is_empty() {
        return Err(VariantError::Empty(text.to_owned()));
    }
    let mut block = None;
    for part in spec.split('+') {
        let part = part.trim();
        if part.is_empty() {
            return Err(VariantError::Empty(spec.to_owned()));
        }
        let mut pieces = part.split(':');
        let head = pieces.next().unwrap_or_default();
        let name = head.split('=').next().unwrap_or_default();
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
            _ => {
                if let Some((_, why)) = PLANNED.iter().find(|(n, _)| *n == name) {
                    return Err(VariantError::NotBuilt {
                        name: name.to_owned(),
                        why,
                    });
                }
                let known = std::iter::once("none").chain(PLANNED.iter().map(|(n, _)| *n));
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
    })
}

/// Parses a comma-separated list of variants; the first is the baseline.
pub fn parse_policies(list: &str) -> Result<Vec<Variant>, VariantError> {
    list.split(',').map(parse_variant).collect()
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
    fn planned_unknown_and_malformed_names_are_errors() {
        assert!(matches!(
            parse_variant("wbt:lat=2ms"),
            Err(VariantError::NotBuilt { .. })
        ));
        assert!(matches!(
            parse_variant("read=pid"),
            Err(VariantError::NotBuilt { .. })
        ));
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
}
