//! `pid`: the default policy since the read-policy framework (5.11)
//! (kernel: `BTRFS_READ_POLICY_PID` in `find_live_mirror`).

use super::{ReadPolicy, ReadRequest};

/// Copy `first + pid mod n`: stateless, so one reader always hits the same
/// copy and many processes spread by pid.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pid;

impl ReadPolicy for Pid {
    fn name(&self) -> &'static str {
        "pid"
    }

    /// Spreads reads by reader: many readers spread over the copies.
    fn balances(&self) -> bool {
        true
    }

    fn preferred(&mut self, req: &ReadRequest<'_>) -> usize {
        req.first() + (req.pid as usize) % req.n()
    }
}
