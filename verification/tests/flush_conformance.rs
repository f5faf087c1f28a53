//! The flush-policy suite on our kernel eras (each passes) and on
//! deliberately wrong twins (each is caught, with the message a user
//! would see).

use iolab_flush::{
    CommitView, Config, ConfigError, FlushModel, FlushPolicy, FlushState, Policy, WalkRule,
    parse_policy,
};
use iolab_verification::{failure_of, flush::policy};

#[test]
fn our_eras_pass() {
    for spec in [
        "flush=catch-up",
        "flush=catch-up:run-at-end=on",
        "flush=on-demand",
        "flush=on-demand:preempt=2021",
    ] {
        let p = parse_policy(spec).expect("a known era");
        let c = policy::check(move || p);
        assert!(c.outputs > c.cases, "{spec}: {c:?}");
    }
    let od = Policy::on_demand();
    policy::differential(move || od, move || od);
}

/// What a wrong twin of the on-demand policy gets wrong.
#[derive(Clone, Debug)]
enum Wrong {
    /// Never lets a flusher commit.
    NeverCommits,
    /// A walk without `COMMIT_TRANS`.
    NoCommitState,
}

impl FlushPolicy for Wrong {
    fn name(&self) -> &str {
        "wrong"
    }

    fn states(&self) -> &[FlushState] {
        match self {
            Wrong::NeverCommits => iolab_flush::state::STATES_CURRENT,
            Wrong::NoCommitState => &[FlushState::DelayedRefs, FlushState::Delalloc],
        }
    }

    fn may_commit(&self, view: &CommitView) -> bool {
        match self {
            Wrong::NeverCommits => false,
            Wrong::NoCommitState => Policy::on_demand().may_commit(view),
        }
    }
}

#[test]
fn wrong_twins_are_caught() {
    let why = failure_of(|| policy::check(|| Wrong::NeverCommits)).expect("caught");
    eprintln!("{why}");
    assert!(why.contains("though a commit would free"), "{why}");
    let why = failure_of(|| policy::check(|| Wrong::NoCommitState)).expect("caught");
    eprintln!("{why}");
    assert!(why.contains("the walk ends with COMMIT_TRANS"), "{why}");
}

/// The core refuses such a walk in every build, when the model is built.
#[test]
fn a_walk_without_commit_is_refused_at_construction() {
    let e = FlushModel::with_policy(Config::default(), Wrong::NoCommitState).unwrap_err();
    assert_eq!(e, ConfigError::Walk(WalkRule::EndsInCommit));
}

#[test]
fn the_differential_names_the_first_diverging_decision() {
    let od = Policy::on_demand();
    let never = Wrong::NeverCommits;
    let why = failure_of(|| policy::differential(move || never.clone(), move || od))
        .expect("a flusher that never commits decides otherwise");
    eprintln!("{why}");
    assert!(why.contains("where 'on-demand' decides"), "{why}");
    assert!(why.contains("decision "), "{why}");
}
