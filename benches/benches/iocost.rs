//! blk-iocost costs, each for both variants (`modern`, `v5.4`): the issue
//! path of one IO (submit, completion) and the period timer with 1, 10,
//! 100 and 1000 active groups, whose cost should grow linearly with the
//! group count.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use iolab_iocost::{Admit, Bio, Device, Done, GroupId, IoCost, Op, Options, Variant};

const DEV: Device = Device {
    devno: (8, 0),
    rotational: false,
    queue_depth: 64,
};
const QOS: &str = "enable=1 ctrl=user rpct=95 rlat=2500 wpct=95 wlat=5000 min=50 max=150";
const US: u64 = 1_000;

/// The variants, as the simulator's `--policies` names them.
const VARIANTS: [(&str, Variant); 2] = [("modern", Variant::Modern), ("v5.4", Variant::V5_4)];

/// A 4 KiB read of `group` at `sector`.
fn read_4k(id: u64, group: GroupId, sector: u64, must_issue: bool) -> Bio {
    Bio {
        id,
        group,
        op: Op::Read,
        bytes: 4096,
        sector,
        must_issue,
    }
}

/// A controller of `variant` with `n` groups, each activated by one IO at
/// `now`.
fn with_groups(variant: Variant, n: u64, now: u64) -> (IoCost, Vec<GroupId>) {
    let mut ioc = IoCost::new(
        DEV,
        Options {
            variant,
            ..Options::default()
        },
    );
    let groups: Vec<GroupId> = (1..=n).map(|cg| ioc.add_group(0, cg)).collect();
    ioc.write_qos(0, QOS).expect("a valid qos line");
    for (i, &g) in groups.iter().enumerate() {
        let bio = read_4k(i as u64, g, i as u64 * 8, false);
        if let Admit::Go { cost, .. } = ioc.on_submit(now, &bio) {
            ioc.on_done(
                now + 100 * US,
                &Done {
                    group: g,
                    cost,
                    op: Op::Read,
                    bytes: 4096,
                    alloc_ns: now,
                    start_ns: now,
                },
            );
        }
    }
    while ioc.poll_release().is_some() {}
    (ioc, groups)
}

fn issue_path(c: &mut Criterion) {
    let mut g = c.benchmark_group("iocost");
    for (name, variant) in VARIANTS {
        g.bench_function(BenchmarkId::new("issue_and_complete_one_io", name), |b| {
            let (mut ioc, groups) = with_groups(variant, 2, 1_000_000);
            let grp = groups[0];
            let mut now = 2_000_000u64;
            let mut id = 0u64;
            b.iter(|| {
                // 10 µs apart: well inside any group's budget, so every IO goes.
                now += 10 * US;
                id += 1;
                let bio = read_4k(id, grp, id.wrapping_mul(7919) % (1 << 30), false);
                let cost = match ioc.on_submit(now, black_box(&bio)) {
                    Admit::Go { cost, .. } => cost,
                    Admit::Wait => {
                        // Over budget: let the timer and releases catch up.
                        while ioc.next_deadline().is_some_and(|d| d <= now) {
                            ioc.on_timer(now);
                        }
                        while ioc.poll_release().is_some() {}
                        return;
                    }
                    Admit::Refused(e) => panic!("the linear model refused a bio: {e}"),
                };
                ioc.on_done(
                    now + 80 * US,
                    &Done {
                        group: grp,
                        cost,
                        op: Op::Read,
                        bytes: 4096,
                        alloc_ns: now,
                        start_ns: now,
                    },
                );
                if ioc.next_deadline().is_some_and(|d| d <= now) {
                    ioc.on_timer(now);
                }
            });
        });
    }
    g.finish();
}

fn period_timer(c: &mut Criterion) {
    let mut g = c.benchmark_group("iocost_period_timer");
    for (name, variant) in VARIANTS {
        for n in [1u64, 10, 100, 1000] {
            g.throughput(Throughput::Elements(n));
            g.bench_with_input(BenchmarkId::new(name, n), &n, |b, &n| {
                let start = 1_000_000u64;
                let (mut ioc, groups) = with_groups(variant, n, start);
                let mut now = start;
                let mut id = 1_000_000u64;
                b.iter_custom(|iters| {
                    let mut timed = Duration::ZERO;
                    for _ in 0..iters {
                        // One IO per group per period keeps every group active,
                        // so each timer walks all of them. Only the timer is
                        // timed.
                        let at = ioc.next_deadline().expect("a period is running");
                        now = now.max(at);
                        for &grp in &groups {
                            id += 1;
                            let bio = read_4k(id, grp, id * 8, true);
                            let _ = ioc.on_submit(now, &bio);
                        }
                        while ioc.poll_release().is_some() {}
                        let t = Instant::now();
                        ioc.on_timer(black_box(now));
                        timed += t.elapsed();
                    }
                    timed
                });
            });
        }
    }
    g.finish();
}

criterion_group!(benches, issue_path, period_timer);
criterion_main!(benches);
