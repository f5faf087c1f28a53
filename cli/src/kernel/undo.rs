//! Everything a capture or calibrate changes on the machine, journaled
//! before it is made ([`super::journal`]) and put back in reverse order:
//! knobs written back, mounts unmounted, loop devices detached, files and
//! directories removed. Put back on success, on error and on a signal
//! alike (the stack runs when it is dropped); a run killed outright
//! leaves its journal to `iolab kernel cleanup`.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::journal::{self, Entry, Journal};

/// The stack of changes, kept in the run's journal.
#[derive(Debug)]
pub struct Undo {
    journal: Option<Journal>,
}

/// Where a tool the real runs need is: `PATH`, then the sbin and bin
/// directories (root's tools are often outside a user's `PATH`).
pub fn tool(name: &str) -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("{name} is not on PATH nor in /usr/sbin, /sbin, /usr/bin or /bin"))
}

/// Runs the tool `name` (found by [`tool`]) with `args`.
pub fn run_tool(name: &str, args: &[&str]) -> Result<String, String> {
    run(Command::new(tool(name)?).args(args))
}

/// Runs a command to its end; an error names it and says what it printed.
pub fn run(cmd: &mut Command) -> Result<String, String> {
    let shown = format!("{cmd:?}");
    let out = cmd.output().map_err(|e| format!("running {shown}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{shown} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A sysfs/tracefs file's value, trimmed.
pub fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .map_err(|e| format!("reading {}: {e}", path.display()))
}

pub fn write_raw(path: &Path, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|e| format!("writing '{value}' to {}: {e}", path.display()))
}

/// The value to write back for what a knob reads as: a scheduler list
/// reads `none [mq-deadline]`, a filter `none` (cleared by writing 0).
pub fn restorable(path: &Path, before: &str) -> String {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    // Files that list their choices with the one in force in brackets.
    if (name == "scheduler" || name == "trace_clock")
        && let (Some(a), Some(b)) = (before.find('['), before.find(']'))
    {
        return before[a + 1..b].to_owned();
    }
    if name == "filter" && before == "none" {
        return "0".to_owned();
    }
    // A ring buffer not yet used since boot reads `7 (expanded: 1408)`:
    // its minimal size, and the size it takes when tracing first needs it.
    // It cannot be put back unexpanded; the size it would have had is what
    // is written.
    if name == "buffer_size_kb"
        && let Some(rest) = before.split_once("(expanded:").map(|(_, r)| r)
    {
        return rest.trim_end_matches(')').trim().to_owned();
    }
    before.to_owned()
}

impl Undo {
    /// A new stack with its journal in [`journal::DIR`]; refuses while
    /// another run's changes are on the machine.
    pub fn new(command: &str) -> Result<Undo, String> {
        let dir = Path::new(journal::DIR);
        journal::refuse_if_dirty(dir)?;
        Ok(Undo {
            journal: Some(Journal::create(dir, command)?),
        })
    }

    fn journal(&mut self) -> Result<&mut Journal, String> {
        self.journal
            .as_mut()
            .ok_or_else(|| "the change journal is closed".to_owned())
    }

    fn note(&mut self, e: Entry) -> Result<(), String> {
        self.journal()?.append(e)
    }

    /// Write `value` to `path`, remembering what it read before.
    pub fn write(&mut self, path: &Path, value: &str) -> Result<(), String> {
        let before = read(path)?;
        self.note(Entry::Wrote {
            path: path.to_owned(),
            before: restorable(path, &before),
        })?;
        write_raw(path, value)
    }

    /// Mount: `mount [args] SOURCE TARGET`.
    pub fn mount(&mut self, args: &[&str], target: &Path) -> Result<(), String> {
        self.note(Entry::Mounted {
            target: target.to_owned(),
        })?;
        run(Command::new(tool("mount")?).args(args).arg(target))?;
        Ok(())
    }

    /// Set up a loop device with direct IO over `file`, then delete the
    /// file (the device holds it; its space goes when the device is
    /// detached, so putting back costs no time); the device's node.
    pub fn loop_device(&mut self, file: &Path) -> Result<String, String> {
        self.note(Entry::Loop {
            file: file.to_owned(),
        })?;
        let node = run(Command::new(tool("losetup")?)
            .args(["--direct-io=on", "--find", "--show"])
            .arg(file))?
        .trim()
        .to_owned();
        if !node.starts_with("/dev/loop") {
            return Err(format!("losetup printed '{node}', not a loop device"));
        }
        std::fs::remove_file(file).map_err(|e| format!("removing {}: {e}", file.display()))?;
        Ok(node)
    }

    /// `mkfs.btrfs` is about to register `node`; forget it afterwards.
    pub fn btrfs_registered(&mut self, node: &str) -> Result<(), String> {
        self.note(Entry::BtrfsScanned {
            node: node.to_owned(),
        })
    }

    /// fio has started as `pid`: journaled so that a cleanup after a kill
    /// ends it and the processes it started.
    pub fn fio_started(&mut self, pid: u32) -> Result<(), String> {
        let start = super::procs::start_time(pid)
            .ok_or_else(|| format!("fio (PID {pid}) ended as it started"))?;
        self.note(Entry::Fio { pid, start })
    }

    /// fio is about to write to the block device `node`.
    pub fn fio_device(&mut self, node: &str) -> Result<(), String> {
        self.note(Entry::FioDevice {
            node: node.to_owned(),
        })
    }

    /// Create `path` as a sparse file of `size` bytes; it must not exist.
    /// Journaled once made (what the journal names is always ours to
    /// remove).
    pub fn create_file(&mut self, path: &Path, size: u64) -> Result<(), String> {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| format!("creating {}: {e}", path.display()))?;
        let noted = self.note(Entry::CreatedFile {
            path: path.to_owned(),
        });
        if let Err(e) = noted {
            let _ = std::fs::remove_file(path);
            return Err(e);
        }
        f.set_len(size)
            .map_err(|e| format!("sizing {} to {size} bytes: {e}", path.display()))
    }

    /// Create the directory `path`; it must not exist.
    pub fn create_dir(&mut self, path: &Path) -> Result<(), String> {
        std::fs::create_dir(path).map_err(|e| format!("creating {}: {e}", path.display()))?;
        self.note(Entry::CreatedDir {
            path: path.to_owned(),
        })
        .inspect_err(|_| {
            let _ = std::fs::remove_dir(path);
        })
    }

    /// Create the scratch directory `path` (it must not exist); it is
    /// removed with its contents.
    pub fn create_tree(&mut self, path: &Path) -> Result<(), String> {
        std::fs::create_dir(path).map_err(|e| format!("creating {}: {e}", path.display()))?;
        self.note(Entry::CreatedTree {
            path: path.to_owned(),
        })
        .inspect_err(|_| {
            let _ = std::fs::remove_dir(path);
        })
    }

    /// Take every change back, newest first (fio's processes before
    /// all); what could not be put back. The journal goes when all is
    /// back, and stays (for `iolab kernel cleanup`) otherwise.
    pub fn unwind(&mut self) -> Vec<String> {
        let Some(j) = self.journal.take() else {
            return Vec::new();
        };
        let (_, mut failed) = journal::take_back_all(j.changes());
        if failed.is_empty() {
            if let Err(e) = j.remove() {
                failed.push(e);
            }
        } else {
            failed.push(format!(
                "the rest is listed in {}; `iolab kernel cleanup` tries again",
                j.path().display()
            ));
        }
        failed
    }
}

/// Unmount, retrying briefly while the filesystem is still busy (a
/// process that used it may take a moment to exit).
pub fn umount(p: &Path) -> Result<(), String> {
    let mut last = String::new();
    for _ in 0..50 {
        match run(Command::new(tool("umount")?).arg(p)) {
            Ok(_) => return Ok(()),
            Err(e) => last = e,
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Err(last)
}

pub fn detach(node: &str) -> Result<(), String> {
    let mut last = String::new();
    for _ in 0..50 {
        match run(Command::new(tool("losetup")?).arg("-d").arg(node)) {
            Ok(_) => return Ok(()),
            Err(e) => last = e,
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Err(last)
}

impl Drop for Undo {
    fn drop(&mut self) {
        for e in self.unwind() {
            eprintln!("iolab: could not put back: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unused_ring_buffer_is_put_back_at_its_expanded_size() {
        let size = Path::new("/sys/kernel/tracing/buffer_size_kb");
        assert_eq!(restorable(size, "7 (expanded: 1408)"), "1408");
        assert_eq!(restorable(size, "1408"), "1408");
    }

    #[test]
    fn a_choice_file_is_put_back_as_the_choice_in_brackets() {
        let clock = Path::new("/sys/kernel/tracing/trace_clock");
        assert_eq!(
            restorable(
                clock,
                "[local] global counter uptime perf mono mono_raw boot"
            ),
            "local"
        );
        let sched = Path::new("/sys/block/loop0/queue/scheduler");
        assert_eq!(
            restorable(sched, "none [mq-deadline] kyber bfq"),
            "mq-deadline"
        );
        let filter = Path::new("/sys/kernel/tracing/events/wbt/wbt_stat/filter");
        assert_eq!(restorable(filter, "none"), "0");
        let lat = Path::new("/sys/block/loop0/queue/wbt_lat_usec");
        assert_eq!(restorable(lat, "2000"), "2000");
    }
}
