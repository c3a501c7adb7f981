//! Readers download a listing from the book: `book/downloads/<listing>.tar.gz`
//! for the Rust crate and `<listing>-go.tar.gz` for its Go twin, and two
//! downloads of their own, `kube-reconcile-guard.tar.gz` and
//! `workqueue-stall-alert.tar.gz`, all written by `cargo xtask book`
//! (xtask/src/archives.rs). This test asks the same code for every archive
//! (`cargo xtask archives DIR`), unpacks each into a folder outside the
//! repository, and builds and runs it there, as a reader would:
//!
//! * a Rust archive with `cargo run --locked` (so its Cargo.lock must be
//!   complete and unchanged), which must print the listing's committed
//!   output; chapter 9's are only built (`cargo build --locked`), since they
//!   need an API server (api_server.rs runs them against one);
//! * a Go archive with `go vet ./...` and `go build` (or `go test -c` for a
//!   twin that is a test) under `-mod=readonly`, so its go.mod and go.sum
//!   must be complete; the binary then runs in `twin/` and must print the
//!   twin's committed output (chapter 9's are only built). A Go archive whose
//!   files, expected output and Go are those of a run where it passed is not
//!   checked again, except under `CI=true` (see that test for why);
//! * the guard's archive with `cargo build --locked` and `cargo test
//!   --locked`, as its README says;
//! * the alert's archive with the two promtool commands its README gives,
//!   when promtool is on this machine (`cargo xtask control-plane` builds
//!   it); its files must be those of `listings/alerts/` in any case.
//!
//! Every archive must hold the repository's LICENSE, byte for byte, and a
//! README whose first line is what the book says the archive shows (a
//! listing's caption, `Listing N-M: what it shows · ...`), and which names the
//! chapter that links the archive by title and page. Every archive must be
//! linked from a page of the book, and every download a page links must be
//! an archive.
//!
//! The unpacked archives live in one scratch tree under the system's
//! temporary folder and are kept between runs: an archive is unpacked into a
//! staging folder and a file whose content did not change is not rewritten
//! (the archives' own times are all 1970), so cargo rebuilds only what
//! changed. What the builds write goes to `target/copy-out/` of this
//! checkout (Go's binaries to `target/copy-out/go/`, the guard's build to
//! `target/copy-out-guard/`), so it is removed with the checkout instead of
//! piling up in the temporary folder. Each Rust archive is a workspace of its
//! own, so cargo reads only its manifest and the path dependencies inside it.

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
/// `target` folders are not part of a copy.
fn sync_dir(from: &Path, to: &Path) {
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
            sync_dir(&path, &dest);
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
        if wanted.contains(&name) {
            continue;
        }
        if path.is_dir() { fs::remove_dir_all(&path).unwrap() } else { fs::remove_file(&path).unwrap() }
    }
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
        sync_dir(&staging, &tree);
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
            continue; // api_server.rs runs chapter 9's twins, against a real control plane
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

/// The middleware crate of chapter 8 is meant to be copied alone: it must
/// depend on no other crate of this repository, and its archive must build
/// and pass its tests and doctests unpacked, with the commands its README
/// gives.
#[test]
fn the_reconcile_guard_builds_and_passes_its_tests_from_its_archive() {
    let guard = common::root().join("listings").join(GUARD);
    assert!(
        path_dependencies(&guard).is_empty(),
        "kube-reconcile-guard must not depend on crates of this repository by path"
    );
    let unpacked = unpacked().join(GUARD);
    let readme = fs::read_to_string(unpacked.join("README.md")).unwrap_or_default();
    let command = "cargo build --locked && cargo test --locked";
    assert!(readme.contains(command), "{GUARD}'s README does not give `{command}`:\n{readme}");
    for file in ["Cargo.toml", "Cargo.lock", ".cargo/config.toml", "src/lib.rs"] {
        assert!(unpacked.join(file).is_file(), "{GUARD}'s archive has no {file}");
    }
    // It must build as a library on its own (its .cargo/config.toml picks
    // k8s-openapi's version there) and pass its tests.
    for step in ["build", "test"] {
        let out = Command::new(env!("CARGO"))
            .current_dir(&unpacked)
            .args([step, "--locked", "--quiet"])
            .env("CARGO_TARGET_DIR", target_dir("copy-out-guard"))
            .env("CARGO_PROFILE_DEV_DEBUG", NO_DEBUG_INFO)
            .env_remove("RUST_BACKTRACE")
            .output()
            .expect("cargo can be started");
        assert!(
            out.status.success(),
            "kube-reconcile-guard unpacked in {}: `cargo {step} --locked` failed: {}\n{}\n{}",
            unpacked.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The alert's archive is `listings/alerts/` as it is, plus its README and
/// LICENSE, and the promtool commands of its README pass in the unpacked
/// folder. promtool is built by `cargo xtask control-plane` (and by the
/// first `cargo xtask test`, after this test has run): without it only the
/// files are compared, and `api_server.rs` runs the same two commands over
/// `listings/alerts/`, whose files these must equal.
#[test]
fn the_stall_alert_passes_its_rule_tests_from_its_archive() {
    let unpacked = unpacked().join(ALERT);
    let alerts = common::root().join("listings/alerts");
    let mut want: Vec<String> = common::sorted_entries(&alerts).iter().map(|f| file_name(f)).collect();
    want.extend(["LICENSE".to_owned(), "README.md".to_owned()]);
    want.sort();
    let got: Vec<String> = common::sorted_entries(&unpacked).iter().map(|f| file_name(f)).collect();
    assert_eq!(got, want, "the files of {ALERT}'s archive, against listings/alerts/ with a LICENSE and README");
    for file in common::sorted_entries(&alerts) {
        assert!(
            fs::read(&file).unwrap() == fs::read(unpacked.join(file_name(&file))).unwrap(),
            "{ALERT}'s {} differs from listings/alerts/'s",
            file_name(&file)
        );
    }
    let readme = fs::read_to_string(unpacked.join("README.md")).unwrap();
    let commands: Vec<Vec<&str>> = shell_blocks(&readme)
        .into_iter()
        .filter(|line| line.starts_with("promtool "))
        .map(|line| line.split_whitespace().skip(1).collect())
        .collect();
    let gives = |args: &[&str]| commands.iter().any(|c| c == args);
    for args in [["check", "rules", "workqueue-stall.rules.yml"], ["test", "rules", "workqueue-stall.test.yml"]] {
        assert!(gives(&args), "{ALERT}'s README does not give `promtool {}`:\n{readme}", args.join(" "));
    }
    let Some(promtool) = promtool() else {
        eprintln!(
            "the_stall_alert_passes_its_rule_tests_from_its_archive: promtool not found (PROMTOOL, or where \
             `cargo xtask control-plane` builds it); compared the archive's files only"
        );
        return;
    };
    for args in &commands {
        let out = Command::new(&promtool).current_dir(&unpacked).args(args).output().expect("promtool can be started");
        let printed = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && printed.contains("SUCCESS"),
            "{ALERT} unpacked in {}: `promtool {}` failed ({}):\n{printed}{}",
            unpacked.display(),
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `PROMTOOL`, or the promtool `cargo xtask control-plane` builds: beside
/// etcd in `KUBEBUILDER_ASSETS`, else in its versioned folder of the data
/// home, for the Prometheus release `tools/control-plane/promtool` pins.
fn promtool() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PROMTOOL").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    if let Some(assets) = std::env::var_os("KUBEBUILDER_ASSETS").filter(|p| !p.is_empty()) {
        let own = PathBuf::from(assets).join("promtool");
        if own.is_file() {
            return Some(own);
        }
    }
    let go_mod = fs::read_to_string(common::root().join("tools/control-plane/promtool/go.mod")).ok()?;
    // Prometheus 3.x.y is the Go module version v0.3xx.y.
    let module = go_mod.lines().find_map(|l| l.trim().strip_prefix("github.com/prometheus/prometheus v0."))?;
    let (minor, patch) = module.split_whitespace().next()?.split_once('.')?;
    let minor: u32 = minor.parse().ok()?;
    let release = format!("{}.{}.{patch}", minor / 100, minor % 100);
    let data = match std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".local/share"),
    };
    let path = data.join(format!("forget-is-not-delete/promtool-{release}-linux-amd64/promtool"));
    path.is_file().then_some(path)
}

/// The archive of `listings/kube-reconcile-guard/`, of `listings/alerts/`,
/// and of the Go analyzer, `listings/workqueuedone/`.
const GUARD: &str = "kube-reconcile-guard";
const ALERT: &str = "workqueue-stall-alert";
const ANALYZER: &str = "workqueuedone";

/// The analyzer's archive is a Go module that builds on its own, and the
/// command its README builds reports the stalls of its own testdata, as it
/// would in a reader's module: it exits 3, as go vet does, and says `stall:`.
#[test]
fn the_analyzer_builds_and_reports_from_its_archive() {
    let Some(go) = common::go_or_skip("the_analyzer_builds_and_reports_from_its_archive") else { return };
    let unpacked = unpacked().join(ANALYZER);
    let readme = fs::read_to_string(unpacked.join("README.md")).unwrap();
    let build = "go build -o workqueuedone ./cmd/workqueuedone";
    assert!(readme.contains(build), "{ANALYZER}'s README does not give `{build}`:\n{readme}");
    let bin = target_dir("copy-out/go").join(ANALYZER);
    let go_cmd = |dir: &Path| {
        let mut cmd = Command::new(&go);
        cmd.current_dir(dir).env("GOFLAGS", "-mod=readonly -buildvcs=false").env("GOWORK", "off");
        cmd
    };
    for args in [vec!["vet", "./..."], vec!["build", "-o", bin.to_str().unwrap(), "./cmd/workqueuedone"]] {
        let out = go_cmd(&unpacked).args(&args).output().expect("go can be started");
        assert!(
            out.status.success(),
            "{ANALYZER} unpacked in {}: `go {}` failed ({}):\n{}",
            unpacked.display(),
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let testdata = unpacked.join("passes/workqueuedone/testdata");
    let download = go_cmd(&testdata).args(["mod", "download"]).output().expect("go can be started");
    assert!(
        download.status.success(),
        "go mod download in {}: {}",
        testdata.display(),
        String::from_utf8_lossy(&download.stderr)
    );
    let out = Command::new(&bin).current_dir(&testdata).env("GOWORK", "off").arg("./loops").output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(3) && said.contains(": stall: "),
        "{ANALYZER} unpacked in {}: the command over its testdata's loops package should report stalls and exit 3; \
         it exited {:?}:\n{said}",
        unpacked.display(),
        out.status.code()
    );
}

/// The chapter's way to pin the analyzer in a reader's module with Go's
/// tool directive, and its CI step, which builds the vet tool in the
/// analyzer's own module, run as the reader runs them: listing 5-1's twin from its
/// archive stands for the reader's module, the analyzer's archive is
/// unpacked into its `third_party/workqueuedone`, and the two files the
/// chapter includes, `your-module/setup.sh` and `your-module/ci.sh` (from
/// the unpacked archive, so the page, the archive and this test cannot
/// drift), run verbatim with `sh`. The CI step must fail on the twin's
/// `forget:` report, and `go tool workqueuedone ./...` must make it too.
#[test]
fn the_analyzer_pinned_with_go_tool_reports_in_a_readers_module() {
    let Some(go) = common::go_or_skip("the_analyzer_pinned_with_go_tool_reports_in_a_readers_module") else { return };
    let tree = unpacked();
    let analyzer = tree.join(ANALYZER);
    let module = scratch("your-module");
    // A fresh module each run: setup.sh edits go.mod, as it would the reader's.
    let _ = fs::remove_dir_all(&module);
    for (from, to) in
        [(tree.join("listing-05-01-go"), module.clone()), (analyzer.clone(), module.join("third_party/workqueuedone"))]
    {
        fs::create_dir_all(&to).unwrap();
        let copy = Command::new("cp").arg("-R").arg(from.join(".")).arg(&to).output().unwrap();
        assert!(copy.status.success(), "copying {}: {}", from.display(), String::from_utf8_lossy(&copy.stderr));
    }
    let in_module = |program: &Path| {
        let mut cmd = Command::new(program);
        cmd.current_dir(&module).env("GOWORK", "off").env("GOTOOLCHAIN", "local").env_remove("GOFLAGS");
        cmd
    };
    let sh = |script: &str| {
        let mut cmd = in_module(Path::new("sh"));
        cmd.arg(analyzer.join("your-module").join(script));
        cmd
    };
    let rerun = format!("rerun: cd {} && sh {}/your-module/<script>", module.display(), analyzer.display());
    let setup = sh("setup.sh").output().expect("sh can be started");
    assert!(
        setup.status.success(),
        "your-module/setup.sh failed ({}):\n{}{}\n{rerun}",
        setup.status,
        String::from_utf8_lossy(&setup.stdout),
        String::from_utf8_lossy(&setup.stderr)
    );
    let go_mod = fs::read_to_string(module.join("go.mod")).unwrap();
    let line = "tool forget-is-not-delete/workqueuedone/cmd/workqueuedone";
    assert!(
        go_mod.lines().any(|l| l.trim() == line.trim_start_matches("tool ") || l.trim() == line),
        "setup.sh left no `{line}` in go.mod:\n{go_mod}"
    );
    let twin_report = |said: &str| said.lines().any(|l| l.contains("twin/main.go:") && l.contains(": forget: "));
    let ci = sh("ci.sh").output().expect("sh can be started");
    let said = String::from_utf8_lossy(&ci.stderr);
    assert!(
        !ci.status.success() && twin_report(&said),
        "your-module/ci.sh should fail on listing 5-1's forget: report; it exited {}:\n{said}\n{rerun}",
        ci.status
    );
    let out = in_module(&go).args(["tool", "workqueuedone", "./..."]).output().expect("go can be started");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(3) && twin_report(&said),
        "`go tool workqueuedone ./...` in {} should report listing 5-1's forget: and exit 3; it exited {:?}:\n{said}",
        module.display(),
        out.status.code()
    );
}

/// Every archive holds the repository's LICENSE and a README that says what
/// it shows, in the words the book uses, and where it is in the book; every
/// archive is linked from the book, and every download the book links is an
/// archive.
#[test]
fn every_archive_has_the_licence_and_a_readme_that_names_its_chapter() {
    let tree = unpacked();
    let licence = fs::read(common::root().join("LICENSE")).expect("the repository has a LICENSE");
    let pages = pages();
    let mut failures = Vec::new();
    let archives: Vec<String> = common::sorted_entries(tree).iter().map(|f| file_name(f)).collect();
    // The analyzer's archive is made only where Go is, as the twins' are.
    let go = Command::new("go").arg("version").output().is_ok_and(|o| o.status.success());
    for name in [GUARD, ALERT].into_iter().chain(go.then_some(ANALYZER)) {
        if !archives.iter().any(|a| a == name) {
            failures.push(format!("no archive {name}.tar.gz"));
        }
    }
    for name in &archives {
        let folder = tree.join(name);
        if fs::read(folder.join("LICENSE")).ok().as_deref() != Some(&licence[..]) {
            failures.push(format!("{name}: no LICENSE equal to the repository's"));
        }
        let readme = fs::read_to_string(folder.join("README.md")).unwrap_or_default();
        let flat = one_line(&readme);
        let link = format!("downloads/{name}.tar.gz");
        let linking: Vec<&Page> = pages.iter().filter(|p| p.links(&link)).collect();
        if linking.is_empty() {
            failures.push(format!("{name}: no page of src/ links {link}"));
            continue;
        }
        // The chapter: the page whose caption (or, for the guard and the
        // alert, prose) links the archive, by its title and rendered page.
        let named = linking.iter().any(|p| flat.contains(&format!("\"{}\" (`{}.html` in the book)", p.title, p.stem)));
        if !named {
            let want: Vec<String> =
                linking.iter().map(|p| format!("\"{}\" (`{}.html` in the book)", p.title, p.stem)).collect();
            failures.push(format!("{name}: its README does not name its chapter as {}", want.join(" or ")));
        }
        let heading = readme.lines().next().unwrap_or_default();
        if name.starts_with("listing-") {
            let (page, captions) = linking
                .iter()
                .map(|p| {
                    (*p, p.captions().into_iter().filter(|c| c.contains(&format!("\"{link}\""))).collect::<Vec<_>>())
                })
                .find(|(_, c)| !c.is_empty())
                .unwrap_or((linking[0], Vec::new()));
            if let Some(problem) = heading_problem(heading, page, &captions, &link) {
                failures.push(format!("{name}: its README's first line, `{heading}`, {problem}"));
            }
        } else if name == GUARD {
            let manifest = fs::read_to_string(common::root().join("listings").join(GUARD).join("Cargo.toml")).unwrap();
            let description = manifest.lines().find_map(|l| l.strip_prefix("description = \"")?.strip_suffix('"'));
            let description = one_line(description.unwrap_or("its Cargo.toml has no description"));
            if heading != format!("# {GUARD}") || !flat.to_lowercase().contains(&description.to_lowercase()) {
                failures.push(format!("{name}: its README does not start `# {GUARD}` and say \"{description}\""));
            }
        } else if name == ALERT {
            let rules = fs::read_to_string(common::root().join("listings/alerts/workqueue-stall.rules.yml")).unwrap();
            let comment: Vec<&str> = rules.lines().map_while(|l| l.strip_prefix('#')).collect();
            let first_line = one_line(comment.first().copied().unwrap_or("the rule file has no opening comment"));
            if !heading.starts_with("# WorkqueueKeyHeldTooLong") || !flat.contains(&first_line) {
                failures
                    .push(format!("{name}: its README does not start with the alert's name and say \"{first_line}\""));
            }
        } else if name == ANALYZER {
            let own = fs::read_to_string(common::root().join("listings").join(ANALYZER).join("README.md")).unwrap();
            let says = own.split("\n\n").nth(1).map(one_line).unwrap_or_default();
            if heading != format!("# {ANALYZER}") || says.is_empty() || !flat.contains(&says) {
                failures.push(format!("{name}: its README does not start `# {ANALYZER}` and say \"{says}\""));
            }
        } else {
            failures.push(format!("{name}: an archive this test does not know"));
        }
    }
    // Every download a page links is an archive, so no link of the book is
    // left dangling by a renamed or removed listing.
    for page in &pages {
        for archive in page.downloads() {
            if !archives.iter().any(|a| format!("{a}.tar.gz") == archive) {
                failures.push(format!("src/{}.md links downloads/{archive}, which is no archive", page.stem));
            }
        }
    }
    assert!(archives.len() >= 30, "expected the book's archives, found {}", archives.len());
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// What is wrong with a listing's README heading, if anything. It is the
/// start of the one caption that links the archive, `Listing N-M: ` and its
/// words up to the links (` · `). A listing without a caption is the program
/// of a page of its own (the cheat sheet): its heading is the page's title
/// and the opening sentence of the paragraph that links it.
fn heading_problem(heading: &str, page: &Page, captions: &[&str], link: &str) -> Option<String> {
    let (said, source) = match captions {
        [caption] => {
            let Some(said) = heading.strip_prefix("# Listing ") else {
                return Some("does not start `# Listing N-M: `".to_owned());
            };
            (format!("Listing {said}"), caption_text(caption))
        }
        [] => {
            let Some(paragraph) = page.markdown.split("\n\n").find(|p| p.contains(&format!("\"{link}\""))) else {
                return Some(format!(
                    "has no caption or paragraph of src/{}.md linking {link} to come from",
                    page.stem
                ));
            };
            let Some(said) = heading.strip_prefix(&format!("# {}: ", page.title)) else {
                return Some(format!(
                    "does not start `# {}: ` (src/{}.md links it without a caption)",
                    page.title, page.stem
                ));
            };
            (said.to_owned(), caption_text(paragraph))
        }
        _ => {
            return Some(format!(
                "cannot be one caption's: {} captions in src/{}.md link {link}",
                captions.len(),
                page.stem
            ));
        }
    };
    // The first letter may be lowered (`What the switch does` as `Cheat
    // sheet: what the switch does`).
    let starts = source.get(..said.len()).is_some_and(|start| start.eq_ignore_ascii_case(&said));
    let rest = source.get(said.len()..).unwrap_or_default();
    let ends = rest.is_empty() || [" · ", "·", ". ", "."].iter().any(|end| rest.starts_with(end));
    if starts && ends && said.split_whitespace().count() >= 4 {
        return None;
    }
    Some(format!(
        "is not the start of its caption or paragraph in src/{}.md, up to ` · ` or a full stop: {source:?}",
        page.stem
    ))
}

/// One page of `src/`, as `SUMMARY.md` lists them.
struct Page {
    /// `ch04-forget` for `src/ch04-forget.md`.
    stem: String,
    /// Its `# ` heading.
    title: String,
    markdown: String,
}

impl Page {
    fn links(&self, target: &str) -> bool {
        self.markdown.contains(&format!("\"{target}\"")) || self.markdown.contains(&format!("({target})"))
    }

    /// The archives it links, by file name.
    fn downloads(&self) -> Vec<String> {
        self.markdown
            .split("downloads/")
            .skip(1)
            .filter_map(|rest| {
                let end = rest.find(['"', ')'])?;
                rest[..end].ends_with(".tar.gz").then(|| rest[..end].to_owned())
            })
            .collect()
    }

    /// Its captions' HTML, each from `class="caption"` to the end of its block.
    fn captions(&self) -> Vec<&str> {
        self.markdown
            .match_indices("class=\"caption\"")
            .map(|(at, _)| {
                let rest = &self.markdown[at..];
                &rest[..rest.find("\n\n").unwrap_or(rest.len())]
            })
            .collect()
    }
}

fn pages() -> Vec<Page> {
    let src = common::root().join("src");
    let summary = fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    summary
        .split("](")
        .skip(1)
        .filter_map(|piece| piece.split(')').next()?.strip_suffix(".md").map(str::to_owned))
        .map(|stem| {
            let markdown = fs::read_to_string(src.join(format!("{stem}.md"))).unwrap();
            let title = markdown.lines().find_map(|l| l.strip_prefix("# ")).unwrap_or_default().trim().to_owned();
            Page { stem, title, markdown }
        })
        .collect()
}

/// A caption (from `Listing`) or a paragraph as a reader reads it: tags dropped, `<code>` as
/// backticks, entities decoded, whitespace as single spaces.
fn caption_text(html: &str) -> String {
    let mut text = String::new();
    let mut in_tag = None::<String>;
    for c in html.chars() {
        match (&mut in_tag, c) {
            (None, '<') => in_tag = Some(String::new()),
            (Some(tag), '>') => {
                if tag == "code" || tag == "/code" || tag.starts_with("code ") {
                    text.push('`');
                }
                in_tag = None;
            }
            (Some(tag), c) => tag.push(c),
            (None, c) => text.push(c),
        }
    }
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    let text = one_line(&text);
    // A caption's own words start at its label; anything before it (a
    // sign, say) is not part of them.
    match text.find("Listing ") {
        Some(at) if html.contains("class=\"caption\"") => text[at..].to_owned(),
        _ => text,
    }
}

/// Runs of whitespace as one space: the READMEs wrap their paragraphs.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The lines of a Markdown file's ```` ```sh ```` blocks.
fn shell_blocks(markdown: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut inside = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            inside = !inside && line == "```sh";
        } else if inside {
            lines.push(line.trim());
        }
    }
    lines
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}
