//! What a cold compile needs besides the kernels, kept in the kernel cache so that only the
//! first compile on a machine pays for it:
//!
//! - `compiler-HASH.json`: the compiler's command as `cc` finds it. Finding it starts the
//!   compiler twice (a preprocessor probe and a flag probe), ~45 ms.
//! - `prelude-HASH/`: the prelude after the standard headers (`<algorithm>`, `<cmath>`,
//!   `<cstdint>`, `<cstring>`, `<limits>`), as programs with `cpp_src` bodies have it,
//!   precompiled with the kernels' exact command: reading those headers takes g++ ~0.2 s,
//!   loading them ~0.07 s.
//!   (Other programs' prelude includes no standard header and is read in a few milliseconds.)
//!   The first compile that finds it missing starts its build in the background and compiles
//!   as before; later ones include it. HASH covers the prelude's text and the command, so a
//!   new compiler or prelude gets a new one; a compiler that finds it unusable reads the
//!   header's text instead, the same code.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::BuildError;

/// The compiler's command: the program, its arguments and environment, and its family.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Compiler {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub clang: bool,
    pub gnu: bool,
}

impl Compiler {
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }

    /// The compiler of `cache` for `identity` (the compiler and flags, as
    /// [`crate::compiler_identity`] names them): read, or found by `find` and kept.
    pub fn of(
        cache: &Path,
        identity: &str,
        find: impl FnOnce() -> Result<cc::Tool, BuildError>,
    ) -> Result<Compiler, BuildError> {
        let path = cache.join(format!("compiler-{}.json", short_hash(identity.as_bytes())));
        if let Some(c) = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Compiler>(&b).ok())
        {
            return Ok(c);
        }
        let tool = find()?;
        // As `cc` would run it, wrapper (`CXX="ccache g++"`) included.
        let cmd = tool.to_command();
        let compiler = Compiler {
            program: PathBuf::from(cmd.get_program()),
            args: cmd.get_args().map(OsString::from).collect(),
            // (`cc` sets variables; it removes none.)
            env: cmd
                .get_envs()
                .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
                .collect(),
            clang: tool.is_like_clang(),
            gnu: tool.is_like_gnu(),
        };
        // A cache that cannot be written costs the next compile the probe, nothing more.
        let _ = wsp_files::write_atomically(&path, |out| {
            serde_json::to_writer(out, &compiler).map_err(std::io::Error::other)
        });
        Ok(compiler)
    }
}

fn short_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex()[..16].to_string()
}

/// The precompiled prelude's header, to pass as `-include`, when it is built; otherwise its
/// build is started in the background (once at a time) and `None` is returned.
pub(crate) fn prelude(cache: &Path, compiler: &Compiler) -> Option<PathBuf> {
    // GCC finds `X.gch` beside a header it includes; clang `X.pch` for `-include X`.
    let suffix = match (compiler.clang, compiler.gnu) {
        (true, _) => "pch",
        (false, true) => "gch",
        _ => return None,
    };
    let mut key = crate::cpp::PRELUDE_WITH_STD.as_bytes().to_vec();
    key.extend(serde_json::to_vec(compiler).unwrap_or_default());
    let name = format!("prelude-{}", short_hash(&key));
    let dir = cache.join(&name);
    let header = dir.join(HEADER);
    if dir.join(format!("{HEADER}.{suffix}")).is_file() && header.is_file() {
        return Some(header);
    }
    let marker = cache.join(format!("{name}.building"));
    // A build under way, or one that died less than a while ago: leave it.
    if std::fs::metadata(&marker)
        .and_then(|m| m.modified())
        .is_ok_and(|t| age(t) < STALE)
    {
        return None;
    }
    let _ = std::fs::remove_file(&marker);
    if std::fs::File::create_new(&marker).is_err() {
        return None;
    }
    let tmp = cache.join(format!("{name}.tmp-{}", std::process::id()));
    if std::fs::create_dir_all(&tmp).is_err()
        || std::fs::write(tmp.join(HEADER), crate::cpp::PRELUDE_WITH_STD).is_err()
    {
        let _ = std::fs::remove_file(&marker);
        return None;
    }
    // The compiler, then the folder renamed into place in one step; whatever happens, the
    // marker goes. A shell does the rename so that the build outlives a short `wsp run`.
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(r#""$@" >/dev/null 2>&1 && mv -T "$WSP_TMP" "$WSP_DIR" || rm -rf "$WSP_TMP"; rm -f "$WSP_MARK""#)
        .arg("sh")
        .arg(&compiler.program)
        .args(&compiler.args)
        .args(["-x", "c++-header", "-o"])
        .arg(tmp.join(format!("{HEADER}.{suffix}")))
        .arg(tmp.join(HEADER))
        .envs(compiler.env.iter().map(|(k, v)| (k, v)))
        .env("WSP_TMP", &tmp)
        .env("WSP_DIR", &dir)
        .env("WSP_MARK", &marker)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // Its own process group: an interrupt of this run (or of a notebook's process group) is
    // not the build's business.
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    match cmd.spawn() {
        // Reaped by a thread, so that a long-lived process keeps no zombie; a short one's
        // exit leaves it to init.
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
        }
        Err(_) => {
            let _ = std::fs::remove_dir_all(&tmp);
            let _ = std::fs::remove_file(&marker);
        }
    }
    None
}

/// The prelude's file name in its folder, as kernels include it.
const HEADER: &str = "wsp_prelude.hpp";

/// How long a build marker (or a build's folder) stands for a build under way.
const STALE: Duration = Duration::from_secs(600);

fn age(t: SystemTime) -> Duration {
    SystemTime::now().duration_since(t).unwrap_or_default()
}

/// Whether a cache folder entry is a prelude build's folder left by a build that died.
pub(crate) fn is_dead_build(name: &str, path: &Path) -> bool {
    name.starts_with("prelude-")
        && name.contains(".tmp-")
        && std::fs::metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|t| age(t) > STALE)
}
