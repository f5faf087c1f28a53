//! Priority flushing (kernel: `priority_reclaim_metadata_space`):
//! the owner of a priority ticket walks its own short state list, and at
//! its end steals from the global reserve or fails, then lets smaller
//! tickets behind it try again.

use crate::FlushPolicy;
use crate::state::{EVICT_STATES, FREE_SPACE_INODE_STATES, PRIORITY_STATES};
use crate::{Actor, FlushKind, FlushModel, FlushState, TicketError, TicketId};

/// The list of a priority kind.
pub(crate) const fn priority_states(kind: FlushKind) -> &'static [FlushState] {
    match kind {
        FlushKind::FlushEvict => EVICT_STATES,
        FlushKind::FlushFreeSpaceInode => FREE_SPACE_INODE_STATES,
        _ => PRIORITY_STATES,
    }
}

impl<P: FlushPolicy> FlushModel<P> {
    /// Move every idle priority owner one state on.
    pub(crate) fn advance_priority(&mut self) -> bool {
        let mut progress = false;
        let mut i = 0;
        while i < self.tickets.prio.len() {
            let t = self.tickets.prio[i];
            if t.job.is_some() || !self.commit_waited(t.wait_commit) {
                i += 1;
                continue;
            }
            progress = true;
            let list = priority_states(t.kind);
            if t.cursor < list.len() {
                let to_reclaim = self.calc_reclaim();
                self.tickets.prio[i].cursor += 1;
                self.tickets.prio[i].wait_commit = None;
                let (job, wait) = self.do_flush(Actor::Priority(t.id), list[t.cursor], to_reclaim);
                // The flush may have granted this very ticket (or others
                // before it): find it again.
                if let Some(tk) = self.tickets.prio.iter_mut().find(|x| x.id == t.id) {
                    tk.job = job;
                    tk.wait_commit = wait;
                }
                i = 0;
                continue;
            }
            self.priority_exhausted(t.id);
            i = 0;
        }
        progress
    }

    /// The list ran out: steal or fail, then re-grant.
    fn priority_exhausted(&mut self, id: TicketId) {
        let Some(t) = self.take_ticket(id) else {
            return;
        };
        if !self.aborted && self.steal(&t) {
            self.granted_stolen(t);
        } else {
            self.failed(t, TicketError::Enospc);
        }
        self.try_grant();
    }
}
