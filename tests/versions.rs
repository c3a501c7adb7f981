//! The introduction's "Versions this edition was checked against" is not
//! typed: it includes `src/generated/versions.md`, which this test computes
//! from the files that pin each version, and which `cargo xtask bless`
//! writes (`UPDATE_OUTPUTS=1`). A stale file fails with a diff.
//!
//! * the Rust crates (tokio, anyhow, kube, kube-runtime, k8s-openapi,
//!   prometheus-client): `Cargo.lock`;
//! * client-go, controller-runtime, apimachinery, golang.org/x/time, and Go
//!   itself (the `go` directive): `listings/go.mod`;
//! * golang.org/x/tools: `listings/workqueuedone/go.mod` (the analyzer's)
//!   and `listings/workqueuedone/corpus/go.mod` (the corpus's, with
//!   apiserver);
//! * etcd, kube-apiserver and promtool: the modules that build them,
//!   `tools/control-plane/*/go.mod` (Prometheus tags its Go module v0.316.0
//!   for release 3.16.0);
//! * mdBook: `MDBOOK_VERSION` in `xtask/src/main.rs`, what `cargo xtask`
//!   installs;
//! * Rust: the `channel` of `rust-toolchain.toml`, which rustup obeys, and
//!   the edition: `[workspace.package]` of `Cargo.toml`. The test also checks
//!   that the `rustc` running it is that release.

mod common;

use std::fs;
use std::process::Command;

/// The generated list, relative to the root.
const GENERATED: &str = "src/generated/versions.md";

/// What the introduction writes in place of the list.
const INCLUDE: &str = "{{#include generated/versions.md}}";

fn read(rel: &str) -> String {
    fs::read_to_string(common::root().join(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
}

/// The one version of `name` in Cargo.lock.
fn locked(lock: &str, name: &str) -> String {
    let versions: Vec<&str> = lock
        .split("[[package]]")
        .filter(|block| block.lines().any(|l| l == format!("name = \"{name}\"")))
        .filter_map(|block| block.lines().find_map(|l| l.strip_prefix("version = \"")?.strip_suffix('"')))
        .collect();
    assert!(versions.len() == 1, "Cargo.lock holds {} versions of {name}: {versions:?}", versions.len());
    versions[0].to_owned()
}

/// The version `go.mod` requires of `module` (direct or indirect).
fn required(go_mod: &str, rel: &str, module: &str) -> String {
    go_mod
        .lines()
        .find_map(|l| {
            let l = l.trim().strip_prefix("require ").unwrap_or(l.trim());
            let mut words = l.split_whitespace();
            (words.next() == Some(module)).then(|| words.next().map(str::to_owned)).flatten()
        })
        .unwrap_or_else(|| panic!("{rel} requires no {module}"))
}

/// `1.26` from `go 1.26.0`, `1.95` from `1.95.0`.
fn major_minor(version: &str) -> String {
    version.split('.').take(2).collect::<Vec<_>>().join(".")
}

/// Release `3.16.0` of Prometheus from its Go module's version, `v0.316.0`.
fn prometheus_release(module_version: &str) -> String {
    let parts: Vec<&str> = module_version.trim_start_matches('v').split('.').collect();
    let [_, major_minor, patch] = parts[..] else { panic!("unexpected Prometheus module version {module_version}") };
    let n: u32 = major_minor.parse().expect("Prometheus module versions are v0.MNN.P");
    format!("{}.{}.{patch}", n / 100, n % 100)
}

/// The `release` of `rustc -vV`.
fn running_rust() -> String {
    let out = Command::new("rustc").arg("-vV").output().expect("rustc can be started");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines().find_map(|l| l.strip_prefix("release: ")).expect("rustc -vV prints its release").to_owned()
}

/// The toolchain `rust-toolchain.toml` pins: its `channel`, a release.
fn pinned_rust() -> String {
    read("rust-toolchain.toml")
        .lines()
        .find_map(|l| l.trim().strip_prefix("channel = \"")?.strip_suffix('"').map(str::to_owned))
        .expect("rust-toolchain.toml names a channel")
}

#[test]
fn the_running_rustc_is_the_pinned_one() {
    let (pinned, running) = (pinned_rust(), running_rust());
    assert_eq!(
        running, pinned,
        "rust-toolchain.toml pins Rust {pinned}, but `rustc` is {running}: run the tests through rustup \
         (`rustup toolchain install {pinned}`), which reads that file"
    );
}

/// The edition of `[workspace.package]` in Cargo.toml.
fn edition() -> String {
    let manifest = read("Cargo.toml");
    let section = manifest.split("[workspace.package]").nth(1).expect("Cargo.toml has a [workspace.package]");
    section
        .lines()
        .take_while(|l| !l.starts_with('['))
        .find_map(|l| l.strip_prefix("edition = \"")?.strip_suffix('"').map(str::to_owned))
        .expect("[workspace.package] names an edition")
}

/// `MDBOOK_VERSION` of the xtask.
fn mdbook() -> String {
    read("xtask/src/main.rs")
        .lines()
        .find_map(|l| l.strip_prefix("const MDBOOK_VERSION: &str = \"")?.strip_suffix("\";").map(str::to_owned))
        .expect("xtask/src/main.rs defines MDBOOK_VERSION")
}

/// The list, from the files that pin each version.
fn versions() -> String {
    let lock = read("Cargo.lock");
    let listings = read("listings/go.mod");
    let go = listings
        .lines()
        .find_map(|l| l.strip_prefix("go "))
        .map(major_minor)
        .expect("listings/go.mod has a go directive");
    let tool = |name: &str, module: &str| {
        let rel = format!("tools/control-plane/{name}/go.mod");
        required(&read(&rel), &rel, module)
    };
    let go_version = |module: &str| required(&listings, "listings/go.mod", module);
    const CORPUS: &str = "listings/workqueuedone/corpus/go.mod";
    let corpus = read(CORPUS);
    let x_tools =
        required(&read("listings/workqueuedone/go.mod"), "listings/workqueuedone/go.mod", "golang.org/x/tools");
    format!(
        "<!-- Generated from Cargo.lock, listings/go.mod, listings/workqueuedone/go.mod, \
         listings/workqueuedone/corpus/go.mod, tools/control-plane/*/go.mod, xtask's MDBOOK_VERSION and rust-toolchain.toml, by tests/versions.rs; rewrite \
         it with `{bless}`, never by hand. -->\n\
         - k8s.io/client-go {client_go}\n\
         - sigs.k8s.io/controller-runtime {controller_runtime}\n\
         - k8s.io/apimachinery {apimachinery} and k8s.io/apiserver {apiserver}\n  (linked where client-go and controller-runtime call them)\n\
         - golang.org/x/time {x_time}\n\
         - kube-runtime {kube_runtime} (with kube {kube} and k8s-openapi {k8s_openapi})\n\
         - kube-apiserver from k8s.io/kubernetes {kube_apiserver}, etcd {etcd} and promtool from\n  Prometheus {prometheus} (chapter 9); chapter 10 reads the controllers of that\n  Kubernetes\n\
         - golang.org/x/tools {x_tools}\n  (commit {x_tools_commit}: the analyzer of chapter 10, on the x/tools that go vet\n  of Go {go} vendors), and {corpus_x_tools} (the corpus of chapter 10)\n\
         - Go {go}\n\
         - Rust {rust}, edition {edition}\n\
         - tokio {tokio}\n\
         - anyhow {anyhow}\n\
         - prometheus-client {prometheus_client}\n\
         - mdBook {mdbook}\n",
        bless = common::BLESS,
        client_go = go_version("k8s.io/client-go"),
        controller_runtime = go_version("sigs.k8s.io/controller-runtime"),
        x_time = go_version("golang.org/x/time"),
        x_tools = &x_tools,
        x_tools_commit = x_tools.rsplit('-').next().unwrap_or_default(),
        corpus_x_tools = required(&corpus, CORPUS, "golang.org/x/tools"),
        apimachinery = go_version("k8s.io/apimachinery"),
        apiserver = required(&corpus, CORPUS, "k8s.io/apiserver"),
        kube_runtime = locked(&lock, "kube-runtime"),
        kube = locked(&lock, "kube"),
        k8s_openapi = locked(&lock, "k8s-openapi"),
        kube_apiserver = tool("kube-apiserver", "k8s.io/kubernetes"),
        etcd = tool("etcd", "go.etcd.io/etcd/server/v3"),
        prometheus = prometheus_release(&tool("promtool", "github.com/prometheus/prometheus")),
        rust = pinned_rust(),
        edition = edition(),
        tokio = locked(&lock, "tokio"),
        anyhow = locked(&lock, "anyhow"),
        prometheus_client = locked(&lock, "prometheus-client"),
        mdbook = mdbook(),
    )
}

#[test]
fn the_versions_list_is_generated_fresh_and_complete() {
    let path = common::root().join(GENERATED);
    let fresh = versions();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    if let Some(failure) = common::check_fresh("the versions the introduction lists", &path, &fresh) {
        panic!("{failure}");
    }
    // What readers see names every version the book depends on.
    let list = read(GENERATED);
    let names = [
        "Rust ",
        "Go ",
        "mdBook ",
        "tokio ",
        "anyhow ",
        "k8s.io/client-go ",
        "sigs.k8s.io/controller-runtime ",
        "golang.org/x/time ",
        "kube-runtime ",
        "with kube ",
        "k8s-openapi ",
        "prometheus-client ",
        "etcd ",
        "kube-apiserver ",
        "promtool ",
    ];
    let missing: Vec<&str> = names.iter().copied().filter(|name| !list.contains(name)).collect();
    assert!(missing.is_empty(), "{GENERATED} lacks {missing:?}");
}

#[test]
fn the_introduction_includes_the_generated_list() {
    let intro = read("src/introduction.md");
    let section = intro
        .split("## Versions this edition was checked against")
        .nth(1)
        .expect("the introduction has its versions section")
        .split("\n## ")
        .next()
        .unwrap();
    assert!(section.contains(INCLUDE), "the introduction's versions section must be `{INCLUDE}`, not a typed list");
    assert!(
        !section.lines().any(|l| l.starts_with("- ")),
        "the introduction's versions section types a list item of its own; versions belong in {GENERATED}"
    );
}

#[test]
fn prometheus_module_versions_name_their_release() {
    assert_eq!(prometheus_release("v0.316.0"), "3.16.0");
    assert_eq!(prometheus_release("v0.305.2"), "3.5.2");
}
