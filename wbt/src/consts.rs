//! Kernel constants (`RWB_*`, default latency targets, horizons) and the
//! core's fixed sizes.

/// Base depth at step 0, before the queue-depth cap (kernel: `RWB_DEF_DEPTH`).
pub const DEF_DEPTH: u32 = 16;
/// Base depth of the 2016 v5 code (kernel v5: `RWB_MAX_DEPTH`).
pub const V5_MAX_DEPTH: u32 = 64;
/// Base monitoring window (kernel: `RWB_WINDOW_NSEC`).
pub const WINDOW_NS: u64 = 100_000_000;
/// Read completions needed for a valid window.
pub const MIN_READ_SAMPLES: u32 = 1;
/// Write-direction completions needed for a valid window (kernel: `RWB_MIN_WRITE_SAMPLES`).
pub const MIN_WRITE_SAMPLES: u32 = 3;
/// Consecutive no-data windows before drifting one step toward 0 (kernel: `RWB_UNKNOWN_BUMP`).
pub const UNKNOWN_BUMP: u32 = 5;
/// Default latency target on non-rotational devices (2 ms).
pub const DEFAULT_LAT_NONROT_NS: u64 = 2_000_000;
/// Default latency target on rotational devices (75 ms).
pub const DEFAULT_LAT_ROT_NS: u64 = 75_000_000;
/// "Other IO happened recently" horizon (kernel: `HZ / 10` in `close_io`).
pub const CLOSE_IO_NS: u64 = 100_000_000;
/// "A writer was dirty-throttled recently" horizon (kernel: `HZ` in `wb_recent_wait`).
pub const RECENT_DIRTY_WAIT_NS: u64 = 1_000_000_000;
/// Records the trace ring holds before it overwrites the oldest.
pub const TRACE_CAPACITY: usize = 64;
/// Number of throttling classes (kernel: `WBT_NUM_RWQ`).
pub const NUM_CLASSES: usize = 3;
