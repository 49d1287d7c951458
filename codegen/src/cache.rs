//! The kernel library cache, a folder (see [`crate::cache_dir`]) shared by every `wsp run`:
//!
//! - `KEY/` an entry: `kernels.so` and `kernels.so.check`, the library's size and blake3 hash,
//!   checked on every hit so that a damaged library is rebuilt instead of crashing the run;
//! - `build-*/` a build under way, locked (flock) by the process building it for as long as it
//!   lives: an unlocked one was left by a process that died, and the next build removes it;
//! - `stale-*/` a damaged entry moved aside, removed by whoever moved it or the next build;
//! - `lock` held for the short steps that add or remove folders (never during a compile), so
//!   that cleaning up, moving a damaged entry aside and installing are atomic to one another.
//!
//! An entry is made whole inside its build folder and renamed into place in one step; two
//! processes that build the same key both succeed, the second using the first's entry.

use std::collections::HashMap;
use std::fs::{File, TryLockError};
use std::io;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

pub(crate) const LIBRARY: &str = "kernels.so";
const CHECK: &str = "kernels.so.check";
const LOCK: &str = "lock";

/// What the cache holds for a key.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// A library whose size and hash match its record.
    Hit(PathBuf),
    Missing,
    /// An entry that must be rebuilt, and why.
    Damaged(String),
}

pub(crate) fn lookup(cache: &Path, key: &str) -> Lookup {
    let entry = cache.join(key);
    let library = entry.join(LIBRARY);
    // A library this process verified, the same file unchanged since (its inode, size and
    // modification time), is not read and hashed again: a notebook looks its library up at
    // every cell. Entries are installed by a rename, so a replaced library is a new inode.
    let seen = file_id(&library);
    let mut verified = VERIFIED.lock().unwrap_or_else(|e| e.into_inner());
    if seen.is_some() && verified.get(&library) == seen.as_ref() {
        return Lookup::Hit(library);
    }
    if !entry.exists() {
        return Lookup::Missing;
    }
    match verify(&entry) {
        Ok(()) => {
            if let Some(id) = seen {
                verified.insert(library.clone(), id);
            }
            Lookup::Hit(library)
        }
        Err(why) => Lookup::Damaged(why),
    }
}

/// The libraries this process verified, by path, with what identified the file then.
static VERIFIED: std::sync::LazyLock<std::sync::Mutex<HashMap<PathBuf, FileId>>> =
    std::sync::LazyLock::new(Default::default);

/// Device, inode, size and modification time (seconds, nanoseconds).
type FileId = (u64, u64, u64, i64, i64);

fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec()))
}

/// The size and blake3 hash of a library, as its check file records them.
#[derive(Debug, PartialEq, Eq)]
struct Check {
    size: u64,
    hash: blake3::Hash,
}

impl Check {
    fn of(library: &Path) -> io::Result<Check> {
        let file = File::open(library)?;
        let size = file.metadata()?.len();
        let mut hasher = blake3::Hasher::new();
        hasher.update_reader(file)?;
        Ok(Check {
            size,
            hash: hasher.finalize(),
        })
    }

    fn render(&self) -> String {
        format!("size {}\nblake3 {}\n", self.size, self.hash.to_hex())
    }

    fn parse(text: &str) -> Option<Check> {
        let mut lines = text.lines();
        let size = lines.next()?.strip_prefix("size ")?.parse().ok()?;
        let hash = blake3::Hash::from_hex(lines.next()?.strip_prefix("blake3 ")?).ok()?;
        lines.next().is_none().then_some(Check { size, hash })
    }
}

/// Whether the entry's library matches its check file: the size first (a truncated library
/// is caught without reading it), then the hash.
fn verify(entry: &Path) -> Result<(), String> {
    let check_path = entry.join(CHECK);
    // The check file is a few dozen bytes; anything longer is not one.
    let text = match std::fs::metadata(&check_path) {
        Ok(m) if m.len() <= 256 => std::fs::read_to_string(&check_path)
            .map_err(|e| format!("cannot read its check file: {e}"))?,
        Ok(_) => return Err("its check file is malformed".into()),
        Err(e) => return Err(format!("cannot read its check file: {e}")),
    };
    let recorded = Check::parse(&text).ok_or("its check file is malformed")?;
    let library = entry.join(LIBRARY);
    let size = std::fs::metadata(&library)
        .map_err(|e| format!("cannot read the library: {e}"))?
        .len();
    if size != recorded.size {
        return Err(format!(
            "the library is {size} bytes, {} when built",
            recorded.size
        ));
    }
    let actual = Check::of(&library).map_err(|e| format!("cannot read the library: {e}"))?;
    if actual != recorded {
        return Err("the library's content changed since it was built".into());
    }
    Ok(())
}

/// Holds the cache's `lock` until dropped.
struct Locked(File);

impl Locked {
    fn take(cache: &Path) -> io::Result<Locked> {
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(cache.join(LOCK))?;
        file.lock()?;
        Ok(Locked(file))
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// A build folder in the cache, locked by this process; removed on drop unless installed.
pub(crate) struct Build {
    dir: TempDir,
    /// The flock on the folder itself: while it is held, no other build removes the folder.
    _owner: File,
}

impl Build {
    /// Makes a build folder in `cache` (creating `cache`), first removing what dead processes
    /// left behind.
    pub(crate) fn begin(cache: &Path) -> io::Result<Build> {
        std::fs::create_dir_all(cache)?;
        // Under the cache lock, so that a cleaner never sees a build folder before its owner
        // has locked it.
        let _locked = Locked::take(cache)?;
        remove_leftovers(cache);
        let dir = tempfile::Builder::new()
            .prefix("build-")
            .tempdir_in(cache)?;
        let owner = File::open(dir.path())?;
        owner.lock()?;
        Ok(Build { dir, _owner: owner })
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `bytes` to `name` in the build folder: a temporary file in the folder, fsync'ed
    /// and renamed.
    pub(crate) fn write(&self, name: &str, bytes: &[u8]) -> io::Result<PathBuf> {
        let path = self.path().join(name);
        wsp_files::write_atomically(&path, |out| out.write_all(bytes)).map_err(io::Error::other)?;
        Ok(path)
    }

    /// Makes the build folder, which holds `kernels.so`, the entry for `key` (keeping only
    /// the library and its check file) and returns the library's path. If another process
    /// installed a sound entry for `key` meanwhile, that one is used and this build dropped.
    pub(crate) fn install(self, cache: &Path, key: &str) -> io::Result<PathBuf> {
        let check = Check::of(&self.path().join(LIBRARY))?;
        self.write(CHECK, check.render().as_bytes())?;
        for e in std::fs::read_dir(self.path())? {
            let e = e?;
            let name = e.file_name();
            if name != LIBRARY && name != CHECK {
                std::fs::remove_file(e.path())?;
            }
        }
        // What the compiler wrote reaches the disk before the entry names it.
        wsp_files::sync_tree(self.path())?;
        let entry = cache.join(key);
        let _locked = Locked::take(cache)?;
        if entry.exists() {
            if verify(&entry).is_ok() {
                return Ok(entry.join(LIBRARY));
            }
            // Move the damaged entry aside in one step (rename onto an empty folder), then
            // remove it; a process that has it loaded keeps its mapping.
            let aside = tempfile::Builder::new()
                .prefix("stale-")
                .tempdir_in(cache)?
                .keep();
            std::fs::rename(&entry, &aside)?;
            let _ = std::fs::remove_dir_all(&aside);
        }
        wsp_files::rename_durably(self.path(), &entry)?;
        let _ = self.dir.keep();
        Ok(entry.join(LIBRARY))
    }
}

/// Removes `build-*` folders no live process holds and `stale-*` folders. The caller holds
/// the cache lock. Best effort: a folder that cannot be removed now is tried again next time.
fn remove_leftovers(cache: &Path) {
    let Ok(entries) = std::fs::read_dir(cache) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let path = e.path();
        if name.starts_with("stale-") || crate::toolchain::is_dead_build(&name, &path) {
            let _ = std::fs::remove_dir_all(&path);
        } else if name.starts_with("build-") {
            let Ok(dir) = File::open(&path) else {
                continue;
            };
            match dir.try_lock() {
                // Nobody holds it: its process is gone.
                Ok(()) => {
                    let _ = std::fs::remove_dir_all(&path);
                }
                Err(TryLockError::WouldBlock) | Err(TryLockError::Error(_)) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "0123456789abcdef0123456789abcdef";

    /// Installs a fake library with `bytes` for `key`.
    fn install(cache: &Path, key: &str, bytes: &[u8]) -> PathBuf {
        let build = Build::begin(cache).unwrap();
        build.write(LIBRARY, bytes).unwrap();
        build.install(cache, key).unwrap()
    }

    fn names(cache: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(cache)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn an_installed_library_is_a_hit() {
        let cache = tempfile::tempdir().unwrap();
        assert_eq!(lookup(cache.path(), KEY), Lookup::Missing);
        let lib = install(cache.path(), KEY, b"library bytes");
        assert_eq!(lookup(cache.path(), KEY), Lookup::Hit(lib.clone()));
        assert_eq!(std::fs::read(&lib).unwrap(), b"library bytes");
        assert_eq!(names(cache.path()), [KEY, LOCK]);
    }

    #[test]
    fn a_truncated_or_garbled_library_is_damaged_and_replaced() {
        let cache = tempfile::tempdir().unwrap();
        let lib = install(cache.path(), KEY, b"library bytes");
        std::fs::write(&lib, b"library").unwrap();
        assert_eq!(
            lookup(cache.path(), KEY),
            Lookup::Damaged("the library is 7 bytes, 13 when built".into())
        );
        std::fs::write(&lib, b"garbage bytes").unwrap();
        assert_eq!(
            lookup(cache.path(), KEY),
            Lookup::Damaged("the library's content changed since it was built".into())
        );
        let again = install(cache.path(), KEY, b"library bytes");
        assert_eq!(lookup(cache.path(), KEY), Lookup::Hit(again.clone()));
        assert_eq!(std::fs::read(&again).unwrap(), b"library bytes");
        assert_eq!(names(cache.path()), [KEY, LOCK]);
    }

    #[test]
    fn a_library_replaced_after_a_hit_is_verified_again() {
        let cache = tempfile::tempdir().unwrap();
        let lib = install(cache.path(), KEY, b"library bytes");
        assert_eq!(lookup(cache.path(), KEY), Lookup::Hit(lib.clone()));
        // The same size, another file (as a copy or an install would make it).
        let other = cache.path().join("other");
        std::fs::write(&other, b"garbage bytes").unwrap();
        std::fs::rename(&other, &lib).unwrap();
        assert_eq!(
            lookup(cache.path(), KEY),
            Lookup::Damaged("the library's content changed since it was built".into())
        );
    }

    #[test]
    fn a_missing_or_malformed_check_file_is_damaged() {
        let cache = tempfile::tempdir().unwrap();
        install(cache.path(), KEY, b"library bytes");
        let check = cache.path().join(KEY).join(CHECK);
        std::fs::write(&check, "size 13\n").unwrap();
        assert_eq!(
            lookup(cache.path(), KEY),
            Lookup::Damaged("its check file is malformed".into())
        );
        std::fs::remove_file(&check).unwrap();
        assert!(matches!(lookup(cache.path(), KEY), Lookup::Damaged(_)));
    }

    #[test]
    fn builds_left_by_dead_processes_are_removed_and_live_ones_kept() {
        let cache = tempfile::tempdir().unwrap();
        // A dead process's build: a folder nobody locks.
        let dead = cache.path().join("build-dead");
        std::fs::create_dir(&dead).unwrap();
        std::fs::write(dead.join("kernels.cpp"), "int x;").unwrap();
        std::fs::create_dir(cache.path().join("stale-half-removed")).unwrap();
        // A live build, begun and not finished.
        let live = Build::begin(cache.path()).unwrap();
        let live_name = live
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert_eq!(names(cache.path()), [live_name.as_str(), LOCK]);
        install(cache.path(), KEY, b"other");
        assert_eq!(names(cache.path()), [KEY, live_name.as_str(), LOCK]);
        drop(live);
        assert_eq!(names(cache.path()), [KEY, LOCK]);
    }

    #[test]
    fn a_failed_build_leaves_nothing() {
        let cache = tempfile::tempdir().unwrap();
        let build = Build::begin(cache.path()).unwrap();
        build.write("kernels.cpp", b"int x;").unwrap();
        drop(build);
        assert_eq!(names(cache.path()), [LOCK]);
    }

    #[test]
    fn concurrent_builds_of_one_key_all_succeed_with_one_entry() {
        let cache = tempfile::tempdir().unwrap();
        let builds: Vec<Build> = (0..4)
            .map(|_| Build::begin(cache.path()).unwrap())
            .collect();
        let libs: Vec<PathBuf> = std::thread::scope(|s| {
            let handles: Vec<_> = builds
                .into_iter()
                .enumerate()
                .map(|(i, b)| {
                    let cache = cache.path();
                    s.spawn(move || {
                        b.write(LIBRARY, format!("build {i}").as_bytes()).unwrap();
                        b.install(cache, KEY).unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let winner = std::fs::read(&libs[0]).unwrap();
        assert!(libs.iter().all(|l| *l == libs[0]));
        assert_eq!(lookup(cache.path(), KEY), Lookup::Hit(libs[0].clone()));
        assert!(winner.starts_with(b"build "));
        assert_eq!(names(cache.path()), [KEY, LOCK]);
    }

    #[test]
    fn check_files_round_trip() {
        let c = Check {
            size: 42,
            hash: blake3::hash(b"x"),
        };
        assert_eq!(Check::parse(&c.render()), Some(c));
        assert_eq!(Check::parse("size 42\nblake3 zz\n"), None);
        assert_eq!(Check::parse(""), None);
    }
}
