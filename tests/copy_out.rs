//! Readers download a listing from the book: `book/downloads/<listing>.tar.gz`
//! for the Rust crate and `<listing>-go.tar.gz` for its Go twin, written by
//! `cargo xtask book` (xtask/src/archives.rs). This test asks the same code
//! for every archive (`cargo xtask archives DIR`), unpacks each into a folder
//! outside the repository, and builds and runs it there, as a reader would:
//!
//! * a Rust archive with `cargo run --locked` (so its Cargo.lock must be
//!   complete and unchanged), which must print the listing's committed
//!   output; chapter 8's are only built (`cargo build --locked`), since they
//!   need an API server (api_server.rs runs them against one);
//! * a Go archive with `go vet ./...` and `go build` (or `go test -c` for a
//!   twin that is a test) under `-mod=readonly`, so its go.mod and go.sum
//!   must be complete; the binary then runs in `twin/` and must print the
//!   twin's committed output (chapter 8's are only built). A Go archive whose
//!   files, expected output and Go are those of a run where it passed is not
//!   checked again, except under `CI=true` (see that test for why).
//!
//! The unpacked archives live in one scratch tree under the system's
//! temporary folder and are kept between runs: an archive is unpacked into a
//! staging folder and a file whose content did not change is not rewritten
//! (the archives' own times are all 1970), so cargo rebuilds only what
//! changed. What the builds write goes to `target/copy-out/` of this
//! checkout (Go's binaries to `target/copy-out/go/`), so it is removed with
//! the checkout instead of piling up in the temporary folder. Each Rust
//! archive is a workspace of its own, so cargo reads only its manifest and
//! the path dependencies inside it.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The scratch tree of this checkout's copies (one per repository path, so
/// two clones do not share it). Sources only: builds go to [`target_dir`].
fn scratch(what: &str) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    common::root().hash(&mut hasher);
    std::env::temp_dir().join(format!("forget-is-not-delete-{what}-{:08x}", hasher.finish() as u32))
}

/// Where the copies' builds go: inside this checkout's `target/`, so that
/// deleting the checkout (or `cargo clean`) deletes them. The two tests keep
/// separate folders because the guard's `.cargo/config.toml` sets an
/// environment variable that k8s-openapi's build script watches: one shared
/// folder would rebuild k8s-openapi back and forth on every run.
fn target_dir(what: &str) -> PathBuf {
    common::root().join("target").join(what)
}

/// The copies are built without debug info, which is most of a debug build's
/// size and plays no part in what these tests check (the copies' manifests
/// are left as readers get them; this is cargo's environment override).
const NO_DEBUG_INFO: &str = "false";

/// The `path = "..."` dependencies of a manifest, resolved against its folder.
fn path_dependencies(crate_dir: &Path) -> Vec<PathBuf> {
    let manifest = fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    manifest
        .lines()
        .filter_map(|line| {
            let rest = &line[line.find("path = \"")? + 8..];
            Some(crate_dir.join(&rest[..rest.find('"')?]))
        })
        .collect()
}

/// Makes `to` a copy of `from`, leaving alone the files that are already
/// equal (so their times do not change) and removing what `from` lacks.
/// `target` folders are not part of a copy; `keep` names files of `to` that
/// the test writes itself.
fn sync_dir(from: &Path, to: &Path, keep: &[&str]) {
    fs::create_dir_all(to).unwrap();
    let mut wanted = Vec::new();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_owned();
        if name == "target" {
            continue; // build output is not part of a copy
        }
        let dest = to.join(&name);
        if path.is_dir() {
            sync_dir(&path, &dest, &[]);
        } else {
            let bytes = fs::read(&path).unwrap();
            if fs::read(&dest).ok().as_deref() != Some(&bytes[..]) {
                fs::write(&dest, &bytes).unwrap();
            }
        }
        wanted.push(name);
    }
    for entry in fs::read_dir(to).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_owned();
        if wanted.contains(&name) || keep.iter().any(|k| name == *k) {
            continue;
        }
        if path.is_dir() { fs::remove_dir_all(&path).unwrap() } else { fs::remove_file(&path).unwrap() }
    }
}

/// Writes the workspace's lock file into a copied crate, to keep the copy on
/// the versions the book was checked with. Cargo trims the entries the copy
/// does not use, so it is written afresh every run; a lock file's time does
/// not make cargo rebuild anything.
fn copy_lock_file(copied: &Path) {
    fs::copy(common::root().join("Cargo.lock"), copied.join("Cargo.lock")).unwrap();
}

/// Every archive, made once per run by `cargo xtask archives` and unpacked
/// into the scratch tree; returns the tree, which then holds one folder per
/// archive (`listing-01-01/`, `listing-01-01-go/`, ...) and nothing else.
fn unpacked() -> &'static Path {
    static TREE: OnceLock<PathBuf> = OnceLock::new();
    TREE.get_or_init(|| {
        let scratch = scratch("copy-out");
        let (archives, staging, tree) = (scratch.join("archives"), scratch.join("staging"), scratch.join("tree"));
        // Whatever else is there is an older layout of this scratch tree.
        if scratch.is_dir() {
            for old in common::sorted_entries(&scratch) {
                if ![&archives, &staging, &tree].contains(&&old) {
                    fs::remove_dir_all(&old).unwrap();
                }
            }
        }
        // `cargo xtask archives`, built in a target folder of its own: in the
        // shared one, a change to the xtask's sources since `cargo xtask test`
        // started would replace the binary of that running xtask.
        let made = Command::new(env!("CARGO"))
            .current_dir(common::root())
            .args(["run", "--quiet", "--locked", "--package", "xtask", "--target-dir"])
            .arg(target_dir("copy-out/xtask"))
            .args(["--", "archives"])
            .arg(&archives)
            .output()
            .expect("cargo can be started");
        assert!(
            made.status.success(),
            "`cargo xtask archives {}` failed: {}\n{}",
            archives.display(),
            made.status,
            String::from_utf8_lossy(&made.stderr)
        );
        let _ = fs::remove_dir_all(&staging);
        fs::create_dir_all(&staging).unwrap();
        fs::create_dir_all(&tree).unwrap();
        for archive in common::sorted_entries(&archives) {
            let unpack = Command::new("tar").arg("-xzf").arg(&archive).arg("-C").arg(&staging).output().unwrap();
            assert!(
                unpack.status.success(),
                "unpacking {}: {}",
                archive.display(),
                String::from_utf8_lossy(&unpack.stderr)
            );
        }
        // Unchanged files keep their times; folders of archives that are gone go.
        sync_dir(&staging, &tree, &[]);
        fs::remove_dir_all(&staging).unwrap();
        tree
    })
}

#[test]
fn every_listing_builds_and_runs_from_its_archive() {
    let tree = unpacked();
    let mut failures = Vec::new();
    let listings = common::rust_listings();
    for listing in &listings {
        let unpacked = tree.join(&listing.name);
        assert!(unpacked.join("Cargo.toml").exists(), "no archive of {} in {}", listing.name, tree.display());
        // A listing that needs an API server is only built here; api_server.rs
        // runs it against the control plane of the suite.
        let step = if listing.needs_api_server() { "build" } else { "run" };
        let out = Command::new(env!("CARGO"))
            .current_dir(&unpacked)
            .args([step, "--locked", "--quiet"])
            .env("CARGO_TARGET_DIR", target_dir("copy-out"))
            .env("CARGO_PROFILE_DEV_DEBUG", NO_DEBUG_INFO)
            .env_remove("RUST_BACKTRACE")
            .output()
            .expect("cargo can be started");
        if !out.status.success() {
            failures.push(format!(
                "{} unpacked in {} did not build or run (`cargo {step} --locked`): {}\n{}",
                listing.name,
                unpacked.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        if listing.needs_api_server() {
            continue;
        }
        let committed = fs::read_to_string(listing.output()).unwrap_or_default();
        let printed = String::from_utf8_lossy(&out.stdout);
        if committed != printed {
            failures.push(format!(
                "{} printed something else from its archive (- committed, + archive):\n{}",
                listing.name,
                common::line_diff(&committed, &printed)
            ));
        }
    }
    assert!(listings.len() >= 20, "expected the book's Rust listings, found {}", listings.len());
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// The fingerprint of what a Go archive's check depends on: every file of the
/// unpacked module, the output it must print, and the Go that builds it.
fn go_fingerprint(module: &Path, expected: &str, go_version: &str, only_built: bool) -> String {
    use std::hash::Hasher;
    fn walk(dir: &Path, hasher: &mut std::collections::hash_map::DefaultHasher) {
        for entry in common::sorted_entries(dir) {
            hasher.write(entry.file_name().unwrap().as_encoded_bytes());
            if entry.is_dir() {
                walk(&entry, hasher);
            } else {
                let bytes = fs::read(&entry).unwrap();
                hasher.write_usize(bytes.len());
                hasher.write(&bytes);
            }
        }
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    walk(module, &mut hasher);
    hasher.write(expected.as_bytes());
    hasher.write(go_version.as_bytes());
    hasher.write_u8(only_built as u8);
    format!("{:016x}\n", hasher.finish())
}

/// Each Go command here spends about a second loading the module graph
/// (`go vet` two), even with everything in Go's build cache: about 80 s for
/// all the archives. So an archive whose files, expected output and Go are
/// those of a run where it passed is not checked again: the fingerprint of
/// a pass is kept beside its binary (`target/copy-out/go/<listing>.passed`).
/// Any change checks it again, and under `CI=true` every archive is checked.
#[test]
fn every_go_twin_builds_and_runs_from_its_archive() {
    let Some(go) = common::go_or_skip("every_go_twin_builds_and_runs_from_its_archive") else { return };
    let tree = unpacked();
    let bin_dir = target_dir("copy-out/go");
    fs::create_dir_all(&bin_dir).unwrap();
    let trust_passes = !std::env::var("CI").is_ok_and(|v| v == "true");
    let go_version = common::stdout_of(
        {
            let mut cmd = Command::new(&go);
            cmd.arg("version").env("GOTOOLCHAIN", "local");
            cmd
        },
        "go version",
    );
    let mut failures = Vec::new();
    let (mut twins, mut checked) = (0, 0);
    for dir in common::listing_dirs() {
        let twin = dir.join("twin");
        if !twin.is_dir() {
            continue;
        }
        twins += 1;
        let listing = dir.file_name().unwrap().to_string_lossy().to_string();
        let module = tree.join(format!("{listing}-go"));
        assert!(module.join("go.mod").exists(), "no Go archive of {listing} in {}", tree.display());
        let go_in = |dir: &Path| {
            let mut cmd = Command::new(&go);
            cmd.current_dir(dir)
                .env("GOFLAGS", "-mod=readonly -buildvcs=false")
                .env("GOTOOLCHAIN", "local")
                .env("GOWORK", "off");
            cmd
        };
        // The twin's own output.txt, or else the Rust listing's, as in twins.rs.
        let own = twin.join("output.txt");
        let committed = fs::read_to_string(if own.exists() { own } else { dir.join("output.txt") }).unwrap_or_default();
        let only_built = common::needs_api_server(&dir);
        let passed = bin_dir.join(format!("{listing}.passed"));
        let fingerprint = go_fingerprint(&module, &committed, &go_version, only_built);
        if trust_passes && fs::read_to_string(&passed).is_ok_and(|p| p == fingerprint) {
            continue;
        }
        let _ = fs::remove_file(&passed);
        checked += 1;
        let bin = bin_dir.join(&listing);
        let is_test = common::sorted_entries(&twin).iter().any(|f| f.to_string_lossy().ends_with("_test.go"));
        let mut build = go_in(&module);
        if is_test {
            build.args(["test", "-c", "-o"]).arg(&bin).arg("./twin");
        } else {
            build.args(["build", "-o"]).arg(&bin).arg("./twin");
        }
        let mut vet = go_in(&module);
        vet.args(["vet", "./..."]);
        let mut built = true;
        for (what, mut cmd) in [("go vet ./...", vet), ("go build", build)] {
            let out = cmd.output().expect("go can be started");
            if !out.status.success() {
                failures.push(format!(
                    "{listing}-go unpacked in {}: `{what}` failed: {}\n{}{}",
                    module.display(),
                    out.status,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ));
                built = false;
            }
        }
        if !built {
            continue;
        }
        if only_built {
            fs::write(&passed, &fingerprint).unwrap();
            continue; // api_server.rs runs chapter 8's twins, against a real control plane
        }
        let mut run = Command::new(&bin);
        run.current_dir(module.join("twin"));
        if is_test {
            run.arg("-test.run=.");
        }
        let out = run.output().expect("the twin can be started");
        let printed = String::from_utf8_lossy(&out.stdout);
        if out.status.success() && committed == printed {
            fs::write(&passed, &fingerprint).unwrap();
        } else {
            failures.push(format!(
                "{listing}-go printed something else from its archive ({}; - committed, + archive):\n{}{}",
                out.status,
                common::line_diff(&committed, &printed),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(twins >= 6, "expected the book's Go twins, found {twins}");
    eprintln!("{checked} of {twins} Go archives checked; the others are unchanged since they passed");
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// The middleware crate of chapter 9 is meant to be copied alone: it must
/// depend on no other crate of this repository, build on its own, and pass
/// its tests and doctests in a folder of its own.
#[test]
fn the_reconcile_guard_passes_its_tests_when_copied_out_alone() {
    let guard = common::root().join("listings/kube-reconcile-guard");
    assert!(
        path_dependencies(&guard).is_empty(),
        "kube-reconcile-guard must not depend on crates of this repository by path"
    );
    let scratch = scratch("copy-out-guard");
    let copied = scratch.join("kube-reconcile-guard");
    sync_dir(&guard, &copied, &["Cargo.lock"]);
    copy_lock_file(&copied);
    // It must build as a library on its own (its .cargo/config.toml picks
    // k8s-openapi's version there) and pass its tests.
    for step in ["build", "test"] {
        let out = Command::new(env!("CARGO"))
            .current_dir(&copied)
            .args([step, "--quiet"])
            .env("CARGO_TARGET_DIR", target_dir("copy-out-guard"))
            .env("CARGO_PROFILE_DEV_DEBUG", NO_DEBUG_INFO)
            .env_remove("RUST_BACKTRACE")
            .output()
            .expect("cargo can be started");
        assert!(
            out.status.success(),
            "kube-reconcile-guard copied to {}: `cargo {step}` failed: {}\n{}\n{}",
            copied.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
