//! Sizes and limits of the chunk allocator and the read policies
//! (kernel: `SZ_*`, `BTRFS_STRIPE_LEN`, `BTRFS_DEVICE_RANGE_RESERVED`,
//! `BTRFS_MAX_DEVS`, `BTRFS_MAX_DEVS_SYS_CHUNK`,
//! `BTRFS_DEFAULT_RR_MIN_CONTIG_READ`).

/// One KiB.
pub const KIB: u64 = 1024;
/// One MiB.
pub const MIB: u64 = 1024 * KIB;
/// One GiB.
pub const GIB: u64 = 1024 * MIB;

/// The unit every stripe is a multiple of (kernel: `BTRFS_STRIPE_LEN`).
pub const STRIPE_LEN: u64 = 64 * KIB;
/// The start of every device that chunks never use, so the primary
/// superblock and boot loaders stay untouched (kernel:
/// `BTRFS_DEVICE_RANGE_RESERVED`, regular mode).
pub const DEVICE_RANGE_RESERVED: u64 = MIB;
/// Granularity the 10 % cap rounds a reduced stripe up to
/// (`decide_stripe_size_regular`).
pub const CAPPED_STRIPE_ROUND: u64 = 16 * MIB;
/// No stripe is ever larger than this (`decide_stripe_size_regular`).
pub const MAX_STRIPE_SIZE: u64 = GIB;
/// Default DATA `chunk_size` (kernel: `BTRFS_MAX_DATA_CHUNK_SIZE`).
pub const DATA_CHUNK_SIZE: u64 = 10 * GIB;
/// Default SYSTEM `chunk_size` (`calc_chunk_size`).
pub const SYSTEM_CHUNK_SIZE: u64 = 32 * MIB;
/// METADATA `chunk_size` on filesystems above [`METADATA_BIG_FS`].
pub const METADATA_CHUNK_SIZE_BIG: u64 = GIB;
/// METADATA `chunk_size` on filesystems up to [`METADATA_BIG_FS`].
pub const METADATA_CHUNK_SIZE_SMALL: u64 = 256 * MIB;
/// Writable size above which metadata chunks grow to 1 GiB (strictly
/// greater, `calc_chunk_size`).
pub const METADATA_BIG_FS: u64 = 50 * GIB;
/// Share of the writable size one chunk may take, in percent.
pub const MAX_CHUNK_PERCENT: u64 = 10;

/// Default tree block size.
pub const DEFAULT_NODESIZE: u32 = 16 * 1024;
/// Default sector size.
pub const DEFAULT_SECTORSIZE: u32 = 4 * 1024;
/// Default `rr_min_contig_read` of the round-robin read policy (kernel:
/// `BTRFS_DEFAULT_RR_MIN_CONTIG_READ`).
pub const DEFAULT_RR_MIN_CONTIG_READ: u64 = 256 * KIB;
/// Most copies a RAID1-family chunk has (kernel: `BTRFS_RAID1_MAX_MIRRORS`).
pub const RAID1_MAX_MIRRORS: usize = 4;

// On-disk structure sizes behind the device-count limits.
const HEADER_SIZE: u64 = 101; // struct btrfs_header
const ITEM_SIZE: u64 = 25; // struct btrfs_item
const CHUNK_ITEM_SIZE: u64 = 80; // struct btrfs_chunk, one stripe included
const STRIPE_ITEM_SIZE: u64 = 32; // struct btrfs_stripe
const DISK_KEY_SIZE: u64 = 17; // struct btrfs_disk_key
const SYSTEM_CHUNK_ARRAY_SIZE: u64 = 2048;

/// Most stripes one chunk item can describe in a tree leaf of `nodesize`
/// bytes: the stand-in for "unlimited" `devs_max` (kernel:
/// `BTRFS_MAX_DEVS`). 506 for 16 KiB nodes. Returns 1 for node sizes too
/// small to hold a chunk item (which no valid filesystem has).
pub const fn max_devs(nodesize: u32) -> usize {
    let leaf = nodesize as u64;
    let overhead = HEADER_SIZE + ITEM_SIZE + CHUNK_ITEM_SIZE;
    if leaf <= overhead {
        return 1;
    }
    ((leaf - overhead) / STRIPE_ITEM_SIZE + 1) as usize
}

/// Most stripes a SYSTEM chunk may have, because its item must also fit in
/// the superblock's system chunk array next to one other (kernel:
/// `BTRFS_MAX_DEVS_SYS_CHUNK`): 58.
pub const MAX_DEVS_SYS_CHUNK: usize =
    ((SYSTEM_CHUNK_ARRAY_SIZE - 2 * DISK_KEY_SIZE - 2 * CHUNK_ITEM_SIZE) / STRIPE_ITEM_SIZE + 1)
        as usize;
