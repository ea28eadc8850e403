//! The fitness signal of ES (`training: fitness:`, docs/training.md, "The
//! fitness signal"): how a group's N member losses become the signed,
//! quantized signals that scale the members' noise into the gradient
//! accumulators.
//!
//! | fitness | signal of | `s` | scales |
//! |---|---|---|---|
//! | `antithetic` | each pair `(m - 1, m)`, `m` odd | `L_{m-1} - L_m` | `e_{m-1}` |
//! | `baseline` | each member | `L_m - L_base` | `e_m` |
//! | `plain` | each member | `L_m` | `e_m` |
//! | `ranks` | each pair `(m - 1, m)`, `m` odd | `r_{m-1} - r_m` | `e_{m-1}` |
//!
//! with `r_m = #{k : L_k < L_m} - #{k : L_k > L_m}` over the whole group
//! ([`centered_ranks`]). Each signal is quantized (`Q`, [`quantize_signal`])
//! before it scales the noise.

use crate::model::{Fitness, LossQuantization};

use super::po2::quantize_signal;

/// Twice each member's centered rank: `r_m = #{k : L_k < L_m} -
/// #{k : L_k > L_m}`, the number of members that did better minus the
/// number that did worse.
///
/// This is `2 * rank_m - (N - 1)` with `rank_m` the member's position
/// (from 0) in the losses sorted ascending, tied members sharing the mean
/// of their positions (the centered rank utility of Salimans et al.,
/// `rank / (N - 1) - 1/2`, scaled by `2 (N - 1)` to an integer). So `r_m`
/// lies in `[-(N - 1), N - 1]`, the `r_m` sum to 0, equal losses get equal
/// signals, and a pair's difference `r_{m-1} - r_m` lies in `[-2 (N - 1),
/// 2 (N - 1)]`.
///
/// In hardware it is a sum of comparisons, `r_m = sum_k sign(L_m - L_k)`;
/// here the losses are sorted once (`O(N log N)`).
pub fn centered_ranks(losses: &[u32]) -> Vec<i64> {
    let mut sorted = losses.to_vec();
    sorted.sort_unstable();
    let n = sorted.len() as i64;
    losses
        .iter()
        .map(|l| {
            let less = sorted.partition_point(|x| x < l) as i64;
            let greater = n - sorted.partition_point(|x| x <= l) as i64;
            less - greater
        })
        .collect()
}

/// The group's accumulator terms, in the order the blocks add them: for
/// each signal, `(Q(s), k)`, to be multiplied by member `k`'s noise.
/// `losses` are the N member losses in order; `baseline` is `L_base`
/// (used by [`Fitness::Baseline`] only; a missing one counts as each
/// member's own loss, a zero signal).
pub fn terms(fitness: Fitness, quantization: LossQuantization, losses: &[u32], baseline: Option<u32>) -> Vec<(i128, usize)> {
    let q = |s: i64| i128::from(quantize_signal(s, quantization));
    let pairs = |signal: &[i64]| -> Vec<(i128, usize)> { (1..signal.len()).step_by(2).map(|m| (q(signal[m - 1] - signal[m]), m - 1)).collect() };
    match fitness {
        Fitness::Antithetic => pairs(&losses.iter().map(|&l| i64::from(l)).collect::<Vec<_>>()),
        Fitness::Ranks => pairs(&centered_ranks(losses)),
        Fitness::Baseline => losses.iter().enumerate().map(|(m, &l)| (q(i64::from(l) - i64::from(baseline.unwrap_or(l))), m)).collect(),
        Fitness::Plain => losses.iter().enumerate().map(|(m, &l)| (q(i64::from(l)), m)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-worked: losses 5, 3, 5, 9 (N = 4). Member 0 (5): one better
    /// (3), one worse (9), one tie: 1 - 1 = 0. Member 1 (3): 0 - 3 = -3.
    /// Member 2: 0. Member 3 (9): 3 - 0 = 3.
    #[test]
    fn ranks_by_hand() {
        assert_eq!(centered_ranks(&[5, 3, 5, 9]), vec![0, -3, 0, 3]);
        assert_eq!(centered_ranks(&[7]), vec![0]);
        assert_eq!(centered_ranks(&[]), Vec::<i64>::new());
        assert_eq!(centered_ranks(&[u32::MAX, 0]), vec![1, -1]);
        // Pairs (0, 1) and (2, 3): r0 - r1 = 3, r2 - r3 = -3.
        assert_eq!(terms(Fitness::Ranks, LossQuantization::Exact, &[5, 3, 5, 9], None), vec![(3, 0), (-3, 2)]);
        // po2 keeps the leading one: 3 -> 2.
        assert_eq!(terms(Fitness::Ranks, LossQuantization::Po2, &[5, 3, 5, 9], None), vec![(2, 0), (-2, 2)]);
        assert_eq!(terms(Fitness::Antithetic, LossQuantization::Exact, &[5, 3, 5, 9], None), vec![(2, 0), (-4, 2)]);
        assert_eq!(terms(Fitness::Baseline, LossQuantization::Exact, &[5, 3], Some(4)), vec![(1, 0), (-1, 1)]);
        assert_eq!(terms(Fitness::Plain, LossQuantization::Exact, &[5, 3], None), vec![(5, 0), (3, 1)]);
    }
}
