//! `--seeds`: which seeds a run or a comparison repeats over.

use crate::Failure;

/// The most seeds one command runs (each run keeps a few hundred bytes
/// of figures until the tables are printed).
pub const MAX_SEEDS: usize = 10_000;

/// Parses `--seeds`: `N` (seeds 1 to N), `A..B` (A to B, both included) or
/// a comma-separated list (`1,4,9`). Seeds are distinct; the list keeps
/// the order given, which is the order of the tables' and JSON's runs.
pub fn parse(text: &str) -> Result<Vec<u64>, Failure> {
    let bad = |why: &str| {
        Failure::input(format!(
            "--seeds {text}: {why} (give N for seeds 1..N, A..B, or a list like 1,4,9)"
        ))
    };
    let num = |s: &str| -> Result<u64, Failure> {
        s.trim()
            .parse::<u64>()
            .map_err(|_| bad(&format!("'{}' is not a seed (an integer from 0)", s.trim())))
    };
    let seeds: Vec<u64> = if let Some((a, b)) = text.split_once("..") {
        let (a, b) = (num(a)?, num(b)?);
        if a > b {
            return Err(bad("the range is empty"));
        }
        if b - a >= MAX_SEEDS as u64 {
            return Err(bad(&format!("more than {MAX_SEEDS} seeds")));
        }
        (a..=b).collect()
    } else if text.contains(',') {
        text.split(',').map(num).collect::<Result<_, _>>()?
    } else {
        let n = num(text)?;
        if n == 0 {
            return Err(bad("at least one seed"));
        }
        if n > MAX_SEEDS as u64 {
            return Err(bad(&format!("more than {MAX_SEEDS} seeds")));
        }
        (1..=n).collect()
    };
    if seeds.len() > MAX_SEEDS {
        return Err(bad(&format!("more than {MAX_SEEDS} seeds")));
    }
    for (i, s) in seeds.iter().enumerate() {
        if seeds[..i].contains(s) {
            return Err(bad(&format!("seed {s} is given twice")));
        }
    }
    Ok(seeds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_ranges_and_lists() {
        let ok = |t: &str| parse(t).map_err(|f| f.message).unwrap_or_default();
        assert_eq!(ok("5"), vec![1, 2, 3, 4, 5]);
        assert_eq!(ok("3..6"), vec![3, 4, 5, 6]);
        assert_eq!(ok("0..0"), vec![0]);
        assert_eq!(ok("9,4,1"), vec![9, 4, 1]);
        assert_eq!(ok(" 2 , 7"), vec![2, 7]);
    }

    #[test]
    fn bad_lists_say_why() {
        let err = |t: &str| {
            parse(t)
                .err()
                .map(|f| (f.code, f.message))
                .unwrap_or_default()
        };
        assert_eq!(err("0").0, 2);
        assert!(err("0").1.contains("at least one seed"));
        assert!(err("6..3").1.contains("empty"));
        assert!(err("1,2,1").1.contains("seed 1 is given twice"));
        assert!(err("x").1.contains("'x' is not a seed"));
        assert!(err("1,,2").1.contains("'' is not a seed"));
        assert!(err("-1").1.contains("'-1'"));
        assert!(err("10001").1.contains("more than 10000"));
        assert!(err("0..10000").1.contains("more than 10000"));
        assert!(err("5").1.is_empty());
    }
}
