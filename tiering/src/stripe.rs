//! Stripe size of a new chunk (kernel: `decide_stripe_size`,
//! `decide_stripe_size_regular`).

use crate::{CAPPED_STRIPE_ROUND, Limits, MAX_STRIPE_SIZE, STRIPE_LEN};

/// The shape of a chunk once the devices are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StripeDecision {
    /// Devices used (a prefix of the sorted candidates).
    pub ndevs: u32,
    /// Bytes per stripe.
    pub stripe_size: u64,
    /// `ndevs * dev_stripes`.
    pub num_stripes: u32,
    /// Stripes carrying distinct data.
    pub data_stripes: u32,
    /// Logical length, `stripe_size * data_stripes`.
    pub chunk_size: u64,
    /// Whether the 10 % / `chunk_size` cap shortened the stripe.
    pub capped: bool,
}

/// How many of `ncands` sorted candidates a chunk uses: rounded down to
/// `devs_increment`, `None` below `devs_min` (ENOSPC), at most `devs_max`.
pub fn decide_ndevs(limits: &Limits, ncands: usize) -> Option<u32> {
    let attr = &limits.attr;
    let n = u32::try_from(ncands).unwrap_or(u32::MAX);
    let n = n / attr.devs_increment * attr.devs_increment;
    if n < attr.devs_min {
        return None;
    }
    Some(n.min(attr.devs_max))
}

/// Decides the stripe size. `smallest_max_avail` is the `max_avail` of the
/// last chosen candidate: the smallest chosen hole bounds every stripe,
/// because the goal is the widest chunk, not the largest stripes.
///
/// When the chunk would exceed `max_chunk_size`, the stripe shrinks to
/// `max_chunk_size / data_stripes` rounded **up** to 16 MiB (so a 4 GiB
/// filesystem gets a 416 MiB data chunk against a 409.6 MiB cap), never
/// growing past what it was. Then it is clamped to 1 GiB and rounded down
/// to 64 KiB.
pub fn decide_stripe_size(limits: &Limits, ndevs: u32, smallest_max_avail: u64) -> StripeDecision {
    let attr = &limits.attr;
    debug_assert!(ndevs >= attr.devs_min && ndevs <= attr.devs_max);
    debug_assert_eq!(ndevs % attr.devs_increment, 0);
    let mut stripe = smallest_max_avail / u64::from(attr.dev_stripes);
    let num_stripes = ndevs * attr.dev_stripes;
    let data_stripes = attr.data_stripes(ndevs);
    debug_assert!(
        data_stripes >= 1,
        "every profile keeps one data stripe at devs_min"
    );
    let ds = u64::from(data_stripes.max(1));
    let mut capped = false;
    if stripe.saturating_mul(ds) > limits.max_chunk_size {
        let reduced =
            (limits.max_chunk_size / ds).div_ceil(CAPPED_STRIPE_ROUND) * CAPPED_STRIPE_ROUND;
        if reduced < stripe {
            stripe = reduced;
        }
        capped = true;
    }
    stripe = stripe.min(MAX_STRIPE_SIZE);
    stripe -= stripe % STRIPE_LEN;
    StripeDecision {
        ndevs,
        stripe_size: stripe,
        num_stripes,
        data_stripes,
        chunk_size: stripe * ds,
        capped,
    }
}
