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
