//! Block layer mechanics: rq-qos admission, tags, the pass-through dispatch
//! list, cache-flush sequencing and completion.

use super::{Actor, Ev, FLUSH_OWNER, Parked, Sched, WaitNode, World};
use crate::block::flush::{self, Next};
use crate::block::request::{Bio, NIL, Op, Payload, Request};
use crate::block::{Admit, Policy, QosBio, QosRq, Waiter};
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

fn qos_rq(r: &Request) -> QosRq {
    QosRq {
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
        };
        // The slot the bio would park in names it to the policy; it is
        // only taken if the bio really has to wait.
        let token = self.parked.next_index();
        match self.policy.throttle(now, &qb, Waiter(token)) {
            Admit::Go => {
                let dev = bio.dev as usize;
                if let Some(tag) = self.devs[dev].free_tags.pop() {
                    self.start_request(now, p, tag, false);
                    true
                } else {
                    self.note_parked(&p.bio);
                    let pid = self.parked.alloc(p);
                    self.devs[dev].tag_wait.push_back(pid);
                    false
                }
            }
            Admit::Wait => {
                self.note_parked(&p.bio);
                let pid = self.parked.alloc(p);
                debug_assert_eq!(pid, token);
                self.arm_policy_timer();
                false
            }
        }
    }

    /// A writeback bio waits without a request: fsync must know about it.
    fn note_parked(&mut self, bio: &Bio) {
        if let Payload::CacheWrite { file, .. } = bio.payload {
            self.files[file as usize].parked_writes += 1;
        }
    }

    /// A parked writeback bio of `file` became request `rq`: contexts in
    /// fsync that counted it as a placeholder now wait for the request.
    fn wake_parked_write_waiters(&mut self, file: u32, rq: u32) {
        let f = file as usize;
        self.files[f].parked_writes -= 1;
        let mut i = 0;
        while i < self.files[f].sync_waiters.len() {
            let c = self.files[f].sync_waiters[i];
            self.add_waiter(rq, c);
            let ctx = &mut self.ctxs[c as usize];
            debug_assert!(ctx.sync_parked_left > 0 && ctx.pending > 1);
            ctx.pending -= 1;
            ctx.sync_parked_left -= 1;
            if ctx.sync_parked_left == 0 {
                self.files[f].sync_waiters.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Takes parked bio `pid` out of the slab.
    fn take_parked(&mut self, pid: u32) -> Parked {
        let p = self.parked[pid];
        self.parked.free(pid);
        p
    }

    /// Gives parked bio `pid` a tag, or queues it for one.
    fn get_tag(&mut self, now: Ns, pid: u32) -> bool {
        let dev = self.parked[pid].bio.dev as usize;
        match self.devs[dev].free_tags.pop() {
            Some(tag) => {
                let p = self.take_parked(pid);
                self.start_request(now, p, tag, true);
                true
            }
            None => {
                self.devs[dev].tag_wait.push_back(pid);
                false
            }
        }
    }

    /// Policy wake-ups: each woken bio tries for a tag; if it gets one its
    /// actor resumes.
    pub(crate) fn drain_policy_wakes(&mut self, now: Ns) {
        while let Some(Waiter(pid)) = self.policy.poll_wake() {
            let actor = self.parked[pid].actor;
            if self.get_tag(now, pid) {
                self.resume_actor(now, actor);
            }
        }
        self.arm_policy_timer();
    }

    /// Turns bio `p` into a request holding `tag`; `was_parked` when it
    /// had to wait for the policy or a tag.
    fn start_request(&mut self, now: Ns, p: Parked, tag: u32, was_parked: bool) {
        let qb = qos_bio(&p.bio);
        let policy_data = self.policy.track(now, &qb);
        let dev = p.bio.dev as usize;
        let rq = self.rqs.alloc(Request {
            bio: p.bio,
            submit_ns: p.submit_ns,
            alloc_ns: now,
            issue_ns: 0,
            policy_data,
            fseq: 0,
            waiters: NIL,
            file_next: NIL,
            file_prev: NIL,
            tag,
        });
        self.devs[dev].owner[tag as usize] = rq;
        match p.bio.payload {
            Payload::CacheRead { file, .. } => self.files[file as usize].reads.push(rq),
            Payload::CacheWrite { file, .. } => {
                self.link_write(file, rq);
                if was_parked {
                    self.wake_parked_write_waiters(file, rq);
                }
            }
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
                self.devs[dev].dispatch.push_back(tag);
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
        let tag = self.rqs[rq].tag;
        let dev = self.rqs[rq].bio.dev;
        let remaining = self.rqs[rq].fseq;
        match self.devs[dev as usize].flushq.advance(now, tag, remaining) {
            Next::AwaitFlush => self.flush_kick(now, dev),
            Next::Data => {
                self.devs[dev as usize].dispatch.push_back(tag);
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
                // The FLUSH borrows the tag of the first request it covers.
                let tag = d.flushq.running()[0];
                d.flush_tag = tag;
                d.flush_rq = d.owner[tag as usize];
                d.owner[tag as usize] = FLUSH_OWNER;
                d.dispatch.push_front(tag);
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

    /// Dispatches from the head of the list while the device accepts.
    pub(crate) fn run_queue(&mut self, now: Ns, dev: u16) {
        let d = &mut self.devs[dev as usize];
        while let Some(&tag) = d.dispatch.front() {
            let owner = d.owner[tag as usize];
            let cmd = if owner == FLUSH_OWNER {
                DevCmd {
                    tag,
                    op: DevOp::Flush,
                    offset: 0,
                    len: 0,
                    fua: false,
                }
            } else {
                let r = &self.rqs[owner];
                let op = match r.bio.op {
                    Op::Read => DevOp::Read,
                    Op::Write => DevOp::Write,
                    Op::Discard => DevOp::Discard,
                };
                DevCmd {
                    tag,
                    op,
                    offset: r.bio.offset,
                    len: r.bio.len,
                    fua: flush::device_fua(r.bio.flags, d.dev.write_cache(), d.dev.fua()),
                }
            };
            if !d.dev.can_accept(cmd.op) {
                break;
            }
            d.dispatch.pop_front();
            if owner == FLUSH_OWNER {
                d.counters.flush_ns = d.counters.flush_ns.wrapping_sub(now);
            } else {
                let r = &mut self.rqs[owner];
                r.issue_ns = now;
                let qr = qos_rq(r);
                self.policy.issue(now, &qr);
            }
            let mut s = Sched {
                q: &mut self.q,
                dev,
            };
            d.dev.submit(now, cmd, &mut s);
        }
    }

    /// A device command completed.
    pub(crate) fn on_device_done(&mut self, now: Ns, dev: u16, tag: u32) {
        let d = &mut self.devs[dev as usize];
        d.dev.retire(now, tag);
        let owner = d.owner[tag as usize];
        if owner == FLUSH_OWNER {
            d.counters.flushes += 1;
            d.counters.flush_ns = d.counters.flush_ns.wrapping_add(now);
            let first = d.flush_tag;
            // Give the borrowed tag back to its request.
            d.owner[first as usize] = d.flush_rq;
            let mut covered = std::mem::take(&mut self.scratch);
            d.flushq.flush_done(&mut covered);
            debug_assert_eq!(covered.first(), Some(&first));
            for &t in &covered {
                let rq = self.devs[dev as usize].owner[t as usize];
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
                }
                Op::Write => {
                    c.writes += 1;
                    c.write_bytes += r.bio.len;
                }
                Op::Discard => c.discards += 1,
            }
            let qr = qos_rq(r);
            self.policy.done(now, &qr);
            if self.rqs[rq].fseq & flush::DATA != 0 {
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
        self.on_payload_done(now, rq, &r);
        // Free the tag: the first bio waiting for one takes it.
        let dev = r.bio.dev as usize;
        self.devs[dev].owner[r.tag as usize] = u32::MAX;
        let mut head = r.waiters;
        self.rqs.free(rq);
        if let Some(pid) = self.devs[dev].tag_wait.pop_front() {
            let p = self.take_parked(pid);
            let actor = p.actor;
            self.start_request(now, p, r.tag, true);
            self.resume_actor(now, actor);
        } else {
            self.devs[dev].free_tags.push(r.tag);
        }
        while head != NIL {
            let node = self.waits[head];
            self.waits.free(head);
            head = node.next;
            let c = &mut self.ctxs[node.ctx as usize];
            debug_assert!(c.pending > 0);
            c.pending -= 1;
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
                    if b.reading.clear(p) {
                        self.cache.insert(file, p);
                    }
                }
            }
            Payload::CacheWrite { file, first, count } => {
                self.unlink_write(file, rq);
                self.cache.end_writeback(file, first, count);
                self.bdp.completed_pages += u64::from(count);
                if self.flusher.wait_writeback {
                    self.flusher.wait_writeback = false;
                    self.flusher_wake(now);
                }
                self.on_data_written(now, file, first, count);
            }
            Payload::Direct { file, first, count } => {
                if r.bio.op == Op::Write {
                    self.unlink_write(file, rq);
                    self.on_data_written(now, file, first, count);
                }
            }
            Payload::Log { seq } => self.on_log_write_done(now, seq),
            Payload::Meta => self.on_ail_write_done(now),
            Payload::Flush => {}
        }
    }
}
