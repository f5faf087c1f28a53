//! iolab's simulator: a deterministic discrete-event model of
//! workload → page cache → filesystem → block layer → device.
//!
//! Start with [`scenario::run`]: give it parsed fio jobs, a device
//! configuration, memory size and a seed; get fio-shaped statistics back.
//! See ARCHITECTURE.md at the repository root for the map.

pub mod block;
pub mod cache;
pub mod cost;
pub mod device;
pub mod engine;
pub mod fio;
pub mod fs;
pub mod policies;
pub mod rng;
pub mod scenario;
pub mod slab;
pub mod stats;
pub mod sweep;
pub mod time;
pub mod variant;
pub mod volume;
pub mod workload;
mod world;

pub use iolab_tiering::{AllocHint, Profile};
pub use scenario::{
    DEFAULT_LOG_WINDOW_MS, FsKind, RunOutput, RunProgress, Scenario, SchedKind, SimError,
    VolumeSpec, Watch, check_variant, run, run_watched,
};
pub use variant::{Variant, parse_policies, parse_variant};
