//! What every suite shares: the seeded stream its cases come from, how
//! many cases it draws, what it reports.

/// splitmix64: the suites' deterministic stream.
#[derive(Clone, Debug)]
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Cases and first seed: the environment's, else `default` cases from 0.
pub(crate) fn plan(default: u64) -> (u64, u64) {
    let var = |k: &str| std::env::var(k).ok().and_then(|v| v.parse().ok());
    (
        var("IOLAB_CHECK_CASES").unwrap_or(default),
        var("IOLAB_CHECK_SEED").unwrap_or(0),
    )
}

/// What a suite checked, for a test that wants to see it covered ground.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Cases drawn.
    pub cases: u64,
    /// Outputs of the variant checked (reads chosen, chunks placed).
    pub outputs: u64,
    /// Requests the variant refused as the rules allow (an allocation
    /// without space), not counted in `outputs`.
    pub refused: u64,
}

/// What a suite found: the rule broken and how to see it again.
#[track_caller]
pub(crate) fn broke(suite: &str, name: &str, seed: u64, rule: &str, case: &str) -> ! {
    panic!(
        "{suite}: '{name}' broke a rule at seed {seed}: {rule}\n  case: {case}\n  replay: IOLAB_CHECK_SEED={seed} IOLAB_CHECK_CASES=1 cargo test"
    )
}

/// Runs `cases` proptest cases of `strategy` (the environment's count,
/// else `default`; drawn from `IOLAB_CHECK_SEED`) through `body`, which
/// returns the outputs it checked or the rule a case broke. A failure
/// is shrunk and reported with the smallest case and the seed.
pub(crate) fn proptest_cases<S: proptest::strategy::Strategy>(
    suite: &str,
    name: &str,
    default: u64,
    strategy: S,
    body: impl Fn(&S::Value) -> Result<u64, String>,
) -> Checked
where
    S::Value: core::fmt::Debug,
{
    use proptest::test_runner::{
        Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner,
    };

    let (n, seed) = plan(default);
    let mut bytes = [0u8; 32];
    let mut rng = Rng(seed);
    for chunk in bytes.chunks_mut(8) {
        chunk.copy_from_slice(&rng.next().to_le_bytes());
    }
    let config = Config {
        cases: u32::try_from(n).unwrap_or(u32::MAX),
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes));
    let outputs = core::cell::Cell::new(0u64);
    let result = runner.run(&strategy, |c| {
        body(&c)
            .map(|k| outputs.set(outputs.get() + k))
            .map_err(TestCaseError::fail)
    });
    match result {
        Ok(()) => Checked {
            cases: n,
            outputs: outputs.get(),
            refused: 0,
        },
        Err(TestError::Fail(why, smallest)) => panic!(
            "{suite}: '{name}' broke a rule: {why}\n  smallest case: {smallest:?}\n  replay: IOLAB_CHECK_SEED={seed} cargo test"
        ),
        Err(TestError::Abort(why)) => panic!("{suite}: '{name}': proptest gave up: {why}"),
    }
}

/// A case's draws: words proptest generates and shrinks, read in order;
/// 0 once they run out, so a shrunk case is a smaller one (fewer
/// devices, fewer reads, smaller numbers).
pub(crate) struct Draws<'a> {
    words: &'a [u64],
    at: usize,
}

impl Draws<'_> {
    pub(crate) fn next(&mut self) -> u64 {
        let w = self.words.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        w
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// The words of a case, shown only as their count: the case itself is
/// described in the rule's report.
#[derive(Clone)]
pub(crate) struct Words(Vec<u64>);

impl core::fmt::Debug for Words {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} draws (the case is described above)", self.0.len())
    }
}

/// [`proptest_cases`] over cases drawn through [`Draws`]; `body` returns
/// the outputs checked and the requests refused as the rules allow.
pub(crate) fn proptest_draws(
    suite: &str,
    name: &str,
    default: u64,
    body: impl Fn(&mut Draws<'_>) -> Result<(u64, u64), String>,
) -> Checked {
    use proptest::prelude::*;

    let refused = core::cell::Cell::new(0u64);
    let words = proptest::collection::vec(any::<u64>(), 0..512).prop_map(Words);
    let mut checked = proptest_cases(suite, name, default, words, |w| {
        let (outputs, r) = body(&mut Draws { words: &w.0, at: 0 })?;
        refused.set(refused.get() + r);
        Ok(outputs)
    });
    checked.refused = refused.get();
    checked
}
