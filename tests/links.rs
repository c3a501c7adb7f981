//! Every link from the book to upstream source is pinned to the tag the book
//! was checked against, with a line anchor, and the linked line holds the
//! symbol the link names (the first `code span` of the link text). The files
//! are read from the Go module cache, at exactly those versions.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

/// GitHub repository → (Go module, pinned tag).
const PINNED: [(&str, &str, &str); 7] = [
    ("kubernetes/client-go", "k8s.io/client-go", "v0.37.2"),
    ("kubernetes/apiserver", "k8s.io/apiserver", "v0.37.2"),
    ("kubernetes/apimachinery", "k8s.io/apimachinery", "v0.37.2"),
    ("kubernetes/kubernetes", "k8s.io/kubernetes", "v1.37.2"),
    ("kubernetes-sigs/controller-runtime", "sigs.k8s.io/controller-runtime", "v0.25.3"),
    ("golang/time", "golang.org/x/time", "v0.15.0"),
    ("golang/tools", "golang.org/x/tools", "v0.52.0"),
];

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

#[test]
fn every_upstream_link_is_pinned_and_names_its_line() {
    let links = links();
    assert!(links.len() >= 10, "the book links upstream only {} times", links.len());
    let Some(go) = common::go_or_skip("every_upstream_link_is_pinned_and_names_its_line") else { return };
    let mut dirs = BTreeMap::new();
    let mut problems = Vec::new();
    for link in &links {
        let Some((repo, module, tag)) =
            PINNED.iter().find(|(repo, ..)| link.url.starts_with(&format!("https://github.com/{repo}/")))
        else {
            continue; // a link to another project (an issue, a discussion): not source
        };
        let rest = &link.url[format!("https://github.com/{repo}/").len()..];
        let Some(path_and_anchor) = rest.strip_prefix(&format!("blob/{tag}/")) else {
            if rest.starts_with("blob/") || rest.starts_with("tree/") {
                problems.push(format!("{}: {} is not pinned to {tag}", link.chapter, link.url));
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
        let dir = dirs.entry(*module).or_insert_with(|| module_dir(&go, module, tag));
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
