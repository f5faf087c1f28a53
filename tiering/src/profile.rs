//! The nine block-group profiles and their geometry (kernel:
//! `btrfs_raid_array`, `struct btrfs_raid_attr`).

use core::fmt;

/// A block-group profile: how a chunk's bytes are spread over devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Profile {
    /// One copy on one device.
    Single,
    /// Two copies on one device, back to back.
    Dup,
    /// Striped over as many devices as have space, no redundancy.
    Raid0,
    /// Two copies on two devices.
    Raid1,
    /// Three copies on three devices.
    Raid1C3,
    /// Four copies on four devices.
    Raid1C4,
    /// Striped over mirrored pairs.
    Raid10,
    /// Striped with one parity stripe.
    Raid5,
    /// Striped with two parity stripes.
    Raid6,
}

impl Profile {
    /// Every profile, in the order of this enum.
    pub const ALL: [Profile; 9] = [
        Profile::Single,
        Profile::Dup,
        Profile::Raid0,
        Profile::Raid1,
        Profile::Raid1C3,
        Profile::Raid1C4,
        Profile::Raid10,
        Profile::Raid5,
        Profile::Raid6,
    ];

    /// The profile's name as `btrfs` prints it (kernel: `raid_name`).
    pub const fn name(self) -> &'static str {
        match self {
            Profile::Single => "single",
            Profile::Dup => "dup",
            Profile::Raid0 => "raid0",
            Profile::Raid1 => "raid1",
            Profile::Raid1C3 => "raid1c3",
            Profile::Raid1C4 => "raid1c4",
            Profile::Raid10 => "raid10",
            Profile::Raid5 => "raid5",
            Profile::Raid6 => "raid6",
        }
    }

    /// Parses a name as [`name`](Self::name) prints it (case-insensitive).
    pub fn from_name(text: &str) -> Option<Profile> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(text.trim()))
    }

    /// The geometry row with the current kernel minima (RAID0 on one
    /// device, RAID10 on two, since "btrfs: allow degenerate raid0/raid10",
    /// 5.15).
    pub const fn attr(self) -> RaidAttr {
        self.attr_with(false)
    }

    /// The geometry row; `legacy_minima` restores the minima before 5.15
    /// (RAID0 needs 2 devices, RAID10 needs 4).
    pub const fn attr_with(self, legacy_minima: bool) -> RaidAttr {
        let (sub_stripes, dev_stripes, devs_min, devs_max, devs_increment, ncopies, nparity, tol) =
            match self {
                Profile::Single => (1, 1, 1, 1, 1, 1, 0, 0),
                Profile::Dup => (1, 2, 1, 1, 1, 2, 0, 0),
                Profile::Raid0 => (1, 1, if legacy_minima { 2 } else { 1 }, 0, 1, 1, 0, 0),
                Profile::Raid1 => (1, 1, 2, 2, 2, 2, 0, 1),
                Profile::Raid1C3 => (1, 1, 3, 3, 3, 3, 0, 2),
                Profile::Raid1C4 => (1, 1, 4, 4, 4, 4, 0, 3),
                Profile::Raid10 => (2, 1, if legacy_minima { 4 } else { 2 }, 0, 2, 2, 0, 1),
                Profile::Raid5 => (1, 1, 2, 0, 1, 1, 1, 1),
                Profile::Raid6 => (1, 1, 3, 0, 1, 1, 2, 2),
            };
        RaidAttr {
            sub_stripes,
            dev_stripes,
            devs_min,
            devs_max,
            devs_increment,
            ncopies,
            nparity,
            tolerated_failures: tol,
        }
    }

    /// Whether reads of this profile choose among copies through the read
    /// policy (`find_live_mirror` runs for RAID1, RAID1C3, RAID1C4 and
    /// RAID10 only; DUP always reads copy 0).
    pub const fn has_read_mirrors(self) -> bool {
        matches!(
            self,
            Profile::Raid1 | Profile::Raid1C3 | Profile::Raid1C4 | Profile::Raid10
        )
    }

    /// Whether the width is fixed (`devs_min == devs_max`, more than one
    /// device): the mirror profiles RAID1/C3/C4, the only ones kakra's
    /// later hint port treats specially.
    pub const fn is_fixed_width_mirror(self) -> bool {
        matches!(self, Profile::Raid1 | Profile::Raid1C3 | Profile::Raid1C4)
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One row of the profile table (kernel: `struct btrfs_raid_attr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RaidAttr {
    /// Stripes per mirrored group (2 for RAID10, else 1).
    pub sub_stripes: u32,
    /// Stripes per device (2 for DUP, else 1).
    pub dev_stripes: u32,
    /// Fewest devices a chunk may use.
    pub devs_min: u32,
    /// Most devices a chunk may use; 0 means "as many as fit in a chunk
    /// item" ([`max_devs`](crate::max_devs)).
    pub devs_max: u32,
    /// The device count is rounded down to a multiple of this.
    pub devs_increment: u32,
    /// Copies of every byte.
    pub ncopies: u32,
    /// Parity stripes.
    pub nparity: u32,
    /// Devices that may fail without data loss.
    pub tolerated_failures: u32,
}

impl RaidAttr {
    /// Stripes that carry distinct data when the chunk spans `ndevs`
    /// devices: `(ndevs * dev_stripes - nparity) / ncopies` (kernel:
    /// `data_stripes` in `decide_stripe_size_regular`). SINGLE, DUP and
    /// the RAID1 family give 1, RAID0 `n`, RAID10 `n/2`, RAID5 `n-1`,
    /// RAID6 `n-2`. Saturates at 0 below the parity count.
    pub const fn data_stripes(&self, ndevs: u32) -> u32 {
        (ndevs * self.dev_stripes).saturating_sub(self.nparity) / self.ncopies
    }
}
