//! The per-device candidate row of one allocation and its orderings
//! (kernel: `struct btrfs_device_info`, `btrfs_cmp_device_info`).

use core::cmp::Ordering;

use crate::AllocHint;

/// One device that passed the gather step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The device's id.
    pub devid: u64,
    /// Its position in the volume's device list.
    pub index: usize,
    /// Start of the hole found on it.
    pub offset: u64,
    /// Usable hole length, capped at the request when a hole fits.
    pub max_avail: u64,
    /// Unallocated bytes of the whole device.
    pub total_avail: u64,
    /// The device's rotational flag (ssd_metadata's class).
    pub rotational: bool,
    /// The device's allocation hint.
    pub hint: AllocHint,
    /// Tier key of the `allocation-hint` variant (0 elsewhere).
    pub key: i8,
}

/// Stock order: `max_avail` descending, then `total_avail` descending,
/// then devid ascending (kernel: `btrfs_cmp_device_info`; the devid key is
/// our addition, which makes the order total and independent of
/// the device-list order).
pub fn cmp_free_space(a: &Candidate, b: &Candidate) -> Ordering {
    b.max_avail
        .cmp(&a.max_avail)
        .then(b.total_avail.cmp(&a.total_avail))
        .then(a.devid.cmp(&b.devid))
}

/// Sorts in stock order. Unstable sorting allocates nothing, and with
/// devid as the last key the order is total, so it is deterministic.
pub fn sort_by_free_space(cands: &mut [Candidate]) {
    cands.sort_unstable_by(cmp_free_space);
}
