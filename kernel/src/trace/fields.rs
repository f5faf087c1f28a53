//! `key=value` payloads, the shape most print formats share.

/// The `key=value` tokens of `text`, separated by spaces and/or commas.
pub(crate) fn pairs(text: &str) -> impl Iterator<Item = (&str, &str)> {
    text.split(|c: char| c == ',' || c.is_whitespace())
        .filter_map(|tok| tok.split_once('='))
}

/// The value of `key` in `text`.
pub(crate) fn get<'a>(text: &'a str, key: &str) -> Result<&'a str, String> {
    pairs(text)
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
        .ok_or_else(|| format!("no '{key}=' field"))
}

/// The value of `key` as a number (`4(FLUSH_DELAYED_REFS)`: the number
/// before the parenthesis; `100000us`: the number before the unit `unit`).
pub(crate) fn num<T: std::str::FromStr>(text: &str, key: &str, unit: &str) -> Result<T, String> {
    let raw = get(text, key)?;
    let v = raw.split('(').next().unwrap_or(raw);
    let v = v.strip_suffix(unit).unwrap_or(v);
    v.parse()
        .map_err(|_| format!("'{key}={raw}' is not a number"))
}

/// `PREFIX: REST` cut at the first `": "`.
pub(crate) fn head(text: &str) -> Result<(&str, &str), String> {
    text.split_once(": ")
        .ok_or_else(|| "no 'NAME: ' before the fields".to_string())
}

/// The tokens of `text` between runs of ASCII whitespace (byte-wise: a
/// trace line's hot path).
pub(crate) struct Tokens<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Tokens<'a> {
    pub(crate) fn new(text: &'a str) -> Tokens<'a> {
        Tokens { text, at: 0 }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let b = self.text.as_bytes();
        let mut i = self.at;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() {
            self.at = i;
            return None;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        self.at = i;
        // Cut at ASCII bytes: always on a character boundary.
        self.text.get(start..i)
    }
}

/// A decimal number of ASCII digits alone (no sign, no space), as
/// `str::parse` reads it, without its generic machinery.
pub(crate) fn decimal(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s.as_bytes() {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_split_on_any_run_of_whitespace() {
        let t: Vec<_> = Tokens::new("  7,0 WS\t4096 ()  1 + 8 ").collect();
        assert_eq!(t, ["7,0", "WS", "4096", "()", "1", "+", "8"]);
        assert_eq!(Tokens::new("   ").next(), None);
        assert_eq!(Tokens::new("é x").collect::<Vec<_>>(), ["é", "x"]);
    }

    #[test]
    fn decimals_read_as_parse_reads_them() {
        for s in ["0", "42", "18446744073709551615", "007"] {
            assert_eq!(decimal(s), s.parse().ok(), "{s}");
        }
        for s in [
            "",
            "18446744073709551616",
            "-1",
            "+1",
            "1 ",
            "1a",
            "99999999999999999999999",
        ] {
            assert_eq!(decimal(s), None, "{s}");
        }
    }
}
