//! This crate's policies through the suites a user runs from their own
//! tests, one line each; and the wrong twins, each caught.

use iolab_example_own_variants::{Halving, MetadataOnFlash, ShortestWait, wrong};
use iolab_tiering::{Queue, Stock};
use iolab_verification::{failure_of, tiering, wbt};

#[test]
fn read_policy_conforms() {
    tiering::read_policy::check(|| ShortestWait);
}

#[test]
fn allocator_conforms() {
    tiering::allocator::check(|| MetadataOnFlash);
}

#[test]
fn scaling_step_conforms() {
    wbt::depth::check(|| Halving);
}

/// Where ours and iolab's agree, the differential says so: on a volume
/// of one class, metadata-on-flash places every chunk as stock does.
#[test]
fn differentials_run() {
    let why = failure_of(|| tiering::read_policy::differential(|| ShortestWait, || Queue))
        .expect("shortest-wait and queue differ");
    assert!(why.contains("where 'queue' sends it to"), "{why}");
    let why = failure_of(|| tiering::allocator::differential(|| MetadataOnFlash, || Stock))
        .expect("metadata-on-flash and stock differ on mixed volumes");
    assert!(why.contains("where 'stock' gives"), "{why}");
}

#[test]
fn wrong_twins_are_caught() {
    let why = failure_of(|| tiering::read_policy::check(|| wrong::PastTheEnd)).expect("caught");
    assert!(why.contains("outside the request's copies"), "{why}");
    let why =
        failure_of(|| tiering::allocator::check(|| wrong::DuplicateCandidate)).expect("caught");
    assert!(
        why.contains("DuplicateDevice") || why.contains("twice"),
        "{why}"
    );
    let why = failure_of(|| wbt::depth::check(|| wrong::Leaping)).expect("caught");
    assert!(why.contains("a step moves by one"), "{why}");
}
