//! Benchmarks live in `benches/`. This library holds [`page`], which
//! writes `docs/benchmarks.md` from what criterion measured
//! (`scripts/benchmarks.sh` runs both).

pub mod page;
