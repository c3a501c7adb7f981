//! Helpers shared by the book's tests.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The command that rewrites every committed output.
pub const BLESS: &str = "cargo xtask bless";

/// Whether this run should rewrite stale files instead of failing.
pub fn blessing() -> bool {
    std::env::var_os("UPDATE_OUTPUTS").is_some_and(|v| v == "1")
}

/// A Rust listing: a crate under `listings/chNN-*/` whose package is named
/// `listing-NN-MM`.
#[derive(Debug, Clone)]
pub struct Listing {
    pub name: String,
    pub dir: PathBuf,
}

impl Listing {
    /// The committed stdout: `output.svg` for a listing that draws a
    /// picture, `output.txt` otherwise.
    pub fn output(&self) -> PathBuf {
        let svg = self.dir.join("output.svg");
        if svg.exists() { svg } else { self.dir.join("output.txt") }
    }
    /// Whether the listing runs against a real API server (its manifest says
    /// so); the suite runs those in the API-server step only.
    pub fn needs_api_server(&self) -> bool {
        needs_api_server(&self.dir)
    }
    pub fn twin_dir(&self) -> PathBuf {
        self.dir.join("twin")
    }
    /// The path relative to the root, for messages.
    pub fn rel(&self) -> String {
        self.dir.strip_prefix(root()).unwrap_or(&self.dir).display().to_string()
    }
}

/// Every listing directory under `listings/ch*`, sorted, whether it holds a
/// Rust crate, a Go twin, or both.
pub fn listing_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for chapter in sorted_entries(&root().join("listings")) {
        let name = chapter.file_name().unwrap().to_string_lossy().to_string();
        if !chapter.is_dir() || !name.starts_with("ch") {
            continue;
        }
        for listing in sorted_entries(&chapter) {
            let n = listing.file_name().unwrap().to_string_lossy().to_string();
            if listing.is_dir() && n.starts_with("listing-") {
                dirs.push(listing);
            }
        }
    }
    dirs
}

/// The chapter whose listings run against a real API server.
pub const API_SERVER_CHAPTER: &str = "ch09-real-api-server";

/// Whether the listing in `dir` runs against a real API server: every
/// listing of [`API_SERVER_CHAPTER`] does, and no other.
pub fn needs_api_server(dir: &Path) -> bool {
    dir.parent().and_then(Path::file_name).is_some_and(|chapter| chapter == API_SERVER_CHAPTER)
}

/// The Rust listings (directories with a Cargo.toml).
pub fn rust_listings() -> Vec<Listing> {
    listing_dirs()
        .into_iter()
        .filter(|d| d.join("Cargo.toml").exists())
        .map(|dir| Listing { name: dir.file_name().unwrap().to_string_lossy().to_string(), dir })
        .collect()
}

pub fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

/// Builds the given packages with one cargo invocation and returns each one's
/// executable, taken from cargo's JSON messages (robust to the target-dir layout).
pub fn build_executables(packages: &[String]) -> BTreeMap<String, PathBuf> {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(root()).args(["build", "--locked", "--message-format=json-render-diagnostics"]);
    for p in packages {
        cmd.args(["-p", p]);
    }
    let out = cmd.output().expect("cargo can be started");
    assert!(out.status.success(), "building the listings failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let mut exes = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        if let (Some(exe), Some(name)) = (msg["executable"].as_str(), msg["target"]["name"].as_str()) {
            exes.insert(name.to_owned(), PathBuf::from(exe));
        }
    }
    exes
}

/// A line diff of `expected` and `actual` (longest common subsequence), with
/// `-` for lines only in the committed file and `+` for lines only in the run.
pub fn line_diff(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push_str(&format!("  {}\n", a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push_str(&format!("+ {}\n", b[j]));
            j += 1;
        } else {
            out.push_str(&format!("- {}\n", a[i]));
            i += 1;
        }
    }
    if expected.ends_with('\n') != actual.ends_with('\n') {
        out.push_str("(the two differ in their final newline)\n");
    }
    out
}

/// Compares a fresh `actual` with the committed file at `path`. Returns a
/// readable failure (what, where, diff, how to re-bless), or rewrites the file
/// when blessing.
pub fn check_fresh(what: &str, path: &Path, actual: &str) -> Option<String> {
    let committed = fs::read_to_string(path).ok();
    if committed.as_deref() == Some(actual) {
        return None;
    }
    if blessing() {
        fs::write(path, actual).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        eprintln!("blessed {}", path.display());
        return None;
    }
    let rel = path.strip_prefix(root()).unwrap_or(path).display().to_string();
    Some(match committed {
        None => format!("{what}: {rel} is missing; create it with `{BLESS}`\n"),
        Some(committed) => format!(
            "{what}: {rel} is stale (- committed, + fresh run):\n{}re-bless with `{BLESS}`, then review `git diff`\n",
            line_diff(&committed, actual)
        ),
    })
}

/// `go`, if this machine has it. Without Go the Go-side tests are skipped
/// with a message, except under `CI=true`, where they must run.
pub fn go_or_skip(test: &str) -> Option<PathBuf> {
    let found = Command::new("go").arg("version").output().ok().filter(|o| o.status.success());
    if found.is_some() {
        return Some(PathBuf::from("go"));
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{test}: `go` is not on PATH, and CI=true requires the Go tests to run (Go 1.26)");
    }
    eprintln!("skipped {test}: `go` not found on PATH; these tests need Go 1.26 and the Go module proxy");
    None
}

/// A `go` command in the Go module (`listings/`), never editing go.mod/go.sum.
pub fn go_command(go: &Path) -> Command {
    let mut cmd = Command::new(go);
    cmd.current_dir(root().join("listings")).env("GOFLAGS", "-mod=readonly -buildvcs=false");
    cmd
}

/// Runs a command and returns its stdout, or panics naming `what` with stderr.
pub fn stdout_of(mut cmd: Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(
        out.status.success(),
        "{what} failed with {}; its stderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}
