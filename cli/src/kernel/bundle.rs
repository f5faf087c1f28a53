//! A capture bundle: a directory holding one real-kernel run.
//!
//! ```text
//! bundle.toml            what was run, where, and what was changed (below)
//! job.fio                the job file as given
//! fio.json               fio's --output-format=json
//! fio.stderr             what fio printed on stderr
//! trace.txt              the kernel's trace (trace_pipe text)
//! queue.txt              every queue attribute of each device during the run
//! vm.txt                 the vm.dirty_* settings
//! meminfo-before.txt     /proc/meminfo before and after the run
//! meminfo-after.txt
//! wbt-debugfs-*.txt      wbt's debugfs state before and after, when debugfs is mounted
//! cpu-before.txt         the cpu lines of /proc/stat before and after the run
//! cpu-after.txt
//! stat-NAME-before.txt   /sys/block/NAME/stat of each device before and after the run
//! stat-NAME-after.txt
//! commit_stats.txt       btrfs only: /sys/fs/btrfs/FSID/commit_stats after the run
//! read_policy.txt        btrfs only: /sys/fs/btrfs/FSID/read_policy
//! ```
//!
//! `bundle.toml`:
//!
//! ```toml
//! layout = 1
//! kernel = "6.18.44"          # /proc/sys/kernel/osrelease
//! fio = "fio-3.33"
//! fs = "xfs"                  # xfs | btrfs | ext4 | raw
//! mirror = false
//! fsid = "…"                  # btrfs only
//! events = ["wbt:wbt_stat", …]
//! trace_clock = "mono"        # the trace clock during the run
//!
//! [[device]]                  # one per device, in the order given
//! dev = "7:0"
//! node = "/dev/loop0"
//! backing = "/var/tmp/…img"   # loop devices only
//! size = 3221225472
//! rotational = true
//! wbt_queue_depth = 128       # nr_requests before any change: the depth wbt set itself up with
//! wbt_lat_usec = 2000         # during the run
//! scheduler = "[none] mq-deadline kyber bfq"
//! nr_requests = 128
//!
//! [[knob]]                    # every knob the capture changed, and put back
//! path = "loop0/queue/wbt_lat_usec"
//! before = "2000"
//! during = "75"
//! ```

use std::fmt::Write as _;
use std::path::Path;

use crate::Failure;

/// The metadata file's name.
pub const META: &str = "bundle.toml";

/// One device of a bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleDevice {
    pub dev: String,
    pub node: String,
    pub backing: Option<String>,
    pub size: u64,
    pub rotational: bool,
    pub wbt_queue_depth: u32,
    pub wbt_lat_usec: u64,
    pub scheduler: String,
    pub nr_requests: u32,
}

/// `bundle.toml`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleMeta {
    pub kernel: String,
    pub fio: String,
    pub fs: String,
    pub mirror: bool,
    pub fsid: Option<String>,
    pub events: Vec<String>,
    /// The trace clock during the run (`mono`); absent in bundles of
    /// captures that left the clock as it was.
    pub trace_clock: Option<String>,
    pub devices: Vec<BundleDevice>,
    /// (path, before, during).
    pub knobs: Vec<(String, String, String)>,
}

fn q(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

pub fn to_toml(m: &BundleMeta) -> String {
    let mut s = String::from("# iolab kernel capture bundle\nlayout = 1\n");
    let _ = writeln!(s, "kernel = {}", q(&m.kernel));
    let _ = writeln!(s, "fio = {}", q(&m.fio));
    let _ = writeln!(s, "fs = {}", q(&m.fs));
    let _ = writeln!(s, "mirror = {}", m.mirror);
    if let Some(f) = &m.fsid {
        let _ = writeln!(s, "fsid = {}", q(f));
    }
    let ev: Vec<String> = m.events.iter().map(|e| q(e)).collect();
    let _ = writeln!(s, "events = [{}]", ev.join(", "));
    if let Some(c) = &m.trace_clock {
        let _ = writeln!(s, "trace_clock = {}", q(c));
    }
    for d in &m.devices {
        s.push_str("\n[[device]]\n");
        let _ = writeln!(s, "dev = {}", q(&d.dev));
        let _ = writeln!(s, "node = {}", q(&d.node));
        if let Some(b) = &d.backing {
            let _ = writeln!(s, "backing = {}", q(b));
        }
        let _ = writeln!(s, "size = {}", d.size);
        let _ = writeln!(s, "rotational = {}", d.rotational);
        let _ = writeln!(s, "wbt_queue_depth = {}", d.wbt_queue_depth);
        let _ = writeln!(s, "wbt_lat_usec = {}", d.wbt_lat_usec);
        let _ = writeln!(s, "scheduler = {}", q(&d.scheduler));
        let _ = writeln!(s, "nr_requests = {}", d.nr_requests);
    }
    for (path, before, during) in &m.knobs {
        s.push_str("\n[[knob]]\n");
        let _ = writeln!(s, "path = {}", q(path));
        let _ = writeln!(s, "before = {}", q(before));
        let _ = writeln!(s, "during = {}", q(during));
    }
    s
}

/// 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// Reads `DIR/bundle.toml`; errors name the file and, where the TOML
/// parser gives one, the line, and the key that is missing or wrong.
pub fn read(dir: &Path) -> Result<BundleMeta, Failure> {
    let path = dir.join(META);
    let shown = path.display().to_string();
    if !path.is_file() {
        return Err(Failure::input(format!(
            "{}: not a capture bundle (no {META}; a bundle is what `iolab kernel capture` writes)",
            dir.display()
        )));
    }
    let text = crate::load::read_text(&path).map_err(Failure::input)?;
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let line = e.span().map_or(1, |s| line_of(&text, s.start));
        Failure::input(format!("{shown}:{line}: {}", e.message()))
    })?;
    let missing = |key: &str, within: &str| {
        Failure::input(format!(
            "{shown}: {within}'{key}' is missing or not of its type"
        ))
    };
    let str_of = |t: &toml::Table, key: &str, within: &str| -> Result<String, Failure> {
        t.get(key)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
            .ok_or_else(|| missing(key, within))
    };
    let int_of = |t: &toml::Table, key: &str, within: &str| -> Result<u64, Failure> {
        t.get(key)
            .and_then(|v| v.as_integer())
            .and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| missing(key, within))
    };
    let bool_of = |t: &toml::Table, key: &str, within: &str| -> Result<bool, Failure> {
        t.get(key)
            .and_then(|v| v.as_bool())
            .ok_or_else(|| missing(key, within))
    };
    match table.get("layout").and_then(|v| v.as_integer()) {
        Some(1) => {}
        Some(n) => {
            return Err(Failure::input(format!(
                "{shown}: layout {n} is not one this iolab reads (1)"
            )));
        }
        None => return Err(missing("layout", "")),
    }
    let devices = table
        .get("device")
        .and_then(|v| v.as_array())
        .filter(|a| !a.is_empty())
        .ok_or_else(|| Failure::input(format!("{shown}: no [[device]] table")))?;
    let mut devs = Vec::new();
    for (i, d) in devices.iter().enumerate() {
        let within = format!("[[device]] {}: ", i + 1);
        let t = d.as_table().ok_or_else(|| missing("device", ""))?;
        devs.push(BundleDevice {
            dev: str_of(t, "dev", &within)?,
            node: str_of(t, "node", &within)?,
            backing: t.get("backing").and_then(|v| v.as_str()).map(str::to_owned),
            size: int_of(t, "size", &within)?,
            rotational: bool_of(t, "rotational", &within)?,
            wbt_queue_depth: u32::try_from(int_of(t, "wbt_queue_depth", &within)?)
                .map_err(|_| missing("wbt_queue_depth", &within))?,
            wbt_lat_usec: int_of(t, "wbt_lat_usec", &within)?,
            scheduler: str_of(t, "scheduler", &within)?,
            nr_requests: u32::try_from(int_of(t, "nr_requests", &within)?)
                .map_err(|_| missing("nr_requests", &within))?,
        });
    }
    let mut knobs = Vec::new();
    if let Some(a) = table.get("knob").and_then(|v| v.as_array()) {
        for (i, k) in a.iter().enumerate() {
            let within = format!("[[knob]] {}: ", i + 1);
            let t = k.as_table().ok_or_else(|| missing("knob", ""))?;
            knobs.push((
                str_of(t, "path", &within)?,
                str_of(t, "before", &within)?,
                str_of(t, "during", &within)?,
            ));
        }
    }
    let events = table
        .get("events")
        .and_then(|v| v.as_array())
        .ok_or_else(|| missing("events", ""))?
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| missing("events", ""))
        })
        .collect::<Result<_, _>>()?;
    Ok(BundleMeta {
        kernel: str_of(&table, "kernel", "")?,
        fio: str_of(&table, "fio", "")?,
        fs: str_of(&table, "fs", "")?,
        mirror: bool_of(&table, "mirror", "")?,
        fsid: table
            .get("fsid")
            .and_then(|v| v.as_str())
            .map(str::to_owned),
        events,
        trace_clock: table
            .get("trace_clock")
            .and_then(|v| v.as_str())
            .map(str::to_owned),
        devices: devs,
        knobs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> BundleMeta {
        BundleMeta {
            kernel: "6.18.44".into(),
            fio: "fio-3.33".into(),
            fs: "xfs".into(),
            mirror: false,
            fsid: None,
            events: vec!["wbt:wbt_timer".into(), "block:block_rq_issue".into()],
            trace_clock: Some("mono".into()),
            devices: vec![BundleDevice {
                dev: "7:0".into(),
                node: "/dev/loop0".into(),
                backing: Some("/dev/shm/a \"b\".img".into()),
                size: 3 << 30,
                rotational: false,
                wbt_queue_depth: 128,
                wbt_lat_usec: 75,
                scheduler: "[none] mq-deadline".into(),
                nr_requests: 32,
            }],
            knobs: vec![(
                "loop0/queue/wbt_lat_usec".into(),
                "2000".into(),
                "75".into(),
            )],
        }
    }

    #[test]
    fn metadata_written_reads_back_the_same() {
        let dir = std::env::temp_dir().join(format!("iolab-bundle-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join(META), to_toml(&meta())).expect("write");
        let back = read(&dir);
        std::fs::remove_dir_all(&dir).expect("cleanup");
        assert_eq!(back.map_err(|f| f.message).expect("reads"), meta());
    }

    #[test]
    fn a_broken_or_incomplete_bundle_says_which_file_line_and_key() {
        let dir = std::env::temp_dir().join(format!("iolab-bundle-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let err = |text: &str| {
            std::fs::write(dir.join(META), text).expect("write");
            read(&dir).map(|_| ()).expect_err("refused").message
        };
        let full = to_toml(&meta());
        let e = err(&full.replace("wbt_queue_depth = 128\n", ""));
        assert!(
            e.contains("bundle.toml: [[device]] 1: 'wbt_queue_depth' is missing"),
            "{e}"
        );
        let e = err(&full.replace("rotational = false", "rotational = maybe"));
        let line = full
            .lines()
            .position(|l| l.starts_with("rotational"))
            .expect("line")
            + 1;
        assert!(e.contains(&format!("bundle.toml:{line}:")), "{e}");
        let e = err(&full.replace("layout = 1", "layout = 9"));
        assert!(e.contains("layout 9"), "{e}");
        let e = err("layout = 1\nkernel = \"x\"\n");
        assert!(e.contains("no [[device]] table"), "{e}");
        std::fs::remove_file(dir.join(META)).expect("rm");
        let e = read(&dir).map(|_| ()).expect_err("no metadata").message;
        assert!(e.contains("not a capture bundle"), "{e}");
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
