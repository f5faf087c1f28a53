//! The kernel's on-demand readahead rules (`mm/readahead.c`:
//! `get_init_ra_size`, `get_next_ra_size`, the PG_readahead marker), as
//! pure functions of a per-open-file state.
//!
//! Windows are in pages. A sequential stream starts with a window sized
//! from the request, grows it ×4 while small and ×2 after, up to the file's
//! `ra_pages`; the next window is issued asynchronously when the reader
//! touches the marker page (the first page of the async part).

/// Readahead state of one open file (`struct file_ra_state`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RaState {
    /// First page of the current window.
    pub start: u32,
    /// Window size in pages (0: no window yet).
    pub size: u32,
    /// Pages at the end of the window read ahead asynchronously.
    pub async_size: u32,
    /// Last page the reader asked for, plus one (0 before the first read).
    pub prev_end: u32,
}

/// A window to read: pages `[start, start + size)`, marker at `mark`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// First page.
    pub start: u32,
    /// Pages.
    pub size: u32,
    /// Page that gets the readahead marker (`None`: no marker).
    pub mark: Option<u32>,
}

/// First window for a request of `req` pages with maximum `max`
/// (`get_init_ra_size`).
pub fn init_size(req: u32, max: u32) -> u32 {
    let size = req.max(1).next_power_of_two();
    let size = if size <= max / 32 {
        size * 4
    } else if size <= max / 4 {
        size * 2
    } else {
        max
    };
    size.min(max).max(1)
}

/// Next window after one of `cur` pages (`get_next_ra_size`).
pub fn next_size(cur: u32, max: u32) -> u32 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
    .min(max)
    .max(1)
}

impl RaState {
    /// A synchronous miss at `index` for `req` pages. Returns the window to
    /// read (it always covers the requested pages).
    pub fn on_miss(&mut self, index: u32, req: u32, max: u32, random: bool) -> Window {
        let sequential = index == 0 || (self.prev_end > 0 && index.abs_diff(self.prev_end) <= 1);
        self.prev_end = index + req;
        if random || !sequential || max == 0 {
            // Read only what was asked for.
            return Window {
                start: index,
                size: req,
                mark: None,
            };
        }
        let size = init_size(req, max).max(req);
        self.start = index;
        self.size = size;
        self.async_size = if size > req { size - req } else { size };
        Window {
            start: index,
            size,
            mark: Some(index + size - self.async_size),
        }
    }

    /// The reader touched a marked page at `index`: the next window, read
    /// asynchronously.
    pub fn on_marker(&mut self, index: u32, req: u32, max: u32) -> Window {
        self.prev_end = index + req;
        let expected = self.start + self.size - self.async_size;
        if self.size == 0 || index != expected {
            // A marker from an older window: restart from here.
            self.start = index;
            self.size = init_size(req, max);
            self.async_size = self.size;
            return Window {
                start: index,
                size: self.size,
                mark: Some(index),
            };
        }
        self.start += self.size;
        self.size = next_size(self.size, max);
        self.async_size = self.size;
        Window {
            start: self.start,
            size: self.size,
            mark: Some(self.start),
        }
    }

    /// A cache hit without marker: only remember the position.
    pub fn on_hit(&mut self, index: u32, req: u32) {
        self.prev_end = index + req;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_sizes_follow_the_kernel_ramp() {
        // Default 128 KiB = 32 pages; FADV_SEQUENTIAL doubles to 64.
        assert_eq!(init_size(1, 32), 4);
        assert_eq!(init_size(1, 64), 4);
        assert_eq!(init_size(4, 32), 8);
        assert_eq!(init_size(16, 32), 32);
        // x4 only while below max/16 (4 pages here), then x2.
        assert_eq!(next_size(2, 64), 8);
        assert_eq!(next_size(4, 64), 8);
        assert_eq!(next_size(16, 64), 32);
        assert_eq!(next_size(32, 64), 64);
        assert_eq!(next_size(64, 64), 64);
    }

    #[test]
    fn a_sequential_4k_reader_ramps_to_the_maximum() {
        let mut ra = RaState::default();
        let w = ra.on_miss(0, 1, 64, false);
        assert_eq!(
            w,
            Window {
                start: 0,
                size: 4,
                mark: Some(1)
            }
        );
        // The window grows 4 -> 8 -> 16 -> 32 -> 64 pages; each new
        // window is read when the reader reaches its first page.
        let mut at = 1;
        let mut start = 4;
        for size in [8, 16, 32, 64, 64] {
            let w = ra.on_marker(at, 1, 64);
            let want = Window {
                start,
                size,
                mark: Some(start),
            };
            assert_eq!(w, want);
            at = start;
            start += size;
        }
    }

    #[test]
    fn random_readers_read_only_the_request() {
        let mut ra = RaState::default();
        assert_eq!(
            ra.on_miss(500, 1, 32, true),
            Window {
                start: 500,
                size: 1,
                mark: None
            }
        );
        // A non-sequential miss without FMODE_RANDOM reads the request too.
        let mut ra = RaState {
            prev_end: 10,
            ..RaState::default()
        };
        assert_eq!(
            ra.on_miss(900, 2, 32, false),
            Window {
                start: 900,
                size: 2,
                mark: None
            }
        );
    }
}
