//! The wbt replay on small traces written in the kernel's layout, one rule
//! each: printed statistics, rebuilt ones, a stuck read, the warm-up while
//! the UNKNOWN count is not known, lost events, stray records.

use super::wbt::{Config, Source, replay};
use crate::trace::Dev;

const CFG: Config = Config {
    dev: Dev { major: 7, minor: 0 },
    queue_depth: 128,
    lat_usec: 2000,
    rotational: false,
};

fn line(t_us: u64, event: &str, payload: &str) -> String {
    format!(
        "          <idle>-0       [000] ..s1. {:>6}.{:06}: {event}: {payload}\n",
        t_us / 1_000_000,
        t_us % 1_000_000
    )
}

fn timer(t_us: u64, status: u32, step: i32, inflight: u32) -> String {
    line(
        t_us,
        "wbt_timer",
        &format!("7:0: status={status}, step={step}, inflight={inflight}"),
    )
}

fn step(t_us: u64, dir: &str, step: i32, window_us: u64, bg: u32, normal: u32, max: u32) -> String {
    line(
        t_us,
        "wbt_step",
        &format!(
            "7:0: scale {dir}: step={step}, window={window_us}us, background={bg}, normal={normal}, max={max}"
        ),
    )
}

fn stat(t_us: u64, rmin_ns: u64, rsamples: u64, wsamples: u64) -> String {
    line(
        t_us,
        "wbt_stat",
        &format!(
            "7:0: rmean={rmin_ns}, rmin={rmin_ns}, rmax={rmin_ns}, rsamples={rsamples}, wmean=1000, wmin=1000, wmax=1000, wsamples={wsamples}"
        ),
    )
}

fn rq(t_us: u64, issue: bool, op: &str, sector: u64, nr: u32) -> String {
    if issue {
        line(
            t_us,
            "block_rq_issue",
            &format!("7,0 {op} {} () {sector} + {nr} be,0,4 [fio]", nr * 512),
        )
    } else {
        line(
            t_us,
            "block_rq_complete",
            &format!("7,0 {op} () {sector} + {nr} be,0,4 [0]"),
        )
    }
}

#[test]
fn a_window_decided_by_its_printed_read_minimum_agrees() {
    // Step 0, the window's fastest read took 3 ms > 2 ms: EXCEEDED, scale
    // down to step 1 (max 8, normal 4, background 2).
    let t = [
        line(100_000, "wbt_lat", "7:0: latency 3000us"),
        stat(100_000, 3_000_000, 5, 10),
        timer(100_001, 4, 0, 2),
        step(100_002, "down", 1, 100_000, 2, 4, 8),
    ]
    .concat();
    let r = replay(&t, &CFG).expect("replays");
    assert_eq!((r.windows, r.agree, r.printed), (1, 1, 1), "{r:?}");
}

#[test]
fn the_core_judges_a_rebuilt_window_itself() {
    // No wbt_stat: block events show one read and three writes, all fast,
    // so the window is valid and OK at step 0 (no step: scale up from 0
    // to -1 happens, as the kernel shows).
    let mut t = String::new();
    t += &rq(10, true, "R", 8, 8);
    t += &rq(50, false, "R", 8, 8);
    for k in 0..3 {
        t += &rq(60 + k, true, "WS", 1000 + 8 * k, 8);
    }
    for k in 0..3 {
        t += &rq(90 + k, false, "WS", 1000 + 8 * k, 8);
    }
    t += &timer(100_000, 1, 0, 0);
    t += &step(100_001, "up", -1, 100_000, 8, 16, 31);
    let r = replay(&t, &CFG).expect("replays");
    assert_eq!((r.windows, r.agree, r.rebuilt), (1, 1, 1), "{r:?}");
    // Claimed UNKNOWN instead: the core disagrees, on the rebuilt inputs.
    let claimed = t.replace("status=1", "status=2");
    let r = replay(&claimed, &CFG).expect("replays");
    let d = r.first_divergence.expect("a divergence");
    assert_eq!((d.field, d.source), ("status", Source::Rebuilt));
    assert_eq!((d.kernel.status, d.core.status), (2, 1));
}

#[test]
fn a_stuck_read_reported_by_wbt_lat_alone_exceeds() {
    // No read completed; the watched read is 2.5 ms old (> 2 ms).
    let t = [
        line(100_000, "wbt_lat", "7:0: latency 2500us"),
        timer(100_001, 4, 0, 1),
        step(100_002, "down", 1, 100_000, 2, 4, 8),
    ]
    .concat();
    let r = replay(&t, &CFG).expect("replays");
    assert_eq!((r.windows, r.agree), (1, 1), "{r:?}");
    // 1999 µs could not have exceeded a 2 ms target: caught.
    let r = replay(&t.replace("2500us", "1999us"), &CFG).expect("replays");
    assert_eq!(r.first_divergence.map(|d| d.field), Some("status"));
}

#[test]
fn an_unknown_drift_before_the_first_step_is_adopted_not_counted() {
    // The trace starts at step -1 with the UNKNOWN count already at 3: the
    // kernel drifts to 0 on the second UNKNOWN window seen.
    let t = [
        timer(100_000, 2, -1, 0),
        timer(200_000, 2, -1, 0),
        step(200_001, "down", 0, 100_000, 4, 8, 16),
        // From here the core knows everything.
        timer(300_000, 2, 0, 0),
    ]
    .concat();
    let r = replay(&t, &CFG).expect("replays");
    assert_eq!(r.adopted, 1, "{r:?}");
    assert_eq!((r.windows, r.agree, r.unobserved), (2, 2, 2), "{r:?}");
}

#[test]
fn after_lost_events_the_core_rejoins_the_kernels_step() {
    let t = [
        timer(100_000, 3, 0, 4),
        step(100_001, "up", -1, 100_000, 8, 16, 31),
        "CPU:0 [LOST 40 EVENTS]\n".to_string(),
        // Steps happened in the lost part: the kernel is at -3 now.
        timer(900_000, 3, -3, 4),
    ]
    .concat();
    let r = replay(&t, &CFG).expect("replays");
    assert_eq!((r.lost_markers, r.lost_events), (1, 40));
    assert_eq!((r.windows, r.agree), (2, 2), "{r:?}");
}

#[test]
fn stray_records_are_counted_and_a_wrong_step_is_named() {
    let t = [
        step(50_000, "up", -1, 100_000, 8, 16, 31),
        timer(100_000, 3, 0, 4),
        // The kernel's limits at step -1 are 8/16/31: 9 is not.
        step(100_001, "up", -1, 100_000, 9, 16, 31),
    ]
    .concat();
    let r = replay(&t, &CFG).expect("replays");
    assert_eq!(r.orphan_steps, 1);
    let d = r.first_divergence.expect("a divergence");
    assert_eq!(d.field, "background");
    assert_eq!(d.line, 2);
}

#[test]
fn a_flush_sequenced_write_counts_twice_as_the_kernel_counts_it() {
    // One write whose data completes in one window and whose flush
    // sequence ends (`+ 0`) in the next: each window has a write sample,
    // so neither is UNKNOWN but UNKNOWN_WRITES.
    let t = [
        rq(10, true, "WSM", 500, 8),
        rq(20, false, "WSM", 500, 8),
        timer(100_000, 3, -3, 0),
        rq(100_100, false, "WSM", 500, 0),
        timer(200_000, 3, -3, 0),
    ]
    .concat();
    let r = replay(&t, &CFG).expect("replays");
    assert_eq!((r.windows, r.agree, r.rebuilt), (2, 2, 2), "{r:?}");
    assert_eq!(r.unpaired_completions, 0);
}

#[test]
fn a_window_from_an_idle_timer_starts_at_the_write_that_armed_it() {
    // Expiry at 1.0 s: step 0, nothing in flight, no step: the timer is
    // not re-armed. A write at 1.2990 s arms it; the kernel's timer wheel
    // ends the window 100.9 ms later, at 1.3999 s. The write and its
    // flush completed before 1.2999 s, a 100 ms window's start: the
    // kernel counted them (UNKNOWN_WRITES, scale up to step -1).
    let t = [
        timer(1_000_000, 2, 0, 0),
        rq(1_299_000, true, "WS", 100, 8),
        rq(1_299_080, false, "WS", 100, 8),
        rq(1_299_100, true, "WSM", 900, 8),
        rq(1_299_150, false, "WSM", 900, 8),
        timer(1_399_900, 3, 0, 0),
        step(1_399_901, "up", -1, 100_000, 8, 16, 31),
    ]
    .concat();
    let r = replay(&t, &CFG).expect("replays");
    assert_eq!((r.windows, r.agree, r.rebuilt), (2, 2, 2), "{r:?}");
    // A write long before the expiry (a direct write, which arms nothing)
    // does not start the window: its completion is outside it.
    let t = [
        timer(1_000_000, 2, 0, 0),
        rq(1_100_000, true, "WS", 100, 8),
        rq(1_100_080, false, "WS", 100, 8),
        timer(1_399_900, 2, 0, 0),
    ]
    .concat();
    let r = replay(&t, &CFG).expect("replays");
    assert_eq!((r.windows, r.agree), (2, 2), "{r:?}");
}

#[test]
fn a_write_armed_while_the_expiry_ran_prints_the_new_step_s_window() {
    // At step 4 (45.7 ms windows) an OK window scales up to step 3. A
    // write issued between wbt_timer and wbt_step armed the timer with
    // step 3's length, which wbt_step printed: 50 ms.
    let cfg = Config {
        lat_usec: 75,
        ..CFG
    };
    let t = [
        timer(1_000_000, 2, 4, 1),
        stat(1_048_000, 60_000, 3, 20),
        timer(1_048_001, 1, 4, 1),
        rq(1_048_005, true, "WS", 100, 8),
        step(1_048_010, "up", 3, 50_000, 1, 2, 2),
    ]
    .concat();
    let r = replay(&t, &cfg).expect("replays");
    assert_eq!((r.windows, r.agree, r.raced), (2, 2, 1), "{r:?}");
    // Without the write between them the same record is a divergence.
    let quiet = t.replace(&rq(1_048_005, true, "WS", 100, 8), "");
    let r = replay(&quiet, &cfg).expect("replays");
    assert_eq!(r.divergences, 1, "{r:?}");
    assert_eq!(r.first_divergence.map(|d| d.field), Some("window"));
}

#[test]
fn a_trace_out_of_time_order_is_refused_at_its_line() {
    // Two expiries swapped: the tracer never prints that.
    let t = [
        timer(1_000_000, 2, 0, 1),
        timer(1_200_000, 2, 0, 1),
        timer(1_100_000, 2, 0, 1),
    ]
    .concat();
    let e = replay(&t, &CFG).expect_err("refused");
    assert_eq!(e.line, 3);
    assert!(e.message.contains("earlier than line 2's"), "{e:?}");
    // Equal timestamps are in order (two events of one callback).
    let t = [timer(1_000_000, 2, 0, 1), timer(1_000_000, 2, 0, 1)].concat();
    assert!(replay(&t, &CFG).is_ok());
}
