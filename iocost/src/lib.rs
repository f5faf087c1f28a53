//! blk-iocost: the cost-model, work-conserving proportional IO controller,
//! as a pure state machine (modern and the 2019 `v5.4` donation).
//!
//! Not built yet: this crate holds only its purpose. The specification is
//! `shared/spec/iocost.md`.
