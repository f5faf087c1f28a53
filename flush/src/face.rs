//! The reservation pool's face as a trait: what a user's own threaded
//! pool implements to be checked by the loom models of
//! `iolab_verification::flush::pool` (no lost wakeup, FIFO hand-off,
//! no grant beyond the space, close fails every waiter, cancellation
//! gives back), the same models [`Pool`] goes through.
//!
//! An implementation takes its locks, condition variables, atomics and
//! threads from [`sync`](crate::sync), which is loom's under
//! `--cfg iolab_loom`, so the models see every wait and notify.

use crate::sync::AtomicBool;
use crate::{FlushKind, PoolError};
use crate::{Pool, pool::Clock};

/// A space of bytes shared by threads, granted in the order asked.
///
/// The rules the models hold an implementation to:
///
/// * a reservation that fits, with nobody waiting, is granted at once;
///   one that does not waits, behind every earlier waiter (FIFO: a later,
///   smaller request never takes space the front waiter needs);
/// * bytes held never exceed the space;
/// * bytes given back grant the waiters they now fit, in order, and wake
///   them (no lost wakeup);
/// * after [`close`](Self::close) every waiter, and every later
///   reservation, fails with [`PoolError::Closed`] holding nothing, and
///   nobody is left asleep;
/// * a cancelled waiter either keeps a grant that came first or fails
///   with [`TicketError::Eintr`](crate::TicketError::Eintr) holding nothing, and its place frees
///   the waiters behind it.
pub trait ReservationPool: Send + Sync {
    /// Wait until `bytes` are granted, or the pool closes.
    fn reserve_bytes(&self, bytes: u64) -> Result<(), PoolError>;

    /// [`reserve_bytes`](Self::reserve_bytes), giving up with
    /// [`PoolError::Ticket`]`(`[`TicketError::Eintr`](crate::TicketError::Eintr)`)` once `cancel`
    /// is set and [`notify`](Self::notify) called, unless the grant came
    /// first.
    fn reserve_bytes_cancellable(&self, bytes: u64, cancel: &AtomicBool) -> Result<(), PoolError>;

    /// Give back `bytes` a reservation holds.
    fn release_bytes(&self, bytes: u64);

    /// Wake every sleeper, to look at its cancel flag.
    fn notify(&self);

    /// End the service: every waiter and every later reservation fails
    /// with [`PoolError::Closed`]; bytes held stay held.
    fn close(&self);

    /// Reservations waiting now.
    fn waiters(&self) -> usize;

    /// Bytes held by reservations now.
    fn held_bytes(&self) -> u64;
}

/// The btrfs pool: reservations are `FlushAll` tickets; a grant is kept
/// (not returned on a drop) until [`release_bytes`](ReservationPool::release_bytes).
impl<C: Clock> ReservationPool for Pool<C> {
    fn reserve_bytes(&self, bytes: u64) -> Result<(), PoolError> {
        self.reserve(bytes, FlushKind::FlushAll).map(|r| {
            r.keep();
        })
    }

    fn reserve_bytes_cancellable(&self, bytes: u64, cancel: &AtomicBool) -> Result<(), PoolError> {
        self.reserve_cancellable(bytes, FlushKind::FlushAll, cancel)
            .map(|r| {
                r.keep();
            })
    }

    fn release_bytes(&self, bytes: u64) {
        self.give_back(bytes);
    }

    fn notify(&self) {
        Pool::notify(self);
    }

    fn close(&self) {
        Pool::close(self);
    }

    fn waiters(&self) -> usize {
        let s = self.snapshot();
        s.normal_tickets + s.prio_tickets
    }

    fn held_bytes(&self) -> u64 {
        self.snapshot().grants
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, ManualClock};

    #[test]
    fn a_kept_grant_stays_held_until_released() {
        let pool = Pool::with_clock(Config::default(), ManualClock::new(0)).unwrap();
        pool.reserve_bytes(4096).unwrap();
        assert_eq!((pool.held_bytes(), pool.waiters()), (4096, 0));
        pool.release_bytes(4096);
        assert_eq!(pool.held_bytes(), 0);
        pool.close();
        assert_eq!(pool.reserve_bytes(1), Err(PoolError::Closed));
    }
}
