//! The `wbt` events (kernel: `include/trace/events/wbt.h`).

use super::Dev;
use super::fields::{head, num, pairs};

/// One direction's window statistics as `wbt_stat` prints them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowFields {
    /// `rmean` / `wmean` in ns.
    pub mean: u64,
    /// `rmin` / `wmin` in ns.
    pub min: u64,
    /// `rmax` / `wmax` in ns.
    pub max: u64,
    /// `rsamples` / `wsamples`.
    pub samples: u64,
    /// `rtime` / `wtime` (the sum), printed by kernels before 6.x only.
    pub time: Option<u64>,
}

/// `wbt_stat`: a window's statistics, printed when they decide it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WbtStat {
    /// Device.
    pub dev: Dev,
    /// Reads.
    pub read: WindowFields,
    /// Writes.
    pub write: WindowFields,
}

/// `wbt_step`'s message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepMsg {
    /// `scale up` (the 2016 code: `step up`).
    Up,
    /// `scale down` (`step down`).
    Down,
}

/// `wbt_step`: the depth changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WbtStep {
    /// Device.
    pub dev: Dev,
    /// Which way.
    pub msg: StepMsg,
    /// `step=`: the new `scale_step`.
    pub step: i32,
    /// `window=`: `cur_win_nsec / 1000`, the window that just expired.
    pub window_us: u64,
    /// `background=`.
    pub background: u32,
    /// `normal=`.
    pub normal: u32,
    /// `max=`.
    pub max: u32,
}

/// `wbt_timer`: a window expired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WbtTimer {
    /// Device.
    pub dev: Dev,
    /// `status=`: the verdict (1 OK, 2 UNKNOWN, 3 UNKNOWN_WRITES, 4 EXCEEDED).
    pub status: u32,
    /// `step=`: `scale_step` before the verdict is acted on.
    pub step: i32,
    /// `inflight=`: tracked requests in flight.
    pub inflight: u32,
}

fn dev(name: &str) -> Result<Dev, String> {
    Dev::parse_sep(name, ':').ok_or_else(|| format!("'{name}' is not a device name MAJ:MIN"))
}

fn window(rest: &str, p: char) -> Result<WindowFields, String> {
    let key = |k: &str| format!("{p}{k}");
    let time = match pairs(rest).find(|(k, _)| *k == key("time")) {
        Some((_, v)) => Some(
            v.parse()
                .map_err(|_| format!("'{}={v}' is not a number", key("time")))?,
        ),
        None => None,
    };
    Ok(WindowFields {
        mean: num(rest, &key("mean"), "")?,
        min: num(rest, &key("min"), "")?,
        max: num(rest, &key("max"), "")?,
        samples: num(rest, &key("samples"), "")?,
        time,
    })
}

pub(super) fn stat(payload: &str) -> Result<WbtStat, String> {
    let (name, rest) = head(payload)?;
    Ok(WbtStat {
        dev: dev(name)?,
        read: window(rest, 'r')?,
        write: window(rest, 'w')?,
    })
}

pub(super) fn lat(payload: &str) -> Result<(Dev, u64), String> {
    let (name, rest) = head(payload)?;
    let v = rest
        .strip_prefix("latency ")
        .and_then(|v| v.strip_suffix("us"))
        .ok_or_else(|| "expected 'latency Nus'".to_string())?;
    let us = v.parse().map_err(|_| format!("'{v}' is not a number"))?;
    Ok((dev(name)?, us))
}

pub(super) fn step(payload: &str) -> Result<WbtStep, String> {
    let (name, rest) = head(payload)?;
    let (msg, fields) = head(rest)?;
    let msg = match msg {
        "scale up" | "step up" => StepMsg::Up,
        "scale down" | "step down" => StepMsg::Down,
        other => return Err(format!("unknown step message '{other}'")),
    };
    Ok(WbtStep {
        dev: dev(name)?,
        msg,
        step: num(fields, "step", "")?,
        window_us: num(fields, "window", "us")?,
        background: num(fields, "background", "")?,
        normal: num(fields, "normal", "")?,
        max: num(fields, "max", "")?,
    })
}

pub(super) fn timer(payload: &str) -> Result<WbtTimer, String> {
    let (name, rest) = head(payload)?;
    Ok(WbtTimer {
        dev: dev(name)?,
        status: num(rest, "status", "")?,
        step: num(rest, "step", "")?,
        inflight: num(rest, "inflight", "")?,
    })
}
