//! The grid of a sweep: every population N with every block count P.

use std::fmt;

/// An axis of the grid, named as the `training:` key it replaces (and
/// `fptgen sweep`'s option).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Populations N.
    Population,
    /// Block counts P.
    Blocks,
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Axis::Population => "population",
            Axis::Blocks => "blocks",
        })
    }
}

/// Why a grid was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GridError {
    /// An axis lists a value twice.
    #[error("--{axis} lists {value} more than once")]
    Repeated {
        /// The axis.
        axis: Axis,
        /// The value listed twice.
        value: usize,
    },
}

/// Populations and block counts, each without repetitions, in the order
/// given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    population: Vec<usize>,
    blocks: Vec<usize>,
}

impl Grid {
    /// The grid of `population` by `blocks`; an error naming the axis if
    /// one lists a value twice.
    pub fn new(population: Vec<usize>, blocks: Vec<usize>) -> Result<Grid, GridError> {
        distinct(&population, Axis::Population)?;
        distinct(&blocks, Axis::Blocks)?;
        Ok(Grid { population, blocks })
    }

    /// The populations N.
    pub fn population(&self) -> &[usize] {
        &self.population
    }

    /// The block counts P.
    pub fn blocks(&self) -> &[usize] {
        &self.blocks
    }

    /// Every point (N, P): by N, then by P, in the order given.
    pub fn points(&self) -> Vec<(usize, usize)> {
        self.population.iter().flat_map(|&n| self.blocks.iter().map(move |&p| (n, p))).collect()
    }
}

/// An error naming `axis` if `values` lists a value twice.
fn distinct(values: &[usize], axis: Axis) -> Result<(), GridError> {
    for (i, &value) in values.iter().enumerate() {
        if values[..i].contains(&value) {
            return Err(GridError::Repeated { axis, value });
        }
    }
    Ok(())
}

/// Values separated by commas, as the command line lists them: `2,4,8`.
pub fn list(v: &[usize]) -> String {
    v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_run_over_blocks_within_each_population() {
        let g = Grid::new(vec![4, 2], vec![1, 10, 100]).expect("distinct");
        assert_eq!(g.points(), [(4, 1), (4, 10), (4, 100), (2, 1), (2, 10), (2, 100)]);
        assert_eq!(g.population(), [4, 2]);
        assert_eq!(g.blocks(), [1, 10, 100]);
    }

    #[test]
    fn one_by_one_grid_has_one_point() {
        assert_eq!(Grid::new(vec![8], vec![3]).expect("distinct").points(), [(8, 3)]);
    }

    #[test]
    fn a_repeated_value_is_refused_naming_its_axis() {
        let e = Grid::new(vec![2, 4, 2], vec![1]).expect_err("2 twice");
        assert_eq!(e, GridError::Repeated { axis: Axis::Population, value: 2 });
        assert_eq!(e.to_string(), "--population lists 2 more than once");
        let e = Grid::new(vec![2], vec![3, 3]).expect_err("3 twice");
        assert_eq!(e.to_string(), "--blocks lists 3 more than once");
    }

    #[test]
    fn lists_are_comma_separated() {
        assert_eq!(list(&[2, 30, 400]), "2,30,400");
        assert_eq!(list(&[7]), "7");
        assert_eq!(list(&[]), "");
    }
}
