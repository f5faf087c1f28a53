//! Small pieces shared by the plain-text tables printed under a
//! comparison: the width of the variant column, and a counter read from a
//! run's JSON object.

/// Width of a column of variant names: the longest name, at least
/// `"variant"`.
pub(crate) fn variant_width<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names.map(str::len).max().unwrap_or(0).max("variant".len())
}

/// The unsigned integer at JSON pointer `path` of `v` (0 when absent).
pub(crate) fn u64_at(v: &serde_json::Value, path: &str) -> u64 {
    v.pointer(path)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variant_column_fits_the_longest_name_and_its_header() {
        assert_eq!(variant_width(["none", "wbt"].into_iter()), 7);
        assert_eq!(variant_width(std::iter::empty()), 7);
        assert_eq!(variant_width(["alloc=ssd-metadata"].into_iter()), 18);
        let v = serde_json::json!({"a": {"b": 3}, "c": -1});
        assert_eq!(u64_at(&v, "/a/b"), 3);
        assert_eq!(u64_at(&v, "/c"), 0, "not an unsigned integer");
        assert_eq!(u64_at(&v, "/missing"), 0);
    }
}
