//! IDX files (MNIST's format): values of every type read back exactly,
//! raw and gzip-compressed, from bytes written here by hand; and every kind
//! of damage reported with the file and the byte offset.

use std::io::Write;
use std::path::Path;

use fptgen_sim::data::idx::{parse, read, read_mnist, IdxError, IdxType};

fn header(code: u8, dims: &[u32]) -> Vec<u8> {
    let mut b = vec![0, 0, code, dims.len() as u8];
    for d in dims {
        b.extend(d.to_be_bytes());
    }
    b
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn every_type_reads_back_exactly() {
    let mut b = header(0x08, &[2, 3]);
    b.extend([0, 1, 2, 253, 254, 255]);
    let a = parse(&b).unwrap();
    assert_eq!((a.kind, a.shape.clone(), a.values.clone()), (IdxType::U8, vec![2, 3], vec![0.0, 1.0, 2.0, 253.0, 254.0, 255.0]));
    assert_eq!((a.len(), a.item_len()), (2, 3));

    let mut b = header(0x09, &[2]);
    b.extend([0x7f, 0x80]);
    assert_eq!(parse(&b).unwrap().values, [127.0, -128.0]);

    let mut b = header(0x0B, &[2]);
    b.extend([0x80, 0x00, 0x12, 0x34]);
    assert_eq!(parse(&b).unwrap().values, [-32768.0, 4660.0]);

    let mut b = header(0x0C, &[1]);
    b.extend([0xff, 0xff, 0xff, 0xfe]);
    assert_eq!(parse(&b).unwrap().values, [-2.0]);

    let mut b = header(0x0D, &[1]);
    b.extend([0x3f, 0xc0, 0x00, 0x00]); // 1.5f
    assert_eq!(parse(&b).unwrap().values, [1.5]);

    let mut b = header(0x0E, &[1]);
    b.extend([0xc0, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18]); // -pi
    assert_eq!(parse(&b).unwrap().values, [-std::f64::consts::PI]);
}

#[test]
fn gzip_files_read_like_raw_ones() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = header(0x08, &[3, 2, 2]);
    b.extend(0..12u8);
    std::fs::write(dir.path().join("raw"), &b).unwrap();
    std::fs::write(dir.path().join("raw.gz"), gzip(&b)).unwrap();
    let (r, g) = (read(&dir.path().join("raw")).unwrap(), read(&dir.path().join("raw.gz")).unwrap());
    assert_eq!(r, g);
    assert_eq!(r.values, (0..12).map(f64::from).collect::<Vec<_>>());
}

fn err_of(bytes: &[u8]) -> (usize, String) {
    parse(bytes).unwrap_err()
}

#[test]
fn damage_is_reported_with_its_offset() {
    assert_eq!(err_of(&[0, 0, 8]).0, 3);
    let (o, m) = err_of(&[0x1f, 0x00, 8, 1, 0, 0, 0, 1, 0]);
    assert!(o == 0 && m.contains("not an IDX file"), "{m}");
    let (o, m) = err_of(&[0, 0, 0x0A, 1, 0, 0, 0, 1, 0]);
    assert!(o == 2 && m.contains("0x0a"), "{m}");
    let (o, m) = err_of(&[0, 0, 8, 0]);
    assert!(o == 3 && m.contains("zero dimensions"), "{m}");
    // A header cut short.
    let (o, m) = err_of(&header(8, &[2, 3])[..9]);
    assert!(o == 9 && m.contains("truncated") && m.contains("12 header bytes"), "{m}");
    let mut z = header(8, &[2, 0]);
    z.push(0);
    let (o, m) = err_of(&z);
    assert!(o == 8 && m.contains("dimension 1 is 0"), "{m}");
    // Data cut short, and bytes after the data.
    let mut b = header(0x0B, &[3]);
    b.extend([0, 1, 0, 2, 0]);
    let (o, m) = err_of(&b);
    assert!(o == 13 && m.contains("needs 14 bytes") && m.contains("has 13"), "{m}");
    b.extend([3, 9]);
    let (o, m) = err_of(&b);
    assert!(o == 14 && m.contains("1 bytes after"), "{m}");
}

#[test]
fn file_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = header(0x08, &[100]);
    b.extend([7u8; 100]);
    let gz = gzip(&b);
    let p = dir.path().join("cut.gz");
    std::fs::write(&p, &gz[..gz.len() / 2]).unwrap();
    let e = read(&p).unwrap_err().to_string();
    assert!(e.starts_with(&p.display().to_string()) && e.contains("gzip"), "{e}");
    let p = dir.path().join("short");
    std::fs::write(&p, &b[..50]).unwrap();
    let e = read(&p).unwrap_err().to_string();
    assert!(e.contains("short: byte 50: truncated"), "{e}");
    let e = read(&dir.path().join("missing")).unwrap_err();
    assert!(matches!(e, IdxError::Io { .. }), "{e}");
}

fn write_set(dir: &Path, n_train: u32, n_train_labels: u32, bad_label: bool) {
    let img = |n: u32| {
        let mut b = header(0x08, &[n, 28, 28]);
        b.extend((0..n * 784).map(|i| (i % 251) as u8));
        b
    };
    let lab = |n: u32, bad: bool| {
        let mut b = header(0x08, &[n]);
        b.extend((0..n).map(|i| if bad && i == 1 { 10 } else { (i % 10) as u8 }));
        b
    };
    std::fs::write(dir.join("train-images-idx3-ubyte.gz"), gzip(&img(n_train))).unwrap();
    std::fs::write(dir.join("train-labels-idx1-ubyte"), lab(n_train_labels, bad_label)).unwrap();
    std::fs::write(dir.join("t10k-images-idx3-ubyte"), img(2)).unwrap();
    std::fs::write(dir.join("t10k-labels-idx1-ubyte.gz"), gzip(&lab(2, false))).unwrap();
}

#[test]
fn mnist_directories_are_checked_for_consistency() {
    let dir = tempfile::tempdir().unwrap();
    write_set(dir.path(), 3, 3, false);
    let m = read_mnist(dir.path()).unwrap();
    assert_eq!((m.train_images.len(), m.test_images.len(), m.train_labels.values.clone()), (3, 2, vec![0.0, 1.0, 2.0]));
    assert_eq!(m.train_images.values[784], f64::from((784 % 251) as u8));
    write_set(dir.path(), 3, 4, false);
    let e = read_mnist(dir.path()).unwrap_err().to_string();
    assert!(e.contains("train-labels-idx1-ubyte") && e.contains("4 labels for 3 images"), "{e}");
    write_set(dir.path(), 3, 3, true);
    let e = read_mnist(dir.path()).unwrap_err().to_string();
    assert!(e.contains("byte 9") && e.contains("label 1 is 10"), "{e}");
    write_set(dir.path(), 3, 3, false);
    std::fs::remove_file(dir.path().join("t10k-images-idx3-ubyte")).unwrap();
    let e = read_mnist(dir.path()).unwrap_err().to_string();
    assert!(e.contains("t10k-images-idx3-ubyte"), "{e}");
}

/// A gzip file that decompresses beyond the budget (a "gzip bomb": 1 GiB
/// and one byte of zeros compress to about a megabyte) is refused naming
/// the budget, without holding more than the budget in memory.
#[test]
fn a_file_that_decompresses_beyond_the_budget_is_refused() {
    use flate2::write::GzEncoder;

    let dir = tempfile::tempdir().unwrap();
    let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&header(0x08, &[1])).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..1024 {
        enc.write_all(&zeros).unwrap();
    }
    let p = dir.path().join("bomb.gz");
    std::fs::write(&p, enc.finish().unwrap()).unwrap();
    let e = read(&p).unwrap_err().to_string();
    assert!(e.starts_with(&p.display().to_string()) && e.contains("decompresses to more than 1073741824 bytes"), "{e}");
}
