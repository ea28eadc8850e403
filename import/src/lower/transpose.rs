//! A `Transpose` of 2-D weights (a `Quant` of a constant, or a constant)
//! read by a `MatMul`: the weights transposed at import.
//!
//! Brevitas exports a `QuantLinear` without a bias as `MatMul(x,
//! Transpose(Quant(W)))` (torch's `linear` without a bias, with `W` as
//! `[outputs, inputs]`), where a `QuantLinear` with a bias becomes a `Gemm`
//! with `transB` 1. ONNX's `Transpose` with `perm` `[1, 0]` (or no `perm`:
//! the dimensions reversed) moves element `(i, j)` to `(j, i)` and changes
//! no value, so the transposed codes in the `Quant`'s format are the
//! `MatMul`'s weights exactly: the same as a `Gemm` with `transB` 1 reading
//! `W`. A `Transpose` of other ranks or permutations is not a layer's
//! weights and stays refused.

use super::super::onnx::NodeProto;

/// Checks that `node` (ONNX `Transpose`) swaps the two dimensions of
/// weights of shape `shape`; the reason when not.
pub fn check(node: &NodeProto, shape: &[usize]) -> Result<(), String> {
    let perm = node.attribute.iter().find(|a| a.name == "perm").map(|a| a.ints.clone());
    if shape.len() != 2 {
        return Err(format!("a Transpose of weights of shape {shape:?}: only 2-D weights are transposed"));
    }
    match perm.as_deref() {
        None | Some([1, 0]) => Ok(()),
        Some(p) => Err(format!("a Transpose with perm {p:?} of 2-D weights: only [1, 0] swaps them")),
    }
}

/// The `[r, c]` codes (C order) transposed to `[c, r]`.
pub fn transpose(codes: &[i128], (r, c): (usize, usize)) -> Vec<i128> {
    (0..r * c).map(|j| codes[(j % r) * c + j / r]).collect()
}

#[cfg(test)]
mod tests {
    use super::super::super::onnx::{AttributeProto, NodeProto};
    use super::{check, transpose};

    #[test]
    fn rows_become_columns_and_other_permutations_are_refused() {
        // [[1, 2, 3], [4, 5, 6]] -> [[1, 4], [2, 5], [3, 6]].
        assert_eq!(transpose(&[1, 2, 3, 4, 5, 6], (2, 3)), vec![1, 4, 2, 5, 3, 6]);
        let mut node = NodeProto { op_type: "Transpose".into(), ..Default::default() };
        assert!(check(&node, &[2, 3]).is_ok());
        node.attribute.push(AttributeProto { name: "perm".into(), ints: vec![1, 0], ..Default::default() });
        assert!(check(&node, &[2, 3]).is_ok());
        assert!(check(&node, &[2, 3, 4]).unwrap_err().contains("only 2-D"));
        node.attribute[0].ints = vec![0, 1];
        assert!(check(&node, &[2, 3]).unwrap_err().contains("perm [0, 1]"));
    }
}
