//! The journal's work in the run: transactions from write completions and
//! timestamp updates, log forces for `fsync`, background CIL pushes and
//! AIL writeback (rules in `fs::journal`); on a multi-device volume, the
//! btrfs log-tree sync of an `fsync` instead.

use super::job::{OpKind, Phase};
use super::{Actor, World};
use crate::block::Policy;
use crate::block::request::{Bio, Flags, Op, Origin, Payload};
use crate::fs::PAGE;
use crate::fs::journal::{
    BMBT_ITEM_BYTES, ICLOG_BUFS, ICLOG_BYTES, INODE_ITEM_BYTES, inode_key, leaf_key,
};
use crate::rng::splitmix64;
use crate::time::Ns;

/// How often the log worker runs: `fs.xfs.xfssyncd_centisecs`, 3000 by
/// default (`xfs_log_work_queue` in `fs/xfs/xfs_log.c`).
pub(crate) const LOG_WORKER_INTERVAL_NS: Ns = 30 * crate::time::SEC;

impl<P: Policy> World<P> {
    /// The log worker (`xfs_log_worker`): it forces the log and then has
    /// the AIL write back everything logged so far (`xfs_ail_push_all`),
    /// so that metadata does not stay dirty in memory however little the
    /// log fills.
    pub(crate) fn on_log_worker(&mut self, now: Ns) {
        if self.journal.cil_bytes > 0 {
            self.checkpoint(Origin::Fs);
        }
        self.jn.push_all = true;
        self.maybe_start_ail();
        self.journal_pump(now);
    }

    /// A write reached pages `[first, first + count)` of `file`: unwritten
    /// blocks become written in one transaction.
    pub(crate) fn on_data_written(&mut self, now: Ns, file: u32, first: u32, count: u32) {
        if !self.journal_on {
            return;
        }
        let f = &mut self.files[file as usize];
        let Some(w) = f.written.as_mut() else {
            return;
        };
        let mut converted = 0;
        for p in first..first + count {
            if !w.set(p) {
                converted += 1;
            }
        }
        if converted == 0 {
            return;
        }
        // Extent count estimate: a run in the middle of an unwritten extent
        // splits it in three; touching written neighbours merges.
        let left = first > 0 && w.get(first - 1);
        let right = first + count < f.pages && w.get(first + count);
        f.extents = match (left, right) {
            (false, false) => f.extents + 2,
            (true, true) => f.extents.saturating_sub(2).max(1),
            _ => f.extents,
        };
        let key = leaf_key(file, first, f.pages, f.extents);
        let seq = self.journal.cil_seq;
        f.change_seq = seq;
        f.datasync_seq = seq;
        self.journal.log_item(inode_key(file), INODE_ITEM_BYTES);
        self.journal.log_item(key, BMBT_ITEM_BYTES);
        self.journal.stats.transactions += 1;
        self.journal.stats.conversions += 1;
        if self.journal.cil_over_threshold() {
            self.background_push(now);
        }
    }

    /// A `write()` changed the timestamps of `file`.
    pub(crate) fn log_timestamp(&mut self, file: u32) {
        if !self.journal_on {
            return;
        }
        let seq = self.journal.cil_seq;
        let f = &mut self.files[file as usize];
        f.change_seq = seq;
        self.journal.log_item(inode_key(file), INODE_ITEM_BYTES);
        self.journal.stats.transactions += 1;
    }

    /// Writes the open CIL as a checkpoint, queued for the [`ICLOG_BUFS`]
    /// iclog buffers (see [`Self::iclog_pump`]); returns its sequence (0:
    /// the CIL was empty). The cache flushes follow Linux 5.14 and later
    /// ("xfs: journal IO cache flush reductions", linux-xfs, February
    /// 2021): the checkpoint's first iclog carries PREFLUSH (the metadata
    /// written back before it, which let the log tail move, must be stable
    /// before the log is overwritten), the ones after it nothing, and the
    /// last, the commit record, PREFLUSH and FUA, written only when the
    /// checkpoint's other iclogs are done (`xlog_cil_push_work`). A
    /// checkpoint of one iclog is that iclog with both.
    fn checkpoint(&mut self, origin: Origin) -> u64 {
        let seq = self.journal.cil_seq;
        let bytes = self.journal.push();
        if bytes == 0 {
            return 0;
        }
        let count = bytes.div_ceil(ICLOG_BYTES);
        self.jn.ckpt_out.push_back((seq, count as u32));
        for k in 0..count {
            let n = (bytes - k * ICLOG_BYTES).min(ICLOG_BYTES);
            // SYNC with IDLE: never throttled by wbt behind the writeback
            // it waits for (`xlog_write_iclog`).
            let mut flags = Flags::SYNC.with(Flags::IDLE).with(Flags::META);
            if k == 0 || k + 1 == count {
                flags = flags.with(Flags::PREFLUSH);
            }
            if k + 1 == count {
                flags = flags.with(Flags::FUA);
            }
            let offset = self.journal.place(n);
            self.jn.iclogs.push_back(Bio {
                op: Op::Write,
                flags,
                dev: 0,
                offset,
                len: n,
                origin,
                cgroup: 0,
                payload: Payload::Log { seq },
            });
        }
        seq
    }

    /// Submits queued iclog writes while an iclog buffer is free: a
    /// buffer is busy from its write's submission to its completion, so
    /// no more than [`ICLOG_BUFS`] log writes are ever in flight. A commit
    /// record (the one FUA iclog of a checkpoint) waits until every iclog
    /// before it is done.
    fn iclog_pump(&mut self, now: Ns) {
        while self.jn.iclogs_in_flight < ICLOG_BUFS {
            let Some(&bio) = self.jn.iclogs.front() else {
                return;
            };
            if bio.flags.contains(Flags::FUA) && self.jn.iclogs_in_flight > 0 {
                return;
            }
            self.jn.iclogs.pop_front();
            self.jn.iclogs_in_flight += 1;
            let stats = &mut self.journal.stats;
            stats.log_writes += 1;
            stats.log_writes_max_in_flight =
                stats.log_writes_max_in_flight.max(self.jn.iclogs_in_flight);
            if !self.submit(now, Actor::Journal, bio, false) {
                self.jn.blocked = true;
                return;
            }
        }
    }

    /// An iclog write of checkpoint `seq` completed: its buffer is free.
    pub(crate) fn on_log_write_done(&mut self, now: Ns, seq: u64) {
        self.jn.iclogs_in_flight -= 1;
        if !self.jn.iclogs.is_empty() {
            self.journal_pump(now);
        }
        if let Some(e) = self.jn.ckpt_out.iter_mut().find(|e| e.0 == seq) {
            e.1 -= 1;
        }
        while let Some(&(s, 0)) = self.jn.ckpt_out.front() {
            self.jn.durable_seq = s;
            self.jn.ckpt_out.pop_front();
        }
        let durable = self.jn.durable_seq;
        let mut i = 0;
        while i < self.jn.seq_waiters.len() {
            let (target, c) = self.jn.seq_waiters[i];
            if target <= durable {
                self.jn.seq_waiters.swap_remove(i);
                let ctx = &mut self.ctxs[c as usize];
                ctx.pending -= 1;
                if ctx.pending == 0 {
                    self.ctx_io_done(now, c);
                }
            } else {
                i += 1;
            }
        }
    }

    /// Starts writing back the oldest checkpoint if the log is short of
    /// space. Its bios join the journal actor's queue.
    fn maybe_start_ail(&mut self) {
        if self.ail_wanted() && !self.jn.ail_running {
            self.start_ail_push();
        }
    }

    /// fsync after the data: on btrfs, wait for the file's ordered
    /// extents first; then the log.
    pub(crate) fn sync_journal(&mut self, now: Ns, c: u32) {
        let file = self.ctxs[c as usize].sync_file;
        if self.btrfs_ordered_settled(c, file) {
            self.sync_log_now(now, c);
        }
    }

    /// fsync after the data (and on btrfs its ordered extents): force the
    /// log if the file has changes that the call must persist, else flush
    /// the device cache.
    pub(crate) fn sync_log_now(&mut self, now: Ns, c: u32) {
        let ctx = &self.ctxs[c as usize];
        let file = ctx.sync_file;
        let datasync = matches!(ctx.op, OpKind::Sync { datasync: true });
        let j = ctx.job;
        let f = &self.files[file as usize];
        let seq = if datasync {
            f.datasync_seq
        } else {
            f.change_seq
        };
        let origin = Origin::Task(j);
        let mut bios = std::mem::take(&mut self.ctxs[c as usize].queue);
        let force = self.journal_on && seq == self.journal.cil_seq;
        // The checkpoint this fsync must see on the device (0: none).
        let mut target = if self.journal_on { seq } else { 0 };
        if force {
            self.journal.stats.forces += 1;
            target = self.checkpoint(origin);
            self.maybe_start_ail();
        }
        if target > self.jn.durable_seq {
            // Its iclog writes (ours, or another force's still on the way)
            // carry PREFLUSH and FUA: waiting for them is enough.
            self.ctxs[c as usize].pending += 1;
            self.jn.seq_waiters.push((target, c));
        } else if self.raid.is_some() {
            let seen = self.ctxs[c as usize].sync_write_seq;
            if self.fsync_falls_back(file, seen) {
                self.ctxs[c as usize].queue = bios;
                self.fsync_full_commit(now, c);
                return;
            }
            let cgroup = self.jobs[j as usize].plan.cgroup;
            let mut supers = std::mem::take(&mut self.ctxs[c as usize].after_log);
            self.volume_log_sync(file, seen, origin, cgroup, &mut bios, &mut supers);
            self.ctxs[c as usize].after_log = supers;
        } else if self.devs[0].dev.write_cache() {
            // Nothing to force: flush the cache for the data (`xfs_file_fsync`).
            self.journal.stats.bare_flushes += 1;
            let cgroup = self.jobs[j as usize].plan.cgroup;
            bios.push_back((
                Bio {
                    op: Op::Write,
                    flags: Flags::SYNC.with(Flags::PREFLUSH),
                    dev: self.files[file as usize].dev,
                    offset: 0,
                    len: 0,
                    origin,
                    cgroup,
                    payload: Payload::Flush,
                },
                true,
            ));
        }
        self.ctxs[c as usize].queue = bios;
        if !self.jn.queue.is_empty() || !self.jn.iclogs.is_empty() {
            self.journal_pump(now);
        }
        self.ctxs[c as usize].phase = Phase::SyncLog;
        self.ctx_pump(now, c);
    }

    /// Background CIL push by the journal actor.
    pub(crate) fn background_push(&mut self, now: Ns) {
        self.checkpoint(Origin::Fs);
        self.maybe_start_ail();
        self.journal_pump(now);
    }

    /// Whether the AIL should write back: the log is short of space, or
    /// the log worker asked for everything.
    fn ail_wanted(&self) -> bool {
        self.journal.needs_ail_push() || self.jn.push_all
    }

    /// Writes the oldest checkpoint's items in place.
    fn start_ail_push(&mut self) {
        self.journal.free_relogged();
        if self.journal.checkpoints.is_empty() {
            self.jn.push_all = false;
        }
        if !self.ail_wanted() {
            return;
        }
        let Some(ck) = self.journal.checkpoints.front().copied() else {
            return;
        };
        self.jn.ail_running = true;
        self.jn.ail_left = ck.items.max(1);
        let cap = self.devs[0].dev.capacity();
        let (log_off, log_size) = (self.journal.log_offset, self.journal.log_size);
        for _ in 0..self.jn.ail_left {
            self.jn.ail_cursor += 1;
            // Metadata blocks sit in the AG headers around the log.
            let span = (cap / 64).max(PAGE);
            let at = (log_off + log_size + splitmix64(self.jn.ail_cursor) % span) / PAGE * PAGE;
            self.jn.queue.push_back(Bio {
                op: Op::Write,
                flags: Flags::META.with(Flags::BACKGROUND),
                dev: 0,
                offset: at.min(cap - PAGE),
                len: PAGE,
                origin: Origin::Fs,
                cgroup: 0,
                payload: Payload::Meta,
            });
        }
        self.journal.stats.ail_writes += u64::from(self.jn.ail_left);
    }

    /// One in-place metadata write finished.
    pub(crate) fn on_ail_write_done(&mut self, now: Ns) {
        self.jn.ail_left -= 1;
        self.journal.stats.ail_done += 1;
        if self.jn.ail_left == 0 {
            self.journal.oldest_written();
            self.jn.ail_running = false;
            if self.ail_wanted() {
                self.start_ail_push();
                self.journal_pump(now);
            }
        }
    }

    /// Submits the journal actor's queued bios.
    pub(crate) fn journal_pump(&mut self, now: Ns) {
        if self.jn.blocked {
            return;
        }
        self.iclog_pump(now);
        if self.jn.blocked {
            return;
        }
        while let Some(bio) = self.jn.queue.pop_front() {
            if !self.submit(now, Actor::Journal, bio, false) {
                self.jn.blocked = true;
                return;
            }
        }
    }
}
