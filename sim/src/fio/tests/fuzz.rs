//! No input makes the parser panic: truncations and deterministic mutations
//! of the scenario files.

use super::scenarios::{FLUSH, IOCOST, RAID1, WBT};
use super::*;

/// Includes resolve to a small file that itself includes another one, so the
/// mutated inputs also exercise include chains and loops.
fn include(_from: &str, name: &str) -> Result<(String, Vec<u8>), String> {
    match name.len() % 3 {
        0 => Ok((
            name.to_string(),
            format!("bs=4k\ninclude {name}\n").into_bytes(),
        )),
        1 => Ok((format!("{name}.fio"), "iodepth=2\n".into())),
        _ => Err("unreadable".to_string()),
    }
}

fn run(text: &str) {
    let vars = [("FIO_NR_JOBS", "4"), ("X", "12")];
    // The result does not matter, only that there is one.
    let _ = parse_full(text, &vars, &include);
}

/// xorshift64*: a fixed, dependency-free pseudo-random sequence.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const PIECES: &[&str] = &[
    "=",
    "[",
    "]",
    "[global]\n",
    "\n",
    ";",
    "#",
    ",",
    ":",
    "-",
    "%",
    "(",
    ")",
    "$((",
    "))",
    "$((NOPE))",
    "${",
    "}",
    "${X}",
    "$mb_memory",
    "$ncpus*",
    "/0",
    "**",
    "^",
    "\0",
    "\u{7f}",
    "é",
    "99999999999999999999999",
    "0x",
    "k",
    "ki",
    "b",
    "include a",
    "include bb\n",
    "bs=",
    "rw=randread:",
    "size=",
    "=(",
    "1-",
    "\\:",
    " ",
    "\t",
    "\r\n",
    "\u{feff}",
];

#[test]
fn every_prefix_parses_or_errors() {
    for text in [FLUSH, IOCOST, RAID1, WBT] {
        for (i, _) in text.char_indices() {
            run(&text[..i]);
            run(&text[i..]);
        }
    }
}

#[test]
fn mutated_scenarios_parse_or_error() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for text in [FLUSH, IOCOST, RAID1, WBT] {
        let chars: Vec<char> = text.chars().collect();
        for _ in 0..1500 {
            let mut s: String = chars.iter().collect();
            for _ in 0..=rng.below(4) {
                let at = {
                    let n = rng.below(s.len() + 1);
                    // Move to a char boundary.
                    (n..=s.len())
                        .find(|&i| s.is_char_boundary(i))
                        .unwrap_or(s.len())
                };
                let end = (at..=s.len().min(at + rng.below(6)))
                    .rev()
                    .find(|&i| s.is_char_boundary(i))
                    .unwrap_or(at);
                let piece = PIECES[rng.below(PIECES.len())];
                match rng.below(3) {
                    0 => s.insert_str(at, piece),
                    1 => s.replace_range(at..end, piece),
                    _ => s.replace_range(at..end, ""),
                }
            }
            run(&s);
        }
    }
}

#[test]
fn random_garbage_parses_or_errors() {
    let mut rng = Rng(42);
    for _ in 0..3000 {
        let mut s = String::new();
        for _ in 0..rng.below(40) {
            s.push_str(PIECES[rng.below(PIECES.len())]);
        }
        run(&s);
        run(&format!("[job]\n{s}"));
        run(&format!("[job]\nsize={s}\nbs={s}\nruntime={s}\n"));
    }
}
