//! Reading what the user gave: job files (with includes), device TOML
//! files, sizes. Every error names the file, line and option.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use iolab_sim::device::DeviceConfig;
use iolab_sim::fio::{self, Accepted, JobFile, ParseEnv, Standing};
use iolab_sim::{AllocHint, Profile, VolumeSpec};

use crate::Failure;

/// The largest job, include, device or JSON file read (traces have their
/// own bound): far beyond any real one, small enough to hold in memory.
pub(crate) const MAX_TEXT_BYTES: u64 = 16 << 20;

/// Reads a regular file of at most [`MAX_TEXT_BYTES`] as UTF-8 text.
pub(crate) fn read_text(path: &Path) -> Result<String, String> {
    read_text_up_to(path, MAX_TEXT_BYTES)
}

/// Reads a regular file of at most `max` bytes as UTF-8 text. A FIFO, a
/// device (`/dev/zero`), a directory or a larger file is an error naming
/// the file, before anything is read; so is binary content.
pub(crate) fn read_text_up_to(path: &Path, max: u64) -> Result<String, String> {
    let shown = path.display().to_string();
    utf8(read_bytes_up_to(path, max)?, &shown)
}

/// Reads a regular file of at most `max` bytes, refused as
/// [`read_text_up_to`] refuses it, before anything is read.
pub(crate) fn read_bytes_up_to(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    let file = open_input(path, max)?;
    // Bounded again while reading: the file may grow after the check.
    let bytes = read_bytes_bounded(file, &path.display().to_string(), max)?;
    crate::outputs::note_input_bytes(&bytes);
    Ok(bytes)
}

/// Opens the input `path`, refused before anything is read when it is not
/// a regular file (a FIFO, a device, a directory) or holds more than
/// `max` bytes; noted as an input of the command.
pub(crate) fn open_input(path: &Path, max: u64) -> Result<std::fs::File, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("{shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown}: not a regular file"));
    }
    if meta.len() > max {
        return Err(format!(
            "{shown}: {} bytes; files above {max} bytes are not read",
            meta.len()
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("{shown}: {e}"))?;
    crate::outputs::note_input(path);
    Ok(file)
}

/// The longest line [`for_each_line`] takes.
const MAX_LINE_BYTES: usize = 1 << 20;

/// Calls `f` with each line of the regular file `path` (1-based number,
/// text without its line end), reading a block at a time: memory stays a
/// block and a line, whatever the file's size. Refused as
/// [`read_text_up_to`] refuses a file: not a regular file, more than
/// `max` bytes (checked before and while reading), not UTF-8 (at its
/// line); a line above 1 MiB is refused at its number.
pub(crate) fn for_each_line<E: From<String>>(
    path: &Path,
    max: u64,
    mut f: impl FnMut(usize, &str) -> Result<(), E>,
) -> Result<(), E> {
    use std::io::Read as _;
    let shown = path.display().to_string();
    let mut file = open_input(path, max)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut carry: Vec<u8> = Vec::new();
    let (mut lineno, mut total) = (0usize, 0u64);
    // Whole lines, validated as one block (the bad line named).
    let mut emit = |block: &[u8], lineno: &mut usize| -> Result<(), E> {
        let text = std::str::from_utf8(block).map_err(|e| {
            let at = e.valid_up_to();
            let line = *lineno + block[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            format!("{shown}:{line}: not a text file (invalid UTF-8)")
        })?;
        for l in text.split('\n') {
            *lineno += 1;
            f(*lineno, l.strip_suffix('\r').unwrap_or(l))?;
        }
        Ok(())
    };
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("{shown}: {e}").into()),
        };
        total += n as u64;
        if total > max {
            return Err(format!(
                "{shown}: more than {max} bytes; files above {max} bytes are not read"
            )
            .into());
        }
        let mut chunk = &buf[..n];
        if !carry.is_empty() {
            match chunk.iter().position(|&b| b == b'\n') {
                None => {
                    carry.extend_from_slice(chunk);
                    if carry.len() > MAX_LINE_BYTES {
                        return Err(format!(
                            "{shown}:{}: a line of more than {MAX_LINE_BYTES} bytes",
                            lineno + 1
                        )
                        .into());
                    }
                    continue;
                }
                Some(i) => {
                    carry.extend_from_slice(&chunk[..i]);
                    let line = std::mem::take(&mut carry);
                    emit(&line, &mut lineno)?;
                    chunk = &chunk[i + 1..];
                }
            }
        }
        match chunk.iter().rposition(|&b| b == b'\n') {
            Some(i) => {
                emit(&chunk[..i], &mut lineno)?;
                carry.extend_from_slice(&chunk[i + 1..]);
            }
            None => carry.extend_from_slice(chunk),
        }
    }
    if !carry.is_empty() {
        emit(&carry, &mut lineno)?;
    }
    Ok(())
}

/// Reads at most `max` bytes of UTF-8 text from `r`, which error messages
/// call `shown`: more is an error, and so is binary content, at its line.
fn read_bounded(r: impl std::io::Read, shown: &str, max: u64) -> Result<String, String> {
    utf8(read_bytes_bounded(r, shown, max)?, shown)
}

/// Reads at most `max` bytes from `r`; more is an error.
fn read_bytes_bounded(r: impl std::io::Read, shown: &str, max: u64) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    r.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{shown}: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "{shown}: more than {max} bytes; files above {max} bytes are not read"
        ));
    }
    Ok(bytes)
}

/// `bytes` as text, or an error at the line of the first bad byte.
fn utf8(bytes: Vec<u8>, shown: &str) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        format!("{shown}:{line}: not a text file (invalid UTF-8 at byte {at})")
    })
}

/// The largest file a job file names (an include, a `read_iolog` text log
/// or blktrace binary): a blktrace of minutes of IO is this large.
pub(crate) const MAX_NAMED_BYTES: u64 = 256 << 20;

/// What error messages call a job file read from stdin (`-`).
pub const STDIN_NAME: &str = "<stdin>";

/// The name error messages give the job file `path`.
fn shown_name(path: &str) -> &str {
    if path == "-" { STDIN_NAME } else { path }
}

/// Reads a job file from stdin, bounded as [`read_text`] is; a terminal is
/// refused rather than waited on.
fn read_stdin() -> Result<String, String> {
    use std::io::IsTerminal as _;
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(
            "job file -: stdin is a terminal; pipe a job file in (iolab run - ... < JOB.fio)"
                .to_owned(),
        );
    }
    read_bounded(stdin.lock(), STDIN_NAME, MAX_TEXT_BYTES)
}

/// What error messages call the fio job options given after `--`; an
/// option's "line" there is its place among them.
pub const ARGS_NAME: &str = "<command line>";

/// Parses the jobs of a command: the fio job options after `--` (a leading
/// `fio`, as in a pasted fio command line, skipped but counted), then each job file in
/// turn, `-` from stdin, as fio reads its command line and job files (see
/// [`fio::parse_jobs`]). An include is looked up as given, then beside the
/// file that includes it, as fio's are.
pub fn jobs(
    paths: &[String],
    fio_args: &[String],
    mem_bytes: u64,
    ncpus: u32,
) -> Result<JobFile, Failure> {
    if paths.is_empty() && fio_args.is_empty() {
        return Err(Failure::input(
            "give a job file, or fio job options after -- (iolab run --device nvme -- \
             --name=r --rw=randread --size=1g)"
                .to_owned(),
        ));
    }
    if paths.iter().filter(|p| *p == "-").count() > 1 {
        return Err(Failure::input(
            "job file - is given more than once: stdin holds one job file".to_owned(),
        ));
    }
    let texts = paths
        .iter()
        .map(|path| {
            if path == "-" {
                read_stdin()
            } else {
                read_text(Path::new(path))
            }
        })
        .collect::<Result<Vec<String>, String>>()
        .map_err(Failure::input)?;
    let mut sources = Vec::with_capacity(paths.len() + 1);
    if !fio_args.is_empty() {
        sources.push(fio::JobSource::Args {
            name: ARGS_NAME,
            args: fio_args,
        });
    }
    for (path, text) in paths.iter().zip(&texts) {
        sources.push(fio::JobSource::File {
            name: shown_name(path),
            text,
        });
    }
    let vars: BTreeMap<String, String> = std::env::vars().collect();
    let include = |from: &str, name: &str| -> Result<(String, Vec<u8>), String> {
        let beside = Path::new(from).parent().map(|d| d.join(name));
        let ip = match beside {
            Some(b) if !Path::new(name).exists() && from != STDIN_NAME => b,
            _ => PathBuf::from(name),
        };
        let bytes = read_bytes_up_to(&ip, MAX_NAMED_BYTES)?;
        Ok((ip.display().to_string(), bytes))
    };
    let env = ParseEnv {
        mem_bytes,
        ncpus,
        pagesize: 4096,
        vars: &vars,
        include: &include,
    };
    fio::parse_jobs(&sources, &env).map_err(|e| Failure::input(e.to_string()))
}

/// The job sources a command names, for messages: its job files and the
/// command line's options, `a.fio, b.fio and the command line`.
pub fn sources_named(paths: &[String], fio_args: &[String]) -> String {
    let mut names: Vec<&str> = paths.iter().map(|p| shown_name(p)).collect();
    if !fio_args.is_empty() {
        names.insert(0, "the command line");
    }
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => "no job file".to_owned(),
    }
}

/// `--section NAME...`: keeps only the jobs of those sections, in file
/// order, as fio does, and only the accepted options of those sections
/// and of `[global]`, so no note speaks of a job that does not run; a
/// name no section has is an error listing the sections there are.
/// Nothing given keeps every job.
pub fn keep_sections(from: &str, file: &mut JobFile, names: &[String]) -> Result<(), Failure> {
    if names.is_empty() {
        return Ok(());
    }
    if let Some(missing) = names
        .iter()
        .find(|n| !file.jobs.iter().any(|j| &j.section == *n))
    {
        let there: Vec<String> = file
            .jobs
            .iter()
            .map(|j| format!("[{}]", j.section))
            .collect();
        return Err(Failure::input(format!(
            "--section {missing}: no job section [{missing}] in {from} (the job sections: {})",
            there.join(", ")
        )));
    }
    file.jobs.retain(|j| names.contains(&j.section));
    file.accepted
        .retain(|a| a.section.as_ref().is_none_or(|s| names.contains(s)));
    Ok(())
}

/// The stderr lines for the job options accepted without effect on the
/// simulation, so none is dropped unsaid, each with its reason: a line for
/// each that fio would act on and the simulation does not (a log, a
/// priority, a CPU mask), a line for each that fio itself overrides with
/// another (a `bs=` beside a `bssplit=`), and one line naming those that
/// change nothing fio measures either (`thread`, a value that keeps fio's
/// default). `--verbose` lists them all one a line.
pub fn accepted_notes(accepted: &[Accepted]) -> Vec<String> {
    let mut notes: Vec<String> = accepted
        .iter()
        .filter(|a| a.standing != Standing::Inert)
        .map(|a| format!("iolab: {a}"))
        .collect();
    let inert: Vec<String> = accepted
        .iter()
        .filter(|a| a.standing == Standing::Inert)
        .map(|a| format!("{} ({}:{}: {})", a.option, a.file, a.line, a.why))
        .collect();
    if !inert.is_empty() {
        let count = match inert.len() {
            1 => "1 job option changes".to_owned(),
            n => format!("{n} job options change"),
        };
        notes.push(format!(
            "iolab: {count} nothing fio measures, here or in fio: {}",
            inert.join(", ")
        ));
    }
    notes
}

/// A device preset or TOML file.
pub fn device(spec: &str) -> Result<DeviceConfig, Failure> {
    if let Some(cfg) = DeviceConfig::preset(spec) {
        return Ok(cfg);
    }
    let p = Path::new(spec);
    if spec.ends_with(".toml") || p.exists() {
        let text = read_text(p).map_err(Failure::input)?;
        return DeviceConfig::from_toml(&text).map_err(|e| {
            let line = e
                .key()
                .and_then(|k| iolab_sim::device::line_of_key(&text, &k));
            match line {
                Some(l) => Failure::input(format!("{spec}:{l}: {e}")),
                None => Failure::input(format!("{spec}: {e}")),
            }
        });
    }
    Err(Failure::input(format!(
        "--device: '{spec}' is neither a preset ({}) nor a TOML file",
        DeviceConfig::preset_names().join(", ")
    )))
}

/// `--volume PROFILE:DEV,DEV,...`: a profile and member devices (presets
/// or TOML files), devid 1 first.
pub fn volume(spec: &str) -> Result<VolumeSpec, Failure> {
    let Some((profile, devs)) = spec.split_once(':') else {
        return Err(Failure::input(format!(
            "--volume: '{spec}' is not PROFILE:DEV,DEV,... (e.g. raid1:nvme,nvme)"
        )));
    };
    let profile = Profile::from_name(profile).ok_or_else(|| {
        let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
        Failure::input(format!(
            "--volume: unknown profile '{profile}' (one of {})",
            names.join(", ")
        ))
    })?;
    let mut devices = Vec::new();
    let mut hints = Vec::new();
    for d in devs.split(',') {
        let d = d.trim();
        let (d, hint) = match d.rsplit_once('@') {
            Some((d, h)) => (d.trim(), Some(alloc_hint(h.trim())?)),
            None => (d, None),
        };
        if d.is_empty() {
            return Err(Failure::input(format!(
                "--volume: empty device name in '{spec}'"
            )));
        }
        devices.push(
            device(d).map_err(|f| Failure::input(f.message.replacen("--device", "--volume", 1)))?,
        );
        hints.push(hint);
    }
    // Hints are all or nothing: a device without one would silently get
    // the kernel's default.
    let hints = if hints.iter().all(Option::is_none) {
        Vec::new()
    } else if hints.iter().all(Option::is_some) {
        hints.into_iter().flatten().collect()
    } else {
        return Err(Failure::input(format!(
            "--volume: give every device an @HINT or none in '{spec}'"
        )));
    };
    Ok(VolumeSpec {
        profile,
        devices,
        hints,
        balanced: false,
        pid_split: None,
        metadata_used: 0,
        full_commit_ppm: 0,
    })
}

/// A device's `allocation_hint` after `@` in `--volume`: the V12 sysfs
/// names, lower case with `-` or `_`.
fn alloc_hint(text: &str) -> Result<AllocHint, Failure> {
    const HINTS: [AllocHint; 5] = [
        AllocHint::DataPreferred,
        AllocHint::MetadataPreferred,
        AllocHint::MetadataOnly,
        AllocHint::DataOnly,
        AllocHint::None,
    ];
    let want = text.to_ascii_uppercase().replace('-', "_");
    HINTS.into_iter().find(|h| h.name() == want).ok_or_else(|| {
        Failure::input(format!(
            "--volume: unknown allocation hint '{text}' (data-preferred, \
                 metadata-preferred, metadata-only, data-only, none)"
        ))
    })
}

/// `--pid-split EVEN/ODD`: how many job processes get even and odd pids.
pub fn pid_split(text: &str) -> Result<(u32, u32), Failure> {
    let bad = || {
        Failure::input(format!(
            "--pid-split: '{text}' is not EVEN/ODD (e.g. 3/1: three processes with even pids, one odd)"
        ))
    };
    let (e, o) = text.split_once('/').ok_or_else(bad)?;
    let e: u32 = e.trim().parse().map_err(|_| bad())?;
    let o: u32 = o.trim().parse().map_err(|_| bad())?;
    if e.checked_add(o).is_none_or(|n| n == 0 || n > 65_536) {
        return Err(bad());
    }
    Ok((e, o))
}

/// A size flag (`flag` names it in errors) with fio's suffixes (k, m, g,
/// t; base 1024), at most 1 PiB.
pub fn size_flag(flag: &str, text: &str) -> Result<u64, Failure> {
    let v = fio::parse_size(text).map_err(|e| Failure::input(format!("{flag}: {e}")))?;
    if v > 1 << 50 {
        return Err(Failure::input(format!(
            "{flag}: {v} bytes is above the 1 PiB the model supports"
        )));
    }
    Ok(v)
}

/// `--full-commit`: a percentage, 0 to 100 with at most four decimals, as
/// parts per million.
pub fn full_commit(text: &str) -> Result<u32, Failure> {
    let bad = || {
        Failure::input(format!(
            "--full-commit: '{text}' is not a percentage from 0 to 100 (at most four decimals)"
        ))
    };
    let (whole, frac) = text.trim().split_once('.').unwrap_or((text.trim(), ""));
    if whole.is_empty() && frac.is_empty()
        || frac.len() > 4
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| bad())?
    };
    let frac: u64 = format!("{frac:0<4}").parse().map_err(|_| bad())?;
    let ppm = whole
        .checked_mul(10_000)
        .and_then(|w| w.checked_add(frac))
        .ok_or_else(bad)?;
    if ppm > 1_000_000 {
        return Err(bad());
    }
    Ok(ppm as u32)
}

/// `--memory`: a size with fio's suffixes (k, m, g, t; base 1024).
pub fn memory(text: &str) -> Result<u64, Failure> {
    let v = fio::parse_size(text).map_err(|e| Failure::input(format!("--memory: {e}")))?;
    if v < 64 << 20 {
        return Err(Failure::input(format!(
            "--memory: {v} bytes is below the 64 MiB the model needs"
        )));
    }
    if v > 1 << 44 {
        return Err(Failure::input(format!(
            "--memory: {v} bytes is above the 16 TiB the model supports"
        )));
    }
    Ok(v)
}

/// Peak resident set of this process, from /proc (Linux only).
pub fn peak_rss() -> Option<String> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .map(|l| l.trim_start_matches("VmHWM:").trim().to_owned())
}

/// Writes the policy's trace records (`extra.policy_report.trace`) as JSON
/// lines to `path`; a policy without traces writes an empty file.
pub fn write_trace(path: &str, extra: &serde_json::Value) -> Result<(), Failure> {
    let mut text = String::new();
    if let Some(records) = extra
        .pointer("/policy_report/trace")
        .and_then(serde_json::Value::as_array)
    {
        for r in records {
            text.push_str(&r.to_string());
            text.push('\n');
        }
    }
    crate::outputs::write_atomic(Path::new(path), text.as_bytes()).map_err(|e| Failure {
        code: 1,
        message: format!("--trace {e}"),
    })
}

#[cfg(test)]
mod full_commit_tests {
    use super::full_commit;

    #[test]
    fn a_percentage_becomes_parts_per_million() {
        assert_eq!(full_commit("0").ok(), Some(0));
        assert_eq!(full_commit("5").ok(), Some(50_000));
        assert_eq!(full_commit("2.5").ok(), Some(25_000));
        assert_eq!(full_commit(".0001").ok(), Some(1));
        assert_eq!(full_commit("100").ok(), Some(1_000_000));
        for bad in [
            "",
            ".",
            "100.0001",
            "-1",
            "1e2",
            "5%",
            "99999999999999999999",
        ] {
            assert!(full_commit(bad).is_err(), "{bad:?} accepted");
        }
    }
}
