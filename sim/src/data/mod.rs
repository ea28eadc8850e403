//! Datasets: MNIST's IDX files ([`idx`]), raw or gzip-compressed.

pub mod idx;
