//! Conformance suites for writeback throttling's extension point, the
//! scaling step ([`DepthPolicy`](iolab_wbt::DepthPolicy)), for anyone's
//! variant:
//!
//! ```
//! use iolab_wbt::Variant;
//! iolab_verification::wbt::depth::check(|| Variant::Modern);
//! iolab_verification::wbt::depth::differential(|| Variant::Modern, || Variant::Modern);
//! ```
//!
//! `admission` holds loom models for a threaded throttle's face
//! ([`Admission`](iolab_wbt::Admission)), compiled under
//! `--cfg iolab_loom`.
//!
//! The cases of [`depth`] are proptest's: a failing case is shrunk to a smallest
//! stream of windows that still fails before it is reported.
//! `IOLAB_CHECK_CASES` sets how many cases, `IOLAB_CHECK_SEED` the seed
//! of the stream they are drawn from (the report names it).

/// The scaling-step suite.
pub mod depth {
    use iolab_wbt::{
        DepthError, DepthPolicy, DeviceParams, LocalSlots, Options, StepDir, Variant, Verdict, Wbt,
        WindowOutcome, window_ns,
    };
    use proptest::prelude::*;

    use crate::Checked;

    /// Cases when `IOLAB_CHECK_CASES` is not set.
    pub const DEFAULT_CASES: u64 = 400;

    /// Exceeded windows in a row that must squeeze the depth.
    pub const SQUEEZE_WINDOWS: usize = 48;

    /// Relaxing windows in a row, after the squeeze, that must bring the
    /// step back to 0 or below.
    pub const RELAX_WINDOWS: usize = 96;

    /// One case: a device, the variant whose other rules the core keeps,
    /// and a stream of window expiries (verdict, tracked IO in flight).
    #[derive(Clone, Debug)]
    pub struct Case {
        /// The device's queue depth.
        pub queue_depth: u32,
        /// A rotational device (75 ms target) or not (2 ms).
        pub rotational: bool,
        /// The variant around the policy.
        pub base: Variant,
        /// Each window's verdict and the tracked requests in flight at
        /// its expiry.
        pub windows: Vec<(Verdict, u32)>,
    }

    fn verdict() -> impl Strategy<Value = Verdict> {
        prop_oneof![
            Just(Verdict::Ok),
            Just(Verdict::Unknown),
            Just(Verdict::UnknownWrites),
            Just(Verdict::Exceeded),
        ]
    }

    fn case() -> impl Strategy<Value = Case> {
        (
            prop_oneof![1u32..=4, 1u32..=256, Just(1024u32), Just(1 << 30)],
            any::<bool>(),
            prop_oneof![Just(Variant::Modern), Just(Variant::V5_2016)],
            proptest::collection::vec((verdict(), 0u32..64), 1..96),
        )
            .prop_map(|(queue_depth, rotational, base, windows)| Case {
                queue_depth,
                rotational,
                base,
                windows,
            })
    }

    /// What one window expiry left, as two runs are compared.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Seen {
        step: i32,
        stepped: Option<StepDir>,
        max_depth: u32,
        normal: u32,
        background: u32,
        refused: Option<DepthError>,
    }

    /// The window rule of both variants: a window's length is the
    /// kernel's for the step it ran at (`rwb_arm_timer`: 100 ms at step 0
    /// or below, 100 ms / √(step + 1) above).
    fn window_rule(o: &WindowOutcome) -> Result<(), String> {
        let want = window_ns(o.step_before);
        if o.window_ns == want {
            Ok(())
        } else {
            Err(format!(
                "a window at step {} lasted {} ns, where the window rule gives {want} ns",
                o.step_before, o.window_ns
            ))
        }
    }

    impl From<&WindowOutcome> for Seen {
        fn from(o: &WindowOutcome) -> Seen {
            Seen {
                step: o.step,
                stepped: o.stepped,
                max_depth: o.limits.max_depth,
                normal: o.limits.normal,
                background: o.limits.background,
                refused: o.refused,
            }
        }
    }

    fn core<D: DepthPolicy>(case: &Case, depth: D) -> Result<Wbt<LocalSlots, D>, DepthError> {
        let params = DeviceParams {
            queue_depth: case.queue_depth,
            rotational: case.rotational,
            write_cache: false,
        };
        Wbt::with_depth_policy(
            params,
            case.base,
            Options::default(),
            LocalSlots::default(),
            depth,
        )
    }

    /// The case's windows through a core driven by `depth`, each held to
    /// the window rule.
    fn windows_keep_their_length<D: DepthPolicy>(case: &Case, depth: D) -> Result<(), String> {
        let Ok(mut wbt) = core(case, depth) else {
            return Ok(());
        };
        let mut now = 0u64;
        for (k, &(verdict, inflight)) in case.windows.iter().enumerate() {
            now += 100_000_000;
            window_rule(&wbt.apply_verdict(now, verdict, inflight))
                .map_err(|e| format!("{}: {e}", when(case, k + 1)))?;
        }
        Ok(())
    }

    /// The case's windows through a core driven by `depth`: what each
    /// left, or the refusal of its step-0 depths.
    fn run<D: DepthPolicy>(case: &Case, depth: D) -> Result<Vec<Seen>, DepthError> {
        let mut wbt = core(case, depth)?;
        let start = Seen {
            step: wbt.step(),
            stepped: None,
            max_depth: wbt.max_depth(),
            normal: wbt.normal(),
            background: wbt.background(),
            refused: None,
        };
        let mut now = 0u64;
        Ok(core::iter::once(start)
            .chain(case.windows.iter().map(|&(verdict, inflight)| {
                now += 100_000_000;
                Seen::from(&wbt.apply_verdict(now, verdict, inflight))
            }))
            .collect())
    }

    /// Where the `k`th of [`run`]'s records stands in the case.
    fn when(case: &Case, k: usize) -> String {
        match k.checked_sub(1) {
            None => "at the start".to_owned(),
            Some(w) => format!("after window {w} ({:?})", case.windows[w]),
        }
    }

    fn cases(suite: &str, name: &str, body: impl Fn(&Case) -> Result<u64, String>) -> Checked {
        crate::cases::proptest_cases(suite, name, DEFAULT_CASES, case(), body)
    }

    /// Checks a scaling step that `make` builds fresh, on devices of
    /// queue depth 1 to 2^30, rotational or not, inside either variant's
    /// other rules, through streams of up to 95 window verdicts:
    ///
    /// - every answer keeps the core's rules
    ///   ([`DepthRule`](iolab_wbt::DepthRule): the three depths ordered,
    ///   background at least 1, `max_depth` within the queue, a step
    ///   moving by one in the direction asked or snapping a negative step
    ///   to 0), at step 0 and at every step a window moves it to;
    /// - it squeezes: [`SQUEEZE_WINDOWS`] exceeded windows in a row bring
    ///   `max_depth` to at most half its step-0 value (at least 1);
    /// - it recovers: [`RELAX_WINDOWS`] windows whose reads were fine then
    ///   bring the step back to 0 or below;
    /// - the windows keep the variants' window rule at every step the
    ///   policy reaches (100 ms at step 0 or below, 100 ms / √(step + 1)
    ///   above);
    /// - it is deterministic: a fresh twin through the same windows gives
    ///   the same steps and depths.
    ///
    /// # Panics
    ///
    /// At the first case that breaks a rule, shrunk, with the seed.
    pub fn check<D: DepthPolicy, F: Fn() -> D>(make: F) -> Checked {
        let name = make().name().to_owned();
        cases("wbt::depth", &name, |case| {
            let seen = run(case, make()).map_err(|e| format!("at step 0: {e}"))?;
            if let Some((k, e)) = seen
                .iter()
                .enumerate()
                .find_map(|(k, s)| s.refused.map(|e| (k, e)))
            {
                return Err(format!("{}: {e}", when(case, k)));
            }
            let twin = run(case, make()).map_err(|e| format!("a fresh twin, at step 0: {e}"))?;
            if let Some(k) = (0..seen.len()).find(|&k| seen[k] != twin[k]) {
                return Err(format!(
                    "not deterministic {}: {:?}, then {:?} from a fresh twin",
                    when(case, k),
                    seen[k],
                    twin[k]
                ));
            }
            windows_keep_their_length(case, make())?;
            liveness(case, make())?;
            Ok(case.windows.len() as u64)
        })
    }

    /// The squeeze and the recovery, after the case's own windows.
    fn liveness<D: DepthPolicy>(case: &Case, depth: D) -> Result<(), String> {
        let mut wbt = core(case, depth).map_err(|e| format!("at step 0: {e}"))?;
        let depth0 = wbt.max_depth();
        let mut now = 0u64;
        for &(verdict, inflight) in &case.windows {
            now += 100_000_000;
            wbt.apply_verdict(now, verdict, inflight);
        }
        let mut expire = |wbt: &mut Wbt<LocalSlots, D>, verdict, what: &str| {
            now += 100_000_000;
            match wbt.apply_verdict(now, verdict, 1).refused {
                None => Ok(()),
                Some(e) => Err(format!("{what}: {e}")),
            }
        };
        for _ in 0..SQUEEZE_WINDOWS {
            expire(&mut wbt, Verdict::Exceeded, "squeezing")?;
        }
        let floor = (depth0 / 2).max(1);
        if wbt.max_depth() > floor {
            return Err(format!(
                "{SQUEEZE_WINDOWS} exceeded windows left max_depth at {} (step {}), above {floor}, half its step-0 value {depth0}",
                wbt.max_depth(),
                wbt.step()
            ));
        }
        for _ in 0..RELAX_WINDOWS {
            expire(&mut wbt, Verdict::Ok, "relaxing")?;
        }
        if wbt.step() > 0 {
            return Err(format!(
                "{RELAX_WINDOWS} windows whose reads were fine left the step at {} (max_depth {})",
                wbt.step(),
                wbt.max_depth()
            ));
        }
        Ok(())
    }

    /// Runs `mine` beside `reference` (our variant of the same name, or a
    /// simple model of what yours should do) through the same windows,
    /// and reports the first window after which their steps or depths
    /// differ.
    ///
    /// # Panics
    ///
    /// At the first diverging window of a case, shrunk, with the seed.
    pub fn differential<D, R>(mine: impl Fn() -> D, reference: impl Fn() -> R) -> Checked
    where
        D: DepthPolicy,
        R: DepthPolicy,
    {
        let name = mine().name().to_owned();
        let other = reference().name().to_owned();
        cases("wbt::depth::differential", &name, |case| {
            let a = run(case, mine());
            let b = run(case, reference());
            let (a, b) = match (a, b) {
                (Ok(a), Ok(b)) => (a, b),
                (a, b) if a == b => return Ok(0),
                (a, b) => {
                    return Err(format!(
                        "at step 0: {:?} where '{other}' gives {:?}",
                        a.err(),
                        b.err()
                    ));
                }
            };
            match (0..a.len()).find(|&k| a[k] != b[k]) {
                None => Ok(case.windows.len() as u64),
                Some(k) => Err(format!(
                    "{}: {:?} where '{other}' gives {:?}",
                    when(case, k),
                    a[k],
                    b[k]
                )),
            }
        })
    }
}

/// The throttle face's loom models.
#[cfg(iolab_loom)]
pub mod admission {
    use iolab_wbt::sync::{Arc, AtomicUsize, Ordering, thread};
    use iolab_wbt::{Admission, ThrottleClosed};

    /// How many requests the throttle `make` builds must let in at once:
    /// exactly one.
    pub const LIMIT: usize = 1;

    /// The throttle under a model, with the model's own count of the
    /// requests it has seen admitted and not yet released, and of the
    /// admissions so far (their order).
    struct Under<T> {
        throttle: T,
        in_flight: AtomicUsize,
        admitted: AtomicUsize,
    }

    impl<T: Admission> Under<T> {
        fn new(throttle: T) -> Arc<Under<T>> {
            Arc::new(Under {
                throttle,
                in_flight: AtomicUsize::new(0),
                admitted: AtomicUsize::new(0),
            })
        }

        /// Wait for a slot; returns the admission's place in the order.
        fn admit(&self) -> Result<usize, ThrottleClosed> {
            self.throttle.admit()?;
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            assert!(
                now <= LIMIT,
                "admitted beyond the limit: {now} in flight, limit {LIMIT}"
            );
            Ok(self.admitted.fetch_add(1, Ordering::SeqCst))
        }

        fn release(&self) {
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            self.throttle.release();
        }

        /// Spin (yielding to the model checker) until `n` requests wait.
        fn wait_waiters(&self, n: usize) {
            while self.throttle.waiters() < n {
                thread::yield_now();
            }
        }

        /// At a model's end: nobody waiting, and a slot free at once.
        fn settled(&self) {
            assert_eq!(self.throttle.waiters(), 0, "a request is still waiting");
            self.admit().expect("a free slot is granted");
            self.release();
        }
    }

    /// Runs every model on throttles `make` builds, each admitting
    /// [`LIMIT`] request at a time.
    ///
    /// # Panics
    ///
    /// Where a model fails: a rule's message, or loom's report of a
    /// deadlock (a lost wakeup or a sleeper left behind).
    pub fn check<T, F>(make: F)
    where
        T: Admission + 'static,
        F: Fn() -> T + Send + Sync + 'static,
    {
        let make = std::sync::Arc::new(make);
        let m = std::sync::Arc::clone(&make);
        limit_and_no_lost_wakeup(move || m());
        let m = std::sync::Arc::clone(&make);
        fifo_hand_off(move || m());
        close_fails_every_waiter(move || make());
    }

    /// Two threads each take a slot twice and give it back: never more
    /// than the limit in flight, and every release wakes the waiter.
    pub fn limit_and_no_lost_wakeup<T, F>(make: F)
    where
        T: Admission + 'static,
        F: Fn() -> T + Send + Sync + 'static,
    {
        crate::model("admission::limit_and_no_lost_wakeup", move || {
            let u = Under::new(make());
            let workers: Vec<_> = (0..2)
                .map(|_| {
                    let u = Arc::clone(&u);
                    thread::spawn(move || {
                        for _ in 0..2 {
                            u.admit().expect("open");
                            u.release();
                        }
                    })
                })
                .collect();
            for w in workers {
                w.join().expect("worker");
            }
            u.settled();
        });
    }

    /// A holder takes the slot; A starts waiting, then B: the release
    /// lets A in before B.
    pub fn fifo_hand_off<T, F>(make: F)
    where
        T: Admission + 'static,
        F: Fn() -> T + Send + Sync + 'static,
    {
        crate::model("admission::fifo_hand_off", move || {
            let u = Under::new(make());
            u.admit().expect("a free slot");
            let waiter = |u: &Arc<Under<T>>| {
                let u = Arc::clone(u);
                thread::spawn(move || {
                    let place = u.admit().expect("open");
                    u.release();
                    place
                })
            };
            let a = waiter(&u);
            u.wait_waiters(1);
            let b = waiter(&u);
            u.wait_waiters(2);
            u.release();
            let (a, b) = (a.join().expect("a"), b.join().expect("b"));
            assert!(
                a < b,
                "the second waiter was let in before the first (not FIFO): places {a} and {b}"
            );
            u.settled();
        });
    }

    /// Two requests wait (or are about to) behind a holder when the
    /// throttle closes: both fail, holding nothing, and so does a later
    /// admission.
    pub fn close_fails_every_waiter<T, F>(make: F)
    where
        T: Admission + 'static,
        F: Fn() -> T + Send + Sync + 'static,
    {
        crate::model("admission::close_fails_every_waiter", move || {
            let u = Under::new(make());
            u.admit().expect("a free slot");
            let waiters: Vec<_> = (0..2)
                .map(|_| {
                    let u = Arc::clone(&u);
                    thread::spawn(move || u.admit())
                })
                .collect();
            u.throttle.close();
            for w in waiters {
                match w.join().expect("waiter") {
                    Err(ThrottleClosed) => {}
                    Ok(place) => panic!(
                        "a request waited through the close and was let in (admission {place}), not refused"
                    ),
                }
            }
            assert_eq!(
                u.throttle.admit(),
                Err(ThrottleClosed),
                "an admission after the close"
            );
            u.release();
            assert_eq!(u.throttle.waiters(), 0, "a request is still waiting");
        });
    }
}
