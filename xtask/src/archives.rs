//! The downloadable archives: one per listing and one per Go twin, one of
//! `kube-reconcile-guard` and one of the stall alert, written by `cargo xtask
//! book` into `book/downloads/` and by `cargo xtask archives DIR` anywhere
//! (the copy-out test unpacks those, builds, runs and tests them).
//!
//! * `<listing>.tar.gz` unpacks into `<listing>/`: the listing's crate, with
//!   the crates of `listings/` it depends on by path beside its sources
//!   (`<listing>/faithful-workqueue/`, ...), their `path = "..."` rewritten to
//!   match; the listing's manifest ends with a `[workspace]` of its own that
//!   excludes them, so they are plain path dependencies (their tests and
//!   dev-dependencies stay out of the lock file). `Cargo.lock` is the
//!   repository's, with what the listing does not use removed by `cargo
//!   update --workspace` (which changes no version); it is then checked to
//!   hold nothing the repository's lock file does not, so that `cargo build
//!   --locked` builds exactly what the book was tested with.
//! * `<listing>-go.tar.gz` unpacks into `<listing>-go/`: a Go module of its
//!   own (`forget-is-not-delete/<listing>`) laid out as the listing's folder
//!   is: the twin in `twin/`, the listing's `output.txt` beside it (two twins
//!   read `../output.txt`), and the packages of `listings/internal/` the twin
//!   imports, transitively, in `internal/`, their import paths rewritten to
//!   the new module. `go.mod` and `go.sum` start as the repository's and are
//!   trimmed by `go mod tidy`, which keeps the selected version of every
//!   module that provides a package (it may fetch the go.mod files of test
//!   dependencies from the Go module proxy once).
//! * `kube-reconcile-guard.tar.gz` is that crate made as a listing's is (a
//!   workspace of its own, its pruned `Cargo.lock`), with its tests and its
//!   `.cargo/config.toml`, so `cargo build --locked` and `cargo test
//!   --locked` work in the unpacked folder.
//! * `workqueue-stall-alert.tar.gz` holds `listings/alerts/` as it is: the
//!   rule file and its promtool test.
//! * `workqueuedone.tar.gz` holds `listings/workqueuedone/` as it is: the Go
//!   analyzer of chapter 10, its command, tests and corpus (made only with
//!   Go, as the twins' archives are).
//!
//! Every archive holds the repository's `LICENSE` (Apache-2.0, the licence
//! of the port and of the Go code it ports), byte for byte, and a README.md
//! that says what the archive shows, where it is in the book, and how to run
//! it. What it shows is never typed twice: a listing's sentence is its
//! caption in the chapter (`Listing N-M: what it shows · ...`; the cheat
//! sheet's program has no caption, and takes the opening sentence of the
//! paragraph that links it), the guard's is its manifest's `description`,
//! the alert's the rule file's opening comment; the chapter is the page of `src/` whose caption or prose links
//! the archive (`downloads/<name>.tar.gz`), named by its `# ` title and its
//! page in the rendered book. An archive that no page links is an error.
//!
//! Archives are byte-for-byte deterministic: sorted entries, mtime 0, owner
//! 0, fixed modes, GNU tar format, `gzip -n`; the same inputs give the same
//! bytes, and an archive whose bytes did not change is not rewritten.
//!
//! Assembling runs `cargo update` and `go mod tidy` once per archive, about a
//! second each; their results depend only on the files they read, so they are
//! kept in `target/archives/cache/` under the hash of those files and reused.

use std::collections::BTreeSet;
use std::collections::hash_map::DefaultHasher;
use std::env;
use std::fs;
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::{Result, root};

/// The chapter whose listings need a running API server.
const API_SERVER_CHAPTER: &str = "ch09-real-api-server";

/// The Go module path of the twins in the repository, and the prefix of the
/// shared packages they import.
const GO_MODULE: &str = "forget-is-not-delete/listings";
const GO_INTERNAL: &str = "forget-is-not-delete/listings/internal/";

/// The crate of `listings/` that readers copy into their controllers; its
/// archive has its folder's name.
const GUARD: &str = "kube-reconcile-guard";

/// The archive of `listings/alerts/`, and the two files it must hold.
const ALERT: &str = "workqueue-stall-alert";
const ALERT_RULES: &str = "workqueue-stall.rules.yml";
const ALERT_TESTS: &str = "workqueue-stall.test.yml";

/// The archive of `listings/workqueuedone/`, the Go analyzer: its folder's
/// name, and its module's.
const ANALYZER: &str = "workqueuedone";

/// `cargo xtask archives DIR`: every archive into DIR.
pub fn command(args: &[String]) -> Result {
    let [dir] = args else { return Err("usage: cargo xtask archives DIR".to_owned()) };
    let dir = env::current_dir().map_err(|e| e.to_string())?.join(dir);
    write(&dir)
}

/// Writes every archive into `dest` (created if needed), removes archives of
/// listings that no longer exist, and says how many, how big, how long.
pub fn write(dest: &Path) -> Result {
    let started = Instant::now();
    fs::create_dir_all(dest).map_err(|e| format!("creating {}: {e}", dest.display()))?;
    let go = go_available()?;
    let book = Book::read()?;
    let mut work = Work::new(go)?;
    let mut written = BTreeSet::new();
    for listing in listings()? {
        if listing.dir.join("Cargo.toml").exists() {
            written.insert(rust_archive(&mut work, &book, &listing, dest)?);
        }
        if listing.dir.join("twin").is_dir() && go {
            written.insert(go_archive(&mut work, &book, &listing, dest)?);
        }
    }
    written.insert(guard_archive(&mut work, &book, dest)?);
    written.insert(alert_archive(&mut work, &book, dest)?);
    if go {
        written.insert(analyzer_archive(&mut work, &book, dest)?);
    }
    work.prune_cache()?;
    let mut bytes = 0;
    for entry in fs::read_dir(dest).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = file_name(&path);
        if !name.ends_with(".tar.gz") {
            continue;
        }
        if written.contains(&name) {
            bytes += fs::metadata(&path).map_err(|e| e.to_string())?.len();
        } else {
            fs::remove_file(&path).map_err(|e| format!("removing the stale {}: {e}", path.display()))?;
        }
    }
    eprintln!(
        "xtask: {} archives ({:.1} MB) in {} ({:.1} s)",
        written.len(),
        bytes as f64 / 1e6,
        dest.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Whether the Go archives can be made. Without Go they are skipped with a
/// message, except under `CI=true`.
fn go_available() -> Result<bool> {
    if go().arg("version").output().is_ok_and(|o| o.status.success()) {
        return Ok(true);
    }
    if env::var("CI").is_ok_and(|v| v == "true") {
        return Err("archives: `go` is not on PATH, and CI=true requires the Go twins' archives (Go 1.26)".to_owned());
    }
    eprintln!("xtask: skipped the Go twins' archives: `go` not found on PATH");
    Ok(false)
}

/// Where archives are assembled (`target/archives/<archive>/`), and the
/// cache of what `cargo update` and `go mod tidy` wrote.
struct Work {
    stage: PathBuf,
    /// The versions of cargo and go: part of every cache key.
    tools: String,
    /// The cache entries this run used; the others are removed at the end.
    used: BTreeSet<PathBuf>,
}

impl Work {
    fn new(go: bool) -> Result<Self> {
        let stage = root().join("target/archives");
        // Assembled folders of an earlier run (of listings since removed, too).
        if stage.is_dir() {
            for entry in sorted_entries(&stage)? {
                if entry != cache_dir() {
                    remove_dir(&entry)?;
                }
            }
        }
        let version = |mut cmd: Command, arg: &str| {
            cmd.arg(arg).output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default()
        };
        let mut tools = version(Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())), "version");
        if go {
            tools.push_str(&version(self::go(), "version"));
        }
        for packer in ["tar", "gzip"] {
            tools.push_str(&version(Command::new(packer), "--version"));
        }
        Ok(Work { stage, tools, used: BTreeSet::new() })
    }

    /// The cache entry for inputs hashed into `key`, marked as used.
    fn cache_entry(&mut self, mut key: DefaultHasher, suffix: &str) -> PathBuf {
        key.write(self.tools.as_bytes());
        let entry = cache_dir().join(format!("{:016x}.{suffix}", key.finish()));
        self.used.insert(entry.clone());
        entry
    }

    /// Packs the assembled `name/` into `dest/name.tar.gz` (or takes the
    /// archive of the same files from the cache), and leaves an archive whose
    /// bytes are already those alone. Returns its file name.
    fn pack(&mut self, name: &str, dest: &Path) -> Result<String> {
        let mut key = DefaultHasher::new();
        key.write(name.as_bytes());
        hash_tree(&self.stage.join(name), &mut key)?;
        let cached = self.cache_entry(key, "tar.gz");
        let bytes = match fs::read(&cached) {
            Ok(bytes) => bytes,
            Err(_) => {
                let bytes = pack(&self.stage, name)?;
                fs::create_dir_all(cache_dir()).map_err(|e| e.to_string())?;
                fs::write(&cached, &bytes).map_err(|e| format!("writing {}: {e}", cached.display()))?;
                bytes
            }
        };
        let archive = dest.join(format!("{name}.tar.gz"));
        if fs::read(&archive).ok().as_deref() != Some(&bytes[..]) {
            fs::write(&archive, &bytes).map_err(|e| format!("writing {}: {e}", archive.display()))?;
        }
        Ok(file_name(&archive))
    }

    fn prune_cache(&self) -> Result {
        if !cache_dir().is_dir() {
            return Ok(());
        }
        for entry in sorted_entries(&cache_dir())? {
            if !self.used.contains(&entry) {
                if entry.is_dir() { remove_dir(&entry)? } else { fs::remove_file(&entry).map_err(|e| e.to_string())? }
            }
        }
        Ok(())
    }
}

fn go() -> Command {
    let mut cmd = Command::new("go");
    cmd.env("GOTOOLCHAIN", "local").env("GOWORK", "off").env("GOFLAGS", "-mod=mod");
    cmd
}

struct Listing {
    /// `listing-NN-MM`: the folder's name, the package's, the archive's.
    name: String,
    dir: PathBuf,
    /// `chNN-...`, the folder of its chapter.
    chapter: String,
}

impl Listing {
    /// `5-2` for `listing-05-02`.
    fn number(&self) -> String {
        let parts: Vec<String> =
            self.name.trim_start_matches("listing-").split('-').map(|n| n.trim_start_matches('0').to_owned()).collect();
        parts.join("-")
    }

    fn needs_api_server(&self) -> bool {
        self.chapter == API_SERVER_CHAPTER
    }
}

/// Every `listings/ch*/listing-*` folder, sorted.
fn listings() -> Result<Vec<Listing>> {
    let mut found = Vec::new();
    for chapter in sorted_entries(&root().join("listings"))? {
        let chapter_name = file_name(&chapter);
        if !chapter.is_dir() || !chapter_name.starts_with("ch") {
            continue;
        }
        for dir in sorted_entries(&chapter)? {
            let name = file_name(&dir);
            if dir.is_dir() && name.starts_with("listing-") {
                found.push(Listing { name, dir, chapter: chapter_name.clone() });
            }
        }
    }
    Ok(found)
}

// ---------------------------------------------------------------- Rust ----

/// Assembles `<listing>/` in the stage folder and packs it; returns the
/// archive's file name.
fn rust_archive(work: &mut Work, book: &Book, listing: &Listing, dest: &Path) -> Result<String> {
    let caption = book.caption(listing)?;
    crate_archive(work, &listing.name, &listing.dir, dest, |deps| rust_readme(listing, &caption, deps))
}

/// `kube-reconcile-guard.tar.gz`: the crate readers are meant to copy, made
/// as a listing's archive is, with its tests and its `.cargo/config.toml`.
fn guard_archive(work: &mut Work, book: &Book, dest: &Path) -> Result<String> {
    let dir = root().join("listings").join(GUARD);
    let manifest = read(&dir.join("Cargo.toml"))?;
    let description = manifest
        .lines()
        .find_map(|l| l.strip_prefix("description = \"")?.strip_suffix('"'))
        .ok_or_else(|| format!("{}: no `description = \"...\"`, which its archive's README says", dir.display()))?;
    let page = book.linking(&format!("{GUARD}.tar.gz"))?;
    crate_archive(work, GUARD, &dir, dest, |deps| guard_readme(description, page, deps))
}

/// Assembles the crate in `dir` as `name/` in the stage folder, with its
/// path dependencies beside it, a workspace of its own, a pruned lock file,
/// `LICENSE` and the README `readme` writes (given the dependencies' folder
/// names), and packs it; returns the archive's file name.
fn crate_archive(
    work: &mut Work,
    name: &str,
    dir: &Path,
    dest: &Path,
    readme: impl FnOnce(&[&str]) -> String,
) -> Result<String> {
    let folder = work.stage.join(name);
    remove_dir(&folder)?;
    copy_dir(dir, &folder, &["target", "twin"])?;

    // The path dependencies, transitively, each into a folder named as its
    // folder in listings/ is.
    let mut deps: Vec<(String, PathBuf)> = Vec::new();
    let mut todo = path_dependencies(dir)?;
    while let Some(dep) = todo.pop() {
        let dep_name = file_name(&dep);
        if let Some((_, seen)) = deps.iter().find(|(n, _)| *n == dep_name) {
            if *seen != dep {
                return Err(format!("{name}: two path dependencies in folders named {dep_name}"));
            }
            continue;
        }
        todo.extend(path_dependencies(&dep)?);
        deps.push((dep_name, dep));
    }
    deps.sort();
    for (dep_name, dep) in &deps {
        copy_dir(dep, &folder.join(dep_name), &["target"])?;
        rewrite_paths(dep, &folder.join(dep_name).join("Cargo.toml"), &deps, "../")?;
    }
    let manifest = folder.join("Cargo.toml");
    rewrite_paths(dir, &manifest, &deps, "")?;
    let mut text = read(&manifest)?;
    if text.contains("[workspace]") {
        return Err(format!("{}: a listing's manifest must not have a [workspace] of its own", manifest.display()));
    }
    text.push_str("\n# A workspace of its own (added for the download), so that it builds alone.\n");
    if deps.is_empty() {
        text.push_str("[workspace]\n");
    } else {
        let excluded: Vec<String> = deps.iter().map(|(n, _)| format!("\"{n}\"")).collect();
        text.push_str(&format!(
            "# The crates beside it are its path dependencies, not members.\n[workspace]\nexclude = [{}]\n",
            excluded.join(", ")
        ));
    }
    write_file(&manifest, &text)?;

    let lock = pruned_lock_file(work, &folder)?;
    write_file(&folder.join("Cargo.lock"), &lock)?;
    let dep_names: Vec<&str> = deps.iter().map(|(n, _)| n.as_str()).collect();
    add_readme_and_licence(&folder, name, &readme(&dep_names))?;
    work.pack(name, dest)
}

/// `workqueue-stall-alert.tar.gz`: the alert rule and its promtool test, as
/// they are in `listings/alerts/`.
fn alert_archive(work: &mut Work, book: &Book, dest: &Path) -> Result<String> {
    let from = root().join("listings/alerts");
    let folder = work.stage.join(ALERT);
    remove_dir(&folder)?;
    copy_dir(&from, &folder, &[])?;
    for file in [ALERT_RULES, ALERT_TESTS] {
        if !folder.join(file).is_file() {
            return Err(format!("{}: no {file}, which the alert's archive and README name", from.display()));
        }
    }
    let rules = read(&from.join(ALERT_RULES))?;
    let says = opening_comment(&rules)
        .ok_or_else(|| format!("{}/{ALERT_RULES}: no opening comment saying what the rule is", from.display()))?;
    let alert = rules
        .lines()
        .find_map(|l| l.trim().strip_prefix("- alert: "))
        .ok_or_else(|| format!("{}/{ALERT_RULES}: no `- alert: NAME`", from.display()))?;
    let page = book.linking(&format!("{ALERT}.tar.gz"))?;
    add_readme_and_licence(&folder, ALERT, &alert_readme(alert.trim(), &says, page))?;
    work.pack(ALERT, dest)
}

/// `workqueuedone.tar.gz`: the Go analyzer of chapter 10 as it is in
/// `listings/workqueuedone/`, a module of its own with its tests and its
/// testdata, but not its corpus: a reader unpacks it into their own module's
/// `third_party/`, where a `go.mod` requiring all of Kubernetes would be
/// picked up by dependency bots and scanners (the corpus is the book's
/// evidence, in its repository). Its README is the folder's, with the place
/// in the book and the licence added.
fn analyzer_archive(work: &mut Work, book: &Book, dest: &Path) -> Result<String> {
    let from = root().join("listings").join(ANALYZER);
    let folder = work.stage.join(ANALYZER);
    remove_dir(&folder)?;
    // bin/ is where your-module/golangci-lint.sh builds, in a reader's copy.
    copy_dir(&from, &folder, &["README.md", "corpus", "bin"])?;
    let own = read(&from.join("README.md"))?;
    let Some(body) = own.strip_prefix(&format!("# {ANALYZER}\n")) else {
        return Err(format!("{}/README.md does not start `# {ANALYZER}`", from.display()));
    };
    let page = book.linking(&format!("{ANALYZER}.tar.gz"))?;
    let readme =
        format!("# {ANALYZER}\n{}\n\nThe analyzer is from {BOOK}: {}.\n\n{LICENCE}\n", body.trim_end(), page.place());
    add_readme_and_licence(&folder, ANALYZER, &readme)?;
    work.pack(ANALYZER, dest)
}

/// The first sentence of the `#` comment a YAML file opens with, its lines
/// joined.
fn opening_comment(yaml: &str) -> Option<String> {
    let mut text = String::new();
    for line in yaml.lines() {
        let Some(comment) = line.strip_prefix('#') else { break };
        text.push(' ');
        text.push_str(comment.trim());
    }
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let end = text.find(". ").map_or(text.len(), |n| n + 1);
    let sentence = text[..end].trim();
    (!sentence.is_empty()).then(|| sentence.to_owned())
}

/// Writes the archive's README.md and the repository's LICENSE into its
/// assembled folder, neither of which the copied sources may have.
fn add_readme_and_licence(folder: &Path, name: &str, readme: &str) -> Result {
    for own in ["README.md", "LICENSE"] {
        if folder.join(own).exists() {
            return Err(format!("{name}: the folder has a {own} of its own; the archive's would replace it"));
        }
    }
    write_file(&folder.join("README.md"), readme)?;
    fs::copy(root().join("LICENSE"), folder.join("LICENSE"))
        .map_err(|e| format!("copying the repository's LICENSE into {}: {e}", folder.display()))?;
    Ok(())
}

/// The `path = "..."` dependencies of the crate in `dir`, resolved.
fn path_dependencies(dir: &Path) -> Result<Vec<PathBuf>> {
    let manifest = read(&dir.join("Cargo.toml"))?;
    let mut deps = Vec::new();
    for (_, path) in path_values(&manifest) {
        let dep = dir.join(path);
        deps.push(dep.canonicalize().map_err(|e| format!("{}: {e}", dep.display()))?);
    }
    Ok(deps)
}

/// The `path = "..."` values of a manifest, with the byte offset of each.
fn path_values(manifest: &str) -> Vec<(usize, &str)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = manifest[from..].find("path = \"") {
        let start = from + at + "path = \"".len();
        let Some(len) = manifest[start..].find('"') else { break };
        // A dependency's, `name = { path = "..." }`; not a target's `path`.
        let line_start = manifest[..start].rfind('\n').map_or(0, |n| n + 1);
        if manifest[line_start..start].contains('{') {
            found.push((start, &manifest[start..start + len]));
        }
        from = start + len;
    }
    found
}

/// Rewrites the `path = "..."` values of the copied `manifest` (of the crate
/// at `original`) to the folders of the archive: `prefix` is `""` from the
/// listing's own manifest and `"../"` from a dependency's.
fn rewrite_paths(original: &Path, manifest: &Path, deps: &[(String, PathBuf)], prefix: &str) -> Result {
    let text = read(manifest)?;
    let mut out = String::new();
    let mut last = 0;
    for (start, path) in path_values(&text) {
        let target = original.join(path).canonicalize().map_err(|e| format!("{path}: {e}"))?;
        let (dep_name, _) = deps
            .iter()
            .find(|(_, d)| *d == target)
            .ok_or_else(|| format!("{}: {path} is not among the copied dependencies", manifest.display()))?;
        out.push_str(&text[last..start]);
        out.push_str(prefix);
        out.push_str(dep_name);
        last = start + path.len();
    }
    out.push_str(&text[last..]);
    write_file(manifest, &out)
}

/// The repository's Cargo.lock trimmed to what the crate in `folder` uses.
fn pruned_lock_file(work: &mut Work, folder: &Path) -> Result<String> {
    let workspace_lock = read(&root().join("Cargo.lock"))?;
    let mut key = DefaultHasher::new();
    key.write(workspace_lock.as_bytes());
    hash_manifests(folder, &mut key)?;
    let cached = work.cache_entry(key, "Cargo.lock");
    if let Ok(lock) = fs::read_to_string(&cached) {
        return Ok(lock);
    }
    write_file(&folder.join("Cargo.lock"), &workspace_lock)?;
    let update = |offline: bool| {
        let mut cmd = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
        cmd.current_dir(folder).args(["update", "--workspace", "--quiet"]);
        if offline {
            // The registry's index as cargo cached it: no network when the
            // workspace was built before.
            cmd.arg("--offline");
        }
        cmd.output()
    };
    let out = update(true).map_err(|e| format!("cargo update: {e}"))?;
    let out = if out.status.success() { out } else { update(false).map_err(|e| format!("cargo update: {e}"))? };
    if !out.status.success() {
        return Err(format!(
            "cargo update --workspace in {} failed:\n{}",
            folder.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let lock = read(&folder.join("Cargo.lock"))?;
    let ours = locked_packages(&workspace_lock);
    let added: Vec<String> = locked_packages(&lock).difference(&ours).cloned().collect();
    if !added.is_empty() {
        return Err(format!(
            "{}: its Cargo.lock would hold packages the repository's does not (so not the versions the book was \
             tested with): {}",
            folder.display(),
            added.join(", ")
        ));
    }
    write_file(&cached, &lock)?;
    Ok(lock)
}

/// The manifests of the assembled crate and its dependencies, into `hasher`.
fn hash_manifests(folder: &Path, hasher: &mut DefaultHasher) -> Result {
    for entry in sorted_entries(folder)? {
        if entry.is_dir() && entry.join("Cargo.toml").exists() {
            hasher.write(file_name(&entry).as_bytes());
            hasher.write(read(&entry.join("Cargo.toml"))?.as_bytes());
        }
    }
    hasher.write(read(&folder.join("Cargo.toml"))?.as_bytes());
    Ok(())
}

/// `name version source` of every registry package of a lock file.
fn locked_packages(lock: &str) -> BTreeSet<String> {
    lock.split("[[package]]")
        .skip(1)
        .filter_map(|block| {
            let field = |key: &str| {
                block.lines().find_map(|l| l.strip_prefix(&format!("{key} = \""))?.strip_suffix('"').map(str::to_owned))
            };
            Some(format!("{} {} {}", field("name")?, field("version")?, field("source")?))
        })
        .collect()
}

fn rust_readme(listing: &Listing, caption: &Caption, deps: &[&str]) -> String {
    let output = if listing.dir.join("output.svg").exists() { "output.svg" } else { "output.txt" };
    let mut text = vec![
        caption.heading(),
        format!(
            "{} This folder is the listing's crate, as the book's tests build it outside the book's repository.",
            caption.where_in_book()
        ),
    ];
    text.push(if deps.is_empty() {
        "`Cargo.lock` pins the versions the book was tested with.".to_owned()
    } else {
        let list: Vec<String> = deps.iter().map(|d| format!("`{d}/`")).collect();
        format!(
            "The crates it depends on by path are beside its sources ({}). Its `Cargo.toml` is a workspace of its \
             own, and `Cargo.lock` pins the versions the book was tested with.",
            list.join(", ")
        )
    });
    if listing.needs_api_server() {
        text.push(API_SERVER.to_owned());
        text.push(
            "```sh\nKUBECONFIG=/path/to/forget-is-not-delete/target/cluster/kubeconfig cargo run --locked\n```"
                .to_owned(),
        );
        text.push(format!("What it printed against the book's own control plane is in `{output}`."));
    } else {
        text.push("Run it:".to_owned());
        text.push("```sh\ncargo run --locked\n```".to_owned());
        text.push(format!("It prints exactly `{output}`."));
    }
    text.push(LICENCE.to_owned());
    paragraphs(&text)
}

fn guard_readme(description: &str, page: &Page, deps: &[&str]) -> String {
    // The manifest's description is a predicate ("Wraps a ..."); the README
    // gives it the crate as its subject.
    let says = lowercase_first(description.trim_end_matches('.'));
    let mut text = vec![
        format!("# {GUARD}"),
        format!("`{GUARD}` {says}. The crate is from {BOOK}: {}.", page.place()),
        "This folder is the crate with its tests and its documentation, as the book's tests build and test it \
         outside the book's repository. Its `Cargo.toml` is a workspace of its own, and `Cargo.lock` pins the \
         versions the book was tested with. `.cargo/config.toml` picks the Kubernetes version of k8s-openapi \
         for builds started in this folder: a library must not pick one, and a controller that depends on the \
         crate picks its own."
            .to_owned(),
    ];
    if !deps.is_empty() {
        let list: Vec<String> = deps.iter().map(|d| format!("`{d}/`")).collect();
        text.push(format!("The crates it depends on by path are beside its sources ({}).", list.join(", ")));
    }
    text.push("Build it and run its tests and doctests:".to_owned());
    text.push("```sh\ncargo build --locked && cargo test --locked\n```".to_owned());
    text.push(
        "`cargo doc --open` shows its documentation, with an example. To use it in a controller, copy \
         `src/lib.rs` into your project (its dependencies are in `Cargo.toml`), or depend on this folder by path \
         once the `[workspace]` table the download added to `Cargo.toml` is deleted."
            .to_owned(),
    );
    text.push(LICENCE.to_owned());
    paragraphs(&text)
}

fn alert_readme(alert: &str, says: &str, page: &Page) -> String {
    let text = vec![
        format!("# {alert}: the work-queue stall alert"),
        format!("{says} The rule is from {BOOK}: {}.", page.place()),
        format!(
            "`{ALERT_RULES}` is the Prometheus alerting rule, on the `workqueue_longest_running_processor_seconds` \
             gauge that client-go's and controller-runtime's work queues export; add it to `rule_files` in your \
             Prometheus configuration. `{ALERT_TESTS}` is its promtool unit test: histories of the gauge for which \
             the alert must fire or stay silent."
        ),
        "Check the rule and run its tests, in this folder:".to_owned(),
        format!("```sh\npromtool check rules {ALERT_RULES}\npromtool test rules {ALERT_TESTS}\n```"),
        format!(
            "Both print `SUCCESS`. The book was tested with promtool from Prometheus {}; its repository builds that \
             one with `cargo xtask control-plane`.",
            crate::control_plane::PROMETHEUS_VERSION
        ),
        LICENCE.to_owned(),
    ];
    paragraphs(&text)
}

/// The book every README is from, as its first sentence names it.
const BOOK: &str =
    "*Forget Is Not Delete*, an executable book about how Kubernetes work queues treat `Forget` and `Done`";

/// The last paragraph of every README: the LICENSE beside it.
const LICENCE: &str = "Licensed under the Apache License, Version 2.0 (see `LICENSE`), as the whole book's \
                       repository is.";

/// How to run a listing of chapter 9, before its command.
const API_SERVER: &str = "It talks to a Kubernetes API server: point `KUBECONFIG` at one. The book's repository \
                          starts one with `cargo xtask cluster up`; then, from this folder, with the path of your \
                          clone of the repository:";

// ---------------------------------------------------------- the book ----

/// The pages of the book (`src/*.md`), read once: an archive's README takes
/// what it shows and where it is in the book from them.
struct Book {
    /// In reading order, as `src/SUMMARY.md` lists them.
    pages: Vec<Page>,
}

/// One page of `src/`.
struct Page {
    /// `ch04-forget` for `src/ch04-forget.md`, rendered as `ch04-forget.html`.
    stem: String,
    /// Its `# ` heading.
    title: String,
    markdown: String,
}

/// What the book says of a listing: the page it is on, its caption's label
/// (`4-1` in `Listing 4-1: `; none for the program of a page of its own, the
/// cheat sheet's, which has no caption) and what it shows, as Markdown.
struct Caption<'a> {
    page: &'a Page,
    label: Option<String>,
    shows: String,
}

impl Book {
    fn read() -> Result<Book> {
        let src = root().join("src");
        let summary = read(&src.join("SUMMARY.md"))?;
        let mut pages = Vec::new();
        for piece in summary.split("](").skip(1) {
            let Some(file) = piece.split(')').next().and_then(|f| f.strip_suffix(".md")) else { continue };
            let path = src.join(format!("{file}.md"));
            let markdown = read(&path)?;
            let title = markdown
                .lines()
                .find_map(|l| l.strip_prefix("# "))
                .ok_or_else(|| format!("{}: no `# ` title, which the archives' READMEs name", path.display()))?
                .trim()
                .to_owned();
            pages.push(Page { stem: file.to_owned(), title, markdown });
        }
        Ok(Book { pages })
    }

    /// The caption that links the listing's archives, parsed.
    fn caption(&self, listing: &Listing) -> Result<Caption<'_>> {
        let archives =
            [format!("downloads/{}.tar.gz\"", listing.name), format!("downloads/{}-go.tar.gz\"", listing.name)];
        let mut found = Vec::new();
        for page in &self.pages {
            for block in caption_blocks(&page.markdown) {
                if archives.iter().any(|a| block.contains(a.as_str())) {
                    found.push((page, block));
                }
            }
        }
        if found.is_empty()
            && let Some((page, paragraph)) = self.prose_linking(&archives)
        {
            // A page whose own program the listing is (the cheat sheet): its
            // prose names and links it, and its opening sentence says what
            // the page, and so the listing, shows.
            let shows = first_sentence(&markdown_of(paragraph));
            if !shows.is_empty() {
                return Ok(Caption { page, label: None, shows });
            }
        }
        let [(page, block)] = found[..] else {
            return Err(format!(
                "listing {} ({}): {} captions in src/ link downloads/{}.tar.gz or its -go.tar.gz; want one, \
                 `<span class=\"caption\">Listing N-M: what it shows · ...</span>`, where its archive's README \
                 takes what it shows and its chapter from (or, for a page's own program, a paragraph linking it)",
                listing.number(),
                listing.dir.strip_prefix(root()).unwrap_or(&listing.dir).display(),
                found.len(),
                listing.name
            ));
        };
        let (label, shows) = parse_caption(block).map_err(|e| {
            format!("listing {} ({}): its caption in src/{}.md {e}", listing.number(), listing.name, page.stem)
        })?;
        Ok(Caption { page, label: Some(label), shows })
    }

    /// The first paragraph of prose, not a caption, that links one of
    /// `links`, and its page.
    fn prose_linking(&self, links: &[String]) -> Option<(&Page, &str)> {
        self.pages.iter().find_map(|page| {
            page.markdown
                .split("\n\n")
                .find(|p| !p.contains("class=\"caption\"") && links.iter().any(|l| p.contains(l.as_str())))
                .map(|p| (page, p))
        })
    }

    /// The first page, in reading order, that links `downloads/<archive>`.
    fn linking(&self, archive: &str) -> Result<&Page> {
        let link = format!("downloads/{archive}");
        self.pages
            .iter()
            .find(|p| p.markdown.contains(&format!("({link})")) || p.markdown.contains(&format!("\"{link}\"")))
            .ok_or_else(|| {
                format!(
                    "no page of src/ links {link}; its README names the chapter that does, so link it where the \
                     book discusses it"
                )
            })
    }
}

impl Page {
    /// `chapter 4, "What Forget actually touches" (`ch04-forget.html` in the
    /// book)`; a page without a chapter number is `the page "Cheat sheet"`.
    fn place(&self) -> String {
        let number =
            self.stem.strip_prefix("ch").and_then(|r| r.split_once('-')).and_then(|(n, _)| n.parse::<u32>().ok());
        let name = match number {
            Some(n) => format!("chapter {n}, \"{}\"", self.title),
            None => format!("the page \"{}\"", self.title),
        };
        format!("{name} (`{}.html` in the book)", self.stem)
    }
}

impl Caption<'_> {
    /// The README's first line: the caption's own words, or the page's
    /// title and its opening sentence.
    fn heading(&self) -> String {
        match &self.label {
            Some(label) => format!("# Listing {label}: {}", self.shows),
            None => format!("# {}: {}", self.page.title, lowercase_first(&self.shows)),
        }
    }

    fn where_in_book(&self) -> String {
        match &self.label {
            Some(label) => format!("Listing {label} is from {BOOK}: {}.", self.page.place()),
            None => format!("This listing is from {BOOK}: {}.", self.page.place()),
        }
    }
}

/// The first sentence of a text, without its full stop.
fn first_sentence(text: &str) -> String {
    let end = text.find(". ").unwrap_or(text.len());
    text[..end].trim().trim_end_matches('.').to_owned()
}

/// `what the switch does` for `What the switch does`; a word in capitals
/// (`API`) or in backticks stays as it is.
fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if first.is_uppercase() && second.is_lowercase() => {
            first.to_lowercase().chain(text[first.len_utf8()..].chars()).collect()
        }
        _ => text.to_owned(),
    }
}

/// Every caption of a page: from each `class="caption"` to the end of its
/// Markdown block (the next blank line), where the caption's HTML ends.
fn caption_blocks(markdown: &str) -> Vec<&str> {
    markdown
        .match_indices("class=\"caption\"")
        .map(|(at, _)| {
            let rest = &markdown[at..];
            &rest[..rest.find("\n\n").unwrap_or(rest.len())]
        })
        .collect()
}

/// `(label, what it shows)` of a caption block: the label of `Listing N-M: `
/// and the words after it, up to the first `·` (the links follow), or
/// else the end of its first line or sentence or the first link; `<code>` as
/// backticks, other tags dropped, entities decoded. Errs saying what is
/// missing.
fn parse_caption(block: &str) -> std::result::Result<(String, String), String> {
    let Some(at) = block.find("Listing ") else { return Err("has no `Listing N-M: `".to_owned()) };
    let rest = &block[at + "Listing ".len()..];
    let label_len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).unwrap_or(rest.len());
    let (label, rest) = rest.split_at(label_len);
    let Some(rest) = rest.strip_prefix(": ").filter(|_| label.contains('-')) else {
        return Err(format!("does not go on `Listing N-M: ` after `Listing {label}`"));
    };
    let end = ["·", "&middot;", "\n", "<br", "<a ", "</span>", "</p>", "</div>", "</figcaption>", ". "]
        .iter()
        .filter_map(|stop| rest.find(stop))
        .min()
        .unwrap_or(rest.len());
    let shows = markdown_of(&rest[..end]);
    let shows = shows.trim().trim_end_matches(['.', ',', ';', ':']).trim_end();
    if shows.is_empty() {
        return Err(format!("says nothing after `Listing {label}: `"));
    }
    Ok((label.to_owned(), shows.to_owned()))
}

/// A caption's HTML as Markdown: `<code>` as backticks, other tags dropped,
/// the entities a caption uses decoded, runs of whitespace as one space.
fn markdown_of(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('>') else {
            rest = "";
            break;
        };
        let tag = &rest[open + 1..open + close];
        if tag == "code" || tag.starts_with("code ") || tag == "/code" {
            out.push('`');
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    let out = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Joins paragraphs with blank lines, wrapping each at 72 columns (code
/// blocks and headings as they are).
fn paragraphs(text: &[String]) -> String {
    let mut out = String::new();
    for paragraph in text {
        if !out.is_empty() {
            out.push('\n');
        }
        if paragraph.starts_with("```") || paragraph.starts_with('#') {
            out.push_str(paragraph);
            out.push('\n');
            continue;
        }
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.len() + 1 + word.len() > 72 {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

// ------------------------------------------------------------------ Go ----

/// Assembles `<listing>-go/` in the stage folder and packs it; returns the
/// archive's file name.
fn go_archive(work: &mut Work, book: &Book, listing: &Listing, dest: &Path) -> Result<String> {
    let caption = book.caption(listing)?;
    let name = format!("{}-go", listing.name);
    let module = format!("forget-is-not-delete/{}", listing.name);
    let folder = work.stage.join(&name);
    remove_dir(&folder)?;
    let twin = listing.dir.join("twin");
    copy_go_package(&twin, &folder.join("twin"), &module)?;
    let rust_output = listing.dir.join("output.txt");
    if rust_output.exists() {
        fs::copy(&rust_output, folder.join("output.txt")).map_err(|e| e.to_string())?;
    }

    // The shared packages, transitively.
    let mut copied = BTreeSet::new();
    let mut todo: Vec<String> = internal_imports(&twin)?.into_iter().collect();
    while let Some(package) = todo.pop() {
        if !copied.insert(package.clone()) {
            continue;
        }
        let from = root().join("listings/internal").join(&package);
        copy_go_package(&from, &folder.join("internal").join(&package), &module)?;
        todo.extend(internal_imports(&from)?);
    }

    let go_mod = read(&root().join("listings/go.mod"))?;
    let Some(rest) = go_mod.strip_prefix(&format!("module {GO_MODULE}\n")) else {
        return Err(format!("listings/go.mod does not start with `module {GO_MODULE}`"));
    };
    write_file(&folder.join("go.mod"), &format!("module {module}\n{rest}"))?;
    fs::copy(root().join("listings/go.sum"), folder.join("go.sum")).map_err(|e| e.to_string())?;
    tidy(work, &folder)?;

    let is_test = sorted_entries(&twin)?.iter().any(|f| file_name(f).ends_with("_test.go"));
    add_readme_and_licence(&folder, &name, &go_readme(listing, &caption, &module, &copied, is_test))?;
    work.pack(&name, dest)
}

/// Copies the files of one Go package folder (not its subfolders), with the
/// imports of `listings/internal/` rewritten to `module`'s.
fn copy_go_package(from: &Path, to: &Path, module: &str) -> Result {
    fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for file in sorted_entries(from)? {
        if file.is_dir() {
            return Err(format!(
                "{}: a twin or shared package with a subfolder; archives.rs copies none",
                file.display()
            ));
        }
        let dest = to.join(file_name(&file));
        if file_name(&file).ends_with(".go") {
            let text = read(&file)?.replace(&format!("\"{GO_INTERNAL}"), &format!("\"{module}/internal/"));
            write_file(&dest, &text)?;
        } else {
            fs::copy(&file, &dest).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// The packages of `listings/internal/` the Go files of `dir` import.
fn internal_imports(dir: &Path) -> Result<BTreeSet<String>> {
    let mut found = BTreeSet::new();
    for file in sorted_entries(dir)? {
        if !file_name(&file).ends_with(".go") {
            continue;
        }
        let text = read(&file)?;
        for piece in text.split(&format!("\"{GO_INTERNAL}")).skip(1) {
            if let Some(end) = piece.find('"') {
                found.insert(piece[..end].to_owned());
            }
        }
    }
    Ok(found)
}

/// `go mod tidy` in `folder`, or the go.mod and go.sum it wrote last time
/// for the same files.
fn tidy(work: &mut Work, folder: &Path) -> Result {
    let mut key = DefaultHasher::new();
    hash_tree(folder, &mut key)?;
    let cached = work.cache_entry(key, "go");
    if cached.join("go.sum").exists() {
        for file in ["go.mod", "go.sum"] {
            fs::copy(cached.join(file), folder.join(file)).map_err(|e| e.to_string())?;
        }
        return Ok(());
    }
    let out = go()
        .current_dir(folder)
        .args(["mod", "tidy"])
        .output()
        .map_err(|e| format!("go mod tidy: cannot start: {e}"))?;
    if !out.status.success() {
        return Err(format!("go mod tidy in {} failed:\n{}", folder.display(), String::from_utf8_lossy(&out.stderr)));
    }
    fs::create_dir_all(&cached).map_err(|e| e.to_string())?;
    for file in ["go.mod", "go.sum"] {
        fs::copy(folder.join(file), cached.join(file)).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn go_readme(listing: &Listing, caption: &Caption, module: &str, internal: &BTreeSet<String>, is_test: bool) -> String {
    let has_rust = listing.dir.join("Cargo.toml").exists();
    // A listing that has no Rust crate is its Go program alone.
    let what = if has_rust { "the listing's Go twin" } else { "the listing" };
    let mut layout = format!(
        "This folder is {what}, a Go module of its own, `{module}`, laid out as the listing's folder is in the \
         book's repository: the twin in `twin/`"
    );
    if listing.dir.join("output.txt").exists() {
        layout.push_str(", the Rust listing's `output.txt` beside it");
    }
    if !internal.is_empty() {
        let list: Vec<String> = internal.iter().map(|p| format!("`internal/{p}`")).collect();
        layout.push_str(&format!(", and the shared packages it imports ({})", list.join(", ")));
    }
    layout.push_str(
        ". `go.mod` and `go.sum` pin the versions the book was tested with (client-go and controller-runtime among \
         them).",
    );
    let mut text = vec![caption.heading(), format!("{} {layout}", caption.where_in_book())];
    let run = if is_test { "go test" } else { "go run ." };
    if is_test {
        text.push(
            "The twin is a test, because it needs the virtual clock of `testing/synctest`. Run `go test` without \
             arguments, in its folder, to see what it prints; with a package argument, `go test` prints only `ok` \
             when it passes."
                .to_owned(),
        );
    }
    if listing.needs_api_server() {
        text.push(API_SERVER.to_owned());
        text.push(format!(
            "```sh\ncd twin\nKUBECONFIG=/path/to/forget-is-not-delete/target/cluster/kubeconfig {run}\n```"
        ));
    } else {
        text.push("Run it:".to_owned());
        text.push(format!("```sh\ncd twin\n{run}\n```"));
    }
    let expected = match (listing.dir.join("twin/output.txt").exists(), has_rust) {
        (true, true) => "`twin/output.txt`, its own output (it differs from the Rust listing's by nature)",
        (true, false) => "`twin/output.txt`",
        (false, _) => "`output.txt`, the same bytes as the Rust listing",
    };
    let then = if is_test { ", then the `PASS` and `ok` lines of `go test`" } else { "" };
    text.push(if listing.needs_api_server() {
        format!("What it printed against the book's own control plane is in {expected}.")
    } else {
        format!("It prints {expected}{then}.")
    });
    text.push(LICENCE.to_owned());
    paragraphs(&text)
}

// ------------------------------------------------------------- packing ----

/// `stage/name/` as a `.tar.gz`, deterministically.
fn pack(stage: &Path, name: &str) -> Result<Vec<u8>> {
    let mut tar = Command::new("tar")
        .current_dir(stage)
        .args(["--sort=name", "--format=gnu", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner"])
        .args(["--mode=u=rwX,go=rX", "-cf", "-", name])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("tar: cannot start: {e}"))?;
    let tar_out = tar.stdout.take().expect("piped");
    let gzip = Command::new("gzip")
        .args(["-n", "-9"])
        .stdin(tar_out)
        .output()
        .map_err(|e| format!("gzip: cannot start: {e}"))?;
    let tar_status = tar.wait().map_err(|e| e.to_string())?;
    if !tar_status.success() || !gzip.status.success() {
        return Err(format!("packing {name}: tar {tar_status}, gzip {}", gzip.status));
    }
    Ok(gzip.stdout)
}

// ------------------------------------------------------------- helpers ----

fn cache_dir() -> PathBuf {
    root().join("target/archives/cache")
}

/// Every file under `dir`: paths, contents and whether it is executable
/// (what an archive keeps of it).
fn hash_tree(dir: &Path, hasher: &mut DefaultHasher) -> Result {
    use std::os::unix::fs::PermissionsExt;
    for entry in sorted_entries(dir)? {
        let name = file_name(&entry);
        hasher.write(name.as_bytes());
        if entry.is_dir() {
            hash_tree(&entry, hasher)?;
        } else {
            let bytes = fs::read(&entry).map_err(|e| e.to_string())?;
            let mode = fs::metadata(&entry).map_err(|e| e.to_string())?.permissions().mode();
            hasher.write_u32(mode & 0o111);
            hasher.write_usize(bytes.len());
            hasher.write(&bytes);
        }
    }
    Ok(())
}

/// Copies `from` into `to`, recursively, leaving out the entries named in
/// `skip` (build output, the Go twin of a Rust copy).
fn copy_dir(from: &Path, to: &Path, skip: &[&str]) -> Result {
    fs::create_dir_all(to).map_err(|e| format!("creating {}: {e}", to.display()))?;
    for entry in sorted_entries(from)? {
        let name = file_name(&entry);
        if skip.contains(&name.as_str()) {
            continue;
        }
        if entry.is_dir() {
            copy_dir(&entry, &to.join(&name), &[])?;
        } else {
            fs::copy(&entry, to.join(&name)).map_err(|e| format!("copying {}: {e}", entry.display()))?;
        }
    }
    Ok(())
}

fn remove_dir(dir: &Path) -> Result {
    match fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(format!("removing {}: {e}", dir.display())),
        _ => Ok(()),
    }
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .map_err(|e| e.to_string())?;
    entries.sort();
    Ok(entries)
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap_or_default().to_string_lossy().into_owned()
}

fn read(path: &Path) -> Result<String> {
    fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))
}

fn write_file(path: &Path, text: &str) -> Result {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_only_path_values() {
        let manifest =
            "[lib]\npath = \"src/lib.rs\"\n[dependencies]\na = { path = \"../../faithful-workqueue\" }\nb = \"1\"\n";
        let found = path_values(manifest);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, "../../faithful-workqueue");
        assert_eq!(&manifest[found[0].0..found[0].0 + found[0].1.len()], "../../faithful-workqueue");
    }

    #[test]
    fn lists_the_registry_packages_of_a_lock_file() {
        let lock = "version = 4\n\n[[package]]\nname = \"a\"\nversion = \"0.1.0\"\n\n[[package]]\nname = \"tokio\"\n\
                    version = \"1.54.1\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n";
        let packages: Vec<String> = locked_packages(lock).into_iter().collect();
        assert_eq!(packages, vec!["tokio 1.54.1 registry+https://github.com/rust-lang/crates.io-index"]);
    }

    /// A caption as the chapters write it today, and as a one-line caption
    /// may: the words after `Listing N-M: ` up to the links, as Markdown.
    #[test]
    fn reads_what_a_listing_shows_from_its_caption() {
        let today = "<span class=\"caption\">Listing 5-1: a key that gets <code>Forget</code> but never \
                     <code>Done</code> is never handed out again · <code>listings/ch05/listing-05-01/src/main.rs</code> \
                     · download <a href=\"downloads/listing-05-01.tar.gz\">the crate</a></span>";
        let want = ("5-1".to_owned(), "a key that gets `Forget` but never `Done` is never handed out again".to_owned());
        assert_eq!(parse_caption(today), Ok(want.clone()));
        for one_line in [
            "<p class=\"caption\"><span class=\"go-sign\" title=\"twin\">≡ Go</span> Listing 5-1: a key that gets \
             <code>Forget</code> but never <code>Done</code> is never handed out again <a href=\"downloads/x\">crate</a></p>",
            "<span class=\"caption\">Listing 5-1: a key that gets <code>Forget</code> but never <code>Done</code> is \
             never handed out again.</span>",
            "<div class=\"caption\">Listing 5-1: a key that gets <code>Forget</code> but never <code>Done</code> is \
             never handed out again<br><a href=\"downloads/x\">crate</a></div>",
            "<span class=\"caption\">Listing 5-1: a key that gets <code>Forget</code> but never <code>Done</code> is \
             never handed out again. Download <a href=\"downloads/x\">the crate</a>.</span>",
        ] {
            assert_eq!(parse_caption(one_line), Ok(want.clone()), "{one_line}");
        }
        let entities = "<span class=\"caption\">Listing 9-9: <code>depth&lt;25&gt;</code> &amp; more · x</span>";
        assert_eq!(parse_caption(entities).unwrap().1, "`depth<25>` & more");
    }

    #[test]
    fn a_caption_without_its_label_or_words_is_an_error() {
        assert!(parse_caption("<span class=\"caption\">Figure 1: x</span>").unwrap_err().contains("Listing N-M"));
        assert!(parse_caption("<span class=\"caption\">Listing 5-1 shows x</span>").is_err());
        assert!(parse_caption("<span class=\"caption\">Listing 5-1: · x</span>").unwrap_err().contains("nothing"));
    }

    /// A listing whose caption is missing, or given twice, fails naming it.
    #[test]
    fn a_listing_without_a_caption_is_named() {
        let page = |markdown: &str| Page {
            stem: "ch05-silent-stall".into(),
            title: "The silent stall".into(),
            markdown: markdown.into(),
        };
        let listing = Listing {
            name: "listing-05-01".into(),
            dir: root().join("listings/ch05/listing-05-01"),
            chapter: "ch05".into(),
        };
        let linked =
            "<span class=\"caption\">Listing 5-1: x · <a href=\"downloads/listing-05-01.tar.gz\">c</a></span>\n";
        let book = Book { pages: vec![page("# The silent stall\n\nNo caption here.\n")] };
        let err = book.caption(&listing).err().unwrap();
        assert!(err.contains("listing 5-1") && err.contains("0 captions"), "{err}");
        let book = Book { pages: vec![page(&format!("{linked}\n{linked}"))] };
        assert!(book.caption(&listing).err().unwrap().contains("2 captions"));
        let book = Book { pages: vec![page("x\n"), page(linked)] };
        let caption = book.caption(&listing).unwrap();
        assert_eq!(caption.heading(), "# Listing 5-1: x");
        assert!(
            caption
                .where_in_book()
                .ends_with(": chapter 5, \"The silent stall\" (`ch05-silent-stall.html` in the book).")
        );
        // The Go archive's link finds the same caption; another listing's does not.
        let go_only =
            "<span class=\"caption\">Listing 5-1: y · <a href=\"downloads/listing-05-01-go.tar.gz\">g</a></span>";
        assert_eq!(Book { pages: vec![page(go_only)] }.caption(&listing).unwrap().shows, "y");
        let other =
            "<span class=\"caption\">Listing 5-1: y · <a href=\"downloads/listing-05-01-0.tar.gz\">g</a></span>";
        assert!(Book { pages: vec![page(other)] }.caption(&listing).is_err());
    }

    /// The cheat sheet's program has no caption: its page's opening
    /// sentence, in the paragraph that links it, says what it shows.
    #[test]
    fn a_page_s_own_program_takes_the_page_s_first_sentence() {
        let listing = Listing {
            name: "listing-cheat-sheet".into(),
            dir: root().join("listings/cheat-sheet/listing-cheat-sheet"),
            chapter: "cheat-sheet".into(),
        };
        let markdown = "# Cheat sheet\n\n<div class=\"cheat-sheet\">\n\nWhat the switch does after each \
                        return, and what <code>Forget</code> changes. Both tables are printed by it (download \
                        <a href=\"downloads/listing-cheat-sheet.tar.gz\">the crate</a>).\n\nMore.\n";
        let book = Book {
            pages: vec![Page { stem: "cheat-sheet".into(), title: "Cheat sheet".into(), markdown: markdown.into() }],
        };
        let caption = book.caption(&listing).unwrap();
        assert_eq!(
            caption.heading(),
            "# Cheat sheet: what the switch does after each return, and what `Forget` changes"
        );
        assert!(caption.where_in_book().ends_with(": the page \"Cheat sheet\" (`cheat-sheet.html` in the book)."));
        assert_eq!(lowercase_first("API server"), "API server");
        assert_eq!(lowercase_first("`Forget` x"), "`Forget` x");
    }

    #[test]
    fn names_a_page_by_chapter_or_title() {
        let page = |stem: &str, title: &str| Page { stem: stem.into(), title: title.into(), markdown: String::new() };
        assert_eq!(
            page("ch04-forget", "What Forget actually touches").place(),
            "chapter 4, \"What Forget actually touches\" (`ch04-forget.html` in the book)"
        );
        assert_eq!(
            page("cheat-sheet", "Cheat sheet").place(),
            "the page \"Cheat sheet\" (`cheat-sheet.html` in the book)"
        );
    }

    #[test]
    fn takes_the_first_sentence_of_a_rule_file_s_comment() {
        let yaml = "# The alert: a key held\n# too long. More words.\ngroups:\n# not this\n";
        assert_eq!(opening_comment(yaml).as_deref(), Some("The alert: a key held too long."));
        assert_eq!(opening_comment("groups: []\n"), None);
    }

    /// Two packings of the same files, with other times and permissions on
    /// disk, give the same bytes.
    #[test]
    fn packing_is_deterministic() {
        let stage = std::env::temp_dir().join(format!("xtask-pack-test-{}", std::process::id()));
        let archive = |touch: bool| {
            let _ = fs::remove_dir_all(&stage);
            fs::create_dir_all(stage.join("x/src")).unwrap();
            fs::write(stage.join("x/src/main.rs"), "fn main() {}\n").unwrap();
            fs::write(stage.join("x/Cargo.toml"), "[package]\n").unwrap();
            if touch {
                use std::os::unix::fs::PermissionsExt;
                fs::set_permissions(stage.join("x/Cargo.toml"), fs::Permissions::from_mode(0o664)).unwrap();
                let file = fs::File::options().write(true).open(stage.join("x/src/main.rs")).unwrap();
                file.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30)).unwrap();
            }
            pack(&stage, "x").unwrap()
        };
        let first = archive(false);
        let second = archive(true);
        let _ = fs::remove_dir_all(&stage);
        assert_eq!(first, second);
    }
}
