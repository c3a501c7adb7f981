//! Readers copy listings into their own projects. This test does the same:
//! each listing, with only the crates of `listings/` it depends on (by path),
//! goes into a fresh folder outside the repository, is built and run there
//! with `cargo run`, and must print its committed output.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

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

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap();
        if name == "target" || name == "twin" {
            continue; // build output, and the Go side, are not part of a copy
        }
        if path.is_dir() { copy_dir(&path, &to.join(name)) } else { fs::copy(&path, to.join(name)).map(|_| ()).unwrap() }
    }
}

/// Copies `crate_dir` and, transitively, its path dependencies into `dest`,
/// keeping their places relative to `listings/` so the paths still resolve.
fn copy_with_dependencies(crate_dir: &Path, listings: &Path, dest: &Path) {
    let crate_dir = crate_dir.canonicalize().unwrap();
    let relative = crate_dir.strip_prefix(listings).expect("listings depend only on crates of listings/");
    let target = dest.join(relative);
    if target.exists() {
        return;
    }
    copy_dir(&crate_dir, &target);
    for dependency in path_dependencies(&crate_dir) {
        copy_with_dependencies(&dependency, listings, dest);
    }
}

#[test]
fn every_listing_builds_and_runs_when_copied_out() {
    let listings = common::root().join("listings").canonicalize().unwrap();
    let scratch = std::env::temp_dir().join("forget-is-not-delete-copy-out");
    let _ = fs::remove_dir_all(&scratch);
    let mut failures = Vec::new();
    for listing in common::rust_listings() {
        let dest = scratch.join(&listing.name);
        copy_with_dependencies(&listing.dir, &listings, &dest);
        let copied = dest.join(listing.dir.canonicalize().unwrap().strip_prefix(&listings).unwrap());
        // The workspace's lock file keeps the copy on the versions the book was
        // checked with; cargo drops the entries the copy does not use.
        fs::copy(common::root().join("Cargo.lock"), copied.join("Cargo.lock")).unwrap();
        let out = Command::new(env!("CARGO"))
            .current_dir(&copied)
            .args(["run", "--quiet"])
            .env("CARGO_TARGET_DIR", scratch.join("target"))
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
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    let _ = fs::remove_dir_all(&scratch);
}

/// The middleware crate of chapter 11 is meant to be copied alone: it must
/// depend on no other crate of this repository, build on its own, and pass
/// its tests and doctests in a folder of its own.
#[test]
fn the_reconcile_guard_passes_its_tests_when_copied_out_alone() {
    let guard = common::root().join("listings/kube-reconcile-guard");
    assert!(path_dependencies(&guard).is_empty(), "kube-reconcile-guard must not depend on crates of this repository by path");
    let scratch = std::env::temp_dir().join("forget-is-not-delete-copy-out-guard");
    let _ = fs::remove_dir_all(&scratch);
    let copied = scratch.join("kube-reconcile-guard");
    copy_dir(&guard, &copied);
    fs::copy(common::root().join("Cargo.lock"), copied.join("Cargo.lock")).unwrap();
    // It must build as a library on its own (its .cargo/config.toml picks
    // k8s-openapi's version there) and pass its tests.
    for step in ["build", "test"] {
        let out = Command::new(env!("CARGO"))
            .current_dir(&copied)
            .args([step, "--quiet"])
            .env("CARGO_TARGET_DIR", scratch.join("target"))
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
    let _ = fs::remove_dir_all(&scratch);
}
