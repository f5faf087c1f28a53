//! Chunk types and the per-allocation size limits (kernel:
//! `calc_chunk_size`, `init_alloc_chunk_ctl`,
//! `init_alloc_chunk_ctl_policy_regular`).

use core::fmt;

use crate::{
    DATA_CHUNK_SIZE, GIB, MAX_CHUNK_PERCENT, MAX_DEVS_SYS_CHUNK, MAX_STRIPE_SIZE, METADATA_BIG_FS,
    METADATA_CHUNK_SIZE_BIG, METADATA_CHUNK_SIZE_SMALL, MIB, Profile, RaidAttr, STRIPE_LEN,
    SYSTEM_CHUNK_SIZE, max_devs,
};

/// What a chunk holds (kernel: the `BTRFS_BLOCK_GROUP_{DATA,METADATA,SYSTEM}`
/// type bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChunkType {
    /// File data.
    Data,
    /// Tree blocks.
    Metadata,
    /// The chunk tree itself.
    System,
    /// DATA|METADATA in one chunk (small filesystems, `mkfs --mixed`).
    /// Every tiering variant leaves mixed chunks alone.
    Mixed,
}

impl ChunkType {
    /// Whether the tiering variants treat it as metadata (METADATA and
    /// SYSTEM).
    pub const fn is_metadata_like(self) -> bool {
        matches!(self, ChunkType::Metadata | ChunkType::System)
    }

    /// Lower-case name.
    pub const fn name(self) -> &'static str {
        match self {
            ChunkType::Data => "data",
            ChunkType::Metadata => "metadata",
            ChunkType::System => "system",
            ChunkType::Mixed => "data+metadata",
        }
    }
}

impl fmt::Display for ChunkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which generation of the size rules to apply. The only
/// place they differ is how large a hole the search asks for, and the
/// chunk sizes before 6.0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SizeRules {
    /// Mainline since Zygo Blaxell's fix of October 2023: the hole search
    /// asks for `min(chunk_size, 1 GiB)` per stripe, so every device with a
    /// 1 GiB hole ties and free space decides.
    #[default]
    Mainline,
    /// 6.0 until that fix: the hole search asks for the whole
    /// `chunk_size` (10 GiB for data), so devices with one big hole beat
    /// devices with many 1 GiB holes (the regression). The stripe is
    /// still clamped to 1 GiB afterwards.
    Uncapped6_0,
    /// Before 6.0: fixed per-type stripe and chunk sizes (data 1 GiB /
    /// 10 GiB, metadata 1 GiB or 256 MiB for both, system 32 MiB / 64 MiB);
    /// `chunk_size` overrides are ignored.
    Pre6_0,
}

impl SizeRules {
    /// Short name for knobs and reports.
    pub const fn name(self) -> &'static str {
        match self {
            SizeRules::Mainline => "mainline",
            SizeRules::Uncapped6_0 => "6.0",
            SizeRules::Pre6_0 => "pre-6.0",
        }
    }
}

/// Per-type target chunk size (kernel: `space_info->chunk_size`, tunable
/// through sysfs). Mixed chunks use the DATA value, like the kernel's
/// `calc_chunk_size`, which tests the DATA bit first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkSizes {
    /// DATA (and mixed).
    pub data: u64,
    /// METADATA.
    pub metadata: u64,
    /// SYSTEM.
    pub system: u64,
}

impl ChunkSizes {
    /// The defaults for a filesystem of `total_rw_bytes` writable bytes
    /// (kernel: `calc_chunk_size`): data 10 GiB, system 32 MiB, metadata
    /// 1 GiB above 50 GiB and 256 MiB otherwise.
    pub const fn defaults(total_rw_bytes: u64) -> ChunkSizes {
        ChunkSizes {
            data: DATA_CHUNK_SIZE,
            metadata: if total_rw_bytes > METADATA_BIG_FS {
                METADATA_CHUNK_SIZE_BIG
            } else {
                METADATA_CHUNK_SIZE_SMALL
            },
            system: SYSTEM_CHUNK_SIZE,
        }
    }

    /// The size for one chunk type.
    pub const fn get(&self, ty: ChunkType) -> u64 {
        match ty {
            ChunkType::Data | ChunkType::Mixed => self.data,
            ChunkType::Metadata => self.metadata,
            ChunkType::System => self.system,
        }
    }
}

/// Everything one allocation is bounded by (kernel: the size fields of
/// `struct alloc_chunk_ctl` after `init_alloc_chunk_ctl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The profile row, `devs_max` already resolved (never 0).
    pub attr: RaidAttr,
    /// Largest stripe the hole search asks for, per stripe.
    pub max_stripe_size: u64,
    /// Largest logical chunk length (after the 10 % cap).
    pub max_chunk_size: u64,
    /// Smallest usable free space on a device (`STRIPE_LEN * dev_stripes`).
    pub dev_extent_min: u64,
    /// What the hole search asks of each device
    /// (`max_stripe_size * dev_stripes`).
    pub dev_extent_want: u64,
}

impl Limits {
    /// Computes the limits (kernel: `init_alloc_chunk_ctl` with the
    /// regular, non-zoned policy).
    pub fn new(
        ty: ChunkType,
        profile: Profile,
        legacy_minima: bool,
        nodesize: u32,
        chunk_sizes: ChunkSizes,
        total_rw_bytes: u64,
        rules: SizeRules,
    ) -> Limits {
        let mut attr = profile.attr_with(legacy_minima);
        if attr.devs_max == 0 {
            attr.devs_max = max_devs(nodesize) as u32;
        }
        if ty == ChunkType::System {
            attr.devs_max = attr.devs_max.min(MAX_DEVS_SYS_CHUNK as u32);
        }
        let (max_stripe_size, chunk_size) = match rules {
            SizeRules::Mainline => {
                let c = chunk_sizes.get(ty);
                (c.min(MAX_STRIPE_SIZE), c)
            }
            SizeRules::Uncapped6_0 => {
                let c = chunk_sizes.get(ty);
                (c, c)
            }
            SizeRules::Pre6_0 => match ty {
                ChunkType::Data | ChunkType::Mixed => (GIB, DATA_CHUNK_SIZE),
                ChunkType::Metadata => {
                    let m = ChunkSizes::defaults(total_rw_bytes).metadata;
                    (m, m)
                }
                ChunkType::System => (32 * MIB, 64 * MIB),
            },
        };
        // The kernel computes `total_rw_bytes * 10 / 100` in 64 bits; the
        // product cannot overflow for any real filesystem, but saturate
        // rather than wrap for absurd inputs.
        let ten_percent = total_rw_bytes.saturating_mul(MAX_CHUNK_PERCENT) / 100;
        let dev_extent_min = STRIPE_LEN * u64::from(attr.dev_stripes);
        Limits {
            attr,
            max_stripe_size,
            max_chunk_size: chunk_size.min(ten_percent),
            dev_extent_min,
            dev_extent_want: max_stripe_size.saturating_mul(u64::from(attr.dev_stripes)),
        }
    }
}
