//! [`Grant`]: an IO's right to run, from [`Controller::acquire`]; its drop
//! is the IO's completion.

use std::time::Duration;

use iolab_clock::{Clock, SystemClock};

use super::{Controller, Io};
use crate::{CostModel, Linear};

/// How a grant or a future reaches its controller.
#[derive(Debug)]
pub(super) enum Holder<'a, C: Clock, M: CostModel> {
    Borrowed(&'a Controller<C, M>),
    Owned(std::sync::Arc<Controller<C, M>>),
}

impl<C: Clock, M: CostModel> std::ops::Deref for Holder<'_, C, M> {
    type Target = Controller<C, M>;

    fn deref(&self) -> &Controller<C, M> {
        match self {
            Holder::Borrowed(c) => c,
            Holder::Owned(c) => c,
        }
    }
}

impl<'a, C: Clock, M: CostModel> Holder<'a, C, M> {
    pub(super) fn share(&self) -> Holder<'a, C, M> {
        match self {
            Holder::Borrowed(c) => Holder::Borrowed(c),
            Holder::Owned(c) => Holder::Owned(std::sync::Arc::clone(c)),
        }
    }
}

/// An admitted IO. Issue it, then drop the grant (or call
/// [`complete`](Self::complete)) when it completes: that returns its cost
/// and counts its latency, from the acquire to the drop, against the QoS
/// targets. An IO that was never issued (it failed before reaching the
/// device) is [`cancel`](Self::cancel)led instead, which returns the cost
/// without a latency sample.
#[derive(Debug)]
#[must_use = "dropping a grant at once reports the IO as completed"]
pub struct Grant<'a, C: Clock = SystemClock, M: CostModel = Linear> {
    ctl: Holder<'a, C, M>,
    io: Io,
    cost: u64,
    delay_ns: u64,
    alloc_ns: u64,
    start_ns: u64,
    live: bool,
}

/// A [`Grant`] that owns a reference count of its controller, from
/// [`Controller::acquire_owned`] or
/// [`Controller::acquire_owned_async`]: `'static` whenever the clock and
/// the cost model are.
pub type OwnedGrant<C = SystemClock, M = Linear> = Grant<'static, C, M>;

impl<'a, C: Clock, M: CostModel> Grant<'a, C, M> {
    pub(super) fn new(
        ctl: Holder<'a, C, M>,
        io: Io,
        cost: u64,
        delay_ns: u64,
        alloc_ns: u64,
        start_ns: u64,
    ) -> Grant<'a, C, M> {
        Grant {
            ctl,
            io,
            cost,
            delay_ns,
            alloc_ns,
            start_ns,
            live: true,
        }
    }

    /// The IO granted.
    pub fn io(&self) -> Io {
        self.io
    }

    /// Device vtime charged to the group (0: uncharged, as the root's IO).
    pub fn cost(&self) -> u64 {
        self.cost
    }

    /// How long the kernel would make the issuing task sleep on its way
    /// back to user space (an indebted group's delay, `blkcg_maybe_throttle_current`);
    /// zero unless the group is in debt. The face does not sleep for you.
    pub fn delay(&self) -> Duration {
        Duration::from_nanos(self.delay_ns)
    }

    /// The IO completed now (the same as dropping the grant).
    pub fn complete(self) {}

    /// The IO was never issued: its cost comes back without a latency
    /// sample.
    pub fn cancel(mut self) {
        self.live = false;
        self.ctl
            .finish(&self.io, self.cost, self.alloc_ns, self.start_ns, false);
    }

    pub(super) fn rehome<'b>(mut self, ctl: Holder<'b, C, M>) -> Grant<'b, C, M> {
        self.live = false;
        Grant {
            ctl,
            io: self.io,
            cost: self.cost,
            delay_ns: self.delay_ns,
            alloc_ns: self.alloc_ns,
            start_ns: self.start_ns,
            live: true,
        }
    }

    pub(super) fn into_owned(self, owner: &std::sync::Arc<Controller<C, M>>) -> OwnedGrant<C, M> {
        self.rehome(Holder::Owned(std::sync::Arc::clone(owner)))
    }
}

impl<C: Clock, M: CostModel> Drop for Grant<'_, C, M> {
    fn drop(&mut self) {
        if self.live {
            self.ctl
                .finish(&self.io, self.cost, self.alloc_ns, self.start_ns, true);
        }
    }
}
