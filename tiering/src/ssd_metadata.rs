//! Metadata on non-rotational devices: Goffredo Baroncelli's
//! `ssd_metadata` mount option, RFC V1-V3 of April 2020. The
//! patches replaced the sort of `gather_device_info` with a class-first
//! sort and cut the list to the preferred class when it is large enough.

use alloc::vec::Vec;

use crate::{Candidate, ChunkAllocator, SelectRequest, cmp_free_space};

/// Which posting's comparison to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SsdMetadataRev {
    /// RFC V1 (1 April 2020): restricts only when the preferred class has
    /// **more** than `devs_min` members (`>`), so a class of exactly
    /// `devs_min` devices (two SSDs for RAID1 metadata) still spills onto
    /// the other class.
    V1,
    /// V2 and V3 (5 April 2020), algorithmically identical: restricts when
    /// the class has at least `devs_min` members (`>=`).
    #[default]
    V3,
}

/// The `ssd_metadata` placement.
///
/// DATA chunks prefer rotational devices, METADATA and SYSTEM chunks
/// non-rotational ones. Candidates are sorted preferred class first, then
/// by free space. If the preferred class alone has enough members for the
/// profile (raw count, before rounding to `devs_increment`), the others
/// are dropped; otherwise everyone stays, preferred class first, so a
/// chunk may span both classes (the "classic" fallback). A full class
/// leaves the gather step, which is how spill-over happens in practice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SsdMetadata {
    /// Posting.
    pub rev: SsdMetadataRev,
    /// Zygo Blaxell's strict variant: always cut to the preferred class,
    /// so a too-small class gives ENOSPC instead of spill-over.
    pub strict: bool,
}

impl SsdMetadata {
    /// Whether a candidate is of the class this chunk type prefers.
    fn preferred(req: &SelectRequest, c: &Candidate) -> bool {
        if req.ty.is_metadata_like() {
            !c.rotational
        } else {
            c.rotational
        }
    }
}

impl ChunkAllocator for SsdMetadata {
    fn name(&self) -> &'static str {
        "ssd-metadata"
    }

    fn select(&self, req: &SelectRequest, cands: &mut Vec<Candidate>) {
        cands.sort_unstable_by(|a, b| {
            let pa = Self::preferred(req, a);
            let pb = Self::preferred(req, b);
            pb.cmp(&pa).then_with(|| cmp_free_space(a, b))
        });
        let n_pref = cands.iter().filter(|c| Self::preferred(req, c)).count();
        let min = req.devs_min as usize;
        let restrict = self.strict
            || match self.rev {
                SsdMetadataRev::V1 => n_pref > min,
                SsdMetadataRev::V3 => n_pref >= min,
            };
        if restrict {
            cands.truncate(n_pref);
        }
        debug_assert!(
            cands
                .windows(2)
                .all(|w| Self::preferred(req, &w[0]) || !Self::preferred(req, &w[1])),
            "preferred class first"
        );
    }
}
