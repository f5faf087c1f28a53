//! fio's flow control (`flow`, `flow_id`, `flow_sleep`), as fio 3.33's
//! `flow.c` keeps it: the jobs of one flow count the IOs they issue, each
//! its own and all together, and a job whose count is a larger part of
//! the flow's than its weight is of the flow's weights does not issue
//! until the others catch up (or, with `flow_sleep`, sleeps and looks
//! again). A job joins its flow when it starts and leaves it, its IOs and
//! weight with it, when it ends. The weights add up in 32 bits, as fio's
//! `unsigned int` total does: a negative `flow=` (older fio's counter
//! scheme) wraps, and a flow whose total wraps to 0 holds no job back
//! (fio's share of weight is then an infinite ratio).

use super::World;
use super::job::{JobState, Phase};
use crate::block::Policy;
use crate::time::Ns;
use crate::workload::Dir;

/// One `flow_id`: the IOs its running jobs issued (plus one, as fio
/// starts it), their weights, and the contexts held back.
#[derive(Debug)]
pub(crate) struct FlowState {
    pub id: u32,
    pub issued: u64,
    /// The running jobs' weights, summed modulo 2^32 (fio's `unsigned
    /// int total_weight`).
    pub weight: u32,
    /// Contexts waiting for the flow to move (no `flow_sleep`).
    pub held: Vec<u32>,
    /// Scratch for the contexts a wake-up lets go (capacity kept).
    pub waking: Vec<u32>,
}

impl<P: Policy> World<P> {
    /// The flows the run's jobs take part in, each with room for all
    /// their contexts, so a held-back IO allocates nothing.
    pub(crate) fn build_flows(&mut self) {
        for j in &self.jobs {
            let f = j.plan.flow;
            if f.weight == 0 {
                continue;
            }
            let i = match self.flows.iter().position(|s| s.id == f.id) {
                Some(i) => i,
                None => {
                    self.flows.push(FlowState {
                        id: f.id,
                        issued: 1,
                        weight: 0,
                        held: Vec::new(),
                        waking: Vec::new(),
                    });
                    self.flows.len() - 1
                }
            };
            self.flows[i].held.reserve(j.nctx as usize);
            self.flows[i].waking.reserve(j.nctx as usize);
        }
    }

    fn flow_of(&self, j: usize) -> Option<usize> {
        let f = self.jobs[j].plan.flow;
        if f.weight == 0 {
            return None;
        }
        self.flows.iter().position(|s| s.id == f.id)
    }

    /// Job `j` starts: its weight joins its flow.
    pub(crate) fn flow_job_started(&mut self, j: usize) {
        if let Some(i) = self.flow_of(j) {
            let w = self.jobs[j].plan.flow.weight;
            self.flows[i].weight = self.flows[i].weight.wrapping_add(w);
            self.jobs[j].flow_issued = 0;
        }
    }

    /// Whether job `j`'s next IO (in direction `dir`) must wait for its
    /// flow; if not, the IO counts in the flow. A context held back keeps
    /// `dir` planned, so its rate pacing is not drawn again.
    pub(crate) fn flow_holds(&mut self, now: Ns, c: u32, j: usize, dir: Dir) -> bool {
        let Some(i) = self.flow_of(j) else {
            return false;
        };
        if self.flow_waits(i, j) {
            self.ctxs[c as usize].planned = Some(dir);
            let sleep = self.jobs[j].plan.flow.sleep_ns;
            if sleep > 0 {
                self.ctx_timer(now + sleep, c, Phase::Sleep);
            } else {
                self.ctxs[c as usize].phase = Phase::FlowWait;
                self.flows[i].held.push(c);
            }
            return true;
        }
        self.flows[i].issued += 1;
        self.jobs[j].flow_issued += 1;
        self.flow_wake(now, i);
        false
    }

    /// Whether running job `j` is ahead of its share of flow `i` (fio:
    /// its IOs over the flow's above its weight over the flow's weights),
    /// so its next IO waits; a job that is stopping never does.
    fn flow_waits(&self, i: usize, j: usize) -> bool {
        let job = &self.jobs[j];
        let flow = &self.flows[i];
        job.state == JobState::Running
            && u128::from(job.flow_issued) * u128::from(flow.weight)
                > u128::from(job.plan.flow.weight) * u128::from(flow.issued)
    }

    /// The contexts held back by flow `i` whose jobs are no longer ahead
    /// (or no longer running) go on, at once, in the order they were
    /// held; the others stay held.
    fn flow_wake(&mut self, now: Ns, i: usize) {
        let mut held = std::mem::take(&mut self.flows[i].held);
        let mut waking = std::mem::take(&mut self.flows[i].waking);
        held.retain(|&c| {
            let ctx = &self.ctxs[c as usize];
            if ctx.phase != Phase::FlowWait {
                return false;
            }
            let j = ctx.job as usize;
            let stays = self.flow_waits(i, j);
            if !stays {
                waking.push(c);
            }
            stays
        });
        for &c in &waking {
            self.ctx_timer(now, c, Phase::Sleep);
        }
        waking.clear();
        // Keep the capacities for the next time.
        self.flows[i].held = held;
        self.flows[i].waking = waking;
    }

    /// Job `j` has ended: its IOs and weight leave its flow, and the
    /// contexts the flow holds back look again.
    pub(crate) fn flow_job_ended(&mut self, now: Ns, j: usize) {
        let Some(i) = self.flow_of(j) else {
            return;
        };
        let job = &self.jobs[j];
        let flow = &mut self.flows[i];
        flow.issued -= job.flow_issued.min(flow.issued - 1);
        flow.weight = flow.weight.wrapping_sub(job.plan.flow.weight);
        self.flow_wake(now, i);
    }
}
