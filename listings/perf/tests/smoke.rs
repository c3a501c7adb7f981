//! Both sides of `cargo xtask perf`, at `--smoke` sizes, did identical work:
//! the same workloads in the same order, the same number of operations and of
//! hand-outs, and the same checksum of what was handed out (in hand-out order
//! where that order is deterministic, as a multiset elsewhere). The floor runs
//! the same workloads with the same operation counts.
//!
//! The Go side is built with `go build` (Go's cache keeps that cheap). Without
//! `go` on PATH the Go half is skipped, saying why, except under `CI=true`,
//! where the Go side must run.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One workload line: `workload ops elapsed_ns handouts checksum`.
#[derive(Debug)]
struct Line {
    workload: String,
    ops: u64,
    handouts: u64,
    checksum: String,
}

const WORKLOADS: [&str; 6] =
    ["cycles-1", "cycles-2", "cycles-8", "burst", "delaying", "priority"];

fn run(program: &Path, args: &[&str]) -> Vec<Line> {
    workload_lines(program, args, &output(program, args))
}

/// What a run at smoke sizes printed, after checking that it succeeded.
fn output(program: &Path, args: &[&str]) -> String {
    let what = format!("{} {}", program.display(), args.join(" "));
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    assert!(
        stdout.contains("sizes=smoke"),
        "{what} did not run at smoke sizes:\n{stdout}"
    );
    stdout
}

/// The workload lines of `stdout`.
fn workload_lines(program: &Path, args: &[&str], stdout: &str) -> Vec<Line> {
    let what = format!("{} {}", program.display(), args.join(" "));
    stdout
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(
                f.len(),
                5,
                "{what}: not `workload ops elapsed_ns handouts checksum`: {l:?}"
            );
            let number = |s: &str| {
                s.parse::<u64>()
                    .unwrap_or_else(|e| panic!("{what}: {s:?} in {l:?}: {e}"))
            };
            assert!(number(f[2]) > 0, "{what}: no time elapsed in {l:?}");
            Line {
                workload: f[0].to_owned(),
                ops: number(f[1]),
                handouts: number(f[3]),
                checksum: f[4].to_owned(),
            }
        })
        .collect()
}

fn names(lines: &[Line]) -> Vec<&str> {
    lines.iter().map(|l| l.workload.as_str()).collect()
}

/// The `# round` lines of a `--by-placement` run's `stdout`: ns per op and
/// the ping-pong round trip after the round.
/// The `# round` lines: ns per op, round trip and, where the run counted it,
/// the share of hand-outs made on the producer's thread.
fn rounds(stdout: &str) -> Vec<(f64, f64, Option<f64>)> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("# round\t"))
        .map(|l| {
            let f: Vec<f64> = l.split('\t').map(|x| x.parse().expect("a number")).collect();
            assert!(f.len() == 2 || f.len() == 3, "not `# round<TAB>ns per cycle<TAB>round trip[<TAB>share]`: {l:?}");
            assert!(f[0] > 0.0 && f[1] > 0.0, "a round without time: {l:?}");
            if let Some(&share) = f.get(2) {
                assert!((0.0..=1.0).contains(&share), "a share out of 0-1: {l:?}");
            }
            (f[0], f[1], f.get(2).copied())
        })
        .collect()
}

/// Builds the Go side into the tests' scratch directory, under a name of the
/// test's own (the tests run at the same time).
fn build_go(go: &Path, test: &str) -> PathBuf {
    let listings =
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("listings/");
    let go_bin = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("go-workqueue-perf-{test}"));
    let build = Command::new(go)
        .current_dir(listings)
        .args(["build", "-o"])
        .arg(&go_bin)
        .arg("./perf/go")
        .env("GOFLAGS", "-mod=readonly -buildvcs=false")
        .env("GOTOOLCHAIN", "local")
        .output()
        .expect("go build starts");
    assert!(
        build.status.success(),
        "go build ./perf/go failed:\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    go_bin
}

/// `go`, or `None` (having said why) when it is missing outside CI.
fn go_or_skip(test: &str) -> Option<PathBuf> {
    let found = Command::new("go")
        .arg("version")
        .output()
        .ok()
        .filter(|o| o.status.success());
    if found.is_some() {
        return Some(PathBuf::from("go"));
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "{test}: `go` is not on PATH, and CI=true requires the Go side to run (Go 1.26)"
        );
    }
    eprintln!(
        "skipped the Go side of {test}: `go` not found on PATH; it needs Go 1.26 and the Go module proxy"
    );
    None
}

#[test]
fn rust_and_go_do_identical_work() {
    let rust_bin = Path::new(env!("CARGO_BIN_EXE_workqueue-perf"));
    let rust = run(rust_bin, &["--smoke"]);
    assert_eq!(names(&rust), WORKLOADS);
    for line in &rust {
        assert!(line.handouts > 0, "Rust handed nothing out in {line:?}");
    }

    let floor = run(rust_bin, &["--smoke", "--floor"]);
    assert_eq!(names(&floor), WORKLOADS);
    for (f, r) in floor.iter().zip(&rust) {
        assert_eq!(
            f.ops, r.ops,
            "{}: the floor counts other ops than the queue",
            f.workload
        );
    }

    let one = run(rust_bin, &["--smoke", "--workload", "priority"]);
    assert_eq!(names(&one), ["priority"]);

    let Some(go) = go_or_skip("rust_and_go_do_identical_work") else { return };
    let go_bin = build_go(&go, "rust_and_go_do_identical_work");

    let go = run(&go_bin, &["--smoke"]);
    assert_eq!(names(&go), names(&rust), "the two sides run other workloads");
    for (g, r) in go.iter().zip(&rust) {
        assert_eq!(
            (g.ops, g.handouts),
            (r.ops, r.handouts),
            "{}: ops and hand-outs (Go, Rust)",
            g.workload
        );
        assert_eq!(
            g.checksum, r.checksum,
            "{}: the checksums of the hand-outs differ (Go, Rust)",
            g.workload
        );
    }
}

/// The rows beside the workloads: upstream's benchmarks (whose Go side is
/// upstream's test binary, run by `cargo xtask perf`), the hardware's own
/// costs and the lock rows run on the Rust side at smoke sizes, one process
/// each, and have no floor.
#[test]
fn upstream_and_hardware_rows_run() {
    let rust_bin = Path::new(env!("CARGO_BIN_EXE_workqueue-perf"));
    let rows = [
        "pq-add-get-done",
        "pq-add-only",
        "pq-add-lock-contended",
        "queue",
        "delaying-add-after",
        "hw-pingpong",
        "hw-wake",
        "hw-atomic",
        "hw-lock",
        "hw-lock-contended",
        "hw-handoff",
        "lock-cores",
        "lock-oversubscribed",
    ];
    for row in rows {
        let lines = run(rust_bin, &["--smoke", "--workload", row]);
        assert_eq!(names(&lines), [row]);
        assert!(lines[0].ops > 0, "{row}: no ops");
        let floor = Command::new(rust_bin)
            .args(["--smoke", "--floor", "--workload", row])
            .output()
            .expect("starts");
        assert!(
            !floor.status.success(),
            "{row} has no floor, yet --floor ran it"
        );
    }
}

/// `--by-placement` runs a cycles workload round by round on both sides: as
/// many rounds, each with its time and a round trip (and on the Rust side
/// the share of hand-outs made on the producer's thread), and in sum the
/// same work as each other; and the hand-off row the same way on the Rust
/// side.
#[test]
fn both_sides_run_cycles_by_placement() {
    let rust_bin = Path::new(env!("CARGO_BIN_EXE_workqueue-perf"));
    let args = ["--smoke", "--by-placement", "--workload", "cycles-2"];
    let stdout = output(rust_bin, &args);
    let rust = workload_lines(rust_bin, &args, &stdout);
    assert_eq!(names(&rust), ["cycles-2"]);
    assert_eq!(rust[0].ops, 3 * 100, "3 smoke rounds of 100 cycles");
    assert_eq!(rust[0].handouts, rust[0].ops);
    let rust_rounds = rounds(&stdout);
    assert_eq!(rust_rounds.len(), 3);
    assert!(
        rust_rounds.iter().all(|r| r.2.is_some()),
        "a Rust cycles round that does not say where its workers ran"
    );
    let handoff = ["--smoke", "--by-placement", "--workload", "hw-handoff"];
    let stdout = output(rust_bin, &handoff);
    assert_eq!(
        names(&workload_lines(rust_bin, &handoff, &stdout)),
        ["hw-handoff"]
    );
    let handoff_rounds = rounds(&stdout);
    assert_eq!(handoff_rounds.len(), 3);
    assert!(
        handoff_rounds.iter().all(|r| r.2.is_none()),
        "the hand-off has no producer's thread"
    );
    for wrong in [
        &["--by-placement", "--workload", "burst"][..],
        &["--by-placement", "--floor", "--workload", "cycles-2"],
    ] {
        let out = Command::new(rust_bin).args(wrong).output().expect("starts");
        assert!(!out.status.success(), "{wrong:?} ran");
    }

    let Some(go) = go_or_skip("both_sides_run_cycles_by_placement") else {
        return;
    };
    let go_bin = build_go(&go, "both_sides_run_cycles_by_placement");
    let stdout = output(&go_bin, &args);
    let go = workload_lines(&go_bin, &args, &stdout);
    assert_eq!(names(&go), ["cycles-2"]);
    assert_eq!(
        (go[0].ops, go[0].handouts, &go[0].checksum),
        (rust[0].ops, rust[0].handouts, &rust[0].checksum)
    );
    let go_rounds = rounds(&stdout);
    assert_eq!(go_rounds.len(), 3);
    assert!(
        go_rounds.iter().all(|r| r.2.is_none()),
        "Go cannot say where a goroutine ran"
    );
    let out = Command::new(&go_bin)
        .args(["--by-placement", "--workload", "burst"])
        .output()
        .expect("starts");
    assert!(!out.status.success(), "the Go side ran --by-placement on burst");
}
