//! Writing single files: never over a file fptgen did not create, never a
//! partial file under the final name.
//!
//! Every single-file output of fptgen (weights archives, `.npy` outputs,
//! CSV logs, VCD traces) goes through [`write_new`] or [`place_new`]; whole
//! output directories go through the generator's `output` module, which
//! keeps a manifest of the files it owns. Both check a target before any
//! long work starts ([`check_new`]), so a bad path fails at once.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::Error;

fn exists_error(path: &Path) -> Error {
    Error::io(
        path,
        io::Error::new(
            io::ErrorKind::AlreadyExists,
            "already exists; fptgen does not overwrite files, remove it or choose another path",
        ),
    )
}

/// The directory a new file at `path` goes into (`.` for a bare name).
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Checks that a new file can be created at `path`: nothing (not even a
/// dangling link) is there, and its directory exists. `what` names the
/// option or output for the message (e.g. `--trace`).
pub fn check_new(path: &Path, what: &str) -> Result<(), Error> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if meta.is_dir() {
            return Err(Error::io(
                path,
                io::Error::new(io::ErrorKind::AlreadyExists, format!("is a directory; {what} takes the name of a new file")),
            ));
        }
        return Err(exists_error(path));
    }
    if path.file_name().is_none() {
        return Err(Error::io(path, io::Error::new(io::ErrorKind::InvalidInput, format!("{what} takes the name of a new file"))));
    }
    let dir = parent_of(path);
    match std::fs::metadata(&dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(Error::io(&dir, io::Error::new(io::ErrorKind::NotADirectory, format!("is not a directory (the folder of {what})")))),
        Err(e) => Err(Error::io(&dir, io::Error::new(e.kind(), format!("the folder of {what} cannot be used: {e}")))),
    }
}

/// Checks the new files a command will write, before its long work starts:
/// each as [`check_new`] (`what` names the option or output, e.g. `--log`),
/// and no two at the same path.
pub fn check_new_all(outputs: &[(&Path, &str)]) -> Result<(), Error> {
    for (i, &(path, what)) in outputs.iter().enumerate() {
        check_new(path, what)?;
        if let Some(&(_, other)) = outputs[..i].iter().find(|&&(p, _)| p == path) {
            return Err(Error::io(
                path,
                io::Error::new(io::ErrorKind::InvalidInput, format!("is named by both {other} and {what}; they must be different files")),
            ));
        }
    }
    Ok(())
}

/// Creates `path` with the bytes `fill` writes, all or nothing.
///
/// Fails if `path` already exists: fptgen never replaces a file it did not
/// create. The data goes to a temporary file in the same directory, which is
/// linked into place only when complete (and removed on any failure), so an
/// interrupted run leaves no partial file under the final name.
pub fn write_new(path: &Path, fill: impl FnOnce(File) -> io::Result<()>) -> Result<(), Error> {
    check_new(path, "the output")?;
    let tmp = temp_name(path);
    let result = File::create(&tmp).and_then(fill).and_then(|()| link_new(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    result.map_err(|e| if e.kind() == io::ErrorKind::AlreadyExists { exists_error(path) } else { Error::io(path, e) })
}

/// Moves the finished file `src` to the new name `path`, failing (and
/// leaving `path` alone) if anything exists there; `src` is removed.
pub fn place_new(src: &Path, path: &Path) -> Result<(), Error> {
    check_new(path, "the output")?;
    let result = link_new(src, path);
    let _ = std::fs::remove_file(src);
    result.map_err(|e| if e.kind() == io::ErrorKind::AlreadyExists { exists_error(path) } else { Error::io(path, e) })
}

/// A temporary name beside `path`, unique to this process.
pub fn temp_name(path: &Path) -> PathBuf {
    let file_name = path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    parent_of(path).join(format!(".{file_name}.fptgen-partial-{}", std::process::id()))
}

/// Links `src` at `dst`, which must not exist (atomic on one file system);
/// across file systems or where links are unsupported, creates `dst`
/// exclusively and copies.
fn link_new(src: &Path, dst: &Path) -> io::Result<()> {
    match std::fs::hard_link(src, dst) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(e),
        Err(_) => copy_new(src, dst),
    }
}

fn copy_new(src: &Path, dst: &Path) -> io::Result<()> {
    let mut out = std::fs::OpenOptions::new().write(true).create_new(true).open(dst)?;
    let mut inp = File::open(src)?;
    if let Err(e) = io::copy(&mut inp, &mut out).and_then(|_| out.sync_all()) {
        let _ = std::fs::remove_file(dst);
        return Err(e);
    }
    Ok(())
}

/// One file of an output directory, as a stage produces it before it is
/// written (the generator's design files, the import's model and weights).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    /// Path relative to the output directory.
    pub path: PathBuf,
    /// Contents.
    pub contents: Vec<u8>,
    /// Whether to mark it executable (scripts).
    pub executable: bool,
}

impl GeneratedFile {
    /// A text file; a final newline is added if the text lacks one.
    pub fn text(path: impl Into<PathBuf>, mut text: String) -> Self {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        GeneratedFile { path: path.into(), contents: text.into_bytes(), executable: false }
    }
}
