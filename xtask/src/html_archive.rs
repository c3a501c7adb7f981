//! The rendered book as one download, for a reader without Rust.
//!
//! `mdbook serve` and `mdbook build` run this xtask as a preprocessor, so
//! rendering the book needs cargo. A reader who only wants to read it gets
//! the rendered HTML instead: `cargo xtask book` writes
//! `book/downloads/forget-is-not-delete-html.tar.gz`, the whole of `book/`
//! (pages, search index, fonts, the listings' downloads, the PDF and EPUB)
//! under one folder, `forget-is-not-delete/`. Unpacked anywhere, its
//! `index.html` opens in a browser from the disk, with nothing to build and
//! no server.
//!
//! The check (`cargo xtask test`, after the book) unpacks the archive into
//! a scratch folder, as a reader would, and follows every relative link and
//! source of every page to a file inside that folder: a link that needs the
//! repository, a server or the network to resolve is named.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{Result, root};

/// The archive's name, under `book/downloads/`.
pub const NAME: &str = "forget-is-not-delete-html.tar.gz";

/// The folder the archive unpacks into.
const FOLDER: &str = "forget-is-not-delete";

fn stage() -> PathBuf {
    root().join("target/html-archive")
}

/// `book/downloads/forget-is-not-delete-html.tar.gz`, from `book/` as
/// `cargo xtask book` left it, less the archive itself and `404.html`
/// (what a web server sends for a missing page: its links start at the
/// site's root, and a reader on the disk never meets it).
pub fn write() -> Result {
    let book = root().join("book");
    let stage = stage();
    if stage.exists() {
        fs::remove_dir_all(&stage).map_err(|e| format!("clearing {}: {e}", stage.display()))?;
    }
    let folder = stage.join(FOLDER);
    copy_tree(&book, &folder, &[book.join("downloads").join(NAME), book.join("404.html")])?;
    let archive = book.join("downloads").join(NAME);
    let partial = stage.join(NAME);
    let status = Command::new("tar")
        .current_dir(&stage)
        .args(["--sort=name", "--format=gnu", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner"])
        .args(["--mode=u=rwX,go=rX", "-czf"])
        .arg(&partial)
        .arg(FOLDER)
        .status()
        .map_err(|e| format!("tar: cannot start: {e}"))?;
    if !status.success() {
        return Err(format!("tar -czf {} {FOLDER} (in {}) failed: {status}", partial.display(), stage.display()));
    }
    fs::rename(&partial, &archive).map_err(|e| format!("moving the archive to {}: {e}", archive.display()))?;
    fs::remove_dir_all(&folder).map_err(|e| format!("removing {}: {e}", folder.display()))?;
    println!("{}", archive.display());
    Ok(())
}

fn copy_tree(from: &Path, to: &Path, skip: &[PathBuf]) -> Result {
    fs::create_dir_all(to).map_err(|e| format!("creating {}: {e}", to.display()))?;
    let mut entries: Vec<PathBuf> = fs::read_dir(from)
        .map_err(|e| format!("reading {}: {e}", from.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for entry in entries {
        if skip.contains(&entry) {
            continue;
        }
        let target = to.join(entry.file_name().unwrap_or_default());
        if entry.is_dir() {
            copy_tree(&entry, &target, skip)?;
        } else {
            fs::copy(&entry, &target).map_err(|e| format!("copying {}: {e}", entry.display()))?;
        }
    }
    Ok(())
}

/// Unpacks the archive as a reader would and follows every page's links
/// (`cargo xtask html-archive-test` reruns it alone).
pub fn check() -> Result {
    let archive = root().join("book/downloads").join(NAME);
    if !archive.is_file() {
        return Err(format!("{} is missing: run `cargo xtask book` first", archive.display()));
    }
    let scratch = stage().join("unpacked");
    if scratch.exists() {
        fs::remove_dir_all(&scratch).map_err(|e| format!("clearing {}: {e}", scratch.display()))?;
    }
    fs::create_dir_all(&scratch).map_err(|e| format!("creating {}: {e}", scratch.display()))?;
    let out = Command::new("tar")
        .current_dir(&scratch)
        .arg("-xzf")
        .arg(&archive)
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("tar: cannot start: {e}"))?;
    if !out.status.success() {
        return Err(format!("unpacking {}: {}", archive.display(), String::from_utf8_lossy(&out.stderr)));
    }
    let top: Vec<String> = fs::read_dir(&scratch)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    if top != [FOLDER] {
        return Err(format!("{NAME} unpacks into {top:?}, not one folder {FOLDER:?}"));
    }
    let site = scratch.join(FOLDER);
    let problems = broken_links(&site)?;
    let pages = html_pages(&site)?.len();
    fs::remove_dir_all(&scratch).map_err(|e| format!("removing {}: {e}", scratch.display()))?;
    if !problems.is_empty() {
        return Err(format!(
            "{NAME}, unpacked, has {} links that do not resolve inside it:\n  {}",
            problems.len(),
            problems.join("\n  ")
        ));
    }
    if pages < 10 {
        return Err(format!("{NAME} holds only {pages} pages"));
    }
    eprintln!("xtask: {NAME}: {pages} pages, every relative link resolves inside the unpacked folder");
    Ok(())
}

fn html_pages(site: &Path) -> Result<Vec<PathBuf>> {
    let mut pages = Vec::new();
    let mut stack = vec![site.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).map_err(|e| e.to_string())?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "html") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    Ok(pages)
}

/// Every `href` and `src` of every page under `site` that is relative and
/// names no file under `site`, as `page: target`.
fn broken_links(site: &Path) -> Result<Vec<String>> {
    if !site.join("index.html").is_file() {
        return Ok(vec!["index.html: missing".to_owned()]);
    }
    let mut problems = BTreeSet::new();
    for page in html_pages(site)? {
        let html = fs::read_to_string(&page).map_err(|e| format!("{}: {e}", page.display()))?;
        let rel = page.strip_prefix(site).unwrap_or(&page).display().to_string();
        for target in link_targets(&html) {
            // The introduction links this archive for whoever reads the
            // book online; a reader of the archive already has it.
            if target.split(['#', '?']).next().is_some_and(|path| path.ends_with(&format!("downloads/{NAME}"))) {
                continue;
            }
            if let Some(problem) = unresolved(site, &page, &target) {
                problems.insert(format!("{rel}: {problem}"));
            }
        }
    }
    Ok(problems.into_iter().collect())
}

/// The values of `href="…"` and `src="…"` in `html`.
fn link_targets(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    for attribute in [" href=\"", " src=\""] {
        let mut rest = html;
        while let Some(at) = rest.find(attribute) {
            let after = &rest[at + attribute.len()..];
            let Some(end) = after.find('"') else { break };
            found.push(after[..end].replace("&amp;", "&"));
            rest = &after[end..];
        }
    }
    found
}

/// Why `target`, linked from `page`, does not resolve to a file under
/// `site`; `None` when it does, or when it is not a file link (another
/// site, `mailto:`, a fragment of the same page).
fn unresolved(site: &Path, page: &Path, target: &str) -> Option<String> {
    let lower = target.to_ascii_lowercase();
    let outside = ["http://", "https://", "mailto:", "data:", "javascript:", "#"];
    if target.is_empty() || outside.iter().any(|p| lower.starts_with(p)) || target.contains("{{") {
        return None;
    }
    if target.starts_with('/') {
        return Some(format!("{target} needs a server (a path from the root of a site)"));
    }
    let path = target.split(['#', '?']).next().unwrap_or_default();
    if path.is_empty() {
        return None;
    }
    let mut resolved = page.parent().unwrap_or(site).to_owned();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                resolved.pop();
            }
            _ => resolved.push(part),
        }
    }
    if !resolved.starts_with(site) {
        return Some(format!("{target} leaves the unpacked folder"));
    }
    let file = if resolved.is_dir() { resolved.join("index.html") } else { resolved };
    (!file.is_file()).then(|| format!("{target} is not in the archive"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_relative_links_and_names_the_broken_ones() {
        let site = std::env::temp_dir().join(format!("html-archive-{}", std::process::id()));
        fs::create_dir_all(site.join("css")).unwrap();
        fs::write(site.join("css/a.css"), "").unwrap();
        fs::write(
            site.join("index.html"),
            "<a href=\"ch1.html#top\">x</a><link href=\"css/a.css\"><a href=\"https://example.com/\">y</a>\
             <a href=\"#here\">z</a><img src=\"missing.svg\"><a href=\"/abs.html\">a</a>\
             <a href=\"../out.html\">o</a>",
        )
        .unwrap();
        fs::write(site.join("ch1.html"), "<a href=\"index.html\">back</a>").unwrap();
        assert_eq!(
            broken_links(&site).unwrap(),
            vec![
                "index.html: ../out.html leaves the unpacked folder",
                "index.html: /abs.html needs a server (a path from the root of a site)",
                "index.html: missing.svg is not in the archive",
            ]
        );
        fs::remove_dir_all(&site).unwrap();
    }
}
