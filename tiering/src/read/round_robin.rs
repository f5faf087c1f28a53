//! `round-robin`: rotate over the copies every `rr_min_contig_read` bytes
//! of reads (kernel: `btrfs_read_rr`, 6.14, CONFIG_BTRFS_EXPERIMENTAL).

use super::{ReadPolicy, ReadRequest};
use crate::{DEFAULT_RR_MIN_CONTIG_READ, DEFAULT_SECTORSIZE};

/// Round-robin over the copies sorted by devid, advancing one copy every
/// `min_contig_read / sectorsize` sectors of reads **filesystem-wide**:
/// the counter grows with every read bio of any profile
/// ([`ReadPolicy::on_read_submitted`]), so concurrent readers advance each
/// other's cycle. The kernel reads the counter as a 32-bit unsigned value,
/// so it wraps; so does this one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundRobin {
    min_contig_read: u64,
    per_dev: u32,
    /// Sectors read so far, 32-bit view (kernel: `stats_read_blocks`).
    read_sectors: u32,
}

/// A round-robin setting that cannot work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundRobinError {
    /// `min_contig_read` is 0: every read would divide by zero, so it is
    /// rejected.
    Zero,
    /// `sectorsize` is 0 or not a power of two.
    Sectorsize(u32),
    /// Over 2^32 sectors per device: the kernel keeps the count in 32 bits.
    TooLarge(u64),
}

impl core::fmt::Display for RoundRobinError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            RoundRobinError::Zero => f.write_str("must be at least one sector"),
            RoundRobinError::Sectorsize(s) => write!(f, "sectorsize {s} is not a power of two"),
            RoundRobinError::TooLarge(v) => {
                write!(f, "{v} bytes is more than 2^32 sectors")
            }
        }
    }
}

impl core::error::Error for RoundRobinError {}

impl Default for RoundRobin {
    fn default() -> Self {
        Self::new(DEFAULT_RR_MIN_CONTIG_READ, DEFAULT_SECTORSIZE)
            .unwrap_or_else(|_| unreachable!("the defaults are valid"))
    }
}

impl RoundRobin {
    /// `min_contig_read` in bytes is rounded up to a whole number of
    /// sectors, as the sysfs handler does.
    pub fn new(min_contig_read: u64, sectorsize: u32) -> Result<RoundRobin, RoundRobinError> {
        if !sectorsize.is_power_of_two() {
            return Err(RoundRobinError::Sectorsize(sectorsize));
        }
        if min_contig_read == 0 {
            return Err(RoundRobinError::Zero);
        }
        let per_dev = min_contig_read.div_ceil(u64::from(sectorsize));
        let per_dev =
            u32::try_from(per_dev).map_err(|_| RoundRobinError::TooLarge(min_contig_read))?;
        Ok(RoundRobin {
            min_contig_read: u64::from(per_dev) * u64::from(sectorsize),
            per_dev,
            read_sectors: 0,
        })
    }

    /// Bytes per device before switching (after rounding).
    pub fn min_contig_read(&self) -> u64 {
        self.min_contig_read
    }

    /// Sectors per device before switching.
    pub fn sectors_per_dev(&self) -> u32 {
        self.per_dev
    }

    /// The counter's current 32-bit value.
    pub fn read_sectors(&self) -> u32 {
        self.read_sectors
    }

    /// Sets the counter (to start a run mid-cycle, or test the wrap).
    pub fn set_read_sectors(&mut self, v: u32) {
        self.read_sectors = v;
    }
}

impl ReadPolicy for RoundRobin {
    fn name(&self) -> &'static str {
        "round-robin"
    }

    /// Spreads reads in turn.
    fn balances(&self) -> bool {
        true
    }

    fn preferred(&mut self, req: &ReadRequest<'_>) -> usize {
        let cycle = self.read_sectors / self.per_dev;
        let pos = cycle as usize % req.n();
        // The copy of rank `pos` in devid order (ties by index), found
        // without sorting so nothing is allocated for any copy count.
        let m = req.mirrors();
        let key = |i: usize| (m[i].devid, i);
        req.range()
            .find(|&i| req.range().filter(|&j| key(j) < key(i)).count() == pos)
            .unwrap_or(req.first())
    }

    fn on_read_submitted(&mut self, sectors: u64) {
        self.read_sectors = self.read_sectors.wrapping_add(sectors as u32);
    }
}
