//! The `block` request events (kernel: `include/trace/events/block.h`):
//! `DEV RWBS [BYTES] (CMD) SECTOR + NR [IOPRIO] [COMM|ERROR]`.

use super::Dev;
use super::fields::{Tokens, decimal};

/// A request's `rwbs` column: flags and operation as letters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rwbs {
    bytes: [u8; 8],
    len: u8,
}

impl Rwbs {
    fn new(s: &str) -> Option<Rwbs> {
        if s.is_empty() || s.len() > 8 || !s.bytes().all(|b| b.is_ascii_uppercase()) {
            return None;
        }
        let mut bytes = [0; 8];
        bytes[..s.len()].copy_from_slice(s.as_bytes());
        Some(Rwbs {
            bytes,
            len: s.len() as u8,
        })
    }

    /// The letters.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }

    /// The operation letter: `R`, `W`, `D` (discard), `E` (secure erase),
    /// `Z` (write zeroes), `F` (flush), `N` (other). A leading `F` is the
    /// PREFLUSH flag when another operation letter follows it.
    pub fn op(&self) -> u8 {
        let b = &self.bytes[..usize::from(self.len)];
        if b.len() > 1 && b[0] == b'F' && b"RWDEZFN".contains(&b[1]) {
            b[1]
        } else {
            b[0]
        }
    }

    /// The request carries `flag` after its operation letter (`S` sync,
    /// `M` metadata, `A` readahead, `F` FUA).
    pub fn has(&self, flag: u8) -> bool {
        let b = &self.bytes[..usize::from(self.len)];
        let skip = usize::from(b.len() > 1 && b[0] == b'F' && b"RWDEZFN".contains(&b[1])) + 1;
        b.iter().skip(skip).any(|&c| c == flag)
    }
}

/// `block_rq_insert`, `block_rq_issue` or `block_rq_complete`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rq {
    /// Device.
    pub dev: Dev,
    /// Flags and operation.
    pub rwbs: Rwbs,
    /// Bytes (insert and issue only).
    pub bytes: Option<u64>,
    /// Start sector (a flush prints 0 at issue and all ones at completion).
    pub sector: u64,
    /// Sectors.
    pub nr_sector: u32,
    /// Completion status (complete only; 0 is success).
    pub error: Option<i32>,
}

pub(super) fn rq(payload: &str, with_bytes: bool) -> Result<Rq, String> {
    let mut toks = Tokens::new(payload);
    let mut next = |what: &str| {
        toks.next()
            .ok_or_else(|| format!("cut short before its {what}"))
    };
    let d = next("device")?;
    let dev = Dev::parse_sep(d, ',').ok_or_else(|| format!("'{d}' is not a device MAJ,MIN"))?;
    let r = next("rwbs")?;
    let rwbs = Rwbs::new(r).ok_or_else(|| format!("'{r}' is not an rwbs column"))?;
    let bytes = if with_bytes {
        let b = next("bytes")?;
        Some(decimal(b).ok_or_else(|| format!("bytes '{b}' is not a number"))?)
    } else {
        None
    };
    // The command column is `(...)`; it may hold spaces.
    let mut cmd = next("command column")?;
    if !cmd.starts_with('(') {
        return Err(format!("expected the '(command)' column, found '{cmd}'"));
    }
    while !cmd.ends_with(')') {
        cmd = next("end of the command column")?;
    }
    let s = next("sector")?;
    let sector = decimal(s).ok_or_else(|| format!("sector '{s}' is not a number"))?;
    if next("'+'")? != "+" {
        return Err("expected 'SECTOR + NR'".into());
    }
    let n = next("sector count")?;
    let nr_sector = decimal(n)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| format!("sector count '{n}' is not a number"))?;
    // Optional `class,level,hint` (6.x), then `[comm]` or `[error]`.
    let mut last = next("final [..] column")?;
    if !last.starts_with('[') {
        last = next("final [..] column")?;
    }
    let inner = last
        .strip_prefix('[')
        .ok_or_else(|| format!("expected the final '[..]' column, found '{last}'"))?;
    let error = if with_bytes {
        if !payload.ends_with(']') {
            return Err("the final '[comm]' column is cut short".into());
        }
        None
    } else {
        let e = inner
            .strip_suffix(']')
            .ok_or_else(|| "the final '[error]' column is cut short".to_string())?;
        Some(
            e.parse()
                .map_err(|_| format!("error '{e}' is not a number"))?,
        )
    };
    Ok(Rq {
        dev,
        rwbs,
        bytes,
        sector,
        nr_sector,
        error,
    })
}
