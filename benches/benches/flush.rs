//! btrfs delayed-ref flushing costs, each for every named variant of the
//! `flush=` grammar (the catch-up and on-demand eras, the 2021 preemptive
//! worker) and on-demand without preemption as a control: adding a ref,
//! running the refs of 32 heads (at a commit), granting a ticket, and one
//! flush decision of the reclaim worker.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use iolab_flush::{
    Config, Decision, FlushKind, FlushModel, HandleKind, Params, Policy, RefBatch, Reserve, Start,
    parse_policy,
};

const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;

fn model(policy: Policy, params: Params) -> FlushModel {
    FlushModel::new(Config { policy, params }).expect("a valid configuration")
}

/// Plenty of metadata space: nothing ever waits.
fn roomy() -> Params {
    Params {
        total: 64 * GIB,
        used: GIB,
        unallocated: 0,
        global_rsv: 512 * MIB,
        ..Params::default()
    }
}

/// A space where only `room` bytes fit beyond the global reserve.
fn tight(room: u64) -> Params {
    Params {
        total: 64 * MIB + 16 * MIB + room,
        used: 16 * MIB,
        unallocated: 0,
        global_rsv: 64 * MIB,
        ..Params::default()
    }
}

/// The variants by their `flush=` names; `on-demand:preempt=off` is the
/// control where only tickets drive flushing.
const VARIANTS: [&str; 5] = [
    "catch-up:run-at-end=on",
    "catch-up",
    "on-demand",
    "on-demand:preempt=2021",
    "on-demand:preempt=off",
];

fn policy(name: &str) -> Policy {
    parse_policy(name).expect("a variant of the grammar")
}

/// Completes every job and commit the model hands out.
fn settle(fs: &mut FlushModel, now: u64) {
    while let Some(d) = fs.poll_decision() {
        match d {
            Decision::RunRefs { job, .. } | Decision::Flush { job, .. } => {
                fs.on_work_done(now, job).expect("an outstanding job");
            }
            Decision::CommitIo { txn, .. } => fs.on_commit_done(now, txn).expect("committing"),
            _ => {}
        }
    }
    while fs.poll_trace().is_some() {}
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("flush");
    for name in VARIANTS {
        variant(&mut g, name);
    }
    g.finish();
}

/// The four operations under the variant `name`.
fn variant(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, name: &str) {
    g.bench_function(BenchmarkId::new("add_ref", name), |b| {
        let mut fs = model(policy(name), roomy());
        let mut now = 1_000u64;
        let mut h = match fs.on_handle_start(now, HandleKind::Join, 0) {
            Ok(Start::Ready(h)) => h,
            other => panic!("a join opens at once: {other:?}"),
        };
        let mut added = 0u64;
        b.iter(|| {
            now += 100;
            let batch = RefBatch {
                new_heads: 1,
                refs: 1,
                ..RefBatch::default()
            };
            fs.on_refs_added(now, h, black_box(batch))
                .expect("an open handle");
            added += 1;
            // Keep the queue bounded: end the handle, commit, start again.
            if added.is_multiple_of(4096) {
                fs.on_handle_end(now, h, false).expect("an open handle");
                settle(&mut fs, now);
                now += 31_000_000_000;
                fs.on_timer(now);
                settle(&mut fs, now);
                h = match fs.on_handle_start(now, HandleKind::Join, 0) {
                    Ok(Start::Ready(h)) => h,
                    other => panic!("a join opens at once: {other:?}"),
                };
            }
        });
    });

    g.bench_function(BenchmarkId::new("run_32_heads_at_commit", name), |b| {
        // The commit's pre-flush runs every pending ref: 32 heads queued by
        // one handle come back as RunRefs decisions, then the commit IO.
        let mut fs = model(policy(name), roomy());
        let mut now = 1_000u64;
        let mut refs_run = 0u64;
        let mut rounds = 0u64;
        b.iter(|| {
            rounds += 1;
            let h = match fs.on_handle_start(now, HandleKind::Join, 0) {
                Ok(Start::Ready(h)) => h,
                other => panic!("a join opens at once: {other:?}"),
            };
            let batch = RefBatch {
                new_heads: 32,
                refs: 32,
                ..RefBatch::default()
            };
            fs.on_refs_added(now, h, batch).expect("an open handle");
            fs.on_handle_end(now, h, false).expect("an open handle");
            // Past the 30 s commit interval: the commit thread commits.
            now += 31_000_000_000;
            fs.on_timer(now);
            while let Some(d) = fs.poll_decision() {
                match d {
                    Decision::RunRefs { job, refs, .. } => {
                        refs_run += refs;
                        fs.on_work_done(now, black_box(job))
                            .expect("an outstanding job");
                    }
                    Decision::Flush { job, .. } => {
                        fs.on_work_done(now, job).expect("an outstanding job");
                    }
                    Decision::CommitIo { txn, .. } => {
                        fs.on_commit_done(now, txn).expect("committing");
                    }
                    _ => {}
                }
            }
            while fs.poll_trace().is_some() {}
        });
        // The measured loop really ran the refs, not just queued them.
        assert_eq!(
            refs_run,
            32 * rounds,
            "{refs_run} refs run in {rounds} rounds"
        );
    });

    g.bench_function(BenchmarkId::new("ticket_queue_and_grant", name), |b| {
        let mut fs = model(policy(name), tight(100));
        let mut now = 1_000u64;
        assert_eq!(
            fs.on_reserve(now, 1, 100, FlushKind::FlushAll),
            Ok(Reserve::Granted)
        );
        b.iter(|| {
            now += 1_000;
            // The space is full: the reserver queues...
            let Ok(Reserve::Queued(_)) = fs.on_reserve(now, 2, 100, FlushKind::FlushAll) else {
                panic!("a full space queues the ticket")
            };
            // ...and the holder's release grants it.
            fs.on_release(now, 100).expect("held bytes");
            let mut granted = false;
            while let Some(d) = fs.poll_decision() {
                match d {
                    Decision::Grant { .. } => granted = true,
                    Decision::RunRefs { job, .. } | Decision::Flush { job, .. } => {
                        fs.on_work_done(now, job).expect("an outstanding job");
                    }
                    _ => {}
                }
            }
            assert!(granted, "the release grants the waiting ticket");
            while fs.poll_trace().is_some() {}
        });
    });

    g.bench_function(BenchmarkId::new("reclaim_flush_decision", name), |b| {
        let mut fs = model(policy(name), tight(100));
        let mut now = 1_000u64;
        fs.on_reserve(now, 1, 100, FlushKind::FlushAll)
            .expect("room for the first");
        let Ok(Reserve::Queued(_)) = fs.on_reserve(now, 2, 50, FlushKind::FlushAll) else {
            panic!("a full space queues the ticket")
        };
        // The reclaim worker hands out one flush state at a time; finishing
        // one asks for the next decision.
        let mut pending = None;
        while let Some(d) = fs.poll_decision() {
            if let Decision::Flush { job, .. } = d {
                pending = Some(job);
            }
        }
        b.iter(|| {
            now += 1_000;
            let Some(job) = pending.take() else {
                // The worker went through its states and failed the
                // ticket: queue a new one to restart it.
                let _ = fs.on_reserve(now, 2, 50, FlushKind::FlushAll);
                while let Some(d) = fs.poll_decision() {
                    if let Decision::Flush { job, .. } = d {
                        pending = Some(job);
                    }
                }
                return;
            };
            fs.on_work_done(now, black_box(job))
                .expect("an outstanding job");
            while let Some(d) = fs.poll_decision() {
                match d {
                    Decision::Flush { job, .. } => pending = Some(job),
                    Decision::RunRefs { job, .. } => {
                        fs.on_work_done(now, job).expect("an outstanding job");
                    }
                    Decision::CommitIo { txn, .. } => {
                        fs.on_commit_done(now, txn).expect("committing");
                    }
                    _ => {}
                }
            }
            while fs.poll_trace().is_some() {}
        });
    });
}

criterion_group!(flush_benches, benches);
criterion_main!(flush_benches);
