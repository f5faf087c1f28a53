//! Constants, the cost model and derived parameters, against values
//! computed by hand from the kernel's formulas (fixed point, `calc_lcoefs`,
//! `calc_vtime_cost_builtin`, the derived period and margins).

use crate::consts::*;
use crate::model::{DirCoefs, Op, calc_lcoefs};
use crate::params::{Autop, Margins, Qos, period_us, timer_slack_ns, vrate_bound};

#[test]
fn units_and_constants() {
    assert_eq!(VTIME_PER_SEC, 137_438_953_472);
    assert_eq!(VTIME_PER_USEC, 137_438);
    assert_eq!(VTIME_PER_NSEC, 137);
    assert_eq!(VRATE_MIN, 1_374);
    assert_eq!(WEIGHT_ONE, 65_536);
    assert_eq!(V54_SURPLUS_SCALE_ABS, 1_310);
    assert_eq!(V54_SURPLUS_MIN_ADJ_DELTA, 1_985);
}

#[test]
fn vrate_adj_table_steps() {
    assert_eq!(VRATE_ADJ_PCT.len(), 53);
    let expect = |i: usize| match i {
        0..=3 => 0,
        4..=19 => 1,
        20..=35 => 2,
        36..=43 => 4,
        44..=51 => 8,
        _ => 16,
    };
    for (i, &p) in VRATE_ADJ_PCT.iter().enumerate() {
        assert_eq!(p, expect(i), "index {i}");
    }
    assert_eq!(VRATE_ADJ_PCT.iter().filter(|&&p| p == 1).count(), 16);
    assert_eq!(VRATE_ADJ_PCT.iter().filter(|&&p| p == 8).count(), 8);
}

/// (read, write) coefficients of each built-in set, from `calc_lcoefs` by hand.
const COEFS: [(Autop, [u64; 3], [u64; 3]); 4] = [
    (
        Autop::Hdd,
        [3_234_924, 60_342, 368_221_708],
        [3_161_261, 57_074, 360_433_855],
    ),
    (
        Autop::SsdQd1,
        [2_289_734, 0, 17_497_044],
        [3_982_238, 94_134, 1_146_847],
    ),
    (
        Autop::SsdDfl,
        [1_152_074, 14_235_181, 14_983_047],
        [1_315_634, 3_464_021, 4_948_676],
    ),
    (Autop::SsdFast, [181_449, 8_171, 0], [323_018, 0, 0]),
];

#[test]
fn builtin_coefficients() {
    for (set, r, w) in COEFS {
        let c = set.model().lcoefs();
        assert_eq!(
            c.read,
            DirCoefs {
                page: r[0],
                seqio: r[1],
                randio: r[2]
            },
            "{set:?} read"
        );
        assert_eq!(
            c.write,
            DirCoefs {
                page: w[0],
                seqio: w[1],
                randio: w[2]
            },
            "{set:?} write"
        );
    }
}

/// Per-IO costs: a 4 KiB sequential read, a 4 KiB random read, a 128 KiB
/// sequential read, a 1 MiB random write and a 512-byte random write.
#[test]
fn builtin_per_io_costs() {
    let cases: [(Autop, [u64; 5]); 4] = [
        (
            Autop::Hdd,
            [
                3_295_266,
                371_456_632,
                103_577_910,
                1_169_716_671,
                363_595_116,
            ],
        ),
        (
            Autop::SsdQd1,
            [2_289_734, 19_786_778, 73_271_488, 1_020_599_775, 5_129_085],
        ),
        (
            Autop::SsdDfl,
            [15_387_255, 16_135_121, 51_101_549, 341_750_980, 6_264_310],
        ),
        (
            Autop::SsdFast,
            [189_620, 181_449, 5_814_539, 82_692_608, 323_018],
        ),
    ];
    let far = 1 << 30; // far more than 16 MiB away from the cursor
    let cur = 2048;
    for (set, e) in cases {
        let c = set.model().lcoefs();
        assert_eq!(
            c.abs_cost(Op::Read, 8, cur, cur, false),
            e[0],
            "{set:?} 4k seq read"
        );
        assert_eq!(
            c.abs_cost(Op::Read, 8, far, cur, false),
            e[1],
            "{set:?} 4k rand read"
        );
        assert_eq!(
            c.abs_cost(Op::Read, 256, cur, cur, false),
            e[2],
            "{set:?} 128k seq read"
        );
        assert_eq!(
            c.abs_cost(Op::Write, 2048, far, cur, false),
            e[3],
            "{set:?} 1m rand write"
        );
        assert_eq!(
            c.abs_cost(Op::Write, 1, far, cur, false),
            e[4],
            "{set:?} 512b rand write"
        );
    }
    // Derived per-IO costs of SSD_DFL and HDD, in µs at 100 % vrate.
    let dfl = Autop::SsdDfl.model().lcoefs();
    let us = |v: u64| v * 10 / VTIME_PER_USEC; // tenths of µs
    assert_eq!(us(dfl.abs_cost(Op::Read, 8, far, cur, false)), 1173);
    assert_eq!(us(dfl.abs_cost(Op::Read, 8, cur, cur, false)), 1119);
    assert_eq!(us(dfl.abs_cost(Op::Read, 256, cur, cur, false)), 3718);
    let hdd = Autop::Hdd.model().lcoefs();
    assert_eq!(
        hdd.abs_cost(Op::Read, 8, far, cur, false) / VTIME_PER_USEC,
        2702
    );
}

#[test]
fn seek_rule_and_cursor() {
    let c = Autop::SsdDfl.model().lcoefs();
    let seq = c.read.seqio + c.read.page;
    let rand = c.read.randio + c.read.page;
    // No cursor yet: sequential.
    assert_eq!(c.abs_cost(Op::Read, 8, 1 << 40, 0, false), seq);
    // Exactly 4096 pages away is still sequential; one page more is random.
    assert_eq!(c.abs_cost(Op::Read, 8, 8 + 4096 * 8, 8, false), seq);
    assert_eq!(c.abs_cost(Op::Read, 8, 8 + 4097 * 8, 8, false), rand);
    // Backwards distance counts the same.
    assert_eq!(c.abs_cost(Op::Read, 8, 8, 8 + 4097 * 8, false), rand);
    // Merges pay the size only.
    assert_eq!(c.abs_cost(Op::Read, 16, 1 << 30, 8, true), 2 * c.read.page);
    // Other ops and empty bios are free.
    assert_eq!(c.abs_cost(Op::Other, 8, 0, 0, false), 0);
    assert_eq!(c.abs_cost(Op::Write, 0, 0, 0, false), 0);
    // Size cost truncates pages with no floor.
    assert_eq!(c.size_cost(Op::Read, 7), 0);
    assert_eq!(c.size_cost(Op::Write, 24), 3 * c.write.page);
    assert_eq!(c.size_cost(Op::Other, 24), 0);
}

#[test]
fn lcoefs_edge_cases() {
    assert_eq!(
        calc_lcoefs(0, 0, 0),
        DirCoefs {
            page: 0,
            seqio: 0,
            randio: 0
        }
    );
    // 1 byte/s still rounds up to one page per second.
    assert_eq!(calc_lcoefs(1, 0, 0).page, VTIME_PER_SEC);
    // An IOPS figure slower than the bandwidth term leaves 0, not negative.
    let c = calc_lcoefs(4096, 2, 1);
    assert_eq!(c.page, VTIME_PER_SEC);
    assert_eq!((c.seqio, c.randio), (0, 0));
    let c = calc_lcoefs(u64::MAX, u64::MAX, 1);
    assert_eq!(c.page, 1);
    assert_eq!(c.seqio, 0);
    assert_eq!(c.randio, VTIME_PER_SEC - 1);
}

#[test]
fn periods_and_margins() {
    assert_eq!(period_us(&Autop::SsdDfl.qos()), 50_000);
    assert_eq!(period_us(&Autop::Hdd.qos()), 500_000);
    assert_eq!(period_us(&Autop::SsdFast.qos()), 10_000);
    let q = Qos {
        rppm: 950_000,
        rlat: 2_500,
        wppm: 950_000,
        wlat: 5_000,
        min: 10_000,
        max: 100_000_000,
    };
    assert_eq!(period_us(&q), 10_000);
    // pct 50 % on the deciding direction: (10^6 − 5·10^5)/50 000 = 10 latencies.
    let q2 = Qos {
        rppm: 500_000,
        rlat: 3_000,
        wppm: 0,
        wlat: 3_000,
        ..q
    };
    assert_eq!(period_us(&q2), 30_000);
    // Clamps.
    assert_eq!(
        period_us(&Qos {
            rlat: 10,
            wlat: 0,
            ..q
        }),
        1_000
    );
    assert_eq!(
        period_us(&Qos {
            rlat: 4_000_000,
            ..q
        }),
        1_000_000
    );
    assert_eq!(timer_slack_ns(10_000), 100_000);
    let m = Margins::new(10_000, VTIME_PER_USEC);
    assert_eq!(m.min, 1_000 * 137_438);
    assert_eq!(m.low, 2_000 * 137_438);
    assert_eq!(m.target, 5_000 * 137_438);
    assert_eq!(vrate_bound(VRATE_MIN_PPM), 1_375);
    assert_eq!(vrate_bound(1_000_000), 137_438);
    assert_eq!(vrate_bound(500_000), 68_719);
}

#[test]
fn autop_selection() {
    assert_eq!(Autop::select(true, 1), Autop::Hdd);
    assert_eq!(Autop::select(false, 1), Autop::SsdQd1);
    assert_eq!(Autop::select(false, 64), Autop::SsdDfl);
    let q = Autop::SsdQd1.qos();
    assert_eq!(
        (q.rppm, q.rlat, q.wppm, q.wlat, q.min, q.max),
        (0, 25_000, 0, 25_000, 10_000, 100_000_000)
    );
}
