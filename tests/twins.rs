//! True twice: every Go twin (`listings/*/*/twin/`) runs against the real,
//! pinned client-go and controller-runtime, and must print exactly the bytes
//! its Rust listing committed in `output.txt`. A twin whose output differs from
//! the Rust listing by nature (Go's `%w` against anyhow's `.context()`, or a
//! Go-only fact) commits its own `twin/output.txt`, checked the same way.

mod common;

use std::fs;

#[test]
fn every_go_twin_prints_its_committed_output() {
    let Some(go) = common::go_or_skip("every_go_twin_prints_its_committed_output") else { return };
    let bin_dir = common::root().join("target/twins");
    fs::create_dir_all(&bin_dir).unwrap();

    let mut failures = Vec::new();
    let mut twins = 0;
    for dir in common::listing_dirs() {
        let twin = dir.join("twin");
        if !twin.is_dir() || common::needs_api_server(&dir) {
            continue; // api_server.rs runs those, against a real control plane
        }
        twins += 1;
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let package = format!("./{}", twin.strip_prefix(common::root().join("listings")).unwrap().display());
        let bin = bin_dir.join(&name);
        // A twin is a main package, or a test package when it needs
        // testing/synctest's virtual time; either way, build then run.
        let is_test = common::sorted_entries(&twin).iter().any(|f| f.to_string_lossy().ends_with("_test.go"));
        let mut build = common::go_command(&go);
        if is_test {
            build.args(["test", "-c", "-o"]).arg(&bin).arg(&package);
        } else {
            build.args(["build", "-o"]).arg(&bin).arg(&package);
        }
        common::stdout_of(build, &format!("building the Go twin {package}"));
        let mut run = std::process::Command::new(&bin);
        run.current_dir(&twin);
        if is_test {
            run.arg("-test.run=.");
        }
        let printed = common::stdout_of(run, &format!("running the Go twin {package}"));

        let own = twin.join("output.txt");
        if own.exists() {
            if let Some(f) = common::check_fresh(&format!("Go twin of {name}"), &own, &printed) {
                failures.push(f);
            }
        } else {
            // The Rust listing owns output.txt: never rewrite it from Go.
            let rust = fs::read_to_string(dir.join("output.txt")).unwrap_or_default();
            if rust != printed {
                failures.push(format!(
                    "Go twin of {name} ({package}) differs from the Rust listing's output.txt \
                     (- Rust, + Go):\n{}the Rust port and the Go code disagree: fix the port, not the file\n",
                    common::line_diff(&rust, &printed)
                ));
            }
        }
    }
    assert!(twins >= 6, "expected a Go twin beside every listing of chapters 01-05, found {twins}");
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
