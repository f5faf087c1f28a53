//! fio's I/O engines that iolab does not simulate, and the options each
//! registers for itself.
//!
//! fio knows an engine's own options only once the job has chosen that
//! engine, so a job file written for `ioengine=net` is full of names
//! (`hostname`, `port`, …) that no other engine accepts. iolab refuses such
//! a job because of its engine; naming the engine beside each of those
//! options says why, where "Bad option" with a near name from the general
//! table (`hostname` → `filename`) misleads.
//!
//! The lists are read from fio 3.33's `engines/*.c` (the `options` array of
//! each engine's `ioengine_ops`; names and aliases). The engines iolab
//! simulates ([`SIMULATED`]: `sync` and its kin, `libaio`, `io_uring`,
//! `null`, the ones run as another, such as `io_uring_cmd`, and the
//! metadata engines) have their options in the general option table
//! instead (`filestat`'s `stat_type` among the cosmetic ones,
//! `io_uring_cmd`'s `cmd_type` and `mmap`'s `thp` there too).

/// The engines iolab simulates, as `ioengine=` spells them.
pub(crate) const SIMULATED: &str = "sync, psync, vsync, pvsync, pvsync2, libaio, io_uring, null, \
     cpp_null, posixaio, io_uring_cmd, mmap, sg, cpuio, falloc, ftruncate, e4defrag, libzbc, \
     filecreate, filestat, filedelete, dircreate, dirstat, dirdelete";

/// `(engine, its own options)` for each fio 3.33 engine iolab does not
/// simulate. Engines that share one array in fio repeat it here.
const ENGINES: &[(&str, &[&str])] = &[
    ("dev-dax", &[]),
    (
        "dfs",
        &["pool", "cont", "chunk_size", "object_class", "svcl"],
    ),
    (
        "exec",
        &["program", "arguments", "grace_time", "std_redirect"],
    ),
    ("gfapi", GFAPI),
    ("gfapi_async", GFAPI),
    ("http", HTTP),
    ("ime_aio", &[]),
    ("ime_psync", &[]),
    ("ime_psyncv", &[]),
    ("libcufile", &["gpu_dev_ids", "cuda_io"]),
    (
        "libhdfs",
        &[
            "namenode",
            "hostname",
            "port",
            "hdfsdirectory",
            "chunk_size",
            "chunck_size",
            "single_instance",
            "hdfs_use_direct",
        ],
    ),
    ("libiscsi", &["initiator"]),
    ("libpmem", &[]),
    ("librpma_apm_client", RPMA),
    ("librpma_apm_server", RPMA),
    ("librpma_gpspm_client", RPMA),
    ("librpma_gpspm_server", RPMA),
    ("mtd", &["skip_bad"]),
    ("nbd", &["uri"]),
    ("net", NET),
    ("netsplice", NET),
    ("nfs", &["nfs_url"]),
    ("pmemblk", &[]),
    (
        "rados",
        &[
            "clustername",
            "pool",
            "clientname",
            "conf",
            "busy_poll",
            "touch_objects",
        ],
    ),
    (
        "rbd",
        &["clustername", "rbdname", "pool", "clientname", "busy_poll"],
    ),
    ("rdma", &["hostname", "bindname", "port", "verb", "proto"]),
    ("solarisaio", &[]),
    ("splice", &[]),
    ("windowsaio", &["no_completion_thread"]),
    (
        "xnvme",
        &[
            "hipri",
            "sqthread_poll",
            "xnvme_be",
            "xnvme_async",
            "xnvme_sync",
            "xnvme_admin",
            "xnvme_dev_nsid",
            "xnvme_iovec",
        ],
    ),
];

const GFAPI: &[&str] = &["volume", "brick", "single-instance"];

const HTTP: &[&str] = &[
    "https",
    "http_host",
    "http_user",
    "http_pass",
    "http_s3_key",
    "http_s3_keyid",
    "http_swift_auth_token",
    "http_s3_region",
    "http_s3_sse_customer_key",
    "http_s3_sse_customer_algorithm",
    "http_s3_storage_class",
    "http_mode",
    "http_verbose",
];

const NET: &[&str] = &[
    "hostname",
    "port",
    "protocol",
    "proto",
    "nodelay",
    "listen",
    "pingpong",
    "interface",
    "ttl",
    "window_size",
    "mss",
];

const RPMA: &[&str] = &[
    "serverip",
    "port",
    "direct_write_to_pmem",
    "busy_wait_polling",
];

/// True when `name` is one of fio's engines that iolab does not simulate.
/// An engine loaded from a file (`external:PATH`) counts as one.
pub(crate) fn is_fio_engine(name: &str) -> bool {
    name.starts_with("external") || ENGINES.iter().any(|(e, _)| *e == name)
}

/// Every engine name fio 3.33 has, simulated ones first.
pub(crate) fn all_names() -> impl Iterator<Item = &'static str> {
    SIMULATED.split(", ").chain(ENGINES.iter().map(|(e, _)| *e))
}

/// The engines that register `option` as their own, in name order.
pub(crate) fn owners(option: &str) -> impl Iterator<Item = &'static str> + '_ {
    ENGINES
        .iter()
        .filter(move |(_, opts)| opts.contains(&option))
        .map(|(e, _)| *e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_are_sorted_and_unique() {
        for pair in ENGINES.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
        }
    }

    #[test]
    fn no_simulated_engine_is_listed() {
        for e in SIMULATED.split(", ") {
            assert!(!is_fio_engine(e), "{e} is simulated");
        }
    }

    #[test]
    fn an_option_names_every_engine_that_owns_it() {
        let port: Vec<_> = owners("port").collect();
        assert_eq!(
            port,
            [
                "libhdfs",
                "librpma_apm_client",
                "librpma_apm_server",
                "librpma_gpspm_client",
                "librpma_gpspm_server",
                "net",
                "netsplice",
                "rdma"
            ]
        );
        assert_eq!(owners("rbdname").collect::<Vec<_>>(), ["rbd"]);
        assert_eq!(owners("filename").count(), 0);
    }
}
