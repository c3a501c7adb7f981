//! Every link from the book to upstream source is pinned to the tag the book
//! was checked against, with a line anchor, and the linked line holds the
//! symbol the link names (the first `code span` of the link text). The files
//! are read from the Go module cache, at exactly those versions.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

/// GitHub repository → (Go module, its version, the ref the book's links
/// use). x/tools is linked at two: the commit Go 1.26's `go vet` vendors,
/// which the analyzer builds on (a pseudo-version, linked by its commit), and
/// the release chapter 10's corpus needs, whose vet file format the chapter
/// links.
const PINNED: [(&str, &str, &str, &str); 8] = [
    ("kubernetes/client-go", "k8s.io/client-go", "v0.37.2", "v0.37.2"),
    ("kubernetes/apiserver", "k8s.io/apiserver", "v0.37.2", "v0.37.2"),
    ("kubernetes/apimachinery", "k8s.io/apimachinery", "v0.37.2", "v0.37.2"),
    ("kubernetes/kubernetes", "k8s.io/kubernetes", "v1.37.2", "v1.37.2"),
    ("kubernetes-sigs/controller-runtime", "sigs.k8s.io/controller-runtime", "v0.25.3", "v0.25.3"),
    ("golang/time", "golang.org/x/time", "v0.15.0", "v0.15.0"),
    ("golang/tools", "golang.org/x/tools", "v0.39.1-0.20260527181557-0f52e3809b35", "0f52e3809b35"),
    ("golang/tools", "golang.org/x/tools", "v0.52.0", "v0.52.0"),
];

/// The introduction promises that every link to upstream source is pinned
/// to a version it lists: each pinned module and version is in
/// `src/generated/versions.md`, which tests/versions.rs computes.
#[test]
fn every_linked_module_is_in_the_versions_list() {
    let list = fs::read_to_string(common::root().join("src/generated/versions.md")).unwrap();
    let missing: Vec<String> = PINNED
        .iter()
        .filter(|(_, module, version, _)| !list.contains(module) || !list.contains(version))
        .map(|(_, module, version, _)| format!("{module} {version}"))
        .collect();
    assert!(
        missing.is_empty(),
        "the book links the source of {missing:?}, which src/generated/versions.md does not list"
    );
}

struct Link {
    chapter: String,
    text: String,
    url: String,
}

fn links() -> Vec<Link> {
    let mut found = Vec::new();
    for path in common::sorted_entries(&common::root().join("src")) {
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let chapter = path.file_name().unwrap().to_string_lossy().to_string();
        let text = fs::read_to_string(&path).unwrap();
        let mut rest = text.as_str();
        while let Some(start) = rest.find("](https://github.com/") {
            let before = &rest[..start];
            let open = before.rfind('[').expect("a markdown link has a [text] part");
            let after = &rest[start + 2..];
            let end = after.find(')').expect("a markdown link is closed");
            found.push(Link {
                chapter: chapter.clone(),
                text: before[open + 1..].to_owned(),
                url: after[..end].to_owned(),
            });
            rest = &after[end..];
        }
    }
    found
}

fn module_dir(go: &std::path::Path, module: &str, tag: &str) -> PathBuf {
    let mut cmd = common::go_command(go);
    cmd.args(["mod", "download", "-json", &format!("{module}@{tag}")]);
    let json = common::stdout_of(cmd, &format!("go mod download {module}@{tag}"));
    let value: serde_json::Value = serde_json::from_str(&json).expect("go mod download -json prints JSON");
    PathBuf::from(value["Dir"].as_str().expect("the module has a Dir"))
}

/// The few upstream lines a chapter quotes rather than links (chapter 1's
/// `processNextWorkItem`) are never typed: each file under
/// `src/generated/upstream/` names its module, version, file and lines on
/// its first line, and holds exactly those lines of the pinned source after
/// its two-line header. `cargo xtask bless` copies them again.
#[test]
fn every_upstream_excerpt_is_the_pinned_lines() {
    let dir = common::root().join("src/generated/upstream");
    let Some(go) = common::go_or_skip("every_upstream_excerpt_is_the_pinned_lines") else { return };
    let mut problems = Vec::new();
    let excerpts = common::sorted_entries(&dir);
    assert!(!excerpts.is_empty(), "no excerpt in {}", dir.display());
    for path in excerpts {
        let text = fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        let (first, second) = (lines.next().unwrap_or_default(), lines.next().unwrap_or_default());
        let words: Vec<&str> = first.trim_start_matches("// ").split_whitespace().collect();
        let [module, version, location] = words[..] else {
            problems.push(format!("{}: the first line is not `// MODULE VERSION PATH#La-Lb`", path.display()));
            continue;
        };
        let Some(pinned) = PINNED.iter().find(|(_, m, v, _)| *m == module && *v == version) else {
            problems.push(format!("{}: {module} {version} is not a pinned version", path.display()));
            continue;
        };
        let parsed = location.split_once("#L").and_then(|(file, range)| {
            let (a, b) = range.split_once("-L")?;
            Some((file, a.parse::<usize>().ok()?, b.parse::<usize>().ok()?))
        });
        let Some((file, a, b)) = parsed.filter(|(_, a, b)| *a >= 1 && a <= b) else {
            problems.push(format!("{}: {location} is not FILE#La-Lb", path.display()));
            continue;
        };
        let source = fs::read_to_string(module_dir(&go, pinned.1, pinned.2).join(file)).unwrap();
        let quoted: Vec<&str> = source.lines().skip(a - 1).take(b + 1 - a).collect();
        let fresh = format!("{first}\n{second}\n{}\n", quoted.join("\n"));
        if let Some(failure) = common::check_fresh("an upstream excerpt", &path, &fresh) {
            problems.push(failure);
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn every_upstream_link_is_pinned_and_names_its_line() {
    let links = links();
    assert!(links.len() >= 10, "the book links upstream only {} times", links.len());
    let Some(go) = common::go_or_skip("every_upstream_link_is_pinned_and_names_its_line") else { return };
    let mut dirs = BTreeMap::new();
    let mut problems = Vec::new();
    for link in &links {
        let pins: Vec<_> =
            PINNED.iter().filter(|(repo, ..)| link.url.starts_with(&format!("https://github.com/{repo}/"))).collect();
        let Some((repo, ..)) = pins.first() else {
            continue; // a link to another project (an issue, a discussion): not source
        };
        let rest = &link.url[format!("https://github.com/{repo}/").len()..];
        let pinned = pins
            .iter()
            .find_map(|(_, module, tag, r)| rest.strip_prefix(&format!("blob/{r}/")).map(|path| (module, tag, path)));
        let Some((module, tag, path_and_anchor)) = pinned else {
            if rest.starts_with("blob/") || rest.starts_with("tree/") {
                let refs: Vec<&str> = pins.iter().map(|(.., r)| *r).collect();
                problems.push(format!("{}: {} is not pinned to {}", link.chapter, link.url, refs.join(" or ")));
            }
            continue;
        };
        let Some((path, anchor)) = path_and_anchor.split_once("#L") else {
            problems.push(format!("{}: {} has no #Lnn line anchor", link.chapter, link.url));
            continue;
        };
        let (first, last) = match anchor.split_once("-L") {
            Some((a, b)) => (a.parse::<usize>(), b.parse::<usize>()),
            None => (anchor.parse::<usize>(), anchor.parse::<usize>()),
        };
        let (Ok(first), Ok(last)) = (first, last) else {
            problems.push(format!("{}: {} has a malformed line anchor", link.chapter, link.url));
            continue;
        };
        let Some(symbol) = link.text.split('`').nth(1) else {
            problems.push(format!("{}: the link text {:?} names no `symbol`", link.chapter, link.text));
            continue;
        };
        let dir = dirs.entry((*module, *tag)).or_insert_with(|| module_dir(&go, module, tag));
        let Ok(source) = fs::read_to_string(dir.join(path)) else {
            problems.push(format!("{}: {path} does not exist in {module}@{tag}", link.chapter));
            continue;
        };
        let lines: Vec<&str> = source.lines().collect();
        let span = lines.get(first.saturating_sub(1)..last.min(lines.len())).unwrap_or(&[]);
        if !span.iter().any(|l| l.contains(symbol)) {
            problems.push(format!(
                "{}: {} should show `{symbol}`, but line {first} of {path} is {:?}",
                link.chapter,
                link.url,
                lines.get(first.saturating_sub(1)).unwrap_or(&"<past the end>")
            ));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// Links into kube-rs are pinned to its `5.0.0` tag; the files are the ones
/// cargo unpacked for the book's own kube dependency (a crate's sources are
/// the repository's files at that tag, so line numbers agree).
#[test]
fn every_kube_rs_link_is_pinned_and_names_its_line() {
    const TAG: &str = "5.0.0";
    let registry = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cargo"))
        .join("registry/src");
    let mut problems = Vec::new();
    let mut checked = 0;
    for link in links() {
        let Some(rest) = link.url.strip_prefix("https://github.com/kube-rs/kube/") else { continue };
        let Some(path_and_anchor) = rest.strip_prefix(&format!("blob/{TAG}/")) else {
            problems.push(format!("{}: {} is not pinned to {TAG}", link.chapter, link.url));
            continue;
        };
        let (Some((path, line)), Some(symbol)) = (path_and_anchor.split_once("#L"), link.text.split('`').nth(1)) else {
            problems.push(format!("{}: {} needs a #Lnn anchor and a `symbol` in its text", link.chapter, link.url));
            continue;
        };
        let (krate, file) = path.split_once('/').expect("a path inside a crate folder");
        let line: usize = line.split('-').next().unwrap().parse().expect("a line number");
        let source = fs::read_dir(&registry)
            .into_iter()
            .flatten()
            .filter_map(|index| fs::read_to_string(index.ok()?.path().join(format!("{krate}-{TAG}")).join(file)).ok())
            .next();
        let Some(source) = source else {
            problems.push(format!("{}: {krate}-{TAG}/{file} is not in {}", link.chapter, registry.display()));
            continue;
        };
        let text = source.lines().nth(line - 1).unwrap_or("<past the end>");
        if !text.contains(symbol) {
            problems.push(format!("{}: {} should show `{symbol}`, but the line is {text:?}", link.chapter, link.url));
        }
        checked += 1;
    }
    assert!(checked > 0 || problems.is_empty(), "no kube-rs link was checked");
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}
