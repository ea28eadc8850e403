//! The model and data arguments shared by the MNIST examples
//! (`mnist_noise`, `peer`).

use std::path::PathBuf;

/// Which model and which MNIST files.
#[derive(Debug, clap::Args)]
pub struct MnistArgs {
    /// The deployed model (its weights archive is the trained network).
    #[arg(long, default_value = "examples/mnist/model.yaml")]
    pub model: PathBuf,
    /// MNIST directory (IDX files; `examples/mnist/get-data.sh` fetches them).
    #[arg(long, default_value = "examples/mnist/data")]
    pub data: PathBuf,
}
