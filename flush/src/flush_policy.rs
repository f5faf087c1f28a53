//! Which flush states reclaim walks for waiting tickets and when a
//! flusher may commit, as an extension point: [`FlushPolicy`]. Our
//! variants' [`Policy`] implements it, and the core asks it alone; the
//! walk is checked ([`WalkRule`]) when the model is built, in every
//! build.

use core::fmt;

use crate::state::states;
use crate::{FlushState, Policy};

/// What a flusher's `COMMIT_TRANS` state knows when it asks whether to
/// commit (kernel: what `may_commit_transaction` reads, 5.8–5.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommitView {
    /// The front ticket's bytes beyond the free space (0: it fits).
    pub need: u64,
    /// Bytes pinned by the running transaction, freed by its commit.
    pub pinned: u64,
    /// Bytes the delayed-item, delayed-ref and transaction reserves hold,
    /// given back by a commit.
    pub held: u64,
}

/// The flushing policy of waiting tickets: which flush states the async
/// reclaim worker walks, in order, and whether its `COMMIT_TRANS` state
/// commits. Everything else (the states' work, the ticket queue, the
/// preemptive worker, priority flushing) stays the core's.
///
/// The core asks [`states`](Self::states) once, when the model is built
/// ([`FlushModel::with_policy`](crate::FlushModel::with_policy)), and
/// refuses a walk that breaks a [`WalkRule`]; it asks
/// [`may_commit`](Self::may_commit) at every `COMMIT_TRANS` of the
/// reclaim worker and of priority flushers (not of the preemptive one,
/// which commits unconditionally).
pub trait FlushPolicy: Clone + fmt::Debug {
    /// A short name for messages.
    fn name(&self) -> &str;

    /// The flush states reclaim walks for waiting tickets, in order.
    fn states(&self) -> &[FlushState];

    /// Whether a flusher's `COMMIT_TRANS` commits now.
    fn may_commit(&self, view: &CommitView) -> bool;
}

/// A rule the reclaim walk must keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WalkRule {
    /// At least one state.
    NotEmpty,
    /// No state twice.
    NoRepeat,
    /// The walk ends with `COMMIT_TRANS`: only a commit frees pinned
    /// space, so a walk without it can fail tickets a commit would serve.
    EndsInCommit,
}

impl WalkRule {
    /// The rule in words.
    pub fn says(self) -> &'static str {
        match self {
            WalkRule::NotEmpty => "the walk has at least one state",
            WalkRule::NoRepeat => "no state appears twice",
            WalkRule::EndsInCommit => "the walk ends with COMMIT_TRANS",
        }
    }
}

/// Check a walk a policy gave.
pub fn check_walk(walk: &[FlushState]) -> Result<(), WalkRule> {
    if walk.is_empty() {
        return Err(WalkRule::NotEmpty);
    }
    for (k, s) in walk.iter().enumerate() {
        if walk[..k].contains(s) {
            return Err(WalkRule::NoRepeat);
        }
    }
    if walk.last() != Some(&FlushState::CommitTrans) {
        return Err(WalkRule::EndsInCommit);
    }
    Ok(())
}

/// The kernel eras' rules: the era's state list, and the 5.8–5.11
/// `may_commit_transaction` gate where the era has it (else commit
/// unconditionally).
impl FlushPolicy for Policy {
    fn name(&self) -> &str {
        match self.mode {
            crate::Mode::CatchUp => "catch-up",
            crate::Mode::OnDemand => "on-demand",
        }
    }

    fn states(&self) -> &[FlushState] {
        states(self.states)
    }

    fn may_commit(&self, view: &CommitView) -> bool {
        if !self.commit_gate {
            return true;
        }
        view.need > 0
            && (view.pinned >= view.need
                || view.held >= view.need
                || view.pinned >= view.need - view.held)
    }
}
