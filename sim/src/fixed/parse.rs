//! Parsing of format strings ([`std::str::FromStr`] for [`Format`]).
//!
//! Accepted syntaxes (keywords are case-sensitive, as hls4ml writes them;
//! whitespace is allowed between any two tokens):
//!
//! | syntax | format |
//! |---|---|
//! | `ap_fixed<W,I>` | `ap_fixed<W,I,AP_TRN,AP_WRAP>` |
//! | `ap_fixed<W,I,Q>` | `ap_fixed<W,I,Q,AP_WRAP>` |
//! | `ap_fixed<W,I,Q,O>` | itself |
//! | `ap_ufixed<...>` | the same, unsigned |
//! | `ap_int<W>` | `ap_fixed<W,W,AP_TRN,AP_WRAP>` |
//! | `ap_uint<W>` | `ap_ufixed<W,W,AP_TRN,AP_WRAP>` |
//! | `quantized_bits(b,i)` | `ap_fixed<b,i+1,AP_RND_CONV,AP_SAT>` |
//! | `quantized_bits(b)` | `quantized_bits(b,0)` |
//! | `quantized_relu(b,i)` | `ap_ufixed<b,i,AP_RND_CONV,AP_SAT>` |
//! | `quantized_relu(b)` | `quantized_relu(b,0)` |
//!
//! The QKeras forms also take the keyword argument `alpha=1` (also written
//! `alpha=1.0`) after the positional ones; any other `alpha` is rejected,
//! because only `alpha=1` maps to a fixed-point format (other values scale
//! the weights by a factor that is not a power of two or is computed at
//! training time). No other keyword is accepted. `W`/`b` must be in
//! `1..=64`, `I` in `-1024..=1024`; the fifth `ap_fixed` argument
//! (saturation bits `N`) and `AP_WRAP_SM` are rejected as not supported.
//!
//! Every error carries the byte offset of the offending token.

use std::str::FromStr;

use super::error::FormatError;
use super::format::{int_bits_problem, width_problem, Format};
use super::modes::{Overflow, Quant};

/// What the parser accepts, for error messages.
const EXPECTED: &str = "expected ap_fixed<W,I[,Q[,O]]>, ap_ufixed<W,I[,Q[,O]]>, ap_int<W>, \
                        ap_uint<W>, quantized_bits(b[,i]) or quantized_relu(b[,i])";

/// The punctuation characters; everything else that is not whitespace
/// belongs to a word.
const PUNCT: &[char] = &['<', '>', '(', ')', ',', '='];

#[derive(Clone, Copy, Debug)]
struct Tok<'a> {
    text: &'a str,
    offset: usize,
}

impl Tok<'_> {
    fn is_punct(&self, c: char) -> bool {
        self.text.len() == c.len_utf8() && self.text.starts_with(c)
    }
}

struct Parser<'a> {
    input: &'a str,
    toks: Vec<Tok<'a>>,
    pos: usize,
}

fn tokenize(input: &str) -> Vec<Tok<'_>> {
    let mut toks = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in input.char_indices() {
        if c.is_whitespace() || PUNCT.contains(&c) {
            if let Some(s) = start.take() {
                toks.push(Tok {
                    text: &input[s..i],
                    offset: s,
                });
            }
            if !c.is_whitespace() {
                toks.push(Tok {
                    text: &input[i..i + c.len_utf8()],
                    offset: i,
                });
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        toks.push(Tok {
            text: &input[s..],
            offset: s,
        });
    }
    toks
}

/// How a token is shown in messages.
fn shown(t: Option<Tok<'_>>) -> String {
    match t {
        Some(t) => format!("`{}`", t.text),
        None => "end of input".to_string(),
    }
}

fn quant_list() -> String {
    Quant::ALL.map(Quant::name).join(", ")
}

fn overflow_list() -> String {
    Overflow::ALL.map(Overflow::name).join(", ")
}

impl<'a> Parser<'a> {
    fn err(&self, offset: usize, message: String) -> FormatError {
        FormatError::at(self.input, offset, message)
    }

    fn peek(&self) -> Option<Tok<'a>> {
        self.toks.get(self.pos).copied()
    }

    /// Offset of the next token, or the end of the input.
    fn here(&self) -> usize {
        self.peek().map_or(self.input.len(), |t| t.offset)
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.peek().is_some_and(|t| t.is_punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: char, context: &str) -> Result<(), FormatError> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(self.err(
                self.here(),
                format!("expected `{c}` {context}, found {}", shown(self.peek())),
            ))
        }
    }

    /// An integer literal (`-?[0-9]+`, optional `+`), named `what` in errors.
    fn int(&mut self, what: &str) -> Result<(i64, usize), FormatError> {
        let t = self.peek();
        let Some(tok) = t.filter(|t| !PUNCT.iter().any(|&c| t.is_punct(c))) else {
            return Err(self.err(
                self.here(),
                format!("expected an integer for {what}, found {}", shown(t)),
            ));
        };
        let digits = tok.text.strip_prefix(['-', '+']).unwrap_or(tok.text);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.err(
                tok.offset,
                format!("expected an integer for {what}, found `{}`", tok.text),
            ));
        }
        let value = tok.text.parse::<i64>().map_err(|_| {
            self.err(
                tok.offset,
                format!("integer `{}` for {what} is too large", tok.text),
            )
        })?;
        self.pos += 1;
        Ok((value, tok.offset))
    }

    /// A word that is not punctuation, named `what` in errors.
    fn word(&mut self, what: &str) -> Result<Tok<'a>, FormatError> {
        match self.peek() {
            Some(t) if !PUNCT.iter().any(|&c| t.is_punct(c)) => {
                self.pos += 1;
                Ok(t)
            }
            other => Err(self.err(
                self.here(),
                format!("expected {what}, found {}", shown(other)),
            )),
        }
    }

    fn end(&mut self) -> Result<(), FormatError> {
        match self.peek() {
            None => Ok(()),
            Some(t) => Err(self.err(
                t.offset,
                format!("unexpected `{}` after the end of the format", t.text),
            )),
        }
    }

    fn width(&self, w: i64, offset: usize) -> Result<u32, FormatError> {
        match width_problem(w) {
            Some(msg) => Err(self.err(offset, msg)),
            None => Ok(w as u32), // 1..=64
        }
    }

    fn int_bits(&self, i: i64, offset: usize, note: &str) -> Result<i32, FormatError> {
        match int_bits_problem(i) {
            Some(msg) => Err(self.err(offset, format!("{msg}{note}"))),
            None => Ok(i as i32), // -1024..=1024
        }
    }

    fn format(&mut self) -> Result<Format, FormatError> {
        let head = match self.peek() {
            Some(t) if !PUNCT.iter().any(|&c| t.is_punct(c)) => t,
            other => {
                let found = match other {
                    Some(t) => format!("found `{}`", t.text),
                    None => "found an empty string".to_string(),
                };
                return Err(self.err(self.here(), format!("{EXPECTED}; {found}")));
            }
        };
        self.pos += 1;
        let f = match head.text {
            "ap_fixed" => self.ap_fixed(true, head.text)?,
            "ap_ufixed" => self.ap_fixed(false, head.text)?,
            "ap_int" => self.ap_int(true, head.text)?,
            "ap_uint" => self.ap_int(false, head.text)?,
            "quantized_bits" => self.qkeras(true, head.text)?,
            "quantized_relu" => self.qkeras(false, head.text)?,
            other => {
                return Err(self.err(head.offset, format!("{EXPECTED}; found `{other}`")));
            }
        };
        self.end()?;
        Ok(f)
    }

    fn ap_fixed(&mut self, signed: bool, name: &str) -> Result<Format, FormatError> {
        self.expect_punct('<', &format!("after {name}"))?;
        let (w, w_off) = self.int("the width W")?;
        let width = self.width(w, w_off)?;
        self.expect_punct(',', "after the width W (the integer bits I are required)")?;
        let (i, i_off) = self.int("the integer bits I")?;
        let int_bits = self.int_bits(i, i_off, "")?;
        let mut quant = Quant::Trn;
        let mut overflow = Overflow::Wrap;
        if self.eat_punct(',') {
            let q = self.word("a quantization mode")?;
            quant = Quant::from_name(q.text).ok_or_else(|| {
                let hint = if Overflow::from_name(q.text).is_some() || q.text == "AP_WRAP_SM" {
                    format!(" ({} is an overflow mode; the quantization mode comes first)", q.text)
                } else {
                    String::new()
                };
                self.err(
                    q.offset,
                    format!(
                        "unknown quantization mode {}; expected one of {}{hint}",
                        q.text,
                        quant_list()
                    ),
                )
            })?;
            if self.eat_punct(',') {
                let o = self.word("an overflow mode")?;
                overflow = match Overflow::from_name(o.text) {
                    Some(o) => o,
                    None if o.text == "AP_WRAP_SM" => {
                        return Err(self.err(
                            o.offset,
                            format!(
                                "overflow mode AP_WRAP_SM is not supported; expected one of {}",
                                overflow_list()
                            ),
                        ));
                    }
                    None => {
                        return Err(self.err(
                            o.offset,
                            format!(
                                "unknown overflow mode {}; expected one of {}",
                                o.text,
                                overflow_list()
                            ),
                        ));
                    }
                };
                if self.eat_punct(',') {
                    return Err(self.err(
                        self.here(),
                        "the 5th template argument (N, saturation bits) is not supported; \
                         expected at most ap_fixed<W,I,Q,O>"
                            .to_string(),
                    ));
                }
            }
        }
        self.expect_punct('>', &format!("to close {name}<...>"))?;
        Format::new(signed, width, int_bits, quant, overflow)
            .map_err(|e| self.err(w_off, e.message().to_string()))
    }

    fn ap_int(&mut self, signed: bool, name: &str) -> Result<Format, FormatError> {
        self.expect_punct('<', &format!("after {name}"))?;
        let (w, w_off) = self.int("the width W")?;
        let width = self.width(w, w_off)?;
        self.expect_punct('>', &format!("to close {name}<W> (it takes only the width)"))?;
        Format::new(signed, width, width as i32, Quant::Trn, Overflow::Wrap)
            .map_err(|e| self.err(w_off, e.message().to_string()))
    }

    fn qkeras(&mut self, signed: bool, name: &str) -> Result<Format, FormatError> {
        let usage = format!("{name}(b[,i][,alpha=1])");
        self.expect_punct('(', &format!("after {name}"))?;
        let (b, b_off) = self.int("the bits b")?;
        let width = self.width(b, b_off)?;
        let mut int_part: (i64, usize) = (0, b_off);
        let mut positional = 1;
        let mut seen_keyword = false;
        while self.eat_punct(',') {
            if self.peek().is_some_and(|t| t.is_punct(')')) {
                break; // a trailing comma, as Python allows
            }
            // A keyword argument is a word followed by `=`.
            let is_keyword = self.toks.get(self.pos + 1).is_some_and(|t| t.is_punct('='));
            if is_keyword {
                let kw = self.word("a keyword argument")?;
                self.pos += 1; // the `=`
                if kw.text != "alpha" {
                    return Err(self.err(
                        kw.offset,
                        format!(
                            "unsupported keyword argument `{}`; only alpha=1 is accepted in {usage}",
                            kw.text
                        ),
                    ));
                }
                let v = self.word("a value for alpha")?;
                if v.text.parse::<f64>().ok() != Some(1.0) {
                    return Err(self.err(
                        v.offset,
                        format!(
                            "alpha={} is not supported: only alpha=1 maps to a fixed-point format",
                            v.text
                        ),
                    ));
                }
                seen_keyword = true;
            } else {
                let off = self.here();
                if seen_keyword {
                    return Err(self.err(
                        off,
                        format!("positional argument after a keyword argument; expected {usage}"),
                    ));
                }
                if positional >= 2 {
                    return Err(self.err(
                        off,
                        format!("too many positional arguments; expected {usage}"),
                    ));
                }
                int_part = self.int("the integer bits i")?;
                positional += 1;
            }
        }
        self.expect_punct(')', &format!("to close {usage}"))?;
        let (i, i_off) = int_part;
        let int_bits = if signed {
            // I = i + 1 (the sign bit); i is an i64 from the parser, far
            // from overflow after the range check below.
            let i1 = i.saturating_add(1);
            self.int_bits(i1, i_off, &format!(" ({name}(b, i) has I = i + 1 = {i1})"))?
        } else {
            self.int_bits(i, i_off, "")?
        };
        Format::new(signed, width, int_bits, Quant::RndConv, Overflow::Sat)
            .map_err(|e| self.err(b_off, e.message().to_string()))
    }
}

impl FromStr for Format {
    type Err = FormatError;

    /// Parse any of the syntaxes listed in the docs of the
    /// [`fixed`](crate::fixed) module (and `docs/numerics.md`).
    fn from_str(s: &str) -> Result<Format, FormatError> {
        let mut p = Parser {
            input: s,
            toks: tokenize(s),
            pos: 0,
        };
        p.format()
    }
}
