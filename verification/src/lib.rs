//! Verification suites for the algorithm crates: loom models of the
//! userspace faces, reference-model property tests, and historic bugs
//! reintroduced as mutants behind a test-only feature.
//!
//! Empty until the algorithm crates land; the simulator's own tests live
//! in `sim/tests` and in its modules.
