//! `queue`: fewest requests in flight (kakra's out-of-tree patch set,
//! 2025; ties go to the lowest index).

use super::{ReadPolicy, ReadRequest};

/// The copy whose device has the fewest requests outstanding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Queue;

impl ReadPolicy for Queue {
    fn name(&self) -> &'static str {
        "queue"
    }

    /// Spreads reads to the copy with the fewest in flight.
    fn balances(&self) -> bool {
        true
    }

    fn preferred(&mut self, req: &ReadRequest<'_>) -> usize {
        let m = req.mirrors();
        let mut best = req.first();
        for i in req.range() {
            if m[i].inflight < m[best].inflight {
                best = i;
            }
        }
        best
    }
}
