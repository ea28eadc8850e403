//! Datasets: MNIST's IDX files ([`idx`]), raw or gzip-compressed, and
//! labelled data directories of IDX files or `.npy` arrays ([`dataset`]);
//! the training data archives of on-device ES training ([`es`]).

pub mod dataset;
pub mod es;
pub mod idx;
pub mod noise;

pub use dataset::{load_dir, DataError, Dataset, Splits};
