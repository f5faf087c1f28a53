//! `latency`: the copy whose device has the lowest average read wait
//! since boot (Anand Jain's patches, 2020-2021 and October 2024; not
//! merged).

use super::{ReadPolicy, ReadRequest};

/// Average read wait of a device, ns: `read_wait_ns / read_ios` when both
/// are non-zero and the wait is at least the count, else 0. A device
/// without history therefore scores 0, the best possible score.
pub const fn latency_avg(read_ios: u64, read_wait_ns: u64) -> u64 {
    if read_ios != 0 && read_wait_ns != 0 && read_wait_ns >= read_ios {
        read_wait_ns / read_ios
    } else {
        0
    }
}

/// Which scan the policy uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LatencyForm {
    /// 2024 v2: start from `u64::MAX`, replace on strictly lower: the
    /// lowest average wins, lowest index on ties, so a device without
    /// history is always chosen (a probe).
    #[default]
    V2024,
    /// 2021 (v1-v4): start from 0 and replace whenever the best so far is
    /// 0 or the candidate is strictly lower. A zero-scoring copy is
    /// therefore replaced by the next one in the list: a device without
    /// history wins only as the last copy in the range.
    V2021,
}

/// The latency policy. Statistics are cumulative and never reset, so one
/// slow spell keeps a device out of favour for a long time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Latency {
    /// Scan form.
    pub form: LatencyForm,
}

impl ReadPolicy for Latency {
    fn name(&self) -> &'static str {
        "latency"
    }

    /// Spreads reads to the copy waited on least, which grows where reads go.
    fn balances(&self) -> bool {
        true
    }

    fn preferred(&mut self, req: &ReadRequest<'_>) -> usize {
        let m = req.mirrors();
        let mut best = req.first();
        match self.form {
            LatencyForm::V2024 => {
                let mut best_avg = u64::MAX;
                for i in req.range() {
                    let avg = latency_avg(m[i].read_ios, m[i].read_wait_ns);
                    if avg < best_avg {
                        best_avg = avg;
                        best = i;
                    }
                }
            }
            LatencyForm::V2021 => {
                let mut best_avg = 0;
                for i in req.range() {
                    let avg = latency_avg(m[i].read_ios, m[i].read_wait_ns);
                    if best_avg == 0 || avg < best_avg {
                        best_avg = avg;
                        best = i;
                    }
                }
            }
        }
        best
    }
}
