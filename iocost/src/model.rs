//! The linear cost model: six device parameters become six
//! coefficients (`calc_lcoefs`), and a bio's absolute cost is a per-IO part
//! (sequential or random, by seek distance from the group's cursor) plus a
//! per-page part (`calc_vtime_cost_builtin`). Latency sampling uses the
//! per-page part alone (`calc_size_vtime_cost_builtin`).

use crate::consts::{IOC_PAGE_SIZE, IOC_SECT_TO_PAGE_SHIFT, LCOEF_RANDIO_PAGES, VTIME_PER_SEC};
use crate::units::div_ceil;

/// The direction of a bio. Only reads and writes are charged; everything
/// else (discard, flush, empty bios) passes through at zero cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// `REQ_OP_READ`.
    Read,
    /// `REQ_OP_WRITE`.
    Write,
    /// Any other op: never charged, never activates a group.
    Other,
}

/// The six user-visible parameters of `io.cost.model` (`model=linear`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LinearModel {
    /// Sequential read bandwidth, bytes/s.
    pub rbps: u64,
    /// 4 KiB sequential read IOPS.
    pub rseqiops: u64,
    /// 4 KiB random read IOPS.
    pub rrandiops: u64,
    /// Sequential write bandwidth, bytes/s.
    pub wbps: u64,
    /// 4 KiB sequential write IOPS.
    pub wseqiops: u64,
    /// 4 KiB random write IOPS.
    pub wrandiops: u64,
}

/// Coefficients of one direction, in vtime (device time at 100 % vrate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct DirCoefs {
    /// Cost of each 4 KiB page.
    pub page: u64,
    /// Extra cost of a sequential IO.
    pub seqio: u64,
    /// Extra cost of a random IO.
    pub randio: u64,
}

/// Both directions' coefficients (`ioc->params.lcoefs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Lcoefs {
    /// Read coefficients.
    pub read: DirCoefs,
    /// Write coefficients.
    pub write: DirCoefs,
}

/// One direction's coefficients from its three parameters (`calc_lcoefs`).
///
/// The per-IO parts are what is left of `1/iops` once the page part is paid,
/// so a 4 KiB sequential IO costs exactly `1/seqiops` seconds; when the
/// bandwidth term alone exceeds it the per-IO part is 0, not negative.
pub fn calc_lcoefs(bps: u64, seqiops: u64, randiops: u64) -> DirCoefs {
    let mut c = DirCoefs::default();
    if bps != 0 {
        let bps_pages = bps.div_ceil(IOC_PAGE_SIZE);
        c.page = if bps_pages != 0 {
            div_ceil(u128::from(VTIME_PER_SEC), u128::from(bps_pages))
        } else {
            1
        };
    }
    let per_io = |iops: u64| -> u64 {
        if iops == 0 {
            return 0;
        }
        let v = div_ceil(u128::from(VTIME_PER_SEC), u128::from(iops));
        v.saturating_sub(c.page)
    };
    c.seqio = per_io(seqiops);
    c.randio = per_io(randiops);
    debug_assert!(c.seqio == 0 || seqiops == 0 || c.seqio + c.page >= VTIME_PER_SEC / seqiops);
    c
}

impl LinearModel {
    /// The derived coefficients (`ioc_refresh_lcoefs`).
    pub fn lcoefs(&self) -> Lcoefs {
        Lcoefs {
            read: calc_lcoefs(self.rbps, self.rseqiops, self.rrandiops),
            write: calc_lcoefs(self.wbps, self.wseqiops, self.wrandiops),
        }
    }
}

impl Lcoefs {
    fn dir(&self, op: Op) -> Option<&DirCoefs> {
        match op {
            Op::Read => Some(&self.read),
            Op::Write => Some(&self.write),
            Op::Other => None,
        }
    }

    /// Absolute cost of one bio (`calc_vtime_cost_builtin`).
    ///
    /// `sectors` is the bio size in 512-byte sectors, `sector` its start and
    /// `cursor` the group's end sector of its last charged bio (0: none yet,
    /// which makes the first IO of a group sequential). A merge pays only the
    /// size part. Sub-4 KiB bios count as one page.
    pub fn abs_cost(&self, op: Op, sectors: u64, sector: u64, cursor: u64, is_merge: bool) -> u64 {
        if sectors == 0 {
            return 0;
        }
        let Some(c) = self.dir(op) else {
            return 0;
        };
        let pages = (sectors >> IOC_SECT_TO_PAGE_SHIFT).max(1);
        let seek_pages = if cursor != 0 {
            sector.abs_diff(cursor) >> IOC_SECT_TO_PAGE_SHIFT
        } else {
            0
        };
        let mut cost = 0u64;
        if !is_merge {
            cost = if seek_pages > LCOEF_RANDIO_PAGES {
                c.randio
            } else {
                c.seqio
            };
        }
        cost.saturating_add(pages.saturating_mul(c.page))
    }

    /// Size-only cost of a completed request (`calc_size_vtime_cost_builtin`),
    /// used to subtract the transfer time from the measured latency. Unlike
    /// [`Lcoefs::abs_cost`] the page count is truncated without a floor of 1,
    /// as in the kernel: a sub-4 KiB request has no size cost.
    pub fn size_cost(&self, op: Op, sectors: u64) -> u64 {
        match self.dir(op) {
            Some(c) => (sectors >> IOC_SECT_TO_PAGE_SHIFT).saturating_mul(c.page),
            None => 0,
        }
    }
}
