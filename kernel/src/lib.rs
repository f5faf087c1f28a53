//! The real Linux kernel as iolab's reference.
//!
//! * [`trace`]: the kernel's text trace format, as `cat
//!   /sys/kernel/tracing/trace`, `trace_pipe` and `trace-cmd report` print
//!   it, read into one typed [`trace::Record`] per line for the wbt,
//!   block, writeback and btrfs events iolab compares against.
//! * [`replay`]: the `iolab-wbt` core driven window by window from a
//!   captured trace and checked, after every window, against the decision
//!   the kernel traced.
//! * [`tally`]: what a trace adds up to (btrfs commits, flush states and
//!   ticket waits; dirty-throttling passes and pauses), the figures the
//!   simulator reports for the same run.
//!
//! Everything here is pure: text in, values out. No file, clock, thread
//! or environment is touched; the `iolab` command does the IO (reading a
//! capture, running one).

pub mod replay;
pub mod tally;
pub mod trace;
