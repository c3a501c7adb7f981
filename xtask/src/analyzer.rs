//! `cargo xtask analyzer`: the Go analyzer `listings/workqueuedone`, which
//! reports a work-queue item that is handed out and never `Done`.
//!
//! 1. its `analysistest` tests (`go test ./...`), whose testdata is a module
//!    that requires the real client-go and controller-runtime;
//! 2. the book's own Go code: run over `listings/` (no test files, no
//!    `panic:` kind), it must report exactly the twins that stall on purpose,
//!    as committed in `listings/workqueuedone/twins.txt`;
//! 3. the corpus (`listings/workqueuedone/corpus`): Kubernetes, client-go's
//!    examples, sample-controller, apiserver, apiextensions-apiserver,
//!    kube-aggregator and controller-runtime at pinned versions; its table of
//!    reports (`corpus.txt`) and its mutation score (`mutants.txt`) must
//!    print the committed bytes, and every `stall` mutant must be caught;
//! 4. its cost: the analyzer over the Kubernetes packages beside go vet's
//!    own analyzers, at most 1.5 times their time (measured, not committed).
//!
//! With `UPDATE_OUTPUTS=1` a stale output is rewritten instead (`cargo xtask
//! bless`), to be reviewed with `git diff`.

use std::env;
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::{Result, root, run};

/// The most the analyzer may cost, as a multiple of go vet's analyzers.
const COST_TARGET: f64 = 1.5;

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

    // As a vet tool: go vet runs it and fails when it reports.
    let listings = root().join("listings");
    let vet = go(&listings)
        .env_remove("GOFLAGS")
        .args(["vet", "-vettool"])
        .arg(&bin)
        .arg("./ch05-silent-stall/listing-05-01/twin")
        .output()
        .map_err(|e| format!("go vet -vettool: cannot start: {e}"))?;
    let vet_err = String::from_utf8_lossy(&vet.stderr);
    if vet.status.success() || !vet_err.contains("forget: q.Forget(item)") {
        return Err(format!(
            "go vet -vettool=workqueuedone should fail on listing 5-1's twin with a forget: report; it said ({}):\n{vet_err}",
            vet.status
        ));
    }

    // The twins: the analyzer exits 3 when it reports, as vet does.
    eprintln!("xtask: workqueuedone over listings/ (the Go twins and the harness)");
    let out = Command::new(&bin)
        .current_dir(&listings)
        .env("GOWORK", "off")
        .args(["-test=false", "-panic=false", "./..."])
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
    let twins: String = stderr.lines().map(|l| format!("{}\n", l.replace(&prefix, ""))).collect();
    compare(&module.join("twins.txt"), &twins, "workqueuedone over listings/")?;

    let corpus = module.join("corpus");
    let mut download = go(&corpus);
    download.args(["mod", "download"]);
    run(download, "go mod download for the corpus (Kubernetes and the rest, at pinned versions)")?;
    let table = output(go(&corpus).args(["run", ".", "-table"]), "the corpus table")?;
    compare(&corpus.join("corpus.txt"), &table, "the corpus table (go run . -table)")?;
    let mutants = output(go(&corpus).args(["run", ".", "-mutants"]), "the mutation score")?;
    compare(&corpus.join("mutants.txt"), &mutants, "the mutation score (go run . -mutants)")?;
    for line in mutants.lines().filter(|l| l.contains("(stall)")) {
        let numbers: Vec<u64> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
        if numbers.len() != 2 || numbers[0] != numbers[1] {
            return Err(format!("a stall mutant was missed: {line}\n{mutants}"));
        }
    }

    let cost = output(go(&corpus).args(["run", ".", "-cost"]), "the cost")?;
    eprint!("xtask: {cost}");
    let ratio: f64 = cost
        .rsplit_once("ratio ")
        .and_then(|(_, r)| r.trim().parse().ok())
        .ok_or_else(|| format!("the cost line has no ratio: {cost}"))?;
    if ratio > COST_TARGET {
        return Err(format!("workqueuedone costs {ratio} times go vet's analyzers, over the target of {COST_TARGET}"));
    }
    Ok(())
}

fn output(cmd: &mut Command, what: &str) -> Result<String> {
    eprintln!("xtask: {what}");
    let out = cmd.output().map_err(|e| format!("{what}: cannot start: {e}"))?;
    if !out.status.success() {
        return Err(format!("{what} failed ({}); its stderr:\n{}", out.status, String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Fails with a diff when `fresh` is not the committed file, or rewrites it
/// under `UPDATE_OUTPUTS=1`.
fn compare(committed: &Path, fresh: &str, what: &str) -> Result {
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
    let fresh_path = root().join("target/workqueuedone").join(committed.file_name().unwrap_or_default());
    fs::write(&fresh_path, fresh).map_err(|e| e.to_string())?;
    let diff = Command::new("diff").arg("-u").arg(committed).arg(&fresh_path).output();
    let diff = diff.map(|d| String::from_utf8_lossy(&d.stdout).into_owned()).unwrap_or_default();
    Err(format!(
        "{what} no longer prints {rel}:\n{diff}\nIf the change is intended, run `UPDATE_OUTPUTS=1 cargo xtask analyzer` and review `git diff`."
    ))
}
