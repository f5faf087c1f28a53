//! An iocost controller in front of two tenants on one device: a batch
//! tenant (weight 100) and an interactive one (weight 300) each run eight
//! threads of 64 KiB reads against a device that the controller is told
//! does 200 MB/s; a ticker thread runs the period and waiter timers. The
//! interactive tenant gets about three times the device time.
//!
//! ```text
//! cargo run -p iolab-iocost --example two_tenants
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use iolab_iocost::{Controller, Device, Io, IoCost, Op, Options, Ticker};

fn main() {
    let dev = Device {
        devno: (259, 0),
        rotational: false,
        queue_depth: 64,
    };
    let mut ioc = IoCost::new(dev, Options::default());
    let batch = ioc.add_group(0, 1);
    let interactive = ioc.add_group(0, 2);
    // The device model (io.cost.model) and the QoS (io.cost.qos), as an
    // administrator writes them; enable=1 or the controller refuses.
    ioc.write_model(
        0,
        "ctrl=user model=linear rbps=200000000 rseqiops=20000 rrandiops=20000 \
         wbps=200000000 wseqiops=20000 wrandiops=20000",
    )
    .expect("model line");
    ioc.write_qos(
        0,
        "enable=1 ctrl=user rpct=95 rlat=5000 wpct=95 wlat=5000 min=100 max=100",
    )
    .expect("qos line");
    ioc.write_weight(0, batch, "default 100").expect("weight");
    ioc.write_weight(0, interactive, "default 300")
        .expect("weight");
    let ctl = Arc::new(Controller::new(ioc).expect("enabled"));

    let ticker = {
        let c = Arc::clone(&ctl);
        thread::spawn(move || Ticker::default().run_blocking(&*c))
    };

    let bytes = [Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0))];
    let until = Instant::now() + Duration::from_millis(600);
    let workers: Vec<_> = [batch, interactive]
        .into_iter()
        .zip(bytes.iter().cloned())
        .flat_map(|(group, done)| (0..8u64).map(move |t| (group, Arc::clone(&done), t)))
        .map(|(group, done, t)| {
            let c = Arc::clone(&ctl);
            thread::spawn(move || {
                let mut sector = t << 30;
                while Instant::now() < until {
                    let grant = c
                        .acquire(Io::new(group, Op::Read, 64 * 1024, sector))
                        .expect("open until the end");
                    // The read itself: the device the model describes
                    // takes 64 KiB / 200 MB/s ≈ 0.33 ms.
                    thread::sleep(Duration::from_micros(330));
                    let delay = grant.delay();
                    drop(grant); // the completion
                    // An indebted group's issuer sleeps, as the kernel
                    // makes it on its way back to user space.
                    thread::sleep(delay);
                    done.fetch_add(64 * 1024, Ordering::Relaxed);
                    sector += 128;
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    ctl.close();
    ticker.join().expect("ticker");

    let (b, i) = (
        bytes[0].load(Ordering::Relaxed) as f64,
        bytes[1].load(Ordering::Relaxed) as f64,
    );
    println!(
        "batch (weight 100): {:.1} MiB, interactive (weight 300): {:.1} MiB, ratio {:.2}; missed ticks: {}",
        b / 1048576.0,
        i / 1048576.0,
        i / b.max(1.0),
        ctl.missed_ticks()
    );
}
