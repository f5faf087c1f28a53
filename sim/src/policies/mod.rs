//! Adapters that plug the algorithm crates into the simulator's
//! [`Policy`](crate::block::Policy) trait. The algorithm crates know
//! nothing of the simulator; each adapter maps the simulator's bios and
//! requests onto one core's inputs and its decisions back.

pub mod iocost;
pub mod wbt;
