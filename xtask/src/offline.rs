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
use crate::{MDBOOK_VERSION, Result, cargo, chromium, mdbook, root, run};

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
    let pdf_inputs = Inputs::new()
        .paths(&["book/print.html", "src/SUMMARY.md", "theme", "xtask/src/offline.rs"])
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
        .paths(&["src", "listings", "book.toml", "theme/listings.css", "xtask/src/offline.rs"])
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

/// The contents page: the book's title, then its parts and chapters, each
/// chapter a link to its heading with the page it starts on (blank in the
/// first print, whose only purpose is to find those pages).
fn contents_page(title: &str, entries: &[Entry], ids: &[(String, String)], pages: Option<&[usize]>) -> Result<String> {
    let mut html = format!(
        "<nav class=\"pdf-contents\">\n<p class=\"pdf-title\">{}</p>\n<p class=\"pdf-contents-heading\">Contents</p>\n<ol>\n",
        escape(title)
    );
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

/// The print page as the PDF shows it: the contents page first, and every
/// `<details>` open.
fn pdf_page(print_html: &str, contents: &str) -> Result<String> {
    let main = print_html.find("<main>").ok_or("print.html has no <main>")? + "<main>".len();
    let mut page = String::with_capacity(print_html.len() + contents.len());
    page.push_str(&print_html[..main]);
    page.push('\n');
    page.push_str(contents);
    page.push_str(&print_html[main..]);
    Ok(page.replace("<details>", "<details open>").replace("<details class=", "<details open class="))
}

/// Prints `book/print.html` to `pdf`, twice (see the module's comment).
fn print_pdf(book: &Path, pdf: &Path, chromium: &Path) -> Result {
    let print_html = fs::read_to_string(book.join("print.html"))
        .map_err(|e| format!("reading {}: {e} (render the book first)", book.join("print.html").display()))?;
    let summary_text = fs::read_to_string(root().join("src/SUMMARY.md")).map_err(|e| e.to_string())?;
    let entries = summary(&summary_text);
    let titles = chapters(&entries);
    let ids = h1_ids(&print_html);
    let book_title = book_title()?;

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
    fs::write(&page, pdf_page(&print_html, &contents_page(&book_title, &entries, &ids, None)?)?)
        .map_err(|e| e.to_string())?;
    chromium_print(chromium, &page, &first)?;
    let pages = read_pages(&first)?;
    let starts = chapter_starts(&pages, &titles).map_err(|missing| {
        format!(
            "in the first print, no page starts with the title of {}; every chapter starts on a new page under its `# ` heading",
            missing.join(", ")
        )
    })?;

    let contents = contents_page(&book_title, &entries, &ids, Some(&starts))?;
    fs::write(&page, pdf_page(&print_html, &contents)?).map_err(|e| e.to_string())?;
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

impl Page {
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
    let contents = pages.first().map(Page::text).unwrap_or_default();
    if !contents.contains("Contents") {
        problems.push("page 1 is not the contents page (no \"Contents\")".to_owned());
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

    // The outline (bookmarks) names every chapter.
    match outline(pdf) {
        Ok(outline) => {
            for title in &titles {
                if !outline.iter().any(|item| flatten(item) == flatten(title)) {
                    problems.push(format!("the PDF's outline (bookmarks) has no entry {title:?}"));
                }
            }
        }
        Err(e) => problems.push(e),
    }

    // Nothing outside the margins: a code line cut at the page edge would
    // end there, or past it.
    let mut outside = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        for word in &page.words {
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

/// The titles of the PDF's outline, from `pdftohtml -xml` (poppler).
fn outline(pdf: &Path) -> Result<Vec<String>> {
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
    let Some(start) = xml.find("<outline") else {
        return Err("the PDF has no outline (bookmarks): was it printed with --generate-pdf-document-outline?".into());
    };
    let mut items = Vec::new();
    for piece in xml[start..].split("<item").skip(1) {
        if let Some((_, rest)) = piece.split_once('>')
            && let Some((title, _)) = rest.split_once("</item>")
        {
            items.push(decode_entities(title).trim().to_owned());
        }
    }
    Ok(items)
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
    let xtask = env::current_exe().map_err(|e| format!("finding the xtask's own binary: {e}"))?;
    let output = format!(
        r#"{{"epub":{{"command":{},"epub-version":3,"curly-quotes":true,"additional-css":["theme/listings.css"]}}}}"#,
        json_string(&shell_quote(&renderer.to_string_lossy()))
    );
    let preprocessor = format!(
        r#"{{"epub-listings":{{"command":{},"renderers":["epub"],"after":["links"]}}}}"#,
        json_string(&format!("{} epub-preprocessor", shell_quote(&xtask.to_string_lossy())))
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
    let book = second_element(&input).ok_or("mdBook sent no [context, book] array")?;
    let book = rewrite_json_strings(book, "content", for_epub);
    std::io::stdout().write_all(book.as_bytes()).map_err(|e| e.to_string())
}

/// A chapter's markdown as mdbook-epub should render it: Rust blocks
/// without the lines mdBook hides, and an inline SVG as an `<img>`.
fn for_epub(markdown: &str) -> String {
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
                out.push_str(&without_downloads(line));
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

/// A caption without its download links: the archives sit beside the HTML
/// book (`book/downloads/`), and an EPUB holds no file it could point to.
fn without_downloads(line: &str) -> String {
    match (line.find(" · download <a href=\"downloads/"), line.rfind("</span>")) {
        (Some(from), Some(to)) if from < to => format!("{}{}", &line[..from], &line[to..]),
        _ => line.to_owned(),
    }
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

/// The second element of a top-level JSON array, as text.
pub(crate) fn second_element(json: &str) -> Option<&str> {
    let bytes = json.as_bytes();
    let mut depth = 0;
    let mut in_string = false;
    let mut escaped = false;
    let mut start = None;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return start.map(|s| json[s..i].trim());
                }
            }
            b',' if depth == 1 => {
                if start.is_some() {
                    return start.map(|s| json[s..i].trim());
                }
                start = Some(i + 1);
            }
            _ => {}
        }
    }
    None
}

/// Rewrites, with `f`, every string value of JSON object members named
/// `key`; everything else is copied as it is.
fn rewrite_json_strings(json: &str, key: &str, f: impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(json.len());
    let mut chars = json.char_indices().peekable();
    // The last string, and whether a ':' followed it.
    let mut last_string: Option<String> = None;
    let mut value_of: Option<String> = None;
    while let Some((i, c)) = chars.next() {
        if c != '"' {
            out.push(c);
            if c == ':' {
                value_of = last_string.take();
            } else if !c.is_whitespace() {
                value_of = None;
                last_string = None;
            }
            continue;
        }
        // A string: find its end.
        let mut end = i + 1;
        let mut escaped = false;
        for (j, d) in chars.by_ref() {
            if escaped {
                escaped = false;
            } else if d == '\\' {
                escaped = true;
            } else if d == '"' {
                end = j;
                break;
            }
        }
        let raw = &json[i + 1..end];
        if value_of.as_deref() == Some(key) {
            out.push_str(&json_string(&f(&json_unescape(raw))));
        } else {
            out.push('"');
            out.push_str(raw);
            out.push('"');
        }
        last_string = Some(json_unescape(raw));
        value_of = None;
    }
    out
}

fn json_unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let unit = u32::from_str_radix(&hex, 16).unwrap_or(0xFFFD);
                if (0xD800..0xDC00).contains(&unit) {
                    // A surrogate pair: the low half follows as \uXXXX.
                    let low: String = chars.by_ref().take(6).collect();
                    let low = low.strip_prefix("\\u").and_then(|h| u32::from_str_radix(h, 16).ok()).unwrap_or(0);
                    let c = 0x10000 + ((unit - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF);
                    out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                } else {
                    out.push(char::from_u32(unit).unwrap_or('\u{FFFD}'));
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
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
    Ok(())
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
    use super::*;

    #[test]
    fn an_epub_caption_loses_its_download_links_and_keeps_the_rest() {
        let caption = "<span class=\"caption\">Listing 1-1: x · <code>a.rs</code> · download <a href=\"downloads/listing-01-01.tar.gz\">the crate</a></span>\n";
        assert_eq!(without_downloads(caption), "<span class=\"caption\">Listing 1-1: x · <code>a.rs</code></span>\n");
        assert_eq!(without_downloads("plain text\n"), "plain text\n");
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
            "Text\n# Heading\n\n```rust,noplayground\nfn main() {\n    # shown_attr();\n    #[derive(Debug)]\n}\n```\n\n```go\n# not rust\n```\n"
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
        let book = second_element(json).unwrap();
        assert!(book.starts_with(r#"{"items""#) && book.ends_with(r#""c"}}"#), "{book}");
        let out = rewrite_json_strings(book, "content", |s| format!("<{s}>"));
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
        let page = contents_page("Book", &entries, &ids, Some(&[2, 5])).unwrap();
        assert!(page.contains("<li class=\"pdf-part\">Part I</li>"), "{page}");
        assert!(page.contains("<a href=\"#the-loop\"><span class=\"pdf-chapter-title\">1. The loop</span> <span class=\"pdf-page\">5</span></a>"), "{page}");
        let wrong = summary("[Preface](introduction.md)\n");
        assert!(contents_page("Book", &wrong, &ids, None).unwrap_err().contains("no <h1> \"Preface\""));
        let printed = pdf_page("<body><main><details class=\"twin\"><details></main>", "TOC").unwrap();
        assert_eq!(printed, "<body><main>\nTOC<details open class=\"twin\"><details open></main>");
    }
}
