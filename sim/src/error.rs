//! Errors that point at the user's input: a file and a line/column, or a
//! tensor and an index.
//!
//! Every error fptgen reports about bad input is one of these values; none of
//! them is ever a panic. Their `Display` form is the message the CLI prints.

use std::fmt;
use std::path::{Path, PathBuf};

/// A 1-based line and column in a text file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    /// 1-based line number.
    pub line: u64,
    /// 1-based column number (in characters).
    pub column: u64,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// An error in a model file, with the position it refers to when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    /// The model file.
    pub file: PathBuf,
    /// Where in the file, when the problem has a position.
    pub pos: Option<Pos>,
    /// What is wrong, in words a user can act on.
    pub message: String,
}

impl ModelError {
    /// An error at a position of `file`.
    pub fn at(file: &Path, pos: Pos, message: impl Into<String>) -> Self {
        ModelError { file: file.to_path_buf(), pos: Some(pos), message: message.into() }
    }

    /// An error about `file` as a whole.
    pub fn whole(file: &Path, message: impl Into<String>) -> Self {
        ModelError { file: file.to_path_buf(), pos: None, message: message.into() }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pos {
            Some(p) => write!(f, "{}:{}: {}", self.file.display(), p, self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for ModelError {}

/// An error in a tensor file (weights archive, input array), naming the tensor
/// and, where one value is at fault, its index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorError {
    /// The archive or array file.
    pub file: PathBuf,
    /// The tensor's name inside the archive (e.g. `fc1/w`), if any.
    pub tensor: Option<String>,
    /// The multi-dimensional index of the offending value, if one value is at fault.
    pub index: Option<Vec<usize>>,
    /// What is wrong.
    pub message: String,
}

impl TensorError {
    /// An error about the file as a whole.
    pub fn file(file: &Path, message: impl Into<String>) -> Self {
        TensorError { file: file.to_path_buf(), tensor: None, index: None, message: message.into() }
    }

    /// An error about one tensor of the file.
    pub fn tensor(file: &Path, tensor: &str, message: impl Into<String>) -> Self {
        TensorError {
            file: file.to_path_buf(),
            tensor: Some(tensor.to_string()),
            index: None,
            message: message.into(),
        }
    }

    /// An error about one value of one tensor.
    pub fn value(file: &Path, tensor: &str, index: Vec<usize>, message: impl Into<String>) -> Self {
        TensorError {
            file: file.to_path_buf(),
            tensor: Some(tensor.to_string()),
            index: Some(index),
            message: message.into(),
        }
    }
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(t) = &self.tensor {
            write!(f, ": tensor '{t}'")?;
        }
        if let Some(ix) = &self.index {
            let parts: Vec<String> = ix.iter().map(|i| i.to_string()).collect();
            write!(f, " at index [{}]", parts.join(", "))?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for TensorError {}

/// Any error fptgen's library reports about its inputs.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The model file is malformed or inconsistent.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A weights archive or data array is malformed or inconsistent.
    #[error(transparent)]
    Tensor(#[from] TensorError),
    /// A file could not be read or written.
    #[error("{}: {err}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        err: std::io::Error,
    },
}

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io { path: path.to_path_buf(), err: source }
    }
}
