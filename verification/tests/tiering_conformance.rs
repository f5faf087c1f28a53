//! The tiering conformance suites on our own variants (each passes) and
//! on deliberately wrong twins (each is caught, with the message a user
//! would see).

use iolab_tiering::{
    Candidate, ChunkAllocator, Pid, ReadPolicy, ReadRequest, SelectRequest, Stock, parse_policy,
};
use iolab_verification::tiering::{allocator, read_policy};

#[test]
fn our_read_policies_pass() {
    read_policy::check(|| Pid);
    for spec in [
        "read=pid",
        "read=round-robin",
        "read=devid",
        "read=latency",
        "read=load",
        "read=queue",
    ] {
        let Ok(iolab_tiering::PolicyChoice::Read(cfg)) = parse_policy(spec) else {
            panic!("{spec} parses")
        };
        let c = read_policy::check(|| cfg.build(1, 4096, 4).expect("builds"));
        assert!(c.outputs > c.cases, "{spec}: {c:?}");
    }
}

#[test]
fn our_allocators_pass() {
    for spec in ["alloc=stock", "alloc=ssd-metadata", "alloc=allocation-hint"] {
        let Ok(iolab_tiering::PolicyChoice::Alloc(a)) = parse_policy(spec) else {
            panic!("{spec} parses")
        };
        let c = allocator::check(|| a);
        eprintln!("{spec}: {c:?}");
        assert!(c.outputs > 3 * c.cases && c.refused > 0, "{spec}: {c:?}");
    }
    allocator::check(|| Stock);
}

/// The message the suite failed with.
fn caught<T>(f: impl FnOnce() -> T + std::panic::UnwindSafe) -> String {
    iolab_verification::failure_of(f).expect("the suite passed a wrong variant")
}

/// Proposes the copy after the last one.
struct PastTheEnd;

impl ReadPolicy for PastTheEnd {
    fn name(&self) -> &'static str {
        "past-the-end"
    }
    fn preferred(&mut self, req: &ReadRequest<'_>) -> usize {
        req.range().end
    }
}

/// Answers from a counter shared by every instance: fresh twins differ.
struct Shared;

static TICKS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl ReadPolicy for Shared {
    fn name(&self) -> &'static str {
        "shared-counter"
    }
    fn preferred(&mut self, req: &ReadRequest<'_>) -> usize {
        let r = req.range();
        r.start + TICKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % r.len()
    }
}

/// Gives the first candidate twice.
struct Doubles;

impl ChunkAllocator for Doubles {
    fn name(&self) -> &'static str {
        "doubles"
    }
    fn select(&self, _req: &SelectRequest, cands: &mut Vec<Candidate>) {
        if let Some(&c) = cands.first() {
            cands.insert(1, c);
        }
    }
}

#[test]
fn wrong_twins_are_caught_with_the_rule_and_the_seed() {
    let m = caught(|| read_policy::check(|| PastTheEnd));
    assert!(
        m.contains("read_policy: 'past-the-end' broke a rule:"),
        "{m}"
    );
    assert!(m.contains("outside the request's copies"), "{m}");
    assert!(m.contains("IOLAB_CHECK_SEED="), "{m}");
    eprintln!("{m}");
    let m = caught(|| read_policy::check(|| Shared));
    assert!(m.contains("not deterministic"), "{m}");
    eprintln!("{m}");
    let m = caught(|| allocator::check(|| Doubles));
    assert!(m.contains("allocator: 'doubles' broke a rule"), "{m}");
    assert!(m.contains("gave the same device twice"), "{m}");
    eprintln!("{m}");
}

/// pid's rule shifted by one: the copy after the one pid picks.
struct PidPlusOne;

impl ReadPolicy for PidPlusOne {
    fn name(&self) -> &'static str {
        "pid-plus-one"
    }
    fn preferred(&mut self, req: &ReadRequest<'_>) -> usize {
        let r = req.range();
        r.start + (Pid.preferred(req) - r.start + 1) % r.len()
    }
}

#[test]
fn a_variant_beside_its_reference_agrees_or_shows_the_first_diverging_read() {
    // Ours against itself, built through the policy grammar: no read differs.
    let Ok(iolab_tiering::PolicyChoice::Read(cfg)) = parse_policy("read=pid") else {
        panic!("parses")
    };
    let c = read_policy::differential(|| cfg.build(1, 4096, 4).expect("builds"), || Pid);
    assert!(c.outputs > c.cases, "{c:?}");
    let m = caught(|| read_policy::differential(|| PidPlusOne, || Pid));
    assert!(
        m.contains("read_policy::differential: 'pid-plus-one' broke a rule:"),
        "{m}"
    );
    assert!(m.contains("where 'pid' sends it to Ok("), "{m}");
    eprintln!("{m}");
}

#[test]
fn an_allocator_beside_its_reference_agrees_or_shows_the_first_diverging_chunk() {
    let Ok(iolab_tiering::PolicyChoice::Alloc(stock)) = parse_policy("alloc=stock") else {
        panic!("parses")
    };
    let c = allocator::differential(|| stock, || Stock);
    assert!(c.outputs > c.cases, "{c:?}");
    // ssd-metadata puts metadata on SSDs first, where stock takes the
    // roomiest device: they part at the first metadata chunk that differs.
    let Ok(iolab_tiering::PolicyChoice::Alloc(ssd)) = parse_policy("alloc=ssd-metadata") else {
        panic!("parses")
    };
    let m = caught(|| allocator::differential(|| ssd, || Stock));
    assert!(
        m.contains("allocator::differential: 'ssd_metadata'")
            || m.contains("allocator::differential: 'ssd-metadata'"),
        "{m}"
    );
    assert!(m.contains("where 'stock' gives Ok("), "{m}");
    eprintln!("{m}");
}

/// Claims to balance, but sends every read to the first copy.
struct ClaimsBalance;

impl ReadPolicy for ClaimsBalance {
    fn name(&self) -> &'static str {
        "claims-balance"
    }
    fn preferred(&mut self, req: &ReadRequest<'_>) -> usize {
        req.first()
    }
    fn balances(&self) -> bool {
        true
    }
}

/// Claims to honour allocation hints, and places as stock does.
struct ClaimsHints;

impl ChunkAllocator for ClaimsHints {
    fn name(&self) -> &'static str {
        "claims-hints"
    }
    fn select(&self, _req: &SelectRequest, _cands: &mut Vec<Candidate>) {}
    fn honours_hints(&self) -> bool {
        true
    }
}

#[test]
fn a_claim_of_balance_or_of_hints_is_held_to() {
    let m = caught(|| read_policy::check(|| ClaimsBalance));
    assert!(
        m.contains("it claims to balance, but under load copy 1 served 0"),
        "{m}"
    );
    eprintln!("{m}");
    let m = caught(|| allocator::check(|| ClaimsHints));
    assert!(m.contains("it honours hints, but placed a"), "{m}");
    assert!(m.contains("excludes it"), "{m}");
    eprintln!("{m}");
    // devid (fixed copies, claims nothing) and stock (ignores hints)
    // make no such claim, and pass.
    assert!(!iolab_tiering::Devid { read_devid: 1 }.balances() && !Stock.honours_hints());
}
