//! A metadata reservation pool with a flusher, on real threads: eight
//! writer threads reserve metadata space for each operation, queue the
//! delayed refs their writes produce, and give the space back; a flusher
//! thread does the work the core hands out (running refs, flushing,
//! committing); a ticker runs the 30 s commit timer. When space is short,
//! writers wait on tickets and the flusher's work grants them.
//!
//! ```text
//! cargo run -p iolab-flush --example pool_flusher
//! ```

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use iolab_flush::{Config, FlushKind, Params, Policy, Pool, PoolError, RefBatch, Ticker, Work};

const MIB: u64 = 1024 * 1024;

fn main() {
    // A nearly full filesystem: 64 MiB of metadata chunks, 44 MiB used, a
    // 16 MiB global reserve, no room for a new chunk, so 4 MiB are free
    // for reservations; on-demand flushing as mainline btrfs runs it.
    let config = Config {
        policy: Policy::on_demand(),
        params: Params {
            total: 64 * MIB,
            used: 44 * MIB,
            global_rsv: 16 * MIB,
            unallocated: 0,
            ..Params::default()
        },
    };
    let pool = Arc::new(Pool::new(config).expect("a valid configuration"));

    let flusher = {
        let pool = Arc::clone(&pool);
        thread::spawn(move || {
            let mut done = 0u64;
            while let Some(work) = pool.wait_work() {
                // Do the work: here a short sleep stands in for running
                // refs, writing back dirty pages or writing a commit.
                let cost = match work {
                    Work::Refs { cpu_ns, .. } => cpu_ns.min(1_000_000),
                    Work::Flush { .. } => 200_000,
                    Work::Commit { .. } => 500_000,
                };
                thread::sleep(Duration::from_nanos(cost));
                pool.work_done(work).expect("work the pool handed out");
                done += 1;
            }
            done
        })
    };
    let ticker = {
        let pool = Arc::clone(&pool);
        thread::spawn(move || Ticker::new(Duration::from_millis(5)).run_blocking(&*pool))
    };

    let writers: Vec<_> = (0..8)
        .map(|_| {
            let pool = Arc::clone(&pool);
            thread::spawn(move || {
                let (mut ok, mut enospc) = (0u32, 0u32);
                for _ in 0..200 {
                    // One operation's worst-case metadata: 256 KiB.
                    match pool.reserve(256 * 1024, FlushKind::FlushAll) {
                        Ok(reservation) => {
                            // The write's extents produce delayed refs.
                            pool.add_refs(RefBatch {
                                new_heads: 1,
                                refs: 2,
                                cancelled: 0,
                                meta_used: 16 * 1024,
                            })
                            .expect("the pool is open");
                            drop(reservation); // gives the space back
                            ok += 1;
                        }
                        // btrfs fails a ticket it cannot serve after every
                        // flush state: the engine sees ENOSPC.
                        Err(PoolError::Ticket(_)) => enospc += 1,
                        Err(e) => panic!("{e}"),
                    }
                }
                (ok, enospc)
            })
        })
        .collect();
    let (mut ok, mut enospc) = (0, 0);
    for w in writers {
        let (o, e) = w.join().expect("writer");
        ok += o;
        enospc += e;
    }
    pool.close();
    let work = flusher.join().expect("flusher");
    ticker.join().expect("ticker");
    let s = pool.snapshot();
    println!(
        "{ok} operations reserved, {enospc} failed with ENOSPC; the flusher did {work} pieces of work, {} commits; bytes still held: {}",
        s.commits, s.grants
    );
    assert_eq!(s.grants, 0, "every reservation gave its space back");
}
