//! "Did you mean" suggestions for unknown option names.
//!
//! Same rule as fio: the closest known name by Levenshtein distance, shown
//! only when the distance is at most `(len + 1) / 2` of the unknown name's
//! length. Ties go to the name that sorts first.

use super::table;

/// Levenshtein edit distance (insert, delete, substitute; each costs 1),
/// over bytes.
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, &ca) in a.as_bytes().iter().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// True when `dist` is small enough to be worth suggesting for `name`.
pub(crate) fn distance_ok(name: &str, dist: usize) -> bool {
    dist <= name.len().div_ceil(2)
}

/// The closest known option name, if it is close enough.
pub(crate) fn suggest(name: &str) -> Option<&'static str> {
    closest(name, table::names())
}

/// The candidate closest to `name` by edit distance, if close enough by
/// fio's rule; ties go to the earliest candidate.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if name.is_empty() {
        return None;
    }
    let mut best: Option<(usize, &'a str)> = None;
    for cand in candidates {
        let d = distance(name, cand);
        if best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, cand));
        }
    }
    best.filter(|&(d, _)| distance_ok(name, d)).map(|(_, c)| c)
}
