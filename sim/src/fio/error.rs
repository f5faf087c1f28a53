//! Structured parse errors.

use std::fmt;

/// A job file could not be parsed.
///
/// Displays as `file:line: option: message`, followed by
/// ` (did you mean 'x'?)` when a close option name exists. The `option:` part
/// is left out when the error is not tied to an option. The fields are the
/// first problem's; a file with several has the rest in [`more`](Self::more),
/// each displayed on a line of its own below the first.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct ParseError {
    /// File the error is in (the included file's display name for errors in
    /// an included file).
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// Section the line belongs to, if any.
    pub section: Option<String>,
    /// Option name as written, if the error concerns an option.
    pub option: Option<String>,
    /// What went wrong.
    pub message: String,
    /// Closest known option name for unknown options.
    pub suggestion: Option<String>,
    /// The file's other problems, in the order they are listed (none of
    /// them has a `more` of its own).
    pub more: Vec<ParseError>,
    /// Problems found beyond the listed ones (the list is bounded).
    pub omitted: usize,
}

impl ParseError {
    fn render(&self) -> String {
        let mut s = String::new();
        // Writing to a String cannot fail.
        let _ = self.write_to(&mut s);
        s
    }

    fn write_to(&self, f: &mut impl fmt::Write) -> fmt::Result {
        write!(f, "{}:{}: ", self.file, self.line)?;
        if let Some(opt) = &self.option {
            write!(f, "{opt}: ")?;
        }
        f.write_str(&self.message)?;
        if let Some(s) = &self.suggestion {
            write!(f, " (did you mean '{s}'?)")?;
        }
        for e in &self.more {
            f.write_char('\n')?;
            e.write_to(f)?;
        }
        if self.omitted > 0 {
            write!(
                f,
                "\n{}: {} more problems not listed",
                self.file, self.omitted
            )?;
        }
        Ok(())
    }

    /// Every problem, the first included, in the order listed.
    pub fn all(&self) -> impl Iterator<Item = &ParseError> {
        std::iter::once(self).chain(&self.more)
    }
}

/// Where a line came from; turns plain messages into [`ParseError`]s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Loc {
    pub(crate) file: String,
    pub(crate) line: usize,
    pub(crate) section: Option<String>,
}

impl Loc {
    /// An error at this location.
    pub(crate) fn err(&self, option: Option<&str>, message: impl Into<String>) -> ParseError {
        ParseError {
            file: self.file.clone(),
            line: self.line,
            section: self.section.clone(),
            option: option.map(str::to_string),
            message: message.into(),
            suggestion: None,
            more: Vec::new(),
            omitted: 0,
        }
    }
}
