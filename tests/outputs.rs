//! Every listing that prints has its stdout committed as `output.txt`, and the
//! book includes that file. This test runs every listing afresh and fails,
//! naming the listing with a diff, when a committed output is stale. A
//! listing with a `diagram.svg` has it drawn from the same fresh run
//! (`tools/diagrams`), and checked the same way.
//! Listings that need a real API server are run by `api_server.rs` instead,
//! against the control plane `cargo xtask test` starts.

mod common;

use std::process::Command;

#[test]
fn every_listing_output_is_fresh() {
    let listings: Vec<_> = common::rust_listings().into_iter().filter(|l| !l.needs_api_server()).collect();
    assert!(!listings.is_empty(), "no listings found under listings/");
    let names: Vec<String> = listings.iter().map(|l| l.name.clone()).collect();
    let exes = common::build_executables(&names);

    let mut failures = Vec::new();
    for listing in &listings {
        let exe = exes.get(&listing.name.replace('-', "_")).or_else(|| exes.get(&listing.name));
        let Some(exe) = exe else {
            failures.push(format!("{}: cargo built no executable for package {}\n", listing.rel(), listing.name));
            continue;
        };
        let out = Command::new(exe)
            .current_dir(&listing.dir)
            .env_remove("RUST_BACKTRACE")
            .env_remove("RUST_LIB_BACKTRACE")
            .output()
            .unwrap_or_else(|e| panic!("starting {}: {e}", exe.display()));
        if !out.status.success() {
            failures.push(format!(
                "{} (`cargo run -p {}`) exited with {}; its stderr:\n{}\n",
                listing.rel(),
                listing.name,
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        let stdout = String::from_utf8(out.stdout).expect("listings print UTF-8");
        if stdout.is_empty() {
            failures.push(format!("{}: printed nothing; every listing prints its result\n", listing.rel()));
            continue;
        }
        if let Some(failure) = common::check_fresh(&listing.name, &listing.output(), &stdout) {
            failures.push(failure);
        }
        // A listing with a picture: the picture is drawn from this very run.
        let diagram = listing.dir.join("diagram.svg");
        if diagram.exists() {
            match book_diagrams::render(&stdout) {
                Ok(svg) => failures.extend(common::check_fresh(&format!("{} diagram", listing.name), &diagram, &svg)),
                Err(e) => failures.push(format!("{}: cannot draw diagram.svg from its output: {e}\n", listing.rel())),
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn the_diff_names_the_changed_lines() {
    let diff = common::line_diff("a\nb\nc\n", "a\nB\nc\n");
    assert_eq!(diff, "  a\n+ B\n- b\n  c\n");
}
