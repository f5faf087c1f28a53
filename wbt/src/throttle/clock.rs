//! Time sources for [`Throttle`](crate::Throttle): the one clock crate's
//! (`iolab-clock`), shared with every other face.

pub use iolab_clock::{Clock, ManualClock, SystemClock};
