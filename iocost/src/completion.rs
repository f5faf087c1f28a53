//! Completion: the bio's cost returns as `done_vtime`
//! (`ioc_rqos_done_bio`), and each read or write request is judged against
//! its latency target net of its transfer time (`ioc_rqos_done`).

use crate::CostModel;
use crate::consts::VTIME_PER_NSEC;
use crate::group::GroupId;
use crate::ioc::{Done, IoCost, Variant};
use crate::model::Op;

impl<M: CostModel> IoCost<M> {
    /// A request completed at `now` ns.
    ///
    /// Its cost moves the group's `done_vtime` (whatever the enable state,
    /// like the kernel); when enabled, a read or write is counted as having
    /// met its target if `on_q ≤ size_ns` or `on_q − size_ns ≤ lat`, where
    /// `on_q = now − alloc_ns`, and `start_ns − alloc_ns` is added to the
    /// period's request-wait time. This is a threshold count per period,
    /// not a percentile estimate.
    pub fn on_done(&mut self, now_ns: u64, done: &Done) {
        let now_ns = self.note_time(now_ns);
        self.return_cost(done.group, done.cost);
        if !self.enabled {
            return;
        }
        let (rw, lat_us) = match done.op {
            Op::Read => (0, self.qos.rlat),
            Op::Write => (1, self.qos.wlat),
            Op::Other => return,
        };
        let on_q_ns = now_ns.saturating_sub(done.alloc_ns);
        let rq_wait_ns = done.start_ns.saturating_sub(done.alloc_ns);
        let size_nsec = self.lcoefs.size_cost(done.op, done.bytes >> 9) / VTIME_PER_NSEC;
        let lat_ns = u64::from(lat_us) * 1000;
        let met = match self.variant {
            Variant::Modern => on_q_ns <= size_nsec || on_q_ns - size_nsec <= lat_ns,
            // Before "account for IO size when testing latencies".
            Variant::V5_4 => on_q_ns <= lat_ns,
        };
        if met {
            self.nr_met[rw] = self.nr_met[rw].saturating_add(1);
        } else {
            self.nr_missed[rw] = self.nr_missed[rw].saturating_add(1);
        }
        self.rq_wait_ns = self.rq_wait_ns.saturating_add(rq_wait_ns);
    }

    /// A bio admitted (or released) with `cost` that was never issued: a
    /// userspace face's cancelled permit. Its cost moves `done_vtime` as a
    /// completion's would, without a latency sample or a request-wait
    /// figure. The kernel has no counterpart (an issued bio always
    /// completes); this is the face's way of saying "it never ran".
    pub fn on_unused(&mut self, now_ns: u64, group: GroupId, cost: u64) {
        let _ = self.note_time(now_ns);
        self.return_cost(group, cost);
    }

    /// `done_vtime += cost` for a known group. A cost larger than what is
    /// in flight can only come from a confused caller; it is capped so
    /// that done_vtime never passes vtime (for valid input the cap never
    /// binds).
    fn return_cost(&mut self, group: GroupId, cost: u64) {
        if let Some(i) = self.gidx(group).filter(|_| cost != 0) {
            let g = &mut self.groups[i];
            let inflight = g.vtime.wrapping_sub(g.done_vtime);
            g.done_vtime = g.done_vtime.wrapping_add(cost.min(inflight));
        }
    }
}
