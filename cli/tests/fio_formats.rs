//! fio's other output formats and its own command-line options: terse
//! (`--minimal`), `json+`, several formats at once, and a pasted fio
//! command line's `--output-format`, `--parse-only`, `--eta`, `--name x`.
//! Where fio is installed, the same jobs run on it too and its output
//! must have the shape iolab's has.

mod common;

use common::{iolab, stderr, stdout};

/// What one terse field looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    /// A whole number.
    Int,
    /// `%f`: six decimals.
    Float,
    /// `%f%%`.
    Pct6,
    /// `%3.1f%%`.
    Pct1,
    /// `%3.2f%%`.
    Pct2,
    /// A percentile, `99.900000%=V` (or `0%=0` for an unused slot).
    Percentile,
    /// Text: a version, a name.
    Text,
}

fn shape(field: &str) -> Field {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let decimals = |s: &str, n: usize| {
        s.split_once('.')
            .is_some_and(|(a, b)| digits(a) && b.len() == n && digits(b))
    };
    if digits(field) {
        Field::Int
    } else if decimals(field, 6) {
        Field::Float
    } else if let Some(p) = field.strip_suffix('%') {
        match p.split_once('.').map_or(0, |(_, b)| b.len()) {
            6 if decimals(p, 6) => Field::Pct6,
            1 if decimals(p, 1) => Field::Pct1,
            2 if decimals(p, 2) => Field::Pct2,
            _ => Field::Text,
        }
    } else if let Some((p, v)) = field.split_once("%=") {
        if digits(v) && (p == "0" || decimals(p, 6)) {
            Field::Percentile
        } else {
            Field::Text
        }
    } else {
        Field::Text
    }
}

/// fio 3.33's terse v3 line for one job on one disk, field by field
/// (`show_thread_status_terse_all` and `show_disk_util` in its `stat.c`
/// and `diskutil.c`): 130 fields.
fn fio_terse_shape() -> Vec<Field> {
    use Field::*;
    let mut v = vec![Int, Text, Text, Int, Int];
    for _dir in ["read", "write"] {
        v.extend([Int, Int, Int, Int]);
        v.extend([Int, Int, Float, Float]); // slat
        v.extend([Int, Int, Float, Float]); // clat
        v.extend([Percentile; 20]);
        v.extend([Int, Int, Float, Float]); // lat
        v.extend([Int, Int, Pct6, Float, Float]); // bw
    }
    v.extend([Pct6, Pct6, Int, Int, Int]); // cpu
    v.extend([Pct1; 7]); // depths
    v.extend([Pct2; 22]); // latency buckets, µs then ms
    v.extend([Text, Int, Int, Int, Int, Int, Int, Int, Pct2]); // a disk
    v
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The mixed job both run, on `file`.
fn job(file: &str) -> Vec<String> {
    [
        "--name=terse",
        &format!("--filename={file}"),
        "--rw=randrw",
        "--size=16m",
        "--direct=1",
        "--ioengine=libaio",
        "--iodepth=4",
        "--runtime=1",
        "--time_based",
    ]
    .iter()
    .map(|a| (*a).to_owned())
    .collect()
}

#[test]
fn terse_lines_have_fios_fields_and_the_jsons_figures() {
    let dir = scratch("iolab-terse");
    let file = dir.join("t.dat");
    let f = file.to_str().expect("utf-8 path");
    let mut cmd = vec![
        "run",
        "--device",
        "nvme",
        "--output-format",
        "terse,json",
        "--",
    ];
    let args = job(f);
    cmd.extend(args.iter().map(String::as_str));
    let o = iolab(&cmd);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // Terse first, then the JSON, as fio writes them.
    let (line, json) = out.split_once('\n').expect("a terse line, then JSON");
    let v: serde_json::Value = serde_json::from_str(json).expect("the JSON follows");
    let fields: Vec<&str> = line.split(';').collect();
    let shapes: Vec<Field> = fields.iter().map(|f| shape(f)).collect();
    assert_eq!(shapes, fio_terse_shape(), "{line}");
    // The figures are the JSON's.
    let read = &v["jobs"][0]["read"];
    assert_eq!(fields[2], "terse");
    assert_eq!(fields[5], read["io_kbytes"].to_string());
    assert_eq!(fields[6], read["bw"].to_string());
    assert_eq!(fields[8], read["runtime"].to_string());
    let clat = &read["clat_ns"];
    assert_eq!(
        fields[13],
        (clat["min"].as_u64().unwrap() / 1000).to_string()
    );
    assert_eq!(
        fields[15],
        format!("{:.6}", clat["mean"].as_f64().unwrap() / 1000.0)
    );
    let p99 = clat["percentile"]["99.000000"].as_u64().unwrap() / 1000;
    assert_eq!(fields[17 + 12], format!("99.000000%={p99}"));
    assert_eq!(fields[17 + 17], "0%=0", "fio's unused slots");
    let disk = &v["disk_util"][0];
    assert_eq!(fields[121], disk["name"].as_str().unwrap());
    assert_eq!(fields[122], disk["read_ios"].to_string());

    let real = std::process::Command::new("fio")
        .args(&args)
        .arg("--minimal")
        .output();
    match real {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            let line = text.lines().next().expect("fio's terse line");
            // fio lists every disk under the file; the first is compared.
            let fio: Vec<Field> = line.split(';').take(130).map(shape).collect();
            assert_eq!(fio, fio_terse_shape(), "fio's own line: {line}");
            assert!(line.starts_with("3;fio-"), "{line}");
        }
        // No fio here: the committed shape stands for it.
        _ => eprintln!("fio not run: the terse shape is checked against iolab only"),
    }
    let _ = std::fs::remove_file(&file);
}

#[test]
fn a_description_ends_the_terse_line_and_minimal_is_terse_alone() {
    let o = iolab(&[
        "run",
        "--device",
        "nvme",
        "--minimal",
        "--",
        "--name=d",
        "--size=4m",
        "--description=two words",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.trim_end().ends_with(";two words"), "{out}");
    assert_eq!(out.split(';').count(), 131, "{out}");
    // A direction without IO lists the percentiles at 0, as fio does.
    assert!(out.contains(";1.000000%=0;"), "{out}");
}

#[test]
fn json_plus_lists_each_latencys_buckets_for_fios_script() {
    let o = iolab(&[
        "run",
        "--device",
        "sata-ssd",
        "--output-format",
        "json+",
        "--",
        "--name=b",
        "--size=8m",
        "--rw=randrw",
        "--direct=1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    for dir in ["read", "write"] {
        let clat = &v["jobs"][0][dir]["clat_ns"];
        let bins = clat["bins"].as_object().expect("bins under json+");
        let n: u64 = bins.values().map(|c| c.as_u64().unwrap()).sum();
        assert_eq!(
            n,
            clat["N"].as_u64().unwrap(),
            "{dir}: every IO in a bucket"
        );
        let min = clat["min"].as_u64().unwrap() as f64;
        let first: f64 = bins.keys().next().unwrap().parse().unwrap();
        // A bucket's value is within fio's 1/64 of what it holds.
        assert!((first - min).abs() <= min / 64.0 + 1.0, "{first} vs {min}");
    }
    // Without the plus, no bins.
    let o = iolab(&[
        "run",
        "--device",
        "sata-ssd",
        "--output-format",
        "json",
        "--",
        "--name=b",
        "--size=1m",
    ]);
    assert!(!stdout(&o).contains("\"bins\""));

    let script = std::path::Path::new("/usr/bin/fio_jsonplus_clat2csv");
    if !script.exists() {
        eprintln!("fio_jsonplus_clat2csv not here: the bins are checked by their sums only");
        return;
    }
    let dir = scratch("iolab-jsonplus");
    let input = dir.join("run.json");
    std::fs::write(&input, v.to_string()).expect("write");
    let ran = std::process::Command::new(script)
        .arg(&input)
        .arg(dir.join("out"))
        .current_dir(&dir)
        .output()
        .expect("the script starts");
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let csv = std::fs::read_to_string(dir.join("out_job0")).expect("the script's CSV");
    assert!(csv.lines().count() > 2, "{csv}");
    assert!(csv.starts_with("nsec, read_slat_ns_count"), "{csv}");
}

#[test]
fn a_pasted_fio_command_line_keeps_its_own_options() {
    // `--name x` with a space, fio's own --minimal among the job options.
    let o = iolab(&[
        "run",
        "--device",
        "nvme",
        "--",
        "fio",
        "--minimal",
        "--name",
        "x",
        "--rw",
        "randread",
        "--size",
        "4m",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("3;iolab-"), "{}", stdout(&o));
    // --output-format there as here.
    let o = iolab(&[
        "run",
        "--device",
        "nvme",
        "--",
        "--output-format=json",
        "--name=x",
        "--size=4m",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["jobs"][0]["jobname"], "x");
    // --parse-only: checked, nothing run, nothing on stdout.
    let o = iolab(&[
        "run",
        "--device",
        "nvme",
        "--",
        "--name=x",
        "--size=4m",
        "--parse-only",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    assert!(stderr(&o).contains("nothing run"), "{}", stderr(&o));
    // ... and a bad job still fails it.
    let o = iolab(&[
        "run",
        "--device",
        "nvme",
        "--parse-only",
        "--",
        "--name=x",
        "--size=4q",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // --eta never: no bar even where one would be drawn.
    let o = iolab(&[
        "run",
        "--device",
        "nvme",
        "--eta",
        "never",
        "--",
        "--name=x",
        "--size=4m",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // fio's --eta-newline and --eta-interval, as a CI script passes them,
    // are taken (iolab refused them before; when a line is drawn is wall
    // time's, not checked here).
    let o = iolab(&[
        "run",
        "--device",
        "nvme",
        "--",
        "--eta-newline=1",
        "--eta-interval=500ms",
        "--name=x",
        "--size=4m",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines = stderr(&o).lines().filter(|l| l.contains("eta")).count();
    assert_eq!(lines, 0, "{}", stderr(&o));
}

#[test]
fn fios_own_options_that_do_not_fit_are_named_at_their_place() {
    let cases: [(&[&str], &str); 8] = [
        (
            &["--", "--name=x", "--size=1m", "--eta", "sometimes"],
            "<command line>:3: eta: 'sometimes' is not when to draw progress",
        ),
        (
            &["--", "--eta-interval=100ms", "--name=x", "--size=1m"],
            "--eta-interval 100ms: at least 250 ms, as fio takes it",
        ),
        (
            &["--eta-newline", "0", "--", "--name=x", "--size=1m"],
            "--eta-newline 0: give a time above 0",
        ),
        (
            &["--", "--name=x", "--size=1m", "--output-format=xml"],
            "<command line>:3: output-format: 'xml' is not an output format",
        ),
        (
            &["--", "--debug", "io", "--name=x", "--size=1m"],
            "--debug is fio's own option, not a job's; iolab has no such option",
        ),
        (&["--", "--name=x", "--iodepth"], "--iodepth needs a value"),
        (
            &[
                "--terse-version",
                "6",
                "--minimal",
                "--",
                "--name=x",
                "--size=1m",
            ],
            "--terse-version 6: fio's terse versions are 2 to 5",
        ),
        (
            &[
                "--output",
                "a.txt",
                "--",
                "--output=b.txt",
                "--name=x",
                "--size=1m",
            ],
            "given as \"b.txt\" here and as \"a.txt\" to iolab",
        ),
    ];
    for (args, said) in cases {
        let mut cmd = vec!["run", "--device", "nvme"];
        cmd.extend_from_slice(args);
        let o = iolab(&cmd);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(said), "{args:?}: {}", stderr(&o));
    }
    // terse is one run's lines: refused for a comparison and over seeds.
    let o = iolab(&[
        "compare",
        "--device",
        "nvme",
        "--policies",
        "none,wbt",
        "--minimal",
        "--",
        "--name=x",
        "--size=1m",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("terse lines are one run's jobs"),
        "{}",
        stderr(&o)
    );
}

/// `percentile_list`, `clat_percentiles` and `lat_percentiles` act as
/// fio's (checked against fio 3.33 on this job's file: `50th=[`, a `lat
/// percentiles` block, none at all with clat_percentiles=0), and a job
/// shorter than a millisecond reports fio's rounded-up 1 ms, not 0.
#[test]
fn percentile_options_and_sub_millisecond_jobs_report_as_fios() {
    let run = |extra: &[&str], format: &str| {
        let mut a = vec![
            "run",
            "--device",
            "nvme",
            "--output-format",
            format,
            "--",
            "--name=p",
            "--size=1m",
        ];
        a.extend_from_slice(extra);
        let o = iolab(&a);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        stdout(&o)
    };
    let json = |extra: &[&str]| -> serde_json::Value {
        serde_json::from_str(&run(extra, "json")).expect("JSON")
    };
    let v = json(&["--percentile_list=50:99", "--lat_percentiles=1"]);
    let read = &v["jobs"][0]["read"];
    let keys = |lat: &str| -> Vec<String> {
        read[lat]["percentile"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    assert_eq!(keys("clat_ns"), ["50.000000", "99.000000"]);
    assert_eq!(keys("lat_ns"), ["50.000000", "99.000000"]);
    assert!(keys("slat_ns").is_empty());
    // A 1 MiB read from the cache takes well under 1 ms: fio says 1.
    assert_eq!(read["runtime"], 1);
    assert!(read["bw"].as_u64().unwrap() > 0);
    let v = json(&["--clat_percentiles=0"]);
    assert!(v["jobs"][0]["read"]["clat_ns"].get("percentile").is_none());
    let text = run(
        &["--percentile_list=50:99", "--lat_percentiles=1"],
        "normal",
    );
    assert!(text.contains("(1024KiB/1msec)"), "{text}");
    assert!(text.contains("     |  50th=["), "{text}");
    assert!(text.contains("    lat percentiles ("), "{text}");
    let text = run(&["--clat_percentiles=0"], "normal");
    assert!(!text.contains("percentiles"), "{text}");
    let text = run(&["--percentile_list=50:99.5"], "normal");
    assert!(text.contains("| 50.0th=["), "{text}");
}

/// fio 3.33 on this machine, a 2 s random read with 500 ms averaging:
/// bandwidth and IOPS log lines at 500, 1000, 1500 ms (sampled while the
/// job runs), latency lines at 500 to 2000 ms (the last one holding the
/// IOs in flight at the end), 3 bandwidth samples in the JSON; with
/// `write_bw_log` at 100 ms, 18 bandwidth samples and still 3 IOPS ones;
/// `log_offset=1` adds a sixth column.
#[test]
fn logs_and_samples_end_and_count_as_fios() {
    let dir = scratch("iolab-log-ends");
    let d = dir.to_str().expect("utf-8");
    let run = |extra: &[&str]| -> serde_json::Value {
        let mut a = vec![
            "run",
            "--device",
            "nvme",
            "--log-dir",
            d,
            "--output-format",
            "json",
            "--",
            "--name=l",
            "--rw=randread",
            "--size=64m",
            "--direct=1",
            "--runtime=2",
            "--time_based",
        ];
        a.extend_from_slice(extra);
        let o = iolab(&a);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        serde_json::from_slice(&o.stdout).expect("JSON")
    };
    let times = |file: &str| -> Vec<u64> {
        std::fs::read_to_string(dir.join(file))
            .expect("log")
            .lines()
            .map(|l| l.split(',').next().unwrap().parse().unwrap())
            .collect()
    };
    let v = run(&[
        "--write_bw_log=l",
        "--write_iops_log=l",
        "--write_lat_log=l",
        "--log_avg_msec=500",
    ]);
    assert_eq!(times("l_bw.1.log"), [500, 1000, 1500]);
    assert_eq!(times("l_iops.1.log"), [500, 1000, 1500]);
    assert_eq!(times("l_lat.1.log"), [500, 1000, 1500, 2000]);
    assert_eq!(times("l_clat.1.log"), [500, 1000, 1500, 2000]);
    assert_eq!(v["jobs"][0]["read"]["bw_samples"], 3);
    let v = run(&["--write_bw_log=a", "--log_avg_msec=100", "--log_offset=1"]);
    let read = &v["jobs"][0]["read"];
    let bw_samples = read["bw_samples"].as_u64().unwrap();
    // fio: 18 (its first sample comes a little late); one a window here.
    assert!((18..=19).contains(&bw_samples), "{bw_samples}");
    assert_eq!(read["iops_samples"], 3);
    let log = std::fs::read_to_string(dir.join("a_bw.1.log")).expect("log");
    assert!(log.lines().all(|l| l.split(", ").count() == 6), "{log}");
}

/// `unified_rw_reporting` as fio 3.33 writes it (null engine, same job,
/// this machine): `mixed` gives one `mixed` direction in place of the
/// others (JSON `mixed` only, a `mixed:` line and a `MIXED:` group line,
/// terse v3 without its write fields: 80 fields without a disk), `both`
/// adds it after them (JSON read, write, trim, sync, mixed; 162 fields).
#[test]
fn unified_rw_reporting_writes_fios_mixed_sections() {
    let run = |mode: &str, format: &str| {
        let o = iolab(&[
            "run",
            "--device",
            "nvme",
            "--output-format",
            format,
            "--",
            "--name=u",
            "--size=1m",
            "--rw=randrw",
            "--direct=1",
            &format!("--unified_rw_reporting={mode}"),
        ]);
        assert!(o.status.success(), "{mode}: {}", stderr(&o));
        stdout(&o)
    };
    let keys = |mode: &str| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(&run(mode, "json")).expect("JSON");
        let job = v["jobs"][0].as_object().expect("a job").clone();
        ["read", "write", "trim", "sync", "mixed"]
            .iter()
            .filter(|k| job.contains_key(**k))
            .map(|k| (*k).to_owned())
            .collect()
    };
    assert_eq!(keys("mixed"), ["mixed"]);
    assert_eq!(keys("both"), ["read", "write", "trim", "sync", "mixed"]);
    assert_eq!(keys("none"), ["read", "write", "trim", "sync"]);
    let v: serde_json::Value = serde_json::from_str(&run("both", "json")).expect("JSON");
    let job = &v["jobs"][0];
    let sum = |key: &str| job["read"][key].as_u64().unwrap() + job["write"][key].as_u64().unwrap();
    assert_eq!(job["mixed"]["total_ios"].as_u64(), Some(sum("total_ios")));
    assert_eq!(job["mixed"]["io_bytes"].as_u64(), Some(sum("io_bytes")));
    let text = run("mixed", "normal");
    assert!(text.contains("  mixed: IOPS="), "{text}");
    assert!(text.contains("  MIXED: bw="), "{text}");
    assert!(
        !text.contains("  read: IOPS=") && !text.contains("READ: bw="),
        "{text}"
    );
    let text = run("both", "normal");
    assert!(
        text.contains("  read: IOPS=") && text.contains("  mixed: IOPS="),
        "{text}"
    );
    // Terse: fio's 80 and 162 fields, and iolab's disk's 9.
    assert_eq!(run("mixed", "terse").split(';').count(), 80 + 9);
    assert_eq!(run("both", "terse").split(';').count(), 162 + 9);
}

/// `--status-interval` (iolab's flag or fio's in a pasted command line):
/// the report as it stood every interval of simulated time, in the chosen
/// formats, before the final one; its figures grow with the time.
#[test]
fn status_interval_prints_the_report_as_it_stood() {
    let o = iolab(&[
        "run",
        "--device",
        "nvme",
        "--",
        "fio",
        "--status-interval=500ms",
        "--minimal",
        "--name=s",
        "--rw=randread",
        "--size=64m",
        "--direct=1",
        "--runtime=2",
        "--time_based",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let runtimes: Vec<u64> = out
        .lines()
        .map(|l| {
            l.split(';')
                .nth(8)
                .expect("runtime field")
                .parse()
                .expect("ms")
        })
        .collect();
    // 500, 1000, 1500, 2000 ms, then the final report.
    assert_eq!(runtimes.len(), 5, "{out}");
    assert_eq!(&runtimes[..4], [500, 1000, 1500, 2000]);
    let kib: Vec<u64> = out
        .lines()
        .map(|l| l.split(';').nth(5).unwrap().parse().unwrap())
        .collect();
    assert!(kib.windows(2).all(|w| w[0] <= w[1]), "{kib:?}");
    assert!(kib[0] > 0 && kib[0] < kib[3], "{kib:?}");
    // Refused where a status would not be one run's.
    let o = iolab(&[
        "compare",
        "--device",
        "nvme",
        "--policies",
        "none,wbt",
        "--status-interval",
        "1",
        "--",
        "--name=s",
        "--size=1m",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--status-interval: a status is one run's report"));
    let o = iolab(&[
        "run",
        "--device",
        "nvme",
        "--status-interval",
        "0",
        "--",
        "--name=s",
        "--size=1m",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// fio's terse versions 2 to 5 (fio 3.33, null engine, a randrw job with
/// a description, this machine): 161 fields and the description on a
/// line of its own, 122, 163 and 181 fields with it, a disk's 9 more
/// from version 3 on (iolab's null device is one); where fio is
/// installed the same job runs on it and its counts must be these.
#[test]
fn terse_versions_have_fios_fields() {
    let job = ["--name=x", "--size=64k", "--rw=randrw", "--description=d e"];
    let counts = |out: &str| -> Vec<usize> { out.lines().map(|l| l.split(';').count()).collect() };
    for (version, fio, disk) in [
        ("2", vec![161, 2], 0),
        ("3", vec![122], 9),
        ("4", vec![163], 9),
        ("5", vec![181], 9),
    ] {
        let mut a = vec![
            "run",
            "--device",
            "null",
            "--minimal",
            "--terse-version",
            version,
            "--",
        ];
        a.extend_from_slice(&job);
        let o = iolab(&a);
        assert!(o.status.success(), "{version}: {}", stderr(&o));
        let mut want = fio.clone();
        want[0] += disk;
        assert_eq!(counts(&stdout(&o)), want, "version {version}");
        let real = std::process::Command::new("fio")
            .args(job)
            .args([
                "--ioengine=null",
                "--minimal",
                &format!("--terse-version={version}"),
            ])
            .output();
        if let Ok(r) = real
            && r.status.success()
        {
            assert_eq!(
                counts(&String::from_utf8_lossy(&r.stdout)),
                fio,
                "fio {version}"
            );
        }
    }
}

/// Runs `job` on the device calibrated on this machine (its host time
/// has fio's submission in it), its logs under `logs`.
fn run_with_logs(job: &std::path::Path, logs: &std::path::Path) {
    let device = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../kernel/calibrated/loop-disk.toml"
    );
    let o = iolab(&[
        "run",
        job.to_str().expect("utf-8"),
        "--device",
        device,
        "--log-dir",
        logs.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The latency and histogram logs of a libaio job, fio's and iolab's
/// (on the device calibrated on this machine, whose host time has fio's
/// submission in it): the same files, `slat` logged, `lat` the sum of
/// `clat` and `slat` line by line, the histogram's lines at fio's times.
/// fio 3.33 here writes 5 lines of `clat` and `lat` (its windows and a
/// line at the end), 4 of `slat` (no IO is submitted after the end) and
/// 3 of histogram at 501, 1001, 1503 ms; where fio is installed it runs
/// too and its files must have iolab's shape.
#[test]
fn latency_and_histogram_logs_have_fios_files_and_lines() {
    let dir = scratch("iolab-lat-logs");
    let text = |file: &str| {
        format!(
            "[j]\nfilename={file}\nsize=16m\nrw=randread\nbs=4k\ndirect=1\nioengine=libaio\n\
             iodepth=4\nruntime=2\ntime_based\nlog_avg_msec=500\nwrite_lat_log=l\n\
             write_hist_log=l\nlog_hist_msec=500\n"
        )
    };
    let ours = dir.join("iolab");
    std::fs::create_dir_all(&ours).expect("dir");
    let job = dir.join("j.fio");
    std::fs::write(&job, text("f")).expect("job");
    run_with_logs(&job, &ours);
    let lines = |d: &std::path::Path, name: &str| -> Vec<Vec<u64>> {
        std::fs::read_to_string(d.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .lines()
            .map(|l| {
                l.split(", ")
                    .map(|f| f.parse().expect("a number"))
                    .collect()
            })
            .collect()
    };
    let names = [
        "l_clat.1.log",
        "l_lat.1.log",
        "l_slat.1.log",
        "l_clat_hist.1.log",
    ];
    let (clat, lat, slat) = (
        lines(&ours, names[0]),
        lines(&ours, names[1]),
        lines(&ours, names[2]),
    );
    assert_eq!((clat.len(), lat.len(), slat.len()), (4, 4, 4));
    for ((c, l), s) in clat.iter().zip(&lat).zip(&slat) {
        assert!(s[1] > 0, "{s:?}");
        assert!(l[1].abs_diff(c[1] + s[1]) <= 1, "{l:?} {c:?} {s:?}");
    }
    let hist = lines(&ours, names[3]);
    let when: Vec<u64> = hist.iter().map(|l| l[0]).collect();
    assert_eq!(when, [501, 1001, 1501]);
    assert!(
        hist.iter()
            .all(|l| l.len() == 3 + 1856 && l[1] == 0 && l[2] == 4096)
    );

    let theirs = dir.join("fio");
    std::fs::create_dir_all(&theirs).expect("dir");
    let fio_job = theirs.join("j.fio");
    std::fs::write(&fio_job, text(theirs.join("f").to_str().expect("utf-8"))).expect("job");
    let real = std::process::Command::new("fio")
        .arg(fio_job.to_str().expect("utf-8"))
        .current_dir(&theirs)
        .output();
    match real {
        Ok(o) if o.status.success() => {
            for name in names {
                let (f, i) = (lines(&theirs, name), lines(&ours, name));
                // fio's window at the end and its line for the rest.
                assert!(
                    f.len() == i.len() || f.len() == i.len() + 1,
                    "{name}: {f:?}"
                );
                for (a, b) in f.iter().zip(&i) {
                    assert_eq!(a.len(), b.len(), "{name}");
                    assert!(a[0].abs_diff(b[0]) <= 10, "{name}: {} {}", a[0], b[0]);
                    assert_eq!(a[2..].len(), b[2..].len());
                }
            }
            let f = lines(&theirs, names[2]);
            assert!(f.iter().all(|l| l[1] > 0), "fio's slat: {f:?}");
        }
        // No fio here: the shapes above, measured on fio 3.33, stand.
        _ => eprintln!("fio not run: the logs are checked against iolab's shape only"),
    }
}

/// fio's plotting scripts on iolab's logs, where they and gnuplot are
/// installed: `fio_generate_plots` draws every log of a libaio job, its
/// submission latency too, as non-empty SVG figures.
#[test]
fn fios_plot_script_draws_iolabs_logs() {
    let have = |tool: &str| {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let dir = scratch("iolab-plots");
    let job = dir.join("j.fio");
    std::fs::write(
        &job,
        "[j]\nfilename=f\nsize=16m\nrw=randread\nbs=4k\ndirect=1\nioengine=libaio\niodepth=4\n\
         runtime=2\ntime_based\nlog_avg_msec=100\nwrite_lat_log=j\nwrite_bw_log=j\n\
         write_iops_log=j\n",
    )
    .expect("job");
    run_with_logs(&job, &dir);
    if !(have("fio_generate_plots") && have("gnuplot")) {
        eprintln!("fio_generate_plots or gnuplot not installed: not run");
        return;
    }
    let o = std::process::Command::new("fio_generate_plots")
        .arg("j")
        .current_dir(&dir)
        .output()
        .expect("fio_generate_plots");
    assert!(o.status.success(), "{}", stderr(&o));
    for kind in ["bw", "iops", "clat", "lat", "slat"] {
        let svg = dir.join(format!("j-{kind}.svg"));
        let text = std::fs::read_to_string(&svg).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert!(text.matches("<path").count() > 10, "{kind}: no curve");
    }
}
