//! A window's latency statistics rebuilt from block events, for windows
//! whose `wbt_stat` the kernel did not print.
//!
//! The kernel adds a sample each time a request whose operation is a read
//! (read bucket) or a write-direction operation (write bucket; a flush is
//! neither) ends, with latency "now − issue" (kernel: `blk_stat_add` from
//! `__blk_mq_end_request`, bucket `wbt_data_dir`), while a window is armed.
//! Here an issue is paired with the first completion of the same
//! operation, start sector and length; the trace's timestamps give the
//! latency to the microsecond. A write that went through the flush
//! machinery (a PREFLUSH or an emulated FUA) ends twice: once when its
//! data completes and again, with no sectors left (`SECTOR + 0`), when its
//! flush sequence does; the kernel counts both, and so does this, pairing
//! the second with the issue of the last completed request of that
//! operation and sector. The kernel takes its clock a few microseconds after the
//! `block_rq_complete` tracepoint, so rebuilt minima run a little low; a
//! completion within a few microseconds of the window's edge may fall in
//! the neighbouring window. The replay reports how well rebuilt counts
//! match the kernel's on every window the kernel did print.
//!
//! A window that starts from an idle timer (the expiry before it did not
//! re-arm: step 0 and nothing in flight) starts when the kernel arms the
//! timer again: at the first tracked write after it (kernel: `wbt_wait`
//! calls `rwb_arm_timer` when the stat callback is not active), and lasts
//! its timeout rounded to the timer wheel's jiffies, so 100–104 ms on a
//! 250 Hz kernel rather than 100. Until then no completion is counted.
//! The trace does not show the arming; [`Rebuild::armed_at`] takes the
//! issue of the first write at most [`ARM_SLACK_NS`] longer before the
//! expiry than the window's length (a direct write, which wbt does not
//! track and which arms nothing, may come earlier).

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use iolab_wbt::WindowStat;

use crate::trace::Rq;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    op: u8,
    sector: u64,
    nr: u32,
}

/// A multiplicative hash of a key's three numbers: the map is only
/// looked up, never iterated, so its quality affects speed alone.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u8(&mut self, v: u8) {
        self.write_u64(u64::from(v));
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type KeyMap = HashMap<Key, u64, BuildHasherDefault<KeyHasher>>;

/// Direction bucket of a completed request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bucket {
    Read,
    Write,
}

fn bucket(op: u8) -> Option<Bucket> {
    match op {
        b'R' => Some(Bucket::Read),
        // write, discard, secure erase, write zeroes
        b'W' | b'D' | b'E' | b'Z' => Some(Bucket::Write),
        _ => None,
    }
}

/// Completed requests remembered for a second, zero-length ending.
const ENDED: usize = 8192;

/// How much longer than its length a window from an idle timer may last:
/// one jiffy of rounding at 100 Hz (10 ms) and the timer softirq's delay.
pub(crate) const ARM_SLACK_NS: u64 = 12_000_000;

/// Requests in flight and completions since the last expiry.

#[derive(Debug, Default)]
pub(crate) struct Rebuild {
    /// Issue time of the oldest request in flight of each key (looked up,
    /// never iterated, so its order cannot reach the output).
    issued: KeyMap,
    /// Later requests of a key already in flight, oldest first (rare: the
    /// same sectors issued again before the first completes).
    again: Vec<(Key, u64)>,
    /// The last [`ENDED`] completed requests, oldest first: (operation,
    /// sector, their number in completion order).
    ended: VecDeque<(u8, u64, u64)>,
    /// The latest of [`Rebuild::ended`] for each (operation, sector): its
    /// issue time and number (looked up, never iterated).
    ended_last: HashMap<(u8, u64), (u64, u64), BuildHasherDefault<KeyHasher>>,
    /// Completed requests numbered so far.
    ended_count: u64,
    /// (completion time, bucket, latency) since the last expiry, in order.
    done: Vec<(u64, Bucket, u64)>,
    /// Issue times of write-bucket requests since the last expiry, in
    /// order: where a window from an idle timer may have started.
    writes_issued: Vec<u64>,
    /// Completions with no issue seen (issued before the trace began, or a
    /// second completion of one request).
    pub unpaired: u64,
}

impl Rebuild {
    pub fn issue(&mut self, ts: u64, rq: &Rq) {
        let op = rq.rwbs.op();
        match bucket(op) {
            None => return,
            Some(Bucket::Write) => self.writes_issued.push(ts),
            Some(Bucket::Read) => {}
        }
        let key = Key {
            op,
            sector: rq.sector,
            nr: rq.nr_sector,
        };
        if let std::collections::hash_map::Entry::Vacant(e) = self.issued.entry(key) {
            e.insert(ts);
        } else {
            self.again.push((key, ts));
        }
    }

    pub fn complete(&mut self, ts: u64, rq: &Rq) {
        let op = rq.rwbs.op();
        let Some(b) = bucket(op) else { return };
        let key = Key {
            op,
            sector: rq.sector,
            nr: rq.nr_sector,
        };
        let mut issued = self.issued.remove(&key);
        if issued.is_some()
            && let Some(i) = self.again.iter().position(|(k, _)| *k == key)
        {
            let (_, next) = self.again.remove(i);
            self.issued.insert(key, next);
        }
        if issued.is_none() && rq.nr_sector == 0 {
            issued = self.ended_last.get(&(op, rq.sector)).map(|&(t, _)| t);
        } else if let Some(t) = issued {
            if self.ended.len() == ENDED
                && let Some((o, sector, n)) = self.ended.pop_front()
                && self
                    .ended_last
                    .get(&(o, sector))
                    .is_some_and(|&(_, m)| m == n)
            {
                self.ended_last.remove(&(o, sector));
            }
            let n = self.ended_count;
            self.ended_count += 1;
            self.ended.push_back((op, rq.sector, n));
            self.ended_last.insert((op, rq.sector), (t, n));
        }
        match issued {
            Some(t) => self.done.push((ts, b, ts.saturating_sub(t))),
            None => self.unpaired += 1,
        }
    }

    /// When a window of `window_ns` that ends at `end` and started from an
    /// idle timer was armed: the first write issued since the last expiry
    /// within [`ARM_SLACK_NS`] over its length before `end`, just before
    /// that issue (the kernel arms the timer as the write is submitted).
    pub fn armed_at(&self, end: u64, window_ns: u64) -> Option<u64> {
        let earliest = end.saturating_sub(window_ns.saturating_add(ARM_SLACK_NS));
        self.writes_issued
            .iter()
            .copied()
            .find(|&t| t >= earliest && t <= end)
            .map(|t| t.saturating_sub(1))
    }

    /// The statistics of the window `(start, end]` (all completions up to
    /// `end` with `start` `None`), and everything up to `end` forgotten.
    pub fn window(&mut self, start: Option<u64>, end: u64) -> [WindowStat; 2] {
        let mut stats = [WindowStat::EMPTY; 2];
        let mut keep = 0;
        for i in 0..self.done.len() {
            let (ts, b, lat) = self.done[i];
            if ts > end {
                self.done[keep] = self.done[i];
                keep += 1;
                continue;
            }
            if start.is_none_or(|s| ts > s) {
                let idx = match b {
                    Bucket::Read => 0,
                    Bucket::Write => 1,
                };
                let mut one = WindowStat::EMPTY;
                one.nr_samples = 1;
                one.min = lat;
                one.max = lat;
                one.sum = lat;
                stats[idx].merge(&one);
            }
        }
        self.done.truncate(keep);
        self.writes_issued.retain(|&t| t > end);
        stats
    }
}
