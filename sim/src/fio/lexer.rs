//! Line-level syntax of a job file.
//!
//! - Lines whose first non-blank character is `;` or `#` are comments.
//! - Elsewhere the text from the first `;` or `#` on is dropped, so
//!   `ramp_time=5 # comment` works (as in fio, this also cuts values that
//!   contain those characters).
//! - `[name]` starts a section; `include file` pulls in another file;
//!   everything else is `key=value` or a bare `key`.
//! - mmtests' `$((expr))` is expanded here, before anything else, because in
//!   mmtests bash expands it while writing the job file.

use super::expand::Vars;

/// What one line holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `[name]`.
    Section(String),
    /// `include file`.
    Include(String),
    /// `key=value` (`value` is `None` for a bare `key`).
    Opt { key: String, value: Option<String> },
}

/// A line-level error: the option it concerns (if known) and the message.
pub(crate) type LineError = (Option<String>, String);

/// Classifies one physical line (without its line terminator).
pub(crate) fn lex_line(raw: &str, vars: &Vars) -> Result<Option<Kind>, LineError> {
    if let Some(c) = raw
        .chars()
        .find(|&c| c.is_control() && !matches!(c, '\t' | '\r' | '\u{b}' | '\u{c}'))
    {
        return Err((
            None,
            format!(
                "control character U+{:04X} in line (binary data is not a job file)",
                u32::from(c)
            ),
        ));
    }
    let t = raw.trim_start();
    if t.is_empty() || t.starts_with([';', '#']) {
        return Ok(None);
    }
    let cut = t.find([';', '#']).map_or(t, |i| &t[..i]).trim_end();
    if cut.is_empty() {
        return Ok(None);
    }
    if let Some(rest) = cut.strip_prefix('[') {
        let Some(name) = rest.strip_suffix(']') else {
            return Err((
                None,
                format!("malformed section header '{cut}' (missing ']')"),
            ));
        };
        let name = vars.expand_arith(name.trim()).map_err(|m| (None, m))?;
        if name.is_empty() {
            return Err((None, "empty section name '[]'".to_string()));
        }
        return Ok(Some(Kind::Section(name)));
    }
    if let Some(rest) = cut.strip_prefix("include")
        && (rest.is_empty() || rest.starts_with(char::is_whitespace))
    {
        let inc = Some("include".to_string());
        let target = vars
            .expand_arith(rest.trim())
            .map_err(|m| (inc.clone(), m))?;
        if target.is_empty() {
            return Err((inc, "missing file name".to_string()));
        }
        return Ok(Some(Kind::Include(target)));
    }
    let (key, value) = match cut.split_once('=') {
        Some((k, v)) => (k.trim(), Some(v.trim())),
        None => (cut, None),
    };
    if key.is_empty() {
        return Err((None, format!("missing option name in '{cut}'")));
    }
    let value = match value {
        Some(v) => Some(
            vars.expand_arith(v)
                .map_err(|m| (Some(key.to_string()), m))?,
        ),
        None => None,
    };
    Ok(Some(Kind::Opt {
        key: key.to_string(),
        value,
    }))
}
