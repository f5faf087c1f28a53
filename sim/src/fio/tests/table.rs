//! The option table itself.

use super::super::table::{Class, Harmless, OPTIONS, is_harmless, lookup};
use super::*;

#[test]
fn sorted_unique_and_canonical() {
    for w in OPTIONS.windows(2) {
        assert!(w[0].name < w[1].name, "{} before {}", w[0].name, w[1].name);
    }
    for e in OPTIONS {
        let canon = lookup(e.canonical).unwrap_or_else(|| panic!("{} has no row", e.canonical));
        assert_eq!(
            canon.canonical, e.canonical,
            "{} is itself an alias",
            e.canonical
        );
        // An alias is treated exactly like its primary name.
        assert_eq!(canon.class, e.class, "{} vs {}", e.name, e.canonical);
    }
}

#[test]
fn counts() {
    let count = |f: fn(&Class) -> bool| OPTIONS.iter().filter(|e| f(&e.class)).count();
    assert_eq!(OPTIONS.len(), 315);
    assert_eq!(count(|c| matches!(c, Class::Typed(_))), 123);
    assert_eq!(count(|c| matches!(c, Class::Cosmetic(_))), 62);
    assert_eq!(count(|c| matches!(c, Class::Inert(_))), 67);
    assert_eq!(count(|c| matches!(c, Class::Unsupported(..))), 63);
}

#[test]
fn public_classification() {
    let bs = classify_option("blocksize").expect("known");
    assert_eq!((bs.canonical, bs.class), ("bs", OptionClass::Simulated));
    assert!(matches!(
        classify_option("thread").map(|i| i.class),
        Some(OptionClass::Cosmetic(_))
    ));
    assert!(matches!(
        classify_option("zonecapacity").map(|i| i.class),
        Some(OptionClass::Unsupported(_))
    ));
    // A profile's option is accepted in a job file, as fio accepts it
    // (steadystate.fio's `threads=1`), and does nothing.
    assert!(matches!(
        classify_option("threads").map(|i| i.class),
        Some(OptionClass::Cosmetic(why)) if why.contains("profile")
    ));
    assert_eq!(classify_option("nonsense"), None);
    assert_eq!(classify_option("BS"), None);
    assert_eq!(known_options().count(), 315);
}

#[test]
fn harmless_values() {
    let zero = Harmless::Zero;
    for v in ["0", "0k", "0s", "00", "0x0", "0,0", " 0 "] {
        assert!(is_harmless(zero, Some(v)), "{v}");
    }
    for v in ["1", "4k", "", ",", "0-1", "-0"] {
        assert!(!is_harmless(zero, Some(v)), "{v}");
    }
    assert!(!is_harmless(zero, None));
    assert!(is_harmless(Harmless::Values(&["random"]), Some("random")));
    assert!(!is_harmless(Harmless::Values(&["random"]), Some("zipf")));
    assert!(!is_harmless(Harmless::Never, Some("0")));
}
