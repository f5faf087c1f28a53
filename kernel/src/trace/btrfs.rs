//! The `btrfs` events iolab reads (kernel: `include/trace/events/btrfs.h`).
//! Each names its filesystem by fsid (a UUID), not by device.

use super::fields::{get, head, num};

/// `btrfs_flush_space`: one flush state run for a space reservation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlushSpace<'a> {
    /// Filesystem id.
    pub fsid: &'a str,
    /// `state=`: the flush state's number (kernel: `enum btrfs_flush_state`).
    pub state: i32,
    /// `flags=`: the space's block-group type bits (1 data, 2 system, 4
    /// metadata).
    pub flags: u64,
    /// `num_bytes=`.
    pub num_bytes: u64,
    /// `ret=`.
    pub ret: i32,
    /// `for_preempt=`: run by the preemptive flusher.
    pub for_preempt: bool,
}

/// `btrfs_reserve_ticket`: a reservation that waited on a ticket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReserveTicket<'a> {
    /// Filesystem id.
    pub fsid: &'a str,
    /// `flags=`: the space's type, as names.
    pub flags: &'a str,
    /// `bytes=`.
    pub bytes: u64,
    /// `start_ns=`: when the wait began.
    pub start_ns: u64,
    /// `flush=`: the flush mode, as a name.
    pub flush: &'a str,
    /// `error=`.
    pub error: i32,
}

/// `btrfs_trigger_flush`: a reservation started flushing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TriggerFlush<'a> {
    /// Filesystem id.
    pub fsid: &'a str,
    /// Why (the caller's reason string).
    pub reason: &'a str,
    /// `flush=`: the flush mode's number.
    pub flush: i32,
    /// `bytes=`.
    pub bytes: u64,
}

/// `btrfs_transaction_commit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransactionCommit<'a> {
    /// Filesystem id.
    pub fsid: &'a str,
    /// `gen=`: the committed generation.
    pub generation: u64,
}

/// `add_delayed_ref_head` / `run_delayed_ref_head`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelayedRefHead<'a> {
    /// Filesystem id.
    pub fsid: &'a str,
    /// `bytenr=`.
    pub bytenr: u64,
    /// `num_bytes=`.
    pub num_bytes: u64,
    /// `action=`, as a name.
    pub action: &'a str,
    /// `is_data=`.
    pub is_data: bool,
}

fn flag(f: &str, key: &str) -> Result<bool, String> {
    Ok(num::<u8>(f, key, "")? != 0)
}

pub(super) fn flush_space(payload: &str) -> Result<FlushSpace<'_>, String> {
    let (fsid, f) = head(payload)?;
    Ok(FlushSpace {
        fsid,
        state: num(f, "state", "")?,
        flags: num(f, "flags", "")?,
        num_bytes: num(f, "num_bytes", "")?,
        ret: num(f, "ret", "")?,
        for_preempt: flag(f, "for_preempt")?,
    })
}

pub(super) fn reserve_ticket(payload: &str) -> Result<ReserveTicket<'_>, String> {
    let (fsid, f) = head(payload)?;
    Ok(ReserveTicket {
        fsid,
        flags: get(f, "flags")?,
        bytes: num(f, "bytes", "")?,
        start_ns: num(f, "start_ns", "")?,
        flush: get(f, "flush")?,
        error: num(f, "error", "")?,
    })
}

pub(super) fn trigger_flush(payload: &str) -> Result<TriggerFlush<'_>, String> {
    let (fsid, rest) = head(payload)?;
    let (reason, f) = head(rest)?;
    Ok(TriggerFlush {
        fsid,
        reason,
        flush: num(f, "flush", "")?,
        bytes: num(f, "bytes", "")?,
    })
}

pub(super) fn transaction_commit(payload: &str) -> Result<TransactionCommit<'_>, String> {
    let (fsid, f) = head(payload)?;
    Ok(TransactionCommit {
        fsid,
        generation: num(f, "gen", "")?,
    })
}

pub(super) fn delayed_ref_head(payload: &str) -> Result<DelayedRefHead<'_>, String> {
    let (fsid, f) = head(payload)?;
    Ok(DelayedRefHead {
        fsid,
        bytenr: num(f, "bytenr", "")?,
        num_bytes: num(f, "num_bytes", "")?,
        action: get(f, "action")?,
        is_data: flag(f, "is_data")?,
    })
}
