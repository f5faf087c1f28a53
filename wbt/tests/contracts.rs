//! The scaling step is an extension point that holds its contract in every
//! build (this suite runs in the release profile in CI): a depth policy
//! whose answer breaks a rule gets a typed error naming the rule, and the
//! core keeps its depths.

use iolab_wbt::*;

const SSD: DeviceParams = DeviceParams {
    queue_depth: 32,
    rotational: false,
    write_cache: false,
};

/// What a user's policy gets wrong.
#[derive(Clone, Copy, Debug)]
enum Broken {
    /// Background above normal.
    Unordered,
    /// Deeper than the device's queue.
    Deep,
    /// Two steps down at once.
    Leap,
    /// Asked to squeeze, moves the step the other way.
    Backwards,
}

#[derive(Clone, Debug)]
struct Policy(Broken);

impl DepthPolicy for Policy {
    fn name(&self) -> &str {
        "broken"
    }

    fn limits(&self, queue_depth: u32, step: i32) -> DepthAt {
        let mut at = Variant::Modern.limits(queue_depth, step);
        match self.0 {
            Broken::Unordered => at.limits.background = at.limits.normal + 1,
            Broken::Deep if step > 0 => at.limits.max_depth = 2 * queue_depth,
            _ => {}
        }
        at
    }

    fn scale_up(&self, now: DepthNow) -> Option<i32> {
        Variant::Modern.scale_up(now)
    }

    fn scale_down(&self, now: DepthNow, hard: bool) -> Option<i32> {
        match self.0 {
            Broken::Leap => Some(now.step + 2),
            Broken::Backwards => Some(now.step - 1),
            _ => Variant::Modern.scale_down(now, hard),
        }
    }
}

fn core(b: Broken) -> Result<Wbt<LocalSlots, Policy>, DepthError> {
    Wbt::with_depth_policy(
        SSD,
        Variant::Modern,
        Options::default(),
        LocalSlots::default(),
        Policy(b),
    )
}

#[test]
fn unordered_depths_at_step_zero_refuse_the_controller() {
    let e = core(Broken::Unordered).unwrap_err();
    assert_eq!(e.rule, DepthRule::Ordered);
    assert_eq!((e.queue_depth, e.step, e.next_step), (32, 0, 0));
    let text = e.to_string();
    assert!(text.contains("background <= normal <= max_depth"), "{text}");
    assert!(
        text.contains("background 9 normal 8 max_depth 16"),
        "{text}"
    );
}

/// A refused step leaves the depths as they were and is kept, whatever
/// rule it broke.
#[test]
fn a_refused_step_keeps_the_depths_and_names_the_rule() {
    for (b, rule) in [
        (Broken::Deep, DepthRule::WithinQueue),
        (Broken::Leap, DepthRule::StepBounded),
        (Broken::Backwards, DepthRule::StepBounded),
    ] {
        let mut w = core(b).expect("step 0 keeps the rules");
        let before = w.limits();
        let out = w.apply_verdict(100_000_000, Verdict::Exceeded, 4);
        let e = out
            .refused
            .unwrap_or_else(|| panic!("{b:?} was not refused"));
        assert_eq!(e.rule, rule, "{b:?}");
        assert_eq!(out.stepped, None, "{b:?}");
        assert_eq!((w.step(), w.limits()), (0, before), "{b:?}");
        assert_eq!(w.depth_error(), Some(e), "{b:?}");
        assert_eq!(w.snapshot().depth_error, Some(e), "{b:?}");
    }
}

/// Our own variants go through the same checks and never break them:
/// every step from deepest to shallowest, on queues of 1 to 4096.
#[test]
fn our_variants_keep_every_rule_at_every_step() {
    for variant in [Variant::Modern, Variant::V5_2016] {
        for qd in (1..=64).chain([128, 1000, 4096]) {
            for step in -12..=40 {
                let at = variant.limits(qd, step);
                if let Err(e) = check_limits(qd, step, step, at) {
                    panic!("{variant:?}: {e}");
                }
            }
        }
    }
}
