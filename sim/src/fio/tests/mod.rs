//! Tests of the fio job-file parser.

use std::collections::BTreeMap;

use super::*;

mod coverage;
mod errors;
mod fuzz;
mod scenarios;
mod sources;
mod syntax;
mod table;
mod units;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const SEC: u64 = 1_000_000_000;

/// 16 GiB, 8 CPUs.
const MEM: u64 = 16 * GIB;

fn no_include(_from: &str, name: &str) -> Result<(String, Vec<u8>), String> {
    Err(format!("no such file: {name}"))
}

/// Parses with custom variables and an include resolver.
fn parse_full(
    text: &str,
    vars: &[(&str, &str)],
    include: &IncludeFn,
) -> Result<JobFile, ParseError> {
    let vars: BTreeMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let env = ParseEnv {
        mem_bytes: MEM,
        ncpus: 8,
        pagesize: 4096,
        vars: &vars,
        include,
    };
    parse_job_file("test.fio", text, &env)
}

fn parse_vars(text: &str, vars: &[(&str, &str)]) -> Result<JobFile, ParseError> {
    parse_full(text, vars, &no_include)
}

fn parse(text: &str) -> Result<JobFile, ParseError> {
    parse_vars(text, &[])
}

/// The only job of `text`.
#[track_caller]
fn job(text: &str) -> JobSpec {
    let f = parse(text).unwrap_or_else(|e| panic!("unexpected error: {e}"));
    assert_eq!(f.jobs.len(), 1, "expected one job");
    f.jobs.into_iter().next().unwrap_or_else(|| unreachable!())
}

/// The error `text` must produce.
#[track_caller]
fn err(text: &str) -> ParseError {
    match parse(text) {
        Ok(f) => panic!("expected an error, got {} job(s)", f.jobs.len()),
        Err(e) => e,
    }
}

/// Asserts the error's line and option, and that its message contains `msg`.
#[track_caller]
fn assert_err(e: &ParseError, line: usize, option: Option<&str>, msg: &str) {
    assert_eq!(e.line, line, "line of {e}");
    assert_eq!(e.option.as_deref(), option, "option of {e}");
    assert!(e.message.contains(msg), "message of {e} lacks {msg:?}");
}
