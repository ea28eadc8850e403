//! Packing fixed-point codes into wide words and hex text (memory images,
//! stimulus files), element 0 in the least significant bits.

/// A bit vector built from fields, least significant first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bits {
    words: Vec<u64>,
    len: usize,
}

impl Bits {
    /// An empty vector.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the low `width` bits of `value` above the current bits.
    pub fn push(&mut self, value: u64, width: u32) {
        for b in 0..width as usize {
            let bit = (value >> b) & 1;
            let pos = self.len + b;
            if pos / 64 >= self.words.len() {
                self.words.push(0);
            }
            self.words[pos / 64] |= bit << (pos % 64);
        }
        self.len += width as usize;
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if there are no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `width` bits starting at bit `lo` (width <= 64).
    pub fn field(&self, lo: usize, width: u32) -> u64 {
        let mut v = 0u64;
        for b in 0..width as usize {
            let pos = lo + b;
            if pos < self.len && (self.words[pos / 64] >> (pos % 64)) & 1 == 1 {
                v |= 1 << b;
            }
        }
        v
    }

    /// Hex digits, most significant first, `ceil(len / 4)` of them.
    pub fn to_hex(&self) -> String {
        let digits = self.len.div_ceil(4).max(1);
        (0..digits)
            .rev()
            .map(|d| {
                let lo = d * 4;
                let w = (self.len.saturating_sub(lo)).min(4) as u32;
                char::from_digit(self.field(lo, w) as u32, 16).unwrap_or('0')
            })
            .collect()
    }

    /// Parses `len` bits from hex digits (most significant first).
    pub fn from_hex(hex: &str, len: usize) -> Option<Bits> {
        let mut b = Bits { words: vec![0; len.div_ceil(64).max(1)], len };
        for (i, c) in hex.trim().chars().rev().enumerate() {
            let d = c.to_digit(16)? as u64;
            for k in 0..4 {
                let pos = i * 4 + k;
                if (d >> k) & 1 == 1 {
                    if pos >= len {
                        return None;
                    }
                    b.words[pos / 64] |= 1 << (pos % 64);
                }
            }
        }
        Some(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_and_hex() {
        let mut b = Bits::new();
        b.push(0x5, 3); // 101
        b.push(0x1, 2); // 01 -> bits 3..4
        b.push(0xff, 4); // 1111 -> bits 5..8
        // bits 8..0 = 1111 01 101 = 0b1_1110_1101 = 0x1ed
        assert_eq!(b.len(), 9);
        assert_eq!(b.to_hex(), "1ed");
        assert_eq!(b.field(3, 2), 1);
        assert_eq!(Bits::from_hex("1ed", 9), Some(b));
        assert_eq!(Bits::from_hex("3ed", 9), None, "bit 9 set in a 9-bit field");
    }
}
