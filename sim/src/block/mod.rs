//! Block layer: requests and their flags, the tag pool, the pass-through
//! dispatch queue, the cache-flush sequencer and the rq-qos hook points.
//!
//! The mechanics live in `world::submit`; this module holds the data types
//! the policies and the rest of the simulator share.

pub mod deadline;
pub mod flush;
pub mod pool;
pub mod qos;
pub mod request;

pub use qos::{Admit, Cgroup, DeviceInfo, NoPolicy, Policy, QosBio, QosRq, Waiter};
pub use request::{Bio, Flags, Op, Origin, Request};
