//! One trace line cut into its columns: task-pid, `[cpu]`, the optional
//! irq-state flags, the timestamp, the event name and its payload.

/// The columns of an event line.
pub(crate) struct Columns<'a> {
    pub task: &'a str,
    pub pid: i64,
    pub cpu: u32,
    pub ts_ns: u64,
    pub event: &'a str,
    pub payload: &'a str,
}

pub(crate) enum Split<'a> {
    /// A comment, header or blank line.
    Header,
    /// A lost-events marker, with the count if it gives one.
    Lost(Option<u64>),
    Event(Columns<'a>),
    Bad(String),
}

pub(crate) fn split(text: &str) -> Split<'_> {
    let t = text.trim_ascii_start();
    match t.as_bytes().first() {
        None | Some(b'#') => return Split::Header,
        // Headers and markers of the tracers: `cpus=2`, `CPU 0 is empty`,
        // `CPU:1 [LOST 3 EVENTS]`, `version = 6`.
        Some(b'c' | b'C' | b'v') => {
            let t = t.trim_ascii_end();
            if is_report_header(t) {
                return Split::Header;
            }
            if let Some(lost) = lost_marker(t) {
                return Split::Lost(lost);
            }
        }
        _ => {}
    }
    let Some((open, close)) = cpu_bracket(text) else {
        return Split::Bad("not a trace line: no [CPU] column".into());
    };
    let Some((task, pid)) = task_pid(&text[..open]) else {
        return Split::Bad("not a trace line: no TASK-PID before the [CPU] column".into());
    };
    let cpu = match super::fields::decimal(&text[open + 1..close]).map(u32::try_from) {
        Some(Ok(c)) => c,
        _ => return Split::Bad("CPU number out of range".into()),
    };
    let rest = text[close + 1..].trim_ascii_start();
    // Optional irq-state flags (`..s1.`), then `SECONDS.FRACTION:`.
    let (first, after) = cut_token(rest);
    let (stamp, after) = if timestamp(first).is_some() {
        (first, after)
    } else {
        cut_token(after)
    };
    let Some(ts_ns) = timestamp(stamp) else {
        return Split::Bad(format!(
            "no timestamp after the [CPU] column (found '{stamp}'): the line is cut short or not a trace line"
        ));
    };
    let after = after.trim_ascii_start();
    let Some((event, payload)) = after.split_once(':') else {
        return Split::Bad("no 'event:' after the timestamp: the line is cut short".into());
    };
    if event.is_empty()
        || !event
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return Split::Bad(format!("'{event}' is not an event name"));
    }
    Split::Event(Columns {
        task,
        pid,
        cpu,
        ts_ns,
        event,
        payload: payload.trim_ascii(),
    })
}

/// Lines `trace-cmd report` prints before the events.
fn is_report_header(t: &str) -> bool {
    t.starts_with("cpus=")
        || t.starts_with("version =")
        || t.starts_with("version=")
        || (t.starts_with("CPU ") && t.ends_with(" is empty"))
        || t.starts_with("CPU0 data recorded at offset=")
}

/// `CPU:1 [LOST 123 EVENTS]` (ftrace) or `... [123 EVENTS DROPPED]`
/// (trace-cmd).
fn lost_marker(t: &str) -> Option<Option<u64>> {
    if let Some(i) = t.find("[LOST ") {
        let n = t[i + 6..]
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok());
        return Some(n);
    }
    if let Some(i) = t.find(" EVENTS DROPPED]") {
        let head = &t[..i];
        let n = head
            .rsplit(|c: char| c == '[' || c.is_whitespace())
            .next()
            .and_then(|n| n.parse().ok());
        return Some(n);
    }
    None
}

/// The first `[digits]` preceded by a space: the CPU column.
fn cpu_bracket(text: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(off) = text[from..].find('[') {
        let open = from + off;
        let mut close = open + 1;
        while close < bytes.len() && bytes[close].is_ascii_digit() {
            close += 1;
        }
        let preceded = open > 0 && bytes[open - 1] == b' ';
        if preceded && close > open + 1 && close < bytes.len() && bytes[close] == b']' {
            return Some((open, close));
        }
        from = open + 1;
    }
    None
}

/// `task-pid`, with an optional `(tgid)` column after it.
fn task_pid(head: &str) -> Option<(&str, i64)> {
    let mut head = head.trim_ascii();
    if head.ends_with(')')
        && let Some(i) = head.rfind('(')
    {
        head = head[..i].trim_end();
    }
    let dash = head.rfind('-')?;
    let pid = head[dash + 1..].parse().ok()?;
    Some((head[..dash].trim_ascii_start(), pid))
}

fn cut_token(s: &str) -> (&str, &str) {
    let s = s.trim_ascii_start();
    match s.bytes().position(|b| b.is_ascii_whitespace()) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    }
}

/// `SECONDS.FRACTION:` in nanoseconds; a bare `INTEGER:` as nanoseconds.
fn timestamp(tok: &str) -> Option<u64> {
    let tok = tok.strip_suffix(':')?;
    let (secs, frac) = match tok.split_once('.') {
        Some((s, f)) => (s, Some(f)),
        None => (tok, None),
    };
    let secs = super::fields::decimal(secs)?;
    match frac {
        None => Some(secs),
        Some(f) => {
            if f.len() > 9 {
                return None;
            }
            let scale = 10u64.pow(9 - f.len() as u32);
            let frac = super::fields::decimal(f)?;
            secs.checked_mul(1_000_000_000)?.checked_add(frac * scale)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_scale_their_fraction_to_nanoseconds() {
        assert_eq!(timestamp("308.600615:"), Some(308_600_615_000));
        assert_eq!(timestamp("1.5:"), Some(1_500_000_000));
        assert_eq!(timestamp("2.000000001:"), Some(2_000_000_001));
        assert_eq!(timestamp("42:"), Some(42));
        assert_eq!(timestamp("308.600615"), None, "needs its colon");
        assert_eq!(timestamp("3.0000000001:"), None, "ten decimals");
        assert_eq!(timestamp("..s1.:"), None);
        assert_eq!(timestamp("99999999999999999999.1:"), None, "overflow");
    }

    #[test]
    fn a_task_name_may_hold_spaces_dashes_and_a_tgid_column() {
        assert_eq!(
            task_pid("   kworker/u8:2-35   "),
            Some(("kworker/u8:2", 35))
        );
        assert_eq!(task_pid("Web Content-1234"), Some(("Web Content", 1234)));
        assert_eq!(task_pid("a-b-c-7 (   7)"), Some(("a-b-c", 7)));
        assert_eq!(task_pid("no pid here"), None);
    }
}
