//! A slab: a `Vec` with a free list, addressed by `u32` indices. Slots are
//! reused, so steady-state simulation allocates nothing per IO.

/// Fixed-type object pool.
#[derive(Debug)]
pub struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
    live: u32,
}

impl<T> Slab<T> {
    /// An empty slab with room for `capacity` objects before it grows.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            items: Vec::with_capacity(capacity),
            free: Vec::with_capacity(capacity),
            live: 0,
        }
    }

    /// Stores `value`; returns its index.
    #[inline]
    pub fn alloc(&mut self, value: T) -> u32 {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.items[i as usize] = value;
            i
        } else {
            self.items.push(value);
            (self.items.len() - 1) as u32
        }
    }

    /// The index the next `alloc` will return.
    #[inline]
    pub fn next_index(&self) -> u32 {
        match self.free.last() {
            Some(&i) => i,
            None => self.items.len() as u32,
        }
    }

    /// Releases slot `i` (its value stays until reused).
    #[inline]
    pub fn free(&mut self, i: u32) {
        debug_assert!((i as usize) < self.items.len());
        debug_assert!(self.live > 0);
        self.live -= 1;
        self.free.push(i);
    }

    /// Objects in use.
    #[inline]
    pub fn live(&self) -> u32 {
        self.live
    }
}

impl<T> std::ops::Index<u32> for Slab<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: u32) -> &T {
        &self.items[i as usize]
    }
}

impl<T> std::ops::IndexMut<u32> for Slab<T> {
    #[inline]
    fn index_mut(&mut self, i: u32) -> &mut T {
        &mut self.items[i as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused() {
        let mut s = Slab::with_capacity(2);
        let a = s.alloc(1);
        let b = s.alloc(2);
        s.free(a);
        assert_eq!(s.next_index(), a);
        let c = s.alloc(3);
        assert_eq!(c, a);
        assert_eq!((s[b], s[c], s.live()), (2, 3, 2));
    }
}
