//! Block layer mechanics: rq-qos admission, tags, the pass-through dispatch
//! list, cache-flush sequencing and completion.

use super::{Actor, Ev, FLUSH_ITEM, FLUSH_OWNER, NO_TAG, Parked, Sched, WaitNode, World};
use crate::block::deadline::DDir;
use crate::block::flush::{self, Next};
use crate::block::request::{Bio, Flags, NIL, Op, Payload, Request};
use crate::block::{Admit, Policy, QosBio, QosRq, Waiter};
use crate::cache::PageState;
use crate::device::{DevCmd, DevOp};
use crate::time::Ns;

fn qos_bio(b: &Bio) -> QosBio {
    QosBio {
        op: b.op,
        flags: b.flags,
        len: b.len,
        offset: b.offset,
        origin: b.origin,
        cgroup: b.cgroup,
    }
}

fn qos_rq(id: u32, r: &Request) -> QosRq {
    QosRq {
        id,
        bio: qos_bio(&r.bio),
        policy_data: r.policy_data,
        alloc_ns: r.alloc_ns,
        issue_ns: r.issue_ns,
    }
}

impl<P: Policy> World<P> {
    /// Submits a bio for `actor`. Returns false when it was parked (by the
    /// policy or for want of a tag): the actor must stop and will be
    /// resumed once the bio has its request. With `wait`, the actor (a
    /// context) also waits for the request to complete.
    pub(crate) fn submit(&mut self, now: Ns, actor: Actor, bio: Bio, wait: bool) -> bool {
        let qb = qos_bio(&bio);
        let p = Parked {
            bio,
            actor,
            wait,
            submit_ns: now,
            waiters: NIL,
            file_next: NIL,
            file_prev: NIL,
        };
        // The slot the bio would park in names it to the policy; it is
        // only taken if the bio really has to wait.
        let token = self.parked.next_index();
        match self.policy.throttle(now, &qb, Waiter(token)) {
            Admit::Go => {
                if self.alloc_slot(now, actor, &bio) {
                    self.start_request(now, p);
                    true
                } else {
                    let pid = self.park(p);
                    let d = &mut self.devs[bio.dev as usize];
                    let pool = d.pools.pool_of(bio.op, bio.flags);
                    d.pool_wait[pool].push_back(pid);
                    false
                }
            }
            Admit::Wait => {
                let pid = self.park(p);
                debug_assert_eq!(pid, token);
                self.arm_policy_timer();
                false
            }
        }
    }

    /// Parks bio `p`. A writeback bio joins its file's list of parked
    /// writes, so that fsync can wait for it before it is a request.
    fn park(&mut self, p: Parked) -> u32 {
        let pid = self.parked.alloc(p);
        match p.actor {
            Actor::Flusher => self.flusher.parked += 1,
            Actor::Ctx(c) => self.ctxs[c as usize].parked += 1,
            Actor::Journal => {}
        }
        if let Payload::CacheWrite { file, .. } = p.bio.payload {
            let head = self.files[file as usize].parked_head;
            self.parked[pid].file_next = head;
            self.parked[pid].file_prev = NIL;
            if head != NIL {
                self.parked[head].file_prev = pid;
            }
            self.files[file as usize].parked_head = pid;
        }
        pid
    }

    /// Takes parked bio `pid` out of the slab (and out of its file's list);
    /// its waiters go with it.
    fn take_parked(&mut self, pid: u32) -> Parked {
        let p = self.parked[pid];
        match p.actor {
            Actor::Flusher => self.flusher.parked -= 1,
            Actor::Ctx(c) => self.ctxs[c as usize].parked -= 1,
            Actor::Journal => {}
        }
        if let Payload::CacheWrite { file, .. } = p.bio.payload {
            if p.file_prev == NIL {
                self.files[file as usize].parked_head = p.file_next;
            } else {
                self.parked[p.file_prev].file_next = p.file_next;
            }
            if p.file_next != NIL {
                self.parked[p.file_next].file_prev = p.file_prev;
            }
        }
        self.parked.free(pid);
        p
    }

    /// Context `ctx` waits for parked bio `pid` (and, once it has one, for
    /// its request).
    pub(crate) fn add_parked_waiter(&mut self, pid: u32, ctx: u32) {
        let head = self.parked[pid].waiters;
        let node = self.waits.alloc(WaitNode { ctx, next: head });
        self.parked[pid].waiters = node;
        self.ctxs[ctx as usize].pending += 1;
    }

    /// Takes a request slot for `actor`'s bio if its pool allows.
    fn alloc_slot(&mut self, now: Ns, actor: Actor, bio: &Bio) -> bool {
        if let Some(ok) = self.devs[bio.dev as usize].pools.try_alloc_unbatched() {
            return ok;
        }
        let mut batch = *self.batch_mut(actor);
        let d = &mut self.devs[bio.dev as usize];
        let pool = d.pools.pool_of(bio.op, bio.flags);
        let ok = d.pools.try_alloc(now, pool, &mut batch);
        *self.batch_mut(actor) = batch;
        ok
    }

    /// Gives parked bio `pid` a request slot, or queues it for one: at the
    /// head of its pool's queue if it was already first in line.
    fn get_slot(&mut self, now: Ns, pid: u32, was_first: bool) -> bool {
        let (actor, bio) = (self.parked[pid].actor, self.parked[pid].bio);
        if self.alloc_slot(now, actor, &bio) {
            let p = self.take_parked(pid);
            self.start_request(now, p);
            true
        } else {
            let d = &mut self.devs[bio.dev as usize];
            let pool = d.pools.pool_of(bio.op, bio.flags);
            if was_first {
                d.pool_wait[pool].push_front(pid);
            } else {
                d.pool_wait[pool].push_back(pid);
            }
            false
        }
    }

    /// Policy wake-ups: each woken bio tries for a tag; if it gets one its
    /// actor resumes.
    pub(crate) fn drain_policy_wakes(&mut self, now: Ns) {
        while let Some(Waiter(pid)) = self.policy.poll_wake() {
            let actor = self.parked[pid].actor;
            if self.get_slot(now, pid, false) {
                self.resume_actor(now, actor);
            }
        }
        self.arm_policy_timer();
    }

    /// Turns bio `p` into a request (its slot is taken). Without an IO
    /// scheduler the request holds a driver tag from now on, as blk-mq's
    /// does.
    fn start_request(&mut self, now: Ns, p: Parked) {
        let qb = qos_bio(&p.bio);
        let policy_data = self.policy.track(now, &qb);
        let dev = p.bio.dev as usize;
        let tag = if self.devs[dev].tag_at_alloc {
            self.devs[dev].free_tags.pop().unwrap_or(NO_TAG)
        } else {
            NO_TAG
        };
        let rq = self.rqs.alloc(Request {
            bio: p.bio,
            submit_ns: p.submit_ns,
            alloc_ns: now,
            issue_ns: 0,
            policy_data,
            fseq: 0,
            // Whoever waited for the parked bio now waits for the request.
            waiters: p.waiters,
            file_next: NIL,
            file_prev: NIL,
            tag,
        });
        if tag != NO_TAG {
            self.devs[dev].owner[tag as usize] = rq;
        }
        let part = &mut self.devs[dev].part;
        part.inflight += 1;
        part.last_offset = p.bio.offset + p.bio.len;
        match p.bio.payload {
            Payload::CacheRead { file, .. } => self.files[file as usize].reads.push(rq),
            Payload::CacheWrite { file, .. } => self.link_write(file, rq),
            Payload::Direct { file, .. } if p.bio.op == Op::Write => self.link_write(file, rq),
            _ => {}
        }
        if p.wait
            && let Actor::Ctx(c) = p.actor
        {
            self.add_waiter(rq, c);
        }
        let d = &self.devs[dev].dev;
        let has_data = p.bio.len > 0;
        let steps = flush::steps(p.bio.flags, has_data, d.write_cache(), d.fua());
        if steps == 0 {
            if has_data {
                let d = &mut self.devs[dev];
                match d.sched.as_mut() {
                    Some(s) => {
                        let dir = if p.bio.op == Op::Read {
                            DDir::Read
                        } else {
                            DDir::Write
                        };
                        s.insert(now, rq, dir, p.bio.offset);
                    }
                    None => d.dispatch.push_back(rq),
                }
                self.run_queue(now, dev as u16);
            } else {
                // A flush on a device without a volatile cache.
                self.q.push(now, Ev::RqDone { rq });
            }
        } else {
            self.rqs[rq].fseq = steps;
            self.flush_advance(now, rq);
        }
    }

    fn link_write(&mut self, file: u32, rq: u32) {
        let head = self.files[file as usize].writes_head;
        self.rqs[rq].file_next = head;
        self.rqs[rq].file_prev = NIL;
        if head != NIL {
            self.rqs[head].file_prev = rq;
        }
        self.files[file as usize].writes_head = rq;
    }

    fn unlink_write(&mut self, file: u32, rq: u32) {
        let (prev, next) = (self.rqs[rq].file_prev, self.rqs[rq].file_next);
        if prev == NIL {
            self.files[file as usize].writes_head = next;
        } else {
            self.rqs[prev].file_next = next;
        }
        if next != NIL {
            self.rqs[next].file_prev = prev;
        }
    }

    /// Context `ctx` waits for request `rq`.
    pub(crate) fn add_waiter(&mut self, rq: u32, ctx: u32) {
        let head = self.rqs[rq].waiters;
        let node = self.waits.alloc(WaitNode { ctx, next: head });
        self.rqs[rq].waiters = node;
        self.ctxs[ctx as usize].pending += 1;
    }

    /// Moves a flush-sequenced request to its next step.
    fn flush_advance(&mut self, now: Ns, rq: u32) {
        let dev = self.rqs[rq].bio.dev;
        let remaining = self.rqs[rq].fseq;
        match self.devs[dev as usize].flushq.advance(now, rq, remaining) {
            Next::AwaitFlush => self.flush_kick(now, dev),
            Next::Data => {
                // Flush-sequenced data bypasses the IO scheduler.
                self.devs[dev as usize].dispatch.push_back(rq);
                self.run_queue(now, dev);
            }
            Next::Complete => self.complete_request(now, rq),
        }
    }

    /// Issues a FLUSH if the sequencer wants one.
    pub(crate) fn flush_kick(&mut self, now: Ns, dev: u16) {
        let d = &mut self.devs[dev as usize];
        match d.flushq.kick(now) {
            Ok(true) => {
                // The FLUSH goes first; it gets its tag at dispatch.
                d.dispatch.push_front(FLUSH_ITEM);
                self.run_queue(now, dev);
            }
            Ok(false) => {}
            Err(deadline) => {
                if d.flush_kick_at.is_none_or(|t| t > deadline) {
                    d.flush_kick_at = Some(deadline);
                    self.q.push(deadline, Ev::FlushKick { dev });
                }
            }
        }
    }

    /// Dispatches while the device accepts: first the dispatch list
    /// (FLUSH commands and flush-sequenced data), then the IO scheduler's
    /// choice. A request without a driver tag takes one here.
    pub(crate) fn run_queue(&mut self, now: Ns, dev: u16) {
        loop {
            let d = &mut self.devs[dev as usize];
            let item = match d.dispatch.front() {
                Some(&x) => x,
                None => {
                    let Some(s) = d.sched.as_mut() else {
                        break;
                    };
                    if s.is_empty() || d.free_tags.is_empty() || !d.dev.can_accept(DevOp::Read) {
                        break;
                    }
                    let rqs = &self.rqs;
                    match s.dispatch(now, |id| rqs[id].bio.len) {
                        Some(rq) => rq,
                        None => break,
                    }
                }
            };
            let from_list = d.dispatch.front() == Some(&item);
            let cmd = if item == FLUSH_ITEM {
                if !d.dev.can_accept(DevOp::Flush) {
                    break;
                }
                // The FLUSH borrows the tag of a request it covers when one
                // holds a tag (blk-mq's flush_rq does), else takes a free one.
                let lender = d
                    .flushq
                    .running()
                    .iter()
                    .copied()
                    .find(|&r| self.rqs[r].tag != NO_TAG);
                let tag = match lender {
                    Some(r) => self.rqs[r].tag,
                    None => match d.free_tags.pop() {
                        Some(t) => t,
                        None => break,
                    },
                };
                d.flush_tag = tag;
                d.flush_lender = lender.unwrap_or(NO_TAG);
                d.owner[tag as usize] = FLUSH_OWNER;
                d.counters.flush_ns = d.counters.flush_ns.wrapping_sub(now);
                d.issue.flush_issued(now);
                DevCmd {
                    tag,
                    op: DevOp::Flush,
                    offset: 0,
                    len: 0,
                    fua: false,
                }
            } else {
                let rq = item;
                let r = &self.rqs[rq];
                let op = match r.bio.op {
                    Op::Read => DevOp::Read,
                    Op::Write => DevOp::Write,
                    Op::Discard => DevOp::Discard,
                };
                if !d.dev.can_accept(op) {
                    if !from_list {
                        // Taken from the scheduler: keep it first in line.
                        d.dispatch.push_front(rq);
                    }
                    break;
                }
                let tag = if r.tag != NO_TAG {
                    r.tag
                } else {
                    match d.free_tags.pop() {
                        Some(t) => t,
                        None => {
                            if !from_list {
                                d.dispatch.push_front(rq);
                            }
                            break;
                        }
                    }
                };
                d.owner[tag as usize] = rq;
                match op {
                    DevOp::Read => d.issue.read_issued(),
                    DevOp::Write => d.issue.write_issued(now),
                    _ => {}
                }
                let r = &mut self.rqs[rq];
                r.tag = tag;
                r.issue_ns = now;
                let qr = qos_rq(rq, r);
                self.policy.issue(now, &qr);
                DevCmd {
                    tag,
                    op,
                    offset: r.bio.offset,
                    len: r.bio.len,
                    fua: flush::device_fua(r.bio.flags, d.dev.write_cache(), d.dev.fua()),
                }
            };
            if from_list {
                d.dispatch.pop_front();
            }
            let mut s = Sched {
                q: &mut self.q,
                dev,
            };
            d.issue.command_started(now);
            d.dev.submit(now, cmd, &mut s);
        }
    }

    /// A device command completed.
    pub(crate) fn on_device_done(&mut self, now: Ns, dev: u16, tag: u32) {
        let d = &mut self.devs[dev as usize];
        d.dev.retire(now, tag);
        d.issue.command_ended(now);
        let owner = d.owner[tag as usize];
        if owner == FLUSH_OWNER {
            d.counters.flushes += 1;
            d.counters.flush_ns = d.counters.flush_ns.wrapping_add(now);
            d.issue.flush_done(now);
            // Give the tag back: to the request that lent it, or to the pool.
            let tag = d.flush_tag;
            if d.flush_lender != NO_TAG {
                d.owner[tag as usize] = d.flush_lender;
            } else {
                d.owner[tag as usize] = u32::MAX;
                d.free_tags.push(tag);
            }
            let mut covered = std::mem::take(&mut self.scratch);
            d.flushq.flush_done(&mut covered);
            for &rq in &covered {
                let rem = flush::after_flush(self.rqs[rq].fseq);
                self.rqs[rq].fseq = rem;
                self.flush_advance(now, rq);
            }
            covered.clear();
            self.scratch = covered;
            self.flush_kick(now, dev);
        } else {
            let rq = owner;
            let r = &self.rqs[rq];
            let c = &mut d.counters;
            match r.bio.op {
                Op::Read => {
                    c.reads += 1;
                    c.read_bytes += r.bio.len;
                    d.issue.read_done(now - r.issue_ns);
                }
                Op::Write => {
                    c.writes += 1;
                    c.write_bytes += r.bio.len;
                    d.issue.write_done(now, now - r.issue_ns);
                }
                Op::Discard => c.discards += 1,
            }
            if self.rqs[rq].fseq & flush::DATA != 0 {
                // With an IO scheduler the driver tag goes back as soon as
                // the data is done (blk-mq's flush data end_io), so requests
                // waiting for their post-flush never hold every tag.
                let d = &mut self.devs[dev as usize];
                if !d.tag_at_alloc {
                    d.owner[tag as usize] = u32::MAX;
                    d.free_tags.push(tag);
                    self.rqs[rq].tag = NO_TAG;
                }
                let rem = self.devs[dev as usize].flushq.data_done(self.rqs[rq].fseq);
                self.rqs[rq].fseq = rem;
                self.flush_advance(now, rq);
                self.flush_kick(now, dev);
            } else {
                self.complete_request(now, rq);
            }
        }
        self.run_queue(now, dev);
        self.drain_policy_wakes(now);
    }

    /// A request is done: page-cache and journal effects, waiters, tag.
    pub(crate) fn complete_request(&mut self, now: Ns, rq: u32) {
        let r = self.rqs[rq];
        // Every request ends here exactly once, whatever its path (device
        // completion, the end of a flush sequence, a flush with nothing to
        // do): the policy's `done` hook, like the kernel's rq_qos_done.
        let qr = qos_rq(rq, &r);
        self.policy.done(now, &qr);
        self.on_payload_done(now, rq, &r);
        // Free the tag and the slot: the first bio waiting for a slot
        // takes it.
        let dev = r.bio.dev as usize;
        let part = &mut self.devs[dev].part;
        debug_assert!(part.inflight > 0);
        part.inflight -= 1;
        if r.bio.op == Op::Read {
            part.read_ios += 1;
            part.read_wait_ns += now - r.alloc_ns;
        }
        if r.tag != NO_TAG {
            self.devs[dev].owner[r.tag as usize] = u32::MAX;
            self.devs[dev].free_tags.push(r.tag);
        }
        let mut head = r.waiters;
        self.rqs.free(rq);
        let pool = self.devs[dev].pools.pool_of(r.bio.op, r.bio.flags);
        if self.devs[dev].pools.free(pool)
            && let Some(pid) = self.devs[dev].pool_wait[pool].pop_front()
        {
            // One sleeper wakes; having slept, it becomes a batcher.
            let actor = self.parked[pid].actor;
            self.batch_mut(actor).set(now);
            if self.get_slot(now, pid, true) {
                self.resume_actor(now, actor);
            }
        }
        if !self.devs[dev].tag_at_alloc {
            self.run_queue(now, dev as u16);
        }
        while head != NIL {
            let node = self.waits[head];
            self.waits.free(head);
            head = node.next;
            let c = &mut self.ctxs[node.ctx as usize];
            debug_assert!(c.pending > 0);
            c.pending -= 1;
            if r.bio.payload == Payload::LogSync && !r.bio.flags.contains(Flags::FUA) {
                c.log_in_flight -= 1;
            }
            if c.pending == 0 {
                self.ctx_io_done(now, node.ctx);
            }
        }
    }

    fn on_payload_done(&mut self, now: Ns, rq: u32, r: &Request) {
        match r.bio.payload {
            Payload::CacheRead { file, first, count } => {
                let reads = &mut self.files[file as usize].reads;
                if let Some(i) = reads.iter().position(|&x| x == rq) {
                    reads.swap_remove(i);
                }
                for p in first..first + count {
                    let b = self.cache.bits(file);
                    if b.clear(PageState::Reading, p) {
                        self.cache.insert(file, p);
                    }
                }
            }
            Payload::CacheWrite {
                file,
                first,
                count,
                group,
            } => {
                self.unlink_write(file, rq);
                if group != NIL {
                    // The pages stay under writeback until their last copy
                    // is written.
                    let left = &mut self.copy_groups[group];
                    *left -= 1;
                    if *left > 0 {
                        return;
                    }
                    self.copy_groups.free(group);
                }
                self.cache.end_writeback(file, first, count);
                self.bdp.wb.written += u64::from(count);
                if self.flusher.wait_writeback {
                    self.flusher.wait_writeback = false;
                    self.flusher_wake(now);
                }
                self.on_data_written(now, file, first, count);
                self.btrfs_on_written(now, file, first, count);
            }
            Payload::Direct { file, first, count } => {
                if r.bio.op == Op::Write {
                    self.unlink_write(file, rq);
                    self.on_data_written(now, file, first, count);
                }
            }
            Payload::Log { seq } => self.on_log_write_done(now, seq),
            Payload::Meta => self.on_ail_write_done(now),
            Payload::TreeBlock => self.on_tree_block_written(now),
            Payload::CommitSuper => self.on_commit_super_written(now),
            Payload::Flush | Payload::LogSync => {}
        }
    }
}
