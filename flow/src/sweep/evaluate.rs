//! What a sweep found over its grid ([`Evaluation`]), and how a point's
//! error is reported ([`chain`]).

use super::results::PointResult;

/// What a sweep found.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Every point, in the grid's order.
    pub results: Vec<PointResult>,
    /// Distinct designs among the points that could be planned.
    pub designs: usize,
    /// Estimates made by running yosys.
    pub yosys_runs: usize,
    /// Estimates read from the cache.
    pub cache_hits: usize,
}

impl Evaluation {
    /// How many points failed.
    pub fn failed(&self) -> usize {
        self.results.iter().filter(|r| r.error.is_some()).count()
    }
}

/// An error with its causes, as `error: cause: cause`.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s += &format!(": {c}");
        cause = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] Inner);

    #[derive(Debug, thiserror::Error)]
    #[error("inner")]
    struct Inner;

    #[test]
    fn an_error_chain_joins_its_causes() {
        assert_eq!(chain(&Outer(Inner)), "outer: inner");
        assert_eq!(chain(&Inner), "inner");
    }
}
