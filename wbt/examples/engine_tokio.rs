//! An async engine under tokio: 32 tasks issue synchronous writes (a
//! database's log) and background writes through the throttle's async
//! face, a task ticks the windows with tokio's timer, and a slow "device"
//! (a sleep) completes them.
//!
//! ```text
//! cargo run -p iolab-wbt --example engine_tokio
//! ```

use std::sync::Arc;
use std::time::Duration;

use iolab_wbt::{DeviceParams, Op, OpFlags, Throttle, Ticker, Variant};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let params = DeviceParams {
        queue_depth: 32,
        rotational: false,
        write_cache: false,
    };
    let throttle = Arc::new(Throttle::new(params, Variant::Modern));
    let ticker = {
        let t = Arc::clone(&throttle);
        tokio::spawn(async move { Ticker::default().run(&*t, tokio::time::sleep).await })
    };

    let tasks: Vec<_> = (0..32)
        .map(|i| {
            let t = Arc::clone(&throttle);
            tokio::spawn(async move {
                // Every fourth task is a log writer (REQ_SYNC), the others
                // background writeback.
                let flags = if i % 4 == 0 {
                    OpFlags::SYNC
                } else {
                    OpFlags::BACKGROUND
                };
                for _ in 0..20 {
                    let permit = t
                        .acquire_owned_async(Op::Write, flags)
                        .await
                        .expect("open until the end");
                    tokio::time::sleep(Duration::from_micros(200)).await; // the IO
                    permit.complete();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("task");
    }
    throttle.close();
    ticker.await.expect("ticker");
    let s = throttle.snapshot();
    println!(
        "640 writes done; step {}, limits {}/{}/{}, windows missed: {}",
        s.wbt.step,
        s.wbt.max_depth,
        s.wbt.normal,
        s.wbt.background,
        throttle.missed_ticks()
    );
}
