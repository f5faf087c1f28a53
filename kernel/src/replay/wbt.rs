//! `iolab-wbt` replayed on a kernel trace, window by window.
//!
//! For every window expiry the kernel traced for the device (`wbt_timer`,
//! with the `wbt_lat`, `wbt_stat` and `wbt_step` of the same callback), the
//! core is given the window's inputs and reaches its own verdict
//! ([`Wbt::expire_window`]); the verdict is compared with `wbt_timer`'s
//! `status`, the core's step before the window with its `step`, and the
//! step the core takes (direction, new step, window length, background,
//! normal and max limits) with `wbt_step`, or with its absence.
//!
//! Where the inputs come from, in this order:
//!
//! * **printed**: the kernel printed the window's `wbt_stat` (it does when
//!   the read minimum exceeded the target, and on every OK window while the
//!   step is not 0): the statistics are the kernel's own.
//! * **rebuilt**: otherwise, from the trace's `block_rq_issue` and
//!   `block_rq_complete` records of the device, once the first of them has
//!   been seen (module `samples`).
//! * **unobserved**: neither: the core cannot judge the window, so it takes
//!   the kernel's verdict ([`Wbt::apply_verdict`]) and only the step that
//!   follows is compared.
//!
//! The stuck-read latency is `wbt_lat`'s when the kernel printed one
//! without `wbt_stat` (its stuck-read rule fired; the printed value is cut
//! to whole microseconds, so the core gets the largest value it stands
//! for), and 0 otherwise: the kernel prints `wbt_lat` whenever that rule
//! fires. `inflight` is `wbt_timer`'s. "A writer slept in
//! `balance_dirty_pages` within a second" comes from the trace's
//! `balance_dirty_pages` records of the device with a positive pause.
//!
//! A trace usually starts while the device runs: the replay starts the
//! core at the first `wbt_timer`'s step. The count of consecutive UNKNOWN
//! windows is not traced, so until the kernel's first step the core may
//! not know when an UNKNOWN window makes the kernel drift toward step 0;
//! such a drift is *adopted* (the core joins the kernel's step), counted
//! apart from the checked windows. The same happens after the tracer's
//! "lost events" marker and after a divergence, so one difference does not
//! hide the windows after it.

use iolab_wbt::{
    DeviceParams, StepDir, Variant, Verdict, Wbt, WindowInputs, WindowOutcome, WindowStat,
    window_ns,
};

use super::expiry::{Assembler, Expiry, Fed};
use super::samples::Rebuild;
use crate::trace::{Dev, Event, Item, Reader, Record, Skipped, StepMsg, TraceError, WindowFields};

/// What the replay needs to know about the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// The device whose records are replayed.
    pub dev: Dev,
    /// The queue depth wbt computes its depths from (kernel:
    /// `blk_queue_depth` when wbt was set up; a loop device's is 128 and
    /// does not follow later writes of `nr_requests`).
    pub queue_depth: u32,
    /// `wbt_lat_usec` during the capture (not 0: a disabled wbt traces no
    /// windows).
    pub lat_usec: u64,
    /// The device is rotational.
    pub rotational: bool,
}

/// Where a window's inputs came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The kernel's `wbt_stat`.
    Printed,
    /// Rebuilt from block events.
    Rebuilt,
    /// Not observable; the kernel's verdict taken.
    Unobserved,
}

/// A window's decision as one side made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Verdict (`wbt_timer`'s `status`).
    pub status: u32,
    /// Step before the window.
    pub step_before: i32,
    /// The step taken, if any.
    pub step: Option<Step>,
}

/// A step as `wbt_step` prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Scaled up (`true`) or down.
    pub up: bool,
    /// New step.
    pub step: i32,
    /// The expired window's length in µs.
    pub window_us: u64,
    /// Background limit.
    pub background: u32,
    /// Normal limit.
    pub normal: u32,
    /// Max depth.
    pub max: u32,
}

/// The first window where the core decided differently from the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// Line of the window's `wbt_timer`.
    pub line: usize,
    /// The first field that differs: `step_before`, `status`, `stepped`,
    /// `step`, `window`, `background`, `normal` or `max`.
    pub field: &'static str,
    /// Where the core's inputs came from.
    pub source: Source,
    /// The kernel's decision.
    pub kernel: Decision,
    /// The core's.
    pub core: Decision,
}

/// How well rebuilt statistics match the ones the kernel printed, over the
/// windows where both exist.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RebuildCheck {
    /// Windows compared.
    pub windows: u64,
    /// Windows whose rebuilt read count equals the kernel's.
    pub reads_exact: u64,
    /// Windows whose rebuilt write count equals the kernel's.
    pub writes_exact: u64,
    /// Largest difference in read counts.
    pub max_read_diff: u64,
    /// Largest difference in write counts.
    pub max_write_diff: u64,
    /// Windows whose rebuilt read minimum is on the other side of the
    /// target from the kernel's.
    pub read_min_flips: u64,
}

/// The outcome of a replay.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Windows checked (every expiry but the adopted ones).
    pub windows: u64,
    /// Checked windows where the core decided as the kernel did.
    pub agree: u64,
    /// Checked windows where it did not.
    pub divergences: u64,
    /// The first of them.
    pub first_divergence: Option<Divergence>,
    /// Checked windows by input source: printed, rebuilt, unobserved.
    pub printed: u64,
    /// See [`Report::printed`].
    pub rebuilt: u64,
    /// See [`Report::printed`].
    pub unobserved: u64,
    /// Expiries where the core joined the kernel's step because its
    /// UNKNOWN count was not known (see the module docs).
    pub adopted: u64,
    /// Windows that started from an idle timer, at the write that armed
    /// it (see `samples`).
    pub from_idle: u64,
    /// Those of them longer than their nominal length (the timer wheel's
    /// rounding): a window rebuilt as that length before its expiry would
    /// miss their first completions.
    pub from_idle_longer: u64,
    /// Agreeing windows whose `wbt_step` printed the new step's window
    /// length because a write armed the timer while the callback ran (a
    /// write issued between `wbt_timer` and `wbt_step`).
    pub raced: u64,
    /// `wbt_step` records with no `wbt_timer` before them.
    pub orphan_steps: u64,
    /// `wbt_lat`/`wbt_stat` records with no `wbt_timer` after them.
    pub incomplete: u64,
    /// Lost-events markers, and the events they say were lost.
    pub lost_markers: u64,
    /// See [`Report::lost_markers`].
    pub lost_events: u64,
    /// Rebuilt statistics against printed ones.
    pub rebuild_check: RebuildCheck,
    /// Block completions whose issue the trace does not hold.
    pub unpaired_completions: u64,
    /// Lines of events the reader does not type.
    pub unknown_event_lines: u64,
    /// Lines of events of other devices.
    pub other_device_lines: u64,
    /// Records read for the device.
    pub records: u64,
}

impl Report {
    /// Every checked window agreed, and at least one was checked.
    pub fn all_agree(&self) -> bool {
        self.windows > 0 && self.agree == self.windows
    }
}

/// Replay `text` (a whole trace) for `cfg`.
pub fn replay(text: &str, cfg: &Config) -> Result<Report, TraceError> {
    let mut r = Replayer::new(cfg);
    let mut reader = Reader::new(text, Some(cfg.dev));
    for item in reader.by_ref() {
        r.push(&item?)?;
    }
    Ok(r.finish(reader.skipped()))
}

/// The replay fed one item at a time, for a caller that streams a trace
/// through a [`crate::trace::LineReader`] of `cfg.dev`: memory stays that
/// of the requests in flight and one window's completions, whatever the
/// trace's length.
pub struct Replayer {
    inner: Replay,
    /// The latest record's timestamp and line.
    last: Option<(u64, usize)>,
}

impl Replayer {
    /// A replay of the device `cfg` describes.
    pub fn new(cfg: &Config) -> Replayer {
        Replayer {
            inner: Replay::new(cfg),
            last: None,
        }
    }

    /// The trace's next item, in the trace's order.
    ///
    /// # Errors
    ///
    /// A record earlier than the one before it: the tracer prints the
    /// device's events in time order, so the trace was cut and joined or
    /// its lines moved, and no window of it can be trusted.
    pub fn push(&mut self, item: &Item<'_>) -> Result<(), TraceError> {
        match item {
            Item::Record(rec) => {
                if let Some((ts, at)) = self.last
                    && rec.ts_ns < ts
                {
                    return Err(TraceError {
                        line: rec.line,
                        message: format!(
                            "its timestamp is earlier than line {at}'s: the trace is not in time order (lines moved, or traces joined), which the tracer never prints"
                        ),
                    });
                }
                self.last = Some((rec.ts_ns, rec.line));
                self.inner.record(rec);
            }
            Item::Lost { events, .. } => self.inner.lost(*events),
        }
        Ok(())
    }

    /// The report, once the trace has ended; `skipped` is what its reader
    /// passed over.
    pub fn finish(self, skipped: &Skipped) -> Report {
        let mut report = self.inner.finish();
        report.unknown_event_lines = skipped.unknown_total();
        report.other_device_lines = skipped.other_devices;
        report
    }
}

/// How the window being gathered started.
#[derive(Clone, Copy, Debug)]
enum WindowStart {
    /// The expiry at this time re-armed the timer.
    At(u64),
    /// The last expiry left the timer idle: the next tracked write arms it.
    Idle,
}

struct Replay {
    cfg: Config,
    core: Wbt,
    asm: Assembler,
    rebuild: Rebuild,
    block_seen: bool,
    /// How the running window started, once an expiry has been seen.
    window_start: Option<WindowStart>,
    /// The core's state must be taken from the next `wbt_timer`.
    resync: bool,
    /// The core's UNKNOWN count is not known yet.
    warming: bool,
    last_dirty_sleep: Option<u64>,
    report: Report,
}

impl Replay {
    fn new(cfg: &Config) -> Replay {
        let mut core = Wbt::new(
            DeviceParams {
                queue_depth: cfg.queue_depth,
                rotational: cfg.rotational,
                write_cache: false,
            },
            Variant::Modern,
        );
        // `set_lat_usec` only fails for negative or overflowing values.
        let lat = i64::try_from(cfg.lat_usec).unwrap_or(i64::MAX);
        let _ = core.set_lat_usec(lat);
        Replay {
            cfg: *cfg,
            core,
            asm: Assembler::default(),
            rebuild: Rebuild::default(),
            block_seen: false,
            window_start: None,
            resync: true,
            warming: true,
            last_dirty_sleep: None,
            report: Report::default(),
        }
    }

    fn record(&mut self, rec: &Record<'_>) {
        self.report.records += 1;
        let fed = match &rec.event {
            Event::WbtLat { lat_us, .. } => self.asm.lat(rec.line, *lat_us),
            Event::WbtStat(s) => self.asm.stat(rec.line, *s),
            Event::WbtTimer(t) => self.asm.timer(rec.line, rec.ts_ns, *t),
            Event::WbtStep(s) => self.asm.step(rec.line, *s),
            Event::RqIssue(rq) => {
                self.block_seen = true;
                if matches!(rq.rwbs.op(), b'W' | b'D') {
                    self.asm.write_issued();
                }
                self.rebuild.issue(rec.ts_ns, rq);
                Fed::Taken
            }
            Event::RqComplete(rq) => {
                self.block_seen = true;
                self.rebuild.complete(rec.ts_ns, rq);
                Fed::Taken
            }
            Event::BalanceDirtyPages(b) => {
                if b.pause > 0 {
                    self.last_dirty_sleep = Some(rec.ts_ns);
                }
                Fed::Taken
            }
            _ => Fed::Taken,
        };
        match fed {
            Fed::Taken => {}
            Fed::Closed(e) => self.expiry(&e),
            Fed::Orphan => self.report.orphan_steps += 1,
        }
    }

    fn lost(&mut self, events: Option<u64>) {
        // The expiry gathered before the gap is whole: judge it first.
        if let Some(e) = self.asm.finish() {
            self.expiry(&e);
        }
        self.report.lost_markers += 1;
        self.report.lost_events += events.unwrap_or(0);
        self.resync = true;
        self.warming = true;
    }

    fn finish(mut self) -> Report {
        if let Some(e) = self.asm.finish() {
            self.expiry(&e);
        }
        self.report.unpaired_completions = self.rebuild.unpaired;
        self.report
    }

    fn expiry(&mut self, e: &Expiry) {
        let Some((line, ts, timer)) = e.timer else {
            self.report.incomplete += 1;
            return;
        };
        if self.resync {
            self.core.resume_at(timer.step, 0);
            self.resync = false;
        }
        // A window the last expiry re-armed started there; one from an
        // idle timer when a write armed it; else (the trace's first) its
        // length before the expiry.
        let length = window_ns(self.core.step());
        let start = match self.window_start {
            Some(WindowStart::At(t)) => Some(t),
            Some(WindowStart::Idle) => match self.rebuild.armed_at(ts, length) {
                Some(armed) => {
                    self.report.from_idle += 1;
                    if ts.saturating_sub(armed) > length {
                        self.report.from_idle_longer += 1;
                    }
                    Some(armed)
                }
                None => Some(ts.saturating_sub(length)),
            },
            None => Some(ts.saturating_sub(length)),
        };
        let rebuilt = self.rebuild.window(start, ts);
        let lat_ns = self.cfg.lat_usec.saturating_mul(1000);
        let (stats, source) = match e.stat {
            Some((_, s)) => {
                let printed = [stat(&s.read), stat(&s.write)];
                if self.block_seen {
                    self.check_rebuild(&printed, &rebuilt, lat_ns);
                }
                (Some(printed), Source::Printed)
            }
            None if self.block_seen => (Some(rebuilt), Source::Rebuilt),
            // `wbt_lat` alone: the stuck-read rule decided the window, and
            // the latency it printed is what the core checks.
            None if e.lat.is_some() => (Some([WindowStat::EMPTY; 2]), Source::Printed),
            None => (None, Source::Unobserved),
        };
        let kernel_verdict = Verdict::from_status(timer.status);
        let outcome = match (stats, kernel_verdict) {
            (Some([read, write]), _) => {
                let stuck_read_ns = match (e.lat, e.stat) {
                    (Some((_, us)), None) => us.saturating_mul(1000).saturating_add(999),
                    _ => 0,
                };
                let recent_dirty_wait = self
                    .last_dirty_sleep
                    .is_some_and(|t| ts < t.saturating_add(iolab_wbt::RECENT_DIRTY_WAIT_NS));
                let inputs = WindowInputs {
                    read,
                    write,
                    stuck_read_ns,
                    recent_dirty_wait,
                    inflight: timer.inflight,
                };
                self.core.expire_window(ts, &inputs)
            }
            (None, Some(v)) => self.core.apply_verdict(ts, v, timer.inflight),
            // An unknown status with nothing to judge from: let the core
            // judge an empty window so the difference shows.
            (None, None) => self.core.expire_window(
                ts,
                &WindowInputs {
                    read: WindowStat::EMPTY,
                    write: WindowStat::EMPTY,
                    stuck_read_ns: 0,
                    recent_dirty_wait: false,
                    inflight: timer.inflight,
                },
            ),
        };
        while self.core.poll_trace().is_some() {}
        while self.core.poll_wake().is_some() {}

        let kernel = Decision {
            status: timer.status,
            step_before: timer.step,
            step: e.step.map(|(_, s)| Step {
                up: s.msg == StepMsg::Up,
                step: s.step,
                window_us: s.window_us,
                background: s.background,
                normal: s.normal,
                max: s.max,
            }),
        };
        let mut core = decision(&outcome);
        let kernel_step_after = kernel.step.map_or(timer.step, |s| s.step);
        let mut difference = first_difference(&kernel, &core);
        // A write's `wbt_wait` that ran while the callback did re-armed the
        // timer with the new step, and `wbt_step` printed that window.
        if difference == Some("window")
            && e.raced
            && let (Some(ks), Some(cs)) = (kernel.step, core.step.as_mut())
            && ks.window_us == window_ns(ks.step) / 1000
        {
            cs.window_us = ks.window_us;
            difference = first_difference(&kernel, &core);
            if difference.is_none() {
                self.report.raced += 1;
            }
        }
        match difference {
            None => {
                self.report.windows += 1;
                self.report.agree += 1;
                self.count_source(source);
            }
            Some("stepped")
                if self.warming
                    && kernel.status == Verdict::Unknown.status()
                    && core.step.is_none() =>
            {
                self.report.adopted += 1;
                self.core.resume_at(kernel_step_after, 0);
            }
            Some(field) => {
                self.report.windows += 1;
                self.report.divergences += 1;
                self.count_source(source);
                if self.report.first_divergence.is_none() {
                    self.report.first_divergence = Some(Divergence {
                        line,
                        field,
                        source,
                        kernel,
                        core,
                    });
                }
                // Continue from the kernel's state.
                self.core.resume_at(kernel_step_after, 0);
                self.warming = true;
            }
        }
        if kernel.step.is_some() {
            self.warming = false;
        }
        // kernel: wb_timer_fn re-arms while the step is not 0 or
        // requests are in flight.
        let rearmed = kernel_step_after != 0 || timer.inflight > 0;
        self.window_start = Some(if rearmed {
            WindowStart::At(ts)
        } else {
            WindowStart::Idle
        });
    }

    fn count_source(&mut self, source: Source) {
        match source {
            Source::Printed => self.report.printed += 1,
            Source::Rebuilt => self.report.rebuilt += 1,
            Source::Unobserved => self.report.unobserved += 1,
        }
    }

    fn check_rebuild(&mut self, printed: &[WindowStat; 2], rebuilt: &[WindowStat; 2], lat_ns: u64) {
        let c = &mut self.report.rebuild_check;
        c.windows += 1;
        let diff = |a: u32, b: u32| u64::from(a.abs_diff(b));
        let dr = diff(printed[0].nr_samples, rebuilt[0].nr_samples);
        let dw = diff(printed[1].nr_samples, rebuilt[1].nr_samples);
        c.reads_exact += u64::from(dr == 0);
        c.writes_exact += u64::from(dw == 0);
        c.max_read_diff = c.max_read_diff.max(dr);
        c.max_write_diff = c.max_write_diff.max(dw);
        let over = |s: &WindowStat| s.nr_samples > 0 && s.min > lat_ns;
        c.read_min_flips += u64::from(over(&printed[0]) != over(&rebuilt[0]));
    }
}

/// A printed direction as the core's accumulator (the sum is rebuilt from
/// the mean; the verdict reads only the count and the minimum).
fn stat(f: &WindowFields) -> WindowStat {
    if f.samples == 0 {
        return WindowStat::EMPTY;
    }
    let n = u32::try_from(f.samples).unwrap_or(u32::MAX);
    WindowStat {
        nr_samples: n,
        min: f.min,
        max: f.max,
        sum: f.time.unwrap_or(f.mean.saturating_mul(f.samples)),
    }
}

fn decision(o: &WindowOutcome) -> Decision {
    Decision {
        status: o.verdict.status(),
        step_before: o.step_before,
        step: o.stepped.map(|dir| Step {
            up: dir == StepDir::Up,
            step: o.step,
            window_us: o.window_ns / 1000,
            background: o.limits.background,
            normal: o.limits.normal,
            max: o.limits.max_depth,
        }),
    }
}

fn first_difference(k: &Decision, c: &Decision) -> Option<&'static str> {
    if k.step_before != c.step_before {
        return Some("step_before");
    }
    if k.status != c.status {
        return Some("status");
    }
    match (k.step, c.step) {
        (None, None) => None,
        (Some(ks), Some(cs)) => {
            if ks.up != cs.up {
                Some("stepped")
            } else if ks.step != cs.step {
                Some("step")
            } else if ks.window_us != cs.window_us {
                Some("window")
            } else if ks.background != cs.background {
                Some("background")
            } else if ks.normal != cs.normal {
                Some("normal")
            } else if ks.max != cs.max {
                Some("max")
            } else {
                None
            }
        }
        _ => Some("stepped"),
    }
}
