//! What a device's queue shows at the driver: the counterpart of the block
//! events `block_rq_issue` and `block_rq_complete` that `iolab kernel
//! summary` counts in a real trace (`iolab_kernel::tally::QueueTally`),
//! so the two sides of a comparison are the same figures. Reads, writes
//! and flushes issued to the device, each one's time from issue to
//! completion, the writes in flight at each read's and each FLUSH's issue
//! and over time, and the reads issued while a FLUSH is.

use crate::stats::{LatAcc, Occupancy};
use crate::time::Ns;

/// One device's issue statistics.
#[derive(Clone, Debug, Default)]
pub(crate) struct IssueStats {
    reads: u64,
    writes: u64,
    flushes: u64,
    read_ns: LatAcc,
    write_ns: LatAcc,
    flush_ns: LatAcc,
    writes_at_read: LatAcc,
    writes_at_flush: LatAcc,
    /// The writes in flight over time.
    writes_time: Occupancy,
    reads_under_flush: u64,
    /// Writes issued and not completed.
    writes_in_flight: u64,
    /// The issue time of the FLUSH on the device (one at a time).
    flush_since: Option<Ns>,
    /// Commands of any kind on the device, and since when it has had one.
    commands: u64,
    busy_since: Ns,
    /// Time with at least one command on the device, ended spells only.
    busy_ns: Ns,
}

impl IssueStats {
    /// A command of any kind went to the device at `now`.
    pub(crate) fn command_started(&mut self, now: Ns) {
        if self.commands == 0 {
            self.busy_since = now;
        }
        self.commands += 1;
    }

    /// A command of any kind completed at `now`.
    pub(crate) fn command_ended(&mut self, now: Ns) {
        self.commands = self.commands.saturating_sub(1);
        if self.commands == 0 {
            self.busy_ns += now.saturating_sub(self.busy_since);
        }
    }

    /// fio's `disk_util` figures of the device up to `now` (the kernel's
    /// diskstats as fio reads them): the milliseconds reads and writes
    /// spent from issue to completion, summed (`read_ticks`,
    /// `write_ticks`, and `in_queue` their sum, as a blk-mq kernel counts
    /// it), and the time the device had a command, ms (`io_ticks`).
    pub(crate) fn disk_json(&self, now: Ns) -> serde_json::Value {
        let open = if self.commands > 0 {
            now.saturating_sub(self.busy_since)
        } else {
            0
        };
        let ms = |ns: u128| (ns / 1_000_000) as u64;
        let (read, write) = (ms(self.read_ns.sum), ms(self.write_ns.sum));
        serde_json::json!({
            "read_ticks": read,
            "write_ticks": write,
            "in_queue": read + write,
            "io_ticks": ms(u128::from(self.busy_ns + open)),
        })
    }

    /// A read was issued.
    pub(crate) fn read_issued(&mut self) {
        self.reads += 1;
        self.writes_at_read.record(self.writes_in_flight);
        if self.flush_since.is_some() {
            self.reads_under_flush += 1;
        }
    }

    /// A write was issued at `now`.
    pub(crate) fn write_issued(&mut self, now: Ns) {
        self.writes += 1;
        self.writes_in_flight += 1;
        self.writes_time.set(now, self.writes_in_flight);
    }

    /// A FLUSH was issued at `now`.
    pub(crate) fn flush_issued(&mut self, now: Ns) {
        self.flushes += 1;
        self.flush_since = Some(now);
        self.writes_at_flush.record(self.writes_in_flight);
    }

    /// A read issued `took` ns ago completed.
    pub(crate) fn read_done(&mut self, took: Ns) {
        self.read_ns.record(took);
    }

    /// A write issued `took` ns before `now` completed.
    pub(crate) fn write_done(&mut self, now: Ns, took: Ns) {
        self.writes_in_flight = self.writes_in_flight.saturating_sub(1);
        self.writes_time.set(now, self.writes_in_flight);
        self.write_ns.record(took);
    }

    /// The FLUSH completed at `now`.
    pub(crate) fn flush_done(&mut self, now: Ns) {
        if let Some(at) = self.flush_since.take() {
            self.flush_ns.record(now.saturating_sub(at));
        }
    }

    /// The report's `queue` object: the keys of `iolab kernel summary`'s
    /// `trace.queues[]` but `dev`, `max_flushes_in_flight` (the block
    /// layer here sends one FLUSH at a time) and `unmatched` (every
    /// completion here has its issue).
    pub(crate) fn json(&self, now: Ns) -> serde_json::Value {
        serde_json::json!({
            "reads": self.reads,
            "writes": self.writes,
            "flushes": self.flushes,
            "read_ns": self.read_ns.spread_json(),
            "write_ns": self.write_ns.spread_json(),
            "flush_ns": self.flush_ns.spread_json(),
            "writes_at_read": self.writes_at_read.spread_json(),
            "writes_at_flush": self.writes_at_flush.spread_json(),
            "writes_in_flight": self.writes_time.summary(now).json(),
            "reads_under_flush": self.reads_under_flush,
        })
    }
}
