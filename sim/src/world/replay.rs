//! A job that replays an I/O log (fio's `read_iolog`): the counterpart of
//! fio's `read_iolog_get` and `iolog_delay`. Each context, when free,
//! claims the log's next action in order; an action is issued its delay
//! after the one claimed before it (scaled by `replay_time_scale`, none
//! with `replay_no_stall`), so issue times follow the log as fio's single
//! submitting thread follows it, however many IOs are in flight.

use super::World;
use super::job::{Phase, PlannedIo};
use crate::block::Policy;
use crate::fio::iolog::{IoLog, LogAction};
use crate::time::{MS, Ns, US};
use crate::workload::Dir;

impl<P: Policy> World<P> {
    /// Context `c` of replaying job `j` takes its next action of `log`.
    pub(crate) fn replay_next(&mut self, now: Ns, c: u32, j: usize, log: &IoLog) {
        loop {
            let k = match self.ctxs[c as usize].replayed.take() {
                // Woken at the time of the action it claimed.
                Some(k) => k as usize,
                None => {
                    let job = &mut self.jobs[j];
                    if job.exhausted {
                        // Another context took the log's last action.
                        self.ctx_finish(now, c);
                        return;
                    }
                    if job.replay_at >= log.entries.len() {
                        // The log's end: fio replays a log once (its
                        // read_iolog_get marks the job done), loops or not.
                        job.exhausted = true;
                        self.job_stop(now, j as u32);
                        self.ctx_finish(now, c);
                        return;
                    }
                    let k = job.replay_at;
                    job.replay_at += 1;
                    let e = log.entries[k];
                    let due = if job.plan.replay_no_stall {
                        now
                    } else if e.action == LogAction::WaitUntilMs {
                        // From the run's start, as fio's mtime_since_genesis.
                        e.offset.saturating_mul(MS)
                    } else {
                        let wait = u128::from(e.delay_us) * u128::from(US) * 100
                            / u128::from(job.plan.replay_time_scale.max(1));
                        job.replay_clock
                            .saturating_add(wait.min(u128::from(u64::MAX)) as Ns)
                    };
                    let at = due.max(now);
                    job.replay_clock = at;
                    if at > now {
                        self.ctxs[c as usize].replayed = Some(k as u32);
                        self.ctx_timer(at, c, Phase::Sleep);
                        return;
                    }
                    k
                }
            };
            let e = log.entries[k];
            let fi = e.file as usize;
            let dir = match e.action {
                LogAction::OpenClose | LogAction::WaitUntilMs => continue,
                LogAction::Sync | LogAction::Datasync => {
                    let f = self.jobs[j].file_ids[fi];
                    self.start_sync(now, c, f, e.action == LogAction::Datasync);
                    return;
                }
                LogAction::Read => Dir::Read,
                LogAction::Write => Dir::Write,
                LogAction::Trim => Dir::Trim,
            };
            let io = PlannedIo {
                dir,
                fi,
                len: e.len,
                offset: e.offset,
            };
            self.issue_io(now, c, j, io);
            return;
        }
    }
}
