//! Unit tests of the value parsers, the evaluators and the suggestions.

use std::collections::BTreeMap;

use super::super::expand::Vars;
use super::super::suggest::{distance, distance_ok, suggest};
use super::super::value::{Size, parse_size, parse_time_ns, per_dir};

fn with_vars<R>(vars: &[(&str, &str)], f: impl FnOnce(&Vars) -> R) -> R {
    let map: BTreeMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let v = Vars {
        mem_bytes: 1 << 30,
        ncpus: 4,
        pagesize: 4096,
        vars: &map,
    };
    f(&v)
}

#[test]
fn bash_arithmetic() {
    with_vars(&[("N", "3"), ("NEG", "-7")], |v| {
        let cases = [
            ("1+2*3", 7),
            ("(1+2)*3", 9),
            ("2**10", 1024),
            ("2**3**2", 512),
            ("-2**2", 4),
            ("-7/2", -3),
            ("7/-2", -3),
            ("-7%3", -1),
            ("10-4-3", 3),
            ("100/10/5", 2),
            ("010", 8),
            ("0x10", 16),
            ("+5", 5),
            ("- - 5", 5),
            ("MEMTOTAL_BYTES/1048576", 1024),
            ("NUM_LOGICAL_CPUS*2", 8),
            ("$N*N*${N}", 27),
            ("NEG*2", -14),
            ("0**0", 1),
            ("(-1)**3", -1),
        ];
        for (e, want) in cases {
            assert_eq!(v.eval_bash(e), Ok(want), "{e}");
        }
        for e in [
            "2**-1",
            "1/0",
            "5%0",
            "9223372036854775807*2",
            "08",
            "1 2",
            "",
            "2 +",
            "(1",
        ] {
            assert!(v.eval_bash(e).is_err(), "{e} should fail");
        }
        assert_eq!(v.expand_arith("a$((1+1))b$((N))c"), Ok("a2b3c".to_string()));
        assert_eq!(
            v.expand_arith("$(( $((1+1)) * (2+1) ))"),
            Ok("6".to_string())
        );
        assert_eq!(
            v.expand_arith("no arith $(ls) ${X}"),
            Ok("no arith $(ls) ${X}".to_string())
        );
        assert!(v.expand_arith("$((1)+2)").is_err());
    });
}

#[test]
fn env_and_keywords() {
    with_vars(&[("A", "x"), ("B", "")], |v| {
        assert_eq!(v.expand_env("${A}/${B}/${A}"), Ok("x//x".to_string()));
        assert_eq!(v.expand_env("${A"), Ok("${A".to_string()));
        assert!(v.expand_env("${C}").is_err());
        assert_eq!(v.expand_keywords("$mb_memory"), Ok("1024".to_string()));
        assert_eq!(v.expand_keywords("$ncpus-$ncpus"), Ok("0".to_string()));
        assert_eq!(v.expand_keywords("2^$ncpus"), Ok("2^4".to_string()));
        assert_eq!(v.expand_keywords("($pagesize*2)%3"), Ok("2".to_string()));
        assert_eq!(
            v.expand_keywords("/tmp/$ncpus-x"),
            Ok("/tmp/4-x".to_string())
        );
        assert_eq!(v.expand_keywords("$nothing"), Ok("$nothing".to_string()));
    });
}

#[test]
fn sizes() {
    assert_eq!(parse_size("4k", 1024, false), Ok(Size::Bytes(4096)));
    assert_eq!(parse_size(" 4K ", 1024, false), Ok(Size::Bytes(4096)));
    assert_eq!(parse_size("4kib", 1024, false), Ok(Size::Bytes(4000)));
    assert_eq!(
        parse_size("1pb", 1000, false),
        Ok(Size::Bytes(1_000_000_000_000_000))
    );
    assert_eq!(parse_size("0x1F", 1024, false), Ok(Size::Bytes(31)));
    assert_eq!(parse_size("7%", 1024, true), Ok(Size::Percent(7)));
    assert_eq!(parse_size("(3*2k)", 1024, false), Ok(Size::Bytes(6144)));
    for bad in [
        "",
        "k",
        "4x",
        "4kbb",
        "4ib",
        "18446744073709551616",
        "16384p",
        "(1/0)",
        "1e3",
    ] {
        assert!(parse_size(bad, 1024, true).is_err(), "{bad}");
    }
}

#[test]
fn times() {
    assert_eq!(parse_time_ns("5", 1_000_000), Ok(5_000_000_000));
    assert_eq!(parse_time_ns("5", 1), Ok(5_000));
    assert_eq!(parse_time_ns("5MS", 1), Ok(5_000_000));
    assert_eq!(parse_time_ns("(1m-30s)", 1_000_000), Ok(30_000_000_000));
    for bad in ["", "5 s", "5sx", "5min", "1.5s", "-1"] {
        assert!(parse_time_ns(bad, 1).is_err(), "{bad}");
    }
}

#[test]
fn per_direction_lists() {
    assert_eq!(per_dir("a", true), Ok(vec![(0, "a"), (1, "a"), (2, "a")]));
    assert_eq!(per_dir("a,b", true), Ok(vec![(0, "a"), (1, "b"), (2, "b")]));
    assert_eq!(per_dir("a,b,", true), Ok(vec![(0, "a"), (1, "b")]));
    assert_eq!(per_dir(",b,c", true), Ok(vec![(1, "b"), (2, "c")]));
    assert_eq!(
        per_dir("a-b", false),
        Ok(vec![(0, "a-b"), (1, "a-b"), (2, "a-b")])
    );
    assert_eq!(
        per_dir("(1-2),3", true),
        Ok(vec![(0, "(1-2)"), (1, "3"), (2, "3")])
    );
    assert!(per_dir(",,", true).is_err());
    assert!(per_dir("a,b,c,d", true).is_err());
}

#[test]
fn levenshtein_and_suggestions() {
    assert_eq!(distance("", ""), 0);
    assert_eq!(distance("abc", ""), 3);
    assert_eq!(distance("kitten", "sitting"), 3);
    assert_eq!(distance("blocksze", "blocksize"), 1);
    // fio's threshold: distance <= (len + 1) / 2.
    assert!(distance_ok("abcd", 2));
    assert!(!distance_ok("abcd", 3));
    assert!(distance_ok("abcde", 3));
    assert_eq!(suggest("numjob"), Some("numjobs"));
    assert_eq!(suggest("rwmixreed"), Some("rwmixread"));
    assert_eq!(suggest("x"), None);
    assert_eq!(suggest(""), None);
}
