//! A 1x1 `Conv` as fptgen's 3x3 `conv2d` with `same` padding whose kernel
//! is zero except at the centre (seed 004: "the 1x1 convolutions are
//! padded to 3x3 with zeros").
//!
//! Why it is exact: the 1x1 convolution (no padding) computes output
//! `(oy, ox, f) = b[f] + Σ_c w[f][c] · x[s·oy][s·ox][c]` on
//! `floor((n - 1) / s) + 1 = ceil(n / s)` pixels per dimension. fptgen's 3x3
//! `same` convolution has `ceil(n / s)` pixels too, and its centre tap reads
//! `x[s·oy + 1 - pad_top]`, TensorFlow's `pad_top = floor(pad / 2)` with
//! `pad = (out - 1)·s + 3 - n`: at stride 1 `pad = 2`, `pad_top = 1`; at
//! stride 2 on an odd size `pad = 2`, `pad_top = 1` again; so the centre
//! reads `x[s·oy]`. The other eight taps have weight 0 and add products 0,
//! which leave an exact accumulator unchanged. At stride 2 on an even size
//! `pad_top = 0`: the centre would read the odd pixels, so that case is
//! refused. The accumulator is sized for all `9·c` products (so it stays
//! exact when the padded kernel is retrained).

/// Checks that a 1x1 convolution of an `h`x`w` image with stride
/// `stride` and ONNX pads `pads` is a 3x3 `same` convolution's centre;
/// the reason when not.
pub fn check(h: usize, w: usize, stride: usize, pads: &[i64]) -> Result<(), String> {
    if pads.iter().any(|&p| p != 0) {
        return Err(format!("a 1x1 convolution with pads {pads:?}: only an unpadded one is lowered to a 3x3 'same' convolution"));
    }
    if stride == 2 && (h % 2 == 0 || w % 2 == 0) {
        return Err(format!(
            "a stride-2 1x1 convolution of a {h}x{w} image: its 3x3 'same' lowering pads an even size [0, 1] (TensorFlow), so its centre tap would read the odd pixels"
        ));
    }
    Ok(())
}

/// The kernel `[filters · channels]` of 1x1 codes (OIHW, `H = W = 1`) as
/// OIHW 3x3 codes, zero except the centre.
pub fn pad_kernel(codes: &[i128]) -> Vec<i128> {
    codes.iter().flat_map(|&c| [0, 0, 0, 0, c, 0, 0, 0, 0]).collect()
}

#[cfg(test)]
mod tests {
    use super::{check, pad_kernel};

    #[test]
    fn the_kernel_is_zero_but_the_centre_and_even_stride_two_is_refused() {
        assert_eq!(pad_kernel(&[5, -3]), vec![0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, -3, 0, 0, 0, 0]);
        assert!(check(6, 6, 1, &[0, 0, 0, 0]).is_ok());
        assert!(check(7, 5, 2, &[]).is_ok());
        assert!(check(6, 5, 2, &[]).unwrap_err().contains("odd pixels"));
        assert!(check(5, 5, 1, &[1, 1, 1, 1]).unwrap_err().contains("pads [1, 1, 1, 1]"));
    }
}
