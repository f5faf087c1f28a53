//! Single rules checked on hand-set state against values worked out from
//! the kernel's formulas: loss compensation, delay ramp, forgiveness, the
//! donation target and transfer, latency statistics, busy_level.

use super::ioc_with;
use crate::consts::{MAX_DELAY, VTIME_PER_USEC, WEIGHT_ONE};
use crate::ioc::PeriodStats;
use crate::{Admit, Bio, Done, GroupId, IoCost, Op, Options, Trace, Variant};

fn active_pair() -> (IoCost, GroupId, GroupId) {
    let mut ioc = ioc_with(Variant::Modern);
    ioc.set_enabled(true);
    let a = ioc.add_group(0, 1);
    let b = ioc.add_group(0, 2);
    for (k, g) in [a, b].into_iter().enumerate() {
        let bio = Bio {
            id: k as u64,
            group: g,
            op: Op::Read,
            bytes: 4096,
            sector: 8,
            must_issue: false,
        };
        assert!(matches!(ioc.on_submit(0, &bio), Admit::Go { .. }));
    }
    (ioc, a, b)
}

#[test]
fn loss_compensation() {
    let (mut ioc, _, _) = active_pair();
    let base = VTIME_PER_USEC as i64;
    let now = ioc.ioc_now(0);
    // 50 ms left in the period; an error of −100 000 per µs of it.
    ioc.vtime_err = -50_000 * 100_000;
    ioc.refresh_vrate(&now);
    assert_eq!(ioc.vtime_rate, VTIME_PER_USEC + 100_000);
    assert_eq!(ioc.vtime_err, 0);
    // A huge error is capped at +1× base (rate 2× base), and the error left
    // is clamped to one period's worth.
    ioc.vtime_err = -i64::MAX / 4;
    ioc.refresh_vrate(&now);
    assert_eq!(ioc.vtime_rate, 2 * VTIME_PER_USEC);
    assert_eq!(ioc.vtime_err, -50_000 * base);
    // Positive error slows the clock, at most to half.
    ioc.vtime_err = i64::MAX / 4;
    ioc.refresh_vrate(&now);
    assert_eq!(ioc.vtime_rate, VTIME_PER_USEC - VTIME_PER_USEC / 2);
    assert_eq!(ioc.vtime_err, 50_000 * base);
}

#[test]
fn delay_ramp_and_decay() {
    let (mut ioc, a, _) = active_pair();
    let i = a.0 as usize;
    let now = ioc.ioc_now(0);
    let (hwa, _) = ioc.current_hweight(i);
    assert_eq!(hwa, WEIGHT_ONE / 2);
    let period_vtime = 50_000 * VTIME_PER_USEC;
    // Overage of 127.5 periods (12 750 %), counted at hwa: debt ×2.
    ioc.groups[i].vtime = now.vnow;
    ioc.groups[i].done_vtime = now.vnow;
    ioc.groups[i].abs_vdebt = period_vtime * 1275 / 20;
    assert!(ioc.kick_delay(i, &now));
    assert_eq!(ioc.groups[i].delay, 125_125);
    assert_eq!(ioc.groups[i].delay_ns_in_force, 125_125_000);
    // 2.5 s later with no overage, the delay has halved twice: still in
    // force at 31 281 µs.
    ioc.groups[i].abs_vdebt = 0;
    let later = ioc.ioc_now(2_500_000_000);
    ioc.groups[i].vtime = later.vnow;
    assert!(ioc.kick_delay(i, &later));
    assert_eq!(ioc.groups[i].delay_ns_in_force, 31_281_000);
    // Past 9 halvings it drops below 250 µs and clears.
    let much_later = ioc.ioc_now(9_000_000_000);
    ioc.groups[i].vtime = much_later.vnow;
    assert!(!ioc.kick_delay(i, &much_later));
    assert_eq!(ioc.groups[i].delay, 0);
    // Saturation.
    ioc.groups[i].abs_vdebt = u64::MAX / 4;
    assert!(ioc.kick_delay(i, &much_later));
    assert_eq!(ioc.groups[i].delay, MAX_DELAY);
}

/// A must-issue bio reports the decayed delay in force, not the undecayed
/// peak still stored in `delay` (the kernel throttles by the former).
#[test]
fn must_issue_reports_decayed_delay() {
    let (mut ioc, a, _) = active_pair();
    let i = a.0 as usize;
    ioc.groups[i].delay = 125_125;
    ioc.groups[i].delay_at = 0;
    let t = 2_500_000_000;
    let vnow = ioc.ioc_now(t).vnow;
    ioc.groups[i].vtime = vnow;
    ioc.groups[i].done_vtime = vnow;
    let bio = Bio {
        id: 99,
        group: a,
        op: Op::Read,
        bytes: 4096,
        sector: 16,
        must_issue: true,
    };
    let Admit::Go { cost, delay_ns } = ioc.on_submit(t, &bio) else {
        panic!("must-issue bios never wait")
    };
    assert_eq!(cost, 0);
    assert_eq!(ioc.groups[i].delay, 125_125);
    assert_eq!(delay_ns, 31_281_000);
}

/// A caller breaking the monotonic-time contract (caught by a debug
/// assertion) gets the latest time seen instead of an interval underflow.
#[cfg(not(debug_assertions))]
#[test]
fn time_going_back_is_clamped() {
    let (mut ioc, a, b) = active_pair();
    let i = a.0 as usize;
    let bio = Bio {
        id: 98,
        group: b,
        op: Op::Read,
        bytes: 4096,
        sector: 24,
        must_issue: false,
    };
    let _ = ioc.on_submit(10_000_000, &bio);
    ioc.groups[i].wait_since = Some(10_000);
    ioc.groups[i].waitq_timer = Some(1);
    ioc.on_timer(2_000_000);
    assert_eq!(ioc.groups[i].stat.wait_us, 0);
    assert_eq!(ioc.groups[i].wait_since, None);
}

#[test]
fn debt_forgiveness_cycles() {
    let (mut ioc, a, _) = active_pair();
    let i = a.0 as usize;
    ioc.groups[i].abs_vdebt = 1 << 20;
    ioc.groups[i].inuse = 1; // as incur_debt would leave it
    ioc.child_inuse_sum = u64::from(ioc.groups[0].inuse) + u64::from(ioc.groups[1].inuse);
    ioc.dfgv_period_at = 0;
    // 250 ms of idle device: two halvings, 50 ms carried over.
    let now = ioc.ioc_now(250_000_000);
    // No budget left, so the retry after halving pays nothing off.
    ioc.groups[i].vtime = now.vnow;
    ioc.groups[i].done_vtime = now.vnow;
    ioc.forgive_debts(0, 1, &now);
    assert_eq!(ioc.dfgv_period_rem, 50_000);
    assert_eq!(ioc.groups[i].abs_vdebt, 1 << 18);
    assert_eq!(ioc.groups[i].inuse, 1);
    // The next window of 100 ms plus the 50 ms carried: one more halving.
    let now = ioc.ioc_now(350_000_000);
    ioc.groups[i].vtime = now.vnow;
    ioc.groups[i].done_vtime = now.vnow;
    ioc.forgive_debts(0, 1, &now);
    assert_eq!(ioc.groups[i].abs_vdebt, 1 << 17);
    assert_eq!(ioc.dfgv_period_rem, 50_000);
    // Debt never halves to 0.
    ioc.groups[i].abs_vdebt = 1;
    let now = ioc.ioc_now(450_000_000);
    ioc.groups[i].vtime = now.vnow;
    ioc.groups[i].done_vtime = now.vnow;
    ioc.forgive_debts(0, 1, &now);
    assert_eq!(ioc.groups[i].abs_vdebt, 1);
    // A busy window (usage above 50 %) forgives nothing and drops the carry.
    ioc.groups[i].abs_vdebt = 1 << 20;
    ioc.groups[i].vtime = now.vnow;
    let now2 = ioc.ioc_now(560_000_000);
    ioc.forgive_debts(60_000, 1, &now2);
    assert_eq!(ioc.groups[i].abs_vdebt, 1 << 20);
    assert_eq!(ioc.dfgv_period_rem, 0);
    // Without debtors the window restarts.
    ioc.forgive_debts(0, 0, &now2);
    assert_eq!((ioc.dfgv_period_at, ioc.dfgv_usage_us_sum), (560_000, 0));
}

#[test]
fn donation_target() {
    let mut ioc = ioc_with(Variant::Modern);
    ioc.set_enabled(true);
    let g = ioc.add_group(0, 1);
    ioc.on_submit(
        0,
        &Bio {
            id: 1,
            group: g,
            op: Op::Read,
            bytes: 4096,
            sector: 8,
            must_issue: false,
        },
    );
    let now = ioc.ioc_now(10_000_000);
    let pv = 10_000 * VTIME_PER_USEC; // vnow − period_at_vtime
    assert_eq!(now.vnow - ioc.period_at_vtime, pv);
    // Budget at the minimum margin: δ = ONE/2, so new_hwi = usage.
    ioc.groups[0].vtime = now.vnow.wrapping_sub(5_000 * VTIME_PER_USEC);
    ioc.groups[0].done_vtime = ioc.groups[0].vtime;
    assert_eq!(
        ioc.hweight_after_donation(0, WEIGHT_ONE, WEIGHT_ONE, 6_554, &now),
        6_554
    );
    // Just below the minimum margin: no donation (hwm).
    ioc.groups[0].vtime += 1;
    assert_eq!(
        ioc.hweight_after_donation(0, WEIGHT_ONE, 40_000, 6_554, &now),
        40_000
    );
    // Budget above the target: the excess is thrown away and booked as
    // error, then δ = ONE × target / period_vtime.
    let target = 25_000 * VTIME_PER_USEC;
    let e = 7 * VTIME_PER_USEC;
    ioc.groups[0].vtime = now.vnow.wrapping_sub(target + e);
    ioc.groups[0].done_vtime = ioc.groups[0].vtime;
    ioc.vtime_err = 0;
    assert_eq!(
        ioc.hweight_after_donation(0, WEIGHT_ONE, WEIGHT_ONE, 6_554, &now),
        2_184
    );
    assert_eq!(ioc.groups[0].vtime, now.vnow.wrapping_sub(target));
    assert_eq!(ioc.vtime_err, -(e as i64));
    // Debtors always get 1.
    ioc.groups[0].abs_vdebt = 5;
    assert_eq!(
        ioc.hweight_after_donation(0, WEIGHT_ONE, WEIGHT_ONE, 6_554, &now),
        1
    );
}

#[test]
fn transfer_flat_closed_form() {
    let (mut ioc, a, b) = active_pair();
    let now = ioc.ioc_now(1_000_000);
    let (ia, ib) = (a.0 as usize, b.0 as usize);
    ioc.groups[ia].hweight_donating = WEIGHT_ONE / 2;
    ioc.groups[ia].hweight_after_donation = WEIGHT_ONE / 8;
    ioc.surpluses.clear();
    ioc.surpluses.push(a);
    ioc.transfer_surpluses(&now);
    ioc.commit_weights();
    // s' = ⌈200·ONE·(ONE/2)/(7·ONE/8)⌉ = 7 489 829; inuse = ⌈s'/8⌉.
    assert_eq!(ioc.groups[ia].inuse, 936_229);
    assert_eq!(ioc.groups[ib].inuse, 100 * WEIGHT_ONE);
    assert_eq!(ioc.current_hweight(ia), (WEIGHT_ONE / 2, 8_192));
    assert_eq!(ioc.current_hweight(ib), (WEIGHT_ONE / 2, 57_343));
    assert_eq!(
        ioc.groups[ia].saved_margin,
        now.vnow.wrapping_sub(ioc.groups[ia].vtime) as i64
    );
}

#[test]
fn latency_statistics() {
    let mut ioc = ioc_with(Variant::Modern);
    ioc.write_qos(0, "enable=1 rpct=95 rlat=1000").unwrap();
    assert_eq!(ioc.period_us, 50_000);
    let g = ioc.add_group(0, 1);
    let size_ns = ioc.lcoefs.size_cost(Op::Read, 256) / crate::consts::VTIME_PER_NSEC;
    assert_eq!(size_ns, 269_097); // 32 pages × 1 152 074 / 137
    let done = |alloc: u64| Done {
        group: g,
        cost: 0,
        op: Op::Read,
        bytes: 128 << 10,
        alloc_ns: alloc,
        start_ns: alloc + 1_000_000,
    };
    let t = 100_000_000;
    ioc.on_done(t, &done(t - 100_000));
    ioc.on_done(t, &done(t - 1_000_000 - size_ns)); // exactly at the target net of size
    ioc.on_done(t, &done(t - 1_000_001 - size_ns)); // 1 ns late
    let w = Done {
        op: Op::Write,
        ..done(t - 30_000_000)
    };
    ioc.on_done(t, &w);
    ioc.on_done(
        t,
        &Done {
            op: Op::Other,
            ..done(0)
        },
    );
    let (missed, rq_wait_pct, nr_done) = ioc.lat_stat();
    assert_eq!(missed, [333_334, 1_000_000]);
    assert_eq!(rq_wait_pct, 8); // 4 ms of request wait in a 50 ms period
    assert_eq!(nr_done, 4);
    assert_eq!(ioc.lat_stat(), ([0, 0], 0, 0));
    // v5.4 ignores the size: the second read would now miss.
    let mut old = ioc_with(Variant::V5_4);
    old.write_qos(0, "enable=1 rpct=95 rlat=1000").unwrap();
    let g = old.add_group(0, 1);
    old.on_done(
        t,
        &Done {
            group: g,
            ..done(t - 1_000_000 - size_ns)
        },
    );
    assert_eq!(old.lat_stat().0, [1_000_000, 0]);
}

#[test]
fn busy_level_rules() {
    let mut ioc = ioc_with(Variant::Modern);
    let thr = 50_000; // rpct = 95
    let st = |missed: u32, rq: u32, short: u32, lag: u32, done: u32| PeriodStats {
        missed_ppm: [missed, 0],
        rq_wait_pct: rq,
        nr_shortages: short,
        nr_lagging: lag,
        nr_done: done,
        ..PeriodStats::default()
    };
    let run = |ioc: &mut IoCost, s: PeriodStats, from: i32| {
        ioc.busy_level = from;
        ioc.update_busy_level(&s, thr, 1_000_000);
        ioc.busy_level
    };
    assert_eq!(run(&mut ioc, st(50_001, 0, 0, 0, 9), -7), 1); // a miss ends any negative run
    assert_eq!(run(&mut ioc, st(0, 6, 0, 0, 9), 3), 4); // request waits above 5 %
    assert_eq!(run(&mut ioc, st(40_000, 0, 1, 0, 9), -3), 0); // inside the hysteresis band
    assert_eq!(run(&mut ioc, st(0, 4, 1, 0, 9), -3), 0); // 4 % of waits: not clearly fine
    assert_eq!(run(&mut ioc, st(37_500, 3, 1, 0, 9), 5), -1); // fine with shortages
    assert_eq!(run(&mut ioc, st(0, 0, 1, 1, 9), -3), -3); // lagging: hold
    assert_eq!(run(&mut ioc, st(0, 0, 0, 0, 9), -3), 0); // nobody throttled: coast
    assert_eq!(run(&mut ioc, st(0, 0, 0, 2, 0), 6), 6); // no completions, lagging: unchanged
    assert_eq!(run(&mut ioc, st(60_000, 0, 0, 0, 9), 1000), 1000); // clamp
    let mut old = ioc_with(Variant::V5_4);
    assert_eq!(run(&mut old, st(0, 0, 0, 2, 0), 6), 6); // v5.4: fine, no shortage: unchanged
    let mut s = st(0, 0, 1, 0, 9);
    s.nr_surpluses = 1;
    assert_eq!(run(&mut old, s, -3), -3); // v5.4: surpluses first
    s.nr_surpluses = 0;
    assert_eq!(run(&mut old, s, -3), -4);
}

#[test]
fn traces_when_enabled() {
    let mut ioc = IoCost::new(
        super::ssd(),
        Options {
            trace: true,
            ..Options::default()
        },
    );
    ioc.set_enabled(true);
    let g = ioc.add_group(0, 1);
    ioc.on_submit(
        5_000,
        &Bio {
            id: 1,
            group: g,
            op: Op::Read,
            bytes: 4096,
            sector: 8,
            must_issue: false,
        },
    );
    assert_eq!(
        ioc.poll_trace(),
        Some(Trace::Activate {
            now: 5_000,
            group: g
        })
    );
    assert_eq!(ioc.poll_trace(), None);
    let deadline = ioc.next_deadline().unwrap();
    assert_eq!(deadline, 50_005_000);
    ioc.on_timer(deadline);
    let Some(Trace::Period {
        now,
        vrate_base,
        busy_level,
        stats,
        ..
    }) = ioc.poll_trace()
    else {
        panic!("a period record")
    };
    assert_eq!((now, vrate_base, busy_level), (deadline, VTIME_PER_USEC, 0));
    assert_eq!(stats.nr_done, 0);
    // The IO is still in flight: the group stays active and the next period
    // is exactly one period later.
    assert_eq!(ioc.next_deadline(), Some(deadline + 50_000_000));
    // Without traces nothing is queued.
    let mut quiet = ioc_with(Variant::Modern);
    quiet.set_enabled(true);
    let g = quiet.add_group(0, 1);
    quiet.on_submit(
        0,
        &Bio {
            id: 1,
            group: g,
            op: Op::Read,
            bytes: 4096,
            sector: 8,
            must_issue: false,
        },
    );
    assert_eq!(quiet.poll_trace(), None);
}

#[test]
fn autop_steps_between_dfl_and_fast() {
    let mut ioc = ioc_with(Variant::Modern);
    ioc.set_enabled(true);
    assert_eq!(ioc.autop, crate::Autop::SsdDfl);
    ioc.vtime_base_rate = 5 * VTIME_PER_USEC; // 500 %
    ioc.vtime_rate = 5 * VTIME_PER_USEC;
    ioc.refresh_autop(1_000);
    assert_eq!(ioc.autop, crate::Autop::SsdDfl);
    ioc.refresh_autop(10_000_000_999);
    assert_eq!(ioc.autop, crate::Autop::SsdDfl, "one ns short of 10 s");
    ioc.refresh_autop(10_000_001_000);
    assert_eq!(ioc.autop, crate::Autop::SsdFast);
    assert_eq!(
        (ioc.vtime_base_rate, ioc.vtime_rate),
        (VTIME_PER_USEC, VTIME_PER_USEC)
    );
    assert_eq!(ioc.period_us, 10_000);
    assert_eq!(ioc.lcoefs, crate::Autop::SsdFast.model().lcoefs());
    // Dipping below the mark restarts the dwell.
    ioc.vtime_base_rate = VTIME_PER_USEC / 10; // 10 %
    ioc.refresh_autop(20_000_000_000);
    ioc.vtime_base_rate = VTIME_PER_USEC / 5;
    ioc.refresh_autop(25_000_000_000);
    ioc.vtime_base_rate = VTIME_PER_USEC / 10;
    ioc.refresh_autop(26_000_000_000);
    ioc.refresh_autop(35_000_000_000);
    assert_eq!(ioc.autop, crate::Autop::SsdFast);
    ioc.refresh_autop(36_000_000_000);
    assert_eq!(ioc.autop, crate::Autop::SsdDfl);
    // A user setting pins the set.
    ioc.write_qos(0, "rlat=3000").unwrap();
    ioc.vtime_base_rate = 6 * VTIME_PER_USEC;
    ioc.refresh_autop(40_000_000_000);
    ioc.refresh_autop(60_000_000_000);
    assert_eq!(ioc.autop, crate::Autop::SsdDfl);
    // And switching can be turned off.
    let mut frozen = IoCost::new(
        super::ssd(),
        Options {
            autop_switching: false,
            ..Options::default()
        },
    );
    frozen.vtime_base_rate = 6 * VTIME_PER_USEC;
    frozen.refresh_autop(0);
    frozen.refresh_autop(20_000_000_000);
    assert_eq!(frozen.autop, crate::Autop::SsdDfl);
    // Rotational and QD1 devices keep their sets.
    let hdd = crate::Device {
        rotational: true,
        ..super::ssd()
    };
    let mut h = IoCost::new(hdd, Options::default());
    h.vtime_base_rate = 6 * VTIME_PER_USEC;
    h.refresh_autop(0);
    h.refresh_autop(20_000_000_000);
    assert_eq!(h.autop, crate::Autop::Hdd);
}
