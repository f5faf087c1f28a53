//! Conformance suites for blk-iocost's extension point, the cost model
//! ([`CostModel`](iolab_iocost::CostModel)), for anyone's model:
//!
//! ```
//! iolab_verification::iocost::cost_model::check(|| iolab_iocost::Linear);
//! ```
//!
//! The cases are proptest's, shrunk on failure; `IOLAB_CHECK_CASES` and
//! `IOLAB_CHECK_SEED` as for the other suites.

/// The cost-model suite.
pub mod cost_model {
    use std::collections::VecDeque;

    use iolab_iocost::consts::VTIME_PER_SEC;
    use iolab_iocost::{
        Admit, Bio, CostModel, Device, Done, GroupId, IoCost, Op, Options, Variant,
    };
    use proptest::prelude::*;

    use crate::Checked;

    /// Cases when `IOLAB_CHECK_CASES` is not set.
    pub const DEFAULT_CASES: u64 = 24;

    /// Allowed distance between a group's share of the work done and
    /// its weight's share, under saturation.
    pub const SHARE_TOLERANCE: f64 = 0.05;

    /// One workload of a case.
    #[derive(Clone, Debug)]
    pub struct Load {
        /// The group's weight (`io.weight`).
        pub weight: u32,
        /// Bios kept outstanding.
        pub depth: u32,
        /// Pause after each completion before the next bio, µs (0:
        /// backlogged).
        pub think_us: u64,
    }

    /// One case: the variant, the bios' shape, and the groups.
    #[derive(Clone, Debug)]
    pub struct Case {
        /// The controller's variant.
        pub variant: Variant,
        /// Reads or writes.
        pub op: Op,
        /// Bytes per bio.
        pub bytes: u64,
        /// Random offsets or sequential.
        pub random: bool,
        /// The groups' workloads.
        pub loads: Vec<Load>,
    }

    struct Group {
        gid: GroupId,
        load: Load,
        outstanding: u32,
        ready_at: u64,
        sector: u64,
        rng: u64,
        cursor: u64,
        /// Price completed inside the measuring window.
        done: u64,
    }

    /// A closed loop: a device serving one bio at a time in order, each
    /// for 90 % of its price (so the device keeps up with the model at
    /// 100 % vrate), and groups keeping their depth of bios outstanding.
    struct Loop<M: CostModel> {
        ioc: IoCost<M>,
        now: u64,
        free_at: u64,
        /// (finishes at, group, its `Done`, its price).
        in_device: VecDeque<(u64, usize, Done, u64)>,
        parked: Vec<(u64, usize, u64)>,
        groups: Vec<Group>,
        next_id: u64,
        window_from: Option<u64>,
        case: Case,
        /// Every bio dispatched, as priced: (sector, cursor, price).
        priced: Vec<(u64, u64, u64)>,
    }

    impl<M: CostModel> Loop<M> {
        fn new(case: &Case, model: M) -> Loop<M> {
            let dev = Device {
                devno: (8, 0),
                rotational: false,
                queue_depth: 32,
            };
            let opts = Options {
                variant: case.variant,
                ..Options::default()
            };
            let mut ioc = IoCost::with_cost_model(dev, opts, model);
            let groups = case
                .loads
                .iter()
                .enumerate()
                .map(|(k, l)| {
                    let gid = ioc.add_group(0, 1 + k as u64);
                    let _ = ioc.write_weight(0, gid, &l.weight.to_string());
                    Group {
                        gid,
                        load: l.clone(),
                        outstanding: 0,
                        ready_at: 0,
                        sector: (1 + k as u64) << 24,
                        rng: 0x9E37_79B9_7F4A_7C15 ^ (k as u64 + 1),
                        cursor: 0,
                        done: 0,
                    }
                })
                .collect();
            // vrate pinned at 100 %: shares are then the controller's alone.
            let _ = ioc.write_qos(0, "enable=1 min=100 max=100");
            Loop {
                ioc,
                now: 0,
                free_at: 0,
                in_device: VecDeque::new(),
                parked: Vec::new(),
                groups,
                next_id: 1,
                window_from: None,
                case: case.clone(),
                priced: Vec::new(),
            }
        }

        fn next_sector(&mut self, k: usize) -> u64 {
            let sectors = self.case.bytes >> 9;
            let g = &mut self.groups[k];
            let s = g.sector;
            g.sector = if self.case.random {
                g.rng ^= g.rng << 13;
                g.rng ^= g.rng >> 7;
                g.rng ^= g.rng << 17;
                (g.rng % (1 << 30)) & !7
            } else {
                g.sector + sectors
            };
            s
        }

        fn dispatch(&mut self, k: usize, cost: u64) -> Result<(), String> {
            let sectors = self.case.bytes >> 9;
            let sector = self.next_sector(k);
            let lcoefs = self.ioc.lcoefs();
            let price = self.ioc.cost_model().abs_cost(
                &lcoefs,
                self.case.op,
                sectors,
                sector,
                self.groups[k].cursor,
            );
            self.priced.push((sector, self.groups[k].cursor, price));
            self.groups[k].cursor = sector + sectors;
            let service = (u128::from(price) * 900_000_000 / u128::from(VTIME_PER_SEC)) as u64;
            let finish = self.free_at.max(self.now) + service.max(1);
            self.free_at = finish;
            let done = Done {
                group: self.groups[k].gid,
                cost,
                op: self.case.op,
                bytes: self.case.bytes,
                alloc_ns: self.now,
                start_ns: self.now,
            };
            self.in_device.push_back((finish, k, done, price));
            Ok(())
        }

        fn submit_ready(&mut self) -> Result<(), String> {
            for k in 0..self.groups.len() {
                while self.groups[k].outstanding < self.groups[k].load.depth
                    && self.groups[k].ready_at <= self.now
                {
                    let id = self.next_id;
                    self.next_id += 1;
                    let bio = Bio {
                        id,
                        group: self.groups[k].gid,
                        op: self.case.op,
                        bytes: self.case.bytes,
                        sector: self.groups[k].sector,
                        must_issue: false,
                    };
                    self.groups[k].outstanding += 1;
                    match self.ioc.on_submit(self.now, &bio) {
                        Admit::Go { cost, .. } => self.dispatch(k, cost)?,
                        Admit::Wait => self.parked.push((id, k, self.now)),
                        Admit::Refused(e) => return Err(e.to_string()),
                    }
                }
            }
            Ok(())
        }

        fn drain_releases(&mut self) -> Result<(), String> {
            while let Some(r) = self.ioc.poll_release() {
                let Some(at) = self.parked.iter().position(|p| p.0 == r.bio) else {
                    return Err(format!("released bio {} was never parked", r.bio));
                };
                let (_, k, _) = self.parked.swap_remove(at);
                self.dispatch(k, r.cost)?;
            }
            Ok(())
        }

        /// Runs to `until` ns.
        fn run_until(&mut self, until: u64) -> Result<(), String> {
            loop {
                self.submit_ready()?;
                self.drain_releases()?;
                let device = self.in_device.front().map(|d| d.0);
                let timer = self.ioc.next_deadline();
                let ready = self
                    .groups
                    .iter()
                    .filter(|g| g.outstanding < g.load.depth && g.ready_at > self.now)
                    .map(|g| g.ready_at)
                    .min();
                let next = [device, timer, ready]
                    .into_iter()
                    .flatten()
                    .min()
                    .unwrap_or(until)
                    .max(self.now);
                if next >= until {
                    self.now = until;
                    return Ok(());
                }
                self.now = next;
                while let Some(&(finish, k, done, price)) = self.in_device.front() {
                    if finish > self.now {
                        break;
                    }
                    self.in_device.pop_front();
                    self.ioc.on_done(self.now, &done);
                    let g = &mut self.groups[k];
                    g.outstanding -= 1;
                    g.ready_at = self.now + g.load.think_us * 1000;
                    if self.window_from.is_some() {
                        g.done += price;
                    }
                }
                if timer.is_some_and(|t| t <= self.now) {
                    self.ioc.on_timer(self.now);
                }
            }
        }

        /// Warm up, then measure `window_ns`: each group's price done.
        fn measure(&mut self, warm_ns: u64, window_ns: u64) -> Result<Vec<u64>, String> {
            self.run_until(warm_ns)?;
            self.window_from = Some(self.now);
            self.run_until(warm_ns + window_ns)?;
            Ok(self.groups.iter().map(|g| g.done).collect())
        }
    }

    fn case() -> impl Strategy<Value = Case> {
        (
            prop_oneof![Just(Variant::Modern), Just(Variant::V5_4)],
            prop_oneof![Just(Op::Read), Just(Op::Write)],
            prop_oneof![Just(4096u64), Just(65_536), Just(262_144)],
            any::<bool>(),
            proptest::collection::vec(1..=1000u32, 2..=4),
        )
            .prop_map(|(variant, op, bytes, random, weights)| Case {
                variant,
                op,
                bytes,
                random,
                loads: weights
                    .into_iter()
                    .map(|weight| Load {
                        weight,
                        depth: 8,
                        think_us: 0,
                    })
                    .collect(),
            })
    }

    const WARM_NS: u64 = 200_000_000;
    const WINDOW_NS: u64 = 1_500_000_000;

    /// Checks a cost model that `make` builds fresh, driving the
    /// controller with it in a closed loop (a device serving one bio at a
    /// time for 90 % of the model's price, vrate pinned at 100 %), on
    /// reads or writes of 4, 64 or 256 KiB, random or sequential, in
    /// either variant:
    ///
    /// - its prices keep the controller's contract (no bio refused as
    ///   priced past [`MAX_BIO_COST`](iolab_iocost::MAX_BIO_COST)), and
    ///   every read and write costs something (a price of 0 leaves the
    ///   bio uncontrolled);
    /// - under saturation (two to four backlogged groups of weights 1 to
    ///   1000), each group's share of the work done is its weight's share
    ///   within [`SHARE_TOLERANCE`];
    /// - work-conserving (modern variant): a group that thinks between
    ///   bios leaves what it does not use to a backlogged group of the
    ///   same weight (the busy one does at least the rest of the device,
    ///   less the tolerance). The 2019 donation (`v5.4`) was not, which is
    ///   why 5.10 reworked it: there the rule is not held;
    /// - deterministic: a fresh twin does the same work.
    ///
    /// # Panics
    ///
    /// At the first case that breaks a rule, shrunk, with the seed.
    pub fn check<M: CostModel, F: Fn() -> M>(make: F) -> Checked {
        let name = make().name().to_owned();
        crate::cases::proptest_cases("iocost::cost_model", &name, DEFAULT_CASES, case(), |case| {
            let mut run = Loop::new(case, make());
            let lcoefs = run.ioc.lcoefs();
            let price =
                run.ioc
                    .cost_model()
                    .abs_cost(&lcoefs, case.op, case.bytes >> 9, 1 << 20, 8);
            if price == 0 {
                return Err(format!(
                    "a {:?} of {} bytes is priced at 0 (uncontrolled)",
                    case.op, case.bytes
                ));
            }
            let done = run.measure(WARM_NS, WINDOW_NS)?;
            let twin = Loop::new(case, make()).measure(WARM_NS, WINDOW_NS)?;
            if done != twin {
                return Err(format!(
                    "not deterministic: work done {done:?}, then {twin:?} from a fresh twin"
                ));
            }
            let total: u64 = done.iter().sum();
            if total == 0 {
                return Err("no work was done".to_owned());
            }
            let wsum: u32 = case.loads.iter().map(|l| l.weight).sum();
            for (k, l) in case.loads.iter().enumerate() {
                let share = done[k] as f64 / total as f64;
                let fair = f64::from(l.weight) / f64::from(wsum);
                if (share - fair).abs() > SHARE_TOLERANCE {
                    return Err(format!(
                        "under saturation group {k} (weight {}) did {:.1} % of the work, its weight's share is {:.1} % (work done {done:?})",
                        l.weight,
                        100.0 * share,
                        100.0 * fair
                    ));
                }
            }
            if case.variant == Variant::Modern {
                conserving(case, make())?;
            }
            Ok(1)
        })
    }

    /// A light group (depth 1, thinking 1 ms) beside a backlogged one of
    /// the same weight: the busy one does its share plus what the light
    /// one leaves.
    fn conserving<M: CostModel>(case: &Case, model: M) -> Result<(), String> {
        let mut light = case.clone();
        light.loads = vec![
            Load {
                weight: 100,
                depth: 1,
                think_us: 1000,
            },
            Load {
                weight: 100,
                depth: 8,
                think_us: 0,
            },
        ];
        let mut run = Loop::new(&light, model);
        let done = run.measure(WARM_NS, WINDOW_NS)?;
        let capacity = (u128::from(WINDOW_NS) * u128::from(VTIME_PER_SEC) / 1_000_000_000) as f64;
        let (u, busy) = (done[0] as f64 / capacity, done[1] as f64 / capacity);
        if u < 0.5 && busy < 1.0 - u - SHARE_TOLERANCE {
            return Err(format!(
                "not work-conserving: the light group used {:.1} % of the device and the backlogged one only {:.1} %",
                100.0 * u,
                100.0 * busy
            ));
        }
        Ok(())
    }

    /// Runs `mine` in the saturated loops and prices each bio it
    /// dispatched with `reference` too, reporting the first bio they
    /// price differently; then runs `reference` in the same loop and
    /// reports work done that differs all the same.
    ///
    /// # Panics
    ///
    /// At the first diverging bio of a case, shrunk, with the seed.
    pub fn differential<M, R>(mine: impl Fn() -> M, reference: impl Fn() -> R) -> Checked
    where
        M: CostModel,
        R: CostModel,
    {
        let name = mine().name().to_owned();
        let other = reference().name().to_owned();
        crate::cases::proptest_cases(
            "iocost::cost_model::differential",
            &name,
            DEFAULT_CASES,
            case(),
            |case| {
                let mut run = Loop::new(case, mine());
                let a = run.measure(WARM_NS, WINDOW_NS)?;
                let lcoefs = run.ioc.lcoefs();
                let sectors = case.bytes >> 9;
                let theirs = reference();
                for (k, &(sector, cursor, price)) in run.priced.iter().enumerate() {
                    let want = theirs.abs_cost(&lcoefs, case.op, sectors, sector, cursor);
                    if price != want {
                        return Err(format!(
                            "bio {k} (a {:?} of {} bytes at sector {sector}, the group's last ending at {cursor}) priced {price} where '{other}' prices {want}",
                            case.op, case.bytes
                        ));
                    }
                }
                let b = Loop::new(case, reference()).measure(WARM_NS, WINDOW_NS)?;
                if a == b {
                    Ok(run.priced.len() as u64)
                } else {
                    Err(format!(
                        "work done per group {a:?} where '{other}' gives {b:?}"
                    ))
                }
            },
        )
    }
}
