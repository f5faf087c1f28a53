//! Every file a command writes is checked before anything runs and is
//! written whole or not at all.
//!
//! - Every file a command reads is noted as it is read ([`note_input`],
//!   called by `load`'s readers): job files, includes, replayed logs,
//!   device files, shard documents, traces.
//! - Before the runs, each output path is claimed ([`Claims::file`],
//!   [`Claims::dir`]): refused (exit 2) when it is one of the inputs, when
//!   another output of the command already claimed it, when it is a
//!   directory, a device or a FIFO, or when its directory does not exist
//!   or cannot be written.
//! - At the end, each file is written to a temporary file beside it and
//!   renamed into place ([`write_atomic`]): a command that fails, is
//!   refused or is stopped leaves the file it would have replaced as it
//!   was.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::Failure;

/// The files this process has read, canonical.
static INPUTS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The digests of the files this process has read, in the order read
/// (FNV-1a of the bytes): what a shard document records of its inputs.
static DIGESTS: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// `path` was read as an input of the command.
pub fn note_input(path: &Path) {
    if let Ok(c) = std::fs::canonicalize(path) {
        let mut inputs = INPUTS.lock().unwrap_or_else(|p| p.into_inner());
        if !inputs.contains(&c) {
            inputs.push(c);
        }
    }
}

/// `bytes` were read from an input (a file, or stdin).
pub fn note_input_bytes(bytes: &[u8]) {
    let mut d = DIGESTS.lock().unwrap_or_else(|p| p.into_inner());
    d.push(fnv(bytes));
}

/// One digest of every input's bytes read so far, in order, in hex: two
/// commands that read the same contents (wherever their files lie) have
/// the same.
pub fn inputs_digest() -> String {
    let d = DIGESTS.lock().unwrap_or_else(|p| p.into_inner());
    let bytes: Vec<u8> = d.iter().flat_map(|h| h.to_le_bytes()).collect();
    format!("{:016x}", fnv(&bytes))
}

/// FNV-1a, 64 bits.
pub fn fnv(bytes: &[u8]) -> u64 {
    let mut h = Fnv::new();
    h.feed(bytes);
    h.0
}

/// FNV-1a, 64 bits, fed a piece at a time.
pub struct Fnv(pub u64);

impl Fnv {
    pub fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// FNV-1a of the file `path`, read a block at a time.
fn fnv_file(path: &Path) -> std::io::Result<u64> {
    use std::io::Read as _;
    let mut f = std::fs::File::open(path)?;
    let mut h = Fnv::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match f.read(&mut buf) {
            Ok(0) => return Ok(h.0),
            Ok(n) => h.feed(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// This build of iolab: its version and a digest of its executable, so
/// shards written by another build are told apart (`unknown` if the
/// executable cannot be read).
pub fn build_id() -> String {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let exe = fnv_file(Path::new("/proc/self/exe"))
            .map(|h| format!("{h:016x}"))
            .unwrap_or_else(|_| "unknown".to_owned());
        format!("{} {exe}", env!("CARGO_PKG_VERSION"))
    })
    .clone()
}

/// The input `path` is, if it is one (canonical path compared).
fn input_at(path: &Path) -> Option<PathBuf> {
    let c = std::fs::canonicalize(path).ok()?;
    let inputs = INPUTS.lock().unwrap_or_else(|p| p.into_inner());
    inputs.iter().find(|i| **i == c).cloned()
}

/// The inputs that lie directly in `dir`.
fn inputs_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(d) = std::fs::canonicalize(dir) else {
        return Vec::new();
    };
    let inputs = INPUTS.lock().unwrap_or_else(|p| p.into_inner());
    inputs
        .iter()
        .filter(|i| i.parent() == Some(d.as_path()))
        .cloned()
        .collect()
}

/// Whether this process may create files in the directory `dir`.
fn writable_dir(dir: &Path) -> bool {
    nix::unistd::access(
        dir,
        nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK,
    )
    .is_ok()
}

/// `path` made absolute against the working directory, `.` and `..`
/// kept (a claim compares the final file, not the spelling).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// The outputs a command has claimed, and by which flag.
#[derive(Debug, Default)]
pub struct Claims {
    claimed: Vec<(PathBuf, String)>,
}

impl Claims {
    /// Claims the file `path` that `flag` will write.
    pub fn file(&mut self, flag: &str, path: &Path) -> Result<(), Failure> {
        let shown = path.display();
        let refuse = |why: String| Err(Failure::input(format!("{flag} {shown}: {why}")));
        if path.as_os_str().is_empty() {
            return refuse("an empty path".into());
        }
        let key = match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => return refuse("is a directory; name a file".into()),
            Ok(m) if !m.is_file() => {
                return refuse(
                    "is not a regular file (a device or a FIFO): iolab writes a file and renames it into place"
                        .into(),
                );
            }
            Ok(_) => {
                if let Some(i) = input_at(path) {
                    return refuse(format!(
                        "that is {}, an input of this command; give another file",
                        i.display()
                    ));
                }
                std::fs::canonicalize(path).unwrap_or_else(|_| absolute(path))
            }
            Err(_) => {
                let abs = absolute(path);
                let parent = abs.parent().unwrap_or(Path::new("/"));
                if !parent.is_dir() {
                    return refuse(format!("{} is not a directory", parent.display()));
                }
                if !writable_dir(parent) {
                    return refuse(format!("{} cannot be written", parent.display()));
                }
                let name = abs.file_name().map(PathBuf::from).unwrap_or_default();
                std::fs::canonicalize(parent)
                    .map(|p| p.join(name))
                    .unwrap_or(abs)
            }
        };
        if let Some((_, other)) = self.claimed.iter().find(|(p, _)| *p == key) {
            return refuse(format!(
                "{other} writes the same file; give each output its own"
            ));
        }
        if let Ok(m) = std::fs::metadata(path)
            && m.is_file()
        {
            let parent = absolute(path).parent().map(Path::to_owned);
            if let Some(p) = parent.filter(|p| !writable_dir(p)) {
                return refuse(format!(
                    "{} cannot be written (the file is replaced by a rename there)",
                    p.display()
                ));
            }
        }
        self.claimed.push((key, flag.to_owned()));
        Ok(())
    }

    /// Claims the directory `dir` that `flag` will write files in (made
    /// when they are written): it is a directory, or can be made (its
    /// nearest existing ancestor is a directory that can be written), and
    /// holds no input of the command among the files it would take.
    pub fn dir(&mut self, flag: &str, dir: &Path, takes: &str) -> Result<(), Failure> {
        let shown = dir.display();
        let refuse = |why: String| Err(Failure::input(format!("{flag} {shown}: {why}")));
        if dir.as_os_str().is_empty() {
            return refuse("an empty path; give a directory (. for this one)".into());
        }
        match std::fs::metadata(dir) {
            Ok(m) if !m.is_dir() => return refuse("is not a directory".into()),
            Ok(_) => {
                if !writable_dir(dir) {
                    return refuse("cannot be written".into());
                }
                let ext = takes.trim_start_matches('.');
                if let Some(i) = inputs_in(dir)
                    .into_iter()
                    .find(|i| i.extension().is_some_and(|e| e == ext))
                {
                    return refuse(format!(
                        "holds {}, an input of this command, and {takes} files are written there; give another directory",
                        i.display()
                    ));
                }
            }
            Err(_) => {
                let abs = absolute(dir);
                let mut up = abs.parent();
                while let Some(p) = up {
                    if p.exists() {
                        break;
                    }
                    up = p.parent();
                }
                match up {
                    Some(p) if p.is_dir() && writable_dir(p) => {}
                    Some(p) if p.is_dir() => {
                        return refuse(format!("{} cannot be written", p.display()));
                    }
                    Some(p) => return refuse(format!("{} is not a directory", p.display())),
                    None => return refuse("has no existing ancestor".into()),
                }
            }
        }
        self.claimed.push((absolute(dir), flag.to_owned()));
        Ok(())
    }
}

/// Writes `bytes` to `path` whole or not at all: a temporary file beside
/// it, synced, then renamed over it. The file it replaces, if any, stays
/// as it was until the rename; an input of the command is never
/// replaced (checked again here).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let mut f = AtomicFile::create(path)?;
    f.write(bytes)?;
    f.commit()
}

/// A file written piece by piece and put in place whole at the end
/// ([`AtomicFile::commit`]): until then the pieces go to a temporary file
/// beside it, removed if the file is dropped uncommitted.
pub struct AtomicFile {
    shown: String,
    tmp: PathBuf,
    target: PathBuf,
    file: Option<std::fs::File>,
}

impl AtomicFile {
    /// Starts `path` (refused if it is an input of the command).
    pub fn create(path: &Path) -> Result<Self, String> {
        if let Some(i) = input_at(path) {
            return Err(format!(
                "{}: that is {}, an input of this command; not written",
                path.display(),
                i.display()
            ));
        }
        // Through a symlink to the file it names: the link stays a link.
        let target = std::fs::canonicalize(path).unwrap_or_else(|_| absolute(path));
        let dir = target.parent().unwrap_or(Path::new("/"));
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(".{name}.iolab-{}.tmp", std::process::id()));
        let shown = path.display().to_string();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| format!("{shown}: {e}"))?;
        Ok(AtomicFile {
            shown,
            tmp,
            target,
            file: Some(file),
        })
    }

    pub fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        let f = self
            .file
            .as_mut()
            .ok_or_else(|| format!("{}: written after its end", self.shown))?;
        f.write_all(bytes)
            .map_err(|e| format!("{}: {e}", self.shown))
    }

    /// Syncs the pieces and renames the file into place.
    pub fn commit(mut self) -> Result<(), String> {
        let done = match self.file.take() {
            Some(f) => f
                .sync_data()
                .and_then(|()| std::fs::rename(&self.tmp, &self.target)),
            None => Ok(()),
        };
        done.map_err(|e| format!("{}: {e}", self.shown))
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Committed files have been renamed: there is nothing to remove.
        let _ = std::fs::remove_file(&self.tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("iolab-outputs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("scratch");
        d
    }

    #[test]
    fn an_input_a_directory_a_device_or_a_second_claim_is_refused() {
        let d = scratch("claims");
        let input = d.join("job.fio");
        std::fs::write(&input, "[a]\n").unwrap();
        note_input(&input);
        let mut c = Claims::default();
        // An input, also spelled another way.
        let e = c.file("--output", &input).expect_err("an input");
        assert!(
            e.message.contains("an input of this command"),
            "{}",
            e.message
        );
        let spelled = d.join(".").join("job.fio");
        assert!(c.file("--output", &spelled).is_err());
        assert!(
            c.file("--output", &d)
                .expect_err("dir")
                .message
                .contains("directory")
        );
        let e = c
            .file("--output", Path::new("/dev/null"))
            .expect_err("device");
        assert!(e.message.contains("not a regular file"), "{}", e.message);
        let e = c
            .file("--output", &d.join("no-such-dir").join("x"))
            .expect_err("no parent");
        assert!(e.message.contains("is not a directory"), "{}", e.message);
        let out = d.join("out.txt");
        c.file("--output", &out).expect("a new file");
        let e = c.file("--trace", &out).expect_err("twice");
        assert!(
            e.message.contains("--output writes the same file"),
            "{}",
            e.message
        );
        // A plot directory holding an input of the kind it writes.
        let svg = d.join("fig.svg");
        std::fs::write(&svg, "<svg/>").unwrap();
        note_input(&svg);
        assert!(c.dir("--plot", &d, ".svg").is_err());
        c.dir("--plot", &d.join("new").join("deeper"), ".svg")
            .expect("made when written");
        assert!(c.dir("--plot", &input, ".svg").is_err(), "a file");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_write_replaces_the_file_whole_and_never_an_input() {
        let d = scratch("atomic");
        let out = d.join("result.txt");
        std::fs::write(&out, "previous result").unwrap();
        write_atomic(&out, b"new result").expect("written");
        assert_eq!(std::fs::read(&out).unwrap(), b"new result");
        // No temporary file is left beside it.
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        // Through a symlink, the file it names is replaced; the link stays.
        let target = d.join("run5.txt");
        std::fs::write(&target, "old run").unwrap();
        let link = d.join("latest.txt");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomic(&link, b"new run").expect("written");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"new run");
        std::fs::remove_file(&link).unwrap();
        std::fs::remove_file(&target).unwrap();
        // A write that cannot happen leaves the old file as it was.
        let input = d.join("in.toml");
        std::fs::write(&input, "base = \"nvme\"\n").unwrap();
        note_input(&input);
        assert!(write_atomic(&input, b"overwritten").is_err());
        assert_eq!(std::fs::read(&input).unwrap(), b"base = \"nvme\"\n");
        assert!(write_atomic(&d.join("missing").join("x"), b"x").is_err());
        let _ = std::fs::remove_dir_all(&d);
    }
}
