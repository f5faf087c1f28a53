//! The window-expiry entries: [`Wbt::expire_window`], [`Wbt::evaluate_window`],
//! [`Wbt::apply_verdict`] and [`Wbt::resume_at`].

use std::vec;
use std::vec::Vec;

use proptest::prelude::*;

use super::*;

const MS: u64 = 1_000_000;

fn core(qd: u32) -> Wbt {
    Wbt::new(
        DeviceParams {
            queue_depth: qd,
            rotational: false,
            write_cache: false,
        },
        Variant::Modern,
    )
}

fn stat(samples: &[u64]) -> WindowStat {
    let mut s = WindowStat::EMPTY;
    for &v in samples {
        s.add(v);
    }
    s
}

fn inputs(read: &[u64], writes: u32, inflight: u32) -> WindowInputs {
    WindowInputs {
        read: stat(read),
        write: stat(&vec![MS; writes as usize]),
        stuck_read_ns: 0,
        recent_dirty_wait: false,
        inflight,
    }
}

fn traces(w: &mut Wbt) -> Vec<TraceRecord> {
    core::iter::from_fn(|| w.poll_trace()).collect()
}

/// One window as a test draws it: read latencies, write completions.
fn window_strategy() -> impl Strategy<Value = (Vec<u64>, u32)> {
    (
        prop::collection::vec(
            prop_oneof![Just(100_000u64), Just(5 * MS), 1u64..10 * MS],
            0..4,
        ),
        0u32..6,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Fed the statistics the core gathered itself, `expire_window` does
    /// exactly what `on_timer` does: same traces, same state after.
    #[test]
    fn expire_window_with_the_cores_own_inputs_is_on_timer(
        windows in prop::collection::vec(window_strategy(), 1..40),
        qd in prop_oneof![Just(1u32), Just(2), Just(32), Just(128)],
    ) {
        let mut by_timer = core(qd);
        let mut by_inputs = core(qd);
        let mut now = 0;
        for (k, (reads, writes)) in windows.iter().enumerate() {
            // Arm both with one tracked write each, then complete it.
            for w in [&mut by_timer, &mut by_inputs] {
                let Admit::Go(flags) = w.on_throttle(now, Op::Write, OpFlags::SYNC) else {
                    panic!("an idle class admits");
                };
                let rq = Rq { id: k as u64, op: Op::Write, flags };
                w.on_issue(now, rq);
                w.on_done(now + 1, rq, None);
            }
            let deadline = by_timer.next_deadline().expect("armed");
            prop_assert_eq!(by_inputs.next_deadline(), Some(deadline));
            let t = deadline - 1;
            for (i, lat) in reads.iter().enumerate() {
                let rq = Rq { id: 10_000 + i as u64, op: Op::Read, flags: ReqFlags::READ };
                by_timer.on_done(t, rq, Some(t - lat));
            }
            for i in 0..*writes {
                let rq = Rq { id: 20_000 + u64::from(i), op: Op::Write, flags: ReqFlags::NONE };
                by_timer.on_done(t, rq, Some(t - MS));
            }
            by_timer.on_timer(deadline);
            let outcome = by_inputs.expire_window(deadline, &inputs(reads, *writes, 0));
            prop_assert_eq!(traces(&mut by_timer), traces(&mut by_inputs));
            prop_assert_eq!(by_timer.snapshot(), by_inputs.snapshot());
            prop_assert_eq!(outcome.step, by_timer.step());
            prop_assert_eq!(outcome.limits, by_timer.limits());
            now = deadline + 1;
        }
    }
}

#[test]
fn evaluate_window_changes_nothing_and_traces_nothing() {
    let mut w = core(32);
    let before = w.snapshot();
    assert_eq!(
        w.evaluate_window(&inputs(&[5 * MS], 3, 0)),
        Verdict::Exceeded
    );
    assert_eq!(w.evaluate_window(&inputs(&[MS], 3, 0)), Verdict::Ok);
    assert_eq!(
        w.evaluate_window(&inputs(&[], 3, 0)),
        Verdict::UnknownWrites
    );
    assert_eq!(w.evaluate_window(&inputs(&[], 0, 0)), Verdict::Unknown);
    assert_eq!(
        w.evaluate_window(&inputs(&[], 0, 4)),
        Verdict::UnknownWrites
    );
    assert_eq!(w.snapshot(), before);
    assert!(w.poll_trace().is_none());
}

#[test]
fn the_outcome_reports_the_step_and_the_expired_windows_length() {
    let mut w = core(32);
    let o = w.expire_window(100 * MS, &inputs(&[5 * MS], 3, 1));
    assert_eq!(o.verdict, Verdict::Exceeded);
    assert_eq!((o.step_before, o.step), (0, 1));
    assert_eq!(o.stepped, Some(StepDir::Down));
    assert_eq!(o.window_ns, 100 * MS, "the window that expired");
    assert_eq!(
        (o.limits.max_depth, o.limits.normal, o.limits.background),
        (8, 4, 2)
    );
    assert!(o.rearmed);
    let o = w.expire_window(200 * MS, &inputs(&[5 * MS], 3, 0));
    assert_eq!(o.window_ns, window_ns(1), "armed at step 1");
    assert_eq!(o.step, 2);
}

#[test]
fn a_stuck_read_decides_against_the_window_of_the_current_step_when_none_was_armed() {
    let mut w = core(32);
    w.resume_at(2, 0);
    assert_eq!(w.next_deadline(), None);
    // window_ns(2) = 59.26 ms: a read stuck 62 ms exceeds it even with reads.
    assert_eq!(window_ns(2), 59_259_259);
    let mut i = inputs(&[MS], 3, 0);
    i.stuck_read_ns = 62 * MS;
    let o = w.expire_window(0, &i);
    assert_eq!(o.verdict, Verdict::Exceeded);
    assert_eq!(o.window_ns, window_ns(2));
    // 55 ms does not, and the window's reads are fine.
    w.resume_at(2, 0);
    i.stuck_read_ns = 55 * MS;
    assert_eq!(w.expire_window(0, &i).verdict, Verdict::Ok);
}

#[test]
fn apply_verdict_counts_unknown_windows_and_drifts_at_the_fifth() {
    let mut w = core(128);
    w.resume_at(-1, 0);
    for k in 1..5 {
        let o = w.apply_verdict(k * 100 * MS, Verdict::Unknown, 0);
        assert_eq!(o.stepped, None, "window {k}");
        assert_eq!(w.unknown_cnt(), k as u32);
    }
    let o = w.apply_verdict(500 * MS, Verdict::Unknown, 0);
    assert_eq!(o.stepped, Some(StepDir::Down));
    assert_eq!(o.step, 0);
    assert!(!o.rearmed, "step 0 and nothing in flight");
    assert_eq!(w.unknown_cnt(), 0);
}

#[test]
fn resume_at_a_capped_step_refuses_to_scale_up_as_the_kernel_does() {
    // qd 128: step -3 would be 121 deep, capped at 96.
    let mut w = core(128);
    w.resume_at(-3, 0);
    assert_eq!(w.max_depth(), 96);
    assert!(w.snapshot().scaled_max);
    let o = w.apply_verdict(0, Verdict::UnknownWrites, 5);
    assert_eq!(o.stepped, None);
    assert_eq!(o.step, -3);
    // step -2 is below the cap: an OK window scales up to the cap.
    w.resume_at(-2, 0);
    assert!(!w.snapshot().scaled_max);
    let o = w.apply_verdict(0, Verdict::Ok, 5);
    assert_eq!(
        (o.stepped, o.step, o.limits.max_depth),
        (Some(StepDir::Up), -3, 96)
    );
}

#[test]
fn verdicts_carry_the_kernels_status_numbers() {
    for v in [
        Verdict::Ok,
        Verdict::Unknown,
        Verdict::UnknownWrites,
        Verdict::Exceeded,
    ] {
        assert_eq!(Verdict::from_status(v.status()), Some(v));
    }
    assert_eq!(Verdict::Ok.status(), 1);
    assert_eq!(Verdict::Exceeded.status(), 4);
    assert_eq!(Verdict::from_status(0), None);
    assert_eq!(Verdict::from_status(5), None);
}
