//! Block-reserve operations on the live state (kernel: `block-rsv.c`,
//! `delayed-ref.c` rsv helpers): release with its routing of the excess,
//! using reserved bytes for COW, moving fresh grants in.

use crate::FlushPolicy;
use crate::{FlushModel, RsvKind};

impl<P: FlushPolicy> FlushModel<P> {
    pub(crate) fn rsv_mut(&mut self, kind: RsvKind) -> &mut crate::space::Rsv {
        match kind {
            RsvKind::Global => &mut self.global,
            RsvKind::DelayedRefs => &mut self.delayed_refs,
            RsvKind::DelayedItems => &mut self.delayed_items,
            RsvKind::Trans => &mut self.trans,
        }
    }

    /// Where the excess of a release from `from` goes first (kernel:
    /// `btrfs_block_rsv_release`): 5.0+ the delayed-ref reserve feeds the
    /// global one and every other non-global reserve feeds the delayed-ref
    /// reserve; up to 4.20 every non-global reserve fed the global one.
    const fn route_target(legacy: bool, from: RsvKind) -> Option<RsvKind> {
        match from {
            RsvKind::Global => None,
            RsvKind::DelayedRefs => Some(RsvKind::Global),
            _ if legacy => Some(RsvKind::Global),
            _ => Some(RsvKind::DelayedRefs),
        }
    }

    /// `release(rsv, b)`: shrink the reserve by `b`; bytes it then holds
    /// beyond its size first fill the routing target's deficit, the rest
    /// leaves `may_use` (and may grant tickets).
    pub(crate) fn release_rsv(&mut self, kind: RsvKind, bytes: u64) {
        let rsv = self.rsv_mut(kind);
        rsv.size -= bytes.min(rsv.size);
        let excess = rsv.reserved.saturating_sub(rsv.size);
        rsv.reserved -= excess;
        rsv.set_full();
        debug_assert!(rsv.reserved <= rsv.size);
        let left = match Self::route_target(self.policy.legacy, kind) {
            Some(target) => self.fill(target, excess),
            None => excess,
        };
        self.free_may_use(left);
    }

    /// Put up to `bytes` (already counted in `may_use`) into `kind`'s
    /// deficit; returns what did not fit.
    pub(crate) fn fill(&mut self, kind: RsvKind, bytes: u64) -> u64 {
        let rsv = self.rsv_mut(kind);
        let give = bytes.min(rsv.deficit());
        rsv.reserved += give;
        rsv.set_full();
        bytes - give
    }

    /// Bytes leave `may_use`: a space return, so waiting tickets may fit
    /// now (kernel: `btrfs_space_info_free_bytes_may_use`).
    pub(crate) fn free_may_use(&mut self, bytes: u64) {
        if bytes == 0 {
            return;
        }
        debug_assert!(self.space.may_use >= bytes, "may_use underflow");
        self.space.may_use -= bytes;
        self.try_grant();
    }

    /// A fresh grant moves into the delayed-ref reserve, capped at its
    /// deficit; the rest is returned (kernel: `btrfs_migrate_to_delayed_refs_rsv`).
    pub(crate) fn migrate_to_delayed_refs(&mut self, bytes: u64) {
        let left = self.fill(RsvKind::DelayedRefs, bytes);
        self.free_may_use(left);
    }

    /// COW of `bytes` of tree blocks: the new blocks are paid from the
    /// delayed-ref reserve (`from_refs`) or the trans reserve, then the
    /// global reserve; the old blocks become pinned until the commit.
    /// Bytes no reserve covers are counted in `uncovered_meta`.
    pub(crate) fn use_meta(&mut self, bytes: u64, from_refs: bool) {
        if bytes == 0 {
            return;
        }
        let first = if from_refs && !self.policy.legacy {
            Some(RsvKind::DelayedRefs)
        } else if from_refs {
            None
        } else {
            Some(RsvKind::Trans)
        };
        let mut left = bytes;
        for kind in [first, Some(RsvKind::Global)].into_iter().flatten() {
            let rsv = self.rsv_mut(kind);
            let take = left.min(rsv.reserved);
            rsv.reserved -= take;
            rsv.set_full();
            left -= take;
        }
        let covered = bytes - left;
        debug_assert!(
            self.space.may_use >= covered,
            "COW paid from bytes not in may_use"
        );
        self.space.may_use -= covered;
        // Saturating: only absurd configurations (`meta_per_head` near
        // 2^60) could reach the top, and they must not panic.
        self.uncovered_meta = self.uncovered_meta.saturating_add(left);
        self.space.pinned = self.space.pinned.saturating_add(bytes);
        if let Some(t) = self.txn.as_mut() {
            t.pinned = t.pinned.saturating_add(bytes);
            t.dirty_meta = t.dirty_meta.saturating_add(bytes);
        } else if let Some(w) = self.writing.as_mut() {
            w.pinned = w.pinned.saturating_add(bytes);
        }
    }
}
