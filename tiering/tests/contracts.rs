//! The extension points hold their contract in every build (this suite
//! runs in the release profile in CI, where `debug_assert!` is gone): a
//! user's allocator or read policy whose output breaks the rules gets a
//! typed error naming the rule, and nothing is placed or read.

use iolab_tiering::*;

const GIB: u64 = 1 << 30;

fn two_ssds() -> Volume {
    let devices = vec![Device::new(1, 100 * GIB), Device::new(2, 100 * GIB)];
    Volume::new(VolumeParams::default(), devices).expect("valid volume")
}

/// What a user's allocator does wrong to the candidates it is given.
#[derive(Clone, Copy)]
enum Broken {
    /// Gives the first candidate twice (both RAID1 copies on one device).
    Duplicate,
    /// Points a candidate at another device's index.
    WrongIndex,
    /// Claims more room than the hole has, past the device's end.
    BiggerHole,
    /// Moves a hole onto space an existing chunk holds.
    TakenHole,
}

struct BrokenAllocator(Broken);

impl ChunkAllocator for BrokenAllocator {
    fn name(&self) -> &'static str {
        "broken"
    }

    fn select(&self, _req: &SelectRequest, cands: &mut Vec<Candidate>) {
        match self.0 {
            Broken::Duplicate => {
                let first = cands[0];
                cands.truncate(1);
                cands.push(first);
            }
            Broken::WrongIndex => cands[0].index = 7,
            Broken::BiggerHole => cands[0].max_avail = 1000 * GIB,
            Broken::TakenHole => cands[0].offset = 0,
        }
    }
}

#[test]
fn a_broken_allocator_is_refused_naming_the_rule_and_nothing_is_placed() {
    for (broken, rule) in [
        (Broken::Duplicate, SelectionRule::Duplicate),
        (Broken::WrongIndex, SelectionRule::UnknownDevice),
        (Broken::BiggerHole, SelectionRule::HoleNotFree),
        (Broken::TakenHole, SelectionRule::HoleNotFree),
    ] {
        let mut v = two_ssds();
        // A first chunk by the stock allocator, so a hole at 0 is taken.
        v.alloc_chunk(&Stock, ChunkType::Data, Profile::Raid1)
            .expect("stock places it");
        let used: Vec<u64> = v.devices().iter().map(Device::bytes_used).collect();
        let e = v
            .alloc_chunk(&BrokenAllocator(broken), ChunkType::Data, Profile::Raid1)
            .expect_err("refused");
        match e {
            AllocError::BadSelection {
                allocator, rule: r, ..
            } => {
                assert_eq!((allocator, r), ("broken", rule));
            }
            other => panic!("expected BadSelection, got {other:?}"),
        }
        let said = e.to_string();
        assert!(
            said.contains("allocator 'broken' broke its contract"),
            "{said}"
        );
        let after: Vec<u64> = v.devices().iter().map(Device::bytes_used).collect();
        assert_eq!(used, after, "nothing was placed");
        // The volume still allocates with a sound allocator.
        v.alloc_chunk(&Stock, ChunkType::Data, Profile::Raid1)
            .expect("stock still places");
    }
}

/// A read policy that proposes a copy the request does not have.
struct OutOfRange;

impl ReadPolicy for OutOfRange {
    fn name(&self) -> &'static str {
        "out-of-range"
    }

    fn preferred(&mut self, req: &ReadRequest<'_>) -> usize {
        req.range().end + 3
    }
}

#[test]
fn a_read_policy_out_of_range_is_an_error_not_a_clamp() {
    let mirrors = [
        MirrorInfo {
            devid: 1,
            present: true,
            ..MirrorInfo::default()
        },
        MirrorInfo {
            devid: 2,
            present: true,
            ..MirrorInfo::default()
        },
    ];
    let req = ReadRequest::new(&mirrors, 0, 2, 1).expect("two copies");
    let e = find_live_mirror(&mut OutOfRange, &req).expect_err("refused");
    assert_eq!(
        e,
        MirrorOutOfRange {
            policy: "out-of-range",
            proposed: 5,
            range: 0..2,
        }
    );
    assert!(
        e.to_string().contains(
            "read policy 'out-of-range' proposed copy 5, outside the request's copies 0..2"
        ),
        "{e}"
    );
}
