//! A `MaxPool` other than fptgen's 2x2 stride 2 (seed 004: "2x2
//! max-pooling of stride 2: we use it to replace all of the other
//! max-pooling layers").
//!
//! - `k`x`k` with stride `k`, `k = 2^m`, unpadded: **exactly** `m` 2x2
//!   stride-2 pools (an exact rewrite, always applied). A `k`x`k` window at
//!   `(k·i, k·j)` is the union of the four `k/2`x`k/2` windows at
//!   `(k/2)·(2i + a, 2j + b)`, `a, b` in `{0, 1}`, and the maximum of a
//!   union is the maximum of the maxima; the sizes agree too:
//!   `floor((n - k) / k) + 1 = floor(n / k) = floor(floor(n / 2) / 2 ...)`.
//! - 3x3 stride 2 (ResNet's stem pool): **approximately** one 2x2 stride-2
//!   pool, with `--lower approximate` only, when the output sizes agree
//!   (pads 1 on an even size, or no pads on an odd size) and the pool
//!   reads the last layer of an approximated block, which then takes the
//!   pool in (seed 004's `block1`: the three 3x3 convolutions and the 2x2
//!   pool learn from the 7x7 convolution and the 3x3 pool), so that the
//!   distillation absorbs the change; a pool alone has no parameters to
//!   retrain.

/// What a `MaxPool` becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rewrite {
    /// This many 2x2 stride-2 pools, exactly (1: the pool is fptgen's own).
    Exact(usize),
    /// One 2x2 stride-2 pool in place of a 3x3 stride-2 one.
    Approximate,
}

/// The rewrite of a `MaxPool` of an `h`x`w` image with these attributes;
/// the reason when there is none.
pub fn rewrite(kernel: &[i64], strides: &[i64], pads: &[i64], ceil_mode: i64, (h, w): (usize, usize)) -> Result<Rewrite, String> {
    let none = || {
        format!(
            "a {kernel:?} pool with strides {strides:?}, pads {pads:?} and ceil_mode {ceil_mode} on a {h}x{w} image: imported are 2x2 stride 2, kxk stride k for k a power of two (exactly that many 2x2 pools), and with --lower approximate a 3x3 stride-2 pool right after an approximated block (pads 1 on an even size, 0 on an odd one)"
        )
    };
    if ceil_mode != 0 || pads.len() != 4 {
        return Err(none());
    }
    let unpadded = pads.iter().all(|&p| p == 0);
    match (kernel, strides) {
        ([k, k2], [s, s2]) if k == k2 && k == s && s == s2 && *k >= 2 && (*k as u64).is_power_of_two() && unpadded => {
            let k = *k as usize;
            if h < k || w < k {
                return Err(none());
            }
            Ok(Rewrite::Exact(k.trailing_zeros() as usize))
        }
        ([3, 3], [2, 2]) => {
            let padded = pads.iter().all(|&p| p == 1);
            let fits = (padded && h % 2 == 0 && w % 2 == 0) || (unpadded && h % 2 == 1 && w % 2 == 1 && h >= 3 && w >= 3);
            if fits {
                Ok(Rewrite::Approximate)
            } else {
                Err(none())
            }
        }
        _ => Err(none()),
    }
}

/// The rewrite in words, for errors and the distillation record.
pub const APPROXIMATE: &str = "3x3 stride-2 max-pool as a 2x2 stride-2 max-pool (seed 004)";

#[cfg(test)]
mod tests {
    use super::{rewrite, Rewrite};

    #[test]
    fn powers_of_two_are_exact_and_3x3_stride_2_only_where_the_sizes_agree() {
        assert_eq!(rewrite(&[2, 2], &[2, 2], &[0, 0, 0, 0], 0, (5, 4)), Ok(Rewrite::Exact(1)));
        assert_eq!(rewrite(&[4, 4], &[4, 4], &[0, 0, 0, 0], 0, (8, 9)), Ok(Rewrite::Exact(2)));
        assert_eq!(rewrite(&[3, 3], &[2, 2], &[1, 1, 1, 1], 0, (8, 8)), Ok(Rewrite::Approximate));
        assert_eq!(rewrite(&[3, 3], &[2, 2], &[0, 0, 0, 0], 0, (7, 9)), Ok(Rewrite::Approximate));
        // 3x3/2 unpadded on 8x8 gives 3x3, a 2x2/2 pool 4x4.
        assert!(rewrite(&[3, 3], &[2, 2], &[0, 0, 0, 0], 0, (8, 8)).is_err());
        assert!(rewrite(&[4, 4], &[2, 2], &[0, 0, 0, 0], 0, (8, 8)).is_err());
        assert!(rewrite(&[2, 2], &[2, 2], &[0, 0, 0, 0], 1, (8, 8)).is_err());
    }
}
