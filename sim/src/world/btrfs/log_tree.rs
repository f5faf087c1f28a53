//! btrfs's fsync after the data (`btrfs_sync_file` → `btrfs_sync_log`):
//! the log-tree blocks to every copy of a metadata chunk, then, under
//! `tree_log_mutex` (`commit`), the superblocks.

use std::collections::VecDeque;

use super::super::World;
use super::commit::superblock;
use crate::block::Policy;
use crate::block::request::{Bio, Flags, Op, Origin, Payload};
use crate::fs::btrfs::volume::LOG_BLOCKS_PER_FSYNC;

impl<P: Policy> World<P> {
    /// btrfs's fsync of `file` on a volume (`btrfs_sync_file`), covering its
    /// writes up to `seen` (its `write_seq` when the fsync began), after
    /// the file's data: the log-tree blocks to every copy of the metadata
    /// chunk (into `bios`), then, once they are down, `write_all_supers`:
    /// a FLUSH and a FUA superblock write on every device (into `supers`,
    /// one PREFLUSH + FUA bio each; the flush sequencer splits it). Nothing
    /// is written when no `write()` changed the file since its last log
    /// (`skip_inode_logging`).
    pub(crate) fn volume_log_sync(
        &mut self,
        file: u32,
        seen: u64,
        origin: Origin,
        cgroup: u16,
        bios: &mut VecDeque<(Bio, bool)>,
        supers: &mut VecDeque<(Bio, bool)>,
    ) {
        let f = &mut self.files[file as usize];
        if seen <= f.logged_write_seq {
            return;
        }
        f.logged_write_seq = seen;
        let Some(raid) = self.raid.as_mut() else {
            return;
        };
        raid.log_syncs += 1;
        for (dev, offset, len) in raid.log_blocks(LOG_BLOCKS_PER_FSYNC) {
            bios.push_back((
                Bio {
                    op: Op::Write,
                    flags: Flags::SYNC.with(Flags::META),
                    dev,
                    offset,
                    len,
                    origin,
                    cgroup,
                    payload: Payload::LogSync,
                },
                true,
            ));
        }
        for dev in 0..raid.member_count() as u16 {
            supers.push_back((superblock(dev, origin, cgroup, Payload::LogSync), true));
        }
    }

    /// Context `c` submits `bio`, a log block or a superblock of a volume
    /// fsync: count the log blocks in flight, and any superblock that goes
    /// out before them (the order `write_all_supers` must keep).
    pub(crate) fn note_log_sync_submit(&mut self, c: u32, bio: &Bio) {
        let ctx = &mut self.ctxs[c as usize];
        if bio.flags.contains(Flags::FUA) {
            if ctx.log_in_flight > 0
                && let Some(raid) = self.raid.as_mut()
            {
                raid.supers_before_log += 1;
            }
        } else {
            ctx.log_in_flight += 1;
        }
    }
}
