//! The multi-device volume and one chunk allocation end to end (kernel:
//! `btrfs_create_chunk`, `gather_device_info`, `create_chunk`,
//! `find_next_chunk`).

use alloc::vec::Vec;
use core::fmt;

use crate::{
    Candidate, ChunkAllocator, ChunkSizes, ChunkType, DEFAULT_NODESIZE, DEFAULT_SECTORSIZE, Device,
    DeviceError, Limits, Profile, SelectRequest, decide_ndevs, decide_stripe_size,
    find_free_dev_extent, sort_by_free_space,
};

/// Filesystem-level inputs of the allocator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VolumeParams {
    /// Tree block size (bounds the widest chunk, [`max_devs`](crate::max_devs)).
    pub nodesize: u32,
    /// Sector size.
    pub sectorsize: u32,
    /// Use the RAID0/RAID10 minima from before 5.15 (2 and 4 devices).
    pub legacy_minima: bool,
    /// Per-type chunk sizes; `None` takes the kernel defaults for the
    /// writable size at construction (they are fixed at mount, like
    /// `space_info->chunk_size`).
    pub chunk_sizes: Option<ChunkSizes>,
}

impl Default for VolumeParams {
    fn default() -> Self {
        VolumeParams {
            nodesize: DEFAULT_NODESIZE,
            sectorsize: DEFAULT_SECTORSIZE,
            legacy_minima: false,
            chunk_sizes: None,
        }
    }
}

/// One stripe of a chunk: a device extent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stripe {
    /// Device.
    pub devid: u64,
    /// Byte offset on the device.
    pub physical: u64,
    /// Length (the chunk's stripe size).
    pub len: u64,
}

/// A newly allocated chunk (kernel: `struct btrfs_chunk_map`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Logical start (end of the highest chunk before it).
    pub logical: u64,
    /// Logical length, `stripe_size * data_stripes`.
    pub length: u64,
    /// Bytes per stripe.
    pub stripe_size: u64,
    /// Type.
    pub ty: ChunkType,
    /// Profile.
    pub profile: Profile,
    /// Stripes per mirrored group (RAID10: 2).
    pub sub_stripes: u32,
    /// Stripes in allocation order: device `i` of the sorted candidates
    /// holds stripes `i * dev_stripes .. (i + 1) * dev_stripes`.
    pub stripes: Vec<Stripe>,
}

impl Chunk {
    /// Raw device bytes the chunk occupies.
    pub fn raw_bytes(&self) -> u64 {
        self.stripe_size * self.stripes.len() as u64
    }
}

/// Why a chunk could not be allocated. The kernel answers ENOSPC for all
/// of them; they are told apart here for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AllocError {
    /// No device is writable, in the filesystem and not a replace target.
    NoWritableDevices,
    /// Fewer eligible devices than the profile's minimum, whatever their
    /// free space.
    TooFewDevices {
        /// Profile asked for.
        profile: Profile,
        /// Eligible devices.
        eligible: usize,
        /// Devices the profile needs.
        devs_min: u32,
    },
    /// Not enough devices with free space (after the placement variant's
    /// choice) for the profile (ENOSPC).
    NoSpace {
        /// Chunk type.
        ty: ChunkType,
        /// Profile.
        profile: Profile,
        /// Devices left after gathering and the variant's choice.
        candidates: usize,
        /// Devices the profile needs.
        devs_min: u32,
    },
    /// The size limits leave a stripe of 0 bytes (a `chunk_size` or
    /// filesystem smaller than one 64 KiB stripe).
    ZeroStripe,
    /// [`Volume::free_chunk`] was given a chunk the volume does not hold.
    UnknownChunk {
        /// Its logical start.
        logical: u64,
    },
    /// A [`ChunkAllocator::select`](crate::ChunkAllocator::select) left the
    /// candidates in a state no placement may use: the allocator's
    /// contract broken, refused in every build before anything is placed.
    BadSelection {
        /// The allocator's name.
        allocator: &'static str,
        /// The candidate's device.
        devid: u64,
        /// The rule it broke.
        rule: SelectionRule,
    },
}

/// What a [`ChunkAllocator::select`](crate::ChunkAllocator::select) may not
/// do to the candidates it is given (it may reorder them, drop some and
/// set their `key`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SelectionRule {
    /// The same device twice: a RAID1 chunk would put both copies on it.
    Duplicate,
    /// A device the volume does not have at that index, or one not
    /// eligible for allocation.
    UnknownDevice,
    /// A hole (`offset`, `max_avail`) that is not free on the device: the
    /// chunk would overlap an extent or run past the device's end.
    HoleNotFree,
}

impl fmt::Display for SelectionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SelectionRule::Duplicate => "it gave the same device twice",
            SelectionRule::UnknownDevice => {
                "it gave a device the volume does not have at that index, or one not eligible"
            }
            SelectionRule::HoleNotFree => {
                "it gave a hole that is not free on the device (offset and max_avail must stay as gathered or shrink inside them)"
            }
        })
    }
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AllocError::NoWritableDevices => f.write_str("no writable device (ENOSPC)"),
            AllocError::TooFewDevices {
                profile,
                eligible,
                devs_min,
            } => write!(
                f,
                "{profile} needs at least {devs_min} devices, the volume has {eligible} writable (ENOSPC)"
            ),
            AllocError::NoSpace {
                ty,
                profile,
                candidates,
                devs_min,
            } => write!(
                f,
                "no space for a {ty} {profile} chunk: {candidates} devices with free space, {devs_min} needed (ENOSPC)"
            ),
            AllocError::ZeroStripe => f.write_str("size limits leave a stripe of 0 bytes"),
            AllocError::UnknownChunk { logical } => {
                write!(f, "no chunk at logical {logical}")
            }
            AllocError::BadSelection {
                allocator,
                devid,
                rule,
            } => write!(
                f,
                "allocator '{allocator}' broke its contract at device {devid}: {rule}; nothing was placed"
            ),
        }
    }
}

impl core::error::Error for AllocError {}

/// A rejected volume description.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VolumeError {
    /// A device is invalid or clashes with another.
    Device(DeviceError),
    /// `nodesize` is not a power of two in 4 KiB..=64 KiB.
    Nodesize(u32),
    /// `sectorsize` is not a power of two in 512..=64 KiB.
    Sectorsize(u32),
}

impl fmt::Display for VolumeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            VolumeError::Device(e) => e.fmt(f),
            VolumeError::Nodesize(n) => {
                write!(f, "nodesize {n} must be a power of two from 4096 to 65536")
            }
            VolumeError::Sectorsize(n) => {
                write!(f, "sectorsize {n} must be a power of two from 512 to 65536")
            }
        }
    }
}

impl core::error::Error for VolumeError {}

impl From<DeviceError> for VolumeError {
    fn from(e: DeviceError) -> Self {
        VolumeError::Device(e)
    }
}

/// The devices of one filesystem and the chunks allocated on them.
#[derive(Clone, Debug)]
pub struct Volume {
    params: VolumeParams,
    chunk_sizes: ChunkSizes,
    devices: Vec<Device>,
    /// Live chunks `(logical, length)`, sorted by logical start.
    chunks: Vec<(u64, u64)>,
    /// Candidate rows, capacity = device count, reused by every allocation.
    scratch: Vec<Candidate>,
}

impl Volume {
    /// A volume over `devices` (kept in the given order, which plays the
    /// kernel's `alloc_list` order; with devid as the last sort key the
    /// order never changes a result).
    pub fn new(params: VolumeParams, devices: Vec<Device>) -> Result<Volume, VolumeError> {
        let pow2_in = |v: u32, lo: u32, hi: u32| v.is_power_of_two() && (lo..=hi).contains(&v);
        if !pow2_in(params.nodesize, 4096, 65536) {
            return Err(VolumeError::Nodesize(params.nodesize));
        }
        if !pow2_in(params.sectorsize, 512, 65536) {
            return Err(VolumeError::Sectorsize(params.sectorsize));
        }
        for (i, d) in devices.iter().enumerate() {
            if d.devid == 0 {
                return Err(DeviceError::ZeroDevid.into());
            }
            if devices[..i].iter().any(|e| e.devid == d.devid) {
                return Err(DeviceError::DuplicateDevid(d.devid).into());
            }
        }
        let total_rw = total_rw_bytes(&devices);
        let chunk_sizes = params.chunk_sizes.unwrap_or(ChunkSizes::defaults(total_rw));
        let scratch = Vec::with_capacity(devices.len());
        Ok(Volume {
            params,
            chunk_sizes,
            devices,
            chunks: Vec::new(),
            scratch,
        })
    }

    /// Parameters.
    pub fn params(&self) -> &VolumeParams {
        &self.params
    }

    /// Chunk sizes in force.
    pub fn chunk_sizes(&self) -> ChunkSizes {
        self.chunk_sizes
    }

    /// Sets the chunk size of a type (sysfs `allocation/<type>/chunk_size`).
    pub fn set_chunk_sizes(&mut self, sizes: ChunkSizes) {
        self.chunk_sizes = sizes;
    }

    /// The devices, in list order.
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// The device with this id.
    pub fn device(&self, devid: u64) -> Option<&Device> {
        self.devices.iter().find(|d| d.devid == devid)
    }

    /// Mutable access to a device's flags and hint (size and extents stay
    /// under the volume's control).
    pub fn device_mut(&mut self, devid: u64) -> Result<DeviceFlags<'_>, DeviceError> {
        self.devices
            .iter_mut()
            .find(|d| d.devid == devid)
            .map(DeviceFlags)
            .ok_or(DeviceError::UnknownDevid(devid))
    }

    /// Adds a device (kernel: `btrfs device add`).
    pub fn add_device(&mut self, dev: Device) -> Result<(), DeviceError> {
        if dev.devid == 0 {
            return Err(DeviceError::ZeroDevid);
        }
        if self.device(dev.devid).is_some() {
            return Err(DeviceError::DuplicateDevid(dev.devid));
        }
        self.devices.push(dev);
        self.scratch.reserve(self.devices.len());
        Ok(())
    }

    /// Sum of `total_bytes` over writable devices that are not the target
    /// of a running replace (kernel: `fs_devices->total_rw_bytes`, which
    /// `read_one_dev` grows only for such devices), the base of the 10 %
    /// cap. Saturates instead of wrapping for absurd device sizes.
    pub fn total_rw_bytes(&self) -> u64 {
        total_rw_bytes(&self.devices)
    }

    /// Live chunks `(logical, length)`, by logical start.
    pub fn chunks(&self) -> &[(u64, u64)] {
        &self.chunks
    }

    /// Logical start the next chunk gets (kernel: `find_next_chunk`: the
    /// end of the highest chunk, 0 when there is none).
    pub fn next_logical(&self) -> u64 {
        self.chunks.last().map_or(0, |&(s, l)| s + l)
    }

    /// The limits an allocation of `ty`/`profile` would run under.
    pub fn limits(&self, ty: ChunkType, profile: Profile, rules: crate::SizeRules) -> Limits {
        Limits::new(
            ty,
            profile,
            self.params.legacy_minima,
            self.params.nodesize,
            self.chunk_sizes,
            self.total_rw_bytes(),
            rules,
        )
    }

    /// Allocates one chunk with the placement `policy` (kernel:
    /// `btrfs_create_chunk`): gather, sort, the policy's hook, width,
    /// stripe size, placement, accounting. Nothing changes on error.
    pub fn alloc_chunk<A: ChunkAllocator + ?Sized>(
        &mut self,
        policy: &A,
        ty: ChunkType,
        profile: Profile,
    ) -> Result<Chunk, AllocError> {
        let limits = self.limits(ty, profile, policy.size_rules());
        let attr = limits.attr;
        let eligible = self.devices.iter().filter(|d| d.eligible()).count();
        if eligible == 0 {
            return Err(AllocError::NoWritableDevices);
        }
        if eligible < attr.devs_min as usize {
            return Err(AllocError::TooFewDevices {
                profile,
                eligible,
                devs_min: attr.devs_min,
            });
        }

        // Gather (kernel: gather_device_info).
        let mut cands = core::mem::take(&mut self.scratch);
        cands.clear();
        for (index, d) in self.devices.iter().enumerate() {
            if !d.eligible() {
                continue;
            }
            let total_avail = d.total_avail();
            if total_avail < limits.dev_extent_min {
                continue;
            }
            let hole = find_free_dev_extent(d, limits.dev_extent_want);
            // A hole that fits counts only as what was asked for: that cap
            // is what makes all roomy devices tie (see `SizeRules::Uncapped6_0`).
            let max_avail = if hole.fits {
                limits.dev_extent_want
            } else {
                hole.len
            };
            if max_avail < limits.dev_extent_min {
                continue;
            }
            cands.push(Candidate {
                devid: d.devid,
                index,
                offset: hole.start,
                max_avail,
                total_avail,
                rotational: d.rotational,
                hint: d.hint,
                key: 0,
            });
        }
        sort_by_free_space(&mut cands);

        // The tiering hook; mixed chunks bypass every variant.
        if ty != ChunkType::Mixed {
            let req = SelectRequest {
                ty,
                profile,
                devs_min: attr.devs_min,
            };
            policy.select(&req, &mut cands);
            // The allocator's output, checked in every build: a broken
            // one is refused before anything is placed.
            if let Err((devid, rule)) = self.check_selection(&cands) {
                self.scratch = cands;
                return Err(AllocError::BadSelection {
                    allocator: policy.name(),
                    devid,
                    rule,
                });
            }
        }

        let result = self.place(&limits, ty, profile, &cands);
        self.scratch = cands;
        result
    }

    /// Whether candidates an allocator selected can be placed: distinct
    /// devices, each the volume's at its index and eligible, each hole
    /// free on its device.
    fn check_selection(&self, cands: &[Candidate]) -> Result<(), (u64, SelectionRule)> {
        for (i, c) in cands.iter().enumerate() {
            if cands[..i].iter().any(|o| o.devid == c.devid) {
                return Err((c.devid, SelectionRule::Duplicate));
            }
            let Some(d) = self
                .devices
                .get(c.index)
                .filter(|d| d.devid == c.devid && d.eligible())
            else {
                return Err((c.devid, SelectionRule::UnknownDevice));
            };
            if !d.is_free(c.offset, c.max_avail) {
                return Err((c.devid, SelectionRule::HoleNotFree));
            }
        }
        Ok(())
    }

    /// Width, stripe size, placement and accounting for sorted candidates.
    fn place(
        &mut self,
        limits: &Limits,
        ty: ChunkType,
        profile: Profile,
        cands: &[Candidate],
    ) -> Result<Chunk, AllocError> {
        let attr = &limits.attr;
        let Some(ndevs) = decide_ndevs(limits, cands.len()) else {
            return Err(AllocError::NoSpace {
                ty,
                profile,
                candidates: cands.len(),
                devs_min: attr.devs_min,
            });
        };
        let chosen = &cands[..ndevs as usize];
        // The kernel bounds the stripe by the last chosen device, which is
        // the smallest in free-space order. A class-first order
        // (ssd-metadata's fallback) can put a roomier device last, and the
        // last one alone would then overcommit a smaller preferred hole;
        // the minimum over the chosen devices is the same number whenever
        // the order is by free space, and safe otherwise.
        let smallest = chosen.iter().map(|c| c.max_avail).min().unwrap_or(0);
        let d = decide_stripe_size(limits, ndevs, smallest);
        if d.stripe_size == 0 {
            return Err(AllocError::ZeroStripe);
        }
        let mut stripes = Vec::with_capacity(d.num_stripes as usize);
        for c in chosen {
            debug_assert!(d.stripe_size * u64::from(attr.dev_stripes) <= c.max_avail);
            for j in 0..u64::from(attr.dev_stripes) {
                let physical = c.offset + j * d.stripe_size;
                stripes.push(Stripe {
                    devid: c.devid,
                    physical,
                    len: d.stripe_size,
                });
                self.devices[c.index].insert_extent(physical, d.stripe_size);
            }
        }
        let logical = self.next_logical();
        self.chunks.push((logical, d.chunk_size));
        let chunk = Chunk {
            logical,
            length: d.chunk_size,
            stripe_size: d.stripe_size,
            ty,
            profile,
            sub_stripes: attr.sub_stripes,
            stripes,
        };
        debug_assert_eq!(chunk.stripes.len() as u32, d.num_stripes);
        debug_assert_eq!(chunk.length, d.stripe_size * u64::from(d.data_stripes));
        debug_assert!(chunk.stripe_size % crate::STRIPE_LEN == 0);
        debug_assert!(chunk.stripe_size <= crate::MAX_STRIPE_SIZE);
        Ok(chunk)
    }

    /// Frees a chunk's device extents and forgets it (kernel:
    /// `btrfs_remove_chunk`, as balance does). If it was the highest
    /// chunk, the next one reuses its logical range, as
    /// `find_next_chunk` would.
    pub fn free_chunk(&mut self, chunk: &Chunk) -> Result<(), AllocError> {
        let unknown = AllocError::UnknownChunk {
            logical: chunk.logical,
        };
        let pos = self
            .chunks
            .binary_search_by_key(&chunk.logical, |&(s, _)| s)
            .map_err(|_| unknown)?;
        if self.chunks[pos].1 != chunk.length {
            return Err(unknown);
        }
        // Check every stripe first so a mismatch changes nothing.
        for s in &chunk.stripes {
            let present = self
                .device(s.devid)
                .is_some_and(|d| d.extents().binary_search(&(s.physical, s.len)).is_ok());
            if !present {
                return Err(unknown);
            }
        }
        for s in &chunk.stripes {
            if let Some(d) = self.devices.iter_mut().find(|d| d.devid == s.devid) {
                let removed = d.remove_extent(s.physical, s.len);
                debug_assert!(removed);
            }
        }
        self.chunks.remove(pos);
        Ok(())
    }
}

/// See [`Volume::total_rw_bytes`].
fn total_rw_bytes(devices: &[Device]) -> u64 {
    devices
        .iter()
        .filter(|d| d.writable && !d.replace_target)
        .fold(0u64, |sum, d| sum.saturating_add(d.total_bytes))
}

/// Mutable view of one device's flags and hint.
#[derive(Debug)]
pub struct DeviceFlags<'a>(&'a mut Device);

impl DeviceFlags<'_> {
    /// Sets the allocation hint (sysfs `devinfo/<devid>/allocation_hint`).
    pub fn set_hint(&mut self, hint: crate::AllocHint) -> &mut Self {
        self.0.hint = hint;
        self
    }

    /// Sets the rotational flag.
    pub fn set_rotational(&mut self, rotational: bool) -> &mut Self {
        self.0.rotational = rotational;
        self
    }

    /// Opens or closes the device for writing.
    pub fn set_writable(&mut self, writable: bool) -> &mut Self {
        self.0.writable = writable;
        self
    }

    /// Marks the device as the target of a running replace.
    pub fn set_replace_target(&mut self, target: bool) -> &mut Self {
        self.0.replace_target = target;
        self
    }
}
