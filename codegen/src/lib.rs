//! Codegen for the CPU simulator: the IR's kernels become C++17 (see [`cpp`]), built by the
//! system C++ compiler (found through the `cc` crate) into a shared library, cached by content.
//!
//! The cache key is the blake3 hash of the generated source, the compiler's identity (path,
//! size and modification time, so no process is started to ask its version) and its flags.
//! The source depends on the kernels alone: loop bounds, bindings, ragged lengths and routing
//! data are run-time values, so changing them never recompiles.

mod cache;
pub mod cpp;
pub mod npu;
mod toolchain;

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use wsp_ir::kernel::KernelBody;
use wsp_ir::{Kernel, Program};

/// A built kernel library.
#[derive(Debug, Clone)]
pub struct Artifact {
    pub library: PathBuf,
    /// Whether the library came from the cache (nothing was compiled).
    pub cache_hit: bool,
    pub compile_time_ms: f64,
}

/// A `cpp_src` compiler error mapped to the `.wsp` file (WSP601).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CppError {
    pub kernel: String,
    /// 1-based, in the `.wsp` file.
    pub line: u32,
    pub column: u32,
    pub message: String,
}

#[derive(Debug)]
pub enum BuildError {
    /// No C++ compiler could be started.
    NoCompiler {
        compiler: String,
        reason: String,
    },
    /// Errors inside `cpp_src` bodies, mapped to their `.wsp` lines.
    CustomKernel(Vec<CppError>),
    /// The compiler rejected generated code: a bug in codegen; the whole output is kept.
    Compiler {
        output: String,
    },
    Io(String),
    /// The build was stopped (an interrupt); nothing was cached.
    Interrupted,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::NoCompiler { compiler, reason } => write!(
                f,
                "no C++ compiler: could not run `{compiler}` ({reason}); install g++ or clang++, or set CXX to one"
            ),
            BuildError::CustomKernel(errs) => {
                for (i, e) in errs.iter().enumerate() {
                    if i > 0 {
                        writeln!(f)?;
                    }
                    write!(
                        f,
                        "{}:{}: error[WSP601]: in `cpp_src` of `{}`: {}",
                        e.line, e.column, e.kernel, e.message
                    )?;
                }
                Ok(())
            }
            BuildError::Compiler { output } => {
                write!(
                    f,
                    "the C++ compiler rejected generated code (a codegen bug):\n{output}"
                )
            }
            BuildError::Io(e) => write!(f, "cannot write the kernel library: {e}"),
            BuildError::Interrupted => write!(f, "interrupted: the kernel build was stopped"),
        }
    }
}

impl std::error::Error for BuildError {}

/// Flags beyond `cc`'s own (C++17, -O3, PIC).
const FLAGS: &[&str] = &[
    // Tiles are small and hot: let the compiler use every vector unit this machine has.
    "-march=native",
    "-fno-math-errno",
    // Lets the compiler compute both sides of a select (the prelude's branch-free math), as
    // clang does by default; kernels never read floating-point exception flags.
    "-fno-trapping-math",
    // A `cpp_src` body's `#if defined(__CPU_SIM)` blocks (the original's spelling) are taken.
    "-D__CPU_SIM",
];

/// What a library whose `cpp_src` bodies use PTO-ISA's tile API is compiled with: the
/// checkout `PTO_ISA_PATH` names and a compiler its CPU simulation builds with.
struct PtoIsa {
    include: PathBuf,
    compiler: String,
}

/// The PTO-ISA build of `program`, when a body uses its tile API: `PTO_ISA_PATH` (a checkout
/// with `include/pto/pto-inst.hpp`), and `CXX` or the first clang++ >= 17 (or g++ >= 13) on
/// the PATH, as PTO-ISA's own CPU-simulation builds need. `Err` names what is missing, at the
/// first such body.
fn pto_isa(program: &Program) -> Result<Option<PtoIsa>, BuildError> {
    let Some(k) = program.kernels.iter().find(|k| cpp::uses_pto_isa(k)) else {
        return Ok(None);
    };
    let line = match &k.body {
        wsp_ir::kernel::KernelBody::Cpp { first_line, .. } => *first_line,
        _ => 0,
    };
    let refuse = |message: String| {
        BuildError::CustomKernel(vec![CppError {
            kernel: k.name.clone(),
            line,
            column: 1,
            message,
        }])
    };
    let path = std::env::var_os("PTO_ISA_PATH").filter(|p| !p.is_empty());
    let Some(path) = path else {
        return Err(refuse("this body uses PTO-ISA's tile API (`pto::Tile`, `TLOAD`, ...): set PTO_ISA_PATH to a PTO-ISA checkout (hw-native-sys/pto-isa) to compile it with PTO-ISA's CPU simulation (-D__CPU_SIM, clang >= 17)".into()));
    };
    let include = PathBuf::from(&path).join("include");
    if !include.join("pto/pto-inst.hpp").is_file() {
        return Err(refuse(format!(
            "PTO_ISA_PATH={} is not a PTO-ISA checkout: it has no include/pto/pto-inst.hpp",
            PathBuf::from(path).display()
        )));
    }
    let compiler = match std::env::var("CXX") {
        Ok(cxx) if !cxx.is_empty() => cxx,
        _ => ["clang++-19", "clang++-18", "clang++-17", "clang++", "g++"]
            .into_iter()
            .find(|c| compiler_version(c).is_some_and(|(clang, major)| major >= if clang { 17 } else { 13 }))
            .map(String::from)
            .ok_or_else(|| refuse("this body uses PTO-ISA's tile API, whose CPU simulation needs clang >= 17 or g++ >= 13, and none is on the PATH: install clang++-19 or set CXX to one".into()))?,
    };
    Ok(Some(PtoIsa { include, compiler }))
}

/// Whether `compiler` is clang, and its major version, from `--version`.
fn compiler_version(compiler: &str) -> Option<(bool, u32)> {
    let out = Command::new(compiler).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().next()?;
    let clang = first.contains("clang");
    let version = first
        .split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()) && w.contains('.'))?;
    Some((clang, version.split('.').next()?.parse().ok()?))
}

/// The compiler and its flags, as `cc` finds them (honouring `CXX` and `CXXFLAGS`). Finding
/// them starts the compiler once, so it is done only on a cache miss.
fn compiler() -> Result<cc::Tool, BuildError> {
    let triple = env!("WSP_TARGET_TRIPLE");
    let mut b = cc::Build::new();
    b.cpp(true)
        .std("c++17")
        .opt_level(3)
        .debug(false)
        .target(triple)
        .host(triple)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .pic(true);
    for f in FLAGS {
        b.flag(f);
    }
    b.try_get_compiler().map_err(|e| BuildError::NoCompiler {
        compiler: std::env::var("CXX").unwrap_or_else(|_| "c++".into()),
        reason: e.to_string(),
    })
}

/// What identifies the compiler and its flags without running it: the executable `CXX` (or
/// `c++`) resolves to, with its size and modification time, `CXXFLAGS`, and our flags.
fn compiler_identity() -> String {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let program = cxx.split_whitespace().next().unwrap_or("c++").to_string();
    let resolved = which(Path::new(&program));
    // Through any links (`c++` -> `/etc/alternatives/c++` -> `g++-12`): the file that runs.
    let meta = resolved
        .as_ref()
        .and_then(|p| std::fs::metadata(p).ok())
        .map(|m| format!("{} {:?}", m.len(), m.modified().ok()))
        .unwrap_or_default();
    format!(
        "{cxx} {resolved:?} {meta} {:?} {} {}",
        std::env::var("CXXFLAGS").ok(),
        FLAGS.join(" "),
        env!("WSP_TARGET_TRIPLE")
    )
}

/// Where `program` is found on the PATH (or `program` itself, made absolute, when it names a
/// folder). Every build asks, and a notebook builds at every cell: the last answer is kept for
/// the same program and PATH while the file is still there, so that asking costs one `stat`
/// rather than one per PATH entry.
fn which(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return std::path::absolute(program).ok();
    }
    type Found = Option<(PathBuf, std::ffi::OsString, PathBuf)>;
    static LAST: std::sync::Mutex<Found> = std::sync::Mutex::new(None);
    let paths = std::env::var_os("PATH")?;
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((p, path, found)) = last.as_ref()
        && p == program
        && *path == paths
        && found.is_file()
    {
        return Some(found.clone());
    }
    let found = std::env::split_paths(&paths)
        .map(|d| d.join(program))
        .find(|p| p.is_file())?;
    *last = Some((program.to_path_buf(), paths, found.clone()));
    Some(found)
}

/// `WSP_CACHE_DIR` (unless empty), or `wsp` in the user's cache directory.
pub fn cache_dir() -> PathBuf {
    cache_dir_from(std::env::var_os("WSP_CACHE_DIR"))
}

fn cache_dir_from(var: Option<std::ffi::OsString>) -> PathBuf {
    // An empty value is unset, as for most variables: it must not mean the current folder.
    match var {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => dirs::cache_dir()
            .unwrap_or_else(std::env::temp_dir)
            .join("wsp"),
    }
}

/// A hasher fed the C++ source of `kernels`, and that source when it was made now. The last
/// few are kept by the kernels they came from: a notebook builds the same program at every
/// cell, and making its source (the prelude and every kernel) costs more than the lookup.
fn hashed_source(kernels: &[Kernel], wsp_name: &str) -> (blake3::Hasher, Option<String>) {
    const KEPT: usize = 8;
    type Kept = Vec<(Vec<Kernel>, String, blake3::Hasher)>;
    static HASHED: std::sync::Mutex<Kept> = std::sync::Mutex::new(Vec::new());
    let mut kept = HASHED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(at) = kept
        .iter()
        .position(|(k, w, _)| k.as_slice() == kernels && w == wsp_name)
    {
        // The most recent last.
        let entry = kept.remove(at);
        let hasher = entry.2.clone();
        kept.push(entry);
        return (hasher, None);
    }
    let source = cpp::source(kernels, wsp_name);
    let mut hasher = blake3::Hasher::new();
    hasher.update(source.as_bytes());
    if kept.len() == KEPT {
        kept.remove(0);
    }
    kept.push((kernels.to_vec(), wsp_name.to_string(), hasher.clone()));
    (hasher, Some(source))
}

/// Builds (or finds in `cache`, see [`cache_dir`]) the kernel library of `program`. `wsp_path`
/// is the `.wsp` file, named in `#line` directives so that `cpp_src` errors map back to it.
///
/// A cached library is checked against the size and hash recorded when it was built; a damaged
/// one is rebuilt, with a note on standard error. Setting `stop` to a signal's number (from
/// another thread or a signal handler: SIGINT, SIGTERM, SIGHUP) passes that signal on to the
/// compiler and everything it started, and the build returns [`BuildError::Interrupted`],
/// leaving nothing behind in the cache.
pub fn build(
    program: &Program,
    wsp_path: &Path,
    cache: &Path,
    stop: &AtomicUsize,
) -> Result<Artifact, BuildError> {
    let start = Instant::now();
    let wsp_name = wsp_path.display().to_string();
    let (mut hasher, source) = hashed_source(&program.kernels, &wsp_name);
    let pto = pto_isa(program)?;
    let identity = compiler_identity();
    hasher.update(identity.as_bytes());
    if let Some(p) = &pto {
        // The checkout's entry header stands for its version.
        let header = std::fs::metadata(p.include.join("pto/pto-inst.hpp"))
            .map(|m| format!("{} {:?}", m.len(), m.modified().ok()))
            .unwrap_or_default();
        hasher.update(format!("{} {} {header}", p.include.display(), p.compiler).as_bytes());
    }
    let key = hasher.finalize().to_hex();
    let key = &key[..32];
    match cache::lookup(cache, key) {
        cache::Lookup::Hit(library) => {
            return Ok(Artifact {
                library,
                cache_hit: true,
                compile_time_ms: start.elapsed().as_secs_f64() * 1e3,
            });
        }
        cache::Lookup::Missing => {}
        cache::Lookup::Damaged(why) => eprintln!(
            "note: the cached kernel library {} is damaged ({why}); rebuilding it",
            cache.join(key).display()
        ),
    }
    if stop.load(Ordering::Relaxed) != 0 {
        return Err(BuildError::Interrupted);
    }
    let io = |e: std::io::Error| BuildError::Io(format!("{}: {e}", cache.display()));
    // Dropping `work` on any error below removes the build folder.
    let work = cache::Build::begin(cache).map_err(io)?;
    let tool = toolchain::Compiler::of(cache, &identity, compiler)?;
    // The precompiled prelude with the standard headers, for programs with `cpp_src` bodies
    // when nothing comes before it in the source. The prelude alone takes g++ a few
    // milliseconds to read, less than loading a precompiled header.
    let source = source.unwrap_or_else(|| cpp::source(&program.kernels, &wsp_name));
    let prelude = match source.strip_prefix(cpp::PRELUDE_WITH_STD) {
        Some(rest) if pto.is_none() => toolchain::prelude(cache, &tool).map(|h| (h, rest)),
        _ => None,
    };
    let text = prelude.as_ref().map_or(source.as_str(), |(_, rest)| rest);
    let src = work.write("kernels.cpp", text.as_bytes()).map_err(io)?;
    let mut cmd: Command = tool.command();
    if let Some((header, _)) = &prelude {
        cmd.arg("-include").arg(header);
    }
    if let Some(p) = &pto {
        // As PTO-ISA's own CPU-simulation builds (tests/cpu/st): C++20, <stdint.h> and
        // <stddef.h> forced in (its headers use uint8_t and size_t without including them).
        let mut pto_cmd = Command::new(&p.compiler);
        pto_cmd.args(&tool.args);
        pto_cmd
            .arg("-std=c++20")
            .arg("-isystem")
            .arg(&p.include)
            .args(["-include", "stdint.h", "-include", "stddef.h"])
            .arg("-Wno-ignored-attributes");
        cmd = pto_cmd;
    }
    // Generated kernels need nothing of the C++ runtime: linking them against libc and libm
    // alone spares GNU ld reading libstdc++ (~9 ms of a ~20 ms link), and `-z defs` makes a
    // symbol they lack a link error rather than a library that fails to load.
    let lean_link = tool.gnu && !tool.clang && !cpp::has_cpp_src(&program.kernels);
    if lean_link {
        cmd.args(["-nodefaultlibs", "-Wl,-z,defs"]);
    }
    cmd.arg("-shared")
        .arg("-o")
        .arg(work.path().join(cache::LIBRARY))
        .arg(&src);
    if lean_link {
        cmd.args(["-lm", "-lc", "-lgcc"]);
    }
    let output = run_compiler(cmd, stop).map_err(|e| match e {
        Run::Interrupted => BuildError::Interrupted,
        Run::Failed(e) => BuildError::NoCompiler {
            compiler: tool.program.display().to_string(),
            reason: e.to_string(),
        },
    })?;
    if !output.status.success() {
        let text = String::from_utf8_lossy(&output.stderr).into_owned();
        let mapped = map_errors(program, &wsp_name, &text);
        return Err(if !mapped.is_empty() {
            BuildError::CustomKernel(mapped)
        } else if let Some(line) = out_of_room(&text) {
            // A full disk or a file-size limit under the compiler or the linker: the machine's
            // trouble, not the code's.
            BuildError::Io(format!(
                "the compiler could not write its output ({line}); free some space under {} or {}",
                cache.display(),
                std::env::temp_dir().display()
            ))
        } else {
            BuildError::Compiler { output: text }
        });
    }
    let library = work.install(cache, key).map_err(io)?;
    Ok(Artifact {
        library,
        cache_hit: false,
        compile_time_ms: start.elapsed().as_secs_f64() * 1e3,
    })
}

enum Run {
    Interrupted,
    Failed(std::io::Error),
}

/// How long an interrupted compiler gets to exit on the signal passed on before it is killed.
const GRACE: Duration = Duration::from_secs(2);
/// How often a running compiler is checked for an interrupt.
const POLL: Duration = Duration::from_millis(10);

/// Runs the compiler in a process group of its own (the driver and the compilers and
/// assembler it starts), collecting its output, until it ends or `stop` is set: then the
/// whole group gets the signal `stop` holds, and SIGKILL after [`GRACE`], and the driver is
/// reaped.
fn run_compiler(mut cmd: Command, stop: &AtomicUsize) -> Result<std::process::Output, Run> {
    use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};
    use std::os::unix::process::CommandExt;

    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(Run::Failed)?;
    // Drain both pipes on threads, so a chatty compiler never blocks on a full one.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let group = Pid::from_child(&child);
    // Readable once the driver exits, so the wait ends then rather than up to `POLL` later.
    let pidfd = rustix::process::pidfd_open(group, rustix::process::PidfdFlags::empty()).ok();
    loop {
        if let Some(status) = child.try_wait().map_err(Run::Failed)? {
            return Ok(std::process::Output {
                status,
                stdout: stdout.join().unwrap_or_default(),
                stderr: stderr.join().unwrap_or_default(),
            });
        }
        if stop.load(Ordering::Relaxed) != 0 {
            break;
        }
        match &pidfd {
            Some(fd) => {
                let mut fds = [rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN)];
                let timeout = rustix::event::Timespec {
                    tv_sec: 0,
                    tv_nsec: POLL.as_nanos() as _,
                };
                let _ = rustix::event::poll(&mut fds, Some(&timeout));
            }
            None => std::thread::sleep(POLL),
        }
    }
    let signal = i32::try_from(stop.load(Ordering::Relaxed))
        .ok()
        .and_then(Signal::from_named_raw)
        .unwrap_or(Signal::INT);
    // The driver is not reaped until the end, so the group's id cannot be reused meanwhile.
    let _ = rustix::process::kill_process_group(group, signal);
    let deadline = Instant::now() + GRACE;
    let exited = || {
        matches!(
            rustix::process::waitid(
                WaitId::Pid(group),
                WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT,
            ),
            Ok(Some(_))
        )
    };
    while !exited() && Instant::now() < deadline {
        std::thread::sleep(POLL);
    }
    // Also ends what ignored the signal (a shell's background jobs ignore SIGINT).
    let _ = rustix::process::kill_process_group(group, Signal::KILL);
    let _ = child.wait();
    Err(Run::Interrupted)
}

/// The first line of a compiler's output that says it ran out of room to write (a full disk,
/// a file-size limit), if one does.
fn out_of_room(output: &str) -> Option<&str> {
    const ROOM: [&str; 3] = [
        "No space left on device",
        "File too large",
        "Disk quota exceeded",
    ];
    output
        .lines()
        .find(|l| ROOM.iter().any(|r| l.contains(r)))
        .map(str::trim)
}

/// `file.wsp:LINE:COL: error: MESSAGE` lines (from `#line` inside `cpp_src` bodies), with the
/// kernel whose body holds that line.
fn map_errors(program: &Program, wsp_name: &str, stderr: &str) -> Vec<CppError> {
    let prefix = format!("{}:", wsp_name.replace('\\', "/"));
    let mut out = Vec::new();
    for line in stderr.lines() {
        let Some(rest) = line.strip_prefix(&prefix) else {
            continue;
        };
        let mut parts = rest.splitn(4, ':');
        let (Some(l), Some(c), Some(kind), Some(msg)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let kind = kind.trim();
        if kind != "error" && kind != "fatal error" {
            continue;
        }
        let (Ok(line), Ok(column)) = (l.parse::<u32>(), c.parse::<u32>()) else {
            continue;
        };
        let kernel = program
            .kernels
            .iter()
            .filter_map(|k| match &k.body {
                KernelBody::Cpp { first_line, .. } if *first_line <= line => {
                    Some((*first_line, k.name.clone()))
                }
                _ => None,
            })
            .max()
            .map(|(_, n)| n)
            .unwrap_or_default();
        out.push(CppError {
            kernel,
            line,
            column,
            message: msg.trim().to_string(),
        });
    }
    out
}

pub(crate) use wsp_aicore::cxx::double;

#[cfg(test)]
mod tests {
    use super::*;

    /// The prelude's vectorizable math and conversions, checked by a C++ program built with
    /// the kernels' compiler and flags: exp, log and tanh within 2 ulp of the double-precision
    /// results over a sweep of every float bit pattern, f16 and bf16 conversions exact.
    #[test]
    fn the_prelude_math_is_accurate() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("check.cpp");
        let checker = include_str!("../tests/prelude_math.cpp");
        std::fs::write(&src, format!("{}\n{checker}", cpp::PRELUDE)).unwrap();
        let exe = dir.path().join("check");
        let mut cmd = compiler().unwrap().to_command();
        let out = cmd.arg("-o").arg(&exe).arg(&src).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let run = Command::new(&exe).output().unwrap();
        let text = String::from_utf8_lossy(&run.stdout);
        assert!(run.status.success(), "{text}");
    }

    #[test]
    fn an_empty_cache_variable_is_unset() {
        assert_eq!(cache_dir_from(Some("".into())), cache_dir_from(None));
        assert_ne!(cache_dir_from(None), PathBuf::new());
        assert_eq!(cache_dir_from(Some("/x/y".into())), PathBuf::from("/x/y"));
    }
}
