//! The change journal: every change `kernel capture` and `calibrate` make
//! to the machine is written to `/run/iolab/PID.journal` (and synced)
//! before it is made, one JSON object a line. A run that ends whole
//! removes its journal; one that is killed (SIGKILL, the OOM killer, a
//! lost session) leaves it, and `iolab kernel cleanup` puts back what it
//! lists. Each entry is taken back by [`take_back`], the one function the
//! live unwind and the cleanup share, and which tolerates a change that
//! was journaled but never made or was already put back.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::procs;
use super::undo;

/// Where the journals live (a tmpfs: gone at reboot, as the changes are).
pub const DIR: &str = "/run/iolab";

/// One journaled change, or the run's header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "kebab-case")]
pub enum Entry {
    /// The first line: whose journal it is. `start` is the process's
    /// start time (clock ticks since boot), so a PID reused by another
    /// process does not pass for the run.
    Run {
        pid: u32,
        start: u64,
        command: String,
    },
    /// A sysfs, procfs or tracefs file is written; its earlier value, as
    /// it is written back.
    Wrote {
        path: PathBuf,
        before: String,
    },
    /// A filesystem is mounted on `target`.
    Mounted {
        target: PathBuf,
    },
    /// A loop device is set up over `file` (the file may be deleted once
    /// the device holds it: the kernel still names it).
    Loop {
        file: PathBuf,
    },
    /// `mkfs.btrfs` registers `node` with the kernel's device list.
    BtrfsScanned {
        node: String,
    },
    CreatedFile {
        path: PathBuf,
    },
    CreatedDir {
        path: PathBuf,
    },
    /// A scratch directory, removed with everything in it.
    CreatedTree {
        path: PathBuf,
    },
    /// fio is started (its PID and start time): it and every fio process
    /// it started, which run in sessions of their own, are ended.
    Fio {
        pid: u32,
        start: u64,
    },
    /// fio writes to the block device `node`: fio processes that hold it
    /// open are ended.
    FioDevice {
        node: String,
    },
}

/// An open journal of the running process.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: std::fs::File,
    /// Every entry written, header first.
    entries: Vec<Entry>,
}

impl Journal {
    /// Creates this process's journal under `dir` with its header.
    pub fn create(dir: &Path, command: &str) -> Result<Journal, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let pid = std::process::id();
        let path = dir.join(format!("{pid}.journal"));
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| format!("creating the change journal {}: {e}", path.display()))?;
        let start = procs::start_time(pid)
            .ok_or_else(|| format!("reading /proc/{pid}/stat: this process's start time"))?;
        let mut j = Journal {
            path,
            file,
            entries: Vec::new(),
        };
        j.append(Entry::Run {
            pid,
            start,
            command: command.to_owned(),
        })?;
        Ok(j)
    }

    /// Writes `e` and syncs it: call before making the change.
    pub fn append(&mut self, e: Entry) -> Result<(), String> {
        let mut line = serde_json::to_string(&e).map_err(|err| err.to_string())?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|err| format!("writing the change journal {}: {err}", self.path.display()))?;
        self.entries.push(e);
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The changes journaled, oldest first (without the header).
    pub fn changes(&self) -> &[Entry] {
        self.entries.get(1..).unwrap_or(&[])
    }

    /// Everything was put back: the journal goes.
    pub fn remove(self) -> Result<(), String> {
        remove(&self.path)
    }
}

/// Removes a journal, and its directory once it holds no other.
fn remove(path: &Path) -> Result<(), String> {
    std::fs::remove_file(path).map_err(|e| format!("removing {}: {e}", path.display()))?;
    if let Some(dir) = path.parent() {
        // Fails, as it should, while another run's journal is there.
        let _ = std::fs::remove_dir(dir);
    }
    Ok(())
}

/// Reads a journal: its entries, or what is wrong with it (naming the
/// file and line). A last line cut short (a run killed while writing it)
/// is dropped: its change was not made yet.
pub fn read(path: &Path) -> Result<Vec<Entry>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        if !line.ends_with('\n') && i + 1 == lines.len() {
            break;
        }
        let e: Entry = serde_json::from_str(line.trim_end())
            .map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        out.push(e);
    }
    match out.first() {
        Some(Entry::Run { .. }) => Ok(out),
        _ => Err(format!("{}: no run header", path.display())),
    }
}

/// A journal under [`DIR`] and whether the run that wrote it still runs.
#[derive(Debug)]
pub struct Found {
    pub path: PathBuf,
    pub pid: u32,
    pub alive: bool,
}

/// The journals under `dir`, by name; unreadable ones count as dead
/// (their PID taken from the file name, 0 if none).
pub fn journals(dir: &Path) -> Vec<Found> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "journal"))
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let (pid, alive) = match read(&path).ok().and_then(|e| e.first().cloned()) {
                Some(Entry::Run { pid, start, .. }) => (pid, procs::start_time(pid) == Some(start)),
                _ => (
                    path.file_stem()
                        .and_then(|s| s.to_str())
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(0),
                    false,
                ),
            };
            Found { path, pid, alive }
        })
        .collect()
}

/// Refuses to start while another run's changes are on the machine: a
/// dead run's journal (exit 2, naming `iolab kernel cleanup`), or a live
/// run of another process.
pub fn refuse_if_dirty(dir: &Path) -> Result<(), String> {
    let me = std::process::id();
    for f in journals(dir) {
        if f.pid == me {
            continue;
        }
        if f.alive {
            return Err(format!(
                "iolab (PID {}) is changing this machine now ({}); wait for it to end",
                f.pid,
                f.path.display()
            ));
        }
        return Err(format!(
            "a run that did not finish (PID {}) left changes on this machine, listed in {}; run `iolab kernel cleanup` to put them back first; nothing was changed",
            f.pid,
            f.path.display()
        ));
    }
    Ok(())
}

/// What the loop files of a journal are, for [`take_back`]'s check that a
/// loop device's knobs are still those of a device the run made.
pub fn loop_files(entries: &[Entry]) -> Vec<PathBuf> {
    entries
        .iter()
        .filter_map(|e| match e {
            Entry::Loop { file } => Some(file.clone()),
            _ => None,
        })
        .collect()
}

/// Takes one change back; what was done (`None`: nothing was left to
/// do). `loops` are the run's loop files: a knob of a loop device that no
/// longer reads one of them as its backing file is left alone (the device
/// was detached and is someone else's now).
pub fn take_back(e: &Entry, loops: &[PathBuf]) -> Result<Option<String>, String> {
    match e {
        Entry::Run { .. } => Ok(None),
        Entry::Wrote { path, before } => {
            if let Some(node) = loop_of(path)
                && !loops.iter().any(|f| backing(&node).as_deref() == Some(f))
            {
                return Ok(None);
            }
            if !path.exists() {
                return Ok(None);
            }
            let now = undo::read(path)?;
            if undo::restorable(path, &now) == *before {
                return Ok(None);
            }
            undo::write_raw(path, before)?;
            Ok(Some(format!("wrote '{before}' back to {}", path.display())))
        }
        Entry::Mounted { target } => {
            if !procs::is_mount_point(target) {
                return Ok(None);
            }
            let ended = procs::end_fio_using(target);
            undo::umount(target)?;
            Ok(Some(format!(
                "unmounted {}{}",
                target.display(),
                ended_note(ended)
            )))
        }
        Entry::Loop { file } => {
            let nodes = procs::loops_backed_by(file);
            if nodes.is_empty() {
                return Ok(None);
            }
            for n in &nodes {
                undo::detach(n)?;
            }
            Ok(Some(format!(
                "detached {} (over {})",
                nodes.join(", "),
                file.display()
            )))
        }
        Entry::BtrfsScanned { node } => {
            // Forgetting fails harmlessly when the kernel no longer keeps it.
            let _ = undo::run_tool("btrfs", &["device", "scan", "--forget", node]);
            Ok(None)
        }
        Entry::CreatedFile { path } => match std::fs::symlink_metadata(path) {
            Err(_) => Ok(None),
            Ok(_) => removed(path, std::fs::remove_file(path), ""),
        },
        Entry::CreatedDir { path } if path.is_dir() => removed(path, std::fs::remove_dir(path), ""),
        Entry::CreatedTree { path } if path.is_dir() => {
            removed(path, std::fs::remove_dir_all(path), " and what it held")
        }
        Entry::CreatedDir { .. } | Entry::CreatedTree { .. } => Ok(None),
        Entry::Fio { pid, start } => {
            let n = procs::end_fio(*pid, *start);
            Ok((n > 0).then(|| format!("ended {n} fio process(es) of PID {pid}")))
        }
        Entry::FioDevice { node } => {
            let n = procs::end_fio_using(Path::new(node));
            Ok((n > 0).then(|| format!("ended {n} fio process(es) using {node}")))
        }
    }
}

/// What removing `path` did, or why it failed.
fn removed(path: &Path, r: std::io::Result<()>, also: &str) -> Result<Option<String>, String> {
    r.map(|()| Some(format!("removed {}{also}", path.display())))
        .map_err(|err| format!("removing {}: {err}", path.display()))
}

fn ended_note(n: usize) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(" (after ending {n} fio process(es) in it)")
    }
}

/// The loop device a sysfs path is under (`/sys/block/loop3/...`:
/// `/dev/loop3`).
fn loop_of(path: &Path) -> Option<String> {
    let mut parts = path
        .components()
        .map(|c| c.as_os_str().to_str().unwrap_or(""));
    let (a, b, c, d) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let name = parts.next()?;
    let sys_block = a == "/" && b == "sys" && (c == "block" || (c == "class" && d == "block"));
    let name = if c == "block" { d } else { name };
    (sys_block && name.starts_with("loop")).then(|| format!("/dev/{name}"))
}

/// The file a loop device is over, as the kernel names it (without its
/// ` (deleted)` mark).
pub fn backing(node: &str) -> Option<PathBuf> {
    let name = node.rsplit('/').next()?;
    let s = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
    let s = s.trim_end_matches('\n');
    Some(PathBuf::from(s.strip_suffix(" (deleted)").unwrap_or(s)))
}

/// Takes back every change of a dead run's journal, newest first; the
/// fio processes first of all (they hold the mounts). What was done, and
/// what could not be put back.
pub fn take_back_all(entries: &[Entry]) -> (Vec<String>, Vec<String>) {
    let loops = loop_files(entries);
    let (mut done, mut failed) = (Vec::new(), Vec::new());
    let fio_first = entries
        .iter()
        .filter(|e| matches!(e, Entry::Fio { .. } | Entry::FioDevice { .. }));
    let rest = entries
        .iter()
        .rev()
        .filter(|e| !matches!(e, Entry::Fio { .. } | Entry::FioDevice { .. }));
    for e in fio_first.chain(rest) {
        match take_back(e, &loops) {
            Ok(Some(s)) => done.push(s),
            Ok(None) => {}
            Err(s) => failed.push(s),
        }
    }
    (done, failed)
}

#[derive(clap::Args, Debug)]
pub struct CleanupArgs {
    /// The journals' directory.
    #[arg(long, default_value = DIR, hide = true)]
    pub dir: String,
}

/// `iolab kernel cleanup`: puts back what every dead run's journal lists
/// and says what it did; a live run's journal is left alone.
pub fn cleanup(args: &CleanupArgs) -> Result<(), crate::Failure> {
    let found = journals(Path::new(&args.dir));
    if found.is_empty() {
        println!("nothing to clean up: no journal in {}", args.dir);
        return Ok(());
    }
    let mut failures = Vec::new();
    for f in found {
        if f.alive {
            println!("{}: PID {} still runs; left alone", f.path.display(), f.pid);
            continue;
        }
        let entries = match read(&f.path) {
            Ok(e) => e,
            Err(e) => {
                failures.push(format!("{e} (left in place; put its changes back by hand)"));
                continue;
            }
        };
        println!(
            "{}: run of PID {} ended without putting back:",
            f.path.display(),
            f.pid
        );
        let (done, failed) = take_back_all(&entries);
        for d in &done {
            println!("  {d}");
        }
        if done.is_empty() && failed.is_empty() {
            println!("  (nothing was left to put back)");
        }
        if failed.is_empty() {
            remove(&f.path).map_err(|message| crate::Failure { code: 1, message })?;
        } else {
            for e in &failed {
                println!("  could not put back: {e}");
            }
            failures.push(format!(
                "{}: {} change(s) could not be put back (the journal stays)",
                f.path.display(),
                failed.len()
            ));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(crate::Failure {
            code: 1,
            message: failures.join("; "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("iolab-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_journal_reads_back_what_was_written_and_drops_a_cut_last_line() {
        let dir = scratch("round");
        let mut j = Journal::create(&dir, "capture").expect("created");
        let knob = Entry::Wrote {
            path: "/sys/kernel/tracing/trace_clock".into(),
            before: "local\nwith a newline".into(),
        };
        j.append(knob.clone()).expect("written");
        j.append(Entry::Loop {
            file: "/dev/shm/a b.img".into(),
        })
        .expect("written");
        let path = j.path().to_owned();
        let read_back = read(&path).expect("reads");
        assert_eq!(read_back.len(), 3);
        assert_eq!(read_back[1], knob);
        assert_eq!(j.changes().len(), 2);
        // A run killed while writing its last line.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"{\"change\":\"mounted\",\"tar").unwrap();
        assert_eq!(read(&path).expect("still reads").len(), 3);
        // This process runs: its journal is alive, and not in its own way.
        let found = journals(&dir);
        assert_eq!(found.len(), 1);
        assert!(found[0].alive);
        assert!(refuse_if_dirty(&dir).is_ok());
        j.remove().expect("removed");
        assert!(journals(&dir).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_dead_run_s_journal_refuses_the_next_run_and_cleanup_takes_it_back() {
        let dir = scratch("dead");
        std::fs::create_dir_all(&dir).unwrap();
        let made = dir.join("image.img");
        let tree = dir.join("scratch");
        std::fs::write(&made, b"x").unwrap();
        std::fs::create_dir_all(tree.join("inner")).unwrap();
        // PID 1 runs, but did not start at tick 1 << 60: a dead run.
        let lines = [
            serde_json::to_string(&Entry::Run {
                pid: 1,
                start: 1 << 60,
                command: "capture".into(),
            })
            .unwrap(),
            serde_json::to_string(&Entry::CreatedFile { path: made.clone() }).unwrap(),
            serde_json::to_string(&Entry::CreatedTree { path: tree.clone() }).unwrap(),
            serde_json::to_string(&Entry::CreatedDir {
                path: dir.join("never-made"),
            })
            .unwrap(),
        ];
        std::fs::write(dir.join("1.journal"), lines.join("\n") + "\n").unwrap();
        let found = journals(&dir);
        assert!(!found[0].alive, "{found:?}");
        let e = refuse_if_dirty(&dir).expect_err("a dead run's changes refuse");
        assert!(e.contains("iolab kernel cleanup"), "{e}");
        cleanup(&CleanupArgs {
            dir: dir.display().to_string(),
        })
        .expect("cleaned");
        assert!(!made.exists() && !tree.exists());
        assert!(
            !dir.exists(),
            "the journal and its directory go once all is back"
        );
        assert!(refuse_if_dirty(&dir).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_loop_device_s_knob_is_found_under_both_sysfs_spellings() {
        assert_eq!(
            loop_of(Path::new("/sys/block/loop3/queue/wbt_lat_usec")).as_deref(),
            Some("/dev/loop3")
        );
        assert_eq!(
            loop_of(Path::new("/sys/class/block/loop12/queue/scheduler")).as_deref(),
            Some("/dev/loop12")
        );
        assert_eq!(loop_of(Path::new("/sys/block/sda/queue/scheduler")), None);
        assert_eq!(loop_of(Path::new("/sys/kernel/tracing/trace_clock")), None);
    }

    #[test]
    fn a_knob_of_a_loop_device_the_run_no_longer_holds_is_left_alone() {
        // loop99 is not over the run's file (or does not exist): untouched.
        let e = Entry::Wrote {
            path: "/sys/block/loop99/queue/wbt_lat_usec".into(),
            before: "2000".into(),
        };
        assert_eq!(take_back(&e, &["/dev/shm/iolab-x.img".into()]), Ok(None));
    }
}
