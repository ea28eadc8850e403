//! Parsers of the command line's numbers: every count has bounds, negative
//! numbers reach the parser (and get its message, not clap's "unexpected
//! argument"), and every message says what the option takes.

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;

/// Upper bound of counts of things in a model (layers' sizes, N, P, M).
pub const MAX_DIM: u64 = fptgen_sim::model::MAX_DIM as u64;

/// A parser of whole numbers from `lo` to `hi`, as `T`.
#[derive(Debug, Clone, Copy)]
pub struct Count<T> {
    lo: u64,
    hi: u64,
    _t: std::marker::PhantomData<T>,
}

/// Whole numbers from `lo` to `hi`.
pub fn count<T>(lo: u64, hi: u64) -> Count<T> {
    Count { lo, hi, _t: std::marker::PhantomData }
}

fn invalid(cmd: &clap::Command, arg: Option<&clap::Arg>, value: &str, why: String) -> clap::Error {
    let arg = arg.map(|a| format!(" for '{a}'")).unwrap_or_default();
    cmd.clone().error(ErrorKind::ValueValidation, format!("invalid value '{value}'{arg}: {why}"))
}

impl<T> TypedValueParser for Count<T>
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
{
    type Value = T;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &std::ffi::OsStr) -> Result<T, clap::Error> {
        let s = value.to_string_lossy();
        let why = || format!("it takes a whole number from {} to {}", self.lo, self.hi);
        let v: u64 = s.trim().parse().map_err(|_| invalid(cmd, arg, &s, why()))?;
        if v < self.lo || v > self.hi {
            return Err(invalid(cmd, arg, &s, why()));
        }
        T::try_from(v).map_err(|_| invalid(cmd, arg, &s, why()))
    }
}

/// A parser of seeds: any whole number from 0 to 2^64 - 1.
pub fn seed() -> Count<u64> {
    count(0, u64::MAX)
}

/// A parser of real numbers in `lo..=hi` (`lo_open`: `lo` itself excluded).
#[derive(Debug, Clone, Copy)]
pub struct Real {
    lo: f64,
    hi: f64,
    lo_open: bool,
    /// Values other than 0 must be multiples of this (0: any).
    step: f64,
}

/// Real numbers above 0 and at most `hi`.
pub fn positive_real(hi: f64) -> Real {
    Real { lo: 0.0, hi, lo_open: true, step: 0.0 }
}

/// Chances from 0 to 1 in steps of `step`.
pub fn chance(step: f64) -> Real {
    Real { lo: 0.0, hi: 1.0, lo_open: false, step }
}

impl TypedValueParser for Real {
    type Value = f64;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &std::ffi::OsStr) -> Result<f64, clap::Error> {
        let s = value.to_string_lossy();
        let range = if self.lo_open { format!("above {} and at most {}", self.lo, self.hi) } else { format!("from {} to {}", self.lo, self.hi) };
        let steps = if self.step > 0.0 { format!(", in steps of {}", self.step) } else { String::new() };
        let why = || format!("it takes a number {range}{steps}");
        let v: f64 = s.trim().parse().map_err(|_| invalid(cmd, arg, &s, why()))?;
        let below = if self.lo_open { v <= self.lo } else { v < self.lo };
        if !v.is_finite() || below || v > self.hi {
            return Err(invalid(cmd, arg, &s, why()));
        }
        if self.step > 0.0 {
            let k = (v / self.step).round();
            if (k * self.step - v).abs() > self.step * 1e-6 {
                let near = k * self.step;
                return Err(invalid(cmd, arg, &s, format!("{} (the nearest is {near})", why())));
            }
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse<P: TypedValueParser>(p: &P, s: &str) -> Result<P::Value, String> {
        let cmd = clap::Command::new("t");
        p.parse_ref(&cmd, None, std::ffi::OsStr::new(s)).map_err(|e| e.to_string())
    }

    #[test]
    fn counts_have_bounds_and_say_them() {
        let p = count::<usize>(1, 10);
        assert_eq!(parse(&p, "10"), Ok(10));
        for bad in ["0", "11", "-1", "1.5", "x", ""] {
            let e = parse(&p, bad).unwrap_err();
            assert!(e.contains("from 1 to 10"), "{bad}: {e}");
        }
        assert_eq!(parse(&seed(), &u64::MAX.to_string()), Ok(u64::MAX));
        assert!(parse(&seed(), "-1").unwrap_err().contains("from 0 to 18446744073709551615"));
    }

    #[test]
    fn reals_have_bounds_and_steps() {
        let r = chance(0.001);
        assert_eq!(parse(&r, "0.25"), Ok(0.25));
        assert_eq!(parse(&r, "0"), Ok(0.0));
        let e = parse(&r, "0.0004").unwrap_err();
        assert!(e.contains("steps of 0.001") && e.contains("nearest is 0"), "{e}");
        assert!(parse(&r, "-1").is_err() && parse(&r, "1.5").is_err() && parse(&r, "NaN").is_err());
        let p = positive_real(10.0);
        assert!(parse(&p, "0").is_err() && parse(&p, "-1").is_err() && parse(&p, "inf").is_err());
        assert_eq!(parse(&p, "0.002"), Ok(0.002));
    }
}
