//! Buffered IO through the page cache: reads with readahead, writes with
//! `balance_dirty_pages`, the flusher, and the writeback half of `fsync`.

use super::job::{COPY_NS_PER_PAGE, OpKind, Phase};
use super::{Actor, World};
use crate::block::Policy;
use crate::block::request::{Bio, Flags, NIL, Op, Origin, Payload};
use crate::cache::PageState;
use crate::cache::dirty::{BdpMode, DIRTY_EXPIRE_NS};
use crate::cache::pacing::{self, JIFFY_NS, Pass, Rates};
use crate::cache::wb::{self, Position};
use crate::fs::PAGE;
use crate::fs::btrfs::volume::MapChunk;
use crate::time::Ns;
use crate::workload::{Dir, Fadvise};
use std::collections::VecDeque;

/// Pages per bio at most.
const MAX_BIO_PAGES: u32 = (super::job::MAX_BIO_BYTES / PAGE) as u32;
/// Pages after which a task is called back while the device is
/// `dirty_exceeded` (`32 >> (PAGE_SHIFT - 10)`).
const DIRTY_EXCEEDED_PAGES: u32 = 8;
/// Default readahead window (`read_ahead_kb` 128 KiB).
const RA_PAGES: u32 = 32;

impl<P: Policy> World<P> {
    /// Where page `p` of `file` lives: device, byte offset (of the first
    /// copy on a mirrored volume), how many pages from `p` on stay
    /// contiguous there, and on a mirrored chunk the chunk and the page's
    /// byte offset into it (for the other copies). On a volume the file's
    /// offsets are logical and the chunk map places them.
    pub(crate) fn page_location(
        &self,
        file: u32,
        p: u32,
    ) -> (u16, u64, u32, Option<(MapChunk, u64)>) {
        match self.page_chunk(file, p) {
            None => {
                let f = &self.files[file as usize];
                (f.dev, f.page_offset(p), u32::MAX, None)
            }
            Some((chunk, delta, room)) => {
                let (dev, physical) = chunk.stripes[0];
                let mirror = (chunk.copies > 1).then_some((chunk, delta));
                (dev, physical + delta, room, mirror)
            }
        }
    }

    /// On a volume: the chunk holding page `p` of `file`, the page's byte
    /// offset into it, and how many pages from `p` on stay inside it.
    fn page_chunk(&self, file: u32, p: u32) -> Option<(MapChunk, u64, u32)> {
        let raid = self.raid.as_ref()?;
        let logical = self.files[file as usize].page_offset(p);
        let Some((chunk, left)) = raid.map(logical) else {
            debug_assert!(false, "the layout keeps files inside the volume");
            return None;
        };
        let room = u32::try_from(left / PAGE).unwrap_or(u32::MAX).max(1);
        Some((*chunk, logical - chunk.logical, room))
    }

    /// Queues reads for the absent pages of `[start, start + count)`.
    fn queue_reads(
        &mut self,
        c: u32,
        file: u32,
        start: u32,
        count: u32,
        flags: Flags,
        mark: Option<u32>,
    ) {
        let j = self.ctxs[c as usize].job;
        let cgroup = self.jobs[j as usize].plan.cgroup;
        let (pages, split) = {
            let f = &self.files[file as usize];
            (f.pages, f.place.split)
        };
        let end = (start + count).min(pages);
        if let Some(m) = mark
            && m < end
        {
            self.cache.bits(file).set(PageState::Marker, m);
        }
        let mut p = start;
        while p < end {
            let b = self.cache.bits(file);
            if b.get(PageState::Cached, p) || b.get(PageState::Reading, p) {
                p += 1;
                continue;
            }
            let (mut dev, mut offset, room, mirror) = self.page_location(file, p);
            let b = self.cache.bits(file);
            let mut q = p;
            while q < end
                && q - p < MAX_BIO_PAGES.min(room)
                && (q == p || q != split)
                && !b.get(PageState::Cached, q)
                && !b.get(PageState::Reading, q)
            {
                b.set(PageState::Reading, q);
                q += 1;
            }
            if let Some((chunk, delta)) = mirror {
                // A mirrored chunk: the read policy picks the copy.
                let k = self.mirror_read_copy(&chunk, j, u64::from(q - p) * PAGE);
                (dev, offset) = (chunk.stripes[k].0, chunk.stripes[k].1 + delta);
            }
            let bio = Bio {
                op: Op::Read,
                flags,
                dev,
                offset,
                len: u64::from(q - p) * PAGE,
                origin: Origin::Task(j),
                cgroup,
                payload: Payload::CacheRead {
                    file,
                    first: p,
                    count: q - p,
                },
            };
            self.ctxs[c as usize].queue.push_back((bio, false));
            p = q;
        }
    }

    /// A buffered `read()`.
    pub(crate) fn start_buffered_read(
        &mut self,
        now: Ns,
        c: u32,
        file: u32,
        fi: usize,
        offset: u64,
        len: u64,
    ) {
        let j = self.ctxs[c as usize].job as usize;
        let p0 = (offset / PAGE) as u32;
        let p1 = (offset + len).div_ceil(PAGE) as u32;
        let n = p1 - p0;
        let (max, random) = match self.jobs[j].plan.fadvise {
            Fadvise::Sequential => (2 * RA_PAGES, false),
            Fadvise::Random => (RA_PAGES, true),
            Fadvise::None => (RA_PAGES, false),
        };
        // The kernel walks the request page by page: the first page not in
        // the cache starts synchronous readahead from there; a page with
        // the readahead marker starts the next window asynchronously.
        let b = self.cache.bits(file);
        let absent =
            (p0..p1).find(|&p| !b.get(PageState::Cached, p) && !b.get(PageState::Reading, p));
        let marked = (p0..p1).find(|&p| b.get(PageState::Marker, p));
        if let Some(pa) = absent {
            let w = self.jobs[j].gens[fi].ra.on_miss(pa, p1 - pa, max, random);
            self.queue_reads(c, file, w.start, w.size.max(p1 - pa), Flags::SYNC, w.mark);
        }
        // The marker may have just been set inside the request by the sync
        // window (a request of `max` pages or more): that starts the next
        // window too.
        let marked =
            marked.or_else(|| (p0..p1).find(|&p| self.cache.bits(file).get(PageState::Marker, p)));
        if let Some(pm) = marked {
            self.cache.bits(file).clear(PageState::Marker, pm);
            let w = self.jobs[j].gens[fi].ra.on_marker(pm, p1 - pm, max);
            self.queue_reads(c, file, w.start, w.size, Flags::RAHEAD, w.mark);
        } else if absent.is_none() {
            self.jobs[j].gens[fi].ra.on_hit(p0, n);
        }
        // Pages past the window that are still absent are read too.
        self.queue_reads(c, file, p0, n, Flags::SYNC, None);
        let ctx = &mut self.ctxs[c as usize];
        ctx.op = OpKind::Io {
            dir: Dir::Read,
            bytes: len,
        };
        ctx.cpu_after = COPY_NS_PER_PAGE * u64::from(n);
        ctx.phase = super::job::Phase::Submit;
        self.ctx_pump_then_wait_pages(now, c, file, p0, p1);
    }

    /// Submits the read bios, then waits for every page of `[p0, p1)` that
    /// is still being read.
    fn ctx_pump_then_wait_pages(&mut self, now: Ns, c: u32, file: u32, p0: u32, p1: u32) {
        // Register waits on requests already in flight for these pages,
        // then let the pump submit our own (each of ours that covers a
        // needed page is waited for through `wait_pages` below).
        let mut q = std::mem::take(&mut self.ctxs[c as usize].queue);
        for (bio, wait) in q.iter_mut() {
            if let Payload::CacheRead { first, count, .. } = bio.payload
                && first < p1
                && first + count > p0
            {
                *wait = true;
            }
        }
        self.ctxs[c as usize].queue = q;
        self.wait_pages(c, file, p0, p1);
        self.ctx_pump(now, c);
    }

    /// Waits for in-flight reads (already requests) covering `[p0, p1)`.
    fn wait_pages(&mut self, c: u32, file: u32, p0: u32, p1: u32) {
        let mut i = 0;
        while i < self.files[file as usize].reads.len() {
            let rq = self.files[file as usize].reads[i];
            i += 1;
            if let Payload::CacheRead { first, count, .. } = self.rqs[rq].bio.payload
                && first < p1
                && first + count > p0
            {
                self.add_waiter(rq, c);
            }
        }
        for p in p0..p1 {
            if self.cache.bits(file).get(PageState::Cached, p) {
                self.cache.touch(file, p);
            }
        }
    }

    /// A buffered `write()`: dirty the pages, maybe get throttled.
    pub(crate) fn start_buffered_write(
        &mut self,
        now: Ns,
        c: u32,
        file: u32,
        offset: u64,
        len: u64,
    ) {
        // btrfs reserves metadata first; the context may sleep on a
        // ticket and dirty its pages when the ticket is granted.
        if !self.btrfs_reserve_write(now, c, file, offset, len) {
            return;
        }
        self.buffered_write_pages(now, c, file, offset, len);
    }

    /// The part of a buffered write after any reservation: dirty the pages,
    /// maybe pause in `balance_dirty_pages`, pay the copy.
    pub(crate) fn buffered_write_pages(
        &mut self,
        now: Ns,
        c: u32,
        file: u32,
        offset: u64,
        len: u64,
    ) {
        let j = self.ctxs[c as usize].job as usize;
        let p0 = (offset / PAGE) as u32;
        let p1 = (offset + len).div_ceil(PAGE) as u32;
        // Only pages newly dirtied count towards throttling, the task's
        // and the device's (`folio_account_dirtied`).
        let mut newly = 0;
        for p in p0..p1 {
            self.btrfs_on_dirty(file, p);
            newly += u32::from(self.cache.dirty(now, file, p));
        }
        self.btrfs_after_write(now, file);
        self.note_mtime(now, file);
        let n = p1 - p0;
        let mut cpu = COPY_NS_PER_PAGE * u64::from(n);
        self.jobs[j].dirtied += newly;
        self.bdp.wb.dirtied += u64::from(newly);
        let mut paused = false;
        // Over the limit the device calls every task back after 8 pages
        // (`balance_dirty_pages_ratelimited`).
        let mut ratelimit = self.jobs[j].pacing.nr_dirtied_pause;
        if self.bdp.wb.dirty_exceeded {
            ratelimit = ratelimit.min(DIRTY_EXCEEDED_PAGES);
        }
        if self.jobs[j].dirtied >= ratelimit {
            let pause = self.balance_dirty_pages(now, j);
            cpu += pause;
            paused = pause > 0;
        }
        let ctx = &mut self.ctxs[c as usize];
        ctx.dirty_paused = paused;
        ctx.op = OpKind::Io {
            dir: Dir::Write,
            bytes: len,
        };
        let at = now + cpu;
        self.ctx_timer(at, c, Phase::Cpu);
    }

    /// `balance_dirty_pages` for job `j`: returns the pause.
    fn balance_dirty_pages(&mut self, now: Ns, j: usize) -> Ns {
        let dirty = self.cache.dirty_and_writeback();
        if self.cache.nr_dirty > self.cache.limits.bg_thresh {
            self.flusher_wake(now);
        }
        let pages = self.jobs[j].dirtied;
        let limits = self.cache.limits;
        // Above the free-run line: where the count sits on the control
        // lines, whether the device is over its share, and (once an
        // interval has passed) new estimates, the rate limit's included.
        // The device's dirty pages are the machine's: one device.
        let mut pos_ratio = 0;
        if self.bdp.mode == BdpMode::Paced && dirty > limits.freerun {
            let w = &mut self.bdp.wb;
            let wb_thresh = w.wb_thresh(&limits);
            w.dirty_exceeded = dirty > wb_thresh && dirty > limits.thresh;
            pos_ratio = wb::wb_position_ratio(
                wb::ControlLine::of(&limits),
                dirty,
                dirty,
                wb_thresh,
                w.avg_write_bandwidth,
            );
            let now_j = now / JIFFY_NS;
            if w.due(now_j) {
                w.update(
                    now_j,
                    Some(Position {
                        dirty,
                        setpoint: limits.setpoint,
                        pos_ratio,
                    }),
                );
            }
        }
        let pause = match self.bdp.mode {
            BdpMode::Legacy => match limits.legacy_pause(dirty) {
                None => Pass::FreeRun,
                Some(p) => Pass::Sleep(p),
            },
            BdpMode::Paced => pacing::pass(
                &limits,
                now,
                &mut self.jobs[j].pacing,
                pages,
                dirty,
                Rates {
                    write_bw: self.bdp.wb.avg_write_bandwidth,
                    dirty_ratelimit: self.bdp.wb.dirty_ratelimit,
                    pos_ratio,
                },
            ),
        };
        match pause {
            Pass::FreeRun => {
                self.jobs[j].dirtied = 0;
                0
            }
            Pass::Skip { reset } => {
                if reset {
                    self.jobs[j].dirtied = 0;
                }
                self.bdp.unpaused += 1;
                0
            }
            Pass::Sleep(p) => {
                self.jobs[j].dirtied = 0;
                self.bdp.pause_lengths.record(p);
                self.policy.dirty_throttled(now);
                self.flusher_wake(now);
                p
            }
        }
    }

    /// Wakes the flusher if it is idle.
    pub(crate) fn flusher_wake(&mut self, now: Ns) {
        if !self.flusher.running {
            self.flusher.running = true;
            self.flusher_pump(now);
        }
    }

    /// The flusher's loop: background writeback above the background
    /// threshold, and expired inodes on the periodic timer.
    pub(crate) fn flusher_pump(&mut self, now: Ns) {
        loop {
            let background =
                self.cache.nr_dirty > self.cache.limits.bg_thresh || self.flusher.forced > 0;
            if !background && !self.flusher.kupdate {
                self.flusher_stop(now, false);
                return;
            }
            if self.flusher.cur.is_none() || self.flusher.slice_left == 0 {
                if let Some(f) = self.flusher.cur.take() {
                    self.requeue_dirty(f);
                    self.wb_writepages_end(now);
                }
                // A whole lap of the dirty list without a bio: every dirty
                // page is still under writeback. Sleep until some
                // writeback completes (the kernel waits on the inode).
                if self.flusher.fruitless > self.cache.dirty_list.len() {
                    self.flusher_stop(now, true);
                    return;
                }
                let Some(&f) = self.cache.dirty_list.front() else {
                    self.flusher.kupdate = false;
                    self.flusher_stop(now, false);
                    return;
                };
                let cf = &self.cache.files[f as usize];
                if cf.nr_dirty == 0 {
                    self.cache.dirty_list.pop_front();
                    self.cache.files[f as usize].on_dirty_list = false;
                    continue;
                }
                let expired = cf.dirtied_when.is_some_and(|t| t + DIRTY_EXPIRE_NS <= now);
                if !background && !expired {
                    self.flusher.kupdate = false;
                    self.flusher_stop(now, false);
                    return;
                }
                let wb_index = cf.wb_index;
                self.cache.dirty_list.pop_front();
                self.wb_writepages_start(now);
                self.flusher.cur = Some(f);
                self.flusher.cursor = wb_index;
                // Background and periodic writeback ask for all there is,
                // writeback a filesystem started for its own space
                // (`btrfs_start_delalloc_roots`) for the pages it named.
                // (The kernel's periodic writeback asks for the pages
                // dirty when it starts, `get_nr_dirty_pages`: a slice
                // differs only by pages dirtied while it runs.)
                let over = self.cache.nr_dirty > self.cache.limits.bg_thresh;
                let asked = if over || expired {
                    u64::MAX
                } else {
                    self.flusher.forced
                };
                let chunk = wb::writeback_chunk_size(
                    self.bdp.wb.avg_write_bandwidth,
                    self.cache.limits.thresh,
                    asked,
                );
                self.flusher.slice_left = u32::try_from(chunk).unwrap_or(u32::MAX);
                self.flusher.wrapped = false;
            }
            let Some(f) = self.flusher.cur else {
                continue;
            };
            let pages = self.files[f as usize].pages;
            let max = self.flusher.slice_left;
            let mut cursor = self.flusher.cursor;
            let mut copies = std::mem::take(&mut self.flusher.copies);
            let bio = self.writeback_bio(
                f,
                &mut cursor,
                pages,
                max,
                Flags::BACKGROUND,
                Origin::Flusher,
                &mut copies,
            );
            match bio {
                Some(bio) => {
                    self.flusher.fruitless = 0;
                    self.flusher.cursor = cursor;
                    self.cache.files[f as usize].wb_index = cursor;
                    let n = (bio.len / PAGE) as u32;
                    self.flusher.slice_left -= n.min(self.flusher.slice_left);
                    self.flusher.forced = self.flusher.forced.saturating_sub(u64::from(n));
                    self.flusher.bios += 1;
                    self.flusher.pages += u64::from(n);
                    let mut went = self.submit(now, Actor::Flusher, bio, false);
                    // Every copy goes out now, parked or not, so an fsync
                    // finds each one linked to the file. The flusher
                    // resumes once all of them have requests.
                    while let Some((copy, _)) = copies.pop_front() {
                        went &= self.submit(now, Actor::Flusher, copy, false);
                    }
                    self.flusher.copies = copies;
                    if !went {
                        return;
                    }
                }
                None if !self.flusher.wrapped => {
                    self.flusher.copies = copies;
                    self.flusher.wrapped = true;
                    self.flusher.cursor = 0;
                }
                None => {
                    self.flusher.copies = copies;
                    self.flusher.slice_left = 0;
                    self.flusher.fruitless += 1;
                }
            }
        }
    }

    /// The flusher goes idle; with `until_writeback` it is woken by the
    /// next writeback completion rather than by new dirtying alone.
    fn flusher_stop(&mut self, now: Ns, until_writeback: bool) {
        if let Some(f) = self.flusher.cur.take() {
            self.requeue_dirty(f);
            self.wb_writepages_end(now);
        }
        self.flusher.running = false;
        self.flusher.fruitless = 0;
        self.flusher.wait_writeback = until_writeback;
    }

    /// An inode's writeback starts (`do_writepages`, before the
    /// filesystem's `writepages`): a device idle for long starts its
    /// estimate afresh.
    fn wb_writepages_start(&mut self, now: Ns) {
        let in_flight = self.cache.nr_writeback > 0;
        self.bdp.wb.estimate_start(now / JIFFY_NS, in_flight);
    }

    /// An inode's writeback submitted (`do_writepages`, after): the write
    /// bandwidth is estimated if an interval has passed.
    fn wb_writepages_end(&mut self, now: Ns) {
        let now_j = now / JIFFY_NS;
        if self.bdp.wb.due(now_j) {
            self.bdp.wb.update(now_j, None);
        }
    }

    fn requeue_dirty(&mut self, f: u32) {
        if self.cache.files[f as usize].nr_dirty > 0 {
            self.cache.dirty_list.push_back(f);
        } else {
            self.cache.files[f as usize].on_dirty_list = false;
        }
    }

    /// The next writeback bio of `file` from `cursor`: a run of dirty pages
    /// not already under writeback, at most `max` pages.
    /// On a mirrored volume the bio is the first copy's; the others go to
    /// `copies`, for the caller to submit next, and the pages stay under
    /// writeback until the last copy is written (a copy group).
    #[allow(clippy::too_many_arguments, reason = "one writeback step's inputs")]
    fn writeback_bio(
        &mut self,
        file: u32,
        cursor: &mut u32,
        end: u32,
        max: u32,
        flags: Flags,
        origin: Origin,
        copies: &mut VecDeque<(Bio, bool)>,
    ) -> Option<Bio> {
        let b = self.cache.bits(file);
        let mut from = *cursor;
        let p = loop {
            let p = b.next_set(PageState::Dirty, from, end)?;
            if !b.get(PageState::Writeback, p) {
                break p;
            }
            from = p + 1;
        };
        let (dev, offset, room, mirror) = self.page_location(file, p);
        let limit = max.clamp(1, MAX_BIO_PAGES).min(room);
        let split = self.files[file as usize].place.split;
        let b = self.cache.bits(file);
        let mut q = p + 1;
        while q < end
            && q - p < limit
            && q != split
            && b.get(PageState::Dirty, q)
            && !b.get(PageState::Writeback, q)
        {
            q += 1;
        }
        let count = q - p;
        if self.btrfs.is_some() {
            // A dirty page is delalloc even while an older writeback of it
            // is in flight (the kernel would have waited for that one).
            let pages = self.files[file as usize].pages;
            let b = self.cache.bits(file);
            let left = p > 0 && b.get(PageState::Dirty, p - 1);
            let right = q < pages && b.get(PageState::Dirty, q);
            self.btrfs_on_writeback(file, count, left, right);
        }
        self.cache.start_writeback(file, p, count);
        *cursor = q;
        let group = mirror.map_or(NIL, |(chunk, _)| self.copy_groups.alloc(chunk.copies));
        let bio = Bio {
            op: Op::Write,
            flags,
            dev,
            offset,
            len: u64::from(count) * PAGE,
            origin,
            cgroup: 0,
            payload: Payload::CacheWrite {
                file,
                first: p,
                count,
                group,
            },
        };
        if let Some((chunk, delta)) = mirror {
            for &(dev, physical) in &chunk.stripes[1..usize::from(chunk.copies)] {
                let copy = Bio {
                    dev,
                    offset: physical + delta,
                    ..bio
                };
                copies.push_back((copy, false));
            }
        }
        Some(bio)
    }

    /// Starts `fsync` (or `fdatasync`) of `file` on context `c`.
    pub(crate) fn start_sync(&mut self, now: Ns, c: u32, file: u32, datasync: bool) {
        let j = self.ctxs[c as usize].job as usize;
        self.jobs[j].sync_busy = true;
        let seen = self.files[file as usize].write_seq;
        let ctx = &mut self.ctxs[c as usize];
        ctx.op = OpKind::Sync { datasync };
        ctx.op_start = now;
        ctx.sync_file = file;
        ctx.sync_write_seq = seen;
        ctx.sync_cursor = 0;
        ctx.sync_passes = 0;
        ctx.phase = Phase::SyncWriteback;
        self.wb_writepages_start(now);
        self.ctx_pump(now, c);
    }

    /// Next WB_SYNC_ALL bio of the file being synced by `c`.
    /// On a mirrored volume the other copies go to the context's queue,
    /// which `ctx_pump` submits right after this bio.
    pub(crate) fn next_sync_writeback_bio(&mut self, c: u32) -> Option<(Bio, bool)> {
        debug_assert!(self.ctxs[c as usize].queue.is_empty());
        let ctx = &self.ctxs[c as usize];
        let (file, mut cursor) = (ctx.sync_file, ctx.sync_cursor);
        let j = ctx.job;
        let pages = self.files[file as usize].pages;
        let cgroup = self.jobs[j as usize].plan.cgroup;
        let mut copies = std::mem::take(&mut self.ctxs[c as usize].queue);
        let bio = self.writeback_bio(
            file,
            &mut cursor,
            pages,
            MAX_BIO_PAGES,
            Flags::SYNC,
            Origin::Task(j),
            &mut copies,
        );
        for (copy, _) in &mut copies {
            copy.cgroup = cgroup;
        }
        let ctx = &mut self.ctxs[c as usize];
        ctx.queue = copies;
        ctx.sync_cursor = cursor;
        bio.map(|mut b| {
            b.cgroup = cgroup;
            (b, false)
        })
    }

    /// fsync: everything submitted; wait for all writes of the file in
    /// flight (ours and the flusher's).
    pub(crate) fn sync_wait_writes(&mut self, now: Ns, c: u32) {
        self.wb_writepages_end(now);
        let file = self.ctxs[c as usize].sync_file;
        self.ctxs[c as usize].phase = Phase::SyncWait;
        let mut rq = self.files[file as usize].writes_head;
        while rq != NIL {
            let next = self.rqs[rq].file_next;
            self.add_waiter(rq, c);
            rq = next;
        }
        // Writeback bios still waiting for a slot or the policy: wait for
        // each of them, then for its request.
        let mut pid = self.files[file as usize].parked_head;
        while pid != NIL {
            let next = self.parked[pid].file_next;
            self.add_parked_waiter(pid, c);
            pid = next;
        }
        if self.raid.is_some() {
            self.check_copies_visible(file);
        }
    }

    /// The group of a writeback bio of `file`, if it has copies.
    fn copy_group(bio: &Bio) -> Option<u32> {
        match bio.payload {
            Payload::CacheWrite { group, .. } if group != NIL => Some(group),
            _ => None,
        }
    }

    /// Every copy still in flight of each copy group `file`'s fsync waits
    /// on must be a request or parked, or the fsync would miss it; count
    /// any that is not (the volume report's `fsync_unseen_copies`, which
    /// must stay 0).
    fn check_copies_visible(&mut self, file: u32) {
        let f = &self.files[file as usize];
        let mut groups = std::mem::take(&mut self.scratch);
        groups.clear();
        let mut rq = f.writes_head;
        while rq != NIL {
            groups.extend(Self::copy_group(&self.rqs[rq].bio));
            rq = self.rqs[rq].file_next;
        }
        let mut pid = f.parked_head;
        while pid != NIL {
            groups.extend(Self::copy_group(&self.parked[pid].bio));
            pid = self.parked[pid].file_next;
        }
        groups.sort_unstable();
        let unseen: u64 = groups
            .chunk_by(|a, b| a == b)
            .map(|g| u64::from(self.copy_groups[g[0]]).saturating_sub(g.len() as u64))
            .sum();
        groups.clear();
        self.scratch = groups;
        if let Some(r) = self.raid.as_mut() {
            r.fsync_unseen_copies += unseen;
        }
    }

    /// fsync: data is on the device; one more pass for pages that were
    /// under writeback when first seen, then the journal.
    pub(crate) fn sync_after_writeback(&mut self, now: Ns, c: u32) {
        let file = self.ctxs[c as usize].sync_file;
        let ctx = &mut self.ctxs[c as usize];
        ctx.sync_passes += 1;
        if ctx.sync_passes < 2 && self.cache.files[file as usize].nr_dirty > 0 {
            ctx.sync_cursor = 0;
            ctx.phase = Phase::SyncWriteback;
            self.ctx_pump(now, c);
            return;
        }
        self.sync_journal(now, c);
    }
}
