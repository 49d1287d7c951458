//! IR → Ascend NPU source tree (`wsp emit`): AICore kernels in PTO-ISA form, the AICPU
//! expander's plan, the host replay and ACL runner, and the CMake that builds them.
//!
//! The tree is returned as data ([`Tree`]) and written by [`Tree::write`], all at once into a
//! fresh folder renamed over the destination, so a failed emit never leaves half a tree. What
//! the tree is made of: `tree/` here holds its fixed files (embedded below); the rest is
//! generated from the same IR the CPU simulator runs.

pub mod perf;
pub mod plan;

use wsp_aicore as aicore;
use wsp_aicore::verify;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use wsp_ir::kernel::KernelBody;
use wsp_ir::{Action, Kernel, Program};

/// The fixed files of every tree, by their path in it.
pub const STATIC_FILES: &[(&str, &str)] = &[
    ("CMakeLists.txt", include_str!("tree/CMakeLists.txt")),
    ("README.md", include_str!("tree/README.md")),
    ("cmake/check.cmake", include_str!("tree/cmake/check.cmake")),
    ("cmake/a2a3.cmake", include_str!("tree/cmake/a2a3.cmake")),
    ("cmake/skip.cmake", include_str!("tree/cmake/skip.cmake")),
    (
        "include/pto_wsp/costmodel.hpp",
        include_str!("tree/include/pto_wsp/costmodel.hpp"),
    ),
    (
        "include/pto_wsp/plan.hpp",
        include_str!("tree/include/pto_wsp/plan.hpp"),
    ),
    (
        "include/pto_wsp/expander.hpp",
        include_str!("tree/include/pto_wsp/expander.hpp"),
    ),
    (
        "aicpu/expander.cpp",
        include_str!("tree/aicpu/expander.cpp"),
    ),
    ("host/replay.cpp", include_str!("tree/host/replay.cpp")),
    ("host/npy.hpp", include_str!("tree/host/npy.hpp")),
    (
        "host/task_stream.hpp",
        include_str!("tree/host/task_stream.hpp"),
    ),
    (
        "host/runner_acl.cpp",
        include_str!("tree/host/runner_acl.cpp"),
    ),
    ("tools/compare.cpp", include_str!("tree/tools/compare.cpp")),
];

/// An emitted tree: every file with its path relative to the tree's folder, in path order.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    pub files: Vec<(String, Vec<u8>)>,
}

impl Tree {
    /// Adds a file (replacing one of the same path).
    pub fn add(&mut self, path: impl Into<String>, contents: impl Into<Vec<u8>>) {
        let path = path.into();
        self.files.retain(|(p, _)| *p != path);
        self.files.push((path, contents.into()));
        self.files.sort_by(|a, b| a.0.cmp(&b.0));
    }

    /// Writes the tree to `dir`: into a sibling temporary folder first, which then replaces
    /// `dir`. `dir` must be new, empty, or a tree `wsp emit` wrote; of an earlier tree its build
    /// folders (`build*`) are kept, and so are the files whose contents did not change, with
    /// their times, so a rebuild compiles only what changed. On any error `dir` is as it was.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        // A symbolic link is written through: the tree goes where it points.
        let dir = match std::fs::symlink_metadata(dir) {
            Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(dir)
                .map_err(|e| format!("cannot follow `{}`: {e}", dir.display()))?,
            _ => dir.to_path_buf(),
        };
        let shown = dir.display();
        let exists = dir.exists();
        if exists && !dir.is_dir() {
            return Err(format!("`{shown}` exists and is not a folder"));
        }
        if exists && !is_tree(&dir) && !is_empty(&dir)? {
            return Err(format!(
                "`{shown}` is not empty and is not a tree `wsp emit` wrote (it has no cmake/program.cmake): give a new or empty folder; nothing was written"
            ));
        }
        let parent = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
        let tmp = tempfile::Builder::new()
            .prefix(".wsp-emit-")
            .tempdir_in(parent)
            .map_err(|e| format!("cannot create a folder in `{}`: {e}", parent.display()))?;
        for (path, contents) in &self.files {
            let to = tmp.path().join(path);
            if let Some(d) = to.parent() {
                std::fs::create_dir_all(d)
                    .map_err(|e| format!("cannot create `{}`: {e}", d.display()))?;
            }
            wsp_files::write_synced(&to, contents)
                .map_err(|e| format!("cannot write `{}`: {e}", to.display()))?;
        }
        if !exists {
            self.sync_folders(tmp.path())?;
            let kept = tmp.keep();
            return wsp_files::rename_durably(&kept, &dir).map_err(|e| {
                let _ = std::fs::remove_dir_all(&kept);
                format!("cannot move the tree to `{shown}`: {e}")
            });
        }
        // Move the old tree aside first: if that fails (`-o .`, a busy folder) nothing moved.
        let old = tempfile::Builder::new()
            .prefix(".wsp-emit-old-")
            .tempdir_in(parent)
            .map_err(|e| format!("cannot create a folder in `{}`: {e}", parent.display()))?;
        let old_tree = old.path().join("tree");
        std::fs::rename(&dir, &old_tree).map_err(|e| {
            format!("cannot replace `{shown}`: {e}; nothing was changed (emit from outside the folder, into a path that is not the current folder)")
        })?;
        let mut kept = Vec::new();
        if let Ok(entries) = std::fs::read_dir(&old_tree) {
            for e in entries.flatten() {
                let name = e.file_name();
                let build = name.to_string_lossy().starts_with("build");
                if build && e.path().is_dir() && !tmp.path().join(&name).exists() {
                    kept.push(name);
                }
            }
        }
        let moved: Vec<_> = kept
            .into_iter()
            .filter(|name| std::fs::rename(old_tree.join(name), tmp.path().join(name)).is_ok())
            .collect();
        for (path, contents) in &self.files {
            let before = old_tree.join(path);
            if std::fs::read(&before).is_ok_and(|b| b == *contents) {
                let _ = std::fs::rename(&before, tmp.path().join(path));
            }
        }
        self.sync_folders(tmp.path())?;
        let new_tree = tmp.keep();
        if let Err(e) = wsp_files::rename_durably(&new_tree, &dir) {
            // Put the old tree back, with its build folders.
            for name in &moved {
                let _ = std::fs::rename(new_tree.join(name), old_tree.join(name));
            }
            let _ = std::fs::rename(&old_tree, &dir);
            let _ = std::fs::remove_dir_all(&new_tree);
            return Err(format!("cannot move the tree to `{shown}`: {e}"));
        }
        Ok(())
    }

    /// Fsyncs every folder of the tree being written in `root` (its files were fsync'ed as
    /// they were written, or are unchanged ones moved from the old tree), so that what the
    /// rename into place publishes is on the disk.
    fn sync_folders(&self, root: &Path) -> Result<(), String> {
        let mut folders: Vec<PathBuf> = vec![root.to_path_buf()];
        for (path, _) in &self.files {
            let mut d = root.join(path);
            while d.pop() && d.starts_with(root) && d != root {
                folders.push(d.clone());
            }
        }
        folders.sort();
        folders.dedup();
        for d in folders.iter().rev() {
            wsp_files::sync_dir(d).map_err(|e| format!("cannot write `{}`: {e}", d.display()))?;
        }
        Ok(())
    }
}

/// Whether `dir` holds a tree `wsp emit` wrote.
fn is_tree(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("cmake/program.cmake"))
        .is_ok_and(|t| t.starts_with(PROGRAM_CMAKE_HEADER))
}

fn is_empty(dir: &Path) -> Result<bool, String> {
    let mut entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read `{}`: {e}", dir.display()))?;
    Ok(entries.next().is_none())
}

const PROGRAM_CMAKE_HEADER: &str =
    "# Generated by `wsp emit`: the kernels and run-time symbols of this tree.\n";

/// The source file a tree is emitted from.
pub struct Source<'a> {
    /// Its file name (`softmax.wsp`), which the tree keeps it under in `source/`.
    pub name: &'a str,
    pub text: &'a str,
}

/// Each item once by name, in first-seen order: the file's tables are its programs' kernels,
/// tensors and symbols, one entry per name, as the runtime numbers them.
fn unique_by_name<'a, T: 'a>(
    items: impl IntoIterator<Item = &'a T>,
    name: impl Fn(&T) -> &str,
) -> Vec<&'a T> {
    let mut out: Vec<&'a T> = Vec::new();
    for it in items {
        if !out.iter().any(|o| name(o) == name(it)) {
            out.push(it);
        }
    }
    out
}

/// Every kernel of the programs once, in first-use order.
pub fn file_kernels(programs: &[Program]) -> Vec<&Kernel> {
    unique_by_name(programs.iter().flat_map(|p| &p.kernels), |k| &k.name)
}

/// Every run-time symbol of the programs once, in first-use order.
pub fn file_symbols(programs: &[Program]) -> Vec<&wsp_ir::Symbol> {
    unique_by_name(programs.iter().flat_map(|p| &p.symbols), |s| &s.name)
}

/// Every tensor of the programs once, in first-use order.
pub fn file_tensors(programs: &[Program]) -> Vec<&wsp_ir::Tensor> {
    unique_by_name(programs.iter().flat_map(|p| &p.tensors), |t| &t.name)
}

fn is_custom(k: &Kernel) -> bool {
    matches!(k.body, KernelBody::Cpp { .. })
}

/// Whether a tensor starts from a `data/NAME.npy` of the tree (a declared tensor whose `init`
/// is not zeros; the caller of [`tree`] writes those files) rather than from zeros.
pub fn starts_from_data(t: &wsp_ir::Tensor) -> bool {
    use wsp_ir::plan::{Init, TensorOrigin};
    matches!(t.origin, TensorOrigin::Declared) && !matches!(t.init, None | Some(Init::Zeros))
}

/// A value of a run-time symbol other than its default, for the tree's rebinding test:
/// smaller where it can be, so views sized for the default stay in bounds.
pub fn alternative_value(default: u64) -> u64 {
    if default > 1 {
        default - 1
    } else {
        default + 1
    }
}

/// The tree for a file's programs (already retargeted to `ascend_npu` by the caller) and its
/// top-level actions. Initial tensor data (`data/*.npy`) is the caller's to add: it is computed
/// by the runtime, which codegen does not depend on.
///
/// `kernel` writes each AICore kernel's C++ (`wsp_aicore::kernel_source_costed` with the
/// clock's costs, which codegen does not depend on either).
pub fn tree(
    programs: &[Program],
    actions: &[Action],
    source: &Source,
    arch: &wsp_ir::arch::Arch,
    kernel: &dyn Fn(&Kernel, &wsp_ir::layout::Layouts) -> Result<String, aicore::Refusal>,
) -> Result<Tree, String> {
    let mut tree = Tree::default();
    for (path, text) in STATIC_FILES {
        tree.add(*path, *text);
    }
    tree.add(format!("source/{}", source.name), source.text);
    let layouts = wsp_ir::layout::layouts(programs).map_err(|e| e.message)?;
    tree.add(
        "plan/plan.cpp",
        plan::plan_source(programs, actions, &layouts)?,
    );

    let all = file_kernels(programs);
    // The CPU forms of every kernel (the default replay), and of the custom ones alone (the
    // replay over PTO-ISA kernels, which have no AICore form).
    let wsp_path = format!("source/{}", source.name);
    tree.add(
        "host/kernels_cpu.cpp",
        crate::cpp::source(all.iter().copied(), &wsp_path),
    );
    if all.iter().any(|k| is_custom(k)) {
        let custom = all.iter().copied().filter(|k| is_custom(k));
        tree.add(
            "host/kernels_custom.cpp",
            crate::cpp::source(custom, &wsp_path),
        );
    }
    // Each AICore kernel, with the instruction of it Perf-Sim cannot run, if any.
    let mut timed: Vec<(&Kernel, Option<String>)> = Vec::new();
    for k in all.iter().copied().filter(|k| !is_custom(k)) {
        let src = kernel(k, &layouts).map_err(|e| format!("kernel `{}`: {e}", k.name))?;
        timed.push((k, verify::scalar_loop(&src)));
        tree.add(format!("aicore/{}.cpp", k.name), src);
    }
    tree.add("perf/perf_sim.cpp", perf::perf_sim_source(&timed, &layouts));
    tree.add(
        "cmake/program.cmake",
        program_cmake(programs, &all, source, arch),
    );
    tree.add("cmake/tolerances.txt", tolerances(programs));
    Ok(tree)
}

/// Bits of precision a float dtype carries through a computation (integers are exact).
fn precision(d: wsp_ir::DType) -> Option<u32> {
    d.is_float().then(|| 8 * d.size_bytes())
}

/// `cmake/tolerances.txt`: the float tensors computed through a narrower float than their own
/// dtype, each with that narrowest dtype, so `wsp_compare` checks them at its tolerance, as the
/// golden tests do (`via="float16"`). Two correct implementations differ by that dtype's
/// roundings (an f32 result of an f16 matmul, or of a tensor that was one). Computed to a fixed
/// point over every task of the programs: a task's outputs get the narrowest float of its
/// kernel (parameters and op results) and of the tensors it reads.
fn tolerances(programs: &[Program]) -> String {
    use std::collections::BTreeMap;
    use wsp_ir::kernel::{ParamType, ValueType};
    use wsp_ir::plan::TaskArg;

    // The narrowest float each tensor's values went through; starts at the tensor's own.
    let tensors = file_tensors(programs);
    let mut via: BTreeMap<&str, (wsp_ir::DType, u32)> = BTreeMap::new();
    for t in &tensors {
        if let Some(bits) = precision(t.dtype) {
            via.insert(&t.name, (t.dtype, bits));
        }
    }
    let mut all = Vec::new();
    for p in programs {
        for w in &p.workloads {
            wsp_ir::plan::tasks(&w.body, &mut all);
        }
    }
    let kernel_floor = |name: &str| {
        let k = programs
            .iter()
            .flat_map(|p| &p.kernels)
            .find(|k| k.name == name)?;
        let mut dtypes: Vec<wsp_ir::DType> = k
            .params
            .iter()
            .filter_map(|p| match &p.ty {
                ParamType::Tile(_, t) => Some(t.dtype),
                _ => None,
            })
            .collect();
        if let KernelBody::Ops(ops) = &k.body {
            dtypes.extend(ops.iter().filter_map(|o| match o.ty {
                ValueType::Tile(t) => Some(t.dtype),
                ValueType::Scalar(d) => Some(d),
                ValueType::Unit => None,
            }));
        }
        dtypes
            .into_iter()
            .filter_map(|d| Some((d, precision(d)?)))
            .min_by_key(|&(_, bits)| bits)
    };
    // Each pass can only narrow, and there are finitely many widths: a fixed point is reached.
    loop {
        let mut changed = false;
        for t in &all {
            let mut floor = kernel_floor(&t.kernel);
            for a in &t.args {
                if let TaskArg::Tile {
                    direction, view, ..
                } = a
                    && direction.reads()
                    && let Some(&v) = via.get(view.tensor.as_str())
                    && floor.is_none_or(|f| v.1 < f.1)
                {
                    floor = Some(v);
                }
            }
            let Some(floor) = floor else { continue };
            for a in &t.args {
                if let TaskArg::Tile {
                    direction, view, ..
                } = a
                    && direction.writes()
                    && let Some(v) = via.get_mut(view.tensor.as_str())
                    && floor.1 < v.1
                {
                    *v = floor;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut out = String::from(
        "# Generated by `wsp emit`: tensors compared at a narrower float's tolerance (NAME DTYPE).\n",
    );
    for t in tensors {
        if let (Some(own), Some(&(d, bits))) = (precision(t.dtype), via.get(t.name.as_str()))
            && bits < own
        {
            let _ = writeln!(out, "{} {}", t.name, d.name());
        }
    }
    out
}

/// `cmake/program.cmake`: what the fixed CMakeLists.txt builds and tests for this program.
fn program_cmake(
    programs: &[Program],
    kernels: &[&Kernel],
    source: &Source,
    arch: &wsp_ir::arch::Arch,
) -> String {
    let mut out = String::from(PROGRAM_CMAKE_HEADER);
    // The architecture the kernels are written for (`wsp_ir::arch`).
    let _ = writeln!(out, "set(WSP_NPU_ARCH {})", arch.npu_arch);
    let _ = writeln!(out, "set(WSP_AICORE_ARCH_vec {})", arch.aicore_vec);
    let _ = writeln!(out, "set(WSP_AICORE_ARCH_cube {})", arch.aicore_cube);
    let _ = writeln!(out, "set(WSP_AICORE_ARCH_mix {})", arch.aicore_mix);
    let _ = writeln!(out, "set(WSP_SOURCE \"source/{}\")", source.name);
    let names: Vec<&str> = kernels.iter().map(|k| k.name.as_str()).collect();
    let _ = writeln!(out, "set(WSP_KERNELS {})", names.join(" "));
    for k in kernels {
        if is_custom(k) {
            let _ = writeln!(out, "set(WSP_KERNEL_CUSTOM_{} ON)", k.name);
        } else {
            let _ = writeln!(out, "set(WSP_KERNEL_UNIT_{} {})", k.name, aicore::unit(k));
            if aicore::uses_bf16(k) {
                let _ = writeln!(out, "set(WSP_KERNEL_BF16_{} ON)", k.name);
            }
        }
    }
    let symbols = file_symbols(programs);
    let names: Vec<&str> = symbols.iter().map(|s| s.name.as_str()).collect();
    let _ = writeln!(out, "set(WSP_SYMBOLS {})", names.join(" "));
    for s in symbols {
        let _ = writeln!(out, "set(WSP_SYMBOL_DEFAULT_{} {})", s.name, s.default);
        let _ = writeln!(
            out,
            "set(WSP_SYMBOL_ALT_{} {})",
            s.name,
            alternative_value(s.default)
        );
    }
    out
}
