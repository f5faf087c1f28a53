//! A volume: the devices of a run and the map from logical extents to
//! (device, physical offset).
//!
//! Today a run builds a single-device volume with one identity extent; the
//! structure is here so that RAID1 mirrors and chunk placement (the tiering
//! work) plug their extents in without reshaping the rest of the simulator.

/// One mapped range: `[logical, logical + len)` lives on `dev` at `physical`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// Start in the volume's address space.
    pub logical: u64,
    /// Length in bytes.
    pub len: u64,
    /// Device index.
    pub dev: u16,
    /// Start on the device.
    pub physical: u64,
}

/// Why a mapping cannot be added.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VolumeError {
    /// The extent overlaps one already mapped.
    #[error("extent at {logical} (+{len}) overlaps a mapped extent")]
    Overlap {
        /// Start.
        logical: u64,
        /// Length.
        len: u64,
    },
    /// The extent runs past the end of its device.
    #[error("extent on device {dev} ends at {end}, past its {capacity} bytes")]
    PastDevice {
        /// Device index.
        dev: u16,
        /// End offset.
        end: u64,
        /// Device size.
        capacity: u64,
    },
    /// No such device.
    #[error("no device {0} in the volume")]
    NoDevice(u16),
    /// A zero-length extent.
    #[error("empty extent")]
    Empty,
}

/// Devices (by capacity) and the extent map, sorted by logical address.
#[derive(Clone, Debug, Default)]
pub struct Volume {
    capacities: Vec<u64>,
    extents: Vec<Extent>,
}

impl Volume {
    /// One device mapped one to one.
    pub fn single(capacity: u64) -> Self {
        let mut v = Self {
            capacities: vec![capacity],
            extents: Vec::new(),
        };
        if capacity > 0 {
            v.extents.push(Extent {
                logical: 0,
                len: capacity,
                dev: 0,
                physical: 0,
            });
        }
        v
    }

    /// An empty map over devices of the given capacities.
    pub fn with_devices(capacities: Vec<u64>) -> Self {
        Self {
            capacities,
            extents: Vec::new(),
        }
    }

    /// Device count.
    pub fn devices(&self) -> usize {
        self.capacities.len()
    }

    /// Bytes mapped.
    pub fn mapped(&self) -> u64 {
        self.extents.iter().map(|e| e.len).sum()
    }

    /// Maps a new extent.
    pub fn add(&mut self, e: Extent) -> Result<(), VolumeError> {
        if e.len == 0 {
            return Err(VolumeError::Empty);
        }
        let capacity = *self
            .capacities
            .get(usize::from(e.dev))
            .ok_or(VolumeError::NoDevice(e.dev))?;
        let end = e.physical.saturating_add(e.len);
        if end > capacity {
            return Err(VolumeError::PastDevice {
                dev: e.dev,
                end,
                capacity,
            });
        }
        let pos = self.extents.partition_point(|x| x.logical < e.logical);
        let overlaps_prev =
            pos > 0 && self.extents[pos - 1].logical + self.extents[pos - 1].len > e.logical;
        let overlaps_next =
            pos < self.extents.len() && e.logical + e.len > self.extents[pos].logical;
        if overlaps_prev || overlaps_next {
            return Err(VolumeError::Overlap {
                logical: e.logical,
                len: e.len,
            });
        }
        self.extents.insert(pos, e);
        Ok(())
    }

    /// Where `logical` lives: device, physical offset, and how many bytes
    /// stay contiguous from there.
    pub fn map(&self, logical: u64) -> Option<(u16, u64, u64)> {
        let pos = self.extents.partition_point(|x| x.logical <= logical);
        let e = self.extents.get(pos.checked_sub(1)?)?;
        let off = logical - e.logical;
        (off < e.len).then_some((e.dev, e.physical + off, e.len - off))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_device_maps_identity() {
        let v = Volume::single(1 << 30);
        assert_eq!(v.map(4096), Some((0, 4096, (1 << 30) - 4096)));
        assert_eq!(v.map(1 << 30), None);
        assert_eq!(v.devices(), 1);
    }

    #[test]
    fn extents_map_across_devices_and_reject_overlap() {
        let mut v = Volume::with_devices(vec![100, 100]);
        v.add(Extent {
            logical: 0,
            len: 50,
            dev: 0,
            physical: 10,
        })
        .unwrap();
        v.add(Extent {
            logical: 50,
            len: 50,
            dev: 1,
            physical: 0,
        })
        .unwrap();
        assert_eq!(v.map(10), Some((0, 20, 40)));
        assert_eq!(v.map(60), Some((1, 10, 40)));
        assert_eq!(v.map(100), None);
        assert_eq!(v.mapped(), 100);
        assert!(matches!(
            v.add(Extent {
                logical: 40,
                len: 20,
                dev: 0,
                physical: 60
            }),
            Err(VolumeError::Overlap { .. })
        ));
        assert!(matches!(
            v.add(Extent {
                logical: 100,
                len: 20,
                dev: 1,
                physical: 90
            }),
            Err(VolumeError::PastDevice { .. })
        ));
        assert_eq!(
            v.add(Extent {
                logical: 100,
                len: 1,
                dev: 2,
                physical: 0
            }),
            Err(VolumeError::NoDevice(2))
        );
        assert_eq!(
            v.add(Extent {
                logical: 100,
                len: 0,
                dev: 0,
                physical: 0
            }),
            Err(VolumeError::Empty)
        );
    }
}
