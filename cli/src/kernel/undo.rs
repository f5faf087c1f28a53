//! Everything a capture changes on the machine, recorded as it is changed
//! and put back in reverse order: knobs written back, mounts unmounted,
//! loop devices detached, files and directories removed. Put back on
//! success, on error and on Ctrl-C alike (the stack runs when it is
//! dropped).

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

/// One change and how to take it back.
#[derive(Debug)]
enum Change {
    /// A sysfs or tracefs file was written; its earlier value.
    Wrote {
        path: PathBuf,
        before: String,
    },
    Mounted(PathBuf),
    /// A loop device was set up (its node).
    Loop(String),
    /// A btrfs device was registered with the kernel's device list.
    BtrfsScanned(String),
    CreatedFile(PathBuf),
    CreatedDir(PathBuf),
    /// A scratch directory, removed with everything in it.
    CreatedTree(PathBuf),
    Spawned(Child),
}

/// The stack of changes.
#[derive(Debug, Default)]
pub struct Undo {
    changes: Vec<Change>,
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

fn write_raw(path: &Path, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|e| format!("writing '{value}' to {}: {e}", path.display()))
}

/// The value to write back for what a knob reads as: a scheduler list
/// reads `none [mq-deadline]`, a filter `none` (cleared by writing 0).
fn restorable(path: &Path, before: &str) -> String {
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
    /// Write `value` to `path`, remembering what it read before.
    pub fn write(&mut self, path: &Path, value: &str) -> Result<(), String> {
        let before = read(path)?;
        write_raw(path, value)?;
        self.changes.push(Change::Wrote {
            path: path.to_owned(),
            before: restorable(path, &before),
        });
        Ok(())
    }

    /// Mount: `mount [args] SOURCE TARGET`.
    pub fn mount(&mut self, args: &[&str], target: &Path) -> Result<(), String> {
        run(Command::new("mount").args(args).arg(target))?;
        self.changes.push(Change::Mounted(target.to_owned()));
        Ok(())
    }

    /// Set up a loop device with direct IO over `file`; its node.
    pub fn loop_device(&mut self, file: &Path) -> Result<String, String> {
        let node = run(Command::new("losetup")
            .args(["--direct-io=on", "--find", "--show"])
            .arg(file))?
        .trim()
        .to_owned();
        if !node.starts_with("/dev/loop") {
            return Err(format!("losetup printed '{node}', not a loop device"));
        }
        self.changes.push(Change::Loop(node.clone()));
        Ok(node)
    }

    /// `mkfs.btrfs` registered `node`; forget it afterwards.
    pub fn btrfs_registered(&mut self, node: &str) {
        self.changes.push(Change::BtrfsScanned(node.to_owned()));
    }

    /// Create `path` as a sparse file of `size` bytes; it must not exist.
    pub fn create_file(&mut self, path: &Path, size: u64) -> Result<(), String> {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| format!("creating {}: {e}", path.display()))?;
        self.changes.push(Change::CreatedFile(path.to_owned()));
        f.set_len(size)
            .map_err(|e| format!("sizing {} to {size} bytes: {e}", path.display()))
    }

    /// Create the directory `path`; it must not exist.
    pub fn create_dir(&mut self, path: &Path) -> Result<(), String> {
        std::fs::create_dir(path).map_err(|e| format!("creating {}: {e}", path.display()))?;
        self.changes.push(Change::CreatedDir(path.to_owned()));
        Ok(())
    }

    /// Create the scratch directory `path` (it must not exist); it is
    /// removed with its contents.
    pub fn create_tree(&mut self, path: &Path) -> Result<(), String> {
        std::fs::create_dir(path).map_err(|e| format!("creating {}: {e}", path.display()))?;
        self.changes.push(Change::CreatedTree(path.to_owned()));
        Ok(())
    }

    /// A child process to end if it still runs when the stack unwinds.
    pub fn spawned(&mut self, child: Child) {
        self.changes.push(Change::Spawned(child));
    }

    /// End every spawned child still running: kill, reap.
    pub fn end_children(&mut self) {
        for c in self.changes.iter_mut() {
            if let Change::Spawned(child) = c {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }

    /// Take every change back, newest first; what could not be put back.
    pub fn unwind(&mut self) -> Vec<String> {
        let mut failed = Vec::new();
        while let Some(c) = self.changes.pop() {
            let r =
                match c {
                    Change::Wrote { path, before } => write_raw(&path, &before),
                    Change::Mounted(p) => umount(&p),
                    Change::Loop(node) => detach(&node),
                    Change::BtrfsScanned(node) => {
                        // Forgetting fails harmlessly if the kernel never kept it.
                        let _ = run(Command::new("btrfs")
                            .args(["device", "scan", "--forget"])
                            .arg(&node));
                        Ok(())
                    }
                    Change::CreatedFile(p) => std::fs::remove_file(&p)
                        .map_err(|e| format!("removing {}: {e}", p.display())),
                    Change::CreatedDir(p) => std::fs::remove_dir(&p)
                        .map_err(|e| format!("removing {}: {e}", p.display())),
                    Change::CreatedTree(p) => std::fs::remove_dir_all(&p)
                        .map_err(|e| format!("removing {}: {e}", p.display())),
                    Change::Spawned(mut child) => {
                        let _ = child.kill();
                        let _ = child.wait();
                        Ok(())
                    }
                };
            if let Err(e) = r {
                failed.push(e);
            }
        }
        failed
    }
}

/// Unmount, retrying briefly while the filesystem is still busy (a
/// process that used it may take a moment to exit).
fn umount(p: &Path) -> Result<(), String> {
    let mut last = String::new();
    for _ in 0..50 {
        match run(Command::new("umount").arg(p)) {
            Ok(_) => return Ok(()),
            Err(e) => last = e,
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Err(last)
}

fn detach(node: &str) -> Result<(), String> {
    let mut last = String::new();
    for _ in 0..50 {
        match run(Command::new("losetup").arg("-d").arg(node)) {
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
