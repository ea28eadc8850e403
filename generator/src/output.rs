//! Writing an output directory: all or nothing, and never over files fptgen
//! did not create.
//!
//! A directory fptgen writes holds a manifest, `.fptgen-manifest`, listing
//! every file it wrote. [`write_dir`] refuses a target that exists, is not
//! empty and has no manifest. Files are rendered in memory first and written
//! to a temporary sibling directory; only when that is complete are they
//! moved into place: the whole directory at once if the target is new, file by
//! file (replacing only files the manifest lists) if fptgen wrote it before.
//! Files the user added to such a directory are left alone.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::render::GeneratedFile;

/// Name of the manifest file.
pub const MANIFEST: &str = ".fptgen-manifest";

/// Why an output directory could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The target exists and was not created by fptgen.
    #[error("{}: exists, is not empty and was not created by fptgen; choose another directory", .0.display())]
    Foreign(PathBuf),
    /// The target is a file.
    #[error("{}: exists and is not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// A file fptgen would write exists in its directory but is not in its manifest.
    #[error("{}: was not written by fptgen (not in {MANIFEST}); move it away first", .0.display())]
    ForeignFile(PathBuf),
    /// An I/O error.
    #[error("{}: {err}", path.display())]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// The error.
        err: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> OutputError + '_ {
    move |err| OutputError::Io { path: path.to_path_buf(), err }
}

fn read_manifest(dir: &Path) -> Option<BTreeSet<PathBuf>> {
    let text = fs::read_to_string(dir.join(MANIFEST)).ok()?;
    Some(text.lines().filter(|l| !l.is_empty()).map(PathBuf::from).collect())
}

/// Checks, without writing, that [`write_dir`] may write files at `paths`
/// into `dir`: `dir` is new, empty, or has a manifest that lists each of
/// `paths` that exists. Returns the manifest, if there is one.
pub fn check_dir<'a>(
    dir: &Path,
    paths: impl IntoIterator<Item = &'a Path>,
) -> Result<Option<BTreeSet<PathBuf>>, OutputError> {
    let previous = if dir.exists() {
        if !dir.is_dir() {
            return Err(OutputError::NotADirectory(dir.to_path_buf()));
        }
        let empty = fs::read_dir(dir).map_err(io_err(dir))?.next().is_none();
        match read_manifest(dir) {
            Some(m) => Some(m),
            None if empty => None,
            None => return Err(OutputError::Foreign(dir.to_path_buf())),
        }
    } else {
        None
    };
    if let Some(prev) = &previous {
        for p in paths {
            let target = dir.join(p);
            if target.exists() && !prev.contains(p) {
                return Err(OutputError::ForeignFile(target));
            }
        }
    }
    Ok(previous)
}

/// Writes `files` into `dir` as described in the module documentation.
pub fn write_dir(dir: &Path, files: &[GeneratedFile]) -> Result<(), OutputError> {
    let previous = check_dir(dir, files.iter().map(|f| f.path.as_path()))?;
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(io_err(parent))?;
    let base = dir.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    let tmp = parent.join(format!(".{base}.fptgen-partial-{}", std::process::id()));
    let result = stage(&tmp, files).and_then(|()| commit(&tmp, dir, files, previous.is_some()));
    let _ = fs::remove_dir_all(&tmp);
    result
}

fn stage(tmp: &Path, files: &[GeneratedFile]) -> Result<(), OutputError> {
    if tmp.exists() {
        fs::remove_dir_all(tmp).map_err(io_err(tmp))?;
    }
    fs::create_dir_all(tmp).map_err(io_err(tmp))?;
    let mut manifest = String::new();
    for f in files {
        let path = tmp.join(&f.path);
        if let Some(p) = path.parent() {
            fs::create_dir_all(p).map_err(io_err(p))?;
        }
        fs::write(&path, &f.contents).map_err(io_err(&path))?;
        if f.executable {
            set_executable(&path)?;
        }
        manifest += &format!("{}\n", f.path.display());
    }
    let m = tmp.join(MANIFEST);
    fs::write(&m, manifest).map_err(io_err(&m))
}

#[cfg(unix)]
fn set_executable(path: &Path) -> Result<(), OutputError> {
    use std::os::unix::fs::PermissionsExt;
    let mut perm = fs::metadata(path).map_err(io_err(path))?.permissions();
    perm.set_mode(perm.mode() | 0o111);
    fs::set_permissions(path, perm).map_err(io_err(path))
}

#[cfg(not(unix))]
fn set_executable(_path: &Path) -> Result<(), OutputError> {
    Ok(())
}

fn commit(tmp: &Path, dir: &Path, files: &[GeneratedFile], existing: bool) -> Result<(), OutputError> {
    if !existing {
        if dir.exists() {
            // An empty directory: replace it with the staged one.
            fs::remove_dir(dir).map_err(io_err(dir))?;
        }
        return fs::rename(tmp, dir).map_err(io_err(dir));
    }
    for f in files.iter().map(|f| f.path.as_path()).chain([Path::new(MANIFEST)]) {
        let (from, to) = (tmp.join(f), dir.join(f));
        if let Some(p) = to.parent() {
            fs::create_dir_all(p).map_err(io_err(p))?;
        }
        fs::rename(&from, &to).map_err(io_err(&to))?;
    }
    Ok(())
}

/// Adds `files` to a directory that fptgen wrote (it has a manifest): each
/// is written to a temporary name and moved into place, and listed in the
/// manifest. Refuses a path that exists and is not in the manifest.
pub fn add_files(dir: &Path, files: &[GeneratedFile]) -> Result<(), OutputError> {
    let mut manifest = read_manifest(dir).ok_or_else(|| OutputError::Foreign(dir.to_path_buf()))?;
    for f in files {
        let target = dir.join(&f.path);
        if target.exists() && !manifest.contains(&f.path) {
            return Err(OutputError::ForeignFile(target));
        }
    }
    for f in files {
        let target = dir.join(&f.path);
        if let Some(p) = target.parent() {
            fs::create_dir_all(p).map_err(io_err(p))?;
        }
        let tmp = target.with_file_name(format!(
            ".{}.fptgen-partial-{}",
            target.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
            std::process::id()
        ));
        fs::write(&tmp, &f.contents).map_err(io_err(&tmp))?;
        fs::rename(&tmp, &target).map_err(io_err(&target))?;
        manifest.insert(f.path.clone());
    }
    let text: String = manifest.iter().map(|p| format!("{}\n", p.display())).collect();
    let m = dir.join(MANIFEST);
    let tmp = dir.join(format!(".{MANIFEST}.partial-{}", std::process::id()));
    fs::write(&tmp, text).map_err(io_err(&tmp))?;
    fs::rename(&tmp, &m).map_err(io_err(&m))
}
