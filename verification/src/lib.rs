//! Conformance suites for anyone's variants of iolab's extension points,
//! run from the user's own tests, one line each, and iolab's own loom
//! models and historic-bug mutants.
//!
//! The suites (what each proves and cannot: `docs/check-your-variant.md`):
//!
//! * [`tiering`]: `read_policy` and `allocator` (`check`, `differential`);
//! * [`wbt`]: `depth`, the scaling step (`check`, `differential`), and,
//!   under `--cfg iolab_loom`, `admission`, loom models of a threaded
//!   throttle;
//! * [`iocost`]: `cost_model` (`check`, `differential`);
//! * [`flush`]: `policy`, the flush policy (`check`, `differential`), and,
//!   under `--cfg iolab_loom`, `pool`, loom models of a threaded pool;
//! * `bench` (feature `bench`): a variant beside ours under criterion.
//!
//! The drawn suites use proptest: a failing case is shrunk and reported
//! with the seed that replays it (`IOLAB_CHECK_CASES`,
//! `IOLAB_CHECK_SEED`). [`failure_of`] and [`failure_in_child`] let a test
//! expect a suite to fail on a wrong variant.
//!
//! iolab's own models, compiled only with `RUSTFLAGS="--cfg iolab_loom"`
//! (the commands are in each file's header):
//!
//! * `tests/wbt_loom.rs`, `tests/wbt_async_loom.rs`: `iolab_wbt::Throttle`
//!   and its futures (no lost wakeup, the limit, FIFO, limit changes,
//!   permits and futures dropped, close);
//! * `tests/flush_loom.rs`, `tests/pool_async_loom.rs`:
//!   `iolab_flush::Pool` and its futures (FIFO with a flusher, grant
//!   versus interrupt, space returned while queueing, no lost wakeup,
//!   cancellation gives back, close wakes all);
//! * `tests/iocost_loom.rs`: `iolab_iocost::Controller`, blocking and
//!   async (no lost wakeup, FIFO, cancellation gives back, close wakes
//!   all);
//! * `tests/wbt_mutants.rs`, `tests/flush_mutants.rs`: historic bugs B2–B5
//!   and F1–F2 put back behind a test-only cfg (`--cfg
//!   iolab_mutant="b2"`, not a feature: no crate depending on ours can
//!   switch one on); each scenario, and the conformance models, must
//!   catch its bug;
//! * `tests/*_conformance.rs`: every suite on our variants, and on wrong
//!   twins.

#[cfg(feature = "bench")]
pub mod bench;
mod cases;
pub mod flush;
pub mod iocost;
pub mod tiering;
pub mod wbt;

pub use cases::Checked;

/// The message a suite failed with, or `None` if it passed: for a test
/// that shows a suite catches a deliberately wrong variant.
///
/// ```
/// let why = iolab_verification::failure_of(|| -> () { panic!("rule broken") });
/// assert_eq!(why.as_deref(), Some("rule broken"));
/// ```
pub fn failure_of<T>(suite: impl FnOnce() -> T + std::panic::UnwindSafe) -> Option<String> {
    let payload = std::panic::catch_unwind(suite).err()?;
    Some(
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "a panic without a message".to_owned()),
    )
}

/// Run a loom model with loom's settings from the environment
/// (`LOOM_MAX_PREEMPTIONS`, ...), printing how long it took and how many
/// interleavings loom explored.
#[cfg(iolab_loom)]
pub fn model(name: &str, f: impl Fn() + Sync + Send + 'static) {
    model_with(name, loom::model::Builder::new(), f);
}

/// Run a future to completion on the calling (loom) thread: poll, sleep
/// until woken, poll again. The waker sets a flag under a loom mutex and
/// signals a loom condition variable, so a wake that a face loses leaves
/// the task asleep for good, which loom reports as a deadlock: the way a
/// model checks an async face for lost wakeups.
#[cfg(iolab_loom)]
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let signal = std::sync::Arc::new(Signal::default());
    let waker = std::task::Waker::from(std::sync::Arc::clone(&signal));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
        let mut woken = signal.woken.lock().expect("signal");
        while !*woken {
            woken = signal.cv.wait(woken).expect("signal");
        }
        *woken = false;
    }
}

/// [`block_on`]'s waker: "woken since the last poll", under a loom mutex.
#[cfg(iolab_loom)]
#[derive(Default)]
struct Signal {
    woken: loom::sync::Mutex<bool>,
    cv: loom::sync::Condvar,
}

#[cfg(iolab_loom)]
impl std::task::Wake for Signal {
    fn wake(self: std::sync::Arc<Self>) {
        *self.woken.lock().expect("signal") = true;
        self.cv.notify_one();
    }
}

/// [`model`] with at least `bound` preemptions, for a scenario whose bug
/// needs more than the suite's default to show.
#[cfg(iolab_loom)]
pub fn model_min_preemptions(name: &str, bound: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(builder.preemption_bound.map_or(bound, |b| b.max(bound)));
    model_with(name, builder, f);
}

#[cfg(iolab_loom)]
fn model_with(name: &str, builder: loom::model::Builder, f: impl Fn() + Sync + Send + 'static) {
    // A panic inside a model runs on one of loom's coroutine stacks,
    // which a backtrace (RUST_BACKTRACE=1) overflows, leaving the process
    // hung instead of failed: models report their panics without one.
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let thread = std::thread::current();
            let at = info
                .location()
                .map_or_else(|| "?".to_owned(), ToString::to_string);
            eprintln!(
                "thread '{}' panicked at {at}:\n{}",
                thread.name().unwrap_or("<unnamed>"),
                info.payload_as_str().unwrap_or("a panic without a message")
            );
        }));
    });
    // Instrumentation outside the model: a plain std atomic on purpose.
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&runs);
    let start = std::time::Instant::now();
    builder.check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f();
    });
    eprintln!(
        "loom model {name}: {} interleavings in {:.2?}",
        runs.load(std::sync::atomic::Ordering::Relaxed),
        start.elapsed()
    );
}

/// Environment variable that marks the child run of
/// [`failure_in_child`].
const CHILD: &str = "IOLAB_CHECK_CHILD";

/// How long [`failure_in_child`] waits for its child.
const CHILD_DEADLINE: std::time::Duration = std::time::Duration::from_secs(600);

/// Runs `scenario` in a child process of this test binary (the test
/// named `test`, alone) and returns the message it failed with. For a
/// test that shows a loom suite catches a deliberately wrong variant: a
/// failing loom model may abort its process (a deadlock, a panic while
/// unwinding), so it cannot be caught in-process like
/// [`failure_of`]'s suites.
///
/// # Panics
///
/// If the scenario passed, or the child failed without a panic.
pub fn failure_in_child(test: &str, scenario: fn()) -> String {
    if std::env::var_os(CHILD).is_some() {
        scenario();
        return String::new();
    }
    let exe = std::env::current_exe().expect("test binary");
    let mut child = std::process::Command::new(exe)
        .args(["--exact", test, "--test-threads=1", "--nocapture"])
        .env(CHILD, "1")
        // A backtrace inside a loom coroutine can overflow its stack.
        .env("RUST_BACKTRACE", "0")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rerun the test binary");
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut text);
            }
            text
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    // A scenario that hangs is ended, and said so, rather than waited on.
    let deadline = std::time::Instant::now() + CHILD_DEADLINE;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    let Some(status) = status else {
        panic!(
            "{test}: the scenario did not end within {CHILD_DEADLINE:?} and was killed\n{stderr}"
        );
    };
    assert!(
        !status.success(),
        "{test}: the scenario passed where it should fail\n{stdout}"
    );
    assert!(
        stderr.contains("panicked"),
        "{test}: the child failed without a panic ({status:?})\n{stderr}"
    );
    stderr
        .lines()
        .skip_while(|l| !l.contains("panicked"))
        .nth(1)
        .unwrap_or("?")
        .to_owned()
}

/// Runs the mutant scenario `test` (the calling test's own name) for bug
/// `bug`, given the mutant compiled in (`active`): directly on the real
/// code, where it must pass; in a child process expecting a model panic
/// under its own mutant; not at all under another mutant.
pub fn check_mutant(active: Option<&str>, bug: &str, test: &str, scenario: fn()) {
    if active.is_none() || std::env::var_os(CHILD).is_some() {
        scenario();
        return;
    }
    if active != Some(bug) {
        eprintln!("{test}: skipped under mutant {active:?}");
        return;
    }
    let why = failure_in_child(test, scenario);
    eprintln!("{test}: mutant {bug} caught: {why}");
}
