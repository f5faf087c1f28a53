//! The liveness and replace-source filter after every policy (kernel: the
//! two-pass loop at the end of `find_live_mirror`).

use super::ReadRequest;

/// Keeps `preferred` if its device is present and is not the replace
/// source to avoid; else the lowest present, non-source index in range.
/// A second pass allows the source. With nothing present, `preferred` is
/// returned and the I/O error path deals with it.
pub fn live_mirror(req: &ReadRequest<'_>, preferred: usize) -> usize {
    debug_assert!(req.range().contains(&preferred));
    let m = req.mirrors();
    for allow_source in [false, true] {
        let ok =
            |i: usize| m[i].present && (allow_source || req.replace_source != Some(m[i].devid));
        if ok(preferred) {
            return preferred;
        }
        if let Some(i) = req.range().find(|&i| ok(i)) {
            return i;
        }
    }
    preferred
}
