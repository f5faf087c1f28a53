//! Knob grids in the policy grammar: `{a,b,c}` in a variant stands for
//! one variant per alternative, e.g. `wbt:lat={1,2,5,10,20}ms` for five
//! `wbt:lat=...ms` variants. Several braces in one variant multiply, the
//! first brace varying slowest (`wbt:lat={1,2}ms+read={pid,latency}`:
//! 1 ms with pid, 1 ms with latency, 2 ms with pid, 2 ms with latency).
//! The expansion is textual, before a variant is parsed, so any knob of
//! any layer can be swept, and each point's name is its expanded text.

use crate::variant::VariantError;

/// The most variants one `--policies` list may expand to.
pub const MAX_VARIANTS: usize = 10_000;

/// Splits `list` at the commas outside braces.
fn top_level_parts(list: &str) -> Result<Vec<&str>, VariantError> {
    let bad = |why: &str| VariantError::Sweep(format!("'{list}': {why}"));
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in list.char_indices() {
        match c {
            '{' if depth > 0 => return Err(bad("a brace inside a brace")),
            '{' => depth = 1,
            '}' if depth == 0 => return Err(bad("a '}' without its '{'")),
            '}' => depth = 0,
            ',' if depth == 0 => {
                parts.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth > 0 {
        return Err(bad("a '{' without its '}'"));
    }
    parts.push(&list[start..]);
    Ok(parts)
}

/// Expands the braces of one variant, appending to `out` (refusing to
/// pass [`MAX_VARIANTS`]).
fn expand_one(part: &str, out: &mut Vec<String>) -> Result<(), VariantError> {
    let Some(open) = part.find('{') else {
        if out.len() >= MAX_VARIANTS {
            return Err(too_many());
        }
        out.push(part.to_owned());
        return Ok(());
    };
    // Balanced and unnested: top_level_parts checked.
    let close = open + part[open..].find('}').unwrap_or(part.len() - open);
    let (head, alts, tail) = (&part[..open], &part[open + 1..close], &part[close + 1..]);
    for alt in alts.split(',') {
        let alt = alt.trim();
        if alt.is_empty() {
            return Err(VariantError::Sweep(format!(
                "'{part}': an empty choice in {{{alts}}}"
            )));
        }
        expand_one(&format!("{head}{alt}{tail}"), out)?;
    }
    Ok(())
}

fn too_many() -> VariantError {
    VariantError::Sweep(format!("more than {MAX_VARIANTS} variants"))
}

/// The sweeps of a `--policies` list: each part with braces and the range
/// of its points among the expanded variants.
pub fn sweeps(list: &str) -> Result<Vec<(String, std::ops::Range<usize>)>, VariantError> {
    let mut out = Vec::new();
    let mut expanded = Vec::new();
    for part in top_level_parts(list)? {
        let start = expanded.len();
        expand_one(part, &mut expanded)?;
        if part.contains('{') {
            out.push((part.to_owned(), start..expanded.len()));
        }
    }
    Ok(out)
}

/// The variants of a `--policies` list, sweeps expanded, in order.
pub fn expand(list: &str) -> Result<Vec<String>, VariantError> {
    let mut out = Vec::new();
    for part in top_level_parts(list)? {
        expand_one(part, &mut out)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_expand_in_order_and_multiply() {
        assert_eq!(
            expand("none,wbt").ok(),
            Some(vec!["none".into(), "wbt".into()])
        );
        assert_eq!(
            expand("none,wbt:lat={1,2,5}ms").ok(),
            Some(
                ["none", "wbt:lat=1ms", "wbt:lat=2ms", "wbt:lat=5ms"]
                    .map(String::from)
                    .to_vec()
            )
        );
        assert_eq!(
            expand("wbt:lat={1,2}ms+read={pid,latency}").ok(),
            Some(
                [
                    "wbt:lat=1ms+read=pid",
                    "wbt:lat=1ms+read=latency",
                    "wbt:lat=2ms+read=pid",
                    "wbt:lat=2ms+read=latency",
                ]
                .map(String::from)
                .to_vec()
            )
        );
        assert_eq!(expand("{wbt, wbt-v5}").ok().map(|v| v.len()), Some(2));
    }

    #[test]
    fn sweeps_are_found_with_their_points() {
        let s = sweeps("none,wbt:lat={1,2,5}ms,wbt-v5,{wbt,wbt-v5}:lat=2ms").unwrap_or_default();
        assert_eq!(
            s,
            vec![
                ("wbt:lat={1,2,5}ms".to_owned(), 1..4),
                ("{wbt,wbt-v5}:lat=2ms".to_owned(), 5..7)
            ]
        );
        assert!(sweeps("none,wbt").is_ok_and(|s| s.is_empty()));
    }

    #[test]
    fn broken_braces_and_huge_grids_are_refused() {
        let err = |s: &str| expand(s).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err("wbt:lat={1,2ms").contains("without its '}'"));
        assert!(err("wbt:lat=1}ms").contains("without its '{'"));
        assert!(err("wbt:lat={1,{2}}").contains("inside a brace"));
        assert!(err("wbt:lat={1,,2}ms").contains("empty choice"));
        // 101 × 100 = 10,100 points.
        let grid = format!(
            "iocost:rlat={{{}}}:wlat={{{}}}",
            (1..=101)
                .map(|i| (i * 100).to_string())
                .collect::<Vec<_>>()
                .join(","),
            (1..=100)
                .map(|i| (i * 100).to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
        assert!(err(&grid).contains("more than 10000"), "{}", err(&grid));
        assert!(expand("none").is_ok());
    }
}
