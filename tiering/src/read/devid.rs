//! `devid`: read from one chosen device when it holds a copy (kernel:
//! `btrfs_read_preferred`, 6.14, CONFIG_BTRFS_EXPERIMENTAL).

use super::{ReadPolicy, ReadRequest};

/// The first copy in range on device `read_devid`, else the first copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Devid {
    /// The preferred device (kernel default: the devid of `latest_dev` at
    /// mount).
    pub read_devid: u64,
}

impl ReadPolicy for Devid {
    fn name(&self) -> &'static str {
        "devid"
    }

    fn preferred(&mut self, req: &ReadRequest<'_>) -> usize {
        let m = req.mirrors();
        req.range()
            .find(|&i| m[i].devid == self.read_devid)
            .unwrap_or(req.first())
    }
}
