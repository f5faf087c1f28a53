//! Identifiers the core hands out: handles, tickets, jobs.

use core::fmt;

/// A transaction handle (kernel: `struct btrfs_trans_handle`). The slot
/// index is reused after the handle ends; the generation tells a stale id
/// from the current one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HandleId {
    pub(crate) slot: u32,
    pub(crate) generation: u32,
}

impl fmt::Display for HandleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "h{}.{}", self.slot, self.generation)
    }
}

/// A reservation ticket; ids grow by one per ticket created.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TicketId(pub u64);

impl fmt::Display for TicketId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}", self.0)
    }
}

/// A piece of work handed to the caller ([`Decision::RunRefs`],
/// [`Decision::Flush`]); the caller reports its end with
/// [`FlushModel::on_work_done`]. Ids grow by one per job.
///
/// [`Decision::RunRefs`]: crate::Decision::RunRefs
/// [`Decision::Flush`]: crate::Decision::Flush
/// [`FlushModel::on_work_done`]: crate::FlushModel::on_work_done
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(pub u64);

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "j{}", self.0)
    }
}
