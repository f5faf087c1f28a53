//! `--shard I/N` and `iolab merge`: a command's runs (its (variant, seed)
//! pairs, in the order `render` prints them) cut into N slices, run where
//! the user's batch system puts them, and put back together.
//!
//! Slice I (0 ≤ I < N, as `SLURM_ARRAY_TASK_ID` with `--array=0-(N-1)` and
//! a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX` count) holds the runs
//! whose index is I modulo N, so every slice gets some of every variant.
//! A sharded command prints, instead of its tables, a shard document: the
//! command it belongs to (its options as parsed, less those that change
//! nothing printed, and a hash of the job file), which slice it is, and each of its runs'
//! outputs whole. `merge` checks that its files are the N slices of one
//! command, each once, and prints what the command prints unsharded, byte
//! for byte (the outputs cross JSON with their floats exact), and with
//! `--plot` draws its figures.

use iolab_sim::stats::RunReport;
use iolab_sim::{RunOutput, Variant};

use crate::Failure;
use crate::formats::Formats;
use crate::outputs::Fnv;
use crate::render::Kind;

/// Version of the shard document (2: JSON Lines, a run a line).
const VERSION: u64 = 2;

/// The most slices a command is cut into.
pub const MAX_SHARDS: usize = 100_000;

/// Parses `--shard I/N`.
pub fn parse(text: &str) -> Result<(usize, usize), Failure> {
    let bad = |why: &str| {
        Failure::input(format!(
            "--shard {text}: {why} (give I/N, the I-th of N slices, I from 0 to N-1)"
        ))
    };
    let (i, n) = text.split_once('/').ok_or_else(|| bad("no '/'"))?;
    let num = |s: &str| {
        s.trim()
            .parse::<usize>()
            .map_err(|_| bad(&format!("'{}' is not a count", s.trim())))
    };
    let (i, n) = (num(i)?, num(n)?);
    if n == 0 || n > MAX_SHARDS {
        return Err(bad(&format!("N is from 1 to {MAX_SHARDS}")));
    }
    if i >= n {
        return Err(bad(&format!("I is from 0 to {}", n - 1)));
    }
    Ok((i, n))
}

/// What identifies a command across its shards.
pub struct Command {
    pub kind: Kind,
    /// `--policy` or `--policies` as given.
    pub policies: String,
    pub seeds: Option<Vec<u64>>,
    pub formats: Formats,
    /// Every option that changes what is printed, as parsed.
    pub identity: String,
    /// FNV-1a of the job file's bytes, in hex.
    pub job_hash: String,
    /// Digest of every file the command read (job files, includes,
    /// replayed logs, device files), contents only.
    pub inputs_digest: String,
}

/// FNV-1a, 64 bits, of `bytes`, in hex.
pub fn fnv_hex(bytes: &[u8]) -> String {
    format!("{:016x}", crate::outputs::fnv(bytes))
}

/// A shard document, written a line at a time as its runs end (JSON
/// Lines): a head (the version, the build, the slice), a line per run in
/// plan order (its index and output whole), and a tail (the command, the
/// number of runs and a digest of their lines), so neither the sharded
/// command nor `merge` holds more than one run.
pub struct Writer {
    digest: Fnv,
    runs: usize,
}

impl Writer {
    /// The document's head line, and the writer of the rest.
    pub fn start(shard: usize, of: usize, total: usize) -> (Writer, String) {
        let mut head = serde_json::json!({
            "iolab_shard": VERSION,
            "iolab_build": crate::outputs::build_id(),
            "shard": shard,
            "of": of,
            "runs_total": total,
        })
        .to_string();
        head.push('\n');
        let w = Writer {
            digest: Fnv::new(),
            runs: 0,
        };
        (w, head)
    }

    /// The line of the run of plan index `index`.
    pub fn run(&mut self, index: usize, o: RunOutput) -> String {
        let mut line = serde_json::json!({
            "index": index,
            "report": serde_json::to_value(&o.report).unwrap_or(serde_json::Value::Null),
            "extra": o.extra,
            "sim_ns": o.sim_ns,
            "events": o.events,
        })
        .to_string();
        line.push('\n');
        self.digest.feed(line.as_bytes());
        self.runs += 1;
        line
    }

    /// The tail line: the command, and how many runs and their digest.
    pub fn finish(self, cmd: &Command) -> String {
        let mut tail = serde_json::json!({
            "command": {
                "kind": cmd.kind.name(),
                "policies": cmd.policies,
                "seeds": cmd.seeds,
                "output_format": cmd.formats.name(),
                "identity": cmd.identity,
                "job_hash": cmd.job_hash,
                "inputs_digest": cmd.inputs_digest,
            },
            "runs": self.runs,
            "runs_digest": format!("{:016x}", self.digest.0),
        })
        .to_string();
        tail.push('\n');
        tail
    }
}

/// The largest shard document read.
const MAX_SHARD_BYTES: u64 = 1 << 40;

/// The longest line of one: a run's output whole.
const MAX_LINE_BYTES: u64 = 1 << 30;

/// One shard file, checked whole before any of its runs is used.
struct Checked {
    path: String,
    command: serde_json::Value,
    shard: usize,
    of: usize,
    total: usize,
    /// Where its first run's line starts.
    runs_at: u64,
}

/// The next line of `r` (without its end), `None` at the end of the file;
/// a line above [`MAX_LINE_BYTES`] or not UTF-8 is refused.
fn next_line(r: &mut impl std::io::BufRead, path: &str) -> Result<Option<String>, Failure> {
    use std::io::{BufRead as _, Read as _};
    let mut bytes = Vec::new();
    let n = r
        .by_ref()
        .take(MAX_LINE_BYTES + 1)
        .read_until(b'\n', &mut bytes)
        .map_err(|e| Failure::input(format!("{path}: {e}")))?;
    if n == 0 {
        return Ok(None);
    }
    if n as u64 > MAX_LINE_BYTES {
        return Err(Failure::input(format!(
            "{path}: a line above {MAX_LINE_BYTES} bytes: not an iolab shard document"
        )));
    }
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| Failure::input(format!("{path}: not an iolab shard document (not UTF-8)")))
}

/// A run's line as its plan index and output; `want` is the index it
/// must have.
fn run_of(line: &str, want: usize, path: &str) -> Result<RunOutput, Failure> {
    let bad = |why: String| Failure::input(format!("{path}: {why}"));
    let r: serde_json::Value = serde_json::from_str(line)
        .map_err(|e| bad(format!("run {want}: not an iolab shard document ({e})")))?;
    if r["index"].as_u64() != Some(want as u64) {
        return Err(bad(format!(
            "a run's index is not the next of its shard's ({want})"
        )));
    }
    let num = |key: &str| {
        r[key]
            .as_u64()
            .ok_or_else(|| bad(format!("run {want}: '{key}' is missing")))
    };
    let (sim_ns, events) = (num("sim_ns")?, num("events")?);
    let mut r = r;
    let report: RunReport =
        serde_json::from_value(r["report"].take()).map_err(|e| bad(format!("run {want}: {e}")))?;
    Ok(RunOutput {
        report,
        extra: r["extra"].take(),
        sim_ns,
        events,
        status: Vec::new(),
    })
}

/// Reads a shard document through once, checking every line: its head,
/// each run (its index the next of the slice's, its output whole), the
/// digest of the runs and the tail.
fn check(path: &str) -> Result<Checked, Failure> {
    let bad = |why: String| Failure::input(format!("{path}: {why}"));
    // Regular files only (a FIFO or a device is refused, not read for
    // ever), bounded.
    let file = crate::load::open_input(std::path::Path::new(path), MAX_SHARD_BYTES)
        .map_err(Failure::input)?;
    let mut r = std::io::BufReader::new(file);
    let not_ours = || {
        bad(format!(
            "not an iolab shard document of version {VERSION} (a sharded run's output)"
        ))
    };
    let head_line = next_line(&mut r, path)?.ok_or_else(not_ours)?;
    let head: serde_json::Value = serde_json::from_str(&head_line).map_err(|_| not_ours())?;
    if head["iolab_shard"] != VERSION {
        return Err(not_ours());
    }
    let build = crate::outputs::build_id();
    if head["iolab_build"] != build.as_str() {
        return Err(bad(format!(
            "written by iolab build '{}', not this one ('{build}'); merge with the build that ran the shards",
            head["iolab_build"].as_str().unwrap_or("(none)")
        )));
    }
    let count = |key: &str| {
        head[key]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| bad(format!("'{key}' is missing or not a count")))
    };
    let (shard, of, total) = (count("shard")?, count("of")?, count("runs_total")?);
    if of == 0 || of > MAX_SHARDS || shard >= of {
        return Err(bad(format!("shard {shard}/{of} is not a slice")));
    }
    let runs_at = head_line.len() as u64 + 1;
    let mut digest = Fnv::new();
    let mut runs = 0usize;
    let tail = loop {
        let line = next_line(&mut r, path)?
            .ok_or_else(|| bad("it ends before its last line: not written whole".into()))?;
        // The tail names the command; every line before it is a run.
        if line.starts_with("{\"command\"") {
            break line;
        }
        let want = shard + runs * of;
        if want >= total {
            return Err(bad(format!(
                "shard {shard}/{of} holds more than its runs of {total}"
            )));
        }
        run_of(&line, want, path)?;
        digest.feed(line.as_bytes());
        digest.feed(b"\n");
        runs += 1;
    };
    let tail: serde_json::Value = serde_json::from_str(&tail).map_err(|e| {
        bad(format!(
            "its last line is not an iolab shard document's ({e})"
        ))
    })?;
    let expected = (shard..total).step_by(of).count();
    if runs != expected || tail["runs"].as_u64() != Some(runs as u64) {
        return Err(bad(format!(
            "shard {shard}/{of} holds {runs} runs of its {expected}"
        )));
    }
    if tail["runs_digest"] != format!("{:016x}", digest.0).as_str() {
        return Err(bad(
            "its runs do not match the digest written with them: the document was changed after it was written"
                .into(),
        ));
    }
    if next_line(&mut r, path)?.is_some_and(|l| !l.is_empty()) {
        return Err(bad(
            "more after its last line: the document was changed after it was written".into(),
        ));
    }
    Ok(Checked {
        path: path.to_owned(),
        command: tail["command"].clone(),
        shard,
        of,
        total,
        runs_at,
    })
}

/// What `merge` put back together: the command, and its shard documents
/// to read the runs from in plan order (by variant, then seed).
pub struct Merged {
    pub kind: Kind,
    pub policies: String,
    pub variants: Vec<Variant>,
    pub seeds: Option<Vec<u64>>,
    pub formats: Formats,
    pub runs: Runs,
}

/// The runs of a merge, still in their documents.
pub struct Runs {
    /// By slice: each document and where its next run's line starts.
    shards: Vec<(String, u64)>,
    total: usize,
}

impl Runs {
    /// Hands each run to `f` in plan order, read from its document one
    /// line at a time: a run read, handed on and dropped before the next.
    /// A document changed since it was checked is refused at the run.
    pub fn for_each_run(
        mut self,
        mut f: impl FnMut(RunOutput) -> Result<(), Failure>,
    ) -> Result<(), Failure> {
        use std::io::Seek as _;
        let of = self.shards.len();
        for i in 0..self.total {
            let (path, at) = &mut self.shards[i % of];
            let io = |e: std::io::Error| Failure::input(format!("{path}: {e}"));
            let mut file = std::fs::File::open(&*path).map_err(io)?;
            file.seek(std::io::SeekFrom::Start(*at)).map_err(io)?;
            let mut r = std::io::BufReader::new(file);
            let line = next_line(&mut r, path)?.unwrap_or_default();
            *at += line.len() as u64 + 1;
            let o = run_of(&line, i, path)?;
            f(o)?;
        }
        Ok(())
    }
}

/// `iolab merge FILES…`: the unsharded command and where its runs lie,
/// from its N shard documents, each read through and checked first.
pub fn merge(paths: &[String]) -> Result<Merged, Failure> {
    let mut shards = Vec::with_capacity(paths.len());
    for p in paths {
        shards.push(check(p)?);
    }
    let Some(first) = shards.first() else {
        return Err(Failure::input("merge: give the shard files".to_owned()));
    };
    let (command, of, total) = (first.command.clone(), first.of, first.total);
    let first_path = first.path.clone();
    let mut seen: Vec<Option<String>> = vec![None; of];
    for s in &shards {
        if s.command != command || s.of != of || s.total != total {
            return Err(Failure::input(format!(
                "{}: a shard of another command than {first_path} (its arguments, job file or slicing differ)",
                s.path
            )));
        }
        if let Some(other) = &seen[s.shard] {
            return Err(Failure::input(format!(
                "{}: shard {}/{of} is given twice (also {other})",
                s.path, s.shard
            )));
        }
        seen[s.shard] = Some(s.path.clone());
    }
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, p)| p.is_none())
        .map(|(i, _)| i.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(Failure::input(format!(
            "merge: shard{} {} of {of} missing",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        )));
    }
    let bad = |why: &str| Failure::input(format!("{first_path}: {why}"));
    let kind = match command["kind"].as_str() {
        Some("run") => Kind::Run,
        Some("compare") => Kind::Compare,
        _ => return Err(bad("the command is neither run nor compare")),
    };
    let policies = command["policies"]
        .as_str()
        .ok_or_else(|| bad("no policies"))?;
    let variants: Vec<Variant> = match kind {
        Kind::Run => vec![iolab_sim::parse_variant(policies).map_err(|e| bad(&e.to_string()))?],
        Kind::Compare => iolab_sim::parse_policies(policies).map_err(|e| bad(&e.to_string()))?,
    };
    let seeds: Option<Vec<u64>> = match &command["seeds"] {
        serde_json::Value::Null => None,
        v => Some(serde_json::from_value(v.clone()).map_err(|e| bad(&e.to_string()))?),
    };
    let formats = command["output_format"]
        .as_str()
        .and_then(Formats::parse)
        .ok_or_else(|| bad("unknown output format"))?;
    let per_variant = seeds.as_ref().map_or(1, Vec::len);
    if variants.len() * per_variant != total {
        return Err(bad("its run count does not match its variants and seeds"));
    }
    shards.sort_by_key(|s| s.shard);
    Ok(Merged {
        kind,
        policies: policies.to_owned(),
        variants,
        seeds,
        formats,
        runs: Runs {
            shards: shards.into_iter().map(|s| (s.path, s.runs_at)).collect(),
            total,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_parse_and_bad_ones_say_why() {
        assert_eq!(parse("0/1").ok(), Some((0, 1)));
        assert_eq!(parse("3/4").ok(), Some((3, 4)));
        let err = |t: &str| parse(t).err().map(|f| f.message).unwrap_or_default();
        assert!(err("4/4").contains("I is from 0 to 3"));
        assert!(err("0/0").contains("N is from 1"));
        assert!(err("1").contains("no '/'"));
        assert!(err("a/2").contains("'a' is not a count"));
    }

    #[test]
    fn the_job_hash_is_fnv_1a() {
        assert_eq!(fnv_hex(b""), "cbf29ce484222325");
        assert_eq!(fnv_hex(b"a"), "af63dc4c8601ec8c");
    }
}
