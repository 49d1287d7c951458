//! `wsp jupyter install`: the kernelspec `wsp`, found where Jupyter looks for it
//! (jupyter_core's paths: `JUPYTER_DATA_DIR`, `XDG_DATA_HOME`, `JUPYTER_PATH`, prefixes).

use std::path::{Path, PathBuf};

/// Where to install, as `jupyter kernelspec install` takes it.
#[derive(Debug, Clone)]
pub enum Destination {
    /// The user's Jupyter data folder.
    User,
    /// The active Python environment (`VIRTUAL_ENV`, else `CONDA_PREFIX`).
    SysPrefix,
    Prefix(PathBuf),
}

/// Jupyter's user data folder: `JUPYTER_DATA_DIR`, else `$XDG_DATA_HOME/jupyter`, else
/// `~/.local/share/jupyter` (jupyter_core's `jupyter_data_dir` on Linux).
pub fn user_data_dir(env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, String> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty());
    if let Some(dir) = set("JUPYTER_DATA_DIR") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(xdg) = set("XDG_DATA_HOME") {
        return Ok(Path::new(&xdg).join("jupyter"));
    }
    let home = set("HOME").ok_or("neither JUPYTER_DATA_DIR nor HOME is set")?;
    Ok(Path::new(&home).join(".local/share/jupyter"))
}

/// The data folders Jupyter searches for kernelspecs, first match first: `JUPYTER_PATH`,
/// the user folder, the active environment's, then the system's.
pub fn search_path(env: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = env("JUPYTER_PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .filter(|d| !d.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    dirs.extend(user_data_dir(env).ok());
    if let Some(prefix) = env_prefix(env) {
        dirs.push(prefix.join("share/jupyter"));
    }
    dirs.push(PathBuf::from("/usr/local/share/jupyter"));
    dirs.push(PathBuf::from("/usr/share/jupyter"));
    dirs
}

fn env_prefix(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    ["VIRTUAL_ENV", "CONDA_PREFIX"]
        .iter()
        .find_map(|v| env(v).filter(|p| !p.is_empty()))
        .map(PathBuf::from)
}

/// The data folder (`.../share/jupyter`) a destination means.
pub fn data_dir(
    dest: &Destination,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PathBuf, String> {
    match dest {
        Destination::User => user_data_dir(env),
        Destination::SysPrefix => env_prefix(env)
            .map(|p| p.join("share/jupyter"))
            .ok_or_else(|| "--sys-prefix: no Python environment is active (VIRTUAL_ENV and CONDA_PREFIX are unset)".into()),
        Destination::Prefix(p) => Ok(p.join("share/jupyter")),
    }
}

/// Writes `kernels/wsp/kernel.json` and the logos under the destination's data folder;
/// returns the kernelspec's folder and notes for the user (whether Jupyter will find it).
pub fn install(dest: &Destination, wsp: &Path) -> Result<(PathBuf, Vec<String>), String> {
    let env = |name: &str| std::env::var(name).ok();
    let data = data_dir(dest, &env)?;
    let dir = data.join("kernels/wsp");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let spec = serde_json::json!({
        "argv": [wsp.display().to_string(), "jupyter", "kernel", "{connection_file}"],
        "display_name": "WSP",
        "language": "wsp",
        "interrupt_mode": "message",
        "metadata": {"debugger": false},
    });
    let text = serde_json::to_string_pretty(&spec).expect("a kernelspec serializes") + "\n";
    wsp_files::write_atomically(&dir.join("kernel.json"), |out| {
        out.write_all(text.as_bytes())
    })?;
    for size in [32u32, 64] {
        let png = logo(size);
        wsp_files::write_atomically(&dir.join(format!("logo-{size}x{size}.png")), |out| {
            out.write_all(&png)
        })?;
    }
    let mut notes = Vec::new();
    let path = search_path(&env);
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let ours = canonical(&data);
    match path.iter().position(|d| canonical(d) == ours) {
        None => notes.push(format!(
            "Jupyter does not search {}: add it to JUPYTER_PATH (export JUPYTER_PATH={})",
            data.display(),
            data.display()
        )),
        Some(i) => {
            if let Some(first) = path[..i]
                .iter()
                .find(|d| d.join("kernels/wsp/kernel.json").is_file())
            {
                notes.push(format!(
                    "{} also has a kernelspec `wsp`, which Jupyter finds first",
                    first.display()
                ));
            }
        }
    }
    Ok((dir, notes))
}

/// The kernel's logo: a 4×4 grid of tiles (a tile kernel's picture), drawn at `size` pixels.
fn logo(size: u32) -> Vec<u8> {
    let mut pixels = Vec::with_capacity((size * size * 4) as usize);
    let cell = size / 4;
    let gap = (size / 32).max(1);
    for y in 0..size {
        for x in 0..size {
            let (cx, cy) = (x / cell, y / cell);
            let inside = x % cell >= gap && y % cell >= gap;
            // A diagonal band of tiles in accent colour: tasks walking a 2-D axis.
            let rgba: [u8; 4] = if !inside {
                [0, 0, 0, 0]
            } else if cx == cy || cx + 1 == cy {
                [232, 89, 12, 255]
            } else {
                [36, 84, 160, 255]
            };
            pixels.extend_from_slice(&rgba);
        }
    }
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, size, size);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().expect("PNG header into memory");
        writer
            .write_image_data(&pixels)
            .expect("PNG data into memory");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_user_folder_follows_jupyter_data_dir_then_xdg_then_home() {
        let all = env_of(&[
            ("JUPYTER_DATA_DIR", "/j"),
            ("XDG_DATA_HOME", "/x"),
            ("HOME", "/h"),
        ]);
        assert_eq!(user_data_dir(&all).unwrap(), Path::new("/j"));
        let xdg = env_of(&[("XDG_DATA_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(user_data_dir(&xdg).unwrap(), Path::new("/x/jupyter"));
        let home = env_of(&[("JUPYTER_DATA_DIR", ""), ("HOME", "/h")]);
        assert_eq!(
            user_data_dir(&home).unwrap(),
            Path::new("/h/.local/share/jupyter")
        );
    }

    #[test]
    fn jupyter_path_comes_first_and_prefixes_follow() {
        let env = env_of(&[
            ("JUPYTER_PATH", "/a:/b"),
            ("HOME", "/h"),
            ("VIRTUAL_ENV", "/v"),
        ]);
        assert_eq!(
            search_path(&env),
            [
                "/a",
                "/b",
                "/h/.local/share/jupyter",
                "/v/share/jupyter",
                "/usr/local/share/jupyter",
                "/usr/share/jupyter"
            ]
            .map(PathBuf::from)
        );
        assert!(data_dir(&Destination::SysPrefix, &env_of(&[("HOME", "/h")])).is_err());
        assert_eq!(
            data_dir(&Destination::Prefix("/p".into()), &env).unwrap(),
            Path::new("/p/share/jupyter")
        );
    }

    #[test]
    fn the_logo_is_a_png_of_its_size() {
        let png = logo(64);
        let decoder = png::Decoder::new(std::io::Cursor::new(png));
        let reader = decoder.read_info().expect("a PNG");
        assert_eq!((reader.info().width, reader.info().height), (64, 64));
    }
}
