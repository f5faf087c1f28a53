//! What a captured trace adds up to: the counts and distributions the
//! simulator reports for the same run (`iolab run --output-format json`,
//! under `iolab.btrfs` and `iolab.page_cache`), counted from the kernel's
//! own events, so the two sides of a prediction row are the same figure.
//!
//! * btrfs: transaction commits, `flush_space` calls per space type, state
//!   and flusher (preemptive or not), tickets and their waits, flush
//!   triggers by reason.
//! * dirty throttling: `balance_dirty_pages` passes, the ones that did not
//!   sleep, the pause lengths, and the dirty thresholds
//!   (`global_dirty_state`).
//! * each device's queue, from `block_rq_issue` and `block_rq_complete`
//!   (the simulator's `iolab.devices[].queue`): reads, writes and flushes
//!   issued, each one's time from issue to completion, the writes in
//!   flight when a read is issued, and the reads issued while a FLUSH is.
//!   A read or write's completion is matched to its issue by sector,
//!   length and direction; a FLUSH prints another sector at completion, so
//!   flushes are matched first in, first out.
//!
//! A ticket's wait is the record's timestamp less its `start_ns`; that
//! holds only when the trace clock is `mono` (the clock of `ktime_get_ns`),
//! which the caller says. Everything here is pure.

use std::collections::{BTreeMap, HashMap, VecDeque};

use iolab_sim::stats::{Occupancy, OccupancySummary};

use crate::trace::{Dev, Event, Item, Reader, Rq, TraceError};

/// A distribution's summary: count and nearest-rank percentiles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spread {
    /// Values.
    pub n: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest.
    pub max: u64,
    /// Sum of the values (for a mean).
    pub sum: u64,
}

impl Spread {
    /// The summary of `values` (sorted in place).
    pub fn of(values: &mut [u64]) -> Spread {
        values.sort_unstable();
        let n = values.len();
        if n == 0 {
            return Spread::default();
        }
        // Nearest rank: the smallest value with at least q·n values at or below it.
        let rank = |q: f64| values[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
        Spread {
            n: n as u64,
            p50: rank(0.50),
            p90: rank(0.90),
            p99: rank(0.99),
            max: values[n - 1],
            sum: values.iter().sum(),
        }
    }
}

/// `flush_space` calls are counted per this key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FlushKey {
    /// Block-group type bits of the space (1 data, 4 metadata).
    pub flags: u64,
    /// The state's number (kernel: `enum btrfs_flush_state`).
    pub state: i32,
    /// Run by the preemptive flusher.
    pub preempt: bool,
}

/// The btrfs side of a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BtrfsTally {
    /// `btrfs_transaction_commit` records.
    pub commits: u64,
    /// `btrfs_flush_space` calls.
    pub flush_space: BTreeMap<FlushKey, u64>,
    /// `btrfs_reserve_ticket` records: reservations that waited, by space
    /// type name (`DATA`, `METADATA`, …).
    pub tickets: BTreeMap<String, u64>,
    /// Tickets that ended in an error (ENOSPC).
    pub ticket_errors: u64,
    /// Ticket waits in nanoseconds, when the clock allows (see the module
    /// docs): every space type.
    pub ticket_wait_ns: Option<Spread>,
    /// Metadata tickets' waits alone.
    pub metadata_wait_ns: Option<Spread>,
    /// `btrfs_trigger_flush` records by reason.
    pub triggers: BTreeMap<String, u64>,
}

/// The dirty-throttling side of a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirtyTally {
    /// `balance_dirty_pages` records: passes through throttling above the
    /// free-run line.
    pub passes: u64,
    /// Passes whose pause was not positive: the task did not sleep.
    pub unpaused: u64,
    /// The positive pauses, in milliseconds.
    pub pause_ms: Spread,
    /// `global_dirty_state` records.
    pub states: u64,
    /// Their median background threshold, dirty threshold and limit, in
    /// pages.
    pub bg_thresh: u64,
    /// See `bg_thresh`.
    pub thresh: u64,
    /// See `bg_thresh`.
    pub limit: u64,
}

/// One device's queue, from the block events.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueTally {
    /// Reads issued.
    pub reads: u64,
    /// Writes issued.
    pub writes: u64,
    /// Flushes issued (`block_rq_issue` with the operation `F`).
    pub flushes: u64,
    /// Issue to completion of the reads matched, ns.
    pub read_ns: Spread,
    /// The same for writes.
    pub write_ns: Spread,
    /// The same for flushes.
    pub flush_ns: Spread,
    /// The writes issued and not yet completed when each read was issued.
    pub writes_at_read: Spread,
    /// The same when each FLUSH was issued.
    pub writes_at_flush: Spread,
    /// The writes in flight over time, from the first write's issue to the
    /// last block event.
    pub writes_in_flight: OccupancySummary,
    /// Reads issued while a FLUSH was in flight.
    pub reads_under_flush: u64,
    /// Most flushes in flight at once.
    pub max_flushes_in_flight: u64,
    /// Completions with no issue before them in the trace (it began with
    /// them in flight), not counted in the times.
    pub unmatched: u64,
}

/// Everything counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    /// Records read.
    pub records: u64,
    /// Lost-event markers, and the events they say were lost.
    pub lost_markers: u64,
    /// See `lost_markers` (markers that give no count add nothing).
    pub lost_events: u64,
    /// btrfs.
    pub btrfs: BtrfsTally,
    /// Dirty throttling.
    pub dirty: DirtyTally,
    /// Each device's queue (block events), by device.
    pub queues: BTreeMap<Dev, QueueTally>,
}

/// A device's requests in flight while the block events are counted.
#[derive(Default)]
struct InFlight {
    /// Issue times of reads and writes by (sector, sectors, operation); a
    /// request issued again before it completed queues behind itself.
    rw: HashMap<(u64, u32, u8), VecDeque<u64>>,
    /// Issue times of flushes, oldest first.
    flushes: VecDeque<u64>,
    writes: u64,
    /// The writes in flight over time, and the last event's time.
    occupancy: Occupancy,
    last_ts: u64,
    writes_at_flush: Vec<u64>,
    read_ns: Vec<u64>,
    write_ns: Vec<u64>,
    flush_ns: Vec<u64>,
    writes_at_read: Vec<u64>,
}

impl InFlight {
    fn issue(&mut self, q: &mut QueueTally, r: &Rq, ts: u64) {
        self.last_ts = self.last_ts.max(ts);
        match r.rwbs.op() {
            b'F' => {
                q.flushes += 1;
                self.writes_at_flush.push(self.writes);
                self.flushes.push_back(ts);
                q.max_flushes_in_flight = q.max_flushes_in_flight.max(self.flushes.len() as u64);
                return;
            }
            b'R' => {
                q.reads += 1;
                self.writes_at_read.push(self.writes);
                if !self.flushes.is_empty() {
                    q.reads_under_flush += 1;
                }
            }
            b'W' => {
                q.writes += 1;
                self.writes += 1;
                self.occupancy.set(ts, self.writes);
            }
            _ => return,
        }
        self.rw
            .entry((r.sector, r.nr_sector, r.rwbs.op()))
            .or_default()
            .push_back(ts);
    }

    fn complete(&mut self, q: &mut QueueTally, r: &Rq, ts: u64) {
        self.last_ts = self.last_ts.max(ts);
        let op = r.rwbs.op();
        let (issued, times) = match op {
            b'F' => (self.flushes.pop_front(), &mut self.flush_ns),
            b'R' | b'W' => (
                self.rw
                    .get_mut(&(r.sector, r.nr_sector, op))
                    .and_then(VecDeque::pop_front),
                if op == b'R' {
                    &mut self.read_ns
                } else {
                    &mut self.write_ns
                },
            ),
            _ => return,
        };
        let Some(at) = issued else {
            q.unmatched += 1;
            return;
        };
        times.push(ts.saturating_sub(at));
        if op == b'W' {
            self.writes = self.writes.saturating_sub(1);
            self.occupancy.set(ts, self.writes);
        }
    }

    fn finish(mut self, q: &mut QueueTally) {
        q.read_ns = Spread::of(&mut self.read_ns);
        q.write_ns = Spread::of(&mut self.write_ns);
        q.flush_ns = Spread::of(&mut self.flush_ns);
        q.writes_at_read = Spread::of(&mut self.writes_at_read);
        q.writes_at_flush = Spread::of(&mut self.writes_at_flush);
        q.writes_in_flight = self.occupancy.summary(self.last_ts);
    }
}

/// Counts `text` (a whole trace, every device). `mono_clock`: the trace
/// clock was `mono`, so ticket waits can be measured.
pub fn tally(text: &str, mono_clock: bool) -> Result<Tally, TraceError> {
    let mut t = Tally::default();
    let mut waits = Vec::new();
    let mut meta_waits = Vec::new();
    let mut pauses = Vec::new();
    let (mut bg, mut th, mut lim) = (Vec::new(), Vec::new(), Vec::new());
    let mut flight: BTreeMap<Dev, InFlight> = BTreeMap::new();
    for item in Reader::new(text, None) {
        let rec = match item? {
            Item::Record(r) => r,
            Item::Lost { events, .. } => {
                t.lost_markers += 1;
                t.lost_events += events.unwrap_or(0);
                continue;
            }
        };
        t.records += 1;
        match rec.event {
            Event::BtrfsTransactionCommit(_) => t.btrfs.commits += 1,
            Event::BtrfsFlushSpace(f) => {
                let key = FlushKey {
                    flags: f.flags,
                    state: f.state,
                    preempt: f.for_preempt,
                };
                *t.btrfs.flush_space.entry(key).or_default() += 1;
            }
            Event::BtrfsReserveTicket(r) => {
                *t.btrfs.tickets.entry(r.flags.to_owned()).or_default() += 1;
                if r.error != 0 {
                    t.btrfs.ticket_errors += 1;
                }
                if mono_clock && r.start_ns > rec.ts_ns {
                    return Err(TraceError {
                        line: rec.line,
                        message: format!(
                            "btrfs_reserve_ticket: start_ns={} is after the record's time ({} ns): the trace clock was not mono",
                            r.start_ns, rec.ts_ns
                        ),
                    });
                }
                let wait = rec.ts_ns.saturating_sub(r.start_ns);
                waits.push(wait);
                if r.flags.contains("METADATA") {
                    meta_waits.push(wait);
                }
            }
            Event::BtrfsTriggerFlush(f) => {
                *t.btrfs.triggers.entry(f.reason.to_owned()).or_default() += 1;
            }
            Event::BalanceDirtyPages(b) => {
                t.dirty.passes += 1;
                if b.pause > 0 {
                    pauses.push(b.pause as u64);
                } else {
                    t.dirty.unpaused += 1;
                }
            }
            Event::GlobalDirtyState(g) => {
                t.dirty.states += 1;
                bg.push(g.bg_thresh);
                th.push(g.thresh);
                lim.push(g.limit);
            }
            Event::RqIssue(r) => {
                let q = t.queues.entry(r.dev).or_default();
                flight.entry(r.dev).or_default().issue(q, &r, rec.ts_ns);
            }
            Event::RqComplete(r) => {
                let q = t.queues.entry(r.dev).or_default();
                flight.entry(r.dev).or_default().complete(q, &r, rec.ts_ns);
            }
            _ => {}
        }
    }
    for (dev, f) in flight {
        f.finish(t.queues.entry(dev).or_default());
    }
    if mono_clock {
        t.btrfs.ticket_wait_ns = Some(Spread::of(&mut waits));
        t.btrfs.metadata_wait_ns = Some(Spread::of(&mut meta_waits));
    }
    t.dirty.pause_ms = Spread::of(&mut pauses);
    t.dirty.bg_thresh = Spread::of(&mut bg).p50;
    t.dirty.thresh = Spread::of(&mut th).p50;
    t.dirty.limit = Spread::of(&mut lim).p50;
    Ok(t)
}

/// The kernel's name of flush state `n` (`enum btrfs_flush_state`).
pub fn flush_state_name(n: i32) -> &'static str {
    match iolab_flush::FlushState::from_kernel_number(n) {
        Some(s) => s.kernel_name(),
        None if n == 12 => "RESET_ZONES",
        None => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FSID: &str = "1c5f24bd-4541-4a70-9cc6-aa47f926d263";

    fn trace() -> String {
        let f = FSID;
        [
            format!("  kworker/u8:5-5760 [000] ..... 100.000000: btrfs_flush_space: {f}: state=4(FLUSH_DELAYED_REFS) flags=4(METADATA) num_bytes=655360 ret=0 for_preempt=0"),
            format!("  kworker/u8:5-5760 [000] ..... 100.000100: btrfs_flush_space: {f}: state=4(FLUSH_DELAYED_REFS) flags=4(METADATA) num_bytes=655360 ret=0 for_preempt=1"),
            format!("  kworker/u8:5-5760 [000] ..... 100.000200: btrfs_flush_space: {f}: state=4(FLUSH_DELAYED_REFS) flags=4(METADATA) num_bytes=655360 ret=0 for_preempt=0"),
            format!("  kworker/u8:5-5760 [000] ..... 100.000300: btrfs_flush_space: {f}: state=9(ALLOC_CHUNK_FORCE) flags=1(DATA) num_bytes=18446744073709551615 ret=0 for_preempt=0"),
            format!("  fio-1 [000] ..... 100.002000: btrfs_reserve_ticket: {f}: flags=METADATA bytes=65536 start_ns=100000000000 flush=0x3 error=0"),
            format!("  fio-1 [000] ..... 100.000500: btrfs_reserve_ticket: {f}: flags=DATA bytes=65536 start_ns=100000000000 flush=0x3 error=-28"),
            format!("  fio-1 [000] ...1. 100.000000: btrfs_trigger_flush: {f}: enospc: flush=3(0x3) flags=4(METADATA) bytes=65536"),
            format!("  btrfs-transacti-9 [001] ..... 101.000000: btrfs_transaction_commit: {f}: gen=7"),
            "CPU:1 [LOST 12 EVENTS]".to_owned(),
            "  fio-1 [000] ..... 101.5: balance_dirty_pages: bdi 7:0: limit=1200 setpoint=1000 dirty=1100 wb_setpoint=900 wb_dirty=950 dirty_ratelimit=100 task_ratelimit=50 dirtied=32 dirtied_pause=32 paused=0 pause=28 period=28 think=0 cgroup_ino=1".to_owned(),
            "  fio-1 [000] ..... 101.6: balance_dirty_pages: bdi 7:0: limit=1200 setpoint=1000 dirty=1100 wb_setpoint=900 wb_dirty=950 dirty_ratelimit=100 task_ratelimit=50 dirtied=32 dirtied_pause=32 paused=0 pause=-4 period=28 think=4 cgroup_ino=1".to_owned(),
            "  fio-1 [000] ..... 101.7: balance_dirty_pages: bdi 7:0: limit=1200 setpoint=1000 dirty=1100 wb_setpoint=900 wb_dirty=950 dirty_ratelimit=100 task_ratelimit=50 dirtied=32 dirtied_pause=32 paused=0 pause=36 period=36 think=0 cgroup_ino=1".to_owned(),
            "  fio-1 [000] ..... 101.8: global_dirty_state: dirty=1100 writeback=10 bg_thresh=600 thresh=1200 limit=1250 dirtied=5 written=4".to_owned(),
        ]
        .join("\n")
    }

    #[test]
    fn btrfs_events_are_counted_per_state_flusher_and_space() {
        let t = tally(&trace(), true).expect("reads");
        let b = &t.btrfs;
        assert_eq!(b.commits, 1);
        let refs = |preempt| FlushKey {
            flags: 4,
            state: 4,
            preempt,
        };
        assert_eq!(b.flush_space.get(&refs(false)), Some(&2));
        assert_eq!(b.flush_space.get(&refs(true)), Some(&1));
        assert_eq!(b.flush_space.len(), 3);
        assert_eq!(b.tickets.get("METADATA"), Some(&1));
        assert_eq!(b.tickets.get("DATA"), Some(&1));
        assert_eq!(b.ticket_errors, 1);
        // Waits: stamp − start_ns, 2 ms and 0.5 ms.
        let w = b.ticket_wait_ns.expect("mono clock");
        assert_eq!((w.n, w.p50, w.max), (2, 500_000, 2_000_000));
        assert_eq!(b.metadata_wait_ns.map(|s| s.max), Some(2_000_000));
        assert_eq!(b.triggers.get("enospc"), Some(&1));
        assert_eq!((t.lost_markers, t.lost_events), (1, 12));
    }

    #[test]
    fn waits_need_the_mono_clock() {
        let t = tally(&trace(), false).expect("reads");
        assert_eq!(t.btrfs.ticket_wait_ns, None);
        assert_eq!(t.btrfs.tickets.values().sum::<u64>(), 2);
        // A wait that began after its record: not the mono clock.
        let late = trace().replace(
            "start_ns=100000000000 flush=0x3 error=0",
            "start_ns=200000000000 flush=0x3 error=0",
        );
        let e = tally(&late, true).expect_err("not mono");
        assert_eq!(e.line, 5);
        assert!(e.message.contains("not mono"), "{}", e.message);
        assert!(tally(&late, false).is_ok());
    }

    #[test]
    fn dirty_passes_split_into_sleeps_and_not() {
        let d = tally(&trace(), true).expect("reads").dirty;
        assert_eq!((d.passes, d.unpaused), (3, 1));
        assert_eq!((d.pause_ms.n, d.pause_ms.p50, d.pause_ms.max), (2, 28, 36));
        assert_eq!(
            (d.states, d.bg_thresh, d.thresh, d.limit),
            (1, 600, 1200, 1250)
        );
    }

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<u64> = (1..=100).rev().collect();
        let s = Spread::of(&mut v);
        assert_eq!(
            (s.n, s.p50, s.p90, s.p99, s.max, s.sum),
            (100, 50, 90, 99, 100, 5050)
        );
        assert_eq!(Spread::of(&mut []), Spread::default());
        assert_eq!(Spread::of(&mut [7]).p99, 7);
    }

    #[test]
    fn a_bad_line_is_an_error_at_its_line() {
        let text = format!("{}\ngarbage line\n", trace());
        let e = tally(&text, true).expect_err("garbage");
        assert_eq!(e.line, 14);
        assert_eq!(flush_state_name(4), "FLUSH_DELAYED_REFS");
        assert_eq!(flush_state_name(99), "unknown");
    }

    /// Block events of two devices: a completion from before the trace,
    /// two writes, a read issued with one write and a FLUSH in flight, a
    /// FLUSH matched first in, first out though it prints another sector
    /// at completion, a request issued twice at the same sector.
    #[test]
    fn block_events_give_each_devices_queue() {
        let text = [
            "  k-1 [000] ..... 10.000000: block_rq_complete: 7,0 WS () 8 + 8 be,0,4 [0]",
            "  fio-2 [000] ..... 10.000100: block_rq_issue: 7,0 WS 4096 () 16 + 8 be,0,4 [fio]",
            "  fio-2 [000] ..... 10.000200: block_rq_issue: 7,0 WS 4096 () 24 + 8 be,0,4 [fio]",
            "  k-3 [001] ..... 10.000300: block_rq_issue: 7,0 FF 0 () 0 + 0 none,0,0 [k]",
            "  fio-4 [000] ..... 10.000400: block_rq_issue: 7,0 RA 4096 () 64 + 8 be,0,4 [fio]",
            "  k-1 [000] ..... 10.000600: block_rq_complete: 7,0 WS () 16 + 8 be,0,4 [0]",
            "  k-1 [000] ..... 10.001300: block_rq_complete: 7,0 FF () 18446744073709551615 + 0 none,0,0 [0]",
            "  k-1 [000] ..... 10.001400: block_rq_complete: 7,0 RA () 64 + 8 be,0,4 [0]",
            "  fio-4 [000] ..... 10.002000: block_rq_issue: 7,0 RA 4096 () 64 + 8 be,0,4 [fio]",
            "  k-1 [000] ..... 10.002100: block_rq_complete: 7,0 WS () 24 + 8 be,0,4 [0]",
            "  k-1 [000] ..... 10.002500: block_rq_complete: 7,0 RA () 64 + 8 be,0,4 [0]",
            "  fio-5 [001] ..... 10.003000: block_rq_issue: 254,0 RS 4096 () 0 + 8 be,0,4 [fio]",
        ]
        .join("\n");
        let t = tally(&text, false).expect("reads");
        let loop0 = Dev { major: 7, minor: 0 };
        let q = &t.queues[&loop0];
        assert_eq!((q.reads, q.writes, q.flushes, q.unmatched), (2, 2, 1, 1));
        assert_eq!(
            (q.read_ns.n, q.read_ns.p50, q.read_ns.max),
            (2, 500_000, 1_000_000)
        );
        assert_eq!((q.write_ns.n, q.write_ns.max), (2, 1_900_000));
        assert_eq!((q.flush_ns.n, q.flush_ns.p50), (1, 1_000_000));
        // Two writes in flight at the first read, one at the second.
        assert_eq!((q.writes_at_read.p50, q.writes_at_read.max), (1, 2));
        assert_eq!((q.reads_under_flush, q.max_flushes_in_flight), (1, 1));
        assert_eq!((q.writes_at_flush.n, q.writes_at_flush.p50), (1, 2));
        // From the first write's issue to the last event, 2.4 ms: one write
        // for 1.6 ms, two for 0.4, none for 0.4.
        let w = q.writes_in_flight;
        assert_eq!((w.ns, w.p10, w.p50, w.p90), (2_400_000, 0, 1, 2));
        assert!((w.mean - 1.0).abs() < 1e-9, "{}", w.mean);
        let other = &t.queues[&Dev {
            major: 254,
            minor: 0,
        }];
        assert_eq!(
            (other.reads, other.read_ns.n, other.writes_at_read.max),
            (1, 0, 0)
        );
    }
}
