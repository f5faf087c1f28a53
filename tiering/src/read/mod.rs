//! RAID1-family read-mirror choice (kernel: `find_live_mirror` and the
//! policy functions it calls).
//!
//! A read of a RAID1, RAID1C3, RAID1C4 or RAID10 chunk without an explicit
//! mirror number asks the policy for a preferred copy, then the liveness
//! filter ([`live_mirror`]) replaces it if its device is missing or is the
//! source of a device replace that avoids its source.

mod devid;
mod latency;
mod live;
mod load;
mod pid;
mod queue;
mod round_robin;

use core::fmt;

pub use devid::Devid;
pub use latency::{Latency, LatencyForm, latency_avg};
pub use live::live_mirror;
pub use load::{LoadBalance, PenaltyScope};
pub use pid::Pid;
pub use queue::Queue;
pub use round_robin::{RoundRobin, RoundRobinError};

/// What a read policy may know about one copy of the data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MirrorInfo {
    /// Device holding this copy.
    pub devid: u64,
    /// The device has an open block device (kernel: `dev->bdev != NULL`).
    pub present: bool,
    /// Where this read would start on that device.
    pub physical: u64,
    /// Reads completed on the device since boot (block-layer `part_stat`).
    pub read_ios: u64,
    /// Their summed submit-to-complete time, ns.
    pub read_wait_ns: u64,
    /// Requests outstanding on the device.
    pub inflight: u32,
    /// Device position after the last request sent to it.
    pub last_offset: u64,
    /// Block queue depth. The load-based policy treats a copy as free
    /// only while its load is below this, so a depth of 0 (the
    /// `Default`) means that copy is never picked by load.
    pub queue_depth: u32,
    /// Rotational flag of the device.
    pub rotational: bool,
}

/// One read to place.
#[derive(Clone, Copy, Debug)]
pub struct ReadRequest<'a> {
    mirrors: &'a [MirrorInfo],
    first: usize,
    n: usize,
    /// Id of the submitting task.
    pub pid: u32,
    /// CPU the read is submitted on (load-based policy).
    pub cpu: u32,
    /// devid of the replace source when a device replace runs in "avoid
    /// source" mode, else `None`.
    pub replace_source: Option<u64>,
    /// The filesystem mixes rotational and non-rotational devices.
    pub mixed_rotational: bool,
}

/// A read request that cannot describe a mirrored read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// The range `[first, first + n)` is empty or runs past the stripes.
    BadRange {
        /// First index.
        first: usize,
        /// Copies.
        n: usize,
        /// Stripes given.
        stripes: usize,
    },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ReadError::BadRange { first, n, stripes } => write!(
                f,
                "mirror range {first}..{} is empty or outside the {stripes} stripes",
                first.saturating_add(n)
            ),
        }
    }
}

impl core::error::Error for ReadError {}

impl<'a> ReadRequest<'a> {
    /// A read over `mirrors[first..first + n]`: for RAID1/C3/C4 pass all
    /// stripes with `first = 0`, `n = num_stripes`; for RAID10 `first` is
    /// the first stripe of the mirrored pair and `n = sub_stripes` (2).
    pub fn new(
        mirrors: &'a [MirrorInfo],
        first: usize,
        n: usize,
        pid: u32,
    ) -> Result<ReadRequest<'a>, ReadError> {
        if n == 0 || first.checked_add(n).is_none_or(|end| end > mirrors.len()) {
            return Err(ReadError::BadRange {
                first,
                n,
                stripes: mirrors.len(),
            });
        }
        Ok(ReadRequest {
            mirrors,
            first,
            n,
            pid,
            cpu: 0,
            replace_source: None,
            mixed_rotational: false,
        })
    }

    /// All stripes given.
    pub fn mirrors(&self) -> &'a [MirrorInfo] {
        self.mirrors
    }

    /// First index of the range.
    pub fn first(&self) -> usize {
        self.first
    }

    /// Number of copies in the range.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The candidate range `first..first + n`.
    pub fn range(&self) -> core::ops::Range<usize> {
        self.first..self.first + self.n
    }
}

/// One read-mirror policy: proposes a stripe index in the request's range
/// (before the liveness filter). `preferred` must not allocate. Policies with state (the
/// round-robin counter, per-CPU last choices) keep it in `self`.
pub trait ReadPolicy {
    /// Name as the command line spells it.
    fn name(&self) -> &'static str;

    /// The proposed index, in `req.range()`. Anything else is refused by
    /// [`find_live_mirror`] with [`MirrorOutOfRange`], in every build.
    fn preferred(&mut self, req: &ReadRequest<'_>) -> usize;

    /// Called for **every** read bio submitted to any device, mirrored or
    /// not, after mapping, with its size in sectors (kernel: the
    /// `stats_read_blocks` counter of `btrfs_submit_dev_bio`). Only
    /// round-robin counts.
    fn on_read_submitted(&mut self, _sectors: u64) {}

    /// Whether the policy spreads reads over the copies under load (from
    /// many readers, with reads in flight and their waits growing where
    /// they go): then every copy must serve some of them. A policy that
    /// sends every read to a fixed copy (`devid`) says `false`, the
    /// default.
    fn balances(&self) -> bool {
        false
    }
}

/// A read policy proposed a copy outside the request's range: the
/// [`ReadPolicy::preferred`] contract broken, said in every build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MirrorOutOfRange {
    /// The policy's name.
    pub policy: &'static str,
    /// The index it proposed.
    pub proposed: usize,
    /// The request's copies, `first..first + n`.
    pub range: core::ops::Range<usize>,
}

impl core::fmt::Display for MirrorOutOfRange {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "read policy '{}' proposed copy {}, outside the request's copies {}..{} (ReadPolicy::preferred must return an index in req.range())",
            self.policy, self.proposed, self.range.start, self.range.end
        )
    }
}

/// Policy then liveness filter: the mirror a read goes to (kernel:
/// `find_live_mirror`).
///
/// # Errors
///
/// The policy proposed an index outside `req.range()`; checked in every
/// build, never clamped.
pub fn find_live_mirror<P: ReadPolicy + ?Sized>(
    policy: &mut P,
    req: &ReadRequest<'_>,
) -> Result<usize, MirrorOutOfRange> {
    let preferred = policy.preferred(req);
    if !req.range().contains(&preferred) {
        return Err(MirrorOutOfRange {
            policy: policy.name(),
            proposed: preferred,
            range: req.range(),
        });
    }
    Ok(live_mirror(req, preferred))
}

/// The read policies by value (static dispatch for the simulator).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadPolicyImpl {
    /// [`Pid`].
    Pid(Pid),
    /// [`RoundRobin`].
    RoundRobin(RoundRobin),
    /// [`Devid`].
    Devid(Devid),
    /// [`Latency`].
    Latency(Latency),
    /// [`LoadBalance`].
    Load(LoadBalance),
    /// [`Queue`].
    Queue(Queue),
}

impl ReadPolicy for ReadPolicyImpl {
    fn name(&self) -> &'static str {
        match self {
            ReadPolicyImpl::Pid(p) => p.name(),
            ReadPolicyImpl::RoundRobin(p) => p.name(),
            ReadPolicyImpl::Devid(p) => p.name(),
            ReadPolicyImpl::Latency(p) => p.name(),
            ReadPolicyImpl::Load(p) => p.name(),
            ReadPolicyImpl::Queue(p) => p.name(),
        }
    }

    fn preferred(&mut self, req: &ReadRequest<'_>) -> usize {
        match self {
            ReadPolicyImpl::Pid(p) => p.preferred(req),
            ReadPolicyImpl::RoundRobin(p) => p.preferred(req),
            ReadPolicyImpl::Devid(p) => p.preferred(req),
            ReadPolicyImpl::Latency(p) => p.preferred(req),
            ReadPolicyImpl::Load(p) => p.preferred(req),
            ReadPolicyImpl::Queue(p) => p.preferred(req),
        }
    }

    fn on_read_submitted(&mut self, sectors: u64) {
        if let ReadPolicyImpl::RoundRobin(p) = self {
            p.on_read_submitted(sectors);
        }
    }

    fn balances(&self) -> bool {
        match self {
            ReadPolicyImpl::Pid(p) => p.balances(),
            ReadPolicyImpl::RoundRobin(p) => p.balances(),
            ReadPolicyImpl::Devid(p) => p.balances(),
            ReadPolicyImpl::Latency(p) => p.balances(),
            ReadPolicyImpl::Load(p) => p.balances(),
            ReadPolicyImpl::Queue(p) => p.balances(),
        }
    }
}
