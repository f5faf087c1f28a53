//! The iolab cores replayed on the kernel's own traces.
//!
//! [`wbt`]: the `iolab-wbt` core driven window by window from a trace's
//! `wbt_*` records (and, where the kernel did not print a window's
//! statistics, from its `block_rq_issue`/`block_rq_complete` records),
//! checked after every window against the kernel's verdict and step.

mod expiry;
mod samples;
pub mod wbt;

#[cfg(test)]
mod tests;
