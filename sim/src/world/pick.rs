//! How a job picks its next data IO: its direction (the `rwmix` draw),
//! size (`bs`, `bsrange`, `bssplit`), file (`file_service_type`) and
//! offset (the file's offset stream: sequential passes, the random map),
//! all drawn from the job's own stream. [`PickState`] is everything those
//! draws read and move, so a copy taken when the job starts picks the
//! same IOs again: verify's read-back replays the job's writes with it.

use super::job::{Job, PlannedIo};
use crate::rng::Stream;
use crate::workload::{Dir, FileService, OffsetGen, RwMix};

/// An IO picked, and the files whose pass over them started again with
/// it (the cache of a job with `invalidate=1` is dropped for them).
pub(crate) struct Picked {
    pub io: PlannedIo,
    /// The file whose pass wrapped (a `time_based` wrap, a random map
    /// done), if one did.
    pub wrapped: Option<usize>,
    /// A new loop began over all the job's files.
    pub all_wrapped: bool,
}

/// The part of a job that its picks read and move.
pub(crate) struct PickState {
    rng: Stream,
    mix: RwMix,
    gens: Vec<OffsetGen>,
    cur_file: usize,
    file_left: u32,
    eof: Vec<bool>,
    files_at_eof: usize,
    loops_done: u32,
    exhausted: bool,
    picked_bytes: [u64; 3],
}

impl PickState {
    /// A copy of `job`'s, to pick its IOs again from here.
    pub(crate) fn of(job: &Job) -> Self {
        Self {
            rng: job.rng.clone(),
            mix: job.mix.clone(),
            gens: job.gens.clone(),
            cur_file: job.cur_file,
            file_left: job.file_left,
            eof: job.eof.clone(),
            files_at_eof: job.files_at_eof,
            loops_done: job.loops_done,
            exhausted: job.exhausted,
            picked_bytes: job.picked_bytes,
        }
    }

    /// Exchanges this state with `job`'s.
    pub(crate) fn swap(&mut self, job: &mut Job) {
        std::mem::swap(&mut self.rng, &mut job.rng);
        std::mem::swap(&mut self.mix, &mut job.mix);
        std::mem::swap(&mut self.gens, &mut job.gens);
        std::mem::swap(&mut self.cur_file, &mut job.cur_file);
        std::mem::swap(&mut self.file_left, &mut job.file_left);
        std::mem::swap(&mut self.eof, &mut job.eof);
        std::mem::swap(&mut self.files_at_eof, &mut job.files_at_eof);
        std::mem::swap(&mut self.loops_done, &mut job.loops_done);
        std::mem::swap(&mut self.exhausted, &mut job.exhausted);
        std::mem::swap(&mut self.picked_bytes, &mut job.picked_bytes);
    }
}

impl Job {
    /// The next IO's direction: the mix's draw, or the job's one
    /// direction.
    pub(crate) fn pick_dir(&mut self) -> Dir {
        let plan = &self.plan;
        if plan.mixed() {
            self.mix.next(&mut self.rng, plan.rwmixread)
        } else if plan.reads {
            Dir::Read
        } else if plan.writes {
            Dir::Write
        } else {
            Dir::Trim
        }
    }

    /// After its loops, whether the job goes over its files again: with
    /// `io_size=`, while what it has done is short of it by at least its
    /// largest block (fio's `keep_running`: fio 3.33 does 10 MiB with
    /// `size=4m io_size=10m`, 12 MiB with `loops=2` too). What it has done
    /// counts a verifying job's read-backs, as fio's does: each pass's
    /// writes are read back by its end (fio 3.33 writes 8 MiB of
    /// `size=4m io_size=10m verify=crc32c` and reads them back).
    fn another_pass(&self) -> bool {
        let plan = &self.plan;
        let Some(want) = plan.more_passes_below else {
            return false;
        };
        let largest = (0..3)
            .map(|d| {
                let split = plan.bssplit[d].iter().map(|&(b, _)| b).max().unwrap_or(0);
                plan.bs[d].1.max(split)
            })
            .max()
            .unwrap_or(0);
        let [read, write, trim] = self.picked_bytes;
        let read_back = if plan.verify.is_some() { write } else { 0 };
        let done = read + write + trim + read_back;
        want.saturating_sub(done) >= largest.max(1)
    }

    /// The next IO in direction `dir`: its size, file and offset; `None`
    /// when the job's last loop has reached the end of every file (a
    /// sequential pass its end, a random map every block; the job is
    /// then exhausted).
    pub(crate) fn pick_rest(&mut self, dir: Dir) -> Option<Picked> {
        let d = dir as usize;
        let plan = &self.plan;
        let (lo, hi) = plan.bs[d];
        let len = if !plan.bssplit[d].is_empty() {
            crate::workload::bssplit_pick(&plan.bssplit[d], self.rng.below(1 << 32), lo)
        } else if hi > lo {
            lo + self.rng.below((hi - lo) / lo.max(1) + 1) * lo
        } else {
            lo
        };
        // File choice.
        let nfiles = self.file_ids.len();
        if self.file_left == 0 {
            self.file_left = plan.file_service.1.max(1);
            self.cur_file = match plan.file_service.0 {
                FileService::RoundRobin => {
                    // No division: this runs for every IO.
                    let next = self.cur_file + 1;
                    if next == nfiles { 0 } else { next }
                }
                FileService::Random => self.rng.below(nfiles as u64) as usize,
                FileService::Sequential => self.cur_file,
            };
        }
        self.file_left -= 1;
        let fi = self.cur_file;
        let og = &mut self.gens[fi];
        let len = len.min(og.size.max(1));
        // A file whose pass over it starts again (fio: a time_based wrap,
        // io_u.c loop_cache_invalidate; a new loop reopens the file,
        // ioengines.c td_io_open_file) has its cache dropped again.
        let mut wrapped: Option<usize> = None;
        let mut all_wrapped = false;
        // At the end of a file (a sequential pass reaching it, a random
        // map that gave every block) go on with a file not yet finished; a
        // loop ends when every file has reached its end.
        let mut fi = fi;
        let (fi, len, offset) = loop {
            let g = &mut self.gens[fi];
            let len = len.min(g.size.max(1));
            if plan.random {
                // A time-based job's map starts again as it fills.
                if plan.time_based || !g.map_full() {
                    let pass = g.passes();
                    let at = g.next_random(&mut self.rng, dir, len, plan.rw_suffix.max(1));
                    if g.passes() != pass {
                        wrapped = Some(fi);
                    }
                    break (fi, len, at);
                }
            } else if let Some(o) = g.next_seq(len, plan.seq_add) {
                break (fi, len, o);
            } else if plan.time_based {
                g.rewind();
                wrapped = Some(fi);
                continue;
            }
            if !self.eof[fi] {
                self.eof[fi] = true;
                self.files_at_eof += 1;
            }
            if self.files_at_eof == nfiles {
                self.loops_done += 1;
                if self.loops_done >= plan.loops && !self.another_pass() {
                    self.exhausted = true;
                    return None;
                }
                for g in &mut self.gens {
                    g.rewind();
                }
                all_wrapped = true;
                self.eof.iter_mut().for_each(|e| *e = false);
                self.files_at_eof = 0;
                continue;
            }
            fi = (1..nfiles)
                .map(|k| (fi + k) % nfiles)
                .find(|&k| !self.eof[k])
                .unwrap_or(fi);
            self.cur_file = fi;
        };
        self.picked_bytes[d] = self.picked_bytes[d].saturating_add(len);
        let offset = offset + self.gens[fi].base;
        Some(Picked {
            io: PlannedIo {
                dir,
                fi,
                len,
                offset,
            },
            wrapped,
            all_wrapped,
        })
    }
}
