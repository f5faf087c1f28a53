//! A fixed-size bitmap over page indices, with fast range operations.

/// One bit per page.
#[derive(Clone, Debug, Default)]
pub struct Bits {
    words: Vec<u64>,
}

impl Bits {
    /// `n` cleared bits.
    #[expect(
        clippy::slow_vector_initialization,
        reason = "vec![0; n] would calloc lazily; writing the zeros makes the memory resident up front"
    )]
    pub fn new(n: u64) -> Self {
        let len = n.div_ceil(64) as usize;
        let mut words = Vec::with_capacity(len);
        // Written, not calloc'ed: resident from the start, so memory use
        // does not creep up as a run touches more pages.
        words.resize(len, 0);
        Self { words }
    }

    /// Bit `i`.
    #[inline]
    pub fn get(&self, i: u32) -> bool {
        self.words[(i >> 6) as usize] >> (i & 63) & 1 == 1
    }

    /// Sets bit `i`; returns its previous value.
    #[inline]
    pub fn set(&mut self, i: u32) -> bool {
        let w = &mut self.words[(i >> 6) as usize];
        let m = 1u64 << (i & 63);
        let old = *w & m != 0;
        *w |= m;
        old
    }

    /// Clears bit `i`; returns its previous value.
    #[inline]
    pub fn clear(&mut self, i: u32) -> bool {
        let w = &mut self.words[(i >> 6) as usize];
        let m = 1u64 << (i & 63);
        let old = *w & m != 0;
        *w &= !m;
        old
    }

    /// First set bit at or after `from` and before `end`.
    pub fn next_set(&self, from: u32, end: u32) -> Option<u32> {
        let mut i = from;
        while i < end {
            let wi = (i >> 6) as usize;
            let w = self.words[wi] >> (i & 63);
            if w != 0 {
                let found = i + w.trailing_zeros();
                return (found < end).then_some(found);
            }
            i = ((wi as u32) + 1) << 6;
        }
        None
    }

    /// First clear bit at or after `from` and before `end`.
    pub fn next_clear(&self, from: u32, end: u32) -> Option<u32> {
        let mut i = from;
        while i < end {
            let wi = (i >> 6) as usize;
            let w = !self.words[wi] >> (i & 63);
            if w != 0 {
                let found = i + w.trailing_zeros();
                return (found < end).then_some(found);
            }
            i = ((wi as u32) + 1) << 6;
        }
        None
    }

    /// Number of set bits in `[from, end)`.
    pub fn count_range(&self, from: u32, end: u32) -> u32 {
        (from..end).filter(|&i| self.get(i)).count() as u32
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
}
