//! The scaling-step suite on our own variants (each passes) and on
//! deliberately wrong twins (each is caught, with the message a user
//! would see).

use iolab_verification::{failure_of, wbt::depth};
use iolab_wbt::{DepthAt, DepthNow, DepthPolicy, Variant};

#[test]
fn our_variants_pass() {
    for variant in [Variant::Modern, Variant::V5_2016] {
        let c = depth::check(|| variant);
        assert!(c.outputs > 10 * c.cases, "{variant:?}: {c:?}");
        depth::differential(|| variant, || variant);
    }
}

/// What a wrong twin of the kernel's policy gets wrong.
#[derive(Clone, Copy, Debug)]
enum Wrong {
    /// Background above normal once squeezed.
    Unordered,
    /// Steps down by two.
    Leaps,
    /// Never relaxes after a squeeze.
    NeverRecovers,
    /// Stops squeezing at step 1.
    Shallow,
}

#[derive(Clone, Debug)]
struct Twin(Wrong);

impl DepthPolicy for Twin {
    fn name(&self) -> &str {
        "twin"
    }

    fn limits(&self, queue_depth: u32, step: i32) -> DepthAt {
        let mut at = Variant::Modern.limits(queue_depth, step);
        if let Wrong::Unordered = self.0
            && step > 1
        {
            at.limits.background = at.limits.max_depth;
        }
        at
    }

    fn scale_up(&self, now: DepthNow) -> Option<i32> {
        match self.0 {
            Wrong::NeverRecovers if now.step > 0 => None,
            _ => Variant::Modern.scale_up(now),
        }
    }

    fn scale_down(&self, now: DepthNow, hard: bool) -> Option<i32> {
        match self.0 {
            Wrong::Leaps if now.step >= 0 && now.limits.max_depth > 2 => Some(now.step + 2),
            Wrong::Shallow if now.step >= 1 => None,
            _ => Variant::Modern.scale_down(now, hard),
        }
    }
}

fn caught(w: Wrong) -> String {
    let why = failure_of(|| depth::check(|| Twin(w))).expect("the suite passed a wrong twin");
    eprintln!("{w:?}:\n{why}\n");
    why
}

#[test]
fn wrong_twins_are_caught_with_the_rule_and_a_shrunk_case() {
    let why = caught(Wrong::Unordered);
    assert!(why.contains("background <= normal <= max_depth"), "{why}");
    assert!(
        why.contains("smallest case") && why.contains("IOLAB_CHECK_SEED="),
        "{why}"
    );
    let why = caught(Wrong::Leaps);
    assert!(why.contains("a step moves by one"), "{why}");
    let why = caught(Wrong::NeverRecovers);
    assert!(why.contains("left the step at"), "{why}");
    let why = caught(Wrong::Shallow);
    assert!(why.contains("exceeded windows left max_depth"), "{why}");
}

#[test]
fn the_differential_names_the_first_diverging_window() {
    let why = failure_of(|| depth::differential(|| Variant::V5_2016, || Variant::Modern))
        .expect("v5 and modern differ");
    eprintln!("{why}");
    assert!(why.contains("where 'wbt' gives"), "{why}");
    assert!(
        why.contains("at the start") || why.contains("after window"),
        "{why}"
    );
}
