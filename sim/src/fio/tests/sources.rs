//! Jobs from fio's command line and from several job files
//! ([`parse_jobs`]), as fio 3.33's `parse_cmd_line` and `parse_options`
//! read them.

use super::*;

fn sources(args: &[&str], files: &[(&str, &str)]) -> Result<JobFile, ParseError> {
    let vars = BTreeMap::new();
    let env = ParseEnv {
        mem_bytes: MEM,
        ncpus: 8,
        pagesize: 4096,
        vars: &vars,
        include: &no_include,
    };
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let mut all = Vec::new();
    if !args.is_empty() {
        all.push(JobSource::Args {
            name: "<command line>",
            args: &args,
        });
    }
    all.extend(
        files
            .iter()
            .map(|&(name, text)| JobSource::File { name, text }),
    );
    parse_jobs(&all, &env)
}

#[test]
fn each_name_starts_a_job_and_options_before_it_are_global() {
    let f = sources(
        &[
            "--size=64m",
            "--name=reader",
            "--rw=randread",
            "--bs=8k",
            "-name=writer",
            "--rw=write",
            "--time_based",
            "--runtime=5",
        ],
        &[],
    )
    .expect("parses");
    let names: Vec<&str> = f.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["reader", "writer"]);
    let (r, w) = (&f.jobs[0], &f.jobs[1]);
    assert_eq!(r.rw.mode, RwMode::RandRead);
    assert_eq!(r.bs[DDIR_READ].min, 8 * KIB);
    // The writer has the global size, not the reader's bs.
    assert_eq!(w.size, Some(SizeSpec::Bytes(64 * MIB)));
    assert_eq!(w.bs[DDIR_WRITE].min, 4 * KIB);
    assert!(w.time_based);
    assert_eq!(w.runtime_ns, Some(5 * SEC));
    // Their places: the section at its --name, options at their argument.
    assert_eq!((r.file.as_str(), r.line), ("<command line>", 2));
    assert_eq!(w.where_set("runtime"), ("<command line>", 8));
    assert_eq!(f.global_options, [("size".to_string(), "64m".to_string())]);
}

#[test]
fn the_command_line_globals_reach_the_first_file_only_and_files_run_in_turn() {
    // As fio 3.33 does: `fio --bs=8k a.fio b.fio` reads a.fio's job with
    // 8 KiB blocks and b.fio's with 4 KiB, and b.fio's first job waits for
    // a.fio's jobs.
    let a = "[global]\nsize=1m\n[x]\nrw=read\n[x2]\nrw=read\n";
    let b = "[y]\nrw=read\nsize=1m\n[y2]\nrw=read\nsize=1m\n";
    let f = sources(&["--bs=8k"], &[("a.fio", a), ("b.fio", b)]).expect("parses");
    let got: Vec<(&str, u64, bool)> = f
        .jobs
        .iter()
        .map(|j| (j.name.as_str(), j.bs[DDIR_READ].min, j.stonewall))
        .collect();
    assert_eq!(
        got,
        [
            ("x", 8 * KIB, false),
            ("x2", 8 * KIB, false),
            ("y", 4 * KIB, true),
            ("y2", 4 * KIB, false),
        ]
    );
    // a.fio's [global] stays in a.fio: b.fio's jobs have no size of it.
    assert_eq!(f.jobs[2].size, Some(SizeSpec::Bytes(MIB)));
    assert_eq!(f.jobs[2].file, "b.fio");
    // Job options list only the globals of their own file.
    assert!(!f.jobs[3].options.iter().any(|(k, _)| k == "bs"));
    // Command-line jobs come first and the first file runs beside them.
    let f = sources(&["--name=c", "--rw=read", "--size=1m"], &[("a.fio", a)]).expect("parses");
    let got: Vec<(&str, bool)> = f
        .jobs
        .iter()
        .map(|j| (j.name.as_str(), j.stonewall))
        .collect();
    assert_eq!(got, [("c", false), ("x", false), ("x2", false)]);
}

#[test]
fn bad_arguments_are_named_by_their_place() {
    let e = sources(
        &[
            "--name=r",
            "--rw=randomread",
            "size=1m",
            "--debug=io",
            "--",
            "--bs=4q",
        ],
        &[],
    )
    .expect_err("bad arguments");
    let all: Vec<(usize, String)> = std::iter::once(&e)
        .chain(e.more.iter())
        .map(|p| (p.line, p.message.clone()))
        .collect();
    assert_eq!(all.len(), 5, "{all:?}");
    assert!(all[0].1.contains("unknown value 'randomread'"), "{all:?}");
    assert_eq!(all[0].0, 2);
    assert!(
        all[1].1.contains("'size=1m' is not a job option"),
        "{all:?}"
    );
    assert!(
        all[2]
            .1
            .contains("fio's own option, not a job's; iolab has no such option"),
        "{all:?}"
    );
    assert!(all[3].1.contains("names no option"), "{all:?}");
    assert_eq!(all[4].0, 6);
    assert_eq!(e.file, "<command line>");
    // A pasted fio command line: its program name is skipped, and counted.
    let e = sources(&["fio", "--name=r", "--bs=4q"], &[]).expect_err("bad size");
    assert_eq!((e.line, e.more.len()), (3, 0), "{e}");
    // fio's own options iolab acts on are the command's, not refused.
    let f = sources(
        &["--minimal", "--name", "r", "--output-format", "json"],
        &[],
    )
    .expect("own");
    assert_eq!(f.jobs[0].name, "r");
    let e = sources(&["--name="], &[]).expect_err("no name");
    assert!(e.message.contains("needs a job name"), "{e}");
    // Only globals: no jobs, said of the command line.
    let e = sources(&["--rw=read"], &[]).expect_err("no job");
    assert!(e.to_string().contains("no jobs defined"), "{e}");
}
