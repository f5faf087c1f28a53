//! Nothing a user gave is lost or overwritten: every output path is
//! checked before anything runs and written whole at the end. Each case
//! below gives iolab an input or an earlier result as an output (or makes
//! the command fail after naming it), and requires the file byte for byte
//! as it was.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;

use common::{iolab, stderr, stdout};

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("iolab-outputs-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    d
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8")
}

/// A short job that includes `inc.fio` and replays nothing.
fn job_with_include(d: &Path) -> (PathBuf, PathBuf) {
    let inc = d.join("inc.fio");
    std::fs::write(&inc, "bs=4k\nsize=4m\n").expect("write");
    let job = d.join("m.fio");
    std::fs::write(&job, "[global]\ninclude inc.fio\n[w]\nrw=write\n").expect("write");
    (job, inc)
}

/// Exit 2 naming `says`, and `file` holding `before` still.
fn refused_and_kept(o: &Output, says: &str, file: &Path, before: &[u8]) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    assert!(
        stderr(o).contains(says),
        "expected '{says}' in: {}",
        stderr(o)
    );
    assert!(!stderr(o).contains("panicked"), "{}", stderr(o));
    assert_eq!(
        std::fs::read(file).expect("still there"),
        before,
        "{} changed",
        file.display()
    );
}

#[test]
fn no_input_of_a_command_is_taken_as_its_output() {
    let d = scratch("inputs");
    let (job, inc) = job_with_include(&d);
    let inc_before = std::fs::read(&inc).expect("read");
    let job_before = std::fs::read(&job).expect("read");
    let dev = d.join("dev.toml");
    std::fs::write(&dev, "base = \"nvme\"\n").expect("write");
    let dev_before = std::fs::read(&dev).expect("read");
    let run = |extra: &[&str]| {
        let mut a = vec!["run", s(&job), "--device", s(&dev)];
        a.extend_from_slice(extra);
        iolab(&a)
    };
    // The included file, the device file, the job file as --trace.
    refused_and_kept(
        &run(&["--output", s(&inc)]),
        "an input of this command",
        &inc,
        &inc_before,
    );
    refused_and_kept(
        &run(&["--output", s(&dev)]),
        "an input of this command",
        &dev,
        &dev_before,
    );
    refused_and_kept(
        &run(&["--trace", s(&job)]),
        "an input of this command",
        &job,
        &job_before,
    );
    // Another spelling of the same file.
    let spelled = d.join(".").join("inc.fio");
    refused_and_kept(
        &run(&["--output", s(&spelled)]),
        "an input of this command",
        &inc,
        &inc_before,
    );
    // A replayed log.
    let log = d.join("x.log");
    let log_text = "fio version 2 iolog\nf add\nf open\nf write 0 4096\nf close\n";
    std::fs::write(&log, log_text).expect("write");
    let o = iolab(&[
        "run",
        "--device",
        "nvme",
        "--output",
        s(&log),
        "--",
        "--name=r",
        &format!("--read_iolog={}", s(&log)),
    ]);
    refused_and_kept(&o, "an input of this command", &log, log_text.as_bytes());
    // One file named by two outputs.
    let out = d.join("out.txt");
    let o = run(&["--output", s(&out), "--trace", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--output writes the same file"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists(), "nothing written");
}

#[test]
fn an_earlier_result_survives_a_command_that_fails_or_is_refused() {
    let d = scratch("previous");
    let (job, _) = job_with_include(&d);
    let prev = d.join("prev.txt");
    let before = b"the previous result\n".to_vec();
    std::fs::write(&prev, &before).expect("write");
    let with = |extra: &[&str]| {
        let mut a = vec!["compare", s(&job), "--device", "nvme", "--output", s(&prev)];
        a.extend_from_slice(extra);
        iolab(&a)
    };
    // A bad flag, a variant that cannot run, a bad --plot path: each
    // refused with the previous result whole.
    refused_and_kept(
        &with(&["--policies", "none,wbt", "--seeds", "0"]),
        "--seeds",
        &prev,
        &before,
    );
    refused_and_kept(
        &with(&["--policies", "none,flush=on-demand"]),
        "flush=",
        &prev,
        &before,
    );
    let a_file = d.join("a-file");
    std::fs::write(&a_file, "x").expect("write");
    refused_and_kept(
        &with(&["--policies", "none,wbt", "--plot", s(&a_file)]),
        "is not a directory",
        &prev,
        &before,
    );
    refused_and_kept(
        &with(&["--policies", "none,wbt", "--plot", "/dev/null/x"]),
        "--plot /dev/null/x",
        &prev,
        &before,
    );
    // A device as the output is refused, not replaced by a rename.
    let o = iolab(&["run", s(&job), "--device", "nvme", "--output", "/dev/null"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    // A run that works replaces it whole, leaving nothing beside it.
    let o = with(&["--policies", "none,wbt"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let now = std::fs::read_to_string(&prev).expect("read");
    assert!(now.contains("wbt"), "{now}");
    let left: Vec<_> = std::fs::read_dir(&d)
        .expect("dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// A sharded comparison's two documents, written by this build.
fn shards(d: &Path) -> (PathBuf, PathBuf) {
    let (job, _) = job_with_include(d);
    let shard = |i: usize| {
        let o = iolab(&[
            "compare",
            s(&job),
            "--device",
            "nvme",
            "--policies",
            "none,wbt",
            "--shard",
            &format!("{i}/2"),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let p = d.join(format!("{i}.json"));
        std::fs::write(&p, stdout(&o)).expect("write");
        p
    };
    (shard(0), shard(1))
}

#[test]
fn merge_refuses_an_edited_shard_another_build_s_and_anything_but_a_file() {
    let d = scratch("merge");
    let (s0, s1) = shards(&d);
    let ok = iolab(&["merge", s(&s0), s(&s1)]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    // An edited run: the digest written with the runs no longer matches.
    let text = std::fs::read_to_string(&s1).expect("read");
    let line = |k: usize| -> serde_json::Value {
        serde_json::from_str(text.lines().nth(k).expect("line")).expect("json")
    };
    // The head, then the first run's line.
    let (head, first) = (line(0), line(1));
    let events = first["events"].as_u64().expect("events");
    let edited = d.join("edited.json");
    std::fs::write(
        &edited,
        text.replacen(
            &format!("\"events\":{events}"),
            &format!("\"events\":{}", events + 1),
            1,
        ),
    )
    .expect("write");
    let o = iolab(&["merge", s(&s0), s(&edited)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("changed after it was written"),
        "{}",
        stderr(&o)
    );
    // Another build's shard.
    let other = d.join("other.json");
    let build = head["iolab_build"].as_str().expect("build");
    std::fs::write(&other, text.replacen(build, "0.0.1 0000000000000000", 1)).expect("write");
    let o = iolab(&["merge", s(&s0), s(&other)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not this one"), "{}", stderr(&o));
    // A FIFO and a device are refused at once, not read for ever.
    let fifo = d.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    for p in [s(&fifo), "/dev/urandom"] {
        let o = iolab(&["merge", s(&s0), p]);
        assert_eq!(o.status.code(), Some(2), "{p}: {}", stderr(&o));
        assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    }
    // --output onto a shard.
    let before = std::fs::read(&s0).expect("read");
    let o = iolab(&["merge", s(&s0), s(&s1), "--output", s(&s0)]);
    refused_and_kept(&o, "an input of this command", &s0, &before);
}

/// splitmix64, for the mutants below.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Mutated shard documents: each merge ends as the unsharded output
/// (exit 0) or a refusal naming the file (exit 2); never a panic, an
/// exit 1 or a hang. `IOLAB_FUZZ_SHARD_CASES` sets the count.
#[test]
fn mutated_shards_merge_or_are_refused_naming_the_file() {
    let d = scratch("shard-mutants");
    let (s0, s1) = shards(&d);
    let good = std::fs::read(&s1).expect("read");
    let cases: u64 = std::env::var("IOLAB_FUZZ_SHARD_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let mut outcomes = std::collections::BTreeMap::new();
    for seed in 0..cases {
        let mut rng = Rng(seed);
        let mut bytes = good.clone();
        match rng.below(5) {
            0 => {
                let at = rng.below(bytes.len());
                bytes[at] ^= 1 << rng.below(8);
            }
            1 => {
                let at = rng.below(bytes.len());
                let len = rng.below(64).min(bytes.len() - at);
                bytes.drain(at..at + len);
            }
            2 => {
                let cut = rng.below(bytes.len());
                bytes.truncate(cut);
            }
            3 => {
                // A number replaced with an edge value.
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let keys = [
                    "\"shard\":",
                    "\"of\":",
                    "\"runs_total\":",
                    "\"index\":",
                    "\"sim_ns\":",
                ];
                let key = keys[rng.below(keys.len())];
                let values = [
                    "0",
                    "1",
                    "2",
                    "-1",
                    "18446744073709551615",
                    "1e400",
                    "null",
                    "\"x\"",
                ];
                let v = values[rng.below(values.len())];
                bytes = match text.find(key) {
                    Some(i) => {
                        let start = i + key.len();
                        let end = text[start..]
                            .find([',', '}'])
                            .map_or(text.len(), |e| start + e);
                        format!("{}{v}{}", &text[..start], &text[end..]).into_bytes()
                    }
                    None => bytes,
                };
            }
            _ => bytes = b"{}".to_vec(),
        }
        let m = d.join(format!("m{seed}.json"));
        std::fs::write(&m, &bytes).expect("write");
        let o = iolab(&["merge", s(&s0), s(&m)]);
        let code = o.status.code();
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "seed {seed}: {err}");
        match code {
            Some(0) => {}
            Some(2) => assert!(
                err.contains(s(&m)),
                "seed {seed}: the file is not named: {err}"
            ),
            other => panic!("seed {seed}: exit {other:?}: {err}"),
        }
        *outcomes.entry(code).or_insert(0) += 1;
    }
    eprintln!("shard mutants: {cases} cases: {outcomes:?}");
    assert!(outcomes.get(&Some(2)).copied().unwrap_or(0) > 0);
}

/// Odd output paths: each is written (exit 0) or refused before the run
/// (exit 2), and no input changes.
#[test]
fn odd_output_paths_are_written_or_refused_and_no_input_changes() {
    let d = scratch("odd-paths");
    let (job, inc) = job_with_include(&d);
    let link = d.join("link-to-inc");
    std::os::unix::fs::symlink(&inc, &link).expect("symlink");
    let inputs = [
        (job.clone(), std::fs::read(&job).expect("read")),
        (inc.clone(), std::fs::read(&inc).expect("read")),
    ];
    let sub = d.join("sub");
    std::fs::create_dir_all(&sub).expect("dir");
    let paths: Vec<String> = vec![
        String::new(),
        ".".into(),
        "/".into(),
        "/dev/null".into(),
        "/dev/zero".into(),
        "/proc/self/status".into(),
        s(&sub).into(),
        s(&d.join("missing").join("x")).into(),
        s(&inc).into(),
        s(&link).into(),
        format!("{}/../{}", s(&sub), "inc.fio"),
        s(&d.join("ok.txt")).into(),
    ];
    for p in &paths {
        let o = iolab(&["run", s(&job), "--device", "nvme", "--output", p]);
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{p:?}: {err}");
        assert!(
            matches!(o.status.code(), Some(0) | Some(2)),
            "{p:?}: {:?} {err}",
            o.status.code()
        );
        for (f, before) in &inputs {
            assert_eq!(
                &std::fs::read(f).expect("read"),
                before,
                "{p:?} changed {}",
                f.display()
            );
        }
    }
    assert!(d.join("ok.txt").is_file(), "an ordinary path is written");
}
