//! `cargo xtask`: the one place where the book's steps are orchestrated.
//!
//! ```text
//! cargo xtask book               render the book into book/ (installs mdBook if needed), with the archives,
//!                                the PDF and EPUB (book/forget-is-not-delete.pdf, .epub) and the whole
//!                                rendered book as one download (book/downloads/forget-is-not-delete-html.tar.gz)
//! cargo xtask archives DIR       only the archives of the listings and Go twins, into DIR
//! cargo xtask test [--no-cache]  every test: crate, listings, outputs, twins, lints, skeptic, mdbook test, browser
//!                                and the PDF and EPUB (pdftotext, epubcheck)
//! cargo xtask book-test [ARGS]   only `mdbook test`, with the library path prepared
//! cargo xtask mdbook-test-guide  the preprocessor with which plain `mdbook test` runs every block
//! cargo xtask dedent-preprocessor the preprocessor that starts a fragment shown from inside a function at column 0
//! cargo xtask browser-test       open every page of book/ in headless Chromium (after `book`)
//! cargo xtask offline-test       check book/'s PDF (pdftotext) and EPUB (epubcheck) (after `book`)
//! cargo xtask html-archive-test  unpack the rendered book's archive and follow every link (after `book`)
//! cargo xtask lint               clippy and rustdoc (warnings are errors), rustfmt, go vet, gofmt
//! cargo xtask bless              rewrite stale committed outputs, then review `git diff`
//! cargo xtask install-mdbook     install the pinned mdBook into .tools/
//! cargo xtask perf [--write]     Rust crate against client-go and controller-runtime; --write: src/performance.md
//! cargo xtask control-plane      build etcd, kube-apiserver and promtool where they are missing
//! cargo xtask cluster up|down    a control plane for readers, with a kubeconfig in target/cluster/
//! cargo xtask api-server-test    only the listings that run against a real API server
//! cargo xtask analyzer           the Go analyzer workqueuedone: its tests on each Go, the twins, the corpus
//! cargo xtask analyzer-cost [--write]  what workqueuedone costs go vet over Kubernetes, each Go; --write: cost.txt
//! cargo xtask golangci-lint      workqueuedone as a golangci-lint plugin, built with golangci-lint custom
//! ```
//!
//! It uses only the standard library, so it builds in a second.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

mod analyzer;
mod archives;
mod cache;
mod control_plane;
mod dedent;
mod golangci;
mod html_archive;
mod json;
mod offline;
mod output_lines;
mod perf;
mod run_lines;

use cache::{Inputs, Policy, cached};

/// The mdBook this book is written for. `install-mdbook` installs exactly this.
const MDBOOK_VERSION: &str = "0.5.4";

type Result<T = ()> = std::result::Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("book") => book(),
        Some("archives") => archives::command(&args[1..]),
        Some("test") => test(Policy::from_args(&args[1..])),
        Some("book-test") => book_test(&args[1..]),
        Some("browser-test") => browser_test(),
        Some("offline-test") => offline::check(),
        Some("html-archive-test") => html_archive::check(),
        Some("epub-preprocessor") => offline::preprocessor(&args[1..]),
        Some("mdbook-test-guide") => mdbook_test_guide(&args[1..]),
        Some("dedent-preprocessor") => dedent::preprocessor(&args[1..]),
        Some("lint") => lint(),
        Some("bless") => bless(),
        Some("install-mdbook") => mdbook().map(|path| println!("{}", path.display())),
        Some("perf") => perf::perf(&args[1..]),
        Some("analyzer") => analyzer::test(),
        Some("analyzer-cost") => analyzer::cost(&args[1..]),
        Some("golangci-lint") => golangci::test(),
        Some("control-plane") => control_plane::ensure_binaries().map(|b| {
            println!("etcd and kube-apiserver: {}", b.assets.display());
            println!("promtool: {}", b.promtool.display());
        }),
        Some("cluster") => control_plane::cluster(&args[1..]),
        Some("api-server-test") => api_server_test(),
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "usage: cargo xtask <book | archives DIR | test | book-test [mdbook test args] | browser-test | offline-test | html-archive-test | lint | bless | install-mdbook | perf [--write] [--by-placement] [--fallbacks] | control-plane | cluster <up | down | status> | api-server-test | analyzer | analyzer-cost [--write] | golangci-lint>";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask/ is inside the workspace").to_path_buf()
}

fn cargo() -> Command {
    let mut cmd = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
    cmd.current_dir(root());
    cmd
}

/// Runs `cmd`, streaming its output, and fails with `what` if it fails.
fn run(mut cmd: Command, what: &str) -> Result {
    eprintln!("xtask: {what}");
    let status = cmd.status().map_err(|e| format!("{what}: cannot start: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("{what}: failed ({status})")) }
}

/// The pinned mdBook, installed into `.tools/` with `cargo install --locked`
/// when it is missing or another version.
fn mdbook() -> Result<PathBuf> {
    let tools = root().join(".tools");
    let bin = tools.join("bin").join("mdbook");
    let installed = Command::new(&bin).arg("--version").output().ok().filter(|out| out.status.success());
    if let Some(out) = installed
        && String::from_utf8_lossy(&out.stdout).trim() == format!("mdbook v{MDBOOK_VERSION}")
    {
        return Ok(bin);
    }
    let mut install = cargo();
    install.args(["install", "mdbook", "--locked", "--version", MDBOOK_VERSION, "--root"]).arg(&tools);
    run(install, &format!("installing mdBook {MDBOOK_VERSION} into .tools/ (once; a few minutes)"))?;
    Ok(bin)
}

/// Runs `mdbook build` and fails on any ERROR line: mdBook 0.5 only logs a
/// missing include or an unknown `[output.html]` key and still exits 0.
fn mdbook_build(dest: &Path, markdown: bool) -> Result {
    let mut cmd = Command::new(mdbook()?);
    cmd.current_dir(root()).arg("build").arg("--dest-dir").arg(dest);
    if markdown {
        // Replaces the html renderer by the markdown one, which writes each
        // chapter with its includes expanded: what skeptic reads.
        cmd.env("MDBOOK_OUTPUT", r#"{"markdown":{}}"#);
    }
    let out = cmd.stderr(Stdio::piped()).output().map_err(|e| format!("mdbook build: {e}"))?;
    let log = String::from_utf8_lossy(&out.stderr);
    eprint!("{log}");
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR")).collect();
    if !out.status.success() || !errors.is_empty() {
        return Err(format!("mdbook build into {} failed:\n{}", dest.display(), errors.join("\n")));
    }
    Ok(())
}

fn book() -> Result {
    mdbook_build(&root().join("book"), false)?;
    archives::write(&root().join("book/downloads"))?;
    offline::build()?;
    // Last: the whole of book/, downloads, PDF and EPUB included.
    html_archive::write()?;
    println!("the book is in {}", root().join("book/index.html").display());
    Ok(())
}

/// Every test. The steps that cannot be incremental are skipped when their
/// inputs are unchanged since they last passed (see `cache.rs`).
fn test(policy: Policy) -> Result {
    warn_if_the_disk_is_short();
    let mdbook = mdbook()?;
    let expanded = root().join("target/book-md");
    mdbook_build(&expanded, true)?;

    let mut tests = cargo();
    tests.args(["test", "--workspace", "--locked"]).env("BOOK_MD_DIR", &expanded).env("MDBOOK", &mdbook);
    run(
        tests,
        "cargo test --workspace (crate, listings, outputs, twins, differential, stress, properties, copy-out, links)",
    )?;

    model_check()?;
    lint()?;
    let analyzer_inputs = Inputs::new().paths(&["listings", "xtask/src"]).command("go", &["version"]);
    cached("analyzer", analyzer_inputs, policy, analyzer::test)?;
    let golangci_inputs =
        Inputs::new().paths(&["listings", "xtask/src"]).command("go", &["version"]).value(golangci::VERSION);
    cached("golangci-lint", golangci_inputs, policy, golangci::test)?;

    // The listings that talk to a real API server: one control plane for
    // all of them, stopped before the next step (also when one fails).
    let api_server = Inputs::new()
        .paths(&[
            "listings",
            "tools/control-plane",
            "tests/api_server.rs",
            "tests/common",
            "Cargo.toml",
            "Cargo.lock",
            "xtask/src",
        ])
        .command("rustc", &["-vV"])
        .command("go", &["version"])
        .env(&["KUBEBUILDER_ASSETS"]);
    cached("api-server", api_server, policy, api_server_test)?;

    // What every block of the book compiles against: the chapters, the
    // listings they include, the crates the listings use, the toolchain.
    let book_code = || {
        Inputs::new()
            .paths(&[
                "src",
                "book.toml",
                "listings",
                "tests/book_deps",
                "build.rs",
                "Cargo.toml",
                "Cargo.lock",
                "xtask/src",
            ])
            .command("rustc", &["-vV"])
            .env(&["RUSTFLAGS"])
            .value(MDBOOK_VERSION)
    };
    cached("skeptic", book_code().paths(&["tests/skeptic.rs"]), policy, || {
        let mut skeptic = cargo();
        skeptic
            // --workspace, so that features unify as in the run above and
            // the blocks link against the same, single build of each crate.
            .args(["test", "--workspace", "--locked", "--test", "skeptic"])
            .env("BOOK_MD_DIR", &expanded);
        run(skeptic, "skeptic: every Rust block of every chapter, as readers see it")
    })?;
    // Plain `mdbook test`, as a reader runs it: the book's preprocessor builds
    // the crates and runs every block (`mdbook_test_guide`).
    cached("mdbook-test", book_code(), policy, || {
        let mut test = Command::new(&mdbook);
        test.current_dir(root()).arg("test").env_remove(BOOK_LIB_ENV);
        run(test, "plain `mdbook test`: every Rust block of every chapter")
    })?;

    book()?;
    offline::test(policy)?;
    html_archive::check()?;
    let chromium = chromium()?;
    let rendered = Inputs::new()
        .paths(&["book", "src", "tests/browser/book.test.mjs", "tests/browser/package-lock.json", "xtask/src"])
        .command("node", &["--version"])
        .command(&chromium.to_string_lossy(), &["--version"]);
    cached("browser-test", rendered, policy, browser_test)
}

/// Readers copy these crates and Go programs into their projects, so they
/// must be free of the warnings their own tools would show them: clippy's
/// default lints (as errors) over every target of the workspace (and of
/// `workqueue-perf` with its `count-free-keys` feature), rustdoc
/// over the two library crates, rustfmt, and `go vet` and `gofmt` over the
/// Go module of the twins. Without Go the Go
/// half is skipped with a message, except under `CI=true`.
fn lint() -> Result {
    ensure_component("clippy", "clippy")?;
    let mut clippy = cargo();
    clippy.args(["clippy", "--workspace", "--all-targets", "--locked", "--", "-D", "warnings"]);
    run(clippy, "clippy over the workspace, warnings as errors")?;
    // The perf listing's other build, which `cargo xtask perf` measures too,
    // in the target directory that command builds it in.
    let mut count_free = cargo();
    count_free
        .args(["clippy", "-p", "workqueue-perf", "--all-targets", "--locked", "--features", "count-free-keys"])
        .arg("--target-dir")
        .arg(root().join("target/perf-count-free-keys"))
        .args(["--", "-D", "warnings"]);
    run(count_free, "clippy over workqueue-perf --features count-free-keys, warnings as errors")?;

    // The two crates readers depend on: their docs, private items included,
    // must build without a warning (a broken intra-doc link is one). The
    // guard picks no Kubernetes version itself; its own folder's
    // .cargo/config.toml does that, which a build from here does not read.
    let mut docs = cargo();
    docs.args(["doc", "--no-deps", "--document-private-items", "--locked"])
        .args(["-p", "faithful-workqueue", "-p", "kube-reconcile-guard"])
        .env("RUSTDOCFLAGS", "-D warnings")
        .env("K8S_OPENAPI_ENABLED_VERSION", "1.37");
    run(docs, "rustdoc over faithful-workqueue and kube-reconcile-guard, warnings as errors")?;

    // rustfmt.toml sets the style. The compile-fail listing is outside the
    // workspace, so `cargo fmt` does not see it; rustfmt checks it by name.
    ensure_component("rustfmt", "fmt")?;
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--check"]);
    run(fmt, "rustfmt over the workspace (on failure: `cargo fmt --all` and review the diff)")?;
    let mut fmt_fail = Command::new("rustfmt");
    fmt_fail.args(["--edition", "2024", "--check"]).arg(root().join("listings/ch05-silent-stall/fail-05-01/main.rs"));
    run(fmt_fail, "rustfmt over the compile-fail listing")?;

    let go_module = root().join("listings");
    if Command::new("go").arg("version").output().is_err() {
        if env::var("CI").is_ok_and(|v| v == "true") {
            return Err("lint: `go` is not on PATH, and CI=true requires the Go lints (Go 1.26)".to_owned());
        }
        eprintln!("xtask: skipped go vet and gofmt: `go` not found on PATH");
        return Ok(());
    }
    let mut vet = Command::new("go");
    vet.args(["vet", "./..."]).current_dir(&go_module);
    run(vet, "go vet over the Go twins")?;
    // gofmt sits beside go in GOROOT, which need not be on PATH.
    let goroot = Command::new("go").args(["env", "GOROOT"]).output().map_err(|e| format!("go env: {e}"))?;
    let gofmt = PathBuf::from(String::from_utf8_lossy(&goroot.stdout).trim()).join("bin/gofmt");
    let unformatted = Command::new(&gofmt)
        .args(["-l", "."])
        .current_dir(&go_module)
        .output()
        .map_err(|e| format!("{}: cannot start: {e}", gofmt.display()))?;
    let listed = String::from_utf8_lossy(&unformatted.stdout);
    if !unformatted.status.success() || !listed.trim().is_empty() {
        return Err(format!(
            "gofmt: these Go files are not formatted (run `gofmt -w` on them in listings/):\n{listed}{}",
            String::from_utf8_lossy(&unformatted.stderr)
        ));
    }
    Ok(())
}

/// Installs a rustup component the lints need when `cargo <subcommand>` is
/// missing: rustup's default profile has clippy and rustfmt, a minimal one
/// does not.
fn ensure_component(component: &str, subcommand: &str) -> Result {
    if cargo().args([subcommand, "--version"]).output().is_ok_and(|o| o.status.success()) {
        return Ok(());
    }
    let mut add = Command::new("rustup");
    add.args(["component", "add", component]);
    run(add, &format!("`cargo {subcommand}` is missing: rustup component add {component}"))
}

/// What a first run writes, measured on a clean clone: 7.5 GB into
/// `target/`, and on a machine that never built the control plane 4.7 GB
/// more into Go's build cache.
const FIRST_RUN_BYTES: u64 = 12_200_000_000;

/// A build that fills the disk fails far from the cause (one such CI run
/// ended with `ld terminated with signal 7 [Bus error]`), so say beforehand
/// when there may not be room. Only a warning: the space may already be in
/// use by an earlier run's `target/`, and `df` may be missing.
fn warn_if_the_disk_is_short() {
    let target = root().join("target");
    let probe = if target.exists() { target } else { root() };
    let Ok(out) = Command::new("df").arg("-Pk").arg(&probe).output() else { return };
    let Some(free) = available_bytes(&String::from_utf8_lossy(&out.stdout)) else { return };
    if free < FIRST_RUN_BYTES {
        eprintln!(
            "xtask: warning: {:.1} GB free on the disk of {}; a first run writes about {:.1} GB (target/ and Go's build cache). \
             A linker that dies with a bus error (signal 7) means the disk filled up.",
            free as f64 / 1e9,
            probe.display(),
            FIRST_RUN_BYTES as f64 / 1e9
        );
    }
}

/// The free bytes that `df -Pk` reports (POSIX format: one header line, then
/// `filesystem 1024-blocks used available capacity mount`).
fn available_bytes(df: &str) -> Option<u64> {
    let kib: u64 = df.lines().nth(1)?.split_whitespace().nth(3)?.parse().ok()?;
    Some(kib * 1024)
}

/// The shuttle model checks of the queue (`tests/model_check.rs`): the crate
/// built with `--cfg shuttle`, in a target folder of its own so the usual
/// build is not invalidated.
fn model_check() -> Result {
    let mut check = cargo();
    check
        .args(["test", "--locked", "-p", "faithful-workqueue", "--test", "model_check", "--target-dir"])
        .arg(root().join("target/shuttle"))
        .env("RUSTFLAGS", "--cfg shuttle");
    run(check, "model checking with shuttle: add/get/done/shut_down under many schedules")
}

/// The Chromium the browser test drives: Debian's, installed with apt-get when
/// it is missing and we are root. `CHROMIUM` names another binary.
fn chromium() -> Result<PathBuf> {
    if let Some(path) = env::var_os("CHROMIUM") {
        let path = PathBuf::from(path);
        return if path.exists() { Ok(path) } else { Err(format!("CHROMIUM={} does not exist", path.display())) };
    }
    let bin = PathBuf::from("/usr/bin/chromium");
    if bin.exists() {
        return Ok(bin);
    }
    const HOW: &str = "install Debian's Chromium as root (`apt-get update && apt-get install -y chromium`) \
                       or point CHROMIUM at a Chromium binary";
    let uid = Command::new("id").arg("-u").output().map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned());
    if uid.ok().as_deref() != Some("0") {
        return Err(format!("{} is missing and only root can install it: {HOW}", bin.display()));
    }
    let apt_get = |args: &[&str]| {
        let mut cmd = Command::new("apt-get");
        cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        cmd
    };
    if run(apt_get(&["install", "-y", "chromium"]), "/usr/bin/chromium is missing: apt-get install -y chromium")
        .is_err()
    {
        // A fresh machine may have no package lists yet.
        run(apt_get(&["update"]), "apt-get update, then apt-get install -y chromium again")
            .map_err(|e| format!("{e}: {HOW}"))?;
        run(apt_get(&["install", "-y", "chromium"]), "apt-get install -y chromium")
            .map_err(|e| format!("{e}: {HOW}"))?;
    }
    if !bin.exists() {
        return Err(format!("apt-get installed chromium but {} is missing: {HOW}", bin.display()));
    }
    Ok(bin)
}

/// Opens every page of the rendered book/ in headless Chromium, driven by the
/// pinned playwright-core of tests/browser/ (see book.test.mjs for the checks).
/// Renders nothing: `book()` (or `cargo xtask book`) must have run first.
fn browser_test() -> Result {
    let book = root().join("book");
    if !book.join("index.html").exists() {
        return Err(format!("{} is missing: run `cargo xtask book` first", book.join("index.html").display()));
    }
    let chromium = chromium()?;
    let dir = root().join("tests/browser");
    let mut ci = Command::new("npm");
    ci.current_dir(&dir).args(["ci", "--no-audit", "--no-fund", "--prefer-offline"]);
    run(ci, "npm ci in tests/browser (playwright-core, pinned by package-lock.json)")?;
    let mut test = Command::new("node");
    test.current_dir(&dir)
        .arg("book.test.mjs")
        .arg("--book")
        .arg(&book)
        .arg("--src")
        .arg(root().join("src"))
        .arg("--screenshots")
        .arg(root().join("target/screenshots"))
        .env("CHROMIUM", &chromium);
    run(test, "browser test: every page of book/ in headless Chromium")
}

/// `mdbook test` with a library directory holding exactly one build of each
/// crate the book's code uses.
///
/// Pointing `-L` at `target/debug/deps` breaks with E0464 ("multiple
/// candidates") as soon as a crate was built twice with other features, so the
/// directory is assembled from cargo's own list of the artifacts of one build
/// of the book package's library, for an explicit target so that host-only
/// build units (proc-macro dependencies) stay out of it.
fn book_test(args: &[String]) -> Result {
    let mdbook = mdbook()?;
    let lib_dir = book_lib()?;
    let mut test = Command::new(mdbook);
    test.current_dir(root()).arg("test").arg("-L").arg(lib_dir.path()).args(args).env(BOOK_LIB_ENV, lib_dir.path());
    run(test, "mdbook test (every Rust block of every chapter)")
}

/// A directory of this process's own under `target/<kind>/`, removed when
/// dropped. Two `mdbook test` runs at once (the book's tests start two) must
/// not share one: each empties its directory first, which pulled the other's
/// libraries and working directory from under its rustdoc.
struct Scratch(PathBuf);

impl Scratch {
    fn new(kind: &str) -> Result<Scratch> {
        let dir = root().join("target").join(kind).join(std::process::id().to_string());
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Builds the crates the chapters' blocks use (`cargo build --locked --lib
/// -p forget-is-not-delete` for this machine's target) and copies their
/// libraries into a directory of this process's own under `target/book-lib/`,
/// which it returns: the one directory rustdoc needs with `-L`. Cargo's own
/// messages go to stderr.
fn book_lib() -> Result<Scratch> {
    let host = host_triple()?;
    let out = cargo()
        .args(["build", "--locked", "--lib", "-p", "forget-is-not-delete", "--target", &host])
        .arg("--message-format=json-render-diagnostics")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !out.status.success() {
        return Err("building the book's dependencies failed".to_owned());
    }
    let lib_dir = Scratch::new("book-lib")?;
    let target_dir = root().join("target").join(&host);
    let mut copied = 0;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if !line.contains(r#""reason":"compiler-artifact""#) {
            continue;
        }
        for file in json_string_array(line, "filenames") {
            let path = PathBuf::from(&file);
            let is_lib = file.ends_with(".rlib") || file.ends_with(".rmeta");
            let is_proc_macro = file.ends_with(".so") || file.ends_with(".dylib") || file.ends_with(".dll");
            if (is_lib && path.starts_with(&target_dir)) || is_proc_macro {
                let name = path.file_name().expect("an artifact has a file name");
                fs::copy(&path, lib_dir.path().join(name)).map_err(|e| format!("copying {file}: {e}"))?;
                copied += 1;
            }
        }
    }
    if copied == 0 {
        return Err("cargo reported no library artifacts for the book".to_owned());
    }
    Ok(lib_dir)
}

/// Set by `book-test` for the `mdbook test` it runs: the library directory
/// it prepared, which tells `mdbook-test-guide` to stand aside.
const BOOK_LIB_ENV: &str = "FORGET_IS_NOT_DELETE_BOOK_LIB";

/// `cargo xtask mdbook-test-guide`: a preprocessor that book.toml runs for
/// mdBook's `test` renderer only, so `mdbook build` and `mdbook serve` never
/// start it. mdBook cannot be told where the crates the blocks use are
/// (rust-lang/mdBook#706: it runs `rustdoc --test` on each chapter with only
/// the `-L` of its own command line), so under a plain `mdbook test` this
/// does what `cargo xtask book-test` does: it builds those crates
/// ([`book_lib`]), runs rustdoc on every chapter being tested with them, as
/// mdBook would, prints a line per chapter, and fails the command with
/// rustdoc's output if a block fails. It then hands mdBook the book with
/// every Rust block marked `ignore`, which mdBook's own pass can run without
/// the crates, and says so. Under `book-test`, or an `mdbook test` given
/// `-L`, it hands the book back unchanged.
fn mdbook_test_guide(args: &[String]) -> Result {
    use std::io::{Read, Write};
    if args.first().map(String::as_str) == Some("supports") {
        // book.toml names the renderer, so mdBook does not ask; if it does,
        // the answer is the same.
        return if args.get(1).map(String::as_str) == Some("test") { Ok(()) } else { Err("test only".into()) };
    }
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).map_err(|e| format!("reading the book from mdBook: {e}"))?;
    let book = json::second_element(&input).ok_or("mdBook sent no [context, book] array")?;
    let parent = mdbook_args();
    if env::var_os(BOOK_LIB_ENV).is_some() || parent.as_deref().is_some_and(library_path_given) {
        return std::io::stdout().write_all(book.as_bytes()).map_err(|e| e.to_string());
    }
    let chapter = parent.as_deref().and_then(chapter_given);
    let tested = test_blocks_here(book, chapter.as_deref())?;
    std::io::stdout().write_all(tested.as_bytes()).map_err(|e| e.to_string())
}

/// The chapters of mdBook's book JSON, depth first: name, path, content.
fn chapters_of(value: &json::Value, out: &mut Vec<(String, String, String)>) {
    let items = value.get("items").or_else(|| value.get("sections")).or_else(|| value.get("sub_items"));
    for item in items.and_then(json::Value::as_array).unwrap_or_default() {
        let Some(chapter) = item.get("Chapter") else { continue };
        let field = |key: &str| chapter.get(key).and_then(json::Value::as_str).unwrap_or_default().to_owned();
        out.push((field("name"), field("path"), field("content")));
        chapters_of(chapter, out);
    }
}

/// The book's `[rust] edition`, as mdBook passes it to rustdoc.
fn book_edition() -> Option<String> {
    let toml = fs::read_to_string(root().join("book.toml")).ok()?;
    let rust = toml.split("\n[").find(|section| section.starts_with("rust]"))?;
    let line = rust.lines().find(|l| l.trim_start().starts_with("edition"))?;
    Some(line.split('"').nth(1)?.to_owned())
}

/// Under a plain `mdbook test`: every Rust block of the chapters being
/// tested (all, or the one `-c` names, matched as mdBook matches it), run
/// with the book's crates; then the book with those blocks marked `ignore`.
fn test_blocks_here(book: &str, chapter: Option<&str>) -> Result<String> {
    eprintln!(
        "mdbook test: the book's preprocessor builds the crates the blocks use and runs them itself (mdBook has \
         no setting for library paths, rust-lang/mdBook#706)"
    );
    let lib_dir = book_lib()?;
    let value = json::parse(book)?;
    let mut chapters = Vec::new();
    chapters_of(&value, &mut chapters);
    let work = Scratch::new("book-test")?;
    let work = work.path();
    let edition = book_edition();
    let (mut blocks, mut failures) = (0usize, Vec::new());
    for (name, path, content) in &chapters {
        if path.is_empty() || chapter.is_some_and(|c| c != name && c != path) {
            continue;
        }
        let file = work.join(path);
        if let Some(dir) = file.parent() {
            fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        }
        fs::write(&file, content).map_err(|e| format!("writing {}: {e}", file.display()))?;
        let mut rustdoc = Command::new("rustdoc");
        rustdoc.current_dir(work).arg(path).arg("--test").arg("-L").arg(lib_dir.path());
        if let Some(edition) = &edition {
            rustdoc.args(["--edition", edition]);
        }
        let out = rustdoc.output().map_err(|e| format!("rustdoc: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let passed: usize = stdout
            .lines()
            .filter_map(|l| {
                l.strip_prefix("test result: ")?.split("; ").next()?.rsplit(' ').nth(1)?.parse::<usize>().ok()
            })
            .sum();
        blocks += passed;
        if out.status.success() {
            match passed {
                0 => eprintln!("mdbook test: {path}: no Rust block to run"),
                n => eprintln!("mdbook test: {path}: {n} Rust blocks passed"),
            }
        } else {
            eprintln!("mdbook test: {path}: FAILED");
            failures.push(format!(
                "{path} ({name}): rustdoc --test failed; rerun it alone with `mdbook test -c \"{name}\"`\n--- stdout\n{stdout}\n--- stderr\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    if let Some(c) = chapter
        && !chapters.iter().any(|(name, path, _)| c == name || c == path)
    {
        return Err(format!("mdbook test: no chapter is named or at {c:?}"));
    }
    if !failures.is_empty() {
        return Err(failures.join("\n"));
    }
    eprintln!(
        "mdbook test: {blocks} Rust blocks passed with the book's crates; mdBook's own pass, next, finds them \
         marked ignore, since they ran above"
    );
    Ok(json::rewrite_strings(book, "content", rust_blocks_ignored))
}

/// `markdown` with `ignore` added to every fence rustdoc would run: a
/// `rust` block, or one with no language.
fn rust_blocks_ignored(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len() + 64);
    let mut open: Option<(char, usize)> = None;
    for line in markdown.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let fence = trimmed.chars().next().filter(|c| (*c == '`' || *c == '~') && indent <= 3);
        match (open, fence) {
            (None, Some(c)) => {
                let len = trimmed.chars().take_while(|x| *x == c).count();
                if len >= 3 {
                    open = Some((c, len));
                    let info = trimmed[len..].trim_end();
                    let lang = info.split([',', ' ', '\t']).next().unwrap_or_default();
                    if lang.is_empty() || lang == "rust" {
                        let newline = &line[line.trim_end().len()..];
                        let sep = if info.is_empty() { "rust," } else { "," };
                        out.push_str(&format!("{}{info}{sep}ignore{newline}", &line[..indent + len]));
                        continue;
                    }
                }
            }
            (Some((c, len)), Some(x))
                if x == c && trimmed.trim_end().len() >= len && trimmed.trim_end().chars().all(|y| y == c) =>
            {
                open = None;
            }
            _ => {}
        }
        out.push_str(line);
    }
    out
}

/// The arguments of the `mdbook` process above this one (through `cargo`),
/// after its name. Read from `/proc`, so only on Linux; elsewhere `None`.
fn mdbook_args() -> Option<Vec<String>> {
    let mut pid = std::process::id().to_string();
    for _ in 0..4 {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The fields after the command's name, which is in parentheses and
        // may itself hold spaces: state, then the parent's pid.
        pid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1))?.to_owned();
        let cmdline = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let words: Vec<String> = cmdline.split(|b| *b == 0).map(|w| String::from_utf8_lossy(w).into_owned()).collect();
        if words.first().is_some_and(|exe| Path::new(exe).file_name().is_some_and(|name| name == "mdbook")) {
            return Some(words[1..].iter().filter(|w| !w.is_empty()).cloned().collect());
        }
    }
    None
}

/// The chapter `mdbook test -c NAME` (or `--chapter`) names.
fn chapter_given(words: &[String]) -> Option<String> {
    words.iter().enumerate().find_map(|(i, w)| match w.as_str() {
        "-c" | "--chapter" => words.get(i + 1).cloned(),
        _ => w.strip_prefix("--chapter=").or_else(|| w.strip_prefix("-c").filter(|c| !c.is_empty())).map(str::to_owned),
    })
}

/// Whether `mdbook`'s arguments give a library path.
fn library_path_given(words: &[String]) -> bool {
    words.iter().any(|w| {
        w == "-L" || w == "--library-path" || w.starts_with("--library-path=") || (w.starts_with("-L") && w.len() > 2)
    })
}

/// Starts one control plane (building it first where needed), runs the
/// API-server listings and their twins against it (`tests/api_server.rs`),
/// and stops it, checking that no etcd or kube-apiserver survives.
fn api_server_test() -> Result {
    // The control plane is built with Go, and the supervisor is a Go program.
    if control_plane::go_command().arg("version").output().is_err() {
        if env::var("CI").is_ok_and(|v| v == "true") {
            return Err("api-server: `go` is not on PATH, and CI=true requires chapter 9's listings (Go 1.26)".into());
        }
        eprintln!(
            "xtask: skipped chapter 9's listings: `go` not found on PATH (they need Go 1.26 to build the control plane)"
        );
        return Ok(());
    }
    let kubeconfig = root().join("target/api-server/kubeconfig");
    fs::create_dir_all(kubeconfig.parent().expect("has a parent")).map_err(|e| e.to_string())?;
    // Built before the control plane starts, so that it is not up (and
    // holding memory) during a long compile.
    let mut build = cargo();
    build.args(["test", "--locked", "--no-run", "-p", "forget-is-not-delete", "--test", "api_server"]);
    run(build, "building the API-server test")?;
    let cluster = control_plane::Cluster::start(&kubeconfig)?;
    let mut test = cargo();
    test.args(["test", "--locked", "-p", "forget-is-not-delete", "--test", "api_server", "--", "--test-threads=1"])
        .env("KUBECONFIG", &cluster.kubeconfig)
        .env("PROMTOOL", &cluster.binaries.promtool)
        .env("KUBEBUILDER_ASSETS", &cluster.binaries.assets)
        .env("CLUSTER_SUPERVISOR", root().join("target/cluster/cluster"))
        .env("CLUSTER_SUPERVISOR_PID", cluster.supervisor_pid().to_string());
    let tested = run(test, "the listings against the real API server, and their Go twins");
    let stopped = cluster.stop();
    tested.and(stopped)
}

fn bless() -> Result {
    let mut cmd = cargo();
    cmd.args(["test", "--locked", "-p", "forget-is-not-delete", "--test", "outputs", "--test", "twins"])
        .args(["--test", "compile_fail", "--test", "versions"])
        .env("UPDATE_OUTPUTS", "1")
        .env("TRYBUILD", "overwrite");
    run(cmd, "re-running every listing and rewriting stale outputs")?;
    println!("review the changes with `git diff -- listings`");
    Ok(())
}

fn host_triple() -> Result<String> {
    let out = Command::new("rustc").arg("-vV").output().map_err(|e| format!("rustc -vV: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
        .ok_or_else(|| "rustc -vV printed no host triple".to_owned())
}

/// The strings of the JSON array `"key":[...]` in one line of cargo's output.
/// Cargo writes paths as plain JSON strings; backslashes (Windows) are unescaped.
fn json_string_array(line: &str, key: &str) -> Vec<String> {
    let Some(start) = line.find(&format!(r#""{key}":["#)) else { return Vec::new() };
    let rest = &line[start + key.len() + 4..];
    let Some(end) = rest.find(']') else { return Vec::new() };
    rest[..end]
        .split(',')
        .filter_map(|s| s.trim().strip_prefix('"')?.strip_suffix('"').map(|s| s.replace("\\\\", "\\")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{available_bytes, chapter_given, json_string_array, library_path_given, rust_blocks_ignored};

    #[test]
    fn marks_every_block_rustdoc_would_run_ignore_and_no_other() {
        let md = "```rust,noplayground\nfn a() {}\n```\n\n```\nplain\n```\n\n```text\nout\n```\n\n\
                  ````rust\n```\nstill inside\n````\n";
        assert_eq!(
            rust_blocks_ignored(md),
            "```rust,noplayground,ignore\nfn a() {}\n```\n\n```rust,ignore\nplain\n```\n\n```text\nout\n```\n\n\
             ````rust,ignore\n```\nstill inside\n````\n"
        );
    }

    #[test]
    fn reads_the_chapter_mdbook_test_was_given() {
        let words = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(chapter_given(&words("test -c Intro")).as_deref(), Some("Intro"));
        assert_eq!(chapter_given(&words("test --chapter=ch04-forget.md")).as_deref(), Some("ch04-forget.md"));
        assert_eq!(chapter_given(&words("test -L x")), None);
    }

    #[test]
    fn sees_a_library_path_in_every_spelling_mdbook_takes() {
        let words = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        for given in ["test -L target/book-lib", "test --library-path x", "test --library-path=x", "test -Lx -c Intro"]
        {
            assert!(library_path_given(&words(given)), "{given}");
        }
        for plain in ["test", "test -c Introduction", "test --chapter Lx"] {
            assert!(!library_path_given(&words(plain)), "{plain}");
        }
    }

    #[test]
    fn reads_the_free_space_that_df_reports() {
        let df = "Filesystem     1024-blocks     Used Available Capacity Mounted on\n/dev/vda 264137664 93323316 3145728 97% /\n";
        assert_eq!(available_bytes(df), Some(3145728 * 1024));
        assert_eq!(available_bytes("df: /nowhere: No such file or directory\n"), None);
    }

    #[test]
    fn reads_the_filenames_of_an_artifact() {
        let line = r#"{"reason":"compiler-artifact","filenames":["/t/libtokio-1.rlib","/t/libtokio-1.rmeta"],"executable":null}"#;
        assert_eq!(json_string_array(line, "filenames"), vec!["/t/libtokio-1.rlib", "/t/libtokio-1.rmeta"]);
        assert!(json_string_array(line, "missing").is_empty());
    }
}
