//! `iolab kernel ...`: the real kernel as the reference. `capture` runs a
//! fio job on the real kernel with its tracepoints on and writes a bundle;
//! `replay-wbt` replays the wbt core on a bundle's or any trace;
//! `replay-dirty` the simulator's dirty-throttling arithmetic; `summary`
//! adds a capture up in the figures `iolab run` reports.

mod bundle;
mod calibrate;
mod capture;
mod journal;
mod preflight;
mod procs;
mod replay;
mod replay_dirty;
mod summary;
mod undo;

use crate::Failure;

pub use calibrate::{CalibrateArgs, calibrate};

#[derive(clap::Subcommand, Debug)]
pub enum KernelCmd {
    /// Run a fio job on the real kernel (a loop device this command makes,
    /// or a device you name) with its tracepoints on, and write a bundle:
    /// the trace, fio's JSON, the queue's attributes, the dirty-page
    /// settings. Needs root, tracefs, fio and the mkfs tool; puts back
    /// everything it changes.
    Capture(capture::CaptureArgs),
    /// Replay the wbt core on a kernel trace (a file, or a bundle
    /// directory), window by window, and compare every verdict and step
    /// with the kernel's. Exits 3 if any differs.
    ReplayWbt(replay::ReplayArgs),
    /// Replay the simulator's dirty-throttling arithmetic on a kernel trace
    /// with the writeback events (a file, or a bundle directory): every
    /// throttled pass's task rate and every rate-limit update against the
    /// kernel's. Exits 3 if any differs.
    ReplayDirty(replay_dirty::ReplayDirtyArgs),
    /// What a capture (a bundle, or a bare trace) adds up to, in the
    /// figures `iolab run` reports: fio's groups, each device's IO, btrfs
    /// commits, flush states and ticket waits, dirty-throttling passes and
    /// pauses.
    Summary(summary::SummaryArgs),
    /// Put back what a capture or calibrate that was killed (SIGKILL, the
    /// OOM killer, a lost session) left changed: every change listed in
    /// the journals of dead runs under /run/iolab (knobs, tracing, fio's
    /// processes, mounts, loop devices, files), saying what it did. A run
    /// that still runs is left alone. Needs root.
    Cleanup(journal::CleanupArgs),
}

pub fn run(cmd: KernelCmd) -> Result<(), Failure> {
    match cmd {
        KernelCmd::Capture(a) => capture::capture(&a),
        KernelCmd::ReplayWbt(a) => replay::replay_wbt(a),
        KernelCmd::ReplayDirty(a) => replay_dirty::replay_dirty(a),
        KernelCmd::Summary(a) => summary::summary(&a),
        KernelCmd::Cleanup(a) => journal::cleanup(&a),
    }
}
