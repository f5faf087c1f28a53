//! The cost model as an extension point: what a bio costs in device
//! time. [`Linear`] is the kernel's (`io.cost.model`'s linear model);
//! a user's [`CostModel`] prices bios instead, and the controller checks
//! each price where it uses it, in every build.

use core::fmt;

use crate::{Lcoefs, Op};

/// The most a single bio may cost, in vtime (2^60, about 97 days of
/// device time at 100 % vrate): beyond it vtime arithmetic, which
/// compares within half the `u64` range, could no longer order a group's
/// budget.
pub const MAX_BIO_COST: u64 = 1 << 60;

/// What a bio costs, in vtime at 100 % vrate (`VTIME_PER_SEC` per second
/// of device time): the part of blk-iocost a user replaces to price IO
/// by another device model. Shares, donation, the period timer and vrate
/// stay the controller's.
///
/// A price of 0 leaves the bio uncharged (the kernel's rule for a
/// zero-cost bio). A price above [`MAX_BIO_COST`] is refused: the bio is
/// answered [`Admit::Refused`](crate::Admit::Refused) with a
/// [`CostError`], uncharged and not admitted.
///
/// Implementations must be pure: the same arguments give the same price.
pub trait CostModel: Clone + fmt::Debug {
    /// A short name for messages.
    fn name(&self) -> &str;

    /// The price of a bio of `sectors` (512 bytes) starting at `sector`,
    /// its group's previous bio having ended at `cursor` (0: none yet).
    /// `linear` holds the coefficients `io.cost.model` configures now,
    /// for a model that builds on them.
    fn abs_cost(&self, linear: &Lcoefs, op: Op, sectors: u64, sector: u64, cursor: u64) -> u64;
}

/// The kernel's linear model (`calc_vtime_cost_builtin`) on the
/// coefficients `io.cost.model` configures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Linear;

impl CostModel for Linear {
    fn name(&self) -> &str {
        "linear"
    }

    fn abs_cost(&self, linear: &Lcoefs, op: Op, sectors: u64, sector: u64, cursor: u64) -> u64 {
        linear.abs_cost(op, sectors, sector, cursor, false)
    }
}

/// A price the controller refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CostError {
    /// The bio's direction.
    pub op: Op,
    /// Its size in sectors.
    pub sectors: u64,
    /// The price given.
    pub cost: u64,
}

impl fmt::Display for CostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cost model priced a {:?} of {} sectors at {} vtime, above the most a bio may cost ({MAX_BIO_COST})",
            self.op, self.sectors, self.cost
        )
    }
}

/// Check a price a model gave.
pub fn check_cost(op: Op, sectors: u64, cost: u64) -> Result<u64, CostError> {
    if cost > MAX_BIO_COST {
        Err(CostError { op, sectors, cost })
    } else {
        Ok(cost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Admit, Bio, Device, IoCost, LinearModel, Options};

    /// The most expensive linear model (1 byte/s, 1 IO/s) prices a 4 GiB
    /// random bio below the bound: the linear model never refuses a bio
    /// a caller of the kernel's sizes could submit.
    #[test]
    fn linear_never_refuses_a_bio_up_to_4_gib() {
        let slowest = LinearModel {
            rbps: 1,
            rseqiops: 1,
            rrandiops: 1,
            wbps: 1,
            wseqiops: 1,
            wrandiops: 1,
        }
        .lcoefs();
        for op in [Op::Read, Op::Write] {
            let cost = Linear.abs_cost(&slowest, op, (4u64 << 30) >> 9, 1 << 40, 8);
            assert!(
                cost > 0 && check_cost(op, 4 << 30 >> 9, cost).is_ok(),
                "{cost}"
            );
        }
    }

    /// A controller left disabled lets reads and writes through
    /// uncharged, and says how many in its snapshot; once enabled it
    /// counts no more.
    #[test]
    fn io_let_through_while_disabled_is_counted() {
        let dev = Device {
            devno: (8, 0),
            rotational: false,
            queue_depth: 32,
        };
        let mut ioc = IoCost::new(dev, Options::default());
        let g = ioc.add_group(0, 1);
        let bio = |id, op| Bio {
            id,
            group: g,
            op,
            bytes: 1 << 20,
            sector: 0,
            must_issue: false,
        };
        for (id, op) in [(1, Op::Read), (2, Op::Write), (3, Op::Other)] {
            assert_eq!(
                ioc.on_submit(1_000, &bio(id, op)),
                Admit::Go {
                    cost: 0,
                    delay_ns: 0
                }
            );
        }
        assert_eq!(ioc.snapshot(1_000).passed_disabled, 2);
        ioc.write_qos(1_000, "enable=1").unwrap();
        let _ = ioc.on_submit(2_000, &bio(4, Op::Read));
        assert_eq!(ioc.snapshot(2_000).passed_disabled, 2);
    }

    /// A model that prices past the bound gets its bio refused, naming
    /// the price; nothing is charged.
    #[test]
    fn a_price_past_the_bound_is_refused() {
        #[derive(Clone, Debug)]
        struct Greedy;
        impl CostModel for Greedy {
            fn name(&self) -> &str {
                "greedy"
            }
            fn abs_cost(&self, _: &Lcoefs, _: Op, _: u64, _: u64, _: u64) -> u64 {
                u64::MAX
            }
        }
        let dev = Device {
            devno: (8, 0),
            rotational: false,
            queue_depth: 32,
        };
        let mut ioc = IoCost::with_cost_model(dev, Options::default(), Greedy);
        let g = ioc.add_group(0, 1);
        ioc.write_qos(0, "enable=1").unwrap();
        let bio = Bio {
            id: 1,
            group: g,
            op: Op::Read,
            bytes: 4096,
            sector: 0,
            must_issue: false,
        };
        let Admit::Refused(e) = ioc.on_submit(1_000, &bio) else {
            panic!("a price past the bound was admitted");
        };
        assert_eq!((e.op, e.sectors, e.cost), (Op::Read, 8, u64::MAX));
        let text = alloc::format!("{e}");
        assert!(text.contains("above the most a bio may cost"), "{text}");
        assert_eq!(ioc.snapshot(1_000).groups[0].usage_us, 0);
        assert!(!ioc.snapshot(1_000).groups[0].active);
    }
}
