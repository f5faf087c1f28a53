//! What a run will cost, known before it runs: the memory it holds (its
//! jobs' statistics and its devices' up-front state) and the IOs it will
//! simulate, estimated from the jobs and the devices. The CLI refuses a
//! run above [`MAX_BYTES`] or [`MAX_IOS`] and warns above [`WARN_BYTES`]
//! or [`WARN_IOS`], naming the option or device key that makes the cost;
//! a run above [`MAX_IOS`] only for jobs that steady-state detection
//! (`ss=`) may end early is held to it as it runs instead
//! ([`crate::Scenario::io_budget`]).
//!
//! The IO estimate is of the order of magnitude, not a prediction: each
//! job does its size over its mean block size (a `bssplit`'s weighted mean)
//! when it is not time based, and at most, for its runtime, what its IOs
//! in flight complete at the device's shortest service time (an SSD's
//! command overhead included), capped by its `rate_iops` and by what the
//! host link carries; all of them together at most what the device's tags
//! complete at that time. A job on fio's `null` engine or on `/dev/null`
//! or `/dev/zero` uses no device: its IOs in flight complete at its
//! engine's or call's own cost, whatever the device.

use crate::device::{DeviceConfig, DeviceKind};
use crate::fio::{Engine, JobSpec, SizeSpec};

/// Memory a run may be planned to hold.
pub const MAX_BYTES: u64 = 4 << 30;
/// Above this, the run goes on with a warning.
pub const WARN_BYTES: u64 = 1 << 30;
/// IOs a run may be estimated to simulate (at a few million a second of
/// wall time, several minutes).
pub const MAX_IOS: u64 = 1_000_000_000;
/// Above this (a minute or more of wall time), a warning.
pub const WARN_IOS: u64 = 300_000_000;
/// What one job (one clone) holds for its statistics: latency histograms
/// per direction, its time series (measured: 4,096 clones of a
/// rate-limited 300 s job peak at 1.35 GiB).
pub const JOB_BYTES: u64 = 352 << 10;

/// A device's state allocated when it is built, and the key that sizes
/// it when one does.
pub fn device_bytes(d: &DeviceConfig) -> (u64, Option<&'static str>) {
    match d.kind {
        DeviceKind::Hdd => d.hdd.as_ref().map_or((0, None), |p| {
            if !p.write_cache {
                return (0, None);
            }
            // Two cache extents of 40 bytes per 4 KiB page of the cache.
            let pages = (p.cache_mib << 20) / 4096;
            (pages.saturating_mul(2 * 40), Some("hdd.cache_mib"))
        }),
        DeviceKind::Ssd => d.ssd.as_ref().map_or((0, None), |p| {
            let page = (p.page_kib * 1024).max(1);
            let pages = (p.buffer_mib << 20) / page;
            (pages.saturating_mul(16), Some("ssd.buffer_mib"))
        }),
        DeviceKind::Null | DeviceKind::Loop => (0, None),
    }
}

/// The shortest time a command takes on `d`, ns, and its tags: what the
/// device completes at most, `tags` IOs per such time.
fn fastest(d: &DeviceConfig) -> (u64, u64, &'static str) {
    let us = |v: u64| v.saturating_mul(1000);
    match d.kind {
        DeviceKind::Null => d.null.as_ref().map_or((1, 1, "null"), |p| {
            (
                p.completion_ns.max(1),
                u64::from(p.queue_depth),
                "null.completion_ns",
            )
        }),
        // Every command pays the controller's overhead and at least a
        // buffered write's ack (or a media read, if shorter).
        DeviceKind::Ssd => d.ssd.as_ref().map_or((1, 1, "ssd"), |p| {
            (
                us(p.cmd_overhead_us + p.read_us.min(p.ack_us.max(1))).max(1),
                u64::from(p.queue_depth),
                "ssd.cmd_overhead_us + ssd.ack_us",
            )
        }),
        DeviceKind::Hdd => d.hdd.as_ref().map_or((1, 1, "hdd"), |p| {
            (
                us(p.cmd_overhead_us).max(1),
                u64::from(p.queue_depth),
                "hdd.cmd_overhead_us",
            )
        }),
        DeviceKind::Loop => d.loop_dev.as_ref().map_or((1, 1, "loop"), |p| {
            (
                ((p.read_us.min(p.write_us) * 1000.0) as u64).max(1),
                u64::from(p.queue_depth),
                "loop.read_us",
            )
        }),
    }
}

/// IOs a second the devices' host links carry at most in `bs`-byte
/// transfers (an SSD's `link_mb_s`); `None` when a device has no such
/// bound.
fn link_iops(devices: &[DeviceConfig], bs: u64) -> Option<u128> {
    let mut sum: u128 = 0;
    for d in devices {
        let p = d.ssd.as_ref().filter(|_| d.kind == DeviceKind::Ssd)?;
        sum += u128::from(p.link_mb_s) * 1_000_000 / u128::from(bs.max(1));
    }
    Some(sum.max(1))
}

/// The estimate of a run's IOs, and what drives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoEstimate {
    /// IOs, at most.
    pub ios: u64,
    /// The job with the most, by index.
    pub job: usize,
    /// How that job's count comes about, for a message.
    pub why: String,
}

/// IOs a job's `depth` keeps in flight with its engine and `direct`.
fn in_flight(j: &JobSpec) -> u64 {
    let depth = u64::from(j.iodepth.max(1));
    let per = if j.ioengine.is_async() { depth } else { 1 };
    per.saturating_mul(u64::from(j.numjobs.max(1)))
}

/// The estimate for `jobs` on `devices` (a volume's, or one).
pub fn estimate_ios(jobs: &[JobSpec], devices: &[DeviceConfig]) -> IoEstimate {
    let (svc_ns, tags, key) = devices
        .iter()
        .map(fastest)
        .min_by_key(|&(ns, _, _)| ns)
        .unwrap_or((1, 1, "device"));
    let all_tags: u64 = devices.iter().map(|d| fastest(d).1).sum::<u64>().max(1);
    let mut total: u64 = 0;
    // The IOs of jobs that use no device, which its tags do not cap.
    let mut free: u64 = 0;
    let mut best = IoEstimate {
        ios: 0,
        job: 0,
        why: String::new(),
    };
    for (i, j) in jobs.iter().enumerate() {
        let n = u64::from(j.numjobs.max(1));
        let bs = j.bs.iter().map(|b| b.min).min().unwrap_or(4096).max(1);
        // A size's IOs are its bytes over the mean block: a bssplit's
        // weighted mean (its smallest over the directions with one).
        let size_bs = j
            .bssplit
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| {
                let pct: u64 = s.iter().map(|&(_, p)| u64::from(p)).sum();
                let bytes: u64 = s.iter().map(|&(b, p)| b * u64::from(p)).sum();
                bytes.checked_div(pct).unwrap_or(bs)
            })
            .min()
            .unwrap_or(bs)
            .max(1);
        let by_size = match (j.time_based, j.io_size.or(j.size)) {
            (false, Some(SizeSpec::Bytes(b))) if b > 0 => Some(
                (b / size_bs)
                    .saturating_mul(u64::from(j.loops.max(1)))
                    .saturating_mul(n),
            ),
            _ => None,
        };
        let runtime_ns = j.runtime_ns.unwrap_or(0);
        let no_device = no_device_ns(j);
        let by_time = (runtime_ns > 0).then(|| {
            // IOs a second the job's IOs in flight complete, at most.
            // fio's null engine here completes each IO as it is queued:
            // one in flight per clone.
            let flight = if matches!(j.ioengine, Engine::Null | Engine::CppNull) {
                n
            } else {
                in_flight(j)
            };
            let mut per_s = match no_device {
                Some(ns) => u128::from(flight) * 1_000_000_000 / u128::from(ns),
                None => u128::from(in_flight(j).min(all_tags)) * 1_000_000_000 / u128::from(svc_ns),
            };
            // The directions the job does, each at most its rate_iops;
            // one without a cap uncaps the job.
            let mode = j.rw.mode;
            let dirs = [mode.reads(), mode.writes(), mode.trims()];
            let caps: Vec<u64> = (0..3)
                .filter(|&d| dirs[d])
                .map(|d| u64::from(j.rate_iops[d]))
                .collect();
            let cap = if caps.contains(&0) {
                0
            } else {
                caps.iter().sum()
            };
            if cap > 0 {
                per_s = per_s.min(u128::from(cap) * u128::from(n));
            }
            if let Some(link) = link_iops(devices, bs).filter(|_| no_device.is_none()) {
                per_s = per_s.min(link);
            }
            let ios = per_s * u128::from(runtime_ns) / 1_000_000_000;
            u64::try_from(ios).unwrap_or(u64::MAX)
        });
        let (ios, why) = match (by_size, by_time) {
            (Some(s), Some(t)) if s <= t => (s, size_why(j, size_bs, n)),
            (Some(s), None) => (s, size_why(j, size_bs, n)),
            (_, Some(t)) => (
                t,
                match no_device {
                    Some(ns) => format!(
                        "{} IOs in flight for runtime={} s at {ns} ns an IO (no device: the \
                         engine's or the call's own time)",
                        in_flight(j),
                        runtime_ns as f64 / 1e9
                    ),
                    None => format!(
                        "{} IOs in flight for runtime={} s at {svc_ns} ns an IO ({key} of the device; {tags} tags)",
                        in_flight(j),
                        runtime_ns as f64 / 1e9
                    ),
                },
            ),
            (None, None) => (0, String::new()),
        };
        if no_device.is_some() {
            free = free.saturating_add(ios);
        } else {
            total = total.saturating_add(ios);
        }
        if ios > best.ios {
            best = IoEstimate { ios, job: i, why };
        }
    }
    // All jobs together at most what the devices' tags complete.
    let longest = jobs
        .iter()
        .map(|j| j.runtime_ns.unwrap_or(0))
        .max()
        .unwrap_or(0);
    if longest > 0 && jobs.iter().all(|j| j.runtime_ns.unwrap_or(0) > 0) {
        let cap = u128::from(all_tags) * 1_000_000_000 / u128::from(svc_ns) * u128::from(longest)
            / 1_000_000_000;
        total = total.min(u64::try_from(cap).unwrap_or(u64::MAX));
    }
    IoEstimate {
        ios: total.saturating_add(free),
        ..best
    }
}

/// The time an IO of a job that uses no device takes (fio's `null`
/// engine, `/dev/null` or `/dev/zero`), or `None` for a job on the device.
fn no_device_ns(j: &JobSpec) -> Option<u64> {
    if matches!(j.ioengine, Engine::Null | Engine::CppNull) {
        Some(crate::world::NULL_ENGINE_NS)
    } else if j.on_null_device() {
        Some(crate::world::NULL_DEVICE_NS)
    } else {
        None
    }
}

fn size_why(j: &JobSpec, bs: u64, n: u64) -> String {
    format!(
        "its size in {bs}-byte blocks, {} loop(s), numjobs={n}",
        j.loops.max(1)
    )
}

/// Memory the run's jobs hold for their statistics: [`JOB_BYTES`] a
/// clone, and a latency histogram more per direction it does for each of
/// `lat_percentiles` and `slat_percentiles` (an engine that queues) it
/// asks.
pub fn jobs_bytes(jobs: &[JobSpec]) -> u64 {
    let hist = crate::stats::histogram_bytes();
    jobs.iter()
        .map(|j| {
            let m = j.rw.mode;
            let dirs = u64::from(m.reads()) + u64::from(m.writes()) + u64::from(m.trims());
            let kept = u64::from(j.lat_percentiles)
                + u64::from(j.slat_percentiles && j.ioengine.is_async());
            let each = JOB_BYTES.saturating_add(dirs * kept * hist);
            u64::from(j.numjobs.max(1)).saturating_mul(each)
        })
        .fold(0u64, u64::saturating_add)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::{ParseEnv, parse_job_file};

    fn jobs(text: &str) -> Vec<JobSpec> {
        let vars = std::collections::BTreeMap::new();
        let none = |_: &str, n: &str| -> Result<(String, Vec<u8>), String> { Err(n.to_owned()) };
        let env = ParseEnv {
            mem_bytes: 1 << 30,
            ncpus: 4,
            pagesize: 4096,
            vars: &vars,
            include: &none,
        };
        parse_job_file("t.fio", text, &env)
            .unwrap_or_else(|e| panic!("{e}"))
            .jobs
    }

    #[test]
    fn a_deep_queue_on_a_fast_null_device_is_billions_of_ios() {
        let mut null = DeviceConfig::preset("null").expect("preset");
        if let Some(p) = null.null.as_mut() {
            p.queue_depth = 65_536;
            p.completion_ns = 1000;
        }
        let j = jobs(
            "[j]\nioengine=libaio\ndirect=1\niodepth=65536\nnumjobs=4\nrw=randread\nsize=1g\nruntime=20ms\ntime_based\n",
        );
        let e = estimate_ios(&j, &[null]);
        // 65,536 tags at 1 µs for 20 ms: 1.3e9.
        assert!(e.ios > MAX_IOS, "{e:?}");
        assert!(e.why.contains("null.completion_ns"), "{}", e.why);
    }

    #[test]
    fn an_ordinary_job_is_far_below_the_bounds() {
        let ssd = DeviceConfig::preset("sata-ssd").expect("preset");
        let j =
            jobs("[j]\nioengine=libaio\ndirect=1\niodepth=32\nrw=randread\nsize=1g\nruntime=30\n");
        let e = estimate_ios(&j, &[ssd]);
        assert!(e.ios > 0 && e.ios < WARN_IOS, "{e:?}");
        // Without a runtime, its size: 262,144 blocks.
        let null = DeviceConfig::preset("null").expect("preset");
        let j = jobs("[j]\nrw=read\nsize=1g\n");
        assert_eq!(estimate_ios(&j, &[null]).ios, 262_144);
    }

    /// fio's own example of a 900 s 4 KiB job at depth 16 on an NVMe
    /// device: each command pays the controller's overhead, and the link
    /// carries at most 3.5 GB/s, so it is a long run, not a refused one.
    #[test]
    fn a_long_nvme_job_is_bounded_by_the_command_overhead_and_the_link() {
        let nvme = DeviceConfig::preset("nvme").expect("preset");
        let one = jobs(
            "[j]\nioengine=libaio\niodepth=16\nrw=randread\nbs=4k\nsize=10g\nruntime=900\ntime_based\n",
        );
        let e = estimate_ios(&one, std::slice::from_ref(&nvme));
        // 16 in flight at 15 + 12 µs: 592,592 a second for 900 s.
        assert_eq!(e.ios, 16 * 1_000_000 / 27 * 900);
        assert!(e.ios > WARN_IOS && e.ios < MAX_IOS, "{e:?}");
        // Four clones would complete more than the link carries:
        // 3.5e9 / 4096 a second.
        let four = jobs(
            "[j]\nioengine=libaio\niodepth=16\nnumjobs=4\nrw=randwrite\nbs=4k\nsize=10g\nruntime=900\ntime_based\n",
        );
        assert_eq!(estimate_ios(&four, &[nvme]).ios, 3_500_000_000 / 4096 * 900);
    }

    /// A size's IOs are its bytes over a bssplit's mean block, not its
    /// smallest (fio's JESD219 example mixes 512-byte and 64 KiB blocks).
    #[test]
    fn a_bssplit_job_counts_its_mean_block() {
        let null = DeviceConfig::preset("null").expect("preset");
        let j = jobs("[j]\nrw=randread\nbssplit=4k/50:12k/50\nsize=16m\n");
        assert_eq!(estimate_ios(&j, &[null]).ios, (16 << 20) / 8192);
    }

    #[test]
    fn rate_limits_cap_a_job_and_clones_hold_their_statistics() {
        let null = DeviceConfig::preset("null").expect("preset");
        let text =
            "[j]\nrw=randread\nsize=1g\nrate_iops=10\nnumjobs=4096\nruntime=300\ntime_based\n";
        let j = jobs(text);
        let e = estimate_ios(&j, &[null]);
        assert_eq!(e.ios, 10 * 4096 * 300);
        assert_eq!(jobs_bytes(&j), 4096 * JOB_BYTES);
        // Total latency's percentiles keep a histogram more per direction.
        let lat = jobs(&text.replace("[j]\n", "[j]\nlat_percentiles=1\n"));
        assert_eq!(
            jobs_bytes(&lat),
            4096 * (JOB_BYTES + crate::stats::histogram_bytes())
        );
        assert!(jobs_bytes(&j) > WARN_BYTES);
    }

    #[test]
    fn a_large_hdd_cache_is_counted() {
        let mut hdd = DeviceConfig::preset("hdd").expect("preset");
        if let Some(p) = hdd.hdd.as_mut() {
            p.cache_mib = 65_536;
        }
        let (bytes, key) = device_bytes(&hdd);
        assert!(bytes > WARN_BYTES, "{bytes}");
        assert_eq!(key, Some("hdd.cache_mib"));
    }
}
