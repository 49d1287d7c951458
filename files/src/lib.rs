//! Files written so that once a command has said it succeeded they survive a crash or a power
//! loss, and a failed write loses nothing: each file goes to a temporary file in its folder,
//! is fsync'ed, renamed over its name, and the folder is fsync'ed (a rename is durable only once
//! its folder is). A write that fails (a full disk, a file-size limit) or is interrupted leaves
//! the earlier file whole and no temporary file behind. On Linux the temporary file has no
//! name while it is written (`O_TMPFILE`): a process killed mid-write, even by SIGKILL, leaves
//! nothing; it is given a name only for the rename. Every file the tools write (`save_npy`,
//! `--trace`, `--stats-json`, `--dump-tensors`, `--dump-tasks`, the kernel cache, `wsp emit`'s
//! tree, the kernelspec) goes through here.

use std::fs::{File, Permissions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Writes `path` through a temporary file in the same folder, fsync'ed and renamed over `path`
/// only once `write` has finished, then fsyncs the folder. On an error the temporary file is
/// removed and an earlier file at `path` is left as it was. Missing parent folders are created.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), String> {
    let shown = path.display();
    let dir = parent(path);
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    let name = path
        .file_name()
        .ok_or_else(|| format!("cannot write `{shown}`: not a file name"))?;
    let failed = |e: io::Error| format!("cannot write `{shown}`: {e}");
    // Without a name while it is written; a file system without O_TMPFILE takes the named way.
    if let Ok(fd) = rustix::fs::open(
        dir,
        rustix::fs::OFlags::TMPFILE | rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::from_bits_truncate(0o666),
    ) {
        let mut file = File::from(fd);
        {
            let mut out = BufWriter::new(&mut file);
            write(&mut out).and_then(|()| out.flush()).map_err(failed)?;
        }
        file.sync_all().map_err(failed)?;
        // A name in the folder for the rename, the only moment one exists.
        let anonymous = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file));
        let named = tempfile::Builder::new()
            .prefix(&format!(".{}.", name.to_string_lossy()))
            .suffix(".tmp")
            .make_in(dir, |p| {
                rustix::fs::linkat(
                    rustix::fs::CWD,
                    anonymous.as_str(),
                    rustix::fs::CWD,
                    p,
                    rustix::fs::AtFlags::SYMLINK_FOLLOW,
                )
                .map_err(io::Error::from)
            })
            .map_err(failed)?;
        named.persist(path).map_err(|e| failed(e.error))?;
        return sync_dir(dir).map_err(failed);
    }
    // A name that tells whose it is, should the process be killed before the rename.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .suffix(".tmp")
        // As `File::create` does: 0o666 less the umask (tempfile's default is 0o600).
        .permissions(Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .map_err(|e| format!("cannot write `{shown}`: {e}"))?;
    let written = {
        let mut out = BufWriter::new(tmp.as_file_mut());
        write(&mut out).and_then(|()| out.flush())
    }
    .and_then(|()| tmp.as_file().sync_all());
    // On an error `tmp` is dropped here, which removes it.
    written.map_err(|e| format!("cannot write `{shown}`: {e}"))?;
    tmp.persist(path)
        .map_err(|e| format!("cannot write `{shown}`: {}", e.error))?;
    sync_dir(dir).map_err(|e| format!("cannot write `{shown}`: {e}"))
}

/// Writes `bytes` to a new file at `path` and fsyncs it (for a file inside a folder that is
/// itself renamed into place, then synced with [`sync_tree`]).
pub fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Fsyncs a folder: its entries (names made, renamed or removed in it) reach the disk.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Fsyncs every file and folder under `dir`, and `dir` itself: a tree written by other
/// processes (a compiler's output) or file by file, before it is renamed into place.
pub fn sync_tree(dir: &Path) -> io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let kind = e.file_type()?;
        if kind.is_dir() {
            sync_tree(&e.path())?;
        } else if kind.is_file() {
            File::open(e.path())?.sync_all()?;
        }
    }
    sync_dir(dir)
}

/// Renames `from` to `to` and fsyncs the folders of both, so that the rename survives a power
/// loss.
pub fn rename_durably(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::rename(from, to)?;
    sync_dir(parent(to))?;
    if parent(from) != parent(to) {
        sync_dir(parent(from))?;
    }
    Ok(())
}

/// The folder a path is in (`.` for a bare name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_write_that_fails_midway_leaves_the_earlier_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.npy");
        std::fs::write(&path, b"earlier, complete contents").unwrap();
        let err = write_atomically(&path, |w| {
            // More than the buffer holds, so that some of it reaches the file.
            w.write_all(&[7u8; 1 << 16])?;
            // The final name must not show the partial data while it is being written.
            let now = std::fs::read(&path)?;
            assert!(
                now == b"earlier, complete contents",
                "partial data under the final name"
            );
            Err(io::Error::other("disk full (injected)"))
        })
        .unwrap_err();
        assert!(err.contains("out.npy") && err.contains("injected"), "{err}");
        let after = std::fs::read(&path).unwrap();
        assert!(
            after == b"earlier, complete contents",
            "the earlier file was lost"
        );
        assert_eq!(entries(dir.path()), ["out.npy"]);
    }

    #[test]
    fn a_complete_write_replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/out.json");
        write_atomically(&path, |w| w.write_all(b"first")).unwrap();
        write_atomically(&path, |w| w.write_all(b"second")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        assert_eq!(entries(&dir.path().join("sub")), ["out.json"]);
        // The same permissions as a file made by `File::create` (not tempfile's 0o600).
        let plain = dir.path().join("plain");
        std::fs::File::create(&plain).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode();
        assert_eq!(mode(&path), mode(&plain));
    }
}
