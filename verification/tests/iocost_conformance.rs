//! The cost-model suite on the kernel's linear model (it passes) and on
//! deliberately wrong twins (each is caught, with the message a user
//! would see).

use iolab_iocost::{CostModel, Lcoefs, Linear, Op};
use iolab_verification::{failure_of, iocost::cost_model};

#[test]
fn the_linear_model_passes() {
    let c = cost_model::check(|| Linear);
    assert!(c.cases >= 1, "{c:?}");
    cost_model::differential(|| Linear, || Linear);
}

/// What a wrong twin of the linear model gets wrong.
#[derive(Clone, Debug)]
enum Wrong {
    /// Writes are free.
    FreeWrites,
    /// Prices past the controller's bound.
    Huge,
    /// Prices by a counter its instances share: fresh twins differ.
    Drifting,
}

static DRIFT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl CostModel for Wrong {
    fn name(&self) -> &str {
        "wrong"
    }

    fn abs_cost(&self, linear: &Lcoefs, op: Op, sectors: u64, sector: u64, cursor: u64) -> u64 {
        let base = Linear.abs_cost(linear, op, sectors, sector, cursor);
        match self {
            Wrong::FreeWrites if op == Op::Write => 0,
            Wrong::Huge => u64::MAX,
            Wrong::Drifting => {
                base + DRIFT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 7 * (base / 2)
            }
            _ => base,
        }
    }
}

#[test]
fn wrong_twins_are_caught() {
    for (w, says) in [
        (Wrong::FreeWrites, "priced at 0 (uncontrolled)"),
        (Wrong::Huge, "above the most a bio may cost"),
        (Wrong::Drifting, "not deterministic"),
    ] {
        let why = failure_of(|| cost_model::check(|| w.clone())).expect("caught");
        eprintln!("{w:?}:\n{why}\n");
        assert!(why.contains(says), "{w:?}: {why}");
        assert!(why.contains("smallest case"), "{why}");
    }
}

/// The linear model, a page dearer.
#[derive(Clone, Debug)]
struct Dearer;

impl CostModel for Dearer {
    fn name(&self) -> &str {
        "dearer"
    }

    fn abs_cost(&self, linear: &Lcoefs, op: Op, sectors: u64, sector: u64, cursor: u64) -> u64 {
        Linear.abs_cost(linear, op, sectors, sector, cursor) + linear.read.page
    }
}

#[test]
fn the_differential_names_the_first_bio_priced_differently() {
    let why = failure_of(|| cost_model::differential(|| Dearer, || Linear)).expect("differs");
    eprintln!("{why}");
    assert!(why.contains("bio 0 ("), "{why}");
    assert!(why.contains("where 'linear' prices"), "{why}");
}
