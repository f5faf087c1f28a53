//! btrfs delayed-ref throttling and metadata flushing as a pure,
//! deterministic state machine, in its catch-up (≤ 5.0-rc4) and on-demand
//! (5.0-rc5+) forms, with the preemptive-flushing generations of 2019 and
//! 2021 as a knob.
//!
//! Every btrfs tree change queues *delayed refs* (extent back-reference
//! updates) instead of editing the extent tree at once; running them costs
//! CPU and COWs extent-tree blocks. Up to Linux 5.0-rc4 the end of a
//! transaction handle caught up with that backlog: it ran refs, or marked
//! the transaction blocked and committed it, when the backlog looked large
//! or the reserves short (**catch-up**). Commit 302167c50b32 (Josef Bacik,
//! 2019) removed that: pressure now comes only from the `delayed_refs_rsv`
//! block reserve, whose deficit makes reservations queue as *tickets* that
//! an async worker serves by walking ordered *flush states* (run refs,
//! write delalloc, allocate a chunk, commit) (**on-demand**). The rules and
//! constants are those of `fs/btrfs/` (`space-info.c`, `delayed-ref.c`,
//! `block-rsv.c`, `transaction.c`) in each era.
//!
//! # Shape: sans-IO
//!
//! [`FlushModel`] never reads a clock, never sleeps, spawns no thread and
//! does no IO. Time is an input (`now`, `u64` ns, non-decreasing). Queues
//! are allocated at construction at configured capacities; refs are
//! counted, not stored, so nothing is allocated per ref or per request.
//! The same inputs give the same decisions, bit for bit.
//!
//! ```text
//! write() reserves metadata  -> on_reserve(now, owner, bytes, FlushKind::FlushAll) -> Granted | Queued(ticket) | Failed
//! its bytes come back        -> on_release(now, bytes)
//! a writer is killed         -> on_interrupt(now, ticket)
//! endio starts a handle      -> on_handle_start(now, HandleKind::Join, 0)          -> Ready(h) | Wait{..} | ...
//! extents reach the device   -> on_refs_added(now, h, RefBatch { new_heads, refs, .. })
//! the handle ends            -> on_handle_end(now, h, false)                         -> Done | Wait(h)
//! a job handed out is done   -> on_work_done(now, job)
//! commit write-out durable   -> on_commit_done(now, txn)
//! page cache changed         -> on_writeback(now, delalloc_bytes, ordered_bytes)
//! timer                      -> next_deadline(), then on_timer(now)
//! after any call             -> drain poll_decision() in order, and poll_trace()
//! ```
//!
//! [`Decision`]s are what the caller must act on: grant or fail a waiting
//! reserver, let a waiting handle go, *run K heads / R refs costing T ns of
//! CPU and dirtying B bytes* ([`Decision::RunRefs`]), do a flush state's
//! page-cache work ([`Decision::Flush`]), write out a commit
//! ([`Decision::CommitIo`]). Work that takes time comes back as
//! `on_work_done` / `on_commit_done`; actors (reclaim worker, preemptive
//! worker, catch-up ref runner, committer, priority owners) wait for it
//! and continue.
//!
//! ```
//! use iolab_flush::{Config, Decision, FlushKind, FlushModel, HandleKind, Policy, RefBatch, Reserve, Start};
//!
//! let mut fs = FlushModel::new(Config { policy: Policy::on_demand(), ..Config::default() }).unwrap();
//! assert_eq!(fs.on_reserve(0, 7, 256 * 1024, FlushKind::FlushAll), Ok(Reserve::Granted));
//! let Ok(Start::Ready(h)) = fs.on_handle_start(10, HandleKind::Join, 0) else { panic!() };
//! fs.on_refs_added(20, h, RefBatch { new_heads: 2, refs: 2, ..RefBatch::default() }).unwrap();
//! fs.on_handle_end(30, h, false).unwrap();
//! // Two heads now count 2 × 256 KiB against the delayed-ref reserve.
//! assert_eq!(fs.snapshot().delayed_refs.size, 512 * 1024);
//! assert_eq!(fs.next_deadline(), Some(5_000_000_000));
//! while let Some(_d) = fs.poll_decision() {}
//! ```
//!
//! # Userspace face (feature `std`, on by default)
//!
//! [`Pool`] shares one [`FlushModel`] between threads: reservers block in
//! [`Pool::reserve`] until their ticket is granted or fails
//! ([`Pool::reserve_cancellable`] adds the kill-signal path), a flusher
//! thread loops on [`Pool::wait_work`] / [`Pool::work_done`], and the
//! commit timer is driven through [`Pool::tick`] (the protocol, shutdown and
//! owned reservations: [the `pool` module](crate::pool)). Time comes from an
//! injected [`Clock`] ([`SystemClock`], [`ManualClock`]). Its sync types
//! come from [`sync`], which swaps in loom under `--cfg iolab_loom`
//! (models in `verification/tests/flush_loom.rs`). Without the feature the crate is `no_std`
//! + `alloc` and holds the core only.
//!
//! Which flush states reclaim walks for waiting tickets and when a
//! flusher commits is an extension point, [`FlushPolicy`] ([`Policy`]
//! implements it; [`FlushModel::with_policy`] runs yours, refusing a walk
//! that breaks a [`WalkRule`]). A threaded pool of your own implements [`ReservationPool`] (which
//! [`Pool`] implements too) to go through `iolab-verification`'s loom
//! models (`flush::pool::check`).
//!
//! # Variants (kernel eras)
//!
//! | name | era | what it is |
//! |---|---|---|
//! | `flush=catch-up` | CU-rsv, 5.0-rc1…rc4 | `delayed_refs_rsv`, handle end blocks and commits on shortage |
//! | `flush=catch-up:run-at-end=on` | CU-legacy, ≤ 4.20 | time heuristic and catch-up batches at handle end, legacy space check |
//! | `flush=on-demand` | OD-2019, 5.0-rc5…5.11 | no handle-end work; tickets, `may_commit` gate, weak preemption |
//! | `flush=on-demand:preempt=2021` | OD-2021, 5.12…6.6 | clamped preemptive worker, unconditional commit, bounded pre-flush, 90 % |
//!
//! [`parse_policy`] reads these names (and further knobs, see [`knob`]
//! docs); `Display` on [`Policy`] writes the canonical name back.
//!
//! # Deliberate differences from the kernel
//!
//! * Refs are counted: a head's refs are the ready refs shared evenly over
//!   ready heads when it is claimed, and head selection has no key order.
//! * One committer: concurrent commit requests wait for the one in
//!   progress; a request during write-out commits the next transaction
//!   after it. The pre-flush happens once per transaction in every era.
//! * Join-type handles wait during `CommitDoing` (the kernel lets some
//!   through); `Attach` waits during `CommitStart` like `Start`.
//! * The handle's own tree updates only COW what [`RefBatch::meta_used`]
//!   says; delayed inode items are not modelled (their reserve stays 0,
//!   their flush states are handed to the caller as [`Decision::Flush`]).
//! * A priority owner's grant is reported when it happens, possibly while
//!   its own flush job is still out; the caller finishes the job anyway.
//! * The commit thread compares transaction age in nanoseconds, not whole
//!   seconds, and ticks every 5 s even when no transaction runs.
//! * The global reserve has a fixed size, refilled at every commit from
//!   the space then free (never by overcommitting).
//! * `FlushData` and `FlushFreeSpaceInode` act on the metadata space.
//! * The 5.4+ ticket protocol (no partial filling; no reservation jumping
//!   waiting tickets; failing from the front with re-grants,
//!   `maybe_fail_all_tickets`) is used in every era, the catch-up ones
//!   included; 5.0's partial filling, its reservations that could take
//!   space ahead of waiting tickets, and fail-everything
//!   `wake_all_tickets` are not modelled. The `may_commit` gate is the
//!   5.8–5.11 form of `may_commit_transaction` (front ticket minus free
//!   space; delayed and trans reserves).
//! * An `Attach` handle that waited through a commit joins the next
//!   transaction instead of failing with `-ENOENT`.
//! * Metadata `used` never grows: a COW allocates as much as it pins, so
//!   the no-force chunk allocation (80 % of `used`) only fires if the
//!   caller configures a nearly full filesystem.
//!
//! # Where the kernel departs from the simple rules (the kernel is followed)
//!
//! * Overcommit share: only `FlushAll` gets 1/8 of unallocated space;
//!   `FlushAllSteal` gets 1/2 like every other kind
//!   (`calc_available_free_space` tests `FlushAll` alone).
//! * Removing an interrupted ticket does not run a grant pass
//!   (`wait_reserve_ticket`); failures do (`maybe_fail_all_tickets`,
//!   `priority_reclaim_metadata_space`). Neither does a steal in the
//!   reclaim worker's fail-front (it returns at once), so a smaller ticket
//!   behind a stolen front can keep waiting while it fits, until the next
//!   space return or, if none comes, fail after three more passes (ticket
//!   removal is not a grant trigger).
//! * Progress only decrements `commit_cycles`, so after a grant a ticket
//!   can fail after fewer than three further passes without progress; the
//!   property tests check three passes since the worker's run began.
//! * A `run(count)` call counts heads, not units (a ref or a head
//!   cleanup): since 4.20 the run loop counts a head when it
//!   selects one. Only the legacy (4.19) accounting counts units. This
//!   applies to `FLUSH_DELAYED_REFS_NR`, the `2 × num_entries` of `run(0)`
//!   before 5.12, and the catch-up batches.
//! * `need_do_async_reclaim` (the 2019 preemptive trigger) predates 5.0,
//!   so `flush=catch-up` has it too.

#![no_std]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod catchup;
mod commit;
mod config;
pub mod consts;
mod decision;
mod error;
mod events;
#[cfg(feature = "std")]
mod face;
mod flush_policy;
mod handle;
mod ids;
mod kind;
pub mod knob;
mod machine;
#[cfg(feature = "std")]
pub mod pool;
#[cfg(feature = "std")]
mod pool_future;
mod preempt;
mod priority;
mod reclaim;
mod refs;
mod refworker;
mod rsv;
mod snapshot;
pub mod space;
pub mod state;
#[cfg(feature = "std")]
pub mod sync;
mod ticket;
mod trace;
mod txn;

pub use config::{Config, Mode, Params, Policy, Preempt, RunZero, StateList};
pub use decision::{Actor, CommitSource, Decision, TicketError};
pub use error::{ConfigError, Error};
pub use events::{MAX_BYTES, MAX_ITEMS, MAX_REFS};
#[cfg(feature = "std")]
pub use face::ReservationPool;
pub use flush_policy::{CommitView, FlushPolicy, WalkRule, check_walk};
pub use handle::{End, Start};
pub use ids::{HandleId, JobId, TicketId};
#[cfg(feature = "std")]
pub use iolab_clock::{Ticker, Timed};
pub use kind::{FlushKind, HandleKind};
pub use knob::{KnobError, parse_policy};
pub use machine::FlushModel;
#[cfg(feature = "std")]
pub use pool::{
    Clock, LATE_TICK_NS, ManualClock, OwnedReservation, OwnedReserveFuture, Pool, PoolError,
    Reservation, ReserveFuture, SystemClock, Work, WorkFuture,
};
pub use refs::{RefBatch, RefQueue};
pub use snapshot::Snapshot;
pub use space::{Rsv, RsvKind, Space};
pub use state::FlushState;
pub use ticket::{Interrupted, Reserve};
pub use trace::TraceRecord;
pub use txn::TxnState;

#[cfg(test)]
mod tests;

/// What an engine imports to run the pool, with names that do not
/// collide with the other iolab crates' preludes: `use
/// iolab_flush::prelude::*;` beside theirs. `Snapshot`, which the crates
/// share, carries the crate's name here.
pub mod prelude {
    #[cfg(feature = "std")]
    pub use crate::{
        Clock, ManualClock, OwnedReservation, OwnedReserveFuture, Pool, PoolError, Reservation,
        ReservationPool, ReserveFuture, SystemClock, Ticker, Timed, Work, WorkFuture,
    };
    pub use crate::{
        Config, FlushKind, FlushModel, FlushPolicy, Params, Policy, RefBatch,
        Snapshot as FlushSnapshot, TicketError,
    };
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
