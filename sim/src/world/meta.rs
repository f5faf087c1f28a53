//! The metadata engines' calls (`ioengine=filecreate`, `filestat`,
//! `filedelete`, `dircreate`, `dirstat`, `dirdelete`): one call per file,
//! counted as one IO of the file's block in the job's direction (read
//! unless the job only writes, as fio's engines pick it), its latency the
//! call's.
//!
//! What each filesystem makes a call do (rules in `fs::meta`):
//! * a create or a delete takes its directory's lock for the whole call
//!   ([`DirLock`]; jobs in one `directory` share it), a stat none;
//! * every call spends its CPU time ([`fs::meta::cpu_ns`]);
//! * on xfs-lite a create or a delete logs the inode, its directory block
//!   and the AGI in the running checkpoint (`xfs_create`, `xfs_remove`);
//! * on btrfs a create or a delete starts a transaction handle reserving
//!   its items (`btrfs_start_transaction(root, 5)`), which may wait on a
//!   ticket or a blocked transaction (`Phase::MetaHandle`); under the
//!   handle its items change in the running transaction, the leaves it
//!   COWs queue delayed refs, and the handle ends (in catch-up it may wait
//!   for that end);
//! * a stat, and anything on `--fs raw`, is CPU time only.
//!
//! [`fs::meta::cpu_ns`]: crate::fs::meta::cpu_ns

use std::collections::VecDeque;

use iolab_flush::{End, HandleId, HandleKind, RefBatch, Start};

use super::World;
use super::job::{JobState, OpKind, Phase, PlannedIo};
use crate::block::Policy;
use crate::fs::meta::{self, Lock, MetaCall};
use crate::time::Ns;

/// A directory's lock (the VFS takes the parent's `i_rwsem` exclusively
/// around a create or a remove): held for the whole call, a handle's wait
/// included; the contexts that want it wait in turn.
#[derive(Clone, Debug, Default)]
pub(crate) struct DirLock {
    pub held: bool,
    pub queue: VecDeque<u32>,
    /// Calls that found it held, and their summed and longest wait, ns.
    pub contended: u64,
    pub wait_ns: u64,
    pub wait_max_ns: u64,
}

/// A context waiting on a btrfs handle for its metadata call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MetaWait {
    pub handle: HandleId,
    pub ctx: u32,
    /// Waiting for the handle to start (else for its end).
    pub start: bool,
}

impl<P: Policy> World<P> {
    /// Context `c` of job `j` (a metadata engine's) makes its next call,
    /// or ends the job when every file of its last loop is done.
    pub(crate) fn meta_next(&mut self, now: Ns, c: u32, j: usize) {
        let job = &mut self.jobs[j];
        let Some(plan) = job.plan.meta else {
            return;
        };
        if job.meta_done == plan.files {
            job.loops_done += 1;
            if !job.plan.time_based && job.loops_done >= job.plan.loops {
                job.exhausted = true;
                self.job_stop(now, j as u32);
                self.ctx_finish(now, c);
                return;
            }
            job.meta_done = 0;
        }
        let first_pass = job.loops_done == 0;
        let file = job.meta_done;
        job.meta_done += 1;
        let dir = super::job::meta_dir(&job.plan);
        let d = dir as usize;
        job.issued[d] += 1;
        job.issued_bytes[d] += plan.bytes;
        job.bytes_issued += plan.bytes;
        job.in_flight += 1;
        job.ios_since_think += 1;
        if let Some(s) = job.stats.as_mut() {
            s.record_depth(job.in_flight);
        }
        // A later pass of a create engine opens what the first made.
        let call = MetaCall::of(plan.op, first_pass);
        let ctx = &mut self.ctxs[c as usize];
        ctx.op_start = now;
        ctx.op = OpKind::Io {
            dir,
            bytes: plan.bytes,
        };
        ctx.meta = Some((call, j as u32, file));
        self.meta_counts[call as usize] += 1;
        self.meta_lock(now, c, call, j);
    }

    /// A data job with `create_on_open` reaches file `fi` for the first
    /// time: it creates it (a metadata call), then issues the IO it
    /// planned, whose latency starts after the create, as fio's does.
    pub(crate) fn create_then_issue(&mut self, now: Ns, c: u32, j: usize, io: PlannedIo) {
        let file = self.jobs[j].file_ids[io.fi];
        let ctx = &mut self.ctxs[c as usize];
        ctx.pending_io = Some(io);
        ctx.meta = Some((MetaCall::Create, j as u32, file));
        self.meta_counts[MetaCall::Create as usize] += 1;
        self.meta_lock(now, c, MetaCall::Create, j);
    }

    /// Context `c`'s call `call` for job `j` takes its lock (its
    /// directory's, or its file's inode's), then goes on.
    fn meta_lock(&mut self, now: Ns, c: u32, call: MetaCall, j: usize) {
        let file = self.ctxs[c as usize].meta.map_or(0, |m| m.2);
        if let Some(lock) = self.lock_of(call, j, file) {
            if lock.held {
                lock.contended += 1;
                lock.queue.push_back(c);
                let ctx = &mut self.ctxs[c as usize];
                ctx.phase = Phase::MetaLock;
                ctx.lock_asked = now;
                return;
            }
            lock.held = true;
        }
        self.meta_locked(now, c);
    }

    /// The lock call `call` of job `j` on `file` (the run's file id for a
    /// file call) takes, if any.
    fn lock_of(&mut self, call: MetaCall, j: usize, file: u32) -> Option<&mut DirLock> {
        match call.lock() {
            Lock::None => None,
            Lock::Dir => self.dir_locks.get_mut(self.jobs[j].plan.dir as usize),
            Lock::Inode => self.inode_locks.get_mut(file as usize),
        }
    }

    /// Context `c`'s call holds its directory's lock (or needs none).
    fn meta_locked(&mut self, now: Ns, c: u32) {
        let Some((call, j, file)) = self.ctxs[c as usize].meta else {
            return;
        };
        if call.changes() {
            if self.journal_on {
                self.meta_log(now, call, j, file);
            }
            if self.btrfs.is_some() {
                self.meta_btrfs_start(now, c);
                return;
            }
        }
        self.ctx_timer(now + meta::cpu_ns(call), c, Phase::Cpu);
    }

    /// A call is over: its lock goes to the next in turn.
    pub(crate) fn meta_unlock(&mut self, now: Ns, (call, j, file): (MetaCall, u32, u32)) {
        let Some(lock) = self.lock_of(call, j as usize, file) else {
            return;
        };
        let Some(next) = lock.queue.pop_front() else {
            lock.held = false;
            return;
        };
        let waited = now - self.ctxs[next as usize].lock_asked;
        debug_assert_eq!(self.ctxs[next as usize].phase, Phase::MetaLock);
        if let Some(lock) = self.lock_of(call, j as usize, file) {
            lock.wait_ns += waited;
            lock.wait_max_ns = lock.wait_max_ns.max(waited);
        }
        self.meta_locked(now, next);
    }

    /// xfs-lite: the call's items (a create's or a delete's inode,
    /// directory block and AGI; a file call's inode and extent map) join
    /// the running checkpoint.
    fn meta_log(&mut self, now: Ns, call: MetaCall, j: u32, file: u32) {
        if call.on_extents() {
            for (key, bytes) in meta::xfs_extent_items(call, file) {
                self.journal.log_item(key, bytes);
            }
        } else {
            for (key, bytes) in meta::xfs_items(j, file) {
                self.journal.log_item(key, bytes);
            }
        }
        self.journal.stats.transactions += 1;
        if self.journal.cil_over_threshold() {
            self.background_push(now);
        }
    }

    /// btrfs: the call starts its transaction handle.
    fn meta_btrfs_start(&mut self, now: Ns, c: u32) {
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        match fs
            .model
            .on_handle_start(now, HandleKind::Start, meta::BTRFS_ITEMS)
        {
            Ok(Start::Ready(h)) => self.meta_in_handle(now, c, h),
            Ok(Start::Wait { handle, ticket }) => {
                if ticket.is_some() {
                    fs.stats.tickets += 1;
                }
                fs.stats.handle_waits += 1;
                fs.meta_waits.push(MetaWait {
                    handle,
                    ctx: c,
                    start: true,
                });
                self.ctxs[c as usize].phase = Phase::MetaHandle;
            }
            Ok(Start::Failed(_) | Start::NoTransaction) | Err(_) => {
                fs.stats.enospc += 1;
                self.meta_failed(now, c);
            }
        }
        self.btrfs_pump(now);
    }

    /// Context `c` holds handle `h`: its items change, the leaves they
    /// COW queue delayed refs, and the handle ends.
    pub(crate) fn meta_in_handle(&mut self, now: Ns, c: u32, h: HandleId) {
        let Some((call, j, _)) = self.ctxs[c as usize].meta else {
            return;
        };
        let bytes = if call.on_extents() {
            meta::BTRFS_EXTENT_CALL_BYTES
        } else {
            meta::btrfs_item_bytes(self.jobs[j as usize].plan.name_len)
        };
        self.commit.txn.change(bytes);
        if call.creates()
            && let Some(raid) = self.raid.as_mut()
        {
            raid.use_metadata(bytes);
        }
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        let txn = fs.model.txn_id().unwrap_or(0);
        let cows = fs.meta_leaves.on_change(txn, bytes);
        fs.stats.meta_tree_cows += cows;
        let batch = RefBatch {
            new_heads: 2 * cows,
            refs: 2 * cows,
            ..RefBatch::default()
        };
        if cows > 0 {
            let _ = fs.model.on_refs_added(now, h, batch);
        }
        match fs.model.on_handle_end(now, h, false) {
            Ok(End::Wait(h)) => {
                fs.stats.handle_waits += 1;
                fs.meta_waits.push(MetaWait {
                    handle: h,
                    ctx: c,
                    start: false,
                });
                self.ctxs[c as usize].phase = Phase::MetaHandle;
            }
            Ok(End::Done) | Err(_) => self.meta_cpu(now, c),
        }
    }

    /// The call's CPU time, then its completion.
    pub(crate) fn meta_cpu(&mut self, now: Ns, c: u32) {
        let Some((call, _, _)) = self.ctxs[c as usize].meta else {
            return;
        };
        self.ctx_timer(now + meta::cpu_ns(call), c, Phase::Cpu);
    }

    /// A create before an IO (`create_on_open`) is done: the IO goes out.
    /// An extent move is done: its range's pages are dirtied, for
    /// writeback to write them to the donor's blocks.
    pub(crate) fn open_created(&mut self, now: Ns, c: u32) {
        let call = self.ctxs[c as usize].meta.take();
        if let Some(call) = call {
            self.meta_unlock(now, call);
        }
        let Some(io) = self.ctxs[c as usize].pending_io.take() else {
            return;
        };
        let j = self.ctxs[c as usize].job as usize;
        match call {
            Some((MetaCall::MoveExtent | MetaCall::MoveExtentInPlace, _, file)) => {
                self.start_buffered_write(now, c, file, io.offset, io.len);
            }
            _ => self.issue_io(now, c, j, io),
        }
    }

    /// Context `c` of job `j` makes file call `call` on run file `file`
    /// for the IO `io` it counted: a hole punched or a shrink drops the
    /// clean cached pages it frees, an extent move then dirties the range.
    pub(crate) fn file_call(&mut self, now: Ns, c: u32, j: usize, call: MetaCall, io: PlannedIo) {
        let file = self.jobs[j].file_ids[io.fi];
        let pages = self.files[file as usize].pages;
        let first = (io.offset / crate::fs::PAGE) as u32;
        match call {
            MetaCall::PunchHole => {
                let end = (io.offset + io.len).div_ceil(crate::fs::PAGE) as u32;
                self.cache.invalidate_range(file, first, end.min(pages));
            }
            MetaCall::Truncate => self.cache.invalidate_range(file, first, pages),
            _ => {}
        }
        self.note_mtime(now, file);
        let ctx = &mut self.ctxs[c as usize];
        if matches!(call, MetaCall::MoveExtent | MetaCall::MoveExtentInPlace) {
            ctx.pending_io = Some(io);
        }
        ctx.meta = Some((call, j as u32, file));
        self.meta_counts[call as usize] += 1;
        self.meta_lock(now, c, call, j);
    }

    /// The call failed (ENOSPC): the job ends with an error, as fio stops
    /// a job whose call fails.
    pub(crate) fn meta_failed(&mut self, now: Ns, c: u32) {
        if let Some(call) = self.ctxs[c as usize].meta.take() {
            self.meta_unlock(now, call);
        }
        let ctx = &mut self.ctxs[c as usize];
        ctx.phase = Phase::Idle;
        let j = ctx.job as usize;
        if ctx.pending_io.take().is_none() && self.jobs[j].state == JobState::Running {
            self.jobs[j].in_flight = self.jobs[j].in_flight.saturating_sub(1);
        }
        self.ctx_finish(now, c);
    }

    /// The context waiting on `handle` (to start, or to end), if one is.
    pub(crate) fn btrfs_meta_waiting(&mut self, handle: HandleId, start: bool) -> Option<u32> {
        let fs = self.btrfs.as_mut()?;
        let i = fs
            .meta_waits
            .iter()
            .position(|w| w.handle == handle && w.start == start)?;
        Some(fs.meta_waits.remove(i).ctx)
    }
}
