//! Experiments: runs and comparisons over several seeds (every run kept,
//! figures as mean ± 95 % CI, significant differences starred), output
//! that does not depend on the number of threads, knob grids, and shards
//! merged back into what the unsharded command prints.

use std::path::PathBuf;

mod common;

use common::{iolab, root, stderr, stdout};

/// The bundled wbt job cut to 5 s, in this suite's scratch directory
/// (under Cargo's `target/tmp`, never the system's /tmp).
fn short_wbt() -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("iolab-seeds");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join("short-wbt.fio");
    let text = std::fs::read_to_string(root().join("scenarios/wbt-fdatasync-writers.fio"))
        .expect("scenario")
        .replace("runtime=300", "runtime=5");
    // Tests run in parallel and each writes this file: write a copy of
    // its own and rename it into place, so no test ever reads it half
    // written.
    let own = dir.join(format!("short-wbt.fio.{:?}", std::thread::current().id()));
    std::fs::write(&own, text).expect("write job");
    std::fs::rename(&own, &p).expect("put the job in place");
    p
}

fn compare(job: &str, policies: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "compare",
        job,
        "--device",
        "sata-ssd",
        "--memory",
        "6g",
        "--policies",
        policies,
    ];
    args.extend_from_slice(extra);
    iolab(&args)
}

#[test]
fn output_is_the_same_on_one_thread_and_on_three() {
    let job = short_wbt();
    let j = job.to_str().expect("utf-8");
    for format in ["normal", "json"] {
        let run = |jobs: &str| {
            let o = compare(
                j,
                "none,wbt",
                &["--seeds", "3", "--jobs", jobs, "--output-format", format],
            );
            assert!(o.status.success(), "{}", stderr(&o));
            o.stdout
        };
        let one = run("1");
        assert!(!one.is_empty());
        assert_eq!(one, run("3"), "{format} output differs with --jobs");
    }
}

#[test]
fn the_json_keeps_every_run_as_its_own_seed_would_give_it() {
    let job = short_wbt();
    let j = job.to_str().expect("utf-8");
    let o = compare(
        j,
        "none,wbt",
        &["--seeds", "4..6", "--output-format", "json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["baseline"], "none");
    assert_eq!(v["seeds"], serde_json::json!([4, 5, 6]));
    let runs = v["runs"].as_array().cloned().unwrap_or_default();
    let order: Vec<(String, u64)> = runs
        .iter()
        .map(|r| {
            (
                r["variant"].as_str().unwrap_or("").to_owned(),
                r["seed"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let want: Vec<(String, u64)> = ["none", "wbt"]
        .iter()
        .flat_map(|p| [4, 5, 6].map(|s| ((*p).to_owned(), s)))
        .collect();
    assert_eq!(order, want);
    // The run for (wbt, 5) is the one `--seed 5` makes on its own.
    let single = compare(j, "none,wbt", &["--seed", "5", "--output-format", "json"]);
    assert!(single.status.success(), "{}", stderr(&single));
    let s: serde_json::Value = serde_json::from_slice(&single.stdout).expect("JSON");
    assert_eq!(runs[4]["result"], s["runs"][1]["result"]);
    // The aggregates: one per variant, each figure a mean and an interval.
    let agg = &v["aggregates"][1];
    assert_eq!(agg["variant"], "wbt");
    assert_eq!(agg["seeds"], 3);
    let reader = agg["entries"]
        .as_array()
        .and_then(|es| es.iter().find(|e| e["name"] == "reader"))
        .cloned()
        .unwrap_or_default();
    let bws: Vec<f64> = runs[3..6]
        .iter()
        .filter_map(|r| r["result"]["jobs"][1]["read"]["bw_bytes"].as_f64())
        .collect();
    assert_eq!(bws.len(), 3);
    let mean = bws.iter().sum::<f64>() / 3.0;
    assert!((reader["bw_bytes"]["mean"].as_f64().unwrap_or(0.0) - mean).abs() < 1e-6);
    assert!(reader["bw_bytes"]["ci95"].as_f64().is_some_and(|h| h > 0.0));
    assert!(reader["clat_p99_ns"]["mean"].as_f64().is_some());
}

#[test]
fn differences_are_starred_only_where_the_seeds_show_them() {
    let job = short_wbt();
    let j = job.to_str().expect("utf-8");
    let o = compare(j, "none,none", &["--seeds", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let same = stdout(&o);
    let table = &same[..same.find("seeds pooled").unwrap_or(same.len())];
    assert!(!table.contains('*'), "{same}");
    assert!(same.contains("Welch's t-test at 95 %"), "{same}");
    assert!(same.contains("over 3 seeds"), "{same}");
    // The Stddev row now ranges over seeds: not zero for the reader.
    let stddev = same
        .lines()
        .find(|l| l.starts_with("Stddev   kb/sec-reader-read"))
        .unwrap_or("");
    let value: f64 = stddev
        .split_whitespace()
        .nth(2)
        .and_then(|x| x.parse().ok())
        .unwrap_or(0.0);
    assert!(value > 0.0, "{stddev}");
    // WBT halves the writers: a starred Hmean.
    let o = compare(j, "none,wbt", &["--seeds", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let hmean = out
        .lines()
        .find(|l| l.starts_with("Hmean    kb/sec-writer-write"))
        .unwrap_or("");
    assert_eq!(hmean.matches('*').count(), 2, "{out}");
    assert!(out.contains(" ± "), "{out}");
}

#[test]
fn run_over_seeds_prints_intervals_and_writes_a_trace_per_seed() {
    let job = short_wbt();
    let j = job.to_str().expect("utf-8");
    let trace = job.with_extension("trace");
    let t = trace.to_str().expect("utf-8");
    let o = iolab(&[
        "run", j, "--device", "sata-ssd", "--memory", "6g", "--policy", "wbt", "--seeds", "1,3",
        "--trace", t,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("over 2 seeds"), "{out}");
    assert!(out.contains("reader  read   wbt"), "{out}");
    for seed in [1, 3] {
        let text = std::fs::read_to_string(format!("{t}.{seed}")).expect("trace per seed");
        assert!(text.contains("wbt_timer"));
    }
    assert!(!std::path::Path::new(&format!("{t}.2")).exists());
    let o = iolab(&[
        "run",
        j,
        "--device",
        "sata-ssd",
        "--memory",
        "6g",
        "--seeds",
        "2",
        "--output-format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["variant"], "none");
    assert_eq!(v["runs"][1]["seed"], 2);
    assert_eq!(v["runs"][1]["result"]["iolab"]["seed"], 2);
    assert_eq!(v["aggregate"]["seeds"], 2);
}

#[test]
fn bad_seed_lists_and_thread_counts_exit_2() {
    let job = short_wbt();
    let j = job.to_str().expect("utf-8");
    for (args, says) in [
        (vec!["--seeds", "0"], "at least one seed"),
        (vec!["--seeds", "3..1"], "empty"),
        (vec!["--seeds", "1,1"], "given twice"),
        (vec!["--seeds", "20000"], "more than 10000"),
        (vec!["--jobs", "0"], "--jobs 0"),
        (vec!["--jobs", "5000"], "at most 1024"),
        (vec!["--seeds", "2", "--seed", "4"], "cannot be used with"),
    ] {
        let o = compare(j, "none", &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn a_knob_grid_expands_to_one_column_per_point() {
    let job = short_wbt();
    let j = job.to_str().expect("utf-8");
    let o = compare(j, "none,wbt:lat={2,20}ms", &["--seeds", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // The variants' header, under the caption and the legend.
    let header = out.lines().nth(2).unwrap_or("");
    let names: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(names, ["none", "wbt:lat=2ms", "wbt:lat=20ms"], "{out}");
    assert!(out.contains("reader  read   wbt:lat=20ms"), "{out}");
    // The sweep's own table: a row per point, the metrics in columns.
    let sweep = &out[out
        .find("\nsweep wbt:lat={2,20}ms: mean ± 95 %")
        .unwrap_or(0)..];
    let rows: Vec<&str> = sweep.lines().skip(3).collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert!(rows[0].starts_with("wbt:lat=2ms ") && rows[1].starts_with("wbt:lat=20ms"));
    assert!(sweep.contains("reader read lat p99"), "{out}");
    for (policies, says) in [
        ("none,wbt:lat={2,20ms", "without its '}'"),
        ("none,wbt:lat={2,,20}ms", "empty choice"),
    ] {
        let o = compare(j, policies, &[]);
        assert_eq!(o.status.code(), Some(2), "{policies}");
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
    let o = iolab(&[
        "run",
        j,
        "--device",
        "sata-ssd",
        "--policy",
        "wbt:lat={2,20}ms",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("give it to compare"), "{}", stderr(&o));
}

/// Four shards run at once by `xargs -P 4`, as a batch system would run
/// them, merge into exactly what the unsharded comparison prints. (The
/// slice number's placeholder is one no path holds: xargs replaces it in
/// every argument.)
#[test]
fn four_shards_run_by_xargs_merge_into_the_unsharded_output() {
    let job = short_wbt();
    let j = job.to_str().expect("utf-8");
    let dir = job.with_file_name("shards");
    std::fs::create_dir_all(&dir).expect("shard dir");
    let args = [
        "--policies",
        "none,wbt,wbt-v5",
        "--seeds",
        "3",
        "--output-format",
    ];
    for format in ["normal", "json"] {
        let whole = compare(
            j,
            "none,wbt,wbt-v5",
            &["--seeds", "3", "--output-format", format],
        );
        assert!(whole.status.success(), "{}", stderr(&whole));
        let script = format!(
            "printf '0\\n1\\n2\\n3\\n' | xargs -P 4 -I @SHARD@ sh -c '\"$0\" compare \"$1\" --device sata-ssd --memory 6g {} {format} --jobs 1 --shard @SHARD@/4 > \"$2/@SHARD@.json\"' \"$0\" \"$1\" \"$2\"",
            args.join(" ")
        );
        let o = std::process::Command::new("sh")
            .args(["-c", &script, env!("CARGO_BIN_EXE_iolab"), j])
            .arg(&dir)
            .current_dir(root())
            .output()
            .expect("sh runs");
        assert!(o.status.success(), "{}", stderr(&o));
        let shard = |i: usize| {
            dir.join(format!("{i}.json"))
                .to_str()
                .expect("utf-8")
                .to_owned()
        };
        let (s0, s1, s2, s3) = (shard(0), shard(1), shard(2), shard(3));
        let merged = iolab(&["merge", &s2, &s0, &s3, &s1]);
        assert!(merged.status.success(), "{}", stderr(&merged));
        assert_eq!(
            stdout(&merged),
            stdout(&whole),
            "{format}: merged shards differ from the single run"
        );
        if format == "json" {
            continue;
        }
        // Each slice ran its own runs: 9 runs in 4 slices of 3, 2, 2, 2,
        // a line each between the document's head and tail.
        let text = std::fs::read_to_string(&s0).expect("shard");
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        assert_eq!(lines.len(), 1 + 3 + 1);
        assert_eq!(lines[0]["runs_total"], 9);
        let indexes: Vec<u64> = lines[1..4]
            .iter()
            .map(|r| r["index"].as_u64().expect("index"))
            .collect();
        assert_eq!(indexes, [0, 4, 8]);
        assert_eq!(lines[4]["runs"], 3);
        // What merge refuses.
        for (files, says) in [
            (vec![s0.clone(), s1.clone()], "shards 2, 3 of 4 missing"),
            (
                vec![s0.clone(), s0.clone(), s1.clone(), s2.clone(), s3.clone()],
                "given twice",
            ),
            (
                vec![job.to_str().expect("utf-8").to_owned()],
                "not an iolab shard",
            ),
        ] {
            let mut a = vec!["merge"];
            a.extend(files.iter().map(String::as_str));
            let o = iolab(&a);
            assert_eq!(o.status.code(), Some(2), "{files:?}");
            assert!(stderr(&o).contains(says), "{}", stderr(&o));
        }
        let other = dir.join("other.json");
        let o = compare(j, "none,wbt,wbt-v5", &["--seeds", "3", "--shard", "1/4"]);
        assert!(o.status.success());
        std::fs::write(&other, &o.stdout).expect("write");
        // Same slice, same command: accepted in place of 1.json.
        let o = iolab(&["merge", &s0, other.to_str().expect("utf-8"), &s2, &s3]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = compare(j, "none,wbt,wbt-v5", &["--seeds", "1..3", "--shard", "1/4"]);
        std::fs::write(&other, &o.stdout).expect("write");
        let o = iolab(&["merge", &s0, other.to_str().expect("utf-8"), &s2, &s3]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("another command"), "{}", stderr(&o));
    }
    let o = compare(j, "none", &["--shard", "4/4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("I is from 0 to 3"), "{}", stderr(&o));
}

/// The series colours of `--plot`, in variant order (cli/src/plot.rs).
const PLOT_COLOURS: [[u8; 3]; 4] = [
    [0x1f, 0x77, 0xb4],
    [0xd6, 0x27, 0x28],
    [0x2c, 0xa0, 0x2c],
    [0xff, 0x7f, 0x0e],
];

/// Figure `name` of the `--plot` directory `plots`, checked to hold each
/// of `labels`.
fn figure_with(plots: &std::path::Path, name: &str, labels: &[&str]) -> String {
    let svg = std::fs::read_to_string(plots.join(name)).expect(name);
    for label in labels {
        assert!(svg.contains(label), "{name}: {label}");
    }
    svg
}

/// In `svg`, each of the first `colours` plot colours draws `strokes`
/// lines of width 2 (a series' line and its legend mark, in each panel
/// it is drawn in), the other colours none.
fn assert_strokes(svg: &str, colours: usize, strokes: usize, what: &str) {
    for (k, [r, g, b]) in PLOT_COLOURS.iter().enumerate() {
        let stroke = format!("stroke=\"#{r:02X}{g:02X}{b:02X}\" stroke-width=\"2\"");
        let want = if k < colours { strokes } else { 0 };
        assert_eq!(svg.matches(&stroke).count(), want, "{what}: colour {k}");
    }
}

/// Renders an SVG to pixels; returns (pixels not white, pixels of each
/// plot colour).
fn render(svg: &str) -> (usize, [usize; 4]) {
    let tree = resvg::usvg::Tree::from_str(svg, &resvg::usvg::Options::default()).expect("SVG");
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).expect("pixmap");
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    let mut inked = 0;
    let mut per = [0; 4];
    for px in pixmap.pixels() {
        let c = px.demultiply();
        let rgb = [c.red(), c.green(), c.blue()];
        if rgb != [255, 255, 255] && c.alpha() > 0 {
            inked += 1;
        }
        for (k, want) in PLOT_COLOURS.iter().enumerate() {
            if rgb.iter().zip(want).all(|(a, b)| a.abs_diff(*b) <= 8) {
                per[k] += 1;
            }
        }
    }
    (inked, per)
}

#[test]
fn plots_render_one_series_per_variant() {
    let job = short_wbt();
    let j = job.to_str().expect("utf-8");
    let dir = job.with_file_name("plots");
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().expect("utf-8");
    let o = compare(j, "none,wbt,wbt-v5", &["--seeds", "2", "--plot", d]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("plot dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "bw-reader-read.svg",
            "bw-writer-write.svg",
            "clat-pct-reader-read.svg",
            "clat-pct-writer-write.svg",
            "iops-reader-read.svg",
            "iops-writer-write.svg",
            "policy-wbt.svg",
            "read-latency-reader.svg",
            "sync-pct-writer.svg"
        ]
    );
    for name in &names {
        let svg = std::fs::read_to_string(dir.join(name)).expect("svg");
        assert!(svg.contains("seed 1"), "{name}: the title names the seed");
        // The policy's own state: a panel per wbt variant (none has
        // none), its three limits in the same three colours in each.
        if name.starts_with("policy-") {
            for label in [
                "wbt: max (",
                "wbt-v5: max (",
                "windows over the target)",
                "wbt: background",
                "requests",
                "time since the run started (s)",
            ] {
                assert!(svg.contains(label), "{name}: {label}");
            }
            assert!(!svg.contains("none:"), "{name}");
            assert_strokes(&svg, 3, 4, name);
            continue;
        }
        // The percentile figures' axis: its percent labels, the tail's
        // decades evenly apart, and the latency's label.
        if name.contains("-pct-") {
            for label in ["90%", "99%", "99.9%", "99.99%", "percentile", "log scale"] {
                assert!(svg.contains(label), "{name}: {label}");
            }
        }
        // Each series is a line and its legend mark, in its own colour.
        assert_strokes(&svg, 3, 2, name);
        let (inked, per) = render(&svg);
        assert!(inked > 8_000, "{name}: {inked} pixels drawn");
        // The writers' completions take 1 µs under every variant, so their
        // lines lie on one another and only the legend marks (40 pixels)
        // show each colour; the reader's lines differ and show whole.
        let least = if name.contains("reader") { 400 } else { 30 };
        for (k, n) in per.iter().enumerate() {
            if k < 3 {
                assert!(*n > least, "{name}: series {k} has {n} pixels");
            } else {
                assert!(*n < 10, "{name}: a fourth colour ({n} pixels)");
            }
        }
    }
    let o = compare(j, "none", &["--plot", d, "--shard", "0/2"]);
    assert_eq!(o.status.code(), Some(2));
    // A sharded comparison's figures, drawn by merge, are the same files.
    let mut docs = Vec::new();
    for i in 0..2 {
        let o = compare(
            j,
            "none,wbt,wbt-v5",
            &["--seeds", "2", "--shard", &format!("{i}/2")],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let path = dir.with_file_name(format!("plot-shard-{i}.json"));
        std::fs::write(&path, &o.stdout).expect("write shard");
        docs.push(path.to_str().expect("utf-8").to_owned());
    }
    let merged_dir = dir.with_file_name("plots-merged");
    let m = merged_dir.to_str().expect("utf-8");
    let o = iolab(&["merge", &docs[0], &docs[1], "--plot", m]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The shards ran without --trace: no policy trace to draw.
    assert!(!merged_dir.join("policy-wbt.svg").exists());
    for name in names.iter().filter(|n| !n.starts_with("policy-")) {
        assert_eq!(
            std::fs::read(merged_dir.join(name)).expect("merged figure"),
            std::fs::read(dir.join(name)).expect("figure"),
            "{name}"
        );
    }
}

/// Each knob sweep gets, per report entry and direction, a bandwidth
/// figure (one series) and a latency figure (mean and p99), a point per
/// sweep point named on the x axis, each the mean over the seeds with a
/// bar (three strokes) where its interval is not zero.
#[test]
fn sweep_plots_draw_each_metric_against_the_knob_with_bars() {
    let job = short_wbt();
    let j = job.to_str().expect("utf-8");
    let dir = job.with_file_name("sweep-plots");
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().expect("utf-8");
    let policies = "none,wbt:lat={2,20}ms,wbt-v5:lat={1,10,100}ms";
    let o = compare(j, policies, &["--seeds", "2", "--plot", d]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut sweeps: Vec<String> = std::fs::read_dir(&dir)
        .expect("plot dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("sweep-"))
        .collect();
    sweeps.sort();
    let mut want = Vec::new();
    for n in 1..=2 {
        for entry in ["reader-read", "writer-write"] {
            for what in ["bw", "lat"] {
                want.push(format!("sweep-{n}-{entry}-{what}.svg"));
            }
        }
    }
    assert_eq!(sweeps, want);
    // 8 one-seed figures, the wbt variants' policy figure and the 8
    // sweep figures, said on stderr.
    assert!(
        stderr(&o).contains(&format!("--plot {d}: 17 figures written")),
        "{}",
        stderr(&o)
    );
    let mut bars_seen = 0;
    for name in &sweeps {
        let svg = std::fs::read_to_string(dir.join(name)).expect("svg");
        // The knob is a number: its own axis, named by the knob, and
        // logarithmic as it spans a decade (1, 10 and 100 ms ticked).
        let (points, axis, ticks): (usize, &str, &[&str]) = if name.starts_with("sweep-1") {
            (2, "wbt:lat=…ms", &["10.0"])
        } else {
            (3, "wbt-v5:lat=…ms", &["1.0", "10.0", "100.0"])
        };
        assert!(
            svg.contains(&format!("\n{axis}\n")),
            "{name}: x axis {axis}"
        );
        for t in ticks {
            assert!(svg.contains(&format!("\n{t}\n")), "{name}: x tick {t}");
        }
        assert!(svg.contains("over 2 seeds"), "{name}: the title");
        let series = if name.ends_with("-lat.svg") { 2 } else { 1 };
        for (k, [r, g, b]) in PLOT_COLOURS.iter().enumerate() {
            let colour = format!("#{r:02X}{g:02X}{b:02X}");
            let dots = svg
                .matches(&format!("fill=\"{colour}\" stroke=\"none\""))
                .count();
            let want = if k < series { points } else { 0 };
            assert_eq!(dots, want, "{name}: points of series {k}");
            let bar_strokes = svg
                .matches(&format!("stroke=\"{colour}\" stroke-width=\"1\""))
                .count();
            assert!(
                bar_strokes % 3 == 0 && bar_strokes <= 3 * want,
                "{name}: {bar_strokes}"
            );
            bars_seen += bar_strokes / 3;
        }
        let (inked, _) = render(&svg);
        assert!(inked > 5_000, "{name}: {inked} pixels drawn");
    }
    // The seeds differ somewhere: some interval is drawn.
    assert!(bars_seen > 0, "no bar in any sweep figure");
}

/// iocost's own state: its vrate at each period, a panel per iocost
/// variant; the traces recorded for the figure stay out of the JSON.
#[test]
fn the_iocost_figure_draws_each_variants_vrate() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("iolab-policy-plot");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let job = dir.join("two-tenants.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=libaio\ndirect=1\nbs=4k\niodepth=16\nruntime=1\ntime_based=1\nsize=1g\n\
         [a]\nrw=randread\ncgroup=a\ncgroup_weight=100\n\
         [b]\nrw=randread\ncgroup=b\ncgroup_weight=300\n",
    )
    .expect("job");
    let j = job.to_str().expect("utf-8");
    let plots = dir.join("plots");
    let p = plots.to_str().expect("utf-8");
    let policies = "none,iocost,iocost-v5.4";
    let with = compare(j, policies, &["--plot", p, "--output-format", "json"]);
    assert!(with.status.success(), "{}", stderr(&with));
    let without = compare(j, policies, &["--output-format", "json"]);
    assert!(with.stdout == without.stdout, "--plot changes no output");
    let svg = figure_with(
        &plots,
        "policy-iocost.svg",
        &[
            "vrate",
            "seed 1",
            "a: hweight (inuse), % of the device",
            "(no group in debt at the end of any period)",
        ],
    );
    // The legends: a line of text each.
    let line = |text: &str| svg.lines().any(|l| l.trim() == text);
    assert!(
        line("iocost: vrate, % of nominal (no group in debt at the end of any period)")
            && line("iocost-v5.4: vrate, % of nominal (no group in debt at the end of any period)")
            && !svg.contains("none:")
    );
    // Two panels, each with vrate and the two groups' shares: three
    // colours, a line and a legend mark each in both panels.
    assert_strokes(&svg, 3, 4, "policy-iocost.svg");
    assert!(!plots.join("policy-wbt.svg").exists());
}

/// btrfs's own state: the metadata space's may_use and the delayed refs
/// each second, a panel per variant, two lines each.
#[test]
fn the_btrfs_figure_draws_each_variants_space() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("iolab-btrfs-plot");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let job = dir.join("fsync-writers.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=psync\nbs=4k\nruntime=2\ntime_based=1\nsize=64m\nfsync=8\n\
         [w]\nrw=randwrite\nnumjobs=2\n",
    )
    .expect("job");
    let plots = dir.join("plots");
    let o = iolab(&[
        "compare",
        job.to_str().expect("utf-8"),
        "--device",
        "nvme",
        "--fs",
        "btrfs",
        "--memory",
        "4g",
        "--policies",
        "flush=catch-up,flush=on-demand",
        "--plot",
        plots.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = figure_with(
        &plots,
        "policy-btrfs.svg",
        &[
            "flush=catch-up: may_use (",
            "flush=on-demand: delayed refs",
            "tickets waiting at most",
            "MiB",
        ],
    );
    assert_strokes(&svg, 2, 4, "policy-btrfs.svg");
    // What the flushers did: tickets queued and granted and the commits
    // each second, a panel per variant (no flush state was entered).
    let svg = figure_with(
        &plots,
        "policy-btrfs-flush.svg",
        &[
            "flush=catch-up: tickets queued (0 in all)",
            "flush=on-demand: tickets queued (0 in all)",
            "tickets granted (0)",
            "per s",
        ],
    );
    assert!(!svg.contains("FLUSH_"), "no flush state was entered");
    assert_strokes(&svg, 3, 4, "policy-btrfs-flush.svg");
    // One device: no RAID1 figure.
    assert!(!plots.join("policy-raid1.svg").exists());
}

/// RAID1's reads: the reads each device got each second, a panel per
/// read policy, a line per device.
#[test]
fn the_raid1_figure_draws_where_each_policy_sent_the_reads() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("iolab-raid1-plot");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let job = dir.join("randread.fio");
    let text = std::fs::read_to_string(root().join("kernel/jobs/raid1-ram-disk-randread.fio"))
        .expect("job")
        .replace("runtime=10", "runtime=3");
    std::fs::write(&job, text).expect("job");
    let plots = dir.join("plots");
    let o = iolab(&[
        "compare",
        job.to_str().expect("utf-8"),
        "--volume",
        "raid1:nvme,nvme",
        "--memory",
        "4g",
        "--policies",
        "read=round-robin,read=latency",
        "--plot",
        plots.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = figure_with(
        &plots,
        "policy-raid1.svg",
        &[
            "read=round-robin: devid 1",
            "read=latency: devid 1",
            "devid 2",
            "reads/s",
        ],
    );
    assert_strokes(&svg, 2, 4, "policy-raid1.svg");
}

/// A sweep of more variants than the figures over time draw: the first
/// forty are drawn there (each kept whole until the end, so no more are
/// kept), every point in the sweep's own figures, and stderr says so.
#[test]
fn the_figures_over_time_draw_the_first_forty_variants() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("iolab-plot-cap");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let job = dir.join("short.fio");
    std::fs::write(
        &job,
        "[r]\nioengine=libaio\ndirect=1\nbs=4k\niodepth=4\nruntime=200ms\ntime_based=1\nsize=64m\nrw=randread\n",
    )
    .expect("job");
    let points: Vec<String> = (1..=41).map(|i| i.to_string()).collect();
    let policies = format!("none,wbt:lat={{{}}}ms", points.join(","));
    let plots = dir.join("plots");
    let p = plots.to_str().expect("utf-8");
    let o = compare(job.to_str().expect("utf-8"), &policies, &["--plot", p]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("draw the first 40 of the 42 variants"),
        "{}",
        stderr(&o)
    );
    let over_time = std::fs::read_to_string(plots.join("bw-r-read.svg")).expect("figure");
    assert!(over_time.contains("wbt:lat=39ms") && !over_time.contains("wbt:lat=40ms"));
    // The sweep's figure has a point for each of its 41.
    let sweep = std::fs::read_to_string(plots.join("sweep-1-r-read-bw.svg")).expect("figure");
    let [r, g, b] = PLOT_COLOURS[0];
    let dots = sweep
        .matches(&format!("fill=\"#{r:02X}{g:02X}{b:02X}\" stroke=\"none\""))
        .count();
    assert_eq!(dots, 41, "the sweep's points");
}
