//! Transaction handles (kernel: `start_transaction`, `join_transaction`,
//! `btrfs_end_transaction`): the fixed table, the start path with its
//! reservation (`U × items`, doubled while the delayed-ref
//! reserve is short, or a one-head refill for `items == 0`), joining the
//! running transaction, and queueing refs.

use crate::FlushPolicy;
use crate::consts::MIN_CATCHUP_BATCH;
use crate::ticket::Owner;
use crate::txn::{Txn, TxnState};
use crate::{
    Decision, Error, FlushKind, FlushModel, HandleId, HandleKind, RefBatch, Reserve, RsvKind,
    TicketError, TicketId, TraceRecord,
};

/// Where a handle is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HState {
    /// Waiting on its start reservation.
    Reserving(TicketId),
    /// Reserved; waiting to join the transaction.
    WaitTxn,
    /// Joined: may add refs and end.
    Open,
    /// Ended; waits for the commit of this transaction (catch-up throttle).
    EndWaitCommit(u64),
    /// Ended; waits for its catch-up batch (catch-up legacy, level 1).
    EndWaitRefs,
}

/// One handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Handle {
    pub kind: HandleKind,
    pub state: HState,
    /// Part of the start grant that goes to the trans reserve.
    pub need: u64,
    /// `trans->bytes_reserved`.
    pub bytes_reserved: u64,
    /// Reserved bytes COWed by the handle's own updates.
    pub meta_used: u64,
    /// `trans->delayed_ref_updates`.
    pub updates: u64,
    /// Transaction joined.
    pub txn: u64,
}

/// The immediate answer to a handle start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Joined; add refs and end it.
    Ready(HandleId),
    /// Waiting (on the ticket, if any, then for the transaction); a
    /// [`Decision::HandleReady`] or [`Decision::HandleFailed`] follows.
    Wait {
        /// The handle.
        handle: HandleId,
        /// The start reservation's ticket, if it had to queue.
        ticket: Option<TicketId>,
    },
    /// The reservation failed at once.
    Failed(TicketError),
    /// `Attach` with no running transaction (kernel: `-ENOENT`).
    NoTransaction,
}

/// The immediate answer to a handle end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Done; the handle id is gone.
    Done,
    /// The owner waits (catch-up) until [`Decision::HandleReleased`].
    Wait(HandleId),
}

impl<P: FlushPolicy> FlushModel<P> {
    fn alloc_handle(&mut self, kind: HandleKind) -> Result<HandleId, Error> {
        let slot = self.free_slots.pop().ok_or(Error::HandleTableFull)?;
        let i = slot as usize;
        self.generations[i] = self.generations[i].wrapping_add(1);
        self.handles[i] = Some(Handle {
            kind,
            state: HState::WaitTxn,
            need: 0,
            bytes_reserved: 0,
            meta_used: 0,
            updates: 0,
            txn: 0,
        });
        Ok(HandleId {
            slot,
            generation: self.generations[i],
        })
    }

    pub(crate) fn free_handle(&mut self, h: HandleId) {
        let i = h.slot as usize;
        if self.handles[i].take().is_some() {
            self.free_slots.push(h.slot);
        }
    }

    pub(crate) fn handle(&self, h: HandleId) -> Result<&Handle, Error> {
        let i = h.slot as usize;
        match self.handles.get(i) {
            Some(Some(x)) if self.generations[i] == h.generation => Ok(x),
            _ => Err(Error::UnknownHandle(h)),
        }
    }

    pub(crate) fn handle_mut(&mut self, h: HandleId) -> Result<&mut Handle, Error> {
        let i = h.slot as usize;
        match self.handles.get_mut(i) {
            Some(Some(x)) if self.generations[i] == h.generation => Ok(x),
            _ => Err(Error::UnknownHandle(h)),
        }
    }

    /// Start a handle (kernel: `start_transaction`).
    pub(crate) fn start_handle(&mut self, kind: HandleKind, items: u64) -> Result<Start, Error> {
        if kind == HandleKind::Attach && self.txn.is_none() {
            return Ok(Start::NoTransaction);
        }
        let h = self.alloc_handle(kind)?;
        let legacy = self.policy.legacy;
        let (need, extra) = if kind != HandleKind::Start {
            (0, 0)
        } else if items > 0 {
            let need = self.unit * items;
            let extra = if !legacy && !self.delayed_refs.full {
                need
            } else {
                0
            };
            (need, extra)
        } else if !legacy && !self.delayed_refs.full {
            (0, self.delayed_refs.deficit().min(self.head_bytes))
        } else {
            (0, 0)
        };
        if let Ok(x) = self.handle_mut(h) {
            x.need = need;
        }
        if need + extra > 0 {
            let reserved = match self.reserve(need + extra, FlushKind::FlushAll, Owner::Handle(h)) {
                Ok(r) => r,
                Err(e) => {
                    // A refused event leaves no trace: without this the
                    // slot would later join the transaction as a writer
                    // nobody can end.
                    self.free_handle(h);
                    return Err(e);
                }
            };
            match reserved {
                Reserve::Granted => self.place_start_grant(h, need + extra),
                Reserve::Queued(t) => {
                    if let Ok(x) = self.handle_mut(h) {
                        x.state = HState::Reserving(t);
                    }
                    return Ok(Start::Wait {
                        handle: h,
                        ticket: Some(t),
                    });
                }
                Reserve::Failed(e) => {
                    self.free_handle(h);
                    return Ok(Start::Failed(e));
                }
            }
        }
        if self.try_join(h) {
            Ok(Start::Ready(h))
        } else {
            self.wait_txn(h);
            Ok(Start::Wait {
                handle: h,
                ticket: None,
            })
        }
    }

    /// A start grant: `need` to the trans reserve (the handle's
    /// `bytes_reserved`), the rest into the delayed-ref reserve up to its
    /// deficit, any remainder back to free space.
    fn place_start_grant(&mut self, h: HandleId, bytes: u64) {
        let Ok(x) = self.handle_mut(h) else { return };
        let need = x.need.min(bytes);
        x.bytes_reserved = need;
        self.trans.size += need;
        self.trans.reserved += need;
        self.trans.set_full();
        self.migrate_to_delayed_refs(bytes - need);
    }

    /// The ticket of a waiting start was granted.
    pub(crate) fn handle_reserved(&mut self, h: HandleId, bytes: u64) {
        self.place_start_grant(h, bytes);
        if let Ok(x) = self.handle_mut(h) {
            x.state = HState::WaitTxn;
            self.wait_txn(h);
        }
    }

    /// Handle `h` waits to join the transaction.
    fn wait_txn(&mut self, h: HandleId) {
        self.waiting_txn += 1;
        self.waiting_slots[h.slot as usize / 64] |= 1 << (h.slot % 64);
    }

    /// The ticket of a waiting start failed: the handle is gone.
    pub(crate) fn handle_reserve_failed(&mut self, h: HandleId, error: TicketError) {
        self.free_handle(h);
        self.emit(Decision::HandleFailed { handle: h, error });
    }

    /// Whether a handle of `kind` must wait for the running transaction.
    const fn must_wait(kind: HandleKind, state: TxnState) -> bool {
        match state {
            TxnState::Running => false,
            TxnState::Blocked => matches!(kind, HandleKind::Start),
            TxnState::CommitStart => kind.is_external(),
            _ => true,
        }
    }

    /// Join the running transaction, creating one if none runs (kernel:
    /// `join_transaction`, `wait_current_trans` for the waiting part).
    pub(crate) fn try_join(&mut self, h: HandleId) -> bool {
        let Ok(x) = self.handle(h) else { return false };
        let kind = x.kind;
        if self.txn.is_none() {
            let id = self.next_txn_id;
            self.next_txn_id += 1;
            self.txn = Some(Txn {
                id,
                state: TxnState::Running,
                writers: 0,
                extwriters: 0,
                start_ns: self.now,
                flushing: false,
                pinned: 0,
                dirty_meta: 0,
            });
        }
        let Some(t) = self.txn.as_mut() else {
            return false;
        };
        if Self::must_wait(kind, t.state) {
            return false;
        }
        t.writers += 1;
        if kind.is_external() {
            t.extwriters += 1;
        }
        let id = t.id;
        if let Ok(x) = self.handle_mut(h) {
            x.txn = id;
            x.state = HState::Open;
        }
        true
    }

    /// Let waiting handles join when the transaction allows.
    pub(crate) fn advance_handles(&mut self) -> bool {
        if self.waiting_txn == 0 {
            return false;
        }
        let mut progress = false;
        for w in 0..self.waiting_slots.len() {
            let mut bits = self.waiting_slots[w];
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                let slot = w * 64 + bit as usize;
                let waits = self.handles[slot].is_some_and(|x| x.state == HState::WaitTxn);
                if !waits {
                    // Freed while it waited: nothing joins from this slot.
                    self.waiting_slots[w] &= !(1 << bit);
                    continue;
                }
                let h = HandleId {
                    slot: slot as u32,
                    generation: self.generations[slot],
                };
                if self.try_join(h) {
                    self.waiting_slots[w] &= !(1 << bit);
                    self.waiting_txn -= 1;
                    self.emit(Decision::HandleReady { handle: h });
                    progress = true;
                }
            }
        }
        progress
    }

    /// Queue refs from an open handle.
    pub(crate) fn handle_add_refs(&mut self, h: HandleId, batch: RefBatch) -> Result<(), Error> {
        let x = *self.handle(h)?;
        if x.state != HState::Open {
            return Err(Error::HandleNotOpen(h));
        }
        let new_heads = self.add_refs(&batch)?;
        let usable = x.bytes_reserved - x.meta_used;
        let used = batch.meta_used.min(usable);
        if let Ok(y) = self.handle_mut(h) {
            y.updates += new_heads;
            y.meta_used += used;
        }
        self.use_meta(used, false);
        if !self.policy.legacy {
            let updates = self.handle(h).map(|y| y.updates).unwrap_or(0);
            self.update_delayed_refs_rsv(updates);
            if let Ok(y) = self.handle_mut(h) {
                y.updates = 0;
            }
        }
        Ok(())
    }

    /// Leave the transaction: release the start reservation through the
    /// routing rule and drop the writer counts (steps 4 and 7 of the
    /// catch-up end in `catchup.rs`).
    pub(crate) fn leave_txn(&mut self, x: &Handle) {
        self.release_rsv(RsvKind::Trans, x.bytes_reserved);
        if let Some(t) = self.txn.as_mut().filter(|t| t.id == x.txn) {
            t.writers -= 1;
            if x.kind.is_external() {
                t.extwriters -= 1;
            }
        }
    }

    /// End an open handle (kernel: `__btrfs_end_transaction`).
    pub(crate) fn end_handle(&mut self, h: HandleId, throttle: bool) -> Result<End, Error> {
        let x = *self.handle(h)?;
        if x.state != HState::Open {
            return Err(Error::HandleNotOpen(h));
        }
        match self.policy.mode {
            crate::Mode::OnDemand => {
                self.leave_txn(&x);
                self.free_handle(h);
                Ok(End::Done)
            }
            crate::Mode::CatchUp => Ok(self.end_catch_up(h, x, throttle)),
        }
    }

    /// `max(updates, 32)`: the catch-up batch of an ending handle.
    pub(crate) const fn catch_up_batch(updates: u64) -> u64 {
        if updates > MIN_CATCHUP_BATCH {
            updates
        } else {
            MIN_CATCHUP_BATCH
        }
    }

    pub(crate) fn trace_throttle(&mut self, h: HandleId, level: u8) {
        let now = self.now;
        self.trace(TraceRecord::Throttle {
            now,
            handle: h,
            level,
        });
    }
}
