//! The reservation-ticket protocol (kernel: `__reserve_bytes`,
//! `btrfs_try_granting_tickets`, `steal_from_global_rsv`,
//! `maybe_fail_all_tickets`, `wait_reserve_ticket`).
//!
//! Two FIFO queues: priority tickets (whose owners flush for themselves)
//! and normal tickets (whose owners sleep while the reclaim worker
//! flushes). Grants walk each queue from the front and stop at the first
//! ticket that does not fit: strict FIFO with head-of-line blocking, no
//! partial filling.

use alloc::collections::VecDeque;

use crate::FlushPolicy;
use crate::consts::{STEAL_FLOOR_PCT, pct};
use crate::{
    Decision, Error, FlushKind, FlushModel, HandleId, Preempt, TicketError, TicketId, TraceRecord,
};

/// Who waits on a ticket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    /// A caller of `on_reserve`, with its token.
    Caller(u64),
    /// A handle's start reservation.
    Handle(HandleId),
}

/// A waiting reservation (kernel: `struct reserve_ticket`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ticket {
    pub id: TicketId,
    pub bytes: u64,
    pub kind: FlushKind,
    pub steal: bool,
    pub owner: Owner,
    pub enqueued_ns: u64,
    /// Priority tickets: next state of the owner's own flush list.
    pub cursor: usize,
    /// Priority tickets: the owner's flush job in flight.
    pub job: Option<crate::JobId>,
    /// Priority tickets: the commit the owner waits for.
    pub wait_commit: Option<u64>,
}

/// The two queues and their counters.
#[derive(Clone, Debug)]
pub(crate) struct Tickets {
    pub normal: VecDeque<Ticket>,
    pub prio: VecDeque<Ticket>,
    pub capacity: usize,
    /// Bytes of all waiting tickets.
    pub reclaim_size: u64,
    /// Grants so far: the flusher's progress signal.
    pub tickets_id: u64,
    pub next_id: u64,
    /// `space_info->flush`: the reclaim worker owns the normal queue.
    pub flush_active: bool,
}

impl Tickets {
    pub(crate) fn with_capacity(capacity: usize) -> Tickets {
        Tickets {
            normal: VecDeque::with_capacity(capacity),
            prio: VecDeque::with_capacity(capacity),
            capacity,
            reclaim_size: 0,
            tickets_id: 0,
            next_id: 1,
            flush_active: false,
        }
    }
}

/// The immediate answer to a reservation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reserve {
    /// The bytes are held now.
    Granted,
    /// The reserver waits on this ticket; a [`Decision::Grant`] or
    /// [`Decision::Fail`] will follow (or it can be interrupted).
    Queued(TicketId),
    /// Refused at once (`NoFlush`, `FlushEmergency`, or an aborted
    /// filesystem).
    Failed(TicketError),
}

/// The answer to an interruption.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interrupted {
    /// The ticket was still waiting and is gone: the owner holds nothing.
    Removed,
    /// The ticket had already been granted or failed; its decision stands
    /// (a grant wins the race with the signal).
    AlreadyResolved,
}

impl<P: FlushPolicy> FlushModel<P> {
    /// `reserve(bytes, kind)`: admit, or queue a ticket.
    pub(crate) fn reserve(
        &mut self,
        bytes: u64,
        kind: FlushKind,
        owner: Owner,
    ) -> Result<Reserve, Error> {
        if self.aborted {
            return Ok(Reserve::Failed(TicketError::Aborted));
        }
        let t = &self.tickets;
        let pending = if kind.queues_behind_normal() {
            !t.normal.is_empty() || !t.prio.is_empty()
        } else {
            !t.prio.is_empty()
        };
        // Mutant F2 (test-only; reverts "btrfs: do not allow reservations
        // if we have pending tickets", Josef Bacik, Aug 2019, 5.4): a
        // newcomer that fits takes space returned for a waiting ticket.
        #[cfg(iolab_mutant = "f2")]
        let pending = {
            let _ = pending;
            false
        };
        if !pending && self.space.fits(bytes, kind) {
            self.space.may_use += bytes;
            self.maybe_queue_preempt();
            return Ok(Reserve::Granted);
        }
        // `may_use` is not part of the emergency test, so repeated
        // emergency grants could grow it without bound; the ceiling (far
        // above any real filesystem) keeps the counters from overflowing.
        if kind == FlushKind::FlushEmergency
            && self.space.used_no_may_use().saturating_add(bytes) <= self.space.total
            && self
                .space
                .may_use
                .checked_add(bytes)
                .is_some_and(|m| m <= crate::MAX_BYTES << 2)
        {
            self.space.may_use += bytes;
            return Ok(Reserve::Granted);
        }
        if !kind.can_ticket() {
            return Ok(Reserve::Failed(TicketError::Enospc));
        }
        let normal = kind.is_normal();
        let queue_len = if normal { t.normal.len() } else { t.prio.len() };
        if queue_len >= t.capacity {
            return Err(Error::TicketQueueFull);
        }
        let id = TicketId(self.tickets.next_id);
        self.tickets.next_id += 1;
        let ticket = Ticket {
            id,
            bytes,
            kind,
            steal: kind.can_steal(),
            owner,
            enqueued_ns: self.now,
            cursor: 0,
            job: None,
            wait_commit: None,
        };
        self.tickets.reclaim_size += bytes;
        if normal {
            self.tickets.normal.push_back(ticket);
            if !self.tickets.flush_active {
                if self.policy.preempt == Preempt::Clamped2021
                    && self.ordered_bytes < self.delalloc_bytes
                {
                    self.bump_clamp();
                }
                self.tickets.flush_active = true;
                self.queue_reclaim(true);
            }
        } else {
            self.tickets.prio.push_back(ticket);
        }
        let (now, may_use) = (self.now, self.space.may_use);
        self.trace(TraceRecord::TicketQueued {
            now,
            ticket: id,
            bytes,
            prio: !normal,
            may_use,
        });
        Ok(Reserve::Queued(id))
    }

    /// Grant every ticket that fits, priority queue first (with the
    /// `NoFlush` overcommit share), then the normal queue (`FlushAll`
    /// share); each queue stops at its first misfit.
    pub(crate) fn try_grant(&mut self) {
        if self.aborted {
            return;
        }
        for prio in [true, false] {
            let kind = if prio {
                FlushKind::NoFlush
            } else {
                FlushKind::FlushAll
            };
            loop {
                let q = if prio {
                    &self.tickets.prio
                } else {
                    &self.tickets.normal
                };
                let Some(front) = q.front() else { break };
                if !self.space.fits(front.bytes, kind) {
                    break;
                }
                let t = if prio {
                    self.tickets.prio.pop_front()
                } else {
                    self.tickets.normal.pop_front()
                };
                let Some(t) = t else { break };
                debug_assert!(self.tickets.reclaim_size >= t.bytes);
                self.space.may_use += t.bytes;
                self.tickets.reclaim_size -= t.bytes;
                self.tickets.tickets_id += 1;
                self.granted(t, false);
            }
        }
    }

    /// A ticket left its queue granted: tell its owner.
    fn granted(&mut self, t: Ticket, stolen: bool) {
        let waited = self.now - t.enqueued_ns;
        let now = self.now;
        self.trace(TraceRecord::TicketGranted {
            now,
            ticket: t.id,
            bytes: t.bytes,
            waited_ns: waited,
            stolen,
        });
        match t.owner {
            Owner::Caller(owner) => {
                self.grants += t.bytes;
                self.emit(Decision::Grant {
                    ticket: t.id,
                    owner,
                    bytes: t.bytes,
                    waited_ns: waited,
                });
            }
            Owner::Handle(h) => self.handle_reserved(h, t.bytes),
        }
    }

    /// A ticket left its queue failed: tell its owner.
    pub(crate) fn failed(&mut self, t: Ticket, error: TicketError) {
        let waited = self.now - t.enqueued_ns;
        let now = self.now;
        self.trace(TraceRecord::TicketFailed {
            now,
            ticket: t.id,
            bytes: t.bytes,
            error,
            waited_ns: waited,
        });
        match t.owner {
            Owner::Caller(owner) => self.emit(Decision::Fail {
                ticket: t.id,
                owner,
                error,
                waited_ns: waited,
            }),
            Owner::Handle(h) => self.handle_reserve_failed(h, error),
        }
    }

    /// Grant `t` from the global reserve if it may steal and the reserve
    /// keeps its 10 % floor (kernel: `steal_from_global_rsv`). The bytes
    /// change holder; `may_use` is unchanged.
    pub(crate) fn steal(&mut self, t: &Ticket) -> bool {
        if !t.steal || self.global.reserved < pct(self.global.size, STEAL_FLOOR_PCT) + t.bytes {
            return false;
        }
        self.global.reserved -= t.bytes;
        self.global.set_full();
        self.tickets.tickets_id += 1;
        true
    }

    /// Remove a ticket from whichever queue holds it.
    pub(crate) fn take_ticket(&mut self, id: TicketId) -> Option<Ticket> {
        for q in [&mut self.tickets.normal, &mut self.tickets.prio] {
            if let Some(pos) = q.iter().position(|t| t.id == id) {
                let t = q.remove(pos)?;
                self.tickets.reclaim_size -= t.bytes;
                return Some(t);
            }
        }
        None
    }

    /// The reclaim worker gave up (kernel: `maybe_fail_all_tickets`): fail
    /// normal tickets from the front until one grant happens; a stealing
    /// ticket takes from the global reserve instead. Returns whether any
    /// grant happened.
    pub(crate) fn fail_front_tickets(&mut self) -> bool {
        let start = self.tickets.tickets_id;
        while self.tickets.tickets_id == start {
            let Some(t) = self.tickets.normal.pop_front() else {
                break;
            };
            self.tickets.reclaim_size -= t.bytes;
            if !self.aborted && self.steal(&t) {
                self.granted_stolen(t);
                return true;
            }
            let error = if self.aborted {
                TicketError::Aborted
            } else {
                TicketError::Enospc
            };
            self.failed(t, error);
            if !self.aborted {
                self.try_grant();
            }
        }
        self.tickets.tickets_id != start
    }

    /// Finish a successful steal: the owner holds the bytes.
    pub(crate) fn granted_stolen(&mut self, t: Ticket) {
        // The bytes moved out of the global reserve but stay in may_use; a
        // caller now holds them.
        self.granted(t, true);
    }

    /// Remove a waiting ticket on the owner's interruption with `EINTR`
    /// (kernel: `wait_reserve_ticket`). No re-grant pass follows, as in
    /// the kernel.
    pub(crate) fn interrupt(&mut self, id: TicketId) -> Result<Interrupted, Error> {
        if id.0 == 0 || id.0 >= self.tickets.next_id {
            return Err(Error::UnknownTicket(id));
        }
        let Some(t) = self.take_ticket(id) else {
            return Ok(Interrupted::AlreadyResolved);
        };
        self.failed(t, TicketError::Eintr);
        Ok(Interrupted::Removed)
    }

    /// Filesystem abort: every waiting ticket fails with the abort error
    /// and nothing is granted afterwards.
    pub(crate) fn abort_tickets(&mut self) {
        self.aborted = true;
        while let Some(t) = self.tickets.prio.pop_front() {
            self.tickets.reclaim_size -= t.bytes;
            self.failed(t, TicketError::Aborted);
        }
        while let Some(t) = self.tickets.normal.pop_front() {
            self.tickets.reclaim_size -= t.bytes;
            self.failed(t, TicketError::Aborted);
        }
        self.tickets.flush_active = false;
    }
}
