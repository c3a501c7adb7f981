//! `cargo xtask analyzer`: the Go analyzer `listings/workqueuedone`, which
//! reports a work-queue item that is handed out and never `Done`.
//!
//! 1. its `analysistest` tests (`go test ./...`), whose testdata is a module
//!    that requires the real client-go and controller-runtime, on every Go
//!    in [`TESTED_GO`]: on the one `go.mod` pins x/tools for as it stands,
//!    on the others with the `go.mod` `cmd/build-vet-workqueuedone -modfile`
//!    writes, as a reader's CI builds the vet tool;
//! 2. the book's own Go code: run over `listings/` with its test files
//!    (`-tests`) and without the `panic:` kind, it must report exactly the
//!    twins that stall or double a `Done` on purpose, as committed in
//!    `listings/workqueuedone/twins.txt`;
//! 3. the corpus (`listings/workqueuedone/corpus`): Kubernetes, client-go's
//!    examples, sample-controller, apiserver, apiextensions-apiserver,
//!    kube-aggregator and controller-runtime at pinned versions; its table of
//!    reports (`corpus.txt`) and its mutation score (`mutants.txt`) must
//!    print the committed bytes, and every `stall` and `double` mutant must
//!    be caught;
//! 4. its cost over the Kubernetes packages, as `cargo xtask analyzer-cost
//!    --write` measured it on every Go in [`TESTED_GO`] (a benchmark of
//!    fifteen minutes a Go, not run by the tests): `cost.txt` must hold one
//!    measurement for each, of the corpus's packages, with golangci-lint's
//!    rows, each meeting [`COST_TARGETS`]: `go vet
//!    -vettool=vet-workqueuedone` at most 1.2 times plain `go vet`'s wall
//!    time with no analysis cached and 1.1 times run again, and the
//!    analysis alone at most 6 times that of go vet's own analyzers; and
//!    `cost.inputs` beside it must fingerprint the analyzer as it stands
//!    ([`COST_INPUTS`]), so a change to the analyzer's code asks for a new
//!    measurement by name.
//!
//! With `UPDATE_OUTPUTS=1` a stale output is rewritten instead (`cargo xtask
//! bless`), to be reviewed with `git diff`.

use std::env;
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::{Result, root, run};

/// The most the analyzer may cost, each as a multiple of go vet alone:
/// `go vet -vettool=vet-workqueuedone` against plain `go vet` with no
/// analysis cached (cold) and run again (warm), and the analysis alone.
/// `cargo xtask analyzer-cost --write` measures them ([`cost`], which takes
/// a miss once more before it fails) and the tests hold the committed
/// `cost.txt` to them.
///
/// Why these numbers: the vet tool is built in the analyzer's own module,
/// on the x/tools the installed Go vendors for cmd/vet, so go vet's
/// analyzers run as the same code in both and the ratios measure the
/// analyzer alone (a tool built on x/tools v0.50.0 or later also writes
/// each package's types into its vet output, which the go command hashes
/// on every run: 1.10 to 1.21 cold, 1.08 to 1.15 warm). The analysis alone
/// is several times go vet's own, which share go/cfg graphs and need no SSA;
/// it is gated at 6 so that a blow-up in the walk (one package once took
/// minutes) cannot be committed.
const COST_TARGETS: [(&str, f64); 3] = [("cold ratio", 1.2), ("warm ratio", 1.1), ("analysis ratio", 6.0)];

/// The Go releases the analyzer and the reader's seat are tested on, by
/// their patch release: the machine's, and the current one, which the Go
/// module proxy serves as a toolchain (`GOTOOLCHAIN=go1.27.3`). The first is
/// the one whose vendored x/tools the analyzer's `go.mod` pins.
pub const TESTED_GO: [&str; 2] = ["go1.26.8", "go1.27.3"];

fn go(dir: &Path) -> Command {
    let mut cmd = Command::new("go");
    cmd.current_dir(dir).env("GOTOOLCHAIN", "local").env("GOWORK", "off").env("GOFLAGS", "-mod=readonly");
    cmd
}

pub fn test() -> Result {
    let module = root().join("listings/workqueuedone");
    // analysistest loads its testdata with GOPROXY=off: the modules it
    // requires must be in the module cache first.
    let mut download = go(&module.join("passes/workqueuedone/testdata"));
    download.args(["mod", "download"]);
    run(download, "go mod download for the analyzer's testdata")?;
    let mut tests = go(&module);
    tests.args(["test", "./..."]);
    run(tests, &format!("workqueuedone: analysistest over every shape in testdata/, on {}", TESTED_GO[0]))?;
    for version in &TESTED_GO[1..] {
        // As a reader's CI builds the vet tool on this Go: with go vet's
        // own x/tools, which the module's go.mod does not pin.
        let modfile = root().join(format!("target/workqueuedone/{version}/go.mod"));
        fs::create_dir_all(modfile.parent().unwrap()).map_err(|e| format!("creating {}: {e}", modfile.display()))?;
        let mut write = go(&module);
        write.env("GOTOOLCHAIN", version).args(["run", "./cmd/build-vet-workqueuedone", "-modfile"]).arg(&modfile);
        run(write, &format!("workqueuedone: the go.mod a vet tool builds with on {version}"))?;
        let mut tests = go(&module);
        tests
            .env("GOTOOLCHAIN", version)
            .env("WORKQUEUEDONE_MODFILE", &modfile)
            .arg("test")
            .arg(format!("-modfile={}", modfile.display()))
            .arg("./...");
        run(tests, &format!("workqueuedone: analysistest over every shape in testdata/, on {version}"))?;
    }

    let bin = root().join("target/workqueuedone/workqueuedone");
    let mut build = go(&module);
    build.args(["build", "-o"]).arg(&bin).arg("./cmd/workqueuedone");
    run(build, "workqueuedone: building the command")?;

    broken_package_is_an_error(&bin)?;

    // As the vet tool the chapter puts in CI, go vet's own analyzers and
    // workqueuedone in one: go vet runs it and fails when it reports.
    let vettool = root().join("target/workqueuedone/vet-workqueuedone");
    let mut build = go(&module);
    build.args(["build", "-o"]).arg(&vettool).arg("./cmd/vet-workqueuedone");
    run(build, "workqueuedone: building the vet tool")?;
    let listings = root().join("listings");
    let vet = go(&listings)
        .env_remove("GOFLAGS")
        .arg("vet")
        .arg(format!("-vettool={}", vettool.display()))
        .arg("./ch05-silent-stall/listing-05-01/twin")
        .output()
        .map_err(|e| format!("go vet -vettool: cannot start: {e}"))?;
    let vet_err = String::from_utf8_lossy(&vet.stderr);
    if vet.status.success() || !vet_err.contains("forget: q.Forget(key)") {
        return Err(format!(
            "go vet -vettool=vet-workqueuedone should fail on listing 5-1's twin with a forget: report; it said ({}):\n{vet_err}",
            vet.status
        ));
    }

    // The twins: the analyzer exits 3 when it reports, as vet does.
    eprintln!("xtask: workqueuedone over listings/ (the Go twins and the harness)");
    let out = Command::new(&bin)
        .current_dir(&listings)
        .env("GOWORK", "off")
        .args(["-tests", "-panic=false", "./..."])
        .output()
        .map_err(|e| format!("{}: cannot start: {e}", bin.display()))?;
    let code = out.status.code();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if code != Some(3) {
        return Err(format!(
            "workqueuedone over listings/ should report the twins that stall on purpose and exit 3, but exited {code:?}:\n{stderr}"
        ));
    }
    let prefix = format!("{}/", listings.display());
    let twins: String = sorted_diagnostics(&stderr.replace(&prefix, "")).iter().map(|l| page_width(l)).collect();
    compare(&module.join("twins.txt"), &twins, "workqueuedone over listings/")?;

    let corpus = module.join("corpus");
    let mut download = go(&corpus);
    download.args(["mod", "download"]);
    run(download, "go mod download for the corpus (Kubernetes and the rest, at pinned versions)")?;
    let table = output(go(&corpus).args(["run", ".", "-table"]), "the corpus table")?;
    compare(&corpus.join("corpus.txt"), &table, "the corpus table (go run . -table)")?;
    any_module_list(&corpus, &table)?;
    let mutants = output(go(&corpus).args(["run", ".", "-mutants"]), "the mutation score")?;
    compare(&corpus.join("mutants.txt"), &mutants, "the mutation score (go run . -mutants)")?;
    for line in mutants.lines().filter(|l| l.contains("(stall)") || l.contains("(double)")) {
        let numbers: Vec<u64> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
        if numbers.len() != 2 || numbers[0] != numbers[1] {
            return Err(format!("a stall or double mutant was missed: {line}\n{mutants}"));
        }
    }
    if !mutants.contains(", 0 made the code worse") {
        return Err(format!("a suggested fix, applied to a mutant, made the code worse:\n{mutants}"));
    }
    if !mutants.contains("(double)") {
        return Err(format!("the mutation score has no double mutants:\n{mutants}"));
    }

    check_committed_cost(&corpus.join("cost.txt"))
}

/// `cargo xtask analyzer-cost [--write]`: the analyzer's cost over the
/// corpus's Kubernetes packages, measured on every Go in [`TESTED_GO`]
/// (about fifteen minutes each): `go vet` with and without the vet tool,
/// the command on its own, golangci-lint with and without the plugin, and
/// golangci-lint's build; printed, and with `--write` stamped with its date
/// and machine into `cost.txt`, which chapter 10 shows, with the
/// fingerprint of what was measured in `cost.inputs`. A measurement
/// over a target is taken once more before it fails: wall times on a shared
/// machine vary by a tenth or more from one run to the next.
pub fn cost(args: &[String]) -> Result {
    let write = match args {
        [] => false,
        [w] if w == "--write" => true,
        _ => {
            return Err(format!(
                "analyzer-cost: unknown arguments {args:?}; usage: cargo xtask analyzer-cost [--write]"
            ));
        }
    };
    let corpus = root().join("listings/workqueuedone/corpus");
    let mut download = go(&corpus);
    download.args(["mod", "download"]);
    run(download, "go mod download for the corpus (Kubernetes and the rest, at pinned versions)")?;
    let mut all = String::new();
    let config = root().join("listings/workqueuedone/your-module/.golangci.yml");
    for version in TESTED_GO {
        // golangci-lint is built first, as a reader's first CI run builds
        // it, and then measured with the rest.
        let built = golangci_lint_build(version)?;
        let measure = || {
            let mut cmd = go(&corpus);
            cmd.env("GOTOOLCHAIN", version).args(["run", ".", "-cost", "-golangci-lint"]);
            cmd.arg(&built.bin).arg("-golangci-config").arg(&config);
            output(&mut cmd, &format!("the analyzer's cost on {version} (about fifteen minutes)"))
        };
        let mut cost = measure()?;
        if let Some(problem) = over_target(&cost) {
            eprint!("xtask: the analyzer's cost on {version} {problem}; measuring once more:\n{cost}");
            cost = measure()?;
        }
        eprint!("xtask: the analyzer's cost on {version}:\n{cost}");
        if let Some(problem) = over_target(&cost) {
            return Err(format!("the analyzer's cost on {version}, measured twice, {problem}:\n{cost}"));
        }
        all.push_str(&format!("On {version}, {cost}"));
        all.push_str(&format!("  {:<44} {:>8}\n", BUILT_LINE, built.took));
        let _ = fs::remove_dir_all(&built.work);
    }
    let committed = corpus.join("cost.txt");
    if write {
        let stamped = format!("Measured {} on {}\n{all}", crate::perf::utc_now(), crate::perf::machine());
        fs::write(&committed, stamped).map_err(|e| format!("writing {}: {e}", committed.display()))?;
        let inputs = corpus.join("cost.inputs");
        fs::write(&inputs, cost_inputs()?).map_err(|e| format!("writing {}: {e}", inputs.display()))?;
        eprintln!("xtask: wrote {} and {}", committed.display(), inputs.display());
    }
    Ok(())
}

/// The row of a cost measurement that times `your-module/golangci-lint.sh`.
const BUILT_LINE: &str = "built by golangci-lint.sh, empty build cache";

/// golangci-lint built with the plugin for a cost measurement: the binary,
/// the folder to remove after, and how long the build took (`1m28s`).
struct Built {
    bin: std::path::PathBuf,
    work: std::path::PathBuf,
    took: String,
}

/// What `your-module/golangci-lint.sh` takes to build golangci-lint with the
/// plugin on `version`, as a team's first CI run pays it: in a module of a
/// reader's own with the analyzer unpacked, every module already in the
/// module cache, and an empty build cache (a build folder of its own,
/// emptied after), so that golangci-lint and all it imports compile.
fn golangci_lint_build(version: &str) -> Result<Built> {
    let work = root().join(format!("target/workqueuedone/golangci-lint-build-{version}"));
    if work.exists() {
        fs::remove_dir_all(&work).map_err(|e| format!("clearing {}: {e}", work.display()))?;
    }
    let analyzer = work.join("module/third_party/workqueuedone");
    fs::create_dir_all(&analyzer).map_err(|e| format!("creating {}: {e}", analyzer.display()))?;
    let mut copy = Command::new("cp");
    copy.arg("-R").arg(root().join("listings/workqueuedone/.")).arg(&analyzer);
    run(copy, "copying the analyzer into a reader's module")?;
    for own in ["corpus", "bin"] {
        let _ = fs::remove_dir_all(analyzer.join(own));
    }
    let module = work.join("module");
    fs::write(module.join("go.mod"), "module example.com/reader\n\ngo 1.26.0\n\nrequire k8s.io/client-go v0.37.2\n")
        .map_err(|e| e.to_string())?;
    fs::copy(root().join("listings/go.sum"), module.join("go.sum")).map_err(|e| format!("copying go.sum: {e}"))?;
    let cache = work.join("empty-build-cache");
    fs::create_dir_all(&cache).map_err(|e| e.to_string())?;
    let mut build = Command::new("bash");
    build
        .current_dir(&module)
        .arg("third_party/workqueuedone/your-module/golangci-lint.sh")
        .env("GOTOOLCHAIN", version)
        .env("GOWORK", "off")
        .env("GOCACHE", &cache)
        .env_remove("GOFLAGS");
    let started = std::time::Instant::now();
    run(build, &format!("golangci-lint.sh on {version}, from an empty build cache (a few minutes)"))?;
    let took = started.elapsed().as_secs();
    // The build cache holds read-only files; go clean empties it.
    let mut clean = Command::new("go");
    clean.env("GOCACHE", &cache).env("GOTOOLCHAIN", version).args(["clean", "-cache"]);
    run(clean, "emptying the measurement's build cache")?;
    Ok(Built { bin: analyzer.join("bin/golangci-lint"), work, took: format!("{}m{:02}s", took / 60, took % 60) })
}

/// The committed measurement (`cost.txt`) is one `cargo xtask analyzer-cost
/// --write` made: stamped, one section for each Go in [`TESTED_GO`], of the
/// same packages, each meeting [`COST_TARGETS`], and of the analyzer as it
/// stands: `cost.inputs`, written beside it, fingerprints every file the
/// measurement depends on ([`COST_INPUTS`]), and a file changed since is
/// named.
fn check_committed_cost(committed: &Path) -> Result {
    let rel = committed.strip_prefix(root()).unwrap_or(committed).display().to_string();
    let again = "measure it again with `cargo xtask analyzer-cost --write` (about thirty minutes, on an idle machine)";
    let text = fs::read_to_string(committed).map_err(|e| format!("{rel}: {e}; {again}"))?;
    if let Some(problem) = cost_problem(&text) {
        return Err(format!("{rel} {problem}; {again}. It says:\n{text}"));
    }
    let inputs = committed.with_file_name("cost.inputs");
    let measured = fs::read_to_string(&inputs).map_err(|e| format!("{}: {e}; {again}", inputs.display()))?;
    match changed_inputs(&measured, &cost_inputs()?) {
        Some(changed) => Err(format!("{rel} measured another analyzer than this one: {changed}; {again}")),
        None => Ok(()),
    }
}

/// What the analyzer's cost depends on, relative to `listings/workqueuedone`:
/// its code and module (not its tests or testdata), the corpus command's
/// measurement and the modules it pins, and what builds and configures
/// golangci-lint with the plugin. The Go releases are in `cost.txt` itself.
const COST_INPUTS: [&str; 12] = [
    "go.mod",
    "go.sum",
    "cmd",
    "passes",
    "plugin",
    "vetsuite",
    "corpus/cost.go",
    "corpus/go.mod",
    "corpus/go.sum",
    "your-module/golangci-lint.sh",
    "your-module/preflight.sh",
    "your-module/.golangci.yml",
];

/// `cost.inputs`: one line per file of [`COST_INPUTS`], sorted, each its
/// 64-bit FNV-1a hash (a stable hash: the standard library's may change
/// between Rust releases) and its path.
fn cost_inputs() -> Result<String> {
    let base = root().join("listings/workqueuedone");
    let mut files = Vec::new();
    for input in COST_INPUTS {
        collect_inputs(&base.join(input), &mut files)?;
    }
    let mut lines: Vec<String> = Vec::new();
    for file in files {
        let bytes = fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let hash =
            bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3));
        lines.push(format!("{hash:016x}  {}", file.strip_prefix(&base).unwrap_or(&file).display()));
    }
    lines.sort_by(|a, b| a[18..].cmp(&b[18..]));
    Ok(lines.iter().map(|l| format!("{l}\n")).collect())
}

/// The files under `path` that are code, not tests: `_test.go` files and
/// `testdata` folders are left out.
fn collect_inputs(path: &Path, files: &mut Vec<std::path::PathBuf>) -> Result {
    if path.is_dir() {
        let entries = fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name != "testdata" && !name.ends_with("_test.go") {
                collect_inputs(&entry.path(), files)?;
            }
        }
        Ok(())
    } else if path.is_file() {
        files.push(path.to_owned());
        Ok(())
    } else {
        Err(format!("{}: a cost input that does not exist (COST_INPUTS in xtask/src/analyzer.rs)", path.display()))
    }
}

/// The files whose hash differs between two `cost.inputs`, or that only one
/// of them has, named; `None` when they are the same.
fn changed_inputs(measured: &str, now: &str) -> Option<String> {
    let parse = |text: &str| -> std::collections::BTreeMap<String, String> {
        text.lines().filter_map(|l| l.split_once("  ")).map(|(h, p)| (p.to_owned(), h.to_owned())).collect()
    };
    let (then, now) = (parse(measured), parse(now));
    let mut changed = Vec::new();
    for (path, hash) in &now {
        match then.get(path) {
            None => changed.push(format!("{path} is new")),
            Some(h) if h != hash => changed.push(format!("{path} changed")),
            Some(_) => {}
        }
    }
    changed.extend(then.keys().filter(|p| !now.contains_key(*p)).map(|p| format!("{p} is gone")));
    (!changed.is_empty()).then(|| changed.join(", "))
}

/// What is wrong with a committed cost measurement, if anything.
fn cost_problem(text: &str) -> Option<String> {
    if !text.starts_with("Measured ") {
        return Some("has no `Measured <date> on <machine>` line first".to_owned());
    }
    let mut sections: Vec<(&str, String)> = Vec::new();
    for line in text.lines().skip(1) {
        if let Some(rest) = line.strip_prefix("On ") {
            let (version, first) = rest.split_once(", ").unwrap_or((rest, ""));
            sections.push((version, format!("{first}\n")));
        } else if let Some((_, body)) = sections.last_mut() {
            body.push_str(line);
            body.push('\n');
        } else {
            return Some(format!("has a line before its first `On goX.Y.Z, ` section: {line:?}"));
        }
    }
    let versions: Vec<&str> = sections.iter().map(|(v, _)| *v).collect();
    if versions != TESTED_GO {
        return Some(format!("measures {versions:?}, not the Go releases the book tests, {TESTED_GO:?}"));
    }
    let packages: Vec<&str> = sections.iter().map(|(_, body)| body.lines().next().unwrap_or_default()).collect();
    if packages.windows(2).any(|w| w[0] != w[1]) || !packages[0].contains(" packages of ") {
        return Some(format!("does not measure the same packages on each Go: {packages:?}"));
    }
    for (version, body) in &sections {
        let has = |name: &str| body.lines().any(|l| l.trim_start().starts_with(name));
        if let Some(missing) = GOLANGCI_ROWS.into_iter().chain([BUILT_LINE]).find(|name| !has(name)) {
            return Some(format!("has no `{missing}` row on {version}: golangci-lint was not measured there"));
        }
    }
    sections.iter().find_map(|(version, body)| over_target(body).map(|p| format!("on {version} {p}")))
}

/// The rows of golangci-lint's cost that every Go's section must have
/// (measured, not gated: golangci-lint's own cost is the reader's choice).
const GOLANGCI_ROWS: [&str; 2] = ["golangci-lint cold ratio", "golangci-lint warm ratio"];

/// The corpus command takes any module list, each module loaded as its own
/// root: sample-controller loaded that way prints the row it has in the
/// book's corpus, and Kubernetes, whose `go.mod` replaces modules with
/// folders its zip does not hold, is an error that names it, never a row of
/// zeros.
fn any_module_list(corpus: &Path, table: &str) -> Result {
    const SAMPLE: &str = "k8s.io/sample-controller";
    let own = output(
        go(corpus).args(["run", ".", "-table", &format!("{SAMPLE}@v0.37.1")]),
        "the corpus command over one module loaded as its own root",
    )?;
    let prefix = format!("{SAMPLE} ");
    let row = |t: &str| -> Option<Vec<String>> {
        t.lines().find(|l| l.starts_with(&prefix)).map(|l| l.split_whitespace().map(str::to_owned).collect())
    };
    if row(&own).is_none() || row(&own) != row(table) {
        return Err(format!(
            "{SAMPLE} loaded as its own root should print its corpus row, {:?}; it printed:\n{own}",
            row(table)
        ));
    }
    eprintln!("xtask: the corpus command over a module that does not load");
    let bad = go(corpus)
        .args(["run", ".", "-table", "k8s.io/kubernetes@v1.37.2"])
        .output()
        .map_err(|e| format!("go run . -table: cannot start: {e}"))?;
    let said = String::from_utf8_lossy(&bad.stderr);
    if bad.status.success() || !said.contains("k8s.io/kubernetes@v1.37.2 does not load") {
        return Err(format!(
            "the corpus command over k8s.io/kubernetes as its own root should fail and name it ({}):\n{said}",
            bad.status
        ));
    }
    Ok(())
}

/// What in a cost measurement misses its target, if anything.
fn over_target(cost: &str) -> Option<String> {
    for (name, target) in COST_TARGETS {
        match cost_ratio(cost, name) {
            None => return Some(format!("has no `{name}` line")),
            Some(r) if r > target => return Some(format!("has a {name} of {r}, over the target of {target}")),
            Some(_) => {}
        }
    }
    None
}

/// The ratio named `name` in a cost measurement.
fn cost_ratio(cost: &str, name: &str) -> Option<f64> {
    cost.lines().find_map(|l| l.trim().strip_prefix(name)).and_then(|r| r.trim().parse().ok())
}

/// Bad input: a package that does not type-check is reported as such, with
/// the compiler's message and a failing status, never as a clean run.
fn broken_package_is_an_error(bin: &Path) -> Result {
    let dir = root().join("target/workqueuedone/broken");
    fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    fs::write(dir.join("go.mod"), "module example.com/broken\n\ngo 1.26\n").map_err(|e| e.to_string())?;
    fs::write(dir.join("broken.go"), "package broken\n\nfunc f() int { return \"x\" }\n").map_err(|e| e.to_string())?;
    eprintln!("xtask: workqueuedone over a package that does not type-check");
    let out = Command::new(bin)
        .current_dir(&dir)
        .env("GOWORK", "off")
        .env("GOFLAGS", "-mod=mod")
        .arg("./...")
        .output()
        .map_err(|e| format!("{}: cannot start: {e}", bin.display()))?;
    let said = String::from_utf8_lossy(&out.stderr);
    if out.status.code() != Some(1) || !said.contains("broken.go:3") || !said.contains("cannot use \"x\"") {
        return Err(format!(
            "workqueuedone over a package with a type error should print the compiler's message and exit 1; it \
             exited {:?}:\n{said}",
            out.status.code()
        ));
    }
    Ok(())
}

/// The diagnostics of a run, one a line, in file, line and column order
/// and without repeats: a package and its test variant are checked apart,
/// and their order is the driver's, not the page's.
fn sorted_diagnostics(stderr: &str) -> Vec<String> {
    let key = |l: &str| {
        let mut parts = l.splitn(4, ':');
        let file = parts.next().unwrap_or_default().to_string();
        let line: u64 = parts.next().and_then(|n| n.parse().ok()).unwrap_or(0);
        let col: u64 = parts.next().and_then(|n| n.parse().ok()).unwrap_or(0);
        (file, line, col, l.to_string())
    };
    let mut lines: Vec<_> = stderr.lines().filter(|l| !l.trim().is_empty()).map(key).collect();
    lines.sort();
    lines.dedup();
    lines.into_iter().map(|(_, _, _, l)| l).collect()
}

/// The widest line the analyzer's outputs print, as the corpus listing's
/// `width`: they are shown in the book's column and on its printed page.
const WIDTH: usize = 76;

/// A diagnostic as go vet prints it, `file:line:col: message`, laid out for
/// the page: the position on a line of its own, the message below it,
/// indented and broken at spaces.
fn page_width(diagnostic: &str) -> String {
    let Some((at, message)) = diagnostic.split_once(": ") else { return format!("{diagnostic}\n") };
    let mut out = format!("{at}:\n");
    let mut line = String::new();
    for word in message.split_whitespace() {
        if !line.is_empty() && 4 + line.len() + 1 + word.len() > WIDTH {
            out.push_str(&format!("    {line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(&format!("    {line}\n"));
    out
}

pub(crate) fn output(cmd: &mut Command, what: &str) -> Result<String> {
    eprintln!("xtask: {what}");
    let out = cmd.output().map_err(|e| format!("{what}: cannot start: {e}"))?;
    if !out.status.success() {
        return Err(format!("{what} failed ({}); its stderr:\n{}", out.status, String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Fails with a diff when `fresh` is not the committed file, or rewrites it
/// under `UPDATE_OUTPUTS=1`.
pub(crate) fn compare(committed: &Path, fresh: &str, what: &str) -> Result {
    let old = fs::read_to_string(committed).unwrap_or_default();
    if old == fresh {
        return Ok(());
    }
    let rel = committed.strip_prefix(root()).unwrap_or(committed).display().to_string();
    if env::var("UPDATE_OUTPUTS").is_ok_and(|v| v == "1") {
        fs::write(committed, fresh).map_err(|e| format!("writing {rel}: {e}"))?;
        eprintln!("xtask: blessed {rel}");
        return Ok(());
    }
    let fresh_dir = root().join("target/workqueuedone");
    fs::create_dir_all(&fresh_dir).map_err(|e| format!("creating {}: {e}", fresh_dir.display()))?;
    let fresh_path = fresh_dir.join(committed.file_name().unwrap_or_default());
    fs::write(&fresh_path, fresh).map_err(|e| e.to_string())?;
    let diff = Command::new("diff").arg("-u").arg(committed).arg(&fresh_path).output();
    let diff = diff.map(|d| String::from_utf8_lossy(&d.stdout).into_owned()).unwrap_or_default();
    Err(format!(
        "{what} no longer prints {rel}:\n{diff}\nIf the change is intended, run `UPDATE_OUTPUTS=1 cargo xtask analyzer` and review `git diff`."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lays_a_diagnostic_out_for_the_page() {
        let d = "a/main.go:58:1: stall: q.Get() on line 48 hands out item, and this path returns without \
                 q.Done(item) at all, whatever happens";
        let laid = page_width(d);
        assert!(laid.starts_with("a/main.go:58:1:\n    stall: q.Get()"), "{laid}");
        assert!(laid.lines().all(|l| l.len() <= WIDTH), "{laid}");
        assert_eq!(
            laid.split_whitespace().collect::<Vec<_>>().join(" "),
            d.replacen(": ", ":\n", 1).split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }

    #[test]
    fn sorts_diagnostics_by_file_line_and_column() {
        let said = "b/x.go:9:1: two\na/y_test.go:127:4: three\na/y_test.go:13:2: one\na/y_test.go:13:2: one\n";
        assert_eq!(
            sorted_diagnostics(said),
            vec!["a/y_test.go:13:2: one", "a/y_test.go:127:4: three", "b/x.go:9:1: two"]
        );
    }

    #[test]
    fn reads_the_ratios_of_a_cost_measurement() {
        let cost = "Measured 2026-12-05 23:00 UTC on x\n56 packages of k8s.io/kubernetes@v1.37.2:\n  \
                    go vet, cold      60.0s   700 MB\n  cold ratio     1.04\n  warm ratio    1.52\n  \
                    analysis ratio    0.28\n";
        assert_eq!(cost_ratio(cost, "cold ratio"), Some(1.04));
        assert_eq!(cost_ratio(cost, "analysis ratio"), Some(0.28));
        assert_eq!(over_target(cost).as_deref(), Some("has a warm ratio of 1.52, over the target of 1.1"));
        assert_eq!(
            over_target(&cost.replace("1.52", "1.24")).as_deref(),
            Some("has a warm ratio of 1.24, over the target of 1.1")
        );
        assert_eq!(over_target(&cost.replace("1.52", "1.09")), None);
        assert_eq!(
            over_target(&cost.replace("1.04", "1.21")).as_deref(),
            Some("has a cold ratio of 1.21, over the target of 1.2")
        );
        assert_eq!(over_target("no ratio here\n").as_deref(), Some("has no `cold ratio` line"));
    }

    #[test]
    fn names_the_inputs_that_changed_since_a_measurement() {
        let then = "0000000000000001  cmd/a.go\n0000000000000002  passes/b.go\n0000000000000003  go.mod\n";
        assert_eq!(changed_inputs(then, then), None);
        let now = "0000000000000001  cmd/a.go\n00000000000000ff  passes/b.go\n0000000000000004  plugin/c.go\n";
        assert_eq!(
            changed_inputs(then, now).as_deref(),
            Some("passes/b.go changed, plugin/c.go is new, go.mod is gone")
        );
    }

    #[test]
    fn checks_a_committed_cost_for_each_tested_go() {
        let body = "56 packages of k8s.io/kubernetes@v1.37.2, every compile cached:\n  cold ratio 1.10\n  warm \
                    ratio 1.03\nThe analysis alone:\n  analysis ratio 4.14\ngolangci-lint:\n  golangci-lint cold \
                    ratio 1.5\n  golangci-lint warm ratio 1.1\n  built by golangci-lint.sh, empty build cache  1m28s\n";
        let good = format!("Measured 2026-12-07 on x\nOn go1.26.8, {body}On go1.27.3, {body}");
        assert_eq!(cost_problem(&good), None);
        assert!(cost_problem(&good.replace("On go1.27.3, ", "On go1.27.2, ")).unwrap().contains("not the Go releases"));
        assert!(cost_problem(&format!("Measured x\nOn go1.26.8, {body}")).unwrap().contains("not the Go releases"));
        assert!(cost_problem(&good.replacen("56 packages", "55 packages", 1)).unwrap().contains("same packages"));
        assert_eq!(
            cost_problem(&good.replacen("warm ratio 1.03", "warm ratio 1.30", 2).replacen(
                "warm ratio 1.30",
                "warm ratio 1.03",
                1
            ))
            .as_deref(),
            Some("on go1.27.3 has a warm ratio of 1.3, over the target of 1.1")
        );
        assert!(cost_problem(&good.replace("Measured", "Measure")).is_some());
        assert_eq!(
            cost_problem(&good.replacen("  golangci-lint warm ratio 1.1\n", "", 1)).as_deref(),
            Some("has no `golangci-lint warm ratio` row on go1.26.8: golangci-lint was not measured there")
        );
        assert!(
            cost_problem(&good.replacen("  built by", "  made by", 1)).unwrap().contains("built by golangci-lint.sh")
        );
    }
}
