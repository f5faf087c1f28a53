//! A job that only reads files it creates as it opens them
//! (`create_on_open=1`) finds them empty, as fio's does. fio 3.33 here,
//! `rw=read bs=4k size=16m create_on_open=1`: psync ends with error 5
//! (EIO) after one read; libaio `direct=1 verify=crc32c` with error 84
//! (EILSEQ) after one; libaio `direct=1 iodepth=128` issues 4,096 reads
//! of 0 bytes and no error.

#[allow(dead_code, reason = "each test binary uses part of the helpers")]
mod common;

use common::{run_as, scenario};
use iolab_sim::stats::Dir;
use iolab_sim::{parse_variant, run};

fn outcome(extra: &str) -> (u64, u64, i32) {
    let text = format!("[r]\nsize=16m\nbs=4k\nrw=read\ncreate_on_open=1\n{extra}");
    let out = run_as(&scenario(&text, "nvme", 1 << 30, 1), "none");
    let j = &out.report.jobs[0];
    let r = j.dir(Dir::Read);
    (r.total_ios, r.io_bytes, j.error)
}

#[test]
fn an_empty_file_reads_nothing_and_fails_where_fio_fails() {
    assert_eq!(outcome("ioengine=psync\n"), (1, 0, 5));
    assert_eq!(
        outcome("ioengine=libaio\ndirect=1\nverify=crc32c\n"),
        (1, 0, 84)
    );
    assert_eq!(
        outcome("ioengine=libaio\ndirect=1\niodepth=128\n"),
        (4096, 0, 0)
    );
}

#[test]
fn a_file_another_job_writes_is_not_read_empty() {
    let text = "[w]\nfilename=f\nsize=1m\nrw=write\n[r]\nfilename=f\nsize=1m\nrw=read\n\
                create_on_open=1\n";
    let s = scenario(text, "nvme", 1 << 30, 1);
    let e = match run(&s, &parse_variant("none").expect("variant"), &mut |_| {}) {
        Ok(_) => panic!("ran"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("create_on_open"), "{e}");
}
