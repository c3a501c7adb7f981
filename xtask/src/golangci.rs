//! `cargo xtask golangci-lint`: workqueuedone where most Go teams lint, as a
//! golangci-lint module plugin (`listings/workqueuedone/plugin`).
//!
//! 1. golangci-lint itself, at [`VERSION`], is built from the Go module
//!    proxy's source with `go install` (once per machine, kept beside the
//!    control plane's binaries);
//! 2. `golangci-lint custom` builds the plugin into a second binary from the
//!    chapter's `.custom-gcl.yml`, exactly as a reader runs it, except that
//!    its one `git clone` is served from the module proxy by a stand-in `git`
//!    (this machine reaches no git server); the binary is kept, keyed by
//!    the analyzer's sources, so a run with nothing changed builds nothing;
//! 3. that binary, with the chapter's `.golangci.yml`, over the book's twins
//!    must report what the standalone command reports with the same
//!    settings (listing 5-1's twin among them), both as text and in SARIF;
//!    with other settings, what the command reports with those;
//!    `//nolint:workqueuedone` silences the one report it is on; a setting
//!    the plugin does not know is an error naming it; and golangci-lint
//!    without the plugin fails with its own message, which the chapter
//!    quotes from `your-module/without-the-plugin.txt`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use crate::analyzer::compare;
use crate::cache::Inputs;
use crate::control_plane::{data_home, run_with_progress};
use crate::json;
use crate::{Result, root};

/// The golangci-lint the plugin is built into and tested with; the
/// chapter's `.custom-gcl.yml` must name the same.
pub const VERSION: &str = "v2.15.0";
const MODULE: &str = "github.com/golangci/golangci-lint/v2";

/// The files a reader copies into their module, as the chapter shows them.
const YOUR_MODULE: &str = "listings/workqueuedone/your-module";

/// A report: file (relative to the folder linted), line, column, message.
type Report = (String, u64, u64, String);

pub fn test() -> Result {
    let your_module = root().join(YOUR_MODULE);
    let custom_config = read(&your_module.join(".custom-gcl.yml"))?;
    if !custom_config.lines().any(|l| l.trim() == format!("version: {VERSION}")) {
        return Err(format!(
            "{YOUR_MODULE}/.custom-gcl.yml must say `version: {VERSION}`, the golangci-lint the suite builds and tests"
        ));
    }
    let script = read(&your_module.join("golangci-lint.sh"))?;
    if !script.lines().any(|l| l.starts_with(&format!("version={VERSION} "))) {
        return Err(format!(
            "{YOUR_MODULE}/golangci-lint.sh must say `version={VERSION}`, the golangci-lint the suite builds and tests"
        ));
    }
    let stock = stock_golangci_lint()?;
    let custom = custom_golangci_lint(&stock, &custom_config)?;
    let standalone = root().join("target/golangci-lint/workqueuedone");
    let mut build = go(&root().join("listings/workqueuedone"));
    build.args(["build", "-o"]).arg(&standalone).arg("./cmd/workqueuedone");
    crate::run(build, "workqueuedone: building the standalone command, to compare with")?;

    let config_path = your_module.join(".golangci.yml");
    let config = read(&config_path)?;
    let listings = root().join("listings");
    let scratch = root().join("target/golangci-lint");

    // The chapter's settings over the twins.
    let flags = analyzer_flags(&config)?;
    let want = standalone_reports(&standalone, &listings, &flags, &["./..."])?;
    if !want.iter().any(|r| r.0 == "ch05-silent-stall/listing-05-01/twin/main.go" && r.3.starts_with("forget: ")) {
        return Err(format!(
            "the standalone command should report listing 5-1's twin with {flags:?}; it said {want:#?}"
        ));
    }
    let sarif = scratch.join("twins.sarif");
    let got = lint(&custom, &listings, &config_path, Some(&sarif), &["./..."])?;
    same_reports("the chapter's .golangci.yml over the twins (text)", &got.text, &want)?;
    same_reports("the chapter's .golangci.yml over the twins (SARIF)", &sarif_reports(&sarif, &listings)?, &want)?;
    eprintln!(
        "xtask: golangci-lint with the plugin reported the {} reports the command makes, as text and SARIF",
        want.len()
    );

    // Other settings reach the analyzer: the twins' test files, without the
    // panic kind, as `cargo xtask analyzer` checks the command.
    let other = config.replace("panic: true", "panic: false").replace("tests: false", "tests: true");
    let other_flags = analyzer_flags(&other)?;
    if other_flags == flags {
        return Err(format!("{YOUR_MODULE}/.golangci.yml must set `panic: true` and `tests: false` for this check"));
    }
    let other_path = scratch.join("other-settings.golangci.yml");
    write(&other_path, &other)?;
    let want_other = standalone_reports(&standalone, &listings, &other_flags, &["./..."])?;
    if want_other == want {
        return Err(format!("{other_flags:?} and {flags:?} should report differently over the twins"));
    }
    let got = lint(&custom, &listings, &other_path, None, &["./..."])?;
    same_reports(&format!("golangci-lint with settings {other_flags:?}"), &got.text, &want_other)?;

    // //nolint:workqueuedone with a reason: golangci-lint leaves out that
    // one report; the command, which does not read //nolint, makes both.
    let testdata = root().join("listings/workqueuedone/passes/workqueuedone/testdata");
    let both = standalone_reports(&standalone, &testdata, &flags, &["./nolint"])?;
    let got = lint(&custom, &testdata, &config_path, None, &["./nolint"])?;
    let silenced: Vec<&Report> = both.difference(&got.text).collect();
    if both.len() != 2 || got.text.len() != 1 || !got.text.is_subset(&both) || silenced.len() != 1 {
        return Err(format!(
            "over testdata/nolint the command should make two reports and golangci-lint one, the other under \
             //nolint:workqueuedone; the command said {both:#?}\nand golangci-lint {:#?}",
            got.text
        ));
    }
    let line = read(&testdata.join(&silenced[0].0))?.lines().nth(silenced[0].1 as usize - 1).unwrap_or("").to_owned();
    if !line.contains("//nolint:workqueuedone // ") {
        return Err(format!("the report golangci-lint left out is not the one under //nolint: {line}"));
    }

    // Bad input: a misspelt setting is named.
    let misspelt = scratch.join("misspelt.golangci.yml");
    write(&misspelt, &config.replace("panic: true", "pnic: true"))?;
    let out = golangci(&custom, &testdata, &misspelt, None, &["./nolint"])?;
    let said = String::from_utf8_lossy(&out.stderr);
    if out.status.success() || !said.contains(r#"unknown field "pnic""#) {
        return Err(format!("a .golangci.yml with `pnic: true` should fail and name it ({}):\n{said}", out.status));
    }

    // golangci-lint without the plugin, given the chapter's .golangci.yml.
    let out = golangci(&stock, &testdata, &config_path, None, &["./nolint"])?;
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        return Err(format!("golangci-lint without the plugin should refuse the chapter's .golangci.yml:\n{said}"));
    }
    compare(
        &your_module.join("without-the-plugin.txt"),
        &fold(&said.replace(&format!("{}/", testdata.display()), "")),
        "golangci-lint without the plugin",
    )
    .map_err(|e| e.replace("cargo xtask analyzer", "cargo xtask golangci-lint"))
}

/// golangci-lint at [`VERSION`], built from the module proxy's source.
fn stock_golangci_lint() -> Result<PathBuf> {
    let dir = data_home()?.join(format!("forget-is-not-delete/golangci-lint-{VERSION}"));
    let bin = dir.join("golangci-lint");
    if bin.is_file() {
        return Ok(bin);
    }
    // Installed into a folder of its own, then moved: an interrupted build
    // never leaves a binary a later run would take for a good one.
    let partial = dir.join(".partial");
    fs::create_dir_all(&partial).map_err(|e| format!("creating {}: {e}", partial.display()))?;
    let mut install = go(&partial);
    install.env("GOBIN", &partial).args(["install", "-v"]).arg(format!("{MODULE}/cmd/golangci-lint@{VERSION}"));
    run_with_progress(
        install,
        &format!("building golangci-lint {VERSION} from the Go module proxy (once per machine; a few minutes cold)"),
        "golangci-lint",
    )?;
    fs::rename(partial.join("golangci-lint"), &bin).map_err(|e| format!("moving golangci-lint into place: {e}"))?;
    Ok(bin)
}

/// The binary `golangci-lint custom` builds from the chapter's
/// `.custom-gcl.yml`, with the analyzer unpacked where that file says, as
/// a reader's module holds it.
fn custom_golangci_lint(stock: &Path, custom_config: &str) -> Result<PathBuf> {
    let key = Inputs::new().paths(&["listings/workqueuedone"]).value(VERSION).command("go", &["version"]).fingerprint();
    let cache = data_home()?.join(format!("forget-is-not-delete/golangci-lint-{VERSION}-workqueuedone"));
    let bin = cache.join(format!("{key:016x}/custom-gcl"));
    if bin.is_file() {
        eprintln!("xtask: golangci-lint with the plugin, unchanged since it was built: {}", bin.display());
        return Ok(bin);
    }
    let work = root().join("target/golangci-lint/custom");
    if work.exists() {
        fs::remove_dir_all(&work).map_err(|e| format!("clearing {}: {e}", work.display()))?;
    }
    let analyzer = work.join("third_party/workqueuedone");
    fs::create_dir_all(&analyzer).map_err(|e| format!("creating {}: {e}", analyzer.display()))?;
    let mut copy = Command::new("cp");
    copy.arg("-R").arg(root().join("listings/workqueuedone/.")).arg(&analyzer);
    crate::run(copy, "copying the analyzer to where .custom-gcl.yml says a reader unpacks it")?;
    write(&work.join(".custom-gcl.yml"), custom_config)?;
    let shim = work.join("git-from-the-module-proxy");
    fs::create_dir_all(&shim).map_err(|e| e.to_string())?;
    write(&shim.join("git"), GIT_STAND_IN)?;
    let mut chmod = Command::new("chmod");
    chmod.arg("755").arg(shim.join("git"));
    crate::run(chmod, "making the stand-in git executable")?;

    let mut paths = vec![shim.clone()];
    paths.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    let mut custom = Command::new(stock);
    custom
        .current_dir(&work)
        .args(["custom", "-v"])
        .env("GOTOOLCHAIN", "local")
        .env("GOWORK", "off")
        .env_remove("GOFLAGS")
        .env("PATH", std::env::join_paths(paths).map_err(|e| format!("PATH: {e}"))?);
    eprintln!(
        "xtask: golangci-lint custom, from {YOUR_MODULE}/.custom-gcl.yml (a few minutes when the analyzer changed)"
    );
    let started = Instant::now();
    let out = custom.output().map_err(|e| format!("golangci-lint custom: cannot start: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "golangci-lint custom failed ({}) in {}:\n{}{}\nrerun: cd {} && PATH={}:$PATH {} custom -v",
            out.status,
            work.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            work.display(),
            shim.display(),
            stock.display()
        ));
    }
    eprintln!("xtask: golangci-lint custom built ./custom-gcl in {}s", started.elapsed().as_secs());
    // One binary is kept: the one for the analyzer as it is now.
    if cache.is_dir() {
        fs::remove_dir_all(&cache).map_err(|e| format!("clearing {}: {e}", cache.display()))?;
    }
    let dir = bin.parent().expect("the binary is in a folder");
    fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    fs::copy(work.join("custom-gcl"), &bin).map_err(|e| format!("keeping custom-gcl in {}: {e}", bin.display()))?;
    Ok(bin)
}

/// `git`, as `golangci-lint custom` calls it (`git clone --branch VERSION
/// ... https://github.com/golangci/golangci-lint.git` in an empty folder),
/// served from the Go module proxy, which holds the same tree. Anything
/// else is refused.
const GIT_STAND_IN: &str = r#"#!/bin/sh
# A stand-in for git, put first on PATH by cargo xtask golangci-lint: the
# only git command golangci-lint custom runs is a clone of golangci-lint at
# a tag, and the Go module proxy serves that tag's tree.
set -eu
version=
url=
while [ $# -gt 0 ]; do
  case "$1" in
    --branch) version=$2; shift 2 ;;
    https://*) url=$1; shift ;;
    *) shift ;;
  esac
done
if [ "$url" != "https://github.com/golangci/golangci-lint.git" ] || [ -z "$version" ]; then
  echo "git stand-in: only golangci-lint custom's clone of golangci-lint is served here (asked for: $url $version)" >&2
  exit 2
fi
dir=$(go mod download -json "github.com/golangci/golangci-lint/v2@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ]; then
  echo "git stand-in: the Go module proxy has no github.com/golangci/golangci-lint/v2@$version" >&2
  exit 2
fi
cp -R "$dir" golangci-lint
chmod -R u+w golangci-lint
"#;

/// What golangci-lint printed and wrote.
struct Linted {
    text: BTreeSet<Report>,
}

/// Runs golangci-lint and reads its text reports; it must exit 0 (nothing
/// reported) or 1 (reports), nothing else.
fn lint(bin: &Path, dir: &Path, config: &Path, sarif: Option<&Path>, patterns: &[&str]) -> Result<Linted> {
    let out = golangci(bin, dir, config, sarif, patterns)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !matches!(out.status.code(), Some(0 | 1)) {
        return Err(format!(
            "{} run in {} failed ({}):\n{stdout}{}",
            bin.display(),
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let mut text = BTreeSet::new();
    for line in stdout.lines() {
        // golangci-lint names the linter after each report.
        if let Some(report) = line.strip_suffix(" (workqueuedone)").and_then(|l| parse_report(l, dir)) {
            text.insert(report);
        }
    }
    Ok(Linted { text })
}

fn golangci(bin: &Path, dir: &Path, config: &Path, sarif: Option<&Path>, patterns: &[&str]) -> Result<Output> {
    let mut cmd = Command::new(bin);
    cmd.current_dir(dir)
        .env("GOTOOLCHAIN", "local")
        .env("GOWORK", "off")
        .env_remove("GOFLAGS")
        .arg("run")
        .arg("--config")
        .arg(config)
        .args(["--path-mode=abs", "--output.text.path=stdout", "--output.text.print-issued-lines=false"])
        .arg("--output.text.colors=false");
    if let Some(sarif) = sarif {
        cmd.arg(format!("--output.sarif.path={}", sarif.display()));
    }
    cmd.args(patterns);
    eprintln!(
        "xtask: {} run --config {} {} (in {})",
        bin.display(),
        config.display(),
        patterns.join(" "),
        dir.display()
    );
    cmd.output().map_err(|e| format!("{}: cannot start: {e}", bin.display()))
}

/// The analyzer's flags that a `.golangci.yml` sets, from its
/// `panic:`, `tests:` and `strict:` lines; the chapter's file sets all three.
fn analyzer_flags(config: &str) -> Result<Vec<String>> {
    ["panic", "tests", "strict"]
        .iter()
        .map(|name| {
            let value = config.lines().find_map(|l| {
                let rest = l.trim().strip_prefix(name)?.strip_prefix(':')?;
                rest.split('#').next().map(str::trim)
            });
            match value {
                Some(v @ ("true" | "false")) => Ok(format!("-{name}={v}")),
                _ => Err(format!(
                    "the .golangci.yml should set `{name}: true` or `{name}: false` under the plugin's settings"
                )),
            }
        })
        .collect()
}

/// What the standalone command reports in `dir` with `flags`.
fn standalone_reports(bin: &Path, dir: &Path, flags: &[String], patterns: &[&str]) -> Result<BTreeSet<Report>> {
    let out = Command::new(bin)
        .current_dir(dir)
        .env("GOWORK", "off")
        .args(flags)
        .args(patterns)
        .output()
        .map_err(|e| format!("{}: cannot start: {e}", bin.display()))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !matches!(out.status.code(), Some(0 | 3)) {
        return Err(format!("workqueuedone {flags:?} in {} failed ({}):\n{stderr}", dir.display(), out.status));
    }
    Ok(stderr.lines().filter_map(|l| parse_report(l, dir)).collect())
}

/// `FILE:LINE:COL: MESSAGE` with FILE made relative to `dir`.
fn parse_report(line: &str, dir: &Path) -> Option<Report> {
    let mut parts = line.splitn(4, ':');
    let file = parts.next()?;
    let line_no = parts.next()?.parse().ok()?;
    let col = parts.next()?.parse().ok()?;
    let message = parts.next()?.trim().to_owned();
    let file = Path::new(file).strip_prefix(dir).map(|p| p.display().to_string()).unwrap_or_else(|_| file.to_owned());
    Some((file, line_no, col, message))
}

/// The results of a SARIF file golangci-lint wrote.
fn sarif_reports(path: &Path, dir: &Path) -> Result<BTreeSet<Report>> {
    let doc = json::parse(&read(path)?).map_err(|e| format!("{}: {e}", path.display()))?;
    let bad = |what: &str| format!("{}: a SARIF result without {what}", path.display());
    let mut reports = BTreeSet::new();
    for run in doc.get("runs").and_then(json::Value::as_array).ok_or_else(|| bad("runs"))? {
        for result in run.get("results").and_then(json::Value::as_array).unwrap_or_default() {
            if result.get("ruleId").and_then(json::Value::as_str) != Some("workqueuedone") {
                return Err(format!("{}: a result of another linter: {result:?}", path.display()));
            }
            let location = result
                .get("locations")
                .and_then(json::Value::as_array)
                .and_then(|l| l.first())
                .and_then(|l| l.get("physicalLocation"))
                .ok_or_else(|| bad("a location"))?;
            let uri =
                location.at(&["artifactLocation", "uri"]).and_then(json::Value::as_str).ok_or_else(|| bad("a uri"))?;
            let line =
                location.at(&["region", "startLine"]).and_then(json::Value::as_f64).ok_or_else(|| bad("a line"))?;
            let col =
                location.at(&["region", "startColumn"]).and_then(json::Value::as_f64).ok_or_else(|| bad("a column"))?;
            let text = result.at(&["message", "text"]).and_then(json::Value::as_str).ok_or_else(|| bad("a message"))?;
            let file = uri.strip_prefix("file://").unwrap_or(uri);
            let file =
                Path::new(file).strip_prefix(dir).map(|p| p.display().to_string()).unwrap_or_else(|_| file.to_owned());
            reports.insert((file, line as u64, col as u64, text.to_owned()));
        }
    }
    Ok(reports)
}

fn same_reports(what: &str, got: &BTreeSet<Report>, want: &BTreeSet<Report>) -> Result {
    if got == want {
        return Ok(());
    }
    let missing: Vec<_> = want.difference(got).collect();
    let extra: Vec<_> = got.difference(want).collect();
    Err(format!(
        "{what}: golangci-lint's reports differ from the standalone command's with the same settings\n\
         missing: {missing:#?}\nnot made by the command: {extra:#?}"
    ))
}

/// Text folded for the page: each line broken at spaces to at most 64
/// columns, its continuation indented by two.
fn fold(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut current = String::new();
        for word in line.split(' ') {
            if !current.trim().is_empty() && current.len() + 1 + word.len() > 64 {
                out.push_str(current.trim_end());
                out.push('\n');
                current = "  ".to_owned();
            } else if !current.trim().is_empty() {
                current.push(' ');
            }
            current.push_str(word);
        }
        out.push_str(current.trim_end());
        out.push('\n');
    }
    out
}

fn go(dir: &Path) -> Command {
    let mut cmd = Command::new("go");
    cmd.current_dir(dir).env("GOTOOLCHAIN", "local").env("GOWORK", "off").env_remove("GOFLAGS");
    cmd
}

fn read(path: &Path) -> Result<String> {
    fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn write(path: &Path, text: &str) -> Result {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_analyzer_flags_a_config_sets() {
        let config = "settings:\n  panic: true   # x\n  tests: false\n  strict: false # y\n";
        assert_eq!(analyzer_flags(config).unwrap(), ["-panic=true", "-tests=false", "-strict=false"]);
        assert!(analyzer_flags("settings:\n  panic: true\n").unwrap_err().contains("`tests: true`"));
    }

    #[test]
    fn reads_a_report_relative_to_the_folder_linted() {
        let r = parse_report("/l/ch05/main.go:58:1: forget: q.Forget(item) on line 49", Path::new("/l")).unwrap();
        assert_eq!(r, ("ch05/main.go".to_owned(), 58, 1, "forget: q.Forget(item) on line 49".to_owned()));
        assert_eq!(parse_report("level=warning msg=x", Path::new("/l")), None);
    }
}
