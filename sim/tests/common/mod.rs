//! Shared helpers for the simulator's integration tests.

use std::collections::BTreeMap;

use iolab_sim::cache::dirty::BdpMode;
use iolab_sim::device::DeviceConfig;
use iolab_sim::fio::{self, JobSpec, ParseEnv};
use iolab_sim::stats::{Dir, GroupBwMode, JobReport};
use iolab_sim::{FsKind, RunOutput, Scenario, SchedKind, parse_variant, run};

/// A scenario from job-file text.
pub fn scenario(job: &str, device: &str, mem_bytes: u64, seed: u64) -> Scenario {
    let jobs = parse_reading(job, &[], mem_bytes)
        .unwrap_or_else(|e| panic!("test job does not parse: {e}"));
    let device = DeviceConfig::preset(device).unwrap_or_else(|| panic!("no preset {device}"));
    scenario_of(jobs, device, mem_bytes, seed)
}

/// The jobs of job-file text that may name the `files` given (name,
/// contents) as includes or logs, on a machine of `mem_bytes` and 4 CPUs.
pub fn parse_reading(
    job: &str,
    files: &[(&str, &[u8])],
    mem_bytes: u64,
) -> Result<Vec<JobSpec>, Box<fio::ParseError>> {
    let vars = BTreeMap::new();
    let include = |_: &str, name: &str| -> Result<(String, Vec<u8>), String> {
        files
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, t)| ((*n).to_owned(), t.to_vec()))
            .ok_or_else(|| format!("{name}: no such file in this test"))
    };
    let env = ParseEnv {
        mem_bytes,
        ncpus: 4,
        pagesize: 4096,
        vars: &vars,
        include: &include,
    };
    fio::parse_job_file("test.fio", job, &env)
        .map(|f| f.jobs)
        .map_err(Box::new)
}

/// A scenario of parsed `jobs` on `device`: xfs-lite, no scheduler, 4
/// CPUs, the defaults of `iolab run`.
pub fn scenario_of(
    jobs: Vec<JobSpec>,
    device: DeviceConfig,
    mem_bytes: u64,
    seed: u64,
) -> Scenario {
    Scenario {
        jobs,
        device,
        mem_bytes,
        seed,
        fs: FsKind::XfsLite,
        bdp: BdpMode::Paced,
        group_bw: GroupBwMode::Sum,
        scheduler: SchedKind::None,
        trace: false,
        volume: None,
        cpus: 4,
        io_budget: None,
    }
}

/// Runs under `variant`; a failure names the seed and the variant.
pub fn run_as(s: &Scenario, variant: &str) -> RunOutput {
    let v = parse_variant(variant).expect("variant parses");
    run(s, &v, &mut |_| {}).unwrap_or_else(|e| panic!("seed {}: {variant}: {e}", s.seed))
}

/// Runs with no policy.
pub fn run_none(s: &Scenario) -> RunOutput {
    let v = parse_variant("none").expect("none parses");
    run(s, &v, &mut |_| {}).unwrap_or_else(|e| panic!("seed {}: run failed: {e}", s.seed))
}

/// The report entry named `name`.
pub fn job<'a>(out: &'a RunOutput, name: &str) -> &'a JobReport {
    out.report
        .jobs
        .iter()
        .find(|j| j.name == name)
        .unwrap_or_else(|| panic!("no job {name}"))
}

/// Mean completion latency (ns) of `dir` in job `name`.
pub fn mean_clat(out: &RunOutput, name: &str, dir: Dir) -> f64 {
    job(out, name).dir(dir).clat.mean
}

/// IOs done in direction `dir` by all report entries.
pub fn total_ios(out: &RunOutput, dir: Dir) -> u64 {
    out.report.jobs.iter().map(|j| j.dir(dir).total_ios).sum()
}

/// A number from the `iolab` object by JSON pointer.
pub fn extra_u64(out: &RunOutput, pointer: &str) -> u64 {
    out.extra
        .pointer(pointer)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or_else(|| panic!("no {pointer} in {}", out.extra))
}

/// The posted fdatasync-writers job (scenarios/wbt-fdatasync-writers.fio),
/// unchanged but for its runtime, on `sata-ssd` with the posted 6 GiB.
pub fn posted_wbt_job(runtime_s: u32) -> Scenario {
    let text = include_str!("../../../scenarios/wbt-fdatasync-writers.fio")
        .replace("runtime=300", &format!("runtime={runtime_s}"));
    scenario(&text, "sata-ssd", 6 << 30, 1)
}
