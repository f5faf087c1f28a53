//! Writes the benchmarks page from criterion's saved baseline:
//! `benchmarks-page CRITERION_DIR OUT.md` (see `scripts/benchmarks.sh`).

use std::process::ExitCode;

use iolab_benches::page::{self, Machine};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, out] = args.as_slice() else {
        eprintln!("usage: benchmarks-page CRITERION_DIR OUT.md");
        return ExitCode::from(2);
    };
    let estimates = match page::read_estimates(std::path::Path::new(dir), page::BASELINE) {
        Ok(e) if e.is_empty() => {
            eprintln!(
                "benchmarks-page: {dir}: no estimate saved as '{}' (run scripts/benchmarks.sh)",
                page::BASELINE
            );
            return ExitCode::from(2);
        }
        Ok(e) => e,
        Err(e) => {
            eprintln!("benchmarks-page: {e}");
            return ExitCode::from(2);
        }
    };
    let text = page::render(&estimates, &machine(), "scripts/benchmarks.sh");
    if let Err(e) = std::fs::write(out, text) {
        eprintln!("benchmarks-page: {out}: {e}");
        return ExitCode::from(1);
    }
    eprintln!(
        "benchmarks-page: {} estimates written to {out}",
        estimates.len()
    );
    ExitCode::SUCCESS
}

/// This machine, as the page names it.
fn machine() -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')))
        .map_or_else(|| "unknown CPU".to_owned(), |(_, m)| m.trim().to_owned());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or_else(|_| "unknown".to_owned(), |s| s.trim().to_owned());
    let rustc =
        std::process::Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
            .arg("-V")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map_or_else(|| "rustc (unknown)".to_owned(), |s| s.trim().to_owned());
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400);
    Machine {
        cpu,
        cpus: std::thread::available_parallelism().map_or(1, usize::from),
        kernel,
        rustc,
        date: civil_date(days as i64),
    }
}

/// `YYYY-MM-DD` of a day counted from 1970-01-01.
fn civil_date(days: i64) -> String {
    let (y, m, d) = iolab_sim::time::civil_date(days);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn days_are_dates() {
        assert_eq!(super::civil_date(0), "1970-01-01");
        assert_eq!(super::civil_date(20_429), "2025-12-07");
        assert_eq!(super::civil_date(11_016), "2000-02-29");
    }
}
