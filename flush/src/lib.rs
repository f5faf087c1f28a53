//! btrfs delayed-ref flushing: catch-up versus on-demand throttling,
//! reservation tickets and preemptive flushing, as a pure state machine.
//!
//! Not built yet: this crate holds only its purpose. The specification is
//! `shared/spec/flush.md`.
