//! A bitmap over page indices, with fast range operations, that costs
//! memory only where bits were set.
//!
//! The bits are kept in chunks of [`CHUNK_BITS`] (128 MiB of a file's
//! 4 KiB pages in 4 KiB of bits), each allocated the first time a bit in
//! it is set; a chunk never set reads as all clear. A file of 16 TiB
//! costs one pointer per chunk (1 MiB) until its pages are used, so the
//! page cache's bookkeeping grows with the pages touched, not with the
//! files' sizes.

/// Words of one chunk (of each lane).
const CHUNK_WORDS: usize = 512;
/// Bits of one chunk.
pub const CHUNK_BITS: u32 = (CHUNK_WORDS * 64) as u32;

/// `L` bitmaps over the same indices, interleaved: the `L` words that
/// hold bit `i` of every lane lie side by side (one cache line for eight
/// lanes), so reading and changing several states of one page costs one
/// trip to memory, not one per bitmap.
#[derive(Clone, Debug)]
pub struct Lanes<const L: usize> {
    chunks: Vec<Option<Box<[[u64; L]; CHUNK_WORDS]>>>,
}

/// One bit per page.
pub type Bits = Lanes<1>;

/// The chunk and the word in it of bit `i`, and the bit's mask.
#[inline]
fn at(i: u32) -> (usize, usize, u64) {
    (
        (i / CHUNK_BITS) as usize,
        ((i % CHUNK_BITS) >> 6) as usize,
        1u64 << (i & 63),
    )
}

impl<const L: usize> Lanes<L> {
    /// `n` cleared bits in every lane (no chunk allocated yet).
    pub fn new(n: u64) -> Self {
        let len = n.div_ceil(u64::from(CHUNK_BITS)) as usize;
        Self {
            chunks: (0..len).map(|_| None).collect(),
        }
    }

    /// Bit `i` of lane `l`.
    #[inline]
    pub fn get_in(&self, l: usize, i: u32) -> bool {
        let (c, w, m) = at(i);
        self.chunks[c].as_ref().is_some_and(|ch| ch[w][l] & m != 0)
    }

    /// Sets bit `i` of lane `l`; returns its previous value.
    #[inline]
    pub fn set_in(&mut self, l: usize, i: u32) -> bool {
        let (c, w, m) = at(i);
        let word = &mut self.chunks[c].get_or_insert_with(|| Box::new([[0; L]; CHUNK_WORDS]))[w][l];
        let old = *word & m != 0;
        *word |= m;
        old
    }

    /// Clears bit `i` of lane `l`; returns its previous value.
    #[inline]
    pub fn clear_in(&mut self, l: usize, i: u32) -> bool {
        let (c, w, m) = at(i);
        let Some(ch) = self.chunks[c].as_mut() else {
            return false;
        };
        let old = ch[w][l] & m != 0;
        ch[w][l] &= !m;
        old
    }

    /// The word of lane `l` holding bit `i`, bit `i` first (bits past the
    /// word's end are zero), inverted if `clear`.
    #[inline]
    fn word_from(&self, l: usize, i: u32, clear: bool) -> u64 {
        let (c, w, _) = at(i);
        let word = self.chunks[c].as_ref().map_or(0, |ch| ch[w][l]);
        let word = if clear { !word } else { word };
        word >> (i & 63)
    }

    /// First bit of lane `l` at or after `from` and before `end` that is
    /// set (or clear, if `clear`).
    fn next(&self, l: usize, from: u32, end: u32, clear: bool) -> Option<u32> {
        let mut i = from;
        while i < end {
            if !clear && self.chunks[(i / CHUNK_BITS) as usize].is_none() {
                // Nothing set in this chunk: go to the next.
                i = (i / CHUNK_BITS + 1).saturating_mul(CHUNK_BITS);
                continue;
            }
            let w = self.word_from(l, i, clear);
            if w != 0 {
                let found = i + w.trailing_zeros();
                return (found < end).then_some(found);
            }
            i = (i | 63).checked_add(1)?;
        }
        None
    }

    /// First set bit of lane `l` at or after `from` and before `end`.
    pub fn next_set_in(&self, l: usize, from: u32, end: u32) -> Option<u32> {
        self.next(l, from, end, false)
    }

    /// First clear bit of lane `l` at or after `from` and before `end`.
    pub fn next_clear_in(&self, l: usize, from: u32, end: u32) -> Option<u32> {
        self.next(l, from, end, true)
    }

    /// Number of set bits of lane `l` in `[from, end)`.
    pub fn count_range_in(&self, l: usize, from: u32, end: u32) -> u32 {
        (from..end).filter(|&i| self.get_in(l, i)).count() as u32
    }

    /// Chunks allocated (each [`CHUNK_BITS`] bits of every lane).
    pub fn chunks_used(&self) -> usize {
        self.chunks.iter().filter(|c| c.is_some()).count()
    }
}

impl Bits {
    /// Bit `i`.
    #[inline]
    pub fn get(&self, i: u32) -> bool {
        self.get_in(0, i)
    }

    /// Sets bit `i`; returns its previous value.
    #[inline]
    pub fn set(&mut self, i: u32) -> bool {
        self.set_in(0, i)
    }

    /// Clears bit `i`; returns its previous value.
    #[inline]
    pub fn clear(&mut self, i: u32) -> bool {
        self.clear_in(0, i)
    }

    /// First set bit at or after `from` and before `end`.
    pub fn next_set(&self, from: u32, end: u32) -> Option<u32> {
        self.next_set_in(0, from, end)
    }

    /// First clear bit at or after `from` and before `end`.
    pub fn next_clear(&self, from: u32, end: u32) -> Option<u32> {
        self.next_clear_in(0, from, end)
    }

    /// Number of set bits in `[from, end)`.
    pub fn count_range(&self, from: u32, end: u32) -> u32 {
        self.count_range_in(0, from, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_clear_and_scan() {
        let mut b = Bits::new(200);
        assert_eq!(b.next_set(0, 200), None);
        assert!(!b.set(3));
        assert!(b.set(3));
        b.set(64);
        b.set(199);
        assert_eq!(b.next_set(0, 200), Some(3));
        assert_eq!(b.next_set(4, 200), Some(64));
        assert_eq!(b.next_set(65, 199), None);
        assert_eq!(b.next_set(65, 200), Some(199));
        assert_eq!(b.next_clear(3, 200), Some(4));
        assert_eq!(b.count_range(0, 200), 3);
        assert!(b.clear(64));
        assert!(!b.get(64));
        let mut full = Bits::new(130);
        for i in 0..130 {
            full.set(i);
        }
        assert_eq!(full.next_clear(0, 130), None);
    }

    /// A bitmap of 2^32 bits costs a chunk per region used, and scans
    /// skip the regions never set, up to the last bit.
    #[test]
    fn a_huge_bitmap_allocates_only_the_chunks_it_uses() {
        let n = 1u64 << 32;
        let mut b = Bits::new(n);
        assert_eq!(b.chunks_used(), 0);
        let last = u32::MAX;
        assert!(!b.get(last));
        assert!(!b.clear(last), "clearing allocates nothing");
        assert_eq!(b.chunks_used(), 0);
        b.set(5);
        b.set(last);
        b.set(3 * CHUNK_BITS + 7);
        assert_eq!(b.chunks_used(), 3);
        assert_eq!(b.next_set(6, last), Some(3 * CHUNK_BITS + 7));
        assert_eq!(b.next_set(3 * CHUNK_BITS + 8, last), None, "end excluded");
        assert_eq!(b.next_set(3 * CHUNK_BITS + 8, u32::MAX), None);
        assert_eq!(b.next_clear(last, u32::MAX), None);
        assert_eq!(b.next_clear(5, 10), Some(6));
        assert_eq!(b.next_clear(CHUNK_BITS, u32::MAX), Some(CHUNK_BITS));
        assert!(b.clear(last));
        assert!(!b.get(last));
    }

    /// Lanes share their chunks, not their bits: setting, clearing and
    /// scanning one lane leaves the others as they were.
    #[test]
    fn lanes_are_independent_bitmaps_over_shared_chunks() {
        let mut b = Lanes::<8>::new(3 * u64::from(CHUNK_BITS));
        assert!(!b.set_in(1, 70));
        assert!(!b.set_in(6, 70));
        assert!(!b.set_in(6, CHUNK_BITS + 3));
        assert_eq!(b.chunks_used(), 2);
        assert!(b.get_in(1, 70) && b.get_in(6, 70) && !b.get_in(0, 70));
        assert!(b.clear_in(1, 70));
        assert!(!b.get_in(1, 70) && b.get_in(6, 70));
        assert_eq!(b.next_set_in(1, 0, 3 * CHUNK_BITS), None);
        assert_eq!(b.next_set_in(6, 71, 3 * CHUNK_BITS), Some(CHUNK_BITS + 3));
        assert_eq!(b.next_clear_in(6, 70, 80), Some(71));
        assert_eq!(b.count_range_in(6, 0, 2 * CHUNK_BITS), 2);
        assert_eq!(b.count_range_in(0, 0, 2 * CHUNK_BITS), 0);
    }
}
