//! Writing into an output directory: all or nothing, never over files fptgen
//! did not create, and without leaving stale files of an earlier run.
//!
//! A directory fptgen writes holds a manifest, `.fptgen-manifest`, that lists
//! every file fptgen wrote there, in sections named after the *group* that
//! wrote them: `design` (what `generate`, `cosim` and `synth` generate),
//! `synth` (yosys reports), `sweep` (a sweep's results), `cosim` (stimulus
//! files). A write names its group and either replaces that group's files
//! ([`write_dir`]: files the group wrote before and does not write now are
//! removed) or adds to them ([`add_files`]). Other groups' files, and files
//! the user added, are left alone; a file in the way that the manifest does
//! not list is never replaced (the write fails before anything changes).
//!
//! The manifest records each file's size and SHA-256 as fptgen wrote it
//! (`path<TAB>size sha256`), so ownership cannot be forged by accident: a
//! listed file whose size or contents no longer match its record was
//! changed by someone else and is theirs (kept, never replaced or removed,
//! and the message says so), and a line without a record (a manifest that
//! fptgen did not write, or one from before the records) owns nothing.
//! Files that later processes write one by one ([`write_dir_reserving`])
//! are listed as `reserved`.
//!
//! Every file is rendered in memory first and written under a temporary name;
//! only when all are complete are they moved into place. A new directory is
//! staged beside its final name and renamed into place whole; an existing
//! one (empty, or written by fptgen before) gets a staging directory inside
//! it, whose files are renamed into place one by one after the manifest has
//! claimed them. The target may be `.` or a symbolic link to a directory.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::render::GeneratedFile;

/// Name of the manifest file.
pub const MANIFEST: &str = ".fptgen-manifest";

/// First line of a manifest.
const HEADER: &str = "# fptgen: the files fptgen wrote in this directory, by the group that wrote them";

/// Group of the files that describe a design (`generate`, and the design
/// that `cosim`, `synth` and `sweep` generate).
pub const DESIGN: &str = "design";
/// Group of yosys reports.
pub const SYNTH: &str = "synth";
/// Group of `fptgen implement`'s scripts and reports.
pub const IMPLEMENT: &str = "implement";
/// Group of a sweep's result files.
pub const SWEEP: &str = "sweep";
/// Group of the co-simulation's stimulus and expected-output files.
pub const COSIM: &str = "cosim";
/// Group of an export's files (`fptgen export --format cmsis-nn`).
pub const EXPORT: &str = "export";
/// Group of an import's files (`fptgen import`: model.yaml, weights.npz).
pub const IMPORT: &str = "import";

/// Why an output directory could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The target exists and was not created by fptgen.
    #[error("{}: exists, is not empty and was not created by fptgen; choose another directory", .0.display())]
    Foreign(PathBuf),
    /// The target is a file.
    #[error("{}: exists and is not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// The target is a symbolic link to nothing.
    #[error("{}: is a symbolic link to {}, which does not exist", .0.display(), .1.display())]
    DanglingLink(PathBuf, PathBuf),
    /// A file fptgen would write exists in its directory but is not in its manifest.
    #[error("{}: was not written by fptgen (not in {MANIFEST}); move it away first", .0.display())]
    ForeignFile(PathBuf),
    /// A file fptgen wrote was changed since: it is the user's now.
    #[error("{}: was changed after fptgen wrote it (its size or contents differ from {MANIFEST}'s record), so fptgen keeps it; move it away first to let fptgen write it again", .0.display())]
    ChangedFile(PathBuf),
    /// A file the manifest lists without a record of what fptgen wrote.
    #[error("{}: is listed in {MANIFEST} without the record fptgen keeps of what it wrote (a manifest fptgen did not write, or an older fptgen's), so fptgen keeps it; move it away first", .0.display())]
    UnverifiedFile(PathBuf),
    /// A path fptgen would write a file at is a directory.
    #[error("{}: is a directory where fptgen writes a file; move it away first", .0.display())]
    DirectoryInTheWay(PathBuf),
    /// Two files of one write share a path (a bug: the model's validation
    /// keeps generated names apart).
    #[error("{}: fptgen generated two different files under this name; please report this with the model file", .0.display())]
    Duplicate(PathBuf),
    /// The manifest is not one fptgen wrote.
    #[error("{}: is not an fptgen manifest ({})", .0.display(), .1)]
    BadManifest(PathBuf, String),
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

/// What the manifest records of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Record {
    /// Written by fptgen with this size and SHA-256 (hex).
    Written(u64, String),
    /// Reserved for later writes ([`replace_reserved`]).
    Reserved,
    /// Listed without a record: owns nothing.
    Unverified,
}

impl Record {
    fn of(contents: &[u8]) -> Record {
        Record::Written(contents.len() as u64, sha256_hex(contents))
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether the file at `path` is as `record` says fptgen wrote it: yes for
/// a reservation, no for a line without a record; a file that cannot be
/// read does not match.
fn matches(path: &Path, record: &Record) -> bool {
    match record {
        Record::Reserved => true,
        Record::Unverified => false,
        Record::Written(size, hash) => {
            fs::metadata(path).is_ok_and(|m| m.len() == *size) && fs::read(path).is_ok_and(|b| sha256_hex(&b) == *hash)
        }
    }
}

/// The files fptgen owns in a directory, by group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    groups: BTreeMap<String, BTreeMap<PathBuf, Record>>,
}

impl Manifest {
    /// Parses a manifest's text. A manifest written before groups existed
    /// (bare paths, no header) puts every file in the group `""`; a line
    /// without a record (`path<TAB>size sha256` or `path<TAB>reserved`)
    /// lists the file but owns nothing.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let mut groups: BTreeMap<String, BTreeMap<PathBuf, Record>> = BTreeMap::new();
        let mut group = String::new();
        for (i, line) in text.lines().enumerate() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(g) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                group = g.to_string();
                continue;
            }
            let (path, record) = match line.split_once('\t') {
                None => (line, Record::Unverified),
                Some((path, "reserved")) => (path, Record::Reserved),
                Some((path, rec)) => {
                    let bad = || format!("line {}: '{rec}' is not a record (size and SHA-256, or `reserved`)", i + 1);
                    let (size, hash) = rec.split_once(' ').ok_or_else(bad)?;
                    let size: u64 = size.parse().map_err(|_| bad())?;
                    if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                        return Err(bad());
                    }
                    (path, Record::Written(size, hash.to_ascii_lowercase()))
                }
            };
            let p = Path::new(path);
            if p.is_absolute() || p.components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
                return Err(format!("line {}: '{path}' is not a path inside the directory", i + 1));
            }
            groups.entry(group.clone()).or_default().insert(p.to_path_buf(), record);
        }
        Ok(Manifest { groups })
    }

    /// The manifest's text.
    pub fn render(&self) -> String {
        let mut s = format!("{HEADER}\n");
        for (g, files) in self.groups.iter().filter(|(_, f)| !f.is_empty()) {
            s += &format!("[{g}]\n");
            for (f, r) in files {
                match r {
                    Record::Written(size, hash) => s += &format!("{}\t{size} {hash}\n", f.display()),
                    Record::Reserved => s += &format!("{}\treserved\n", f.display()),
                    Record::Unverified => s += &format!("{}\n", f.display()),
                }
            }
        }
        s
    }

    /// True if any group lists `path` with a record (written or reserved).
    pub fn owns(&self, path: &Path) -> bool {
        self.records(path).any(|r| *r != Record::Unverified)
    }

    /// The records the groups keep of `path`.
    fn records<'a>(&'a self, path: &'a Path) -> impl Iterator<Item = &'a Record> + 'a {
        self.groups.values().filter_map(move |g| g.get(path))
    }

    /// Whether the file `path` (relative to `dir`) is as some group's record
    /// says fptgen wrote it.
    fn unchanged(&self, dir: &Path, path: &Path) -> bool {
        let full = dir.join(path);
        self.records(path).any(|r| matches(&full, r))
    }

    /// The files of `group`.
    pub fn group(&self, group: &str) -> impl Iterator<Item = &Path> {
        self.groups.get(group).into_iter().flat_map(|g| g.keys()).map(PathBuf::as_path)
    }

    fn claim(&mut self, group: &str, files: impl IntoIterator<Item = (PathBuf, Record)>) {
        let g = self.groups.entry(group.to_string()).or_default();
        g.extend(files);
    }

    fn release(&mut self, group: &str, path: &Path) {
        if let Some(g) = self.groups.get_mut(group) {
            g.remove(path);
        }
    }
}

fn read_manifest(dir: &Path) -> Result<Option<Manifest>, OutputError> {
    let path = dir.join(MANIFEST);
    match fs::read_to_string(&path) {
        Ok(text) => Manifest::parse(&text).map(Some).map_err(|m| OutputError::BadManifest(path, m)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(OutputError::Io { path, err: e }),
    }
}

fn write_manifest(dir: &Path, m: &Manifest) -> Result<(), OutputError> {
    let path = dir.join(MANIFEST);
    let tmp = dir.join(format!(".{MANIFEST}.partial-{}", std::process::id()));
    fs::write(&tmp, m.render()).map_err(io_err(&tmp))?;
    fs::rename(&tmp, &path).map_err(io_err(&path))
}

/// What is at an output directory's path.
enum Target {
    /// Nothing: the directory is created.
    New,
    /// An existing directory (the link or `.` resolved), with its manifest
    /// if fptgen wrote it, `None` if it is empty.
    Existing(PathBuf, Option<Manifest>),
}

fn inspect(dir: &Path) -> Result<Target, OutputError> {
    let meta = match fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::New),
        Err(e) => return Err(OutputError::Io { path: dir.to_path_buf(), err: e }),
    };
    if meta.file_type().is_symlink() && !dir.exists() {
        let to = fs::read_link(dir).map_err(io_err(dir))?;
        return Err(OutputError::DanglingLink(dir.to_path_buf(), to));
    }
    if !dir.is_dir() {
        return Err(OutputError::NotADirectory(dir.to_path_buf()));
    }
    let real = fs::canonicalize(dir).map_err(io_err(dir))?;
    let manifest = read_manifest(&real)?;
    if manifest.is_none() && fs::read_dir(&real).map_err(io_err(dir))?.next().is_some() {
        return Err(OutputError::Foreign(dir.to_path_buf()));
    }
    Ok(Target::Existing(real, manifest))
}

/// Checks, without writing, that fptgen may write files at `paths` into
/// `dir`: `dir` is new, empty, or has a manifest that lists each of `paths`
/// that exists. Returns the manifest, if there is one.
pub fn check_dir<'a>(dir: &Path, paths: impl IntoIterator<Item = &'a Path>) -> Result<Option<Manifest>, OutputError> {
    match inspect(dir)? {
        Target::New => Ok(None),
        Target::Existing(real, manifest) => {
            let m = manifest.clone().unwrap_or_default();
            for p in paths {
                check_path(dir, &real, &m, p)?;
            }
            Ok(manifest)
        }
    }
}

fn check_path(dir: &Path, real: &Path, m: &Manifest, p: &Path) -> Result<(), OutputError> {
    let target = real.join(p);
    match fs::symlink_metadata(&target) {
        Err(_) => Ok(()),
        Ok(meta) if meta.is_dir() => Err(OutputError::DirectoryInTheWay(dir.join(p))),
        Ok(_) if m.records(p).next().is_some() && !m.owns(p) => Err(OutputError::UnverifiedFile(dir.join(p))),
        Ok(_) if !m.owns(p) => Err(OutputError::ForeignFile(dir.join(p))),
        Ok(_) if !m.unchanged(real, p) => Err(OutputError::ChangedFile(dir.join(p))),
        Ok(_) => Ok(()),
    }
}

/// Writes `files` into `dir` as `group`, replacing the group's earlier
/// files: any file the group wrote before and does not write now is
/// removed. See the module documentation.
pub fn write_dir(dir: &Path, group: &str, files: &[GeneratedFile]) -> Result<(), OutputError> {
    write(dir, group, files, &[], true)
}

/// As [`write_dir`], and also claims `reserved` for `group`: files that
/// later runs write into `dir` one by one with [`replace_reserved`],
/// without touching the manifest (so that several processes may do so at
/// once). A reserved path that exists is either the group's or another
/// group's file (then it is removed: the reservation starts empty) or
/// refused as foreign, before anything changes.
pub fn write_dir_reserving(dir: &Path, group: &str, files: &[GeneratedFile], reserved: &[PathBuf]) -> Result<(), OutputError> {
    write(dir, group, files, reserved, true)
}

/// True if `dir`'s manifest lists `path` (relative to `dir`); false if
/// `dir` has no manifest.
pub fn owns(dir: &Path, path: &Path) -> Result<bool, OutputError> {
    Ok(read_manifest(dir)?.is_some_and(|m| m.owns(path)))
}

/// Writes `contents` at `path` (relative to `dir`), a file that `dir`'s
/// manifest lists (reserved by [`write_dir_reserving`]): under a temporary
/// name in the same directory first, then renamed into place, so that a
/// reader sees the old file or the new one, never a part. An error naming
/// the file if the manifest does not list it.
pub fn replace_reserved(dir: &Path, path: &Path, contents: &[u8]) -> Result<(), OutputError> {
    if !owns(dir, path)? {
        return Err(OutputError::ForeignFile(dir.join(path)));
    }
    let target = dir.join(path);
    if fs::symlink_metadata(&target).is_ok_and(|m| m.is_dir()) {
        return Err(OutputError::DirectoryInTheWay(target));
    }
    let parent = target.parent().unwrap_or(dir);
    fs::create_dir_all(parent).map_err(io_err(parent))?;
    let name = path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = parent.join(format!(".{name}.partial-{}", std::process::id()));
    let result = fs::write(&tmp, contents).map_err(io_err(&tmp)).and_then(|()| fs::rename(&tmp, &target).map_err(io_err(&target)));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Adds `files` to `dir` as `group`, keeping the group's other files.
/// `dir` may be new. See the module documentation.
pub fn add_files(dir: &Path, group: &str, files: &[GeneratedFile]) -> Result<(), OutputError> {
    write(dir, group, files, &[], false)
}

fn write(dir: &Path, group: &str, files: &[GeneratedFile], reserved: &[PathBuf], replace: bool) -> Result<(), OutputError> {
    let paths = || files.iter().map(|f| f.path.as_path());
    let mut seen = BTreeSet::new();
    if let Some(p) = paths().find(|p| !seen.insert(*p)) {
        return Err(OutputError::Duplicate(dir.join(p)));
    }
    match inspect(dir)? {
        Target::New => {
            let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            fs::create_dir_all(parent).map_err(io_err(parent))?;
            let base = dir.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
            let tmp = parent.join(format!(".{base}.fptgen-partial-{}", std::process::id()));
            let mut m = Manifest::default();
            m.claim(group, files.iter().map(|f| (f.path.clone(), Record::of(&f.contents))));
            m.claim(group, reserved.iter().map(|p| (p.clone(), Record::Reserved)));
            let result = stage(&tmp, files)
                .and_then(|()| write_manifest(&tmp, &m))
                .and_then(|()| fs::rename(&tmp, dir).map_err(io_err(dir)));
            let _ = fs::remove_dir_all(&tmp);
            result
        }
        Target::Existing(real, manifest) => {
            let mut m = manifest.unwrap_or_default();
            for p in paths().chain(reserved.iter().map(PathBuf::as_path)) {
                check_path(dir, &real, &m, p)?;
            }
            let tmp = real.join(format!(".fptgen-staging-{}", std::process::id()));
            let result = stage(&tmp, files).and_then(|()| commit(&tmp, &real, &mut m, group, files, reserved, replace));
            let _ = fs::remove_dir_all(&tmp);
            result
        }
    }
}

fn stage(tmp: &Path, files: &[GeneratedFile]) -> Result<(), OutputError> {
    if tmp.exists() {
        fs::remove_dir_all(tmp).map_err(io_err(tmp))?;
    }
    fs::create_dir_all(tmp).map_err(io_err(tmp))?;
    for f in files {
        let path = tmp.join(&f.path);
        if let Some(p) = path.parent() {
            fs::create_dir_all(p).map_err(io_err(p))?;
        }
        fs::write(&path, &f.contents).map_err(io_err(&path))?;
        if f.executable {
            set_executable(&path)?;
        }
    }
    Ok(())
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

/// Moves the staged files into `dir`. The manifest claims them first, so a
/// run killed half-way leaves only owned files; stale files of the group
/// are released and removed last.
fn commit(
    tmp: &Path,
    dir: &Path,
    m: &mut Manifest,
    group: &str,
    files: &[GeneratedFile],
    reserved: &[PathBuf],
    replace: bool,
) -> Result<(), OutputError> {
    let new: BTreeSet<&Path> = files.iter().map(|f| f.path.as_path()).collect();
    let kept: BTreeSet<&Path> = reserved.iter().map(PathBuf::as_path).collect();
    let stale: Vec<PathBuf> = if replace {
        m.group(group).filter(|p| !new.contains(p) && !kept.contains(p)).map(Path::to_path_buf).collect()
    } else {
        Vec::new()
    };
    m.claim(group, files.iter().map(|f| (f.path.clone(), Record::of(&f.contents))));
    m.claim(group, kept.iter().map(|p| (p.to_path_buf(), Record::Reserved)));
    write_manifest(dir, m)?;
    // A reservation starts empty: an earlier run's file there is removed.
    for p in &kept {
        let path = dir.join(p);
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(OutputError::Io { path, err: e }),
        }
    }
    for f in &new {
        let (from, to) = (tmp.join(f), dir.join(f));
        if let Some(p) = to.parent() {
            fs::create_dir_all(p).map_err(io_err(p))?;
        }
        fs::rename(&from, &to).map_err(io_err(&to))?;
    }
    for p in &stale {
        // A file changed since fptgen wrote it is the user's: released, kept.
        let changed = dir.join(p).exists() && !m.unchanged(dir, p);
        // Another group may own the same path (it then stays).
        m.release(group, p);
        if changed || m.owns(p) {
            continue;
        }
        let path = dir.join(p);
        match fs::remove_file(&path) {
            Ok(()) => remove_empty_parents(dir, p),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(OutputError::Io { path, err: e }),
        }
    }
    write_manifest(dir, m)
}

/// Removes the directories between `dir` and `file` that are now empty.
fn remove_empty_parents(dir: &Path, file: &Path) {
    let mut p = file.parent();
    while let Some(d) = p.filter(|d| !d.as_os_str().is_empty()) {
        if fs::remove_dir(dir.join(d)).is_err() {
            break;
        }
        p = d.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_round_trips_and_reads_the_old_form() {
        let mut m = Manifest::default();
        m.claim(DESIGN, [(PathBuf::from("rtl/a.v"), Record::of(b"abc")), (PathBuf::from("report.md"), Record::of(b""))]);
        m.claim(SWEEP, [(PathBuf::from("sweep.csv"), Record::Reserved)]);
        let text = m.render();
        // SHA-256 of "abc" (FIPS 180-2's example).
        let abc = "rtl/a.v\t3 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert!(text.lines().any(|l| l == abc) && text.contains("[sweep]\nsweep.csv\treserved\n"), "{text}");
        assert_eq!(Manifest::parse(&text).unwrap(), m);
        assert!(m.owns(Path::new("rtl/a.v")) && m.owns(Path::new("sweep.csv")));
        // Lines without a record (an old manifest, or one fptgen did not
        // write) list files but own none.
        let old = Manifest::parse("rtl/a.v\nreport.md\n").unwrap();
        assert!(!old.owns(Path::new("rtl/a.v")) && old.group(DESIGN).next().is_none());
        assert!(Manifest::parse("../etc/passwd\n").is_err());
        assert!(Manifest::parse("/etc/passwd\n").is_err());
        assert!(Manifest::parse("a.v\t3 xyz\n").unwrap_err().contains("not a record"));
        assert!(Manifest::parse("a.v\tmany abc\n").unwrap_err().contains("not a record"));
    }

    /// A file fptgen wrote and the user then changed is theirs: a later
    /// write that would replace it fails naming it, and a write that no
    /// longer produces it keeps it; a hand-written manifest owns nothing.
    #[test]
    fn changed_files_and_forged_manifests_are_not_overwritten() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let out = tmp.path().join("out");
        let files = [GeneratedFile::text("a.txt", "one".into()), GeneratedFile::text("b.txt", "two".into())];
        write_dir(&out, DESIGN, &files).expect("first");
        write_dir(&out, DESIGN, &files).expect("unchanged files are replaced");
        fs::write(out.join("a.txt"), "the user's\n").expect("edit");
        let e = write_dir(&out, DESIGN, &files).expect_err("changed");
        assert!(matches!(e, OutputError::ChangedFile(_)) && e.to_string().contains("a.txt") && e.to_string().contains("changed after fptgen wrote it"), "{e}");
        assert_eq!(fs::read_to_string(out.join("a.txt")).expect("kept"), "the user's\n");
        // Same size, other contents: still changed.
        fs::write(out.join("a.txt"), "ONE\n").expect("edit");
        assert!(matches!(write_dir(&out, DESIGN, &files).expect_err("changed"), OutputError::ChangedFile(_)));
        // A write without a.txt: b.txt replaced, a.txt released and kept.
        write_dir(&out, DESIGN, &files[1..]).expect("without a.txt");
        assert_eq!(fs::read_to_string(out.join("a.txt")).expect("kept"), "ONE\n");
        assert!(!owns(&out, Path::new("a.txt")).expect("manifest"));
        // A manifest the user wrote claims nothing.
        let forged = tmp.path().join("forged");
        fs::create_dir(&forged).expect("mkdir");
        fs::write(forged.join(MANIFEST), "# fptgen\n[design]\nb.txt\n").expect("manifest");
        fs::write(forged.join("b.txt"), "mine").expect("file");
        let e = write_dir(&forged, DESIGN, &files).expect_err("forged");
        assert!(matches!(e, OutputError::UnverifiedFile(_)) && e.to_string().contains("b.txt"), "{e}");
        assert_eq!(fs::read_to_string(forged.join("b.txt")).expect("kept"), "mine");
    }

    #[test]
    fn reserved_files_start_empty_are_replaced_whole_and_stay_owned() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let out = tmp.path().join("out");
        let plan = [GeneratedFile::text("plan.json", "{}".into())];
        let r0 = PathBuf::from("results/0.json");
        write_dir_reserving(&out, SWEEP, &plan, std::slice::from_ref(&r0)).expect("plan");
        assert!(owns(&out, &r0).expect("manifest") && !out.join(&r0).exists());
        replace_reserved(&out, &r0, b"first").expect("write");
        replace_reserved(&out, &r0, b"second").expect("replace");
        assert_eq!(fs::read(out.join(&r0)).expect("read"), b"second");
        assert_eq!(fs::read_dir(out.join("results")).expect("dir").count(), 1, "no temporary file left");
        // Not reserved: refused, nothing written.
        let e = replace_reserved(&out, Path::new("results/1.json"), b"x").expect_err("not reserved");
        assert!(matches!(e, OutputError::ForeignFile(_)), "{e}");
        assert!(!out.join("results/1.json").exists());
        // A new plan empties the reservation, and frees what it no longer reserves.
        write_dir_reserving(&out, SWEEP, &plan, std::slice::from_ref(&r0)).expect("plan again");
        assert!(!out.join(&r0).exists());
        replace_reserved(&out, &r0, b"third").expect("write");
        write_dir_reserving(&out, SWEEP, &plan, &[PathBuf::from("results/1.json")]).expect("other plan");
        assert!(!out.join(&r0).exists() && !owns(&out, &r0).expect("manifest"));
        // A user's file where a reservation goes is refused before any change.
        fs::create_dir_all(out.join("results")).expect("mkdir");
        fs::write(out.join("results/2.json"), "mine").expect("write");
        let e = write_dir_reserving(&out, SWEEP, &plan, &[PathBuf::from("results/2.json")]).expect_err("foreign");
        assert!(matches!(e, OutputError::ForeignFile(_)), "{e}");
        assert_eq!(fs::read(out.join("results/2.json")).expect("kept"), b"mine");
        assert!(owns(&out, Path::new("results/1.json")).expect("manifest"), "the earlier plan's reservation is unchanged");
    }
}
