//! `cargo xtask analyzer`: the Go analyzer `listings/workqueuedone`, which
//! reports a work-queue item that is handed out and never `Done`.
//!
//! 1. its `analysistest` tests (`go test ./...`), whose testdata is a module
//!    that requires the real client-go and controller-runtime;
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
//! 4. its cost over the Kubernetes packages, measured on every run: `go vet
//!    -vettool=vet-workqueuedone` against plain `go vet`, at most 1.2 times
//!    its wall time with no analysis cached and 1.1 times run again (see
//!    [`COST_TARGETS`]), and the analysis alone at most 6 times that of go
//!    vet's own analyzers;
//!    `cost.txt` is the blessed run's measurement, with its date and machine.
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
/// The vet tool is built in the analyzer's own module, whose x/tools is the
/// one the installed Go vendors for cmd/vet, so go vet's analyzers run as
/// the same code in both and write the same vet output; a later x/tools
/// (v0.50.0 on) also writes each package's types into that output, which
/// the go command hashes for every dependency on every run, and a tool
/// built with it measured 1.10 to 1.21 cold and 1.08 to 1.15 warm in two
/// clean-clone runs.
/// Built as it is, it measured 1.08 and 1.05 (2026-12-07) when the analyzer
/// walked go/cfg graphs. On SSA (it builds each queue-calling package's SSA
/// form itself, with debug information), the first full measurement was
/// 1.10 cold and 1.03 warm, with the analysis alone 4.14 times go vet's own
/// analyzers (991 ms against 239 ms over the 56 packages): go vet's
/// analyzers share go/cfg graphs and need no SSA. That share is what a
/// vet run pays on top, and is gated at 6 so that a blow-up in the walk
/// (one package once took minutes) fails the step. A miss is measured once
/// more before the step fails (see `test`).
const COST_TARGETS: [(&str, f64); 3] = [("cold ratio", 1.2), ("warm ratio", 1.1), ("analysis ratio", 6.0)];

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
    run(tests, "workqueuedone: analysistest over every shape in testdata/")?;

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

    let mut cost = output(go(&corpus).args(["run", ".", "-cost"]), "the cost")?;
    // Wall times on a shared machine vary by a tenth or more from one
    // measurement to the next, so a miss is measured once more before it
    // fails the step: a real regression misses twice, a busy minute rarely.
    if let Some(problem) = over_target(&cost) {
        eprint!("xtask: the analyzer's cost, measured now, {problem}; measuring once more:\n{cost}");
        cost = output(go(&corpus).args(["run", ".", "-cost"]), "the cost, measured again")?;
    }
    check_cost(&corpus.join("cost.txt"), &cost)?;
    Ok(())
}

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

/// The cost is measured on every run and must meet every one of
/// [`COST_TARGETS`] (a measurement that misses is taken once more first). Its figures vary, so the committed `cost.txt`, which
/// the chapter shows, is the measurement of the run that blessed it,
/// stamped with its date and machine; a later run checks that the
/// committed one met the targets too and measured the same packages, and
/// rewrites it only under `UPDATE_OUTPUTS=1`.
fn check_cost(committed: &Path, fresh: &str) -> Result {
    eprint!("xtask: the analyzer's cost, measured now:\n{fresh}");
    if let Some(problem) = over_target(fresh) {
        return Err(format!("the analyzer's cost, measured now, {problem}:\n{fresh}"));
    }
    let rel = committed.strip_prefix(root()).unwrap_or(committed).display().to_string();
    if env::var("UPDATE_OUTPUTS").is_ok_and(|v| v == "1") {
        let stamped = format!("Measured {} on {}\n{fresh}", crate::perf::utc_now(), crate::perf::machine());
        fs::write(committed, stamped).map_err(|e| format!("writing {rel}: {e}"))?;
        eprintln!("xtask: blessed {rel}");
        return Ok(());
    }
    let old = fs::read_to_string(committed)
        .map_err(|e| format!("{rel}: {e}; measure it with `UPDATE_OUTPUTS=1 cargo xtask analyzer`"))?;
    let mut lines = old.lines();
    let stamp = lines.next().unwrap_or_default();
    let what = lines.next().unwrap_or_default();
    let fresh_what = fresh.lines().next().unwrap_or_default();
    let problem = over_target(&old);
    if !stamp.starts_with("Measured ") || what != fresh_what || problem.is_some() {
        return Err(format!(
            "{rel} is not a measurement of these packages that met the targets ({}; it says:\n{old}\nand this run \
             measured:\n{fresh})\nmeasure it again with `UPDATE_OUTPUTS=1 cargo xtask analyzer`",
            problem.unwrap_or_else(|| "another measurement".to_owned())
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
}
