//! An allocator placing chunks on a user's devices: a volume of two NVMe
//! drives hinted for metadata and two HDDs hinted for data, filled with
//! RAID1 metadata and data chunks under the allocation-hint policy, then
//! reads of one mirrored chunk spread over its copies by round-robin.
//!
//! ```text
//! cargo run -p iolab-tiering --example place_chunks
//! ```

use iolab_tiering::{
    AllocHint, AllocationHint, ChunkType, Device, DeviceClass, GIB, MirrorInfo, Profile,
    ReadPolicy, ReadRequest, RoundRobin, Volume, VolumeParams, find_live_mirror,
};

fn main() {
    let devices = vec![
        Device::new(1, 64 * GIB)
            .with_class(DeviceClass::Ssd)
            .with_hint(AllocHint::MetadataOnly),
        Device::new(2, 64 * GIB)
            .with_class(DeviceClass::Ssd)
            .with_hint(AllocHint::MetadataOnly),
        Device::new(3, 1024 * GIB)
            .with_class(DeviceClass::Hdd)
            .with_hint(AllocHint::DataOnly),
        Device::new(4, 1024 * GIB)
            .with_class(DeviceClass::Hdd)
            .with_hint(AllocHint::DataOnly),
    ];
    let mut volume = Volume::new(VolumeParams::default(), devices).expect("a valid volume");
    let policy = AllocationHint::default();

    let mut on = [0u32; 5];
    let mut last_data = None;
    for i in 0..40 {
        let ty = if i % 4 == 0 {
            ChunkType::Metadata
        } else {
            ChunkType::Data
        };
        let chunk = volume
            .alloc_chunk(&policy, ty, Profile::Raid1)
            .expect("space left");
        for s in &chunk.stripes {
            on[s.devid as usize] += 1;
            // The hints hold: metadata on the NVMe pair, data on the HDDs.
            assert_eq!(s.devid <= 2, ty == ChunkType::Metadata);
        }
        if ty == ChunkType::Data {
            last_data = Some(chunk);
        }
    }
    println!(
        "stripes per device: nvme1 {}, nvme2 {}, hdd3 {}, hdd4 {}",
        on[1], on[2], on[3], on[4]
    );

    // Reads of the last data chunk: which copy serves each 64 KiB read.
    let chunk = last_data.expect("data chunks were placed");
    let mirrors: Vec<MirrorInfo> = chunk
        .stripes
        .iter()
        .map(|s| MirrorInfo {
            devid: s.devid,
            present: true,
            physical: s.physical,
            queue_depth: 32,
            rotational: true,
            ..MirrorInfo::default()
        })
        .collect();
    let mut policy = RoundRobin::new(256 * 1024, 4096).expect("a valid setting");
    let mut served = [0u32; 2];
    for _ in 0..64 {
        let req = ReadRequest::new(&mirrors, 0, mirrors.len(), 1000).expect("a request");
        let copy = find_live_mirror(&mut policy, &req).expect("a copy in range");
        served[copy] += 1;
        policy.on_read_submitted(16); // 64 KiB in 4 KiB blocks
    }
    println!(
        "64 reads of a RAID1 data chunk: copy 0 (hdd{}) served {}, copy 1 (hdd{}) served {}",
        mirrors[0].devid, served[0], mirrors[1].devid, served[1]
    );
    assert!(
        served[0] > 0 && served[1] > 0,
        "round-robin uses both copies"
    );
}
