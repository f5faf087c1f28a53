//! The `read=`/`alloc=` grammar the simulator calls.

use iolab_tiering::*;

fn read(text: &str) -> ReadPolicyConfig {
    match parse_policy(text) {
        Ok(PolicyChoice::Read(r)) => r,
        other => panic!("{text}: {other:?}"),
    }
}

fn alloc(text: &str) -> AllocPolicy {
    match parse_policy(text) {
        Ok(PolicyChoice::Alloc(a)) => a,
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn read_policies_parse() {
    assert_eq!(read("read=pid"), ReadPolicyConfig::Pid);
    assert_eq!(
        read("read=round-robin"),
        ReadPolicyConfig::RoundRobin {
            min_contig_read: 262_144
        }
    );
    assert_eq!(
        read("read=round-robin:min_contig_read=192k"),
        ReadPolicyConfig::RoundRobin {
            min_contig_read: 196_608
        }
    );
    assert_eq!(
        read("read=round-robin:131072"),
        ReadPolicyConfig::RoundRobin {
            min_contig_read: 131_072
        }
    );
    assert_eq!(
        read("read=devid:2"),
        ReadPolicyConfig::Devid {
            read_devid: Some(2)
        }
    );
    assert_eq!(
        read("read=devid"),
        ReadPolicyConfig::Devid { read_devid: None }
    );
    assert_eq!(
        read("read=latency"),
        ReadPolicyConfig::Latency(LatencyForm::V2024)
    );
    assert_eq!(
        read("read=latency:tiebreak=2021"),
        ReadPolicyConfig::Latency(LatencyForm::V2021)
    );
    assert_eq!(read("read=queue"), ReadPolicyConfig::Queue);
    assert_eq!(
        read("read=load:penalty=always:rot=3"),
        ReadPolicyConfig::Load {
            scope: PenaltyScope::Always,
            rot_penalty: 3,
            nonrot_penalty: 0
        }
    );
}

#[test]
fn alloc_policies_parse() {
    assert_eq!(alloc("alloc=stock"), AllocPolicy::default());
    assert_eq!(
        alloc("alloc=stock:sizing=6.0"),
        AllocPolicy {
            variant: AllocVariant::Stock,
            rules: SizeRules::Uncapped6_0
        }
    );
    assert_eq!(
        alloc("alloc=ssd-metadata"),
        AllocPolicy {
            variant: AllocVariant::SsdMetadata(SsdMetadata {
                rev: SsdMetadataRev::V3,
                strict: false
            }),
            rules: SizeRules::Mainline
        }
    );
    assert_eq!(
        alloc("alloc=ssd-metadata:rev=v1:strict"),
        AllocPolicy {
            variant: AllocVariant::SsdMetadata(SsdMetadata {
                rev: SsdMetadataRev::V1,
                strict: true
            }),
            rules: SizeRules::Mainline
        }
    );
    assert_eq!(
        alloc("alloc=allocation-hint:mode=kakra:sizing=pre-6.0"),
        AllocPolicy {
            variant: AllocVariant::AllocationHint(AllocationHint {
                mode: HintMode::Kakra
            }),
            rules: SizeRules::Pre6_0
        }
    );
    assert_eq!(alloc("alloc=allocation-hint").name(), "allocation-hint");
}

#[test]
fn errors_name_the_knob() {
    let e = |t: &str| parse_policy(t).unwrap_err().to_string();
    assert_eq!(
        e("read=round-robin:min_contig_read=0"),
        "read=round-robin: min_contig_read=0: must be at least one sector"
    );
    assert_eq!(
        e("read=round-robin:min_contig_read=12q"),
        "read=round-robin: min_contig_read=12q: unknown size suffix (use k, m, g or t)"
    );
    assert_eq!(
        e("read=round-robin:speed=2"),
        "read=round-robin has no knob 'speed'"
    );
    assert_eq!(
        e("read=devid:abc"),
        "read=devid: devid=abc: expected a device id"
    );
    assert_eq!(e("read=devid:1:2"), "read=devid: knob 'devid' given twice");
    assert_eq!(
        e("read=latency:tiebreak=1999"),
        "read=latency: tiebreak=1999: expected 2024 or 2021"
    );
    assert_eq!(e("read=pid:x=1"), "read=pid has no knob 'x'");
    assert_eq!(
        e("read=fastest"),
        "unknown read policy 'fastest' (known: pid, round-robin, devid, latency, load, queue)"
    );
    assert_eq!(
        e("alloc=ssd-metadata:rev=v9"),
        "alloc=ssd-metadata: rev=v9: expected v1, v2 or v3"
    );
    assert_eq!(
        e("alloc=stock:sizing"),
        "alloc=stock: sizing=: a value is required"
    );
    assert_eq!(
        e("write=pid"),
        "'write=pid' is not a read= or alloc= policy"
    );
    assert_eq!(e("read=pid::"), "empty policy or knob in 'read=pid::'");
    assert_eq!(e(""), "empty policy or knob in ''");
}

#[test]
fn sizes() {
    assert_eq!(parse_size("256k"), Ok(262_144));
    assert_eq!(parse_size("1MiB"), Ok(1 << 20));
    assert_eq!(parse_size("2G"), Ok(2 << 30));
    assert_eq!(parse_size("4096"), Ok(4096));
    assert!(parse_size("k").is_err());
    assert!(parse_size("5b").is_err());
    assert!(parse_size("99999999999t").is_err());
    assert_eq!(parse_size("1KiB"), Ok(1024));
    assert_eq!(parse_size("2kb"), Ok(2048));
    assert_eq!(parse_size("3ki"), Ok(3072));
    // Only one unit letter and one of i / ib / b after it.
    for junk in ["5iib", "1kbb", "1kbib", "1kk", "1ki b", "7bb", "8i", "1é"] {
        assert!(parse_size(junk).is_err(), "{junk}");
    }
}

#[test]
fn build_fills_in_the_volume_defaults() {
    let p = read("read=devid").build(3, 4096, 4).unwrap();
    assert_eq!(p, ReadPolicyImpl::Devid(Devid { read_devid: 3 }));
    let p = read("read=round-robin:5000").build(1, 4096, 4).unwrap();
    match p {
        ReadPolicyImpl::RoundRobin(rr) => assert_eq!(rr.min_contig_read(), 8192),
        other => panic!("{other:?}"),
    }
    assert_eq!(read("read=load").build(1, 4096, 4).unwrap().name(), "load");
    let err = ReadPolicyConfig::RoundRobin {
        min_contig_read: 1 << 50,
    }
    .build(1, 512, 1)
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "read=round-robin: min_contig_read=1125899906842624: 1125899906842624 bytes is more than 2^32 sectors"
    );
}
