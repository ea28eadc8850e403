//! [`ImportError`]: why a file cannot be imported, naming the file and,
//! when a node is at fault, the node's name and operator.

use std::fmt;
use std::path::{Path, PathBuf};

use super::onnx::NodeProto;

/// Why an ONNX file cannot be imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    /// The file.
    pub file: PathBuf,
    /// The node at fault, as `(name, op_type)`, if one is.
    pub node: Option<(String, String)>,
    /// What is wrong.
    pub message: String,
}

impl ImportError {
    /// An error about the whole file.
    pub fn file(file: &Path, message: impl Into<String>) -> ImportError {
        ImportError { file: file.to_path_buf(), node: None, message: message.into() }
    }

    /// An error about the node `(name, op_type)`.
    pub fn named(file: &Path, node: &(String, String), message: impl Into<String>) -> ImportError {
        ImportError { file: file.to_path_buf(), node: Some(node.clone()), message: message.into() }
    }

    /// An error about `node`.
    pub fn node(file: &Path, node: &NodeProto, message: impl Into<String>) -> ImportError {
        ImportError { file: file.to_path_buf(), node: Some((node.name.clone(), node.op_type.clone())), message: message.into() }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.node {
            Some((name, op)) => write!(f, "{}: node '{name}' ({op}): {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for ImportError {}
