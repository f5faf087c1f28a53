//! `iolab calibrate`: short fio probes on a real device (a loop device this
//! command makes, or one the user names), a device file fitted to them for
//! the file-backed (`loop`) or the SSD model, and each probe run again on
//! the fitted file to show how well the model reproduces it.
//!
//! The probes run with the real fio, `direct=1`, `ioengine=libaio`, on the
//! raw device after one sequential pass has written all of it (a loop
//! device's file starts sparse, and reading a hole costs nothing).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use iolab_sim::cache::dirty::BdpMode;
use iolab_sim::device::DeviceConfig;
use iolab_sim::stats::{self, GroupBwMode};
use iolab_sim::{FsKind, Scenario, SchedKind};
use serde_json::Value;

use super::capture::{self, CaptureFs, Target};
use super::preflight;
use super::procs::{self, FioChild};
use super::undo::{self, Undo};
use crate::Failure;

#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// A loop device over a file this command creates: SIZE or SIZE@PATH
    /// (a directory to create it in, or the file to create; on /dev/shm a
    /// RAM-backed device).
    #[arg(long = "loop", value_name = "SIZE[@PATH]", conflicts_with = "dev")]
    pub loop_spec: Option<String>,
    /// A block device you name instead; the probes write all of it, so say
    /// --destroy-data.
    #[arg(long, value_name = "/dev/X")]
    pub dev: Option<String>,
    /// Allow the probes to overwrite the --dev device.
    #[arg(long)]
    pub destroy_data: bool,
    /// The device file to write (TOML, for `--device`).
    #[arg(long)]
    pub out: String,
    /// Seconds per probe.
    #[arg(long, default_value_t = 5)]
    pub runtime: u32,
    /// The model to fit: `loop` (a file behind the loop driver; the
    /// default with --loop) or `ssd` (flash; the default with --dev).
    #[arg(long, value_enum)]
    pub model: Option<Model>,
    /// Also keep what was measured in this new directory: each probe's
    /// fio JSON and the device's facts, for a later --from.
    #[arg(long, value_name = "DIR", conflicts_with = "from")]
    pub keep_probes: Option<String>,
    /// Fit from the probes a --keep-probes run kept in DIR instead of
    /// measuring (no root, no device; the measurement is not repeated).
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with_all = ["loop_spec", "dev", "destroy_data", "runtime"]
    )]
    pub from: Option<String>,
}

/// The device model a calibration fits.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// `kind = "loop"`: servers dealt commands in turn and one data channel.
    Loop,
    /// `kind = "ssd"` over the `nvme` preset: flash units, stripes, programs.
    Ssd,
}

impl Model {
    /// How many 4 KiB transfers of a QD1 read the model's spread leaves
    /// exact (see [`Shared::of`]).
    fn transfers(self) -> f64 {
        match self {
            Model::Loop => 1.0,
            Model::Ssd => 0.0,
        }
    }
}

/// One probe: a fio job of one access pattern.
struct Probe {
    name: &'static str,
    rw: &'static str,
    bs: &'static str,
    iodepth: u32,
    extra: &'static str,
    /// A second job run beside it (its options; "" for none): the
    /// probe's figures are still the first job's.
    beside: &'static str,
}

const PROBES: &[Probe] = &[
    Probe {
        name: "randread-4k-qd1",
        rw: "randread",
        bs: "4k",
        iodepth: 1,
        extra: "",
        beside: "",
    },
    Probe {
        name: "randread-4k-qd32",
        rw: "randread",
        bs: "4k",
        iodepth: 32,
        extra: "",
        beside: "",
    },
    Probe {
        name: "read-4k-qd8",
        rw: "read",
        bs: "4k",
        iodepth: 8,
        extra: "",
        beside: "",
    },
    Probe {
        name: "randread-4k-qd8",
        rw: "randread",
        bs: "4k",
        iodepth: 8,
        extra: "",
        beside: "",
    },
    Probe {
        name: "randread-64k-qd1",
        rw: "randread",
        bs: "64k",
        iodepth: 1,
        extra: "",
        beside: "",
    },
    Probe {
        name: "randread-128k-qd1",
        rw: "randread",
        bs: "128k",
        iodepth: 1,
        extra: "",
        beside: "",
    },
    Probe {
        name: "read-1m-qd8",
        rw: "read",
        bs: "1m",
        iodepth: 8,
        extra: "",
        beside: "",
    },
    Probe {
        name: "write-1m-qd8",
        rw: "write",
        bs: "1m",
        iodepth: 8,
        extra: "",
        beside: "",
    },
    Probe {
        name: "randwrite-4k-qd1",
        rw: "randwrite",
        bs: "4k",
        iodepth: 1,
        extra: "",
        beside: "",
    },
    Probe {
        name: "randwrite-4k-qd32",
        rw: "randwrite",
        bs: "4k",
        iodepth: 32,
        extra: "",
        beside: "",
    },
    Probe {
        name: "randwrite-4k-qd1-fsync",
        rw: "randwrite",
        bs: "4k",
        iodepth: 1,
        extra: "fsync=1\n",
        beside: "",
    },
    Probe {
        name: "fsync-under-randread-qd32",
        rw: "randwrite",
        bs: "4k",
        iodepth: 1,
        extra: "fsync=1\n",
        beside: "rw=randread\nbs=4k\niodepth=32\n",
    },
    Probe {
        name: "randrw-4k-qd16",
        rw: "randrw",
        bs: "4k",
        iodepth: 16,
        extra: "rwmixread=70\n",
        beside: "",
    },
];

fn job_text(p: &Probe, file: &str, size: u64, runtime: u32) -> String {
    let mut text = format!(
        "[global]\nioengine=libaio\ndirect=1\ntime_based\nruntime={runtime}\nsize={size}\nfilename={file}\n\n[{}]\nrw={}\nbs={}\niodepth={}\n{}",
        p.name, p.rw, p.bs, p.iodepth, p.extra
    );
    if !p.beside.is_empty() {
        text.push_str("\n[beside]\n");
        text.push_str(p.beside);
    }
    text
}

/// What a probe measured: IOPS of both directions, completion-latency
/// mean, p50 and p99 of its main direction (reads when it reads), bytes
/// per second, and the mean of the fsync latencies if it synced.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Measured {
    pub iops: f64,
    pub mean_ns: f64,
    pub p50_ns: f64,
    pub p99_ns: f64,
    pub bw: f64,
    pub sync_mean_ns: f64,
    /// fio's CPU time (`usr_cpu` + `sys_cpu` of `job_runtime`) per IO.
    pub cpu_ns_per_io: f64,
    /// fio's context switches (`ctx`) per IO.
    pub ctx_per_io: f64,
    /// fio's mean submission latency (`slat_ns`), ns.
    pub slat_mean_ns: f64,
}

/// The figures of fio's JSON (or iolab's, which has fio's keys).
pub fn measured(json: &Value) -> Option<Measured> {
    let job = json.get("jobs")?.get(0)?;
    let dir = |d: &str| job.get(d);
    let num = |v: Option<&Value>| v.and_then(Value::as_f64).unwrap_or(0.0);
    let r = dir("read")?;
    let w = dir("write")?;
    let main = if num(r.get("total_ios")) > 0.0 || num(r.get("iops")) > 0.0 {
        r
    } else {
        w
    };
    let clat = main.get("clat_ns")?;
    let pct = |q: &str| num(clat.get("percentile").and_then(|p| p.get(q)));
    let ios = num(r.get("total_ios")) + num(w.get("total_ios"));
    let per_io = |v: f64| if ios > 0.0 { v / ios } else { 0.0 };
    let cpu_share = (num(job.get("usr_cpu")) + num(job.get("sys_cpu"))) / 100.0;
    let runtime_ns = num(job.get("job_runtime")) * 1e6;
    Some(Measured {
        cpu_ns_per_io: per_io(cpu_share * runtime_ns),
        ctx_per_io: per_io(num(job.get("ctx"))),
        iops: num(r.get("iops")) + num(w.get("iops")),
        mean_ns: num(clat.get("mean")),
        slat_mean_ns: num(main.get("slat_ns").and_then(|l| l.get("mean"))),
        p50_ns: pct("50.000000"),
        p99_ns: pct("99.000000"),
        bw: num(r.get("bw_bytes")) + num(w.get("bw_bytes")),
        sync_mean_ns: num(job
            .get("sync")
            .and_then(|s| s.get("lat_ns"))
            .and_then(|l| l.get("mean"))),
    })
}

/// A fitted parameter, its value and where it came from.
struct Fitted {
    key: &'static str,
    value: String,
    from: String,
}

/// What both models read off the probes alike.
struct Shared {
    /// The sequential read bandwidth, B/s.
    seq_read: f64,
    /// The link: searched if given, else the sequential read bandwidth.
    link_mb_s: u64,
    searched: bool,
    /// One 4 KiB transfer over the link, ns.
    link4k: f64,
    /// What of a QD1 4 KiB latency the model's spread does not scale, ns
    /// (the loop model's one transfer; 0 for the SSD's, whose spread is
    /// fitted to the whole latency).
    exact: f64,
    /// The QD1 4 KiB read and write, their medians those of the
    /// log-normal the fit describes them by (see [`body_of`]).
    qd1: Measured,
    w1: Measured,
    /// Why a QD1 median was not the probe's own (see [`body_of`]).
    qd1_note: Option<String>,
    w1_note: Option<String>,
    /// The QD1 read's spread.
    sigma: f64,
    qd32_iops: f64,
}

impl Shared {
    /// `transfers`: how many 4 KiB transfers of a QD1 read the spread
    /// leaves exact.
    fn of(m: &[(&'static str, Measured)], link: Option<u64>, transfers: f64) -> Shared {
        let get = |name: &str| of(m, name).copied().unwrap_or_default();
        let seq_read = get("read-1m-qd8").bw.max(1.0);
        let link_mb_s = link.unwrap_or(((seq_read / 1e6).round() as u64).max(1));
        let link4k = 4096.0 / (link_mb_s as f64 * 1e6) * 1e9;
        let exact = transfers * link4k;
        let (qd1, qd1_note) = body_of(get("randread-4k-qd1"), exact);
        let (w1, w1_note) = body_of(get("randwrite-4k-qd1"), exact);
        Shared {
            seq_read,
            link_mb_s,
            searched: link.is_some(),
            link4k,
            exact,
            sigma: spread_of(&qd1, exact),
            qd1,
            w1,
            qd1_note,
            w1_note,
            qd32_iops: get("randread-4k-qd32").iops,
        }
    }

    /// Units busy at QD32: its IOPS times the mean service of a read of
    /// median `read_ns` (`read_ns · exp(σ²/2)` plus a transfer), and that
    /// mean service.
    fn units(&self, read_ns: f64) -> (u64, f64) {
        let mean = read_ns * (self.sigma * self.sigma / 2.0).exp() + self.link4k;
        let units = ((self.qd32_iops * mean / 1e9).round() as u64).clamp(1, 1024);
        (units, mean)
    }

    /// The entries every fitted file starts with: the host's two figures,
    /// the size and tag count, the link (under the model's `link_key`) and
    /// the read spread.
    fn head(
        &self,
        m: &[(&'static str, Measured)],
        size: u64,
        depth: u32,
        link_key: &'static str,
    ) -> Vec<Fitted> {
        let gb = size.div_ceil(1_000_000_000).max(1);
        let mut out = fit_host(m);
        out.extend([
            Fitted {
                key: "capacity_gb",
                value: gb.to_string(),
                from: format!("the device's {size} bytes"),
            },
            Fitted {
                key: "queue_depth",
                value: depth.to_string(),
                from: "the device's tag count".into(),
            },
            Fitted {
                key: link_key,
                value: self.link_mb_s.to_string(),
                from: format!(
                    "read-1m-qd8: {:.0} MB/s{}",
                    self.seq_read / 1e6,
                    if self.searched {
                        ", the bandwidth the model needs to reach it"
                    } else {
                        ""
                    }
                ),
            },
            spread_entry(
                "service_sigma",
                "randread-4k-qd1",
                &self.qd1,
                self.exact,
                self.qd1_note.as_deref(),
            ),
        ]);
        out
    }

    /// The notes of [`body_of`] for the QD1 read and write, each with its
    /// probe's name.
    fn notes(&self) -> Vec<String> {
        [
            ("randread-4k-qd1", &self.qd1_note),
            ("randwrite-4k-qd1", &self.w1_note),
        ]
        .into_iter()
        .filter_map(|(name, n)| n.as_ref().map(|n| format!("{name}: {n}")))
        .collect()
    }
}

/// How a fitted time names the median it came from: the probe's own, or
/// the log-normal's of [`body_of`] (whose note is on `sigma_key`).
fn median_word(fitted: bool, sigma_key: &str) -> String {
    match fitted {
        true => format!("the median of the log-normal (see {sigma_key})"),
        false => "median".into(),
    }
}

/// How far the mean may exceed the median before the median is taken to
/// describe no completion time the model has: a log-normal's mean is
/// `exp(σ²/2)` times its median, 3 at σ = 1.48, where its p99 is already
/// 31 times its median.
const MEAN_OVER_MEDIAN: f64 = 3.0;

/// A QD1 probe's figures as the fit reads them: as measured when its
/// median lies in the body of its completion times; otherwise (the mean
/// more than [`MEAN_OVER_MEDIAN`] times the median, or the median no
/// longer than the `exact` ns the spread does not scale) with the median
/// of the log-normal that has the probe's mean and p99 (less `exact`
/// each), and a note saying so. That happens where most IOs complete
/// inside their own submission: on a loop device over a file in RAM, the
/// loop driver's worker thread, woken on fio's own CPU, can preempt fio in
/// `io_submit` and serve the read before the system call returns (seen in
/// the `workqueue` and `block` events of Linux 6.18). fio's completion
/// latency of those IOs is then a fraction of a microsecond, their time is
/// in its submission latency, and the median says nothing of the device's
/// service; the loop model has no such path.
fn body_of(m: Measured, exact: f64) -> (Measured, Option<String>) {
    let (p50, mean, p99) = (m.p50_ns - exact, m.mean_ns - exact, m.p99_ns - exact);
    if m.p50_ns <= 0.0 || (p50 > 0.0 && m.mean_ns <= MEAN_OVER_MEDIAN * m.p50_ns) {
        return (m, None);
    }
    if mean <= 0.0 || p99 <= mean {
        return (m, None);
    }
    // p99/mean = exp(2.326 σ − σ²/2): the smaller root, σ at most 2.
    let r = (p99 / mean).ln();
    let z: f64 = 2.326;
    let sigma = (z - (z * z - 2.0 * r).max(0.0).sqrt()).min(2.0);
    let median = mean / (sigma * sigma / 2.0).exp();
    let note = format!(
        "its median {:.1} us is no completion time of the device (mean {:.1} us, p99 {:.1} us: most IOs completed before their submission returned); fitted to the log-normal with that mean and p99, median {:.1} us",
        m.p50_ns / 1000.0,
        m.mean_ns / 1000.0,
        m.p99_ns / 1000.0,
        (median + exact) / 1000.0
    );
    (
        Measured {
            p50_ns: median + exact,
            ..m
        },
        Some(note),
    )
}

/// The queue's cache flags, the last entries of every fitted file.
fn cache_flags(wc: bool, fua: bool) -> [Fitted; 2] {
    [
        Fitted {
            key: "write_cache",
            value: wc.to_string(),
            from: "queue/write_cache".into(),
        },
        Fitted {
            key: "fua",
            value: fua.to_string(),
            from: "queue/fua".into(),
        },
    ]
}

/// `key` = the spread of probe `name`'s figures `m` less `exact` ns (see
/// [`spread_of`]), with its source.
fn spread_entry(
    key: &'static str,
    name: &str,
    m: &Measured,
    exact: f64,
    note: Option<&str>,
) -> Fitted {
    let from = if exact > 0.0 {
        format!(
            "{name}: p99/p50 = ({:.1} - t)/({:.1} - t) us = exp(2.326 sigma), t = {:.1} us, one 4 KiB transfer",
            m.p99_ns / 1000.0,
            m.p50_ns / 1000.0,
            exact / 1000.0
        )
    } else {
        format!(
            "{name}: p99/p50 = {:.1}/{:.1} us = exp(2.326 sigma)",
            m.p99_ns / 1000.0,
            m.p50_ns / 1000.0
        )
    };
    let from = match note {
        Some(n) => format!("{from}; {n}"),
        None => from,
    };
    Fitted {
        key,
        value: format!("{}", spread_of(m, exact)),
        from,
    }
}

/// The SSD parameters the probes determine (`base = "nvme"` supplies the
/// rest). The model's times are medians (its spread has median 1), so
/// they are fitted to the probes' medians; times in ns in, µs out.
///
/// * `link_mb_s`, `channel_mb_s`: `link` if given (searched, see
///   [`fit_all`]), else the sequential read bandwidth.
/// * `service_sigma`: the QD1 4 KiB read's p99/p50 is `exp(2.326 σ)`.
/// * `read_us`: the QD1 4 KiB read's median less two 4 KiB transfers.
/// * units (`channels` × `luns_per_channel`): QD32 4 KiB read IOPS times
///   the mean read service (`read_us · exp(σ²/2)` plus a transfer).
/// * `ack_us`: the QD1 4 KiB write's median less its transfer (the
///   controller overhead is folded into the read and ack times).
/// * `program_us`: the sequential write bandwidth over the units' 16 KiB
///   pages.
/// * `flush_fixed_us`: the mean fsync of the QD1 write+fsync probe less
///   one program.
fn fit(
    m: &[(&'static str, Measured)],
    size: u64,
    wc: bool,
    fua: bool,
    depth: u32,
    link: Option<u64>,
    program: Option<u64>,
) -> Vec<Fitted> {
    let get = |name: &str| of(m, name).copied().unwrap_or_default();
    let sh = Shared::of(m, link, Model::Ssd.transfers());
    let (qd1, w1, link4k) = (sh.qd1, sh.w1, sh.link4k);
    let us = |ns: f64| (ns / 1000.0).round().max(0.0) as u64;
    let read_ns = (qd1.p50_ns - 2.0 * link4k).max(1000.0);
    let read_ns = us(read_ns).max(1) as f64 * 1000.0;
    let (units, mean_service) = sh.units(read_ns);
    let channels = units.min(8);
    let luns = units.div_ceil(channels);
    let units = channels * luns;
    let ack = (w1.p50_ns - link4k).max(0.0);
    let seq_write = get("write-1m-qd8").bw.max(1.0);
    // Programs limit the bandwidth unless the link does.
    let link_bw = sh.link_mb_s as f64 * 1e6;
    let prog_ns = match program {
        Some(us) => us as f64 * 1000.0,
        None if seq_write < 0.95 * link_bw => units as f64 * 16384.0 / seq_write * 1e9,
        None => units as f64 * 16384.0 / link_bw * 1e9,
    };
    let sync = get("randwrite-4k-qd1-fsync").sync_mean_ns;
    let flush_fixed = (sync - prog_ns).max(0.0);
    let f = |key, value: String, from: String| Fitted { key, value, from };
    let mut out = sh.head(m, size, depth, "link_mb_s");
    out.extend([
        f(
            "channel_mb_s",
            sh.link_mb_s.to_string(),
            "as fast as the link (the probes cannot tell them apart)".into(),
        ),
        f(
            "cmd_overhead_us",
            "0".into(),
            "folded into read_us and ack_us (the probes cannot tell them apart)".into(),
        ),
        f(
            "read_us",
            us(read_ns).max(1).to_string(),
            format!(
                "randread-4k-qd1: {} {:.1} us less two 4 KiB transfers",
                median_word(sh.qd1_note.is_some(), "service_sigma"),
                qd1.p50_ns / 1000.0
            ),
        ),
        f("channels", channels.to_string(), format!("{units} units")),
        f(
            "luns_per_channel",
            luns.to_string(),
            format!(
                "randread-4k-qd32: {:.0} IOPS x mean service {:.1} us = {units} units busy",
                sh.qd32_iops,
                mean_service / 1000.0
            ),
        ),
        f(
            "ack_us",
            us(ack).to_string(),
            format!(
                "randwrite-4k-qd1: {} {:.1} us less its 4 KiB transfer",
                median_word(sh.w1_note.is_some(), "write_sigma"),
                w1.p50_ns / 1000.0
            ),
        ),
        f(
            "program_us",
            us(prog_ns).max(1).to_string(),
            format!(
                "write-1m-qd8: {:.0} MB/s over {units} units of 16 KiB pages{}",
                seq_write / 1e6,
                if program.is_some() {
                    ", searched so the model's buffer and programs give it"
                } else {
                    ""
                }
            ),
        ),
        f(
            "flush_fixed_us",
            us(flush_fixed).to_string(),
            format!(
                "randwrite-4k-qd1-fsync: fsync mean {:.1} us less one program",
                sync / 1000.0
            ),
        ),
        f(
            "flush_queued",
            "true".into(),
            "a blk-mq FLUSH is queued".into(),
        ),
        f(
            "gc",
            "\"none\"".into(),
            "a loop device or a short run: no GC seen".into(),
        ),
    ]);
    out.extend(cache_flags(wc, fua));
    out
}

/// The job thread's host time: two probes, two unknowns. At QD1 the
/// thread sleeps for every completion, so 1/IOPS less the mean `clat` is
/// `host_io_us` plus one wake-up per context switch; at QD32 fio's CPU
/// time per IO is `host_io_us` plus the (few) wake-ups it still has.
/// Without two different context-switch rates (or with a negative
/// result) all of the QD1 remainder is `host_io_us`. `host_submit_us` is
/// the QD32 probe's mean `slat` less its wake-ups, at most `host_io_us`.
fn fit_host(m: &[(&'static str, Measured)]) -> Vec<Fitted> {
    let qd1 = of(m, "randread-4k-qd1").copied().unwrap_or_default();
    let qd32 = of(m, "randread-4k-qd32").copied().unwrap_or_default();
    let gap = if qd1.iops > 0.0 {
        (1e9 / qd1.iops - qd1.mean_ns).max(0.0)
    } else {
        0.0
    };
    let dctx = qd1.ctx_per_io - qd32.ctx_per_io;
    let (host, wake, from) = match dctx > 0.2 && qd32.cpu_ns_per_io > 0.0 {
        true => {
            let wake = (gap - qd32.cpu_ns_per_io) / dctx;
            let host = qd32.cpu_ns_per_io - qd32.ctx_per_io * wake;
            if wake >= 0.0 && host >= 0.0 {
                (host, wake, true)
            } else {
                (gap, 0.0, false)
            }
        }
        false => (gap, 0.0, false),
    };
    // Rounded as the file keeps them, so it never exceeds host_io_us.
    let round = |v: f64| (v / 100.0).round() * 100.0;
    let submit = round((qd32.slat_mean_ns - qd32.ctx_per_io * wake).max(0.0)).min(round(host));
    let gap_text = format!(
        "randread-4k-qd1: 1/IOPS {:.1} us less the mean completion latency {:.1} us = {:.1} us with {:.2} context switches per IO",
        if qd1.iops > 0.0 { 1e6 / qd1.iops } else { 0.0 },
        qd1.mean_ns / 1000.0,
        gap / 1000.0,
        qd1.ctx_per_io
    );
    let cpu_text = format!(
        "randread-4k-qd32: fio's CPU {:.1} us per IO with {:.2} context switches per IO",
        qd32.cpu_ns_per_io / 1000.0,
        qd32.ctx_per_io
    );
    vec![
        Fitted {
            key: "host_io_us",
            value: format!("{:.1}", host / 1000.0),
            from: if from {
                format!("{cpu_text}, less its wake-ups")
            } else {
                format!("{gap_text} (no wake-up could be told apart)")
            },
        },
        Fitted {
            key: "host_wake_us",
            value: format!("{:.1}", wake / 1000.0),
            from: if from {
                format!("{gap_text}, less host_io_us, per context switch more than at QD32")
            } else {
                "0: see host_io_us".into()
            },
        },
        Fitted {
            key: "host_submit_us",
            value: format!("{:.1}", submit / 1000.0),
            from: format!(
                "randread-4k-qd32: fio's mean slat {:.1} us less {:.2} wake-ups per IO, at most host_io_us",
                qd32.slat_mean_ns / 1000.0,
                qd32.ctx_per_io
            ),
        },
    ]
}

/// The `loop` model's parameters.
///
/// * `read_mb_s`, `write_mb_s`: `link` and `write` if given (searched,
///   see [`fit_all`]), else the sequential read and write bandwidths.
/// * `service_sigma`, `write_sigma`: the QD1 4 KiB read's and write's
///   p99/p50, each less one 4 KiB transfer, is `exp(2.326 σ)`.
/// * `read_us`, `write_us`: the QD1 4 KiB read's and write's medians less
///   one 4 KiB transfer.
/// * `units`: QD32 4 KiB read IOPS times the mean read service.
/// * `write_units`: given (scanned on the mixed probe and the QD32 random writes, see [`fit_all`]),
///   0 without one.
/// * `flush_us`: what an fsync after each write adds to the QD1 write's
///   period (fio's fsync latency overlaps the thread's own time).
/// * `flush_drains`: given (chosen on the fsync under load, see
///   [`fit_all`]), `false` without that probe.
/// * `transfer_sigma`, `write_transfer_sigma`: given (scanned on the
///   1 MiB probes, see [`fit_all`]), 0 without them.
fn fit_loop(
    m: &[(&'static str, Measured)],
    size: u64,
    wc: bool,
    fua: bool,
    depth: u32,
    s: &Searched,
) -> Vec<Fitted> {
    let Searched {
        link,
        second: write,
        write_units,
        drains,
        transfers: [read_transfer, write_transfer],
    } = *s;
    let sh = Shared::of(m, link, Model::Loop.transfers());
    let (qd1, w1) = (sh.qd1, sh.w1);
    let seq_write = of(m, "write-1m-qd8").map_or(0.0, |p| p.bw);
    let write_mb_s = write.unwrap_or(((seq_write / 1e6).round() as u64).max(1));
    let tenth = |ns: f64| ((ns / 100.0).round() / 10.0).max(0.1);
    let read_us = tenth(qd1.p50_ns - sh.link4k);
    let write_us = tenth(w1.p50_ns - sh.link4k);
    let (units, mean_service) = sh.units(read_us * 1000.0);
    // What an fsync adds to each write: the probes' periods, not fio's
    // sync latency, which overlaps the thread's own time.
    let period = |p: Measured| if p.iops > 0.0 { 1e9 / p.iops } else { 0.0 };
    let synced = of(m, "randwrite-4k-qd1-fsync").copied().unwrap_or_default();
    let flush = (period(synced) - period(w1)).max(0.0);
    let f = |key, value: String, from: String| Fitted { key, value, from };
    let mut out = sh.head(m, size, depth, "read_mb_s");
    // The write bandwidth beside the read's.
    let at = out
        .iter()
        .position(|e| e.key == "read_mb_s")
        .map_or(out.len(), |i| i + 1);
    out.insert(
        at,
        f(
            "write_mb_s",
            write_mb_s.to_string(),
            format!(
                "write-1m-qd8: {:.0} MB/s{}",
                seq_write / 1e6,
                if write.is_some() {
                    ", the bandwidth the model needs to reach it"
                } else {
                    ""
                }
            ),
        ),
    );
    out.extend([
        f(
            "units",
            units.to_string(),
            format!(
                "randread-4k-qd32: {:.0} IOPS x mean service {:.1} us",
                sh.qd32_iops,
                mean_service / 1000.0
            ),
        ),
        match write_units {
            Some(w) => f("write_units", w.units.to_string(), w.from.clone()),
            None => f(
                "write_units",
                "0".into(),
                "no randrw-4k-qd16 probe: writes take the read servers' turns".into(),
            ),
        },
        f(
            "read_us",
            format!("{read_us}"),
            format!(
                "randread-4k-qd1: {} {:.1} us less one 4 KiB transfer",
                median_word(sh.qd1_note.is_some(), "service_sigma"),
                qd1.p50_ns / 1000.0
            ),
        ),
        f(
            "write_us",
            format!("{write_us}"),
            format!(
                "randwrite-4k-qd1: {} {:.1} us less one 4 KiB transfer",
                median_word(sh.w1_note.is_some(), "write_sigma"),
                w1.p50_ns / 1000.0
            ),
        ),
        f(
            "flush_us",
            format!("{}", tenth(flush)),
            format!(
                "randwrite-4k-qd1-fsync: 1/IOPS {:.1} us less randwrite-4k-qd1's {:.1} us",
                period(synced) / 1000.0,
                period(w1) / 1000.0
            ),
        ),
        match drains {
            Some(d) => f("flush_drains", d.drains.to_string(), d.from.clone()),
            None => f(
                "flush_drains",
                "false".into(),
                "no fsync-under-randread-qd32 probe: a FLUSH waits for nothing in flight".into(),
            ),
        },
        spread_entry(
            "write_sigma",
            "randwrite-4k-qd1",
            &w1,
            sh.exact,
            sh.w1_note.as_deref(),
        ),
    ]);
    for (key, probe, scanned) in [
        ("transfer_sigma", "read-1m-qd8", read_transfer),
        ("write_transfer_sigma", "write-1m-qd8", write_transfer),
    ] {
        out.push(match scanned {
            Some(t) => f(key, format!("{}", t.sigma), t.from.clone()),
            None => f(
                key,
                "0".into(),
                format!("no {probe} probe: exact transfers"),
            ),
        });
    }
    out.extend(cache_flags(wc, fua));
    out
}

/// The σ of a log-normal whose p99/p50 is the probe's (`exp(2.326 σ)`)
/// once `exact` ns that the spread does not scale are taken from both,
/// to three places.
fn spread_of(m: &Measured, exact: f64) -> f64 {
    let (p50, p99) = (m.p50_ns - exact, m.p99_ns - exact);
    let sigma = if p50 > 0.0 && p99 > p50 {
        ((p99 / p50).ln() / 2.326).clamp(0.0, 2.0)
    } else {
        0.0
    };
    (sigma * 1000.0).round() / 1000.0
}

/// Fitted keys of the device file's top level (the rest go in the
/// model's table).
const TOP_LEVEL: [&str; 3] = ["host_io_us", "host_wake_us", "host_submit_us"];

fn device_toml(model: Model, name: &str, source: &str, fitted: &[Fitted]) -> String {
    let (head, table) = match model {
        Model::Loop => (
            "every parameter names the probe it came from.\nname = \"{name}\"\nkind = \"loop\"\n",
            "loop",
        ),
        Model::Ssd => (
            "each parameter names the probe it came from; the rest come from the base preset.\nname = \"{name}\"\nkind = \"ssd\"\nbase = \"nvme\"\n",
            "ssd",
        ),
    };
    let mut s = format!(
        "# Fitted by `iolab calibrate` from fio probes on {source};\n# {}",
        head.replace("{name}", name)
    );
    let (top, rest): (Vec<&Fitted>, Vec<&Fitted>) =
        fitted.iter().partition(|f| TOP_LEVEL.contains(&f.key));
    for f in top {
        let _ = writeln!(s, "# {}\n{} = {}", f.from, f.key, f.value);
    }
    let _ = write!(s, "\n[{table}]\n");
    for f in rest {
        let _ = writeln!(s, "# {}\n{} = {}", f.from, f.key, f.value);
    }
    s
}

/// `job` on `device` at seed 1, the device at its fitted speed: a run
/// factor ([`RUN_SPREAD`]) would move every probe by seed 1's draw.
fn simulate(job: &Path, device: &DeviceConfig) -> Result<Measured, Failure> {
    let path = job.to_str().unwrap_or_default();
    let mut device = device.clone();
    if let Some(l) = device.loop_dev.as_mut() {
        (l.run_sigma, l.write_run_sigma) = (0.0, 0.0);
    }
    let jobfile = crate::load::jobs(&[path.to_owned()], &[], 4 << 30, 2)?;
    let scenario = Scenario {
        jobs: jobfile.jobs,
        device,
        mem_bytes: 4 << 30,
        seed: 1,
        fs: FsKind::Raw,
        bdp: BdpMode::Paced,
        group_bw: GroupBwMode::Sum,
        scheduler: SchedKind::None,
        trace: false,
        volume: None,
        cpus: 2,
        io_budget: None,
    };
    let none = iolab_sim::parse_variant("none").map_err(|e| Failure::input(e.to_string()))?;
    let out = iolab_sim::run(&scenario, &none, &mut |_| {}).map_err(|e| Failure {
        code: 1,
        message: format!("simulating {path}: {e}"),
    })?;
    let json = stats::json_output(&out.report, out.extra);
    measured(&json).ok_or_else(|| Failure {
        code: 1,
        message: format!("simulating {path}: no figures in the report"),
    })
}

fn pct(sim: f64, real: f64) -> f64 {
    if real == 0.0 {
        0.0
    } else {
        100.0 * (sim - real) / real
    }
}

/// What a measurement found: each probe's figures (and fio's JSON as it
/// wrote it), and the facts about the device a fit needs.
struct Probed {
    real: Vec<(&'static str, Measured)>,
    json: Vec<String>,
    /// The probes of [`RUN_SPREAD`] run again, [`REPEATS`] rounds.
    again: Vec<Again>,
    size: u64,
    write_cache: bool,
    fua: bool,
    /// The queue depth as capture reads it for wbt.
    depth: u32,
    runtime: u32,
    /// What the device was, for the fitted file's first line.
    source: String,
    /// A loop device this command made (the default model is `loop`).
    made_loop: bool,
}

/// How many times the probes of [`RUN_SPREAD`] run again, after every
/// probe has run once.
const REPEATS: u32 = 3;

/// The run factors' σ and the probes each is read from: a run's spread
/// in IOPS over a probe's runs (the first and [`REPEATS`] more), the
/// largest of its probes' (the writes': large and sequential, small and
/// random at depth as writeback issues them).
const RUN_SPREAD: [(&str, &[&str]); 2] = [
    ("run_sigma", &["randread-4k-qd1"]),
    ("write_run_sigma", &["write-1m-qd8", "randwrite-4k-qd32"]),
];

/// The probes run again, in their order.
fn repeated() -> impl Iterator<Item = &'static str> {
    RUN_SPREAD
        .iter()
        .flat_map(|&(_, names)| names.iter().copied())
}

/// Repeated probes added after measurements were first kept with
/// repeats: such a measurement may lack theirs.
const LATER_REPEATS: [&str; 1] = ["randwrite-4k-qd32"];

/// The file stem of probe `name`'s run again in `round`.
fn again_stem(name: &str, round: u32) -> String {
    format!("{name}.again-{round}")
}

/// A probe of [`RUN_SPREAD`] run again.
struct Again {
    name: &'static str,
    round: u32,
    m: Measured,
    /// fio's JSON as it wrote it.
    json: String,
}

/// The probe of this name.
fn probe(name: &str) -> &'static Probe {
    PROBES.iter().find(|p| p.name == name).expect("a probe")
}

/// The run factors' entries: for each of [`RUN_SPREAD`], the sample
/// standard deviation of the log of a probe's IOPS over its runs, to
/// three places (what a 5 s probe's own noise adds is well under a
/// percent for these), the largest of its probes run again; 0, saying
/// why, without repeats.
fn run_spreads(real: &[(&'static str, Measured)], again: &[Again]) -> Vec<Fitted> {
    RUN_SPREAD
        .iter()
        .map(|&(key, names)| {
            let spreads: Vec<(f64, String)> = names
                .iter()
                .filter_map(|&name| {
                    let runs: Vec<f64> = of(real, name)
                        .map(|m| m.iops)
                        .into_iter()
                        .chain(again.iter().filter(|a| a.name == name).map(|a| a.m.iops))
                        .filter(|&x| x > 0.0)
                        .collect();
                    if runs.len() < 2 {
                        return None;
                    }
                    let logs: Vec<f64> = runs.iter().map(|x| x.ln()).collect();
                    let sd = stats::stddev(&logs, stats::StddevForm::Sample);
                    let list: Vec<String> = runs.iter().map(|x| format!("{x:.0}")).collect();
                    let said =
                        format!("{name} run {} times: IOPS {}", runs.len(), list.join(" / "));
                    Some((sd, said))
                })
                .collect();
            let Some(largest) = spreads.iter().map(|s| s.0).reduce(f64::max) else {
                let from = match names {
                    [one] => format!("{one} was not run again: every run alike"),
                    many => format!("{} were not run again: every run alike", many.join(" and ")),
                };
                return Fitted {
                    key,
                    value: "0".into(),
                    from,
                };
            };
            let sigma = (largest * 1000.0).round() / 1000.0;
            let from = match spreads.as_slice() {
                [(_, one)] => format!("{one}; the standard deviation of their logs"),
                many => {
                    let each: Vec<String> = many
                        .iter()
                        .map(|(sd, said)| format!("{said} (σ {sd:.3})"))
                        .collect();
                    format!(
                        "{}; the largest standard deviation of a probe's logs",
                        each.join("; ")
                    )
                }
            };
            Fitted {
                key,
                value: format!("{}", sigma.min(2.0)),
                from,
            }
        })
        .collect()
}

/// The smallest device a kept measurement may describe: the 300 MiB a
/// loop device the probes run on needs at least.
const MIN_PROBED_BYTES: u64 = 300 << 20;
/// The largest: the simulator's largest file (16 TiB), which the probes'
/// files, most of the device, must fit.
const MAX_PROBED_BYTES: u64 = 16 << 40;

/// The facts file of a kept measurement, beside `PROBE.json` per probe.
const FACTS: &str = "device.json";

pub fn calibrate(args: &CalibrateArgs) -> Result<(), Failure> {
    let out = PathBuf::from(&args.out);
    if out.exists() {
        return Err(Failure::input(format!(
            "--out {}: exists; name a new file",
            args.out
        )));
    }
    // Its directory can be written, before any probe runs.
    crate::outputs::Claims::default().file("--out", &out)?;
    if let Some(dir) = &args.from {
        let probed = read_kept(Path::new(dir))?;
        let scratch = PathBuf::from(format!("/tmp/iolab-refit-{}", std::process::id()));
        std::fs::create_dir_all(&scratch)
            .map_err(|e| capture::sys_err(format!("{}: {e}", scratch.display())))?;
        let r = fit_file(args, &probed, &scratch);
        let _ = std::fs::remove_dir_all(&scratch);
        return finish(&out, r?);
    }
    if args.runtime == 0 || args.runtime > 600 {
        return Err(Failure::input("--runtime: 1 to 600 seconds per probe"));
    }
    if let Some(keep) = args.keep_probes.as_ref().filter(|k| Path::new(k).exists()) {
        return Err(Failure::input(format!(
            "--keep-probes {keep}: exists; name a new directory"
        )));
    }
    let loop_spec = match (&args.loop_spec, &args.dev) {
        (Some(l), None) => Some(capture::parse_loop(l, 0)?),
        (None, Some(_)) => None,
        _ => {
            return Err(Failure::input(
                "give the device: --loop SIZE[@PATH], --dev /dev/X, or --from DIR",
            ));
        }
    };
    let mut user = None;
    if let Some(node) = &args.dev {
        if !args.destroy_data {
            return Err(Failure::input(format!(
                "--dev {node}: the probes write all of it, destroying its data; add --destroy-data if that is what you want"
            )));
        }
        let t = capture::target(node, None)?;
        capture::check_user_dev(node, &t)?;
        user = Some(t);
    }
    let miss = capture::missing(CaptureFs::Raw, loop_spec.is_some(), false);
    if !miss.is_empty() {
        return Err(Failure::input(format!(
            "calibrate cannot run here; nothing was changed. Missing: {}",
            miss.join("; ")
        )));
    }
    preflight::machine_is_ours()?;
    if let (Some(l), Some(spec)) = (&loop_spec, &args.loop_spec) {
        preflight::image_fits(spec, l)?;
    }
    procs::become_subreaper().map_err(capture::sys_err)?;

    // Ctrl-C reaches fio too (it ends, and its probe fails); the handler
    // keeps this process alive long enough to put everything back.
    let interrupted = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let flag = std::sync::Arc::clone(&interrupted);
        let _ = ctrlc::set_handler(move || flag.store(true, std::sync::atomic::Ordering::SeqCst));
    }
    let mut undo = Undo::new("calibrate").map_err(capture::sys_err)?;
    let r = run_probes(args, loop_spec.as_ref(), user, &mut undo, &interrupted);
    let failed = undo.unwind();
    if !failed.is_empty() {
        return Err(capture::sys_err(format!(
            "could not put back: {}",
            failed.join("; ")
        )));
    }
    finish(&out, r?)
}

/// Writes the fitted file and prints the table.
fn finish(out: &Path, (text, table): (String, String)) -> Result<(), Failure> {
    crate::outputs::write_atomic(out, text.as_bytes())
        .map_err(|e| Failure::input(format!("--out {e}")))?;
    crate::write_out(&mut std::io::stdout().lock(), &table)
}

fn run_probes(
    args: &CalibrateArgs,
    loop_spec: Option<&capture::LoopSpec>,
    user: Option<Target>,
    undo: &mut Undo,
    interrupted: &std::sync::atomic::AtomicBool,
) -> Result<(String, String), Failure> {
    let sys = capture::sys_err;
    let check = || {
        if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
            Err(Failure::input("interrupted; everything put back"))
        } else {
            Ok(())
        }
    };
    let t = match (loop_spec, user) {
        (Some(l), _) => {
            undo.create_file(&l.file, l.size).map_err(sys)?;
            let node = undo.loop_device(&l.file).map_err(sys)?;
            capture::target(&node, Some(l.file.clone()))?
        }
        (None, Some(t)) => t,
        (None, None) => return Err(Failure::input("no device")),
    };
    let scratch = PathBuf::from(format!("/tmp/iolab-calibrate-{}", std::process::id()));
    undo.create_tree(&scratch).map_err(sys)?;
    let (setpriv, fio_tool) = (
        undo::tool("setpriv").map_err(sys)?,
        undo::tool("fio").map_err(sys)?,
    );
    undo.fio_device(&t.node).map_err(sys)?;
    let mut fio = |job: &Path, json: &Path| -> Result<(Value, String), Failure> {
        let err = json.with_extension("stderr");
        let mut cmd = Command::new("fio");
        cmd.arg("--output-format=json")
            .arg(format!("--output={}", json.display()))
            .arg(job)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(
                std::fs::File::create(&err).map_err(|e| sys(format!("{}: {e}", err.display())))?,
            );
        let mut child = FioChild::spawn(&setpriv, &fio_tool, cmd).map_err(sys)?;
        undo.fio_started(child.id()).map_err(sys)?;
        let status = loop {
            if let Some(s) = child.try_wait().map_err(sys)? {
                break s;
            }
            if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
                child.end();
                return Err(Failure::input("interrupted; everything put back"));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        if !status.success() {
            return Err(sys(format!(
                "fio {} failed: {}",
                job.display(),
                std::fs::read_to_string(&err).unwrap_or_default().trim()
            )));
        }
        let text =
            std::fs::read_to_string(json).map_err(|e| sys(format!("{}: {e}", json.display())))?;
        let v = serde_json::from_str(&text).map_err(|e| sys(format!("{}: {e}", json.display())))?;
        Ok((v, text))
    };
    // Write the whole device once.
    let fill = scratch.join("fill.fio");
    std::fs::write(
        &fill,
        format!(
            "[fill]\nioengine=libaio\ndirect=1\nrw=write\nbs=1m\niodepth=8\nsize={}\nfilename={}\n",
            t.size, t.node
        ),
    )
    .map_err(|e| sys(format!("{}: {e}", fill.display())))?;
    eprintln!("iolab: writing all of {} once", t.node);
    check()?;
    let filled = fio(&fill, &scratch.join("fill.json"));
    check()?;
    filled?;
    let mut probe_once = |p: &Probe, stem: &str| -> Result<(Measured, String), Failure> {
        check()?;
        let job = scratch.join(format!("{stem}.fio"));
        std::fs::write(&job, job_text(p, &t.node, t.size, args.runtime))
            .map_err(|e| sys(format!("{}: {e}", job.display())))?;
        let out = fio(&job, &scratch.join(format!("{stem}.json")));
        check()?;
        let (v, text) = out?;
        let m = measured(&v).ok_or_else(|| sys(format!("fio's JSON for {stem} has no figures")))?;
        Ok((m, text))
    };
    let (mut real, mut json) = (Vec::new(), Vec::new());
    for p in PROBES {
        eprintln!("iolab: probe {} ({} s)", p.name, args.runtime);
        let (m, text) = probe_once(p, p.name)?;
        real.push((p.name, m));
        json.push(text);
    }
    // The run-to-run spread: the same probes again, after all the others.
    let mut again = Vec::new();
    for round in 1..=REPEATS {
        for name in repeated() {
            eprintln!(
                "iolab: probe {name} again ({round} of {REPEATS}, {} s)",
                args.runtime
            );
            let (m, text) = probe_once(probe(name), &again_stem(name, round))?;
            again.push(Again {
                name,
                round,
                m,
                json: text,
            });
        }
    }
    let q = |k: &str| undo::read(&t.queue.join(k)).unwrap_or_default();
    let kernel = undo::read(Path::new("/proc/sys/kernel/osrelease")).unwrap_or_default();
    let probed = Probed {
        real,
        json,
        again,
        size: t.size,
        write_cache: q("write_cache") == "write back",
        fua: q("fua") == "1",
        // The device's queue depth as capture reads it for wbt: a loop
        // device's tag count, a driver's own depth, or nr_requests.
        depth: t.wbt_queue_depth,
        runtime: args.runtime,
        source: match &t.backing {
            Some(b) => format!("a loop device over {} (Linux {kernel})", b.display()),
            None => format!("{} (Linux {kernel})", t.node),
        },
        made_loop: loop_spec.is_some(),
    };
    if let Some(keep) = &args.keep_probes {
        keep_probes(Path::new(keep), &probed)?;
    }
    fit_file(args, &probed, &scratch)
}

/// Writes a measurement to `dir` (new): `PROBE.json` as fio wrote it,
/// and [`FACTS`].
fn keep_probes(dir: &Path, p: &Probed) -> Result<(), Failure> {
    let err = |e: std::io::Error| Failure::input(format!("--keep-probes {}: {e}", dir.display()));
    std::fs::create_dir(dir).map_err(err)?;
    for ((name, _), text) in p.real.iter().zip(&p.json) {
        std::fs::write(dir.join(format!("{name}.json")), text).map_err(err)?;
    }
    for a in &p.again {
        std::fs::write(
            dir.join(format!("{}.json", again_stem(a.name, a.round))),
            &a.json,
        )
        .map_err(err)?;
    }
    let facts = serde_json::json!({
        "size": p.size,
        "write_cache": p.write_cache,
        "fua": p.fua,
        "queue_depth": p.depth,
        "runtime": p.runtime,
        "source": p.source,
        "loop_device": p.made_loop,
    });
    let text = serde_json::to_string_pretty(&facts).map_err(|e| Failure::input(e.to_string()))?;
    std::fs::write(dir.join(FACTS), text + "\n").map_err(err)
}

/// The repeated probes of a kept measurement: none (kept before they
/// existed, said on stderr) or every one of them, but those of
/// [`LATER_REPEATS`], each all or none (said on stderr when none).
fn read_again(
    dir: &Path,
    read: impl Fn(&str) -> Result<(Measured, String), Failure>,
) -> Result<Vec<Again>, Failure> {
    let stem = |name: &str, round: u32| format!("{}.json", again_stem(name, round));
    let present = |name: &str| (1..=REPEATS).any(|r| dir.join(stem(name, r)).exists());
    if !repeated().any(present) {
        eprintln!(
            "iolab: --from {}: no repeated probes (kept before they were added): every run of the fitted device is alike (run_sigma and write_run_sigma 0), and the file says so",
            dir.display()
        );
        return Ok(Vec::new());
    }
    let mut files: Vec<(&'static str, u32, String)> = Vec::new();
    for round in 1..=REPEATS {
        for name in repeated() {
            if LATER_REPEATS.contains(&name) && !present(name) {
                if round == 1 {
                    eprintln!(
                        "iolab: --from {}: {name} was not run again (kept before it was): the run factor is fitted without it",
                        dir.display()
                    );
                }
                continue;
            }
            files.push((name, round, stem(name, round)));
        }
    }
    let mut again = Vec::new();
    for (name, round, file) in files {
        if !dir.join(&file).exists() {
            return Err(Failure::input(format!(
                "--from: {}: missing, though other repeated probes are there (a measurement keeps all {} rounds of each, or none)",
                dir.join(&file).display(),
                REPEATS
            )));
        }
        let (m, text) = read(&file)?;
        again.push(Again {
            name,
            round,
            m,
            json: text,
        });
    }
    Ok(again)
}

/// Probes added after measurements were first kept: a kept measurement
/// may lack them.
const LATER_PROBES: [&str; 2] = ["fsync-under-randread-qd32", "randwrite-4k-qd32"];

/// Reads a measurement [`keep_probes`] wrote. Every file is required but
/// those of [`LATER_PROBES`] (said on stderr when missing); an error
/// names the file and what is wrong with it.
fn read_kept(dir: &Path) -> Result<Probed, Failure> {
    let read = |name: &str| -> Result<(PathBuf, String, Value), Failure> {
        let path = dir.join(name);
        let text =
            crate::load::read_text(&path).map_err(|e| Failure::input(format!("--from: {e}")))?;
        let v = serde_json::from_str(&text).map_err(|e| {
            Failure::input(format!(
                "--from: {}:{}: not JSON: {e}",
                path.display(),
                e.line()
            ))
        })?;
        Ok((path, text, v))
    };
    let (path, _, facts) = read(FACTS)?;
    let field = |k: &str| {
        facts
            .get(k)
            .ok_or_else(|| Failure::input(format!("--from: {}: no \"{k}\"", path.display())))
    };
    let bad = |k: &str, want: &str| {
        Failure::input(format!(
            "--from: {}: \"{k}\" must be {want}",
            path.display()
        ))
    };
    let int = |k: &str, max: u64| -> Result<u64, Failure> {
        field(k)?
            .as_u64()
            .filter(|&v| (1..=max).contains(&v))
            .ok_or_else(|| bad(k, &format!("an integer from 1 to {max}")))
    };
    let flag = |k: &str| field(k)?.as_bool().ok_or_else(|| bad(k, "true or false"));
    // What a probe runs on (the 300 MiB a loop device needs at least) up
    // to the largest file the simulator runs a probe on (16 TiB).
    let size = field("size")?
        .as_u64()
        .filter(|v| (MIN_PROBED_BYTES..=MAX_PROBED_BYTES).contains(v))
        .ok_or_else(|| {
            bad(
                "size",
                &format!("an integer from {MIN_PROBED_BYTES} to {MAX_PROBED_BYTES} bytes"),
            )
        })?;
    let depth = int("queue_depth", 65_536)? as u32;
    let runtime = int("runtime", 600)? as u32;
    let source = field("source")?
        .as_str()
        .ok_or_else(|| bad("source", "a string"))?
        .to_owned();
    let (write_cache, fua, made_loop) = (flag("write_cache")?, flag("fua")?, flag("loop_device")?);
    // A probe's figures and fio's JSON as it wrote it.
    let read_probe = |file: &str| -> Result<(Measured, String), Failure> {
        let (path, text, v) = read(file)?;
        let m = measured(&v).ok_or_else(|| {
            Failure::input(format!(
                "--from: {}: no figures (fio's jobs[0] with read and write)",
                path.display()
            ))
        })?;
        Ok((m, text))
    };
    let (mut real, mut json) = (Vec::new(), Vec::new());
    for p in PROBES {
        let file = format!("{}.json", p.name);
        if LATER_PROBES.contains(&p.name) && !dir.join(&file).exists() {
            eprintln!(
                "iolab: --from {}: no {file} (kept before that probe was added); what it fits takes the model's value without it, and the file says so",
                dir.display()
            );
            continue;
        }
        let (m, text) = read_probe(&file)?;
        real.push((p.name, m));
        json.push(text);
    }
    let again = read_again(dir, read_probe)?;
    Ok(Probed {
        real,
        json,
        again,
        size,
        write_cache,
        fua,
        depth,
        runtime,
        source,
        made_loop,
    })
}

/// Fits the model to a measurement and runs every probe again on the
/// fitted file: the file's text (the table appended as comments) and the
/// table.
fn fit_file(args: &CalibrateArgs, p: &Probed, scratch: &Path) -> Result<(String, String), Failure> {
    let sys = capture::sys_err;
    let model = args.model.unwrap_or(match p.made_loop {
        true => Model::Loop,
        false => Model::Ssd,
    });
    let (fitted, notes) = fit_all(
        model,
        &p.real,
        p.size,
        p.write_cache,
        p.fua,
        p.depth,
        p.runtime,
        scratch,
    )?;
    for note in notes {
        eprintln!("iolab: {note}");
    }
    let mut fitted = fitted;
    match model {
        Model::Loop => {
            let at = fitted
                .iter()
                .position(|f| f.key == "write_cache")
                .unwrap_or(fitted.len());
            let runs = run_spreads(&p.real, &p.again);
            fitted.splice(at..at, runs);
        }
        Model::Ssd if !p.again.is_empty() => eprintln!(
            "iolab: the ssd model has no run factor: the repeated probes are kept, not fitted"
        ),
        Model::Ssd => {}
    }
    let name = Path::new(&args.out)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("calibrated")
        .to_owned();
    let mut text = device_toml(model, &name, &p.source, &fitted);
    let device = DeviceConfig::from_toml(&text)
        .map_err(|e| sys(format!("the fitted file does not load: {e}")))?;

    let (table, _) = reproduce(&p.real, &device, p.size, p.runtime, scratch)?;
    text.push_str("\n# The probes on this file (iolab run) against the device:\n");
    for l in table.lines() {
        let _ = writeln!(text, "# {l}");
    }
    Ok((text, table))
}

/// The smallest `x` in `lo..=hi` (log-bisection, ten steps) at which
/// `f(x)` reaches `want`, `f` growing with `x`; `None` if even `hi` falls
/// short by more than 3 %.
fn search(
    lo: f64,
    hi: f64,
    want: f64,
    mut f: impl FnMut(u64) -> Result<f64, Failure>,
) -> Result<Option<u64>, Failure> {
    let (mut lo, mut hi) = (lo.max(1.0), hi.max(1.0));
    if f(hi.round() as u64)? < 0.97 * want {
        return Ok(None);
    }
    if f(lo.round() as u64)? >= want {
        return Ok(Some(lo.round() as u64));
    }
    for _ in 0..10 {
        let mid = (lo * hi).sqrt();
        if f(mid.round() as u64)? >= want {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(Some(hi.round() as u64))
}

/// The figures of one probe, measured.
fn of<'a>(real: &'a [(&'static str, Measured)], name: &str) -> Option<&'a Measured> {
    real.iter().find(|(n, _)| *n == name).map(|x| &x.1)
}

/// Everything the probes determine. Bandwidths are not a single
/// parameter's: the sequential read bandwidth is `min(link, what the
/// units deliver)`, and on the SSD a sequential write's is a burst into
/// the buffer and then the programs' rate, so the link (and the SSD's
/// `program_us`) are searched on the simulator (the probe run on the
/// fitted model until it gives the measured bandwidth). The loop model's
/// write servers are scanned on the mixed probe and the QD32 random writes ([`scan_write_units`])
/// before its write bandwidth is searched with them. The rest come from
/// [`fit_loop`]'s or [`fit`]'s formulas. Also returns the notes of
/// [`body_of`] on the QD1 probes, for stderr.
#[allow(clippy::too_many_arguments)]
fn fit_all(
    model: Model,
    real: &[(&'static str, Measured)],
    size: u64,
    wc: bool,
    fua: bool,
    depth: u32,
    runtime: u32,
    dir: &Path,
) -> Result<(Vec<Fitted>, Vec<String>), Failure> {
    let device = |fitted: &[Fitted]| {
        DeviceConfig::from_toml(&device_toml(model, "search", "the search", fitted))
            .map_err(|e| capture::sys_err(format!("the fitted file does not load: {e}")))
    };
    let formulas = |s: &Searched| match model {
        Model::Loop => fit_loop(real, size, wc, fua, depth, s),
        Model::Ssd => fit(real, size, wc, fua, depth, s.link, s.second),
    };
    let read_bw = of(real, "read-1m-qd8").map_or(0.0, |m| m.bw);
    let link = if read_bw > 0.0 {
        let mb = read_bw / 1e6;
        search(mb, 20.0 * mb, read_bw, |link| {
            let d = device(&formulas(&Searched {
                link: Some(link),
                ..Searched::default()
            }))?;
            Ok(sim_probe(probe("read-1m-qd8"), &d, size, runtime, dir)?.bw)
        })?
    } else {
        None
    };
    let mut s = Searched {
        link,
        ..Searched::default()
    };
    let scanned: Vec<(&str, &Measured)> = WRITE_UNIT_PROBES
        .iter()
        .filter_map(|&name| of(real, name).filter(|m| m.iops > 0.0).map(|m| (name, m)))
        .collect();
    let wunits = match model {
        // The mix decides whether writes have servers of their own at all.
        Model::Loop
            if scanned
                .first()
                .is_some_and(|(n, _)| *n == WRITE_UNIT_PROBES[0]) =>
        {
            Some(scan_write_units(&scanned, |n| {
                let trial = WriteUnits {
                    units: n,
                    from: String::new(),
                };
                let d = device(&formulas(&Searched {
                    write_units: Some(&trial),
                    ..s
                }))?;
                scanned
                    .iter()
                    .map(|(name, _)| sim_probe(probe(name), &d, size, runtime, dir))
                    .collect()
            })?)
        }
        _ => None,
    };
    s.write_units = wunits.as_ref();
    let write_bw = of(real, "write-1m-qd8").map_or(0.0, |m| m.bw);
    let write_probe = |d: &DeviceConfig| -> Result<f64, Failure> {
        Ok(sim_probe(probe("write-1m-qd8"), d, size, runtime, dir)?.bw)
    };
    s.second = match model {
        _ if write_bw <= 0.0 => None,
        Model::Loop => {
            let mb = write_bw / 1e6;
            search(mb, 20.0 * mb, write_bw, |w| {
                write_probe(&device(&formulas(&Searched {
                    second: Some(w),
                    ..s
                }))?)
            })?
        }
        // Bandwidth falls as programs lengthen: search the inverse.
        Model::Ssd => search(1.0 / 100_000.0 * 1e6, 1e6, write_bw, |inv| {
            let us = (1e6 / inv as f64).round().max(1.0) as u64;
            write_probe(&device(&formulas(&Searched {
                second: Some(us),
                ..s
            }))?)
        })?
        .map(|inv| (1e6 / inv as f64).round().max(1.0) as u64),
    };
    let loaded = of(real, "fsync-under-randread-qd32").filter(|m| m.sync_mean_ns > 0.0);
    let drains = match (model, loaded) {
        (Model::Loop, Some(m)) => Some(choose_flush_drains(m, |drains| {
            let trial = Drains {
                drains,
                from: String::new(),
            };
            let d = device(&formulas(&Searched {
                drains: Some(&trial),
                ..s
            }))?;
            sim_probe(probe("fsync-under-randread-qd32"), &d, size, runtime, dir)
        })?),
        _ => None,
    };
    s.drains = drains.as_ref();
    // The transfer spreads last: they widen the 1 MiB probes' tails and
    // leave the bandwidths the searches above found.
    let mut spreads: [Option<TransferSpread>; 2] = [None, None];
    for (i, name) in ["read-1m-qd8", "write-1m-qd8"].into_iter().enumerate() {
        let Some(m) = of(real, name).filter(|m| m.iops > 0.0 && model == Model::Loop) else {
            continue;
        };
        let done = [spreads[0].as_ref(), spreads[1].as_ref()];
        spreads[i] = Some(scan_transfer_sigma(name, m, |sigma| {
            let trial = TransferSpread {
                sigma,
                from: String::new(),
            };
            let mut transfers = done;
            transfers[i] = Some(&trial);
            let d = device(&formulas(&Searched { transfers, ..s }))?;
            sim_probe(probe(name), &d, size, runtime, dir)
        })?);
    }
    s.transfers = [spreads[0].as_ref(), spreads[1].as_ref()];
    let notes = Shared::of(real, link, model.transfers()).notes();
    Ok((formulas(&s), notes))
}

/// What [`fit_all`] found on the simulator, for the formulas to use:
/// `None` where it has not searched (yet).
#[derive(Clone, Copy, Default)]
struct Searched<'a> {
    /// The link (the loop model's read bandwidth), MB/s.
    link: Option<u64>,
    /// The loop model's write bandwidth, the SSD's program time.
    second: Option<u64>,
    write_units: Option<&'a WriteUnits>,
    drains: Option<&'a Drains>,
    /// The loop model's read and write transfer spreads.
    transfers: [Option<&'a TransferSpread>; 2],
}

/// A transfer spread as scanned, and what the scan found.
struct TransferSpread {
    sigma: f64,
    from: String,
}

/// Largest transfer spread the scan tries, and its step.
const MAX_TRANSFER_SIGMA: f64 = 1.0;
const TRANSFER_SIGMA_STEP: f64 = 0.02;

/// The transfer spread, 0 to [`MAX_TRANSFER_SIGMA`] in steps of
/// [`TRANSFER_SIGMA_STEP`], whose simulated 1 MiB probe `name` comes
/// nearest the measured one: the smallest of the larger relative
/// difference of the median and of the p99 (the smaller σ on a tie).
/// `probe(σ)` runs it on the model with that spread.
fn scan_transfer_sigma(
    name: &str,
    real: &Measured,
    mut probe: impl FnMut(f64) -> Result<Measured, Failure>,
) -> Result<TransferSpread, Failure> {
    let miss = |m: &Measured| {
        pct(m.p50_ns, real.p50_ns)
            .abs()
            .max(pct(m.p99_ns, real.p99_ns).abs())
    };
    let exact = probe(0.0)?;
    let (mut best, mut best_m) = (0.0, exact);
    let steps = (MAX_TRANSFER_SIGMA / TRANSFER_SIGMA_STEP).round() as u32;
    for k in 1..=steps {
        let sigma = (f64::from(k) * TRANSFER_SIGMA_STEP * 100.0).round() / 100.0;
        let m = probe(sigma)?;
        if miss(&m) < miss(&best_m) {
            (best, best_m) = (sigma, m);
        }
    }
    let us = |m: &Measured| {
        format!(
            "p50 {:.0} us, p99 {:.0} us",
            m.p50_ns / 1000.0,
            m.p99_ns / 1000.0
        )
    };
    Ok(TransferSpread {
        sigma: best,
        from: format!(
            "{name}: {}; a transfer spread of {best} gives {}, the nearest of 0 to {MAX_TRANSFER_SIGMA} (exact transfers: {})",
            us(real),
            us(&best_m),
            us(&exact)
        ),
    })
}

/// Whether the loop model's FLUSH waits for the commands in flight, as
/// chosen, and what the choice found.
struct Drains {
    drains: bool,
    from: String,
}

/// Whether a FLUSH that waits for every command in flight, or one that
/// starts at once, brings the simulated fsync under load nearer the
/// measured mean fsync latency (starting at once on a tie). `probe(d)`
/// runs the probe on the model with `flush_drains = d`.
fn choose_flush_drains(
    real: &Measured,
    mut probe: impl FnMut(bool) -> Result<Measured, Failure>,
) -> Result<Drains, Failure> {
    let (at_once, drained) = (probe(false)?, probe(true)?);
    let miss = |m: &Measured| pct(m.sync_mean_ns, real.sync_mean_ns).abs();
    let drains = miss(&drained) < miss(&at_once);
    let us = |m: &Measured| m.sync_mean_ns / 1000.0;
    Ok(Drains {
        drains,
        from: format!(
            "fsync-under-randread-qd32: fsync mean {:.1} us beside 32 reads in flight; a FLUSH that waits for them gives {:.1} us, one that starts at once {:.1} us",
            us(real),
            us(&drained),
            us(&at_once)
        ),
    })
}

/// The loop model's write servers as scanned, and what the scan found.
struct WriteUnits {
    units: u32,
    from: String,
}

/// Most write servers the scan tries.
const MAX_WRITE_UNITS: u32 = 16;

/// The probes the write servers are scanned on: the mix first, then the
/// random writes at depth where a measurement has them.
const WRITE_UNIT_PROBES: [&str; 2] = ["randrw-4k-qd16", "randwrite-4k-qd32"];

/// The count of write servers, 0 (sharing the read servers) to
/// [`MAX_WRITE_UNITS`], whose simulated probes come nearest the measured
/// ones (`real`, named, the mix first): the smallest of the largest
/// relative difference of IOPS and of median completion latency over the
/// probes (the smaller count on a tie), so that a count which reaches the
/// IOPS only by starving one direction is not taken. The mix alone tells
/// little of how many writes the device serves at once when writes are a
/// third of it; the random writes at QD32 tell that directly. `run(n)`
/// runs the probes, in `real`'s order, on the model with `n`.
fn scan_write_units(
    real: &[(&str, &Measured)],
    mut run: impl FnMut(u32) -> Result<Vec<Measured>, Failure>,
) -> Result<WriteUnits, Failure> {
    let miss = |sim: &[Measured]| {
        sim.iter().zip(real).fold(0.0_f64, |worst, (m, (_, r))| {
            worst
                .max(pct(m.iops, r.iops).abs())
                .max(pct(m.p50_ns, r.p50_ns).abs())
        })
    };
    let shared = run(0)?;
    let (mut best, mut best_m) = (0, shared.clone());
    for n in 1..=MAX_WRITE_UNITS {
        let m = run(n)?;
        if miss(&m) < miss(&best_m) {
            (best, best_m) = (n, m);
        }
    }
    let figures = |m: &Measured| format!("{:.0} IOPS, p50 {:.1} us", m.iops, m.p50_ns / 1000.0);
    let mut measured = real
        .iter()
        .map(|(name, m)| format!("{name}: {}", figures(m)))
        .collect::<Vec<_>>()
        .join(", ");
    for name in WRITE_UNIT_PROBES {
        if !real.iter().any(|(n, _)| *n == name) {
            let _ = write!(measured, " (no {name} probe)");
        }
    }
    // One probe: its figures; several: each named.
    let sim = |ms: &[Measured]| match ms {
        [one] => figures(one),
        _ => ms
            .iter()
            .zip(real)
            .map(|(m, (name, _))| format!("{name} {}", figures(m)))
            .collect::<Vec<_>>()
            .join(" and "),
    };
    let from = if best == 0 {
        format!(
            "{measured}; the model's writes sharing the read servers give {}, nearer than any count of their own (1 to {MAX_WRITE_UNITS})",
            sim(&shared)
        )
    } else {
        format!(
            "{measured}; {best} write servers of their own give {}, the nearest of 0 to {MAX_WRITE_UNITS} (sharing the read servers: {})",
            sim(&best_m),
            sim(&shared)
        )
    };
    Ok(WriteUnits { units: best, from })
}

/// One probe on a simulated device: its job written to `dir`, run with
/// `iolab run`'s machinery.
fn sim_probe(
    p: &Probe,
    device: &DeviceConfig,
    size: u64,
    runtime: u32,
    dir: &Path,
) -> Result<Measured, Failure> {
    let job = dir.join(format!("{}-sim.fio", p.name));
    // The simulated filesystem keeps some of the device; 90 % is free.
    let room = device_bytes(device) / 10 * 9 / 4096 * 4096;
    std::fs::write(&job, job_text(p, "probe.dat", size.min(room), runtime))
        .map_err(|e| capture::sys_err(format!("{}: {e}", job.display())))?;
    simulate(&job, device)
}

/// Every probe again on `device`, beside what was measured: the table and
/// the largest difference in percent.
fn reproduce(
    real: &[(&'static str, Measured)],
    device: &DeviceConfig,
    size: u64,
    runtime: u32,
    dir: &Path,
) -> Result<(String, f64), Failure> {
    let mut table = String::from(
        "probe                     | IOPS real / sim        Δ      | p50 µs real / sim      Δ      | p99 µs real / sim      Δ\n",
    );
    let mut worst = 0.0f64;
    let mut synced = String::new();
    for (name, m) in real {
        let Some(p) = PROBES.iter().find(|p| p.name == *name) else {
            continue;
        };
        let s = sim_probe(p, device, size, runtime, dir)?;
        if m.sync_mean_ns > 0.0 {
            let _ = writeln!(
                synced,
                "{:<25} | {:>8.1} / {:>8.1} {:>+7.1} %",
                p.name,
                m.sync_mean_ns / 1000.0,
                s.sync_mean_ns / 1000.0,
                pct(s.sync_mean_ns, m.sync_mean_ns)
            );
        }
        let (di, d50, d99) = (
            pct(s.iops, m.iops),
            pct(s.p50_ns, m.p50_ns),
            pct(s.p99_ns, m.p99_ns),
        );
        worst = worst.max(di.abs()).max(d50.abs()).max(d99.abs());
        let _ = writeln!(
            table,
            "{:<25} | {:>9.0} / {:>9.0} {:>+7.1} % | {:>8.1} / {:>8.1} {:>+7.1} % | {:>8.1} / {:>8.1} {:>+7.1} %",
            p.name,
            m.iops,
            s.iops,
            di,
            m.p50_ns / 1000.0,
            s.p50_ns / 1000.0,
            d50,
            m.p99_ns / 1000.0,
            s.p99_ns / 1000.0,
            d99
        );
    }
    let _ = writeln!(
        table,
        "largest difference {worst:.1} % ({}within 15 % everywhere)",
        if worst <= 15.0 { "" } else { "not " }
    );
    if !synced.is_empty() {
        table.push_str("probe                     | fsync mean µs real / sim   Δ\n");
        table.push_str(&synced);
    }
    Ok((table, worst))
}

fn device_bytes(d: &DeviceConfig) -> u64 {
    let gb = match (&d.ssd, &d.loop_dev) {
        (Some(s), _) => s.capacity_gb,
        (None, Some(l)) => l.capacity_gb,
        (None, None) => return u64::MAX,
    };
    gb * 1_000_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_json_figures_are_read_from_fios_keys() {
        let j: Value = serde_json::from_str(
            r#"{"jobs":[{"read":{"iops":1000.5,"bw_bytes":4098048,"total_ios":5000,
            "clat_ns":{"mean":950.0,"percentile":{"50.000000":900,"99.000000":2100}}},
            "write":{"iops":10.0,"bw_bytes":40960,"total_ios":50,"clat_ns":{"mean":5.0}},
            "sync":{"lat_ns":{"mean":1500.0}}}]}"#,
        )
        .expect("json");
        let m = measured(&j).expect("figures");
        assert_eq!(m.iops, 1010.5);
        assert_eq!((m.mean_ns, m.p50_ns, m.p99_ns), (950.0, 900.0, 2100.0));
        assert_eq!(m.bw, 4098048.0 + 40960.0);
        assert_eq!(m.sync_mean_ns, 1500.0);
        assert!(measured(&serde_json::json!({"jobs": []})).is_none());
    }

    /// The write servers are scanned on every probe given: a count the
    /// mix alone would take (it hardly sees the writes' concurrency) is
    /// passed over when the random writes at QD32 miss with it, and the
    /// text names both probes.
    #[test]
    fn the_write_servers_fit_the_mix_and_the_writes_at_depth() {
        let m = |iops: f64, p50_us: f64| Measured {
            iops,
            p50_ns: p50_us * 1000.0,
            ..Measured::default()
        };
        // A stand-in for the simulator: the mix is nearly flat in the
        // count (best at 1), the writes at depth scale with it up to 6.
        let model = |n: u32| {
            let n = f64::from(n);
            vec![
                m(40_000.0 + 400.0 * (n - 1.0).abs(), 250.0),
                m(11_000.0 * n.clamp(0.5, 6.0), 3_000.0 / n.clamp(0.5, 6.0)),
            ]
        };
        let (mix, writes) = (m(40_000.0, 250.0), m(66_000.0, 500.0));
        let alone = scan_write_units(&[("randrw-4k-qd16", &mix)], |n| {
            Ok(model(n).into_iter().take(1).collect())
        })
        .expect("scan");
        assert_eq!(alone.units, 1);
        let want = "randrw-4k-qd16: 40000 IOPS, p50 250.0 us (no randwrite-4k-qd32 probe); 1 write";
        assert!(alone.from.starts_with(want), "{}", alone.from);
        let both = scan_write_units(
            &[("randrw-4k-qd16", &mix), ("randwrite-4k-qd32", &writes)],
            |n| Ok(model(n)),
        )
        .expect("scan");
        assert_eq!(both.units, 6);
        let want = "randwrite-4k-qd32: 66000 IOPS, p50 500.0 us; 6 write servers of their own give randrw-4k-qd16 ";
        assert!(both.from.contains(want), "{}", both.from);
    }

    /// Most IOs completing inside their submission leave a median of a
    /// fraction of a microsecond under a mean of microseconds (the figures
    /// of a RAM-backed loop device on Linux 6.18): the fit takes the
    /// log-normal with the probe's mean and p99 instead, whose mean and p99
    /// those are, and says so. A probe whose median lies in its body is
    /// read as measured.
    #[test]
    fn a_median_of_inline_completions_gives_way_to_the_mean() {
        let exact = 700.0;
        let inline = Measured {
            iops: 72_000.0,
            mean_ns: 7833.0,
            p50_ns: 398.0,
            p99_ns: 60_160.0,
            ..Measured::default()
        };
        let (m, note) = body_of(inline, exact);
        assert!(
            note.expect("a note")
                .contains("before their submission returned")
        );
        let sigma = spread_of(&m, exact);
        let median = m.p50_ns - exact;
        let mean = median * (sigma * sigma / 2.0).exp() + exact;
        let p99 = median * (2.326 * sigma).exp() + exact;
        assert!((mean / inline.mean_ns - 1.0).abs() < 0.01, "mean {mean}");
        assert!((p99 / inline.p99_ns - 1.0).abs() < 0.01, "p99 {p99}");
        assert_eq!(
            (m.iops, m.mean_ns, m.p99_ns),
            (inline.iops, inline.mean_ns, inline.p99_ns)
        );

        let body = Measured {
            mean_ns: 72_000.0,
            p50_ns: 69_100.0,
            p99_ns: 342_000.0,
            ..Measured::default()
        };
        let (same, note) = body_of(body, exact);
        assert!(note.is_none());
        assert_eq!(same.p50_ns, body.p50_ns);
    }

    /// Every probe of 1 s run on `truth` in a scratch directory named
    /// after `what`: the directory, the device size, the figures.
    fn probed(truth: &DeviceConfig, what: &str) -> (PathBuf, u64, Vec<(&'static str, Measured)>) {
        let dir = std::env::temp_dir().join(format!("iolab-{what}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let size = 2_000_000_000;
        let real = PROBES
            .iter()
            .map(|p| {
                (
                    p.name,
                    sim_probe(p, truth, size, 1, &dir).expect("simulates"),
                )
            })
            .collect();
        (dir, size, real)
    }

    /// The fitted value of `key`, as a number.
    fn value_of(fitted: &[Fitted], key: &str) -> f64 {
        fitted
            .iter()
            .find(|f| f.key == key)
            .and_then(|f| f.value.parse::<f64>().ok())
            .expect(key)
    }

    /// The fitted `key` is within `tol` (a fraction) of the truth `want`.
    fn assert_near(fitted: &[Fitted], key: &str, want: f64, tol: f64) {
        let got = value_of(fitted, key);
        assert!(
            (got - want).abs() <= tol * want,
            "{key}: fitted {got}, truth {want}"
        );
    }

    /// The fitted file loads and reproduces every probe within 15 %;
    /// removes the scratch `dir`.
    fn assert_reproduces(
        model: Model,
        fitted: &[Fitted],
        real: &[(&'static str, Measured)],
        size: u64,
        dir: &Path,
    ) {
        let text = device_toml(model, "fitted", "the model itself", fitted);
        let device = DeviceConfig::from_toml(&text).expect("fitted file loads");
        let (table, worst) = reproduce(real, &device, size, 1, dir).expect("reproduces");
        std::fs::remove_dir_all(dir).expect("cleanup");
        assert!(worst <= 15.0, "{table}");
    }

    /// A device the model can represent exactly, probed on the simulator
    /// itself: the fit recovers its parameters, and the fitted file
    /// reproduces every probe.
    #[test]
    fn the_fit_recovers_a_model_device_from_its_own_probes() {
        let truth = DeviceConfig::from_toml(
            "name = \"truth\"\nkind = \"ssd\"\nbase = \"nvme\"\nhost_io_us = 8.0\n[ssd]\ncapacity_gb = 2\nqueue_depth = 128\nchannels = 4\nluns_per_channel = 1\nread_us = 40\nprogram_us = 200\ncmd_overhead_us = 0\nack_us = 10\nlink_mb_s = 2000\nchannel_mb_s = 2000\nservice_sigma = 0.3\nflush_fixed_us = 300\ngc = \"none\"\n",
        )
        .expect("truth loads");
        let (dir, size, real) = probed(&truth, "fit");
        let (fitted, _) = fit_all(Model::Ssd, &real, size, true, true, 128, 1, &dir).expect("fits");
        for (k, want, tol) in [
            ("read_us", 40.0, 0.1),
            ("service_sigma", 0.3, 0.15),
            ("ack_us", 10.0, 0.2),
            ("link_mb_s", 2000.0, 0.1),
            ("host_io_us", 8.0, 0.15),
        ] {
            assert_near(&fitted, k, want, tol);
        }
        let units = value_of(&fitted, "channels") * value_of(&fitted, "luns_per_channel");
        assert_eq!(units, 4.0, "units");
        assert_reproduces(Model::Ssd, &fitted, &real, size, &dir);
    }

    /// The same for the `loop` model, with a host whose thread both
    /// works per IO and wakes at QD1: the two are told apart. Its servers
    /// are slow enough that the mixed probe is the device's, not the host
    /// thread's (where the host's time bounds it, every count of write
    /// servers gives the same figures and the scan's choice says nothing),
    /// and its channel's speed wanders both ways.
    #[test]
    fn the_loop_fit_recovers_a_loop_device_and_its_host() {
        let truth = DeviceConfig::from_toml(
            "name = \"truth\"\nkind = \"loop\"\nhost_io_us = 6.0\nhost_wake_us = 3.0\n[loop]\ncapacity_gb = 2\nqueue_depth = 128\nunits = 3\nwrite_units = 2\nread_us = 40.0\nwrite_us = 60.0\nread_mb_s = 4000\nwrite_mb_s = 2500\nflush_us = 30.0\nflush_drains = true\nwrite_cache = true\nfua = false\nservice_sigma = 0.3\nwrite_sigma = 0.5\ntransfer_sigma = 0.3\nwrite_transfer_sigma = 0.2\n",
        )
        .expect("truth loads");
        let (dir, size, real) = probed(&truth, "loopfit");
        let (fitted, _) =
            fit_all(Model::Loop, &real, size, true, false, 128, 1, &dir).expect("fits");
        for (k, want, tol) in [
            ("read_us", 40.0, 0.1),
            ("write_us", 60.0, 0.1),
            ("service_sigma", 0.3, 0.15),
            ("write_sigma", 0.5, 0.15),
            ("read_mb_s", 4000.0, 0.1),
            ("write_mb_s", 2500.0, 0.1),
            ("units", 3.0, 0.0),
            ("write_units", 2.0, 0.0),
            ("host_io_us", 6.0, 0.15),
            ("host_wake_us", 3.0, 0.25),
            ("flush_us", 30.0, 0.2),
            ("transfer_sigma", 0.3, 0.25),
            ("write_transfer_sigma", 0.2, 0.25),
        ] {
            assert_near(&fitted, k, want, tol);
        }
        let drains = fitted.iter().find(|f| f.key == "flush_drains");
        assert_eq!(drains.map(|f| f.value.as_str()), Some("true"));
        assert_reproduces(Model::Loop, &fitted, &real, size, &dir);
    }

    #[test]
    fn a_run_factor_is_the_spread_of_a_probes_runs() {
        let at = |iops: f64| Measured {
            iops,
            ..Measured::default()
        };
        let real = [("randread-4k-qd1", at(1000.0)), ("write-1m-qd8", at(500.0))];
        let again: Vec<Again> = [1100.0, 900.0, 1000.0]
            .into_iter()
            .enumerate()
            .map(|(i, iops)| Again {
                name: "randread-4k-qd1",
                round: i as u32 + 1,
                m: at(iops),
                json: String::new(),
            })
            .collect();
        let fitted = run_spreads(&real, &again);
        // ln 1000, ln 1100, ln 900, ln 1000: sample standard deviation 0.0818.
        assert_eq!(value_of(&fitted, "run_sigma"), 0.082);
        assert!(
            fitted[0]
                .from
                .contains("run 4 times: IOPS 1000 / 1100 / 900 / 1000")
        );
        // The write probe was not run again: no factor, and why.
        assert_eq!(value_of(&fitted, "write_run_sigma"), 0.0);
        assert!(
            fitted[1].from.contains("not run again"),
            "{}",
            fitted[1].from
        );
        // Each repeated probe is one of the probes.
        for name in repeated() {
            assert!(PROBES.iter().any(|p| p.name == name), "{name}");
        }
        // Two write probes run again: the larger spread is the factor.
        let real = [
            ("write-1m-qd8", at(500.0)),
            ("randwrite-4k-qd32", at(1000.0)),
        ];
        let again: Vec<Again> = [
            ("write-1m-qd8", 510.0),
            ("randwrite-4k-qd32", 1100.0),
            ("write-1m-qd8", 490.0),
            ("randwrite-4k-qd32", 900.0),
            ("write-1m-qd8", 500.0),
            ("randwrite-4k-qd32", 1000.0),
        ]
        .into_iter()
        .enumerate()
        .map(|(i, (name, iops))| Again {
            name,
            round: i as u32 / 2 + 1,
            m: at(iops),
            json: String::new(),
        })
        .collect();
        let fitted = run_spreads(&real, &again);
        assert_eq!(value_of(&fitted, "write_run_sigma"), 0.082);
        let from = &fitted[1].from;
        assert!(
            from.contains("write-1m-qd8 run 4 times: IOPS 500 / 510 / 490 / 500 (σ 0.016)")
                && from.contains("randwrite-4k-qd32 run 4 times")
                && from.contains("the largest"),
            "{from}"
        );
    }

    #[test]
    fn every_probe_is_a_job_iolab_reads() {
        let dir = std::env::temp_dir().join(format!("iolab-probes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        for p in PROBES {
            let path = dir.join(format!("{}.fio", p.name));
            std::fs::write(&path, job_text(p, "probe.dat", 1 << 30, 2)).expect("write");
            let jf =
                crate::load::jobs(&[path.to_str().expect("utf-8").to_owned()], &[], 4 << 30, 2);
            assert!(jf.is_ok(), "{}: {:?}", p.name, jf.err().map(|f| f.message));
        }
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
