//! Skipping a step whose inputs have not changed since it last passed.
//!
//! Most of `cargo xtask test` is incremental through cargo and Go's build
//! cache. A few steps are not: skeptic and `mdbook test` compile every block
//! afresh, and the browser test starts Chromium. Each of those names its inputs (files and
//! folders of the repository, tool versions, environment variables). When the
//! step passes, the fingerprint of those inputs is written to
//! `target/xtask-passed/<step>`; a later run whose fingerprint is the same
//! skips the step and says so. Any change to an input runs it again, and so do
//! `cargo xtask test --no-cache` and `CI=true` (CI never trusts a cache).

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::Hasher;
use std::path::Path;
use std::process::Command;

use crate::{Result, root};

/// Folders that are build output or tool state, never inputs.
const NOT_INPUTS: &[&str] = &["target", "node_modules", ".git", ".tools"];

/// The fingerprint of a step's inputs, built up one input at a time.
pub struct Inputs {
    hasher: DefaultHasher,
    files: usize,
}

impl Inputs {
    pub fn new() -> Self {
        Inputs { hasher: DefaultHasher::new(), files: 0 }
    }

    /// Files and folders (recursively, in sorted order) relative to the
    /// repository root: their paths and contents. A missing path counts as
    /// an input too (its absence).
    pub fn paths(mut self, paths: &[&str]) -> Self {
        for path in paths {
            self.hasher.write(path.as_bytes());
            self.walk(&root().join(path));
        }
        self
    }

    fn walk(&mut self, path: &Path) {
        if path.is_dir() {
            let mut entries: Vec<_> =
                fs::read_dir(path).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
            entries.sort();
            for entry in entries {
                let name = entry.file_name().unwrap_or_default().to_string_lossy().into_owned();
                if !NOT_INPUTS.contains(&name.as_str()) {
                    self.hasher.write(name.as_bytes());
                    self.walk(&entry);
                }
            }
        } else if let Ok(bytes) = fs::read(path) {
            self.hasher.write_usize(bytes.len());
            self.hasher.write(&bytes);
            self.files += 1;
        } else {
            self.hasher.write(b"<missing>");
        }
    }

    /// What a command prints (a tool's version): a different toolchain is a
    /// different input.
    pub fn command(mut self, program: &str, args: &[&str]) -> Self {
        let out = Command::new(program).args(args).output();
        self.hasher.write(program.as_bytes());
        match out {
            Ok(out) => {
                self.hasher.write(&out.stdout);
                self.hasher.write(&out.stderr);
            }
            Err(_) => self.hasher.write(b"<cannot start>"),
        }
        self
    }

    /// Environment variables the step reads.
    pub fn env(mut self, names: &[&str]) -> Self {
        for name in names {
            self.hasher.write(name.as_bytes());
            self.hasher.write(std::env::var(name).unwrap_or_default().as_bytes());
        }
        self
    }

    /// Any other value the step depends on (a pinned version, say).
    pub fn value(mut self, value: &str) -> Self {
        self.hasher.write(value.as_bytes());
        self
    }

    /// The fingerprint alone: a key for a cache outside `target/` (a
    /// binary built from these inputs).
    pub fn fingerprint(&self) -> u64 {
        self.hasher.finish()
    }

    fn key(&self) -> String {
        format!("{:016x} over {} files", self.hasher.finish(), self.files)
    }
}

/// Whether steps may be skipped: not under CI, not with `--no-cache`.
#[derive(Clone, Copy)]
pub struct Policy {
    pub trust_cache: bool,
}

impl Policy {
    pub fn from_args(args: &[String]) -> Self {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        let no_cache = args.iter().any(|a| a == "--no-cache");
        if ci {
            eprintln!("xtask: CI=true: every step runs, none is skipped for unchanged inputs");
        }
        Policy { trust_cache: !ci && !no_cache }
    }
}

/// Runs `step` unless it already passed with exactly these inputs.
pub fn cached(name: &str, inputs: Inputs, policy: Policy, step: impl FnOnce() -> Result) -> Result {
    let stamp = root().join("target/xtask-passed").join(name);
    let key = inputs.key();
    if policy.trust_cache && fs::read_to_string(&stamp).is_ok_and(|passed| passed == key) {
        eprintln!("xtask: {name}: skipped, it passed with these exact inputs ({key}); `--no-cache` runs it anyway");
        return Ok(());
    }
    let _ = fs::remove_file(&stamp);
    step()?;
    fs::create_dir_all(stamp.parent().expect("the stamp has a folder")).map_err(|e| e.to_string())?;
    fs::write(&stamp, key).map_err(|e| format!("writing {}: {e}", stamp.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch folder under target/, named for the test.
    fn scratch(name: &str) -> (std::path::PathBuf, String) {
        let rel = format!("target/xtask-cache-tests/{name}");
        let dir = root().join(&rel);
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        (dir, rel)
    }

    #[test]
    fn the_key_follows_the_contents_and_ignores_build_output() {
        let (dir, rel) = scratch("key");
        fs::write(dir.join("chapter.md"), "Forget is not delete").unwrap();
        let key = || Inputs::new().paths(&[&rel]).value("v1").key();
        let before = key();
        assert_eq!(key(), before, "the same inputs give the same key");

        fs::write(dir.join("chapter.md"), "Forget is not Done").unwrap();
        assert_ne!(key(), before, "a changed file changes the key");
        fs::write(dir.join("chapter.md"), "Forget is not delete").unwrap();
        assert_eq!(key(), before, "restoring the file restores the key");

        fs::create_dir_all(dir.join("target")).unwrap();
        fs::write(dir.join("target/artifact"), "build output").unwrap();
        assert_eq!(key(), before, "target/ folders are not inputs");

        fs::rename(dir.join("chapter.md"), dir.join("renamed.md")).unwrap();
        assert_ne!(key(), before, "a renamed file changes the key");
        assert_ne!(Inputs::new().paths(&[&rel]).value("v2").key(), key(), "another tool version changes the key");
    }

    #[test]
    fn a_step_is_skipped_only_after_it_passed_with_the_same_inputs() {
        let (dir, rel) = scratch("skip");
        fs::write(dir.join("input"), "1").unwrap();
        let inputs = || Inputs::new().paths(&[&rel]);
        let trust = Policy { trust_cache: true };
        let name = "xtask-cache-test-step";
        let _ = fs::remove_file(root().join("target/xtask-passed").join(name));
        let mut runs = 0;
        let mut step = |policy: Policy, pass: bool| {
            cached(name, inputs(), policy, || {
                runs += 1;
                if pass { Ok(()) } else { Err("red".to_owned()) }
            })
        };

        step(trust, true).unwrap();
        step(trust, true).unwrap();
        step(Policy { trust_cache: false }, true).unwrap();
        fs::write(dir.join("input"), "2").unwrap();
        assert!(step(trust, false).is_err());
        fs::write(dir.join("input"), "1").unwrap();
        step(trust, true).unwrap();
        step(trust, true).unwrap();
        // Ran: the first pass; not the same inputs again; --no-cache; the
        // changed inputs (red); the old inputs again, since the red run took
        // their stamp away; not the last one.
        assert_eq!(runs, 4);
        let _ = fs::remove_file(root().join("target/xtask-passed").join(name));
    }
}
