//! btrfs's glue between the `iolab-flush` model and the rest of the
//! machine: buffered writers, the page cache, the endio workers, the
//! flusher and the commit (`commit`). The bookkeeping rules are in
//! `fs::btrfs`.
//!
//! Who waits on whom:
//! * a writer whose metadata reservation does not fit sleeps on its ticket
//!   (`Phase::Reserve`) until a `Grant` (or fails the job on `Fail`);
//! * an endio worker waits for its transaction handle (`HandleReady`) and,
//!   in catch-up, for the end of its handle (`HandleReleased`); under the
//!   handle its ordered extent changes the file's tree items and queues
//!   delayed refs;
//! * an fsync waits for the ordered extents of its file before it logs
//!   (`btrfs_wait_ordered_range`; `Phase::SyncOrdered`);
//! * the flush model's actors wait for their work: ref runs take CPU time,
//!   `FLUSH_DELALLOC` states write back dirty pages through the flusher, a
//!   metadata chunk comes from the volume's allocator, and a commit is
//!   written by `commit` (tree blocks, then the superblocks); an fsync
//!   logs through `log_tree`.

pub(crate) mod commit;
mod log_tree;

use std::collections::VecDeque;

use iolab_flush::{
    Actor, Decision, End, FlushKind, FlushModel, FlushState, HandleId, HandleKind, JobId, Reserve,
    Start, TraceRecord,
};

use super::job::Phase;
use super::{Ev, World};
use crate::block::Policy;
use crate::cache::PageState;
use crate::fs::PAGE;
use crate::fs::btrfs::{
    ExtentRefs, FINISH_CPU_NS, InodeRsv, OrderedSpan, RsvRule, RsvScheme, SAMPLE_NS,
    runs_delta_on_dirty, runs_delta_on_writeback,
};
use crate::time::Ns;

/// Time a flush state takes when this model has no work for it: a join
/// and end of a transaction, or a ref run that finds no head *(assumed:
/// 10 µs)*. Never zero, so a worker that finds nothing still lets time
/// advance.
const NOOP_STATE_NS: Ns = 10_000;
/// One jiffy: `shrink_delalloc` sleeps `schedule_timeout_killable(1)`
/// after starting writeback when it does not wait for ordered extents
/// (HZ = 1000, x86_64's defconfig).
const JIFFY_NS: Ns = 1_000_000;
/// `shrink_delalloc` starts writeback at most this many times per call.
const DELALLOC_LOOPS: u8 = 3;

/// A flush job inside `shrink_delalloc` (kernel: one call of it from
/// `flush_space`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct DelallocJob {
    pub job: JobId,
    /// The preemptive worker's call: one writeback start, no waiting.
    pub preempt: bool,
    /// Wait for ordered extents after each start (else sleep a jiffy).
    pub wait_ordered: bool,
    /// Bytes of delalloc to write back per start.
    pub to_reclaim: u64,
    /// Ordered extents to wait for per start (`items` in the kernel).
    pub items: u64,
    /// Writeback starts so far.
    pub loops: u8,
    /// The `ordered_done` count that ends an ordered wait.
    pub until_done: u64,
    /// Waiting on ordered extents (not yet woken).
    pub waiting: bool,
}

/// One ordered extent waiting for (or in) an endio worker.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ordered {
    pub file: u32,
    pub first: u32,
    pub count: u32,
    /// An O_DIRECT write's: not delalloc and reserved nothing, so its
    /// end changes no inode counter.
    pub direct: bool,
}

/// An fsync waiting for its file's ordered extents.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OrderedWait {
    pub ctx: u32,
    pub file: u32,
    /// The file's finished count that ends the wait.
    pub until: u64,
}

/// What an endio worker is doing.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Worker {
    Idle,
    /// Spending `FINISH_CPU_NS` on the extent.
    Cpu(Ordered),
    /// Waiting for its handle to join the transaction.
    WaitStart(HandleId, Ordered),
    /// Waiting for its handle's end (catch-up).
    WaitEnd(HandleId, Ordered),
}

/// A write waiting for its ticket.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PendingWrite {
    pub file: u32,
    pub offset: u64,
    pub len: u64,
    pub bytes: u64,
}

/// Counters and series for the report.
#[derive(Debug, Default)]
pub(crate) struct BtrfsStats {
    pub reservations: u64,
    pub tickets: u64,
    /// Tickets that ended in a failure (ENOSPC, abort).
    pub tickets_failed: u64,
    pub ticket_wait_ns: crate::stats::LatAcc,
    pub enospc: u64,
    pub commits: u64,
    pub commit_meta_bytes: u64,
    pub refs_run: u64,
    /// Refs run per actor: catch-up ref worker, reclaim worker, preemptive
    /// worker, committer, priority reservers.
    pub refs_by_actor: [u64; 5],
    pub ordered_done: u64,
    /// O_DIRECT writes started, and their ordered extents finished.
    pub direct_writes: u64,
    pub direct_ordered_done: u64,
    pub handle_waits: u64,
    /// fs-tree leaves metadata calls COWed.
    pub meta_tree_cows: u64,
    /// Since when the running transaction is `Blocked` (catch-up).
    pub blocked_since: Option<Ns>,
    /// Time transactions spent `Blocked` until their commit unblocked.
    pub blocked_ns: u64,
    /// Commits started and not done: (txn, start).
    pub commit_started: Option<(u64, Ns)>,
    /// Durations of finished commits, start to superblock.
    pub commit_ns: Vec<u64>,
    /// Flush states entered (kernel: `btrfs_flush_space` records), by
    /// state and whether the preemptive flusher ran it.
    pub flush_space: std::collections::BTreeMap<(FlushState, bool), u64>,
    /// (ms, may_use, delayed_refs size, delayed_refs reserved, normal
    /// tickets waiting, commits so far, dirty pages)
    pub series: Vec<[u64; 7]>,
    /// Tickets granted so far.
    pub tickets_granted: u64,
    /// Flush states entered so far, at [`flush_slot`].
    pub flush_calls: [u64; FLUSH_SLOTS],
    /// Sampled with `series`: ms, tickets queued and granted so far, then
    /// `flush_calls`.
    pub flush_series: Vec<[u64; 3 + FLUSH_SLOTS]>,
}

/// A counter per flush state and flusher (the reclaim worker or a
/// reserver, and the preemptive worker).
pub(crate) const FLUSH_SLOTS: usize = 2 * FlushState::ALL.len();

/// Where `state` entered by the preemptive worker (`preempt`) or not is
/// counted in [`BtrfsStats::flush_calls`]: the kernel's order, each state's
/// two counters side by side.
fn flush_slot(state: FlushState, preempt: bool) -> usize {
    let i = FlushState::ALL
        .iter()
        .position(|&s| s == state)
        .unwrap_or(0);
    2 * i + usize::from(preempt)
}

/// The btrfs flush state of a run.
pub(crate) struct BtrfsState {
    pub model: FlushModel,
    pub policy_name: String,
    /// How writes reserve metadata (units `U`, `M` and the era's scheme).
    pub rule: RsvRule,
    pub inodes: Vec<InodeRsv>,
    /// What ordered extents queue as delayed refs.
    pub refs: ExtentRefs,
    pub ordered: VecDeque<Ordered>,
    pub workers: Vec<Worker>,
    pub timer: Option<Ns>,
    pub pending: Vec<Option<PendingWrite>>,
    /// Flush jobs inside `shrink_delalloc`.
    pub delalloc_jobs: Vec<DelallocJob>,
    /// Ordered extents started (writeback bios) and not yet finished.
    pub oe_outstanding: u64,
    /// Their pages (the kernel's `ordered_bytes` / 4 KiB).
    pub ordered_pages: u64,
    /// Ref batches started: a preallocated extent's head made before the
    /// last batch may have been run and deleted (`ExtentRefs` epochs).
    pub ref_batches: u64,
    /// The flush model's deadline the pending `FsTimer` serves, and when
    /// that event fires.
    pub timer_at: Option<Ns>,
    /// Buffered ordered extents finished, per file.
    pub finished_by_file: Vec<u64>,
    /// fsyncs waiting for their file's ordered extents.
    pub ordered_waits: Vec<OrderedWait>,
    /// Metadata engines' calls waiting on their handles.
    pub meta_waits: Vec<super::meta::MetaWait>,
    /// The fs-tree leaves metadata calls COWed in the running transaction.
    pub meta_leaves: crate::fs::meta::LeafCows,
    pub pumping: bool,
    pub stats: BtrfsStats,
}

impl BtrfsState {
    /// A fresh state: one inode per file of `file_pages[i]` pages, `ctxs` writer contexts, `workers`
    /// endio workers, writes reserving by `scheme`.
    pub(crate) fn new(
        model: FlushModel,
        policy_name: String,
        file_pages: &[u32],
        ctxs: usize,
        workers: u32,
        scheme: RsvScheme,
    ) -> BtrfsState {
        let params = model.params();
        let rule = RsvRule {
            u: params.insert_unit(),
            m: params.nodesize * 8,
            scheme,
        };
        BtrfsState {
            model,
            policy_name,
            rule,
            inodes: vec![InodeRsv::default(); file_pages.len()],
            refs: ExtentRefs::new(file_pages),
            ordered: VecDeque::with_capacity(256),
            workers: vec![Worker::Idle; workers as usize],
            timer: None,
            pending: vec![None; ctxs],
            delalloc_jobs: Vec::with_capacity(4),
            oe_outstanding: 0,
            ordered_pages: 0,
            ref_batches: 0,
            timer_at: None,
            finished_by_file: vec![0; file_pages.len()],
            ordered_waits: Vec::with_capacity(ctxs),
            meta_waits: Vec::with_capacity(ctxs),
            meta_leaves: crate::fs::meta::LeafCows::default(),
            pumping: false,
            stats: BtrfsStats::default(),
        }
    }

    /// Reserve of `file` (files are numbered densely).
    fn inode(&mut self, file: u32) -> &mut InodeRsv {
        &mut self.inodes[file as usize]
    }
}

impl<P: Policy> World<P> {
    /// Reserves metadata for a buffered write of `len` bytes at `offset`
    /// of `file` by context `c`. True: go on and dirty the pages now.
    /// False: the context sleeps on a ticket (or its job failed).
    pub(crate) fn btrfs_reserve_write(
        &mut self,
        now: Ns,
        c: u32,
        file: u32,
        offset: u64,
        len: u64,
    ) -> bool {
        let Some(fs) = self.btrfs.as_mut() else {
            return true;
        };
        // One contiguous write adds at most one outstanding extent.
        let p0 = (offset / PAGE) as u32;
        let p1 = (offset + len).div_ceil(PAGE) as u32;
        let b = self.cache.bits(file);
        let clean = (p0..p1).any(|p| !b.get(PageState::Dirty, p));
        let pages = u64::from(p1 - p0);
        let bytes = fs
            .rule
            .write_reservation(&fs.inodes[file as usize], clean, pages);
        fs.stats.reservations += 1;
        if bytes == 0 {
            // The inode's reserve already covers the write.
            return true;
        }
        let owner = u64::from(c);
        let proceed = match fs.model.on_reserve(now, owner, bytes, FlushKind::FlushAll) {
            Ok(Reserve::Granted) => {
                fs.inode(file).held += bytes;
                true
            }
            Ok(Reserve::Queued(_)) => {
                fs.stats.tickets += 1;
                fs.pending[c as usize] = Some(PendingWrite {
                    file,
                    offset,
                    len,
                    bytes,
                });
                self.ctxs[c as usize].phase = Phase::Reserve;
                false
            }
            Ok(Reserve::Failed(_)) | Err(_) => {
                fs.stats.enospc += 1;
                self.btrfs_write_failed(now, c);
                false
            }
        };
        self.btrfs_pump(now);
        proceed
    }

    /// Context `c` starts an O_DIRECT write of `len` bytes at `offset` of
    /// `file`: one ordered extent, finished once every copy of every bio
    /// is down. It reserves no metadata: `btrfs_dio_iomap_begin`'s
    /// reservation is not modelled yet, so direct writes' delayed refs
    /// wait for a commit or another reserver's flushing.
    pub(crate) fn btrfs_note_direct_write(&mut self, c: u32, file: u32, offset: u64, len: u64) {
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        fs.stats.direct_writes += 1;
        let first = (offset / PAGE) as u32;
        let count = ((offset + len).div_ceil(PAGE) - offset / PAGE) as u32;
        self.ctxs[c as usize].direct_ordered = Some(Ordered {
            file,
            first,
            count,
            direct: true,
        });
    }

    /// A page of `file` is about to be dirtied: count its delalloc run and
    /// its checksum.
    pub(crate) fn btrfs_on_dirty(&mut self, file: u32, p: u32) {
        if self.btrfs.is_none() {
            return;
        }
        let pages = self.files[file as usize].pages;
        let b = self.cache.bits(file);
        // Already dirty, so already in a run: a page redirtied while its
        // writeback is in flight counts as delalloc (the kernel's write
        // would have waited for that writeback; the model does not).
        if b.get(PageState::Dirty, p) {
            return;
        }
        let left = p > 0 && b.get(PageState::Dirty, p - 1);
        let right = p + 1 < pages && b.get(PageState::Dirty, p + 1);
        let fs = self.btrfs.as_mut().expect("checked above");
        let r = fs.inode(file);
        r.runs = r
            .runs
            .saturating_add_signed(runs_delta_on_dirty(left, right));
        r.csum_pages += 1;
    }

    /// The write's pages are dirty: shrink the inode's reserve to what its
    /// extents now need.
    pub(crate) fn btrfs_after_write(&mut self, now: Ns, file: u32) {
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        let rule = fs.rule;
        let r = fs.inode(file);
        let excess = rule.excess(r);
        r.held -= excess;
        if excess > 0 {
            let _ = fs.model.on_release(now, excess);
        }
        fs.model
            .on_writeback(now, self.cache.nr_dirty * PAGE, fs.ordered_pages * PAGE);
        self.btrfs_pump(now);
    }

    /// Pages `[first, first + count)` of `file` leave delalloc for
    /// writeback; `left`/`right` say whether their neighbours stay
    /// delalloc. The bio is one ordered extent.
    pub(crate) fn btrfs_on_writeback(&mut self, file: u32, count: u32, left: bool, right: bool) {
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        let r = fs.inode(file);
        r.runs = r
            .runs
            .saturating_add_signed(runs_delta_on_writeback(left, right));
        r.ordered += 1;
        fs.oe_outstanding += 1;
        fs.ordered_pages += u64::from(count);
    }

    /// A writeback bio completed (its last copy): its ordered extent goes
    /// to the workers.
    pub(crate) fn btrfs_on_written(&mut self, now: Ns, file: u32, first: u32, count: u32) {
        let oe = Ordered {
            file,
            first,
            count,
            direct: false,
        };
        self.btrfs_queue_ordered(now, oe);
    }

    /// An O_DIRECT write completed on every copy: its ordered extent goes
    /// to the workers (`btrfs_dio_end_io` → `btrfs_finish_ordered_extent`).
    pub(crate) fn btrfs_on_written_direct(&mut self, now: Ns, oe: Ordered) {
        debug_assert!(oe.direct);
        self.btrfs_queue_ordered(now, oe);
    }

    fn btrfs_queue_ordered(&mut self, now: Ns, oe: Ordered) {
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        fs.ordered.push_back(oe);
        self.btrfs_kick(now);
    }

    /// Context `c`'s fsync of `file` has its data down: true if it may
    /// log now, else it waits (`Phase::SyncOrdered`) for the ordered
    /// extents the file has now (`btrfs_wait_ordered_range`).
    pub(crate) fn btrfs_ordered_settled(&mut self, c: u32, file: u32) -> bool {
        let Some(fs) = self.btrfs.as_mut() else {
            return true;
        };
        let outstanding = fs.inodes[file as usize].ordered;
        if outstanding == 0 {
            return true;
        }
        let until = fs.finished_by_file[file as usize] + outstanding;
        fs.ordered_waits.push(OrderedWait {
            ctx: c,
            file,
            until,
        });
        self.ctxs[c as usize].phase = Phase::SyncOrdered;
        false
    }

    /// Idle endio workers take ordered extents.
    fn btrfs_kick(&mut self, now: Ns) {
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        for w in 0..fs.workers.len() {
            if !matches!(fs.workers[w], Worker::Idle) {
                continue;
            }
            let Some(oe) = fs.ordered.pop_front() else {
                break;
            };
            fs.workers[w] = Worker::Cpu(oe);
            self.q
                .push(now + FINISH_CPU_NS, Ev::OeCpu { worker: w as u32 });
        }
    }

    /// Worker `w` finished its CPU work: join the transaction.
    pub(crate) fn btrfs_on_oe_cpu(&mut self, now: Ns, w: u32) {
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        let Worker::Cpu(oe) = fs.workers[w as usize] else {
            debug_assert!(false, "worker {w} woke without work");
            return;
        };
        match fs.model.on_handle_start(now, HandleKind::Join, 0) {
            Ok(Start::Ready(h)) => self.btrfs_oe_refs(now, w, h, oe),
            Ok(Start::Wait { handle, .. }) => {
                fs.stats.handle_waits += 1;
                fs.workers[w as usize] = Worker::WaitStart(handle, oe);
            }
            Ok(Start::Failed(_) | Start::NoTransaction) | Err(_) => {
                self.btrfs_oe_finish(now, w, oe);
            }
        }
        self.btrfs_pump(now);
    }

    /// Queue the refs of ordered extent `oe` on handle `h` and end it.
    fn btrfs_oe_refs(&mut self, now: Ns, w: u32, h: HandleId, oe: Ordered) {
        let txn = self
            .btrfs
            .as_ref()
            .and_then(|fs| fs.model.txn_id())
            .unwrap_or(0);
        let f = &mut self.files[oe.file as usize];
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        let span = OrderedSpan {
            file: oe.file,
            pages: f.pages,
            first: oe.first,
            count: oe.count,
        };
        let batch = fs
            .refs
            .on_ordered(span, f.written.as_mut(), txn, fs.ref_batches);
        let _ = fs.model.on_refs_added(now, h, batch);
        // Under the handle, the extent's items change in the running
        // transaction (`btrfs_finish_ordered_io`): the commit writes them.
        self.txn_on_written(oe.file, oe.count);
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        match fs.model.on_handle_end(now, h, false) {
            Ok(End::Wait(h)) => {
                fs.stats.handle_waits += 1;
                fs.workers[w as usize] = Worker::WaitEnd(h, oe);
            }
            Ok(End::Done) | Err(_) => self.btrfs_oe_finish(now, w, oe),
        }
    }

    /// Ordered extent `oe` is finished: its extent and checksums leave the
    /// inode's reserve.
    fn btrfs_oe_finish(&mut self, now: Ns, w: u32, oe: Ordered) {
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        fs.workers[w as usize] = Worker::Idle;
        if oe.direct {
            fs.stats.direct_ordered_done += 1;
            self.btrfs_kick(now);
            return;
        }
        let rule = fs.rule;
        let r = fs.inode(oe.file);
        r.ordered = r.ordered.saturating_sub(1);
        r.csum_pages = r.csum_pages.saturating_sub(u64::from(oe.count));
        let excess = rule.excess(r);
        r.held -= excess;
        if excess > 0 {
            let _ = fs.model.on_release(now, excess);
        }
        fs.stats.ordered_done += 1;
        fs.oe_outstanding = fs.oe_outstanding.saturating_sub(1);
        fs.ordered_pages = fs.ordered_pages.saturating_sub(u64::from(oe.count));
        fs.finished_by_file[oe.file as usize] += 1;
        self.btrfs_wake_ordered_waits(now, oe.file);
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        fs.model
            .on_writeback(now, self.cache.nr_dirty * PAGE, fs.ordered_pages * PAGE);
        self.btrfs_delalloc_check(now);
        self.btrfs_kick(now);
    }

    /// The fsyncs of `file` whose ordered extents are all finished go on
    /// to log, the longest waiting first.
    fn btrfs_wake_ordered_waits(&mut self, now: Ns, file: u32) {
        loop {
            let Some(fs) = self.btrfs.as_mut() else {
                return;
            };
            let done = fs.finished_by_file[file as usize];
            let Some(i) = fs
                .ordered_waits
                .iter()
                .position(|w| w.file == file && done >= w.until)
            else {
                return;
            };
            let w = fs.ordered_waits.remove(i);
            debug_assert_eq!(self.ctxs[w.ctx as usize].phase, Phase::SyncOrdered);
            self.sync_log_now(now, w.ctx);
        }
    }

    /// A job's write could not be reserved (ENOSPC): the job ends with an
    /// error, as fio stops a job whose `write()` fails.
    fn btrfs_write_failed(&mut self, now: Ns, c: u32) {
        self.ctxs[c as usize].phase = Phase::Idle;
        self.ctx_finish(now, c);
    }

    /// Acts on every decision the flush model queued, in order.
    pub(crate) fn btrfs_pump(&mut self, now: Ns) {
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        if fs.pumping {
            return;
        }
        fs.pumping = true;
        loop {
            let Some(fs) = self.btrfs.as_mut() else {
                return;
            };
            let Some(d) = fs.model.poll_decision() else {
                break;
            };
            self.btrfs_decide(now, d);
        }
        let fs = self.btrfs.as_mut().expect("still btrfs");
        while let Some(rec) = fs.model.poll_trace() {
            match rec {
                TraceRecord::Flush { actor, state, .. } => {
                    let preempt = actor == Actor::Preempt;
                    *fs.stats.flush_space.entry((state, preempt)).or_default() += 1;
                    fs.stats.flush_calls[flush_slot(state, preempt)] += 1;
                }
                TraceRecord::ChunkAlloc { .. } => {
                    // The model counted a new chunk; the volume's allocator
                    // places it.
                    if let Some(raid) = self.raid.as_mut() {
                        raid.alloc_metadata_chunk();
                    }
                }
                TraceRecord::TicketGranted { waited_ns, .. } => {
                    fs.stats.tickets_granted += 1;
                    fs.stats.ticket_wait_ns.record(waited_ns);
                }
                TraceRecord::TxnBlocked { now, .. } => {
                    fs.stats.blocked_since.get_or_insert(now);
                }
                TraceRecord::CommitStart { now, txn, .. } => {
                    fs.stats.commit_started = Some((txn, now));
                }
                TraceRecord::CommitWriteOut { now, .. } => {
                    if let Some(since) = fs.stats.blocked_since.take() {
                        fs.stats.blocked_ns += now.saturating_sub(since);
                    }
                }
                TraceRecord::CommitDone { now, txn, .. } => {
                    fs.stats.commits += 1;
                    if let Some((t, start)) = fs.stats.commit_started
                        && t == txn
                    {
                        fs.stats.commit_started = None;
                        fs.stats.commit_ns.push(now.saturating_sub(start));
                    }
                }
                _ => {}
            }
        }
        fs.pumping = false;
        let next = fs.model.next_deadline();
        if next != fs.timer
            && let Some(at) = next
        {
            fs.timer = Some(at);
            fs.timer_at = Some(at.max(now));
            self.q.push(at.max(now), Ev::FsTimer);
        }
    }

    fn btrfs_decide(&mut self, now: Ns, d: Decision) {
        match d {
            Decision::Grant { owner, .. } => {
                let c = owner as u32;
                let fs = self.btrfs.as_mut().expect("btrfs");
                let Some(pw) = fs.pending[c as usize].take() else {
                    debug_assert!(false, "grant for context {c} without a write");
                    return;
                };
                fs.inode(pw.file).held += pw.bytes;
                self.buffered_write_pages(now, c, pw.file, pw.offset, pw.len);
            }
            Decision::Fail { owner, .. } => {
                let c = owner as u32;
                let fs = self.btrfs.as_mut().expect("btrfs");
                fs.pending[c as usize] = None;
                fs.stats.enospc += 1;
                fs.stats.tickets_failed += 1;
                self.btrfs_write_failed(now, c);
            }
            Decision::HandleReady { handle } => {
                if let Some((w, oe)) = self.btrfs_worker_waiting(handle, true) {
                    self.btrfs_oe_refs(now, w, handle, oe);
                } else if let Some(c) = self.btrfs_meta_waiting(handle, true) {
                    self.meta_in_handle(now, c, handle);
                }
            }
            Decision::HandleFailed { handle, .. } => {
                if let Some((w, oe)) = self.btrfs_worker_waiting(handle, true) {
                    self.btrfs_oe_finish(now, w, oe);
                } else if let Some(c) = self.btrfs_meta_waiting(handle, true) {
                    let fs = self.btrfs.as_mut().expect("btrfs");
                    fs.stats.enospc += 1;
                    fs.stats.tickets_failed += 1;
                    self.meta_failed(now, c);
                }
            }
            Decision::HandleReleased { handle } => {
                if let Some((w, oe)) = self.btrfs_worker_waiting(handle, false) {
                    self.btrfs_oe_finish(now, w, oe);
                } else if let Some(c) = self.btrfs_meta_waiting(handle, false) {
                    self.meta_cpu(now, c);
                }
            }
            Decision::RunRefs {
                job,
                actor,
                refs,
                cpu_ns,
                ..
            } => {
                let fs = self.btrfs.as_mut().expect("btrfs");
                fs.stats.refs_run += refs;
                if refs > 0 {
                    fs.ref_batches += 1;
                }
                let slot = match actor {
                    Actor::RefWorker => 0,
                    Actor::Reclaim => 1,
                    Actor::Preempt => 2,
                    Actor::Commit => 3,
                    Actor::Priority(_) => 4,
                };
                fs.stats.refs_by_actor[slot] += refs;
                // A run that finds no heads still costs a requeue.
                let cost = if refs == 0 { NOOP_STATE_NS } else { cpu_ns };
                self.q.push(now + cost, Ev::FsWork { job: job.0 });
            }
            Decision::Flush {
                job,
                actor,
                state,
                bytes,
            } => self.btrfs_flush_state(now, job, actor == Actor::Preempt, state, bytes),
            Decision::CommitIo { txn, meta_bytes } => self.commit_write_out(now, txn, meta_bytes),
        }
    }

    /// The worker waiting on `handle` to start (or to end).
    fn btrfs_worker_waiting(&mut self, handle: HandleId, start: bool) -> Option<(u32, Ordered)> {
        let fs = self.btrfs.as_mut()?;
        fs.workers.iter().enumerate().find_map(|(w, s)| match *s {
            Worker::WaitStart(h, oe) if start && h == handle => Some((w as u32, oe)),
            Worker::WaitEnd(h, oe) if !start && h == handle => Some((w as u32, oe)),
            _ => None,
        })
    }

    /// The caller's part of a flush state. The delalloc states follow
    /// `shrink_delalloc`: write back at least an eighth of the delalloc
    /// bytes, then wait for `2 × to_reclaim / U` ordered extents (the
    /// `_WAIT` and `_FULL` states, or when more is in flight than dirty) or
    /// sleep a jiffy; up to three times while tickets wait, once for the
    /// preemptive worker. The other states have no work in this model.
    fn btrfs_flush_state(
        &mut self,
        now: Ns,
        job: JobId,
        preempt: bool,
        state: FlushState,
        bytes: u64,
    ) {
        let delalloc = self.cache.nr_dirty * PAGE;
        let fs = self.btrfs.as_mut().expect("btrfs");
        let ordered_bytes = fs.ordered_pages * PAGE;
        let is_delalloc = matches!(
            state,
            FlushState::Delalloc | FlushState::DelallocWait | FlushState::DelallocFull
        );
        if !is_delalloc || (delalloc == 0 && ordered_bytes == 0) {
            // Nothing to write back: the work item returns after one
            // requeue of the kworker, not in zero time (a worker that finds
            // nothing would otherwise spin at one instant).
            self.q.push(now + NOOP_STATE_NS, Ev::FsWork { job: job.0 });
            return;
        }
        let to_reclaim = if state == FlushState::DelallocFull {
            u64::MAX
        } else {
            bytes.max(delalloc >> 3)
        };
        let items = if to_reclaim == u64::MAX {
            u64::MAX
        } else {
            (to_reclaim / fs.rule.u).max(1) * 2
        };
        // More in flight than dirty: waiting on it is what frees space.
        let wait_ordered = state != FlushState::Delalloc || (ordered_bytes > delalloc && !preempt);
        let dj = DelallocJob {
            job,
            preempt,
            wait_ordered,
            to_reclaim,
            items,
            loops: 0,
            until_done: 0,
            waiting: false,
        };
        self.btrfs_delalloc_start(now, dj);
    }

    /// One writeback start of a `shrink_delalloc` job, then its wait.
    fn btrfs_delalloc_start(&mut self, now: Ns, mut dj: DelallocJob) {
        let dirty = self.cache.nr_dirty;
        let pages = (dj.to_reclaim.min(dirty * PAGE) / PAGE).min(dirty);
        if pages > 0 {
            // `btrfs_start_delalloc_roots(nr_pages)` writes what is dirty
            // now; a later call does not add to an earlier one's debt.
            self.flusher.forced = (self.flusher.forced + pages).min(dirty);
            self.flusher_wake(now);
        }
        let fs = self.btrfs.as_mut().expect("btrfs");
        dj.loops += 1;
        if dj.wait_ordered {
            // `btrfs_wait_ordered_roots(items)`: the first `items` ordered
            // extents in flight, counting the ones just started: one per
            // delalloc run written (pages over the mean run length).
            let runs: u64 = fs.inodes.iter().map(|r| r.runs).sum();
            let new_extents = if dirty == 0 {
                0
            } else {
                (pages * runs.max(1)).div_ceil(dirty)
            };
            let wait = dj.items.min(fs.oe_outstanding + new_extents);
            dj.until_done = fs.stats.ordered_done + wait;
            dj.waiting = true;
            fs.delalloc_jobs.push(dj);
            self.btrfs_delalloc_check(now);
        } else {
            fs.delalloc_jobs.push(dj);
            self.q
                .push(now + JIFFY_NS, Ev::FsDelalloc { job: dj.job.0 });
        }
    }

    /// Ends the ordered-extent waits that are over.
    fn btrfs_delalloc_check(&mut self, now: Ns) {
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        let done = fs.stats.ordered_done;
        let idle = fs.oe_outstanding == 0 && (self.flusher.forced == 0 || self.cache.nr_dirty == 0);
        for dj in &mut fs.delalloc_jobs {
            if dj.waiting && (done >= dj.until_done || idle) {
                dj.waiting = false;
                self.q.push(now, Ev::FsDelalloc { job: dj.job.0 });
            }
        }
    }

    /// A `shrink_delalloc` job's wait (a jiffy or its ordered extents) is
    /// over: start writeback again or return to the flush model.
    pub(crate) fn btrfs_on_delalloc(&mut self, now: Ns, job: u64) {
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        let Some(i) = fs.delalloc_jobs.iter().position(|d| d.job.0 == job) else {
            debug_assert!(false, "delalloc wake for unknown job {job}");
            return;
        };
        let dj = fs.delalloc_jobs.swap_remove(i);
        debug_assert!(!dj.waiting);
        let tickets = fs.model.tickets_waiting();
        let more = self.cache.nr_dirty > 0 || fs.oe_outstanding > 0;
        if dj.preempt || tickets == 0 || dj.loops >= DELALLOC_LOOPS || !more {
            let _ = fs.model.on_work_done(now, dj.job);
            self.btrfs_pump(now);
        } else {
            self.btrfs_delalloc_start(now, dj);
        }
    }
    /// The transaction `txn`'s commit is durable (its last superblock is
    /// down).
    pub(crate) fn btrfs_on_commit_done(&mut self, now: Ns, txn: u64) {
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        let _ = fs.model.on_commit_done(now, txn);
        self.btrfs_pump(now);
    }

    /// A flush-model job's time is up.
    pub(crate) fn btrfs_on_work(&mut self, now: Ns, job: u64) {
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        let _ = fs.model.on_work_done(now, JobId(job));
        self.btrfs_pump(now);
    }

    /// The flush model's deadline.
    pub(crate) fn btrfs_on_timer(&mut self, now: Ns) {
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        if fs.timer_at != Some(now) {
            return; // stale
        }
        fs.timer = None;
        fs.timer_at = None;
        fs.model.on_timer(now);
        self.btrfs_pump(now);
    }

    /// Starts the once-a-second samples of the series.
    pub(crate) fn btrfs_start(&mut self) {
        if self.btrfs.is_some() {
            self.q.push(SAMPLE_NS, Ev::FsSample);
        }
    }

    /// Samples the series once a second while jobs run.
    pub(crate) fn btrfs_on_sample(&mut self, now: Ns) {
        let dirty = self.cache.nr_dirty;
        if self.raid.is_some() {
            let mut row = Vec::with_capacity(self.devs.len() + 1);
            row.push(now / 1_000_000);
            row.extend(self.devs.iter().map(|d| d.part.mirror_reads));
            self.mirror_reads_series.push(row);
        }
        let Some(fs) = self.btrfs.as_mut() else {
            return;
        };
        let s = fs.model.snapshot();
        fs.stats.series.push([
            now / 1_000_000,
            s.space.may_use,
            s.delayed_refs.size,
            s.delayed_refs.reserved,
            s.normal_tickets as u64,
            fs.stats.commits,
            dirty,
        ]);
        let mut row = [0; 3 + FLUSH_SLOTS];
        row[..3].copy_from_slice(&[now / 1_000_000, fs.stats.tickets, fs.stats.tickets_granted]);
        row[3..].copy_from_slice(&fs.stats.flush_calls);
        fs.stats.flush_series.push(row);
        if !self.stop {
            self.q.push(now + SAMPLE_NS, Ev::FsSample);
        }
    }

    /// The report's `btrfs` object.
    pub(crate) fn btrfs_report(&self) -> serde_json::Value {
        let Some(fs) = self.btrfs.as_ref() else {
            return serde_json::Value::Null;
        };
        let waits = &fs.stats.ticket_wait_ns;
        let pct = |q: f64| -> u64 { waits.hist.as_ref().map_or(0, |h| h.value_at_quantile(q)) };
        // The flush series' columns: its slot and name, the flush states
        // only where entered at all.
        let mut flush_columns: Vec<(usize, String)> = ["ms", "tickets_queued", "tickets_granted"]
            .iter()
            .enumerate()
            .map(|(k, &n)| (k, n.to_owned()))
            .collect();
        for state in FlushState::ALL {
            for preempt in [false, true] {
                let slot = flush_slot(state, preempt);
                if fs.stats.flush_calls[slot] > 0 {
                    let who = if preempt { "preempt " } else { "" };
                    flush_columns.push((3 + slot, format!("{who}{}", state.kernel_name())));
                }
            }
        }
        // Ticket waits per bucket: up to 100 µs, 1 ms, 10 ms, 100 ms, 1 s,
        // and above.
        let edges = [
            100_000u64,
            1_000_000,
            10_000_000,
            100_000_000,
            1_000_000_000,
        ];
        let mut buckets = Vec::with_capacity(edges.len() + 1);
        let mut below = 0;
        for &e in &edges {
            let upto = waits.hist.as_ref().map_or(0, |h| h.count_between(0, e));
            buckets.push(upto - below);
            below = upto;
        }
        buckets.push(waits.n - below);
        let s = fs.model.snapshot();
        // The inodes' bookkeeping beside what the page bits and the model
        // say it should be: delalloc runs counted from the bits, bytes
        // held against the model's outstanding grants.
        let mut runs_by_bits = 0u64;
        for (file, f) in self.files.iter().enumerate() {
            let Some(b) = self.cache.bits_ref(file as u32) else {
                continue;
            };
            let mut prev = false;
            for p in 0..f.pages {
                let d = b.get(PageState::Dirty, p);
                if d && !prev {
                    runs_by_bits += 1;
                }
                prev = d;
            }
        }
        let accounting = serde_json::json!({
            "held": fs.inodes.iter().map(|r| r.held).sum::<u64>(),
            "grants": s.grants,
            "runs": fs.inodes.iter().map(|r| r.runs).sum::<u64>(),
            "runs_by_bits": runs_by_bits,
            "ordered_extents": fs.oe_outstanding,
            "ordered_by_inodes": fs.inodes.iter().map(|r| r.ordered).sum::<u64>(),
        });
        serde_json::json!({
            "flush_policy": fs.policy_name,
            "accounting": accounting,
            "reservations": fs.stats.reservations,
            "tickets": fs.stats.tickets,
            "tickets_failed": fs.stats.tickets_failed,
            "ticket_wait_ns": {
                "n": waits.n,
                "p50": pct(0.5), "p90": pct(0.9), "p99": pct(0.99), "p999": pct(0.999),
                "max": waits.max,
                "buckets_le_ns": edges,
                "buckets": buckets,
            },
            "enospc": fs.stats.enospc,
            "commits": fs.stats.commits,
            "commit_ms": {
                "mean": if fs.stats.commit_ns.is_empty() { 0.0 } else {
                    fs.stats.commit_ns.iter().sum::<u64>() as f64 / fs.stats.commit_ns.len() as f64 / 1e6
                },
                "max": fs.stats.commit_ns.iter().max().copied().unwrap_or(0) as f64 / 1e6,
            },
            "blocked_ms": (fs.stats.blocked_ns
                + fs.stats.blocked_since.map_or(0, |since| s.now.saturating_sub(since)))
                as f64
                / 1e6,
            "commit_meta_bytes": fs.stats.commit_meta_bytes,
            "refs_run": fs.stats.refs_run,
            "tree_cows": fs.refs.tree_cows,
            // As the kernel's `btrfs_flush_space` records count them, for
            // the one space modelled (metadata).
            "flush_space": fs.stats.flush_space.iter().map(|(&(state, preempt), &n)| serde_json::json!({
                "state": state.kernel_name(),
                "number": state.kernel_number(),
                "preempt": preempt,
                "calls": n,
            })).collect::<Vec<_>>(),
            "refs_run_by": {
                "ref_worker": fs.stats.refs_by_actor[0],
                "reclaim": fs.stats.refs_by_actor[1],
                "preempt": fs.stats.refs_by_actor[2],
                "commit": fs.stats.refs_by_actor[3],
                "priority": fs.stats.refs_by_actor[4],
            },
            "ordered_extents": fs.stats.ordered_done,
            "direct_writes": fs.stats.direct_writes,
            "direct_ordered_extents": fs.stats.direct_ordered_done,
            "handle_waits": fs.stats.handle_waits,
            "meta_tree_cows": fs.stats.meta_tree_cows,
            "final": {
                "total": s.space.total,
                "unallocated": s.space.unallocated,
                "pinned": s.space.pinned,
                "may_use": s.space.may_use,
                "delayed_refs_size": s.delayed_refs.size,
                "delayed_refs_reserved": s.delayed_refs.reserved,
                "normal_tickets": s.normal_tickets,
            },
            "series_columns": ["ms", "may_use", "delayed_refs_size", "delayed_refs_reserved", "tickets_waiting", "commits", "dirty_pages"],
            "series": fs.stats.series,
            "flush_series_columns": flush_columns.iter().map(|(_, name)| name).collect::<Vec<_>>(),
            "flush_series": fs.stats.flush_series.iter().map(|row| {
                flush_columns.iter().map(|(k, _)| row[*k]).collect::<Vec<_>>()
            }).collect::<Vec<_>>(),
        })
    }
}
