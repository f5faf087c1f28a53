//! A btrfs-like multi-device volume for data: the chunk map from the
//! filesystem's logical addresses to device stripes, built with the
//! `iolab-tiering` chunk allocator, and the per-device statistics the
//! read-mirror policies read (the kernel's `part_stat`).
//!
//! What is modelled (see `docs/tiering-reproduction.md`): at mkfs, one system and one
//! metadata chunk, then data chunks of a full-copy profile (`single`,
//! `dup`, `raid1`, `raid1c3`, `raid1c4`) until the devices are full, all in
//! the order and on the devices the chosen allocator (`alloc=`) gives; a
//! write goes to every copy as one child bio per copy; a read goes to the
//! copy the read policy picks (`btrfs_map_block` → `find_live_mirror`); an
//! fsync's log-tree blocks go to the copies of a metadata chunk
//! ([`Raid::log_blocks`]). Once the files are laid out, data chunks past
//! them are freed (fio made the files before the run; a real filesystem
//! allocates data chunks as data comes), and metadata chunks are allocated
//! through the same allocator as the files' tree items and an aged
//! filesystem's metadata need them ([`super::metadata`]).
//! Buffered IO takes the same paths: writeback writes every copy (the
//! pages stay under writeback until the last one is down) and a read goes
//! to the copy the read policy picks.
//! The 30 s commit and the mutex it shares with fsync are in
//! [`super::transaction`]. What is not: COW of data extents, checksums.

use iolab_tiering::{
    AllocPolicy, Chunk, ChunkAllocator, ChunkType, Device as TierDevice, DeviceClass, MirrorInfo,
    Profile, ReadPolicy, ReadPolicyImpl, ReadRequest, Volume as TierVolume, VolumeParams,
    find_live_mirror,
};

/// The most copies a chunk of a supported profile has (RAID1C4).
pub const MAX_COPIES: usize = 4;

/// pid of the first fio job process; clone `k` is `PID_BASE + k`
/// (consecutive pids, so `pid` splits jobs by parity).
pub const PID_BASE: u32 = 4000;

/// The filesystem's sector size (btrfs `sectorsize`, 4 KiB).
pub const SECTORSIZE: u64 = 4096;

/// One member device as the allocator sees it.
#[derive(Clone, Copy, Debug)]
pub struct Member {
    /// Bytes.
    pub capacity: u64,
    /// Spinning media.
    pub rotational: bool,
    /// Queue depth (the `queue` and `load` policies read it).
    pub queue_depth: u32,
    /// `allocation_hint` (read by `alloc=allocation-hint` only).
    pub hint: iolab_tiering::AllocHint,
}

/// Why a volume cannot be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RaidError {
    /// A profile whose stripes are not full copies.
    #[error(
        "--volume: profile '{0}' is not simulated yet (single, dup, raid1, raid1c3, raid1c4 are)"
    )]
    Profile(&'static str),
    /// The allocator refused a chunk mkfs needs.
    #[error("--volume: no {profile} {kind} chunk fits: {why}")]
    NoChunk {
        /// Profile name.
        profile: &'static str,
        /// `system`, `metadata` or `data`.
        kind: &'static str,
        /// The allocator's reason.
        why: String,
    },
    /// The device list is unusable.
    #[error("--volume: {0}")]
    Devices(String),
}

/// Most data chunks a volume's map holds (1 GiB each on most profiles:
/// 256 TiB of data). The map is built before the run, every chunk the
/// devices hold, so its size is bounded here.
pub const MAX_DATA_CHUNKS: usize = 1 << 18;
/// Most member devices of a volume.
pub const MAX_DEVICES: usize = 256;

pub use super::metadata::NODESIZE;
use super::metadata::{MetaChunk, MetaSpace};

/// Log-tree blocks an fsync writes (`btrfs_sync_log`): the log leaf holding
/// the inode and its extents, and the log root tree's block *(assumed: a
/// small file logged alone touches one leaf of each)*.
pub const LOG_BLOCKS_PER_FSYNC: u64 = 2;

/// Where btrfs keeps each device's primary superblock.
pub const SUPER_OFFSET: u64 = 64 * 1024;

/// The superblock write's size.
pub const SUPER_BYTES: u64 = 4096;

/// One chunk: a logical range and where each copy lives.
#[derive(Clone, Copy, Debug)]
pub struct MapChunk {
    /// Logical start.
    pub logical: u64,
    /// Logical length (= stripe length for full-copy profiles).
    pub len: u64,
    /// Copies in use.
    pub copies: u8,
    /// (device index, physical start) per copy.
    pub stripes: [(u16, u64); MAX_COPIES],
}

/// Per-device block statistics since mount, as `part_stat` keeps them.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct PartStat {
    /// Reads completed.
    pub read_ios: u64,
    /// Their summed request-allocation-to-completion time, ns.
    pub read_wait_ns: u64,
    /// Requests allocated and not completed.
    pub inflight: u32,
    /// Byte position after the last request started.
    pub last_offset: u64,
    /// Reads sent here by the read policy (child bios).
    pub mirror_reads: u64,
}

/// The volume's chunk map and read policy.
#[derive(Debug)]
pub struct Raid {
    profile: Profile,
    chunks: Vec<MapChunk>,
    /// The data chunks as the allocator gave them (same order as
    /// `chunks`), to free the ones no file needs.
    data_src: Vec<Chunk>,
    /// The mkfs-time system chunk.
    system: MapChunk,
    /// The metadata chunks and their use.
    meta: MetaSpace,
    /// The devices' allocation state, for chunks allocated after mkfs.
    vol: TierVolume,
    /// The mount's allocator.
    alloc: AllocPolicy,
    members: Vec<Member>,
    policy: ReadPolicyImpl,
    /// Both rotational and non-rotational members (the `load` policy's
    /// penalty scope).
    mixed: bool,
    /// Reads that had a choice between copies.
    pub choices: u64,
    /// The first contract a read policy broke (a copy outside the
    /// request): the run stops and is refused with it.
    pub contract_broken: Option<String>,
    /// fsyncs that wrote the log tree and the superblocks.
    pub log_syncs: u64,
    /// Copies of mirrored writeback bios an fsync could not wait for
    /// (neither a request nor parked when it looked); 0 when the
    /// submission order holds.
    pub fsync_unseen_copies: u64,
    /// Superblock writes issued while their fsync's log blocks were still
    /// in flight (0 when the order holds).
    pub supers_before_log: u64,
    /// pid of each job process (empty: `PID_BASE + k`).
    pids: Vec<u32>,
}

/// mkfs's placement: the first device only (btrfs-progs creates the
/// initial chunks before it adds the other devices).
struct FirstDevice;

impl ChunkAllocator for FirstDevice {
    fn name(&self) -> &'static str {
        "mkfs"
    }

    fn select(
        &self,
        _req: &iolab_tiering::SelectRequest,
        cands: &mut Vec<iolab_tiering::Candidate>,
    ) {
        cands.retain(|c| c.devid == 1);
    }
}

/// The chunk map entry of an allocated chunk.
fn map_chunk(c: &Chunk) -> MapChunk {
    debug_assert!(c.stripes.len() <= MAX_COPIES);
    let mut stripes = [(0u16, 0u64); MAX_COPIES];
    for (slot, s) in stripes.iter_mut().zip(&c.stripes) {
        *slot = ((s.devid - 1) as u16, s.physical);
    }
    // Full-copy profiles: every stripe holds the whole chunk.
    debug_assert!(c.stripes.iter().all(|s| s.len == c.length));
    MapChunk {
        logical: c.logical,
        len: c.length,
        copies: c.stripes.len() as u8,
        stripes,
    }
}

/// Device classes for the allocator: rotational → HDD, else SSD.
fn class_of(m: &Member) -> DeviceClass {
    if m.rotational {
        DeviceClass::Hdd
    } else {
        DeviceClass::Ssd
    }
}

impl Raid {
    /// Makes the filesystem: a system and a metadata chunk, then data
    /// chunks of `profile` over `members` until they are full, placed as
    /// mkfs and then the mount's allocator `alloc` place them (`balanced`:
    /// all by `alloc`, as after a full balance); reads go through
    /// `policy`.
    pub fn build(
        profile: Profile,
        members: &[Member],
        policy: ReadPolicyImpl,
        alloc: AllocPolicy,
        balanced: bool,
    ) -> Result<Raid, RaidError> {
        match profile {
            Profile::Single
            | Profile::Dup
            | Profile::Raid1
            | Profile::Raid1C3
            | Profile::Raid1C4 => {}
            other => return Err(RaidError::Profile(other.name())),
        }
        if members.is_empty() || members.len() > usize::from(u16::MAX) {
            return Err(RaidError::Devices(
                "a volume needs 1 to 65535 devices".into(),
            ));
        }
        let devices = members
            .iter()
            .enumerate()
            .map(|(i, m)| {
                TierDevice::new(i as u64 + 1, m.capacity)
                    .with_class(class_of(m))
                    .with_hint(m.hint)
            })
            .collect();
        let mut vol = TierVolume::new(VolumeParams::default(), devices)
            .map_err(|e| RaidError::Devices(e.to_string()))?;
        // mkfs: btrfs-progs makes the system, metadata and first data
        // chunks on the first device named, before it adds the others
        // (`create_metadata_block_groups`, `create_data_block_groups`); with
        // single profiles they stay there. Mirrored profiles replace them
        // with chunks the allocator places. `balanced`: as after `btrfs
        // balance start`, which relocates every chunk by the mount's
        // allocator.
        // btrfs-progs knows nothing of the mount's allocator variants: its
        // mirrored chunks are placed like stock.
        let first_device = profile == Profile::Single && !balanced;
        let mut mkfs = |kind: ChunkType, name: &'static str| {
            let placed = if first_device {
                vol.alloc_chunk(&FirstDevice, kind, profile)
            } else if balanced {
                vol.alloc_chunk(&alloc, kind, profile)
            } else {
                vol.alloc_chunk(&AllocPolicy::default(), kind, profile)
            };
            placed.map_err(|e| RaidError::NoChunk {
                profile: profile.name(),
                kind: name,
                why: if first_device {
                    format!(
                        "{e} (mkfs puts its first chunks on the device named first; --balance \
                         lets the allocator place them)"
                    )
                } else {
                    e.to_string()
                },
            })
        };
        let system = mkfs(ChunkType::System, "system")?;
        let metadata = mkfs(ChunkType::Metadata, "metadata")?;
        let mut data_src = Vec::new();
        if first_device {
            data_src.push(mkfs(ChunkType::Data, "data")?);
        }
        loop {
            if data_src.len() > MAX_DATA_CHUNKS {
                return Err(RaidError::Devices(format!(
                    "the devices hold more than {MAX_DATA_CHUNKS} data chunks (the first is {} MiB); the simulator maps at most that many: give smaller devices (capacity_gb)",
                    data_src[0].length >> 20
                )));
            }
            match vol.alloc_chunk(&alloc, ChunkType::Data, profile) {
                Ok(c) => data_src.push(c),
                Err(e) if data_src.is_empty() => {
                    return Err(RaidError::NoChunk {
                        profile: profile.name(),
                        kind: "data",
                        why: e.to_string(),
                    });
                }
                Err(_) => break,
            }
        }
        // Re-base data's logical addresses to start at 0 and run without
        // gaps, so the file layout sees one flat address space.
        let mut at = 0;
        let chunks = data_src
            .iter()
            .map(|c| {
                let mut m = map_chunk(c);
                m.logical = at;
                at += m.len;
                m
            })
            .collect();
        let mixed = members.iter().any(|m| m.rotational) && members.iter().any(|m| !m.rotational);
        Ok(Raid {
            profile,
            chunks,
            data_src,
            system: map_chunk(&system),
            meta: MetaSpace::new(map_chunk(&metadata)),
            vol,
            alloc,
            members: members.to_vec(),
            policy,
            mixed,
            choices: 0,
            contract_broken: None,
            log_syncs: 0,
            fsync_unseen_copies: 0,
            supers_before_log: 0,
            pids: Vec::new(),
        })
    }

    /// The allocator's name.
    pub fn alloc_name(&self) -> &'static str {
        self.alloc.name()
    }

    /// The system chunk and mkfs's metadata chunk.
    pub fn mkfs_chunks(&self) -> (&MapChunk, &MapChunk) {
        (&self.system, &self.meta.chunks()[0].map)
    }

    /// The metadata chunks, oldest first, with their use.
    pub fn metadata_chunks(&self) -> &[MetaChunk] {
        self.meta.chunks()
    }

    /// Tree-item bytes in use, what the metadata chunks can hold, and
    /// chunk allocations refused (a full volume stays at its last chunk,
    /// as btrfs does when `should_alloc_chunk` finds no space).
    pub fn metadata_use(&self) -> (u64, u64, u64) {
        (self.meta.used(), self.meta.capacity(), self.meta.refused)
    }

    /// Bytes of all metadata chunks (`space_info->total_bytes`).
    pub fn metadata_total(&self) -> u64 {
        self.meta.total()
    }

    /// Bytes of one metadata chunk (mkfs's; the allocator gives later
    /// ones the same size while the devices have room).
    pub fn metadata_chunk_len(&self) -> u64 {
        self.meta.chunks()[0].map.len
    }

    /// Copies each block of a chunk has (the profile's; 1 for `single`).
    pub fn copies(&self) -> u64 {
        u64::from(self.system.copies)
    }

    /// Device bytes no chunk holds (`free_chunk_space`, summed over the
    /// devices).
    pub fn unallocated(&self) -> u64 {
        self.vol.devices().iter().map(|d| d.total_avail()).sum()
    }

    /// One more metadata chunk, placed by the mount's allocator (the
    /// flush model's `ALLOC_CHUNK` state). False when the allocator finds
    /// no room (counted among the refusals).
    pub fn alloc_metadata_chunk(&mut self) -> bool {
        match self
            .vol
            .alloc_chunk(&self.alloc, ChunkType::Metadata, self.profile)
        {
            Ok(c) => {
                self.meta.add_chunk(map_chunk(&c));
                true
            }
            Err(_) => {
                self.meta.refused += 1;
                false
            }
        }
    }

    /// Pairs of device extents that overlap, over every chunk the volume
    /// holds (system, metadata, data): 0 unless the allocator or the
    /// chunk map is broken.
    pub fn overlapping_extents(&self) -> u64 {
        let mut extents: Vec<(u16, u64, u64)> = Vec::new();
        let meta = self.meta.chunks().iter().map(|m| &m.map);
        for c in std::iter::once(&self.system)
            .chain(meta)
            .chain(&self.chunks)
        {
            for &(dev, physical) in &c.stripes[..usize::from(c.copies)] {
                extents.push((dev, physical, c.len));
            }
        }
        extents.sort_unstable();
        extents
            .windows(2)
            .filter(|w| w[0].0 == w[1].0 && w[0].1 + w[0].2 > w[1].1)
            .count() as u64
    }

    /// Frees the data chunks that start at or beyond logical `end` (the
    /// files' extent: fio lays them out before the run, so only their
    /// chunks are allocated; the rest of the devices stays unallocated for
    /// metadata chunks). The first data chunk always stays.
    pub fn trim_data(&mut self, end: u64) {
        while self.chunks.len() > 1 && self.chunks.last().is_some_and(|c| c.logical >= end) {
            self.chunks.pop();
            let c = self.data_src.pop().expect("one source per data chunk");
            self.vol
                .free_chunk(&c)
                .expect("a chunk the allocator gave can be freed");
        }
    }

    /// `bytes` more of metadata tree items; allocates metadata chunks
    /// through the mount's allocator while the kernel's threshold says so
    /// (a refusal is counted and the space stays as it is).
    pub fn use_metadata(&mut self, bytes: u64) {
        self.meta.use_bytes(bytes);
        while self.meta.wants_chunk() && self.alloc_metadata_chunk() {}
    }

    /// Where the next `blocks` log-tree blocks go: for each copy of the
    /// metadata chunk [`MetaSpace::log_blocks`] picks, (device index,
    /// physical offset, bytes).
    pub fn log_blocks(&mut self, blocks: u64) -> impl Iterator<Item = (u16, u64, u64)> + '_ {
        let len = blocks * NODESIZE;
        let (m, at) = self.meta.log_blocks(blocks);
        (0..usize::from(m.copies)).map(move |k| {
            let (dev, physical) = m.stripes[k];
            (dev, physical + at, len)
        })
    }

    /// Where the next run of at most `blocks` commit tree blocks goes:
    /// the metadata chunk, the byte offset into it, and the blocks placed
    /// ([`MetaSpace::place`]).
    pub fn place_tree_blocks(&mut self, blocks: u64) -> (MapChunk, u64, u64) {
        self.meta.place(blocks)
    }

    /// Gives the first `even` job processes even pids and the next `odd`
    /// ones odd pids (for runs of 2/2, 3/1 and 4/0).
    pub fn set_pid_split(&mut self, even: u32, odd: u32) {
        self.pids = (0..even)
            .map(|k| PID_BASE + 2 * k)
            .chain((0..odd).map(|k| PID_BASE + 2 * k + 1))
            .collect();
    }

    /// pid of job process `k`.
    pub fn pid_of(&self, k: u32) -> u32 {
        self.pids.get(k as usize).copied().unwrap_or(PID_BASE + k)
    }

    /// Number of member devices.
    pub fn member_count(&self) -> usize {
        self.members.len()
    }

    /// Logical bytes the data chunks hold.
    pub fn capacity(&self) -> u64 {
        self.chunks.last().map_or(0, |c| c.logical + c.len)
    }

    /// The profile.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// Number of data chunks.
    pub fn chunks(&self) -> usize {
        self.chunks.len()
    }

    /// The read policy's name.
    pub fn policy_name(&self) -> &'static str {
        self.policy.name()
    }

    /// The data chunks in logical order.
    pub fn data_chunks(&self) -> &[MapChunk] {
        &self.chunks
    }

    /// The chunk holding `logical`, and how many bytes from `logical` stay
    /// inside it. `None` past the end.
    pub fn map(&self, logical: u64) -> Option<(&MapChunk, u64)> {
        let i = self
            .chunks
            .partition_point(|c| c.logical + c.len <= logical);
        let c = self.chunks.get(i)?;
        debug_assert!(c.logical <= logical && logical < c.logical + c.len);
        Some((c, c.logical + c.len - logical))
    }

    /// Picks the copy of `chunk` a read by `pid` on `cpu` goes to
    /// (`find_live_mirror`), with the devices' statistics as they are now.
    /// Returns the index into `chunk.stripes`.
    pub fn choose(
        &mut self,
        chunk: &MapChunk,
        part: impl Fn(u16) -> PartStat,
        pid: u32,
        cpu: u32,
    ) -> usize {
        let n = usize::from(chunk.copies);
        // DUP reads always use the first copy (`map_blocks_dup`): the read
        // policies choose among devices, not among copies on one.
        if n == 1 || self.profile == Profile::Dup {
            return 0;
        }
        self.choices += 1;
        let mut mirrors = [MirrorInfo::default(); MAX_COPIES];
        let mixed = self.mixed;
        for (m, &(dev, physical)) in mirrors.iter_mut().zip(&chunk.stripes[..n]) {
            let p = part(dev);
            let member = &self.members[usize::from(dev)];
            *m = MirrorInfo {
                devid: u64::from(dev) + 1,
                present: true,
                physical,
                read_ios: p.read_ios,
                read_wait_ns: p.read_wait_ns,
                inflight: p.inflight,
                last_offset: p.last_offset,
                queue_depth: member.queue_depth,
                rotational: member.rotational,
            };
        }
        let Ok(mut req) = ReadRequest::new(&mirrors[..n], 0, n, pid) else {
            debug_assert!(false, "a chunk with {n} copies is a valid read range");
            return 0;
        };
        req.cpu = cpu;
        req.mixed_rotational = mixed;
        match find_live_mirror(&mut self.policy, &req) {
            Ok(i) => i,
            Err(e) => {
                self.contract_broken.get_or_insert_with(|| e.to_string());
                0
            }
        }
    }

    /// Every read bio, mirrored or not, advances round-robin's counter, in
    /// filesystem sectors (`SECTORSIZE`), as btrfs counts them.
    pub fn on_read_submitted(&mut self, bytes: u64) {
        self.policy.on_read_submitted(bytes.div_ceil(SECTORSIZE));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_tiering::{GIB, Pid};

    fn nvme() -> Member {
        Member {
            capacity: 100 * GIB,
            rotational: false,
            queue_depth: 32,
            hint: iolab_tiering::AllocHint::default(),
        }
    }

    /// Baroncelli's 20 GiB SSD and 230 GiB HDD.
    fn thread_devices() -> (Member, Member) {
        let ssd = Member {
            capacity: 20 * GIB,
            rotational: false,
            queue_depth: 32,
            hint: iolab_tiering::AllocHint::default(),
        };
        let hdd = Member {
            capacity: 230 * GIB,
            rotational: true,
            ..ssd
        };
        (ssd, hdd)
    }

    /// A volume with the stock allocator, mkfs placement.
    fn stock(profile: Profile, members: &[Member]) -> Result<Raid, RaidError> {
        Raid::build(
            profile,
            members,
            ReadPolicyImpl::Pid(Pid),
            AllocPolicy::default(),
            false,
        )
    }

    #[test]
    fn raid1_chunks_cover_the_smaller_device_with_two_copies() {
        let r = stock(Profile::Raid1, &[nvme(), nvme()]).unwrap();
        // 100 GiB devices: 10 GiB data chunks above a 50 GiB filesystem.
        assert!(r.chunks() >= 9, "{} chunks", r.chunks());
        assert!(r.capacity() >= 90 * GIB && r.capacity() <= 100 * GIB);
        let (c, left) = r.map(0).unwrap();
        assert_eq!((c.copies, c.logical, left), (2, 0, c.len));
        assert_ne!(c.stripes[0].0, c.stripes[1].0, "copies on two devices");
        let (c2, left2) = r.map(c.len + 4096).unwrap();
        assert_eq!((c2.logical, left2), (c.len, c2.len - 4096));
        assert!(r.map(r.capacity()).is_none());
    }

    #[test]
    fn pid_parity_picks_the_copy() {
        let mut r = stock(Profile::Raid1, &[nvme(), nvme()]).unwrap();
        let c = *r.map(0).unwrap().0;
        let parts = [PartStat::default(); 2];
        let picks: Vec<usize> = (0..4)
            .map(|k| r.choose(&c, |d| parts[usize::from(d)], PID_BASE + k, 0))
            .collect();
        assert_eq!(picks, vec![0, 1, 0, 1]);
        assert_eq!(r.choices, 4);
        // A 3/1 split: three even pids, one odd.
        r.set_pid_split(3, 1);
        let picks: Vec<usize> = (0..4)
            .map(|k| r.choose(&c, |d| parts[usize::from(d)], r.pid_of(k), 0))
            .collect();
        assert_eq!(picks, vec![0, 0, 0, 1]);
    }

    #[test]
    fn mkfs_puts_the_first_chunks_on_the_first_device() {
        let (ssd, hdd) = thread_devices();
        // Unbalanced, single: system, metadata and the first data chunk
        // on the device named first, whatever the allocator; the next data
        // chunk by the allocator (stock: the HDD, most free space).
        let r = stock(Profile::Single, &[ssd, hdd]).unwrap();
        let (system, meta) = r.mkfs_chunks();
        assert_eq!((system.stripes[0].0, meta.stripes[0].0), (0, 0));
        let first = *r.map(0).unwrap().0;
        assert_eq!(first.stripes[0].0, 0);
        assert_eq!(r.map(first.len).unwrap().0.stripes[0].0, 1);
        // Named the other way round, the HDD holds them.
        let r = stock(Profile::Single, &[hdd, ssd]).unwrap();
        assert_eq!(r.mkfs_chunks().1.stripes[0].0, 0);
        assert_eq!(r.map(0).unwrap().0.stripes[0].0, 0);
    }

    #[test]
    fn mkfs_chunks_follow_the_allocator_and_log_blocks_go_round() {
        let (ssd, hdd) = thread_devices();
        let build = |alloc: &str| {
            let iolab_tiering::PolicyChoice::Alloc(a) = iolab_tiering::parse_policy(alloc).unwrap()
            else {
                panic!("{alloc} is an allocator");
            };
            Raid::build(
                Profile::Single,
                &[ssd, hdd],
                ReadPolicyImpl::Pid(Pid),
                a,
                true,
            )
            .unwrap()
        };
        // Stock: the device with the most unallocated space (the HDD) gets
        // the metadata chunk and the first data chunks.
        let stock = build("alloc=stock");
        assert_eq!(stock.mkfs_chunks().1.stripes[0].0, 1);
        assert_eq!(stock.map(0).unwrap().0.stripes[0].0, 1);
        assert_eq!(stock.alloc_name(), "stock");
        // ssd-metadata: metadata on the SSD, data on the HDD.
        let mut tiered = build("alloc=ssd-metadata");
        let meta = *tiered.mkfs_chunks().1;
        assert_eq!(meta.stripes[0].0, 0);
        assert_eq!(tiered.map(0).unwrap().0.stripes[0].0, 1);
        // Log blocks: consecutive, then round to the chunk's start.
        let first: Vec<_> = tiered.log_blocks(3).collect();
        assert_eq!(first, vec![(0, meta.stripes[0].1, 3 * NODESIZE)]);
        let second: Vec<_> = tiered.log_blocks(1).collect();
        assert_eq!(
            second,
            vec![(0, meta.stripes[0].1 + 3 * NODESIZE, NODESIZE)]
        );
        let fill = meta.len / NODESIZE - 4;
        let _ = tiered.log_blocks(fill).count();
        let wrapped: Vec<_> = tiered.log_blocks(1).collect();
        assert_eq!(wrapped, vec![(0, meta.stripes[0].1, NODESIZE)]);
        // allocation-hint: the hints decide, here against free space.
        let iolab_tiering::PolicyChoice::Alloc(a) =
            iolab_tiering::parse_policy("alloc=allocation-hint").unwrap()
        else {
            panic!("an allocator");
        };
        let hinted = |ssd_hint, hdd_hint| {
            let s = Member {
                hint: ssd_hint,
                ..ssd
            };
            let h = Member {
                hint: hdd_hint,
                ..hdd
            };
            Raid::build(Profile::Single, &[s, h], ReadPolicyImpl::Pid(Pid), a, true).unwrap()
        };
        use iolab_tiering::AllocHint::{DataOnly, DataPreferred, MetadataOnly};
        let r = hinted(MetadataOnly, DataOnly);
        assert_eq!(r.mkfs_chunks().1.stripes[0].0, 0);
        assert_eq!(r.map(0).unwrap().0.stripes[0].0, 1);
        // No hints given: every device is DATA_PREFERRED, as stock.
        let r = hinted(DataPreferred, DataPreferred);
        assert_eq!(r.mkfs_chunks().1.stripes[0].0, 1);
    }

    #[test]
    fn striped_profiles_are_refused_by_name() {
        let e = stock(Profile::Raid0, &[nvme(), nvme()]).unwrap_err();
        assert!(e.to_string().contains("'raid0'"), "{e}");
    }
}
