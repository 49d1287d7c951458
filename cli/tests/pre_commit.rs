//! The repository's pre-commit hooks (`.pre-commit-hooks.yaml`), run by real pre-commit (pinned
//! in the test venv) with `try-repo` from a scratch git repository that commits a `.wsp` file
//! with a race: `wsp-check` stops the commit, `wsp-check-fix` mends the file, and the commit
//! then passes.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A task writes `Y[0]` from every iteration of a parallel loop: WSP301, whose safe fix
/// makes the loop sequential.
const RACY: &str = r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((4, 16, 16), F32, init=ones())
Y = Tensor((1, 16, 16), F32)

@kernel
def copy(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, pto.load(x))

@workload
def w():
    for b in P(Dense[4]):
        copy[b](x=X[b], y=Y[0])

program = w().compile(target="cpu_sim")
"#;

fn pre_commit() -> PathBuf {
    let python = std::env::var("WSP_TEST_PYTHON").expect(
        "WSP_TEST_PYTHON is not set: run the tests with `cargo xtask test`, which makes the venv with pre-commit",
    );
    Path::new(&python).with_file_name("pre-commit")
}

/// `program ARGS` in `dir`, with `wsp` on PATH and pre-commit's cache in the scratch folder.
fn run(dir: &Path, home: &Path, program: &Path, args: &[&str]) -> Output {
    let wsp_dir = Path::new(env!("CARGO_BIN_EXE_wsp")).parent().unwrap();
    let path = format!(
        "{}:{}",
        wsp_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .env("PRE_COMMIT_HOME", home)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn the_hooks_stop_a_bad_commit_and_mend_it() {
    let scratch = common::scratch("pre_commit", "hooks");
    let (repo, home) = (scratch.join("repo"), scratch.join("cache"));
    std::fs::create_dir_all(&repo).unwrap();
    let git = Path::new("git");
    let pre_commit = pre_commit();
    let root = common::root();
    let root = root.to_str().unwrap();
    assert!(run(&repo, &home, git, &["init", "-q"]).status.success());
    std::fs::write(repo.join("racy.wsp"), RACY).unwrap();
    assert!(
        run(&repo, &home, git, &["add", "racy.wsp"])
            .status
            .success()
    );
    // The commit runs this repository's `wsp-check` hook on what is staged.
    let hook = repo.join(".git/hooks/pre-commit");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\nexec '{}' try-repo '{root}' wsp-check\n",
            pre_commit.display()
        ),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&hook).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&hook, perms).unwrap();

    let refused = run(&repo, &home, git, &["commit", "-q", "-m", "racy"]);
    let out = text(&refused);
    assert!(!refused.status.success(), "{out}");
    assert!(
        out.contains("error[WSP301]") && out.contains("Failed"),
        "{out}"
    );

    // `wsp-check-fix` mends the file: the hook fails as pre-commit's fixers do (it changed a
    // file), and the loop is sequential now.
    let fixed = run(
        &repo,
        &home,
        &pre_commit,
        &["try-repo", root, "wsp-check-fix", "--files", "racy.wsp"],
    );
    let out = text(&fixed);
    assert!(!fixed.status.success(), "{out}");
    assert!(out.contains("files were modified by this hook"), "{out}");
    let mended = std::fs::read_to_string(repo.join("racy.wsp")).unwrap();
    assert_eq!(
        mended,
        RACY.replace("for b in P(Dense[4]):", "for b in P.seq(Dense[4]):")
    );

    assert!(
        run(&repo, &home, git, &["add", "racy.wsp"])
            .status
            .success()
    );
    let committed = run(&repo, &home, git, &["commit", "-q", "-m", "mended"]);
    assert!(committed.status.success(), "{}", text(&committed));
    let log = run(&repo, &home, git, &["log", "--oneline"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout).lines().count(), 1);
}
