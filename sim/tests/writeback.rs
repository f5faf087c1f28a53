//! Buffered writeback end to end: dirty pages reach the device through the
//! flusher, writers are throttled to what the device absorbs, readers wait
//! behind writeback, fsync waits for its pages.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{extra_u64, job, mean_clat, run_none, scenario};
use iolab_sim::stats::Dir;

const MIB: u64 = 1 << 20;

#[test]
fn a_buffered_random_writer_reaches_the_device_through_the_flusher() {
    // 512 MiB of RAM: background writeback starts near 46 MiB dirty; the
    // writer dirties a 1 GiB file at random on a disk that absorbs a few
    // hundred random writes per second.
    let s = scenario(
        "[w]\nrw=randwrite\nbs=4k\nsize=1g\nruntime=20\ntime_based\n",
        "hdd",
        512 * MIB,
        7,
    );
    let out = run_none(&s);
    let flusher_pages = extra_u64(&out, "/page_cache/flusher_pages");
    let written = extra_u64(&out, "/devices/0/counters/write_bytes");
    let pauses = extra_u64(&out, "/page_cache/dirty_pauses");
    assert!(
        flusher_pages > 10_000,
        "flusher wrote {flusher_pages} pages"
    );
    // Every page the flusher sent is on the device, but those still in
    // flight when the run ended.
    let in_flight = extra_u64(&out, "/page_cache/writeback_pages");
    assert!(
        written >= (flusher_pages - in_flight) * 4096,
        "device saw {written} bytes"
    );
    assert!(pauses > 0, "the writer was never throttled");
    // The passes through balance_dirty_pages as the kernel traces them:
    // pauses are whole jiffies (4 ms at HZ=250) up to MAX_PAUSE.
    let passes = extra_u64(&out, "/page_cache/dirty_throttle/passes");
    assert!(passes >= pauses, "{passes} passes, {pauses} pauses");
    let p50 = extra_u64(&out, "/page_cache/dirty_throttle/pause_ns/p50");
    let max = extra_u64(&out, "/page_cache/dirty_throttle/pause_ns/max");
    assert_eq!(
        max % 4_000_000,
        0,
        "the longest pause, {max} ns, is whole jiffies"
    );
    assert!(
        4_000_000 <= p50 && p50 <= max && max <= 200_000_000,
        "{p50} {max}"
    );
    // Throttled to the device: it never gets further ahead of the disk than
    // the dirty limit.
    let w = job(&out, "w").dir(Dir::Write);
    let dirty_limit = 512 * MIB * 9 / 10 / 5;
    assert!(
        w.io_bytes < written + dirty_limit,
        "wrote {} > device {written} + dirty limit",
        w.io_bytes
    );
    // Unthrottled it would dirty pages at memory speed (~8 GiB/s).
    assert!(
        w.bw < 200 * 1024,
        "writer at {} KiB/s was not throttled",
        w.bw
    );
}

#[test]
fn readers_wait_behind_writeback() {
    let reader = "[r]\nrw=randread\nbs=4k\nsize=1g\nruntime=10\ntime_based\n";
    let writer = "[w]\nrw=randwrite\nbs=4k\nsize=2g\nruntime=10\ntime_based\n";
    let alone = run_none(&scenario(reader, "sata-ssd", 512 * MIB, 3));
    let both = run_none(&scenario(
        &format!("{reader}{writer}"),
        "sata-ssd",
        512 * MIB,
        3,
    ));
    let a = mean_clat(&alone, "r", Dir::Read);
    let b = mean_clat(&both, "r", Dir::Read);
    assert!(
        b > 2.0 * a,
        "read latency alone {a:.0} ns, behind writeback {b:.0} ns"
    );
}

#[test]
fn fsync_waits_for_its_pages() {
    // fsync after every 32 random writes: when it returns, the pages are on
    // the device, so everything but the last unsynced writes was written.
    let s = scenario(
        "[w]\nrw=randwrite\nbs=4k\nsize=256m\nfsync=32\nruntime=5\ntime_based\n",
        "hdd",
        1024 * MIB,
        5,
    );
    let out = run_none(&s);
    let w = job(&out, "w");
    let written = extra_u64(&out, "/devices/0/counters/write_bytes");
    let syncs = w.sync.total_ios;
    assert!(syncs > 10, "{syncs} fsyncs");
    assert!(
        written + 32 * 4096 >= w.dir(Dir::Write).io_bytes,
        "device {written} < data {}",
        w.dir(Dir::Write).io_bytes
    );
    // Each fsync wrote 32 random pages to a disk, flushed its cache and
    // forced the log: milliseconds, not the microseconds of a write().
    assert!(w.sync.lat.mean > 5e6, "mean fsync {} ns", w.sync.lat.mean);
    assert!(w.dir(Dir::Write).clat.mean < 50e3);
    let forces = extra_u64(&out, "/journal/forces");
    assert_eq!(forces, syncs, "every fsync after a write forces the log");
    assert!(extra_u64(&out, "/devices/0/counters/flushes") > 0);
}

#[test]
fn fdatasync_after_overwrites_flushes_without_a_log_force() {
    // A job that reads has its file written out first: rewrites need no
    // unwritten-extent conversion, so fdatasync only flushes the cache.
    let s = scenario(
        "[w]\nrw=randrw\nrwmixread=10\nbs=4k\nsize=64m\nfdatasync=8\nruntime=2\ntime_based\n",
        "sata-ssd",
        1024 * MIB,
        5,
    );
    let out = run_none(&s);
    assert_eq!(extra_u64(&out, "/journal/forces"), 0);
    assert_eq!(
        extra_u64(&out, "/journal/bare_flushes"),
        job(&out, "w").sync.total_ios
    );
}

#[test]
fn fdatasync_into_fallocated_space_forces_the_log() {
    // Write-only jobs get fallocated (unwritten) files: each written page
    // is a conversion that fdatasync must persist through the log.
    let s = scenario(
        "[w]\nrw=randwrite\nbs=4k\nsize=64m\nfdatasync=8\nruntime=2\ntime_based\n",
        "sata-ssd",
        1024 * MIB,
        5,
    );
    let out = run_none(&s);
    let syncs = job(&out, "w").sync.total_ios;
    assert!(syncs > 0);
    assert_eq!(extra_u64(&out, "/journal/forces"), syncs);
    assert!(extra_u64(&out, "/journal/conversions") >= syncs * 8 - 8);
}
