//! The volume block printed under a comparison on `--volume`: per variant,
//! what the metadata-on-SSD runs need beside wall time and fsync latency — the
//! fsyncs that wrote the log, the superblock writes they took (fewer when
//! fsyncs share one), the fsyncs that fell back to a full commit, the
//! commits and their tree blocks, and how long
//! fsyncs waited for `tree_log_mutex`. It reads the run's `volume` JSON
//! object (`world::btrfs::commit`), so the text and the JSON cannot disagree.

use std::fmt::Write;

use super::columns::{u64_at, variant_width};

/// One variant: its name and its `iolab.volume` object.
pub type VolumeRun<'a> = (&'a str, &'a serde_json::Value);

/// The table, or an empty string when no run was on a volume.
pub fn volume_table(runs: &[VolumeRun<'_>]) -> String {
    let runs: Vec<&VolumeRun<'_>> = runs.iter().filter(|r| r.1.is_object()).collect();
    if runs.is_empty() {
        return String::new();
    }
    let width = variant_width(runs.iter().map(|r| r.0));
    let mut out = String::from(
        "\nvolume: fsyncs that wrote the log, superblock writes they took, fsyncs that fell back to a full commit, commits, their tree blocks and length in ms, fsyncs behind a commit, longest tree_log_mutex wait in ms\n",
    );
    let _ = writeln!(
        out,
        "{:<width$}  {:>11}  {:>12}  {:>12}  {:>7}  {:>11}  {:>19}  {:>19}  {:>20}",
        "variant",
        "fsync logs",
        "fsync supers",
        "full commits",
        "commits",
        "tree blocks",
        "commit avg/max ms",
        "fsyncs behind one",
        "mutex wait max ms"
    );
    for (name, v) in runs {
        let u = |path: &str| u64_at(v, path);
        let commits = u("/commits/commits");
        let avg = if commits == 0 {
            0.0
        } else {
            u("/commits/commit_ns_sum") as f64 / commits as f64 / 1e6
        };
        let _ = writeln!(
            out,
            "{:<width$}  {:>11}  {:>12}  {:>12}  {:>7}  {:>11}  {:>19}  {:>19}  {:>20.1}",
            name,
            u("/log_syncs"),
            u("/commits/fsync_super_batches"),
            u("/commits/full_commits"),
            commits,
            u("/commits/tree_blocks"),
            format!("{avg:.1}/{:.1}", u("/commits/commit_ns_max") as f64 / 1e6),
            u("/commits/fsyncs_behind_commit"),
            u("/commits/fsync_mutex_wait_ns_max") as f64 / 1e6,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_from_the_volume_object_and_other_runs_are_skipped() {
        let v = serde_json::json!({
            "log_syncs": 16000,
            "commits": {
                "commits": 2,
                "tree_blocks": 389,
                "commit_ns_sum": 80_000_000,
                "commit_ns_max": 50_118_713,
                "fsyncs_behind_commit": 16,
                "fsync_mutex_wait_ns_max": 49_700_000,
                "fsync_super_batches": 4054,
                "full_commits": 3,
            },
        });
        let none = serde_json::Value::Null;
        assert_eq!(volume_table(&[("xfs", &none)]), "");
        let t = volume_table(&[("alloc=ssd-metadata", &v), ("xfs", &none)]);
        assert!(
            t.contains(
                "alloc=ssd-metadata        16000          4054             3        2          389            40.0/50.1                   16                  49.7"
            ),
            "{t}"
        );
        assert!(!t.contains("xfs"), "{t}");
    }
}
