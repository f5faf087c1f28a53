//! Exact unit tests: the constants, window and depth tables, limits and
//! `wbt_lat_usec` knob of `block/blk-wbt.c` and `block/blk-rq-qos.c`, and the
//! controller-level behaviours listed in `docs/wbt-reproduction.md`.

use super::*;

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000_000_000;

fn params(qd: u32, write_cache: bool) -> DeviceParams {
    DeviceParams {
        queue_depth: qd,
        rotational: false,
        write_cache,
    }
}

fn modern(qd: u32) -> Wbt {
    Wbt::new(params(qd, false), Variant::Modern)
}

/// Admit a buffered write that must go at once.
fn admit(w: &mut Wbt, now: u64, id: u64, flags: OpFlags) -> Rq {
    match w.on_throttle(now, Op::Write, flags) {
        Admit::Go(f) => Rq {
            id,
            op: Op::Write,
            flags: f,
        },
        Admit::Wait(c) => panic!("write {id} must be admitted, got Wait({c:?})"),
    }
}

/// Feed the running window `reads` read completions with the given
/// latencies and `writes` write completions (untracked, so inflight is not
/// touched), all just before the deadline, then fire the timer at the
/// deadline. Returns the deadline.
fn window(w: &mut Wbt, reads: &[u64], writes: u32) -> u64 {
    let dl = w.next_deadline().expect("a window is armed");
    let t = dl - 1;
    for (k, lat) in reads.iter().enumerate() {
        let rq = Rq {
            id: 1_000_000 + k as u64,
            op: Op::Read,
            flags: ReqFlags::READ,
        };
        w.on_done(t, rq, Some(t - lat));
    }
    for k in 0..writes {
        let rq = Rq {
            id: 2_000_000 + u64::from(k),
            op: Op::Write,
            flags: ReqFlags::NONE,
        };
        w.on_done(t, rq, Some(t - MS));
    }
    w.on_timer(dl);
    dl
}

fn drain(w: &mut Wbt) -> ([Option<TraceRecord>; 8], usize) {
    let mut out = [None; 8];
    let mut n = 0;
    while let Some(r) = w.poll_trace() {
        if n < out.len() {
            out[n] = Some(r);
        }
        n += 1;
    }
    (out, n)
}

fn limits(w: &Wbt) -> (u32, u32, u32) {
    (w.max_depth(), w.normal(), w.background())
}

// ------------------------------------------------------------------
// Constants and window table (blk-wbt.c: RWB_*, rwb_arm_timer)
// ------------------------------------------------------------------

#[test]
fn window_length_per_step() {
    assert_eq!(isqrt(2 << 8), 22);
    assert_eq!(isqrt(3 << 8), 27);
    assert_eq!(isqrt(4 << 8), 32);
    assert_eq!(isqrt(5 << 8), 35);
    assert_eq!(isqrt(6 << 8), 39);
    let expect = [
        (-3, 100_000_000),
        (-1, 100_000_000),
        (0, 100_000_000),
        (1, 72_727_272),
        (2, 59_259_259),
        (3, 50_000_000),
        (4, 45_714_285),
        (5, 41_025_641),
    ];
    for (step, ns) in expect {
        assert_eq!(window_ns(step), ns, "step {step}");
    }
}

#[test]
fn isqrt_is_floor_root() {
    for x in 0..10_000u64 {
        let r = isqrt(x);
        assert!(r * r <= x && (r + 1) * (r + 1) > x, "isqrt({x}) = {r}");
    }
    assert_eq!(isqrt(u64::MAX), u64::from(u32::MAX));
}

#[test]
fn defaults() {
    let w = modern(32);
    let s = w.snapshot();
    assert_eq!(s.min_lat_ns, 2_000_000);
    assert_eq!(s.enable_state, EnableState::OnDefault);
    assert_eq!((s.max_depth, s.normal, s.background), (16, 8, 4));
    assert_eq!(s.window_deadline, None);
    let rot = Wbt::new(
        DeviceParams {
            queue_depth: 32,
            rotational: true,
            write_cache: false,
        },
        Variant::Modern,
    );
    assert_eq!(rot.snapshot().min_lat_ns, 75_000_000);
    assert_eq!(rot.lat_usec(), 75_000);
}

// ------------------------------------------------------------------
// Depth table (blk-rq-qos.c: rq_depth_calc_max_depth; blk-wbt.c: calc_wb_limits)
// ------------------------------------------------------------------

fn row(qd: u32, step: i32) -> (u32, u32, u32, bool) {
    let (max, cap) = calc_max_depth(Variant::Modern, qd, step);
    let (n, b) = calc_limits(Variant::Modern, max, 2_000_000);
    (max, n, b, cap)
}

#[test]
fn depth_table_qd1() {
    assert_eq!(row(1, -1), (2, 2, 1, true));
    assert_eq!(row(1, 0), (2, 2, 1, true)); // hit_cap is reported at step 0 too
    for s in 1..=4 {
        assert_eq!(row(1, s), (1, 1, 1, false));
    }
}

#[test]
fn depth_table_qd2() {
    // Kernel quirk: step −1 gives depth 1 (capped at floor(3·2/4) = 1).
    assert_eq!(row(2, -1), (1, 1, 1, true));
    assert_eq!(row(2, 0), (2, 2, 1, false));
    assert_eq!(row(2, 1), (1, 1, 1, false));
}

#[test]
fn depth_table_qd4() {
    assert_eq!(row(4, -1), (3, 2, 1, true));
    assert_eq!(row(4, 0), (4, 2, 1, false));
    assert_eq!(row(4, 1), (2, 2, 1, false));
    for s in 2..=4 {
        assert_eq!(row(4, s), (1, 1, 1, false));
    }
}

#[test]
fn depth_table_qd16_32_64_256() {
    let positive = [(16, 8, 4), (8, 4, 2), (4, 2, 1), (2, 2, 1), (1, 1, 1)];
    for qd in [16, 32, 64, 256] {
        for (s, (m, n, b)) in positive.iter().enumerate() {
            assert_eq!(row(qd, s as i32), (*m, *n, *b, false), "qd {qd} step {s}");
        }
    }
    assert_eq!(row(16, -1), (12, 6, 3, true));
    assert_eq!(row(32, -1), (24, 12, 6, true));
    assert_eq!(row(64, -1), (31, 16, 8, false));
    assert_eq!(row(64, -2), (48, 24, 12, true));
    assert_eq!(row(256, -1), (31, 16, 8, false));
    assert_eq!(row(256, -2), (61, 31, 16, false));
    assert_eq!(row(256, -3), (121, 61, 31, false));
    assert_eq!(row(256, -4), (192, 96, 48, true));
}

#[test]
fn depth_math_survives_huge_values() {
    assert!(calc_max_depth(Variant::Modern, u32::MAX, -40).1);
    assert_eq!(calc_max_depth(Variant::Modern, 64, i32::MAX), (1, false));
    assert_eq!(calc_max_depth(Variant::Modern, 0, 0), (2, true)); // QD 0 treated as 1
}

/// Drive `w` with write-only windows (a tracked write inflight, nothing
/// completes) until the scale-up is refused; return the steps visited.
fn climb(w: &mut Wbt) -> ([i32; 8], usize) {
    let _held = admit(w, 0, 1, OpFlags::SYNC);
    let mut steps = [0; 8];
    let mut n = 0;
    for _ in 0..8 {
        window(w, &[], 0);
        steps[n] = w.step();
        n += 1;
    }
    (steps, n)
}

#[test]
fn scale_up_refused_after_cap() {
    // QD 32: one UNKNOWN_WRITES window reaches 24 (cap) and stays (`scaled_max`).
    let mut w = modern(32);
    let (steps, _) = climb(&mut w);
    assert_eq!(steps, [-1; 8]);
    assert_eq!(limits(&w), (24, 12, 6));
    assert!(w.snapshot().scaled_max);

    // QD 64: 31 at −1, 48 (cap) at −2, then stuck.
    let mut w = modern(64);
    let (steps, _) = climb(&mut w);
    assert_eq!(steps, [-1, -2, -2, -2, -2, -2, -2, -2]);
    assert_eq!(limits(&w), (48, 24, 12));

    // QD 256: −4 caps at 192.
    let mut w = modern(256);
    let (steps, _) = climb(&mut w);
    assert_eq!(steps, [-1, -2, -3, -4, -4, -4, -4, -4]);
    assert_eq!(limits(&w), (192, 96, 48));

    // QD 16: 12 < 16 (below QD 22 a negative step lowers the depth), capped.
    let mut w = modern(16);
    climb(&mut w);
    assert_eq!((w.step(), limits(&w)), (-1, (12, 6, 3)));

    // QD 1: 2/2/1 capped at −1.
    let mut w = modern(1);
    climb(&mut w);
    assert_eq!((w.step(), limits(&w)), (-1, (2, 2, 1)));
}

#[test]
fn scale_up_at_cap_wakes_nobody_and_traces_nothing() {
    // b84477d3ebb9 (v5.4): a refused scale-up at the cap neither wakes nor traces.
    let mut w = modern(32);
    let now = SEC;
    let _held = admit(&mut w, now, 1, OpFlags::SYNC);
    window(&mut w, &[], 0); // → step −1, capped
    while w.poll_wake().is_some() {}
    drain(&mut w);
    // Fill BG to the background limit so one more waits.
    let later = w.next_deadline().unwrap() - 10 * MS;
    let mut k = 10;
    while let Admit::Go(_) = w.on_throttle(later, Op::Write, OpFlags::NONE) {
        k += 1;
        assert!(k < 100);
    }
    let dl = w.next_deadline().unwrap();
    w.on_timer(dl); // UNKNOWN_WRITES again, refused
    assert_eq!(w.poll_wake(), None);
    let (recs, n) = drain(&mut w);
    assert_eq!(n, 1);
    assert!(matches!(
        recs[0],
        Some(TraceRecord::Timer {
            verdict: Verdict::UnknownWrites,
            step: -1,
            ..
        })
    ));
}

#[test]
fn qd2_negative_step_then_scale_down_refused() {
    // Kernel quirk: QD 2, step −1 gives depth 1 and then scale_down refuses.
    let mut w = modern(2);
    let rq = admit(&mut w, 0, 1, OpFlags::SYNC);
    window(&mut w, &[], 0);
    assert_eq!((w.step(), limits(&w)), (-1, (1, 1, 1)));
    // Complete the held write (no sample: never issued) and post a miss.
    w.on_done(1, rq, None);
    window(&mut w, &[10 * MS], 3);
    assert_eq!(w.step(), -1, "EXCEEDED cannot scale down from depth 1");
    assert_eq!(limits(&w), (1, 1, 1));
}

// ------------------------------------------------------------------
// Controller-level behaviours (docs/wbt-reproduction.md)
// ------------------------------------------------------------------

#[test]
fn b13_1_contention_steps_down_with_shrinking_windows() {
    let mut w = modern(32);
    let _held = admit(&mut w, 0, 1, OpFlags::SYNC);
    assert_eq!(w.next_deadline(), Some(100 * MS));
    let expect = [
        (1, 8, 72_727_272),
        (2, 4, 59_259_259),
        (3, 2, 50_000_000),
        (4, 1, 45_714_285),
        (4, 1, 45_714_285), // pinned: EXCEEDED is a no-op at depth 1
        (4, 1, 45_714_285),
    ];
    let mut prev = 100 * MS;
    for (step, max, win) in expect {
        let dl = window(&mut w, &[5 * MS], 3);
        assert_eq!(dl, prev);
        assert_eq!((w.step(), w.max_depth()), (step, max));
        assert_eq!(w.snapshot().window_ns, win);
        assert_eq!(w.next_deadline(), Some(dl + win));
        prev = dl + win;
    }
}

#[test]
fn b13_1_trace_records() {
    let mut w = modern(32);
    let _held = admit(&mut w, 0, 1, OpFlags::SYNC);
    let dl = window(&mut w, &[5 * MS, 7 * MS], 3);
    let (recs, n) = drain(&mut w);
    assert_eq!(n, 4);
    assert_eq!(
        recs[0],
        Some(TraceRecord::Lat {
            now: dl,
            lat_ns: 5 * MS
        })
    );
    assert_eq!(
        recs[1],
        Some(TraceRecord::Stat {
            now: dl,
            read: WindowStat {
                nr_samples: 2,
                min: 5 * MS,
                max: 7 * MS,
                sum: 12 * MS
            },
            write: WindowStat {
                nr_samples: 3,
                min: MS,
                max: MS,
                sum: 3 * MS
            },
        })
    );
    assert_eq!(
        recs[2],
        Some(TraceRecord::Timer {
            now: dl,
            verdict: Verdict::Exceeded,
            step: 0,
            inflight: 1
        })
    );
    // The step record shows the window that was running (the re-arm follows).
    assert_eq!(
        recs[3],
        Some(TraceRecord::Step {
            now: dl,
            dir: StepDir::Down,
            step: 1,
            window_ns: 100_000_000,
            background: 2,
            normal: 4,
            max: 8
        })
    );
}

#[test]
fn b13_2_pure_writes_go_negative_to_cap() {
    let mut w = modern(32);
    let _held = admit(&mut w, 0, 1, OpFlags::SYNC);
    // Write completions only: UNKNOWN_WRITES.
    window(&mut w, &[], 5);
    assert_eq!(w.step(), -1);
    assert_eq!(limits(&w), (24, 12, 6));
    // The window does not shrink for negative steps.
    assert_eq!(w.snapshot().window_ns, 100 * MS);
    window(&mut w, &[], 5);
    assert_eq!(w.step(), -1);
}

#[test]
fn b13_3_exceeded_snaps_negative_step_to_zero() {
    let mut w = modern(256);
    let _held = admit(&mut w, 0, 1, OpFlags::SYNC);
    for _ in 0..3 {
        window(&mut w, &[], 3);
    }
    assert_eq!(w.step(), -3);
    window(&mut w, &[3 * MS], 3);
    assert_eq!(w.step(), 0, "one EXCEEDED window snaps back to 0");
    assert_eq!(limits(&w), (16, 8, 4));
    // From 0 the next miss goes to +1 as usual.
    window(&mut w, &[3 * MS], 3);
    assert_eq!(w.step(), 1);
}

#[test]
fn b13_4_idle_from_step_4_takes_20_windows() {
    let mut w = modern(32);
    let held = admit(&mut w, 0, 1, OpFlags::SYNC);
    w.on_done(1, held, None); // nothing inflight from here on
    for _ in 0..4 {
        window(&mut w, &[5 * MS], 3);
    }
    assert_eq!(w.step(), 4);
    let start = w.next_deadline().unwrap() - window_ns(4);
    let mut windows = 0;
    let mut steps = [0i32; 20];
    while w.step() != 0 {
        let dl = w.next_deadline().unwrap();
        w.on_timer(dl);
        steps[windows] = w.step();
        windows += 1;
        assert!(windows <= 20);
    }
    assert_eq!(windows, 20);
    assert_eq!(
        steps,
        [4, 4, 4, 4, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 0]
    );
    // Last expiry time − start = 5 × (45.7 + 50 + 59.3 + 72.7) ms.
    let last = start + 5 * (45_714_285 + 50_000_000 + 59_259_259 + 72_727_272);
    assert_eq!(last - start, 1_138_504_080);
    // Monitoring stops: step 0, nothing inflight.
    assert_eq!(w.next_deadline(), None);
    // The last expiry happened at `last`: the trace shows it.
    let mut last_timer = 0;
    while let Some(r) = w.poll_trace() {
        if let TraceRecord::Timer { now, .. } = r {
            last_timer = now;
        }
    }
    assert_eq!(last_timer, last);
}

#[test]
fn b13_4_idle_from_minus_one_takes_500ms() {
    let mut w = modern(32);
    let held = admit(&mut w, 0, 1, OpFlags::SYNC);
    window(&mut w, &[], 0); // UNKNOWN_WRITES (inflight) → −1
    assert_eq!(w.step(), -1);
    let t0 = w.next_deadline().unwrap() - 100 * MS;
    w.on_done(t0 + 1, held, None);
    let mut t = 0;
    for k in 1..=5 {
        t = window(&mut w, &[], 0);
        assert_eq!(w.snapshot().unknown_cnt, if k < 5 { k } else { 0 });
    }
    assert_eq!(w.step(), 0);
    assert_eq!(t - t0, 500 * MS);
    assert_eq!(w.next_deadline(), None);
}

#[test]
fn unknown_cnt_survives_at_step_zero() {
    // blk-wbt.c: unknown_cnt is only reset by a successful scale.
    let mut w = modern(32);
    let held = admit(&mut w, 0, 1, OpFlags::SYNC);
    w.on_done(1, held, None);
    // Nothing inflight, step 0: the first expiry stops monitoring.
    let dl = window(&mut w, &[], 0);
    assert_eq!(w.snapshot().unknown_cnt, 1);
    assert_eq!(w.next_deadline(), None);
    // Re-arm with a new write and let 6 more unknown windows pass with it
    // completing right away (no sample).
    for k in 0..6 {
        let rq = admit(&mut w, dl + k * SEC, 10 + k, OpFlags::SYNC);
        w.on_done(dl + k * SEC + 1, rq, None);
        window(&mut w, &[], 0);
    }
    assert_eq!(w.snapshot().unknown_cnt, 7);
    assert_eq!(w.step(), 0);
}

#[test]
fn dirty_throttle_turns_unknown_into_unknown_writes() {
    let mut w = modern(32);
    let held = admit(&mut w, 0, 1, OpFlags::SYNC);
    w.on_done(1, held, None);
    w.on_dirty_throttle(50 * MS);
    window(&mut w, &[], 0);
    assert_eq!(w.step(), -1);
    // More than 1 s later the memory is gone: UNKNOWN.
    let dl = w.next_deadline().unwrap();
    w.on_timer(dl + SEC);
    assert_eq!(w.snapshot().unknown_cnt, 1);
}

#[test]
fn b13_5_stuck_read_without_completions() {
    let mut w = modern(32);
    let _held = admit(&mut w, 0, 1, OpFlags::SYNC);
    let read = Rq {
        id: 7,
        op: Op::Read,
        flags: w.on_track(Op::Read, OpFlags::SYNC),
    };
    assert_eq!(read.flags, ReqFlags::READ);
    w.on_issue(MS, read);
    w.on_timer(100 * MS);
    assert_eq!(w.step(), 1);
    let (recs, _) = drain(&mut w);
    assert_eq!(
        recs[0],
        Some(TraceRecord::Lat {
            now: 100 * MS,
            lat_ns: 99 * MS
        })
    );
    assert!(matches!(
        recs[1],
        Some(TraceRecord::Timer {
            verdict: Verdict::Exceeded,
            ..
        })
    ));
}

#[test]
fn b13_5_stuck_read_longer_than_window_despite_other_reads() {
    let mut w = modern(32);
    let _held = admit(&mut w, 10 * MS, 1, OpFlags::SYNC);
    let read = Rq {
        id: 7,
        op: Op::Read,
        flags: ReqFlags::READ,
    };
    w.on_issue(1, read);
    // Other reads complete fast (1 ms < 2 ms target) with 3 writes: the
    // window would be OK, but the watched read is 110 ms old > 100 ms window.
    window(&mut w, &[MS], 3);
    assert_eq!(w.step(), 1);
    // Once it completes, the tracker is clear and a good window relaxes.
    w.on_done(150 * MS, read, Some(1));
    window(&mut w, &[MS], 3);
    assert_eq!(w.step(), 0);
}

#[test]
fn stuck_read_boundary_is_strict() {
    // A watched read exactly one window old, with a good read and three
    // writes in the window: not stuck (the kernel compares with `>`).
    let mut w = modern(32);
    let _held = admit(&mut w, 0, 1, OpFlags::SYNC);
    let read = Rq {
        id: 7,
        op: Op::Read,
        flags: ReqFlags::READ,
    };
    w.on_issue(0, read);
    window(&mut w, &[MS], 3);
    assert_eq!(w.step(), -1, "OK window relaxes");
    // One nanosecond more is stuck. At step −1 the window is 100 ms.
    let dl = w.next_deadline().unwrap();
    w.on_issue(1, read); // tracker already set: ignored
    w.on_requeue(read);
    w.on_issue(dl - 100 * MS - 1, read);
    window(&mut w, &[MS], 3);
    assert_eq!(w.step(), 0, "stuck read: EXCEEDED snaps to 0");
}

#[test]
fn stuck_read_cleared_by_requeue() {
    let mut w = modern(32);
    let _held = admit(&mut w, 0, 1, OpFlags::SYNC);
    let read = Rq {
        id: 7,
        op: Op::Read,
        flags: ReqFlags::READ,
    };
    w.on_issue(1, read);
    w.on_requeue(read);
    w.on_timer(100 * MS);
    assert_eq!(w.step(), -1, "no stuck read: UNKNOWN_WRITES");
}

#[test]
fn b13_6_write_cache_wakes_only_at_zero() {
    let mut w = Wbt::new(params(32, true), Variant::Modern);
    let now = SEC;
    let mut rqs = [None; 8];
    for (k, slot) in rqs.iter_mut().enumerate() {
        *slot = Some(admit(&mut w, now, k as u64, OpFlags::NONE));
    }
    assert_eq!(w.inflight(Class::Bg), 8); // normal limit
    assert_eq!(
        w.on_throttle(now, Op::Write, OpFlags::NONE),
        Admit::Wait(Class::Bg)
    );
    assert_eq!(
        w.on_throttle(now, Op::Write, OpFlags::SYNC),
        Admit::Wait(Class::Bg),
        "newcomers never overtake a waiter, even with a higher limit"
    );
    for (k, rq) in rqs.iter().enumerate() {
        let woke = w.on_done(now + 1, rq.unwrap(), Some(now));
        assert_eq!(woke, k == 7, "release {k}");
    }
    assert_eq!(
        w.poll_wake(),
        Some(Wake {
            class: Class::Bg,
            mode: WakeMode::GrantFifo
        })
    );
    assert_eq!(w.poll_wake(), None);
    assert!(w.try_admit(now + 2, Class::Bg, OpFlags::NONE));
    assert!(w.try_admit(now + 2, Class::Bg, OpFlags::SYNC));
    assert_eq!(w.snapshot().waiting, [0, 0, 0]);
    assert_eq!(w.inflight(Class::Bg), 2);
}

#[test]
fn no_write_cache_wakes_when_room_reaches_half_background() {
    let mut w = modern(32);
    let now = SEC;
    let mut rqs = [None; 8];
    for (k, slot) in rqs.iter_mut().enumerate() {
        *slot = Some(admit(&mut w, now, k as u64, OpFlags::NONE));
    }
    assert_eq!(
        w.on_throttle(now, Op::Write, OpFlags::NONE),
        Admit::Wait(Class::Bg)
    );
    // normal 8, background 4: wake when 8 − n ≥ 2, i.e. n = 6.
    assert!(!w.on_done(now, rqs[0].unwrap(), None)); // n = 7
    assert!(w.on_done(now, rqs[1].unwrap(), None)); // n = 6
    // Recent dirty throttling on a write-cache device uses wb_normal too.
    let mut w = Wbt::new(params(32, true), Variant::Modern);
    w.on_dirty_throttle(now);
    for (k, slot) in rqs.iter_mut().enumerate() {
        *slot = Some(admit(&mut w, now, k as u64, OpFlags::NONE));
    }
    w.on_cleanup(now, Op::Write, OpFlags::NONE); // n = 7, no waiters
    let mut extra = 0;
    while let Admit::Go(_) = w.on_throttle(now, Op::Write, OpFlags::NONE) {
        extra += 1;
    }
    assert_eq!(extra, 16 - 7, "dirty throttling admits up to max_depth");
}

#[test]
fn discard_wake_uses_background() {
    let mut w = Wbt::new(params(32, true), Variant::Modern);
    let now = SEC;
    let mut rqs = [None; 4];
    for (k, slot) in rqs.iter_mut().enumerate() {
        match w.on_throttle(now, Op::Discard, OpFlags::NONE) {
            Admit::Go(f) => {
                assert_eq!(f.class(), Some(Class::Discard));
                *slot = Some(Rq {
                    id: k as u64,
                    op: Op::Discard,
                    flags: f,
                });
            }
            Admit::Wait(_) => panic!("discard {k}"),
        }
    }
    assert_eq!(
        w.on_throttle(now, Op::Discard, OpFlags::NONE),
        Admit::Wait(Class::Discard)
    );
    // Background limit 4 → wake when 4 − n ≥ 2: n = 2.
    assert!(!w.on_done(now, rqs[0].unwrap(), None));
    assert!(w.on_done(now, rqs[1].unwrap(), None));
    assert_eq!(w.poll_wake().map(|x| x.class), Some(Class::Discard));
}

#[test]
fn b13_7_limit_choice() {
    let mut w = modern(32);
    // Within 100 ms of init, close_io holds (kernel stamps init time).
    assert_eq!(w.get_limit(50 * MS, Op::Write, OpFlags::NONE), 4);
    let t = SEC;
    assert_eq!(w.get_limit(t, Op::Write, OpFlags::NONE), 8);
    assert_eq!(w.get_limit(t, Op::Write, OpFlags::SYNC), 16);
    assert_eq!(w.get_limit(t, Op::Write, OpFlags::META), 16);
    assert_eq!(w.get_limit(t, Op::Write, OpFlags::PRIO), 16);
    assert_eq!(w.get_limit(t, Op::Write, OpFlags::SWAP), 16);
    assert_eq!(w.get_limit(t, Op::Write, OpFlags::BACKGROUND), 4);
    assert_eq!(w.get_limit(t, Op::Discard, OpFlags::SYNC), 4);
    // A read submitted: background for 100 ms.
    assert_eq!(
        w.on_throttle(t, Op::Read, OpFlags::NONE),
        Admit::Go(ReqFlags::READ)
    );
    assert_eq!(w.get_limit(t + 99 * MS, Op::Write, OpFlags::NONE), 4);
    assert_eq!(w.get_limit(t + 100 * MS, Op::Write, OpFlags::NONE), 8);
    // A read completed: same.
    let rd = Rq {
        id: 9,
        op: Op::Read,
        flags: ReqFlags::READ,
    };
    w.on_done(2 * t, rd, None);
    assert_eq!(w.get_limit(2 * t + 50 * MS, Op::Write, OpFlags::NONE), 4);
    // Dirty throttling: max for 1 s, beating BACKGROUND.
    w.on_dirty_throttle(3 * t);
    assert_eq!(w.get_limit(3 * t, Op::Write, OpFlags::BACKGROUND), 16);
    assert_eq!(w.get_limit(4 * t - 1, Op::Write, OpFlags::NONE), 16);
    assert_eq!(w.get_limit(4 * t, Op::Write, OpFlags::NONE), 8);
}

#[test]
fn classification() {
    let w = modern(32);
    assert_eq!(w.classify(Op::Read, OpFlags::SYNC), ReqFlags::READ);
    assert_eq!(w.classify(Op::Write, OpFlags::NONE), ReqFlags::TRACKED);
    assert_eq!(
        w.classify(Op::Write, OpFlags::SYNC | OpFlags::IDLE),
        ReqFlags::NONE,
        "O_DIRECT"
    );
    assert_eq!(
        w.classify(Op::Write, OpFlags::SYNC).class(),
        Some(Class::Bg)
    );
    assert_eq!(
        w.classify(Op::Write, OpFlags::SWAP).class(),
        Some(Class::Swap)
    );
    assert_eq!(
        w.classify(Op::Discard, OpFlags::NONE).class(),
        Some(Class::Discard)
    );
    assert_eq!(
        w.classify(Op::Discard, OpFlags::SWAP).class(),
        Some(Class::Swap)
    );
    assert_eq!(w.classify(Op::Flush, OpFlags::SYNC), ReqFlags::NONE);
    assert_eq!(w.classify(Op::WriteZeroes, OpFlags::NONE), ReqFlags::NONE);
    for c in Class::ALL {
        assert_eq!(ReqFlags::tracked(c).class(), Some(c));
    }
}

#[test]
fn write_direction_stats_include_untracked() {
    // O_DIRECT writes and write-zeroes count as write samples; flushes not.
    let mut w = modern(32);
    let held = admit(&mut w, 0, 1, OpFlags::SYNC);
    w.on_done(1, held, None);
    let t = 50 * MS;
    for (id, op) in [(2, Op::WriteZeroes), (3, Op::Flush), (4, Op::Write)] {
        let rq = Rq {
            id,
            op,
            flags: ReqFlags::NONE,
        };
        w.on_done(t, rq, Some(t - MS));
    }
    let rd = Rq {
        id: 5,
        op: Op::Read,
        flags: ReqFlags::READ,
    };
    w.on_done(t, rd, Some(t - 5 * MS));
    w.on_timer(100 * MS);
    // 1 slow read + 2 writes: not valid, writes seen → UNKNOWN_WRITES
    // (a scale-up). Had the flush counted, the window would be valid and EXCEEDED.
    assert_eq!(w.step(), -1);
}

#[test]
fn b13_8_read_with_two_writes_relaxes() {
    let mut w = modern(32);
    let _held = admit(&mut w, 0, 1, OpFlags::SYNC);
    window(&mut w, &[10 * MS], 2);
    assert_eq!(
        w.step(),
        -1,
        "a slow read with too few writes still relaxes"
    );
    // With 3 writes it is a valid window and the miss counts.
    window(&mut w, &[10 * MS], 3);
    assert_eq!(w.step(), 0);
}

#[test]
fn ok_window_relaxes_and_wakes() {
    let mut w = modern(32);
    let now = SEC;
    admit(&mut w, now, 1, OpFlags::NONE);
    window(&mut w, &[5 * MS], 3);
    assert_eq!(w.step(), 1);
    // Fill BG to the background limit (2 at step 1) until one waits.
    let t = now + 150 * MS;
    let mut n = 0;
    while let Admit::Go(_) = w.on_throttle(t, Op::Write, OpFlags::BACKGROUND) {
        n += 1;
    }
    assert_eq!((n, w.inflight(Class::Bg)), (1, 2));
    assert_eq!(w.poll_wake(), None);
    window(&mut w, &[MS], 3);
    assert_eq!(w.step(), 0);
    assert_eq!(w.poll_wake().map(|x| x.mode), Some(WakeMode::GrantFifo));
    assert!(w.try_admit(t + 100 * MS, Class::Bg, OpFlags::BACKGROUND));
}

#[test]
fn timer_before_deadline_is_ignored() {
    let mut w = modern(32);
    admit(&mut w, 0, 1, OpFlags::SYNC);
    w.on_timer(100 * MS - 1);
    assert_eq!(w.next_deadline(), Some(100 * MS));
    assert_eq!(w.poll_trace(), None);
}

#[test]
fn tick_rounding_option() {
    let mut w = Wbt::with_options(
        params(32, false),
        Variant::Modern,
        Options {
            start_ns: 0,
            tick_hz: Some(250),
        },
    );
    admit(&mut w, 5 * MS, 1, OpFlags::SYNC);
    // jiffy 1 (4 ms ticks) + 25 ticks = 26 ticks = 104 ms.
    assert_eq!(w.next_deadline(), Some(104 * MS));
    window(&mut w, &[5 * MS], 3);
    // 72.7 ms truncates to 18 ticks = 72 ms.
    assert_eq!(w.next_deadline(), Some(104 * MS + 72 * MS));
}

#[test]
fn trace_ring_overwrites_oldest_and_counts() {
    let mut w = modern(32);
    admit(&mut w, 0, 1, OpFlags::SYNC);
    // 4 windows to reach depth 1: 4 records each; then 3 per pinned window.
    for _ in 0..4 {
        window(&mut w, &[5 * MS], 3);
    }
    for _ in 0..20 {
        window(&mut w, &[5 * MS], 3);
    }
    let total = 4 * 4 + 20 * 3;
    assert_eq!(w.trace_dropped(), (total - TRACE_CAPACITY) as u64);
    let mut n = 0;
    while w.poll_trace().is_some() {
        n += 1;
    }
    assert_eq!(n, TRACE_CAPACITY);
    assert_eq!(w.snapshot().trace_dropped, (total - TRACE_CAPACITY) as u64);
}

#[test]
fn queue_depth_change_resets() {
    let mut w = modern(32);
    admit(&mut w, 0, 1, OpFlags::SYNC);
    window(&mut w, &[5 * MS], 3);
    assert_eq!(w.step(), 1);
    w.set_queue_depth(4);
    assert_eq!((w.step(), limits(&w)), (0, (4, 2, 1)));
}

#[test]
fn disable_default_and_enable_default() {
    let mut w = modern(32);
    admit(&mut w, 0, 1, OpFlags::SYNC);
    w.disable_default();
    assert_eq!(w.snapshot().enable_state, EnableState::OffDefault);
    assert_eq!(w.next_deadline(), None);
    assert_eq!(
        w.on_throttle(SEC, Op::Write, OpFlags::NONE),
        Admit::Go(ReqFlags::NONE)
    );
    assert_eq!(w.lat_usec(), 0);
    w.enable_default();
    assert_eq!(w.snapshot().enable_state, EnableState::OnDefault);
    assert_eq!(w.lat_usec(), 2000);
    // Manual states are sticky.
    w.set_lat_usec(0).unwrap();
    w.enable_default();
    assert_eq!(w.snapshot().enable_state, EnableState::OffManual);
}

// ------------------------------------------------------------------
// wbt_lat_usec knob (blk-sysfs.c: queue_wb_lat_store)
// ------------------------------------------------------------------

#[test]
fn knob_zero_disables() {
    let mut w = modern(32);
    w.set_lat_usec(0).unwrap();
    let s = w.snapshot();
    assert_eq!((s.normal, s.background), (0, 0));
    assert!(!s.enabled);
    assert_eq!(s.enable_state, EnableState::OffManual);
    assert_eq!(w.lat_usec(), 0);
    for k in 0..100 {
        assert_eq!(
            w.on_throttle(k, Op::Write, OpFlags::NONE),
            Admit::Go(ReqFlags::NONE)
        );
    }
    assert_eq!(w.snapshot().inflight, [0, 0, 0]);
    assert_eq!(w.next_deadline(), None);
}

#[test]
fn knob_disable_releases_waiters() {
    let mut w = modern(32);
    let now = SEC;
    for k in 0..8 {
        admit(&mut w, now, k, OpFlags::NONE);
    }
    assert_eq!(
        w.on_throttle(now, Op::Write, OpFlags::NONE),
        Admit::Wait(Class::Bg)
    );
    w.set_lat_usec(0).unwrap();
    assert_eq!(w.poll_wake().map(|x| x.class), Some(Class::Bg));
    assert!(w.try_admit(now, Class::Bg, OpFlags::NONE));
}

#[test]
fn knob_minus_one_resets_to_default() {
    let mut w = modern(32);
    w.set_lat_usec(5000).unwrap();
    assert_eq!(w.lat_usec(), 5000);
    assert_eq!(w.snapshot().min_lat_ns, 5_000_000);
    assert_eq!(w.snapshot().enable_state, EnableState::OnManual);
    w.set_lat_usec(-1).unwrap();
    assert_eq!(w.snapshot().min_lat_ns, 2_000_000);
    assert_eq!(w.snapshot().enable_state, EnableState::OnManual);
    let mut r = Wbt::new(
        DeviceParams {
            queue_depth: 32,
            rotational: true,
            write_cache: true,
        },
        Variant::Modern,
    );
    r.set_lat_usec(0).unwrap();
    r.set_lat_usec(-1).unwrap();
    assert_eq!(r.snapshot().min_lat_ns, 75_000_000);
    assert_eq!(r.lat_usec(), 75_000);
    assert!(r.enabled());
}

#[test]
fn knob_rejects_below_minus_one() {
    let mut w = modern(32);
    assert_eq!(w.set_lat_usec(-2), Err(KnobError::BelowMinusOne(-2)));
    assert_eq!(
        w.set_lat_usec(i64::MIN),
        Err(KnobError::BelowMinusOne(i64::MIN))
    );
    assert_eq!(w.set_lat_usec(i64::MAX), Err(KnobError::Overflow(i64::MAX)));
    let s = w.snapshot();
    assert_eq!(s.min_lat_ns, 2_000_000);
    assert_eq!(s.enable_state, EnableState::OnDefault);
    let mut buf = [0u8; 160];
    let msg = format_into(&mut buf, KnobError::BelowMinusOne(-2));
    assert!(msg.starts_with("wbt_lat_usec: -2 is invalid"));
}

fn format_into(buf: &mut [u8], e: KnobError) -> &str {
    use core::fmt::{self, Write};
    struct B<'a>(&'a mut [u8], usize);
    impl Write for B<'_> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            let end = self.1 + s.len();
            if end > self.0.len() {
                return Err(fmt::Error);
            }
            self.0[self.1..end].copy_from_slice(s.as_bytes());
            self.1 = end;
            Ok(())
        }
    }
    let mut b = B(buf, 0);
    write!(b, "{e}").unwrap();
    let n = b.1;
    core::str::from_utf8(&buf[..n]).unwrap()
}

#[test]
fn knob_round_trips_and_same_value_is_noop() {
    let mut w = modern(32);
    for v in [1, 2000, 75_000, 123_456, 1] {
        w.set_lat_usec(v).unwrap();
        assert_eq!(w.lat_usec(), v as u64);
    }
    admit(&mut w, 0, 1, OpFlags::SYNC);
    window(&mut w, &[5 * MS], 3); // 5 ms > 1 µs target
    assert_eq!(w.step(), 1);
    w.set_lat_usec(1).unwrap();
    assert_eq!(w.step(), 1, "same target: no reset");
    w.set_lat_usec(2).unwrap();
    assert_eq!(w.step(), 0, "new target: reset to step 0");
}

// ------------------------------------------------------------------
// v5 (2016)
// ------------------------------------------------------------------

fn v5(qd: u32, wc: bool) -> Wbt {
    Wbt::new(params(qd, wc), Variant::V5_2016)
}

#[test]
fn v5_base_depth_64_capped_by_qd() {
    assert_eq!(limits(&v5(32, false)), (32, 16, 8));
    assert_eq!(limits(&v5(64, false)), (64, 32, 16));
    assert_eq!(limits(&v5(128, false)), (64, 32, 16));
    assert_eq!(limits(&v5(1, false)), (1, 1, 1));
    assert_eq!(limits(&v5(2, false)), (2, 1, 1));
    let table = [
        (32, 16, 8),
        (16, 8, 4),
        (8, 4, 2),
        (4, 2, 1),
        (2, 1, 1),
        (1, 1, 1),
    ];
    for (s, (m, n, b)) in table.iter().enumerate() {
        let (max, _) = calc_max_depth(Variant::V5_2016, 32, s as i32);
        assert_eq!(max, *m);
        assert_eq!(calc_limits(Variant::V5_2016, max, 1), (*n, *b));
    }
}

#[test]
fn v5_steps_never_negative() {
    let mut w = v5(32, false);
    let _held = admit(&mut w, 0, 1, OpFlags::SYNC);
    for _ in 0..10 {
        window(&mut w, &[], 5); // write-only: UNKNOWN in v5
        assert_eq!(w.step(), 0);
    }
    for _ in 0..3 {
        window(&mut w, &[MS], 3); // OK at step 0: nothing to relax
        assert_eq!(w.step(), 0);
    }
    while let Some(r) = w.poll_trace() {
        assert!(!matches!(r, TraceRecord::Step { .. }), "{r:?}");
    }
    // Squeeze to 1 and pin; windows shrink like the modern code.
    for step in 1..=5 {
        window(&mut w, &[5 * MS], 3);
        assert_eq!(w.step(), step);
        assert_eq!(w.snapshot().window_ns, window_ns(step));
    }
    assert_eq!(w.max_depth(), 1);
    window(&mut w, &[5 * MS], 3);
    assert_eq!(w.step(), 5);
    // Five UNKNOWN windows bump one step back.
    let dl = w.next_deadline().unwrap();
    let mut t = dl;
    for _ in 0..5 {
        w.on_timer(t);
        t = w.next_deadline().unwrap();
    }
    assert_eq!(w.step(), 4);
}

#[test]
fn v5_one_queue_no_discards_no_odirect() {
    let w = v5(32, false);
    assert_eq!(w.classify(Op::Discard, OpFlags::NONE), ReqFlags::NONE);
    assert_eq!(w.classify(Op::Read, OpFlags::NONE), ReqFlags::NONE);
    assert_eq!(
        w.classify(Op::Write, OpFlags::SYNC | OpFlags::IDLE),
        ReqFlags::NONE
    );
    assert_eq!(
        w.classify(Op::Write, OpFlags::SWAP).class(),
        Some(Class::Bg)
    );
}

#[test]
fn v5_dirty_signal_is_instantaneous_and_wake_one() {
    let mut w = v5(32, true);
    let now = SEC;
    assert_eq!(w.get_limit(now, Op::Write, OpFlags::NONE), 16);
    assert_eq!(w.get_limit(now, Op::Write, OpFlags::SYNC), 32);
    w.on_dirty_throttle(now);
    assert_eq!(w.get_limit(now, Op::Write, OpFlags::NONE), 32);
    w.on_dirty_throttle_end(now + 1);
    assert_eq!(w.get_limit(now + 2, Op::Write, OpFlags::NONE), 16);
    // Untracked IO (O_DIRECT here) counts as close IO for 100 ms.
    w.on_throttle(now + 2, Op::Write, OpFlags::SYNC | OpFlags::IDLE);
    assert_eq!(w.get_limit(now + 3, Op::Write, OpFlags::NONE), 8);
    let t = now + SEC;
    let mut rqs = [None; 16];
    for (k, slot) in rqs.iter_mut().enumerate() {
        *slot = Some(admit(&mut w, t, k as u64, OpFlags::NONE));
    }
    assert_eq!(
        w.on_throttle(t, Op::Write, OpFlags::NONE),
        Admit::Wait(Class::Bg)
    );
    // v5 lets a newcomer with a higher limit overtake the sleeper.
    assert!(matches!(
        w.on_throttle(t, Op::Write, OpFlags::SYNC),
        Admit::Go(_)
    ));
    // Write cache, nobody dirty-sleeping: wake one only at inflight 0.
    let last = admit_sync_rq(17);
    let woke = w.on_done(t, last, None);
    assert!(!woke);
    for (k, rq) in rqs.iter().enumerate() {
        assert_eq!(w.on_done(t, rq.unwrap(), None), k == 15);
    }
    assert_eq!(
        w.poll_wake(),
        Some(Wake {
            class: Class::Bg,
            mode: WakeMode::RecheckOne
        })
    );
}

fn admit_sync_rq(id: u64) -> Rq {
    Rq {
        id,
        op: Op::Write,
        flags: ReqFlags::TRACKED,
    }
}

#[test]
fn v5_knob_zero_disables() {
    let mut w = v5(32, false);
    w.set_lat_usec(0).unwrap();
    assert!(!w.enabled());
    assert_eq!(limits(&w), (0, 0, 0));
    assert_eq!(
        w.on_throttle(0, Op::Write, OpFlags::NONE),
        Admit::Go(ReqFlags::NONE)
    );
    w.set_lat_usec(-1).unwrap();
    assert!(w.enabled());
    assert_eq!(limits(&w), (32, 16, 8));
}

#[test]
fn knob_from_text_and_class_from_index() {
    let mut w = modern(32);
    w.set_lat_usec_str("5000\n").unwrap();
    assert_eq!(w.lat_usec(), 5000);
    w.set_lat_usec_str(" -1 ").unwrap();
    assert_eq!(w.lat_usec(), 2000);
    assert_eq!(w.set_lat_usec_str("2ms"), Err(KnobError::NotANumber));
    assert_eq!(w.set_lat_usec_str(""), Err(KnobError::NotANumber));
    assert_eq!(w.set_lat_usec_str("-7"), Err(KnobError::BelowMinusOne(-7)));
    assert_eq!(Class::try_from(2), Ok(Class::Discard));
    assert_eq!(Class::try_from(3), Err(UnknownClass(3)));
}
