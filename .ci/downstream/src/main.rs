//! An engine on each face, from the READMEs' quick starts: threads under
//! the throttle, the iocost controller and the pool; a tokio task under
//! the throttle, the controller and the pool; chunks placed on devices.
//! The four crates' preludes glob-imported together, which must not
//! collide (an ambiguous name is an error here).
#![deny(ambiguous_glob_reexports)]

use std::sync::Arc;

pub use iolab_flush::prelude::*;
pub use iolab_iocost::prelude::*;
pub use iolab_tiering::prelude::*;
pub use iolab_wbt::prelude::*;

fn throttle_on_threads() {
    let device = DeviceParams {
        queue_depth: 64,
        rotational: false,
        write_cache: true,
    };
    let throttle = Arc::new(Throttle::new(device, WbtVariant::Modern));
    let ticker = {
        let t = Arc::clone(&throttle);
        std::thread::spawn(move || Ticker::default().run_blocking(&*t))
    };
    let writers: Vec<_> = (0..4)
        .map(|_| {
            let t = Arc::clone(&throttle);
            std::thread::spawn(move || {
                for _ in 0..100 {
                    let permit = t
                        .acquire(WbtOp::Write, OpFlags::BACKGROUND)
                        .expect("open");
                    permit.complete();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    throttle.close();
    ticker.join().unwrap();
}

fn controller_on_threads() {
    let device = IoCostDevice {
        devno: (259, 0),
        rotational: false,
        queue_depth: 64,
    };
    let mut ioc = IoCost::new(device, IoCostOptions::default());
    let batch = ioc.add_group(0, 1);
    let interactive = ioc.add_group(0, 2);
    ioc.write_qos(0, "enable=1 rpct=95 rlat=5000 wpct=95 wlat=5000")
        .unwrap();
    ioc.write_weight(0, batch, "default 100").unwrap();
    ioc.write_weight(0, interactive, "default 300").unwrap();
    let ctl = Arc::new(Controller::new(ioc).unwrap());
    let ticker = {
        let c = Arc::clone(&ctl);
        std::thread::spawn(move || Ticker::default().run_blocking(&*c))
    };
    for g in [batch, interactive] {
        let grant = ctl
            .acquire(Io::new(g, IoCostOp::Read, 64 * 1024, 0))
            .unwrap();
        drop(grant);
    }
    ctl.close();
    ticker.join().unwrap();
}

fn pool_on_threads() {
    let pool = Arc::new(Pool::new(Config::default()).unwrap());
    let flusher = {
        let pool = Arc::clone(&pool);
        std::thread::spawn(move || {
            while let Some(work) = pool.wait_work() {
                pool.work_done(work).unwrap();
            }
        })
    };
    let reservation = pool.reserve(256 * 1024, FlushKind::FlushAll).unwrap();
    drop(reservation);
    pool.close();
    flusher.join().unwrap();
}

async fn everything_as_tasks() {
    let device = DeviceParams {
        queue_depth: 64,
        rotational: false,
        write_cache: true,
    };
    let throttle = Arc::new(Throttle::new(device, WbtVariant::Modern));
    let ticker = {
        let t = Arc::clone(&throttle);
        tokio::spawn(async move { Ticker::default().run(&*t, tokio::time::sleep).await })
    };
    let permit = throttle
        .acquire_owned_async(WbtOp::Write, OpFlags::SYNC)
        .await
        .expect("open");
    permit.complete();
    throttle.close();
    ticker.await.unwrap();

    let device = IoCostDevice {
        devno: (259, 0),
        rotational: false,
        queue_depth: 64,
    };
    let mut ioc = IoCost::new(device, IoCostOptions::default());
    let tenant = ioc.add_group(0, 1);
    ioc.write_qos(0, "enable=1 rpct=95 rlat=5000 wpct=95 wlat=5000")
        .unwrap();
    let ctl = Arc::new(Controller::new(ioc).unwrap());
    let ticker = {
        let c = Arc::clone(&ctl);
        tokio::spawn(async move { Ticker::default().run(&*c, tokio::time::sleep).await })
    };
    let grant = ctl
        .acquire_owned_async(Io::new(tenant, IoCostOp::Write, 4096, 0))
        .await
        .unwrap();
    drop(grant);
    ctl.close();
    ticker.await.unwrap();

    let pool = Arc::new(Pool::new(Config::default()).unwrap());
    let flusher = {
        let pool = Arc::clone(&pool);
        tokio::spawn(async move {
            while let Some(work) = pool.wait_work_async().await {
                pool.work_done(work).unwrap();
            }
        })
    };
    let r = pool
        .reserve_owned_async(256 * 1024, FlushKind::FlushAll)
        .await
        .unwrap();
    drop(r);
    pool.close();
    flusher.await.unwrap();
}

fn chunks() {
    let devices = vec![
        TieringDevice::new(1, 64 * GIB)
            .with_class(DeviceClass::Ssd)
            .with_hint(AllocHint::MetadataOnly),
        TieringDevice::new(2, 64 * GIB)
            .with_class(DeviceClass::Ssd)
            .with_hint(AllocHint::MetadataOnly),
    ];
    let mut volume = Volume::new(VolumeParams::default(), devices).unwrap();
    let chunk = volume
        .alloc_chunk(&AllocationHint::default(), ChunkType::Metadata, Profile::Raid1)
        .unwrap();
    assert_eq!(chunk.stripes.len(), 2);
}

#[tokio::main]
async fn main() {
    throttle_on_threads();
    controller_on_threads();
    pool_on_threads();
    everything_as_tasks().await;
    chunks();
    println!("downstream engine: every face ran");
}
