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
//!
//! A ticket's wait is the record's timestamp less its `start_ns`; that
//! holds only when the trace clock is `mono` (the clock of `ktime_get_ns`),
//! which the caller says. Everything here is pure.

use std::collections::BTreeMap;

use crate::trace::{Event, Item, Reader, TraceError};

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

/// Everything counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
}

/// Counts `text` (a whole trace, every device). `mono_clock`: the trace
/// clock was `mono`, so ticket waits can be measured.
pub fn tally(text: &str, mono_clock: bool) -> Result<Tally, TraceError> {
    let mut t = Tally::default();
    let mut waits = Vec::new();
    let mut meta_waits = Vec::new();
    let mut pauses = Vec::new();
    let (mut bg, mut th, mut lim) = (Vec::new(), Vec::new(), Vec::new());
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
            _ => {}
        }
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
}
