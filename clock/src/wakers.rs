//! [`WakerSet`]: the tasks waiting on a face, each under its waiter's key.

use std::task::Waker;
use std::vec::Vec;

/// The wakers of the tasks waiting on a face (the iocost controller's
/// grants, the pool's reservations and flusher), each under its waiter's
/// key. A face registers a waker under its own lock, in the same critical
/// section where the task looked for its outcome, and wakes them all
/// whenever an outcome may have changed: so no wake falls between a look
/// and a registration. A task polled again replaces its waker.
#[derive(Debug, Default)]
pub struct WakerSet {
    entries: Vec<(u64, Waker)>,
}

impl WakerSet {
    /// No task waits.
    pub const fn new() -> WakerSet {
        WakerSet {
            entries: Vec::new(),
        }
    }

    /// `key`'s task waits with `waker` (replacing the one it had).
    pub fn register(&mut self, key: u64, waker: &Waker) {
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some((_, w)) => w.clone_from(waker),
            None => self.entries.push((key, waker.clone())),
        }
    }

    /// `key`'s task no longer waits (it resolved, or its future was
    /// dropped).
    pub fn forget(&mut self, key: u64) {
        self.entries.retain(|(k, _)| *k != key);
    }

    /// Wake every waiting task; each registers again if it still waits.
    pub fn wake_all(&mut self) {
        for (_, w) in self.entries.drain(..) {
            w.wake();
        }
    }

    /// Tasks waiting.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No task waits.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::task::Wake;

    struct Count(AtomicU32);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_key_holds_one_waker_and_wake_all_empties_the_set() {
        let (a, b) = (
            Arc::new(Count(AtomicU32::new(0))),
            Arc::new(Count(AtomicU32::new(0))),
        );
        let mut set = WakerSet::new();
        set.register(1, &Waker::from(Arc::clone(&a)));
        set.register(1, &Waker::from(Arc::clone(&a)));
        set.register(2, &Waker::from(Arc::clone(&b)));
        assert_eq!(set.len(), 2, "one entry per key");
        set.forget(2);
        set.wake_all();
        assert!(set.is_empty());
        assert_eq!(
            (a.0.load(Ordering::SeqCst), b.0.load(Ordering::SeqCst)),
            (1, 0)
        );
    }
}
