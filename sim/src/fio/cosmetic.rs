//! The values of the options iolab accepts without simulating them
//! (cosmetic: reporting, buffers, CPU placement, engine tuning). They are
//! checked as fio checks them, so a typo or an out-of-range value is an
//! error at its line instead of passing unseen: `cmdprio_percentage=500`,
//! `allow_file_create==4kb`.
//!
//! Each option's kind and range is fio's (its option table: the type,
//! `minval`/`maxval`, the allowed spellings); options whose value is free
//! text or a structured list are not checked.

use super::value::{parse_bool, parse_bytes, parse_flag, parse_time_ns, split_top};

/// How one cosmetic option's value is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// 0 or 1 (bare: 1).
    Bool,
    /// No value, or an integer.
    Flag,
    /// An integer in `min..=max` (size suffixes allowed, as fio reads
    /// integers); `per_dir`: a `read,write[,trim]` list of them.
    Int { min: i128, max: i128, per_dir: bool },
    /// A byte count.
    Size,
    /// A time.
    Time,
    /// One of these spellings (case ignored).
    Choice(&'static [&'static str]),
    /// Free text or a structured list: not checked.
    Text,
}

const MAX: i128 = u64::MAX as i128;

/// The check of every cosmetic option of the option table.
pub(crate) const CHECKS: &[(&str, Check)] = &[
    ("allow_file_create", Check::Bool),
    ("allow_mounted_write", Check::Bool),
    (
        "block",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    ("block_error_percentiles", Check::Bool),
    ("buffer_compress_chunk", Check::Size),
    (
        "buffer_compress_percentage",
        Check::Int {
            min: 0,
            max: 100,
            per_dir: false,
        },
    ),
    ("buffer_pattern", Check::Text),
    ("cgroup_nodelete", Check::Bool),
    (
        "clocksource",
        Check::Choice(&["gettimeofday", "clock_gettime", "cpu"]),
    ),
    (
        "cmdprio",
        Check::Int {
            min: 0,
            max: 7,
            per_dir: true,
        },
    ),
    ("cmdprio_bssplit", Check::Text),
    (
        "cmdprio_class",
        Check::Int {
            min: 1,
            max: 3,
            per_dir: true,
        },
    ),
    (
        "cmdprio_percentage",
        Check::Int {
            min: 0,
            max: 100,
            per_dir: true,
        },
    ),
    ("comm", Check::Text),
    (
        "continue_on_error",
        Check::Choice(&["none", "read", "write", "io", "verify", "all", "0", "1"]),
    ),
    ("cpumask", Check::Text),
    ("cpus_allowed", Check::Text),
    ("cpus_allowed_policy", Check::Choice(&["shared", "split"])),
    ("create_serialize", Check::Bool),
    ("dedupe_global", Check::Bool),
    ("dedupe_mode", Check::Choice(&["repeat", "working_set"])),
    (
        "dedupe_percentage",
        Check::Int {
            min: 0,
            max: 100,
            per_dir: false,
        },
    ),
    (
        "dedupe_working_set_percentage",
        Check::Int {
            min: 0,
            max: 100,
            per_dir: false,
        },
    ),
    ("device-names", Check::Text),
    ("dir", Check::Text),
    ("disable_bw", Check::Bool),
    ("disable_bw_measurement", Check::Bool),
    ("disable_clat", Check::Bool),
    ("disable_lat", Check::Bool),
    ("disable_slat", Check::Bool),
    ("disk_util", Check::Bool),
    ("dp_scheme", Check::Text),
    ("error_dump", Check::Bool),
    ("exitall_on_error", Check::Flag),
    ("experimental_verify", Check::Bool),
    ("fdp_pli", Check::Text),
    (
        "fdp_pli_select",
        Check::Choice(&["random", "roundrobin", "scheme"]),
    ),
    ("fixedbufs", Check::Flag),
    ("flow_watermark", Check::Text),
    (
        "force_async",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    (
        "gid",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    (
        "gpu_dev_id",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    (
        "gtod_cpu",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    ("gtod_reduce", Check::Bool),
    ("ignore_error", Check::Text),
    ("ignore_zone_limits", Check::Bool),
    (
        "iomem",
        Check::Choice(&["malloc", "shm", "shmhuge", "mmap", "mmapshared", "mmaphuge"]),
    ),
    ("iomem_align", Check::Size),
    (
        "job_start_clock_id",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    (
        "large-block-op-kbytes",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    (
        "load",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    ("log_alternate_epoch", Check::Bool),
    (
        "log_alternate_epoch_clock_id",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    ("log_compression", Check::Size),
    ("log_compression_cpus", Check::Text),
    (
        "log_entries",
        Check::Int {
            min: 1024,
            max: 1048576,
            per_dir: false,
        },
    ),
    ("log_issue_time", Check::Bool),
    ("log_max_value", Check::Bool),
    ("log_prio", Check::Bool),
    ("log_store_compressed", Check::Bool),
    ("log_unix_epoch", Check::Bool),
    (
        "log_window_value",
        Check::Choice(&["avg", "max", "both", "0", "1"]),
    ),
    (
        "mem",
        Check::Choice(&["malloc", "shm", "shmhuge", "mmap", "mmapshared", "mmaphuge"]),
    ),
    ("mem_align", Check::Size),
    ("merge_blktrace_file", Check::Text),
    ("merge_blktrace_iters", Check::Text),
    ("merge_blktrace_scalars", Check::Text),
    (
        "nice",
        Check::Int {
            min: -20,
            max: 19,
            per_dir: false,
        },
    ),
    (
        "nonvectored",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    ("numa_cpu_nodes", Check::Text),
    ("numa_mem_policy", Check::Text),
    (
        "numruns",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    (
        "plid_select",
        Check::Choice(&["random", "roundrobin", "scheme"]),
    ),
    ("plids", Check::Text),
    ("prep", Check::Flag),
    (
        "prio",
        Check::Int {
            min: 0,
            max: 7,
            per_dir: false,
        },
    ),
    (
        "prioclass",
        Check::Int {
            min: 0,
            max: 3,
            per_dir: false,
        },
    ),
    (
        "priohint",
        Check::Int {
            min: 0,
            max: 1023,
            per_dir: false,
        },
    ),
    (
        "random_generator",
        Check::Choice(&["tausworthe", "lfsr", "tausworthe64"]),
    ),
    (
        "rate_cycle",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    (
        "ratecycle",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    (
        "read-req-num-512-blocks",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    ("read_iolog_chunked", Check::Bool),
    ("recover_zbd_write_error", Check::Bool),
    ("refill_buffers", Check::Flag),
    ("registerfiles", Check::Flag),
    ("scramble_buffers", Check::Bool),
    (
        "significant_figures",
        Check::Int {
            min: 1,
            max: 10,
            per_dir: false,
        },
    ),
    ("softrandommap", Check::Bool),
    ("spr_cs", Check::Size),
    (
        "spr_num_regions",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    ("spr_op", Check::Text),
    ("sqthread_poll", Check::Flag),
    (
        "sqthread_poll_cpu",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    ("stat_type", Check::Choice(&["stat", "lstat", "statx"])),
    ("stats", Check::Bool),
    ("test-duration", Check::Time),
    ("thread", Check::Flag),
    (
        "threads",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    (
        "threads-per-queue",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    (
        "trim_backlog",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    (
        "trim_backlog_batch",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    ("trim_verify_zero", Check::Bool),
    (
        "uid",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    ("unique_filename", Check::Bool),
    ("unlink", Check::Bool),
    ("userspace_reap", Check::Flag),
    (
        "verify_async",
        Check::Int {
            min: 0,
            max: MAX,
            per_dir: false,
        },
    ),
    ("verify_async_cpus", Check::Text),
    ("verify_dump", Check::Bool),
    ("verify_fatal", Check::Bool),
    ("verify_header_seed", Check::Bool),
    ("verify_interval", Check::Size),
    ("verify_offset", Check::Size),
    ("verify_pattern_interval", Check::Size),
    ("verify_state_load", Check::Bool),
    ("verify_state_save", Check::Bool),
    ("verify_write_sequence", Check::Bool),
    ("verifysort", Check::Text),
    ("verifysort_nr", Check::Text),
    (
        "write_hint",
        Check::Choice(&["none", "short", "medium", "long", "extreme"]),
    ),
    ("write_iolog", Check::Text),
    ("write_zone_remainder", Check::Bool),
    ("zero_buffers", Check::Flag),
];

/// The check of cosmetic option `name` (its spelling in the table).
pub(crate) fn check_of(name: &str) -> Check {
    CHECKS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(Check::Text, |&(_, c)| c)
}

/// Checks `value` (as written, `None` for a bare option) against `check`.
pub(crate) fn check_value(check: Check, value: Option<&str>) -> Result<(), String> {
    let need = || -> Result<&str, String> {
        value
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| "missing value".to_string())
    };
    match check {
        Check::Text => Ok(()),
        Check::Bool => parse_bool(value).map(drop),
        Check::Flag => parse_flag(value).map(drop),
        Check::Size => parse_bytes(need()?, 1024).map(drop),
        Check::Time => parse_time_ns(need()?, 1).map(drop),
        Check::Choice(values) => {
            // fio matches a choice up to a ':' (`mem=mmaphuge:/hugetlbfs/f`).
            let v = need()?;
            let v = v.split_once(':').map_or(v, |(head, _)| head);
            if values.iter().any(|c| c.eq_ignore_ascii_case(v)) {
                Ok(())
            } else {
                Err(format!("'{v}' is not one of {}", values.join(", ")))
            }
        }
        Check::Int { min, max, per_dir } => {
            let v = need()?;
            let parts = if per_dir { split_top(v, ',') } else { vec![v] };
            if parts.len() > 3 {
                return Err(format!("'{v}' has more than 3 entries (read,write,trim)"));
            }
            for p in parts {
                let p = p.trim();
                let n: i128 = match p.strip_prefix('-') {
                    Some(digits) => -i128::from(
                        digits
                            .parse::<u64>()
                            .map_err(|_| format!("expected an integer, got '{p}'"))?,
                    ),
                    None => i128::from(parse_bytes(p, 1024)?),
                };
                if !(min..=max).contains(&n) {
                    return Err(format!("{n} is outside {min} to {max}"));
                }
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked_as_fio_reads_them() {
        let pct = check_of("cmdprio_percentage");
        assert!(check_value(pct, Some("50")).is_ok());
        assert!(check_value(pct, Some("10,90")).is_ok(), "read,write");
        assert!(check_value(pct, Some("500")).is_err());
        let b = check_of("allow_file_create");
        assert!(check_value(b, Some("0")).is_ok());
        assert!(check_value(b, None).is_ok());
        assert!(check_value(b, Some("=4kb")).is_err());
        assert!(check_value(check_of("nice"), Some("-20")).is_ok());
        assert!(check_value(check_of("nice"), Some("-21")).is_err());
        assert!(check_value(check_of("clocksource"), Some("CPU")).is_ok());
        assert!(check_value(check_of("clocksource"), Some("tsc")).is_err());
        assert!(check_value(check_of("mem"), Some("mmaphuge:/hugetlbfs/f")).is_ok());
        assert!(check_value(check_of("mem_align"), Some("4k")).is_ok());
        assert!(check_value(check_of("mem_align"), Some("4q")).is_err());
        assert!(check_value(check_of("buffer_pattern"), Some("anything")).is_ok());
        assert_eq!(check_of("not-an-option"), Check::Text);
    }

    /// Every row names a cosmetic option of the table, once.
    #[test]
    fn every_check_is_of_a_cosmetic_option() {
        for (i, (name, _)) in CHECKS.iter().enumerate() {
            let entry = super::super::table::lookup(name).unwrap_or_else(|| panic!("{name}"));
            assert!(
                matches!(
                    entry.class,
                    super::super::table::Class::Cosmetic(_) | super::super::table::Class::Inert(_)
                ),
                "{name} is not cosmetic"
            );
            assert!(CHECKS[..i].iter().all(|(n, _)| n != name), "{name} twice");
        }
    }
}
