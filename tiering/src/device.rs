//! The allocation-side device model (kernel: the fields of
//! `struct btrfs_device` that `gather_device_info` and
//! `find_free_dev_extent` read, plus the out-of-tree class and hint).

use crate::consts::DEVICE_RANGE_RESERVED;
use alloc::vec::Vec;
use core::fmt;

/// Device class: informational here (the simulator's speed model picks it
/// up); the allocator variants read [`Device::rotational`] or
/// [`Device::hint`] instead, as the patches did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceClass {
    /// Spinning disk.
    Hdd,
    /// SATA/SAS solid-state drive.
    Ssd,
    /// NVMe solid-state drive.
    Nvme,
}

/// Per-device allocation hint of Baroncelli's `allocation_hint` series
/// (V6-V12) and kakra's port. The numeric values are the ones
/// stored in the low bits of the device item's type/flags field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum AllocHint {
    /// Data first, metadata if nothing better (the default, value 0).
    #[default]
    DataPreferred = 0,
    /// Metadata first, data if nothing better (value 1).
    MetadataPreferred = 1,
    /// Metadata and system chunks only (value 2).
    MetadataOnly = 2,
    /// Data chunks only (value 3).
    DataOnly = 3,
    /// No new chunks at all (value 4, kakra's port, mid-2024).
    None = 4,
}

impl AllocHint {
    /// The sysfs string of V12 (`devinfo/<devid>/allocation_hint`).
    pub const fn name(self) -> &'static str {
        match self {
            AllocHint::DataPreferred => "DATA_PREFERRED",
            AllocHint::MetadataPreferred => "METADATA_PREFERRED",
            AllocHint::MetadataOnly => "METADATA_ONLY",
            AllocHint::DataOnly => "DATA_ONLY",
            AllocHint::None => "NONE",
        }
    }

    /// From the numeric value kakra's port keeps in `devinfo/<devid>/type`.
    pub const fn from_value(v: u64) -> Option<AllocHint> {
        Some(match v {
            0 => AllocHint::DataPreferred,
            1 => AllocHint::MetadataPreferred,
            2 => AllocHint::MetadataOnly,
            3 => AllocHint::DataOnly,
            4 => AllocHint::None,
            _ => return None,
        })
    }
}

/// One device of the volume as the chunk allocator sees it.
///
/// `extents` is the one list of allocated device extents (the kernel keeps
/// committed ones in the device tree and pending ones in `alloc_state`;
/// this model merges them). `bytes_used` always equals the sum of the
/// extent lengths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    pub(crate) devid: u64,
    pub(crate) total_bytes: u64,
    pub(crate) extents: Vec<(u64, u64)>,
    /// The gap-free start of `extents`: how many leading extents leave no
    /// hole past the reserved first MiB, and where the scan for a hole
    /// continues after them. A function of `extents`, kept up to date so
    /// that a device filled from the front is searched from its tail.
    gapless: (usize, u64),
    pub(crate) bytes_used: u64,
    /// True unless the block queue says non-rotational; the only class
    /// input of `ssd_metadata` V1-V3.
    pub rotational: bool,
    /// Informational class.
    pub class: DeviceClass,
    /// Allocation hint (used by the `allocation-hint` variant only).
    pub hint: AllocHint,
    /// Open read-write (kernel: `BTRFS_DEV_STATE_WRITEABLE`).
    pub writable: bool,
    /// Part of the filesystem's metadata (kernel:
    /// `BTRFS_DEV_STATE_IN_FS_METADATA`).
    pub in_fs_metadata: bool,
    /// Target of a running device replace (kernel:
    /// `BTRFS_DEV_STATE_REPLACE_TGT`): never gets new chunks.
    pub replace_target: bool,
}

/// A device description the volume rejects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeviceError {
    /// devid 0 is not a valid device id.
    ZeroDevid,
    /// Two devices share an id.
    DuplicateDevid(u64),
    /// No device with this id.
    UnknownDevid(u64),
    /// An extent has length 0.
    EmptyExtent {
        /// The device.
        devid: u64,
        /// The extent's start.
        offset: u64,
    },
    /// An extent reaches past the end of the device (or overflows).
    ExtentBeyondEnd {
        /// The device.
        devid: u64,
        /// The extent's start.
        offset: u64,
        /// The extent's length.
        len: u64,
    },
    /// Two extents overlap.
    ExtentOverlap {
        /// The device.
        devid: u64,
        /// Start of the second of the two overlapping extents (sorted).
        offset: u64,
    },
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DeviceError::ZeroDevid => f.write_str("devid 0 is not a valid device id"),
            DeviceError::DuplicateDevid(d) => write!(f, "devid {d} is used twice"),
            DeviceError::UnknownDevid(d) => write!(f, "no device with devid {d}"),
            DeviceError::EmptyExtent { devid, offset } => {
                write!(f, "devid {devid}: empty extent at {offset}")
            }
            DeviceError::ExtentBeyondEnd { devid, offset, len } => write!(
                f,
                "devid {devid}: extent at {offset} of {len} bytes reaches past the end of the device"
            ),
            DeviceError::ExtentOverlap { devid, offset } => {
                write!(
                    f,
                    "devid {devid}: extent at {offset} overlaps the one before it"
                )
            }
        }
    }
}

impl core::error::Error for DeviceError {}

impl Device {
    /// An empty, writable, rotational HDD with the default hint.
    pub fn new(devid: u64, total_bytes: u64) -> Device {
        Device {
            devid,
            total_bytes,
            extents: Vec::new(),
            gapless: (0, DEVICE_RANGE_RESERVED),
            bytes_used: 0,
            rotational: true,
            class: DeviceClass::Hdd,
            hint: AllocHint::DataPreferred,
            writable: true,
            in_fs_metadata: true,
            replace_target: false,
        }
    }

    /// Same, with the class set and `rotational` derived from it (only
    /// [`DeviceClass::Hdd`] rotates).
    pub fn with_class(mut self, class: DeviceClass) -> Device {
        self.class = class;
        self.rotational = class == DeviceClass::Hdd;
        self
    }

    /// Same, with the allocation hint set.
    pub fn with_hint(mut self, hint: AllocHint) -> Device {
        self.hint = hint;
        self
    }

    /// Same, with pre-existing extents `(offset, len)` (any order). They
    /// are sorted and checked: non-empty, inside the device, disjoint.
    pub fn with_extents(mut self, mut extents: Vec<(u64, u64)>) -> Result<Device, DeviceError> {
        extents.sort_unstable();
        let mut used = 0u64;
        let mut prev_end = 0u64;
        for (i, &(offset, len)) in extents.iter().enumerate() {
            let devid = self.devid;
            if len == 0 {
                return Err(DeviceError::EmptyExtent { devid, offset });
            }
            let end = offset
                .checked_add(len)
                .filter(|&e| e <= self.total_bytes)
                .ok_or(DeviceError::ExtentBeyondEnd { devid, offset, len })?;
            if i > 0 && offset < prev_end {
                return Err(DeviceError::ExtentOverlap { devid, offset });
            }
            prev_end = end;
            used += len;
        }
        self.extents = extents;
        self.bytes_used = used;
        self.gapless = (0, DEVICE_RANGE_RESERVED);
        self.extend_gapless();
        Ok(self)
    }

    /// Unique, stable id; the final sort key everywhere.
    pub fn devid(&self) -> u64 {
        self.devid
    }

    /// Usable size of the device.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Bytes in allocated device extents.
    pub fn bytes_used(&self) -> u64 {
        self.bytes_used
    }

    /// Unallocated bytes, `total_bytes - bytes_used` saturating at 0 (the
    /// `total_avail` of `gather_device_info`; the reserved first MiB
    /// counts as unallocated, as in the kernel).
    pub fn total_avail(&self) -> u64 {
        self.total_bytes.saturating_sub(self.bytes_used)
    }

    /// The allocated extents `(offset, len)`, sorted by offset.
    pub fn extents(&self) -> &[(u64, u64)] {
        &self.extents
    }

    /// The extents a hole search must look at, and where its cursor
    /// starts: the ones before them leave no hole past the reserved first
    /// MiB ([`find_free_dev_extent`](crate::hole::find_free_dev_extent)
    /// gives the same answer from here as from the start, in O(1) for a
    /// device filled from the front).
    pub fn extents_after_gapless_start(&self) -> (&[(u64, u64)], u64) {
        (&self.extents[self.gapless.0..], self.gapless.1)
    }

    /// Takes in the extents after the gap-free start that leave no hole.
    fn extend_gapless(&mut self) {
        let (mut i, mut cursor) = self.gapless;
        while let Some(&(offset, len)) = self.extents.get(i) {
            if offset > cursor {
                break;
            }
            cursor = cursor.max(offset + len);
            i += 1;
        }
        self.gapless = (i, cursor);
    }

    /// Whether chunk allocation may consider this device at all
    /// (`gather_device_info`'s state checks).
    pub fn eligible(&self) -> bool {
        self.writable && self.in_fs_metadata && !self.replace_target
    }

    /// Whether `[offset, offset + len)` lies in the device and overlaps no
    /// extent of it.
    pub fn is_free(&self, offset: u64, len: u64) -> bool {
        let Some(end) = offset.checked_add(len) else {
            return false;
        };
        if end > self.total_bytes {
            return false;
        }
        let at = self.extents.partition_point(|&(o, _)| o < offset);
        let after_prev = at == 0 || {
            let (o, l) = self.extents[at - 1];
            o + l <= offset
        };
        let before_next = at == self.extents.len() || end <= self.extents[at].0;
        after_prev && before_next
    }

    /// Records a new extent. The caller guarantees it lies in a hole.
    pub(crate) fn insert_extent(&mut self, offset: u64, len: u64) {
        let at = self.extents.partition_point(|&(o, _)| o < offset);
        debug_assert!(
            at == 0 || {
                let (o, l) = self.extents[at - 1];
                o + l <= offset
            }
        );
        debug_assert!(at == self.extents.len() || offset + len <= self.extents[at].0);
        debug_assert!(offset + len <= self.total_bytes);
        self.extents.insert(at, (offset, len));
        self.bytes_used += len;
        if at < self.gapless.0 {
            // Only below the reserved MiB can a hole precede the gap-free
            // end; the new extent is in the start either way.
            self.gapless.0 += 1;
            self.gapless.1 = self.gapless.1.max(offset + len);
        }
        self.extend_gapless();
        self.debug_check();
    }

    /// Removes the extent that starts at `offset` with length `len`.
    pub(crate) fn remove_extent(&mut self, offset: u64, len: u64) -> bool {
        match self.extents.binary_search_by_key(&offset, |&(o, _)| o) {
            Ok(i) if self.extents[i].1 == len => {
                self.extents.remove(i);
                self.bytes_used -= len;
                if i < self.gapless.0 {
                    // A hole may have opened in the start: find it again.
                    self.gapless = (0, DEVICE_RANGE_RESERVED);
                    self.extend_gapless();
                }
                self.debug_check();
                true
            }
            _ => false,
        }
    }

    fn debug_check(&self) {
        debug_assert_eq!(
            self.bytes_used,
            self.extents.iter().map(|&(_, l)| l).sum::<u64>(),
            "bytes_used must equal the extent sum"
        );
        debug_assert!(
            self.extents.windows(2).all(|w| w[0].0 + w[0].1 <= w[1].0),
            "extents sorted and disjoint"
        );
        debug_assert_eq!(
            self.gapless,
            {
                let mut fresh = self.clone();
                fresh.gapless = (0, DEVICE_RANGE_RESERVED);
                fresh.extend_gapless();
                fresh.gapless
            },
            "the gap-free start follows the extents"
        );
    }
}
