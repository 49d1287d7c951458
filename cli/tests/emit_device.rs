//! `wsp emit`'s device build without the device toolchain: the tree is configured with
//! `PTO_WSP_ENABLE_ASCEND=ON` and a stub in place of CANN's `bisheng` that records its
//! arguments, so the flags and the source list the tree's CMake drives the compiler with are
//! checked here. (Whether real bisheng accepts them is for a machine with CANN: see the tree's
//! README.)

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::root;

fn ok(what: &str, out: &Output) {
    assert!(
        out.status.success(),
        "{what} failed: {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A script standing in for bisheng: appends its arguments to `log` (one invocation per line,
/// arguments separated by tabs) and creates the file named by `-o`, as a compiler would.
fn stub_compiler(dir: &Path, log: &Path) -> PathBuf {
    let path = dir.join("bisheng");
    let script = format!(
        "#!/bin/sh\n\
         for a in \"$@\"; do printf '%s\\t' \"$a\"; done >> '{log}'\n\
         printf '\\n' >> '{log}'\n\
         out=''\n\
         while [ $# -gt 0 ]; do\n\
         \x20 if [ \"$1\" = -o ]; then out=\"$2\"; fi\n\
         \x20 shift\n\
         done\n\
         if [ -n \"$out\" ]; then : > \"$out\"; fi\n",
        log = log.display()
    );
    std::fs::write(&path, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

/// What the configure step checks for in a CANN toolkit and a PTO-ISA checkout, and no more.
fn fake_toolkits(dir: &Path) -> (PathBuf, PathBuf) {
    let cann = dir.join("cann");
    let pto = dir.join("pto-isa");
    for (file, base) in [
        ("include/acl/acl.h", &cann),
        ("lib64/libascendcl.so", &cann),
        ("include/pto/pto-inst.hpp", &pto),
    ] {
        let path = base.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "").unwrap();
    }
    (cann, pto)
}

/// Emits `example`, builds its `aicore_kernels` target with the stub, and returns the recorded
/// invocations (each a list of arguments) and the tree's folder.
fn device_build(example: &str) -> Option<(Vec<Vec<String>>, PathBuf, PathBuf)> {
    if !common::have_cmake() {
        return None;
    }
    let dir = common::scratch("emit_device", example);
    let tree = dir.join("tree");
    let out = Command::new(env!("CARGO_BIN_EXE_wsp"))
        .arg("emit")
        .arg(root().join("examples").join(format!("{example}.wsp")))
        .arg("-o")
        .arg(&tree)
        .output()
        .expect("run wsp");
    ok("wsp emit", &out);

    let log = dir.join("bisheng.log");
    let bisheng = stub_compiler(&dir, &log);
    let (cann, pto) = fake_toolkits(&dir);
    let build = dir.join("build");
    let out = Command::new("cmake")
        .arg("-S")
        .arg(&tree)
        .arg("-B")
        .arg(&build)
        .arg("-DPTO_WSP_ENABLE_ASCEND=ON")
        .arg(format!("-DBISHENG={}", bisheng.display()))
        .arg(format!("-DPTO_ISA_PATH={}", pto.display()))
        .arg(format!("-DASCEND_HOME_PATH={}", cann.display()))
        // The environment must not decide for the test.
        .env_remove("PTO_ISA_PATH")
        .env_remove("ASCEND_HOME_PATH")
        .output()
        .expect("run cmake");
    ok("cmake configure", &out);
    let out = Command::new("cmake")
        .arg("--build")
        .arg(&build)
        .arg("--target")
        .arg("aicore_kernels")
        .output()
        .expect("run cmake --build");
    ok("cmake --build --target aicore_kernels", &out);

    let calls = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            l.split('\t')
                .filter(|a| !a.is_empty())
                .map(String::from)
                .collect()
        })
        .collect();
    Some((calls, tree, pto))
}

/// Checks one compile per expected kernel, each with its unit's architecture.
fn assert_compiles(calls: &[Vec<String>], tree: &Path, pto: &Path, kernels: &[(&str, &str)]) {
    assert_eq!(
        calls.len(),
        kernels.len(),
        "one bisheng run per AICore kernel, got:\n{calls:#?}"
    );
    let include = format!("-I{}", pto.join("include").display());
    for (kernel, unit) in kernels {
        let source = tree.join("aicore").join(format!("{kernel}.cpp"));
        let source = source.to_str().unwrap();
        let call = calls
            .iter()
            .find(|c| c.iter().any(|a| a == source))
            .unwrap_or_else(|| panic!("no bisheng run compiles {source}:\n{calls:#?}"));
        let has = |flag: &str| call.iter().any(|a| a == flag);
        let arch = format!("--cce-aicore-arch=dav-c220-{unit}");
        for flag in [
            arch.as_str(),
            "-DMEMORY_BASE",
            include.as_str(),
            "--cce-aicore-only",
            "-c",
        ] {
            assert!(has(flag), "{kernel}: no `{flag}` in {call:?}");
        }
        // Compiled as CCE source, for the other unit never.
        assert!(
            call.windows(2).any(|w| w[0] == "-x" && w[1] == "cce"),
            "{kernel}: not compiled with `-x cce`: {call:?}"
        );
        let other = if *unit == "vec" { "cube" } else { "vec" };
        assert!(
            !has(&format!("--cce-aicore-arch=dav-c220-{other}")),
            "{kernel}: {call:?}"
        );
        let obj = call
            .windows(2)
            .find(|w| w[0] == "-o")
            .map(|w| PathBuf::from(&w[1]))
            .unwrap_or_else(|| panic!("{kernel}: no `-o` in {call:?}"));
        assert_eq!(obj.file_name().unwrap(), format!("{kernel}.o").as_str());
        assert!(
            obj.is_file(),
            "{kernel}: {} was not produced",
            obj.display()
        );
    }
}

#[test]
fn vector_kernels_compile_for_the_vector_unit() {
    let Some((calls, tree, pto)) = device_build("softmax") else {
        return;
    };
    assert_compiles(&calls, &tree, &pto, &[("softmax_tile", "vec")]);
}

#[test]
fn matmul_kernels_compile_for_the_cube_unit() {
    let Some((calls, tree, pto)) = device_build("tiled_matmul") else {
        return;
    };
    assert_compiles(
        &calls,
        &tree,
        &pto,
        &[("matmul_acc__64x512_f16__512x64_f16__64x64_f32", "cube")],
    );
}

#[test]
fn split_kernels_each_compile_for_their_own_unit() {
    let Some((calls, tree, pto)) = device_build("transformer_layer") else {
        return;
    };
    // attn_head and ffn_tile mix cube and vector work, which dav-c220's cores cannot: each is
    // split into parts that run on one unit each. qkv_proj's casts are the fixpipe's.
    assert_compiles(
        &calls,
        &tree,
        &pto,
        &[
            ("rmsnorm_tile", "vec"),
            ("qkv_proj", "cube"),
            ("attn_head_aic0", "cube"),
            ("attn_head_aiv1", "vec"),
            ("attn_head_aic2", "cube"),
            ("residual_init", "vec"),
            ("out_proj_acc", "cube"),
            ("ffn_tile_aic0", "cube"),
            ("ffn_tile_aiv1", "vec"),
            ("ffn_tile_aic2", "cube"),
            ("ffn_tile_aiv3", "vec"),
        ],
    );
}
