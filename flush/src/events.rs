//! The event API: every input the caller feeds in. Each call takes `now`,
//! updates the state, lets every actor move, and leaves its decisions in
//! the queue drained by [`FlushModel::poll_decision`].

use crate::FlushPolicy;
use crate::ticket::Owner;

/// Largest byte count an event may carry.
pub const MAX_BYTES: u64 = 1 << 60;
/// Largest item count of a handle start.
pub const MAX_ITEMS: u64 = 1 << 32;
/// Largest count in one [`RefBatch`] field.
pub const MAX_REFS: u64 = 1 << 40;

fn bounded(v: u64, max: u64) -> Result<u64, Error> {
    if v > max {
        Err(Error::TooLarge(v))
    } else {
        Ok(v)
    }
}
use crate::{
    End, Error, FlushKind, FlushModel, HandleId, HandleKind, Interrupted, JobId, RefBatch, Reserve,
    Start, TicketId,
};

impl<P: FlushPolicy> FlushModel<P> {
    /// A metadata reservation of `bytes` (kernel:
    /// `btrfs_reserve_metadata_bytes`), e.g. a buffered `write()`'s
    /// delalloc reservation. `owner` is any token of the caller's; it comes
    /// back in [`Decision::Grant`](crate::Decision::Grant) /
    /// [`Decision::Fail`](crate::Decision::Fail). Granted bytes are the
    /// caller's until [`on_release`](Self::on_release).
    pub fn on_reserve(
        &mut self,
        now: u64,
        owner: u64,
        bytes: u64,
        kind: FlushKind,
    ) -> Result<Reserve, Error> {
        if bytes == 0 {
            return Err(Error::ZeroBytes);
        }
        bounded(bytes, MAX_BYTES)?;
        self.enter(now);
        let r = self.reserve(bytes, kind, Owner::Caller(owner))?;
        if r == Reserve::Granted {
            self.grants += bytes;
        }
        self.pump();
        Ok(r)
    }

    /// Return `bytes` of granted reservations (kernel: releasing an inode
    /// or delalloc reserve). They first back-fill the delayed-ref reserve
    /// (5.0+; the global reserve up to 4.20), the rest is free space.
    pub fn on_release(&mut self, now: u64, bytes: u64) -> Result<(), Error> {
        if bytes == 0 {
            return Err(Error::ZeroBytes);
        }
        if bytes > self.grants {
            return Err(Error::ReleaseExceedsGrants {
                bytes,
                held: self.grants,
            });
        }
        self.enter(now);
        self.grants -= bytes;
        let target = if self.policy.legacy {
            crate::RsvKind::Global
        } else {
            crate::RsvKind::DelayedRefs
        };
        let left = self.fill(target, bytes);
        self.free_may_use(left);
        self.pump();
        Ok(())
    }

    /// The owner of a waiting ticket was interrupted (a fatal signal).
    pub fn on_interrupt(&mut self, now: u64, ticket: TicketId) -> Result<Interrupted, Error> {
        self.enter(now);
        let r = self.interrupt(ticket)?;
        self.pump();
        Ok(r)
    }

    /// Start a handle for `items` tree items (kernel:
    /// `btrfs_start_transaction(root, items)` for [`HandleKind::Start`],
    /// the join/attach variants otherwise; `items` only matters for
    /// `Start`).
    pub fn on_handle_start(
        &mut self,
        now: u64,
        kind: HandleKind,
        items: u64,
    ) -> Result<Start, Error> {
        bounded(items, MAX_ITEMS)?;
        self.enter(now);
        let r = self.start_handle(kind, items)?;
        self.pump();
        Ok(r)
    }

    /// An open handle queued delayed refs (a buffered write's extents
    /// reached the device and its ordered extent finished).
    pub fn on_refs_added(
        &mut self,
        now: u64,
        handle: HandleId,
        batch: RefBatch,
    ) -> Result<(), Error> {
        bounded(batch.new_heads, MAX_REFS)?;
        bounded(batch.refs, MAX_REFS)?;
        bounded(batch.cancelled, MAX_REFS)?;
        bounded(batch.meta_used, MAX_BYTES)?;
        self.enter(now);
        self.handle_add_refs(handle, batch)?;
        self.pump();
        Ok(())
    }

    /// End an open handle; `throttle` is `btrfs_end_transaction_throttle`.
    pub fn on_handle_end(
        &mut self,
        now: u64,
        handle: HandleId,
        throttle: bool,
    ) -> Result<End, Error> {
        self.enter(now);
        let r = self.end_handle(handle, throttle)?;
        self.pump();
        Ok(r)
    }

    /// The caller finished a [`Decision::RunRefs`](crate::Decision::RunRefs)
    /// or [`Decision::Flush`](crate::Decision::Flush) job. A run call may
    /// continue with another `RunRefs` under the same job id.
    pub fn on_work_done(&mut self, now: u64, job: JobId) -> Result<(), Error> {
        self.enter(now);
        self.work_done(job)?;
        self.pump();
        Ok(())
    }

    /// The write-out of [`Decision::CommitIo`](crate::Decision::CommitIo)
    /// for `txn` is durable.
    pub fn on_commit_done(&mut self, now: u64, txn: u64) -> Result<(), Error> {
        self.enter(now);
        self.commit_done(txn)?;
        self.pump();
        Ok(())
    }

    /// A task commits the running transaction itself (kernel:
    /// `btrfs_commit_transaction` from `btrfs_sync_file` when the log tree
    /// cannot be used, or from `sync(2)`). Returns the transaction whose
    /// [`on_commit_done`](Self::on_commit_done) the task waits for: the
    /// running one, or the one being committed when a commit is already on
    /// its way. `None`: nothing to commit, every change is durable.
    pub fn on_commit_request(&mut self, now: u64) -> Option<u64> {
        self.enter(now);
        let r = if self.txn.is_some() {
            self.request_commit(crate::CommitSource::Sync)
        } else {
            self.writing.as_ref().map(|w| w.id)
        };
        self.pump();
        r
    }

    /// Time passed; call at [`next_deadline`](Self::next_deadline).
    pub fn on_timer(&mut self, now: u64) {
        self.enter(now);
        if self.next_tick <= self.now {
            // Ticks missed since the last call collapse into one check:
            // nothing changes between them, so a second check finds either
            // the commit the first one started or the same young
            // transaction. Jumping arithmetically keeps a far-future `now`
            // from looping (and `next_tick` from overflowing).
            let period = self.params.kthread_period_ns;
            let missed = (self.now - self.next_tick) / period + 1;
            self.next_tick = self.next_tick.saturating_add(missed.saturating_mul(period));
            self.kthread_tick();
        }
        self.pump();
    }

    /// The caller's delalloc and ordered-extent byte counts changed (they
    /// steer preemptive flushing and the clamp).
    pub fn on_writeback(&mut self, now: u64, delalloc_bytes: u64, ordered_bytes: u64) {
        self.enter(now);
        self.delalloc_bytes = delalloc_bytes;
        self.ordered_bytes = ordered_bytes;
        self.pump();
    }

    /// The filesystem aborted: every waiting ticket fails with
    /// [`TicketError::Aborted`](crate::TicketError::Aborted), no grant
    /// follows, reservations fail.
    pub fn on_abort(&mut self, now: u64) {
        self.enter(now);
        self.abort_tickets();
        self.pump();
    }

    /// When [`on_timer`](Self::on_timer) must be called next: the commit
    /// thread's next check.
    pub fn next_deadline(&self) -> Option<u64> {
        Some(self.next_tick)
    }
}
