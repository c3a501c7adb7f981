//! The downloadable archives: one per listing and one per Go twin, written
//! by `cargo xtask book` into `book/downloads/` and by `cargo xtask archives
//! DIR` anywhere (the copy-out test unpacks those, builds and runs them).
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
//!
//! Each archive has a README.md saying how to run it. Archives are
//! byte-for-byte deterministic: sorted entries, mtime 0, owner 0, fixed
//! modes, GNU tar format, `gzip -n`; the same inputs give the same bytes, and
//! an archive whose bytes did not change is not rewritten.
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
const API_SERVER_CHAPTER: &str = "ch08-real-api-server";

/// The Go module path of the twins in the repository, and the prefix of the
/// shared packages they import.
const GO_MODULE: &str = "forget-is-not-delete/listings";
const GO_INTERNAL: &str = "forget-is-not-delete/listings/internal/";

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
    let mut work = Work::new(go)?;
    let mut written = BTreeSet::new();
    for listing in listings()? {
        if listing.dir.join("Cargo.toml").exists() {
            written.insert(rust_archive(&mut work, &listing, dest)?);
        }
        if listing.dir.join("twin").is_dir() && go {
            written.insert(go_archive(&mut work, &listing, dest)?);
        }
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
fn rust_archive(work: &mut Work, listing: &Listing, dest: &Path) -> Result<String> {
    let name = &listing.name;
    let folder = work.stage.join(name);
    remove_dir(&folder)?;
    copy_dir(&listing.dir, &folder, &["target", "twin"])?;

    // The path dependencies, transitively, each into a folder named as its
    // folder in listings/ is.
    let mut deps: Vec<(String, PathBuf)> = Vec::new();
    let mut todo = path_dependencies(&listing.dir)?;
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
    rewrite_paths(&listing.dir, &manifest, &deps, "")?;
    let mut text = read(&manifest)?;
    if text.contains("[workspace]") {
        return Err(format!("{}: a listing's manifest must not have a [workspace] of its own", manifest.display()));
    }
    let excluded: Vec<String> = deps.iter().map(|(n, _)| format!("\"{n}\"")).collect();
    text.push_str(&format!(
        "\n# A workspace of its own (added for the download); the crates beside\n\
         # the listing are its path dependencies, not members.\n\
         [workspace]\nexclude = [{}]\n",
        excluded.join(", ")
    ));
    write_file(&manifest, &text)?;

    let lock = pruned_lock_file(work, &folder)?;
    write_file(&folder.join("Cargo.lock"), &lock)?;
    if folder.join("README.md").exists() {
        return Err(format!("{name}: the listing has a README.md of its own; the archive's would replace it"));
    }
    let dep_names: Vec<&str> = deps.iter().map(|(n, _)| n.as_str()).collect();
    write_file(&folder.join("README.md"), &rust_readme(listing, &dep_names))?;
    work.pack(name, dest)
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

fn rust_readme(listing: &Listing, deps: &[&str]) -> String {
    let output = if listing.dir.join("output.svg").exists() { "output.svg" } else { "output.txt" };
    let mut text = vec![
        format!("# Listing {} ({})", listing.number(), listing.name),
        format!(
            "{INTRO} This folder is the listing's crate, as the book's tests build it outside the book's repository."
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
    paragraphs(&text)
}

/// The first sentence of every README.
const INTRO: &str =
    "From *Forget Is Not Delete*, an executable book about how Kubernetes work queues treat `Forget` and `Done`.";

/// How to run a listing of chapter 8, before its command.
const API_SERVER: &str = "It talks to a Kubernetes API server: point `KUBECONFIG` at one. The book's repository \
                          starts one with `cargo xtask cluster up`; then, from this folder, with the path of your \
                          clone of the repository:";

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
fn go_archive(work: &mut Work, listing: &Listing, dest: &Path) -> Result<String> {
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
    write_file(&folder.join("README.md"), &go_readme(listing, &module, &copied, is_test))?;
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

fn go_readme(listing: &Listing, module: &str, internal: &BTreeSet<String>, is_test: bool) -> String {
    let has_rust = listing.dir.join("Cargo.toml").exists();
    let mut layout = format!(
        "This folder is a Go module of its own, `{module}`, laid out as the listing's folder is in the book's \
         repository: the twin in `twin/`"
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
    let mut text =
        vec![format!("# Listing {}, Go twin ({}-go)", listing.number(), listing.name), format!("{INTRO} {layout}")];
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
