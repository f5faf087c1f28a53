//! Page cache: per-file page state, CLOCK eviction, global dirty and
//! writeback counters.
//!
//! Page state is a set of bitmaps per file, allocated the first time the
//! file is used through the cache, so O_DIRECT-only files cost nothing,
//! and each bitmap allocates only the regions of the file whose pages are
//! used ([`bits`]). Eviction is CLOCK (second chance), the usual
//! approximation of LRU: a ring of cached pages; a referenced page gets
//! another lap, the first clean unreferenced page goes.
//!
//! A dirty or under-writeback page the hand reaches leaves the ring
//! (it cannot go until it is written) and comes back, at the back, when
//! its writeback ends, much as the kernel's reclaim moves such a folio
//! aside and rotates it back once written. So eviction costs O(1)
//! amortised however much of the cache is dirty: each page leaves and
//! rejoins the ring about once per writeback (twice if it was dirtied
//! again while under it), instead of being stepped over on every
//! eviction.
//!
//! The ring grows with the pages cached (doubling), not with the memory
//! the run models, so `--memory` costs nothing until pages are used.

pub mod bits;
pub mod dirty;
pub mod pacing;
pub mod readahead;
pub mod wb;

use bits::Lanes;
use dirty::DirtyLimits;
use std::collections::VecDeque;

use crate::time::Ns;

/// A state a page of the cache is in, or not: one lane of [`PageBits`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageState {
    /// Page present and up to date.
    Cached = 0,
    /// Page dirty.
    Dirty,
    /// Page under writeback.
    Writeback,
    /// Page being read in.
    Reading,
    /// Page referenced since the CLOCK hand last passed.
    Referenced,
    /// Page has an entry in the CLOCK ring.
    InRing,
    /// Page carries the readahead marker (`PG_readahead`).
    Marker,
}

/// Page state bitmaps of one file, one lane per [`PageState`], the
/// states of 64 pages in one cache line.
#[derive(Debug)]
pub struct PageBits(Lanes<8>);

impl PageBits {
    fn new(pages: u32) -> Self {
        Self(Lanes::new(u64::from(pages)))
    }

    /// Whether page `p` is in state `s`.
    #[inline]
    pub fn get(&self, s: PageState, p: u32) -> bool {
        self.0.get_in(s as usize, p)
    }

    /// Puts page `p` in state `s`; returns whether it was.
    #[inline]
    pub fn set(&mut self, s: PageState, p: u32) -> bool {
        self.0.set_in(s as usize, p)
    }

    /// Takes page `p` out of state `s`; returns whether it was in it.
    #[inline]
    pub fn clear(&mut self, s: PageState, p: u32) -> bool {
        self.0.clear_in(s as usize, p)
    }

    /// First page at or after `from` and before `end` in state `s`.
    pub fn next_set(&self, s: PageState, from: u32, end: u32) -> Option<u32> {
        self.0.next_set_in(s as usize, from, end)
    }

    /// First page at or after `from` and before `end` not in state `s`.
    pub fn next_clear(&self, s: PageState, from: u32, end: u32) -> Option<u32> {
        self.0.next_clear_in(s as usize, from, end)
    }

    /// Pages in state `s` in `[from, end)`.
    pub fn count_range(&self, s: PageState, from: u32, end: u32) -> u32 {
        self.0.count_range_in(s as usize, from, end)
    }

    /// Chunks allocated.
    pub fn chunks_used(&self) -> usize {
        self.0.chunks_used()
    }
}

/// Cache state of one file.
#[derive(Debug, Default)]
pub struct CachedFile {
    /// Pages in the file.
    pub pages: u32,
    /// Bitmaps, allocated on first cached use.
    pub bits: Option<Box<PageBits>>,
    /// Dirty pages.
    pub nr_dirty: u32,
    /// Pages under writeback.
    pub nr_writeback: u32,
    /// When the file went from clean to dirty.
    pub dirtied_when: Option<Ns>,
    /// Cyclic writeback index (`writeback_index`).
    pub wb_index: u32,
    /// On the flusher's dirty list.
    pub on_dirty_list: bool,
}

/// The page cache of one machine.
#[derive(Debug)]
pub struct PageCache {
    /// Files by id.
    pub files: Vec<CachedFile>,
    /// Pages the cache may hold.
    pub capacity: u64,
    /// Cached pages.
    pub nr_cached: u64,
    /// Dirty pages.
    pub nr_dirty: u64,
    /// Pages under writeback.
    pub nr_writeback: u64,
    /// Dirty thresholds.
    pub limits: DirtyLimits,
    /// Files with dirty pages, oldest first.
    pub dirty_list: VecDeque<u32>,
    ring: Ring,
    /// Ring entries the CLOCK hand has looked at, over the run.
    scanned: u64,
}

/// A FIFO of `(file, page)` entries in a circular buffer that grows by
/// doubling.
#[derive(Debug, Default)]
struct Ring {
    slots: Vec<(u32, u32)>,
    head: usize,
    len: usize,
}

const NO_ENTRY: (u32, u32) = (u32::MAX, u32::MAX);

/// The ring's first allocation.
const RING_START: usize = 1024;

impl Ring {
    fn len(&self) -> usize {
        self.len
    }

    /// Full of entries; a ring that has not taken its room yet is not.
    fn is_full(&self) -> bool {
        self.len > 0 && self.len == self.slots.len()
    }

    fn push_back(&mut self, e: (u32, u32)) {
        if self.slots.is_empty() || self.is_full() {
            // Grow, keeping order.
            let mut v: Vec<(u32, u32)> = (0..self.len)
                .map(|i| self.slots[(self.head + i) % self.slots.len()])
                .collect();
            let cap = (self.slots.len() * 2).max(RING_START);
            v.resize(cap, NO_ENTRY);
            self.slots = v;
            self.head = 0;
        }
        let i = (self.head + self.len) % self.slots.len();
        self.slots[i] = e;
        self.len += 1;
    }

    fn pop_front(&mut self) -> Option<(u32, u32)> {
        if self.len == 0 {
            return None;
        }
        let e = self.slots[self.head];
        self.head = (self.head + 1) % self.slots.len();
        self.len -= 1;
        Some(e)
    }
}

impl PageCache {
    /// A cache for `mem_bytes` of RAM; it may hold the dirtyable part.
    pub fn new(mem_bytes: u64) -> Self {
        let limits = DirtyLimits::for_memory(mem_bytes);
        Self {
            files: Vec::new(),
            capacity: limits.dirtyable.max(64),
            nr_cached: 0,
            nr_dirty: 0,
            nr_writeback: 0,
            limits,
            dirty_list: VecDeque::new(),
            ring: Ring::default(),
            scanned: 0,
        }
    }

    /// Registers a file of `pages` pages; returns its id.
    pub fn add_file(&mut self, pages: u32) -> u32 {
        self.files.push(CachedFile {
            pages,
            ..CachedFile::default()
        });
        (self.files.len() - 1) as u32
    }

    /// The page bits of `file`, if any page of it was ever touched.
    pub fn bits_ref(&self, file: u32) -> Option<&PageBits> {
        self.files[file as usize].bits.as_deref()
    }

    /// The bitmaps of `file`, allocating them on first use.
    pub fn bits(&mut self, file: u32) -> &mut PageBits {
        let f = &mut self.files[file as usize];
        let pages = f.pages;
        f.bits.get_or_insert_with(|| Box::new(PageBits::new(pages)))
    }

    /// Makes page `p` of `file` present (clean, up to date), evicting
    /// another page if the cache is full.
    pub fn insert(&mut self, file: u32, p: u32) {
        if self.bits(file).get(PageState::Cached, p) {
            return;
        }
        if self.nr_cached >= self.capacity {
            self.evict_one();
        }
        let b = self.bits(file);
        b.set(PageState::Cached, p);
        let in_ring = b.set(PageState::InRing, p);
        self.nr_cached += 1;
        if !in_ring {
            self.enqueue(file, p);
        }
    }

    /// Puts page `p` of `file` (its `in_ring` bit just set) at the back
    /// of the ring. A full ring drops its stale entries first when they
    /// are at least half of it (entries beyond the cached pages can only
    /// be stale), and grows otherwise: either way O(1) amortised.
    fn enqueue(&mut self, file: u32, p: u32) {
        if self.ring.is_full() && self.ring.len() as u64 >= 2 * self.nr_cached {
            self.compact_ring();
        }
        self.ring.push_back((file, p));
    }

    /// Marks page `p` referenced.
    #[inline]
    pub fn touch(&mut self, file: u32, p: u32) {
        self.bits(file).set(PageState::Referenced, p);
    }

    /// Drops the clean, idle cached pages of `file` (`POSIX_FADV_DONTNEED`,
    /// fio's `invalidate`).
    pub fn invalidate(&mut self, file: u32) {
        let pages = self.files[file as usize].pages;
        self.invalidate_range(file, 0, pages);
    }

    /// Drops the clean, idle cached pages `first..end` of `file` (a hole
    /// punched, a file truncated; dirty pages and pages under IO stay).
    pub fn invalidate_range(&mut self, file: u32, first: u32, end: u32) {
        let Some(b) = self.files[file as usize].bits.as_mut() else {
            return;
        };
        let mut dropped = 0;
        let mut i = first;
        while let Some(p) = b.next_set(PageState::Cached, i, end) {
            if !b.get(PageState::Dirty, p)
                && !b.get(PageState::Writeback, p)
                && !b.get(PageState::Reading, p)
            {
                b.clear(PageState::Cached, p);
                b.clear(PageState::Marker, p);
                dropped += 1;
            }
            i = p + 1;
        }
        self.nr_cached -= dropped;
    }

    /// Drops ring entries of pages no longer cached (after invalidations).
    fn compact_ring(&mut self) {
        for _ in 0..self.ring.len() {
            let Some((f, p)) = self.ring.pop_front() else {
                break;
            };
            let b = self.bits(f);
            if b.get(PageState::Cached, p) {
                self.ring.push_back((f, p));
            } else {
                b.clear(PageState::InRing, p);
            }
        }
    }

    /// Evicts one clean page by CLOCK. Returns false if none could go
    /// (everything dirty or under IO): the cache then overcommits.
    ///
    /// Dirty and under-writeback pages met on the way leave the ring
    /// ([`PageCache::end_writeback`] puts them back), so the scan never
    /// steps over the same unevictable page twice between writebacks.
    fn evict_one(&mut self) -> bool {
        let mut budget = self.ring.len() * 2 + 1;
        while budget > 0 {
            budget -= 1;
            let Some((f, p)) = self.ring.pop_front() else {
                return false;
            };
            self.scanned += 1;
            let b = self.bits(f);
            if !b.get(PageState::Cached, p)
                || b.get(PageState::Dirty, p)
                || b.get(PageState::Writeback, p)
            {
                b.clear(PageState::InRing, p);
                continue;
            }
            if b.get(PageState::Reading, p) {
                self.ring.push_back((f, p));
                continue;
            }
            if b.clear(PageState::Referenced, p) {
                self.ring.push_back((f, p));
                continue;
            }
            b.clear(PageState::Cached, p);
            b.clear(PageState::InRing, p);
            b.clear(PageState::Marker, p);
            self.nr_cached -= 1;
            return true;
        }
        false
    }

    /// Marks page `p` dirty at `now`; returns true if it was clean.
    pub fn dirty(&mut self, now: Ns, file: u32, p: u32) -> bool {
        self.insert(file, p);
        let b = self.bits(file);
        b.set(PageState::Referenced, p);
        if b.set(PageState::Dirty, p) {
            return false;
        }
        self.nr_dirty += 1;
        let f = &mut self.files[file as usize];
        f.nr_dirty += 1;
        if f.dirtied_when.is_none() {
            f.dirtied_when = Some(now);
        }
        if !f.on_dirty_list {
            f.on_dirty_list = true;
            self.dirty_list.push_back(file);
        }
        true
    }

    /// Moves dirty pages `[first, first + count)` to writeback.
    pub fn start_writeback(&mut self, file: u32, first: u32, count: u32) {
        let b = self.bits(file);
        for p in first..first + count {
            let was_dirty = b.clear(PageState::Dirty, p);
            debug_assert!(was_dirty);
            b.set(PageState::Writeback, p);
        }
        self.nr_dirty -= u64::from(count);
        self.nr_writeback += u64::from(count);
        let f = &mut self.files[file as usize];
        f.nr_dirty -= count;
        f.nr_writeback += count;
        if f.nr_dirty == 0 {
            f.dirtied_when = None;
        }
    }

    /// Writeback of `[first, first + count)` completed. A cached page
    /// the CLOCK hand took out of the ring while it was unevictable goes
    /// back in, at the back.
    pub fn end_writeback(&mut self, file: u32, first: u32, count: u32) {
        for p in first..first + count {
            let b = self.bits(file);
            let was = b.clear(PageState::Writeback, p);
            debug_assert!(was);
            if b.get(PageState::Cached, p) && !b.set(PageState::InRing, p) {
                self.enqueue(file, p);
            }
        }
        self.nr_writeback -= u64::from(count);
        self.files[file as usize].nr_writeback -= count;
    }

    /// Dirty plus writeback pages: what `balance_dirty_pages` compares with
    /// its thresholds.
    #[inline]
    pub fn dirty_and_writeback(&self) -> u64 {
        self.nr_dirty + self.nr_writeback
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache whose every page is dirty: each new page overcommits, and
    /// the hand looks at each dirty page once, not once per new page (a
    /// write larger than the cache was quadratic). When the dirty pages
    /// have been written they are back in the ring and evictable.
    #[test]
    fn a_cache_full_of_dirty_pages_scans_each_page_once_per_writeback() {
        let mut c = PageCache::new(0);
        c.capacity = 1000;
        let f = c.add_file(1 << 20);
        for p in 0..1000 {
            c.dirty(0, f, p);
        }
        for p in 1000..11_000 {
            c.dirty(0, f, p);
        }
        assert_eq!(c.nr_cached, 11_000, "nothing could go: overcommitted");
        assert!(
            c.scanned <= 2 * 11_000,
            "{} entries scanned for 11,000 dirty pages",
            c.scanned
        );
        c.start_writeback(f, 0, 11_000);
        c.end_writeback(f, 0, 11_000);
        assert_eq!(c.ring.len(), 11_000, "every written page back in the ring");
        let before = c.scanned;
        c.insert(f, 20_000);
        assert_eq!(c.nr_cached, 11_000, "a clean page went for the new one");
        // The first lap clears the second-chance bits dirtying set; the
        // second evicts.
        assert!(c.scanned - before <= 2 * 11_000 + 1);
        assert_eq!(c.bits(f).count_range(PageState::Cached, 0, 11_000), 10_999);
        assert!(c.bits(f).get(PageState::Cached, 20_000));
    }

    /// The ring and the bitmaps grow with the pages used, not with the
    /// memory modelled: a cache for 16 TiB holding a few pages of a
    /// 16 TiB file allocates a few KiB of state.
    #[test]
    fn bookkeeping_grows_with_the_pages_used_not_the_memory() {
        let mut c = PageCache::new(16 << 40);
        let f = c.add_file(u32::MAX);
        for p in [0, 1, 2, u32::MAX - 1] {
            c.insert(f, p);
        }
        assert_eq!(c.ring.slots.len(), RING_START);
        // Two regions of the file hold pages; every state of a page shares
        // its region's chunk.
        assert_eq!(c.bits(f).chunks_used(), 2);
        assert_eq!(c.bits(f).next_set(PageState::Dirty, 0, u32::MAX), None);
    }

    #[test]
    fn clock_evicts_unreferenced_clean_pages_first() {
        let mut c = PageCache::new(0);
        c.capacity = 3;
        let f = c.add_file(10);
        c.insert(f, 0);
        c.insert(f, 1);
        c.insert(f, 2);
        c.touch(f, 0);
        c.dirty(0, f, 1);
        c.insert(f, 3);
        let b = c.bits(f);
        assert!(
            b.get(PageState::Cached, 0),
            "referenced page got a second chance"
        );
        assert!(b.get(PageState::Cached, 1), "dirty page is never evicted");
        assert!(!b.get(PageState::Cached, 2));
        assert!(b.get(PageState::Cached, 3));
        assert_eq!(c.nr_cached, 3);
    }

    #[test]
    fn dirty_and_writeback_accounting() {
        let mut c = PageCache::new(1 << 30);
        let f = c.add_file(100);
        for p in 10..20 {
            assert!(c.dirty(5, f, p));
        }
        assert!(!c.dirty(6, f, 10));
        assert_eq!(c.nr_dirty, 10);
        assert_eq!(c.files[f as usize].dirtied_when, Some(5));
        assert_eq!(c.dirty_list.len(), 1);
        c.start_writeback(f, 10, 10);
        assert_eq!((c.nr_dirty, c.nr_writeback), (0, 10));
        assert_eq!(c.files[f as usize].dirtied_when, None);
        c.end_writeback(f, 10, 10);
        assert_eq!(c.dirty_and_writeback(), 0);
        c.invalidate(f);
        assert_eq!(c.nr_cached, 0);
    }
}
