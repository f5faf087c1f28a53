//! Simulator speed: simulated IOs per second of wall time on the reference
//! job (4 KiB random read, O_DIRECT, libaio iodepth 32) on `null` and
//! `nvme`, the cost of one event-queue push+pop, and buffered writes that
//! fill the page cache with dirty pages (a 1 GiB write into 1 GiB of
//! RAM; sixteen writers of one 256 MiB write each on 4 GiB), where
//! eviction must not rescan the dirty pages for every new one.

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use iolab_sim::cache::dirty::BdpMode;
use iolab_sim::device::DeviceConfig;
use iolab_sim::engine::EventQueue;
use iolab_sim::fio::{self, ParseEnv};
use iolab_sim::stats::GroupBwMode;
use iolab_sim::{FsKind, Scenario, SchedKind, parse_variant, run};

const JOB: &str = "[randread]\nioengine=libaio\niodepth=32\ndirect=1\nrw=randread\nbs=4k\nsize=4g\ntime_based\nruntime=1\n";

fn scenario(device: &str) -> Scenario {
    scenario_of(JOB, device, 4 << 30)
}

fn scenario_of(job: &str, device: &str, mem_bytes: u64) -> Scenario {
    let vars = BTreeMap::new();
    let include =
        |_: &str, _: &str| -> Result<(String, Vec<u8>), String> { Err("no includes".into()) };
    let env = ParseEnv {
        mem_bytes,
        ncpus: 4,
        pagesize: 4096,
        vars: &vars,
        include: &include,
    };
    let jobs = fio::parse_job_file("bench.fio", job, &env)
        .expect("bench job parses")
        .jobs;
    Scenario {
        jobs,
        device: DeviceConfig::preset(device).expect("preset exists"),
        mem_bytes,
        seed: 1,
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

fn ios_of(s: &Scenario) -> u64 {
    let v = parse_variant("none").expect("none parses");
    let out = run(s, &v, &mut |_| {}).expect("runs");
    out.report
        .jobs
        .iter()
        .flat_map(|j| j.dirs.iter())
        .map(|d| d.total_ios)
        .sum()
}

fn simulated_ios(c: &mut Criterion) {
    let mut g = c.benchmark_group("sim_randread_qd32_direct");
    g.sample_size(10);
    for dev in ["null", "nvme"] {
        let s = scenario(dev);
        let ios = ios_of(&s);
        g.throughput(Throughput::Elements(ios));
        g.bench_function(dev, |b| b.iter(|| black_box(ios_of(black_box(&s)))));
    }
    g.finish();
}

fn event_queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue");
    g.throughput(Throughput::Elements(1));
    // 32 pending: the reference job's steady state (one completion per
    // tag in flight); 1024: a deep queue.
    for pending in [32u64, 1024] {
        g.bench_function(format!("push_pop_{pending}_pending"), |b| {
            let mut q = EventQueue::with_capacity(2 * pending as usize);
            for i in 0..pending {
                q.push(i * 7 % 1000, i as u32);
            }
            let mut t = 0u64;
            b.iter(|| {
                let (now, e) = q.pop().expect("never empty");
                t = now;
                q.push(t + 1 + u64::from(e) % 997, e);
            });
            black_box(t);
        });
    }
    g.finish();
}

/// Whole runs of buffered writers whose dirty pages fill the cache.
fn dirty_cache(c: &mut Criterion) {
    let mut g = c.benchmark_group("sim_buffered_write_dirty_cache");
    g.sample_size(10);
    let cases = [
        (
            "write_1g_into_1g_ram",
            "[j]\nbs=1g\nsize=1g\nrw=write\n",
            1u64 << 30,
        ),
        (
            "16_writers_256m_on_4g_ram",
            "[global]\nbs=256m\nsize=256m\nrw=write\nnumjobs=16\n[w]\n",
            4 << 30,
        ),
    ];
    for (name, job, mem) in cases {
        let s = scenario_of(job, "nvme", mem);
        g.bench_function(name, |b| b.iter(|| black_box(ios_of(black_box(&s)))));
    }
    g.finish();
}

criterion_group!(benches, simulated_ios, event_queue, dirty_cache);
criterion_main!(benches);
