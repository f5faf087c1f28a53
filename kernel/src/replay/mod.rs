//! The iolab cores replayed on the kernel's own traces.
//!
//! [`wbt`]: the `iolab-wbt` core driven window by window from a trace's
//! `wbt_*` records (and, where the kernel did not print a window's
//! statistics, from its `block_rq_issue`/`block_rq_complete` records),
//! checked after every window against the kernel's verdict and step.
//!
//! [`dirty`]: the simulator's dirty-throttling arithmetic
//! (`iolab_sim::cache::wb`) driven from a trace's `writeback` records,
//! checked at every throttled pass (the task's rate from its position on
//! the control lines) and at every rate-limit update (the balanced rate
//! and the new base rate).

pub mod dirty;
mod expiry;
mod samples;
pub mod wbt;

#[cfg(test)]
mod tests;
