//! One window expiry as the kernel traces it: `wb_timer_fn` prints an
//! optional `wbt_lat`, an optional `wbt_stat`, then `wbt_timer`, then a
//! `wbt_step` if the depth changed, all from one timer callback.

use crate::trace::{WbtStat, WbtStep, WbtTimer};

/// The records of one expiry.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Expiry {
    /// `wbt_lat`: (line, latency in µs).
    pub lat: Option<(usize, u64)>,
    /// `wbt_stat`: (line, record).
    pub stat: Option<(usize, WbtStat)>,
    /// `wbt_timer`: (line, timestamp, record).
    pub timer: Option<(usize, u64, WbtTimer)>,
    /// `wbt_step`: (line, record).
    pub step: Option<(usize, WbtStep)>,
    /// A tracked-direction write was issued between `wbt_timer` and the
    /// end of the expiry: its `wbt_wait` found the timer inactive (the
    /// callback was running) and armed it with the step of that moment,
    /// so `wbt_step` may print the new step's window length.
    pub raced: bool,
}

/// Gathers `wbt_*` records into expiries.
#[derive(Debug, Default)]
pub(crate) struct Assembler {
    open: Expiry,
}

/// What a record did to the expiry being gathered.
pub(crate) enum Fed {
    /// Taken into the open expiry.
    Taken,
    /// The open expiry is complete (returned); the record starts the next.
    Closed(Box<Expiry>),
    /// A `wbt_step` that belongs to no `wbt_timer`.
    Orphan,
}

impl Assembler {
    fn close_if_timed(&mut self) -> Option<Expiry> {
        if self.open.timer.is_some() {
            Some(std::mem::take(&mut self.open))
        } else {
            None
        }
    }

    fn fed(closed: Option<Expiry>) -> Fed {
        match closed {
            Some(e) => Fed::Closed(Box::new(e)),
            None => Fed::Taken,
        }
    }

    pub fn lat(&mut self, line: usize, lat_us: u64) -> Fed {
        let closed = self.close_if_timed();
        let closed = closed.or_else(|| {
            self.open
                .lat
                .is_some()
                .then(|| std::mem::take(&mut self.open))
        });
        self.open.lat = Some((line, lat_us));
        Self::fed(closed)
    }

    pub fn stat(&mut self, line: usize, stat: WbtStat) -> Fed {
        let closed = self.close_if_timed();
        let closed = closed.or_else(|| {
            self.open
                .stat
                .is_some()
                .then(|| std::mem::take(&mut self.open))
        });
        self.open.stat = Some((line, stat));
        Self::fed(closed)
    }

    pub fn timer(&mut self, line: usize, ts: u64, timer: WbtTimer) -> Fed {
        let closed = self.close_if_timed();
        self.open.timer = Some((line, ts, timer));
        Self::fed(closed)
    }

    pub fn step(&mut self, line: usize, step: WbtStep) -> Fed {
        if self.open.timer.is_none() || self.open.step.is_some() {
            return Fed::Orphan;
        }
        self.open.step = Some((line, step));
        Fed::Taken
    }

    /// A write was issued: the expiry being gathered raced it if its
    /// timer ran and its step is not printed yet.
    pub fn write_issued(&mut self) {
        if self.open.timer.is_some() && self.open.step.is_none() {
            self.open.raced = true;
        }
    }

    /// The last expiry, if it has its timer.
    pub fn finish(&mut self) -> Option<Expiry> {
        self.close_if_timed()
    }
}
