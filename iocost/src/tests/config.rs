//! io.cost.qos / io.cost.model / io.weight in the kernel's syntax
//! (`Documentation/admin-guide/cgroup-v2.rst`).

use alloc::string::ToString;

use super::ioc_with;
use crate::config::{ConfigError, ConfigFile};
use crate::consts::{VTIME_PER_USEC, WEIGHT_ONE};
use crate::{IoCost, Options, Variant};

#[test]
fn qos_write_and_read_back() {
    let mut ioc = ioc_with(Variant::Modern);
    assert_eq!(
        ioc.qos_line().to_string(),
        "8:0 enable=0 ctrl=auto rpct=0.00 rlat=25000 wpct=0.00 wlat=25000 min=1.00 max=10000.00"
    );
    ioc.write_qos(
        0,
        "enable=1 ctrl=user rpct=95 rlat=2500 wpct=95 wlat=5000 min=50 max=150",
    )
    .unwrap();
    assert_eq!(
        ioc.qos_line().to_string(),
        "8:0 enable=1 ctrl=user rpct=95.00 rlat=2500 wpct=95.00 wlat=5000 min=50.00 max=150.00"
    );
    assert!(ioc.enabled());
    assert_eq!(ioc.period_us, 10_000);
    assert_eq!(ioc.vrate_min, 68_719);
    assert_eq!(ioc.vrate_max, 206_157);
    assert_eq!(ioc.timer_slack_ns, 100_000);
}

#[test]
fn qos_partial_write_keeps_the_rest() {
    let mut ioc = ioc_with(Variant::Modern);
    ioc.write_qos(
        0,
        "enable=1 rpct=95 rlat=2500 wpct=95 wlat=5000 min=50 max=150",
    )
    .unwrap();
    ioc.write_qos(0, "8:0 rlat=1000").unwrap();
    assert_eq!(
        ioc.qos_line().to_string(),
        "8:0 enable=1 ctrl=user rpct=95.00 rlat=1000 wpct=95.00 wlat=5000 min=50.00 max=150.00"
    );
    // Decimals are truncated to two digits; min/max are clamped to [1, 10000] %.
    ioc.write_qos(0, "rpct=99.999 min=0 max=20000").unwrap();
    let q = ioc.qos();
    assert_eq!((q.rppm, q.min, q.max), (999_900, 10_000, 100_000_000));
    // ctrl=auto returns to the built-in set and keeps enable.
    ioc.write_qos(0, "ctrl=auto").unwrap();
    assert_eq!(
        ioc.qos_line().to_string(),
        "8:0 enable=1 ctrl=auto rpct=0.00 rlat=25000 wpct=0.00 wlat=25000 min=1.00 max=10000.00"
    );
    assert_eq!(ioc.period_us, 50_000);
    // A key after ctrl=auto switches back to user, from the current values.
    ioc.write_qos(0, "ctrl=auto wlat=7000").unwrap();
    assert_eq!(
        ioc.qos_line().to_string(),
        "8:0 enable=1 ctrl=user rpct=0.00 rlat=25000 wpct=0.00 wlat=7000 min=1.00 max=10000.00"
    );
    ioc.write_qos(0, "enable=0").unwrap();
    assert!(!ioc.enabled());
    // Hex like the kernel's match_u64.
    ioc.write_qos(0, "rlat=0x10").unwrap();
    assert_eq!(ioc.qos().rlat, 16);
}

#[test]
fn qos_errors_name_the_key_and_change_nothing() {
    let mut ioc = ioc_with(Variant::Modern);
    ioc.write_qos(0, "enable=1 rpct=95 rlat=2500").unwrap();
    let before = ioc.qos_line().to_string();
    let cases: [(&str, &str); 9] = [
        (
            "rpct=101",
            "io.cost.qos: rpct: invalid value `101`: expected a percentage in [0, 100] with at most two decimals",
        ),
        (
            "rpct=-1",
            "io.cost.qos: rpct: invalid value `-1`: expected a percentage in [0, 100] with at most two decimals",
        ),
        (
            "rlat=abc",
            "io.cost.qos: rlat: invalid value `abc`: expected microseconds, an unsigned 32-bit integer",
        ),
        (
            "wlat=4294967296",
            "io.cost.qos: wlat: invalid value `4294967296`: expected microseconds, an unsigned 32-bit integer",
        ),
        (
            "max=1.2.3",
            "io.cost.qos: max: invalid value `1.2.3`: expected a non-negative percentage with at most two decimals",
        ),
        (
            "ctrl=manual",
            "io.cost.qos: ctrl: invalid value `manual`: expected `auto` or `user`",
        ),
        ("rlat=100 bogus=1", "io.cost.qos: unknown key `bogus`"),
        (
            "min=60 max=50",
            "io.cost.qos: min: 60.00 is above max 50.00",
        ),
        ("9:0 rlat=1", "io.cost.qos: no such device `9:0`"),
    ];
    for (line, msg) in cases {
        let e = ioc.write_qos(0, line).unwrap_err();
        assert_eq!(e.to_string(), msg, "{line}");
        assert_eq!(ioc.qos_line().to_string(), before, "{line} changed state");
    }
    assert_eq!(
        ioc.write_qos(0, "rlat").unwrap_err(),
        ConfigError::UnknownKey {
            file: ConfigFile::Qos,
            key: "rlat".into()
        }
    );
    assert_eq!(
        ioc.write_qos(0, "enable=yes").unwrap_err(),
        ConfigError::InvalidValue {
            file: ConfigFile::Qos,
            key: "enable",
            value: "yes".into(),
            expected: "an unsigned integer"
        }
    );
}

#[test]
fn model_write_partial_and_errors() {
    let mut ioc = ioc_with(Variant::Modern);
    assert_eq!(
        ioc.model_line().to_string(),
        "8:0 ctrl=auto model=linear rbps=488636629 rseqiops=8932 rrandiops=8518 wbps=427891549 wseqiops=28755 wrandiops=21940"
    );
    ioc.write_model(0, "ctrl=user model=linear rbps=1000000000 rrandiops=20000")
        .unwrap();
    assert_eq!(
        ioc.model_line().to_string(),
        "8:0 ctrl=user model=linear rbps=1000000000 rseqiops=8932 rrandiops=20000 wbps=427891549 wseqiops=28755 wrandiops=21940"
    );
    // Coefficients follow the new parameters.
    assert_eq!(ioc.lcoefs.read.page, 562_950);
    assert_eq!(ioc.lcoefs.read.randio, 6_308_998);
    let e = ioc.write_model(0, "model=quadratic").unwrap_err();
    assert_eq!(
        e.to_string(),
        "io.cost.model: model: invalid value `quadratic`: expected `linear`"
    );
    let e = ioc.write_model(0, "wbps=-5").unwrap_err();
    assert_eq!(
        e.to_string(),
        "io.cost.model: wbps: invalid value `-5`: expected an unsigned 64-bit integer"
    );
    let e = ioc.write_model(0, "rlat=5").unwrap_err();
    assert_eq!(e.to_string(), "io.cost.model: unknown key `rlat`");
    ioc.write_model(0, "ctrl=auto").unwrap();
    assert_eq!(ioc.model(), crate::Autop::SsdDfl.model());
}

#[test]
fn weight_writes() {
    let mut ioc = ioc_with(Variant::Modern);
    let g = ioc.add_group(0, 42);
    assert_eq!(ioc.weight(g), Some(100));
    ioc.write_weight(0, g, "default 300").unwrap();
    assert_eq!(ioc.weight(g), Some(300));
    ioc.write_weight(0, g, "8:0 50").unwrap();
    assert_eq!(ioc.weight(g), Some(50));
    ioc.write_weight(0, g, "250").unwrap(); // the default changes, the device weight stays
    assert_eq!(ioc.weight(g), Some(50));
    ioc.write_weight(0, g, "8:0 default").unwrap();
    assert_eq!(ioc.weight(g), Some(250));
    assert_eq!(ioc.groups[0].weight, 250 * WEIGHT_ONE);
    let e = ioc.write_weight(0, g, "default 0").unwrap_err();
    assert_eq!(
        e.to_string(),
        "io.weight: weight: invalid value `0`: expected an integer in [1, 10000]"
    );
    let e = ioc.write_weight(0, g, "10001").unwrap_err();
    assert_eq!(
        e.to_string(),
        "io.weight: weight: invalid value `10001`: expected an integer in [1, 10000]"
    );
    let e = ioc.write_weight(0, g, "8:1 10").unwrap_err();
    assert_eq!(e.to_string(), "io.weight: no such device `8:1`");
    ioc.set_weight(0, g, 7).unwrap();
    assert_eq!(ioc.weight(g), Some(7));
    let e = ioc.set_weight(0, g, 0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "io.weight: weight: invalid value `0`: expected an integer in [1, 10000]"
    );
    ioc.write_weight(0, g, "8:0 default").unwrap();
    let e = ioc.write_weight(0, crate::GroupId(9), "10").unwrap_err();
    assert_eq!(e.to_string(), "io.weight: no group 9");
    assert_eq!(ioc.weight(g), Some(250));
}

#[test]
fn hdd_defaults_and_devno() {
    let dev = crate::Device {
        devno: (259, 3),
        rotational: true,
        queue_depth: 32,
    };
    let mut ioc = IoCost::new(dev, Options::default());
    assert_eq!(ioc.period_us, 500_000);
    ioc.write_qos(0, "259:3 enable=1").unwrap();
    assert_eq!(
        ioc.qos_line().to_string(),
        "259:3 enable=1 ctrl=auto rpct=0.00 rlat=250000 wpct=0.00 wlat=250000 min=1.00 max=10000.00"
    );
    assert_eq!(ioc.margins.target, 250_000 * VTIME_PER_USEC as i64);
}
