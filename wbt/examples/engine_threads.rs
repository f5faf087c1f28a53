//! A small engine on real threads doing real file IO under the throttle:
//! four writer threads append 64 KiB blocks to a file in the temporary
//! directory as background writeback, a reader thread reads them back,
//! and a ticker thread ends the monitoring windows.
//!
//! ```text
//! cargo run -p iolab-wbt --example engine_threads
//! ```

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Arc;
use std::thread;

use iolab_wbt::{DeviceParams, Op, OpFlags, Throttle, Ticker, Variant};

const BLOCK: usize = 64 * 1024;
const BLOCKS_PER_WRITER: usize = 64;

fn main() -> std::io::Result<()> {
    let path = std::env::temp_dir().join(format!("iolab-wbt-example-{}", std::process::id()));
    let result = run(&path);
    let _ = std::fs::remove_file(&path);
    result
}

fn run(path: &std::path::Path) -> std::io::Result<()> {
    File::create(path)?;
    // Describe the device the engine writes to (an NVMe drive here).
    let params = DeviceParams {
        queue_depth: 64,
        rotational: false,
        write_cache: true,
    };
    let throttle = Arc::new(Throttle::new(params, Variant::Modern));

    // Someone must end the windows, or the depth never adapts.
    let ticker = {
        let t = Arc::clone(&throttle);
        thread::spawn(move || Ticker::default().run_blocking(&*t))
    };

    let writers: Vec<_> = (0..4u8)
        .map(|w| {
            let (t, path) = (Arc::clone(&throttle), path.to_owned());
            thread::spawn(move || -> std::io::Result<()> {
                let mut file = OpenOptions::new().append(true).open(path)?;
                let block = vec![w; BLOCK];
                for _ in 0..BLOCKS_PER_WRITER {
                    // Background writeback: the smallest limit.
                    let permit = t
                        .acquire(Op::Write, OpFlags::BACKGROUND)
                        .expect("the throttle is open until the end");
                    match file.write_all(&block) {
                        Ok(()) => permit.complete(), // records the latency
                        Err(e) => {
                            permit.cancel(); // a failed write is no sample
                            return Err(e);
                        }
                    }
                }
                file.sync_data()
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer")?;
    }

    // Reads are never throttled, but their completions feed the
    // latency monitor: take a permit for them too.
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(0))?;
    let mut buf = vec![0; BLOCK];
    let mut blocks = 0;
    loop {
        let permit = throttle.acquire(Op::Read, OpFlags::SYNC).expect("open");
        let n = file.read(&mut buf)?;
        permit.complete();
        if n == 0 {
            break;
        }
        blocks += 1;
    }

    throttle.close();
    ticker.join().expect("ticker");
    let s = throttle.snapshot();
    println!(
        "wrote {} blocks of 64 KiB, read {blocks} back; step {}, limits {}/{}/{}; windows missed: {}",
        4 * BLOCKS_PER_WRITER,
        s.wbt.step,
        s.wbt.max_depth,
        s.wbt.normal,
        s.wbt.background,
        throttle.missed_ticks()
    );
    assert!(blocks >= 4 * BLOCKS_PER_WRITER);
    Ok(())
}
