//! The book offline: `book/forget-is-not-delete.pdf` and
//! `book/forget-is-not-delete.epub`, written by `cargo xtask book`, and their
//! checks, a step of `cargo xtask test` (`cargo xtask offline-test` alone).
//!
//! * The PDF is `book/print.html` printed by headless Chromium, with a
//!   contents page (the chapters of `src/SUMMARY.md` under their parts, with
//!   the page each starts on) and every folded `<details>` opened, since
//!   paper cannot unfold them. Chromium writes the PDF outline (bookmarks)
//!   from the headings. The print rules are `theme/pdf.css`: code wraps
//!   instead of running off the page, figures shrink to the page width.
//!   It is printed twice: the first print says on which page each chapter
//!   starts (read back with poppler's `pdftotext`), the second prints those
//!   numbers on the contents page.
//! * The EPUB is written by mdbook-epub (pinned, installed into `.tools/`)
//!   in a second `mdbook build` of its own, so that `book/` keeps the HTML
//!   renderer's layout. This xtask is its preprocessor: it removes the lines
//!   mdBook hides in Rust blocks (mdbook-epub would print them) and turns the
//!   inline SVG figure into an image, since epub-builder does not declare
//!   the `svg` property that an inline SVG needs.
//!
//! Both are built in `target/offline/` and copied into `book/` (which every
//! `mdbook build` empties); they are built again only when their inputs
//! change (`--no-cache` or `CI=true`: always).
//!
//! The checks read the PDF back with `pdftotext`: every chapter title starts
//! a page and is on the contents page with that page's number and in the
//! outline; every listing caption, a line of every included output and the
//! labels of every included SVG are in the text; every code line of the
//! printed page is there, in order; no word lies outside the page's margins.
//! The EPUB must pass W3C's epubcheck (pinned, installed from Maven Central
//! into `.tools/epubcheck/`) without an error.

use std::env;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cache::{Inputs, Policy, cached};
use crate::{MDBOOK_VERSION, Result, cargo, chromium, json, mdbook, root, run};

/// What `cargo xtask book` writes into `book/` besides the HTML.
pub const PDF: &str = "forget-is-not-delete.pdf";
pub const EPUB: &str = "forget-is-not-delete.epub";

/// mdbook-epub 0.5.3 and 0.5.4 declare `rust-version = "1.96"`; 0.5.2 is the
/// newest that builds with this book's Rust 1.95. It checks that mdBook is
/// `~0.5.2`, which 0.5.4 is, and its sources differ from 0.5.4's only in
/// formatting and log lines.
const MDBOOK_EPUB_VERSION: &str = "0.5.2";

/// W3C's EPUB checker, from Maven Central, with the plugin that fetches it.
const EPUBCHECK_VERSION: &str = "5.3.0";
const MAVEN_DEPENDENCY_PLUGIN: &str = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1";

/// The PDF's page margins, as `theme/pdf.css` sets them (`@page`), in points.
const MARGIN_PT: f64 = 14.0 / 25.4 * 72.0;

/// How long one Chromium print may take before it is killed.
const PRINT_TIMEOUT: Duration = Duration::from_secs(300);

fn work_dir() -> PathBuf {
    root().join("target/offline")
}

/// `cargo xtask book`, after the HTML: the PDF and the EPUB into `book/`.
pub fn build() -> Result {
    let book = root().join("book");
    let work = work_dir();
    fs::create_dir_all(&work).map_err(|e| format!("creating {}: {e}", work.display()))?;
    let args: Vec<String> = env::args().collect();
    let trust = !env::var("CI").is_ok_and(|v| v == "true") && !args.iter().any(|a| a == "--no-cache");

    let chromium = chromium()?;
    let pdftotext = poppler("pdftotext")?;
    let pdf = work.join(PDF);
    let edition = Edition::read()?;
    let pdf_inputs = Inputs::new()
        .paths(&[
            "book/print.html",
            "src/SUMMARY.md",
            "src/generated/versions.md",
            "book.toml",
            "theme",
            "xtask/src/offline.rs",
        ])
        .value(&format!("{} {}", edition.date, edition.commit.as_deref().unwrap_or("-")))
        .command(&chromium.to_string_lossy(), &["--version"])
        .command(&pdftotext.to_string_lossy(), &["-v"]);
    let started = Instant::now();
    cached("pdf-build", pdf_inputs, Policy { trust_cache: trust && pdf.exists() }, || {
        print_pdf(&book, &pdf, &chromium)?;
        eprintln!("xtask: printed the PDF in {:.1} s", started.elapsed().as_secs_f64());
        Ok(())
    })?;

    let epub = work.join(EPUB);
    let epub_inputs = Inputs::new()
        .paths(&["src", "listings", "book.toml", "theme/listings.css", "theme/epub.css", "xtask/src/offline.rs"])
        .value(MDBOOK_VERSION)
        .value(MDBOOK_EPUB_VERSION);
    cached("epub-build", epub_inputs, Policy { trust_cache: trust && epub.exists() }, || write_epub(&epub))?;

    for (built, name) in [(&pdf, PDF), (&epub, EPUB)] {
        fs::copy(built, book.join(name)).map_err(|e| format!("copying {} into book/: {e}", built.display()))?;
        println!("{}", book.join(name).display());
    }
    Ok(())
}

/// `cargo xtask test`'s step (after `book()`): the checks of the PDF and the
/// EPUB, skipped when they passed with the same files.
pub fn test(policy: Policy) -> Result {
    let pdftotext = poppler("pdftotext")?;
    let inputs = Inputs::new()
        .paths(&[&format!("book/{PDF}"), &format!("book/{EPUB}"), "book/print.html", "src", "xtask/src/offline.rs"])
        .command(&pdftotext.to_string_lossy(), &["-v"])
        .value(EPUBCHECK_VERSION);
    cached("offline", inputs, policy, check)
}

/// The checks of `book/forget-is-not-delete.pdf` and `.epub` (run `cargo
/// xtask book` first). Every problem is listed before it fails.
pub fn check() -> Result {
    let book = root().join("book");
    for name in [PDF, EPUB, "print.html"] {
        if !book.join(name).exists() {
            return Err(format!("{} is missing: run `cargo xtask book` first", book.join(name).display()));
        }
    }
    let started = Instant::now();
    let pdf = check_pdf(&book.join(PDF));
    eprintln!("xtask: PDF checks took {:.1} s", started.elapsed().as_secs_f64());
    let started = Instant::now();
    let epub = check_epub(&book.join(EPUB));
    eprintln!("xtask: epubcheck took {:.1} s", started.elapsed().as_secs_f64());
    match (pdf, epub) {
        (Ok(()), Ok(())) => Ok(()),
        (Err(a), Err(b)) => Err(format!("{a}\n{b}")),
        (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
    }
}

// ---------------------------------------------------------------- the PDF

/// One entry of `src/SUMMARY.md`: a part title or a chapter.
#[derive(Debug, PartialEq)]
enum Entry {
    Part(String),
    Chapter { number: Option<usize>, title: String, file: String },
}

/// The parts and chapters of `src/SUMMARY.md`, numbered as mdBook numbers
/// them (numbered chapters count on across parts; the others have none).
fn summary(text: &str) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut number = 0;
    for line in text.lines() {
        let line = line.trim();
        if let Some(part) = line.strip_prefix("# ") {
            if part.trim() != "Summary" {
                entries.push(Entry::Part(part.trim().to_owned()));
            }
            continue;
        }
        let (numbered, rest) = match line.strip_prefix("1. ").or_else(|| line.strip_prefix("- ")) {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let Some(rest) = rest.strip_prefix('[') else { continue };
        let Some((title, link)) = rest.split_once("](") else { continue };
        let file = link.trim_end_matches(')').to_owned();
        let number = numbered.then(|| {
            number += 1;
            number
        });
        entries.push(Entry::Chapter { number, title: title.to_owned(), file });
    }
    entries
}

fn chapters(entries: &[Entry]) -> Vec<&str> {
    entries
        .iter()
        .filter_map(|e| match e {
            Entry::Chapter { title, .. } => Some(title.as_str()),
            Entry::Part(_) => None,
        })
        .collect()
}

/// The `id` of every `<h1>` of the print page, in order, with its text.
fn h1_ids(html: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<h1") {
        rest = &rest[start + 3..];
        let Some(tag_end) = rest.find('>') else { break };
        let tag = &rest[..tag_end];
        let Some(end) = rest.find("</h1>") else { break };
        let text = decode_entities(&strip_tags(&rest[tag_end + 1..end]));
        if let Some(id) = attribute(tag, "id") {
            found.push((id, text.trim().to_owned()));
        }
        rest = &rest[end..];
    }
    found
}

fn attribute(tag: &str, name: &str) -> Option<String> {
    let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
    let len = tag[start..].find('"')?;
    Some(tag[start..start + len].to_owned())
}

/// The contents page: the book's parts and chapters, each chapter a link to
/// its heading with the page it starts on (blank in the
/// first print, whose only purpose is to find those pages).
fn contents_page(entries: &[Entry], ids: &[(String, String)], pages: Option<&[usize]>) -> Result<String> {
    let mut html = String::from("<nav class=\"pdf-contents\">\n<p class=\"pdf-contents-heading\">Contents</p>\n<ol>\n");
    let (mut chapter, mut next_heading) = (0, 0);
    for entry in entries {
        match entry {
            Entry::Part(part) => html.push_str(&format!("<li class=\"pdf-part\">{}</li>\n", escape(part))),
            Entry::Chapter { number, title, file } => {
                // The chapter's heading: the next <h1> with its title.
                let found = ids[next_heading..].iter().position(|(_, heading)| flatten(heading) == flatten(title));
                let Some(at) = found else {
                    return Err(format!(
                        "print.html has no <h1> {title:?} after the previous chapter's: every chapter ({file}) must \
                         start with a `# ` heading equal to its title in SUMMARY.md"
                    ));
                };
                let id = &ids[next_heading + at].0;
                next_heading += at + 1;
                let label = number.map(|n| format!("{n}. ")).unwrap_or_default();
                let page = pages.map(|p| p[chapter].to_string()).unwrap_or_default();
                html.push_str(&format!(
                    "<li class=\"pdf-chapter\"><a href=\"#{id}\"><span class=\"pdf-chapter-title\">{label}{}</span> \
                     <span class=\"pdf-page\">{page}</span></a></li>\n",
                    escape(title)
                ));
                chapter += 1;
            }
        }
    }
    html.push_str("</ol>\n</nav>\n<div style=\"break-before: page; page-break-before: always;\"></div>\n");
    Ok(html)
}

/// The print page as the PDF shows it: the front matter (title page and
/// contents page) first, every `<details>` open, and the download links as
/// the archives' names: a relative link in a PDF is printed as the absolute
/// `file://` address of the machine that built it, which works for nobody
/// else.
fn pdf_page(print_html: &str, front: &str) -> Result<String> {
    let main = print_html.find("<main>").ok_or("print.html has no <main>")? + "<main>".len();
    let mut page = String::with_capacity(print_html.len() + front.len());
    page.push_str(&print_html[..main]);
    page.push('\n');
    page.push_str(front);
    page.push_str(&downloads_as_names(&print_html[main..]));
    Ok(page.replace("<details>", "<details open>").replace("<details class=", "<details open class="))
}

/// Every `<a href="downloads/NAME">TEXT</a>` as `TEXT (<code>NAME</code>)`.
fn downloads_as_names(html: &str) -> String {
    const OPEN: &str = "<a href=\"downloads/";
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find(OPEN) {
        let after = &rest[start + OPEN.len()..];
        let parsed = after.split_once('"').and_then(|(name, tail)| {
            let tail = tail.strip_prefix('>')?;
            let (text, tail) = tail.split_once("</a>")?;
            Some((name, text, tail))
        });
        let Some((name, text, tail)) = parsed else {
            out.push_str(&rest[..start + OPEN.len()]);
            rest = after;
            continue;
        };
        out.push_str(&rest[..start]);
        out.push_str(&format!("{text} (<code>{name}</code>)"));
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// Every Markdown link `[TEXT](downloads/NAME)` as `TEXT (`NAME`)`.
fn markdown_downloads_as_names(markdown: &str) -> String {
    const OPEN: &str = "](downloads/";
    let mut out = String::with_capacity(markdown.len());
    let mut rest = markdown;
    while let Some(at) = rest.find(OPEN) {
        let before = &rest[..at];
        let after = &rest[at + OPEN.len()..];
        let (Some(start), Some(end)) = (before.rfind('['), after.find(')')) else {
            out.push_str(&rest[..at + OPEN.len()]);
            rest = after;
            continue;
        };
        out.push_str(&before[..start]);
        out.push_str(&format!("{} (`{}`)", &before[start + 1..], &after[..end]));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// What the title page says, besides the title.
struct Edition {
    description: String,
    /// The day of the commit the book was built from (or of
    /// `SOURCE_DATE_EPOCH`, or today, outside a git checkout).
    date: String,
    commit: Option<String>,
    /// The "Versions this edition was checked against" list, one entry each.
    versions: Vec<String>,
}

impl Edition {
    fn read() -> Result<Edition> {
        let toml = fs::read_to_string(root().join("book.toml")).map_err(|e| e.to_string())?;
        let description = toml
            .lines()
            .find_map(|l| l.trim().strip_prefix("description = \"")?.strip_suffix('"').map(str::to_owned))
            .ok_or("book.toml has no `description = \"...\"`")?;
        let git = |args: &[&str]| {
            let out = Command::new("git").current_dir(root()).args(args).output().ok()?;
            let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            (out.status.success() && !text.is_empty()).then_some(text)
        };
        let commit = git(&["log", "-1", "--format=%h"]);
        let date = git(&["log", "-1", "--format=%cd", "--date=format:%-d %B %Y"])
            .or_else(|| {
                let epoch = env::var("SOURCE_DATE_EPOCH").ok()?;
                let out = Command::new("date").args(["-u", "-d", &format!("@{epoch}"), "+%-d %B %Y"]).output().ok()?;
                Some(String::from_utf8_lossy(&out.stdout).trim().to_owned())
            })
            .or_else(|| {
                let out = Command::new("date").args(["-u", "+%-d %B %Y"]).output().ok()?;
                Some(String::from_utf8_lossy(&out.stdout).trim().to_owned())
            })
            .ok_or("cannot tell the edition's date: no git, no SOURCE_DATE_EPOCH, no `date`")?;
        let path = root().join("src/generated/versions.md");
        let list = fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        Ok(Edition { description, date, commit, versions: list_items(&list) })
    }
}

/// The items of a markdown list (`- ` lines and their indented
/// continuations), each on one line, code spans as plain text.
fn list_items(markdown: &str) -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    for line in markdown.lines() {
        if let Some(item) = line.strip_prefix("- ") {
            items.push(item.trim().to_owned());
        } else if line.starts_with("  ")
            && let Some(last) = items.last_mut()
        {
            last.push(' ');
            last.push_str(line.trim());
        }
    }
    items.iter().map(|i| i.replace('`', "")).collect()
}

/// The title page: the title, what the book is, its edition, the versions
/// it was checked against and its licence. It has no page number.
fn title_page(title: &str, edition: &Edition) -> String {
    let mut html = format!(
        "<section class=\"pdf-title-page\">\n<p class=\"pdf-title\">{}</p>\n<p class=\"pdf-subtitle\">{}</p>\n",
        escape(title),
        escape(&edition.description)
    );
    let commit = edition.commit.as_ref().map(|c| format!(", from commit {}", escape(c))).unwrap_or_default();
    html.push_str(&format!("<p class=\"pdf-edition\">Edition of {}{commit}</p>\n", escape(&edition.date)));
    html.push_str("<p class=\"pdf-versions-heading\">Checked against</p>\n<ul class=\"pdf-versions\">\n");
    for version in &edition.versions {
        html.push_str(&format!("<li>{}</li>\n", escape(version)));
    }
    html.push_str(
        "</ul>\n<p class=\"pdf-licence\">Text and code under the Apache License, Version 2.0: the file \
         <code>LICENSE</code>, in the book's repository and in every download.</p>\n</section>\n\
         <div style=\"break-before: page; page-break-before: always;\"></div>\n",
    );
    html
}

/// Prints `book/print.html` to `pdf`, twice (see the module's comment).
fn print_pdf(book: &Path, pdf: &Path, chromium: &Path) -> Result {
    let print_html = fs::read_to_string(book.join("print.html"))
        .map_err(|e| format!("reading {}: {e} (render the book first)", book.join("print.html").display()))?;
    let summary_text = fs::read_to_string(root().join("src/SUMMARY.md")).map_err(|e| e.to_string())?;
    let entries = summary(&summary_text);
    let titles = chapters(&entries);
    let ids = h1_ids(&print_html);
    let title = title_page(&book_title()?, &Edition::read()?);

    // The page links to css/, fonts/ and the rest by relative paths: print
    // it from a folder whose other entries are links to book/'s.
    let site = work_dir().join("site");
    let _ = fs::remove_dir_all(&site);
    fs::create_dir_all(&site).map_err(|e| e.to_string())?;
    for entry in fs::read_dir(book).map_err(|e| e.to_string())?.flatten() {
        let name = entry.file_name();
        if name != "print.html" && !name.to_string_lossy().ends_with(".pdf") {
            symlink(&entry.path(), &site.join(&name))?;
        }
    }
    let page = site.join("print.html");

    let first = work_dir().join("first-print.pdf");
    let front = |pages: Option<&[usize]>| Ok::<_, String>(format!("{title}{}", contents_page(&entries, &ids, pages)?));
    fs::write(&page, pdf_page(&print_html, &front(None)?)?).map_err(|e| e.to_string())?;
    chromium_print(chromium, &page, &first)?;
    let pages = read_pages(&first)?;
    let starts = chapter_starts(&pages, &titles).map_err(|missing| {
        format!(
            "in the first print, no page starts with the title of {}; every chapter starts on a new page under its `# ` heading",
            missing.join(", ")
        )
    })?;

    fs::write(&page, pdf_page(&print_html, &front(Some(starts.as_slice()))?)?).map_err(|e| e.to_string())?;
    let second = work_dir().join("second-print.pdf");
    chromium_print(chromium, &page, &second)?;
    let again =
        chapter_starts(&read_pages(&second)?, &titles).map_err(|m| format!("second print: {}", m.join(", ")))?;
    if again != starts {
        return Err(format!(
            "the page numbers moved between the two prints ({starts:?}, then {again:?}): the contents page changed length"
        ));
    }
    fs::rename(&second, pdf).map_err(|e| format!("moving the PDF to {}: {e}", pdf.display()))?;
    let _ = fs::remove_file(&first);
    let _ = fs::remove_dir_all(&site);
    Ok(())
}

fn book_title() -> Result<String> {
    let toml = fs::read_to_string(root().join("book.toml")).map_err(|e| e.to_string())?;
    toml.lines()
        .find_map(|l| l.trim().strip_prefix("title = \"")?.strip_suffix('"').map(str::to_owned))
        .ok_or_else(|| "book.toml has no `title = \"...\"`".to_owned())
}

#[cfg(unix)]
fn symlink(from: &Path, to: &Path) -> Result {
    std::os::unix::fs::symlink(from, to).map_err(|e| format!("linking {}: {e}", to.display()))
}

#[cfg(not(unix))]
fn symlink(from: &Path, to: &Path) -> Result {
    if from.is_dir() {
        return Err(format!("cannot link {} on this system", from.display()));
    }
    fs::copy(from, to).map(drop).map_err(|e| e.to_string())
}

/// One headless Chromium print, in a fresh profile, killed after
/// `PRINT_TIMEOUT`.
fn chromium_print(chromium: &Path, page: &Path, pdf: &Path) -> Result {
    let profile = work_dir().join(format!("chromium-profile-{}", std::process::id()));
    let _ = fs::remove_dir_all(&profile);
    let _ = fs::remove_file(pdf);
    let log = work_dir().join("chromium.log");
    let log_file = fs::File::create(&log).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(chromium);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-pdf-header-footer",
        "--generate-pdf-document-outline",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!("--print-to-pdf={}", pdf.display()))
    .arg(format!("file://{}", page.display()))
    .stdin(Stdio::null())
    .stdout(log_file.try_clone().map_err(|e| e.to_string())?)
    .stderr(log_file);
    eprintln!("xtask: printing {} with headless Chromium", page.display());
    let mut child = cmd.spawn().map_err(|e| format!("{}: cannot start: {e}", chromium.display()))?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(status);
        }
        if started.elapsed() > PRINT_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let _ = fs::remove_dir_all(&profile);
    let tail = || {
        let text = fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    };
    match status {
        None => Err(format!(
            "Chromium did not finish printing within {} s; its last lines:\n{}",
            PRINT_TIMEOUT.as_secs(),
            tail()
        )),
        Some(s) if !s.success() || !pdf.exists() => {
            Err(format!("Chromium failed to print {} ({s}); its last lines:\n{}", page.display(), tail()))
        }
        Some(_) => Ok(()),
    }
}

/// A word of `pdftotext -bbox`, in points from the page's top left.
#[derive(Debug, Clone, PartialEq)]
struct Word {
    x_min: f64,
    y_min: f64,
    x_max: f64,
    y_max: f64,
    text: String,
}

#[derive(Debug, PartialEq)]
struct Page {
    width: f64,
    height: f64,
    words: Vec<Word>,
}

/// A page may be at most this much empty below its last line, unless a
/// chapter ends on it.
const MAX_EMPTY_SHARE: f64 = 0.30;

/// The chapter that must print on one page.
const CHEAT_SHEET: &str = "Cheat sheet";

impl Page {
    /// The words in the bottom margin: where `theme/pdf.css` prints the
    /// page number.
    fn footer(&self) -> Vec<&Word> {
        self.words.iter().filter(|w| w.y_min > self.height - MARGIN_PT).collect()
    }

    /// How much of the page's text area is empty below its last line.
    fn empty_share(&self) -> f64 {
        let bottom = self.height - MARGIN_PT;
        let last = self.words.iter().filter(|w| w.y_min <= bottom).map(|w| w.y_max).fold(MARGIN_PT, f64::max);
        ((bottom - last) / (bottom - MARGIN_PT)).max(0.0)
    }

    /// The words of the page's first line (those as high as its top word).
    fn first_line(&self) -> String {
        let Some(top) = self.words.iter().map(|w| w.y_min).reduce(f64::min) else { return String::new() };
        let Some(top_word) = self.words.iter().find(|w| w.y_min == top) else { return String::new() };
        let mut line: Vec<&Word> =
            self.words.iter().filter(|w| w.y_min < top_word.y_max && w.y_max > top_word.y_min).collect();
        line.sort_by(|a, b| a.x_min.total_cmp(&b.x_min));
        line.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ")
    }

    /// The page's text as it looks: lines from top to bottom, each from
    /// left to right. (pdftotext's own order reads a table column by
    /// column.)
    fn text(&self) -> String {
        let mut words: Vec<&Word> = self.words.iter().collect();
        let middle = |w: &Word| (w.y_min + w.y_max) / 2.0;
        words.sort_by(|a, b| middle(a).total_cmp(&middle(b)));
        let mut lines: Vec<Vec<&Word>> = Vec::new();
        for word in words {
            match lines.last_mut() {
                // The same line: its middle is within the first word's height.
                Some(line) if (middle(word) - middle(line[0])).abs() < (line[0].y_max - line[0].y_min) / 2.0 => {
                    line.push(word)
                }
                _ => lines.push(vec![word]),
            }
        }
        let mut text = String::new();
        for mut line in lines {
            line.sort_by(|a, b| a.x_min.total_cmp(&b.x_min));
            for word in line {
                text.push_str(&word.text);
                text.push(' ');
            }
            text.push('\n');
        }
        text
    }
}

fn read_pages(pdf: &Path) -> Result<Vec<Page>> {
    let out = Command::new(poppler("pdftotext")?)
        .args(["-bbox", "-enc", "UTF-8"])
        .arg(pdf)
        .arg("-")
        .output()
        .map_err(|e| format!("pdftotext -bbox: {e}"))?;
    if !out.status.success() {
        return Err(format!("pdftotext -bbox {} failed: {}", pdf.display(), String::from_utf8_lossy(&out.stderr)));
    }
    Ok(parse_bbox(&String::from_utf8_lossy(&out.stdout)))
}

/// Parses `pdftotext -bbox` output: `<page width=".." height="..">` and
/// `<word xMin=".." yMin=".." xMax=".." yMax="..">text</word>`.
fn parse_bbox(html: &str) -> Vec<Page> {
    let mut pages: Vec<Page> = Vec::new();
    for piece in html.split('<').skip(1) {
        let Some((tag, after)) = piece.split_once('>') else { continue };
        let number = |name: &str| attribute(tag, name).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        if tag.starts_with("page ") {
            pages.push(Page { width: number("width"), height: number("height"), words: Vec::new() });
        } else if tag.starts_with("word ")
            && let Some(page) = pages.last_mut()
        {
            page.words.push(Word {
                x_min: number("xMin"),
                y_min: number("yMin"),
                x_max: number("xMax"),
                y_max: number("yMax"),
                text: decode_entities(after),
            });
        }
    }
    pages
}

/// The page (1-based) each chapter starts on: the first page, after the
/// previous chapter's, whose first line is the chapter's title. Err lists
/// the chapters that start no page.
fn chapter_starts(pages: &[Page], titles: &[&str]) -> std::result::Result<Vec<usize>, Vec<String>> {
    let mut starts = Vec::new();
    let mut missing = Vec::new();
    let mut from = 0;
    for title in titles {
        let found = pages.iter().enumerate().skip(from).find(|(_, p)| flatten(&p.first_line()) == flatten(title));
        match found {
            Some((i, _)) => {
                starts.push(i + 1);
                from = i + 1;
            }
            None => missing.push(format!("{title:?}")),
        }
    }
    if missing.is_empty() { Ok(starts) } else { Err(missing) }
}

/// The checks of the PDF; Err lists every problem found.
fn check_pdf(pdf: &Path) -> Result {
    let mut problems: Vec<String> = Vec::new();
    let pages = read_pages(pdf)?;
    let src = root().join("src");
    let summary_text = fs::read_to_string(src.join("SUMMARY.md")).map_err(|e| e.to_string())?;
    let entries = summary(&summary_text);
    let titles = chapters(&entries);

    // Every chapter starts a page, and the contents page gives that page.
    let starts = match chapter_starts(&pages, &titles) {
        Ok(starts) => starts,
        Err(missing) => {
            problems.push(format!("no page starts with the title of {}", missing.join(", ")));
            Vec::new()
        }
    };
    // Page 1, the title page: the title, the edition, every pinned version
    // and the licence.
    let title_text = pages.first().map(|p| flatten(&p.text())).unwrap_or_default();
    let edition = Edition::read()?;
    let mut wanted = vec![book_title()?, format!("Edition of {}", edition.date), "Apache License".to_owned()];
    wanted.extend(edition.versions.iter().cloned());
    for want in wanted {
        if !title_text.contains(&flatten(&want)) {
            problems.push(format!("the title page (page 1) does not say {want:?}"));
        }
    }
    let contents = pages.get(1).map(Page::text).unwrap_or_default();
    if !contents.contains("Contents") {
        problems.push("page 2 is not the contents page (no \"Contents\")".to_owned());
    }
    // Line by line, in order: "N. Title   page" (the number only for
    // numbered chapters), and each part's title.
    let lines: Vec<String> = contents.lines().map(flatten).collect();
    let mut cursor = 0;
    let mut chapter = 0;
    for entry in &entries {
        let (expected, what) = match entry {
            Entry::Part(part) => (flatten(part), format!("the part {part:?}")),
            Entry::Chapter { number, title, .. } => {
                let label = number.map(|n| format!("{n}.")).unwrap_or_default();
                let page = starts.get(chapter).map_or("?".to_owned(), |p| p.to_string());
                chapter += 1;
                (flatten(&format!("{label}{title}{page}")), format!("{title:?} with its page ({page})"))
            }
        };
        match lines[cursor..].iter().position(|l| *l == expected) {
            Some(at) => cursor += at + 1,
            None => problems
                .push(format!("the contents page does not list {what} on a line of its own, in SUMMARY.md's order")),
        }
    }

    // The outline (bookmarks) names every chapter, and no link points at
    // this machine's files.
    match pdf_xml(pdf) {
        Ok(xml) => {
            let outline = outline_items(&xml);
            if outline.is_empty() {
                problems.push(
                    "the PDF has no outline (bookmarks): was it printed with --generate-pdf-document-outline?".into(),
                );
            }
            for title in &titles {
                if !outline.iter().any(|item| flatten(item) == flatten(title)) {
                    problems.push(format!("the PDF's outline (bookmarks) has no entry {title:?}"));
                }
            }
            let local: Vec<String> = link_targets(&xml).into_iter().filter(|l| l.starts_with("file:")).collect();
            if !local.is_empty() {
                let n = local.len();
                problems.push(format!(
                    "{n} links of the PDF point at files of the machine that printed it, e.g. {:?}",
                    &local[..n.min(3)]
                ));
            }
        }
        Err(e) => problems.push(e),
    }

    // Every page but the title page has its number in the footer.
    for (i, page) in pages.iter().enumerate() {
        let footer: Vec<&str> = page.footer().iter().map(|w| w.text.as_str()).collect();
        let want = (i + 1).to_string();
        if i == 0 && !footer.is_empty() {
            problems.push(format!("the title page has a footer ({footer:?}); it should have none"));
        } else if i > 0 && footer != [want.as_str()] {
            problems.push(format!("page {want} has {footer:?} in its footer, not its number"));
        }
    }

    // No page is left a third empty, except where a chapter ends (a chapter
    // starts a page): code blocks may break (theme/pdf.css), so only a
    // block that cannot, a figure, may push itself whole to the next page.
    // A figure cannot break either: the page before one may be emptier.
    let mut figure_labels = Vec::new();
    for entry in &entries {
        if let Entry::Chapter { file, .. } = entry {
            let markdown = fs::read_to_string(src.join(file)).map_err(|e| format!("reading src/{file}: {e}"))?;
            for include in output_includes(&markdown).iter().filter(|i| i.ends_with(".svg")) {
                let svg = fs::read_to_string(src.join(include)).map_err(|e| format!("reading {include}: {e}"))?;
                figure_labels.extend(svg_texts(&svg).iter().map(|l| flatten(l)));
            }
        }
    }
    let ends: Vec<usize> = starts.iter().map(|s| s - 1).chain([pages.len()]).collect();
    let mut gappy = Vec::new();
    for (i, page) in pages.iter().enumerate().skip(2) {
        let next_is_figure = pages.get(i + 1).is_some_and(|next| {
            let top = flatten(&next.first_line());
            figure_labels.iter().any(|label| !label.is_empty() && top.contains(label.as_str()))
        });
        if ends.contains(&(i + 1)) || next_is_figure {
            continue;
        }
        let empty = page.empty_share();
        if empty > MAX_EMPTY_SHARE {
            gappy.push(format!("page {} is {:.0}% empty below its last line", i + 1, empty * 100.0));
        }
    }
    if !gappy.is_empty() {
        problems.push(format!(
            "{} pages, not the last of a chapter, are more than {:.0}% empty:\n    {}",
            gappy.len(),
            MAX_EMPTY_SHARE * 100.0,
            gappy.join("\n    ")
        ));
    }

    // The cheat sheet is one page.
    if let Some(at) = titles.iter().position(|t| *t == CHEAT_SHEET)
        && let Some(&start) = starts.get(at)
    {
        let end = ends.get(at + 1).copied().unwrap_or(pages.len());
        if end + 1 - start != 1 {
            problems.push(format!("the cheat sheet takes {} pages ({start} to {end}), not one", end + 1 - start));
        }
    } else {
        problems.push(format!("no chapter {CHEAT_SHEET:?} in SUMMARY.md, or it starts no page"));
    }

    // Nothing outside the margins: a code line cut at the page edge would
    // end there, or past it. (The page number sits in the bottom margin.)
    let mut outside = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        let footer = page.footer();
        for word in page.words.iter().filter(|w| !footer.contains(w)) {
            let slack = 1.0;
            if word.x_max > page.width - MARGIN_PT + slack || word.x_min < MARGIN_PT - slack {
                outside.push(format!(
                    "page {}: {:?} spans x {:.1}..{:.1} of a {:.1} pt wide page (margins {:.1} pt)",
                    i + 1,
                    word.text,
                    word.x_min,
                    word.x_max,
                    page.width,
                    MARGIN_PT
                ));
            }
        }
    }
    if !outside.is_empty() {
        let n = outside.len();
        outside.truncate(20);
        problems.push(format!("{n} words lie outside the page margins (cut off):\n    {}", outside.join("\n    ")));
    }

    let text: String = pages.iter().map(|p| p.text()).collect::<Vec<_>>().join(" ");
    let flat = flatten(&text);

    // Every caption, every included output and figure.
    let mut chapter_files: Vec<&str> = entries
        .iter()
        .filter_map(|e| match e {
            Entry::Chapter { file, .. } => Some(file.as_str()),
            Entry::Part(_) => None,
        })
        .collect();
    chapter_files.dedup();
    let (mut captions, mut outputs, mut figures) = (0, 0, 0);
    for file in chapter_files {
        let markdown = fs::read_to_string(src.join(file)).map_err(|e| format!("reading src/{file}: {e}"))?;
        for caption in captions_of(&markdown) {
            captions += 1;
            if !flat.contains(&flatten(&caption)) {
                problems.push(format!("src/{file}: the caption {caption:?} is not in the PDF"));
            }
        }
        for include in output_includes(&markdown) {
            let path = src.join(&include);
            let body = fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
            if include.ends_with(".svg") {
                figures += 1;
                for label in svg_texts(&body) {
                    if !flat.contains(&flatten(&label)) {
                        problems
                            .push(format!("src/{file}: the figure {include} shows {label:?}, which is not in the PDF"));
                    }
                }
            } else {
                outputs += 1;
                match distinctive_line(&body) {
                    Some(line) if !flat.contains(&flatten(line)) => problems
                        .push(format!("src/{file}: the output {include} prints {line:?}, which is not in the PDF")),
                    Some(_) => {}
                    None => problems.push(format!("src/{file}: the output {include} is empty")),
                }
            }
        }
    }

    // Every code line the print page shows, in order (a line cut off at the
    // page edge loses its end).
    let print_html = fs::read_to_string(root().join("book/print.html")).map_err(|e| e.to_string())?;
    let page = pdf_page(&print_html, "")?;
    let mut cursor = 0;
    let mut code_lines = 0;
    let mut lost = Vec::new();
    for block in code_blocks(&page) {
        for line in block.lines() {
            let needle = flatten(line);
            if needle.is_empty() {
                continue;
            }
            code_lines += 1;
            if let Some(at) = flat[cursor..].find(&needle) {
                cursor += at + needle.len();
            } else if !flat.contains(&needle) {
                lost.push(format!("{line:?}"));
            }
        }
    }
    if !lost.is_empty() {
        let n = lost.len();
        lost.truncate(20);
        problems.push(format!("{n} code lines of print.html are not in the PDF:\n    {}", lost.join("\n    ")));
    }

    eprintln!(
        "xtask: PDF: {} pages; {} chapters from page {}; {captions} captions, {outputs} outputs, {figures} figures, \
         {code_lines} code lines checked",
        pages.len(),
        titles.len(),
        starts.first().map_or("?".to_owned(), |p| p.to_string())
    );
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{} has {} problems:\n  - {}", pdf.display(), problems.len(), problems.join("\n  - ")))
    }
}

/// The PDF as `pdftohtml -xml` (poppler) writes it: its outline and its
/// links.
fn pdf_xml(pdf: &Path) -> Result<String> {
    let dir = work_dir().join("outline");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let out = Command::new(poppler("pdftohtml")?)
        .args(["-xml", "-i", "-q", "-nodrm"])
        .arg(pdf)
        .arg(dir.join("book"))
        .output()
        .map_err(|e| format!("pdftohtml: {e}"))?;
    let xml = fs::read_to_string(dir.join("book.xml"))
        .map_err(|e| format!("pdftohtml -xml wrote no book.xml ({e}): {}", String::from_utf8_lossy(&out.stderr)))?;
    let _ = fs::remove_dir_all(&dir);
    Ok(xml)
}

/// The titles of the outline of `pdftohtml -xml`'s output.
fn outline_items(xml: &str) -> Vec<String> {
    let Some(start) = xml.find("<outline") else { return Vec::new() };
    let mut items = Vec::new();
    for piece in xml[start..].split("<item").skip(1) {
        if let Some((_, rest)) = piece.split_once('>')
            && let Some((title, _)) = rest.split_once("</item>")
        {
            items.push(decode_entities(title).trim().to_owned());
        }
    }
    items
}

/// The target of every link of the pages in `pdftohtml -xml`'s output.
fn link_targets(xml: &str) -> Vec<String> {
    xml.split("<a href=\"")
        .skip(1)
        .filter_map(|piece| piece.split_once('"').map(|(href, _)| decode_entities(href)))
        .collect()
}

/// The start of every listing caption of a chapter: `Listing N-M:` and the
/// first six words after it, as plain text.
fn captions_of(markdown: &str) -> Vec<String> {
    let mut captions = Vec::new();
    for line in markdown.lines() {
        let Some(start) = line.find("<span class=\"caption\">") else { continue };
        let inner = &line[start + "<span class=\"caption\">".len()..];
        let inner = inner.rfind("</span>").map_or(inner, |end| &inner[..end]);
        let text = decode_entities(&strip_tags(inner));
        let head = text.split(" · ").next().unwrap_or_default();
        let words: Vec<&str> = head.split_whitespace().take(8).collect();
        captions.push(words.join(" "));
    }
    captions
}

/// The outputs and figures a chapter includes whole:
/// `{{#include ../listings/.../output.txt}}` (or `twin/output.txt`) and any
/// `.svg` (`output.svg`, `diagram.svg`), relative to `src/`.
fn output_includes(markdown: &str) -> Vec<String> {
    markdown
        .lines()
        .filter_map(|l| l.trim().strip_prefix("{{#include ")?.strip_suffix("}}"))
        .filter(|path| path.ends_with("/output.txt") || path.ends_with(".svg"))
        .map(str::to_owned)
        .collect()
}

/// The longest line that occurs once in an output: the least likely to be
/// found elsewhere in the book.
fn distinctive_line(output: &str) -> Option<&str> {
    let lines: Vec<&str> = output.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let unique = |l: &&&str| lines.iter().filter(|m| *m == *l).count() == 1;
    lines.iter().filter(unique).max_by_key(|l| l.chars().count()).or(lines.first()).copied()
}

/// The text of every `<text>` element of an SVG.
fn svg_texts(svg: &str) -> Vec<String> {
    let mut texts = Vec::new();
    for piece in svg.split("<text").skip(1) {
        if let Some((_, rest)) = piece.split_once('>')
            && let Some((text, _)) = rest.split_once("</text>")
        {
            let text = decode_entities(&strip_tags(text)).trim().to_owned();
            if !text.is_empty() {
                texts.push(text);
            }
        }
    }
    texts
}

/// The text a reader sees of every `<pre>` block of an HTML page: without
/// the lines mdBook hides (`<span class="boring">`).
fn code_blocks(html: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    for piece in html.split("<pre").skip(1) {
        let Some((_, rest)) = piece.split_once('>') else { continue };
        let Some((inner, _)) = rest.split_once("</pre>") else { continue };
        let mut visible = String::new();
        let mut rest = inner;
        while let Some(start) = rest.find("<span class=\"boring\">") {
            visible.push_str(&rest[..start]);
            rest = &rest[start..];
            rest = rest.find("</span>").map_or("", |end| &rest[end + "</span>".len()..]);
        }
        visible.push_str(rest);
        blocks.push(decode_entities(&strip_tags(&visible)));
    }
    blocks
}

fn strip_tags(html: &str) -> String {
    let mut text = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text
}

fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|end| {
            let name = &rest[1..end];
            let c = match name {
                "lt" => '<',
                "gt" => '>',
                "amp" => '&',
                "quot" => '"',
                "apos" => '\'',
                "nbsp" => ' ',
                _ => {
                    let code = match name.strip_prefix("#x").or_else(|| name.strip_prefix("#X")) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok(),
                        None => name.strip_prefix('#').and_then(|d| d.parse().ok()),
                    };
                    char::from_u32(code?)?
                }
            };
            Some((c, end))
        });
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Text as compared with the PDF's: typographic quotes, dashes, ellipses and
/// ligatures as their plain letters, every whitespace removed (a wrapped
/// line may break anywhere, even inside a word).
fn flatten(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            c if c.is_whitespace() => {}
            '\u{2018}' | '\u{2019}' | '\u{201B}' | '\u{2032}' => out.push('\''),
            '\u{201C}' | '\u{201D}' | '\u{2033}' => out.push('"'),
            '\u{2013}' => out.push_str("--"),
            '\u{2014}' => out.push_str("---"),
            '\u{2026}' => out.push_str("..."),
            '\u{FB00}' => out.push_str("ff"),
            '\u{FB01}' => out.push_str("fi"),
            '\u{FB02}' => out.push_str("fl"),
            '\u{FB03}' => out.push_str("ffi"),
            '\u{FB04}' => out.push_str("ffl"),
            '\u{00AD}' => {}
            c => out.push(c),
        }
    }
    out
}

// ------------------------------------------------------------- the EPUB

/// The pinned mdbook-epub, installed into `.tools/` like mdBook.
fn mdbook_epub() -> Result<PathBuf> {
    let tools = root().join(".tools");
    let bin = tools.join("bin").join("mdbook-epub");
    // It has no --version; cargo's record of what it installed says.
    let record = fs::read_to_string(tools.join(".crates.toml")).unwrap_or_default();
    if bin.exists() && record.contains(&format!("\"mdbook-epub {MDBOOK_EPUB_VERSION} ")) {
        return Ok(bin);
    }
    let mut install = cargo();
    install.args(["install", "mdbook-epub", "--locked", "--version", MDBOOK_EPUB_VERSION, "--root"]).arg(&tools);
    run(install, &format!("installing mdbook-epub {MDBOOK_EPUB_VERSION} into .tools/ (once; a few minutes)"))?;
    Ok(bin)
}

/// A second `mdbook build` with only the EPUB renderer, into
/// `target/offline/epub/`, and this xtask as its preprocessor.
fn write_epub(epub: &Path) -> Result {
    let renderer = mdbook_epub()?;
    let dest = work_dir().join("epub");
    let _ = fs::remove_dir_all(&dest);
    epub_cover()?;
    let xtask = env::current_exe().map_err(|e| format!("finding the xtask's own binary: {e}"))?;
    let output = format!(
        r#"{{"epub":{{"command":{},"epub-version":3,"curly-quotes":true,"cover-image":{},"additional-css":["theme/listings.css","theme/epub.css"]}}}}"#,
        json::quote(&shell_quote(&renderer.to_string_lossy())),
        json::quote(COVER)
    );
    let preprocessor = format!(
        r#"{{"epub-listings":{{"command":{},"renderers":["epub"],"after":["links"]}}}}"#,
        json::quote(&format!("{} epub-preprocessor", shell_quote(&xtask.to_string_lossy())))
    );
    let mut cmd = Command::new(mdbook()?);
    cmd.current_dir(root())
        .arg("build")
        .arg("--dest-dir")
        .arg(&dest)
        .env("MDBOOK_OUTPUT", output)
        .env("MDBOOK_PREPROCESSOR", preprocessor);
    eprintln!("xtask: mdbook build with mdbook-epub {MDBOOK_EPUB_VERSION} into {}", dest.display());
    let started = Instant::now();
    let out = cmd.stderr(Stdio::piped()).stdout(Stdio::piped()).output().map_err(|e| format!("mdbook build: {e}"))?;
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR") || l.contains("WARN")).collect();
    if !out.status.success() || log.lines().any(|l| l.contains("ERROR")) {
        return Err(format!("the EPUB build failed ({}):\n{log}", out.status));
    }
    if !errors.is_empty() {
        eprintln!("{}", errors.join("\n"));
    }
    let written = fs::read_dir(&dest)
        .map_err(|e| format!("{}: {e}", dest.display()))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "epub"))
        .ok_or_else(|| format!("mdbook-epub wrote no .epub into {}:\n{log}", dest.display()))?;
    fs::rename(&written, epub).map_err(|e| format!("moving {}: {e}", written.display()))?;
    eprintln!("xtask: wrote the EPUB in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The cover image, relative to the book's root: mdbook-epub looks for it
/// there and stores it in the EPUB under this same path.
const COVER: &str = "target/offline/cover/cover.png";

/// The cover's size in pixels: 2:3, as e-book stores ask for.
const COVER_SIZE: (u32, u32) = (1600, 2400);

/// Draws the EPUB's cover with headless Chromium: the title, what the book
/// is, chapter 3's retry curve (the figure listing 3-3 prints, as committed)
/// and the edition.
fn epub_cover() -> Result<PathBuf> {
    let edition = Edition::read()?;
    let figure_path = root().join("listings/ch03-retry-curve/listing-03-03/output.svg");
    let figure = fs::read_to_string(&figure_path).map_err(|e| format!("reading {}: {e}", figure_path.display()))?;
    let (width, height) = COVER_SIZE;
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><style>\n\
         html, body {{ margin: 0; width: {width}px; height: {height}px; background: #1f2d3d; color: #fff; \
         font-family: sans-serif; }}\n\
         .cover {{ box-sizing: border-box; height: 100%; padding: 200px 140px 150px; display: flex; \
         flex-direction: column; }}\n\
         h1 {{ font-size: 150px; line-height: 1.05; margin: 0 0 60px; }}\n\
         .what {{ font-size: 54px; line-height: 1.3; color: #d6e2ee; margin: 0 0 110px; }}\n\
         .figure {{ align-self: center; background: #fff; border-radius: 24px; padding: 36px; }}\n\
         .figure svg {{ display: block; width: 1120px; height: auto; }}\n\
         .edition {{ margin-top: auto; font-size: 44px; color: #d6e2ee; }}\n\
         </style></head><body><div class=\"cover\"><h1>{}</h1><p class=\"what\">{}</p>\
         <div class=\"figure\">{figure}</div><p class=\"edition\">Edition of {}</p></div></body></html>\n",
        escape(&book_title()?),
        escape(&edition.description),
        escape(&edition.date)
    );
    let dir = work_dir().join("cover");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let page = dir.join("cover.html");
    fs::write(&page, html).map_err(|e| e.to_string())?;
    let png = root().join(COVER);
    let profile = dir.join("chromium-profile");
    let out = Command::new(chromium()?)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"])
        .args(["--hide-scrollbars", "--force-device-scale-factor=1"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("Chromium (drawing the EPUB's cover): {e}"))?;
    let _ = fs::remove_dir_all(&profile);
    match png_size(&png) {
        Some(size) if size == COVER_SIZE => Ok(png),
        other => Err(format!(
            "drawing the EPUB's cover: Chromium wrote {} ({other:?}, want {width}x{height}); it said ({}):\n{}",
            png.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

/// The width and height a PNG file's header gives, if it is a PNG.
fn png_size(path: &Path) -> Option<(u32, u32)> {
    let bytes = fs::read(path).ok()?;
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let be = |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    Some((be(16), be(20)))
}

fn shell_quote(word: &str) -> String {
    if word.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c)) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// `cargo xtask epub-preprocessor`: what mdBook runs before mdbook-epub
/// (`supports RENDERER` first, then the book as JSON on stdin).
pub fn preprocessor(args: &[String]) -> Result {
    if args.first().map(String::as_str) == Some("supports") {
        return match args.get(1).map(String::as_str) {
            Some("epub") => Ok(()),
            other => Err(format!("epub-preprocessor supports only the epub renderer, not {other:?}")),
        };
    }
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).map_err(|e| format!("reading the book from mdBook: {e}"))?;
    let book = json::second_element(&input).ok_or("mdBook sent no [context, book] array")?;
    // The PDF's title page opens the first chapter: mdbook-epub writes a
    // page per chapter and has no front matter of its own.
    let title = title_page(&book_title()?, &Edition::read()?);
    let first = std::cell::Cell::new(true);
    let book = crate::run_lines::each_chapter(book, |markdown| {
        let page = for_epub(markdown);
        if first.replace(false) { format!("{title}\n{page}") } else { page }
    })?;
    std::io::stdout().write_all(book.as_bytes()).map_err(|e| e.to_string())
}

/// A chapter's markdown as mdbook-epub should render it: code dedented as
/// on the page (`dedent.rs`), Rust blocks without the lines mdBook hides,
/// an inline SVG as an `<img>`, the download links as the archives' names
/// (an EPUB holds no file they could point to), what the web page folds in `<details>` open (many readers
/// never open one), and the paper variant of a sentence that only makes
/// sense on screen.
fn for_epub(markdown: &str) -> String {
    // The page's code as the HTML renderer's preprocessor leaves it: each
    // fragment from column 0, the analyzer's `// want` shown as reports.
    let out = crate::dedent::code_blocks(markdown);
    let out = epub_lines(&out);
    let out = downloads_as_names(&markdown_downloads_as_names(&out));
    let out = chapter_links_as_html(&out);
    let out = heading_anchors(&out);
    let out = without_spans(&out, "<span class=\"web-only\">");
    let out = out
        .replace("<span class=\"print-only\">", "<span class=\"offline\">")
        .replace("<details>", "<div class=\"details\">")
        .replace("<details class=\"", "<div class=\"details ")
        .replace("</details>", "</div>")
        .replace("<summary>", "<p class=\"summary\">")
        .replace("</summary>", "</p>");
    code_as_lines(&out)
}

/// Every fenced block as a `<pre class="lines">` whose lines are blocks of
/// their own with a hanging indent: on a screen too narrow for a line, the
/// rest of it wraps two columns in from where the line's text starts, not
/// at the left margin, so a wrapped line never reads as one with less
/// indentation. The leading spaces stay in the text (a copy keeps them); a
/// tab counts four columns, as `tab-size` in theme/epub.css says.
fn code_as_lines(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len() + markdown.len() / 2);
    let mut open: Option<(char, usize, String, Vec<&str>)> = None;
    for line in markdown.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let fence_char = trimmed.chars().next().filter(|c| (*c == '`' || *c == '~') && indent <= 3);
        match open.as_mut() {
            None => {
                if let Some(c) = fence_char {
                    let len = trimmed.chars().take_while(|x| *x == c).count();
                    if len >= 3 {
                        let info = trimmed[len..].trim();
                        let lang = info.split([',', ' ', '\t']).next().unwrap_or_default().to_owned();
                        open = Some((c, len, lang, Vec::new()));
                        continue;
                    }
                }
                out.push_str(line);
            }
            Some((c, len, lang, lines)) => {
                let closing = trimmed.trim_end();
                if fence_char == Some(*c) && closing.len() >= *len && closing.chars().all(|x| x == *c) {
                    out.push_str(&lines_html(lang, lines));
                    out.push('\n');
                    open = None;
                } else {
                    lines.push(line.trim_end_matches(['\n', '\r']));
                }
            }
        }
    }
    if let Some((_, _, lang, lines)) = open {
        // An unclosed fence runs to the end, as CommonMark says.
        out.push_str(&lines_html(&lang, &lines));
        out.push('\n');
    }
    out
}

/// One code block's HTML, on one source line (a newline between the line
/// blocks would render as an empty line under `pre-wrap`).
fn lines_html(lang: &str, lines: &[&str]) -> String {
    let class = if lang.is_empty() { String::new() } else { format!(" class=\"language-{}\"", escape(lang)) };
    let mut html = format!("<pre class=\"lines\"><code{class}>");
    for line in lines {
        let columns = line
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .fold(0, |col, c| if c == '\t' { col / 4 * 4 + 4 } else { col + 1 });
        let hang = columns + 2;
        let text = if line.is_empty() { "<br/>".to_owned() } else { escape(line) };
        html.push_str(&format!(
            "<span class=\"line\" style=\"padding-left: {hang}ch; text-indent: -{hang}ch\">{text}</span>"
        ));
    }
    html.push_str("</code></pre>");
    html
}

/// Markdown links to another chapter (`[text](ch08-kube-runtime.md#side)`)
/// pointed at the page mdbook-epub writes for it (`ch08-kube-runtime.html`):
/// mdBook's HTML renderer rewrites `.md` links itself, mdbook-epub does not,
/// and epubcheck reports the file it cannot find. The `#fragment` goes:
/// mdbook-epub gives headings no `id`, so the link opens the chapter.
fn chapter_links_as_html(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut rest = markdown;
    while let Some(start) = rest.find("](") {
        let (before, after) = rest.split_at(start + 2);
        out.push_str(before);
        let Some(end) = after.find(')') else {
            rest = after;
            break;
        };
        let target = &after[..end];
        let path = target.split_once('#').map_or(target, |(path, _)| path);
        match path.strip_suffix(".md") {
            Some(page) if !page.is_empty() && !page.contains(['/', ':', ' ']) => {
                out.push_str(page);
                out.push_str(".html");
            }
            _ => out.push_str(target),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Every heading below the chapter's title (`##` to `######`, outside
/// code) preceded by an empty `<a id>` with the id mdBook's HTML renderer
/// gives it, so that a link to a section of the same page
/// (`[…](#a-panic-with-recoverpanic-off)`, the triage page's) lands there
/// in the EPUB too: mdbook-epub gives headings no `id`, and epubcheck
/// rejects a fragment that names none.
fn heading_anchors(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len() + 256);
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut fence: Option<(char, usize)> = None;
    for line in markdown.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(c) = trimmed.chars().next().filter(|c| *c == '`' || *c == '~') {
            let len = trimmed.chars().take_while(|x| *x == c).count();
            match fence {
                None if len >= 3 => fence = Some((c, len)),
                Some((open, open_len)) if c == open && len >= open_len && trimmed[len..].trim().is_empty() => {
                    fence = None
                }
                _ => {}
            }
        }
        let level = line.chars().take_while(|c| *c == '#').count();
        if fence.is_none() && (2..=6).contains(&level) && line[level..].starts_with(' ') {
            let id = mdbook_id(&line[level..]);
            let n = seen.entry(id.clone()).or_insert(0);
            let id = if *n == 0 { id } else { format!("{id}-{n}") };
            *n += 1;
            out.push_str(&format!("<a id=\"{id}\"></a>\n\n"));
        }
        out.push_str(line);
    }
    out
}

/// The id mdBook gives a heading with this Markdown text: its text as the
/// page shows it (no backticks, emphasis or link targets), lower case,
/// spaces as `-`, and only letters, digits, `-` and `_` kept.
fn mdbook_id(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading.trim();
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("](") {
            rest = rest.find(')').map_or("", |end| &rest[end + 1..]);
            continue;
        }
        if c == '<'
            && let Some(end) = rest.find('>')
        {
            rest = &rest[end + 1..];
            continue;
        }
        if !matches!(c, '`' | '*' | '[' | ']') {
            text.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    text.trim()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_ascii_lowercase())
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// `html` without every span that starts with `open` (no nested spans).
fn without_spans(html: &str, open: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find(open) {
        out.push_str(&rest[..start]);
        let inner = &rest[start + open.len()..];
        rest = inner.find("</span>").map_or("", |end| &inner[end + "</span>".len()..]);
    }
    out.push_str(rest);
    out
}

/// The line-by-line part of `for_epub`: hidden Rust lines and inline SVGs.
fn epub_lines(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut fence: Option<(char, usize, bool)> = None;
    let mut svg: Option<String> = None;
    for line in markdown.split_inclusive('\n') {
        if let Some(open) = svg.as_mut() {
            open.push_str(line);
            if line.trim_start().starts_with("</svg>") {
                out.push_str(&svg_image(open));
                out.push('\n');
                svg = None;
            }
            continue;
        }
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        match fence {
            None => {
                if indent <= 3
                    && let Some(c) = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')
                {
                    let len = trimmed.chars().take_while(|x| *x == c).count();
                    if len >= 3 {
                        let info = trimmed[len..].trim();
                        let lang = info.split([',', ' ', '\t']).next().unwrap_or_default();
                        fence = Some((c, len, lang == "rust"));
                    }
                } else if trimmed.starts_with("<svg") && indent <= 3 {
                    svg = Some(line.to_owned());
                    if trimmed.trim_end().ends_with("</svg>") {
                        out.push_str(&svg_image(&svg.take().unwrap_or_default()));
                        out.push('\n');
                    }
                    continue;
                }
                out.push_str(line);
            }
            Some((c, len, rust)) => {
                let closing = trimmed.trim_end();
                if indent <= 3 && closing.len() >= len && closing.chars().all(|x| x == c) {
                    fence = None;
                    out.push_str(line);
                } else if rust {
                    if let Some(shown) = rust_line(line) {
                        out.push_str(&shown);
                    }
                } else {
                    out.push_str(line);
                }
            }
        }
    }
    if let Some(open) = svg {
        out.push_str(&open);
    }
    out
}

/// mdBook's rule for a line of a Rust block (mdbook-html's `hide_lines_rust`):
/// `# ` or a lone `#` hides it; `##` shows it with one `#`.
fn rust_line(line: &str) -> Option<String> {
    let body = line.trim_end_matches(['\n', '\r']);
    let newline = &line[body.len()..];
    let trimmed = body.trim_start();
    let indent = &body[..body.len() - trimmed.len()];
    let Some(after) = trimmed.strip_prefix('#') else { return Some(line.to_owned()) };
    match after.chars().next() {
        None | Some(' ') => None,
        Some('#') => Some(format!("{indent}{after}{newline}")),
        Some(_) => Some(line.to_owned()),
    }
}

/// An inline SVG as an `<img>` with a data URL, its `aria-label` as the text.
fn svg_image(svg: &str) -> String {
    let tag_end = svg.find('>').unwrap_or(svg.len());
    let alt = attribute(&svg[..tag_end], "aria-label").unwrap_or_else(|| "figure".to_owned());
    format!(
        "<p><img class=\"figure\" alt=\"{}\" src=\"data:image/svg+xml;base64,{}\"/></p>",
        escape(&alt),
        base64(svg.trim().as_bytes())
    )
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// W3C's epubcheck, installed with Maven into `.tools/epubcheck/lib/`.
fn epubcheck() -> Result<PathBuf> {
    if Command::new("java").arg("-version").output().is_err() {
        return Err("`java` is not on PATH: epubcheck needs Java 11 or newer \
                    (Debian: `apt-get install -y openjdk-17-jre-headless`)"
            .to_owned());
    }
    let dir = root().join(".tools/epubcheck");
    let lib = dir.join("lib");
    if lib.join(format!("epubcheck-{EPUBCHECK_VERSION}.jar")).exists() {
        return Ok(lib);
    }
    if Command::new("mvn").arg("-v").output().is_err() {
        return Err(format!(
            "`mvn` is not on PATH: installing epubcheck {EPUBCHECK_VERSION} from Maven Central needs Maven \
             (Debian: `apt-get install -y maven`)"
        ));
    }
    let _ = fs::remove_dir_all(&lib);
    fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let pom = format!(
        "<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n  <modelVersion>4.0.0</modelVersion>\n  \
         <groupId>local.xtask</groupId>\n  <artifactId>epubcheck-install</artifactId>\n  <version>1</version>\n  \
         <packaging>pom</packaging>\n  <dependencies>\n    <dependency>\n      <groupId>org.w3c</groupId>\n      \
         <artifactId>epubcheck</artifactId>\n      <version>{EPUBCHECK_VERSION}</version>\n    </dependency>\n  \
         </dependencies>\n</project>\n"
    );
    fs::write(dir.join("pom.xml"), pom).map_err(|e| e.to_string())?;
    let mut mvn = Command::new("mvn");
    mvn.current_dir(&dir)
        .args(["-B", "-q", "-f", "pom.xml"])
        .arg(format!("{MAVEN_DEPENDENCY_PLUGIN}:copy-dependencies"))
        .arg(format!("-DoutputDirectory={}", lib.display()));
    run(
        mvn,
        &format!(
            "installing epubcheck {EPUBCHECK_VERSION} and its libraries from Maven Central into .tools/epubcheck/"
        ),
    )?;
    if !lib.join(format!("epubcheck-{EPUBCHECK_VERSION}.jar")).exists() {
        return Err(format!("Maven ran, but {} has no epubcheck-{EPUBCHECK_VERSION}.jar", lib.display()));
    }
    Ok(lib)
}

/// epubcheck over the EPUB: every message is printed; any error or fatal
/// error fails.
fn check_epub(epub: &Path) -> Result {
    let lib = epubcheck()?;
    let out = Command::new("java")
        .arg("-cp")
        .arg(lib.join("*"))
        .arg("com.adobe.epubcheck.tool.Checker")
        .arg(epub)
        .output()
        .map_err(|e| format!("java (epubcheck): {e}"))?;
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let summary = log.lines().find(|l| l.starts_with("Messages:")).unwrap_or("(no summary)").to_owned();
    let errors: Vec<&str> = log.lines().filter(|l| l.starts_with("ERROR") || l.starts_with("FATAL")).collect();
    let warnings = log.lines().filter(|l| l.starts_with("WARNING")).count();
    eprintln!("xtask: epubcheck {EPUBCHECK_VERSION}: {summary}");
    if warnings > 0 {
        for line in log.lines().filter(|l| l.starts_with("WARNING")) {
            eprintln!("xtask: epubcheck: {line}");
        }
    }
    if !out.status.success() || !errors.is_empty() {
        return Err(format!(
            "epubcheck {EPUBCHECK_VERSION} found errors in {} ({summary}):\n{}",
            epub.display(),
            if errors.is_empty() { log.clone() } else { errors.join("\n") }
        ));
    }
    check_epub_reading(epub)
}

/// What a reader of the EPUB sees: its chapters fold nothing away and hold
/// no sentence that only makes sense on screen, its stylesheets keep code
/// unjustified, and a chapter with code and an opened fold, rendered in
/// Chromium as an e-reader would (the EPUB's own XHTML and stylesheets),
/// sets its code left-aligned and wrapping and shows the opened fold.
fn check_epub_reading(epub: &Path) -> Result {
    let dir = work_dir().join("epub-read");
    let _ = fs::remove_dir_all(&dir);
    let unzip = Command::new("python3")
        .args(["-m", "zipfile", "-e"])
        .arg(epub)
        .arg(&dir)
        .output()
        .map_err(|e| format!("python3 -m zipfile (to unpack the EPUB): {e}"))?;
    if !unzip.status.success() {
        return Err(format!("unpacking {}: {}", epub.display(), String::from_utf8_lossy(&unzip.stderr)));
    }
    let mut files = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).map_err(|e| e.to_string())?.flatten() {
            let path = entry.path();
            if path.is_dir() { stack.push(path) } else { files.push(path) }
        }
    }
    files.sort();
    let mut problems = Vec::new();
    let css: String = files
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "css"))
        .map(|p| fs::read_to_string(p).unwrap_or_default())
        .collect();
    let epub_css = fs::read_to_string(root().join("theme/epub.css")).map_err(|e| e.to_string())?;
    if !css.contains(epub_css.trim()) {
        problems.push("the EPUB's stylesheets do not hold theme/epub.css".to_owned());
    }
    let pages: Vec<(&PathBuf, String)> = files
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "xhtml" || x == "html"))
        .map(|p| (p, fs::read_to_string(p).unwrap_or_default()))
        .collect();
    for (path, text) in &pages {
        let name = path.strip_prefix(&dir).unwrap_or(path).display();
        if text.contains("<details") {
            problems.push(format!("{name} folds content in <details>, which many e-readers never open"));
        }
        if text.contains("web-only") || text.contains("print-only") {
            problems.push(format!("{name} still holds a web-only or print-only span"));
        }
        if text.contains("href=\"downloads/") {
            problems.push(format!("{name} links to downloads/, which the EPUB does not hold"));
        }
    }
    problems.extend(cover_and_title_problems(&dir));
    let eye = fs::read_to_string(root().join("src/introduction.md")).map_err(|e| e.to_string())?;
    for sentence in span_texts(&eye, "<span class=\"web-only\">") {
        let flat = flatten(&sentence);
        if pages.iter().any(|(_, text)| flatten(&strip_tags(text)).contains(&flat)) {
            problems.push(format!("the EPUB says {sentence:?}, which only makes sense on screen"));
        }
    }
    match pages.iter().find(|(_, text)| text.contains("class=\"details") && text.contains("<pre")) {
        None => problems.push("no chapter of the EPUB has both code and an opened fold to render".to_owned()),
        Some((path, text)) => match render_epub_page(path, text) {
            Ok(seen) => problems.extend(seen),
            Err(e) => problems.push(e),
        },
    }
    let _ = fs::remove_dir_all(&dir);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{} reads badly:\n  - {}", epub.display(), problems.join("\n  - ")))
    }
}

/// The unpacked EPUB in `dir` has the cover as its cover image (a PNG of
/// [`COVER_SIZE`] with something drawn on it), and its first page in
/// reading order opens with the title page.
fn cover_and_title_problems(dir: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let opf_path = dir.join("OEBPS/content.opf");
    let Ok(opf) = fs::read_to_string(&opf_path) else {
        return vec![format!("no {} in the EPUB", opf_path.display())];
    };
    let attr = |tag: &str, name: &str| {
        tag.split(&format!("{name}=\"")).nth(1).and_then(|v| v.split('"').next()).map(str::to_owned)
    };
    let items: Vec<&str> = opf.split("<item ").skip(1).map(|t| t.split('>').next().unwrap_or_default()).collect();
    match items.iter().find(|t| attr(t, "properties").is_some_and(|p| p.split(' ').any(|x| x == "cover-image"))) {
        None => problems.push("the EPUB's package names no cover-image".to_owned()),
        Some(item) => {
            let png = dir.join("OEBPS").join(attr(item, "href").unwrap_or_default());
            let size = fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
            if png_size(&png) != Some(COVER_SIZE) || size < 50_000 {
                problems.push(format!(
                    "the EPUB's cover image {} is not a drawn {}x{} PNG ({size} bytes, {:?})",
                    png.display(),
                    COVER_SIZE.0,
                    COVER_SIZE.1,
                    png_size(&png)
                ));
            }
        }
    }
    let first = opf.split("<itemref ").nth(1).and_then(|t| attr(t, "idref")).and_then(|id| {
        items.iter().find(|t| attr(t, "id").as_deref() == Some(id.as_str())).and_then(|t| attr(t, "href"))
    });
    let title = book_title().unwrap_or_default();
    match first.map(|href| fs::read_to_string(dir.join("OEBPS").join(&href)).map(|text| (href, text))) {
        Some(Ok((href, text))) => {
            let opening = text.split("<body").nth(1).unwrap_or_default();
            let page = opening.split("</section>").next().unwrap_or_default();
            if !page.contains("class=\"pdf-title-page\"")
                || !page.contains(&escape(&title))
                || !page.contains("Checked against")
                || !page.contains("Edition of ")
            {
                problems.push(format!(
                    "the EPUB's first page, {href}, does not open with the title page (title, edition, versions)"
                ));
            }
        }
        _ => problems.push("cannot find the EPUB's first page in reading order".to_owned()),
    }
    problems
}

/// The text of every span of `html` that starts with `open`, tags removed.
fn span_texts(html: &str, open: &str) -> Vec<String> {
    html.split(open)
        .skip(1)
        .filter_map(|piece| piece.split_once("</span>").map(|(inner, _)| decode_entities(&strip_tags(inner))))
        .collect()
}

/// Renders one EPUB chapter in headless Chromium with a script that reads
/// the computed styles back; returns what is wrong with it.
fn render_epub_page(path: &Path, text: &str) -> Result<Vec<String>> {
    const PROBE: &str = r#"<script><![CDATA[
window.addEventListener('load', () => {
  const seen = { pre: 0, justified: 0, unwrapped: 0, folds: 0, hiddenFolds: 0, lines: 0, wrapped: 0, badWraps: 0 };
  for (const pre of document.querySelectorAll('pre')) {
    seen.pre++;
    const styles = [pre, ...pre.querySelectorAll('code')].map(el => getComputedStyle(el));
    if (styles.some(s => s.textAlign === 'justify')) seen.justified++;
    if (styles.some(s => s.whiteSpace !== 'pre-wrap' && s.whiteSpace !== 'break-spaces')) seen.unwrapped++;
  }
  // A wrapped code line goes on to the right of where its text started.
  for (const line of document.querySelectorAll('pre.lines .line')) {
    seen.lines++;
    const text = line.firstChild;
    if (!text || text.nodeType !== 3) continue;
    const all = document.createRange();
    all.selectNodeContents(line);
    const rects = Array.from(all.getClientRects()).filter(r => r.width > 0);
    const firstTop = Math.min(...rects.map(r => r.top));
    const below = rects.filter(r => r.top > firstTop + 1);
    if (!below.length) continue;
    seen.wrapped++;
    const lead = text.data.length - text.data.trimStart().length;
    const start = document.createRange();
    start.setStart(text, lead);
    start.setEnd(text, lead + 1);
    if (Math.min(...below.map(r => r.left)) < start.getBoundingClientRect().left - 0.5) seen.badWraps++;
  }
  for (const fold of document.querySelectorAll('.details')) {
    seen.folds++;
    const code = fold.querySelector('pre');
    const box = (code || fold).getBoundingClientRect();
    if (!(box.height > 0 && box.width > 0)) seen.hiddenFolds++;
  }
  const out = document.createElementNS('http://www.w3.org/1999/xhtml', 'pre');
  out.id = 'epub-probe';
  out.textContent = 'PROBE ' + JSON.stringify(seen) + ' END';
  document.body.appendChild(out);
});
]]></script>"#;
    let Some(end) = text.rfind("</body>") else { return Err(format!("{}: no </body>", path.display())) };
    let probe = path.with_file_name("epub-probe.xhtml");
    fs::write(&probe, format!("{}{PROBE}{}", &text[..end], &text[end..])).map_err(|e| e.to_string())?;
    let profile = work_dir().join(format!("chromium-epub-{}", std::process::id()));
    let out = Command::new(chromium()?)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--window-size=600,900", "--virtual-time-budget=5000", "--dump-dom"])
        .arg(format!("file://{}", probe.display()))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("Chromium (rendering an EPUB chapter): {e}"))?;
    let _ = fs::remove_dir_all(&profile);
    let dom = String::from_utf8_lossy(&out.stdout);
    // "PROBE {": the script's own text has "PROBE '" instead.
    let Some(json) = dom.split("PROBE {").nth(1).and_then(|rest| rest.split(" END").next()).map(|j| format!("{{{j}"))
    else {
        return Err(format!(
            "rendering {} in Chromium gave no probe result ({}): {}",
            path.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or_default()
        ));
    };
    let json = decode_entities(&json);
    let number = |key: &str| {
        json.split(&format!("\"{key}\":")).nth(1).and_then(|r| r.split([',', '}']).next()?.trim().parse::<u32>().ok())
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut problems = Vec::new();
    let lines = (number("lines"), number("wrapped"), number("badWraps"));
    match (number("pre"), number("justified"), number("unwrapped"), number("folds"), number("hiddenFolds")) {
        (Some(pre), Some(justified), Some(unwrapped), Some(folds), Some(hidden)) => {
            let (Some(lines), Some(wrapped), Some(bad)) = lines else {
                return Ok(vec![format!("{name}: unreadable probe result {json:?}")]);
            };
            eprintln!(
                "xtask: EPUB {name} in Chromium: {pre} code blocks ({lines} lines, {wrapped} wrapped), {folds} opened folds"
            );
            if lines == 0 || wrapped == 0 {
                problems.push(format!(
                    "{name}: {lines} code lines as blocks, {wrapped} of them wrapped at 600 px: nothing shows whether a \
                     wrapped line keeps its indentation"
                ));
            }
            if bad > 0 {
                problems.push(format!(
                    "{name}: {bad} of {wrapped} wrapped code lines go on left of where their text started"
                ));
            }
            if justified > 0 {
                problems.push(format!("{name}: {justified} of {pre} code blocks are justified"));
            }
            if unwrapped > 0 {
                problems.push(format!("{name}: {unwrapped} of {pre} code blocks do not wrap long lines"));
            }
            if folds == 0 || hidden > 0 {
                problems.push(format!("{name}: {hidden} of {folds} opened folds show nothing"));
            }
        }
        _ => problems.push(format!("{name}: unreadable probe result {json:?}")),
    }
    Ok(problems)
}

// ------------------------------------------------------------- poppler

/// A program of poppler-utils (`pdftotext`, `pdftohtml`), installed with
/// apt-get when it is missing and we are root.
fn poppler(program: &str) -> Result<PathBuf> {
    let bin = PathBuf::from("/usr/bin").join(program);
    if bin.exists() {
        return Ok(bin);
    }
    if Command::new(program).arg("-v").output().is_ok() {
        return Ok(PathBuf::from(program));
    }
    apt_install("poppler-utils", &bin)?;
    Ok(bin)
}

/// `apt-get install -y PACKAGE` (after `apt-get update` if that fails), as
/// root; `bin` must exist afterwards.
fn apt_install(package: &str, bin: &Path) -> Result {
    let how = format!("install it as root: `apt-get update && apt-get install -y {package}`");
    let uid = Command::new("id").arg("-u").output().map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned());
    if uid.ok().as_deref() != Some("0") {
        return Err(format!("{} is missing and only root can install {package}: {how}", bin.display()));
    }
    let apt_get = |args: &[&str]| {
        let mut cmd = Command::new("apt-get");
        cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        cmd
    };
    let what = format!("{} is missing: apt-get install -y {package}", bin.display());
    if run(apt_get(&["install", "-y", package]), &what).is_err() {
        run(apt_get(&["update"]), &format!("apt-get update, then apt-get install -y {package} again"))
            .map_err(|e| format!("{e}: {how}"))?;
        run(apt_get(&["install", "-y", package]), &format!("apt-get install -y {package}"))
            .map_err(|e| format!("{e}: {how}"))?;
    }
    if !bin.exists() {
        return Err(format!("apt-get installed {package} but {} is missing: {how}", bin.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn headings_get_the_ids_mdbook_gives_them() {
        let md = "# Title\n\n## A panic with `RecoverPanic` off\n\ntext\n\n```md\n## not a heading\n```\n\n\
                  ### With [`go vet`](x.md), pinned\n\n## A panic with `RecoverPanic` off\n";
        assert_eq!(
            super::heading_anchors(md),
            "# Title\n\n<a id=\"a-panic-with-recoverpanic-off\"></a>\n\n## A panic with `RecoverPanic` off\n\ntext\n\n\
             ```md\n## not a heading\n```\n\n<a id=\"with-go-vet-pinned\"></a>\n\n### With [`go vet`](x.md), pinned\n\n\
             <a id=\"a-panic-with-recoverpanic-off-1\"></a>\n\n## A panic with `RecoverPanic` off\n"
        );
    }

    #[test]
    fn links_to_chapters_point_at_their_epub_pages() {
        let md = "See [8-5](ch08-kube-runtime.md#side-by-side), [8](ch08.md), \
                  [up](https://x.io/a.md), [f](../listings/a.md) and `v[..](x)`, then ](";
        assert_eq!(
            super::chapter_links_as_html(md),
            "See [8-5](ch08-kube-runtime.html), [8](ch08.html), \
             [up](https://x.io/a.md), [f](../listings/a.md) and `v[..](x)`, then ]("
        );
    }

    use super::*;

    #[test]
    fn download_links_become_the_archives_names() {
        let caption = "<span class=\"caption\">Listing 1-1: x · download <a href=\"downloads/listing-01-01.tar.gz\">the crate</a> and <a href=\"downloads/listing-01-01-go.tar.gz\">the Go twin</a></span>\n";
        assert_eq!(
            downloads_as_names(caption),
            "<span class=\"caption\">Listing 1-1: x · download the crate (<code>listing-01-01.tar.gz</code>) and the Go twin (<code>listing-01-01-go.tar.gz</code>)</span>\n"
        );
        let other = "<a href=\"ch01.html\">ch 1</a> <a href=\"downloads/broken";
        assert_eq!(downloads_as_names(other), other);
        let markdown = "Take [the guard](downloads/guard.tar.gz) and [ch 1](ch01.md).";
        assert_eq!(markdown_downloads_as_names(markdown), "Take the guard (`guard.tar.gz`) and [ch 1](ch01.md).");
    }

    #[test]
    fn epub_code_lines_hang_from_their_own_indentation() {
        let md = "Text `x`.\n\n```go\nif a < b {\n\tf(\"&\")\n\n}\n```\nAfter.\n";
        assert_eq!(
            code_as_lines(md),
            "Text `x`.\n\n<pre class=\"lines\"><code class=\"language-go\">\
             <span class=\"line\" style=\"padding-left: 2ch; text-indent: -2ch\">if a &lt; b {</span>\
             <span class=\"line\" style=\"padding-left: 6ch; text-indent: -6ch\">\tf(&quot;&amp;&quot;)</span>\
             <span class=\"line\" style=\"padding-left: 2ch; text-indent: -2ch\"><br/></span>\
             <span class=\"line\" style=\"padding-left: 2ch; text-indent: -2ch\">}</span></code></pre>\nAfter.\n"
        );
        // A longer fence holds a shorter one; an info string names the class.
        let nested = "````markdown\n```rust\n````\n";
        assert!(code_as_lines(nested).contains("class=\"language-markdown\""));
        assert!(code_as_lines(nested).contains(">```rust</span>"));
    }

    #[test]
    fn the_epub_opens_what_the_web_folds_and_keeps_the_paper_sentence() {
        let markdown = "Hidden<span class=\"web-only\">, and the eye\nicon</span><span class=\"print-only\">; in the repo</span>.\n\n<details class=\"output\">\n<summary>All of it</summary>\n\n```text\nx\n```\n\n</details>\n";
        assert_eq!(
            for_epub(markdown),
            code_as_lines(
                "Hidden<span class=\"offline\">; in the repo</span>.\n\n<div class=\"details output\">\n<p class=\"summary\">All of it</p>\n\n```text\nx\n```\n\n</div>\n"
            )
        );
    }

    #[test]
    fn the_title_page_lists_the_versions_and_the_licence() {
        let list = "<!-- generated -->\n- k8s.io/client-go v0.37.2\n- kube-apiserver v1.37.2, etcd v3.7.3\n  (chapter 9)\n- `tokio` 1.54.1\n";
        let versions = list_items(list);
        assert_eq!(
            versions,
            vec!["k8s.io/client-go v0.37.2", "kube-apiserver v1.37.2, etcd v3.7.3 (chapter 9)", "tokio 1.54.1"]
        );
        let edition = Edition {
            description: "A & B".into(),
            date: "4 December 2026".into(),
            commit: Some("abc1234".into()),
            versions,
        };
        let page = title_page("Book", &edition);
        assert!(page.contains("<p class=\"pdf-title\">Book</p>\n<p class=\"pdf-subtitle\">A &amp; B</p>"), "{page}");
        assert!(page.contains("Edition of 4 December 2026, from commit abc1234"), "{page}");
        assert!(page.contains("<li>kube-apiserver v1.37.2, etcd v3.7.3 (chapter 9)</li>"), "{page}");
        assert!(page.contains("Apache License, Version 2.0"), "{page}");
    }

    #[test]
    fn finds_footers_and_empty_space() {
        let word =
            |y: f64, text: &str| Word { x_min: 100.0, y_min: y, x_max: 110.0, y_max: y + 10.0, text: text.into() };
        let page =
            Page { width: 595.0, height: 842.0, words: vec![word(50.0, "top"), word(400.0, "mid"), word(825.0, "7")] };
        assert_eq!(page.footer().iter().map(|w| w.text.as_str()).collect::<Vec<_>>(), vec!["7"]);
        let text_area = 842.0 - 2.0 * MARGIN_PT;
        assert!((page.empty_share() - (842.0 - MARGIN_PT - 410.0) / text_area).abs() < 1e-9);
    }

    #[test]
    fn reads_the_summary_with_parts_and_numbers() {
        let text = "# Summary\n\n[Introduction](introduction.md)\n\n# Part I: The loop\n\n1. [The loop](ch01.md)\n1. [The switch](ch02.md)\n\n# Part II\n\n1. [Priority](ch06.md)\n\n---\n\n[Cheat sheet](cheat-sheet.md)\n";
        let entries = summary(text);
        assert_eq!(
            entries,
            vec![
                Entry::Chapter { number: None, title: "Introduction".into(), file: "introduction.md".into() },
                Entry::Part("Part I: The loop".into()),
                Entry::Chapter { number: Some(1), title: "The loop".into(), file: "ch01.md".into() },
                Entry::Chapter { number: Some(2), title: "The switch".into(), file: "ch02.md".into() },
                Entry::Part("Part II".into()),
                Entry::Chapter { number: Some(3), title: "Priority".into(), file: "ch06.md".into() },
                Entry::Chapter { number: None, title: "Cheat sheet".into(), file: "cheat-sheet.md".into() },
            ]
        );
        assert_eq!(chapters(&entries), vec!["Introduction", "The loop", "The switch", "Priority", "Cheat sheet"]);
    }

    #[test]
    fn hides_the_lines_mdbook_hides_in_rust_blocks_only() {
        let markdown = "Text\n# Heading\n\n```rust,noplayground\n# extern crate tokio;\n#\nfn main() {\n    # let hidden = 1;\n    ## shown_attr();\n    #[derive(Debug)]\n}\n```\n\n```go\n# not rust\n```\n";
        assert_eq!(
            for_epub(markdown),
            code_as_lines(
                "Text\n# Heading\n\n```rust,noplayground\nfn main() {\n    # shown_attr();\n    #[derive(Debug)]\n}\n```\n\n```go\n# not rust\n```\n"
            )
        );
    }

    #[test]
    fn turns_an_inline_svg_into_an_image() {
        let markdown = "Before\n\n<svg xmlns=\"http://www.w3.org/2000/svg\" aria-label=\"Retry & delay\">\n<text>1ms</text>\n</svg>\n\nAfter\n";
        let out = for_epub(markdown);
        assert!(
            out.starts_with(
                "Before\n\n<p><img class=\"figure\" alt=\"Retry &amp; delay\" src=\"data:image/svg+xml;base64,"
            ),
            "{out}"
        );
        assert!(out.ends_with("\"/></p>\n\nAfter\n"), "{out}");
        assert!(!out.contains("<svg"));
    }

    #[test]
    fn encodes_base64() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn rewrites_only_the_named_json_strings() {
        let json = r#"[{"root":"/b","content":"not the book"},{"items":[{"Chapter":{"name":"content","content":"a\n\"b\" \u00e9 \ud83d\ude00","sub_items":[]}},"Separator"],"x":{"content" : "c"}}]"#;
        let book = json::second_element(json).unwrap();
        assert!(book.starts_with(r#"{"items""#) && book.ends_with(r#""c"}}"#), "{book}");
        let out = json::rewrite_strings(book, "content", |s| format!("<{s}>"));
        assert_eq!(
            out,
            r#"{"items":[{"Chapter":{"name":"content","content":"<a\n\"b\" é 😀>","sub_items":[]}},"Separator"],"x":{"content" : "<c>"}}"#
        );
    }

    #[test]
    fn reads_captions_outputs_and_figures() {
        let markdown = "<span class=\"caption\">Listing 3-4: the retry curve with a 100ms..30s limiter, <code>Forget</code> &amp; more words here · <code>listings/x/src/main.rs</code></span>\n\n```text\n{{#include ../listings/ch03/listing-03-04/output.txt}}\n```\n{{#include ../listings/ch03/listing-03-03/output.svg}}\n{{#include ../listings/ch03/listing-03-04/src/main.rs:anchor}}\n";
        assert_eq!(captions_of(markdown), vec!["Listing 3-4: the retry curve with a 100ms..30s"]);
        assert_eq!(
            output_includes(markdown),
            vec!["../listings/ch03/listing-03-04/output.txt", "../listings/ch03/listing-03-03/output.svg"]
        );
        assert_eq!(distinctive_line("a\n\nlonger line\nlonger line\nmid line\n"), Some("mid line"));
        assert_eq!(svg_texts("<svg><text x=\"1\">1ms</text><text>&lt;10s</text></svg>"), vec!["1ms", "<10s"]);
    }

    #[test]
    fn flattens_typography_and_whitespace() {
        assert_eq!(flatten("queue\u{2019}s \u{201C}done\u{201D}\n  \u{FB01}rst \u{2026}"), "queue's\"done\"first...");
    }

    #[test]
    fn reads_code_blocks_without_hidden_lines() {
        let html = "<p>x</p><pre><code class=\"language-rust\"><span class=\"boring\">use std;\n</span>fn main() {\n    let a = 1 &lt; 2;\n}</code></pre><pre><code>out</code></pre>";
        assert_eq!(code_blocks(html), vec!["fn main() {\n    let a = 1 < 2;\n}", "out"]);
    }

    #[test]
    fn reads_pdftotext_bbox_and_finds_chapter_starts() {
        let bbox = r#"<doc><page width="595.0" height="842.0">
<word xMin="40.0" yMin="50.0" xMax="80.0" yMax="60.0">Contents</word>
</page>
<page width="595.0" height="842.0">
<word xMin="90.0" yMin="40.0" xMax="120.0" yMax="60.0">loop</word>
<word xMin="40.0" yMin="40.5" xMax="80.0" yMax="60.0">The</word>
<word xMin="40.0" yMin="80.0" xMax="80.0" yMax="90.0">a&amp;b</word>
</page></doc>"#;
        let pages = parse_bbox(bbox);
        assert_eq!(pages.len(), 2);
        assert_eq!(pages[1].first_line(), "The loop");
        assert_eq!(pages[1].words[2].text, "a&b");
        assert_eq!(chapter_starts(&pages, &["The loop"]), Ok(vec![2]));
        assert_eq!(chapter_starts(&pages, &["Other"]), Err(vec!["\"Other\"".to_owned()]));
    }

    #[test]
    fn finds_h1_ids_and_builds_the_contents_page() {
        let html = r##"<main><h1 id="introduction"><a class="header" href="#introduction">Introduction</a></h1><p>..</p><h1 id="the-loop"><a href="#the-loop">The loop</a></h1></main>"##;
        let ids = h1_ids(html);
        assert_eq!(ids, vec![("introduction".into(), "Introduction".into()), ("the-loop".into(), "The loop".into())]);
        let entries = summary("[Introduction](introduction.md)\n# Part I\n1. [The loop](ch01.md)\n");
        let page = contents_page(&entries, &ids, Some(&[2, 5])).unwrap();
        assert!(page.contains("<li class=\"pdf-part\">Part I</li>"), "{page}");
        assert!(page.contains("<a href=\"#the-loop\"><span class=\"pdf-chapter-title\">1. The loop</span> <span class=\"pdf-page\">5</span></a>"), "{page}");
        let wrong = summary("[Preface](introduction.md)\n");
        assert!(contents_page(&wrong, &ids, None).unwrap_err().contains("no <h1> \"Preface\""));
        let printed = pdf_page("<body><main><details class=\"twin\"><details></main>", "TOC").unwrap();
        assert_eq!(printed, "<body><main>\nTOC<details open class=\"twin\"><details open></main>");
    }
}
