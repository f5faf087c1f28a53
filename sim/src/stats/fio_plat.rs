//! fio's latency histogram buckets (`io_u_plat`): 64 buckets a power of
//! two above 128 ns, 1856 in all, exact below 128 ns. `json+` lists a
//! latency's non-empty buckets by their representative value, which
//! `fio_jsonplus_clat2csv` reads back.

/// Bits of a value kept exactly in a bucket group (`FIO_IO_U_PLAT_BITS`).
const PLAT_BITS: u32 = 6;
/// Buckets per group (`FIO_IO_U_PLAT_VAL`).
const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// Buckets in all (`FIO_IO_U_PLAT_NR`: 29 groups).
pub const PLAT_NR: usize = 29 * PLAT_VAL as usize;

/// The bucket of a latency of `ns` (fio's `plat_val_to_idx`).
pub fn plat_index(ns: u64) -> usize {
    let msb = if ns == 0 { 0 } else { 63 - ns.leading_zeros() };
    if msb <= PLAT_BITS {
        return ns as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) as usize) << PLAT_BITS;
    let offset = ((PLAT_VAL - 1) & (ns >> error_bits)) as usize;
    (base + offset).min(PLAT_NR - 1)
}

/// The value fio shows for bucket `idx`: its midpoint, rounded down
/// (fio's `plat_idx_to_val`).
pub fn plat_value(idx: usize) -> u64 {
    if idx < (PLAT_VAL << 1) as usize {
        return idx as u64;
    }
    let error_bits = (idx >> PLAT_BITS) as u32 - 1;
    let base = 1u64 << (error_bits + PLAT_BITS);
    let k = (idx % PLAT_VAL as usize) as u64;
    // base + (k + 0.5) * 2^error_bits, truncated as fio's double is.
    base + (k << error_bits) + ((1u64 << error_bits) >> 1)
}

/// `(value, count)` of each non-empty bucket, ascending, from
/// `(latency ns, count)` pairs in any order.
pub fn plat_bins(samples: impl Iterator<Item = (u64, u64)>) -> Vec<(u64, u64)> {
    let mut bins: Vec<(usize, u64)> = Vec::new();
    for (ns, n) in samples {
        let idx = plat_index(ns);
        match bins.binary_search_by_key(&idx, |b| b.0) {
            Ok(at) => bins[at].1 += n,
            Err(at) => bins.insert(at, (idx, n)),
        }
    }
    bins.into_iter().map(|(i, n)| (plat_value(i), n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_their_own_bucket() {
        for v in 0..128 {
            assert_eq!(plat_index(v), v as usize);
            assert_eq!(plat_value(v as usize), v);
        }
    }

    #[test]
    fn a_bucket_holds_its_value_and_groups_have_64_buckets() {
        // 128..256 is one group of 64 buckets 2 ns wide.
        assert_eq!(plat_index(128), 128);
        assert_eq!(plat_index(129), 128);
        assert_eq!(plat_index(130), 129);
        assert_eq!(plat_value(128), 129);
        // fio's JSON+ of the null engine's run on this machine shows a
        // bucket 5664 for latencies near 5.6 us: 4096 + 24 * 64 + 32.
        assert_eq!(plat_value(plat_index(5_688)), 5_664);
        for idx in 128..PLAT_NR - 1 {
            assert_eq!(plat_index(plat_value(idx)), idx, "bucket {idx}");
            assert!(plat_value(idx + 1) > plat_value(idx));
        }
        assert_eq!(plat_index(u64::MAX), PLAT_NR - 1);
    }

    #[test]
    fn bins_sum_their_counts_in_value_order() {
        let b = plat_bins([(5_688, 2), (10, 1), (5_690, 3)].into_iter());
        assert_eq!(b, vec![(10, 1), (5_664, 5)]);
    }
}
