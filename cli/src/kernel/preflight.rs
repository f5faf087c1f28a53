//! What `kernel capture` and `calibrate` check before they change
//! anything: no other run's changes on the machine and tracing unused,
//! the job as fio parses it, room for a loop device's image, and whether
//! a job writes to the device a user named.

use std::path::Path;
use std::process::{Command, Stdio};

use super::capture::{LoopSpec, tracefs_mounted};
use super::{journal, undo};
use crate::Failure;

/// Refuses (exit 2) while a dead run's journal lists changes, another
/// run is changing the machine, or tracing is in use.
pub fn machine_is_ours() -> Result<(), Failure> {
    journal::refuse_if_dirty(Path::new(journal::DIR)).map_err(Failure::input)?;
    if let Some(t) = tracefs_mounted() {
        let set_event = undo::read(&t.join("set_event")).unwrap_or_default();
        let tracer = undo::read(&t.join("current_tracer")).unwrap_or_default();
        if !set_event.is_empty() || (!tracer.is_empty() && tracer != "nop") {
            return Err(Failure::input(format!(
                "tracing is in use (tracer '{tracer}', events '{}'); nothing was changed. If a run of iolab left it so, `iolab kernel cleanup` puts it back",
                set_event.replace('\n', " ")
            )));
        }
    }
    Ok(())
}

/// The job as fio 3.x reads it (`fio --parse-only`), with `IOLAB_DEV`
/// set as the run will set it: an option fio refuses is found before
/// anything is made.
pub fn fio_parses(job: &str, dev: &str) -> Result<(), Failure> {
    let fio = undo::tool("fio").map_err(Failure::input)?;
    let out = Command::new(&fio)
        .arg("--parse-only")
        .arg(job)
        .env("IOLAB_DEV", dev)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Failure::input(format!("running {}: {e}", fio.display())))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        // fio's own verdicts, without the list of valid values it adds.
        let verdicts: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| l.starts_with("fio:"))
            .collect();
        let said = if verdicts.is_empty() { lines } else { verdicts };
        return Err(Failure::input(format!(
            "{job}: fio refuses the job ({}); nothing was changed: {}",
            out.status,
            said.join(" | ")
        )));
    }
    Ok(())
}

/// `(available bytes, filesystem is RAM)` where a file in `dir` goes.
fn room(dir: &Path) -> Result<(u64, bool), String> {
    let v = nix::sys::statvfs::statvfs(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let avail = v.blocks_available() * v.fragment_size();
    let f = nix::sys::statfs::statfs(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // tmpfs and ramfs (0x858458f6, which nix does not name).
    let ram = f.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC
        || f.filesystem_type().0 as u64 == 0x8584_58f6;
    Ok((avail, ram))
}

/// `MemAvailable` of `/proc/meminfo`, bytes.
fn mem_available() -> Option<u64> {
    std::fs::read_to_string("/proc/meminfo")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// What RAM an image on tmpfs must leave to everything else.
pub const RAM_LEFT: u64 = 1 << 30;

/// The loop device's image fits: its filesystem has room for all of it
/// (the job may write it all), and on RAM (tmpfs, `/dev/shm`) it leaves
/// at least [`RAM_LEFT`] of the memory available now.
pub fn image_fits(spec: &str, l: &LoopSpec) -> Result<(), Failure> {
    let dir = l.file.parent().unwrap_or(Path::new("/"));
    let (avail, ram) = room(dir).map_err(|e| Failure::input(format!("--loop {spec}: {e}")))?;
    let mib = |b: u64| b >> 20;
    if l.size > avail {
        return Err(Failure::input(format!(
            "--loop {spec}: {} has {} MiB free, less than the image's {} MiB; nothing was changed",
            dir.display(),
            mib(avail),
            mib(l.size)
        )));
    }
    if ram {
        let mem = mem_available().unwrap_or(0);
        if l.size.saturating_add(RAM_LEFT) > mem {
            return Err(Failure::input(format!(
                "--loop {spec}: {} is RAM, and a {} MiB image would leave less than {} MiB of the {} MiB available; give a smaller size or a directory on disk; nothing was changed",
                dir.display(),
                mib(l.size),
                mib(RAM_LEFT),
                mib(mem)
            )));
        }
    }
    Ok(())
}

/// Whether a job file may write: any `rw=`/`readwrite=` (of any section,
/// `[global]` included) other than a read, or a trim; a job without one
/// reads (fio's default).
pub fn job_writes(text: &str) -> bool {
    text.lines().any(|line| {
        let l = line.trim();
        let Some((key, value)) = l.split_once('=') else {
            return false;
        };
        let key = key.trim();
        let value = value.trim().split(':').next().unwrap_or("").trim();
        matches!(key, "rw" | "readwrite") && !matches!(value, "read" | "randread")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_reading_jobs_count_as_not_writing() {
        assert!(!job_writes("[r]\nrw=randread\nbs=4k\n"));
        assert!(!job_writes("[r]\nbs=4k\n"), "fio reads by default");
        assert!(!job_writes("[global]\nrw=read:8k\n[a]\n"));
        assert!(job_writes("[w]\nrw=randwrite\n"));
        assert!(job_writes("[w]\nreadwrite = randrw\n"));
        assert!(job_writes("[a]\nrw=read\n[b]\nrw=trim\n"));
        assert!(job_writes("[a]\nrw=rw\n"));
    }

    #[test]
    fn an_image_larger_than_its_filesystem_is_refused_before_anything_is_made() {
        let l = LoopSpec {
            size: u64::MAX / 2,
            file: std::env::temp_dir().join("iolab-never-made.img"),
        };
        let e = image_fits("8e18@/tmp", &l).expect_err("no filesystem is that big");
        assert_eq!(e.code, 2);
        assert!(e.message.contains("MiB free"), "{}", e.message);
        assert!(!l.file.exists());
    }
}
