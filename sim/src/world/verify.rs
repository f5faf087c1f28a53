//! fio's verify on a job that writes (`workload::VerifyPlan`): once the
//! job's writes are done (its size, `number_ios` or last loop, not its
//! runtime: fio skips the phase for a job it terminated) and its IOs in
//! flight are in, its contexts read back every block it wrote, in the
//! order written, replayed from a copy of the job's pick state taken when
//! it started; with `verify_backlog=N`, each time N more blocks are
//! written the next N reads are of the oldest blocks not yet read back.
//! The reads are the job's reads in its statistics, as fio's are; the
//! data's contents are not simulated.

use super::World;
use super::job::{JobState, Phase, PlannedIo};
use super::pick::PickState;
use crate::block::Policy;
use crate::time::Ns;
use crate::workload::Dir;

impl<P: Policy> World<P> {
    /// Job `j` found its writes done (context `c` asking for its next
    /// IO): it reads back what it has not yet, or stops.
    pub(crate) fn writes_done(&mut self, now: Ns, c: u32, j: usize) {
        let job = &mut self.jobs[j];
        if job.plan.verify.is_some() && job.unverified > 0 && job.state == JobState::Running {
            job.verifying = true;
            self.verify_next(now, c, j);
        } else {
            self.job_stop(now, j as u32);
            self.ctx_finish(now, c);
        }
    }

    /// Context `c` of job `j` in its read-back phase: waits for the
    /// writes still in flight (fio's `do_io` ends with them in), then
    /// reads back the next block, or finishes when none is left.
    pub(crate) fn verify_next(&mut self, now: Ns, c: u32, j: usize) {
        let job = &mut self.jobs[j];
        if job.unverified == 0 {
            job.verifying = false;
            self.job_stop(now, j as u32);
            self.ctx_finish(now, c);
            return;
        }
        if !job.verify_started {
            if job.in_flight > 0 {
                job.verify_parked.push(c);
                self.ctxs[c as usize].phase = Phase::VerifyWait;
                return;
            }
            job.verify_started = true;
            let reads = job.plan.reads;
            if let Some(s) = job.stats.as_mut() {
                s.verify_began(now, reads);
            }
            for p in std::mem::take(&mut job.verify_parked) {
                if self.ctxs[p as usize].phase == Phase::VerifyWait {
                    self.ctx_timer(now, p, Phase::Sleep);
                }
            }
        }
        self.verify_read(now, c, j);
    }

    /// Whether job `j`'s next IO is a backlog read: N more blocks were
    /// written since the last batch, or a batch is under way.
    pub(crate) fn verify_backlog_due(&mut self, j: usize) -> bool {
        let job = &mut self.jobs[j];
        let Some(v) = job.plan.verify.filter(|v| v.backlog > 0) else {
            return false;
        };
        if job.verify_batch == 0 && job.unverified >= v.backlog {
            job.verify_batch = v.backlog;
        }
        job.verify_batch > 0
    }

    /// Context `c` reads back job `j`'s oldest block not yet read back.
    pub(crate) fn verify_read(&mut self, now: Ns, c: u32, j: usize) {
        let job = &mut self.jobs[j];
        job.verify_batch = job.verify_batch.saturating_sub(1);
        let Some(io) = replay_write(job) else {
            // Nothing left to replay (cannot happen while writes are
            // counted unverified): go on as if all were read back.
            job.unverified = 0;
            job.verify_batch = 0;
            self.ctx_next(now, c);
            return;
        };
        job.unverified -= 1;
        let zoned = job.plan.zbd.is_some();
        let mut read = PlannedIo {
            dir: Dir::Read,
            ..io
        };
        if zoned {
            // On a zoned device the write went to a write pointer, not to
            // the offset replayed.
            read = self.zbd_verify_place(j, read);
        }
        self.issue_io(now, c, j, read);
        // A read-back is not part of the job's size: fio's `do_io` adds
        // the size again to what it issues when it verifies as it goes.
        let job = &mut self.jobs[j];
        job.bytes_issued = job.bytes_issued.saturating_sub(io.len);
    }
}

/// The job's next write again, from its read-back copy of its pick state
/// (taken when the job started); the draws between are picked and passed.
fn replay_write(job: &mut super::job::Job) -> Option<PlannedIo> {
    let mut cursor = job.verify_cursor.take()?;
    cursor.swap(job);
    let io = loop {
        if job.exhausted {
            break None;
        }
        let dir = job.pick_dir();
        match job.pick_rest(dir) {
            Some(p) if p.io.dir == Dir::Write => break Some(p.io),
            Some(_) => continue,
            None => break None,
        }
    };
    cursor.swap(job);
    job.verify_cursor = Some(cursor);
    io
}

/// The copy of a verifying job's pick state its read-back replays.
pub(crate) fn cursor_of(job: &super::job::Job) -> Option<Box<PickState>> {
    job.plan
        .verify
        .is_some()
        .then(|| Box::new(PickState::of(job)))
}
