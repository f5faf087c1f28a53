//! Linux writeback throttling (blk-wbt) as a pure, deterministic state
//! machine, in its 2016 (v5) and modern generations, with a userspace
//! throttle face.
//!
//! Not built yet: this crate holds only its purpose. The specification is
//! `shared/spec/wbt.md`; the simulator will run it through
//! `iolab_sim::block::Policy`.
