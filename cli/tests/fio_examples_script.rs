//! `scripts/fio-examples.sh`, the table of docs/fio-examples.md: a row a
//! job file, a file iolab runs as `runs`, one it refuses as `refused` with
//! its reason (here on job files of our own, not fio's).

mod common;

use std::process::Command;

use common::{root, stderr, stdout};

#[test]
fn the_examples_script_gives_a_row_a_file() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fio-examples");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(
        dir.join("small.fio"),
        "[r]\nrw=randread\nsize=1m\nruntime=10ms\ntime_based\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("net.fio"),
        "[n]\nioengine=net\nport=8888\nrw=read\n",
    )
    .expect("write");
    let out = Command::new("bash")
        .arg(root().join("scripts/fio-examples.sh"))
        .arg(&dir)
        .arg("nvme")
        .arg("60")
        .env("IOLAB", env!("CARGO_BIN_EXE_iolab"))
        .output()
        .expect("bash runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    let rows: Vec<&str> = table.lines().skip(2).collect();
    assert_eq!(rows.len(), 2, "{table}");
    assert!(
        rows[0].starts_with("| net.fio |") && rows[0].contains("| refused |"),
        "{table}"
    );
    assert!(rows[0].contains("ioengine net is not simulated"), "{table}");
    assert!(
        rows[1].starts_with("| small.fio |") && rows[1].contains("| runs |"),
        "{table}"
    );
}
