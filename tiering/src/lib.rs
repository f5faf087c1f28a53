//! btrfs device choice: chunk placement (stock, metadata-on-SSD variants)
//! and RAID1 read-mirror policies, as pure functions and state machines.
//!
//! Not built yet: this crate holds only its purpose. The specification is
//! `shared/spec/tiering.md`.
