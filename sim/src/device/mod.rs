//! Device models: null, flash SSD (NVMe / SATA), rotating disk, and a
//! file behind the loop driver (`backed`, fitted by `iolab calibrate`).
//!
//! A device accepts commands from the block layer (`submit`), tells the event loop when
//! each one completes (`DevCtx::complete_at`) and when it wants to run again
//! (`DevCtx::wake_at` → `Device::on_wake`). The event loop hands completions back with
//! `retire`, which frees the tag.
//!
//! Rules shared by every model:
//! - time is `Ns` (u64 nanoseconds); floats appear only inside a model and are rounded
//!   to whole ns before anything is scheduled;
//! - no RNG and no hash-map iteration: the same command stream gives the same completion
//!   times on every platform;
//! - all per-command state lives in structures sized from `queue_depth` at construction,
//!   so the hot path does not allocate.
//!
//! Non-queued FLUSH (SATA, \[F4\]): when `flush_queued` is false the host may
//! dispatch a FLUSH only with nothing in flight, and while it runs `can_accept` refuses
//! everything.

mod backed;
mod config;
mod divisor;
mod hdd;
mod jitter;
mod null;
mod ssd;
#[cfg(test)]
mod tests;
mod timeline;

pub use backed::LoopDev;
pub use config::{
    DeviceConfig, DeviceKind, GcMode, HddParams, LoopParams, NullParams, Precondition, SsdParams,
    ZonedParams, line_of_key,
};
pub use hdd::HddDev;
pub use null::NullDev;
pub use ssd::SsdDev;

use crate::time::Ns;

/// Command type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DevOp {
    /// Read `len` bytes at `offset`.
    Read,
    /// Write `len` bytes at `offset`.
    Write,
    /// Make every write completed before it durable.
    Flush,
    /// Deallocate a range (TRIM / Deallocate): command overhead only.
    Discard,
}

/// One command as the host hands it to the device.
#[derive(Clone, Copy, Debug)]
pub struct DevCmd {
    /// Host tag, unique among the commands in flight.
    pub tag: u32,
    /// Operation.
    pub op: DevOp,
    /// Byte offset on the device.
    pub offset: u64,
    /// Length in bytes (ignored by Flush).
    pub len: u64,
    /// Force unit access: a write completes only once its data is on media.
    pub fua: bool,
}

/// Callback into the event loop.
pub trait DevCtx {
    /// The command with `tag` completes at `at` (>= now).
    fn complete_at(&mut self, at: Ns, tag: u32);
    /// Call [`Device::on_wake`] at `at` (>= now).
    fn wake_at(&mut self, at: Ns);
}

/// Errors from building or loading a device description.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeviceError {
    /// The text is not valid TOML.
    #[error("device file is not valid TOML: {0}")]
    Syntax(String),
    /// A key the schema does not have.
    #[error("unknown key `{0}`")]
    UnknownKey(String),
    /// `base` names no preset.
    #[error("unknown preset `{0}` (known: nvme, sata-ssd, hdd, null)")]
    UnknownPreset(String),
    /// The parameter table of the chosen kind is missing.
    #[error("missing table [{0}]")]
    MissingTable(String),
    /// A value that cannot describe a device.
    #[error("invalid value for `{key}`: {msg}")]
    Invalid {
        /// Dotted key, e.g. `ssd.queue_depth`.
        key: String,
        /// What is wrong with it.
        msg: String,
    },
    /// Type errors and missing fields reported by the deserializer (they name the key).
    #[error("device file: {0}")]
    Parse(String),
}

impl DeviceError {
    /// The dotted key (or table) the error is about, if it names one:
    /// where [`line_of_key`] finds it in the
    /// file.
    pub fn key(&self) -> Option<String> {
        match self {
            DeviceError::Invalid { key, .. } => Some(key.clone()),
            DeviceError::UnknownKey(path) => path.split_whitespace().next().map(str::to_owned),
            DeviceError::MissingTable(table) => Some(table.clone()),
            DeviceError::Parse(msg) => {
                let table = msg
                    .rsplit_once(" in `")
                    .and_then(|(_, t)| t.strip_suffix('`'));
                let field = ["unknown field `", "missing field `"]
                    .iter()
                    .find_map(|p| msg.strip_prefix(p))
                    .and_then(|r| r.split_once('`'))
                    .map(|(f, _)| f);
                match (table, field) {
                    (Some(t), Some(f)) if msg.starts_with("unknown") => Some(format!("{t}.{f}")),
                    (Some(t), _) => Some(t.to_owned()),
                    (None, f) => f.map(str::to_owned),
                }
            }
            DeviceError::UnknownPreset(_) => Some("base".to_owned()),
            DeviceError::Syntax(_) => None,
        }
    }
}

/// A device model (enum dispatch; no `dyn` on the hot path).
#[derive(Debug)]
pub enum Device {
    /// null_blk-like fixed latency.
    Null(NullDev),
    /// Flash SSD.
    Ssd(SsdDev),
    /// Rotating disk.
    Hdd(HddDev),
    /// A file behind the loop driver.
    Loop(LoopDev),
}

macro_rules! each {
    ($self:expr, $d:ident => $e:expr) => {
        match $self {
            Device::Null($d) => $e,
            Device::Ssd($d) => $e,
            Device::Hdd($d) => $e,
            Device::Loop($d) => $e,
        }
    };
}

impl Device {
    /// Build a device from a validated description; a spread of its
    /// service times draws from the stream of seed 0.
    pub fn new(cfg: &DeviceConfig) -> Result<Device, DeviceError> {
        Device::seeded(cfg, 0, 0)
    }

    /// Build device number `index` of a run with master seed `seed`: its
    /// service-time spread draws from that device's own stream.
    pub fn seeded(cfg: &DeviceConfig, seed: u64, index: u32) -> Result<Device, DeviceError> {
        let stream = crate::rng::Stream::new(seed, crate::rng::Entity::Device(index));
        cfg.validate()?;
        match cfg.kind {
            DeviceKind::Null => {
                let p = cfg
                    .null
                    .as_ref()
                    .ok_or_else(|| DeviceError::MissingTable("null".into()))?;
                Ok(Device::Null(NullDev::new(p)))
            }
            DeviceKind::Ssd => {
                let p = cfg
                    .ssd
                    .as_ref()
                    .ok_or_else(|| DeviceError::MissingTable("ssd".into()))?;
                Ok(Device::Ssd(SsdDev::new(p, stream)))
            }
            DeviceKind::Hdd => {
                let p = cfg
                    .hdd
                    .as_ref()
                    .ok_or_else(|| DeviceError::MissingTable("hdd".into()))?;
                Ok(Device::Hdd(HddDev::new(p)?))
            }
            DeviceKind::Loop => {
                let p = cfg
                    .loop_dev
                    .as_ref()
                    .ok_or_else(|| DeviceError::MissingTable("loop".into()))?;
                Ok(Device::Loop(LoopDev::new(p, stream)))
            }
        }
    }

    /// Tags the host may have outstanding.
    pub fn queue_depth(&self) -> u32 {
        each!(self, d => d.queue_depth())
    }

    /// Capacity in bytes.
    pub fn capacity(&self) -> u64 {
        each!(self, d => d.capacity())
    }

    /// Rotating media (the block layer's `rotational` flag).
    pub fn rotational(&self) -> bool {
        matches!(self, Device::Hdd(_))
    }

    /// A volatile write cache is present: FLUSH and FUA are meaningful.
    pub fn write_cache(&self) -> bool {
        each!(self, d => d.write_cache())
    }

    /// The device honours FUA natively (else the host emulates it with a post-flush).
    pub fn fua(&self) -> bool {
        each!(self, d => d.fua())
    }

    /// FLUSH is an ordinary queued command.
    pub fn flush_queued(&self) -> bool {
        each!(self, d => d.flush_queued())
    }

    /// Commands submitted and not yet retired.
    pub fn inflight(&self) -> u32 {
        each!(self, d => d.gate().inflight)
    }

    /// May `op` be dispatched now? false when all tags are in use, when `op` is a
    /// non-queued Flush and something is in flight, or while a non-queued Flush runs.
    pub fn can_accept(&self, op: DevOp) -> bool {
        each!(self, d => d.gate().can_accept(op))
    }

    /// Hand a command to the device; the caller checked `can_accept`.
    pub fn submit(&mut self, now: Ns, cmd: DevCmd, ctx: &mut impl DevCtx) {
        each!(self, d => d.submit(now, cmd, ctx))
    }

    /// Called by the event loop at a time requested with `DevCtx::wake_at`.
    pub fn on_wake(&mut self, now: Ns, ctx: &mut impl DevCtx) {
        each!(self, d => d.on_wake(now, ctx))
    }

    /// The event loop delivered the completion of `tag`: frees its slot.
    pub fn retire(&mut self, now: Ns, tag: u32) {
        each!(self, d => d.retire(now, tag))
    }
}

/// Tag accounting shared by every model, including the non-queued FLUSH rule.
#[derive(Debug, Clone)]
pub(crate) struct Gate {
    pub(crate) queue_depth: u32,
    pub(crate) inflight: u32,
    pub(crate) flush_queued: bool,
    /// Tag of the running non-queued FLUSH.
    pub(crate) nq_flush: Option<u32>,
}

impl Gate {
    pub(crate) fn new(queue_depth: u32, flush_queued: bool) -> Gate {
        Gate {
            queue_depth,
            inflight: 0,
            flush_queued,
            nq_flush: None,
        }
    }

    pub(crate) fn can_accept(&self, op: DevOp) -> bool {
        if self.nq_flush.is_some() || self.inflight >= self.queue_depth {
            return false;
        }
        !(op == DevOp::Flush && !self.flush_queued && self.inflight > 0)
    }

    pub(crate) fn on_submit(&mut self, cmd: &DevCmd) {
        debug_assert!(
            self.can_accept(cmd.op),
            "submit without can_accept: {cmd:?}"
        );
        self.inflight += 1;
        if cmd.op == DevOp::Flush && !self.flush_queued {
            self.nq_flush = Some(cmd.tag);
        }
    }

    pub(crate) fn on_retire(&mut self, tag: u32) {
        debug_assert!(
            self.inflight > 0,
            "retire of tag {tag} with nothing in flight"
        );
        self.inflight = self.inflight.saturating_sub(1);
        if self.nq_flush == Some(tag) {
            self.nq_flush = None;
        }
    }
}

/// Keep a command inside the device: offsets past the end wrap, lengths are capped at
/// the capacity (a caller bug, but never a panic).
#[inline]
pub(crate) fn clamp_range(offset: u64, len: u64, capacity: u64) -> (u64, u64) {
    let len = len.min(capacity);
    let off = if offset.saturating_add(len) > capacity {
        offset % (capacity - len + 1)
    } else {
        offset
    };
    (off, len)
}
