//! blktrace binaries as `read_iolog` takes them (fio's `blktrace.c`): the
//! records of `struct blk_io_trace` (48 bytes, then `pdu_len` bytes of
//! payload), in either byte order, as `blkparse -d` writes them merged and
//! time-ordered. Only the queue events are replayed, as fio replays them
//! (`queue_trace`): a discard as a trim, a flush as an fsync of its
//! device, the rest as a read or a write of its sectors; every other event
//! (issues, completions, merges, notes) is a side effect of the block layer
//! that traced it. Each device of the trace is one file, named
//! `/dev/block/MAJ:MIN` (fio looks the device up under `/dev`), unless
//! `replay_redirect` names one for all.

use super::iolog::{IoLog, LogAction, LogEntry, LogError, MAX_LOG_ENTRIES, Replay};

/// `BLK_IO_TRACE_MAGIC`, in the top 24 bits of a record's first word.
const MAGIC: u32 = 0x6561_7400;
/// The record layout fio reads (`SUPPORTED_VERSION`).
const VERSION: u32 = 7;
/// One record before its payload.
const RECORD: usize = 48;
/// `__BLK_TA_QUEUE`, the action in the low 16 bits.
const TA_QUEUE: u32 = 1;
/// Category bits, in the high 16 bits (`BLK_TC_ACT`).
const TC_WRITE: u32 = 1 << (1 + 16);
const TC_FLUSH: u32 = 1 << (2 + 16);
const TC_NOTIFY: u32 = 1 << (10 + 16);
const TC_DISCARD: u32 = 1 << (13 + 16);

/// Whether `bytes` start like a blktrace binary (either byte order).
pub fn is_blktrace(bytes: &[u8]) -> bool {
    let Some(first) = bytes.first_chunk::<4>() else {
        return false;
    };
    u32::from_le_bytes(*first) & 0xffff_ff00 == MAGIC
        || u32::from_be_bytes(*first) & 0xffff_ff00 == MAGIC
}

/// Parses a blktrace binary. A record that is cut short or does not carry
/// the magic is an error naming the record (1-based, its `line`).
///
/// # Errors
///
/// The first bad record, or a trace without a queue event.
pub fn parse_blktrace(bytes: &[u8], replay: &Replay) -> Result<IoLog, LogError> {
    let little = bytes
        .first_chunk::<4>()
        .is_some_and(|b| u32::from_le_bytes(*b) & 0xffff_ff00 == MAGIC);
    let u32_at = |r: &[u8], at: usize| {
        let b = [r[at], r[at + 1], r[at + 2], r[at + 3]];
        if little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    };
    let u64_at = |r: &[u8], at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&r[at..at + 8]);
        if little {
            u64::from_le_bytes(b)
        } else {
            u64::from_be_bytes(b)
        }
    };
    let mut log = IoLog {
        version: 0,
        ..IoLog::default()
    };
    let mut devices: std::collections::BTreeMap<u32, usize> = std::collections::BTreeMap::new();
    let mut last_ns: Option<u64> = None;
    let (mut at, mut record) = (0usize, 0usize);
    while at < bytes.len() {
        record += 1;
        let start = at;
        let err = |message: String| LogError {
            line: record,
            message: format!("record {record} (byte {start}): {message}"),
        };
        let Some(r) = bytes.get(at..at + RECORD) else {
            return Err(err(format!(
                "cut short: {} of its {RECORD} bytes",
                bytes.len() - at
            )));
        };
        let magic = u32_at(r, 0);
        if magic & 0xffff_ff00 != MAGIC {
            return Err(err("no blktrace magic: not a blktrace record".to_owned()));
        }
        if magic & 0xff != VERSION {
            return Err(err(format!(
                "trace version {}, where fio reads version {VERSION}",
                magic & 0xff
            )));
        }
        let time = u64_at(r, 8);
        let sector = u64_at(r, 16);
        let len = u64::from(u32_at(r, 24));
        let action = u32_at(r, 28);
        let device = u32_at(r, 36);
        let pdu = usize::from(if little {
            u16::from_le_bytes([r[46], r[47]])
        } else {
            u16::from_be_bytes([r[46], r[47]])
        });
        at += RECORD + pdu;
        if at > bytes.len() {
            return Err(err(format!("its {pdu}-byte payload is cut short")));
        }
        if action & 0xffff != TA_QUEUE || action & TC_NOTIFY != 0 {
            continue;
        }
        let kind = if action & TC_DISCARD != 0 {
            LogAction::Trim
        } else if action & TC_FLUSH != 0 {
            LogAction::Sync
        } else if action & TC_WRITE != 0 {
            LogAction::Write
        } else {
            LogAction::Read
        };
        // fio times every queue event, then skips (with a warning) a
        // zero-byte read or write, and its delay with it.
        let delay_us = last_ns.map_or(0, |l| time.saturating_sub(l) / 1000);
        last_ns = Some(time);
        if len == 0 && matches!(kind, LogAction::Read | LogAction::Write) {
            continue;
        }
        let file = match replay.redirect {
            Some(_) => 0,
            None => {
                let next = devices.len();
                *devices.entry(device).or_insert(next)
            }
        };
        if log.files.len() <= file {
            log.files.push(match &replay.redirect {
                Some(name) => name.clone(),
                None => format!("/dev/block/{}:{}", device >> 20, device & 0xf_ffff),
            });
        }
        let mut offset = match sector.checked_mul(512) {
            Some(o) => o,
            None if kind == LogAction::Sync => 0,
            None => {
                return Err(err(format!(
                    "sector {sector} is past the 64-bit byte range"
                )));
            }
        };
        if replay.scale > 1 {
            offset /= replay.scale;
        }
        let mut len = if kind == LogAction::Sync { 0 } else { len };
        if replay.align > 1 {
            offset = offset / replay.align * replay.align;
            // fio rounds a traced length up to the alignment.
            len = len
                .div_ceil(replay.align)
                .checked_mul(replay.align)
                .ok_or_else(|| err(format!("length {len} rounded up to replay_align overflows")))?;
        }
        if kind != LogAction::Sync {
            super::iolog::end_in_range(offset, len).map_err(err)?;
        }
        if log.entries.len() == MAX_LOG_ENTRIES {
            return Err(err(format!(
                "more than {MAX_LOG_ENTRIES} queue events; replay part of the trace"
            )));
        }
        log.entries.push(LogEntry {
            delay_us,
            file: file as u32,
            action: kind,
            offset: if kind == LogAction::Sync { 0 } else { offset },
            len,
        });
    }
    if log.entries.is_empty() {
        return Err(LogError {
            line: record.max(1),
            message: "the trace has no queue event to replay".to_owned(),
        });
    }
    Ok(log)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// One record as blktrace writes it on a little-endian machine.
    pub(crate) fn record(time: u64, sector: u64, bytes: u32, action: u32, dev: u32) -> Vec<u8> {
        let mut r = Vec::with_capacity(RECORD);
        r.extend((MAGIC | 7).to_le_bytes());
        r.extend(0u32.to_le_bytes());
        r.extend(time.to_le_bytes());
        r.extend(sector.to_le_bytes());
        r.extend(bytes.to_le_bytes());
        r.extend(action.to_le_bytes());
        r.extend(1234u32.to_le_bytes());
        r.extend(dev.to_le_bytes());
        r.extend(0u32.to_le_bytes());
        r.extend(0u16.to_le_bytes());
        r.extend(0u16.to_le_bytes());
        r
    }

    /// `__BLK_TA_QUEUE` with the queue category and `extra` categories.
    pub(crate) fn queued(extra: u32) -> u32 {
        TA_QUEUE | (1 << (4 + 16)) | extra
    }

    #[test]
    fn queue_events_become_the_log() {
        let dev = (7 << 20) | 3; // 7:3, a loop device
        let complete = 8 | (1 << (7 + 16));
        let mut t = Vec::new();
        t.extend(record(1_000_000, 16, 4096, queued(0), dev));
        t.extend(record(1_500_000, 16, 4096, complete, dev));
        t.extend(record(3_000_000, 2048, 8192, queued(TC_WRITE), dev));
        t.extend(record(3_200_000, 0, 0, queued(TC_WRITE | TC_FLUSH), dev));
        t.extend(record(9_000_000, 4096, 65536, queued(TC_DISCARD), dev));
        assert!(is_blktrace(&t));
        let log = parse_blktrace(&t, &Replay::default()).expect("parses");
        assert_eq!(log.files, ["/dev/block/7:3"]);
        assert_eq!(
            crate::fio::iolog::tests::actions(&log),
            [
                (0, LogAction::Read, 8192, 4096),
                (2000, LogAction::Write, 1 << 20, 8192),
                (200, LogAction::Sync, 0, 0),
                (5800, LogAction::Trim, 2 << 20, 65536),
            ]
        );
        // Big-endian traces read the same.
        let swapped: Vec<u8> = t
            .chunks(RECORD)
            .flat_map(|r| {
                let mut b = r.to_vec();
                for (at, n) in [
                    (0, 4),
                    (4, 4),
                    (8, 8),
                    (16, 8),
                    (24, 4),
                    (28, 4),
                    (32, 4),
                    (36, 4),
                    (40, 4),
                    (44, 2),
                    (46, 2),
                ] {
                    b[at..at + n].reverse();
                }
                b
            })
            .collect();
        assert_eq!(parse_blktrace(&swapped, &Replay::default()), Ok(log));
    }

    #[test]
    fn bad_records_are_named() {
        let dev = 7 << 20;
        let mut t = record(0, 0, 4096, queued(0), dev);
        t.extend(&record(1, 0, 4096, queued(0), dev)[..20]);
        let e = parse_blktrace(&t, &Replay::default()).expect_err("cut short");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("cut short: 20 of its 48 bytes"), "{e}");
        let mut t = record(0, 0, 4096, queued(0), dev);
        t.extend([0u8; 48]);
        let e = parse_blktrace(&t, &Replay::default()).expect_err("no magic");
        assert!(
            e.message.contains("record 2 (byte 48): no blktrace magic"),
            "{e}"
        );
        // A sector whose byte offset is past 64 bits, or whose IO ends
        // past the largest file offset, is refused at its record.
        let mut t = record(0, 0, 4096, queued(0), dev);
        t.extend(record(1, 1 << 55, 4096, queued(0), dev));
        let e = parse_blktrace(&t, &Replay::default()).expect_err("past 64 bits");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("past the 64-bit byte range"), "{e}");
        let t = record(0, (1 << 54) - 1, 4096, queued(TC_WRITE), dev);
        let e = parse_blktrace(&t, &Replay::default()).expect_err("past loff_t");
        assert!(e.message.contains("the largest file offset"), "{e}");
        let only_completions = record(0, 0, 4096, 8 | (1 << 23), dev);
        let e = parse_blktrace(&only_completions, &Replay::default()).expect_err("none");
        assert!(e.message.contains("no queue event"), "{e}");
    }
}
