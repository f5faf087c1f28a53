//! What an instance is built from: the algorithm [`Variant`], the device's
//! static facts ([`DeviceParams`]) and extra [`Options`].

/// Which generation of the algorithm to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Mainline blk-wbt (6.x): `block/blk-wbt.c`, `block/blk-rq-qos.c`.
    #[default]
    Modern,
    /// The April 2016 v5 posting (`lib/wbt.c`, 26 Apr 2016).
    V5_2016,
}

/// Static facts about the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceParams {
    /// Device queue depth; 0 is treated as 1.
    pub queue_depth: u32,
    /// Rotational (HDD): the default target is 75 ms instead of 2 ms.
    pub rotational: bool,
    /// A volatile write-back cache is present (kernel: `QUEUE_FLAG_WC`).
    pub write_cache: bool,
}

/// Optional behaviour beyond the device parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Time at which the instance is created. The kernel stamps the last
    /// read issue and completion with the init time, so for the first
    /// 100 ms every write counts as being close to other IO.
    pub start_ns: u64,
    /// If set, window deadlines are truncated to timer ticks of this rate,
    /// as the kernel does (`jiffies + nsecs_to_jiffies(window)`). `None`
    /// keeps exact nanoseconds.
    pub tick_hz: Option<u32>,
}
