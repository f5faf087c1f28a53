//! The kernel's text trace, read.
//!
//! A trace is what `cat /sys/kernel/tracing/trace` or `trace_pipe` prints,
//! or `trace-cmd report`: one event per line,
//!
//! ```text
//!          <idle>-0       [001] ..s1.   308.600615: wbt_timer: 7:0: status=2, step=-1, inflight=0
//! ```
//!
//! task and pid, CPU, the irq-state flags (absent in `trace-cmd report`),
//! the timestamp in seconds, the event's name and its payload as the
//! event's print format wrote it. [`Reader`] turns each line into one typed
//! [`Record`] for the events iolab compares against ([`Event`]); comment
//! and header lines are skipped, lines of other events are skipped and
//! counted by name, lines of events naming another device than the one
//! asked for are skipped and counted, markers of lost events are returned
//! as [`Item::Lost`], and anything else is an error naming its line.
//!
//! Devices: `wbt_*` events name the device by its backing-device name
//! (`7:0`), `block_*` events by `7,0`, `balance_dirty_pages` and
//! `bdi_dirty_ratelimit` by `bdi 7:0`.
//! Events that name no device (`global_dirty_state`, btrfs events, which
//! name the filesystem by its fsid, and `balance_dirty_pages` of a bdi that
//! is not named after a device) are always kept.

mod block;
mod btrfs;
mod fields;
mod line;
mod wbt;
mod writeback;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

pub use block::{Rq, Rwbs};
pub use btrfs::{DelayedRefHead, FlushSpace, ReserveTicket, TransactionCommit, TriggerFlush};
pub use wbt::{StepMsg, WbtStat, WbtStep, WbtTimer, WindowFields};
pub use writeback::{BalanceDirtyPages, BdiDirtyRatelimit, GlobalDirtyState};

/// A block device number, `MAJ:MIN`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dev {
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
}

impl Dev {
    /// `MAJ` and `MIN` separated by `sep` (`:` in `wbt_*`, `,` in `block_*`).
    pub(crate) fn parse_sep(text: &str, sep: char) -> Option<Dev> {
        let (maj, min) = text.split_once(sep)?;
        let num = |s: &str| fields::decimal(s).and_then(|v| u32::try_from(v).ok());
        Some(Dev {
            major: num(maj)?,
            minor: num(min)?,
        })
    }
}

impl FromStr for Dev {
    type Err = String;
    fn from_str(s: &str) -> Result<Dev, String> {
        Dev::parse_sep(s, ':').ok_or_else(|| format!("'{s}' is not a device number MAJ:MIN"))
    }
}

impl fmt::Display for Dev {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

/// One event line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// 1-based line number in the trace text.
    pub line: usize,
    /// Timestamp in nanoseconds as printed (the trace clock's seconds with
    /// up to nine decimals; a clock printed as a bare integer is taken as
    /// nanoseconds).
    pub ts_ns: u64,
    /// CPU the event was recorded on.
    pub cpu: u32,
    /// Task name (`<idle>`, `<...>` when the tracer did not know it).
    pub task: &'a str,
    /// Process id.
    pub pid: i64,
    /// The event.
    pub event: Event<'a>,
}

/// The events read into typed values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// `wbt:wbt_stat`.
    WbtStat(WbtStat),
    /// `wbt:wbt_lat`: the latency that decided an EXCEEDED window, in µs.
    WbtLat {
        /// Device.
        dev: Dev,
        /// Latency in microseconds (the kernel divides by 1000).
        lat_us: u64,
    },
    /// `wbt:wbt_step`.
    WbtStep(WbtStep),
    /// `wbt:wbt_timer`.
    WbtTimer(WbtTimer),
    /// `block:block_rq_insert`.
    RqInsert(Rq),
    /// `block:block_rq_issue`.
    RqIssue(Rq),
    /// `block:block_rq_complete`.
    RqComplete(Rq),
    /// `writeback:balance_dirty_pages`.
    BalanceDirtyPages(BalanceDirtyPages<'a>),
    /// `writeback:bdi_dirty_ratelimit`.
    BdiDirtyRatelimit(BdiDirtyRatelimit<'a>),
    /// `writeback:global_dirty_state`.
    GlobalDirtyState(GlobalDirtyState),
    /// `btrfs:btrfs_flush_space`.
    BtrfsFlushSpace(FlushSpace<'a>),
    /// `btrfs:btrfs_reserve_ticket`.
    BtrfsReserveTicket(ReserveTicket<'a>),
    /// `btrfs:btrfs_trigger_flush`.
    BtrfsTriggerFlush(TriggerFlush<'a>),
    /// `btrfs:btrfs_transaction_commit`.
    BtrfsTransactionCommit(TransactionCommit<'a>),
    /// `btrfs:add_delayed_ref_head`.
    AddDelayedRefHead(DelayedRefHead<'a>),
    /// `btrfs:run_delayed_ref_head`.
    RunDelayedRefHead(DelayedRefHead<'a>),
}

impl Event<'_> {
    /// The device the event names, if it names one.
    pub fn dev(&self) -> Option<Dev> {
        match self {
            Event::WbtStat(s) => Some(s.dev),
            Event::WbtLat { dev, .. } => Some(*dev),
            Event::WbtStep(s) => Some(s.dev),
            Event::WbtTimer(t) => Some(t.dev),
            Event::RqInsert(r) | Event::RqIssue(r) | Event::RqComplete(r) => Some(r.dev),
            Event::BalanceDirtyPages(b) => Dev::parse_sep(b.bdi, ':'),
            Event::BdiDirtyRatelimit(b) => Dev::parse_sep(b.bdi, ':'),
            _ => None,
        }
    }
}

/// What [`Reader`] yields besides records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item<'a> {
    /// An event line read into a record.
    Record(Record<'a>),
    /// The tracer's marker of events it lost (its ring buffer was full):
    /// `CPU:1 [LOST 123 EVENTS]`. What follows may miss events.
    Lost {
        /// 1-based line number.
        line: usize,
        /// Events lost, if the marker says.
        events: Option<u64>,
    },
}

/// A line that is not a trace line, or an event whose payload does not
/// read as its format says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for TraceError {}

/// What a [`Reader`] passed over without returning it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Comment, header and blank lines.
    pub header_lines: u64,
    /// Lines of events this reader does not type, by event name.
    pub unknown_events: BTreeMap<String, u64>,
    /// Lines of events that name another device than the one asked for.
    pub other_devices: u64,
}

impl Skipped {
    /// Lines of unknown events in all.
    pub fn unknown_total(&self) -> u64 {
        self.unknown_events.values().sum()
    }
}

/// Reads a trace one line at a time, for a caller that streams it (a
/// trace need not fit in memory); see the module docs. Its state is the
/// device asked for and what it skipped.
#[derive(Clone, Debug, Default)]
pub struct LineReader {
    dev: Option<Dev>,
    skipped: Skipped,
}

impl LineReader {
    /// A reader keeping only events of `dev` (and those that name no
    /// device); every device's with `None`.
    pub fn new(dev: Option<Dev>) -> LineReader {
        LineReader {
            dev,
            skipped: Skipped::default(),
        }
    }

    /// What was passed over so far.
    pub fn skipped(&self) -> &Skipped {
        &self.skipped
    }

    /// Line `lineno` (1-based) of the trace, without its line end: its
    /// item, `None` for a line passed over, or what is wrong with it.
    pub fn line<'t>(
        &mut self,
        lineno: usize,
        text: &'t str,
    ) -> Result<Option<Item<'t>>, TraceError> {
        let err = |message: String| TraceError {
            line: lineno,
            message,
        };
        let parsed = match line::split(text) {
            line::Split::Header => {
                self.skipped.header_lines += 1;
                return Ok(None);
            }
            line::Split::Lost(events) => {
                return Ok(Some(Item::Lost {
                    line: lineno,
                    events,
                }));
            }
            line::Split::Bad(why) => return Err(err(why)),
            line::Split::Event(p) => p,
        };
        let event = match parse_event(parsed.event, parsed.payload) {
            Parsed::Unknown => {
                match self.skipped.unknown_events.get_mut(parsed.event) {
                    Some(n) => *n += 1,
                    None => {
                        self.skipped
                            .unknown_events
                            .insert(parsed.event.to_owned(), 1);
                    }
                }
                return Ok(None);
            }
            Parsed::Bad(why) => {
                return Err(err(format!(
                    "{}: {why} (payload '{}')",
                    parsed.event,
                    clip(parsed.payload)
                )));
            }
            Parsed::Event(e) => e,
        };
        if let (Some(want), Some(dev)) = (self.dev, event.dev())
            && want != dev
        {
            self.skipped.other_devices += 1;
            return Ok(None);
        }
        Ok(Some(Item::Record(Record {
            line: lineno,
            ts_ns: parsed.ts_ns,
            cpu: parsed.cpu,
            task: parsed.task,
            pid: parsed.pid,
            event,
        })))
    }
}

/// Reads a whole trace text line by line ([`LineReader`] over its lines).
pub struct Reader<'a> {
    lines: std::iter::Enumerate<std::str::Lines<'a>>,
    inner: LineReader,
}

impl<'a> Reader<'a> {
    /// A reader of `text` keeping only events of `dev` (and those that name
    /// no device); every device's with `None`.
    pub fn new(text: &'a str, dev: Option<Dev>) -> Reader<'a> {
        Reader {
            lines: text.lines().enumerate(),
            inner: LineReader::new(dev),
        }
    }

    /// What was passed over so far.
    pub fn skipped(&self) -> &Skipped {
        self.inner.skipped()
    }
}

impl<'a> Iterator for Reader<'a> {
    type Item = Result<Item<'a>, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (i, text) = self.lines.next()?;
            match self.inner.line(i + 1, text) {
                Ok(None) => continue,
                Ok(Some(item)) => return Some(Ok(item)),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// At most 80 characters of `s`, for messages.
fn clip(s: &str) -> &str {
    match s.char_indices().nth(80) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

pub(crate) enum Parsed<'a> {
    Event(Event<'a>),
    Unknown,
    Bad(String),
}

impl<'a> From<Result<Event<'a>, String>> for Parsed<'a> {
    fn from(r: Result<Event<'a>, String>) -> Parsed<'a> {
        match r {
            Ok(e) => Parsed::Event(e),
            Err(why) => Parsed::Bad(why),
        }
    }
}

fn parse_event<'a>(name: &'a str, payload: &'a str) -> Parsed<'a> {
    match name {
        "wbt_stat" => wbt::stat(payload).map(Event::WbtStat).into(),
        "wbt_lat" => wbt::lat(payload)
            .map(|(dev, lat_us)| Event::WbtLat { dev, lat_us })
            .into(),
        "wbt_step" => wbt::step(payload).map(Event::WbtStep).into(),
        "wbt_timer" => wbt::timer(payload).map(Event::WbtTimer).into(),
        "block_rq_insert" => block::rq(payload, true).map(Event::RqInsert).into(),
        "block_rq_issue" => block::rq(payload, true).map(Event::RqIssue).into(),
        "block_rq_complete" => block::rq(payload, false).map(Event::RqComplete).into(),
        "balance_dirty_pages" => writeback::balance_dirty_pages(payload)
            .map(Event::BalanceDirtyPages)
            .into(),
        "bdi_dirty_ratelimit" => writeback::bdi_dirty_ratelimit(payload)
            .map(Event::BdiDirtyRatelimit)
            .into(),
        "global_dirty_state" => writeback::global_dirty_state(payload)
            .map(Event::GlobalDirtyState)
            .into(),
        "btrfs_flush_space" => btrfs::flush_space(payload)
            .map(Event::BtrfsFlushSpace)
            .into(),
        "btrfs_reserve_ticket" => btrfs::reserve_ticket(payload)
            .map(Event::BtrfsReserveTicket)
            .into(),
        "btrfs_trigger_flush" => btrfs::trigger_flush(payload)
            .map(Event::BtrfsTriggerFlush)
            .into(),
        "btrfs_transaction_commit" => btrfs::transaction_commit(payload)
            .map(Event::BtrfsTransactionCommit)
            .into(),
        "add_delayed_ref_head" => btrfs::delayed_ref_head(payload)
            .map(Event::AddDelayedRefHead)
            .into(),
        "run_delayed_ref_head" => btrfs::delayed_ref_head(payload)
            .map(Event::RunDelayedRefHead)
            .into(),
        _ => Parsed::Unknown,
    }
}

#[cfg(test)]
mod tests;
