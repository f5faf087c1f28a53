//! Conformance suites for tiering's extension points, for anyone's
//! variant: a user's crate calls them from its own tests, one line each,
//!
//! ```
//! use iolab_tiering::{Pid, Stock};
//! iolab_verification::tiering::read_policy::check(|| Pid);
//! iolab_verification::tiering::allocator::check(|| Stock);
//! ```
//!
//! Each suite draws its cases with proptest (`IOLAB_CHECK_CASES` sets
//! how many, `IOLAB_CHECK_SEED` the seed they are drawn from) and panics
//! on the first case that breaks a rule, shrunk to the smallest that
//! still does, with the rule, the case and the seed that replays it.
//! The rules are the ones our own variants are held to;
//! our variants pass every suite (tests in this crate), and deliberately
//! wrong twins fail them.

pub use crate::Checked;

/// A broken rule and the case that broke it, for a report.
fn rule(rule: &str, case: &str) -> String {
    format!("{rule}\n  case: {case}")
}

/// The RAID1 read-mirror suite: [`ReadPolicy`](iolab_tiering::ReadPolicy).
pub mod read_policy {
    use iolab_tiering::{MirrorInfo, MirrorOutOfRange, ReadPolicy, ReadRequest, find_live_mirror};

    use super::rule;
    use crate::cases::{Draws, Rng, broke, plan, proptest_draws};

    /// Cases when `IOLAB_CHECK_CASES` is not set.
    pub const DEFAULT_CASES: u64 = 2000;

    /// A case's copies: one to six mirrors, some missing, under any
    /// load; and the request's range in them.
    fn stripe(rng: &mut Draws<'_>) -> (Vec<MirrorInfo>, usize, usize) {
        let total = 1 + rng.below(6) as usize;
        let mirrors: Vec<MirrorInfo> = (0..total)
            .map(|k| MirrorInfo {
                devid: 1 + k as u64,
                present: rng.below(8) != 0,
                physical: rng.below(1 << 40),
                read_ios: rng.below(1 << 20),
                read_wait_ns: rng.below(1 << 40),
                inflight: rng.below(64) as u32,
                last_offset: rng.below(1 << 40),
                queue_depth: 1 + rng.below(256) as u32,
                rotational: rng.below(2) == 0,
            })
            .collect();
        let n = 1 + rng.below(total.min(4) as u64) as usize;
        let first_copy = rng.below((total - n + 1) as u64) as usize;
        (mirrors, first_copy, n)
    }

    /// One read of a case, as both sides answered it.
    struct Read<'a> {
        /// The other side's name.
        other: &'static str,
        mine: Result<usize, MirrorOutOfRange>,
        theirs: Result<usize, MirrorOutOfRange>,
        req: &'a ReadRequest<'a>,
        /// The case, for a message.
        case: String,
    }

    /// Feeds `mine` and `other`, built fresh, the same requests and
    /// submitted reads of one case drawn from `rng`, and hands each
    /// read's two answers to `judge`; the reads judged, or the first
    /// broken rule.
    fn side_by_side<P: ReadPolicy, Q: ReadPolicy>(
        mine: impl Fn() -> P,
        other: impl Fn() -> Q,
        rng: &mut Draws<'_>,
        mut judge: impl FnMut(&Read<'_>) -> Result<(), String>,
    ) -> Result<(u64, u64), String> {
        let mut outputs = 0;
        {
            let (mirrors, first_copy, n) = stripe(rng);
            let (mut a, mut b) = (mine(), other());
            for r in 0..1 + rng.below(16) {
                let pid = rng.below(1 << 16) as u32;
                let Ok(mut req) = ReadRequest::new(&mirrors, first_copy, n, pid) else {
                    continue;
                };
                req.cpu = rng.below(64) as u32;
                req.mixed_rotational = rng.below(2) == 0;
                judge(&Read {
                    other: b.name(),
                    mine: find_live_mirror(&mut a, &req),
                    theirs: find_live_mirror(&mut b, &req),
                    req: &req,
                    case: format!(
                        "read {r} (pid {pid}, cpu {}) of {mirrors:?}, copies {first_copy}..{}",
                        req.cpu,
                        first_copy + n
                    ),
                })?;
                outputs += 1;
                let sectors = rng.below(2048);
                a.on_read_submitted(sectors);
                b.on_read_submitted(sectors);
            }
        }
        Ok((outputs, 0))
    }

    /// Runs `mine` beside `reference` (our variant of the same name, or a
    /// simple model of what yours should do) on the same requests and
    /// submitted reads, and reports the first read they send to
    /// different copies.
    ///
    /// # Panics
    ///
    /// At the first diverging read, shrunk, naming it, both answers and
    /// the seed.
    pub fn differential<P, Q>(mine: impl Fn() -> P, reference: impl Fn() -> Q) -> crate::Checked
    where
        P: ReadPolicy,
        Q: ReadPolicy,
    {
        let name = mine().name();
        proptest_draws("read_policy::differential", name, DEFAULT_CASES, |d| {
            side_by_side(&mine, &reference, d, |r| {
                if r.mine != r.theirs {
                    return Err(rule(
                        &format!(
                            "the read went to {:?} where '{}' sends it to {:?}",
                            r.mine, r.other, r.theirs
                        ),
                        &r.case,
                    ));
                }
                Ok(())
            })
        })
    }

    /// Reads of one load run.
    pub const LOAD_READS: u64 = 400;

    /// One run under load: two to four equal, present copies, each
    /// serving one read per 100 µs in order; readers of many pids sending
    /// reads a quarter faster than all copies together serve them, so
    /// reads pile up and wait where the policy sends them; each read's
    /// size is submitted. Returns the
    /// reads each copy served, or the case that broke the contract.
    fn under_load<P: ReadPolicy>(policy: &mut P, rng: &mut Rng) -> Result<Vec<u64>, String> {
        let copies = 2 + rng.below(3) as usize;
        let mut mirrors: Vec<MirrorInfo> = (0..copies)
            .map(|k| MirrorInfo {
                devid: 1 + k as u64,
                present: true,
                physical: 0,
                read_ios: 0,
                read_wait_ns: 0,
                inflight: 0,
                last_offset: 0,
                queue_depth: 32,
                rotational: false,
            })
            .collect();
        let mut busy_until = vec![0u64; copies];
        // (copy, issued at, completes at), in issue order.
        let mut out: Vec<(usize, u64, u64)> = Vec::new();
        let mut served = vec![0u64; copies];
        // 100 µs per read on each copy; arrivals at 125 % of the total.
        let gap = 80_000 / copies as u64;
        for r in 0..LOAD_READS {
            let now = r * gap;
            out.retain(|&(k, issued, done)| {
                if done > now {
                    return true;
                }
                mirrors[k].inflight -= 1;
                mirrors[k].read_ios += 1;
                mirrors[k].read_wait_ns += done - issued;
                false
            });
            let pid = rng.below(1 << 16) as u32;
            let offset = rng.below(1 << 30) << 9;
            for m in &mut mirrors {
                m.physical = offset;
            }
            let Ok(mut req) = ReadRequest::new(&mirrors, 0, copies, pid) else {
                return Err(format!("read {r}: a request over {copies} copies"));
            };
            req.cpu = rng.below(64) as u32;
            let k =
                find_live_mirror(policy, &req).map_err(|e| format!("read {r} under load: {e}"))?;
            let done = busy_until[k].max(now) + 100_000;
            busy_until[k] = done;
            out.push((k, now, done));
            mirrors[k].inflight += 1;
            mirrors[k].last_offset = offset;
            served[k] += 1;
            policy.on_read_submitted(8 + rng.below(249));
        }
        Ok(served)
    }

    /// Checks a read policy that `make` builds fresh:
    ///
    /// - every proposal lies in the request's copies, on requests of one
    ///   to four copies at any place in the stripe, some of them missing,
    ///   on rotational and non-rotational devices, under any load;
    /// - the policy is deterministic: two fresh policies fed the same
    ///   requests and the same submitted reads answer the same;
    /// - if it claims to balance ([`ReadPolicy::balances`]): under load
    ///   from many readers (one run per ten cases, [`LOAD_READS`] reads
    ///   each), every copy serves at least a quarter of its even share.
    ///
    /// # Panics
    ///
    /// At the first case that breaks a rule, shrunk, naming the rule, the
    /// case and the seed.
    pub fn check<P: ReadPolicy, F: Fn() -> P>(make: F) -> crate::Checked {
        let name = make().name();
        if make().balances() {
            let (cases, first) = plan(DEFAULT_CASES);
            for seed in first..first + cases.div_ceil(10) {
                let mut rng = Rng(seed);
                let served = match under_load(&mut make(), &mut rng) {
                    Ok(s) => s,
                    Err(case) => broke("read_policy", name, seed, "under load", &case),
                };
                let floor = LOAD_READS / (4 * served.len() as u64);
                if let Some(k) = served.iter().position(|&n| n < floor) {
                    broke(
                        "read_policy",
                        name,
                        seed,
                        &format!(
                            "it claims to balance, but under load copy {k} served {} of {LOAD_READS} reads, under a quarter of its even share ({floor})",
                            served[k]
                        ),
                        &format!("{} equal copies, reads served {served:?}", served.len()),
                    );
                }
            }
        }
        proptest_draws("read_policy", name, DEFAULT_CASES, |d| {
            side_by_side(&make, &make, d, |r| {
                let got = match &r.mine {
                    Ok(i) => *i,
                    Err(e) => return Err(rule(&e.to_string(), &r.case)),
                };
                if !r.req.range().contains(&got) {
                    return Err(rule("the read went outside the request", &r.case));
                }
                if r.theirs.as_ref().ok() != Some(&got) {
                    return Err(rule(
                        &format!(
                            "not deterministic: {got}, then {:?} from a fresh twin fed the same",
                            r.theirs
                        ),
                        &r.case,
                    ));
                }
                Ok(())
            })
        })
    }
}

/// The chunk-allocator suite: [`ChunkAllocator`](iolab_tiering::ChunkAllocator).
pub mod allocator {
    use iolab_tiering::{
        AllocError, AllocHint, Chunk, ChunkAllocator, ChunkType, Device, DeviceClass, Profile,
        Volume, VolumeParams, hint_key,
    };

    use super::rule;
    use crate::cases::{Draws, proptest_draws};

    /// Cases (volumes, each with a run of allocations) when
    /// `IOLAB_CHECK_CASES` is not set.
    pub const DEFAULT_CASES: u64 = 300;

    const GIB: u64 = 1 << 30;

    /// A case's volume: two to six SSDs and HDDs of 2 to 200 GiB, with
    /// allocation hints.
    fn volume(rng: &mut Draws<'_>) -> Vec<Device> {
        let ndev = 2 + rng.below(5);
        (0..ndev)
            .map(|k| {
                let class = if rng.below(2) == 0 {
                    DeviceClass::Ssd
                } else {
                    DeviceClass::Hdd
                };
                let hints = [
                    AllocHint::None,
                    AllocHint::DataPreferred,
                    AllocHint::MetadataPreferred,
                    AllocHint::MetadataOnly,
                    AllocHint::DataOnly,
                ];
                Device::new(k + 1, (2 + rng.below(199)) * GIB)
                    .with_class(class)
                    .with_hint(hints[rng.below(5) as usize])
            })
            .collect()
    }

    /// One allocation request of a run.
    fn request(rng: &mut Draws<'_>) -> (ChunkType, Profile) {
        let ty = [ChunkType::Data, ChunkType::Metadata, ChunkType::System][rng.below(3) as usize];
        let profiles = [
            Profile::Single,
            Profile::Dup,
            Profile::Raid0,
            Profile::Raid1,
            Profile::Raid10,
        ];
        (ty, profiles[rng.below(5) as usize])
    }

    /// What [`side_by_side`] hands its judge.
    enum Event<'a> {
        /// One allocation, as both sides answered it.
        Step {
            /// Its place in the case, for a message.
            case: String,
            ty: ChunkType,
            profile: Profile,
            /// The other side's name.
            other: &'static str,
            mine: &'a Result<Chunk, AllocError>,
            theirs: &'a Result<Chunk, AllocError>,
            /// The devices the volume was made of.
            devices: &'a [Device],
        },
        /// A case ended: the volumes it started from and where the first
        /// side left them.
        End {
            devices: &'a [Device],
            volume: &'a Volume,
        },
    }

    /// Runs `mine` and `other`, built fresh, on two copies of the same
    /// volume through the same allocation requests of one case drawn
    /// from `rng`, and hands each step's two results, then the case's
    /// end, to `judge`; the chunks placed and refused, or the first
    /// broken rule.
    fn side_by_side<A: ChunkAllocator, B: ChunkAllocator>(
        mine: impl Fn() -> A,
        other: impl Fn() -> B,
        rng: &mut Draws<'_>,
        mut judge: impl FnMut(Event<'_>) -> Result<(), String>,
    ) -> Result<(u64, u64), String> {
        let (mut outputs, mut refused) = (0, 0);
        {
            let devices = volume(rng);
            let (Ok(mut va), Ok(mut vb)) = (
                Volume::new(VolumeParams::default(), devices.clone()),
                Volume::new(VolumeParams::default(), devices.clone()),
            ) else {
                return Ok((0, 0));
            };
            let (a, b) = (mine(), other());
            for step in 0..1 + rng.below(40) {
                let (ty, profile) = request(rng);
                let x = va.alloc_chunk(&a, ty, profile);
                let y = vb.alloc_chunk(&b, ty, profile);
                judge(Event::Step {
                    case: format!("step {step}: {ty:?} {profile:?} on {devices:?}"),
                    ty,
                    profile,
                    other: b.name(),
                    mine: &x,
                    theirs: &y,
                    devices: &devices,
                })?;
                if x.is_ok() {
                    outputs += 1;
                } else {
                    refused += 1;
                }
            }
            judge(Event::End {
                devices: &devices,
                volume: &va,
            })?;
        }
        Ok((outputs, refused))
    }

    /// Runs `mine` beside `reference` on the same volumes and allocation
    /// requests, and reports the first chunk they place differently (or
    /// that one places and the other refuses).
    ///
    /// # Panics
    ///
    /// At the first diverging allocation, shrunk, naming it, both
    /// results and the seed.
    pub fn differential<A, B>(mine: impl Fn() -> A, reference: impl Fn() -> B) -> crate::Checked
    where
        A: ChunkAllocator,
        B: ChunkAllocator,
    {
        let name = mine().name();
        proptest_draws("allocator::differential", name, DEFAULT_CASES, |d| {
            side_by_side(&mine, &reference, d, |e| {
                if let Event::Step {
                    case,
                    ty,
                    profile,
                    other,
                    mine,
                    theirs,
                    ..
                } = e
                    && mine != theirs
                {
                    return Err(rule(
                        &format!(
                            "a {ty:?} {profile:?} chunk: {mine:?} where '{other}' gives {theirs:?}"
                        ),
                        &case,
                    ));
                }
                Ok(())
            })
        })
    }

    /// Checks a chunk allocator that `make` builds fresh, on volumes of
    /// two to six devices (SSDs and HDDs of 2 to 200 GiB, with allocation
    /// hints) through runs of data, metadata and system chunks of every
    /// profile the volume allows:
    ///
    /// - it keeps its contract: no allocation is refused as a bad
    ///   selection (see [`ChunkAllocator::select`]);
    /// - every chunk's copies of a mirrored profile are on distinct
    ///   devices, no two extents overlap, each lies on its device;
    /// - space is conserved: each device's used bytes are the extents
    ///   placed on it;
    /// - placement is deterministic: a fresh allocator on a fresh copy of
    ///   the volume places the same chunks.
    ///
    /// # Panics
    ///
    /// At the first case that breaks a rule, shrunk, naming the rule, the
    /// case and the seed.
    pub fn check<A: ChunkAllocator, F: Fn() -> A>(make: F) -> crate::Checked {
        let name = make().name();
        let hints = make().honours_hints();
        proptest_draws("allocator", name, DEFAULT_CASES, |d| {
            // The case's extents so far: (device, offset, length).
            let mut placed: Vec<(u64, u64, u64)> = Vec::new();
            side_by_side(&make, &make, d, |e| match e {
                Event::Step {
                    case,
                    ty,
                    profile,
                    mine,
                    theirs,
                    devices,
                    ..
                } => {
                    if mine != theirs {
                        return Err(rule(
                            &format!(
                                "not deterministic: {mine:?}, then {theirs:?} from a fresh twin"
                            ),
                            &case,
                        ));
                    }
                    let chunk = match mine {
                        Ok(c) => c,
                        Err(e @ AllocError::BadSelection { .. }) => {
                            return Err(rule(&e.to_string(), &case));
                        }
                        Err(_) => return Ok(()),
                    };
                    if hints {
                        for st in &chunk.stripes {
                            let hint = devices
                                .iter()
                                .find(|d| d.devid() == st.devid)
                                .map(|d| d.hint);
                            if let Some(hint) = hint
                                && hint_key(hint, ty).is_none()
                            {
                                return Err(rule(
                                    &format!(
                                        "it honours hints, but placed a {ty:?} chunk on device {} whose hint {hint:?} excludes it",
                                        st.devid
                                    ),
                                    &case,
                                ));
                            }
                        }
                    }
                    if matches!(profile, Profile::Raid1 | Profile::Raid10) {
                        let mut devs: Vec<u64> = chunk.stripes.iter().map(|s| s.devid).collect();
                        devs.sort_unstable();
                        devs.dedup();
                        if devs.len() != chunk.stripes.len() {
                            return Err(rule(
                                "a mirrored chunk has two stripes on one device",
                                &case,
                            ));
                        }
                    }
                    for s in &chunk.stripes {
                        let end = s.physical + s.len;
                        let size = devices
                            .iter()
                            .find(|d| d.devid() == s.devid)
                            .map_or(0, Device::total_bytes);
                        if end > size {
                            return Err(rule("a stripe runs past its device", &case));
                        }
                        if placed
                            .iter()
                            .any(|&(d, o, l)| d == s.devid && o < end && s.physical < o + l)
                        {
                            return Err(rule("two extents overlap", &case));
                        }
                        placed.push((s.devid, s.physical, s.len));
                    }
                    Ok(())
                }
                Event::End { devices, volume } => {
                    for d in volume.devices() {
                        let initial = devices.iter().find(|x| x.devid() == d.devid());
                        let mine: u64 = placed
                            .iter()
                            .filter(|p| p.0 == d.devid())
                            .map(|p| p.2)
                            .sum();
                        let expected = initial.map_or(0, Device::bytes_used) + mine;
                        if d.bytes_used() != expected {
                            return Err(rule(
                                &format!(
                                    "space not conserved on device {}: {} used, {} placed",
                                    d.devid(),
                                    d.bytes_used(),
                                    expected
                                ),
                                "the whole run",
                            ));
                        }
                    }
                    placed.clear();
                    Ok(())
                }
            })
        })
    }
}
