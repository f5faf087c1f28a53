//! Verification suites for the algorithm crates: loom models of the
//! userspace faces, reference-model property tests, and historic bugs
//! reintroduced as mutants behind a test-only cfg (`--cfg iolab_mutant="b2"`,
//! not a feature: no crate depending on ours can switch one on).
//!
//! * `tests/wbt_loom.rs`: loom models of `iolab_wbt::Throttle` (no lost
//!   wakeup, inflight never above the limit, FIFO order, limit lowered and
//!   raised while threads sleep, permits dropped with sleepers, disabling
//!   with a sleeper, the close waking a sleeper, racing a grant and
//!   racing a lockless admission).
//! * `tests/wbt_async_loom.rs`: loom models of the throttle's futures
//!   (no lost wakeup for a task; a task and a thread in one FIFO; a
//!   future dropped while queued, granted but unpolled, or done gives its
//!   place or slot back; close racing a waiting task's grant; a task
//!   polled under a second waker is woken through it).
//! * `tests/wbt_mutants.rs`: historic bugs B2, B3, B4 and B5 (each named
//!   with its fixing commit there) as loom scenarios; each passes on the
//!   real code and fails under its `iolab_mutant = "bN"` cfg.
//! * `tests/flush_loom.rs`: loom models of `iolab_flush::Pool`
//!   (reservers and a flusher keep FIFO, no sleeper left behind, grant
//!   versus interrupt, space returned while a ticket is queued, a ticket
//!   queued as the flusher stops, the pool's close waking a waiting
//!   reserver and racing a grant).
//! * `tests/flush_mutants.rs`: two historic btrfs races, F1 (an
//!   interrupted waiter's ticket left queued, leaking its later grant) and
//!   F2 (a newcomer taking space freed for the front ticket), each caught
//!   by the loom suite under its `iolab_mutant = "fN"` cfg.
//!
//! All are compiled only with `RUSTFLAGS="--cfg iolab_loom"`; the commands
//! are in each file's header.
//!
//! [`tiering`] holds conformance suites a user runs on their own read
//! policy or chunk allocator from their own tests, one line each, in any
//! build (`tests/tiering_conformance.rs` runs them on ours and on wrong
//! twins). The simulator's own tests live in
//! `sim/tests` and in its modules.

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
