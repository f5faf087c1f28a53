//! Probe harness and calibration checks for the device models.
//!
//! The harness is a tiny closed-loop event loop: `workers` host threads each keep one
//! command outstanding, issuing the next as soon as the previous completes (fio with
//! `iodepth = workers`). Offsets come from a small deterministic xorshift.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::*;
use crate::time::{MS, SEC, US};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Event loop implementing `DevCtx`.
#[derive(Default)]
struct Loop {
    heap: BinaryHeap<Reverse<(Ns, u64, u8, u32)>>,
    seq: u64,
}

impl DevCtx for Loop {
    fn complete_at(&mut self, at: Ns, tag: u32) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, 0, tag)));
    }
    fn wake_at(&mut self, at: Ns) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, 1, 0)));
    }
}

#[derive(Clone, Copy, Debug)]
struct Sample {
    issue: Ns,
    done: Ns,
    op: DevOp,
    len: u64,
}

#[derive(Default, Debug)]
struct Stats {
    samples: Vec<Sample>,
    /// Every completion in order (determinism checks).
    log: Vec<(Ns, u32)>,
}

impl Stats {
    fn window(&self, op: DevOp, from: Ns, to: Ns) -> impl Iterator<Item = &Sample> {
        self.samples
            .iter()
            .filter(move |s| s.op == op && s.issue >= from && s.done <= to)
    }
    fn mean_lat_us(&self, op: DevOp, from: Ns, to: Ns) -> f64 {
        let (n, sum) = self
            .window(op, from, to)
            .fold((0u64, 0u64), |(n, s), x| (n + 1, s + (x.done - x.issue)));
        assert!(n > 0, "no {op:?} samples in window");
        sum as f64 / n as f64 / 1000.0
    }
    fn iops(&self, op: DevOp, from: Ns, to: Ns) -> f64 {
        let n = self
            .samples
            .iter()
            .filter(|s| s.op == op && s.done > from && s.done <= to)
            .count();
        n as f64 / ((to - from) as f64 / SEC as f64)
    }
    fn mb_s(&self, op: DevOp, from: Ns, to: Ns) -> f64 {
        let b: u64 = self
            .samples
            .iter()
            .filter(|s| s.op == op && s.done > from && s.done <= to)
            .map(|s| s.len)
            .sum();
        b as f64 / ((to - from) as f64 / SEC as f64) / 1e6
    }
}

/// Closed-loop probe: `gen(worker, index, rng)` returns the next command of a worker.
fn probe(
    dev: &mut Device,
    workers: u32,
    until: Ns,
    mut next_cmd: impl FnMut(u32, u64, &mut Rng) -> (DevOp, u64, u64, bool),
) -> Stats {
    let mut ev = Loop::default();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut stats = Stats::default();
    let mut count = vec![0u64; workers as usize];
    let mut issued: Vec<(Ns, DevCmd)> = vec![
        (
            0,
            DevCmd {
                tag: 0,
                op: DevOp::Read,
                offset: 0,
                len: 0,
                fua: false
            }
        );
        workers as usize
    ];
    let mut waiting: VecDeque<u32> = VecDeque::new();
    let mut make = |w: u32, now: Ns, rng: &mut Rng, count: &mut Vec<u64>| {
        let (op, offset, len, fua) = next_cmd(w, count[w as usize], rng);
        count[w as usize] += 1;
        (
            now,
            DevCmd {
                tag: w,
                op,
                offset,
                len,
                fua,
            },
        )
    };
    for w in 0..workers {
        issued[w as usize] = make(w, 0, &mut rng, &mut count);
        waiting.push_back(w);
    }
    let mut now = 0;
    loop {
        // Dispatch in FIFO order while the device accepts the head.
        while let Some(&w) = waiting.front() {
            let cmd = issued[w as usize].1;
            if !dev.can_accept(cmd.op) {
                break;
            }
            waiting.pop_front();
            dev.submit(now, cmd, &mut ev);
        }
        let Some(Reverse((t, _, kind, tag))) = ev.heap.pop() else {
            break;
        };
        assert!(t >= now, "event in the past");
        now = t;
        if kind == 1 {
            dev.on_wake(now, &mut ev);
            continue;
        }
        dev.retire(now, tag);
        let (issue, cmd) = issued[tag as usize];
        stats.samples.push(Sample {
            issue,
            done: now,
            op: cmd.op,
            len: cmd.len,
        });
        stats.log.push((now, tag));
        if now < until {
            issued[tag as usize] = make(tag, now, &mut rng, &mut count);
            waiting.push_back(tag);
        }
    }
    stats
}

fn dev(name: &str) -> Device {
    Device::new(&DeviceConfig::preset(name).expect("preset")).expect("device")
}

fn rand_read(span: u64, bs: u64) -> impl FnMut(u32, u64, &mut Rng) -> (DevOp, u64, u64, bool) {
    move |_, _, r| (DevOp::Read, r.next() % (span / bs) * bs, bs, false)
}

fn rand_write(span: u64, bs: u64) -> impl FnMut(u32, u64, &mut Rng) -> (DevOp, u64, u64, bool) {
    move |_, _, r| (DevOp::Write, r.next() % (span / bs) * bs, bs, false)
}

/// One sequential stream from `start` shared by all workers: worker `w` takes every
/// `workers`-th block.
fn seq(
    op: DevOp,
    start: u64,
    bs: u64,
    workers: u32,
) -> impl FnMut(u32, u64, &mut Rng) -> (DevOp, u64, u64, bool) {
    move |w, n, _| {
        (
            op,
            start + (n * u64::from(workers) + u64::from(w)) * bs,
            bs,
            false,
        )
    }
}

const GB: u64 = 1_000_000_000;

// ---------------------------------------------------------------- NVMe

#[test]
fn nvme_random_read_latency_and_scaling() {
    let mut d = dev("nvme");
    let cap = d.capacity();
    let s1 = probe(&mut d, 1, SEC, rand_read(cap, 4 * KIB));
    let lat = s1.mean_lat_us(DevOp::Read, 0, SEC);
    let iops1 = s1.iops(DevOp::Read, 0, SEC);
    let mut d = dev("nvme");
    let s32 = probe(&mut d, 32, SEC, rand_read(cap, 4 * KIB));
    let iops32 = s32.iops(DevOp::Read, 100 * MS, SEC);
    let lat32 = s32.mean_lat_us(DevOp::Read, 100 * MS, SEC);
    println!(
        "nvme 4k randread: QD1 {lat:.1} us mean, {iops1:.0} IOPS; QD32 {iops32:.0} IOPS, {lat32:.1} us"
    );
    assert!((80.0..=100.0).contains(&lat), "QD1 latency {lat}");
    assert!(iops32 > 10.0 * iops1, "QD32 {iops32} vs QD1 {iops1}");
}

// ---------------------------------------------------------------- SATA SSD

#[test]
fn sata_sequential_read_bandwidth() {
    let mut d = dev("sata-ssd");
    let s = probe(&mut d, 4, SEC, seq(DevOp::Read, 0, 128 * KIB, 4));
    let bw = s.mb_s(DevOp::Read, 100 * MS, SEC);
    println!("sata-ssd 128k seq read QD4: {bw:.1} MB/s");
    assert!((450.0..=560.0).contains(&bw), "seq read {bw} MB/s");
}

/// Cross-check against blk-iocost's default SSD profile \[S11\].
#[test]
fn sata_iocost_cross_check() {
    let cap = dev("sata-ssd").capacity();
    let within = |v: f64, r: f64| (v / r - 1.0).abs() <= 0.25;

    let mut d = dev("sata-ssd");
    let s = probe(&mut d, 1, SEC, rand_read(cap, 4 * KIB));
    let rr1 = s.iops(DevOp::Read, 0, SEC);

    let mut d = dev("sata-ssd");
    let s = probe(&mut d, 32, SEC, rand_read(cap, 4 * KIB));
    let rr32 = s.iops(DevOp::Read, 100 * MS, SEC);

    let mut d = dev("sata-ssd");
    let s = probe(&mut d, 1, SEC, rand_write(cap, 4 * KIB));
    let rw1 = s.iops(DevOp::Write, 0, SEC);

    let mut d = dev("sata-ssd");
    let s = probe(&mut d, 32, 2 * SEC, rand_write(cap, 4 * KIB));
    let rw32 = s.iops(DevOp::Write, SEC, 2 * SEC);

    // iocost_coef_gen measures wbps with 128 MiB sequential writes at QD1, sustained.
    let mut d = dev("sata-ssd");
    let s = probe(&mut d, 1, 3 * SEC, seq(DevOp::Write, 0, 4 * MIB, 1));
    let wbps = s.mb_s(DevOp::Write, SEC, 3 * SEC);

    let mut d = dev("sata-ssd");
    let s = probe(&mut d, 1, 2 * SEC, seq(DevOp::Read, 0, 4 * MIB, 1));
    let rbps = s.mb_s(DevOp::Read, 100 * MS, 2 * SEC);

    println!("sata-ssd vs iocost SSD_DFL:");
    println!("  QD1 4k randread  {rr1:>9.0} IOPS  (rrandiops 8518)");
    println!("  QD32 4k randread {rr32:>9.0} IOPS  (rrandiops 8518; not comparable, see below)");
    println!("  QD1 4k randwrite {rw1:>9.0} IOPS  (wrandiops 21940)");
    println!("  QD32 4k randwrite{rw32:>9.0} IOPS  (wrandiops 21940; not comparable)");
    println!("  seq write 4 MiB  {wbps:>9.1} MB/s  (wbps 427.9)");
    println!("  seq read 4 MiB   {rbps:>9.1} MB/s  (rbps 488.6)");
    assert!(within(rr1, 8518.0), "QD1 randread {rr1}");
    assert!(within(rw1, 21940.0), "QD1 randwrite {rw1}");
    assert!(within(wbps, 427.9), "seq write {wbps}");
    assert!(within(rbps, 488.6), "seq read {rbps}");
    // SSD_DFL's 4 KiB figures match a drive at effective QD1; a consumer SATA drive with
    // NCQ does ~80-98k random 4 KiB IOPS at QD32 (e.g. 850 EVO class spec 98k read,
    // 90k write), which is what the model gives: link + per-command FIS time bound.
    assert!(
        (75_000.0..=110_000.0).contains(&rr32),
        "QD32 randread {rr32}"
    );
    assert!(
        (60_000.0..=110_000.0).contains(&rw32),
        "QD32 randwrite {rw32}"
    );
}

// ---------------------------------------------------------------- HDD

#[test]
fn hdd_random_and_sequential() {
    let d0 = dev("hdd");
    let cap = d0.capacity();
    let Device::Hdd(h) = &d0 else { unreachable!() };
    println!("hdd: {} cylinders", h.cylinders());

    let run = |span: u64, qd: u32| {
        let mut d = dev("hdd");
        let s = probe(&mut d, qd, 10 * SEC, rand_read(span, 4 * KIB));
        (
            s.iops(DevOp::Read, SEC, 10 * SEC),
            s.mean_lat_us(DevOp::Read, SEC, 10 * SEC) / 1000.0,
        )
    };
    let (full1, full1_lat) = run(cap, 1);
    let (full32, _) = run(cap, 32);
    let span = cap / 8;
    let (part1, part1_lat) = run(span, 1);
    let (part32, _) = run(span, 32);
    println!(
        "hdd 4k randread full span: QD1 {full1:.0} IOPS ({full1_lat:.2} ms), QD32 {full32:.0} IOPS"
    );
    println!(
        "hdd 4k randread first 1/8 (500 GB): QD1 {part1:.0} IOPS ({part1_lat:.2} ms), QD32 {part32:.0} IOPS"
    );
    // Full stroke: average seek + half a revolution ≈ 11 ms → below 100 IOPS, as real
    // 7200 rpm drives. Over a 500 GB span seeks shrink to ~1.5 ms and QD1 lands in the
    // 100–200 IOPS band.
    assert!((75.0..=100.0).contains(&full1), "full-span QD1 {full1}");
    assert!((100.0..=200.0).contains(&part1), "1/8-span QD1 {part1}");
    assert!(
        full32 > 2.0 * full1,
        "NCQ gain full span {full32} vs {full1}"
    );
    assert!(
        part32 > 2.0 * part1,
        "NCQ gain 1/8 span {part32} vs {part1}"
    );

    // Sequential 1 MiB reads starting at the middle cylinder.
    let mid = {
        // Offset of the middle cylinder: LBA fraction where half the cylinders lie before.
        let mut lo = 0;
        let mut hi = cap;
        let Device::Hdd(h) = &d0 else { unreachable!() };
        let target = h.media_rate(0) - (h.media_rate(0) - h.media_rate(cap - 1)) / 2;
        while hi - lo > MIB {
            let m = (lo + hi) / 2;
            if h.media_rate(m) > target {
                lo = m
            } else {
                hi = m
            }
        }
        lo / MIB * MIB
    };
    let mut d = dev("hdd");
    let s = probe(&mut d, 1, 2 * SEC, seq(DevOp::Read, mid, MIB, 1));
    let bw = s.mb_s(DevOp::Read, 100 * MS, 2 * SEC);
    let Device::Hdd(h) = &d0 else { unreachable!() };
    println!(
        "hdd 1 MiB seq read QD1 at middle cylinder (offset {:.0} GB, media {:.0} MB/s): {bw:.1} MB/s",
        mid as f64 / 1e9,
        h.media_rate(mid) as f64 / 1e6
    );
    assert!((150.0..=200.0).contains(&bw), "seq read {bw}");

    // Sustained sequential 1 MiB writes: cache fills at link speed, then destaging
    // streams at the media rate.
    let mut d = dev("hdd");
    let s = probe(&mut d, 1, 4 * SEC, seq(DevOp::Write, mid, MIB, 1));
    let wbw = s.mb_s(DevOp::Write, 2 * SEC, 4 * SEC);
    println!("hdd 1 MiB seq write QD1 at middle cylinder, sustained: {wbw:.1} MB/s");
    assert!((150.0..=200.0).contains(&wbw), "seq write {wbw}");

    // blk-iocost's HDD profile was measured on a 16 GiB file at QD64 [S11]: rrandiops 370.
    let (gib16, _) = run(16 << 30, 32);
    println!(
        "hdd 4k randread QD32 over 16 GiB: {gib16:.0} IOPS (iocost HDD rrandiops 370 at QD64)"
    );

    // Sequential 4 KiB reads at QD1 must stream (not lose a revolution each).
    let mut d = dev("hdd");
    let s = probe(&mut d, 1, SEC, seq(DevOp::Read, mid, 4 * KIB, 1));
    let bw4 = s.mb_s(DevOp::Read, 100 * MS, SEC);
    println!("hdd 4k seq read QD1: {bw4:.1} MB/s");
    // Losing a revolution per read would give 4 KiB / 8.3 ms ≈ 0.5 MB/s; streaming is
    // bounded by the 0.1 ms command overhead (≈ 10k IOPS ≈ 40 MB/s).
    assert!(
        bw4 > 30.0,
        "4k sequential reads lose revolutions: {bw4} MB/s"
    );
}

#[test]
fn hdd_write_cache_and_flush() {
    // Writes complete from cache quickly; a flush waits for the destage.
    let mut d = dev("hdd");
    let mut ev = Loop::default();
    let mut now = 0;
    for i in 0..8u32 {
        let cmd = DevCmd {
            tag: i,
            op: DevOp::Write,
            offset: u64::from(i) * 100 * GB,
            len: 64 * KIB,
            fua: false,
        };
        d.submit(now, cmd, &mut ev);
    }
    let mut done = [0; 9];
    let mut flushed = false;
    while let Some(Reverse((t, _, kind, tag))) = ev.heap.pop() {
        now = t;
        if kind == 1 {
            d.on_wake(now, &mut ev);
        } else {
            d.retire(now, tag);
            done[tag as usize] = now;
        }
        if !flushed && d.inflight() == 0 {
            flushed = true;
            assert!(d.can_accept(DevOp::Flush));
            d.submit(
                now,
                DevCmd {
                    tag: 8,
                    op: DevOp::Flush,
                    offset: 0,
                    len: 0,
                    fua: false,
                },
                &mut ev,
            );
            done[8] = now;
        }
    }
    let writes_done = done[..8].iter().copied().max().unwrap_or(0);
    let flush_lat = done[8] - writes_done;
    println!(
        "hdd: 8 scattered 64k writes acked by {:.3} ms, flush took {:.1} ms",
        writes_done as f64 / 1e6,
        flush_lat as f64 / 1e6
    );
    assert!(writes_done < MS, "cached writes should ack in < 1 ms");
    assert!(
        flush_lat > 20 * MS,
        "flush must wait for 8 destages with seeks"
    );
}

// ---------------------------------------------------------------- flush cost

fn write_flush_pairs(d: &mut Device, secs: u64) -> (f64, f64) {
    let s = probe(d, 1, secs * SEC, |_, n, _| {
        if n % 2 == 0 {
            (DevOp::Write, n / 2 * 4 * KIB, 4 * KIB, false)
        } else {
            (DevOp::Flush, 0, 0, false)
        }
    });
    let w = s.mean_lat_us(DevOp::Write, 0, secs * SEC);
    let f = s.mean_lat_us(DevOp::Flush, 0, secs * SEC);
    (w + f, w)
}

#[test]
fn write_flush_pair_latency_per_class() {
    let mut out = Vec::new();
    for name in ["nvme", "sata-ssd", "hdd", "null"] {
        let mut d = dev(name);
        let (pair, w) = write_flush_pairs(&mut d, 2);
        println!(
            "{name:>9}: QD1 4k write+flush pair {pair:8.1} us (write {w:.1} us) = {:.0} pairs/s",
            1e6 / pair
        );
        out.push(pair);
    }
    let mut cfg = DeviceConfig::preset("nvme").unwrap();
    cfg.ssd.as_mut().unwrap().plp = true;
    let mut d = Device::new(&cfg).unwrap();
    let (plp, _) = write_flush_pairs(&mut d, 1);
    println!("nvme+plp: QD1 4k write+flush pair {plp:.1} us");
    // nvme anchored on ≈574 pairs/s (1.74 ms) [F11]; sata-ssd on ≈470 pairs/s (2.1 ms).
    assert!((1600.0..=1900.0).contains(&out[0]), "nvme pair {}", out[0]);
    assert!((1900.0..=2300.0).contains(&out[1]), "sata pair {}", out[1]);
    assert!((2000.0..=12_000.0).contains(&out[2]), "hdd pair {}", out[2]);
    assert!(out[3] < 25.0, "null pair {}", out[3]);
    assert!(plp < 100.0, "plp pair {plp}");
}

#[test]
fn fua_writes_wait_for_media() {
    let fua_write = |_: u32, n: u64, _: &mut Rng| (DevOp::Write, n * 4 * KIB, 4 * KIB, true);
    let mut d = dev("nvme");
    let s = probe(&mut d, 1, 100 * MS, fua_write);
    let nvme = s.mean_lat_us(DevOp::Write, 0, 100 * MS);
    let mut cfg = DeviceConfig::preset("nvme").unwrap();
    cfg.ssd.as_mut().unwrap().plp = true;
    let mut d = Device::new(&cfg).unwrap();
    let plp = probe(&mut d, 1, 100 * MS, fua_write).mean_lat_us(DevOp::Write, 0, 100 * MS);
    let cfg = DeviceConfig::from_toml("name = \"h\"\nbase = \"hdd\"\n[hdd]\nfua = true\n").unwrap();
    let mut d = Device::new(&cfg).unwrap();
    assert!(d.fua());
    let hdd = probe(&mut d, 1, SEC, fua_write).mean_lat_us(DevOp::Write, 0, SEC);
    let cfg = DeviceConfig::from_toml("name = \"h\"\nbase = \"hdd\"\n[hdd]\nwrite_cache = false\n")
        .unwrap();
    let mut d = Device::new(&cfg).unwrap();
    assert!(!d.write_cache());
    let wt = probe(&mut d, 1, SEC, rand_write(GB, 4 * KIB)).mean_lat_us(DevOp::Write, 0, SEC);
    println!(
        "FUA 4k write QD1: nvme {nvme:.0} us, nvme+plp {plp:.0} us, hdd {hdd:.0} us; \
         hdd without cache, random 4k write {wt:.0} us"
    );
    assert!((600.0..=700.0).contains(&nvme), "nvme FUA {nvme}");
    assert!(plp < 50.0, "plp FUA {plp}");
    assert!(hdd > 1000.0, "hdd FUA {hdd}");
    assert!(wt > 3000.0, "hdd write-through {wt}");
}

#[test]
fn a_flush_under_a_deep_mixed_load_waits_only_for_the_pages_before_it() {
    // 1023 workers of 4 KiB random writes (three in four) and reads keep the NVMe model's
    // units unevenly busy, so some fall far behind the others in log
    // order (further than the write buffer holds pages); worker 0 issues
    // FLUSH after FLUSH. Each must complete once the pages buffered before
    // it are programmed, never wait for the pages that came after.
    let mut d = dev("nvme");
    let span = 500 * GB;
    let s = probe(&mut d, 1024, 3 * SEC, |w, _, r| {
        if w == 0 {
            (DevOp::Flush, 0, 0, false)
        } else if r.next() % 4 == 0 {
            (
                DevOp::Read,
                r.next() % (span / (4 * KIB)) * 4 * KIB,
                4 * KIB,
                false,
            )
        } else {
            (
                DevOp::Write,
                r.next() % (span / (4 * KIB)) * 4 * KIB,
                4 * KIB,
                false,
            )
        }
    });
    let flushes: Vec<u64> = s
        .samples
        .iter()
        .filter(|x| x.op == DevOp::Flush)
        .map(|x| x.done - x.issue)
        .collect();
    let writes = s.window(DevOp::Write, 0, 3 * SEC).count();
    let worst = flushes.iter().max().copied().unwrap_or(0);
    println!(
        "{} flushes in 3 s under {writes} writes, longest {} us",
        flushes.len(),
        worst / US
    );
    assert!(writes > 500_000, "{writes} writes: the load is deep");
    assert!(flushes.len() >= 10, "{} flushes", flushes.len());
    // A whole 256 MiB buffer drains in about 0.3 s on this model.
    assert!(worst < 500 * MS, "a flush waited {} ms", worst / MS);
}

// ---------------------------------------------------------------- SATA non-queued flush

#[test]
fn sata_flush_is_not_queued() {
    for name in ["sata-ssd", "hdd"] {
        let mut d = dev(name);
        assert!(!d.flush_queued());
        let mut ev = Loop::default();
        let rd = |tag| DevCmd {
            tag,
            op: DevOp::Read,
            offset: u64::from(tag) * MIB,
            len: 4 * KIB,
            fua: false,
        };
        d.submit(0, rd(0), &mut ev);
        d.submit(0, rd(1), &mut ev);
        assert!(
            !d.can_accept(DevOp::Flush),
            "{name}: flush accepted with reads inflight"
        );
        assert!(d.can_accept(DevOp::Read));
        // Drain.
        let mut now = 0;
        while d.inflight() > 0 {
            let Reverse((t, _, kind, tag)) = ev.heap.pop().expect("events");
            now = t;
            if kind == 1 {
                d.on_wake(now, &mut ev);
            } else {
                d.retire(now, tag);
            }
        }
        assert!(d.can_accept(DevOp::Flush));
        d.submit(
            now,
            DevCmd {
                tag: 7,
                op: DevOp::Flush,
                offset: 0,
                len: 0,
                fua: false,
            },
            &mut ev,
        );
        for op in [DevOp::Read, DevOp::Write, DevOp::Flush, DevOp::Discard] {
            assert!(
                !d.can_accept(op),
                "{name}: {op:?} accepted while flush runs"
            );
        }
        while let Some(Reverse((t, _, kind, tag))) = ev.heap.pop() {
            if kind == 1 {
                d.on_wake(t, &mut ev);
            } else {
                d.retire(t, tag);
            }
        }
        assert!(d.can_accept(DevOp::Read) && d.can_accept(DevOp::Flush));
    }
    // NVMe flushes are queued.
    let mut d = dev("nvme");
    let mut ev = Loop::default();
    d.submit(
        0,
        DevCmd {
            tag: 0,
            op: DevOp::Read,
            offset: 0,
            len: 4096,
            fua: false,
        },
        &mut ev,
    );
    assert!(d.can_accept(DevOp::Flush));
}

// ---------------------------------------------------------------- write buffer

#[test]
fn sata_write_buffer_exhaustion() {
    for (label, steady) in [("fob", false), ("steady", true)] {
        let mut cfg = DeviceConfig::preset("sata-ssd").unwrap();
        if steady {
            cfg.ssd.as_mut().unwrap().precondition = Precondition::Steady;
        }
        let mut d = Device::new(&cfg).unwrap();
        let s = probe(&mut d, 1, 3 * SEC, seq(DevOp::Write, 0, 256 * KIB, 1));
        let early = s.mean_lat_us(DevOp::Write, 0, 50 * MS);
        let early_bw = s.mb_s(DevOp::Write, 0, 50 * MS);
        let late = s.mean_lat_us(DevOp::Write, 2 * SEC, 3 * SEC);
        let late_bw = s.mb_s(DevOp::Write, 2 * SEC, 3 * SEC);
        // Time at which the buffer-full regime starts: first ack > 1.1 × early.
        let step = s
            .samples
            .iter()
            .find(|x| (x.done - x.issue) as f64 / 1000.0 > 1.1 * early)
            .map(|x| x.issue as f64 / 1e6)
            .unwrap_or(f64::NAN);
        println!(
            "sata-ssd ({label}) 256k seq write QD1: {early:.0} us / {early_bw:.0} MB/s while \
             the buffer fills -> {late:.0} us / {late_bw:.0} MB/s program-bound (step at {step:.0} ms)"
        );
        if steady {
            assert!(late > 2.0 * early, "steady: {late} vs {early}");
        } else {
            assert!(late > 1.15 * early, "fob: {late} vs {early}");
            assert!(
                (400.0..=470.0).contains(&late_bw),
                "program-bound bw {late_bw}"
            );
        }
    }
    // NVMe: 4 KiB QD32 random writes, link 3.5 GB/s against 64 units × 16 KiB / 600 µs.
    let mut d = dev("nvme");
    let cap = d.capacity();
    let s = probe(&mut d, 32, SEC, rand_write(cap, 4 * KIB));
    let early = s.mean_lat_us(DevOp::Write, 0, 20 * MS);
    let late = s.mean_lat_us(DevOp::Write, 500 * MS, SEC);
    let late_bw = s.mb_s(DevOp::Write, 500 * MS, SEC);
    println!(
        "nvme 4k randwrite QD32: {early:.1} us while buffering -> {late:.1} us ({late_bw:.0} MB/s) program-bound"
    );
    assert!(late > 1.5 * early, "nvme {late} vs {early}");
}

// ---------------------------------------------------------------- read/write interference

#[test]
fn reads_stuck_behind_writes() {
    for name in ["sata-ssd", "nvme"] {
        let mut d = dev(name);
        let cap = d.capacity();
        let idle = probe(&mut d, 1, SEC, rand_read(cap, 4 * KIB)).mean_lat_us(DevOp::Read, 0, SEC);
        let mut d = dev(name);
        // Worker 0: 4k random reads at QD1; workers 1..=4: 128k sequential writes.
        let s = probe(&mut d, 5, 2 * SEC, move |w, n, r| {
            if w == 0 {
                (DevOp::Read, r.next() % (cap / 4096) * 4096, 4 * KIB, false)
            } else {
                (
                    DevOp::Write,
                    (n * 4 + u64::from(w)) * 128 * KIB,
                    128 * KIB,
                    false,
                )
            }
        });
        let busy = s.mean_lat_us(DevOp::Read, SEC, 2 * SEC);
        let wbw = s.mb_s(DevOp::Write, SEC, 2 * SEC);
        println!(
            "{name}: 4k randread QD1 idle {idle:.0} us, with 4x128k writers ({wbw:.0} MB/s) {busy:.0} us"
        );
        assert!(busy > 2.0 * idle, "{name}: {busy} vs {idle}");
    }
}

// ---------------------------------------------------------------- config

#[test]
fn toml_override_and_errors() {
    let cfg = DeviceConfig::from_toml(
        "name = \"my-sata\"\nbase = \"sata-ssd\"\n[ssd]\nflush_fixed_us = 900\nwaf = 3\n",
    )
    .unwrap();
    let p = cfg.ssd.as_ref().unwrap();
    assert_eq!(p.flush_fixed_us, 900);
    assert_eq!(p.waf, 3.0);
    assert_eq!(p.queue_depth, 32);
    assert!(!p.flush_queued);
    let text = cfg.describe();
    println!("{text}");
    assert!(text.contains("flush_fixed_us") && text.contains("override"));
    assert!(text.contains("[S39]"));
    Device::new(&cfg).unwrap();

    let e = DeviceConfig::from_toml("name = \"x\"\nbase = \"nvme\"\n[ssd]\nflsh_fixed_us = 1\n")
        .unwrap_err();
    assert!(e.to_string().contains("ssd.flsh_fixed_us"), "{e}");

    let e = DeviceConfig::from_toml("name = \"x\"\nbase = \"nvme\"\ncolour = 1\n").unwrap_err();
    assert!(e.to_string().contains("colour"), "{e}");

    let e = DeviceConfig::from_toml("name = \"x\"\nbase = \"nvme\"\n[ssd]\nqueue_depth = 0\n")
        .unwrap_err();
    assert!(e.to_string().contains("ssd.queue_depth"), "{e}");

    let e = DeviceConfig::from_toml("name = \"x\"\nbase = \"hdd\"\n[hdd]\nlink_mb_s = 0\n")
        .unwrap_err();
    assert!(e.to_string().contains("hdd.link_mb_s"), "{e}");

    let e = DeviceConfig::from_toml("name = \"x\"\nbase = \"null\"\n[null]\ncapacity_gb = 0\n")
        .unwrap_err();
    assert!(e.to_string().contains("null.capacity_gb"), "{e}");

    let e =
        DeviceConfig::from_toml("name = \"x\"\nbase = \"nvme\"\n[hdd]\nrpm = 5400\n").unwrap_err();
    assert!(e.to_string().contains("hdd"), "{e}");

    let e = DeviceConfig::from_toml("name = \"x\"\nbase = \"floppy\"\n").unwrap_err();
    assert!(e.to_string().contains("floppy"), "{e}");

    let e = DeviceConfig::from_toml("name = \"x\"\nbase = \"hdd\"\n[hdd]\nseek_avg_us = 15900\n")
        .unwrap_err();
    assert!(e.to_string().contains("hdd.seek_avg_us"), "{e}");

    // Without a base every key is required and unknown keys are refused.
    let full = toml::to_string(&DeviceConfig::preset("null").unwrap()).unwrap();
    let back = DeviceConfig::from_toml(&full).unwrap();
    assert_eq!(back, DeviceConfig::preset("null").unwrap());
    let e = DeviceConfig::from_toml(&format!("{full}\nspeed = 3\n")).unwrap_err();
    assert!(e.to_string().contains("speed"), "{e}");
    let e = DeviceConfig::from_toml("name = \"x\"\nkind = \"null\"\n[null]\nqueue_depth = 4\n")
        .unwrap_err();
    assert!(e.to_string().contains("capacity_gb"), "{e}");
    let e = DeviceConfig::from_toml("name = \"x\"\nkind = \"ssd\"\n").unwrap_err();
    assert!(e.to_string().contains("[ssd]"), "{e}");

    for name in DeviceConfig::preset_names() {
        let c = DeviceConfig::preset(name).unwrap();
        c.validate().unwrap();
        let d = c.describe();
        assert!(!d.contains("override"), "{name}:\n{d}");
        println!("{d}");
    }
}

// ---------------------------------------------------------------- determinism

#[test]
fn same_stream_same_completions() {
    for name in ["nvme", "sata-ssd", "hdd", "null"] {
        let until = if name == "hdd" { 3 * SEC } else { 300 * MS };
        let run = || {
            let mut d = dev(name);
            let cap = d.capacity();
            probe(&mut d, 8, until, move |w, n, r| {
                let off = r.next() % (cap / 8192) * 8192;
                match (w + n as u32) % 5 {
                    0 | 1 => (DevOp::Read, off, 8 * KIB, false),
                    2 => (DevOp::Write, off, 16 * KIB, n % 7 == 0),
                    3 => (DevOp::Write, n * 64 * KIB, 64 * KIB, false),
                    _ => (DevOp::Flush, 0, 0, false),
                }
            })
            .log
        };
        let a = run();
        let b = run();
        assert!(a.len() > 100, "{name}: only {} completions", a.len());
        assert_eq!(a, b, "{name}: completions differ between identical runs");
    }
}

#[test]
fn null_device_basics() {
    let mut d = dev("null");
    assert_eq!(d.queue_depth(), 64);
    assert!(!d.rotational() && !d.write_cache());
    let s = probe(&mut d, 64, 10 * MS, rand_read(GB, 4 * KIB));
    let lat = s.mean_lat_us(DevOp::Read, 0, 10 * MS);
    assert!((lat - 10.0).abs() < 1e-9, "{lat}");
    let iops = s.iops(DevOp::Read, 0, 10 * MS);
    assert!((iops - 6_400_000.0).abs() < 100_000.0, "{iops}");
    let _ = US;
}

/// Issue 15: a unit's page register serves the next 4 KiB of a stripe it
/// just read, so one sequential 4 KiB stream at QD8 is no slower than
/// random 4 KiB reads at QD8 (before the register it was: 49.8k against
/// 86.3k IOPS on `nvme`).
#[test]
fn sequential_small_reads_are_no_slower_than_random_on_every_ssd_preset() {
    for name in ["nvme", "sata-ssd"] {
        let until = 200 * MS;
        let rand = probe(&mut dev(name), 8, until, rand_read(100 << 30, 4096));
        let seq = probe(&mut dev(name), 8, until, seq(DevOp::Read, 0, 4096, 8));
        let r = rand.iops(DevOp::Read, 20 * MS, until);
        let s = seq.iops(DevOp::Read, 20 * MS, until);
        assert!(s >= r, "{name}: sequential {s:.0} IOPS, random {r:.0}");
    }
}

/// A device with `service_sigma` spreads its service times, seeded: the
/// same seed gives the same completions, another seed others, and the
/// QD1 read latencies spread as the σ says (p99/p50 = exp(2.326 σ) for
/// the media part).
#[test]
fn a_spread_device_varies_with_its_seed_and_keeps_its_median() {
    let mut cfg = DeviceConfig::preset("nvme").expect("preset");
    if let Some(s) = cfg.ssd.as_mut() {
        s.service_sigma = 0.5;
        s.cmd_overhead_us = 0;
    }
    let run = |seed: u64| {
        let mut d = Device::seeded(&cfg, seed, 0).expect("device");
        probe(&mut d, 1, 500 * MS, rand_read(100 << 30, 4096))
    };
    let a = run(1);
    let b = run(1);
    let c = run(2);
    assert_eq!(a.log, b.log, "same seed, same completions");
    assert_ne!(a.log, c.log, "another seed, other completions");
    let mut lat: Vec<Ns> = a.samples.iter().map(|s| s.done - s.issue).collect();
    lat.sort_unstable();
    let p50 = lat[lat.len() / 2] as f64;
    let p99 = lat[lat.len() * 99 / 100] as f64;
    // read_us 60 spread, plus 13.5 µs of unspread transfers (4 KiB over a
    // 333 MB/s channel and the link): p99 = 60·exp(2.326·0.5) + 13.5.
    assert!((p50 / 1000.0 - 73.5).abs() < 4.0, "median {p50}");
    let want = (60.0 * (2.326f64 * 0.5).exp() + 13.5) / 73.5;
    assert!(
        (p99 / p50 - want).abs() < 0.3,
        "p99/p50 {} against {want}",
        p99 / p50
    );
    let exact = probe(&mut dev("nvme"), 1, 500 * MS, rand_read(100 << 30, 4096));
    let mut e: Vec<Ns> = exact.samples.iter().map(|s| s.done - s.issue).collect();
    e.sort_unstable();
    assert_eq!(e[0], e[e.len() - 1], "the presets' service times are exact");
}

/// Completion times as a model reports them, in order.
#[derive(Default)]
struct Collect {
    done: Vec<(Ns, u32)>,
}

impl DevCtx for Collect {
    fn complete_at(&mut self, at: Ns, tag: u32) {
        self.done.push((at, tag));
    }
    fn wake_at(&mut self, _at: Ns) {}
}

/// A file-backed device: commands are dealt to the servers in turn, so a
/// sequential 4 KiB stream costs what a random one does; `units` bound
/// IOPS at depth; the shared channel bounds large reads; a FLUSH holds up
/// every command after it.
#[test]
fn a_loop_device_deals_commands_in_turn_and_shares_one_channel() {
    let text = "name = \"l\"\nkind = \"loop\"\n[loop]\ncapacity_gb = 8\nqueue_depth = 64\nunits = 2\nwrite_units = 0\nread_us = 20.0\nwrite_us = 30.0\nread_mb_s = 1000\nwrite_mb_s = 500\nflush_us = 100.0\nflush_drains = false\nwrite_cache = true\nfua = false\nservice_sigma = 0.0\nwrite_sigma = 0.0\n";
    let cfg = DeviceConfig::from_toml(text).expect("loads");
    let lone = |op: DevOp, len: u64| {
        let mut d = Device::new(&cfg).expect("builds");
        let mut ctx = Collect::default();
        d.submit(
            0,
            DevCmd {
                tag: 0,
                op,
                offset: 0,
                len,
                fua: false,
            },
            &mut ctx,
        );
        ctx.done[0].0
    };
    // 20 µs + 4096 B at 1 GB/s; 1 MiB: 20 µs + 1048.6 µs; a write's
    // data at 0.5 GB/s.
    assert_eq!(lone(DevOp::Read, 4096), 20_000 + 4_096);
    assert_eq!(lone(DevOp::Read, 1 << 20), 20_000 + 1_048_576);
    assert_eq!(lone(DevOp::Write, 4096), 30_000 + 8_192);
    // A read and a write of 1 MiB at once, on two servers: one channel,
    // so the write's data follows the read's.
    let mut d = Device::new(&cfg).expect("builds");
    let mut ctx = Collect::default();
    for (tag, op) in [(0, DevOp::Read), (1, DevOp::Write)] {
        let cmd = DevCmd {
            tag,
            op,
            offset: u64::from(tag) << 30,
            len: 1 << 20,
            fua: false,
        };
        d.submit(0, cmd, &mut ctx);
    }
    assert_eq!(ctx.done[0], (20_000 + 1_048_576, 0));
    assert_eq!(ctx.done[1], (20_000 + 1_048_576 + 2_097_152, 1));
    // Eight 4 KiB reads at once, sequential or scattered: two servers,
    // each 24.1 µs a read, so the last ends after four rounds.
    for step in [4096u64, 7 << 20] {
        let mut d = Device::new(&cfg).expect("builds");
        let mut ctx = Collect::default();
        for i in 0..8u32 {
            let cmd = DevCmd {
                tag: i,
                op: DevOp::Read,
                offset: u64::from(i) * step,
                len: 4096,
                fua: false,
            };
            d.submit(0, cmd, &mut ctx);
        }
        let last = ctx.done.iter().map(|&(t, _)| t).max().expect("done");
        assert!(
            (4 * 20_000..=4 * 24_100 + 4 * 4_096).contains(&last),
            "step {step}: {last}"
        );
    }
    // A write, a FLUSH and a read submitted at once: the completions.
    let done = |ctx: &Collect| {
        let mut done = ctx.done.clone();
        done.sort_by_key(|&(_, tag)| tag);
        done.into_iter().map(|(t, _)| t).collect::<Vec<_>>()
    };
    let write_flush_read = |cfg: &DeviceConfig| {
        let mut d = Device::new(cfg).expect("builds");
        let mut ctx = Collect::default();
        for (tag, op) in [(0, DevOp::Write), (1, DevOp::Flush), (2, DevOp::Read)] {
            let cmd = DevCmd {
                tag,
                op,
                offset: 0,
                len: if op == DevOp::Flush { 0 } else { 4096 },
                fua: false,
            };
            d.submit(0, cmd, &mut ctx);
        }
        done(&ctx)
    };
    // The FLUSH waits for no write in flight (the worker sends the write
    // and goes on to the fsync), and the read submitted after it starts
    // only when it is done.
    assert_eq!(
        write_flush_read(&cfg),
        [30_000 + 8_192, 100_000, 100_000 + 20_000 + 4_096]
    );
    // On a backing store that drains, the FLUSH starts when the write has
    // completed, and the read still waits for the FLUSH.
    let draining =
        DeviceConfig::from_toml(&text.replace("flush_drains = false", "flush_drains = true"))
            .expect("loads");
    assert_eq!(
        write_flush_read(&draining),
        [38_192, 38_192 + 100_000, 138_192 + 20_000 + 4_096]
    );
    // Each server keeps its queue: a read dealt behind a slow write (200
    // µs on server 0) waits for it though server 1 is free from 24.1 µs,
    // and the read after it, dealt to server 1, overtakes it. With a
    // write server of their own, writes hold up no read.
    let deal = |cfg: &DeviceConfig| {
        let mut d = Device::new(cfg).expect("builds");
        let mut ctx = Collect::default();
        for (tag, op) in [
            (0, DevOp::Write),
            (1, DevOp::Read),
            (2, DevOp::Read),
            (3, DevOp::Read),
        ] {
            let cmd = DevCmd {
                tag,
                op,
                offset: u64::from(tag) << 20,
                len: 4096,
                fua: false,
            };
            d.submit(0, cmd, &mut ctx);
        }
        done(&ctx)
    };
    let slow = text.replace("write_us = 30.0", "write_us = 200.0");
    let shared = DeviceConfig::from_toml(&slow).expect("loads");
    assert_eq!(deal(&shared), [208_192, 24_096, 232_288, 48_192]);
    let own = DeviceConfig::from_toml(&slow.replace("write_units = 0", "write_units = 1"))
        .expect("loads");
    let done = deal(&own);
    assert_eq!(done[0], 208_192);
    assert!(done[1..].iter().all(|&t| t < 50_000), "{done:?}");
    // Commands of no cost are refused: they would stop the clock.
    let zero = "name = \"l\"\nkind = \"loop\"\n[loop]\ncapacity_gb = 8\nqueue_depth = 64\nunits = 2\nwrite_units = 0\nread_us = 0.0\nwrite_us = 30.0\nread_mb_s = 1000\nwrite_mb_s = 500\nflush_us = 100.0\nflush_drains = false\nwrite_cache = true\nfua = false\nservice_sigma = 0.0\nwrite_sigma = 0.0\n";
    let e = DeviceConfig::from_toml(zero).expect_err("zero read time");
    assert!(e.to_string().contains("loop.read_us"), "{e}");
}

/// The loop channel's speed wanders by `transfer_sigma`, one factor per
/// epoch of time, the speeds of mean 1: back-to-back 1 MiB reads keep
/// the exact bandwidth over time, their times spread as the factor says,
/// and reads whose data is ready in one epoch move at one speed. Writes, without a spread of
/// their own, stay exact.
#[test]
fn a_loop_channels_speed_wanders_per_epoch_and_keeps_its_mean() {
    let text = "name = \"l\"\nkind = \"loop\"\n[loop]\ncapacity_gb = 8\nqueue_depth = 64\nunits = 2\nwrite_units = 0\nread_us = 20.0\nwrite_us = 30.0\nread_mb_s = 1000\nwrite_mb_s = 500\nflush_us = 100.0\nflush_drains = false\nwrite_cache = true\nfua = false\nservice_sigma = 0.0\nwrite_sigma = 0.0\ntransfer_sigma = 0.3\n";
    let cfg = DeviceConfig::from_toml(text).expect("loads");
    let mut d = Device::seeded(&cfg, 1, 0).expect("builds");
    let mut ctx = Collect::default();
    let (mut now, mut transfers) = (0, Vec::new());
    // One at a time, each submitted when the one before ends.
    for tag in 0..20_000u32 {
        let cmd = DevCmd {
            tag: tag % 64,
            op: DevOp::Read,
            offset: u64::from(tag % 4096) << 20,
            len: 1 << 20,
            fua: false,
        };
        d.submit(now, cmd, &mut ctx);
        let (end, t) = *ctx.done.last().expect("done");
        d.retire(end, t);
        transfers.push(end - now - 20_000);
        now = end;
    }
    // 20,000 MiB in the time the exact channel takes.
    let exact = 20_000.0 * (20_000.0 + 1_048_576.0);
    assert!(
        (now as f64 / exact - 1.0).abs() < 0.03,
        "{now} ns for 20,000 MiB"
    );
    // Nine or ten reads fall in each 10 ms epoch and share its speed.
    let same = transfers.windows(2).filter(|w| w[0] == w[1]).count();
    assert!(same > transfers.len() * 3 / 4, "{same} repeats");
    let mut sorted = transfers.clone();
    sorted.sort_unstable();
    let (p50, p99) = (sorted[10_000] as f64, sorted[19_800] as f64);
    // exp(2.326 · 0.3) = 2.01; the epochs are few (about 2,100), so loosely.
    assert!((1.7..2.4).contains(&(p99 / p50)), "p99/p50 {}", p99 / p50);
    // Writes have no spread of their own here.
    let mut d = Device::seeded(&cfg, 1, 0).expect("builds");
    let mut ctx = Collect::default();
    let mut now = 0;
    for tag in 0..100u32 {
        let cmd = DevCmd {
            tag: tag % 64,
            op: DevOp::Write,
            offset: u64::from(tag) << 20,
            len: 1 << 20,
            fua: false,
        };
        d.submit(now, cmd, &mut ctx);
        let (end, t) = *ctx.done.last().expect("done");
        d.retire(end, t);
        assert_eq!(end - now, 30_000 + 2_097_152, "write {tag}");
        now = end;
    }
}

/// One factor per run (`run_sigma`, `write_run_sigma`): a seed's reads
/// and writes are slower or faster together, by log-normal factors of
/// the two σ from one draw, and the same seed draws the same run.
#[test]
fn a_loop_runs_factor_spreads_runs_by_seed() {
    let text = "name = \"l\"\nkind = \"loop\"\n[loop]\ncapacity_gb = 8\nqueue_depth = 64\nunits = 1\nwrite_units = 0\nread_us = 100.0\nwrite_us = 200.0\nread_mb_s = 1000\nwrite_mb_s = 500\nflush_us = 100.0\nflush_drains = false\nwrite_cache = true\nfua = false\nservice_sigma = 0.0\nwrite_sigma = 0.0\nrun_sigma = 0.2\nwrite_run_sigma = 0.1\n";
    let cfg = DeviceConfig::from_toml(text).expect("loads");
    // One command's end on an idle device of `seed`.
    let first = |cfg: &DeviceConfig, seed: u64, op: DevOp, len: u64| {
        let mut d = Device::seeded(cfg, seed, 0).expect("builds");
        let mut ctx = Collect::default();
        let cmd = DevCmd {
            tag: 0,
            op,
            offset: 0,
            len,
            fua: false,
        };
        d.submit(0, cmd, &mut ctx);
        ctx.done.last().expect("done").0 as f64
    };
    let one = |seed, op, len| first(&cfg, seed, op, len);
    // Exact times: 100 µs + 4096 B at 1 GB/s; 200 µs + 1 MiB at 500 MB/s.
    let (read0, write0) = (100_000.0 + 4_096.0, 200_000.0 + 2_097_152.0);
    let mut logs = Vec::new();
    for seed in 1..=400 {
        let (r, w) = (
            one(seed, DevOp::Read, 4096),
            one(seed, DevOp::Write, 1 << 20),
        );
        let (lr, lw) = ((r / read0).ln(), (w / write0).ln());
        // One draw: the write's factor is the read's to the power σw/σr.
        assert!((lw - lr / 2.0).abs() < 1e-4, "seed {seed}: {lr} {lw}");
        logs.push(lr);
    }
    let mean = crate::stats::amean(&logs);
    let sd = crate::stats::stddev(&logs, crate::stats::StddevForm::Sample);
    assert!(mean.abs() < 0.03, "median factor exp({mean})");
    assert!((sd - 0.2).abs() < 0.02, "σ of the runs {sd}");
    assert_eq!(one(7, DevOp::Read, 4096), one(7, DevOp::Read, 4096));
    // Without the keys every seed runs the fitted device.
    let exact = DeviceConfig::from_toml(
        &text
            .replace("run_sigma = 0.2\n", "")
            .replace("write_run_sigma = 0.1\n", ""),
    )
    .expect("loads");
    assert_eq!(first(&exact, 3, DevOp::Read, 4096), read0);
}
