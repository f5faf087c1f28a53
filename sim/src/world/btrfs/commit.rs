//! A btrfs commit's IO, and the `tree_log_mutex` a commit shares with
//! every fsync's superblock step (rules in `fs::btrfs::transaction`; when
//! to commit is the flush model's, `world::btrfs`).
//!
//! Who waits on whom:
//! * ordered extents change tree items in the running transaction;
//! * the flush model's write-out (`Decision::CommitIo`) ends it, waits for
//!   the mutex, writes its tree blocks to the metadata chunk's copies, then
//!   a PREFLUSH + FUA superblock on every device, lets the mutex go and
//!   tells the flush model the commit is durable;
//! * an fsync whose log blocks are down waits for the mutex
//!   (`Phase::SyncLogLock`); the fsyncs that get it together write one set
//!   of superblocks, by the first of them, and complete with it;
//! * an fsync that falls back to a full commit (`--full-commit`) asks the
//!   flush model to commit and waits for that commit (`Phase::SyncCommit`).

use super::super::World;
use super::super::job::Phase;
use crate::block::Policy;
use crate::block::request::{Bio, Flags, Op, Origin, Payload};
use crate::fs::btrfs::metadata::{NODESIZE, item_bytes_for_write};
use crate::fs::btrfs::transaction::{Granted, LogMutex, Transaction, Waiter, commit_blocks};
use crate::fs::btrfs::volume::{SUPER_BYTES, SUPER_OFFSET};
use crate::rng::Stream;
use crate::time::Ns;

/// Largest tree-block write: a run of blocks side by side goes out in bios
/// of at most this many bytes (the block layer's `max_sectors`, as for data).
const COMMIT_BIO_BYTES: u64 = super::super::job::MAX_BIO_BYTES;

/// A primary superblock write on device `dev` (`write_all_supers`: the
/// device's cache flushed first, the block itself FUA), for a commit or an
/// fsync's log commit.
pub(crate) fn superblock(dev: u16, origin: Origin, cgroup: u16, payload: Payload) -> Bio {
    Bio {
        op: Op::Write,
        flags: Flags::SYNC
            .with(Flags::META)
            .with(Flags::PREFLUSH)
            .with(Flags::FUA),
        dev,
        offset: SUPER_OFFSET,
        len: SUPER_BYTES,
        origin,
        cgroup,
        payload,
    }
}

/// The commit being written.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CommitIo {
    /// Its transaction (the flush model's id).
    pub txn: u64,
    /// When its write-out began.
    pub start: Ns,
    /// Tree blocks to write.
    pub blocks: u64,
    /// Bios of the current step still in flight (0: not started).
    pub left: u32,
    /// In its superblock step.
    pub supers: bool,
}

/// What the report shows of the commits and the mutex.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct CommitStats {
    /// Commits done.
    pub commits: u64,
    /// Tree blocks they wrote (each once, however many copies).
    pub tree_blocks: u64,
    /// Summed and longest write-out time, from the flush model's write-out
    /// (waiting for the mutex included) to the last superblock, ns.
    pub commit_ns_sum: u64,
    pub commit_ns_max: u64,
    /// fsyncs that found a commit holding or waiting for the mutex when
    /// they asked for it.
    pub fsyncs_behind_commit: u64,
    /// Summed and longest time fsyncs waited for the mutex, ns.
    pub fsync_mutex_wait_ns_sum: u64,
    pub fsync_mutex_wait_ns_max: u64,
    /// Superblock writes by fsyncs (one per batch), and the fsyncs they
    /// served.
    pub fsync_super_batches: u64,
    pub fsyncs_batched: u64,
    /// fsyncs that fell back to a full commit instead of the log.
    pub full_commits: u64,
    /// fsyncs of a batch that completed before its superblocks were down
    /// (0 when the order holds).
    pub fsyncs_before_super: u64,
}

/// The commit's IO and the mutex (btrfs runs only).
#[derive(Debug, Default)]
pub(crate) struct CommitActor {
    pub txn: Transaction,
    pub mutex: LogMutex,
    /// The fsyncs holding the mutex, the one writing the superblocks first.
    pub batch: Vec<u32>,
    /// `batch` holds the mutex.
    pub fsyncs_hold: bool,
    /// The fsyncs of a batch whose superblocks are down are completing.
    pub followers_released: bool,
    /// The batch that just let the mutex go (kept to reuse its room).
    pub done: Vec<u32>,
    /// The commit waiting for or holding the mutex.
    pub io: Option<CommitIo>,
    /// fsyncs falling back to a full commit, per million (the assumed
    /// `p_full_commit`, `--full-commit`), and the stream they are drawn
    /// from (volume runs).
    pub full_commit_ppm: u32,
    pub draws: Option<Stream>,
    /// fsyncs waiting for the commit of a transaction: (flush model's
    /// transaction id, context).
    pub commit_waiters: Vec<(u64, u32)>,
    /// The contexts a finished commit wakes (kept to reuse its room).
    pub woken: Vec<u32>,
    pub stats: CommitStats,
}

impl<P: Policy> World<P> {
    /// An ordered extent of `pages` pages of `file` finished: its tree
    /// items change in the running transaction.
    pub(crate) fn txn_on_written(&mut self, file: u32, pages: u32) {
        let generation = self.commit.txn.generation();
        let f = &mut self.files[file as usize];
        let first = f.txn_generation != generation;
        f.txn_generation = generation;
        self.commit
            .txn
            .change(item_bytes_for_write(u64::from(pages), first));
    }

    /// The flush model writes transaction `txn` out: once the commit holds
    /// the mutex, the tree blocks its items fill go to the metadata
    /// chunk's copies. The model's `meta_bytes` (the extent-tree bytes its
    /// ref runs charged, a per-head worst case) stay its space accounting
    /// and are reported, not written: one estimate of what a commit writes
    /// serves every workload *(assumed; see [`commit_blocks`])*.
    pub(crate) fn commit_write_out(&mut self, now: Ns, txn: u64, meta_bytes: u64) {
        debug_assert!(self.commit.io.is_none(), "two write-outs at once");
        if let Some(fs) = self.btrfs.as_mut() {
            fs.stats.commit_meta_bytes += meta_bytes;
        }
        let ended = self.commit.txn.end();
        let used = self.raid.as_ref().map_or(0, |r| r.metadata_use().0);
        self.commit.io = Some(CommitIo {
            txn,
            start: now,
            blocks: commit_blocks(ended.dirty, used),
            left: 0,
            supers: false,
        });
        if self.commit.mutex.lock(Waiter::Commit) {
            self.commit_write_blocks(now);
        }
    }

    /// The commit holds the mutex: its tree blocks go out, in runs side by
    /// side in the metadata chunk [`crate::fs::btrfs::metadata::MetaSpace::place`]
    /// picks, to every copy.
    fn commit_write_blocks(&mut self, now: Ns) {
        let io = self.commit.io.as_mut().expect("a commit holds the mutex");
        let raid = self.raid.as_mut().expect("commits run on volumes");
        let mut left = io.blocks;
        let mut bios = 0u32;
        while left > 0 {
            let (map, at, n) = raid.place_tree_blocks(left);
            left -= n;
            for &(dev, physical) in &map.stripes[..usize::from(map.copies)] {
                let mut done = 0;
                while done < n * NODESIZE {
                    let len = (n * NODESIZE - done).min(COMMIT_BIO_BYTES);
                    self.jn.queue.push_back(Bio {
                        op: Op::Write,
                        flags: Flags::SYNC.with(Flags::META),
                        dev,
                        offset: physical + at + done,
                        len,
                        origin: Origin::Fs,
                        cgroup: 0,
                        payload: Payload::TreeBlock,
                    });
                    done += len;
                    bios += 1;
                }
            }
        }
        io.left = bios;
        if bios == 0 {
            self.commit_write_supers(now);
        } else {
            self.journal_pump(now);
        }
    }

    /// One tree-block write of the commit is down.
    pub(crate) fn on_tree_block_written(&mut self, now: Ns) {
        let io = self.commit.io.as_mut().expect("a tree block of a commit");
        debug_assert!(!io.supers && io.left > 0);
        io.left -= 1;
        if io.left == 0 {
            self.commit_write_supers(now);
        }
    }

    /// `write_all_supers` of the commit: a PREFLUSH + FUA superblock on
    /// every device.
    fn commit_write_supers(&mut self, now: Ns) {
        let members = self.raid.as_ref().map_or(0, |r| r.member_count());
        for dev in 0..members as u16 {
            self.jn
                .queue
                .push_back(superblock(dev, Origin::Fs, 0, Payload::CommitSuper));
        }
        let io = self.commit.io.as_mut().expect("a commit holds the mutex");
        io.supers = true;
        io.left = members as u32;
        self.journal_pump(now);
    }

    /// One superblock of the commit is down; with the last, the commit is
    /// done and lets the mutex go.
    pub(crate) fn on_commit_super_written(&mut self, now: Ns) {
        let io = self.commit.io.as_mut().expect("a superblock of a commit");
        debug_assert!(io.supers && io.left > 0);
        io.left -= 1;
        if io.left > 0 {
            return;
        }
        let io = self.commit.io.take().expect("checked above");
        let s = &mut self.commit.stats;
        s.commits += 1;
        s.tree_blocks += io.blocks;
        let took = now - io.start;
        s.commit_ns_sum += took;
        s.commit_ns_max = s.commit_ns_max.max(took);
        // The fsyncs that fell back to this commit (or an older one).
        let mut woken = std::mem::take(&mut self.commit.woken);
        woken.clear();
        self.commit.commit_waiters.retain(|&(t, c)| {
            if t <= io.txn {
                woken.push(c);
                false
            } else {
                true
            }
        });
        self.log_mutex_unlock(now);
        self.btrfs_on_commit_done(now, io.txn);
        for &c in &woken {
            debug_assert_eq!(self.ctxs[c as usize].phase, Phase::SyncCommit);
            self.op_complete(now, c);
        }
        self.commit.woken = woken;
    }

    /// Whether the fsync of `file` (covering its writes up to `seen`)
    /// falls back to a full commit (drawn with `p_full_commit`
    /// among the fsyncs that have something to log). If so, its writes
    /// count as persisted by that commit.
    pub(crate) fn fsync_falls_back(&mut self, file: u32, seen: u64) -> bool {
        let ppm = self.commit.full_commit_ppm;
        if ppm == 0 || seen <= self.files[file as usize].logged_write_seq {
            return false;
        }
        let Some(draws) = self.commit.draws.as_mut() else {
            return false;
        };
        if draws.below(1_000_000) >= u64::from(ppm) {
            return false;
        }
        self.files[file as usize].logged_write_seq = seen;
        self.commit.stats.full_commits += 1;
        true
    }

    /// Context `c`'s fsync commits the running transaction (its data is
    /// down) and waits for that commit, or for the one on its way if
    /// nothing changed since it began.
    pub(crate) fn fsync_full_commit(&mut self, now: Ns, c: u32) {
        let txn = match self.btrfs.as_mut() {
            Some(fs) => fs.model.on_commit_request(now),
            None => None,
        };
        match txn {
            Some(t) => {
                self.commit.commit_waiters.push((t, c));
                self.ctxs[c as usize].phase = Phase::SyncCommit;
                self.btrfs_pump(now);
            }
            None => {
                // Everything it wrote is committed already.
                self.ctxs[c as usize].phase = Phase::SyncLog;
                self.ctx_pump(now, c);
            }
        }
    }

    /// Context `c`'s fsync has its log blocks down: its superblocks go out
    /// once it holds the mutex.
    pub(crate) fn fsync_superblock_step(&mut self, now: Ns, c: u32) {
        if self.fsync_lock(now, c) {
            self.fsync_supers_out(now, c);
        }
    }

    /// Context `c` holds the mutex (alone or leading a batch): its
    /// superblocks go out.
    fn fsync_supers_out(&mut self, now: Ns, c: u32) {
        let ctx = &mut self.ctxs[c as usize];
        std::mem::swap(&mut ctx.queue, &mut ctx.after_log);
        ctx.phase = Phase::SyncLog;
        self.ctx_pump(now, c);
    }

    /// Context `c` asks for the mutex for its superblock step: true if it
    /// holds it now (alone), else it waits (`Phase::SyncLogLock`).
    fn fsync_lock(&mut self, now: Ns, c: u32) -> bool {
        if self.commit.io.is_some() {
            self.commit.stats.fsyncs_behind_commit += 1;
        }
        if self.commit.mutex.lock(Waiter::Fsync(c)) {
            self.commit.batch.clear();
            self.commit.batch.push(c);
            self.commit.fsyncs_hold = true;
            return true;
        }
        let ctx = &mut self.ctxs[c as usize];
        ctx.phase = Phase::SyncLogLock;
        ctx.lock_asked = now;
        false
    }

    /// Whether context `c` leads the batch of fsyncs holding the mutex.
    pub(crate) fn leads_fsync_batch(&self, c: u32) -> bool {
        self.commit.fsyncs_hold && self.commit.batch.first() == Some(&c)
    }

    /// The superblocks of the batch context `c` leads are down: the batch
    /// lets the mutex go, and the other fsyncs of it complete.
    pub(crate) fn fsync_batch_done(&mut self, now: Ns, c: u32) {
        debug_assert!(self.leads_fsync_batch(c));
        self.commit.fsyncs_hold = false;
        std::mem::swap(&mut self.commit.batch, &mut self.commit.done);
        self.commit.stats.fsync_super_batches += 1;
        self.commit.stats.fsyncs_batched += self.commit.done.len() as u64;
        self.log_mutex_unlock(now);
        let mut done = std::mem::take(&mut self.commit.done);
        self.commit.followers_released = true;
        for &f in &done[1..] {
            debug_assert_eq!(self.ctxs[f as usize].phase, Phase::SyncLogLock);
            self.op_complete(now, f);
        }
        self.commit.followers_released = false;
        done.clear();
        self.commit.done = done;
    }

    /// A context waiting in a batch for its leader's superblocks
    /// completes: count it if they are not down yet.
    pub(crate) fn note_follower_done(&mut self) {
        if !self.commit.followers_released {
            self.commit.stats.fsyncs_before_super += 1;
        }
    }

    /// The holder lets the mutex go: the commit waiting for it writes its
    /// blocks, or the fsyncs at the head of the queue go on together, the
    /// first writing the superblocks for all.
    fn log_mutex_unlock(&mut self, now: Ns) {
        match self.commit.mutex.unlock(&mut self.commit.batch) {
            Granted::Free => {}
            Granted::Commit => self.commit_write_blocks(now),
            Granted::Fsyncs => {
                self.commit.fsyncs_hold = true;
                for &f in &self.commit.batch {
                    let waited = now - self.ctxs[f as usize].lock_asked;
                    let s = &mut self.commit.stats;
                    s.fsync_mutex_wait_ns_sum += waited;
                    s.fsync_mutex_wait_ns_max = s.fsync_mutex_wait_ns_max.max(waited);
                }
                let lead = self.commit.batch[0];
                for &f in &self.commit.batch[1..] {
                    // Their log is in the leader's log commit.
                    self.ctxs[f as usize].after_log.clear();
                }
                debug_assert_eq!(self.ctxs[lead as usize].phase, Phase::SyncLogLock);
                self.fsync_supers_out(now, lead);
            }
        }
    }
}
