//! The batch-system files of `docs/batch/`: a Slurm array script and a
//! Kubernetes Indexed Job. Each is run here as the batch system would run
//! it, one task per index with its index in the variable the system sets,
//! on a small job file in place of the user's; merging the shard
//! documents they write must print what the unsharded command prints.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{iolab, root, stderr, stdout};

/// A job that runs in milliseconds, for the grids of the two files.
const JOB: &str = "[r]\nrw=randread\nbs=4k\nsize=4m\nruntime=10ms\ntime_based\n";

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// What the unsharded grid prints: the one both files slice.
fn unsharded(job: &Path) -> String {
    let o = iolab(&[
        "compare",
        job.to_str().expect("utf-8"),
        "--device",
        "sata-ssd",
        "--policies",
        "none,wbt:lat={1,2,5,10,20}ms",
        "--seeds",
        "10",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

/// `iolab merge` of every shard document in `dir`.
fn merged(dir: &Path, n: usize) -> String {
    let files: Vec<String> = (0..n)
        .map(|i| dir.join(format!("shard-{i}.json")).display().to_string())
        .collect();
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    let o = iolab(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

/// The number after `key` on the line that starts with it.
fn number_after(text: &str, key: &str) -> usize {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {key} in the file"))
}

#[test]
fn the_slurm_array_script_slices_the_grid_and_merges_whole() {
    let script = root().join("docs/batch/slurm-array.sh");
    let text = std::fs::read_to_string(&script).expect("script");
    let n = number_after(&text, "N=");
    // The array's range is the slices' indices.
    assert!(
        text.contains(&format!("#SBATCH --array=0-{}\n", n - 1)),
        "{text}"
    );
    assert!(
        text.contains("--shard \"$SLURM_ARRAY_TASK_ID/$N\""),
        "{text}"
    );
    let dir = scratch("iolab-batch-slurm");
    let job = dir.join("job.fio");
    std::fs::write(&job, JOB).expect("job");
    for i in 0..n {
        let o = Command::new("sh")
            .arg(&script)
            .env("SLURM_ARRAY_TASK_ID", i.to_string())
            .env("SLURM_CPUS_PER_TASK", "1")
            .env("IOLAB", env!("CARGO_BIN_EXE_iolab"))
            .env("JOB", &job)
            .env("OUT", &dir)
            .current_dir(&dir)
            .output()
            .expect("sh");
        assert!(o.status.success(), "task {i}: {}", stderr(&o));
    }
    assert_eq!(merged(&dir, n), unsharded(&job));
}

#[test]
fn the_kubernetes_indexed_job_slices_the_grid_and_merges_whole() {
    let manifest = root().join("docs/batch/k8s-indexed-job.yaml");
    let text = std::fs::read_to_string(&manifest).expect("manifest");
    assert!(text.contains("completionMode: Indexed"), "{text}");
    let n = number_after(&text, "completions:");
    assert_eq!(number_after(&text, "parallelism:"), n);
    // The container's shell line: the folded block after `- >-`.
    let mut lines = text.lines().skip_while(|l| l.trim() != "- >-").skip(1);
    let first = lines.next().expect("the command");
    let indent = first.len() - first.trim_start().len();
    let command: Vec<&str> = std::iter::once(first)
        .chain(lines.take_while(|l| l.len() - l.trim_start().len() == indent))
        .map(str::trim)
        .collect();
    let command = command.join(" ");
    assert!(
        command.contains(&format!("--shard \"$JOB_COMPLETION_INDEX/{n}\"")),
        "{command}"
    );
    let dir = scratch("iolab-batch-k8s");
    let job = dir.join("job.fio");
    std::fs::write(&job, JOB).expect("job");
    // The pod's volumes are this directory.
    let command = command
        .replace("/jobs/job.fio", job.to_str().expect("utf-8"))
        .replace("/shards/", &format!("{}/", dir.display()));
    let bin = Path::new(env!("CARGO_BIN_EXE_iolab"))
        .parent()
        .expect("the binary's directory");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for i in 0..n {
        let o = Command::new("sh")
            .args(["-c", &command])
            .env("JOB_COMPLETION_INDEX", i.to_string())
            .env("PATH", &path)
            .current_dir(&dir)
            .output()
            .expect("sh");
        assert!(o.status.success(), "pod {i}: {}", stderr(&o));
    }
    assert_eq!(merged(&dir, n), unsharded(&job));
}
