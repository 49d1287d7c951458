//! `wsp run` and its kernel cache under damage and interruption: damaged libraries are
//! rebuilt, an empty `WSP_CACHE_DIR` is unset, dead builds are cleaned up, and an interrupt
//! sent to `wsp run` alone ends its run process or compiler too.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{children, root};

/// A scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    common::scratch("cache", name)
}

/// `wsp run FILE` with the kernel cache at `cache`.
fn wsp_run(file: &Path, cache: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wsp"));
    cmd.arg("run").arg(file).env("WSP_CACHE_DIR", cache);
    cmd
}

fn text(out: &Output) -> String {
    format!(
        "status {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `examples/hello_add.wsp` with its kernel changed, so that no other test's cache or build
/// holds the same key, and without its own `print(program.stats)`, so that `wsp run` prints
/// the stats line with `cache_hit`.
fn program(dir: &Path, variant: &str) -> PathBuf {
    let file = dir.join("add.wsp");
    let text = std::fs::read_to_string(root().join("examples/hello_add.wsp"))
        .unwrap()
        .replace(
            "pto.add(x, y)",
            &format!("pto.add(pto.add(x, y), {variant})"),
        )
        .replace("print(program.stats)\n", "");
    std::fs::write(&file, text).unwrap();
    file
}

/// Every `*.so` under `dir`.
fn libraries(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(libraries(&p));
        } else if p.extension().is_some_and(|x| x == "so") {
            out.push(p);
        }
    }
    out
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_truncated_or_garbled_cached_library_is_rebuilt() {
    let dir = scratch("damaged");
    let cache = dir.join("cache");
    let file = program(&dir, "pto.mul(x, x)");
    let first = wsp_run(&file, &cache).output().unwrap();
    assert!(first.status.success(), "{}", text(&first));
    let [library] = libraries(&cache).try_into().unwrap();
    let good = std::fs::read(&library).unwrap();

    // Truncated (an interrupted copy, a full disk): loading it used to die of SIGBUS.
    std::fs::write(&library, &good[..good.len() / 2]).unwrap();
    let out = wsp_run(&file, &cache).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        err.contains("note: the cached kernel library") && err.contains("rebuilding it"),
        "{}",
        text(&out)
    );
    assert!(err.contains("'cache_hit': False"));

    // Garbled, same size: loading it used to fail with a bare "dlopen failed".
    let [library] = libraries(&cache).try_into().unwrap();
    std::fs::write(&library, vec![0x5a; good.len()]).unwrap();
    let out = wsp_run(&file, &cache).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}", text(&out));
    assert!(err.contains("content changed"), "{}", text(&out));

    // The rebuilt entry is sound again.
    let out = wsp_run(&file, &cache).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("'cache_hit': True"));
    assert!(!err.contains("note:"));
}

#[test]
fn an_empty_cache_variable_is_unset() {
    let dir = scratch("empty-variable");
    let work = dir.join("work");
    std::fs::create_dir(&work).unwrap();
    let file = program(&work, "pto.mul(y, y)");
    let out = Command::new(env!("CARGO_BIN_EXE_wsp"))
        .arg("run")
        .arg(&file)
        .current_dir(&work)
        .env("WSP_CACHE_DIR", "")
        .env("XDG_CACHE_HOME", dir.join("user-cache"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        names(&work),
        ["add.wsp"],
        "the current folder is not the cache"
    );
    assert_eq!(libraries(&dir.join("user-cache/wsp")).len(), 1);
}

#[test]
fn a_build_left_by_a_dead_process_is_removed_by_the_next_build() {
    let dir = scratch("leftover");
    let cache = dir.join("cache");
    let leftover = cache.join("build-Xk3Q9a");
    std::fs::create_dir_all(&leftover).unwrap();
    std::fs::write(leftover.join("kernels.cpp"), "int half_written").unwrap();
    let file = program(&dir, "pto.sub(x, y)");
    let out = wsp_run(&file, &cache).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(!leftover.exists(), "{:?}", names(&cache));
    assert!(!names(&cache).iter().any(|n| n.starts_with("build-")));
}

/// Whether `pid` is a process that has not ended (a zombie has ended).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !s[s.rfind(')').unwrap() + 1..].trim_start().starts_with('Z'))
}

/// Polls `f` until it is true; false if it is not after a minute (a hang, not a slowness).
fn eventually(mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(60);
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// The signals that stop `wsp run`, and the exit status each gives (128 + its number).
const STOPS: [(&str, i32); 3] = [("INT", 130), ("TERM", 143), ("HUP", 129)];

/// Sends `signal` to `wsp run` alone (not its process group), then checks it exits `code`
/// and that none of `pids` is left running.
fn interrupt(mut wsp: Child, pids: &[u32], (signal, code): (&str, i32)) -> Output {
    assert!(
        Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(wsp.id().to_string())
            .status()
            .unwrap()
            .success()
    );
    let mut status = None;
    assert!(
        eventually(|| {
            status = wsp.try_wait().unwrap();
            status.is_some()
        }),
        "wsp run did not exit after SIG{signal}"
    );
    let out = wsp.wait_with_output().unwrap();
    // Killed outright, `wsp run` has no status of its own to give.
    let expected = (code >= 0).then_some(code);
    assert_eq!(out.status.code(), expected, "SIG{signal}: {}", text(&out));
    for &pid in pids {
        assert!(
            eventually(|| !running(pid)),
            "process {pid} survived SIG{signal}"
        );
    }
    out
}

#[test]
fn a_signal_stops_the_compiler_and_everything_it_started() {
    for stop in STOPS {
        stops_the_build(stop);
    }
}

fn stops_the_build(stop: (&str, i32)) {
    let dir = scratch(&format!("interrupt-build-{}", stop.0));
    let cache = dir.join("cache");
    let pids = dir.join("pids");
    // A compiler that never finishes: it answers cc's probes (`-E`, `-?`) through the real
    // one, and on the build itself records its pid and starts a helper, as a driver starts
    // cc1plus.
    let cxx = dir.join("slow-c++");
    std::fs::write(
        &cxx,
        format!(
            "#!/bin/sh\ncase \" $* \" in *\" -shared \"*) ;; *) exec c++ \"$@\";; esac\n\
             sleep 600 &\necho $! >> {p}\necho $$ >> {p}\nexec sleep 600\n",
            p = pids.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cxx, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let file = program(&dir, "pto.mul(x, y)");
    let wsp = wsp_run(&file, &cache)
        .env("CXX", &cxx)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut started = Vec::new();
    assert!(
        eventually(|| {
            started = std::fs::read_to_string(&pids)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.parse::<u32>().ok())
                .collect();
            started.len() == 2
        }),
        "the compiler never started"
    );
    let out = interrupt(wsp, &started, stop);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("interrupted"),
        "{}",
        text(&out)
    );
    assert!(
        !names(&cache).iter().any(|n| n.starts_with("build-")),
        "the build folder is left: {:?}",
        names(&cache)
    );
}

#[test]
fn a_signal_stops_the_run_process() {
    let dir = scratch("interrupt-run");
    for stop in STOPS {
        stops_the_run(&dir, stop);
    }
}

/// SIGKILL cannot be passed on: the run process notices its parent is gone and ends itself.
#[test]
fn a_run_process_outlives_no_killed_wsp_run() {
    let dir = scratch("killed-run");
    stops_the_run(&dir, ("KILL", -1));
}

fn stops_the_run(dir: &Path, stop: (&str, i32)) {
    let cache = dir.join("cache");
    let file = dir.join("spin.wsp");
    // A kernel that spins for hours.
    std::fs::write(
        &file,
        r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((4, 8, 8), F32, init=ones())
Y = Tensor((4, 8, 8), F32)


@kernel(cpp_src="""
    for (volatile long i = 0; i < (1L << 50); ++i) {}
    y[0] = x[0];
""")
def spin(x: In[Tile[8, 8, F32]], y: Out[Tile[8, 8, F32]]):
    pass


@workload
def w(batch):
    for i in P(batch):
        spin[i](x=X[i], y=Y[i])


program = w(Dense[4]).compile(target="cpu_sim")
program.execute()
"#,
    )
    .unwrap();
    let wsp = wsp_run(&file, &cache)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let parent = wsp.id();
    let mut run = Vec::new();
    assert!(
        eventually(|| {
            run = children(parent)
                .into_iter()
                .filter(|p| {
                    std::fs::read(format!("/proc/{p}/cmdline"))
                        .is_ok_and(|c| c.split(|&b| b == 0).any(|a| a == b"__exec"))
                })
                .collect();
            !run.is_empty()
        }),
        "the run process never started"
    );
    let out = interrupt(wsp, &run, stop);
    assert!(
        stop.0 == "KILL" || String::from_utf8_lossy(&out.stderr).contains("interrupted"),
        "{}",
        text(&out)
    );
}

#[test]
fn runs_that_build_one_key_at_once_all_succeed_with_one_entry() {
    let dir = scratch("concurrent");
    let cache = dir.join("cache");
    let file = program(&dir, "pto.mul(pto.add(x, y), y)");
    let runs: Vec<Child> = (0..3)
        .map(|_| {
            wsp_run(&file, &cache)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for run in runs {
        let out = run.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out));
    }
    assert_eq!(libraries(&cache).len(), 1, "{:?}", names(&cache));
    assert!(!names(&cache).iter().any(|n| n.starts_with("build-")));
}
