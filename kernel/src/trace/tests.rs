//! The reader on lines in the layouts the kernel's tracers print: the
//! header and columns of `cat trace` / `trace_pipe`, the columns of
//! `trace-cmd report`, and each typed event's payload in its print format.

use super::*;

fn records(text: &str, dev: Option<Dev>) -> Vec<Record<'_>> {
    Reader::new(text, dev)
        .map(|i| match i.expect("reads") {
            Item::Record(r) => r,
            Item::Lost { .. } => panic!("no lost marker here"),
        })
        .collect()
}

fn one(line: &str) -> Event<'_> {
    let mut r = records(line, None);
    assert_eq!(r.len(), 1, "{line}");
    r.remove(0).event
}

fn error(text: &str) -> TraceError {
    Reader::new(text, None)
        .find_map(|i| i.err())
        .expect("an error")
}

const DEV7: Dev = Dev { major: 7, minor: 0 };

/// What `echo 1 > events/wbt/enable; cat trace` prints: a header, then
/// events of every device with wbt.
const CAT_TRACE: &str = "\
# tracer: nop
#
# entries-in-buffer/entries-written: 5/5   #P:2
#
#                                _-----=> irqs-off/BH-disabled
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
          <idle>-0       [001] ..s1.   330.300573: wbt_lat: 7:0: latency 199us
          <idle>-0       [001] .Ns1.   330.300590: wbt_timer: 7:0: status=4, step=-3, inflight=0
          <idle>-0       [001] .Ns1.   330.300592: wbt_step: 7:0: scale down: step=0, window=100000us, background=4, normal=8, max=16
             fio-2349    [000] ..s..   164.256743: wbt_stat: 254:0: rmean=377502, rmin=52960, rmax=3228013, rsamples=70, wmean=2490650, wmin=665248, wmax=5280622, wsamples=960
    kworker/u8:2-35      [000] .Ns..   343.476568: wbt_timer: 254:0: status=1, step=-2, inflight=3
";

#[test]
fn a_cat_trace_capture_of_the_wbt_events_reads_whole() {
    let mut reader = Reader::new(CAT_TRACE, None);
    let recs: Vec<_> = reader.by_ref().collect::<Result<_, _>>().expect("reads");
    assert_eq!(recs.len(), 5);
    assert_eq!(reader.skipped().header_lines, 12);
    let Item::Record(first) = &recs[0] else {
        panic!("a record")
    };
    assert_eq!(first.line, 13);
    assert_eq!(first.ts_ns, 330_300_573_000);
    assert_eq!((first.task, first.pid, first.cpu), ("<idle>", 0, 1));
    assert_eq!(
        first.event,
        Event::WbtLat {
            dev: DEV7,
            lat_us: 199
        }
    );
    let Item::Record(step) = &recs[2] else {
        panic!("a record")
    };
    assert_eq!(
        step.event,
        Event::WbtStep(WbtStep {
            dev: DEV7,
            msg: StepMsg::Down,
            step: 0,
            window_us: 100_000,
            background: 4,
            normal: 8,
            max: 16,
        })
    );
    let Item::Record(stat) = &recs[3] else {
        panic!("a record")
    };
    let Event::WbtStat(s) = stat.event else {
        panic!("wbt_stat")
    };
    assert_eq!(
        s.dev,
        Dev {
            major: 254,
            minor: 0
        }
    );
    assert_eq!(
        (
            s.read.mean,
            s.read.min,
            s.read.max,
            s.read.samples,
            s.read.time
        ),
        (377_502, 52_960, 3_228_013, 70, None)
    );
    assert_eq!((s.write.min, s.write.samples), (665_248, 960));
    let Item::Record(kw) = &recs[4] else {
        panic!("a record")
    };
    assert_eq!((kw.task, kw.pid), ("kworker/u8:2", 35));
}

#[test]
fn a_device_filter_keeps_that_device_and_counts_the_others() {
    let mut reader = Reader::new(CAT_TRACE, Some(DEV7));
    let n = reader.by_ref().inspect(|i| assert!(i.is_ok())).count();
    assert_eq!(n, 3);
    assert_eq!(reader.skipped().other_devices, 2);
    let mut reader = Reader::new(CAT_TRACE, Some(Dev { major: 8, minor: 0 }));
    assert_eq!(reader.by_ref().count(), 0);
    assert_eq!(reader.skipped().other_devices, 5);
}

#[test]
fn trace_cmd_report_columns_without_irq_flags_read_too() {
    let text = "\
cpus=2
CPU 1 is empty
             fio-2987  [000]   328.604594: wbt_step:             7:0: scale up: step=-1, window=100000us, background=8, normal=16, max=31
          <idle>-0     [001]   328.944609: wbt_timer:            7:0: status=3, step=0, inflight=0
";
    let recs = records(text, None);
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[0].ts_ns, 328_604_594_000);
    assert!(matches!(
        recs[0].event,
        Event::WbtStep(WbtStep {
            msg: StepMsg::Up,
            step: -1,
            max: 31,
            ..
        })
    ));
    assert_eq!(
        recs[1].event,
        Event::WbtTimer(WbtTimer {
            dev: DEV7,
            status: 3,
            step: 0,
            inflight: 0
        })
    );
}

#[test]
fn older_wbt_stat_with_time_fields_and_2016_step_messages_read() {
    let e = one(
        "  kworker/0:1-12 [000] ..s.  1.000000: wbt_stat: 8:0: rmean=10, rmin=5, rmax=20, rsamples=4, rtime=40, wmean=1, wmin=1, wmax=1, wsamples=3, wtime=3",
    );
    let Event::WbtStat(s) = e else {
        panic!("wbt_stat")
    };
    assert_eq!((s.read.time, s.write.time), (Some(40), Some(3)));
    let e = one(
        "  x-1 [000] ..s.  1.000000: wbt_step: 8:0: step down: step=1, window=72727us, background=2, normal=4, max=8",
    );
    assert!(matches!(
        e,
        Event::WbtStep(WbtStep {
            msg: StepMsg::Down,
            window_us: 72_727,
            ..
        })
    ));
}

#[test]
fn block_request_events_read_with_and_without_the_ioprio_column() {
    let e = one(
        "             fio-2349    [000] .....   161.613109: block_rq_issue: 7,0 RM 4096 () 32 + 8 be,0,4 [fio]",
    );
    let Event::RqIssue(rq) = e else {
        panic!("issue")
    };
    assert_eq!(rq.dev, DEV7);
    assert_eq!((rq.rwbs.as_str(), rq.rwbs.op()), ("RM", b'R'));
    assert!(rq.rwbs.has(b'M') && !rq.rwbs.has(b'S'));
    assert_eq!(
        (rq.bytes, rq.sector, rq.nr_sector, rq.error),
        (Some(4096), 32, 8, None)
    );
    let e = one(
        "     ksoftirqd/1-22      [001] ..s..   309.333742: block_rq_complete: 7,0 FF () 18446744073709551615 + 0 none,0,0 [0]",
    );
    let Event::RqComplete(rq) = e else {
        panic!("complete")
    };
    assert_eq!(rq.rwbs.op(), b'F', "a flush");
    assert_eq!((rq.sector, rq.nr_sector, rq.error), (u64::MAX, 0, Some(0)));
    // 5.x: no ioprio column; a PREFLUSH write's letters start with F.
    let e = one("  kworker-9 [001] ..s. 2.5: block_rq_complete: 8,16 FWS () 100 + 8 [-5]");
    let Event::RqComplete(rq) = e else {
        panic!("complete")
    };
    assert_eq!((rq.rwbs.op(), rq.error), (b'W', Some(-5)));
    assert!(rq.rwbs.has(b'S'));
    let e = one("  dd-9 [001] ..... 2.5: block_rq_insert: 8,16 W 4096 () 100 + 8 [dd]");
    assert!(matches!(
        e,
        Event::RqInsert(Rq {
            bytes: Some(4096),
            ..
        })
    ));
}

#[test]
fn writeback_and_btrfs_events_read_in_their_print_formats() {
    let e = one(
        "             fio-6093    [001] .....   986.878563: global_dirty_state: dirty=9196 writeback=0 bg_thresh=608941 thresh=1219372 limit=160195 dirtied=860576 written=788852",
    );
    assert_eq!(
        e,
        Event::GlobalDirtyState(GlobalDirtyState {
            dirty: 9196,
            writeback: 0,
            bg_thresh: 608_941,
            thresh: 1_219_372,
            limit: 160_195,
            dirtied: 860_576,
            written: 788_852,
        })
    );
    let e = one(
        "  dd-7 [000] ..... 5.000001: balance_dirty_pages: bdi 7:0: limit=1000 setpoint=800 dirty=900 wb_setpoint=700 wb_dirty=650 dirty_ratelimit=1024 task_ratelimit=512 dirtied=32 dirtied_pause=32 paused=0 pause=12 period=12 think=-4 cgroup_ino=1",
    );
    let Event::BalanceDirtyPages(b) = e else {
        panic!("bdp")
    };
    assert_eq!(
        (b.bdi, b.dirty, b.wb_dirty, b.pause, b.think),
        ("7:0", 900, 650, 12, -4)
    );
    assert_eq!(Event::BalanceDirtyPages(b).dev(), Some(DEV7));
    let e = one(
        "  fio-8 [001] ...1. 9.25: bdi_dirty_ratelimit: bdi 7:0: write_bw=996148 awrite_bw=1162028 dirty_rate=4311364 dirty_ratelimit=197056 task_ratelimit=418940 balanced_dirty_ratelimit=112912 cgroup_ino=1",
    );
    let Event::BdiDirtyRatelimit(r) = e else {
        panic!("bdi_dirty_ratelimit")
    };
    assert_eq!(
        (
            r.write_bw,
            r.awrite_bw,
            r.dirty_rate,
            r.dirty_ratelimit,
            r.task_ratelimit,
            r.balanced_dirty_ratelimit
        ),
        (996_148, 1_162_028, 4_311_364, 197_056, 418_940, 112_912)
    );
    assert_eq!(Event::BdiDirtyRatelimit(r).dev(), Some(DEV7));
    let fsid = "5b520f63-6a2a-417e-a95e-d8760bdf6e19";
    let l = format!(
        "    kworker/u8:4-2378    [001] .....   986.764125: btrfs_flush_space: {fsid}: state=9(ALLOC_CHUNK_FORCE) flags=1(DATA) num_bytes=18446744073709551615 ret=0 for_preempt=0"
    );
    let e = one(&l);
    let Event::BtrfsFlushSpace(f) = e else {
        panic!("flush_space")
    };
    assert_eq!(
        (f.fsid, f.state, f.flags, f.num_bytes, f.for_preempt),
        (fsid, 9, 1, u64::MAX, false)
    );
    let l = format!(
        "  fio-6089 [000] ..... 986.764031: btrfs_reserve_ticket: {fsid}: flags=DATA bytes=67108864 start_ns=986719727157 flush=0x3 error=0"
    );
    let e = one(&l);
    assert!(matches!(
        e,
        Event::BtrfsReserveTicket(ReserveTicket {
            bytes: 67_108_864,
            start_ns: 986_719_727_157,
            flush: "0x3",
            ..
        })
    ));
    let l = format!(
        "  fio-6089 [000] ...1. 986.763982: btrfs_trigger_flush: {fsid}: enospc: flush=3(0x3) flags=1(DATA) bytes=67108864"
    );
    let e = one(&l);
    assert!(matches!(
        e,
        Event::BtrfsTriggerFlush(TriggerFlush {
            reason: "enospc",
            flush: 3,
            ..
        })
    ));
    let l = format!(
        "  fio-6093 [000] ..... 986.884635: btrfs_transaction_commit: {fsid}: root=1(ROOT_TREE) gen=7"
    );
    let e = one(&l);
    assert!(matches!(
        e,
        Event::BtrfsTransactionCommit(TransactionCommit { generation: 7, .. })
    ));
    let l = format!(
        "  fio-6089 [000] ...1. 986.763846: add_delayed_ref_head: {fsid}: bytenr=30441472 num_bytes=16384 action=ADD_DELAYED_EXTENT is_data=0"
    );
    let e = one(&l);
    assert!(matches!(
        e,
        Event::AddDelayedRefHead(DelayedRefHead {
            num_bytes: 16384,
            is_data: false,
            ..
        })
    ));
    let l = format!(
        "  fio-6093 [001] ..... 986.880456: run_delayed_ref_head: {fsid}: bytenr=22036480 num_bytes=16384 action=0x0 is_data=1"
    );
    let e = one(&l);
    assert!(matches!(
        e,
        Event::RunDelayedRefHead(DelayedRefHead {
            action: "0x0",
            is_data: true,
            ..
        })
    ));
}

#[test]
fn unknown_events_are_skipped_and_counted_by_name() {
    let text = "\
  a-1 [000] d..2. 1.000000: sched_switch: prev_comm=a prev_pid=1 ==> next_comm=b next_pid=2
  a-1 [000] d..2. 1.000001: sched_switch: prev_comm=b prev_pid=2 ==> next_comm=a next_pid=1
  a-1 [000] ..... 1.000002: xfs_log_force: dev 7:0 lsn 0x0 caller xfs_log_force_seq
  a-1 [000] ..s1. 1.000003: wbt_timer: 7:0: status=2, step=0, inflight=0
";
    let mut reader = Reader::new(text, None);
    assert_eq!(reader.by_ref().count(), 1);
    let s = reader.skipped();
    assert_eq!(s.unknown_total(), 3);
    assert_eq!(s.unknown_events.get("sched_switch"), Some(&2));
    assert_eq!(s.unknown_events.get("xfs_log_force"), Some(&1));
}

#[test]
fn lost_event_markers_are_items_of_their_own() {
    let text = "\
CPU:1 [LOST 123 EVENTS]
  a-1 [000] ..s1. 1.000003: wbt_timer: 7:0: status=2, step=0, inflight=0
CPU:0 [17 EVENTS DROPPED]
";
    let items: Vec<_> = Reader::new(text, None).map(|i| i.expect("reads")).collect();
    assert_eq!(items.len(), 3);
    assert_eq!(
        items[0],
        Item::Lost {
            line: 1,
            events: Some(123)
        }
    );
    assert_eq!(
        items[2],
        Item::Lost {
            line: 3,
            events: Some(17)
        }
    );
}

#[test]
fn garbage_and_cut_lines_are_errors_naming_their_line() {
    let good = "  a-1 [000] ..s1. 1.000003: wbt_timer: 7:0: status=2, step=0, inflight=0\n";
    let e = error(&format!("{good}hello world\n"));
    assert_eq!(e.line, 2);
    assert!(e.message.contains("not a trace line"), "{e}");
    // A capture cut in the middle of its last line.
    let e = error(&format!("{good}  a-1 [000] ..s1. 1.00"));
    assert_eq!(e.line, 2);
    assert!(e.message.contains("cut short"), "{e}");
    let e = error(&format!(
        "{good}  a-1 [000] ..s1. 1.000004: wbt_timer: 7:0: status=2, ste"
    ));
    assert_eq!(e.line, 2);
    assert!(e.message.starts_with("wbt_timer: no 'step=' field"), "{e}");
    let e = error("  a-1 [000] ..s1. 1.000004: wbt_timer: sda: status=2, step=0, inflight=0");
    assert!(e.message.contains("'sda' is not a device name"), "{e}");
    let e = error("  a-1 [000] ..s1. 1.000004: wbt_timer: 7:0: status=two, step=0, inflight=0");
    assert!(e.message.contains("'status=two' is not a number"), "{e}");
    let e = error("  a-1 [000] ..... 1.0: block_rq_issue: 7,0 WS 4096 () 32 + 8 be,0,4 [fi");
    assert!(e.message.contains("cut short"), "{e}");
    let e = error("  a-1 [000] ..... 1.0: block_rq_issue: 7,0 ws 4096 () 32 + 8 [fio]");
    assert!(e.message.contains("rwbs"), "{e}");
    let e = error(
        "  a-1 [000] ..... 1.0: wbt_step: 7:0: scale sideways: step=1, window=1us, background=1, normal=1, max=1",
    );
    assert!(e.message.contains("unknown step message"), "{e}");
    assert_eq!(format!("{e}"), format!("line 1: {}", e.message));
}

#[test]
fn device_numbers_parse_and_print_as_maj_min() {
    assert_eq!("7:0".parse::<Dev>(), Ok(DEV7));
    assert_eq!(DEV7.to_string(), "7:0");
    assert!("7,0".parse::<Dev>().is_err());
    assert!("sda".parse::<Dev>().is_err());
    assert!(":1".parse::<Dev>().is_err());
    assert!("99999999999:0".parse::<Dev>().is_err());
}

mod arbitrary_text {
    use proptest::prelude::*;

    use super::super::Reader;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Any text reads to records, skips or errors: never a panic.
        #[test]
        fn any_text_reads_without_panicking(text in "(\\PC{0,120}\n){0,6}") {
            for item in Reader::new(&text, None) {
                let _ = item;
            }
        }

        /// Lines cut anywhere inside a good event line never panic and,
        /// if the cut loses a field, say which line.
        #[test]
        fn cut_lines_never_panic(cut in 0usize..160) {
            let line = "          <idle>-0       [001] .Ns1.   330.300592: wbt_step: 7:0: scale down: step=0, window=100000us, background=4, normal=8, max=16";
            let cut = cut.min(line.len());
            let text = format!("{}\n", &line[..cut]);
            for item in Reader::new(&text, None) {
                if let Err(e) = item {
                    prop_assert_eq!(e.line, 1);
                }
            }
        }
    }
}
