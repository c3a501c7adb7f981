//! Readers copy listings into their own projects. This test does the same:
//! each listing, with only the crates of `listings/` it depends on (by path),
//! goes into a folder outside the repository, is built and run there with
//! `cargo run`, and must print its committed output.
//!
//! The copies live in one scratch tree under the system's temporary folder,
//! laid out as `listings/` is, and are kept between runs: a file whose content
//! did not change is not rewritten, so cargo rebuilds only what changed. The
//! tree holds sources only, a few hundred kilobytes. What the builds write
//! (gigabytes, with kube) goes to `target/copy-out/` of this checkout, so it
//! is removed with the checkout instead of piling up in the temporary folder.
//! Each listing is still its own root package, outside any workspace, so
//! cargo reads only its manifest and its path dependencies; the other copies
//! beside it play no part in its build.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

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
/// `target` folders and Go twins are not part of a copy; `keep` names files
/// of `to` that the test writes itself.
fn sync_dir(from: &Path, to: &Path, keep: &[&str]) {
    fs::create_dir_all(to).unwrap();
    let mut wanted = Vec::new();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_owned();
        if name == "target" || name == "twin" {
            continue; // build output, and the Go side, are not part of a copy
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

/// Copies `crate_dir` and, transitively, its path dependencies into `dest`,
/// keeping their places relative to `listings/` so the paths still resolve.
fn copy_with_dependencies(crate_dir: &Path, listings: &Path, dest: &Path, copied: &mut Vec<PathBuf>) {
    let crate_dir = crate_dir.canonicalize().unwrap();
    let relative = crate_dir.strip_prefix(listings).expect("listings depend only on crates of listings/");
    let target = dest.join(relative);
    if copied.contains(&target) {
        return;
    }
    sync_dir(&crate_dir, &target, &["Cargo.lock"]);
    copied.push(target);
    for dependency in path_dependencies(&crate_dir) {
        copy_with_dependencies(&dependency, listings, dest, copied);
    }
}

#[test]
fn every_listing_builds_and_runs_when_copied_out() {
    let listings = common::root().join("listings").canonicalize().unwrap();
    let scratch = scratch("copy-out");
    let tree = scratch.join("listings");
    let mut failures = Vec::new();
    let mut copied_crates = Vec::new();
    for listing in common::rust_listings() {
        copy_with_dependencies(&listing.dir, &listings, &tree, &mut copied_crates);
        let copied = tree.join(listing.dir.canonicalize().unwrap().strip_prefix(&listings).unwrap());
        copy_lock_file(&copied);
        // A listing that needs an API server is only built here; api_server.rs
        // runs it against the control plane of the suite.
        let step = if listing.needs_api_server() { "build" } else { "run" };
        let out = Command::new(env!("CARGO"))
            .current_dir(&copied)
            .args([step, "--quiet"])
            .env("CARGO_TARGET_DIR", target_dir("copy-out"))
            .env("CARGO_PROFILE_DEV_DEBUG", NO_DEBUG_INFO)
            .env_remove("RUST_BACKTRACE")
            .output()
            .expect("cargo can be started");
        if !out.status.success() {
            failures.push(format!(
                "{} copied to {} did not build or run: {}\n{}",
                listing.name,
                copied.display(),
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
                "{} printed something else when copied out (- committed, + copy):\n{}",
                listing.name,
                common::line_diff(&committed, &printed)
            ));
        }
    }
    // Copies of crates that left the repository go too.
    remove_stale_copies(&tree, &copied_crates);
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Removes the crate folders of `tree` that this run did not copy.
fn remove_stale_copies(tree: &Path, copied: &[PathBuf]) {
    let mut stack = vec![tree.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if !path.is_dir() || copied.contains(&path) {
                continue;
            }
            if copied.iter().any(|c| c.starts_with(&path)) {
                stack.push(path); // a folder on the way to a copy, like ch05-silent-stall
            } else {
                fs::remove_dir_all(&path).unwrap();
            }
        }
    }
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
