//! Verification suites for the algorithm crates: loom models of the
//! userspace faces, reference-model property tests, and historic bugs
//! reintroduced as mutants behind a test-only feature.
//!
//! * `tests/wbt_loom.rs`: loom models of `iolab_wbt::Throttle` (no lost
//!   wakeup, inflight never above the limit, FIFO order, limit lowered and
//!   raised while threads sleep, permits dropped with sleepers, disabling
//!   with a sleeper).
//! * `tests/wbt_mutants.rs`: spec §9 bugs B2, B3, B4 and B5 as loom
//!   scenarios; each passes on the real code and fails under its
//!   `mutant-bN` feature.
//! * `tests/flush_loom.rs`: loom models of `iolab_flush::Pool` (flush.md
//!   §8: reservers and a flusher keep FIFO, no sleeper left behind, grant
//!   versus interrupt, space returned while a ticket is queued, a ticket
//!   queued as the flusher stops).
//! * `tests/flush_mutants.rs`: two historic btrfs races, F1 (an
//!   interrupted waiter's ticket left queued, leaking its later grant) and
//!   F2 (a newcomer taking space freed for the front ticket), each caught
//!   by the loom suite under its `mutant-fN` feature.
//!
//! All are compiled only with `RUSTFLAGS="--cfg iolab_loom"`; the commands
//! are in each file's header. The simulator's own tests live in
//! `sim/tests` and in its modules.
