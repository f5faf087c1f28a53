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
use crate::render::Kind;

/// Version of the shard document.
const VERSION: u64 = 1;

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

/// The shard document of slice `shard` of `of`, with its runs (plan
/// index, output).
pub fn document(
    cmd: &Command,
    shard: usize,
    of: usize,
    total: usize,
    runs: Vec<(usize, RunOutput)>,
) -> String {
    let runs: Vec<serde_json::Value> = runs
        .into_iter()
        .map(|(index, o)| {
            serde_json::json!({
                "index": index,
                "report": serde_json::to_value(&o.report).unwrap_or(serde_json::Value::Null),
                "extra": o.extra,
                "sim_ns": o.sim_ns,
                "events": o.events,
            })
        })
        .collect();
    let runs = serde_json::Value::Array(runs);
    let digest = runs_digest(&runs);
    let mut text = serde_json::json!({
        "iolab_shard": VERSION,
        "iolab_build": crate::outputs::build_id(),
        "runs_digest": digest,
        "command": {
            "kind": cmd.kind.name(),
            "policies": cmd.policies,
            "seeds": cmd.seeds,
            "output_format": cmd.formats.name(),
            "identity": cmd.identity,
            "job_hash": cmd.job_hash,
            "inputs_digest": cmd.inputs_digest,
        },
        "shard": shard,
        "of": of,
        "runs_total": total,
        "runs": runs,
    })
    .to_string();
    text.push('\n');
    text
}

/// Digest of a shard's runs as serialized: a document edited after it
/// was written no longer matches it.
fn runs_digest(runs: &serde_json::Value) -> String {
    format!("{:016x}", crate::outputs::fnv(runs.to_string().as_bytes()))
}

/// The largest shard document read.
const MAX_SHARD_BYTES: u64 = 1 << 30;

/// One shard file read back.
struct Read {
    path: String,
    command: serde_json::Value,
    shard: usize,
    of: usize,
    total: usize,
    runs: Vec<(usize, RunOutput)>,
}

fn read(path: &str) -> Result<Read, Failure> {
    let bad = |why: String| Failure::input(format!("{path}: {why}"));
    // Bounded, regular files only (a FIFO or a device is refused, not
    // read for ever).
    let text = crate::load::read_text_up_to(std::path::Path::new(path), MAX_SHARD_BYTES)
        .map_err(Failure::input)?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| bad(format!("not an iolab shard document ({e})")))?;
    if v["iolab_shard"] != VERSION {
        return Err(bad(format!(
            "not an iolab shard document of version {VERSION} (a sharded run's output)"
        )));
    }
    let build = crate::outputs::build_id();
    if v["iolab_build"] != build.as_str() {
        return Err(bad(format!(
            "written by iolab build '{}', not this one ('{build}'); merge with the build that ran the shards",
            v["iolab_build"].as_str().unwrap_or("(none)")
        )));
    }
    if v["runs_digest"] != runs_digest(&v["runs"]).as_str() {
        return Err(bad(
            "its runs do not match the digest written with them: the document was changed after it was written"
                .into(),
        ));
    }
    let count = |key: &str| {
        v[key]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| bad(format!("'{key}' is missing or not a count")))
    };
    let (shard, of, total) = (count("shard")?, count("of")?, count("runs_total")?);
    if of == 0 || of > MAX_SHARDS || shard >= of {
        return Err(bad(format!("shard {shard}/{of} is not a slice")));
    }
    let mut runs = Vec::new();
    for r in v["runs"].as_array().into_iter().flatten() {
        let index = r["index"]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&i| i < total && i % of == shard)
            .ok_or_else(|| bad(format!("a run's index is not one of shard {shard}/{of}'s")))?;
        let report: RunReport = serde_json::from_value(r["report"].clone())
            .map_err(|e| bad(format!("run {index}: {e}")))?;
        let num = |key: &str| {
            r[key]
                .as_u64()
                .ok_or_else(|| bad(format!("run {index}: '{key}' is missing")))
        };
        runs.push((
            index,
            RunOutput {
                report,
                extra: r["extra"].clone(),
                sim_ns: num("sim_ns")?,
                events: num("events")?,
                status: Vec::new(),
            },
        ));
    }
    let expected = (shard..total).step_by(of).count();
    if runs.len() != expected {
        return Err(bad(format!(
            "shard {shard}/{of} holds {} runs of its {expected}",
            runs.len()
        )));
    }
    Ok(Read {
        path: path.to_owned(),
        command: v["command"].clone(),
        shard,
        of,
        total,
        runs,
    })
}

/// What `merge` put back together: the command and its outputs by
/// variant, then seed, as the unsharded command had them.
pub struct Merged {
    pub kind: Kind,
    pub policies: String,
    pub variants: Vec<Variant>,
    pub seeds: Option<Vec<u64>>,
    pub formats: Formats,
    pub outs: Vec<Vec<RunOutput>>,
}

/// `iolab merge FILES…`: the unsharded command's outputs, from its N
/// shard documents.
pub fn merge(paths: &[String]) -> Result<Merged, Failure> {
    let mut shards = Vec::with_capacity(paths.len());
    for p in paths {
        shards.push(read(p)?);
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
    let mut slots: Vec<Option<RunOutput>> = (0..total).map(|_| None).collect();
    for s in shards {
        for (i, o) in s.runs {
            slots[i] = Some(o);
        }
    }
    let mut flat = slots.into_iter();
    let mut outs = Vec::with_capacity(variants.len());
    for _ in &variants {
        let per: Option<Vec<RunOutput>> = flat.by_ref().take(per_variant).collect();
        outs.push(per.ok_or_else(|| bad("a run is missing"))?);
    }
    Ok(Merged {
        kind,
        policies: policies.to_owned(),
        variants,
        seeds,
        formats,
        outs,
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
