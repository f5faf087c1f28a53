//! `iolab kernel capture`: run a fio job with the real fio on a device the
//! command makes (a loop device over a file it creates) or one the user
//! names, with the kernel's tracepoints on, and write a bundle: the trace,
//! fio's JSON, the queue's attributes, the memory and dirty-page settings.
//! Every knob, mount, loop device and file it makes is put back or removed
//! afterwards, also on error and on Ctrl-C. See `docs/kernel-validation.md`
//! for the bundle's layout.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::bundle::{self, BundleDevice, BundleMeta};
use super::preflight;
use super::procs::{self, FioChild, TraceReader};
use super::undo::{self, Undo};
use crate::Failure;

/// Filesystem made on the captured device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CaptureFs {
    /// XFS (`mkfs.xfs`).
    Xfs,
    /// btrfs (`mkfs.btrfs`); with `--mirror`, raid1 data and metadata.
    Btrfs,
    /// ext4 (`mkfs.ext4`).
    Ext4,
    /// No filesystem: the job names the device as `filename=${IOLAB_DEV}`.
    Raw,
}

impl CaptureFs {
    fn name(self) -> &'static str {
        match self {
            CaptureFs::Xfs => "xfs",
            CaptureFs::Btrfs => "btrfs",
            CaptureFs::Ext4 => "ext4",
            CaptureFs::Raw => "raw",
        }
    }

    fn mkfs(self) -> Option<&'static str> {
        match self {
            CaptureFs::Xfs => Some("mkfs.xfs"),
            CaptureFs::Btrfs => Some("mkfs.btrfs"),
            CaptureFs::Ext4 => Some("mkfs.ext4"),
            CaptureFs::Raw => None,
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct CaptureArgs {
    /// The fio job file, run unchanged by the real fio in the captured
    /// filesystem's root.
    pub job: String,
    /// The bundle directory to write (must not exist).
    #[arg(long)]
    pub out: String,
    /// A loop device over a file this command creates: SIZE, or SIZE@PATH
    /// with PATH a directory to create it in or the file to create (on
    /// /dev/shm: a RAM-backed device). Default directory: /var/tmp. Give
    /// it twice with --mirror.
    #[arg(long = "loop", value_name = "SIZE[@PATH]")]
    pub loops: Vec<String>,
    /// A block device you name instead (never any other is touched). Its
    /// data is destroyed by mkfs (every --fs but raw), or, with --fs raw,
    /// wherever a job that writes (any rw= but read and randread) writes
    /// it; either needs --destroy-data. A raw job that only reads leaves
    /// it as it was.
    #[arg(long = "dev", value_name = "/dev/X", conflicts_with = "loops")]
    pub devs: Vec<String>,
    /// Filesystem to make.
    #[arg(long, value_enum, default_value = "xfs")]
    pub fs: CaptureFs,
    /// btrfs raid1 over the two devices given.
    #[arg(long)]
    pub mirror: bool,
    /// `queue/wbt_lat_usec` for the run (0: wbt off; -1: the default).
    #[arg(long, allow_negative_numbers = true)]
    pub wbt_lat_usec: Option<i64>,
    /// `queue/scheduler` for the run.
    #[arg(long)]
    pub scheduler: Option<String>,
    /// `queue/nr_requests` for the run.
    #[arg(long)]
    pub nr_requests: Option<u32>,
    /// Events to enable, comma-separated `subsystem:event` or `subsystem`
    /// (default: the wbt events, block_rq_issue and block_rq_complete of
    /// the devices, balance_dirty_pages and global_dirty_state, and with
    /// btrfs its flush, ticket, commit and delayed-ref events).
    #[arg(long)]
    pub events: Option<String>,
    /// Per-CPU trace buffer in KiB while capturing.
    #[arg(long, default_value_t = 65536)]
    pub buffer_kb: u32,
    /// Allow destroying a --dev device's data: by mkfs, or by a raw job
    /// that writes to it.
    #[arg(long)]
    pub destroy_data: bool,
}

const DEFAULT_EVENTS: &[&str] = &[
    "wbt:wbt_stat",
    "wbt:wbt_lat",
    "wbt:wbt_step",
    "wbt:wbt_timer",
    "block:block_rq_issue",
    "block:block_rq_complete",
    "writeback:balance_dirty_pages",
    "writeback:global_dirty_state",
];

const BTRFS_EVENTS: &[&str] = &[
    "btrfs:btrfs_flush_space",
    "btrfs:btrfs_reserve_ticket",
    "btrfs:btrfs_trigger_flush",
    "btrfs:btrfs_transaction_commit",
    "btrfs:add_delayed_ref_head",
    "btrfs:run_delayed_ref_head",
];

/// One device of the capture.
pub(super) struct Target {
    pub node: String,
    /// `/sys/block/NAME` (or `/sys/class/block/NAME` for a partition).
    pub sys: PathBuf,
    /// The queue directory.
    pub queue: PathBuf,
    major: u32,
    minor: u32,
    pub backing: Option<PathBuf>,
    pub size: u64,
    /// The depth wbt set itself up with (see [`wbt_depth`]).
    pub wbt_queue_depth: u32,
}

/// A loop request: size and where its file goes.
pub(super) struct LoopSpec {
    pub size: u64,
    pub file: PathBuf,
}

pub(super) fn parse_loop(spec: &str, n: usize) -> Result<LoopSpec, Failure> {
    let (size, path) = match spec.split_once('@') {
        Some((s, p)) => (s, Some(p)),
        None => (spec, None),
    };
    let size = crate::load::size_flag("--loop", size)?;
    if size < 300 << 20 {
        return Err(Failure::input(format!(
            "--loop {spec}: {size} bytes is too small for a filesystem (300 MiB at least)"
        )));
    }
    let name = format!("iolab-capture-{}-{n}.img", std::process::id());
    let file = match path {
        None => Path::new("/var/tmp").join(name),
        Some(p) if Path::new(p).is_dir() => Path::new(p).join(name),
        Some(p) => {
            if Path::new(p).exists() {
                return Err(Failure::input(format!(
                    "--loop {spec}: {p} exists; name a directory or a file to create"
                )));
            }
            PathBuf::from(p)
        }
    };
    Ok(LoopSpec { size, file })
}

/// What `kernel capture` needs and does not have; empty when all is there.
pub(super) fn missing(fs: CaptureFs, loops: bool, tracing: bool) -> Vec<String> {
    let mut miss = Vec::new();
    let uid = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_owned))
        });
    if uid.as_deref() != Some("0") {
        miss.push("root (tracing, loop devices and mounts need it)".to_owned());
    }
    let mut need = |tool: &str, pkg: &str| {
        if undo::tool(tool).is_err() {
            miss.push(format!("{tool} (Debian: apt-get install {pkg})"));
        }
    };
    need("fio", "fio");
    need("setpriv", "util-linux");
    if let Some(tool) = fs.mkfs() {
        let pkg = match fs {
            CaptureFs::Xfs => "xfsprogs",
            CaptureFs::Btrfs => "btrfs-progs",
            _ => "e2fsprogs",
        };
        need(tool, pkg);
        need("mount", "mount");
        need("umount", "mount");
    }
    if fs == CaptureFs::Btrfs {
        need("btrfs", "btrfs-progs");
        need("blkid", "util-linux");
    }
    if loops {
        need("losetup", "mount");
    }
    if tracing && tracefs_mounted().is_none() {
        need("mount", "mount");
        need("umount", "mount");
    }
    if loops && !Path::new("/dev/loop-control").exists() {
        miss.push("loop device support (/dev/loop-control)".to_owned());
    }
    if tracing && tracefs_mounted().is_none() && !empty_dir(Path::new("/sys/kernel/tracing")) {
        miss.push("tracefs (neither mounted nor mountable at /sys/kernel/tracing)".to_owned());
    }
    miss
}

fn empty_dir(p: &Path) -> bool {
    std::fs::read_dir(p).is_ok_and(|mut d| d.next().is_none())
}

/// Where tracefs is mounted, from `/proc/mounts`.
pub fn tracefs_mounted() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        let (_src, target, kind) = (f.next()?, f.next()?, f.next()?);
        (kind == "tracefs").then(|| PathBuf::from(target))
    })
}

fn mounted_sources() -> Vec<String> {
    std::fs::read_to_string("/proc/mounts")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

/// The job may not name its own files: they would land outside the
/// captured device.
fn check_job(path: &str, text: &str, fs: CaptureFs) -> Result<(), Failure> {
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        let key = l.split('=').next().unwrap_or("").trim();
        let value = l.split_once('=').map(|(_, v)| v.trim()).unwrap_or("");
        let at = format!("{path}:{}", i + 1);
        match key {
            "directory" | "opendir" => {
                return Err(Failure::input(format!(
                    "{at}: {key}: the capture runs the job in the captured filesystem's root; remove {key}= so its files land there"
                )));
            }
            "filename" if fs == CaptureFs::Raw && value == "${IOLAB_DEV}" => {}
            "filename" if fs == CaptureFs::Raw => {
                return Err(Failure::input(format!(
                    "{at}: filename: with --fs raw the job must say filename=${{IOLAB_DEV}} (the captured device)"
                )));
            }
            // A plain name (fio's `:` separates several) lands in the
            // filesystem's root, where the job runs; a path may not.
            "filename"
                if value.contains(['/', '$'])
                    || value.split(':').any(|n| n.is_empty() || n == "..") =>
            {
                return Err(Failure::input(format!(
                    "{at}: filename: the capture runs the job in the captured filesystem's root; name files there (a name without '/' or '$') or remove filename="
                )));
            }
            _ if l.starts_with("include ") => {
                return Err(Failure::input(format!(
                    "{at}: include: the bundle keeps one job file; paste the included file in"
                )));
            }
            _ => {}
        }
    }
    if fs == CaptureFs::Raw && !text.contains("${IOLAB_DEV}") {
        return Err(Failure::input(format!(
            "{path}: with --fs raw the job must say filename=${{IOLAB_DEV}} (the captured device)"
        )));
    }
    Ok(())
}

fn sysfs_of(node: &str) -> Result<(PathBuf, PathBuf), Failure> {
    use std::os::unix::fs::FileTypeExt;
    let canon =
        std::fs::canonicalize(node).map_err(|e| Failure::input(format!("--dev {node}: {e}")))?;
    let is_block = std::fs::metadata(&canon).is_ok_and(|m| m.file_type().is_block_device());
    if !is_block {
        return Err(Failure::input(format!("--dev {node}: not a block device")));
    }
    let name = canon
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| Failure::input(format!("--dev {node}: no device name")))?
        .to_owned();
    let sys = PathBuf::from("/sys/class/block").join(&name);
    if !sys.exists() {
        return Err(Failure::input(format!("--dev {node}: not a block device")));
    }
    let queue = if sys.join("queue").exists() {
        sys.join("queue")
    } else {
        sys.join("..").join("queue")
    };
    Ok((sys, queue))
}

pub(super) fn target(node: &str, backing: Option<PathBuf>) -> Result<Target, Failure> {
    let (sys, queue) = sysfs_of(node)?;
    let dev = undo::read(&sys.join("dev")).map_err(Failure::input)?;
    let (major, minor) = dev
        .split_once(':')
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .ok_or_else(|| Failure::input(format!("{node}: device number '{dev}' unreadable")))?;
    let sectors: u64 = undo::read(&sys.join("size"))
        .map_err(Failure::input)?
        .parse()
        .unwrap_or(0);
    let wbt_queue_depth = wbt_depth(node, &sys, &queue)?;
    Ok(Target {
        node: node.to_owned(),
        sys,
        queue,
        major,
        minor,
        backing,
        size: sectors * 512,
        wbt_queue_depth,
    })
}

/// The queue depth wbt computed its limits from when it was set up with
/// the disk (kernel: `blk_queue_depth` in `wbt_init`): a driver's own
/// depth (`device/queue_depth`) if it set one, else `nr_requests` as it
/// was then. Writing `nr_requests` later does not change wbt's depth (seen
/// on 6.18), and a loop device keeps its queue settings from one use to
/// the next, so for a loop device the depth is its tag count, which is
/// what `nr_requests` is when the disk is registered without a scheduler.
fn wbt_depth(node: &str, sys: &Path, queue: &Path) -> Result<u32, Failure> {
    let num = |p: PathBuf| undo::read(&p).ok().and_then(|v| v.parse::<u32>().ok());
    let depth = if node.starts_with("/dev/loop") {
        num(sys.join("mq/0/nr_tags"))
    } else {
        num(sys.join("device/queue_depth")).or_else(|| num(queue.join("nr_requests")))
    };
    depth.ok_or_else(|| Failure::input(format!("{node}: its queue depth cannot be read")))
}

/// The mounted source among `mounts` that is `node` (by name, after
/// following links) or one of its partitions.
pub(crate) fn mounted_as(node: &str, mounts: &[String]) -> Option<String> {
    let canon = |p: &str| std::fs::canonicalize(p).unwrap_or_else(|_| PathBuf::from(p));
    let me = canon(node);
    let name = me.file_name().and_then(|n| n.to_str())?.to_owned();
    mounts
        .iter()
        .find(|src| {
            let s = canon(src);
            let s_name = s.file_name().and_then(|n| n.to_str()).unwrap_or("");
            s == me || (s.starts_with("/dev") && s_name.starts_with(&name))
        })
        .cloned()
}

/// Refuse a user-named device that is in use.
pub(super) fn check_user_dev(node: &str, t: &Target) -> Result<(), Failure> {
    if let Some(src) = mounted_as(node, &mounted_sources()) {
        return Err(Failure::input(format!(
            "--dev {node}: {src} is mounted; the capture takes only a device nothing uses"
        )));
    }
    let holders = std::fs::read_dir(t.sys.join("holders"))
        .map(|d| d.count())
        .unwrap_or(0);
    if holders > 0 {
        return Err(Failure::input(format!(
            "--dev {node}: held by another device (see {}/holders)",
            t.sys.display()
        )));
    }
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    if swaps
        .lines()
        .any(|l| l.split_whitespace().next() == Some(node))
    {
        return Err(Failure::input(format!("--dev {node}: in use as swap")));
    }
    Ok(())
}

/// Every readable attribute of a queue directory, `name = value` lines.
pub(super) fn queue_attrs(queue: &Path) -> String {
    let mut names: Vec<_> = std::fs::read_dir(queue)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    names.sort();
    let mut s = String::new();
    for p in names {
        if !p.is_file() {
            continue;
        }
        if let Ok(v) = std::fs::read_to_string(&p) {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let _ = writeln!(s, "{name} = {}", v.trim().replace('\n', " "));
        }
    }
    s
}

fn vm_settings() -> String {
    let mut s = String::new();
    for k in [
        "dirty_ratio",
        "dirty_background_ratio",
        "dirty_bytes",
        "dirty_background_bytes",
        "dirty_expire_centisecs",
        "dirty_writeback_centisecs",
    ] {
        let v = undo::read(&Path::new("/proc/sys/vm").join(k)).unwrap_or_default();
        let _ = writeln!(s, "vm.{k} = {v}");
    }
    s
}

/// The wbt state debugfs shows for a device, if debugfs is mounted.
fn wbt_debugfs(name: &str) -> Option<String> {
    let dir = Path::new("/sys/kernel/debug/block")
        .join(name)
        .join("rqos/wbt");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    names.sort();
    let mut s = String::new();
    for p in names {
        if let Ok(v) = std::fs::read_to_string(&p) {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let _ = writeln!(s, "{n} = {}", v.trim().replace('\n', "; "));
        }
    }
    Some(s)
}

/// `/proc/meminfo`, the CPU lines of `/proc/stat`, each device's IO
/// counters (`/sys/block/NAME/stat`) and its wbt debugfs state (when
/// debugfs is mounted), as `meminfo-WHEN.txt`, `cpu-WHEN.txt`,
/// `stat-NAME-WHEN.txt` and `wbt-debugfs-NAME-WHEN.txt`.
fn snapshot(out: &Path, targets: &[Target], when: &str) -> Result<(), Failure> {
    write_file(
        &out.join(format!("meminfo-{when}.txt")),
        &undo::read(Path::new("/proc/meminfo")).unwrap_or_default(),
    )?;
    // The CPUs' time counters: how busy the machine was during the run.
    let stat = undo::read(Path::new("/proc/stat")).map_err(sys_err)?;
    let cpus: Vec<&str> = stat.lines().filter(|l| l.starts_with("cpu")).collect();
    write_file(
        &out.join(format!("cpu-{when}.txt")),
        &(cpus.join("\n") + "\n"),
    )?;
    for t in targets {
        let name = t.sys.file_name().and_then(|n| n.to_str()).unwrap_or("");
        // Named after the node as the bundle records it (`/dev/loop0`:
        // `loop0`), which is how `kernel summary` finds them.
        let node = t.node.rsplit('/').next().unwrap_or(&t.node);
        write_file(
            &out.join(format!("stat-{node}-{when}.txt")),
            &undo::read(&t.sys.join("stat")).map_err(sys_err)?,
        )?;
        if let Some(s) = wbt_debugfs(name) {
            write_file(&out.join(format!("wbt-debugfs-{name}-{when}.txt")), &s)?;
        }
    }
    Ok(())
}

pub(super) fn write_file(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|e| Failure {
        code: 1,
        message: format!("writing {}: {e}", path.display()),
    })
}

pub(super) fn sys_err(message: String) -> Failure {
    Failure { code: 1, message }
}

pub fn capture(args: &CaptureArgs) -> Result<(), Failure> {
    // Everything checked before anything changes.
    let ndev = args.loops.len() + args.devs.len();
    if ndev == 0 {
        return Err(Failure::input(
            "give the device: --loop SIZE[@PATH] (a loop device this command makes) or --dev /dev/X",
        ));
    }
    if args.mirror && (args.fs != CaptureFs::Btrfs || ndev != 2) {
        return Err(Failure::input(
            "--mirror: needs --fs btrfs and two devices (--loop twice or --dev twice)",
        ));
    }
    if !args.mirror && ndev != 1 {
        return Err(Failure::input(
            "one device without --mirror (give --loop or --dev once)",
        ));
    }
    if !args.devs.is_empty() && args.fs != CaptureFs::Raw && !args.destroy_data {
        return Err(Failure::input(format!(
            "--dev: --fs {} makes a filesystem on {}, destroying its data; add --destroy-data if that is what you want",
            args.fs.name(),
            args.devs.join(" and ")
        )));
    }
    if let Some(v) = args.wbt_lat_usec
        && v < -1
    {
        return Err(Failure::input(format!(
            "--wbt-lat-usec: {v} is invalid (-1 for the default, 0 for off, or microseconds)"
        )));
    }
    if args.buffer_kb == 0 || args.buffer_kb > 1 << 20 {
        return Err(Failure::input(
            "--buffer-kb: between 1 and 1048576 KiB per CPU",
        ));
    }
    let out = PathBuf::from(&args.out);
    if out.exists() {
        return Err(Failure::input(format!(
            "--out {}: exists; name a new directory",
            args.out
        )));
    }
    let job_text = crate::load::read_text(Path::new(&args.job)).map_err(Failure::input)?;
    check_job(&args.job, &job_text, args.fs)?;
    if !args.devs.is_empty()
        && args.fs == CaptureFs::Raw
        && !args.destroy_data
        && preflight::job_writes(&job_text)
    {
        return Err(Failure::input(format!(
            "--dev: {} writes to {} (--fs raw), destroying its data there; add --destroy-data if that is what you want",
            args.job,
            args.devs.join(" and ")
        )));
    }
    let loops: Vec<LoopSpec> = args
        .loops
        .iter()
        .enumerate()
        .map(|(n, s)| parse_loop(s, n))
        .collect::<Result<_, _>>()?;
    let events = match &args.events {
        Some(list) => list
            .split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect(),
        None => {
            let mut v: Vec<String> = DEFAULT_EVENTS.iter().map(|s| (*s).to_owned()).collect();
            if args.fs == CaptureFs::Btrfs {
                v.extend(BTRFS_EVENTS.iter().map(|s| (*s).to_owned()));
            }
            v
        }
    };
    if events.is_empty() {
        return Err(Failure::input("--events: the list is empty"));
    }
    let mut user_targets = Vec::new();
    for node in &args.devs {
        let t = target(node, None)?;
        check_user_dev(node, &t)?;
        user_targets.push(t);
    }
    let miss = missing(args.fs, !args.loops.is_empty(), true);
    if !miss.is_empty() {
        return Err(Failure::input(format!(
            "kernel capture cannot run here; nothing was changed. Missing: {}",
            miss.join("; ")
        )));
    }
    preflight::machine_is_ours()?;
    preflight::fio_parses(
        &args.job,
        args.devs.first().map_or("/dev/loop0", String::as_str),
    )?;
    for (l, spec) in loops.iter().zip(&args.loops) {
        preflight::image_fits(spec, l)?;
    }
    procs::become_subreaper().map_err(sys_err)?;

    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = Arc::clone(&interrupted);
        // Only one handler per process; a second capture in the same
        // process keeps the first handler, which sets the same kind of flag.
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    }
    let check = |what: &str| -> Result<(), Failure> {
        if interrupted.load(Ordering::SeqCst) {
            Err(Failure::input(format!(
                "interrupted {what}; everything put back"
            )))
        } else {
            Ok(())
        }
    };

    std::fs::create_dir_all(&out)
        .map_err(|e| Failure::input(format!("--out {}: {e}", out.display())))?;
    // fio runs in the mount: every path it is given must be absolute.
    let out = std::fs::canonicalize(&out)
        .map_err(|e| Failure::input(format!("--out {}: {e}", args.out)))?;
    let result = (|| {
        let mut undo = Undo::new("kernel capture").map_err(sys_err)?;
        let r = run_capture(
            args,
            &out,
            &job_text,
            &loops,
            user_targets,
            &events,
            &mut undo,
            &check,
        );
        let failed = undo.unwind();
        if !failed.is_empty() {
            return Err(sys_err(format!(
                "could not put back: {}",
                failed.join("; ")
            )));
        }
        r
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&out);
    }
    result
}

#[allow(clippy::too_many_arguments)]
fn run_capture(
    args: &CaptureArgs,
    out: &Path,
    job_text: &str,
    loops: &[LoopSpec],
    user_targets: Vec<Target>,
    events: &[String],
    undo: &mut Undo,
    check: &dyn Fn(&str) -> Result<(), Failure>,
) -> Result<(), Failure> {
    // Tracefs.
    let tracing = match tracefs_mounted() {
        Some(p) => p,
        None => {
            let p = PathBuf::from("/sys/kernel/tracing");
            undo.mount(&["-t", "tracefs", "nodev"], &p)
                .map_err(sys_err)?;
            p
        }
    };
    // Tracing in use was refused before anything changed (preflight).
    for ev in events {
        let path = match ev.split_once(':') {
            Some((sys, name)) => tracing.join("events").join(sys).join(name),
            None => tracing.join("events").join(ev),
        };
        if !path.join("enable").exists() {
            return Err(Failure::input(format!(
                "--events: this kernel has no event '{ev}'"
            )));
        }
    }
    check("while setting up")?;

    // Devices.
    let mut targets = user_targets;
    for l in loops {
        undo.create_file(&l.file, l.size).map_err(sys_err)?;
        let node = undo.loop_device(&l.file).map_err(sys_err)?;
        targets.push(target(&node, Some(l.file.clone()))?);
    }
    let mut knobs = Vec::new();
    for t in &targets {
        let name = t
            .sys
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        let mut set = |knob: &str, value: String| -> Result<(), Failure> {
            let path = t.queue.join(knob);
            let before = undo::read(&path).map_err(sys_err)?;
            undo.write(&path, &value)
                .map_err(|e| Failure::input(format!("--{}: {e}", knob.replace('_', "-"))))?;
            knobs.push((
                format!("{name}/queue/{knob}"),
                before,
                undo::read(&path).unwrap_or_default(),
            ));
            Ok(())
        };
        if let Some(s) = &args.scheduler {
            set("scheduler", s.clone())?;
        }
        if let Some(n) = args.nr_requests {
            set("nr_requests", n.to_string())?;
        }
        if let Some(v) = args.wbt_lat_usec {
            set("wbt_lat_usec", v.to_string())?;
        }
    }
    check("while setting up")?;

    // Filesystem.
    let mount_dir = PathBuf::from(format!("/tmp/iolab-capture-{}", std::process::id()));
    let nodes: Vec<&str> = targets.iter().map(|t| t.node.as_str()).collect();
    if let Some(tool) = args.fs.mkfs() {
        let mut cmd = Command::new(undo::tool(tool).map_err(sys_err)?);
        match args.fs {
            CaptureFs::Xfs => cmd.args(["-q", "-f"]),
            CaptureFs::Btrfs if args.mirror => cmd.args(["-q", "-f", "-d", "raid1", "-m", "raid1"]),
            CaptureFs::Btrfs => cmd.args(["-q", "-f"]),
            _ => cmd.args(["-q", "-F"]),
        };
        cmd.args(&nodes);
        if args.fs == CaptureFs::Btrfs {
            for n in &nodes {
                undo.btrfs_registered(n).map_err(sys_err)?;
            }
        }
        undo::run(&mut cmd).map_err(sys_err)?;
        undo.create_dir(&mount_dir).map_err(sys_err)?;
        undo.mount(&[nodes[0]], &mount_dir).map_err(sys_err)?;
    }
    check("while setting up")?;

    // What the machine looked like.
    let job_path = out.join("job.fio");
    write_file(&job_path, job_text)?;
    let mut queues = String::new();
    for t in &targets {
        let _ = writeln!(queues, "[{}]", t.node);
        queues.push_str(&queue_attrs(&t.queue));
    }
    write_file(&out.join("queue.txt"), &queues)?;
    write_file(&out.join("vm.txt"), &vm_settings())?;
    snapshot(out, &targets, "before")?;

    // Tracing on.
    let tw =
        |undo: &mut Undo, rel: &str, v: &str| undo.write(&tracing.join(rel), v).map_err(sys_err);
    tw(undo, "tracing_on", "0")?;
    tw(undo, "buffer_size_kb", &args.buffer_kb.to_string())?;
    // Timestamps on the clock of the events' own `ktime_get_ns` fields
    // (btrfs_reserve_ticket's start_ns), so a wait is stamp − start.
    tw(undo, "trace_clock", "mono")?;
    std::fs::write(tracing.join("trace"), "")
        .map_err(|e| sys_err(format!("clearing the trace: {e}")))?;
    let block_filter = targets
        .iter()
        .map(|t| format!("dev == {:#x}", (t.major << 20) | t.minor))
        .collect::<Vec<_>>()
        .join(" || ");
    let wbt_filter = targets
        .iter()
        .map(|t| format!("name == \"{}:{}\"", t.major, t.minor))
        .collect::<Vec<_>>()
        .join(" || ");
    for ev in events {
        let (sys, name) = ev.split_once(':').unwrap_or((ev.as_str(), ""));
        let dir = if name.is_empty() {
            format!("events/{sys}")
        } else {
            format!("events/{sys}/{name}")
        };
        let filter = match sys {
            "block" => Some(&block_filter),
            "wbt" => Some(&wbt_filter),
            _ => None,
        };
        if let Some(f) = filter {
            tw(undo, &format!("{dir}/filter"), f)?;
        }
        tw(undo, &format!("{dir}/enable"), "1")?;
    }
    let trace_file = std::fs::File::create(out.join("trace.txt"))
        .map_err(|e| sys_err(format!("creating trace.txt: {e}")))?;
    let reader = TraceReader::start(&tracing.join("trace_pipe"), trace_file).map_err(sys_err)?;
    tw(undo, "tracing_on", "1")?;
    check("before fio started")?;

    // The job.
    let fio_err = std::fs::File::create(out.join("fio.stderr"))
        .map_err(|e| sys_err(format!("creating fio.stderr: {e}")))?;
    let mut fio = Command::new("fio");
    fio.arg("--output-format=json")
        .arg(format!("--output={}", out.join("fio.json").display()))
        .arg(&job_path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fio_err)
        .env("IOLAB_DEV", nodes[0]);
    if args.fs == CaptureFs::Raw {
        undo.fio_device(nodes[0]).map_err(sys_err)?;
    } else {
        fio.current_dir(&mount_dir);
    }
    let tool = |name: &str| undo::tool(name).map_err(sys_err);
    let mut child = FioChild::spawn(&tool("setpriv")?, &tool("fio")?, fio).map_err(sys_err)?;
    undo.fio_started(child.id()).map_err(sys_err)?;
    let status = loop {
        if let Some(s) = child.try_wait().map_err(sys_err)? {
            break s;
        }
        if check("while fio ran").is_err() {
            child.end();
            return check("while fio ran");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Drain: stop recording, let the reader empty the ring, then end it.
    std::fs::write(tracing.join("tracing_on"), "0")
        .map_err(|e| sys_err(format!("stopping the trace: {e}")))?;
    reader.finish().map_err(sys_err)?;
    drop(child);
    check("while fio ran")?;
    if !status.success() {
        let err = std::fs::read_to_string(out.join("fio.stderr")).unwrap_or_default();
        return Err(Failure::input(format!(
            "{}: fio failed ({status}): {}",
            args.job,
            err.trim()
        )));
    }

    // What it left.
    snapshot(out, &targets, "after")?;
    let mut fsid = None;
    if args.fs == CaptureFs::Btrfs
        && let Ok(uuid) = undo::run_tool("blkid", &["-s", "UUID", "-o", "value", nodes[0]])
    {
        let uuid = uuid.trim().to_owned();
        let sysfs = Path::new("/sys/fs/btrfs").join(&uuid);
        if let Ok(s) = undo::read(&sysfs.join("commit_stats")) {
            write_file(&out.join("commit_stats.txt"), &format!("{s}\n"))?;
        }
        if let Ok(s) = undo::read(&sysfs.join("read_policy")) {
            write_file(&out.join("read_policy.txt"), &format!("{s}\n"))?;
        }
        // The chunk map as committed: which device is each chunk's stripe
        // 0 decides what raid1's read policies read.
        let mount = mount_dir.display().to_string();
        let dumped = undo::run_tool("btrfs", &["filesystem", "sync", &mount]).and_then(|_| {
            undo::run_tool(
                "btrfs",
                &["inspect-internal", "dump-tree", "-t", "chunk", nodes[0]],
            )
        });
        match dumped {
            Ok(s) => write_file(&out.join("chunks.txt"), &s)?,
            // The run itself is whole; say what the bundle lacks.
            Err(e) => eprintln!("iolab: the bundle has no chunks.txt: {e}"),
        }
        fsid = Some(uuid);
    }
    let fio_version = undo::run_tool("fio", &["--version"]).unwrap_or_default();
    let meta = BundleMeta {
        kernel: undo::read(Path::new("/proc/sys/kernel/osrelease")).unwrap_or_default(),
        fio: fio_version.trim().to_owned(),
        fs: args.fs.name().to_owned(),
        mirror: args.mirror,
        fsid,
        events: events.to_vec(),
        trace_clock: Some("mono".to_owned()),
        devices: targets
            .iter()
            .map(|t| {
                let q = |k: &str| undo::read(&t.queue.join(k)).unwrap_or_default();
                BundleDevice {
                    dev: format!("{}:{}", t.major, t.minor),
                    node: t.node.clone(),
                    backing: t.backing.as_ref().map(|p| p.display().to_string()),
                    size: t.size,
                    rotational: q("rotational") == "1",
                    wbt_queue_depth: t.wbt_queue_depth,
                    wbt_lat_usec: q("wbt_lat_usec").parse().unwrap_or(0),
                    scheduler: q("scheduler"),
                    nr_requests: q("nr_requests").parse().unwrap_or(0),
                }
            })
            .collect(),
        knobs,
    };
    write_file(&out.join(bundle::META), &bundle::to_toml(&meta))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_counts_as_mounted_through_any_of_its_partitions() {
        let mounts = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            mounted_as("/dev/sdz", &mounts(&["proc", "/dev/sdz1", "tmpfs"])),
            Some("/dev/sdz1".to_owned())
        );
        assert_eq!(
            mounted_as("/dev/sdz", &mounts(&["/dev/sdz"])),
            Some("/dev/sdz".to_owned())
        );
        assert_eq!(mounted_as("/dev/sdz", &mounts(&["/dev/sdy1", "sdz"])), None);
    }

    #[test]
    fn a_job_that_names_its_own_files_is_refused_at_its_line() {
        let e = check_job("j.fio", "[a]\nrw=read\ndirectory=/data\n", CaptureFs::Xfs)
            .expect_err("refused");
        assert!(
            e.message.starts_with("j.fio:3: directory:"),
            "{}",
            e.message
        );
        let e =
            check_job("j.fio", "[a]\nfilename=/dev/sda\n", CaptureFs::Raw).expect_err("refused");
        assert!(e.message.contains("filename=${IOLAB_DEV}"), "{}", e.message);
        let e =
            check_job("j.fio", "[a]\nfilename=/mnt/x\n", CaptureFs::Btrfs).expect_err("refused");
        assert!(e.message.starts_with("j.fio:2: filename:"), "{}", e.message);
        check_job("j.fio", "[a]\nfilename=shared:other\n", CaptureFs::Btrfs)
            .expect("plain names land in the root");
        // fio expands ${VAR}: a name from the environment could be a path.
        let e = check_job("j.fio", "[a]\nfilename=${IOLAB_DEV}\n", CaptureFs::Btrfs)
            .expect_err("refused");
        assert!(e.message.starts_with("j.fio:2: filename:"), "{}", e.message);
        let e = check_job("j.fio", "include other.fio\n", CaptureFs::Xfs).expect_err("refused");
        assert!(e.message.starts_with("j.fio:1: include"), "{}", e.message);
        assert!(check_job("j.fio", "[a]\nfilename=${IOLAB_DEV}\n", CaptureFs::Raw).is_ok());
        assert!(check_job("j.fio", "[a]\nrw=randwrite\nsize=1g\n", CaptureFs::Xfs).is_ok());
    }

    #[test]
    fn loop_sizes_and_paths_are_checked_before_anything_is_made() {
        assert!(parse_loop("1g", 0).is_ok());
        let e = parse_loop("1m", 0).map(|_| ()).expect_err("small");
        assert!(e.message.contains("too small"), "{}", e.message);
        let e = parse_loop("1g@/proc/self/status", 0)
            .map(|_| ())
            .expect_err("exists");
        assert!(e.message.contains("exists"), "{}", e.message);
        let l = parse_loop("1g@/tmp", 3)
            .map_err(|f| f.message)
            .expect("a directory");
        assert!(l.file.starts_with("/tmp") && l.file.to_string_lossy().ends_with("-3.img"));
        assert!(parse_loop("lots", 0).is_err());
    }
}
