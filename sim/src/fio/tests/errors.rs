//! Broken inputs: every error names the right line and option.

use super::*;

#[test]
fn unknown_option_with_suggestion() {
    let e = err("[job]\nbs=4k\nblocksze=4k\n");
    assert_err(&e, 3, Some("blocksze"), "Bad option <blocksze>");
    assert_eq!(e.suggestion.as_deref(), Some("blocksize"));
    assert_eq!(e.section.as_deref(), Some("job"));
    assert_eq!(e.file, "test.fio");
    assert_eq!(
        e.to_string(),
        "test.fio:3: blocksze: Bad option <blocksze> (did you mean 'blocksize'?)"
    );
}

#[test]
fn typos() {
    let cases = [
        ("ioengin=libaio", "ioengin", Some("ioengine")),
        ("iodpth=4", "iodpth", Some("iodepth")),
        ("runtim=10", "runtim", Some("runtime")),
        ("group_reportin", "group_reportin", Some("group_reporting")),
        ("BS=4k", "BS", None),
        ("zzzzzzzzzzzzzzzz=1", "zzzzzzzzzzzzzzzz", None),
    ];
    for (line, opt, sugg) in cases {
        let e = err(&format!("[global]\n[job]\n{line}\n"));
        assert_err(&e, 3, Some(opt), "Bad option");
        assert_eq!(e.suggestion.as_deref(), sugg, "{line}");
    }
    // No suggestion: no "did you mean" in the message.
    let e = err("[job]\nqqqqqqqqqqqq\n");
    assert_eq!(
        e.to_string(),
        "test.fio:2: qqqqqqqqqqqq: Bad option <qqqqqqqqqqqq>"
    );
}

#[test]
fn bad_size_suffix() {
    let e = err("[job]\n\nbs=4q\n");
    assert_err(&e, 3, Some("bs"), "bad size suffix 'q' in '4q'");
    for v in ["4kk", "k", "1.5g", "4 k", "0x", "4%", "1k:2k:3k:4k"] {
        let e = err(&format!("[job]\nbs={v}\n"));
        assert_eq!(
            (e.line, e.option.as_deref()),
            (2, Some("bs")),
            "bs={v}: {e}"
        );
    }
    let e = err("[job]\nruntime=10x\n");
    assert_err(&e, 2, Some("runtime"), "bad time suffix 'x'");
    let e = err("[job]\nsize=150%\n");
    assert_err(&e, 2, Some("size"), "outside 1..100");
    // Zone units are sizes' and offsets' only.
    let e = err("[job]\nbs=4z\n");
    assert_err(&e, 2, Some("bs"), "zone units");
}

#[test]
fn option_outside_section() {
    let e = err("; comment\nbs=4k\n[job]\n");
    assert_err(&e, 2, Some("bs"), "option bs outside of [] job section");
    assert_eq!(e.section, None);
    let e = err("direct\n");
    assert_err(&e, 1, Some("direct"), "outside of [] job section");
}

#[test]
fn empty_and_jobless_files() {
    assert_err(&err(""), 1, None, "no jobs defined");
    assert_err(&err("\n\n; nothing\n"), 3, None, "no jobs defined");
    assert_err(&err("[global]\nbs=4k\n"), 2, None, "no jobs defined");
}

#[test]
fn binary_bytes() {
    let e = err("\0\u{1}\u{7f}");
    assert_err(&e, 1, None, "control character U+0000");
    let e = err("[job]\nbs=4k\u{0}\n");
    assert_err(&e, 2, None, "control character U+0000");
    let e = err("[job]\n\u{1b}[1m\n");
    assert_err(&e, 2, None, "control character U+001B");
}

#[test]
fn absurd_numbers() {
    let e = err("[job]\nsize=99999999999999999999999\n");
    assert_err(&e, 2, Some("size"), "out of range");
    let e = err("[job]\nsize=99999999999p\n");
    assert_err(&e, 2, Some("size"), "out of range");
    let e = err("[job]\niodepth=5g\n");
    assert_err(&e, 2, Some("iodepth"), "out of range");
    let e = err("[job]\nruntime=999999999999d\n");
    assert_err(&e, 2, Some("runtime"), "out of range");
    let e = err("[job]\nsize=$((9223372036854775807+1))\n");
    assert_err(&e, 2, Some("size"), "overflow");
    let e = err("[job]\nsize=(2^64)\n");
    assert_err(&e, 2, Some("size"), "overflow");
    let e = err("[job]\nsize=(1-2)\n");
    assert_err(&e, 2, Some("size"), "negative");
}

#[test]
fn unknown_arith_variable() {
    let e = err("[job]\nbs=4k\nsize=$((NOPE*2))\n");
    assert_err(&e, 3, Some("size"), "unknown variable 'NOPE'");
    let e = parse_vars("[job]\nsize=$((X))\n", &[("X", "abc")]).expect_err("bad var");
    assert_err(&e, 2, Some("size"), "X='abc' is not an integer");
    let e = err("[job]\nsize=$((1+2)\n");
    assert_err(&e, 2, Some("size"), "unterminated $((");
    let e = err("[job]\nsize=$((1 << 2))\n");
    assert_err(&e, 2, Some("size"), "unsupported operator '<'");
}

#[test]
fn division_by_zero() {
    let e = err("[job]\nsize=$((MEMTOTAL_BYTES/0))\n");
    assert_err(&e, 2, Some("size"), "division by zero");
    let e = err("[job]\n\nsize=(1/0)\n");
    assert_err(&e, 3, Some("size"), "division by zero");
    let e = err("[job]\niodepth=(5%0)\n");
    assert_err(&e, 2, Some("iodepth"), "division by zero");
    let e = err("[job]\nsize=$mb_memory/0\n");
    assert_err(&e, 2, Some("size"), "division by zero");
}

#[test]
fn unset_env_var() {
    let e = err("[job]\nfilename=${NOPE}/f\n");
    assert_err(
        &e,
        2,
        Some("filename"),
        "environment variable 'NOPE' is not set",
    );
    let e = err("[job]\nfilename=${}\n");
    assert_err(&e, 2, Some("filename"), "empty variable name");
}

#[test]
fn unsupported_options() {
    let e = err("[job]\npre_read=1\n");
    assert_err(
        &e,
        2,
        Some("pre_read"),
        "option pre_read changes the simulated IO but is not implemented",
    );
    let e = err("[global]\npercentage_random=50\n[job]\n");
    assert_err(&e, 2, Some("percentage_random"), "not implemented");
    assert_eq!(e.section.as_deref(), Some("global"));
    let e = err("[job]\nverify=md6\n");
    assert_err(&e, 2, Some("verify"), "unknown value 'md6'");
    let e = err("[job]\nverify_only\n");
    assert_err(&e, 2, Some("verify_only"), "not implemented");
    let e = err("[job]\nzonecapacity=1m\n");
    assert_err(
        &e,
        2,
        Some("zonecapacity"),
        "zone capacities below the zone size",
    );
    let e = err("[job]\nioengine=splice\n");
    assert_err(&e, 2, Some("ioengine"), "ioengine splice is not simulated");
    let e = err("[job]\nfile_service_type=zipf:1.1\n");
    assert_err(&e, 2, Some("file_service_type"), "not simulated");
    // rw=filecreate, as fio's example files write it beside their engine,
    // names the engine: with another one it is an error at its line.
    let e = err("[job]\nrw=filecreate\n");
    assert_err(&e, 2, Some("rw"), "give ioengine=filecreate");
    let e = err("[job]\nioengine=filecreate\nrw=filecreate:4k\n");
    assert_err(&e, 3, Some("rw"), "the engine is ioengine=filecreate");
}

#[test]
fn bad_values() {
    let cases = [
        ("rw=randomread", "rw", "unknown value 'randomread'"),
        ("readwrite=randread:0", "readwrite", "below the minimum 1"),
        ("direct=2", "direct", "expected 0 or 1"),
        ("time_based=yes", "time_based", "expected an integer"),
        ("iodepth=0", "iodepth", "below the minimum 1"),
        ("rwmixread=101", "rwmixread", "above the maximum 100"),
        ("cgroup_weight=50", "cgroup_weight", "below the minimum 100"),
        ("kb_base=1023", "kb_base", "unknown value '1023'"),
        ("exit_what=some", "exit_what", "unknown value 'some'"),
        ("bs=", "bs", "missing value"),
        ("bs", "bs", "requires a value"),
        ("bs=1k,2k,3k,4k", "bs", "more than 3 entries"),
        ("bsrange=4k", "bsrange", "not a range"),
        ("filesize=0", "filesize", "at least 1"),
        ("filename=", "filename", "requires at least one name"),
        (
            "percentile_list=50:abc",
            "percentile_list",
            "not a floating point value",
        ),
        ("percentile_list=101", "percentile_list", "outside 0..100"),
        (
            "file_service_type=random:x",
            "file_service_type",
            "expected a number",
        ),
        ("size=(1+", "size", "malformed expression"),
        ("size=(", "size", "malformed expression"),
        ("size=()", "size", "malformed expression"),
        ("size=(2))", "size", "malformed expression"),
        ("size=(1)k", "size", "not a number"),
    ];
    for (line, opt, msg) in cases {
        let e = err(&format!("[job]\n{line}\n"));
        assert_err(&e, 2, Some(opt), msg);
    }
}

#[test]
fn malformed_lines() {
    assert_err(&err("[job\nbs=4k\n"), 1, None, "missing ']'");
    assert_err(&err("[]\n"), 1, None, "empty section name");
    assert_err(&err("[ ]\n"), 1, None, "empty section name");
    assert_err(&err("[job]\n=4k\n"), 2, None, "missing option name");
    assert_err(
        &err("[job]\ninclude\n"),
        2,
        Some("include"),
        "missing file name",
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!(
        "[job]\nsize={}1{}\n",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    assert_err(&err(&deep), 2, Some("size"), "nested too deeply");
    let deep = format!("[job]\nsize={}\n", "-".repeat(10_000) + "1");
    assert_eq!(err(&deep).option.as_deref(), Some("size"));
    let deep = format!(
        "[job]\nsize=$(({}1{}))\n",
        "(".repeat(5_000),
        ")".repeat(5_000)
    );
    assert_err(&err(&deep), 2, Some("size"), "nested too deeply");
    let nested = format!("[job]\nsize={}1{}\n", "$((".repeat(200), "))".repeat(200));
    assert_err(&err(&nested), 2, Some("size"), "nested too deeply");
}

#[test]
fn every_problem_of_a_file_is_listed_in_file_order() {
    let e = err("[global]\nbs=4q\n[a]\nrw=sideways\nsize=1m\nblocksze=4k\n[b]\niodepth=0\n");
    let found: Vec<(usize, Option<&str>)> =
        e.all().map(|p| (p.line, p.option.as_deref())).collect();
    assert_eq!(
        found,
        [
            (2, Some("bs")),
            (4, Some("rw")),
            (6, Some("blocksze")),
            (8, Some("iodepth"))
        ]
    );
    assert_eq!(e.omitted, 0);
    // One line per problem, each with its own file and line.
    let text = e.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[2].starts_with("test.fio:6: blocksze: Bad option <blocksze>"));
    assert!(lines[2].ends_with("(did you mean 'blocksize'?)"));
}

#[test]
fn a_file_with_one_problem_still_reads_as_one_line() {
    let e = err("[job]\nrw=sideways\n");
    assert!(e.more.is_empty());
    assert_eq!(e.to_string().lines().count(), 1);
}

#[test]
fn the_listed_problems_are_bounded_and_the_rest_counted() {
    let mut text = String::from("[job]\n");
    for i in 0..(parser::MAX_LISTED_ERRORS + 7) {
        text.push_str(&format!("nosuchoption{i}=1\n"));
    }
    let e = err(&text);
    assert_eq!(e.all().count(), parser::MAX_LISTED_ERRORS);
    assert_eq!(e.omitted, 7);
    assert!(
        e.to_string()
            .ends_with("test.fio: 7 more problems not listed"),
        "{e}"
    );
}

#[test]
fn an_unsimulated_engine_comes_first_and_claims_its_options() {
    // fio's net engine example, in short: the engine is the blocker, its
    // options are its own, and a real typo elsewhere is still found.
    let e = err(
        "[global]\nbs=4k\nrw=sideways\n[server]\nhostname=localhost\nport=8888\n\
         protocol=tcp\nioengine=net\nlisten\n",
    );
    let found: Vec<(usize, Option<&str>)> =
        e.all().map(|p| (p.line, p.option.as_deref())).collect();
    assert_eq!(
        found,
        [
            (8, Some("ioengine")),
            (3, Some("rw")),
            (5, Some("hostname")),
            (6, Some("port")),
            (7, Some("protocol")),
            (9, Some("listen")),
        ]
    );
    assert!(e.message.contains("ioengine net is not simulated"), "{e}");
    assert!(e.message.contains("libaio"), "{e}");
    let host = e.all().nth(2).unwrap_or_else(|| unreachable!());
    assert_eq!(
        host.message,
        "an option of ioengine net, which iolab does not simulate"
    );
    assert_eq!(
        host.suggestion, None,
        "no misleading 'did you mean filename'"
    );
}

#[test]
fn an_engine_chosen_in_global_claims_the_jobs_options() {
    let e = err("[global]\nioengine=rbd\n[a]\nrbdname=img\npool=rbd\nclustername=ceph\n");
    let lines: Vec<usize> = e.all().map(|p| p.line).collect();
    assert_eq!(lines, [2, 4, 5, 6]);
    assert!(
        e.all().skip(1).all(|p| p
            .message
            .contains("ioengine rbd, which iolab does not simulate")),
        "{e}"
    );
    // The same job with a simulated engine of its own: the options are
    // nobody's here, and fio would refuse them too.
    let e = err("[global]\nioengine=rbd\n[a]\nioengine=libaio\nrbdname=img\n");
    assert_eq!(e.line, 2);
    let opt = e.all().nth(1).unwrap_or_else(|| unreachable!());
    assert_eq!(opt.line, 5);
    assert!(
        opt.message.contains("an option of fio's ioengine rbd")
            && opt.message.contains("this job's ioengine is libaio"),
        "{e}"
    );
}

#[test]
fn engine_names_fio_does_not_have_are_said_so() {
    let e = err("[job]\nioengine=libaoi\n");
    assert_err(
        &e,
        2,
        Some("ioengine"),
        "libaoi is not one of fio's engines (did you mean 'libaio'?)",
    );
    let e = err("[job]\nioengine=mtd\n");
    assert_err(&e, 2, Some("ioengine"), "ioengine mtd is not simulated");
}

#[test]
fn what_fio_fixes_up_or_refuses_is_done_and_said_as_fio_does() {
    // time_based without a runtime: dropped, with a note at its line.
    let f = parse("[a]\nrw=read\nsize=1m\ntime_based\n").unwrap_or_else(|e| panic!("{e}"));
    assert!(!f.jobs[0].time_based);
    let note = f
        .accepted
        .iter()
        .find(|a| a.option == "time_based")
        .unwrap_or_else(|| panic!("no note: {:?}", f.accepted));
    assert_eq!(note.line, 4);
    assert!(note.why.contains("requires a runtime"), "{}", note.why);
    // With a runtime it stays.
    assert!(job("[a]\nrw=read\nsize=1m\ntime_based\nruntime=2\n").time_based);
    // iodepth on a synchronous engine: noted as capped at 1.
    let f = parse("[a]\nioengine=psync\niodepth=32\n").unwrap_or_else(|e| panic!("{e}"));
    assert!(
        f.accepted
            .iter()
            .any(|a| a.option == "iodepth" && a.line == 3 && a.why.contains("queue depth is 1")),
        "{:?}",
        f.accepted
    );
    let f = parse("[a]\nioengine=libaio\niodepth=32\n").unwrap_or_else(|e| panic!("{e}"));
    assert!(!f.accepted.iter().any(|a| a.option == "iodepth"));
    // An engine run as another says so at its line; one run as itself
    // says nothing.
    for (engine, says) in [
        ("mmap", "simulated as buffered psync"),
        ("io_uring_cmd", "io_uring with direct=1"),
        ("posixaio", "io_uring's queue"),
        ("cpp_null", "simulated as null"),
    ] {
        let f =
            parse(&format!("[a]\nrw=read\nioengine={engine}\n")).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            f.accepted
                .iter()
                .any(|a| a.option == "ioengine" && a.line == 3 && a.why.contains(says)),
            "{engine}: {:?}",
            f.accepted
        );
    }
    let f = parse("[a]\nioengine=io_uring\n").unwrap_or_else(|e| panic!("{e}"));
    assert!(!f.accepted.iter().any(|a| a.option == "ioengine"));
    // A job named after a device and given no file does its IO there, as
    // fio's add_job does (its disk-zone-profile.fio), said at its section.
    let f = parse("[/dev/sdb]\nrw=read\n[other]\nrw=read\n").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(f.jobs[0].filename, ["/dev/sdb"]);
    assert!(f.jobs[1].filename.is_empty());
    assert!(
        f.accepted
            .iter()
            .any(|a| a.option == "filename" && a.line == 1 && a.why.contains("is a device")),
        "{:?}",
        f.accepted
    );
    // rate and rate_iops for one direction: refused, as fio refuses them.
    let e = err("[a]\nrate=1m\nrate_iops=10\n");
    assert_err(&e, 3, Some("rate_iops"), "mutually exclusive");
    let f = parse("[a]\nrate=1m,\nrate_iops=,10\n");
    assert!(f.is_ok(), "different directions: {f:?}");
    // bs=-1: no read size.
    let e = err("[a]\nbs=-1\n");
    assert_err(&e, 2, Some("bs"), "has no read size");
}
