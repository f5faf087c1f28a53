//! blk-iocost behaviours B2–B4 of `docs/iocost-reproduction.md` on the
//! simulated device, with the bundled job files cut to a few seconds:
//! work conservation, proportional shares, vrate tracking the device.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{job, run_as, scenario};
use iolab_sim::stats::Dir;
use iolab_sim::{RunOutput, Scenario};

fn cut(text: &str, secs: u32) -> Scenario {
    scenario(
        &text.replace("runtime=10", &format!("runtime={secs}")),
        "sata-ssd",
        4 << 30,
        1,
    )
}

fn iops(out: &RunOutput, name: &str) -> f64 {
    job(out, name).dir(Dir::Read).iops
}

fn vrate(out: &RunOutput) -> f64 {
    out.extra["policy_report"]["vrate_pct"]
        .as_f64()
        .expect("vrate_pct in the iocost report")
}

#[test]
fn b2_the_saturating_group_gets_what_the_light_one_leaves() {
    // The whole 10 s job: the 2019 donation needs several seconds to settle.
    let s = cut(
        include_str!("../../scenarios/iocost-b2-work-conservation.fio"),
        10,
    );
    for variant in ["iocost", "iocost-v5.4"] {
        let out = run_as(&s, variant);
        let (light, heavy) = (iops(&out, "light"), iops(&out, "heavy"));
        let share = heavy / (light + heavy);
        // Expected: B ≈ 90 %; a half/half split would leave it 50 %.
        assert!(share > 0.85, "{variant}: heavy share {share:.3}");
    }
}

#[test]
fn b3_weights_100_100_300_split_20_20_60() {
    let s = cut(include_str!("../../scenarios/iocost-b3-shares.fio"), 3);
    let none = run_as(&s, "none");
    let even = iops(&none, "c") / (iops(&none, "a") + iops(&none, "b") + iops(&none, "c"));
    assert!((even - 1.0 / 3.0).abs() < 0.02, "none: c's share {even:.3}");
    for variant in ["iocost", "iocost-v5.4"] {
        let out = run_as(&s, variant);
        let (a, b, c) = (iops(&out, "a"), iops(&out, "b"), iops(&out, "c"));
        let t = a + b + c;
        for (name, got, want) in [("a", a / t, 0.2), ("b", b / t, 0.2), ("c", c / t, 0.6)] {
            assert!(
                (got - want).abs() < 0.03,
                "{variant}: {name} got {got:.3}, want {want}"
            );
        }
    }
}

#[test]
fn b4_vrate_follows_the_device_against_the_model_within_its_bounds() {
    // The saturated device does about 95k random 4 KiB reads a second.
    let s = cut(include_str!("../../scenarios/iocost-b3-shares.fio"), 4);
    let qos = "iocost:rpct=95:rlat=5000:wpct=95:wlat=5000:rbps=2000000000";
    // A model at half the device: vrate climbs to about 200 %.
    let fast = run_as(&s, &format!("{qos}:rseqiops=47745:rrandiops=47745"));
    assert!(
        (vrate(&fast) - 200.0).abs() < 20.0,
        "vrate {}",
        vrate(&fast)
    );
    // A model at twice the device: waits for tags push vrate to about 50 %.
    let slow = run_as(&s, &format!("{qos}:rseqiops=191000:rrandiops=191000"));
    assert!((vrate(&slow) - 50.0).abs() < 12.0, "vrate {}", vrate(&slow));
    // max=150 holds vrate, and with it the throughput, to 1.5 × the model.
    let capped = run_as(
        &s,
        &format!("{qos}:rseqiops=47745:rrandiops=47745:min=50:max=150"),
    );
    assert!(
        (vrate(&capped) - 150.0).abs() < 0.5,
        "vrate {}",
        vrate(&capped)
    );
    let total = iops(&capped, "a") + iops(&capped, "b") + iops(&capped, "c");
    assert!(
        (total / (1.5 * 47745.0) - 1.0).abs() < 0.03,
        "{total} IOPS under max=150"
    );
}
