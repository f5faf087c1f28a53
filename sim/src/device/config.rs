//! Device configuration: presets, TOML loading with a preset as base, validation and a
//! human-readable parameter table.
//!
//! Every parameter names its source. Tags in brackets (`[Sn]`, `[Fn]`) refer to the list in
//! `docs/sources.md`; *(assumed)* marks an engineering choice, with the reason next to it.
//! Calibration happens once per device class: scenarios never carry their own device
//! parameters.

use serde::{Deserialize, Serialize};

use super::DeviceError;

/// Which model a configuration builds.
#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    /// Fixed-latency device like null_blk in timer mode.
    Null,
    /// Flash SSD with parallel units.
    Ssd,
    /// Rotating disk.
    Hdd,
    /// A file behind the loop driver, fitted by `iolab calibrate`.
    Loop,
}

impl DeviceKind {
    fn table(self) -> &'static str {
        match self {
            DeviceKind::Null => "null",
            DeviceKind::Ssd => "ssd",
            DeviceKind::Hdd => "hdd",
            DeviceKind::Loop => "loop",
        }
    }
}

/// A complete device description. Build one with [`DeviceConfig::preset`] or
/// [`DeviceConfig::from_toml`].
///
/// TOML shape: top-level `name`, `kind` (`"null"`, `"ssd"`, `"hdd"` or `"loop"`), optional
/// `base` (a preset name whose values fill everything not given; `loop` has none), and the
/// parameter table of the kind (`[null]`, `[ssd]`, `[hdd]` or `[loop]`).
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// Free-form name, shown in reports.
    pub name: String,
    /// Model to build.
    pub kind: DeviceKind,
    /// Preset this configuration was derived from, if any (`describe` uses its sources).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Parameters of the null model (kind = "null").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null: Option<NullParams>,
    /// Parameters of the SSD model (kind = "ssd").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssd: Option<SsdParams>,
    /// Parameters of the HDD model (kind = "hdd").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hdd: Option<HddParams>,
    /// Parameters of the file-backed model (kind = "loop").
    #[serde(default, rename = "loop", skip_serializing_if = "Option::is_none")]
    pub loop_dev: Option<LoopParams>,
    /// Host time per direct IO outside the device, in µs: the engine's
    /// submit and reap, the block layer's CPU, fio's own loop. The job's
    /// thread spends it on each completion before its next submission,
    /// one IO at a time; a completion that arrives while the thread is
    /// still busy with earlier ones waits for it (fio's `clat` ends when
    /// the thread reaps it), so at depth it bounds IOPS and lengthens
    /// `clat`. `iolab calibrate` measures it (fio's CPU time per IO at
    /// QD32); the datasheet presets leave it at 0.
    #[serde(default)]
    pub host_io_us: f64,
    /// Host time, in µs, a thread that went to sleep for a direct IO's
    /// completion spends waking up, before `host_io_us`: at QD1 every IO
    /// pays it, at depth few do. `iolab calibrate` measures it (the QD1
    /// read's 1/IOPS less its mean `clat` and `host_io_us`, per context
    /// switch); the presets leave it at 0.
    #[serde(default)]
    pub host_wake_us: f64,
    /// The part of `host_io_us`, in µs, an engine that queues (libaio,
    /// io_uring) spends submitting the next IO: fio's `slat` (with
    /// `host_wake_us` added after the thread slept), the rest of the host
    /// time going before it. `iolab calibrate` measures it (fio's mean
    /// `slat` at QD32); the presets leave it at 0, so their `slat` is 0.
    #[serde(default)]
    pub host_submit_us: f64,
    /// The device is host-managed zoned (`[zoned]`): its zones are its
    /// own, so a `zonemode=zbd` job need not give `zonesize` (and must
    /// give this one if it does), and its open-zone limit bounds the
    /// job's `max_open_zones`. `None`: not zoned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zoned: Option<ZonedParams>,
}

/// A host-managed zoned device's zones: every zone
/// sequential-write-required, as the zoned model of `world::zbd` has
/// them.
#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ZonedParams {
    /// Zone size, MiB (1 MiB = 2^20 bytes).
    pub zone_size_mib: u64,
    /// The most zones open at once (the device's limit, as a ZNS drive
    /// reports it); 0: no limit.
    #[serde(default)]
    pub max_open_zones: u32,
}

/// fio's `ZBD_MAX_OPEN_ZONES`: the most open zones it tracks.
pub const MAX_OPEN_ZONES: u32 = 4096;

/// null_blk-like device.
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NullParams {
    /// Size in 10^9 bytes. null_blk `gb` default 250 \[S8\].
    pub capacity_gb: u64,
    /// Tags. null_blk `hw_queue_depth` default 64 \[S8\].
    pub queue_depth: u32,
    /// Fixed completion delay of every command. null_blk `completion_nsec` default
    /// 10,000 ns in timer mode \[S8\].
    pub completion_ns: u64,
}

/// A file behind the loop driver (module `backed`). No preset: every
/// value comes from `iolab calibrate`'s probes, each named in the file's
/// comments.
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LoopParams {
    /// Size in 10^9 bytes.
    pub capacity_gb: u64,
    /// Tags (the loop queue's `nr_requests`).
    pub queue_depth: u32,
    /// Commands the backing store serves at once, each server with its
    /// own queue.
    pub units: u32,
    /// Servers of writes beside them, 0 for none: writes then take the
    /// read servers' turns.
    pub write_units: u32,
    /// Fixed time of a read on the backing file, µs (the median; the
    /// spread scales it).
    pub read_us: f64,
    /// Fixed time of a write, µs.
    pub write_us: f64,
    /// The backing store's data channel, shared by every command of both
    /// directions: how fast it moves a read's data, 10^6 B/s.
    pub read_mb_s: u64,
    /// How fast the same channel moves a write's data, 10^6 B/s.
    pub write_mb_s: u64,
    /// A FLUSH (the backing file's fsync) after the writes before it, µs.
    pub flush_us: f64,
    /// A FLUSH starts only once every command submitted before it has
    /// completed: the backing store finishes what it holds before it
    /// syncs. `false`: it starts at once, whatever is in flight.
    pub flush_drains: bool,
    /// The queue's `write_cache` is `write back`: FLUSH is meaningful.
    pub write_cache: bool,
    /// The queue honours FUA.
    pub fua: bool,
    /// σ of the log-normal spread (median 1) of a read's fixed time (0:
    /// exact).
    pub service_sigma: f64,
    /// σ of the spread of a write's fixed time.
    pub write_sigma: f64,
    /// σ of the log-normal spread (mean 1, so the bandwidth stays) of the
    /// channel's speed for reads, one factor per 10 ms of submissions; 0
    /// (the default, for files fitted before it existed): exact.
    #[serde(default)]
    pub transfer_sigma: f64,
    /// σ of the spread of the channel's speed for writes.
    #[serde(default)]
    pub write_transfer_sigma: f64,
    /// σ of the log-normal factor (median 1) by which one run's reads are
    /// slower or faster than the fitted ones: drawn once per run from the
    /// seed, it scales `read_us` and divides `read_mb_s`. 0 (the default,
    /// for files fitted without repeated probes): every run alike.
    #[serde(default)]
    pub run_sigma: f64,
    /// The same for writes (`write_us`, `write_mb_s`), from the same draw:
    /// a run slow to read is slow to write.
    #[serde(default)]
    pub write_run_sigma: f64,
}

/// How the SSD model charges garbage collection.
#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum GcMode {
    /// No GC cost at all.
    None,
    /// Per-unit free-page counter; below the threshold each host page also charges
    /// `(waf - 1)` migrated pages and a share of an erase.
    Stat,
}

/// Initial state of the flash.
#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Precondition {
    /// Fresh out of box: every unit starts with all pages free.
    Fob,
    /// Steady state: every unit starts at the GC threshold (as if filled twice).
    Steady,
}

/// Flash SSD ("parallel units with analytic service times").
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SsdParams {
    /// User capacity in 10^9 bytes. nvme 1000 / sata-ssd 512: device class *(assumed)*.
    pub capacity_gb: u64,
    /// Tags the host may keep outstanding. nvme 1024: Linux `nvme.io_queue_depth` \[S10\];
    /// sata-ssd 32: NCQ \[S39\].
    pub queue_depth: u32,
    /// Flash channels (each a shared bus). nvme 8 \[S5\]\[S6\]; sata-ssd 4 (16 units, *assumed*).
    pub channels: u32,
    /// LUNs (dies) per channel; units = channels × LUNs. nvme 8 → 64 units \[S5\]\[S6\];
    /// sata-ssd 4 → 16 units *(assumed)*.
    pub luns_per_channel: u32,
    /// Program unit. 16 KiB *(assumed; MQSim uses 8 KiB MLC \[S5\])*.
    pub page_kib: u64,
    /// Static striping unit of LBAs over units for reads. 16 KiB *(assumed)*.
    pub stripe_kib: u64,
    /// Media read time tR per page. 60 µs, between FEMU 40 µs and MQSim 75 µs \[S5\]\[S6\].
    pub read_us: u64,
    /// Program time tPROG per page. 600 µs, between FEMU 200 µs and MQSim 750 µs \[S5\]\[S6\].
    pub program_us: u64,
    /// Block erase time (only used by GC). 3 ms, MQSim 3.8 ms / FEMU 2 ms \[S5\]\[S6\].
    pub erase_us: u64,
    /// Channel bus rate in 10^6 B/s. 333: MQSim 333 MT/s × 1 byte \[S5\].
    pub channel_mb_s: u64,
    /// Controller + driver time added to every command. nvme 15 µs *(assumed:
    /// gives QD1 4 KiB random read ≈ 80–90 µs, in line with \[S37\])*; sata-ssd 30 µs
    /// *(assumed)*.
    pub cmd_overhead_us: u64,
    /// Host link rate in 10^6 B/s. nvme 3500: PCIe 3.0 ×4 class;
    /// sata-ssd 550: SATA 6 Gb/s ≈ 550–600 MB/s usable.
    pub link_mb_s: u64,
    /// Serial link time per command besides data (FIS/TLP exchange). nvme 0 *(assumed:
    /// negligible next to data)*; sata-ssd 3000 ns *(assumed: caps 4 KiB QD32 reads near
    /// 96k IOPS, like the ≈98k IOPS datasheet figure of 850 EVO class drives)*.
    pub link_cmd_ns: u64,
    /// Link carries both directions at once. nvme true (PCIe is full duplex); sata-ssd
    /// false (SATA moves one FIS at a time).
    pub link_full_duplex: bool,
    /// DRAM/SLC write buffer. nvme 256 MiB: MQSim `Data_Cache_Capacity` \[S5\]; sata-ssd
    /// 64 MiB *(assumed: most DRAM of a consumer SATA drive holds the FTL map)*.
    pub buffer_mib: u64,
    /// Latency from the end of the link transfer to the ack of a buffered write.
    /// 12 µs *(assumed)*.
    pub ack_us: u64,
    /// Volatile write cache present (FLUSH/FUA meaningful). Consumer drives: true
    /// *(assumed)*. false = every write completes only once programmed.
    pub write_cache: bool,
    /// FLUSH is an ordinary queued command. nvme true (NVMe Flush is an I/O command);
    /// sata-ssd false: FLUSH CACHE is non-NCQ \[F4\].
    pub flush_queued: bool,
    /// Device honours FUA natively. nvme true; sata-ssd false (libata default before
    /// v6.x) \[F4\].
    pub fua: bool,
    /// Power-loss protection: FLUSH/FUA cost only `plp_flush_us`. Consumer class: false.
    pub plp: bool,
    /// Fixed flush cost after the buffered data is programmed.
    /// nvme 1100 µs: QD1 4 KiB write+flush pair ≈ 1.74 ms (≈574 pairs/s, Samsung 980,
    /// `fsync=1`) \[F11\]; sata-ssd 1450 µs: pair ≈ 2.1 ms, consumer SATA drives in
    /// S. Han's journal test (840/850 EVO 1.9 MB/s ≈ 470 O_DSYNC 4 KiB writes/s; 850 Pro
    /// 1.2–1.5 MB/s; MX200 3.7 MB/s) \[F11\].
    pub flush_fixed_us: u64,
    /// FLUSH latency when `plp = true`. 5 µs *(assumed: power-loss-protected drives
    /// flush in µs)*.
    pub plp_flush_us: u64,
    /// GC model, `stat` or `none`.
    pub gc: GcMode,
    /// Initial flash state, `fob` or `steady`.
    pub precondition: Precondition,
    /// Spare flash beyond user capacity, percent. 7: MQSim default \[S5\].
    pub over_provisioning_pct: u32,
    /// Free-space share below which GC runs, percent. 5: MQSim default \[S5\].
    pub gc_threshold_pct: u32,
    /// Write amplification while GC runs. 2.5 *(assumed: random-write default)*.
    pub waf: f64,
    /// Pages per erase block. 256: MQSim default \[S5\].
    pub pages_per_block: u32,
    /// Spread of the service times: each read's media time, each program and each
    /// write's ack takes its nominal time times a log-normal factor of median 1 and this
    /// σ, drawn from the device's seeded stream. 0 in the presets *(assumed: exact
    /// service times)*; `iolab calibrate` fits it from a QD1 read's p99/p50.
    #[serde(default)]
    pub service_sigma: f64,
}

/// 7200 rpm class disk.
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HddParams {
    /// Capacity in 10^9 bytes. 4000 (HC310 class) \[S21\].
    pub capacity_gb: u64,
    /// NCQ tags. 32 \[S39\].
    pub queue_depth: u32,
    /// Spindle speed. 7200 → 8.33 ms revolution \[S21\].
    pub rpm: u32,
    /// Recording surfaces (heads); only sets the cylinder count. 8 *(assumed: 4 platters)*.
    pub heads: u32,
    /// Recording zones, sectors per track falling linearly outer → inner. 20
    /// *(assumed)*.
    pub zones: u32,
    /// Media rate of the outermost zone, 10^6 B/s. 250: outer:inner ≈ 2:1 \[S24\], mean
    /// ≈ 174–178 MB/s as in the blk-iocost HDD profile \[S11\].
    pub outer_mb_s: u64,
    /// Media rate of the innermost zone, 10^6 B/s. 120 \[S24\]\[S11\].
    pub inner_mb_s: u64,
    /// Single-track seek, reads. 0.23 ms \[S21\].
    pub seek_track_us: u64,
    /// Average (one-third stroke) seek, reads. 7.4 ms \[S21\].
    pub seek_avg_us: u64,
    /// Full-stroke seek. 16 ms *(assumed; a 5400 rpm laptop drive states 20–21 ms \[S23\])*.
    pub seek_full_us: u64,
    /// Single-track seek, writes (longer settle). 0.32 ms \[S21\].
    pub seek_track_write_us: u64,
    /// Average seek, writes. 8.2 ms \[S21\]\[S22\].
    pub seek_avg_write_us: u64,
    /// Command decode time before positioning starts. 0.1 ms *(assumed)*.
    pub cmd_overhead_us: u64,
    /// SATA link in 10^6 B/s (cache hits and writes into the cache). 600: the SATA 6 Gb/s
    /// line rate after 8b/10b coding.
    pub link_mb_s: u64,
    /// Volatile write cache enabled. true *(assumed)*.
    pub write_cache: bool,
    /// Write cache size. 64 MiB *(assumed)*.
    pub cache_mib: u64,
    /// FLUSH is queued. false: FLUSH CACHE is non-NCQ on SATA \[F4\].
    pub flush_queued: bool,
    /// Native FUA. false: libata default before v6.x \[F4\].
    pub fua: bool,
    /// Commands older than this are served first, whatever their position. 1 s
    /// *(assumed)*.
    pub max_age_ms: u64,
    /// Read-ahead segments. 16 *(assumed)*.
    pub ra_segments: u32,
    /// Read-ahead segment size (also the read-ahead distance). 1024 KiB
    /// *(assumed)*.
    pub ra_segment_kib: u64,
    /// Oldest cached writes considered per destage choice. 32 *(assumed: the NCQ scan
    /// breadth)*.
    pub destage_window: u32,
}

/// Canonical preset names.
const PRESETS: &[&str] = &["nvme", "sata-ssd", "hdd", "null"];

fn nvme() -> SsdParams {
    SsdParams {
        capacity_gb: 1000,
        queue_depth: 1024,
        channels: 8,
        luns_per_channel: 8,
        page_kib: 16,
        stripe_kib: 16,
        read_us: 60,
        program_us: 600,
        erase_us: 3000,
        channel_mb_s: 333,
        cmd_overhead_us: 15,
        link_mb_s: 3500,
        link_cmd_ns: 0,
        link_full_duplex: true,
        buffer_mib: 256,
        ack_us: 12,
        write_cache: true,
        flush_queued: true,
        fua: true,
        plp: false,
        flush_fixed_us: 1100,
        plp_flush_us: 5,
        gc: GcMode::Stat,
        precondition: Precondition::Fob,
        over_provisioning_pct: 7,
        gc_threshold_pct: 5,
        waf: 2.5,
        pages_per_block: 256,
        service_sigma: 0.0,
    }
}

fn sata_ssd() -> SsdParams {
    SsdParams {
        capacity_gb: 512,
        queue_depth: 32,
        channels: 4,
        luns_per_channel: 4,
        cmd_overhead_us: 30,
        link_mb_s: 550,
        link_cmd_ns: 3000,
        link_full_duplex: false,
        buffer_mib: 64,
        flush_queued: false,
        fua: false,
        flush_fixed_us: 1450,
        ..nvme()
    }
}

fn hdd() -> HddParams {
    HddParams {
        capacity_gb: 4000,
        queue_depth: 32,
        rpm: 7200,
        heads: 8,
        zones: 20,
        outer_mb_s: 250,
        inner_mb_s: 120,
        seek_track_us: 230,
        seek_avg_us: 7400,
        seek_full_us: 16000,
        seek_track_write_us: 320,
        seek_avg_write_us: 8200,
        cmd_overhead_us: 100,
        link_mb_s: 600,
        write_cache: true,
        cache_mib: 64,
        flush_queued: false,
        fua: false,
        max_age_ms: 1000,
        ra_segments: 16,
        ra_segment_kib: 1024,
        destage_window: 32,
    }
}

// Sources per key, for `describe`. Columns: key, unit, nvme source, sata-ssd source.
const SSD_DOCS: &[(&str, &str, &str, &str)] = &[
    (
        "capacity_gb",
        "GB",
        "device class (assumed)",
        "device class (assumed)",
    ),
    (
        "queue_depth",
        "tags",
        "[S10] nvme.io_queue_depth",
        "[S39] NCQ 32 tags",
    ),
    ("channels", "", "[S5][S6] 8 ch", "(assumed) 16 units"),
    (
        "luns_per_channel",
        "",
        "[S5][S6] 64 units",
        "(assumed) 16 units",
    ),
    (
        "page_kib",
        "KiB",
        "(assumed) MQSim uses 8 KiB MLC [S5]",
        "(assumed) MQSim uses 8 KiB MLC [S5]",
    ),
    ("stripe_kib", "KiB", "(assumed)", "(assumed)"),
    (
        "read_us",
        "us",
        "[S5][S6] FEMU 40 / MQSim 75",
        "[S5][S6] same media as nvme",
    ),
    (
        "program_us",
        "us",
        "[S5][S6] FEMU 200 / MQSim 750",
        "[S5][S6] same media as nvme",
    ),
    (
        "erase_us",
        "us",
        "[S5][S6] MQSim 3.8 ms / FEMU 2 ms",
        "[S5][S6]",
    ),
    (
        "channel_mb_s",
        "MB/s",
        "[S5] 333 MT/s x 1 B",
        "[S5] 333 MT/s x 1 B",
    ),
    (
        "cmd_overhead_us",
        "us",
        "(assumed) QD1 4k read 80-90 us [S37]",
        "(assumed)",
    ),
    ("link_mb_s", "MB/s", "PCIe 3.0 x4 class", "SATA 6 Gb/s"),
    (
        "link_cmd_ns",
        "ns",
        "(assumed) negligible",
        "(assumed) ~96k QD32 4k read IOPS cap, 850 EVO class spec ~98k",
    ),
    (
        "link_full_duplex",
        "",
        "PCIe full duplex",
        "SATA half duplex",
    ),
    (
        "buffer_mib",
        "MiB",
        "[S5] Data_Cache_Capacity",
        "(assumed) DRAM mostly FTL map",
    ),
    ("ack_us", "us", "(assumed)", "(assumed)"),
    (
        "write_cache",
        "",
        "(assumed) consumer VWC",
        "(assumed) consumer VWC",
    ),
    (
        "flush_queued",
        "",
        "NVMe Flush is an I/O command",
        "[F4] non-NCQ FLUSH CACHE",
    ),
    ("fua", "", "[F4] NVMe FUA", "[F4] libata fua=0"),
    ("plp", "", "consumer class", "consumer class"),
    (
        "flush_fixed_us",
        "us",
        "[F11] 4k write+flush pair ~1.74 ms (574/s)",
        "[F11] Han consumer SATA ~470 pairs/s (~2.1 ms)",
    ),
    (
        "plp_flush_us",
        "us",
        "(assumed) PLP flushes take us",
        "(assumed) PLP flushes take us",
    ),
    (
        "gc",
        "",
        "(assumed) fast stat model",
        "(assumed) fast stat model",
    ),
    (
        "precondition",
        "",
        "(assumed) fresh out of box",
        "(assumed) fresh out of box",
    ),
    ("over_provisioning_pct", "%", "[S5]", "[S5]"),
    ("gc_threshold_pct", "%", "[S5]", "[S5]"),
    (
        "waf",
        "x",
        "(assumed) random-write default",
        "(assumed) random-write default",
    ),
    ("pages_per_block", "pages", "[S5]", "[S5]"),
    (
        "service_sigma",
        "",
        "(assumed) exact service times",
        "(assumed) exact service times",
    ),
];

const HDD_DOCS: &[(&str, &str, &str)] = &[
    ("capacity_gb", "GB", "[S21] HC310 class"),
    ("queue_depth", "tags", "[S39] NCQ"),
    ("rpm", "rpm", "[S21]"),
    (
        "heads",
        "",
        "(assumed) 4 platters; sets cylinder count only",
    ),
    ("zones", "", "(assumed)"),
    ("outer_mb_s", "MB/s", "[S24] 2:1 outer:inner, [S11] mean"),
    ("inner_mb_s", "MB/s", "[S24][S11]"),
    ("seek_track_us", "us", "[S21]"),
    ("seek_avg_us", "us", "[S21]"),
    ("seek_full_us", "us", "(assumed) [S23] 20-21 ms at 5400 rpm"),
    ("seek_track_write_us", "us", "[S21]"),
    ("seek_avg_write_us", "us", "[S21][S22]"),
    ("cmd_overhead_us", "us", "(assumed)"),
    (
        "link_mb_s",
        "MB/s",
        "SATA 6 Gb/s after 8b/10b (interface rate)",
    ),
    ("write_cache", "", "(assumed)"),
    ("cache_mib", "MiB", "(assumed)"),
    ("flush_queued", "", "[F4] non-NCQ FLUSH CACHE"),
    ("fua", "", "[F4] libata fua=0"),
    ("max_age_ms", "ms", "(assumed)"),
    ("ra_segments", "", "(assumed)"),
    ("ra_segment_kib", "KiB", "(assumed)"),
    ("destage_window", "extents", "(assumed) NCQ scan breadth"),
];

/// A loop device's values are all measured; the file's comments name the
/// probe each came from.
const LOOP_DOCS: &[(&str, &str, &str)] = &[
    ("capacity_gb", "GB", "the device's size"),
    ("queue_depth", "tags", "queue/nr_requests"),
    ("units", "", "measured (iolab calibrate)"),
    ("write_units", "", "measured (iolab calibrate)"),
    ("read_us", "us", "measured (iolab calibrate)"),
    ("write_us", "us", "measured (iolab calibrate)"),
    ("read_mb_s", "MB/s", "measured (iolab calibrate)"),
    ("write_mb_s", "MB/s", "measured (iolab calibrate)"),
    ("flush_us", "us", "measured (iolab calibrate)"),
    ("flush_drains", "", "measured (iolab calibrate)"),
    ("write_cache", "", "queue/write_cache"),
    ("fua", "", "queue/fua"),
    ("service_sigma", "", "measured (iolab calibrate)"),
    ("write_sigma", "", "measured (iolab calibrate)"),
    ("transfer_sigma", "", "measured (iolab calibrate)"),
    ("write_transfer_sigma", "", "measured (iolab calibrate)"),
    ("run_sigma", "", "measured (iolab calibrate)"),
    ("write_run_sigma", "", "measured (iolab calibrate)"),
];

const NULL_DOCS: &[(&str, &str, &str)] = &[
    ("capacity_gb", "GB", "[S8] null_blk gb=250"),
    ("queue_depth", "tags", "[S8] hw_queue_depth=64"),
    ("completion_ns", "ns", "[S8] completion_nsec=10000"),
];

fn invalid(key: &str, msg: impl Into<String>) -> DeviceError {
    DeviceError::Invalid {
        key: key.to_string(),
        msg: msg.into(),
    }
}

fn nonzero(key: &str, v: u64) -> Result<(), DeviceError> {
    if v == 0 {
        Err(invalid(key, "must be greater than 0"))
    } else {
        Ok(())
    }
}

fn at_most(key: &str, v: u64, max: u64) -> Result<(), DeviceError> {
    if v > max {
        Err(invalid(key, format!("must be at most {max}")))
    } else {
        Ok(())
    }
}

/// Upper bound on capacities: keeps every byte/ns product inside u64/u128 arithmetic.
const MAX_CAPACITY_GB: u64 = 1_000_000;
/// Upper bound on any time parameter in µs (one hour).
const MAX_TIME_US: u64 = 3_600_000_000;
/// Shortest completion of the null device, ns: null_blk's own work per
/// command is about a microsecond of CPU, and commands of no cost would
/// let a time-based run issue IOs without end.
const MIN_NULL_NS: u64 = 1000;
/// Shortest flash array read or program, µs: no NAND reads or programs
/// faster (the fastest low-latency parts read in a few µs).
const MIN_FLASH_US: u64 = 1;
/// Fastest link or channel, 10^6 B/s: a terabyte per second, beyond any
/// host interface.
const MAX_LINK_MB_S: u64 = 1_000_000;

fn at_least(key: &str, v: u64, min: u64, why: &str) -> Result<(), DeviceError> {
    if v < min {
        Err(invalid(key, format!("must be at least {min}: {why}")))
    } else {
        Ok(())
    }
}

impl DeviceConfig {
    /// Built-in device class: `nvme`, `sata-ssd`, `hdd`, `null` (aliases `nvme-tlc`,
    /// `hdd-7200`).
    pub fn preset(name: &str) -> Option<DeviceConfig> {
        let (name, kind) = match name {
            "nvme" | "nvme-tlc" => ("nvme", DeviceKind::Ssd),
            "sata-ssd" => ("sata-ssd", DeviceKind::Ssd),
            "hdd" | "hdd-7200" => ("hdd", DeviceKind::Hdd),
            "null" => ("null", DeviceKind::Null),
            _ => return None,
        };
        let mut cfg = DeviceConfig {
            name: name.to_string(),
            kind,
            base: None,
            null: None,
            ssd: None,
            hdd: None,
            loop_dev: None,
            host_io_us: 0.0,
            host_wake_us: 0.0,
            host_submit_us: 0.0,
            zoned: None,
        };
        match name {
            "nvme" => cfg.ssd = Some(nvme()),
            "sata-ssd" => cfg.ssd = Some(sata_ssd()),
            "hdd" => cfg.hdd = Some(hdd()),
            _ => {
                cfg.null = Some(NullParams {
                    capacity_gb: 250,
                    queue_depth: 64,
                    completion_ns: 10_000,
                })
            }
        }
        Some(cfg)
    }

    /// Canonical preset names.
    pub fn preset_names() -> &'static [&'static str] {
        PRESETS
    }

    /// Parse a device file. With `base = "<preset>"` only the keys given override the
    /// preset; without it every parameter of the kind's table must be present. Unknown
    /// keys and impossible values are errors naming the key.
    pub fn from_toml(text: &str) -> Result<DeviceConfig, DeviceError> {
        let mut user: toml::Table =
            toml::from_str(text).map_err(|e| DeviceError::Syntax(e.to_string()))?;
        if user.is_empty() {
            return Err(DeviceError::Parse(
                "the file is empty: a device file gives `name` and `kind` (or `base`, a preset to start from)"
                    .into(),
            ));
        }
        // `[zoned]` is a table no preset has: it is added, not merged.
        let zoned = user.remove("zoned");
        let mut merged = match user.remove("base") {
            Some(toml::Value::String(base)) => {
                let preset = DeviceConfig::preset(&base)
                    .ok_or_else(|| DeviceError::UnknownPreset(base.clone()))?;
                let mut table = toml::Table::try_from(&preset)
                    .map_err(|e| DeviceError::Parse(e.to_string()))?;
                if let Some(kind) = user.get("kind")
                    && kind.as_str() != Some(preset.kind.table())
                {
                    return Err(invalid(
                        "kind",
                        format!("base preset `{base}` is of kind `{}`", preset.kind.table()),
                    ));
                }
                merge(&mut table, user, "")?;
                table.insert("base".to_string(), toml::Value::String(base));
                table
            }
            Some(_) => return Err(invalid("base", "must be a preset name string")),
            None => user,
        };
        if let Some(z) = zoned {
            merged.insert("zoned".to_string(), z);
        }
        let cfg: DeviceConfig = merged.try_into().map_err(|e: toml::de::Error| {
            // The deserializer puts the table on a line of its own.
            let msg = e.to_string();
            DeviceError::Parse(msg.trim().replace("\nin `", " in `"))
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Check every parameter; the error names the offending key (`ssd.queue_depth`).
    pub fn validate(&self) -> Result<(), DeviceError> {
        let tables = [
            (DeviceKind::Null, self.null.is_some()),
            (DeviceKind::Ssd, self.ssd.is_some()),
            (DeviceKind::Hdd, self.hdd.is_some()),
            (DeviceKind::Loop, self.loop_dev.is_some()),
        ];
        for (kind, present) in tables {
            if kind == self.kind && !present {
                return Err(DeviceError::MissingTable(kind.table().to_string()));
            }
            if kind != self.kind && present {
                return Err(DeviceError::UnknownKey(format!(
                    "{} (kind is `{}`)",
                    kind.table(),
                    self.kind.table()
                )));
            }
        }
        for (key, v) in [
            ("host_io_us", self.host_io_us),
            ("host_wake_us", self.host_wake_us),
            ("host_submit_us", self.host_submit_us),
        ] {
            if !(v.is_finite() && (0.0..=MAX_TIME_US as f64).contains(&v)) {
                return Err(invalid(key, format!("must be 0 to {MAX_TIME_US} µs")));
            }
        }
        if self.host_submit_us > self.host_io_us {
            return Err(invalid(
                "host_submit_us",
                format!(
                    "{} µs is more than host_io_us ({} µs), the host time it is part of",
                    self.host_submit_us, self.host_io_us
                ),
            ));
        }
        if let Some(p) = &self.null {
            nonzero("null.capacity_gb", p.capacity_gb)?;
            at_most("null.capacity_gb", p.capacity_gb, MAX_CAPACITY_GB)?;
            nonzero("null.queue_depth", u64::from(p.queue_depth))?;
            at_most("null.queue_depth", u64::from(p.queue_depth), 65_536)?;
            at_least(
                "null.completion_ns",
                p.completion_ns,
                MIN_NULL_NS,
                "null_blk's own work per command is about a microsecond, and commands of no cost never let a run end",
            )?;
            at_most("null.completion_ns", p.completion_ns, MAX_TIME_US * 1000)?;
        }
        if let Some(p) = &self.ssd {
            validate_ssd(p)?;
        }
        if let Some(p) = &self.hdd {
            validate_hdd(p)?;
        }
        if let Some(p) = &self.loop_dev {
            validate_loop(p)?;
        }
        if let Some(z) = &self.zoned {
            nonzero("zoned.zone_size_mib", z.zone_size_mib)?;
            let gb = match (&self.null, &self.ssd, &self.hdd, &self.loop_dev) {
                (Some(p), ..) => p.capacity_gb,
                (_, Some(p), ..) => p.capacity_gb,
                (_, _, Some(p), _) => p.capacity_gb,
                (.., Some(p)) => p.capacity_gb,
                _ => 0,
            };
            let capacity = gb.saturating_mul(1_000_000_000);
            if z.zone_size_mib.saturating_mul(1 << 20) > capacity {
                return Err(invalid(
                    "zoned.zone_size_mib",
                    format!("is larger than the device ({capacity} bytes)"),
                ));
            }
            at_most(
                "zoned.max_open_zones",
                u64::from(z.max_open_zones),
                u64::from(MAX_OPEN_ZONES),
            )?;
        }
        Ok(())
    }

    /// Human-readable table: every parameter with value, unit and source. Values that
    /// differ from the preset this config was derived from are marked as overrides.
    pub fn describe(&self) -> String {
        use std::fmt::Write;
        let reference = self
            .base
            .as_deref()
            .and_then(DeviceConfig::preset)
            .or_else(|| DeviceConfig::preset(&self.name))
            .filter(|p| p.kind == self.kind);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "device `{}` (kind {}{})",
            self.name,
            self.kind.table(),
            match &self.base {
                Some(b) => format!(", base {b}"),
                None => String::new(),
            }
        );
        let _ = writeln!(
            out,
            "{:<24} {:>12} {:<8} source",
            "parameter", "value", "unit"
        );
        let rows: Vec<(&str, &str, &str)> = match self.kind {
            DeviceKind::Null => NULL_DOCS.to_vec(),
            DeviceKind::Hdd => HDD_DOCS.to_vec(),
            DeviceKind::Loop => LOOP_DOCS.to_vec(),
            DeviceKind::Ssd => {
                let sata = reference.as_ref().is_some_and(|r| r.name == "sata-ssd");
                SSD_DOCS
                    .iter()
                    .map(|&(k, u, n, s)| (k, u, if sata { s } else { n }))
                    .collect()
            }
        };
        let table = |c: &DeviceConfig| -> Option<toml::Table> {
            let v = match c.kind {
                DeviceKind::Null => toml::Table::try_from(c.null.as_ref()?),
                DeviceKind::Ssd => toml::Table::try_from(c.ssd.as_ref()?),
                DeviceKind::Hdd => toml::Table::try_from(c.hdd.as_ref()?),
                DeviceKind::Loop => toml::Table::try_from(c.loop_dev.as_ref()?),
            };
            v.ok()
        };
        let mine = table(self).unwrap_or_default();
        let theirs = reference.as_ref().and_then(table);
        for (key, unit, src) in rows {
            let value = mine.get(key).map(fmt_value).unwrap_or_default();
            let overridden = match &theirs {
                Some(t) => t.get(key) != mine.get(key),
                None => true,
            };
            let src = if overridden {
                "override (user value, no source)"
            } else {
                src
            };
            let _ = writeln!(out, "{key:<24} {value:>12} {unit:<8} {src}");
        }
        for (key, v, what) in [
            (
                "host_io_us",
                self.host_io_us,
                "host time per direct IO, reaped one at a time",
            ),
            (
                "host_wake_us",
                self.host_wake_us,
                "waking a thread that slept for its IO",
            ),
            (
                "host_submit_us",
                self.host_submit_us,
                "of host_io_us, an engine's submission (fio's slat)",
            ),
        ] {
            if v > 0.0 {
                let _ = writeln!(
                    out,
                    "{key:<24} {v:>12} {:<8} measured (iolab calibrate), {what}",
                    "us"
                );
            }
        }
        if let Some(z) = &self.zoned {
            let _ = writeln!(
                out,
                "{:<24} {:>12} {:<8} host-managed zoned: every zone sequential-write-required",
                "zoned.zone_size_mib", z.zone_size_mib, "MiB"
            );
            let _ = writeln!(
                out,
                "{:<24} {:>12} {:<8} the device's open-zone limit (0: none)",
                "zoned.max_open_zones", z.max_open_zones, "zones"
            );
        }
        out
    }
}

fn fmt_value(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The 1-based line of `key` (`ssd.read_us`, or a table such as `loop`)
/// in a device file's `text`: its `key = ...` line under its table's
/// header, or the header of a table. `None` if the file does not spell
/// it so (a key left out, or written inline).
pub fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let (table, leaf) = key.rsplit_once('.').unwrap_or(("", key));
    let mut current = "";
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(h) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            current = h.trim();
            if current == key {
                return Some(i + 1);
            }
            continue;
        }
        if current == table
            && let Some((k, _)) = t.split_once('=')
            && k.trim() == leaf
        {
            return Some(i + 1);
        }
    }
    None
}

/// Overlay `user` on `base`, refusing keys the base does not have.
fn merge(base: &mut toml::Table, user: toml::Table, prefix: &str) -> Result<(), DeviceError> {
    for (key, value) in user {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match base.get_mut(&key) {
            None => return Err(DeviceError::UnknownKey(path)),
            Some(toml::Value::Table(b)) => match value {
                toml::Value::Table(u) => merge(b, u, &path)?,
                _ => return Err(invalid(&path, "must be a table")),
            },
            // Let `waf = 3` stand for 3.0.
            Some(slot @ toml::Value::Float(_)) => match value {
                toml::Value::Integer(i) => *slot = toml::Value::Float(i as f64),
                v => *slot = v,
            },
            Some(slot) => *slot = value,
        }
    }
    Ok(())
}

fn validate_ssd(p: &SsdParams) -> Result<(), DeviceError> {
    nonzero("ssd.capacity_gb", p.capacity_gb)?;
    at_most("ssd.capacity_gb", p.capacity_gb, MAX_CAPACITY_GB)?;
    nonzero("ssd.queue_depth", u64::from(p.queue_depth))?;
    at_most("ssd.queue_depth", u64::from(p.queue_depth), 65_536)?;
    nonzero("ssd.channels", u64::from(p.channels))?;
    at_most("ssd.channels", u64::from(p.channels), 1024)?;
    nonzero("ssd.luns_per_channel", u64::from(p.luns_per_channel))?;
    at_most("ssd.luns_per_channel", u64::from(p.luns_per_channel), 1024)?;
    nonzero("ssd.page_kib", p.page_kib)?;
    at_most("ssd.page_kib", p.page_kib, 1024)?;
    nonzero("ssd.stripe_kib", p.stripe_kib)?;
    at_most("ssd.stripe_kib", p.stripe_kib, 1 << 20)?;
    for (k, v) in [
        ("ssd.read_us", p.read_us),
        ("ssd.program_us", p.program_us),
        ("ssd.erase_us", p.erase_us),
        ("ssd.cmd_overhead_us", p.cmd_overhead_us),
        ("ssd.ack_us", p.ack_us),
        ("ssd.flush_fixed_us", p.flush_fixed_us),
        ("ssd.plp_flush_us", p.plp_flush_us),
        ("ssd.link_cmd_ns", p.link_cmd_ns / 1000),
    ] {
        at_most(k, v, MAX_TIME_US)?;
    }
    for (k, v) in [("ssd.read_us", p.read_us), ("ssd.program_us", p.program_us)] {
        at_least(
            k,
            v,
            MIN_FLASH_US,
            "no flash array reads or programs faster",
        )?;
    }
    nonzero("ssd.channel_mb_s", p.channel_mb_s)?;
    at_most("ssd.channel_mb_s", p.channel_mb_s, MAX_LINK_MB_S)?;
    nonzero("ssd.link_mb_s", p.link_mb_s)?;
    at_most("ssd.link_mb_s", p.link_mb_s, MAX_LINK_MB_S)?;
    nonzero("ssd.buffer_mib", p.buffer_mib)?;
    at_most("ssd.buffer_mib", p.buffer_mib, 1 << 20)?;
    if p.buffer_mib * 1024 < 4 * p.page_kib {
        return Err(invalid("ssd.buffer_mib", "must hold at least 4 pages"));
    }
    if p.over_provisioning_pct > 100 {
        return Err(invalid("ssd.over_provisioning_pct", "must be at most 100"));
    }
    if p.gc_threshold_pct == 0 || p.gc_threshold_pct >= 100 {
        return Err(invalid("ssd.gc_threshold_pct", "must be between 1 and 99"));
    }
    if !(p.waf.is_finite() && (1.0..=100.0).contains(&p.waf)) {
        return Err(invalid("ssd.waf", "must be a number between 1 and 100"));
    }
    nonzero("ssd.pages_per_block", u64::from(p.pages_per_block))?;
    if !(p.service_sigma.is_finite() && (0.0..=2.0).contains(&p.service_sigma)) {
        return Err(invalid("ssd.service_sigma", "must be between 0 and 2"));
    }
    Ok(())
}

/// Shortest fixed time of a loop device's command: a copy of one page in
/// RAM takes longer, and a device of zero-cost commands never lets the
/// simulated clock move.
const MIN_LOOP_US: f64 = 0.1;

fn validate_loop(p: &LoopParams) -> Result<(), DeviceError> {
    nonzero("loop.capacity_gb", p.capacity_gb)?;
    at_most("loop.capacity_gb", p.capacity_gb, MAX_CAPACITY_GB)?;
    nonzero("loop.queue_depth", u64::from(p.queue_depth))?;
    at_most("loop.queue_depth", u64::from(p.queue_depth), 65_536)?;
    nonzero("loop.units", u64::from(p.units))?;
    at_most("loop.units", u64::from(p.units), 1024)?;
    at_most("loop.write_units", u64::from(p.write_units), 1024)?;
    for (k, v) in [
        ("loop.read_us", p.read_us),
        ("loop.write_us", p.write_us),
        ("loop.flush_us", p.flush_us),
    ] {
        if !(v.is_finite() && (MIN_LOOP_US..=MAX_TIME_US as f64).contains(&v)) {
            return Err(invalid(
                k,
                format!("must be {MIN_LOOP_US} to {MAX_TIME_US} µs"),
            ));
        }
    }
    for (k, v) in [
        ("loop.read_mb_s", p.read_mb_s),
        ("loop.write_mb_s", p.write_mb_s),
    ] {
        nonzero(k, v)?;
        at_most(k, v, MAX_LINK_MB_S)?;
    }
    for (k, v) in [
        ("loop.service_sigma", p.service_sigma),
        ("loop.write_sigma", p.write_sigma),
        ("loop.transfer_sigma", p.transfer_sigma),
        ("loop.write_transfer_sigma", p.write_transfer_sigma),
        ("loop.run_sigma", p.run_sigma),
        ("loop.write_run_sigma", p.write_run_sigma),
    ] {
        if !(v.is_finite() && (0.0..=2.0).contains(&v)) {
            return Err(invalid(k, "must be between 0 and 2"));
        }
    }
    Ok(())
}

fn validate_hdd(p: &HddParams) -> Result<(), DeviceError> {
    nonzero("hdd.capacity_gb", p.capacity_gb)?;
    at_most("hdd.capacity_gb", p.capacity_gb, MAX_CAPACITY_GB)?;
    nonzero("hdd.queue_depth", u64::from(p.queue_depth))?;
    at_most("hdd.queue_depth", u64::from(p.queue_depth), 256)?;
    nonzero("hdd.rpm", u64::from(p.rpm))?;
    at_most("hdd.rpm", u64::from(p.rpm), 100_000)?;
    nonzero("hdd.heads", u64::from(p.heads))?;
    at_most("hdd.heads", u64::from(p.heads), 64)?;
    nonzero("hdd.zones", u64::from(p.zones))?;
    at_most("hdd.zones", u64::from(p.zones), 1000)?;
    nonzero("hdd.inner_mb_s", p.inner_mb_s)?;
    nonzero("hdd.outer_mb_s", p.outer_mb_s)?;
    at_most("hdd.outer_mb_s", p.outer_mb_s, 1 << 20)?;
    if p.inner_mb_s > p.outer_mb_s {
        return Err(invalid("hdd.inner_mb_s", "must not exceed outer_mb_s"));
    }
    for (k, v) in [
        ("hdd.seek_track_us", p.seek_track_us),
        ("hdd.seek_avg_us", p.seek_avg_us),
        ("hdd.seek_full_us", p.seek_full_us),
        ("hdd.seek_track_write_us", p.seek_track_write_us),
        ("hdd.seek_avg_write_us", p.seek_avg_write_us),
        ("hdd.cmd_overhead_us", p.cmd_overhead_us),
        ("hdd.max_age_ms", p.max_age_ms.saturating_mul(1000)),
    ] {
        at_most(k, v, MAX_TIME_US)?;
    }
    if !(p.seek_track_us <= p.seek_avg_us && p.seek_avg_us <= p.seek_full_us) {
        return Err(invalid(
            "hdd.seek_avg_us",
            "need seek_track_us <= seek_avg_us <= seek_full_us",
        ));
    }
    if !(p.seek_track_write_us <= p.seek_avg_write_us && p.seek_avg_write_us <= p.seek_full_us) {
        return Err(invalid(
            "hdd.seek_avg_write_us",
            "need seek_track_write_us <= seek_avg_write_us <= seek_full_us",
        ));
    }
    nonzero("hdd.link_mb_s", p.link_mb_s)?;
    at_most("hdd.link_mb_s", p.link_mb_s, MAX_LINK_MB_S)?;
    if p.write_cache {
        nonzero("hdd.cache_mib", p.cache_mib)?;
    }
    at_most("hdd.cache_mib", p.cache_mib, 1 << 16)?;
    nonzero("hdd.ra_segments", u64::from(p.ra_segments))?;
    at_most("hdd.ra_segments", u64::from(p.ra_segments), 1024)?;
    nonzero("hdd.ra_segment_kib", p.ra_segment_kib)?;
    at_most("hdd.ra_segment_kib", p.ra_segment_kib, 1 << 20)?;
    nonzero("hdd.destage_window", u64::from(p.destage_window))?;
    at_most("hdd.destage_window", u64::from(p.destage_window), 1024)?;
    super::hdd::check_params(p)
}
