//! fio job files: a hand-written parser producing typed job specs.
//!
//! The format is fio's INI dialect. `[global]` sections set defaults for the
//! jobs below them and may repeat (a later `[global]` only changes later
//! jobs; as in fio, any section whose name starts with `global` is one);
//! every other `[name]` is a job. Inside a section each line is `key=value`
//! (blanks around `=` allowed), a bare `key` (true, for booleans and flags)
//! or `include file` (the file may hold options but no sections). Lines
//! starting with `;` or `#` are comments, and a value is cut at its first `;`
//! or `#`, so `ramp_time=5 # warm-up` works.
//!
//! Values go through, in order:
//!
//! 1. mmtests' `$((expr))` bash arithmetic (64-bit, truncating division,
//!    `+ - * / % ** ( )`, unary minus; names with or without `$`, looked up
//!    in `MEMTOTAL_BYTES`, `NUM_LOGICAL_CPUS` and [`ParseEnv::vars`]; an
//!    unknown name is an error, where bash would use 0);
//! 2. fio's `${VAR}` from [`ParseEnv::vars`] (unset is an error, where fio
//!    substitutes an empty string);
//! 3. fio's keywords `$mb_memory`, `$ncpus`, `$pagesize`; when one was
//!    replaced and the value is integer arithmetic, it is evaluated (fio
//!    pipes such values through `bc`);
//! 4. the option's own syntax: sizes, times, ranges, per-direction lists and
//!    parenthesised arithmetic `( ... )` with `+ - * / % ^`.
//!
//! Every fio option name is classified in one table: typed into [`JobSpec`],
//! cosmetic (accepted, listed in [`JobFile::accepted`]) or unsupported (an
//! error unless given a value that keeps fio's default); see
//! [`classify_option`]. Unknown names are an error with fio's "did you mean"
//! suggestion.
//!
//! Deliberate differences from fio, all refusing input that fio would
//! silently misread: stray characters, unknown suffixes, fractions and
//! overflowing numbers are errors (fio reads a numeric prefix); unset
//! variables are errors; a bare boolean option means true (fio requires a
//! value for booleans).

// `ParseError` carries the fields the CLI prints (file, line, section,
// option, message, suggestion); errors are rare, so its size does not matter.
#![allow(clippy::result_large_err)]

mod apply;
pub mod blktrace;
mod cmdline;
mod cosmetic;
mod engines;
mod error;
mod expand;
pub mod iolog;
mod lexer;
mod parser;
mod spec;
mod suggest;
mod table;
mod value;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

pub use cmdline::{OwnOption, own_options};
pub use error::ParseError;
pub use spec::{
    BsRange, DDIR_READ, DDIR_TRIM, DDIR_WRITE, DEFAULT_PERCENTILES, Engine, ExitWhat, Fadvise,
    Fallocate, FileServiceType, Flow, JobSpec, LogRequest, MetaEngine, OptionAt,
    RandomDistribution, RateProcess, Rw, RwMode, SgWriteMode, SizeRange, SizeSpec, Steady,
    SteadyMetric, Zone, ZoneMode, ZoneUnits,
};
pub use suggest::closest;
pub use table::{OptionClass, OptionInfo, classify_option, known_options};

/// Reads a file a job file names (an `include`, a `read_iolog`), given the
/// display name of the file that names it and the name: `(display name,
/// bytes)` or an error message. An include must be UTF-8 text; a log may
/// be a blktrace binary.
pub type IncludeFn<'a> = dyn Fn(&str, &str) -> Result<(String, Vec<u8>), String> + 'a;

/// The machine the job file is parsed for, and how to find included files.
pub struct ParseEnv<'a> {
    /// Scenario RAM in bytes: `MEMTOTAL_BYTES` in `$((...))`, and fio's
    /// `$mb_memory` (this divided by 2^20).
    pub mem_bytes: u64,
    /// Logical CPUs: `$ncpus` and `NUM_LOGICAL_CPUS`.
    pub ncpus: u32,
    /// `$pagesize` (normally 4096).
    pub pagesize: u64,
    /// Variables for `${VAR}` and extra `$((VAR))` names.
    pub vars: &'a BTreeMap<String, String>,
    /// Resolves `include file` of the file it is read in: returns the
    /// display name used in error messages (and include-loop detection) and
    /// the file's contents, or an error message.
    pub include: &'a IncludeFn<'a>,
}

/// An option that was accepted but has no effect on the simulation: one
/// iolab does not simulate, or one fio itself would override.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// File the option is in.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The job section it belongs to (for an overridden block size, the
    /// first job that overrides it); `None` in `[global]`.
    pub section: Option<String>,
    /// Option name as written.
    pub option: String,
    /// Why it does not matter to the simulation.
    pub why: String,
    /// Whether fio would have acted on it in this job.
    pub standing: Standing,
}

/// Whether an [`Accepted`] option is one fio acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// fio would act on it (write a log, set a priority, pin a CPU) and
    /// iolab does not: the user asked for something the run will not do,
    /// which the CLI says on stderr.
    NotSimulated,
    /// It changes nothing fio measures either: fio's own mechanics
    /// (threads or processes, clock source, clean-up), a detail of an
    /// option the job does not set, or a value that keeps fio's default.
    Inert,
    /// fio would not act on it either, because another option the job
    /// gives decides instead (a `bs=` where a `bssplit=` picks the sizes):
    /// what the user wrote has no effect, which the CLI says on stderr.
    Overridden,
}

impl std::fmt::Display for Accepted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match self.standing {
            Standing::Overridden => "",
            Standing::NotSimulated | Standing::Inert => "accepted, not simulated: ",
        };
        write!(
            f,
            "{}:{}: {}: {how}{}",
            self.file, self.line, self.option, self.why
        )
    }
}

/// Parses a time as fio's command line takes one (`--status-interval`):
/// a bare number is seconds; `ms`, `us`, `m`, `h` ... as in a job file.
pub fn parse_time_secs(text: &str) -> Result<u64, String> {
    value::parse_time_ns(text, 1_000_000)
}

/// Parses a byte size with fio's suffixes under the default `kb_base=1024`
/// (`6g`, `512m`, `0x1000`); for command-line values such as `--memory`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    value::parse_bytes(text.trim(), 1024)
}

/// A parsed job file.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFile {
    /// Job sections in file order (`numjobs` not expanded).
    pub jobs: Vec<JobSpec>,
    /// Accepted options that do not change the simulation, in file order
    /// (an option in `[global]` is listed once). The CLI shows them with
    /// `--verbose`.
    pub accepted: Vec<Accepted>,
    /// Options of the `[global]` sections in force at the end, canonical
    /// names and expanded values, in order: those of the last job file (and
    /// of the command line when there is one file), as fio's JSON "global
    /// options" lists them.
    pub global_options: Vec<(String, String)>,
}

/// One place jobs come from, for [`parse_jobs`].
#[derive(Debug, Clone, Copy)]
pub enum JobSource<'t> {
    /// Job options as fio takes them on its command line (`--name=x
    /// --rw=randread ...`, a leading `fio` skipped); `name` stands for them
    /// in messages, where an option's line is its argument's place. fio's
    /// own options among them that iolab acts on (`--output-format`,
    /// `--minimal`, ...) are skipped here: [`own_options`] lists them for
    /// the caller to act on.
    Args {
        /// Display name, e.g. `<command line>`.
        name: &'t str,
        /// The arguments.
        args: &'t [String],
    },
    /// A job file's text.
    File {
        /// Display name.
        name: &'t str,
        /// Contents.
        text: &'t str,
    },
}

/// Parses several sources of jobs into one run, as fio reads its command
/// line and then each job file: the command line's `[global]` options
/// carry into the first job file (not later ones), every job file after
/// the first starts from fio's defaults, and its first job waits for the
/// jobs before it (a stonewall), so the files run one after another.
///
/// # Errors
///
/// As [`parse_job_file`], every problem of every source listed, each named
/// by its source; a "no jobs defined" names the last source.
pub fn parse_jobs(sources: &[JobSource], env: &ParseEnv) -> Result<JobFile, ParseError> {
    let mut p = parser::Parser::new(env);
    let mut files = 0;
    let mut last = ("<nothing>", 0);
    for s in sources {
        match *s {
            JobSource::Args { name, args } => {
                p.parse_args(name, args);
                last = (name, args.len());
            }
            JobSource::File { name, text } => {
                p.start_file(files > 0);
                files += 1;
                p.parse_text(name, text, false);
                last = (name, text.lines().count());
            }
        }
    }
    p.finish(last.0, last.1)
}

/// Parses the job file `text`; `name` is used in error messages.
///
/// Never panics: any input, including binary data, yields either a
/// [`JobFile`] with at least one job or a [`ParseError`].
///
/// # Errors
///
/// A [`ParseError`] for every problem found, in file order (the first in
/// its fields, the rest in [`ParseError::more`]), except that a refused
/// `ioengine=` comes first: malformed lines, options outside a section,
/// unknown or unsupported options (an option of an engine iolab does not
/// simulate named as that engine's), bad values, failed expansions,
/// include failures or loops, or a file without jobs. At most 50 are
/// listed; the rest are counted in [`ParseError::omitted`].
pub fn parse_job_file(name: &str, text: &str, env: &ParseEnv) -> Result<JobFile, ParseError> {
    let mut p = parser::Parser::new(env);
    p.parse_text(name, text, false);
    let lines = text.lines().count();
    p.finish(name, lines)
}
