//! The listings that run against a real API server, and their Go twins.
//!
//! `cargo xtask test` (or `cargo xtask api-server-test`) builds the control
//! plane where it is missing, starts one (etcd and kube-apiserver, through
//! envtest), runs this test with `KUBECONFIG` pointing at it, and stops it.
//! Each listing and each twin must print its committed output, as in
//! `outputs.rs` and `twins.rs`; so does listing 10-14, Kubernetes's own PVC
//! protection controller held on a key, and again with its fix; the rule
//! files are tested with promtool; and the supervisor that starts the
//! control plane is killed on purpose to show that etcd and kube-apiserver
//! die with it.
//!
//! These are the only tests that wait in real time. Every wait is bounded:
//! a listing that runs longer than [`LISTING_BOUND`] is killed and named.

mod common;

use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one listing or twin may run (each bounds its own waits to 60 s).
const LISTING_BOUND: Duration = Duration::from_secs(180);

fn env_path(name: &str) -> PathBuf {
    PathBuf::from(std::env::var_os(name).unwrap_or_else(|| {
        panic!("{name} is not set: run this test with `cargo xtask api-server-test`, which starts a control plane")
    }))
}

/// Runs `cmd` for at most [`LISTING_BOUND`], returning its stdout, or an
/// error naming `what` with its stderr.
fn run_bounded(mut cmd: Command, what: &str) -> Result<String, String> {
    let mut child =
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(|e| format!("{what}: cannot start: {e}"))?;
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(status);
        }
        if started.elapsed() > LISTING_BOUND {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    match status {
        None => Err(format!(
            "{what} did not finish within {}s and was killed; its stderr:\n{stderr}",
            LISTING_BOUND.as_secs()
        )),
        Some(s) if !s.success() => Err(format!("{what} exited with {s}; its stderr:\n{stderr}")),
        Some(_) => Ok(stdout),
    }
}

#[test]
fn every_api_server_listing_and_twin_prints_its_committed_output() {
    let kubeconfig = env_path("KUBECONFIG");
    assert!(kubeconfig.is_file(), "KUBECONFIG={} does not exist", kubeconfig.display());
    // Each folder holds a Rust listing, its Go twin, or both (a Go-only
    // listing, about something only controller-runtime does, commits
    // twin/output.txt).
    let dirs: Vec<PathBuf> = common::listing_dirs().into_iter().filter(|d| common::needs_api_server(d)).collect();
    assert!(!dirs.is_empty(), "no listing in listings/{}", common::API_SERVER_CHAPTER);
    let rust: Vec<_> = common::rust_listings().into_iter().filter(|l| l.needs_api_server()).collect();
    let names: Vec<String> = rust.iter().map(|l| l.name.clone()).collect();
    let exes = common::build_executables(&names);
    let go = common::go_or_skip("the Go twins of the API-server listings");
    let bin_dir = common::root().join("target/twins");
    fs::create_dir_all(&bin_dir).unwrap();
    // Listings that scrape /metrics write their scrapes here, for promtool.
    let scrapes = common::root().join("target/api-server/scrapes");
    let _ = fs::remove_dir_all(&scrapes);
    fs::create_dir_all(&scrapes).unwrap();

    let mut failures = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if let Some(listing) = rust.iter().find(|l| &l.dir == dir) {
            let exe = exes
                .get(&listing.name.replace('-', "_"))
                .or_else(|| exes.get(&listing.name))
                .unwrap_or_else(|| panic!("cargo built no executable for {}", listing.name));
            let mut cmd = Command::new(exe);
            cmd.current_dir(dir).env_remove("RUST_BACKTRACE").env("SCRAPES_DIR", &scrapes);
            match run_bounded(cmd, &format!("{} (`cargo run -p {name}`)", listing.rel())) {
                Ok(printed) => failures.extend(common::check_fresh(&name, &listing.output(), &printed)),
                Err(e) => failures.push(e),
            }
        }

        let twin = dir.join("twin");
        let Some(go) = go.as_deref() else { continue };
        if !twin.is_dir() {
            continue;
        }
        let package = format!("./{}", twin.strip_prefix(common::root().join("listings")).unwrap().display());
        let bin = bin_dir.join(&name);
        let mut build = common::go_command(go);
        build.args(["build", "-o"]).arg(&bin).arg(&package);
        common::stdout_of(build, &format!("building the Go twin {package}"));
        let mut run = Command::new(&bin);
        run.current_dir(&twin).env("SCRAPES_DIR", &scrapes);
        let printed = match run_bounded(run, &format!("the Go twin {package}")) {
            Ok(printed) => printed,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let own = twin.join("output.txt");
        if own.exists() {
            failures.extend(common::check_fresh(&format!("Go twin of {name}"), &own, &printed));
        } else {
            let rust = fs::read_to_string(dir.join("output.txt")).unwrap_or_default();
            if rust != printed {
                failures.push(format!(
                    "Go twin of {name} ({package}) differs from the Rust listing's output.txt (- Rust, + Go):\n{}\
                     the Rust port and the Go code disagree: fix the port, not the file\n",
                    common::line_diff(&rust, &printed)
                ));
            }
        }
    }
    failures.extend(lint_scrapes(&scrapes, go.is_some()));
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Chapter 10's one real finding, run (listing 10-14): Kubernetes's own PVC
/// protection controller, built from k8s.io/kubernetes v1.37.2, against this
/// control plane, holds a key that does not split for good; the same steps
/// against the controller with `fix.patch` applied release it; and the unit
/// test `fix.patch` adds to the package fails with `go test` on v1.37.2 and
/// passes with the fix. Each prints its committed output (`output.txt`,
/// `fixed.txt`, `unit.txt`).
#[test]
fn the_pvcprotection_leak_and_its_fix_print_their_committed_output() {
    let Some(go) = common::go_or_skip("the PVC protection leak (listing 10-14)") else { return };
    let corpus = common::root().join("listings/workqueuedone/corpus");
    let listing = corpus.join("pvcleak");
    let bin = common::root().join("target/twins/pvcleak");
    let mut build = common::go_command(&go);
    build.current_dir(&corpus).env("GOTOOLCHAIN", "local").env("GOWORK", "off");
    build.args(["build", "-o"]).arg(&bin).arg("./pvcleak");
    common::stdout_of(build, "building listings/workqueuedone/corpus/pvcleak");
    let work = common::root().join("target/pvcleak-fixed");
    let mut failures = Vec::new();
    let runs: [(&[&str], &str); 3] = [
        (&[], "output.txt"),
        (&["-fixed", "-work", work.to_str().unwrap()], "fixed.txt"),
        // fix.patch's unit test, with go test, on v1.37.2 and with the fix:
        // no API server needed, but the same scratch copies.
        (&["-unit", "-work", work.to_str().unwrap()], "unit.txt"),
    ];
    for (args, committed) in runs {
        let mut cmd = Command::new(&bin);
        cmd.current_dir(&corpus)
            .args(args)
            .env("GOTOOLCHAIN", "local")
            .env("GOWORK", "off")
            .env("GOFLAGS", "-mod=readonly -buildvcs=false");
        let what = format!("listing 10-14 (`go run ./pvcleak {}` in listings/workqueuedone/corpus)", args.join(" "));
        match run_bounded(cmd, &what) {
            Ok(printed) => failures.extend(common::check_fresh(&what, &listing.join(committed), &printed)),
            Err(e) => failures.push(e),
        }
    }
    let _ = fs::remove_dir_all(&work);
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// `promtool check metrics` over every scrape the listings wrote: the Go
/// Manager's and the Rust controller's `/metrics`, as a Prometheus server
/// would read them.
fn lint_scrapes(dir: &Path, with_go: bool) -> Vec<String> {
    let promtool = env_path("PROMTOOL");
    let files = common::sorted_entries(dir);
    let expected = if with_go { 4 } else { 2 };
    let mut failures = Vec::new();
    if files.len() < expected {
        failures.push(format!("expected {expected} scrapes in {}, found {files:?}", dir.display()));
    }
    for file in files {
        let out = Command::new(&promtool)
            .args(["check", "metrics"])
            .stdin(fs::File::open(&file).unwrap())
            .output()
            .expect("promtool can be started");
        if !out.status.success() {
            failures.push(format!(
                "promtool check metrics < {}: {}\n{}{}",
                file.display(),
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    failures
}

/// Starts a second control plane with the supervisor and waits for "ready";
/// returns the child and the PIDs of its etcd and kube-apiserver.
fn start_supervisor(dir: &Path) -> (std::process::Child, Vec<u32>) {
    let supervisor = env_path("CLUSTER_SUPERVISOR");
    let mut child = Command::new(&supervisor)
        .arg("-kubeconfig")
        .arg(dir.join("kubeconfig"))
        .arg("-stop-when-stdin-closes")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", supervisor.display()));
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // The supervisor bounds its own start (120 s) and exits if it runs out.
    let first = lines.next().and_then(Result::ok);
    assert_eq!(first.as_deref(), Some("ready"), "the supervisor did not start a control plane");
    let processes = children_of(child.id());
    let names: Vec<String> = processes.iter().map(|pid| command_name(*pid)).collect();
    assert_eq!(names, ["etcd", "kube-apiserver"], "the supervisor's children (PIDs {processes:?})");
    (child, processes)
}

fn children_of(pid: u32) -> Vec<u32> {
    let mut children: Vec<u32> = fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|child| {
            fs::read_to_string(format!("/proc/{child}/stat")).ok().is_some_and(|stat| {
                stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                    == Some(pid)
            })
        })
        .collect();
    children.sort_by_key(|pid| command_name(*pid));
    children
}

fn command_name(pid: u32) -> String {
    fs::read_to_string(format!("/proc/{pid}/comm")).map(|s| s.trim().to_owned()).unwrap_or_default()
}

fn alive(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()) != Some("Z"))
}

/// Waits (at most 30 s) until none of `pids` is alive. Survivors are
/// killed before the test fails, so that a failure leaks no process.
fn wait_gone(pids: &[u32], what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while pids.iter().any(|pid| alive(*pid)) {
        if Instant::now() > deadline {
            for pid in pids {
                let _ = Command::new("kill").arg("-KILL").arg(pid.to_string()).status();
            }
            panic!("{what}: PIDs {pids:?} were still alive after 30 s (now killed)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// No etcd or kube-apiserver outlives what started it: not when the suite
/// that holds the supervisor's stdin goes away, and not even when the
/// supervisor itself is killed outright.
#[test]
fn the_control_plane_dies_with_whatever_started_it() {
    let dir = common::root().join("target/api-server/lifetime");
    fs::create_dir_all(&dir).unwrap();

    // The suite goes away: its end of the supervisor's stdin closes.
    let (mut child, processes) = start_supervisor(&dir);
    drop(child.stdin.take());
    let status = child.wait().unwrap();
    assert!(status.success(), "the supervisor stopped with {status}");
    wait_gone(&processes, "after the supervisor's stdin closed");

    // The supervisor is killed with SIGKILL and cannot clean up.
    let (mut child, processes) = start_supervisor(&dir);
    child.kill().unwrap();
    child.wait().unwrap();
    wait_gone(&processes, "after the supervisor was killed");
}

/// The alert rule of chapters 7 and 9 (`listings/alerts/`): promtool
/// checks it and runs its tests (it fires for a key that is never done, and
/// stays silent for a healthy queue and for a long reconcile that finishes).
#[test]
fn the_stall_alert_passes_its_rule_tests() {
    let promtool = env_path("PROMTOOL");
    let alerts = common::root().join("listings/alerts");
    for args in [["check", "rules", "workqueue-stall.rules.yml"], ["test", "rules", "workqueue-stall.test.yml"]] {
        let mut cmd = Command::new(&promtool);
        cmd.current_dir(&alerts).args(args);
        if let Err(e) = run_bounded(cmd, &format!("promtool {}", args.join(" "))) {
            panic!("{e}");
        }
    }
}
