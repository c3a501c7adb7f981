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

/// The analyzer's archive is a Go module that builds on its own, and its
/// command reports the stalls of its own testdata: it exits 3, as go vet
/// does, and says `stall:`.
#[test]
fn the_analyzer_builds_and_reports_from_its_archive() {
    let Some(go) = common::go_or_skip("the_analyzer_builds_and_reports_from_its_archive") else { return };
    let unpacked = unpacked().join(ANALYZER);
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

/// The Go releases the reader's seat is tested on, by patch release: the
/// same list as `TESTED_GO` in `xtask/src/analyzer.rs` (checked below).
const TESTED_GO: [&str; 2] = ["go1.26.8", "go1.27.3"];

/// The line of listing 5-1's twin that makes its leak.
const LEAK: &str = "\t\treturn true // the bug: no q.Done(key) on this path\n";

/// Listing 5-1's twin mended as chapter 5 mends it: `Done` deferred on the
/// line after the shutdown check, and the one at the end gone.
fn mended(twin: &str) -> String {
    let check = "\tif shutdown {\n\t\treturn false\n\t}\n";
    let end = "\tq.Forget(key)\n\tq.Done(key)\n\treturn true\n";
    assert!(twin.matches(check).count() == 1 && twin.matches(end).count() == 1, "listing 5-1's twin changed shape");
    twin.replace(check, &format!("{check}\tdefer q.Done(key)\n")).replace(end, "\tq.Forget(key)\n\treturn true\n")
}

/// The reader's seat: every command the analyzer's scripts tell a reader to
/// run (the `#   ` lines of `your-module/*.sh`, which chapter 10 includes)
/// is run verbatim, with `bash -c`, in a module of the reader's own: an
/// older client-go (v0.33.0) on `go 1.24.0`, listing 5-1's twin as its
/// worker, the analyzer's archive unpacked by the command its README gives,
/// on every Go in [`TESTED_GO`]. Each route must exit non-zero on the leak,
/// naming it, and zero once it is mended; `setup.sh` must leave `go.mod`
/// and `go.sum` as they were and the module building; `ci.sh` must pass its
/// arguments to go vet and remove what it made; `golangci-lint.sh` must
/// build with no `git` on `PATH`, into a folder the archive's `.gitignore`
/// ignores, and not again when nothing changed. Bad input (a module without
/// client-go, the archive unpacked outside the module, a Go older than the
/// analyzer supports) must stop with one line that says what to do.
#[test]
fn the_readers_seat_every_printed_command_on_every_tested_go() {
    let Some(_) = common::go_or_skip("the_readers_seat_every_printed_command_on_every_tested_go") else { return };
    let xtask = fs::read_to_string(common::root().join("xtask/src/analyzer.rs")).unwrap();
    assert!(
        xtask.contains(&format!("pub const TESTED_GO: [&str; 2] = {TESTED_GO:?};")),
        "xtask/src/analyzer.rs's TESTED_GO is not {TESTED_GO:?}"
    );
    let tree = unpacked();
    let archive = scratch("copy-out").join("archives").join(format!("{ANALYZER}.tar.gz"));
    let scripts = tree.join(ANALYZER).join("your-module");
    let commands = printed_commands(&scripts);
    let twin = fs::read_to_string(tree.join("listing-05-01-go/twin/main.go")).unwrap();
    assert!(twin.contains(LEAK), "listing 5-1's twin no longer has the line {LEAK:?}");

    let readme = fs::read_to_string(tree.join(ANALYZER).join("README.md")).unwrap();
    let unpack = "mkdir -p third_party && tar -xzf workqueuedone.tar.gz -C third_party";
    assert!(readme.contains(unpack), "{ANALYZER}'s README does not say how to unpack it: `{unpack}`");

    every_command_on_the_page_is_run(&commands, unpack, &readme);

    for version in TESTED_GO {
        let module = scratch(&format!("readers-seat-{version}"));
        let _ = fs::remove_dir_all(&module);
        fs::create_dir_all(module.join("clean")).unwrap();
        fs::write(module.join("go.mod"), "module example.com/reader\n\ngo 1.24.0\n").unwrap();
        fs::write(module.join("main.go"), &twin).unwrap();
        fs::write(module.join("clean/clean.go"), "// Package clean has no work queue.\npackage clean\n").unwrap();
        let seat = Seat { module: module.clone(), version };
        seat.ok("go get k8s.io/client-go@v0.33.0 && go mod tidy", "the reader's module on client-go v0.33.0");
        let (go_mod, go_sum) = (seat.read("go.mod"), seat.read("go.sum"));
        fs::copy(&archive, module.join("workqueuedone.tar.gz")).unwrap();
        seat.ok(unpack, "unpacking the archive as its README says");
        fs::remove_file(module.join("workqueuedone.tar.gz")).unwrap();
        assert!(!module.join("third_party/workqueuedone/corpus").exists(), "the archive holds the corpus module");

        // Every printed command, in the order the scripts print them.
        for command in &commands {
            if command.contains("golangci-lint.sh") {
                seat.golangci_lint_builds_without_git(command);
            } else if command.contains("setup.sh") {
                seat.ok(command, "setup.sh");
                assert_eq!(seat.read("go.mod"), go_mod, "{version}: setup.sh changed the reader's go.mod");
                assert_eq!(seat.read("go.sum"), go_sum, "{version}: setup.sh changed the reader's go.sum");
                assert!(
                    seat.read("tools.mod").contains("tool forget-is-not-delete/workqueuedone/cmd/workqueuedone"),
                    "{version}: setup.sh left no tool line in tools.mod:\n{}",
                    seat.read("tools.mod")
                );
                seat.ok("go build ./...", "the reader's module, after setup.sh");
            } else if command.starts_with("cp ") {
                seat.ok(command, "a copy the scripts print");
            } else if command.ends_with(" -V") {
                let said = seat.ok(command, "the version");
                assert!(
                    said.starts_with("workqueuedone v") && readme.contains(said.split(' ').nth(1).unwrap()),
                    "{version}: `{command}` printed {said:?}, not the version the README names"
                );
            } else if command.contains("./pkg/...") {
                // Arguments reach go vet: only the clean package, so no report.
                seat.ok(&command.replace("./pkg/...", "./clean/..."), "ci.sh given a package pattern");
            } else {
                seat.fails_on_the_leak_and_passes_without(command);
            }
        }
        eprintln!("readers-seat: {version}: {} commands, run as printed", commands.len());
        if version == TESTED_GO[0] {
            seat.bad_input(&archive, &scripts);
        }
    }
}

/// Every command chapter 10, the cheat sheet, the analyzer's README and
/// its commands' doc comments print, in a shell block or as inline code
/// that starts like a command,
/// is one this test runs: a command no test runs could pass silently, as
/// the cheat sheet's `go vet -vettool="$(go tool -n vet-workqueuedone)"`
/// once did (it named a tool no script pinned, so `-vettool=` was empty and
/// plain go vet passed over the leak).
fn every_command_on_the_page_is_run(commands: &[String], unpack: &str, readme: &str) {
    let root = common::root();
    let mut pages = vec![("the analyzer's README".to_owned(), readme.to_owned())];
    for page in ["src/ch10-catch-the-stall.md", "src/cheat-sheet.md"] {
        pages.push((page.to_owned(), fs::read_to_string(root.join(page)).unwrap()));
    }
    // The commands' doc comments, which go doc shows: their indented
    // lines, as a shell block.
    for command in ["workqueuedone", "vet-workqueuedone", "build-vet-workqueuedone"] {
        let path = format!("listings/workqueuedone/cmd/{command}/main.go");
        let source = fs::read_to_string(root.join(&path)).unwrap();
        let doc: Vec<&str> = source
            .lines()
            .take_while(|l| l.starts_with("//"))
            .filter_map(|l| l.strip_prefix("//\t"))
            .collect::<Vec<_>>();
        pages.push((path, format!("```sh\n{}\n```\n", doc.join("\n"))));
    }
    // Inline code that a reader would copy and run as it stands: the
    // scripts, the tool, the built golangci-lint, unpacking, and any go
    // vet with a command substitution (the form that once passed silently).
    let starts = ["bash ", "go tool ", "third_party/workqueuedone/bin/golangci-lint ", "tar ", "mkdir "];
    let mut untested = Vec::new();
    for (page, text) in &pages {
        let mut shown: Vec<String> = shell_blocks(text)
            .into_iter()
            .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("{{#include"))
            .map(str::to_owned)
            .collect();
        let mut fenced = false;
        let prose: String = text
            .lines()
            .filter(|l| {
                fenced ^= l.starts_with("```");
                !fenced && !l.starts_with("```")
            })
            .collect::<Vec<_>>()
            .join("\n");
        for (i, span) in prose.split('`').enumerate() {
            if i % 2 == 1 && (starts.iter().any(|s| span.starts_with(s)) || span.contains("$(")) {
                // A placeholder for the packages is the reader's to fill in.
                shown.push(one_line(&span.replace(" [packages]", "")));
            }
        }
        for command in shown {
            let command = command.split(" #").next().unwrap().trim().to_owned();
            let tested = command == unpack
                || commands.iter().any(|c| *c == command || c.replace("ci.sh ./pkg/...", "ci.sh") == command);
            if !tested {
                untested.push(format!("{page}: {command}"));
            }
        }
    }
    assert!(untested.is_empty(), "commands the book prints that no test runs as printed:\n{}", untested.join("\n"));
}

/// The commands `your-module/*.sh` print for a reader to run: the comment
/// lines indented by three spaces, without their trailing comment.
fn printed_commands(scripts: &Path) -> Vec<String> {
    let mut commands = Vec::new();
    for name in ["setup.sh", "ci.sh", "golangci-lint.sh"] {
        let text = fs::read_to_string(scripts.join(name)).unwrap();
        for line in text.lines() {
            if let Some(command) = line.strip_prefix("#   ") {
                let command = command.split(" #").next().unwrap().trim().to_owned();
                if !commands.contains(&command) {
                    commands.push(command);
                }
            }
        }
    }
    for must in [
        "setup.sh",
        "ci.sh",
        "golangci-lint.sh",
        "go tool -modfile=tools.mod workqueuedone ./...",
        "bin/golangci-lint run",
    ] {
        assert!(commands.iter().any(|c| c.contains(must)), "no script prints a command with `{must}`: {commands:#?}");
    }
    commands
}

/// A reader's module on one Go.
struct Seat {
    module: PathBuf,
    version: &'static str,
}

impl Seat {
    fn bash(&self, command: &str) -> Command {
        let mut cmd = Command::new("bash");
        cmd.current_dir(&self.module)
            .args(["-c", command])
            .env("GOTOOLCHAIN", self.version)
            .env("GOWORK", "off")
            .env_remove("GOFLAGS");
        cmd
    }

    fn read(&self, name: &str) -> String {
        fs::read_to_string(self.module.join(name))
            .unwrap_or_else(|e| panic!("{}: {e}", self.module.join(name).display()))
    }

    fn rerun(&self, command: &str) -> String {
        format!("rerun: cd {} && GOTOOLCHAIN={} GOWORK=off {command}", self.module.display(), self.version)
    }

    /// Runs a command that must pass, and returns its stdout.
    fn ok(&self, command: &str, what: &str) -> String {
        let out = self.bash(command).output().expect("bash can be started");
        assert!(
            out.status.success(),
            "{}: {what}: `{command}` failed ({}):\n{}{}\n{}",
            self.version,
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.rerun(command)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    fn fails_on_the_leak_and_passes_without(&self, command: &str) {
        let main = self.module.join("main.go");
        let leaky = self.read("main.go");
        let tmp = self.module.join("../readers-seat-tmp");
        let _ = fs::remove_dir_all(&tmp);
        fs::create_dir_all(&tmp).unwrap();
        let out = self.bash(command).env("TMPDIR", &tmp).output().expect("bash can be started");
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(
            !out.status.success() && said.contains("main.go:48:3") && said.contains("forget: q.Forget(key)"),
            "{}: `{command}` should fail on the leak at main.go:48 and name it; it exited {}:\n{said}\n{}",
            self.version,
            out.status,
            self.rerun(command)
        );
        let left: Vec<_> = fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().path()).collect();
        assert!(left.is_empty(), "{}: `{command}` left {left:?} in its TMPDIR", self.version);
        fs::write(&main, mended(&leaky)).unwrap();
        self.ok(command, "the same module with the leak mended");
        fs::write(&main, leaky).unwrap();
    }

    fn golangci_lint_builds_without_git(&self, command: &str) {
        let no_git = self.module.join("../readers-seat-path-without-git");
        if !no_git.is_dir() {
            fs::create_dir_all(&no_git).unwrap();
            let path = std::env::var_os("PATH").unwrap_or_default();
            for dir in std::env::split_paths(&path) {
                for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
                    let name = entry.file_name();
                    if name != "git" && !no_git.join(&name).exists() {
                        let _ = std::os::unix::fs::symlink(entry.path(), no_git.join(&name));
                    }
                }
            }
        }
        let build = |what: &str| {
            let out = self.bash(command).env("PATH", &no_git).output().expect("bash can be started");
            let said = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(
                out.status.success(),
                "{}: {what}: `{command}` with no git on PATH failed ({}):\n{said}\n{}",
                self.version,
                out.status,
                self.rerun(command)
            );
            said
        };
        let said = build("the first build");
        assert!(said.contains("built "), "{}: golangci-lint.sh did not say it built: {said}", self.version);
        let said = build("the second run, nothing changed");
        assert!(
            said.contains("is up to date"),
            "{}: golangci-lint.sh built again with nothing changed: {said}",
            self.version
        );
        self.ok(
            "git init -q . && git check-ignore -q third_party/workqueuedone/bin/golangci-lint && rm -rf .git",
            "the archive's .gitignore ignores the built golangci-lint",
        );
    }

    /// Bad input, each stopped with one line that says what to do.
    fn bad_input(&self, archive: &Path, scripts: &Path) {
        let ci = "bash third_party/workqueuedone/your-module/ci.sh";
        let stops = |dir: &Path, command: &str, path: Option<&Path>, want: &str| {
            let mut cmd = self.bash(command);
            cmd.current_dir(dir);
            if let Some(path) = path {
                cmd.env("PATH", path);
            }
            let out = cmd.output().expect("bash can be started");
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.code() == Some(2) && said.contains(want) && said.trim().lines().count() == 1,
                "{}: `{command}` in {} should stop with one line saying {want:?}; it exited {:?}:\n{said}",
                self.version,
                dir.display(),
                out.status.code()
            );
        };
        // A module with no client-go.
        let plain = self.module.join("../readers-seat-no-client-go");
        let _ = fs::remove_dir_all(&plain);
        fs::create_dir_all(plain.join("third_party")).unwrap();
        fs::write(plain.join("go.mod"), "module example.com/plain\n\ngo 1.24.0\n").unwrap();
        fs::write(plain.join("plain.go"), "package plain\n").unwrap();
        let untar = Command::new("tar").arg("-xzf").arg(archive).arg("-C").arg(plain.join("third_party")).status();
        assert!(untar.unwrap().success());
        stops(&plain, ci, None, "does not require k8s.io/client-go");
        // The archive unpacked outside the module.
        stops(&self.module, &format!("bash {}/ci.sh", scripts.display()), None, "outside your module");
        // A Go older than the analyzer supports.
        let old = self.module.join("../readers-seat-old-go");
        fs::create_dir_all(&old).unwrap();
        let real_go =
            String::from_utf8_lossy(&Command::new("bash").args(["-c", "command -v go"]).output().unwrap().stdout)
                .trim()
                .to_owned();
        fs::write(
            old.join("go"),
            format!(
                "#!/bin/sh\n# Go 1.25.4, as far as a version check can tell.\n\
                 if [ \"$1 $2\" = \"env GOVERSION\" ]; then echo go1.25.4; exit 0; fi\nexec {real_go} \"$@\"\n"
            ),
        )
        .unwrap();
        let chmod = Command::new("chmod").arg("755").arg(old.join("go")).status().unwrap();
        assert!(chmod.success());
        let path = std::env::join_paths(
            std::iter::once(old.clone()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
        )
        .unwrap();
        stops(&self.module, ci, Some(Path::new(&path)), "go1.25.4 is older than the analyzer supports");
    }
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
    // The rendered book's own archive is written by `cargo xtask book` after
    // the HTML, and checked there (xtask/src/html_archive.rs).
    const RENDERED_BOOK: &str = "forget-is-not-delete-html.tar.gz";
    for page in &pages {
        for archive in page.downloads().into_iter().filter(|a| a != RENDERED_BOOK) {
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
