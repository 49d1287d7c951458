//! Every file the tools write survives a power loss once the command has said it succeeded,
//! and a write that fails loses nothing. strace shows, for each file, its temporary file
//! fsync'ed, renamed over its name, then its folder fsync'ed (a rename is durable only once
//! its folder is). Under a file-size limit the command fails naming the file, the earlier
//! file stays whole and no temporary file is left.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{children, have_strace, root, scratch};

/// A syscall of a writer, as strace shows it (`-y`: descriptors with their paths).
#[derive(Debug, PartialEq)]
enum Call {
    Fsync(PathBuf),
    Rename(PathBuf, PathBuf),
    /// A name given to a file written without one (`O_TMPFILE`), for its rename.
    Link(PathBuf),
}

/// Runs `wsp ARGS` under strace (following its children), with `cache` as the kernel cache;
/// its output and the fsyncs and renames that succeeded, in order.
fn traced(dir: &Path, cache: &Path, args: &[&str]) -> (Output, Vec<Call>) {
    let log = dir.join("strace.log");
    let out = Command::new("strace")
        .args(["-f", "-y", "-qq", "-s", "4096", "-o"])
        .arg(&log)
        .args([
            "-e",
            "trace=fsync,fdatasync,rename,renameat,renameat2,linkat",
            "--",
        ])
        .arg(env!("CARGO_BIN_EXE_wsp"))
        .args(args)
        .env("WSP_CACHE_DIR", cache)
        .current_dir(dir)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let quoted = |s: &str| -> Vec<PathBuf> {
        s.split('"')
            .skip(1)
            .step_by(2)
            .map(|p| dir.join(p))
            .collect()
    };
    let calls = text
        .lines()
        .filter(|l| l.trim_end().ends_with("= 0"))
        .filter_map(|l| {
            let call = l.split_once(' ')?.1.trim_start();
            if call.starts_with("fsync(") || call.starts_with("fdatasync(") {
                let path = call.split_once('<')?.1.split_once('>')?.0;
                Some(Call::Fsync(PathBuf::from(path)))
            } else if call.starts_with("linkat(") {
                let paths = quoted(call);
                Some(Call::Link(paths.last()?.clone()))
            } else if call.starts_with("rename") {
                let paths = quoted(call);
                let [from, to] = paths.as_slice() else {
                    return None;
                };
                Some(Call::Rename(from.clone(), to.clone()))
            } else {
                None
            }
        })
        .collect();
    (out, calls)
}

/// `to` was made by renaming a temporary over it, after the temporary was fsync'ed (a file) or
/// after `synced_inside` under it was (a folder), and its folder was fsync'ed after.
fn assert_durable(calls: &[Call], to: &Path, synced_inside: Option<&str>) {
    let renamed = calls
        .iter()
        .rposition(|c| matches!(c, Call::Rename(_, t) if t == to))
        .unwrap_or_else(|| panic!("no rename onto {}: {calls:#?}", to.display()));
    let Call::Rename(from, _) = &calls[renamed] else {
        unreachable!()
    };
    let want = match synced_inside {
        Some(inside) => from.join(inside),
        None => from.clone(),
    };
    // Written without a name (`O_TMPFILE`, shown as `#inode` in its folder), fsync'ed, then
    // named `from` for the rename.
    let linked = calls[..renamed]
        .iter()
        .rposition(|c| matches!(c, Call::Link(p) if *p == want));
    let synced = match linked {
        Some(l) => {
            let folder = want.parent().unwrap();
            calls[..l].iter().rev().find_map(|c| match c {
                Call::Fsync(p)
                    if p.parent() == Some(folder)
                        && p.file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('#')) =>
                {
                    Some(true)
                }
                Call::Link(p) | Call::Rename(_, p) if p.parent() == Some(folder) => Some(false),
                _ => None,
            }) == Some(true)
        }
        None => calls[..renamed].contains(&Call::Fsync(want.clone())),
    };
    assert!(
        synced,
        "{} was not fsync'ed before its rename onto {}: {calls:#?}",
        want.display(),
        to.display()
    );
    let folder = to.parent().unwrap().to_path_buf();
    assert!(
        calls[renamed..].contains(&Call::Fsync(folder.clone())),
        "{} was not fsync'ed after the rename onto {}: {calls:#?}",
        folder.display(),
        to.display()
    );
}

const PROGRAM: &str = r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((4, 64, 64), F32, init=arange())
Y = Tensor((4, 64, 64), F32)


@kernel
def scale(x: In[Tile[64, 64, F32]], y: Out[Tile[64, 64, F32]]):
    pto.store(y, pto.mul(x, 3.0))


@workload
def w():
    for i in P(Dense[4]):
        scale[i](x=X[i], y=Y[i])


program = w().compile(target="cpu_sim")
program.execute()
save_npy(Y, "y.npy")
"#;

/// The files in `dir` whose names a temporary file of ours or tempfile's has.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") || n.starts_with(".tmp") || n.starts_with("build-"))
        .collect()
}

#[test]
fn every_file_wsp_run_writes_is_fsynced_renamed_and_its_folder_fsynced() {
    if !have_strace() {
        return;
    }
    let dir = scratch("durability", "run");
    let cache = dir.join("cache");
    std::fs::write(dir.join("p.wsp"), PROGRAM).unwrap();
    let (out, calls) = traced(
        &dir,
        &cache,
        &[
            "run",
            "p.wsp",
            "--trace",
            "trace.json",
            "--stats-json",
            "stats.json",
            "--dump-tensors",
            "tensors",
            "--dump-tasks",
            "tasks.txt",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for file in [
        "y.npy",
        "trace.json",
        "stats.json",
        "tensors/X.npy",
        "tensors/Y.npy",
        "tasks.txt",
    ] {
        assert_durable(&calls, &dir.join(file), None);
    }
    // The kernel cache: the compiler's library inside the build folder, then the entry.
    let entry = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("kernels.so").is_file())
        .expect("a cache entry");
    assert_durable(&calls, &entry, Some("kernels.so"));
    assert!(temporaries(&dir).is_empty() && temporaries(&cache).is_empty());
}

#[test]
fn wsp_emit_fsyncs_its_tree_before_renaming_it_into_place() {
    if !have_strace() {
        return;
    }
    let dir = scratch("durability", "emit");
    let cache = dir.join("cache");
    let source = root().join("examples/hello_add.wsp");
    let (out, calls) = traced(
        &dir,
        &cache,
        &["emit", source.to_str().unwrap(), "-o", "tree"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_durable(&calls, &dir.join("tree"), Some("CMakeLists.txt"));
}

#[test]
fn past_a_file_size_limit_a_write_fails_naming_its_file_and_loses_nothing() {
    let dir = scratch("durability", "limit");
    let cache = dir.join("cache");
    std::fs::write(dir.join("p.wsp"), PROGRAM).unwrap();
    let earlier = b"the earlier, complete y.npy";
    std::fs::write(dir.join("y.npy"), earlier).unwrap();
    let limited = |limit: &str| {
        Command::new("prlimit")
            .arg(format!("--fsize={limit}"))
            .arg(env!("CARGO_BIN_EXE_wsp"))
            .args(["run", "p.wsp"])
            .env("WSP_CACHE_DIR", &cache)
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    // The kernel build: the compiler's library is past the limit.
    let out = limited("4096");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("too large") || err.contains("File too large"),
        "{err}"
    );
    assert!(temporaries(&cache).is_empty(), "{:?}", temporaries(&cache));
    assert!(
        std::fs::read_dir(&cache)
            .unwrap()
            .all(|e| !e.unwrap().path().join("kernels.so").exists()),
        "a partial cache entry"
    );
    // Past the limit inside the compiler (its assembly output): the machine's trouble, said
    // as such, not "a codegen bug".
    let out = Command::new("prlimit")
        .arg("--fsize=100000")
        .arg(env!("CARGO_BIN_EXE_wsp"))
        .arg("run")
        .arg(root().join("examples/transformer_layer.wsp"))
        .env("WSP_CACHE_DIR", dir.join("cache-compiler"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("the compiler could not write its output")
            && !err.contains("codegen bug"),
        "{err}"
    );
    // `save_npy`, with the kernels built: Y (64 KiB) is past a 16 KiB limit.
    let built = Command::new(env!("CARGO_BIN_EXE_wsp"))
        .args(["run", "p.wsp"])
        .env("WSP_CACHE_DIR", &cache)
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(built.status.success());
    std::fs::write(dir.join("y.npy"), earlier).unwrap();
    let out = limited("16384");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("cannot write") && err.contains("y.npy"),
        "{err}"
    );
    assert_eq!(std::fs::read(dir.join("y.npy")).unwrap(), earlier);
    assert!(temporaries(&dir).is_empty(), "{:?}", temporaries(&dir));
}

/// A signal, or SIGKILL, while `save_npy` writes a large file: the earlier file stays whole
/// and nothing is left in the folder, since the file being written has no name yet.
#[test]
fn a_run_killed_while_it_writes_leaves_no_temporary_file() {
    let dir = scratch("durability", "killed-write");
    let cache = dir.join("cache");
    let program = PROGRAM
        .replace("(4, 64, 64)", "(128, 512, 512)")
        .replace("Dense[4]", "Dense[128]")
        .replace("Tile[64, 64, F32]", "Tile[512, 512, F32]")
        .replace(
            "save_npy(Y, \"y.npy\")",
            "save_npy(Y, \"y.npy\")\nsave_npy(X, \"y.npy\")",
        );
    std::fs::write(dir.join("p.wsp"), program).unwrap();
    let earlier = b"the earlier, complete y.npy";
    for signal in ["TERM", "KILL"] {
        std::fs::write(dir.join("y.npy"), earlier).unwrap();
        let mut wsp = Command::new(env!("CARGO_BIN_EXE_wsp"))
            .args(["run", "p.wsp"])
            .env("WSP_CACHE_DIR", &cache)
            .current_dir(&dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Until the run process holds a file of the folder that has no name yet.
        let folder = dir.to_string_lossy().into_owned();
        let writing = || {
            children(wsp.id()).into_iter().find(|&c| {
                std::fs::read_dir(format!("/proc/{c}/fd")).is_ok_and(|fds| {
                    fds.flatten().any(|fd| {
                        std::fs::read_link(fd.path()).is_ok_and(|t| {
                            let t = t.to_string_lossy();
                            t.starts_with(&format!("{folder}/#"))
                        })
                    })
                })
            })
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        let mut child = None;
        while child.is_none() && std::time::Instant::now() < deadline {
            child = writing();
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let child = child.expect("the run process never wrote y.npy");
        let target = if signal == "KILL" { child } else { wsp.id() };
        assert!(
            Command::new("kill")
                .arg(format!("-{signal}"))
                .arg(target.to_string())
                .status()
                .unwrap()
                .success()
        );
        let _ = wsp.wait();
        // The run process is gone too.
        let gone = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::path::Path::new(&format!("/proc/{child}")).exists()
            && std::time::Instant::now() < gone
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(
            std::fs::read(dir.join("y.npy")).unwrap(),
            earlier,
            "SIG{signal}"
        );
        assert!(
            temporaries(&dir).is_empty(),
            "SIG{signal}: {:?}",
            temporaries(&dir)
        );
    }
}
