//! Typed errors of the event API and of construction.

use core::fmt;

use crate::{HandleId, JobId, TicketId, WalkRule};

/// An event the core cannot accept. The state is unchanged when one is
/// returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A reservation or release of 0 bytes (the kernel asserts against it).
    ZeroBytes,
    /// The handle id is unknown or was already ended.
    UnknownHandle(HandleId),
    /// The handle exists but is still waiting (for a ticket or a
    /// transaction) and cannot add refs or end yet.
    HandleNotOpen(HandleId),
    /// No job with that id is outstanding.
    UnknownJob(JobId),
    /// No ticket with that id was ever issued.
    UnknownTicket(TicketId),
    /// `on_commit_done` for a transaction whose write-out was not started.
    NotCommitting(u64),
    /// More bytes returned than the caller holds in grants.
    ReleaseExceedsGrants {
        /// Bytes the caller tried to return.
        bytes: u64,
        /// Bytes the caller holds.
        held: u64,
    },
    /// Refs were added with no head to hang them on.
    RefsWithoutHead,
    /// More cancellations than pending refs that could be cancelled.
    NothingToCancel,
    /// The ticket queue is at its configured capacity.
    TicketQueueFull,
    /// The handle table is at its configured capacity.
    HandleTableFull,
    /// A byte count above 2^60, an item count above 2^32 or a ref count
    /// above 2^40 (kept out so that no counter can overflow).
    TooLarge(u64),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ZeroBytes => write!(f, "a reservation or release of 0 bytes"),
            Error::UnknownHandle(h) => write!(f, "unknown transaction handle {h}"),
            Error::HandleNotOpen(h) => write!(f, "transaction handle {h} is still waiting"),
            Error::UnknownJob(j) => write!(f, "no outstanding job {j}"),
            Error::UnknownTicket(t) => write!(f, "unknown reservation ticket {t}"),
            Error::NotCommitting(t) => write!(f, "transaction {t} is not being written out"),
            Error::ReleaseExceedsGrants { bytes, held } => {
                write!(f, "returning {bytes} bytes but only {held} are held")
            }
            Error::RefsWithoutHead => write!(f, "refs added without any head to attach to"),
            Error::NothingToCancel => write!(f, "more cancelling refs than pending refs"),
            Error::TicketQueueFull => write!(f, "the ticket queue is full"),
            Error::HandleTableFull => write!(f, "the handle table is full"),
            Error::TooLarge(v) => write!(f, "{v} is beyond the model's range"),
        }
    }
}

impl core::error::Error for Error {}

/// A [`Config`](crate::Config) that cannot be run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The node size is not a power of two between 4 KiB and 64 KiB.
    NodeSize(u64),
    /// `used + readonly + global_rsv` does not fit in `total`.
    TooSmall {
        /// What must fit.
        needed: u64,
        /// `total`.
        total: u64,
    },
    /// A capacity (tickets, handles, trace, decisions) or `chunk_heads`
    /// is 0, or `profile_factor` is 0.
    ZeroCapacity(&'static str),
    /// The preemption threshold is not a percentage in 1..=100.
    Percent(u64),
    /// A size or cost above 2^60 (kept out so no counter can overflow).
    TooLarge(&'static str),
    /// The flush policy's reclaim walk breaks a rule.
    Walk(WalkRule),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::NodeSize(n) => {
                write!(f, "nodesize {n} is not a power of two in 4096..=65536")
            }
            ConfigError::TooSmall { needed, total } => write!(
                f,
                "metadata space of {total} bytes cannot hold {needed} bytes of used, read-only and global reserve"
            ),
            ConfigError::ZeroCapacity(what) => write!(f, "{what} must be at least 1"),
            ConfigError::Percent(p) => write!(f, "threshold {p}% is not in 1..=100"),
            ConfigError::TooLarge(what) => write!(f, "{what} is beyond the model's range (2^60)"),
            ConfigError::Walk(rule) => write!(
                f,
                "the flush policy's reclaim walk breaks the rule: {}",
                rule.says()
            ),
        }
    }
}

impl core::error::Error for ConfigError {}
