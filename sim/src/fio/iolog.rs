//! fio's text I/O logs (`read_iolog=`): versions 2 and 3, as fio 3.33's
//! `init_iolog_read` and `read_iolog` (`iolog.c`) read them. Pure: the
//! caller gives the text.
//!
//! Version 2: `FILE add|open|close` and `FILE read|write|trim|sync|datasync
//! OFFSET LENGTH`, and `FILE wait MS 0`, which fio's replay takes as "not
//! before MS milliseconds after the start" (its `read_iolog_get` compares
//! it with the milliseconds since the start; fio's HOWTO calls it a
//! relative wait in microseconds, and the code wins). Version 3: each line
//! starts with a timestamp in microseconds from the start, and an IO is
//! issued that long after the one before it (fio's `delay_since_ttime`).

use std::fmt;

/// Most entries one log may hold (a 16 MiB log of short lines has fewer).
pub const MAX_LOG_ENTRIES: usize = 4 << 20;

/// The furthest byte an IO of a log may reach: the largest file offset
/// the kernel takes (`loff_t`, 2^63 − 1).
pub const MAX_LOG_END: u64 = i64::MAX as u64;

/// An IO of `len` bytes at `offset` (after `replay_scale` and
/// `replay_align`) ends within [`MAX_LOG_END`].
pub(crate) fn end_in_range(offset: u64, len: u64) -> Result<u64, String> {
    match offset.checked_add(len) {
        Some(end) if end <= MAX_LOG_END => Ok(end),
        _ => Err(format!(
            "offset {offset} + length {len} ends past byte {MAX_LOG_END}, the largest file offset"
        )),
    }
}

/// What one log line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogAction {
    /// Read `len` bytes at `offset`.
    Read,
    /// Write `len` bytes at `offset`.
    Write,
    /// Trim `len` bytes at `offset`.
    Trim,
    /// `fsync` the file.
    Sync,
    /// `fdatasync` the file.
    Datasync,
    /// Open or close the file: nothing the simulation does.
    OpenClose,
    /// Version 2's `wait`: nothing before `offset` ms after the start.
    WaitUntilMs,
}

/// One replayed action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogEntry {
    /// Microseconds after the action before it (version 3; 0 in version 2).
    pub delay_us: u64,
    /// Index into [`IoLog::files`].
    pub file: u32,
    /// The action.
    pub action: LogAction,
    /// Byte offset (a `wait`'s milliseconds).
    pub offset: u64,
    /// Bytes.
    pub len: u64,
}

/// A parsed I/O log.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IoLog {
    /// `2` or `3`; 0 for a blktrace binary.
    pub version: u8,
    /// The files the log adds, in order.
    pub files: Vec<String>,
    /// Its actions, in order.
    pub entries: Vec<LogEntry>,
}

/// A line fio would not replay, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// How the replay changes what the log says (fio's `replay_*` options).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replay {
    /// `replay_redirect=`: every file of the log is this one.
    pub redirect: Option<String>,
    /// `replay_scale=`: offsets divided by it (0 or 1: unchanged).
    pub scale: u64,
    /// `replay_align=`: offsets rounded down to a multiple (0: unchanged).
    pub align: u64,
}

/// Parses a log as `read_iolog` takes it: a blktrace binary (see
/// [`super::blktrace`]) or a version 2 or 3 text log.
///
/// # Errors
///
/// As [`parse_iolog`] and [`super::blktrace::parse_blktrace`]; a text that
/// is not UTF-8 is an error at the line of its first bad byte.
pub fn parse_log(bytes: &[u8], replay: &Replay) -> Result<IoLog, LogError> {
    if super::blktrace::is_blktrace(bytes) {
        return super::blktrace::parse_blktrace(bytes, replay);
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        LogError {
            line: bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1,
            message: format!(
                "neither a text iolog nor a blktrace binary (invalid UTF-8 at byte {at})"
            ),
        }
    })?;
    parse_iolog(text, replay)
}

/// Whether `line` is a line of `blkparse`'s default text output: the
/// device as `MAJ,MIN`, then the CPU, the sequence number and the time.
fn looks_like_blkparse(line: &str) -> bool {
    let mut fields = line.split_whitespace();
    let dev = fields.next().and_then(|d| d.split_once(','));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    dev.is_some_and(|(a, b)| digits(a) && digits(b))
        && fields.next().is_some_and(digits)
        && fields.next().is_some_and(digits)
        && fields.next().is_some_and(|t| {
            t.split_once('.')
                .is_some_and(|(a, b)| digits(a) && digits(b))
        })
}

/// Parses `text`, a version 2 or 3 log. Every line fio would skip with a
/// message (an unknown action, a malformed line, an IO on a file never
/// added) is an error here, naming its line, and so is a version 3 `wait`.
///
/// # Errors
///
/// The first bad line.
pub fn parse_iolog(text: &str, replay: &Replay) -> Result<IoLog, LogError> {
    let err = |line: usize, message: String| LogError { line, message };
    let mut lines = text.lines().enumerate();
    let version = match lines.next().map(|(_, l)| l.trim_end()) {
        Some(l) if l.starts_with("fio version 2 iolog") => 2,
        Some(l) if l.starts_with("fio version 3 iolog") => 3,
        Some(l) if looks_like_blkparse(l) => {
            return Err(err(
                1,
                format!(
                    "'{}' is blkparse's text, which fio does not replay: give the binary \
                     trace (blkparse -i TRACE -d TRACE.bin merges blktrace's per-CPU files \
                     into one fio reads)",
                    l.trim().chars().take(60).collect::<String>()
                ),
            ));
        }
        Some(l) => {
            return Err(err(
                1,
                format!(
                    "'{}' is not an iolog header (fio version 2 iolog or fio version 3 iolog, \
                     or a blktrace binary; version 1 logs are not read)",
                    l.chars().take(60).collect::<String>()
                ),
            ));
        }
        None => return Err(err(1, "empty iolog".to_owned())),
    };
    let mut log = IoLog {
        version,
        ..IoLog::default()
    };
    // fio's `delay_since_ttime`: a last time of 0 counts as none, so the
    // line after one at 0 has no delay either; an `add` line's delay is
    // waited too (here, carried to the next action).
    let mut last_us = 0u64;
    let mut carried_us = 0u64;
    let mut index: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for (idx, raw) in lines {
        let line = idx + 1;
        let mut words = raw.split_whitespace();
        let Some(first) = words.next() else {
            continue;
        };
        let mut delay_us = 0;
        let name = if version == 3 {
            let at: u64 = first.parse().map_err(|_| {
                err(
                    line,
                    format!("'{first}' is not a timestamp in microseconds"),
                )
            })?;
            // As fio: no delay after a time of 0, nor one going back.
            delay_us = if last_us == 0 {
                0
            } else {
                at.saturating_sub(last_us)
            };
            last_us = at;
            words
                .next()
                .ok_or_else(|| err(line, "a timestamp without a file".to_owned()))?
        } else {
            first
        };
        let name = replay.redirect.as_deref().unwrap_or(name);
        let act = words
            .next()
            .ok_or_else(|| err(line, format!("'{name}' without an action")))?;
        let rest: Vec<&str> = words.collect();
        let action = match act {
            "add" => {
                if !rest.is_empty() {
                    return Err(err(line, "add takes no offset or length".to_owned()));
                }
                if !index.contains_key(name) {
                    index.insert(name.to_owned(), log.files.len());
                    log.files.push(name.to_owned());
                }
                carried_us = carried_us.saturating_add(delay_us);
                continue;
            }
            "open" | "close" => LogAction::OpenClose,
            "read" => LogAction::Read,
            "write" => LogAction::Write,
            "trim" => LogAction::Trim,
            "sync" => LogAction::Sync,
            "datasync" => LogAction::Datasync,
            "wait" if version == 3 => {
                return Err(err(
                    line,
                    "wait is not allowed in a version 3 log (its timestamps time it)".to_owned(),
                ));
            }
            "wait" => LogAction::WaitUntilMs,
            other => {
                return Err(err(
                    line,
                    format!(
                        "unknown action '{other}' (add, open, close, read, write, trim, sync, \
                         datasync{})",
                        if version == 2 { ", wait" } else { "" }
                    ),
                ));
            }
        };
        let file = *index
            .get(name)
            .ok_or_else(|| err(line, format!("file '{name}' is used before it is added")))?;
        // As fio's sscanf counts fields: an IO action (a sync included)
        // has an offset and a length, a file action neither.
        let io = action != LogAction::OpenClose;
        let (offset, len) = match (io, rest.as_slice()) {
            (true, [o, l]) => {
                let num = |w: &str, what: &str| {
                    w.parse::<u64>()
                        .map_err(|_| err(line, format!("{what} '{w}' is not a number")))
                };
                (num(o, "offset")?, num(l, "length")?)
            }
            (true, _) => return Err(err(line, format!("{act} needs an offset and a length"))),
            (false, []) => (0, 0),
            (false, _) => return Err(err(line, format!("{act} takes no offset or length"))),
        };
        let delay_us = delay_us.saturating_add(std::mem::take(&mut carried_us));
        if matches!(action, LogAction::Read | LogAction::Write | LogAction::Trim) && len == 0 {
            return Err(err(line, format!("{act} of 0 bytes")));
        }
        let offset = if action == LogAction::WaitUntilMs {
            offset
        } else {
            let scaled = if replay.scale > 1 {
                offset / replay.scale
            } else {
                offset
            };
            if replay.align > 1 {
                scaled / replay.align * replay.align
            } else {
                scaled
            }
        };
        if matches!(action, LogAction::Read | LogAction::Write | LogAction::Trim) {
            end_in_range(offset, len).map_err(|m| err(line, m))?;
        }
        if log.entries.len() == MAX_LOG_ENTRIES {
            return Err(err(
                line,
                format!("more than {MAX_LOG_ENTRIES} actions; split the log"),
            ));
        }
        log.entries.push(LogEntry {
            delay_us,
            file: file as u32,
            action,
            offset,
            len,
        });
    }
    // fio refuses a log without a read, a write or a wait ("failed
    // initializing iolog").
    if !log.entries.iter().any(|e| {
        matches!(
            e.action,
            LogAction::Read | LogAction::Write | LogAction::WaitUntilMs
        )
    }) {
        return Err(err(
            text.lines().count().max(1),
            "the log has no read, write or wait to replay, which fio refuses".to_owned(),
        ));
    }
    Ok(log)
}

impl IoLog {
    /// Bytes each file must hold for the log's IOs: its furthest end.
    pub fn extents(&self) -> Vec<u64> {
        let mut ends = vec![0u64; self.files.len()];
        for e in &self.entries {
            if matches!(
                e.action,
                LogAction::Read | LogAction::Write | LogAction::Trim
            ) {
                let end = e.offset.saturating_add(e.len);
                let slot = &mut ends[e.file as usize];
                *slot = (*slot).max(end);
            }
        }
        ends
    }

    /// Whether the log has an action of `kind`.
    pub fn has(&self, kind: LogAction) -> bool {
        self.entries.iter().any(|e| e.action == kind)
    }

    /// Microseconds the log's times span when replayed at `scale` percent
    /// of its pace: its delays, or the latest `wait`, whichever is later.
    pub fn span_us(&self, scale: u32) -> u64 {
        let delays: u64 = self
            .entries
            .iter()
            .map(|e| e.delay_us)
            .fold(0, u64::saturating_add);
        let waits = self
            .entries
            .iter()
            .filter(|e| e.action == LogAction::WaitUntilMs)
            .map(|e| e.offset.saturating_mul(1000))
            .max()
            .unwrap_or(0);
        let scaled = u128::from(delays) * 100 / u128::from(scale.max(1));
        (scaled.min(u128::from(u64::MAX)) as u64).max(waits)
    }

    /// The largest IO of the log.
    pub fn max_len(&self) -> u64 {
        self.entries.iter().map(|e| e.len).max().unwrap_or(0)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Each entry's delay, action, offset and length.
    pub(crate) fn actions(log: &IoLog) -> Vec<(u64, LogAction, u64, u64)> {
        log.entries
            .iter()
            .map(|e| (e.delay_us, e.action, e.offset, e.len))
            .collect()
    }

    #[test]
    fn blkparse_text_is_named_as_such() {
        let text = "  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]\n";
        let e = parse_log(text.as_bytes(), &Replay::default()).expect_err("text");
        assert!(e.message.contains("is blkparse's text"), "{}", e.message);
        assert!(e.message.contains("-d TRACE.bin"), "{}", e.message);
        let e = parse_log(b"fio version 1 iolog\n", &Replay::default()).expect_err("v1");
        assert!(e.message.contains("not an iolog header"), "{}", e.message);
        assert!(e.message.contains("or a blktrace binary"), "{}", e.message);
    }

    #[test]
    fn version_3_times_each_action_from_the_one_before() {
        let text = "fio version 3 iolog\n20 f add\n1382 f open\n1426 f read 4096 4096\n\
                    1440 f write 0 8192\n1500 f datasync 0 0\n1600 f close\n";
        // After a time of 0, no delay (fio's rule); an add's delay carries.
        let zero = "fio version 3 iolog\n0 f add\n50 f add\n70 f read 0 4096\n";
        let z = parse_iolog(zero, &Replay::default()).expect("parses");
        assert_eq!(actions(&z), [(20, LogAction::Read, 0, 4096)]);
        let log = parse_iolog(text, &Replay::default()).expect("parses");
        assert_eq!(log.files, ["f"]);
        assert_eq!(
            actions(&log),
            [
                (1362, LogAction::OpenClose, 0, 0),
                (44, LogAction::Read, 4096, 4096),
                (14, LogAction::Write, 0, 8192),
                (60, LogAction::Datasync, 0, 0),
                (100, LogAction::OpenClose, 0, 0),
            ]
        );
        assert_eq!(log.extents(), [8192]);
    }

    #[test]
    fn version_2_and_the_replay_options() {
        let text = "fio version 2 iolog\n/dev/sdb add\n/dev/sdc add\n/dev/sdb open\n\
                    /dev/sdb read 1000000 4096\n/dev/sdc wait 50 0\n/dev/sdc write 8192 512\n";
        let log = parse_iolog(text, &Replay::default()).expect("parses");
        assert_eq!(log.files, ["/dev/sdb", "/dev/sdc"]);
        assert_eq!(log.entries[2].action, LogAction::WaitUntilMs);
        assert_eq!(log.entries[2].offset, 50);
        // Redirected: one file; scaled and aligned offsets.
        let r = Replay {
            redirect: Some("/dev/vdb".into()),
            scale: 2,
            align: 4096,
        };
        let log = parse_iolog(text, &r).expect("parses");
        assert_eq!(log.files, ["/dev/vdb"]);
        assert_eq!(log.entries[1].offset, 499_712);
        assert_eq!(log.entries[3].offset, 4096);
    }

    #[test]
    fn what_fio_would_skip_is_an_error_at_its_line() {
        let bad = [
            ("fio version 1 iolog\n", 1, "not an iolog header"),
            ("", 1, "empty iolog"),
            (
                "fio version 3 iolog\n5 f add\n6 f wait 10 0\n",
                3,
                "not allowed in a version 3",
            ),
            (
                "fio version 2 iolog\nf add\nf remove\n",
                3,
                "unknown action 'remove'",
            ),
            (
                "fio version 2 iolog\nf read 0 4096\n",
                2,
                "used before it is added",
            ),
            (
                "fio version 2 iolog\nf add\nf read 0\n",
                3,
                "needs an offset and a length",
            ),
            (
                "fio version 2 iolog\nf add\nf read x 4096\n",
                3,
                "offset 'x' is not a number",
            ),
            ("fio version 3 iolog\nabc f add\n", 2, "not a timestamp"),
            ("fio version 2 iolog\nf add\nf read 0 0\n", 3, "of 0 bytes"),
            (
                "fio version 2 iolog\nf add\nf read 0 4096\nf read 18446744073709547520 4096\n",
                4,
                "ends past byte 9223372036854775807",
            ),
            (
                "fio version 2 iolog\nf add\nf write 9223372036854775807 1\n",
                3,
                "the largest file offset",
            ),
            ("fio version 2 iolog\nf add\n", 2, "no read, write or wait"),
            (
                "fio version 2 iolog\nf add\nf open\nf trim 0 4096\n",
                4,
                "no read, write or wait",
            ),
            (
                "fio version 2 iolog\nf add\nf sync\n",
                3,
                "needs an offset and a length",
            ),
            (
                "fio version 2 iolog\nf add\nf open 0 0\n",
                3,
                "takes no offset or length",
            ),
        ];
        for (text, line, want) in bad {
            let e = parse_iolog(text, &Replay::default()).expect_err(text);
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(want), "{text:?}: {e}");
        }
    }
}
