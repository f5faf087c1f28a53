//! Option value syntax: sizes, times, booleans, ranges and per-direction lists.
//!
//! Size suffixes (case-insensitive, optional trailing `b`): with
//! `kb_base=1024` (the default) `k m g t p` are powers of 1024 and the IEC
//! spellings `ki mi gi ti pi` (or `kib` ...) powers of 1000 — inverted on
//! purpose, fio's compatibility rule. `kb_base=1000` swaps the two. A `0x`
//! prefix reads hex, `N%` is a percentage where the option allows one.
//!
//! Time suffixes: `d h m s ms msec us usec` (and `sec`); a bare number is in
//! the option's default unit. A value in parentheses is an integer expression
//! (`+ - * / % ^`), whose time operands default to microseconds.
//!
//! Everything is checked: overflow, stray characters and unknown suffixes are
//! errors, where fio would often silently read a prefix of the text.

use super::expand::{Dialect, eval};

/// A parsed size: bytes or a percentage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Size {
    Bytes(u64),
    Percent(u64),
    /// A count of zones (`524z`), which fio multiplies by the zone size
    /// once it knows it.
    Zones(u64),
}

/// Microseconds in one unit of each time suffix.
pub(crate) fn time_mult_us(suffix: &str) -> Option<u64> {
    Some(match suffix {
        "us" | "usec" => 1,
        "ms" | "msec" => 1_000,
        "s" | "sec" => 1_000_000,
        "m" => 60_000_000,
        "h" => 3_600_000_000,
        "d" => 86_400_000_000,
        _ => return None,
    })
}

/// Byte multiplier of a size suffix under `kb_base`.
pub(crate) fn size_mult(suffix: &str, kb_base: u32) -> Option<u64> {
    let (kb, inverse) = if kb_base == 1000 {
        (1000u64, 1024u64)
    } else {
        (1024, 1000)
    };
    let s = suffix.strip_suffix('b').unwrap_or(suffix);
    if s.is_empty() {
        return Some(1);
    }
    let (prefix, base) = match s.strip_suffix('i') {
        Some(p) => (p, inverse),
        None => (s, kb),
    };
    let pow = match prefix {
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => return None,
    };
    base.checked_pow(pow)
}

/// Splits `s` into its leading unsigned number and the rest.
fn split_number(s: &str) -> Result<(u64, &str), String> {
    let (digits, radix, prefix) =
        if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            (h, 16, 2)
        } else {
            (s, 10, 0)
        };
    let n = digits
        .char_indices()
        .find(|&(_, c)| !c.is_digit(radix))
        .map_or(digits.len(), |(i, _)| i);
    if n == 0 {
        return Err(format!("'{s}' is not a number"));
    }
    let v = u64::from_str_radix(&digits[..n], radix)
        .map_err(|_| format!("value '{s}' is out of range"))?;
    Ok((v, &s[prefix + n..]))
}

/// Returns `s` when it is a parenthesised expression (starts with `(`).
fn paren_expr(s: &str) -> Option<&str> {
    if !s.starts_with('(') {
        return None;
    }
    Some(s)
}

fn eval_paren(s: &str, word: &dyn Fn(&str) -> Result<i64, String>) -> Result<u64, String> {
    let v = eval(s, &Dialect { pow: "^", word })?;
    u64::try_from(v).map_err(|_| format!("value '{s}' is negative"))
}

/// Parses a size with an optional suffix, a `N%` percentage (when
/// `allow_percent`) or a parenthesised expression.
pub(crate) fn parse_size(s: &str, kb_base: u32, allow_percent: bool) -> Result<Size, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("missing value".to_string());
    }
    if let Some(e) = paren_expr(s) {
        let word = |w: &str| {
            let v = parse_bytes(w, kb_base)?;
            i64::try_from(v).map_err(|_| format!("value '{w}' is out of range"))
        };
        return eval_paren(e, &word).map(Size::Bytes);
    }
    let (v, rest) = split_number(s)?;
    if rest == "%" {
        if !allow_percent {
            return Err(format!("a percentage ('{s}') is not allowed here"));
        }
        return Ok(Size::Percent(v));
    }
    let suffix = rest.to_ascii_lowercase();
    if suffix == "z" {
        if !allow_percent {
            return Err(format!("zone units ('{s}') are not allowed here"));
        }
        return Ok(Size::Zones(v));
    }
    let mult =
        size_mult(&suffix, kb_base).ok_or_else(|| format!("bad size suffix '{rest}' in '{s}'"))?;
    v.checked_mul(mult)
        .map(Size::Bytes)
        .ok_or_else(|| format!("value '{s}' is out of range"))
}

/// Parses a size in bytes (no percentage).
pub(crate) fn parse_bytes(s: &str, kb_base: u32) -> Result<u64, String> {
    match parse_size(s, kb_base, false)? {
        Size::Bytes(v) => Ok(v),
        Size::Percent(_) => Err(format!("a percentage ('{s}') is not allowed here")),
        Size::Zones(_) => Err(format!("zone units ('{s}') are not allowed here")),
    }
}

/// Parses an integer option: fio reads these like sizes (so `1k` is 1024)
/// and caps them at `u32::MAX`.
pub(crate) fn parse_u32(s: &str, kb_base: u32) -> Result<u32, String> {
    let v = parse_bytes(s, kb_base)?;
    u32::try_from(v).map_err(|_| format!("value '{}' is out of range", s.trim()))
}

/// Parses a time and returns nanoseconds. `default_us` is the length of one
/// unit of a bare number, in microseconds (1 or `1_000_000`).
pub(crate) fn parse_time_ns(s: &str, default_us: u64) -> Result<u64, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("missing value".to_string());
    }
    let us = if let Some(e) = paren_expr(s) {
        let word = |w: &str| {
            let v = parse_time_us(w, 1)?;
            i64::try_from(v).map_err(|_| format!("value '{w}' is out of range"))
        };
        eval_paren(e, &word)?
    } else {
        parse_time_us(s, default_us)?
    };
    us.checked_mul(1_000)
        .ok_or_else(|| format!("time '{s}' is out of range"))
}

fn parse_time_us(s: &str, default_us: u64) -> Result<u64, String> {
    let (v, rest) = split_number(s)?;
    let mult = if rest.is_empty() {
        default_us
    } else {
        time_mult_us(&rest.to_ascii_lowercase())
            .ok_or_else(|| format!("bad time suffix '{rest}' in '{s}'"))?
    };
    v.checked_mul(mult)
        .ok_or_else(|| format!("time '{s}' is out of range"))
}

/// Parses a boolean: bare option means true, otherwise `0` or `1`.
pub(crate) fn parse_bool(v: Option<&str>) -> Result<bool, String> {
    match v.map(str::trim) {
        None => Ok(true),
        Some("0" | "0x0" | "0X0") => Ok(false),
        Some("1" | "0x1" | "0X1") => Ok(true),
        Some(other) => Err(format!("expected 0 or 1, got '{other}'")),
    }
}

/// Parses a flag option (fio's "set" type): bare means true, otherwise an
/// integer where non-zero is true.
pub(crate) fn parse_flag(v: Option<&str>) -> Result<bool, String> {
    match v {
        None => Ok(true),
        Some(s) => {
            let t = s.trim();
            let (n, rest) =
                split_number(t).map_err(|_| format!("expected an integer, got '{t}'"))?;
            if !rest.is_empty() {
                return Err(format!("expected an integer, got '{t}'"));
            }
            Ok(n != 0)
        }
    }
}

/// Parses a plain decimal `u32` (no suffix), as used after `:` postfixes.
pub(crate) fn parse_plain_u32(s: &str) -> Result<u32, String> {
    let t = s.trim();
    if t.is_empty() || !t.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("expected a number, got '{t}'"));
    }
    t.parse::<u32>()
        .map_err(|_| format!("value '{t}' is out of range"))
}

/// Splits at `sep` outside parentheses.
pub(crate) fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let mut level = 0i64;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => level += 1,
            ')' => level -= 1,
            c if c == sep && level == 0 => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// True when `sep` occurs outside parentheses.
fn has_top(s: &str, sep: char) -> bool {
    split_top(s, sep).len() > 1
}

/// Resolves a per-direction list (`read,write,trim`) into assignments.
///
/// fio's rules: an entry sets its direction; the last entry, when not empty,
/// also sets every later direction; empty entries keep the previous value. So
/// `8k,32k` gives read 8k, write and trim 32k; `8k,32k,` leaves trim alone and
/// `,8k` leaves read alone. When `colon_dash` is set and there is no comma, a
/// `:` or `-` also separates entries, as fio's parser does for these options
/// (`bs=4k-8k` means read 4k, write and trim 8k — not a range).
pub(crate) fn per_dir(s: &str, colon_dash: bool) -> Result<Vec<(usize, &str)>, String> {
    let parts = if has_top(s, ',') || !colon_dash {
        split_top(s, ',')
    } else if has_top(s, ':') {
        split_top(s, ':')
    } else {
        split_top(s, '-')
    };
    if parts.len() > 3 {
        return Err(format!("'{s}' has more than 3 entries (read,write,trim)"));
    }
    let last = parts.len() - 1;
    let mut out = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        if p.trim().is_empty() {
            continue;
        }
        out.push((i, *p));
        if i == last {
            for j in i + 1..3 {
                out.push((j, *p));
            }
        }
    }
    if out.is_empty() {
        return Err("missing value".to_string());
    }
    Ok(out)
}

/// Splits a `lo-hi` or `lo:hi` range (or a single value) into its bounds.
pub(crate) fn range_parts(s: &str) -> Result<(&str, Option<&str>), String> {
    for sep in ['-', ':'] {
        let parts = split_top(s, sep);
        match parts.len() {
            1 => {}
            2 => return Ok((parts[0], Some(parts[1]))),
            _ => return Err(format!("'{s}' is not a range like 1k-4k")),
        }
    }
    Ok((s, None))
}

/// Parses a size range `lo-hi` / `lo:hi`, swapping the bounds if needed. A
/// single value gives `lo == hi` when `single_ok`.
pub(crate) fn parse_range(s: &str, kb_base: u32, single_ok: bool) -> Result<(u64, u64), String> {
    let (a, b) = range_parts(s)?;
    let lo = parse_bytes(a, kb_base)?;
    let hi = match b {
        Some(b) => parse_bytes(b, kb_base)?,
        None if single_ok => lo,
        None => return Err(format!("'{}' is not a range like 1k-4k", s.trim())),
    };
    Ok((lo.min(hi), lo.max(hi)))
}

/// Splits a `:`-separated name list, honouring fio's `\:` escape and skipping
/// empty entries.
pub(crate) fn name_list(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Parses a `:`-separated list of floats in 0..=100 (`percentile_list`).
pub(crate) fn parse_percentiles(s: &str) -> Result<Vec<f64>, String> {
    let mut out = Vec::new();
    for p in s.split(':') {
        let t = p.trim();
        let v: f64 = t
            .parse()
            .map_err(|_| format!("'{t}' is not a floating point value"))?;
        if !v.is_finite() || !(0.0..=100.0).contains(&v) {
            return Err(format!("percentile {t} is outside 0..100"));
        }
        out.push(v);
    }
    if out.len() > 20 {
        return Err("at most 20 percentiles can be listed".to_string());
    }
    Ok(out)
}
