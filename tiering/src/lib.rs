//! btrfs device choice as pure, deterministic functions: where a new chunk
//! goes (the chunk allocator, with the out-of-tree metadata-on-SSD
//! variants) and which copy of a RAID1-family chunk a read uses (the
//! read-mirror policies). The rules follow `fs/btrfs/volumes.c` and the
//! patch series each module names.
//!
//! # Shape
//!
//! Nothing here reads a clock, sleeps, spawns a thread or does I/O.
//! Allocation is rare and may allocate (the new chunk's stripe list, one
//! extent per stripe); it sorts in a candidate buffer that the [`Volume`]
//! keeps, sized by its device count. A read-policy choice allocates
//! nothing. Every sort ends on the device id, so results never depend on
//! the order devices were listed in: same inputs, same outputs, bit for
//! bit.
//!
//! ```text
//! mkfs / mount       -> Volume::new(params, devices)
//! space runs out     -> Volume::alloc_chunk(&policy, ChunkType, Profile) -> Chunk | AllocError
//! balance            -> Volume::free_chunk(&chunk)
//! read of a mirror   -> find_live_mirror(&mut read_policy, &ReadRequest) -> stripe index
//! every read bio     -> read_policy.on_read_submitted(sectors)   (round-robin's counter)
//! command line       -> parse_policy("read=round-robin:min_contig_read=256k") -> PolicyChoice
//! ```
//!
//! ```
//! use iolab_tiering::*;
//!
//! // 20 GiB SSD + 230 GiB HDD (Baroncelli's ssd_metadata runs, April 2020).
//! let devices = vec![
//!     Device::new(1, 20 * GIB).with_class(DeviceClass::Ssd),
//!     Device::new(2, 230 * GIB).with_class(DeviceClass::Hdd),
//! ];
//! let mut stock = Volume::new(VolumeParams::default(), devices.clone()).unwrap();
//! let mut tiered = Volume::new(VolumeParams::default(), devices).unwrap();
//!
//! // Stock gives every chunk to the device with the most free space.
//! let c = stock.alloc_chunk(&Stock, ChunkType::Metadata, Profile::Single).unwrap();
//! assert_eq!(c.stripes[0].devid, 2);
//!
//! // ssd_metadata puts metadata on the non-rotational device.
//! let PolicyChoice::Alloc(policy) = parse_policy("alloc=ssd-metadata").unwrap() else {
//!     unreachable!()
//! };
//! let c = tiered.alloc_chunk(&policy, ChunkType::Metadata, Profile::Single).unwrap();
//! assert_eq!((c.stripes[0].devid, c.length), (1, GIB));
//!
//! // Reading a RAID1 copy: the default policy picks by pid.
//! let mirrors = [
//!     MirrorInfo { devid: 1, present: true, ..MirrorInfo::default() },
//!     MirrorInfo { devid: 2, present: true, ..MirrorInfo::default() },
//! ];
//! let req = ReadRequest::new(&mirrors, 0, 2, 4711).unwrap();
//! assert_eq!(find_live_mirror(&mut Pid, &req), Ok(1));
//! ```
//!
//! # Chunk allocation
//!
//! [`Volume::alloc_chunk`] follows `btrfs_create_chunk`: compute the limits
//! ([`Limits`]: `chunk_size`, the 1 GiB stripe cap, 10 % of the writable
//! size), gather the devices that are writable and have a hole of at least
//! one 64 KiB stripe ([`find_free_dev_extent`]: first fit, else the
//! largest hole), sort them by capped hole size, then free space, then
//! devid ([`cmp_free_space`]), let the placement policy drop and reorder
//! them ([`ChunkAllocator::select`]), cut to the profile's width
//! ([`decide_ndevs`]), size the stripe ([`decide_stripe_size`]) and place
//! the stripes at the holes' starts. The nine profiles are [`Profile`];
//! their geometry is [`RaidAttr`].
//!
//! Placement policies, all behind [`ChunkAllocator`] and by value in
//! [`AllocPolicy`]:
//!
//! * [`Stock`] (`alloc=stock`): mainline; the hook is the identity.
//! * [`SsdMetadata`] (`alloc=ssd-metadata`): Baroncelli's April 2020
//!   mount option, V3 rules by default, V1's `>` comparison as
//!   [`SsdMetadataRev::V1`], and Zygo Blaxell's strict variant.
//! * [`AllocationHint`] (`alloc=allocation-hint`): the V12 per-device
//!   hints ([`AllocHint`], with kakra's `NONE`), tier-union by default,
//!   kakra's fixed-width mirror rule as [`HintMode::Kakra`].
//!
//! The size rules have three generations ([`SizeRules`], knob `sizing=`):
//! mainline, the 6.0 rules that asked the hole search for the full
//! `chunk_size` (the regression Zygo Blaxell's October 2023 fix undid), and
//! the fixed sizes before 6.0.
//!
//! # Read-mirror choice
//!
//! [`find_live_mirror`] asks a [`ReadPolicy`] for a preferred copy and
//! runs the liveness and replace-source filter ([`live_mirror`]) on it.
//! Policies: [`Pid`] (`read=pid`, the default), [`RoundRobin`]
//! (`read=round-robin[:min_contig_read=SIZE]`), [`Devid`]
//! (`read=devid:N`), [`Latency`] (`read=latency[:tiebreak=2021]`, both
//! scans of Anand Jain's patches), [`LoadBalance`] (`read=load`, Michal
//! Rostecki's 2021 RFC) and [`Queue`] (`read=queue`, kakra's 2025 set).
//! Their inputs are per-copy device statistics ([`MirrorInfo`]), the
//! reader's pid and CPU, and the policy's own state; time enters only as
//! the statistics' nanosecond sums.
//!
//! # Deliberate differences from the sources
//!
//! * Every candidate sort ends on devid ascending; the kernel's heap
//!   sort leaves full ties in device-list order.
//! * The stripe is bounded by the smallest `max_avail` among the chosen
//!   devices, not by the last one. In free-space order (stock, the hint
//!   variants after their re-sort) that is the same device; under
//!   ssd-metadata's class-first fallback the last one can be roomier than
//!   a preferred device before it, and bounding by it would overcommit
//!   that device.
//! * Committed and pending device extents are one list; the hole
//!   search therefore never needs the kernel's second pass over pending
//!   extents.
//! * `total_rw_bytes` (the base of the 10 % cap and of the metadata chunk
//!   size) leaves out a running replace's target device, as the kernel's
//!   `read_one_dev` does, not every writable device.
//! * Allocation errors are told apart ([`AllocError`]); the kernel returns
//!   ENOSPC for all of them.
//! * Round-robin rejects a `min_contig_read` of 0 (our choice: it would
//!   divide by zero) and rounds other values up to whole sectors.
//! * The load-based policy restarts its scan at `first` when the CPU's last
//!   choice lies outside the current range (the RFC kept one index across
//!   chunks; this is our choice).

#![no_std]

extern crate alloc;

mod alloc_hint;
mod allocator;
mod candidate;
mod consts;
mod device;
mod hole;
mod knob;
mod limits;
mod profile;
mod read;
mod ssd_metadata;
mod stripe;
mod volume;

pub use alloc_hint::{AllocationHint, HintMode, hint_key};
pub use allocator::{AllocPolicy, AllocVariant, ChunkAllocator, SelectRequest, Stock};
pub use candidate::{Candidate, cmp_free_space, sort_by_free_space};
pub use consts::*;
pub use device::{AllocHint, Device, DeviceClass, DeviceError};
pub use hole::{Hole, find_free_dev_extent};
pub use knob::{KnobError, PolicyChoice, ReadPolicyConfig, parse_policy, parse_size};
pub use limits::{ChunkSizes, ChunkType, Limits, SizeRules};
pub use profile::{Profile, RaidAttr};
pub use read::{
    Devid, Latency, LatencyForm, LoadBalance, MirrorInfo, MirrorOutOfRange, PenaltyScope, Pid,
    Queue, ReadError, ReadPolicy, ReadPolicyImpl, ReadRequest, RoundRobin, RoundRobinError,
    find_live_mirror, latency_avg, live_mirror,
};

pub use ssd_metadata::{SsdMetadata, SsdMetadataRev};
pub use stripe::{StripeDecision, decide_ndevs, decide_stripe_size};
pub use volume::{
    AllocError, Chunk, DeviceFlags, SelectionRule, Stripe, Volume, VolumeError, VolumeParams,
};

/// What an engine imports to place chunks and pick mirrors, with names
/// that do not collide with the other iolab crates' preludes: `use
/// iolab_tiering::prelude::*;` beside theirs. `Device`, which the crates
/// share, carries the crate's name here.
pub mod prelude {
    pub use crate::{
        AllocError, AllocHint, AllocationHint, Chunk, ChunkAllocator, ChunkType,
        Device as TieringDevice, DeviceClass, GIB, MIB, MirrorInfo, Profile, ReadPolicy,
        ReadRequest, RoundRobin, SsdMetadata, Stock, Volume, VolumeParams, find_live_mirror,
    };
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
