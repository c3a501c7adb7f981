//! Rules about the test suite itself.
//!
//! Time in the tests is fake: tokio's paused clock on the Rust side, Go's
//! `testing/synctest` bubble on the Go side, and waits on conditions in the
//! browser test. A real sleep makes a suite slow and flaky, so this test looks
//! for them in every test, listing and twin:
//!
//! * Rust: no `thread::sleep` (shuttle's zero-length scheduling point aside);
//!   a file that calls tokio's `sleep` must be in a crate that pauses the
//!   clock (`start_paused = true` or `time::pause()`);
//! * Go: a file that calls `time.Sleep` must run inside `synctest`;
//! * the browser test: no `waitForTimeout`, no `setTimeout`.
//!
//! The exceptions ([`REAL_TIME`]) are what runs against a real API server (a
//! server answers in real time, so those listings, their twins and their test
//! wait in real time, every wait bounded and ended by observed state), and
//! the port of an upstream benchmark that sleeps as upstream's does. They
//! are named here, so that no other file can join them unnoticed.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

/// The files that may wait in real time (paths relative to the root; a
/// folder covers what is inside it).
const REAL_TIME: &[&str] = &[
    "tests/api_server.rs",
    "listings/ch09-real-api-server/",
    "listings/cluster-support/",
    "listings/internal/apiserver/",
    "listings/internal/cluster/",
    // Listing 10-14: Kubernetes's PVC protection controller on the real
    // control plane; it polls observed state, and scrapes twice, two
    // seconds apart, to see the stall gauges grow.
    "listings/workqueuedone/corpus/pvcleak/",
    // A port of controller-runtime's BenchmarkAddLockContended, whose workers
    // sleep 1 ms per item as upstream's do: a benchmark measures wall-clock
    // time, and `cargo xtask perf` runs it beside upstream's own.
    "listings/perf/src/upstream.rs",
];

fn real_time(root: &Path, file: &Path) -> bool {
    let rel = file.strip_prefix(root).unwrap().to_string_lossy().into_owned();
    REAL_TIME.iter().any(|allowed| if allowed.ends_with('/') { rel.starts_with(allowed) } else { rel == *allowed })
}

fn files(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
    for path in common::sorted_entries(dir) {
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            if name != "target" && name != "node_modules" {
                files(&path, extensions, out);
            }
        } else if extensions.iter().any(|e| name.ends_with(e)) {
            out.push(path);
        }
    }
}

/// The folder of the crate (or Go package) a file belongs to: the nearest
/// folder above it with a Cargo.toml.
fn crate_of(file: &Path) -> PathBuf {
    file.ancestors().find(|d| d.join("Cargo.toml").exists()).unwrap().to_path_buf()
}

#[test]
fn no_test_sleeps_in_real_time() {
    let root = common::root();
    let mut problems = Vec::new();

    let mut rust = Vec::new();
    files(&root.join("listings"), &[".rs"], &mut rust);
    files(&root.join("tests"), &[".rs"], &mut rust);
    let paused = |krate: &Path| {
        let mut sources = Vec::new();
        files(krate, &[".rs"], &mut sources);
        sources.iter().any(|f| {
            let text = fs::read_to_string(f).unwrap();
            text.contains("start_paused = true") || text.contains("time::pause()")
        })
    };
    for file in rust.iter().filter(|f| !f.ends_with("tests/suite.rs") && !real_time(&root, f)) {
        let text = fs::read_to_string(file).unwrap();
        let rel = file.strip_prefix(&root).unwrap().display();
        for (n, line) in text.lines().enumerate() {
            if line.contains("thread::sleep(")
                && !line.contains("Duration::ZERO")
                && !line.trim_start().starts_with("//")
            {
                problems.push(format!("{rel}:{}: a real sleep: {}", n + 1, line.trim()));
            }
        }
        let sleeps = text
            .lines()
            .any(|l| !l.trim_start().starts_with("//") && l.contains("sleep(") && !l.contains("thread::sleep"));
        if sleeps && !paused(&crate_of(file)) {
            problems.push(format!("{rel}: calls tokio's sleep, but its crate never pauses the clock"));
        }
    }

    let mut go = Vec::new();
    files(&root.join("listings"), &[".go"], &mut go);
    for file in go.iter().filter(|f| !real_time(&root, f)) {
        let text = fs::read_to_string(file).unwrap();
        if text.contains("time.Sleep(") && !text.contains("synctest.") {
            problems.push(format!(
                "{}: calls time.Sleep outside a synctest bubble",
                file.strip_prefix(&root).unwrap().display()
            ));
        }
    }

    let mut js = Vec::new();
    files(&root.join("tests/browser"), &[".mjs", ".js"], &mut js);
    for file in &js {
        let text = fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.contains("waitForTimeout(") || line.contains("setTimeout(") {
                problems.push(format!(
                    "{}:{}: a fixed wait: {}",
                    file.strip_prefix(&root).unwrap().display(),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }

    assert!(!rust.is_empty() && !go.is_empty() && !js.is_empty(), "the scan found no files: wrong root?");
    for allowed in REAL_TIME {
        assert!(root.join(allowed).exists(), "REAL_TIME names {allowed}, which does not exist");
    }
    assert!(problems.is_empty(), "tests must not sleep in real time:\n{}", problems.join("\n"));
}
