//! Reads MNIST's IDX files from a directory (as `examples/mnist/get-data.sh`
//! leaves them) with `fptgen_sim::data::idx::read_mnist`, which checks their
//! consistency, and prints their shapes and label counts.
//!
//!     cargo run --release --example mnist_data -- examples/mnist/data

use std::path::PathBuf;

fn main() -> anyhow::Result<()> {
    let dir: PathBuf = std::env::args().nth(1).unwrap_or_else(|| "examples/mnist/data".into()).into();
    let m = fptgen_sim::data::idx::read_mnist(&dir)?;
    for (name, images, labels) in [("train", &m.train_images, &m.train_labels), ("test", &m.test_images, &m.test_labels)] {
        let mut counts = [0usize; 10];
        for &l in &labels.values {
            counts[l as usize] += 1;
        }
        let mean = images.values.iter().sum::<f64>() / images.values.len() as f64;
        println!("{name}: {} images {:?}, mean pixel {mean:.3}, labels per digit {counts:?}", images.len(), &images.shape[1..]);
    }
    Ok(())
}
