//! The output formats a command prints, fio's way: several may be asked
//! for at once (`--output-format=terse,json,normal`), and they are written
//! in fio's order whatever the order asked: terse lines, then the JSON
//! document, then the normal text.

use crate::{Failure, Format};

/// The formats of one command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Formats {
    pub terse: bool,
    /// fio's `--terse-version`, 2 to 5 (3 by default).
    pub terse_version: u32,
    /// `Some(true)` for `json+` (the JSON with histogram bins).
    pub json: Option<bool>,
    pub normal: bool,
}

impl Formats {
    /// The set `asked` names (normal when it is empty; `--minimal` asks
    /// for terse), with terse added for `--append-terse`.
    pub fn of(asked: &[Format], append_terse: bool) -> Self {
        let mut f = Formats {
            terse: append_terse,
            terse_version: 3,
            json: None,
            normal: asked.is_empty(),
        };
        for a in asked {
            match a {
                Format::Normal => f.normal = true,
                Format::Json => f.json = Some(f.json.unwrap_or(false)),
                Format::JsonPlus => f.json = Some(true),
                Format::Terse => f.terse = true,
            }
        }
        f
    }

    /// As a shard document records it: the names, comma-separated, in
    /// the order they are written.
    pub fn name(self) -> String {
        let mut names = Vec::new();
        let versioned;
        if self.terse {
            versioned = format!("terse:{}", self.terse_version);
            names.push(if self.terse_version == 3 {
                "terse"
            } else {
                &versioned
            });
        }
        match self.json {
            Some(true) => names.push("json+"),
            Some(false) => names.push("json"),
            None => {}
        }
        if self.normal {
            names.push("normal");
        }
        names.join(",")
    }

    /// Reads [`Formats::name`]'s text back.
    pub fn parse(text: &str) -> Option<Self> {
        let mut asked = Vec::new();
        let mut version = 3;
        for part in text.split(',') {
            asked.push(match part {
                "normal" => Format::Normal,
                "json" => Format::Json,
                "json+" => Format::JsonPlus,
                "terse" => Format::Terse,
                _ => {
                    version = part.strip_prefix("terse:")?.parse().ok()?;
                    Format::Terse
                }
            });
        }
        let mut f = Formats::of(&asked, false);
        f.terse_version = version;
        Some(f)
    }

    /// `terse` and `json+` describe runs one at a time: the first is refused
    /// beside `--seeds` and for `compare`, where iolab's tables pool runs.
    pub fn check(self, compare: bool, seeds: bool) -> Result<(), Failure> {
        if self.terse && (compare || seeds) {
            let what = if compare { "compare" } else { "--seeds" };
            return Err(Failure::input(format!(
                "--output-format terse (or --minimal): terse lines are one run's jobs; \
                 {what} prints tables over several runs: use json there, or run one seed \
                 of one variant with `iolab run`"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_written_in_fios_order_and_read_back() {
        let f = Formats::of(&[Format::Normal, Format::JsonPlus], true);
        assert_eq!(f.name(), "terse,json+,normal");
        assert_eq!(Formats::parse(&f.name()), Some(f));
        assert_eq!(Formats::of(&[], false).name(), "normal");
        // --minimal alone is terse only; --append-terse adds it to normal.
        assert_eq!(Formats::of(&[Format::Terse], false).name(), "terse");
        assert_eq!(Formats::of(&[], true).name(), "terse,normal");
        assert_eq!(
            Formats::parse("json"),
            Some(Formats::of(&[Format::Json], false))
        );
        assert_eq!(Formats::parse("xml"), None);
        let mut v5 = Formats::of(&[Format::Terse], false);
        v5.terse_version = 5;
        assert_eq!(v5.name(), "terse:5");
        assert_eq!(Formats::parse("terse:5"), Some(v5));
    }
}
