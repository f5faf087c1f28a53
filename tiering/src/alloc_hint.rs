//! Per-device allocation hints: Goffredo Baroncelli's `allocation_hint`
//! series, V6-V12 (February 2021 to March 2022), and kakra's port with the
//! `NONE` hint and the fixed-width mirror rule.

use alloc::vec::Vec;

use crate::{AllocHint, Candidate, ChunkAllocator, ChunkType, SelectRequest, sort_by_free_space};

/// How many devices to take from the tiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum HintMode {
    /// V12: add whole tiers until `devs_min` is reached, then re-sort the
    /// union by free space. A preferred device can lose to emptier
    /// devices of a lower tier.
    #[default]
    V12,
    /// kakra's later port: for RAID1/C3/C4 take the higher tiers whole and
    /// only as many of the last needed tier as are missing, then sort the
    /// selection by free space; other profiles keep the V12 rule.
    Kakra,
}

/// Tier key of a device for a chunk type, `None` when the hint excludes it
/// (the series' table). Mixed chunks give every device key 0.
pub const fn hint_key(hint: AllocHint, ty: ChunkType) -> Option<i8> {
    match ty {
        ChunkType::Mixed => Some(0),
        ChunkType::Metadata | ChunkType::System => match hint {
            AllocHint::DataPreferred => Some(0),
            AllocHint::MetadataPreferred => Some(1),
            AllocHint::MetadataOnly => Some(2),
            AllocHint::DataOnly | AllocHint::None => None,
        },
        ChunkType::Data => match hint {
            AllocHint::DataPreferred => Some(0),
            AllocHint::MetadataPreferred => Some(-1),
            AllocHint::DataOnly => Some(1),
            AllocHint::MetadataOnly | AllocHint::None => None,
        },
    }
}

/// The `allocation_hint` placement. Resulting fallback order: metadata
/// goes to METADATA_ONLY, then METADATA_PREFERRED, then DATA_PREFERRED
/// devices, never DATA_ONLY; data to DATA_ONLY, DATA_PREFERRED,
/// METADATA_PREFERRED, never METADATA_ONLY; NONE gets nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct AllocationHint {
    /// Tier rule.
    pub mode: HintMode,
}

impl ChunkAllocator for AllocationHint {
    fn name(&self) -> &'static str {
        "allocation-hint"
    }

    fn honours_hints(&self) -> bool {
        true
    }

    fn select(&self, req: &SelectRequest, cands: &mut Vec<Candidate>) {
        // Step 1: exclusion and keys.
        cands.retain(|c| hint_key(c.hint, req.ty).is_some());
        for c in cands.iter_mut() {
            c.key = hint_key(c.hint, req.ty).unwrap_or(0);
        }
        // Step 2: tiers, highest key first, free space inside a tier.
        cands.sort_unstable_by(|a, b| b.key.cmp(&a.key).then_with(|| crate::cmp_free_space(a, b)));
        // Step 3: how many to keep.
        let min = req.devs_min as usize;
        let keep = if self.mode == HintMode::Kakra && req.profile.is_fixed_width_mirror() {
            // Whole higher tiers plus the best of the last one: a prefix.
            min.min(cands.len())
        } else {
            let mut i = 0;
            while i < cands.len() && i < min {
                let k = cands[i].key;
                while i < cands.len() && cands[i].key == k {
                    i += 1;
                }
            }
            i
        };
        cands.truncate(keep);
        // Step 4: forget the tiers, free-space order for the stripe step.
        for c in cands.iter_mut() {
            c.key = 0;
        }
        sort_by_free_space(cands);
    }
}
