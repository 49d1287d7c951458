//! Writing output files without ever leaving a partial one: every file the runtime and
//! `wsp run` write (`save_npy`, `--trace`, `--stats-json`, `--dump-tensors`) goes through
//! [`write_atomically`].

use std::fs::Permissions;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Writes `path` through a temporary file in the same folder, renamed over `path` only once
/// `write` has finished and the data is flushed. A write that fails or is interrupted leaves
/// an earlier file at `path` whole and no partial file under its name; on failure the
/// temporary file is removed. Missing parent folders are created.
///
/// A rename is atomic only within one file system, hence the same folder. The data is not
/// fsync'ed: this guards against interruption and errors, not against a power loss.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), String> {
    let shown = path.display();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    let name = path
        .file_name()
        .ok_or_else(|| format!("cannot write `{shown}`: not a file name"))?;
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
    };
    // On an error `tmp` is dropped here, which removes it.
    written.map_err(|e| format!("cannot write `{shown}`: {e}"))?;
    tmp.persist(path)
        .map_err(|e| format!("cannot write `{shown}`: {}", e.error))?;
    Ok(())
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
