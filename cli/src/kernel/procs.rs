//! The processes of a real run, kept from outliving it: fio started so
//! that it dies with iolab (`setpriv --pdeathsig`) and ended with every
//! process it started (fio's job processes call `setsid`, so no process
//! group holds them: iolab is their subreaper and ends its descendants);
//! the trace read by a thread of iolab's own, never by a child process;
//! and, for `iolab kernel cleanup`, the fio processes a killed run left,
//! found by what they hold open.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

/// A process's start time (field 22 of `/proc/PID/stat`, clock ticks
/// since boot); `None` if it does not run (a zombie counts as gone).
pub fn start_time(pid: u32) -> Option<u64> {
    let (state, ppid_start) = stat_fields(pid)?;
    (state != 'Z').then_some(ppid_start.1)
}

/// State, then (parent, start time), from `/proc/PID/stat`.
fn stat_fields(pid: u32) -> Option<(char, (u32, u64))> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold anything.
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3 (state); field N is f[N - 3].
    let state = f.first()?.chars().next()?;
    Some((state, (f.get(1)?.parse().ok()?, f.get(19)?.parse().ok()?)))
}

fn comm(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim_end().to_owned())
}

/// Every running process: (pid, parent).
fn processes() -> Vec<(u32, u32)> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .filter_map(|pid| {
                    let (state, (ppid, _)) = stat_fields(pid)?;
                    (state != 'Z').then_some((pid, ppid))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The live descendants of `root` (not `root` itself).
fn descendants(root: u32) -> Vec<u32> {
    let all = processes();
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &(pid, ppid) in &all {
            if ppid == p && !out.contains(&pid) {
                out.push(pid);
                frontier.push(pid);
            }
        }
    }
    out
}

fn sigkill(pid: u32) {
    if let Ok(p) = i32::try_from(pid) {
        let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
    }
}

/// Reaps those of `pids` that are this process's children and have
/// ended (adopted ones among them); no other child is touched, so a
/// command another thread waits for keeps its status.
fn reap(pids: &[u32]) {
    let me = std::process::id();
    for &pid in pids {
        if let Some((_, (ppid, _))) = stat_fields(pid)
            && ppid == me
            && let Ok(p) = i32::try_from(pid)
        {
            let _ = waitpid(Pid::from_raw(p), Some(WaitPidFlag::WNOHANG));
        }
    }
}

/// Kills `pids` and waits (up to 10 s) until none runs; how many there
/// were.
fn kill_all_and_wait(pids: &[u32]) -> usize {
    for &p in pids {
        sigkill(p);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline && pids.iter().any(|&p| start_time(p).is_some()) {
        reap(pids);
        std::thread::sleep(Duration::from_millis(20));
    }
    reap(pids);
    pids.len()
}

/// Makes this process the subreaper of what it starts: a process whose
/// parent ends (fio's job processes when fio ends) becomes its child, so
/// [`FioChild`] can find and end it.
pub fn become_subreaper() -> Result<(), String> {
    nix::sys::prctl::set_child_subreaper(true)
        .map_err(|e| format!("becoming the subreaper of fio's processes: {e}"))
}

/// fio as a child that does not outlive this process: started under
/// `setpriv --pdeathsig TERM` in a process group of its own (a signal to
/// iolab's terminal or group reaches iolab alone, which ends fio), and
/// ended with every process it started when dropped unless it ended by
/// itself.
pub struct FioChild {
    child: Child,
    pid: u32,
}

impl FioChild {
    /// Starts `cmd` (whose program is fio, resolved) under `setpriv`.
    pub fn spawn(setpriv: &Path, fio: &Path, cmd: Command) -> Result<FioChild, String> {
        use std::os::unix::process::CommandExt as _;
        let mut c = Command::new(setpriv);
        c.args(["--pdeathsig", "TERM", "--"]).arg(fio);
        c.args(cmd.get_args());
        if let Some(d) = cmd.get_current_dir() {
            c.current_dir(d);
        }
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        c.process_group(0);
        Self::take(c)
    }

    fn take(mut c: Command) -> Result<FioChild, String> {
        let child = c.spawn().map_err(|e| format!("starting {c:?}: {e}"))?;
        let pid = child.id();
        Ok(FioChild { child, pid })
    }

    pub fn id(&self) -> u32 {
        self.pid
    }

    /// Its exit status once it has ended.
    pub fn try_wait(&mut self) -> Result<Option<std::process::ExitStatus>, String> {
        self.child
            .try_wait()
            .map_err(|e| format!("waiting for fio: {e}"))
    }

    /// Ends it and every process it started (adopted ones included);
    /// waits until none runs.
    pub fn end(&mut self) {
        // Until nothing of it is left: a job process may start while the
        // others are ended. fio itself is reaped by its `Child`.
        for _ in 0..10 {
            let mut pids = descendants(self.pid);
            sigkill(self.pid);
            // Job processes whose fio already ended are this process's now.
            for p in descendants(std::process::id()) {
                if !pids.contains(&p) && comm(p).as_deref() == Some("fio") {
                    pids.push(p);
                }
            }
            if pids.is_empty() {
                break;
            }
            kill_all_and_wait(&pids);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for FioChild {
    fn drop(&mut self) {
        let ended = matches!(self.child.try_wait(), Ok(Some(_)));
        let adopted = descendants(std::process::id())
            .into_iter()
            .any(|p| comm(p).as_deref() == Some("fio"));
        if !ended || adopted {
            self.end();
        }
    }
}

/// Ends the fio process `pid` (if it is still the process that started
/// at `start`) and the fio processes it started; how many were ended.
pub fn end_fio(pid: u32, start: u64) -> usize {
    if start_time(pid) != Some(start) || comm(pid).as_deref() != Some("fio") {
        return 0;
    }
    let mut pids: Vec<u32> = descendants(pid)
        .into_iter()
        .filter(|&p| comm(p).as_deref() == Some("fio"))
        .collect();
    pids.push(pid);
    kill_all_and_wait(&pids)
}

/// Whether `p` is `under` or inside it.
fn within(p: &Path, under: &Path) -> bool {
    p.starts_with(under)
}

/// Ends every fio process that holds `path` (a mount point, or a device
/// node) open, as its working directory or root, or has a file under it
/// open or mapped; how many were ended. Other processes are left alone.
pub fn end_fio_using(path: &Path) -> usize {
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let users: Vec<u32> = processes()
        .into_iter()
        .map(|(pid, _)| pid)
        .filter(|&pid| comm(pid).as_deref() == Some("fio"))
        .filter(|&pid| uses(pid, &target))
        .collect();
    kill_all_and_wait(&users)
}

fn uses(pid: u32, target: &Path) -> bool {
    let base = PathBuf::from(format!("/proc/{pid}"));
    let link = |p: PathBuf| std::fs::read_link(p).ok();
    if [base.join("cwd"), base.join("root")]
        .into_iter()
        .filter_map(link)
        .any(|p| p != Path::new("/") && within(&p, target))
    {
        return true;
    }
    let fds = std::fs::read_dir(base.join("fd"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    if fds.into_iter().filter_map(link).any(|p| within(&p, target)) {
        return true;
    }
    std::fs::read_to_string(base.join("maps")).is_ok_and(|m| {
        m.lines()
            .filter_map(|l| l.split_whitespace().nth(5))
            .any(|p| within(Path::new(p), target))
    })
}

/// Whether `target` is a mount point now (`/proc/self/mounts`).
pub fn is_mount_point(target: &Path) -> bool {
    let want = std::fs::canonicalize(target).unwrap_or_else(|_| target.to_owned());
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .any(|m| Path::new(&unescape_mount(m)) == want)
}

/// `/proc/mounts` writes a space, tab, newline and backslash as `\ooo`.
fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The loop devices over `file` (the kernel's backing file, deleted or
/// not).
pub fn loops_backed_by(file: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir("/sys/block")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                .filter(|n| n.starts_with("loop"))
                .map(|n| format!("/dev/{n}"))
                .filter(|node| super::journal::backing(node).as_deref() == Some(file))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The trace read by a thread of this process (it cannot outlive the
/// run): `trace_pipe` opened without blocking, copied to a file until
/// [`TraceReader::finish`] asks it to drain what is left and stop.
pub struct TraceReader {
    /// Drain what the ring holds, then stop (tracing is off).
    stop: Arc<AtomicBool>,
    /// Stop now, whatever the ring holds (an error path, tracing may
    /// still be on and never leave the ring empty).
    abandon: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<Result<u64, String>>>,
}

impl TraceReader {
    pub fn start(pipe: &Path, out: std::fs::File) -> Result<TraceReader, String> {
        use std::os::unix::fs::OpenOptionsExt as _;
        let mut src = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
            .open(pipe)
            .map_err(|e| format!("opening {}: {e}", pipe.display()))?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let abandon = Arc::new(AtomicBool::new(false));
        let now = Arc::clone(&abandon);
        let shown = pipe.display().to_string();
        let handle = std::thread::Builder::new()
            .name("trace-reader".into())
            .spawn(move || {
                let mut dst = std::io::BufWriter::with_capacity(1 << 20, out);
                let mut buf = vec![0u8; 1 << 20];
                let mut total = 0u64;
                loop {
                    if now.load(Ordering::SeqCst) {
                        break;
                    }
                    match src.read(&mut buf) {
                        // A file at its end (tracing never ends a pipe).
                        Ok(0) if flag.load(Ordering::SeqCst) => break,
                        Ok(0) => std::thread::sleep(Duration::from_millis(10)),
                        Ok(n) => {
                            dst.write_all(&buf[..n])
                                .map_err(|e| format!("writing the trace: {e}"))?;
                            total += n as u64;
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            // Empty: done if asked to stop (tracing is off
                            // by then, so nothing more comes).
                            if flag.load(Ordering::SeqCst) {
                                break;
                            }
                            std::thread::sleep(Duration::from_millis(10));
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(format!("reading {shown}: {e}")),
                    }
                }
                dst.flush().map_err(|e| format!("writing the trace: {e}"))?;
                Ok(total)
            })
            .map_err(|e| format!("starting the trace reader: {e}"))?;
        Ok(TraceReader {
            stop,
            abandon,
            handle: Some(handle),
        })
    }

    /// Drains what the ring holds and stops (call with tracing off); the
    /// bytes read.
    pub fn finish(mut self) -> Result<u64, String> {
        self.stop.store(true, Ordering::SeqCst);
        match self.handle.take().map(|h| h.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err("the trace reader panicked".into()),
            None => Ok(0),
        }
    }
}

impl Drop for TraceReader {
    fn drop(&mut self) {
        self.abandon.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_its_start_time_is_stable() {
        let me = std::process::id();
        let t = start_time(me).expect("this process runs");
        assert_eq!(start_time(me), Some(t));
        assert_eq!(start_time(u32::MAX), None);
    }

    #[test]
    fn a_child_and_its_children_are_found_and_ended() {
        // sh starts a sleep in a session of its own, as fio's jobs do.
        let mut c = Command::new("sh");
        c.args(["-c", "setsid sleep 30 & sleep 30; wait"]);
        let mut child = FioChild::take(c).expect("started");
        let deadline = Instant::now() + Duration::from_secs(5);
        while descendants(child.id()).len() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let kids = descendants(child.id());
        assert_eq!(kids.len(), 2, "{kids:?}");
        child.end();
        assert!(
            kids.iter().all(|&p| start_time(p).is_none()),
            "every process it started has ended"
        );
        assert!(matches!(child.try_wait(), Ok(Some(_))));
    }

    #[test]
    fn mount_points_are_read_with_their_escapes() {
        assert_eq!(unescape_mount("/tmp/a\\040b"), "/tmp/a b");
        assert_eq!(unescape_mount("/plain"), "/plain");
        assert_eq!(unescape_mount("/end\\04"), "/end\\04");
        assert!(is_mount_point(Path::new("/proc")));
        assert!(!is_mount_point(Path::new("/proc/self")));
    }

    #[test]
    fn the_trace_reader_copies_until_drained_then_stops() {
        let dir = std::env::temp_dir().join(format!("iolab-reader-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("src");
        std::fs::write(&src, b"line one\nline two\n").unwrap();
        let out = dir.join("out");
        let r = TraceReader::start(&src, std::fs::File::create(&out).unwrap()).unwrap();
        // A regular file reads to its end, then 0 bytes: the reader waits
        // for more until told to stop.
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(r.finish(), Ok(18));
        assert_eq!(std::fs::read(&out).unwrap(), b"line one\nline two\n");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
