//! Conformance suites for the reservation pool's face
//! ([`ReservationPool`](iolab_flush::ReservationPool)), for anyone's
//! threaded pool: loom models, compiled under `--cfg iolab_loom`.
//!
//! ```text
//! // tests/pool_loom.rs of your crate
//! #![cfg(iolab_loom)]
//! #[test]
//! fn my_pool_conforms() {
//!     iolab_verification::flush::pool::check(|| MyPool::new(iolab_verification::flush::pool::SPACE));
//! }
//! ```
//!
//! ```text
//! RUSTFLAGS="--cfg iolab_loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release --test pool_loom
//! ```

/// The reservation pool's loom models.
#[cfg(iolab_loom)]
pub mod pool {
    use iolab_flush::sync::{Arc, AtomicBool, AtomicU64, Ordering, thread};
    use iolab_flush::{PoolError, ReservationPool, TicketError};

    const KIB: u64 = 1024;

    /// The space the models expect the pool `make` builds to have free:
    /// exactly this, and nothing else can make room (no flusher runs).
    pub const SPACE: u64 = 1024 * KIB;

    /// The pool under a model, with the model's own count of the bytes
    /// it has seen granted and not yet given back.
    struct Under<P> {
        pool: P,
        held: AtomicU64,
    }

    impl<P: ReservationPool> Under<P> {
        fn new(pool: P) -> Arc<Under<P>> {
            Arc::new(Under {
                pool,
                held: AtomicU64::new(0),
            })
        }

        /// Note a grant: the bytes held never exceed the space.
        fn granted(&self, bytes: u64) {
            let now = self.held.fetch_add(bytes, Ordering::SeqCst) + bytes;
            assert!(
                now <= SPACE,
                "granted beyond the space: {now} bytes held of {SPACE}"
            );
        }

        fn reserve(&self, bytes: u64) -> Result<u64, PoolError> {
            self.pool.reserve_bytes(bytes)?;
            self.granted(bytes);
            Ok(bytes)
        }

        fn release(&self, bytes: u64) {
            self.held.fetch_sub(bytes, Ordering::SeqCst);
            self.pool.release_bytes(bytes);
        }

        /// Spin (yielding to the model checker) until `n` reservations wait.
        fn wait_waiters(&self, n: usize) {
            while self.pool.waiters() < n {
                thread::yield_now();
            }
        }

        /// At a model's end: every byte given back, nobody waiting, and
        /// the whole space grantable at once.
        fn settled(&self) {
            assert_eq!(self.pool.waiters(), 0, "a reservation is still waiting");
            assert_eq!(
                self.pool.held_bytes(),
                0,
                "bytes held after every reservation gave its bytes back (a leak)"
            );
            self.reserve(SPACE)
                .expect("the whole space, free again, is granted");
            self.release(SPACE);
        }
    }

    fn thread_reserving<P: ReservationPool + 'static>(
        u: &Arc<Under<P>>,
        bytes: u64,
    ) -> thread::JoinHandle<Result<u64, PoolError>> {
        let u = Arc::clone(u);
        thread::spawn(move || u.reserve(bytes))
    }

    /// Runs every model on pools `make` builds, each with [`SPACE`] free.
    ///
    /// # Panics
    ///
    /// Where a model fails: a rule's message, or loom's report of a
    /// deadlock (a lost wakeup or a sleeper left behind).
    pub fn check<P, F>(make: F)
    where
        P: ReservationPool + 'static,
        F: Fn() -> P + Send + Sync + 'static,
    {
        let make = std::sync::Arc::new(make);
        let m = std::sync::Arc::clone(&make);
        no_lost_wakeup(move || m());
        let m = std::sync::Arc::clone(&make);
        fifo_hand_off(move || m());
        let m = std::sync::Arc::clone(&make);
        close_fails_every_waiter(move || m());
        cancellation_gives_back(move || make());
    }

    /// Two reservers wait behind a holder of the whole space; one release
    /// must grant and wake both.
    pub fn no_lost_wakeup<P, F>(make: F)
    where
        P: ReservationPool + 'static,
        F: Fn() -> P + Send + Sync + 'static,
    {
        crate::model("pool::no_lost_wakeup", move || {
            let u = Under::new(make());
            u.reserve(SPACE).expect("the space is free");
            let a = thread_reserving(&u, 256 * KIB);
            let b = thread_reserving(&u, 256 * KIB);
            u.release(SPACE);
            let got =
                a.join().expect("a").expect("a granted") + b.join().expect("b").expect("b granted");
            u.release(got);
            u.settled();
        });
    }

    /// A waits for 768 KiB at the front; half the space comes back, which
    /// would fit B's 256 KiB but not A: B must not take it ahead of A.
    pub fn fifo_hand_off<P, F>(make: F)
    where
        P: ReservationPool + 'static,
        F: Fn() -> P + Send + Sync + 'static,
    {
        crate::model("pool::fifo_hand_off", move || {
            let u = Under::new(make());
            u.reserve(SPACE / 2).expect("fits");
            u.reserve(SPACE / 2).expect("fits");
            let a = thread_reserving(&u, 768 * KIB);
            u.wait_waiters(1);
            u.release(SPACE / 2);
            let b = {
                let u = Arc::clone(&u);
                thread::spawn(move || {
                    let got = u.reserve(256 * KIB);
                    assert_eq!(
                        u.pool.waiters(),
                        0,
                        "a later, smaller reservation was granted while the front one waits (not FIFO)"
                    );
                    got
                })
            };
            u.release(SPACE / 2);
            let got =
                a.join().expect("a").expect("a granted") + b.join().expect("b").expect("b granted");
            u.release(got);
            u.settled();
        });
    }

    /// Two reservers wait (or are about to) behind a holder of the whole
    /// space when the pool closes: both fail with `Closed` holding
    /// nothing, and so does a later reservation.
    pub fn close_fails_every_waiter<P, F>(make: F)
    where
        P: ReservationPool + 'static,
        F: Fn() -> P + Send + Sync + 'static,
    {
        crate::model("pool::close_fails_every_waiter", move || {
            let u = Under::new(make());
            u.reserve(SPACE).expect("the space is free");
            let a = thread_reserving(&u, 256 * KIB);
            let b = thread_reserving(&u, 256 * KIB);
            u.pool.close();
            for (who, t) in [("a", a), ("b", b)] {
                match t.join().expect(who) {
                    Err(PoolError::Closed) => {}
                    other => panic!("{who} waited through the close and got {other:?}, not Closed"),
                }
            }
            assert_eq!(
                u.reserve(1),
                Err(PoolError::Closed),
                "a reservation after the close"
            );
            u.release(SPACE);
            assert_eq!(u.pool.waiters(), 0, "a reservation is still waiting");
            assert_eq!(u.pool.held_bytes(), 0, "bytes held after the release");
        });
    }

    /// A waiter is cancelled while the space it waits for comes back: it
    /// keeps a grant that came first or fails with EINTR holding nothing;
    /// either way no byte is left held and the whole space is grantable.
    pub fn cancellation_gives_back<P, F>(make: F)
    where
        P: ReservationPool + 'static,
        F: Fn() -> P + Send + Sync + 'static,
    {
        crate::model("pool::cancellation_gives_back", move || {
            let u = Under::new(make());
            u.reserve(SPACE).expect("the space is free");
            let cancel = Arc::new(AtomicBool::new(false));
            let a = {
                let (u, cancel) = (Arc::clone(&u), Arc::clone(&cancel));
                thread::spawn(
                    move || match u.pool.reserve_bytes_cancellable(SPACE / 2, &cancel) {
                        Ok(()) => {
                            u.granted(SPACE / 2);
                            SPACE / 2
                        }
                        Err(PoolError::Ticket(TicketError::Eintr)) => 0,
                        Err(e) => panic!("a cancelled reservation failed with {e}, not EINTR"),
                    },
                )
            };
            u.wait_waiters(1);
            let r = {
                let u = Arc::clone(&u);
                thread::spawn(move || u.release(SPACE))
            };
            cancel.store(true, Ordering::SeqCst);
            u.pool.notify();
            r.join().expect("release");
            let got = a.join().expect("a");
            u.release(got);
            u.settled();
        });
    }
}
