//! Unit and property tests. They live inside the crate so that the
//! controller's invariants can be checked against internal state.

mod config;
mod costs;
mod machine;
mod props;
mod rules;

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use crate::consts::VTIME_PER_SEC;
use crate::{Admit, Bio, Device, Done, GroupId, IoCost, Op, Options, Variant};

pub(crate) fn ssd() -> Device {
    Device {
        devno: (8, 0),
        rotational: false,
        queue_depth: 32,
    }
}

pub(crate) fn ioc_with(variant: Variant) -> IoCost {
    IoCost::new(
        ssd(),
        Options {
            variant,
            ..Options::default()
        },
    )
}

/// What one simulated workload does.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Load {
    pub cgroup: u64,
    /// Bios outstanding at most (parked or in the device).
    pub qd: u32,
    pub op: Op,
    pub bytes: u64,
    pub random: bool,
    /// Pause after each completion before the next submission, ns.
    pub think_ns: u64,
}

struct LoadState {
    load: Load,
    gid: GroupId,
    outstanding: u32,
    next_at: u64,
    next_sector: u64,
    rng: u64,
    /// Device-model cost completed inside the measuring window.
    abs_done: u64,
}

#[derive(Clone, Copy)]
struct InFlight {
    finish: u64,
    load: usize,
    done: Done,
    abs: u64,
}

/// A minimal closed-loop harness: a device serving one request at a time
/// in FIFO order, each taking its model cost scaled by `speed_pct` (100:
/// the device is exactly as fast as the model says), and workloads that
/// keep `qd` bios outstanding. It exists to drive [`IoCost`] the way a
/// simulator adapter would, and measures shares independently of it.
pub(crate) struct Harness {
    pub ioc: IoCost,
    pub now: u64,
    speed_pct: u64,
    dev_free_at: u64,
    inflight: VecDeque<InFlight>,
    loads: Vec<LoadState>,
    parked: Vec<(u64, usize, u64)>, // (bio id, load, submit time)
    next_bio: u64,
    cursor_model: Vec<u64>,
    window_start: Option<u64>,
}

impl Harness {
    pub fn new(mut ioc: IoCost, speed_pct: u64, loads: &[Load]) -> Harness {
        let mut ls = Vec::new();
        for (k, l) in loads.iter().enumerate() {
            let gid = ioc.add_group(0, l.cgroup);
            ls.push(LoadState {
                load: *l,
                gid,
                outstanding: 0,
                next_at: 0,
                next_sector: 1 << 20 << (k as u32 % 8),
                rng: 0x9e37_79b9_7f4a_7c15 ^ (k as u64 + 1),
                abs_done: 0,
            });
        }
        let n = ls.len();
        Harness {
            ioc,
            now: 0,
            speed_pct,
            dev_free_at: 0,
            inflight: VecDeque::new(),
            loads: ls,
            parked: Vec::new(),
            next_bio: 1,
            cursor_model: alloc::vec![0; n],
            window_start: None,
        }
    }

    pub fn gid(&self, k: usize) -> GroupId {
        self.loads[k].gid
    }

    /// Starts measuring completed model cost.
    pub fn start_window(&mut self) {
        self.window_start = Some(self.now);
        for l in &mut self.loads {
            l.abs_done = 0;
        }
    }

    /// Completed model cost per load since [`Harness::start_window`].
    pub fn abs_done(&self) -> Vec<u64> {
        self.loads.iter().map(|l| l.abs_done).collect()
    }

    /// Device capacity (model cost at 100 %) elapsed in the window.
    pub fn window_capacity(&self) -> u64 {
        let dt = self.now - self.window_start.unwrap_or(0);
        (u128::from(dt) * u128::from(VTIME_PER_SEC) / 1_000_000_000) as u64
    }

    /// Sends a bio to the device. Its request is allocated now, after the
    /// throttle (so `alloc_ns` excludes time parked in iocost), and gets its
    /// tag at once: this device has no tag limit, so `rq_wait` is 0.
    fn dispatch(&mut self, load: usize, _submit_at: u64, cost: u64, bytes: u64, sector: u64) {
        let l = &self.loads[load].load;
        let abs =
            self.ioc
                .lcoefs
                .abs_cost(l.op, bytes >> 9, sector, self.cursor_model[load], false);
        self.cursor_model[load] = sector + (bytes >> 9);
        let service = (u128::from(abs) * 1_000_000_000 / u128::from(VTIME_PER_SEC)
            * u128::from(self.speed_pct)
            / 100) as u64;
        let start = self.dev_free_at.max(self.now);
        let finish = start + service.max(1);
        self.dev_free_at = finish;
        let done = Done {
            group: self.loads[load].gid,
            cost,
            op: l.op,
            bytes,
            alloc_ns: self.now,
            start_ns: self.now,
        };
        self.inflight.push_back(InFlight {
            finish,
            load,
            done,
            abs,
        });
    }

    fn next_sector(&mut self, k: usize) -> u64 {
        let l = &mut self.loads[k];
        let s = l.next_sector;
        if l.load.random {
            l.rng ^= l.rng << 13;
            l.rng ^= l.rng >> 7;
            l.rng ^= l.rng << 17;
            l.next_sector = (l.rng % (1 << 30)) & !7;
        } else {
            l.next_sector += l.load.bytes >> 9;
        }
        s
    }

    fn drain_releases(&mut self) {
        while let Some(r) = self.ioc.poll_release() {
            let pos = self
                .parked
                .iter()
                .position(|p| p.0 == r.bio)
                .expect("released bio was parked");
            let (_, load, at) = self.parked.swap_remove(pos);
            let bytes = self.loads[load].load.bytes;
            let sector = self.next_sector(load);
            // Sector was chosen at submit in the kernel; the harness picks
            // the next one at release, which keeps the cost pattern.
            self.dispatch(load, at, r.cost, bytes, sector);
        }
    }

    fn submit_ready(&mut self) {
        for k in 0..self.loads.len() {
            while self.loads[k].outstanding < self.loads[k].load.qd
                && self.loads[k].next_at <= self.now
            {
                let l = self.loads[k].load;
                let sector = self.next_sector(k);
                let id = self.next_bio;
                self.next_bio += 1;
                let bio = Bio {
                    id,
                    group: self.loads[k].gid,
                    op: l.op,
                    bytes: l.bytes,
                    sector,
                    must_issue: false,
                };
                self.loads[k].outstanding += 1;
                match self.ioc.on_submit(self.now, &bio) {
                    Admit::Go { cost, .. } => self.dispatch_at_sector(k, cost, sector),
                    Admit::Wait => self.parked.push((id, k, self.now)),
                    Admit::Refused(e) => panic!("the linear model refused a bio: {e}"),
                }
                self.drain_releases();
            }
        }
    }

    fn dispatch_at_sector(&mut self, k: usize, cost: u64, sector: u64) {
        let bytes = self.loads[k].load.bytes;
        self.dispatch(k, self.now, cost, bytes, sector);
    }

    /// Runs until `until` ns.
    pub fn run_until(&mut self, until: u64) {
        loop {
            self.submit_ready();
            let mut next = until;
            if let Some(f) = self.inflight.front() {
                next = next.min(f.finish);
            }
            if let Some(d) = self.ioc.next_deadline() {
                next = next.min(d.max(self.now));
            }
            for l in &self.loads {
                if l.outstanding < l.load.qd && l.next_at > self.now {
                    next = next.min(l.next_at);
                }
            }
            if next >= until && self.now >= until {
                break;
            }
            self.now = next.max(self.now);
            if self.inflight.front().is_some_and(|f| f.finish <= self.now) {
                let f = self.inflight.pop_front().unwrap_or_else(|| unreachable!());
                self.ioc.on_done(self.now, &f.done);
                let l = &mut self.loads[f.load];
                l.outstanding -= 1;
                l.next_at = self.now + l.load.think_ns;
                if self.window_start.is_some() {
                    l.abs_done += f.abs;
                }
            }
            if self.ioc.next_deadline().is_some_and(|d| d <= self.now) {
                self.ioc.on_timer(self.now);
                self.drain_releases();
            }
            if self.now >= until {
                break;
            }
        }
    }
}
