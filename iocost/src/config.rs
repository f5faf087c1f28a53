//! Configuration in the kernel's own syntax (cgroup-v2.rst): `io.cost.qos`,
//! `io.cost.model` and `io.weight` writes, and the lines reading those
//! files shows.
//!
//! A write changes only the keys it names (parameters start from the
//! current values, as in `ioc_qos_write`/`ioc_cost_model_write`), and any
//! error leaves everything untouched. A leading `MAJ:MIN` is accepted and
//! must match the device. Naming any parameter switches `ctrl` to `user`;
//! `ctrl=auto` returns to the built-in set (order matters, as in the
//! kernel: a later key switches back to `user`).

use alloc::string::{String, ToString};
use core::fmt;

use crate::CostModel;
use crate::consts::{CGROUP_WEIGHT_MAX, CGROUP_WEIGHT_MIN, VRATE_MAX_PPM, VRATE_MIN_PPM};
use crate::group::GroupId;
use crate::ioc::IoCost;
use crate::model::LinearModel;
use crate::params::Qos;

/// Which file a configuration error came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConfigFile {
    /// `io.cost.qos`.
    Qos,
    /// `io.cost.model`.
    Model,
    /// `io.weight`.
    Weight,
}

impl fmt::Display for ConfigFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ConfigFile::Qos => "io.cost.qos",
            ConfigFile::Model => "io.cost.model",
            ConfigFile::Weight => "io.weight",
        })
    }
}

/// Why a configuration write was refused (the kernel answers `-EINVAL`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// A token that is not a key of this file.
    UnknownKey {
        /// The file.
        file: ConfigFile,
        /// The key as written (the whole token if it has no `=`).
        key: String,
    },
    /// A known key with a value it does not accept.
    InvalidValue {
        /// The file.
        file: ConfigFile,
        /// The key.
        key: &'static str,
        /// The value as written.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
    /// `min` above `max` after the write.
    MinAboveMax {
        /// Resulting minimum, ppm.
        min: u32,
        /// Resulting maximum, ppm.
        max: u32,
    },
    /// The `MAJ:MIN` prefix names another device.
    WrongDevice {
        /// The file.
        file: ConfigFile,
        /// As written.
        devno: String,
    },
    /// `io.weight` written for a group that does not exist.
    UnknownGroup {
        /// The group.
        group: GroupId,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::UnknownKey { file, key } => write!(f, "{file}: unknown key `{key}`"),
            ConfigError::InvalidValue {
                file,
                key,
                value,
                expected,
            } => {
                write!(
                    f,
                    "{file}: {key}: invalid value `{value}`: expected {expected}"
                )
            }
            ConfigError::MinAboveMax { min, max } => write!(
                f,
                "io.cost.qos: min: {}.{:02} is above max {}.{:02}",
                min / 10_000,
                min % 10_000 / 100,
                max / 10_000,
                max % 10_000 / 100
            ),
            ConfigError::WrongDevice { file, devno } => {
                write!(f, "{file}: no such device `{devno}`")
            }
            ConfigError::UnknownGroup { group } => write!(f, "io.weight: no group {}", group.0),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ConfigError {}

/// `match_u64`: an unsigned integer in C notation (decimal, `0x` hex,
/// leading-0 octal).
fn parse_u64(s: &str) -> Option<u64> {
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// `cgroup_parse_float(s, 2)`: a non-negative decimal with the fraction
/// truncated to two digits, times 100 ("95.5" → 9550).
fn parse_centi(s: &str) -> Option<u64> {
    let (whole, frac) = match s.split_once('.') {
        Some((w, f)) => (w, f),
        None => (s, ""),
    };
    if whole.is_empty()
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let w: u64 = whole.parse().ok()?;
    let mut f = 0u64;
    for (k, b) in frac.bytes().take(2).enumerate() {
        f += u64::from(b - b'0') * if k == 0 { 10 } else { 1 };
    }
    w.checked_mul(100)?.checked_add(f)
}

/// Splits a write into tokens, checking an optional `MAJ:MIN` prefix.
fn tokens<'a, M: CostModel>(
    ioc: &IoCost<M>,
    file: ConfigFile,
    line: &'a str,
) -> Result<impl Iterator<Item = &'a str>, ConfigError> {
    let mut it = line
        .split([' ', '\t', '\n'])
        .filter(|t| !t.is_empty())
        .peekable();
    if let Some(first) = it.peek().filter(|f| !f.contains('=') && f.contains(':')) {
        {
            let ok = first
                .split_once(':')
                .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
                .is_some_and(|d| d == ioc.device.devno);
            if !ok {
                return Err(ConfigError::WrongDevice {
                    file,
                    devno: first.to_string(),
                });
            }
            it.next();
        }
    }
    Ok(it)
}

/// The numeric keys of `io.cost.qos` (besides `enable` and `ctrl`).
pub const QOS_KEYS: [&str; 6] = ["rpct", "rlat", "wpct", "wlat", "min", "max"];
/// The parameter keys of `io.cost.model` (besides `ctrl` and `model`).
pub const MODEL_KEYS: [&str; 6] = [
    "rbps",
    "rseqiops",
    "rrandiops",
    "wbps",
    "wseqiops",
    "wrandiops",
];

impl<M: CostModel> IoCost<M> {
    /// Writes `io.cost.qos` (`ioc_qos_write`), e.g.
    /// `enable=1 ctrl=user rpct=95 rlat=2500 wpct=95 wlat=5000 min=50 max=150`.
    ///
    /// Percentiles take up to two decimals in [0, 100]; latencies are µs;
    /// `min`/`max` are percentages clamped into [1, 10 000] like the kernel.
    /// Latencies above `u32::MAX` are refused (the kernel truncates them).
    pub fn write_qos(&mut self, now: u64, line: &str) -> Result<(), ConfigError> {
        let f = ConfigFile::Qos;
        let mut q = [
            self.qos.rppm,
            self.qos.rlat,
            self.qos.wppm,
            self.qos.wlat,
            self.qos.min,
            self.qos.max,
        ];
        let mut enable = self.enabled;
        let mut user = self.user_qos;
        for tok in tokens(self, f, line)? {
            let Some((key, val)) = tok.split_once('=') else {
                return Err(ConfigError::UnknownKey {
                    file: f,
                    key: tok.to_string(),
                });
            };
            let bad = |key: &'static str, expected: &'static str| ConfigError::InvalidValue {
                file: f,
                key,
                value: val.to_string(),
                expected,
            };
            match key {
                "enable" => {
                    enable =
                        parse_u64(val).ok_or_else(|| bad("enable", "an unsigned integer"))? != 0;
                    continue;
                }
                "ctrl" => {
                    user = match val {
                        "auto" => false,
                        "user" => true,
                        _ => return Err(bad("ctrl", "`auto` or `user`")),
                    };
                    continue;
                }
                _ => {}
            }
            let Some(k) = QOS_KEYS.iter().position(|&x| x == key) else {
                return Err(ConfigError::UnknownKey {
                    file: f,
                    key: key.to_string(),
                });
            };
            let name = QOS_KEYS[k];
            match name {
                "rpct" | "wpct" => {
                    let v = parse_centi(val).filter(|&v| v <= 10_000).ok_or_else(|| {
                        bad(name, "a percentage in [0, 100] with at most two decimals")
                    })?;
                    q[k] = (v * 100) as u32;
                }
                "rlat" | "wlat" => {
                    let v = parse_u64(val)
                        .and_then(|v| u32::try_from(v).ok())
                        .ok_or_else(|| bad(name, "microseconds, an unsigned 32-bit integer"))?;
                    q[k] = v;
                }
                _ => {
                    let v = parse_centi(val).ok_or_else(|| {
                        bad(name, "a non-negative percentage with at most two decimals")
                    })?;
                    q[k] = v
                        .saturating_mul(100)
                        .clamp(u64::from(VRATE_MIN_PPM), u64::from(VRATE_MAX_PPM))
                        as u32;
                }
            }
            user = true;
        }
        if q[4] > q[5] {
            return Err(ConfigError::MinAboveMax {
                min: q[4],
                max: q[5],
            });
        }
        let _ = self.note_time(now);
        self.set_enabled(enable);
        if user {
            self.qos = Qos {
                rppm: q[0],
                rlat: q[1],
                wppm: q[2],
                wlat: q[3],
                min: q[4],
                max: q[5],
            };
        }
        self.user_qos = user;
        self.refresh_params();
        Ok(())
    }

    /// Writes `io.cost.model` (`ioc_cost_model_write`), e.g.
    /// `ctrl=user model=linear rbps=488636629 rseqiops=8932 ...`.
    pub fn write_model(&mut self, now: u64, line: &str) -> Result<(), ConfigError> {
        let f = ConfigFile::Model;
        let m = self.model;
        let mut u = [
            m.rbps,
            m.rseqiops,
            m.rrandiops,
            m.wbps,
            m.wseqiops,
            m.wrandiops,
        ];
        let mut user = self.user_model;
        for tok in tokens(self, f, line)? {
            let Some((key, val)) = tok.split_once('=') else {
                return Err(ConfigError::UnknownKey {
                    file: f,
                    key: tok.to_string(),
                });
            };
            let bad = |key: &'static str, expected: &'static str| ConfigError::InvalidValue {
                file: f,
                key,
                value: val.to_string(),
                expected,
            };
            match key {
                "ctrl" => {
                    user = match val {
                        "auto" => false,
                        "user" => true,
                        _ => return Err(bad("ctrl", "`auto` or `user`")),
                    };
                    continue;
                }
                "model" => {
                    if val != "linear" {
                        return Err(bad("model", "`linear`"));
                    }
                    continue;
                }
                _ => {}
            }
            let Some(k) = MODEL_KEYS.iter().position(|&x| x == key) else {
                return Err(ConfigError::UnknownKey {
                    file: f,
                    key: key.to_string(),
                });
            };
            u[k] =
                parse_u64(val).ok_or_else(|| bad(MODEL_KEYS[k], "an unsigned 64-bit integer"))?;
            user = true;
        }
        let _ = self.note_time(now);
        if user {
            self.model = LinearModel {
                rbps: u[0],
                rseqiops: u[1],
                rrandiops: u[2],
                wbps: u[3],
                wseqiops: u[4],
                wrandiops: u[5],
            };
        }
        self.user_model = user;
        self.refresh_params();
        Ok(())
    }

    /// Writes the `io.weight` file of `group`'s cgroup
    /// (`ioc_weight_write`): `default N` or `N` sets the cgroup's default,
    /// `MAJ:MIN N` its weight on this device, `MAJ:MIN default` removes that.
    /// N ∈ [1, 10 000].
    pub fn write_weight(
        &mut self,
        now: u64,
        group: GroupId,
        line: &str,
    ) -> Result<(), ConfigError> {
        let f = ConfigFile::Weight;
        let Some(i) = self.gidx(group) else {
            return Err(ConfigError::UnknownGroup { group });
        };
        let mut it = line.split([' ', '\t', '\n']).filter(|t| !t.is_empty());
        let first = it.next().unwrap_or("");
        let parse_w = |v: &str| -> Result<u32, ConfigError> {
            v.parse::<u32>()
                .ok()
                .filter(|w| (CGROUP_WEIGHT_MIN..=CGROUP_WEIGHT_MAX).contains(w))
                .ok_or_else(|| ConfigError::InvalidValue {
                    file: f,
                    key: "weight",
                    value: v.to_string(),
                    expected: "an integer in [1, 10000]",
                })
        };
        let n = self.ioc_now(now);
        let _ = self.note_time(now);
        if first.contains(':') {
            let ok = first
                .split_once(':')
                .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
                .is_some_and(|d| d == self.device.devno);
            if !ok {
                return Err(ConfigError::WrongDevice {
                    file: f,
                    devno: first.to_string(),
                });
            }
            let v = it.next().unwrap_or("");
            let cfg = if v == "default" {
                0
            } else {
                parse_w(v)? * self.weight_unit()
            };
            if let Some(extra) = it.next() {
                return Err(ConfigError::UnknownKey {
                    file: f,
                    key: extra.to_string(),
                });
            }
            self.groups[i].cfg_weight = cfg;
        } else {
            let v = if first == "default" {
                it.next().unwrap_or("")
            } else {
                first
            };
            let w = parse_w(v)?;
            if let Some(extra) = it.next() {
                return Err(ConfigError::UnknownKey {
                    file: f,
                    key: extra.to_string(),
                });
            }
            self.groups[i].dfl_weight = w * self.weight_unit();
        }
        self.weight_updated(i, &n);
        self.debug_check();
        Ok(())
    }

    /// Sets a group's weight on this device (like `MAJ:MIN N` in
    /// `io.weight`), N ∈ [1, 10 000]; the form a simulator adapter uses for
    /// fio's `cgroup_weight=`.
    pub fn set_weight(&mut self, now: u64, group: GroupId, weight: u32) -> Result<(), ConfigError> {
        if !(CGROUP_WEIGHT_MIN..=CGROUP_WEIGHT_MAX).contains(&weight) {
            return Err(ConfigError::InvalidValue {
                file: ConfigFile::Weight,
                key: "weight",
                value: weight.to_string(),
                expected: "an integer in [1, 10000]",
            });
        }
        let Some(i) = self.gidx(group) else {
            return Err(ConfigError::UnknownGroup { group });
        };
        let n = self.ioc_now(now);
        let _ = self.note_time(now);
        self.groups[i].cfg_weight = weight * self.weight_unit();
        self.weight_updated(i, &n);
        self.debug_check();
        Ok(())
    }

    /// The line reading `io.cost.qos` shows (`ioc_qos_prfill`).
    pub fn qos_line(&self) -> QosLine {
        QosLine {
            devno: self.device.devno,
            enabled: self.enabled,
            user: self.user_qos,
            qos: self.qos,
        }
    }

    /// The line reading `io.cost.model` shows (`ioc_cost_model_prfill`).
    pub fn model_line(&self) -> ModelLine {
        ModelLine {
            devno: self.device.devno,
            user: self.user_model,
            model: self.model,
        }
    }

    /// The active QoS parameters.
    pub fn qos(&self) -> Qos {
        self.qos
    }

    /// The active cost model.
    pub fn model(&self) -> LinearModel {
        self.model
    }

    /// The configured weight of a group in user units (1..=10 000).
    pub fn weight(&self, group: GroupId) -> Option<u32> {
        self.gidx(group)
            .map(|i| self.groups[i].weight / self.weight_unit())
    }
}

/// `io.cost.qos` as read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QosLine {
    devno: (u32, u32),
    enabled: bool,
    user: bool,
    qos: Qos,
}

impl fmt::Display for QosLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = &self.qos;
        let pct = |v: u32| (v / 10_000, v % 10_000 / 100);
        let (r0, r1) = pct(q.rppm);
        let (w0, w1) = pct(q.wppm);
        let (n0, n1) = pct(q.min);
        let (x0, x1) = pct(q.max);
        write!(
            f,
            "{}:{} enable={} ctrl={} rpct={r0}.{r1:02} rlat={} wpct={w0}.{w1:02} wlat={} min={n0}.{n1:02} max={x0}.{x1:02}",
            self.devno.0,
            self.devno.1,
            u8::from(self.enabled),
            if self.user { "user" } else { "auto" },
            q.rlat,
            q.wlat
        )
    }
}

/// `io.cost.model` as read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelLine {
    devno: (u32, u32),
    user: bool,
    model: LinearModel,
}

impl fmt::Display for ModelLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = &self.model;
        write!(
            f,
            "{}:{} ctrl={} model=linear rbps={} rseqiops={} rrandiops={} wbps={} wseqiops={} wrandiops={}",
            self.devno.0,
            self.devno.1,
            if self.user { "user" } else { "auto" },
            m.rbps,
            m.rseqiops,
            m.rrandiops,
            m.wbps,
            m.wseqiops,
            m.wrandiops
        )
    }
}
