//! Workloads: what a fio job clone does, as the simulator runs it.
//!
//! [`JobPlan`] is the simulator's view of one job clone, made from a parsed
//! job section by `scenario`; [`OffsetGen`] and [`RwMix`] reproduce fio's
//! choice of the next offset and direction.

pub mod distribution;

pub use distribution::{Skew, ZetaCache, ZoneIndex};

use crate::cache::readahead::RaState;
use crate::rng::{Permutation, Stream};
use crate::time::Ns;

/// IO direction of a data operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Read.
    Read = 0,
    /// Write.
    Write = 1,
    /// Trim.
    Trim = 2,
}

/// How a job submits IO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    /// One blocking syscall at a time (`sync`, `psync`, `vsync`, `pvsync`).
    Sync,
    /// `libaio`: `iodepth` in flight with O_DIRECT, synchronous otherwise.
    Libaio,
    /// `io_uring`: `iodepth` in flight, buffered too.
    IoUring,
    /// fio's `null` engine: no device, only a per-IO CPU cost.
    Null,
    /// fio's `cpuio`: CPU time (percent of a CPU) for its runtime, no IO.
    Cpu(u32),
    /// A metadata engine: one filesystem call per file, no data IO.
    Meta(crate::fio::MetaEngine),
}

/// A metadata engine's job (`ioengine=filecreate` and its siblings): one
/// call per file, `files` files per loop, each counted as one IO of
/// `bytes` (fio's fake IO of the file's one block).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetaPlan {
    /// The call.
    pub op: crate::fio::MetaEngine,
    /// Files (or directories) per loop.
    pub files: u32,
    /// Bytes counted per call.
    pub bytes: u64,
}

/// An engine whose IOs are calls on the file rather than data moved
/// (`falloc`, `ftruncate`, `e4defrag`): each picked IO (direction, offset,
/// length) becomes the call its direction makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileCall {
    /// `fallocate(2)`: a read keeps the size, a write extends, a trim
    /// punches a hole.
    Falloc,
    /// `ftruncate(2)` to the write's offset.
    Ftruncate,
    /// `EXT4_IOC_MOVE_EXT` of the write's range into a donor
    /// (`inplace`: the donor's range allocated before and truncated
    /// after each move).
    E4defrag { inplace: bool },
}

/// fio's latency target (`latency_target` and its options): the depth
/// search of `world::latency`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyTarget {
    /// `latency_target`, ns.
    pub target_ns: u64,
    /// `latency_window`, ns.
    pub window_ns: u64,
    /// `latency_percentile` (default 100).
    pub percentile: f64,
    /// `latency_run`: keep running at the depth found.
    pub run: bool,
}

/// Which pages a job's reads hint to the kernel (fio `fadvise_hint`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fadvise {
    /// No hint: default readahead.
    None,
    /// `POSIX_FADV_SEQUENTIAL`: readahead window doubled.
    Sequential,
    /// `POSIX_FADV_RANDOM`: no readahead.
    Random,
}

/// File selection (fio `file_service_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileService {
    /// Next file in turn.
    RoundRobin,
    /// A random file.
    Random,
    /// Finish one file before the next.
    Sequential,
}

/// When `exitall` ends other jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitWhat {
    /// Jobs of the same reporting group.
    Group,
    /// Jobs since the last stonewall.
    Stonewall,
    /// All jobs.
    All,
}

/// One file a job uses.
#[derive(Clone, Debug)]
pub struct FilePlan {
    /// File name (jobs naming the same file share it).
    pub name: String,
    /// Where this job's IO in the file starts (fio's `file_offset`).
    pub offset: u64,
    /// Bytes of the file this job uses, from `offset`.
    pub size: u64,
}

/// fio's `zonemode=zbd` on a job: its device file simulated as a
/// host-managed zoned disk of sequential-write-required zones of
/// `zone_size`, every zone empty when the run starts (`world::zbd`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ZbdPlan {
    pub zone_size: u64,
    /// `max_open_zones`: the device's open zones, shared by the jobs on
    /// it (0: no limit, and fio then keeps no list of open zones).
    pub max_open_zones: u32,
    /// `job_max_open_zones`: this job's own (0: no limit).
    pub job_max_open_zones: u32,
    /// `read_beyond_wp`: reads go where they were drawn, written or not.
    pub read_beyond_wp: bool,
    /// `zone_reset_threshold`: the written share of the job's zones past
    /// which every `1 / zone_reset_frequency`-th write resets its zone.
    pub reset_threshold: f64,
    pub reset_frequency: f64,
}

/// The simulator's view of one fio job clone.
#[derive(Clone, Debug)]
pub struct JobPlan {
    /// Job name.
    pub name: String,
    /// Index of the job section in the file.
    pub section: u32,
    /// Clone number (0-based) within the section.
    pub clone: u32,
    /// Reporting group.
    pub groupid: u32,
    /// Stonewall section (jobs start when all earlier sections ended).
    pub wall: u32,
    /// Engine.
    pub engine: EngineKind,
    /// In-flight IOs (async engines).
    pub iodepth: u32,
    /// O_DIRECT.
    pub direct: bool,
    /// Directions this job does.
    pub reads: bool,
    /// Directions this job does.
    pub writes: bool,
    /// Trims.
    pub trims: bool,
    /// Random offsets.
    pub random: bool,
    /// Random: IOs per new random offset; sequential: bytes skipped after
    /// each IO (fio's `rw=...:N`).
    pub rw_suffix: u64,
    /// Sequential jobs: bytes from one IO's end to the next IO (fio's
    /// `rw=read:8k` holes; negative goes backwards).
    pub seq_add: i64,
    /// Percentage of reads in a mixed job.
    pub rwmixread: u32,
    /// Block size range per direction (read, write, trim).
    pub bs: [(u64, u64); 3],
    /// `bssplit=` per direction, `(size, percent)` in fio's order (by
    /// percent); empty: sizes from [`bs`](Self::bs).
    pub bssplit: [Vec<(u64, u32)>; 3],
    /// Files.
    pub files: Vec<FilePlan>,
    /// A metadata engine's files, which have no data (`files` is then
    /// empty).
    pub meta: Option<MetaPlan>,
    /// The calls a file-call engine makes in place of data IO.
    pub file_call: Option<FileCall>,
    /// `create_on_open=1` on a data engine: each file is created when the
    /// job first reaches it, not before the run.
    pub create_on_open: bool,
    /// The directory the job's files are in, by index among the run's
    /// directories: creates and deletes in one take its lock in turn.
    pub dir: u32,
    /// Length of the job's file names (the directory items they make).
    pub name_len: u64,
    /// How files are picked, and IOs per pick.
    pub file_service: (FileService, u32),
    /// The log a replaying job issues instead of drawing its IOs
    /// (`read_iolog=`), its files this plan's files in the log's order.
    pub replay: Option<std::sync::Arc<crate::fio::iolog::IoLog>>,
    /// Replay as fast as the depth allows (`replay_no_stall`).
    pub replay_no_stall: bool,
    /// The log's pace, percent (`replay_time_scale`).
    pub replay_time_scale: u32,
    /// `random_distribution=` of a random job.
    pub distribution: crate::fio::RandomDistribution,
    /// Stop after this many bytes (None: only the runtime stops it):
    /// `io_size` (else `size`) times `loops`, over all passes, as fio's
    /// `io_issue_bytes_exceeded`.
    pub io_limit: Option<u64>,
    /// `io_size=` when given: once its `loops` passes are done, a job
    /// makes more while it has done less than this by at least its
    /// largest block (fio's `keep_running`), so `io_size` above `size`
    /// goes over the file again.
    pub more_passes_below: Option<u64>,
    /// Stop after issuing this many IOs, all directions (`number_ios` ×
    /// `loops`, fio's `exceeds_number_ios`); None: no such limit.
    pub io_count_limit: Option<u64>,
    /// When the job starts after the run does (`startdelay=`).
    pub start_delay: Ns,
    /// Runtime after ramp.
    pub runtime: Option<Ns>,
    /// Loop over the files until the runtime ends.
    pub time_based: bool,
    /// Ramp time (not counted in the stats).
    pub ramp: Ns,
    /// fsync after every N writes (0: never).
    pub fsync_every: u32,
    /// fdatasync after every N writes (0: never).
    pub fdatasync_every: u32,
    /// fsync every file at the end.
    pub end_fsync: bool,
    /// Drop cached pages of the files at start.
    pub invalidate: bool,
    /// Bytes/s caps per direction (0: none).
    pub rate: [u64; 3],
    /// IOPS caps per direction (0: none).
    pub rate_iops: [u64; 3],
    /// Poisson arrivals instead of linear pacing.
    pub poisson: bool,
    /// `io_submit_mode=offload`: ahead of its rate, it sleeps to its next
    /// IO's time without waiting for its IOs in flight.
    pub offload: bool,
    /// Stall after completions.
    pub thinktime: Ns,
    /// IOs between stalls.
    pub thinktime_blocks: u32,
    /// fio's flow control (`flow=` and its options; weight 0: none).
    pub flow: crate::fio::Flow,
    /// `wait_for=`: starts once every other job of this name has ended.
    pub wait_for: Option<String>,
    /// Every file is `/dev/null` or `/dev/zero`: each IO is the call's
    /// CPU time, no device.
    pub null_device: bool,
    /// The job only reads files it creates on open, which are empty:
    /// each read returns nothing, and the error (`EIO`, `EILSEQ`) that
    /// ends the job at its first reads, 0 for none.
    pub empty_reads: Option<i32>,
    /// A latency target's depth search.
    pub latency_target: Option<LatencyTarget>,
    /// `zonemode=zbd`: the device file's zones (`world::zbd`).
    pub zbd: Option<ZbdPlan>,
    /// Steady-state detection (`ss`, `ss_dur` > 0, `ss_ramp`).
    pub steady: Option<crate::fio::Steady>,
    /// `verify=` on a job that writes: it reads back what it wrote.
    pub verify: Option<VerifyPlan>,
    /// `zonemode=strided` (sequential jobs).
    pub stride: Option<Stride>,
    /// `blockalign=`: the boundary its random offsets are drawn on, when
    /// not its smallest block size.
    pub block_align: Option<u64>,
    /// Its writes are reads on the device, counted as writes: the `sg`
    /// engine's SCSI VERIFY (`sg_write_mode=verify_bytchk_*`).
    pub device_reads_writes: bool,
    /// Block cgroup index (0 = root).
    pub cgroup: u16,
    /// Ends others when it ends.
    pub exitall: Option<ExitWhat>,
    /// Report per group.
    pub group_reporting: bool,
    /// Latency log window.
    pub log_avg: Ns,
    /// `write_hist_log` with `log_hist_msec`: the interval and
    /// `log_hist_coarseness` (none without a log or an interval).
    pub hist_log: Option<(Ns, u32)>,
    /// Bandwidth and IOPS sample periods (fio's `bw_avg_time` and
    /// `iops_avg_time`: 500 ms, or `log_avg_msec` for a job writing that
    /// log).
    pub bw_sample: Ns,
    pub iops_sample: Ns,
    /// Seed override (fio `randseed`).
    pub seed: Option<u64>,
    /// fio's `randrepeat`: the job's random streams repeat from run to run
    /// (here: are the run's `--seed`'s); off, they are drawn afresh (here:
    /// another stream of the same `--seed`).
    pub randrepeat: bool,
    /// Uniform random offsets with repetition.
    pub norandommap: bool,
    /// Readahead hint.
    pub fadvise: Fadvise,
    /// The file is written out before the run (else fallocated).
    pub written_out: bool,
    /// Passes over the files when not time based.
    pub loops: u32,
    /// The section's own options, for the JSON report ("job options").
    pub options: Vec<(String, String)>,
    /// Which latencies list percentiles, at which points (fio's
    /// `percentile_list`, `clat_percentiles`, `lat_percentiles`).
    pub percentiles: crate::stats::Percentiles,
    /// fio's `unified_rw_reporting`.
    pub unified: crate::stats::Unified,
    /// The `[global]` options in force for it ("global options").
    pub global_options: Vec<(String, String)>,
}

impl JobPlan {
    /// Does the job mix reads and writes?
    pub fn mixed(&self) -> bool {
        self.reads && self.writes
    }
}

/// fio's read/write mix: the direction is redrawn once the current one has
/// issued its share.
#[derive(Clone, Debug)]
pub struct RwMix {
    cur: Dir,
    issues: [u64; 2],
    switch_at: u64,
}

impl Default for RwMix {
    fn default() -> Self {
        Self {
            cur: Dir::Read,
            issues: [0; 2],
            switch_at: 0,
        }
    }
}

impl RwMix {
    /// Direction of the next IO of a mixed job with `rwmixread` % reads.
    pub fn next(&mut self, rng: &mut Stream, rwmixread: u32) -> Dir {
        let cur = self.cur as usize;
        if self.issues[cur] >= self.switch_at {
            let d = if rng.percent() <= rwmixread {
                Dir::Read
            } else {
                Dir::Write
            };
            if d != self.cur {
                let share = if d == Dir::Read {
                    rwmixread
                } else {
                    100 - rwmixread
                };
                self.switch_at = self.issues[cur] * u64::from(share) / 100;
            }
            self.cur = d;
        }
        self.issues[self.cur as usize] += 1;
        self.cur
    }
}

/// fio's verify on a job that writes (`verify=`, `do_verify=1`): once
/// its writes are done (not when its runtime ends them) and its IOs in
/// flight are in, it reads back every block it wrote, in the order it
/// wrote them, at its own depth; with `backlog` > 0 it also reads back
/// that many blocks each time that many more are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifyPlan {
    /// `verify_backlog=` (0: none).
    pub backlog: u64,
}

/// Offsets of one job in one file.
#[derive(Clone, Debug)]
pub struct OffsetGen {
    /// Bytes of the file in use.
    pub size: u64,
    /// Where they start in the file: every offset drawn is after it.
    pub base: u64,
    /// Granularity of random offsets (the smallest block size).
    pub unit: u64,
    seq: u64,
    /// Bytes of the current pass in strided zones.
    pass_done: u64,
    perm: Option<Permutation>,
    drawn: u64,
    pass: u64,
    key: u64,
    run_left: u64,
    skew: Option<Skew>,
    /// `zonemode=strided`: the zones, where the current one starts and
    /// the bytes done in it.
    stride: Option<Stride>,
    zone_start: u64,
    zone_bytes: u64,
    /// Readahead state of this job's open file.
    pub ra: RaState,
}

/// fio's `zonemode=strided` (`zonesize`, `zonerange`, `zoneskip`): a
/// sequential job does `size` bytes from the start of a zone, then goes
/// on `range + skip` bytes after that start, from the file's start past
/// its end, until it has done the file's size (fio 3.33 on `size=64m
/// bs=64k zonesize=1m zoneskip=3m`: 1,024 reads, the 16 zones four
/// times over).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stride {
    pub size: u64,
    pub range: u64,
    pub skip: u64,
}

impl OffsetGen {
    /// Offsets over `size` bytes in units of `unit`.
    pub fn new(size: u64, unit: u64, key: u64, random_map: bool) -> Self {
        let unit = unit.max(1);
        let blocks = (size / unit).max(1);
        Self {
            size,
            base: 0,
            unit,
            seq: 0,
            pass_done: 0,
            perm: random_map.then(|| Permutation::new(blocks, key)),
            drawn: 0,
            pass: 0,
            key,
            run_left: 0,
            skew: None,
            stride: None,
            zone_start: 0,
            zone_bytes: 0,
            ra: RaState::default(),
        }
    }

    /// Offsets from `base` on (fio's `offset=`); those the generator
    /// returns stay relative to it.
    pub fn starting_at(mut self, base: u64) -> Self {
        self.base = base;
        self
    }

    /// Sequential offsets in fio's strided zones.
    pub fn with_stride(mut self, stride: Option<Stride>) -> Self {
        self.stride = stride;
        self
    }

    /// Random offsets drawn by `skew` instead of uniformly (fio keeps no
    /// random map for them).
    pub fn with_skew(mut self, skew: Option<Skew>) -> Self {
        if skew.is_some() {
            self.perm = None;
        }
        self.skew = skew;
        self
    }

    /// Blocks of `unit` in the file.
    pub fn blocks(&self) -> u64 {
        (self.size / self.unit).max(1)
    }

    /// Next sequential offset for `len` bytes, the next one `add` bytes
    /// after its end, as fio's `get_next_seq_offset` does: with holes
    /// (`rw=write:4k`) past the end of the file it goes on from its start,
    /// backwards (`rw=read:-8k`) below its start from its end plus `add`,
    /// so such a pass ends only with the job's bytes (fio 3.33's
    /// `write_iolog` of `rw=read:12k bs=4k size=1m`: blocks 0, 4, …, 252,
    /// 0, 4, …, 256 reads; with `io_size=10m loops=2` on `size=4m` it
    /// does 20 MiB). Returns `None` at the end of the file without holes
    /// (the caller wraps or stops).
    pub fn next_seq(&mut self, len: u64, add: i64) -> Option<u64> {
        if let Some(z) = self.stride {
            return self.next_strided(z, len);
        }
        if add == 0 {
            if self.seq + len > self.size {
                return None;
            }
        } else if self.seq + len > self.size {
            self.seq = 0;
        }
        let at = self.seq;
        let next = i128::from(at) + i128::from(len) + i128::from(add);
        self.seq = if next < 0 {
            (i128::from(self.size) + i128::from(add)).max(0) as u64
        } else {
            next.min(i128::from(u64::MAX)) as u64
        };
        Some(at)
    }

    /// The next offset in strided zones, as fio's
    /// `setup_strided_zone_mode`; `None` once the pass's bytes reach the
    /// file's size.
    fn next_strided(&mut self, z: Stride, len: u64) -> Option<u64> {
        if self.zone_bytes >= z.size {
            self.zone_bytes = 0;
            self.zone_start += z.range + z.skip;
            if self.zone_start >= self.size {
                self.zone_start = 0;
            }
            self.seq = self.zone_start;
        }
        if self.seq >= self.zone_start + z.range || self.seq + len > self.size {
            self.seq = self.zone_start;
        }
        if self.pass_done + len > self.size {
            return None;
        }
        let at = self.seq;
        self.seq += len;
        self.zone_bytes += len;
        self.pass_done += len;
        Some(at)
    }

    /// Passes over the file the random map has started after the first.
    pub fn passes(&self) -> u64 {
        self.pass
    }

    /// The random map has given every block of this pass (fio's
    /// `get_next_rand_offset` failing: the file is done for the loop).
    pub fn map_full(&self) -> bool {
        self.run_left == 0 && self.perm.as_ref().is_some_and(|p| self.drawn >= p.len())
    }

    /// Rewinds the sequential cursor; a full random map starts its next
    /// pass.
    pub fn rewind(&mut self) {
        self.seq = 0;
        self.pass_done = 0;
        self.zone_start = 0;
        self.zone_bytes = 0;
        if self.map_full()
            && let Some(perm) = &mut self.perm
        {
            self.drawn = 0;
            self.pass += 1;
            *perm = Permutation::new(perm.len(), self.key ^ self.pass);
        }
    }

    /// Next random offset for an IO in direction `d`; every `run` IOs a new
    /// random block, sequential in between.
    pub fn next_random(&mut self, rng: &mut Stream, d: Dir, len: u64, run: u64) -> u64 {
        if self.run_left > 0 && self.seq + len <= self.size {
            self.run_left -= 1;
            let at = self.seq;
            self.seq += len;
            return at;
        }
        let block = if let Some(skew) = &self.skew {
            skew.next_block(rng, d)
        } else if let Some(perm) = &mut self.perm {
            // The permutation knows the block count: no division per IO.
            let blocks = perm.len();
            if self.drawn >= blocks {
                self.drawn = 0;
                self.pass += 1;
                *perm = Permutation::new(blocks, self.key ^ self.pass);
            }
            let b = perm.get(self.drawn);
            self.drawn += 1;
            b
        } else {
            rng.below(self.blocks())
        };
        let at = (block * self.unit).min(self.size.saturating_sub(len));
        self.seq = at + len;
        self.run_left = run.saturating_sub(1);
        at
    }
}

/// The block size of one IO under `bssplit=` (fio's `get_next_buflen`):
/// `r` uniform in `[0, 2^32)`, the entries sorted by percent; the first
/// whose running percent `p` has `r / p <= (2^32 - 1) / 100` is taken,
/// else the last with a percent. Sizes are rounded down to a multiple of
/// the smallest, `min_bs`, as fio aligns them.
pub fn bssplit_pick(split: &[(u64, u32)], r: u64, min_bs: u64) -> u64 {
    const FRAND_MAX: u64 = (1 << 32) - 1;
    let mut len = min_bs;
    let mut perc = 0u64;
    for &(bs, p) in split {
        if p == 0 {
            continue;
        }
        len = bs;
        perc += u64::from(p);
        if r / perc <= FRAND_MAX / 100 {
            break;
        }
    }
    let min_bs = min_bs.max(1);
    (len - len % min_bs).max(min_bs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio 3.33's offsets for `rw=read:-8k bs=4k size=64k` on this machine
    /// (its `write_iolog`), in 4 KiB blocks: 0, then from the end
    /// backwards, the last block never read, 16 IOs a pass.
    #[test]
    fn backwards_io_follows_fios_offsets() {
        // The job's byte limit ends these passes: take the file's size.
        let pass = |g: &mut OffsetGen, add: i64| -> Vec<u64> {
            let n = g.size / 4096;
            (0..n)
                .map(|_| g.next_seq(4096, add).expect("holes never end a pass") / 4096)
                .collect()
        };
        let mut g = OffsetGen::new(64 << 10, 4096, 1, false);
        assert_eq!(
            pass(&mut g, -8192),
            [0, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]
        );
        // Holes forward: 4 KiB read, 4 KiB skipped, past the end from the
        // start again, as fio 3.33's `write_iolog` of `rw=read:12k bs=4k
        // size=1m` reads blocks 0, 4, ..., 252, 0, 4, ..., 256 reads.
        let mut g = OffsetGen::new(32 << 10, 4096, 1, false);
        let fwd: Vec<u64> = pass(&mut g, 4096).iter().map(|b| b * 4096).collect();
        assert_eq!(fwd, [0, 8192, 16_384, 24_576, 0, 8192, 16_384, 24_576]);
        let mut g = OffsetGen::new(1 << 20, 4096, 1, false);
        let blocks = pass(&mut g, 12_288);
        assert_eq!(blocks.len(), 256);
        assert_eq!(blocks[60..68], [240, 244, 248, 252, 0, 4, 8, 12]);
        assert_eq!(blocks[255], 252);
    }

    /// fio's `disk-zone-profile.fio` in small: 2 blocks of each zone,
    /// then 8 blocks skipped, from the start again past the end, until
    /// the pass has the file's size.
    #[test]
    fn strided_zones_read_a_zone_then_skip() {
        let mut g = OffsetGen::new(40 << 10, 4096, 1, false).with_stride(Some(Stride {
            size: 8192,
            range: 8192,
            skip: 32_768,
        }));
        let blocks: Vec<u64> = std::iter::from_fn(|| g.next_seq(4096, 0))
            .map(|o| o / 4096)
            .collect();
        // One zone fits before the end: read five times over.
        assert_eq!(blocks, [0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
        let mut g = OffsetGen::new(1 << 20, 4096, 1, false).with_stride(Some(Stride {
            size: 8192,
            range: 8192,
            skip: 8192,
        }));
        let blocks: Vec<u64> = std::iter::from_fn(|| g.next_seq(4096, 0))
            .map(|o| o / 4096)
            .collect();
        assert_eq!(blocks[..8], [0, 1, 4, 5, 8, 9, 12, 13]);
        assert_eq!(blocks[126..130], [252, 253, 0, 1]);
        assert_eq!(blocks.len(), 256);
    }

    #[test]
    fn bssplit_draws_each_size_its_share() {
        // Sorted by percent, as the parser leaves it.
        let split = [(4096, 10), (32_768, 40), (65_536, 50)];
        let mut n = [0u64; 3];
        let steps = 100_000u64;
        for i in 0..steps {
            let r = i * (1 << 32) / steps;
            match bssplit_pick(&split, r, 4096) {
                4096 => n[0] += 1,
                32_768 => n[1] += 1,
                65_536 => n[2] += 1,
                other => panic!("size {other}"),
            }
        }
        assert_eq!(n.map(|c| (c * 100 + steps / 2) / steps), [10, 40, 50]);
        // Shares short of 100: what is left goes to the last entry.
        let short = [(4096, 20), (8192, 30)];
        assert_eq!(bssplit_pick(&short, (1 << 32) - 1, 4096), 8192);
        assert_eq!(bssplit_pick(&short, 0, 4096), 4096);
        // Sizes are multiples of the smallest.
        assert_eq!(bssplit_pick(&[(6000, 100)], 0, 4096), 4096);
    }
    use crate::rng::Entity;

    #[test]
    fn random_map_visits_every_block_once_per_pass() {
        let mut rng = Stream::new(1, Entity::Job(0));
        let mut g = OffsetGen::new(64 * 4096, 4096, 5, true);
        let mut seen: Vec<u64> = (0..64)
            .map(|_| g.next_random(&mut rng, Dir::Read, 4096, 1))
            .collect();
        seen.sort_unstable();
        let want: Vec<u64> = (0..64).map(|b| b * 4096).collect();
        assert_eq!(seen, want);
        // The next pass starts over.
        assert!(g.next_random(&mut rng, Dir::Read, 4096, 1) < 64 * 4096);
    }

    #[test]
    fn random_runs_are_sequential_inside() {
        let mut rng = Stream::new(1, Entity::Job(0));
        let mut g = OffsetGen::new(1 << 20, 4096, 5, false);
        let a = g.next_random(&mut rng, Dir::Read, 4096, 4);
        let b = g.next_random(&mut rng, Dir::Read, 4096, 4);
        let c = g.next_random(&mut rng, Dir::Read, 4096, 4);
        assert_eq!((b, c), (a + 4096, a + 8192));
    }

    /// A pass with holes wraps at the end of the file and goes on; a
    /// rewind starts a new one; without holes a pass ends with the file.
    #[test]
    fn sequential_with_holes_wraps_and_goes_on() {
        let mut g = OffsetGen::new(16384, 4096, 0, false);
        let pass: Vec<Option<u64>> = (0..6).map(|_| g.next_seq(4096, 4096)).collect();
        let wraps = [
            Some(0),
            Some(8192),
            Some(0),
            Some(8192),
            Some(0),
            Some(8192),
        ];
        assert_eq!(pass, wraps);
        g.rewind();
        let plain: Vec<Option<u64>> = (0..5).map(|_| g.next_seq(4096, 0)).collect();
        assert_eq!(plain, [Some(0), Some(4096), Some(8192), Some(12288), None]);
    }

    #[test]
    fn the_random_map_is_full_once_it_gave_every_block() {
        let mut rng = Stream::new(3, Entity::Job(0));
        let mut g = OffsetGen::new(16384, 4096, 7, true);
        let mut seen: Vec<u64> = (0..4)
            .map(|_| {
                assert!(!g.map_full());
                g.next_random(&mut rng, Dir::Write, 4096, 1)
            })
            .collect();
        assert!(g.map_full());
        seen.sort_unstable();
        assert_eq!(seen, [0, 4096, 8192, 12288]);
        g.rewind();
        assert!(!g.map_full() && g.passes() == 1);
        // Without a map it is never full.
        let mut free = OffsetGen::new(16384, 4096, 7, false);
        for _ in 0..8 {
            free.next_random(&mut rng, Dir::Write, 4096, 1);
        }
        assert!(!free.map_full());
    }

    #[test]
    fn rwmix_keeps_the_requested_share() {
        let mut rng = Stream::new(9, Entity::Job(0));
        let mut mix = RwMix::default();
        let reads = (0..100_000)
            .filter(|_| mix.next(&mut rng, 70) == Dir::Read)
            .count();
        assert!((68_000..72_000).contains(&reads), "{reads}");
    }
}
