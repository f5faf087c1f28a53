//! Weights to hierarchical weights, for the flat hierarchy: the
//! root and its leaves. `hwa` is a group's share of the device by `active`
//! weight, `hwi` by `inuse` weight (what it keeps after donating), `hwm`
//! what its `hwi` would be with `inuse` raised back to `active`.
//!
//! Like the kernel, computed hweights are cached per group and tagged with a
//! generation that `commit_weights` bumps; a weight change made with
//! `propagate_weights_nocommit` is therefore invisible to groups whose cache
//! is still current until the next commit. The period timer relies on this
//! (its donation pass works from the weights as they were when it started).

use crate::CostModel;
use crate::consts::WEIGHT_ONE;
use crate::ioc::{IoCost, Now, Variant};
use crate::units::{div_ceil, div_floor, vdiff};

impl<M: CostModel> IoCost<M> {
    /// `current_hweight`: `(hwa, hwi)` of group `i`, from the cache when its
    /// generation is current.
    pub(crate) fn current_hweight(&mut self, i: usize) -> (u32, u32) {
        let gen_ = self.hweight_gen;
        let (sa, si) = (self.child_active_sum, self.child_inuse_sum);
        let g = &mut self.groups[i];
        if g.hweight_gen != gen_ {
            let mut hwa = WEIGHT_ONE;
            let mut hwi = WEIGHT_ONE;
            if sa != 0 && si != 0 {
                let asum = sa.max(u64::from(g.active));
                let isum = si.max(u64::from(g.inuse));
                hwa = div_floor(u128::from(hwa) * u128::from(g.active), u128::from(asum)) as u32;
                hwi = div_floor(u128::from(hwi) * u128::from(g.inuse), u128::from(isum)) as u32;
            }
            g.hwa = hwa.max(1);
            g.hwi = hwi.max(1);
            g.hweight_gen = gen_;
        }
        debug_assert!(g.hwa >= 1 && g.hwa <= WEIGHT_ONE && g.hwi >= 1 && g.hwi <= WEIGHT_ONE);
        (g.hwa, g.hwi)
    }

    /// `current_hweight_max`: the `hwi` group `i` would have with its
    /// `inuse` at `active`, everyone else unchanged. Always computed live.
    pub(crate) fn current_hweight_max(&self, i: usize) -> u32 {
        let g = &self.groups[i];
        let inuse_sum =
            (self.child_inuse_sum + u64::from(g.active)).saturating_sub(u64::from(g.inuse));
        let hwm = div_floor(
            u128::from(WEIGHT_ONE) * u128::from(g.active),
            u128::from(inuse_sum),
        );
        hwm.clamp(1, u64::from(WEIGHT_ONE)) as u32
    }

    /// `__propagate_weights` for a leaf under the root: sets `active` and
    /// `inuse` (clamped to `[1, active]`; on deactivation 1 in the modern
    /// kernel, 0 in the 2019 one), updates the
    /// root's sums, and remembers the previous `inuse` in `last_inuse`. With
    /// `save`, snapshots the budget into `saved_margin` so that the issue
    /// path bumps `inuse` again only once the budget has shrunk since.
    pub(crate) fn propagate_weights_nocommit(
        &mut self,
        i: usize,
        active: u32,
        inuse: u32,
        save: bool,
        now: &Now,
    ) {
        let inuse = match self.variant {
            // Mainline since v6.13 ("Avoid using clamp() on inuse"): at most
            // `active`, and 1 when that is 0, so a deactivated group leaves
            // an inuse of 1 in its parent's sum.
            Variant::Modern => match inuse.min(active) {
                0 => 1,
                v => v,
            },
            // The older clamp on an empty range yields `active`, i.e. 0.
            Variant::V5_4 => inuse.max(1).min(active),
        };
        let g = &mut self.groups[i];
        g.last_inuse = g.inuse;
        if save {
            g.saved_margin = vdiff(now.vnow, g.vtime);
        }
        if active == g.active && inuse == g.inuse {
            return;
        }
        self.child_active_sum = self.child_active_sum + u64::from(active) - u64::from(g.active);
        self.child_inuse_sum = self.child_inuse_sum + u64::from(inuse) - u64::from(g.inuse);
        g.active = active;
        g.inuse = inuse;
        self.weights_updated = true;
    }

    /// `commit_weights`: make pending weight changes visible to every
    /// group's next `current_hweight`.
    pub(crate) fn commit_weights(&mut self) {
        if self.weights_updated {
            self.hweight_gen = self.hweight_gen.wrapping_add(1);
            self.weights_updated = false;
        }
    }

    /// `propagate_weights`: change and commit.
    pub(crate) fn propagate_weights(
        &mut self,
        i: usize,
        active: u32,
        inuse: u32,
        save: bool,
        now: &Now,
    ) {
        self.propagate_weights_nocommit(i, active, inuse, save, now);
        self.commit_weights();
    }

    /// `weight_updated`: the configured weight of group `i` changed.
    pub(crate) fn weight_updated(&mut self, i: usize, now: &Now) {
        let g = &self.groups[i];
        let weight = if g.cfg_weight != 0 {
            g.cfg_weight
        } else {
            g.dfl_weight
        };
        if weight != g.weight && g.active != 0 {
            // Modern kernels keep inuse as is; the 2019 code scaled it with
            // the weight (rounding up).
            let inuse = match self.variant {
                Variant::Modern => g.inuse,
                Variant::V5_4 => div_ceil(
                    u128::from(g.inuse) * u128::from(weight),
                    u128::from(g.weight.max(1)),
                ) as u32,
            };
            self.propagate_weights(i, weight, inuse, true, now);
        }
        self.groups[i].weight = weight;
    }

    /// Used by the donation transfer: `inuse` giving a donor exactly its
    /// after-donation hweight given the adjusted weight sum.
    pub(crate) fn inuse_for(adjusted_sum: u64, after: u32) -> u32 {
        div_ceil(
            u128::from(adjusted_sum) * u128::from(after),
            u128::from(WEIGHT_ONE),
        )
        .min(u64::from(u32::MAX)) as u32
    }
}
