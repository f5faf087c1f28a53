//! The device-choice decision of chunk allocation as a trait, and the
//! stock allocator (the hook after the candidate sort of
//! `gather_device_info`, where the tiering variants differ; identity in
//! mainline).

use alloc::vec::Vec;

use crate::{
    AllocError, AllocationHint, Candidate, Chunk, ChunkType, Profile, SizeRules, SsdMetadata,
    Volume,
};

/// What the hook knows about the chunk being allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SelectRequest {
    /// Chunk type (never [`ChunkType::Mixed`]: mixed chunks bypass every
    /// variant).
    pub ty: ChunkType,
    /// Profile.
    pub profile: Profile,
    /// Fewest devices the profile needs (after the minima choice).
    pub devs_min: u32,
}

/// One chunk-placement policy: the step between sorting the gathered
/// devices by free space and cutting the list to the chunk's width.
///
/// `select` receives the candidates in stock order (`max_avail`,
/// `total_avail` descending, devid ascending) and may drop and reorder
/// them; the allocator then uses the first `ndevs` that remain, and the
/// *last* of those bounds the stripe size. It must not add candidates or
/// change their numbers other than `key`.
pub trait ChunkAllocator {
    /// Name as the command line spells it (`stock`, `ssd-metadata`, ...).
    fn name(&self) -> &'static str;

    /// Size-rule generation this allocator runs with.
    fn size_rules(&self) -> SizeRules {
        SizeRules::Mainline
    }

    /// The hook (after the candidate sort, before the width cut). It may
    /// reorder the candidates, drop some and set their `key`; it may not
    /// give a device twice, point a candidate at another device or index,
    /// or move or grow a hole beyond what was gathered. The volume checks
    /// that in every build and refuses a broken selection with
    /// [`AllocError::BadSelection`](crate::AllocError::BadSelection)
    /// naming the [`SelectionRule`](crate::SelectionRule), placing nothing.
    fn select(&self, req: &SelectRequest, cands: &mut Vec<Candidate>);

    /// Whether the allocator places chunks by the devices' allocation
    /// hints: then no chunk goes on a device whose hint excludes its
    /// type ([`hint_key`](crate::hint_key): metadata and system never on
    /// `DATA_ONLY` or `NONE`, data never on `METADATA_ONLY` or `NONE`).
    /// `false`, the default, for an allocator that ignores hints.
    fn honours_hints(&self) -> bool {
        false
    }

    /// Allocates one chunk on `volume` (kernel: `btrfs_create_chunk`).
    fn alloc_chunk(
        &self,
        volume: &mut Volume,
        ty: ChunkType,
        profile: Profile,
    ) -> Result<Chunk, AllocError> {
        volume.alloc_chunk(self, ty, profile)
    }
}

/// Mainline placement: most free space first, nothing else (kernel: the
/// plain `gather_device_info` order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stock;

impl ChunkAllocator for Stock {
    fn name(&self) -> &'static str {
        "stock"
    }

    fn select(&self, _req: &SelectRequest, _cands: &mut Vec<Candidate>) {}
}

/// The placement variants by value, so a simulator can hold any of them
/// without dynamic dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocVariant {
    /// [`Stock`].
    Stock,
    /// [`SsdMetadata`].
    SsdMetadata(SsdMetadata),
    /// [`AllocationHint`].
    AllocationHint(AllocationHint),
}

/// A configured allocator: a variant plus the size-rule generation (the
/// `sizing=` knob), as [`parse_policy`](crate::parse_policy) returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocPolicy {
    /// Which placement rule.
    pub variant: AllocVariant,
    /// Which size rules.
    pub rules: SizeRules,
}

impl Default for AllocPolicy {
    fn default() -> Self {
        AllocPolicy {
            variant: AllocVariant::Stock,
            rules: SizeRules::Mainline,
        }
    }
}

impl ChunkAllocator for AllocPolicy {
    fn name(&self) -> &'static str {
        match &self.variant {
            AllocVariant::Stock => Stock.name(),
            AllocVariant::SsdMetadata(v) => v.name(),
            AllocVariant::AllocationHint(v) => v.name(),
        }
    }

    fn size_rules(&self) -> SizeRules {
        self.rules
    }

    fn select(&self, req: &SelectRequest, cands: &mut Vec<Candidate>) {
        match &self.variant {
            AllocVariant::Stock => Stock.select(req, cands),
            AllocVariant::SsdMetadata(v) => v.select(req, cands),
            AllocVariant::AllocationHint(v) => v.select(req, cands),
        }
    }

    fn honours_hints(&self) -> bool {
        match &self.variant {
            AllocVariant::Stock => Stock.honours_hints(),
            AllocVariant::SsdMetadata(v) => v.honours_hints(),
            AllocVariant::AllocationHint(v) => v.honours_hints(),
        }
    }
}
