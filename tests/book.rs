//! The rendered book: it builds without errors, every include resolves, every
//! result comes from a listing's committed output, and the seed's figures are
//! what the listings print.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::root;

/// The pinned mdBook: `MDBOOK` (set by `cargo xtask test`) or `.tools/bin/mdbook`.
fn mdbook() -> PathBuf {
    let path = std::env::var_os("MDBOOK").map(PathBuf::from).unwrap_or_else(|| root().join(".tools/bin/mdbook"));
    assert!(
        path.exists(),
        "mdBook not found at {}: run `cargo xtask test` (or `cargo xtask install-mdbook`)",
        path.display()
    );
    path
}

/// Builds the book at `book_root` into `dest` and returns the ERROR lines of
/// its log. mdBook 0.5 exits 0 after a missing include, so the log is the
/// only place a broken include shows.
fn build_errors(book_root: &Path, dest: &Path) -> Vec<String> {
    let out = Command::new(mdbook())
        .current_dir(book_root)
        .arg("build")
        .arg("--dest-dir")
        .arg(dest)
        .output()
        .expect("mdbook can be started");
    let log = String::from_utf8_lossy(&out.stderr).to_string();
    let mut errors: Vec<String> = log.lines().filter(|l| l.contains("ERROR")).map(str::to_owned).collect();
    if !out.status.success() {
        errors.push(format!("mdbook build exited with {}:\n{log}", out.status));
    }
    errors
}

fn chapters() -> Vec<(String, String)> {
    common::sorted_entries(&root().join("src"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md") && !p.ends_with("SUMMARY.md"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().to_string(), fs::read_to_string(&p).unwrap()))
        .collect()
}

/// The fenced code blocks of a chapter: (info string, body lines).
fn fences(markdown: &str) -> Vec<(String, Vec<String>)> {
    let mut blocks = Vec::new();
    // The open block and its fence's length: a longer fence holds a shorter
    // one, as CommonMark reads it.
    let mut current: Option<(String, Vec<String>, usize)> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|c| *c == '`').count();
        match current.as_mut() {
            None if ticks >= 3 => current = Some((trimmed[ticks..].trim().to_owned(), Vec::new(), ticks)),
            Some((_, _, open)) if ticks >= *open && trimmed[ticks..].trim().is_empty() => {
                let (info, body, _) = current.take().unwrap();
                blocks.push((info, body));
            }
            Some((_, body, _)) => body.push(line.to_owned()),
            None => {}
        }
    }
    blocks
}

#[test]
fn the_book_builds_without_errors_and_every_include_resolves() {
    let dest = root().join("target/book-check");
    let _ = fs::remove_dir_all(&dest);
    let errors = build_errors(&root(), &dest);
    assert!(errors.is_empty(), "mdbook build logged errors:\n{}", errors.join("\n"));
    for page in walk(&dest) {
        if page.extension().is_some_and(|e| e == "html") {
            let html = fs::read_to_string(&page).unwrap();
            assert!(!html.contains("{{#"), "{} holds an unresolved mdBook directive", page.display());
        }
    }
}

#[test]
fn a_missing_include_is_caught() {
    // The check above must be able to fail: a book with a broken include.
    let book = root().join("target/broken-book");
    let _ = fs::remove_dir_all(&book);
    fs::create_dir_all(book.join("src")).unwrap();
    fs::write(book.join("book.toml"), "[book]\ntitle = \"broken\"\n").unwrap();
    fs::write(book.join("src/SUMMARY.md"), "[Intro](intro.md)\n").unwrap();
    fs::write(book.join("src/intro.md"), "```text\n{{#include missing/output.txt}}\n```\n").unwrap();
    let errors = build_errors(&book, &book.join("out"));
    assert!(errors.iter().any(|e| e.contains("missing/output.txt")), "not caught: {errors:?}");
}

/// One reading order: the loop to the stall (Part I), the priority queue,
/// kube-rs, a real API server and the analyzer (Part II), then the
/// appendices. A chapter's number in the sidebar
/// is the number in its file name, its listings' folder and its listings.
#[test]
fn the_summary_lists_the_chapters_in_reading_order() {
    let summary = fs::read_to_string(root().join("src/SUMMARY.md")).unwrap();
    let titles = [
        "Introduction",
        "My object stopped reconciling",
        "The loop as it is written today",
        "The four-way switch",
        "The retry curve",
        "What Forget actually touches",
        "The silent stall",
        "The priority queue",
        "A whole controller: metrics and panics",
        "The same loop in kube-rs",
        "On a real API server",
        "Catch the stall in your own code",
        "Further reading",
        "Closing note",
        "Spoken drills",
        "Performance against Go",
        "Cheat sheet",
    ];
    let numbered: Vec<&str> = summary.lines().filter(|l| l.trim_start().starts_with("1. [")).collect();
    for (i, line) in numbered.iter().enumerate() {
        let file = line.split_once("](").unwrap().1.trim_end_matches(')');
        assert!(
            file.starts_with(&format!("ch{:02}-", i + 1)),
            "SUMMARY.md: numbered chapter {} is {file}, whose name says otherwise",
            i + 1
        );
        let listings = root().join("listings").join(file.trim_end_matches(".md"));
        for dir in common::sorted_entries(&root().join("listings"))
            .iter()
            .filter(|d| d.file_name().unwrap().to_string_lossy().starts_with(&format!("ch{:02}-", i + 1)))
        {
            assert_eq!(dir, &listings, "the listings of chapter {} are not in {}", i + 1, listings.display());
        }
    }
    let mut at = 0;
    for title in titles {
        let found = summary[at..].find(&format!("[{title}]"));
        let Some(offset) = found else { panic!("SUMMARY.md lacks [{title}] (after the previous chapter)") };
        at += offset;
        let target = summary[at..].split_once("](").unwrap().1.split_once(')').unwrap().0;
        let path = root().join("src").join(target);
        let text = fs::read_to_string(&path).unwrap_or_else(|_| panic!("{title}: {} is missing", path.display()));
        assert!(text.split_whitespace().count() > 150, "{title}: {} has too little prose", path.display());
    }
}

#[test]
fn every_output_block_is_an_include_and_every_code_block_comes_from_a_listing() {
    let mut problems = Vec::new();
    for (name, markdown) in chapters() {
        for (info, body) in fences(&markdown) {
            let directives: Vec<&String> = body.iter().filter(|l| l.starts_with("{{#")).collect();
            let visible: Vec<&String> =
                body.iter().filter(|l| !l.starts_with("{{#") && !l.starts_with("# ") && !l.trim().is_empty()).collect();
            let kind = info.split(',').next().unwrap_or("");
            let one_include = directives.len() == 1 && visible.is_empty();
            match kind {
                "text" | "console" if !one_include => {
                    problems.push(format!("{name}: a ```{info} block must be exactly one include of an output"))
                }
                "rust" | "compile_fail" | "go" if !one_include => {
                    problems.push(format!("{name}: a ```{info} block must show a listing through one include"))
                }
                "" => problems.push(format!("{name}: an untagged code block (rustdoc would compile it as Rust)")),
                _ => {}
            }
        }
        // The performance appendix is written whole by `cargo xtask perf
        // --write` from its measurement (checked below), not by hand.
        if markdown.starts_with(PERF_PAGE_STAMP) {
            continue;
        }
        for line in markdown.lines() {
            let t = line.trim();
            if t.starts_with('|') && t.ends_with('|') && t.matches('|').count() >= 3 {
                problems.push(format!("{name}: a hand-written table row: {t}"));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn every_committed_output_is_shown_in_the_book() {
    let all: String = chapters().into_iter().map(|(_, m)| m).collect();
    let mut missing = Vec::new();
    for dir in common::listing_dirs() {
        for file in
            [dir.join("output.txt"), dir.join("output.svg"), dir.join("diagram.svg"), dir.join("twin/output.txt")]
        {
            if file.exists() {
                let rel = file.strip_prefix(root()).unwrap().display().to_string();
                if !all.contains(&format!("{{{{#include ../{rel}}}}}")) {
                    missing.push(rel);
                }
            }
        }
    }
    assert!(missing.is_empty(), "outputs no chapter includes: {missing:?}");
}

/// A long output may show only the lines the text discusses
/// (`output.txt:FROM:TO`), but then the page folds the whole output right
/// below it, and the range lies inside the file.
#[test]
fn an_excerpt_of_an_output_has_the_whole_output_one_click_away() {
    let mut problems = Vec::new();
    let mut excerpts = 0;
    for (name, markdown) in chapters() {
        for (at, _) in markdown.match_indices("{{#include ../listings/") {
            let include = &markdown[at..at + markdown[at..].find("}}").expect("closed include") + 2];
            let Some(spec) = include.strip_prefix("{{#include ../").and_then(|i| i.strip_suffix("}}")) else {
                continue;
            };
            let Some((file, range)) = spec.split_once("output.txt:").map(|(f, r)| (format!("{f}output.txt"), r)) else {
                continue;
            };
            excerpts += 1;
            let lines = fs::read_to_string(root().join(&file)).map(|t| t.lines().count()).unwrap_or(0);
            let bounds: Vec<usize> = range.split(':').filter(|b| !b.is_empty()).map(|b| b.parse().unwrap()).collect();
            if bounds.iter().any(|&b| b == 0 || b > lines) {
                problems.push(format!("{name}: {include} reaches past the {lines} lines of {file}"));
            }
            let rest = &markdown[at + include.len()..];
            let whole = format!("{{{{#include ../{file}}}}}");
            let fold = rest.find("<details class=\"output\">");
            let folded =
                fold.is_some_and(|f| rest[f..].find(&whole).is_some_and(|w| !rest[f..f + w].contains("</details>")));
            let next_prose = rest.find("\n## ").unwrap_or(rest.len());
            if !folded || fold.unwrap() > next_prose {
                problems.push(format!("{name}: {include} shows part of an output; fold the whole of it below, in <details class=\"output\">"));
            }
        }
    }
    assert!(excerpts >= 2, "expected the excerpts of listings 5-5 and 7-4, found {excerpts}");
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The seed's figures, line for line, must be what the listings print.
#[test]
fn the_listings_print_the_seeds_figures() {
    let read = |rel: &str| {
        fs::read_to_string(root().join("listings").join(rel)).unwrap_or_else(|_| panic!("listings/{rel} is missing"))
    };
    // The seed's table: the limiter's delay and its running total to the
    // second, the first columns of listing 3-2's table.
    let ch03 = read("ch03-retry-curve/listing-03-02/output.txt");
    for row in [
        "failure             delay       cumulative",
        "1                     5ms               0s",
        "2                    10ms               0s",
        "4                    40ms               0s",
        "8                   640ms               1s",
        "10                  2.56s               5s",
        "12                 10.24s              20s",
        "14                 40.96s            1m22s",
        "16               2m43.84s            5m28s",
        "18              10m55.36s           21m51s",
        "19                 16m40s           38m31s",
        "20                 16m40s           55m11s",
        "22                 16m40s         1h28m31s",
    ] {
        assert_eq!(ch03.matches(row).count(), 1, "ch03, listing 3-2: {row:?} must start one line of the table");
    }
    let limiters = read("ch03-retry-curve/listing-03-01/output.txt");
    assert_eq!(
        limiters.matches("first failure hitting the 1000s cap: #19").count(),
        2,
        "ch03, listing 3-1: both default limiters must reach the cap first at failure #19"
    );
    assert!(limiters.contains("A and B differ at 0 of them"), "ch03, listing 3-1: the two limiters must agree");
    let ch02 = read("ch02-four-way-switch/listing-02-01/output.txt");
    assert!(ch02.contains("TerminalError message : terminal error: spec.replicas must be >= 0"));
    assert!(ch02.contains(": spec.replicas must be >= 0\n"));
    let ch04 = read("ch04-forget/listing-04-01/output.txt");
    for row in
        ["Len()=1\n", "Len()=1   <- still queued", "after Get()+Done()        Len()=0", "5ms   <- the base delay again"]
    {
        assert!(ch04.contains(row), "ch04 lacks {row:?}");
    }
    let ch05 = read("ch05-silent-stall/listing-05-01/output.txt");
    for row in ["Get() returns \"obj\"", "100 more Add(\"obj\") calls, then Len()=0", "Get() timed out after 500ms"] {
        assert!(ch05.contains(row), "ch05 lacks {row:?}");
    }
}

/// Each drill's answer ends with `Source: listing-NN-MM, "..."` (or, for
/// chapter 10, `Source: workqueuedone/<output>, "..."`), and the quoted text
/// is in that output.
#[test]
fn every_drill_answer_cites_a_printed_fact() {
    let drills = fs::read_to_string(root().join("src/spoken-drills.md")).unwrap();
    let answers = drills.matches("<details>").count();
    assert!(answers >= 9, "the drills have {answers} hidden answers; want at least one per chapter");
    let sources: Vec<&str> = drills.lines().filter_map(|l| l.trim().strip_prefix("Source: ")).collect();
    assert_eq!(sources.len(), answers, "every drill answer needs exactly one Source: line");
    // The folders under listings/ the drills cite, e.g. "ch05-silent-stall".
    let mut cited: Vec<String> = Vec::new();
    for source in sources {
        let (listing, quote) = source.split_once(", ").unwrap_or_else(|| panic!("malformed source {source:?}"));
        let quote = quote.trim().trim_matches('"');
        // Chapter 10's outputs are the analyzer's, in its own module.
        if let Some(file) = listing.strip_prefix("workqueuedone/") {
            let rel = format!("workqueuedone/{file}");
            let output = read_listing_file(&rel);
            assert!(output.lines().any(|l| l.contains(quote)), "listings/{rel} never prints {quote:?}");
            cited.push("ch10-".to_owned());
            continue;
        }
        let dir = common::listing_dirs()
            .into_iter()
            .find(|d| d.ends_with(listing))
            .unwrap_or_else(|| panic!("drill cites unknown {listing}"));
        let outputs = [dir.join("output.txt"), dir.join("twin/output.txt")]
            .iter()
            .filter_map(|p| fs::read_to_string(p).ok())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(outputs.lines().any(|l| l.contains(quote)), "{listing} never prints {quote:?}");
        cited.push(dir.parent().unwrap().file_name().unwrap().to_string_lossy().to_string());
    }
    // Every chapter, 1 to 10, is drilled: some drill's Source is one of the
    // listings in its folder, listings/chNN-... (chapter 10's, an output of
    // the analyzer's module).
    let uncited: Vec<String> = (1..=10)
        .map(|n| format!("ch{n:02}-"))
        .filter(|prefix| !cited.iter().any(|c| c.starts_with(prefix.as_str())))
        .collect();
    assert!(uncited.is_empty(), "no drill cites a listing of chapter(s) {uncited:?}: every chapter needs at least one");
}

fn read_listing_file(rel: &str) -> String {
    fs::read_to_string(root().join("listings").join(rel)).unwrap_or_else(|_| panic!("listings/{rel} is missing"))
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() { files.extend(walk(&path)) } else { files.push(path) }
    }
    files
}

/// The listings a chapter includes, in the order it first includes them:
/// (folder under listings/, listing number as readers see it, e.g. "5-1").
fn listings_of(markdown: &str) -> Vec<(String, String)> {
    let mut seen: Vec<(String, String)> = Vec::new();
    for part in markdown.split("../listings/").skip(1) {
        // A listing is where its code is shown; its output may be shown
        // again elsewhere (an appendix) without its caption.
        let file = part.split(['}', ':', ')', '"', ' ', '\n']).next().unwrap_or_default();
        if file.ends_with("output.txt") || file.ends_with(".svg") {
            continue;
        }
        let mut path = part.split('/');
        let (Some(chapter), Some(listing)) = (path.next(), path.next()) else { continue };
        let Some(number) = listing.strip_prefix("listing-") else { continue };
        let Some((n, m)) = number.split_once('-') else { continue };
        let (Ok(n), Ok(m)) = (n.parse::<u32>(), m.parse::<u32>()) else { continue };
        let dir = format!("{chapter}/{listing}");
        if !seen.iter().any(|(d, _)| *d == dir) {
            seen.push((dir, format!("{n}-{m}")));
        }
    }
    seen
}

/// The page that shows its listing without a caption.
const CHEAT_SHEET: &str = "cheat-sheet.md";

/// A command that runs a listing with a Go twin is never typed in the prose:
/// `{{#run listing-NN-MM}}` writes both and the page shows the reader's
/// language (xtask/src/run_lines.rs). Outside code blocks, no chapter names
/// `cargo run -p` of such a listing, or a `go run`/`go test` of a twin.
#[test]
fn a_listing_with_a_twin_is_run_through_the_run_directive() {
    let mut problems = Vec::new();
    for (name, markdown) in chapters() {
        let mut in_fence = false;
        for (n, line) in markdown.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_fence = !in_fence;
            }
            if in_fence || line.starts_with("<span class=\"caption\">") {
                continue;
            }
            for (at, _) in line.match_indices("cargo run -p listing-") {
                let listing: String = line[at + "cargo run -p ".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                let twinned = fs::read_dir(root().join("listings"))
                    .unwrap()
                    .filter_map(|e| e.ok())
                    .any(|chapter| chapter.path().join(&listing).join("twin").is_dir());
                if twinned {
                    problems.push(format!("{name}:{}: `cargo run -p {listing}` typed by hand; {listing} has a Go twin, so write {{{{#run {listing}}}}}", n + 1));
                }
            }
            if line.contains("/twin`") || line.contains("/twin test`") {
                problems.push(format!(
                    "{name}:{}: a twin's command typed by hand; write {{{{#run listing-NN-MM}}}}: {line}",
                    n + 1
                ));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// Every listing has one caption, `<span class="caption">Listing N-M: ...`,
/// in the chapter that shows it, and the captions come in numeric order. A
/// listing with both a Rust crate and a Go twin shows some of the twin's lines
/// too, folded (`<details class="twin">`), so the reader sees the same step
/// in both languages. Each caption links the listing's archives.
#[test]
fn every_listing_has_a_caption_and_twinned_listings_show_their_go() {
    let mut problems = Vec::new();
    for (name, markdown) in chapters() {
        let listings = listings_of(&markdown);
        let mut last = (0u32, 0u32);
        for (dir, number) in &listings {
            let caption = format!("<span class=\"caption\">Listing {number}:");
            // The cheat sheet is a page of its own, not a chapter's listing:
            // it names its program in the text and links its archives there.
            let own_page = name == CHEAT_SHEET;
            match markdown.matches(&caption).count() {
                0 if own_page && markdown.contains(&format!("`listings/{dir}`")) => {}
                1 if !own_page => {}
                count => problems.push(format!("{name}: {count} captions for listing {number} ({dir}); want one")),
            }
            let (n, m) = number.split_once('-').unwrap();
            let key = (n.parse().unwrap(), m.parse().unwrap());
            if key < last {
                problems.push(format!("{name}: listing {number} comes after listing {}-{}", last.0, last.1));
            }
            last = last.max(key);
            let folder = root().join("listings").join(dir);
            let twinned = folder.join("Cargo.toml").exists() && folder.join("twin").is_dir();
            if twinned && !own_page && !markdown.contains(&format!("../listings/{dir}/twin/")) {
                problems.push(format!("{name}: listing {number} has a Go twin, but no line of it is shown"));
            }
            // The caption links the archives `cargo xtask book` writes: the
            // crate, and the Go twin (or module, for a Go-only listing).
            let caption_line = if own_page {
                markdown.as_str()
            } else {
                markdown.lines().find(|l| l.contains(&caption)).unwrap_or_default()
            };
            let listing = dir.rsplit('/').next().unwrap();
            let mut archives = Vec::new();
            if folder.join("Cargo.toml").exists() {
                archives.push(format!("{listing}.tar.gz"));
            }
            if folder.join("twin").is_dir() {
                archives.push(format!("{listing}-go.tar.gz"));
            }
            for archive in archives {
                if !caption_line.contains(&format!("<a href=\"downloads/{archive}\">")) {
                    problems.push(format!("{name}: the caption of listing {number} does not link downloads/{archive}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// A listing shown in several fragments has its caption under the first
/// block it belongs to; every fragment of the same listing that comes after
/// that caption (before the next caption or heading) is marked as its
/// continuation, `<p class="continued">Listing N-M, continued</p>`, so that
/// no block looks uncaptioned.
/// A caption names the listing and where it is; the prose explains it. One
/// that runs past 250 characters on the page (its files and downloads
/// included) wraps to a paragraph of its own on a phone.
#[test]
fn every_caption_is_short() {
    const MAX: usize = 250;
    let mut problems = Vec::new();
    for (name, markdown) in chapters() {
        for line in markdown.lines().filter(|l| l.starts_with("<span class=\"caption\">")) {
            let mut text = String::new();
            let mut in_tag = false;
            for c in line.chars() {
                match c {
                    '<' => in_tag = true,
                    '>' => in_tag = false,
                    _ if !in_tag => text.push(c),
                    _ => {}
                }
            }
            let text = text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
            let length = text.trim().chars().count();
            if length > MAX {
                problems.push(format!("{name}: a caption of {length} characters: {}", text.trim()));
            }
        }
    }
    assert!(problems.is_empty(), "captions longer than {MAX} characters:\n{}", problems.join("\n"));
}

#[test]
fn a_fragment_after_its_listings_caption_is_marked_continued() {
    let mut problems = Vec::new();
    for (name, markdown) in chapters() {
        let lines: Vec<&str> = markdown.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(rest) = line.strip_prefix("<span class=\"caption\">Listing ") else { continue };
            let number = rest.split(':').next().unwrap_or_default();
            // What belongs to the listing: a `listing-N-M` folder, or else
            // exactly the files its caption names (chapter 10's testdata).
            let named: Vec<&str> = line.split("<code>listings/").skip(1).filter_map(|p| p.split('<').next()).collect();
            let Some(first) = named.first() else { continue };
            let folder = first
                .contains("/listing-")
                .then(|| first.split("/src/").next().unwrap().split("/twin/").next().unwrap());
            let belongs = |included: &str| match folder {
                Some(folder) => included.starts_with(folder),
                None => named.iter().any(|file| included.split([':', '}']).next() == Some(*file)),
            };
            let mut label_seen = false;
            // A hidden Rust line (`# extern crate …`) is no heading.
            let mut in_fence = false;
            // A Go twin right after its Rust block is one fragment with it,
            // under the same label (the two are tabs on the page).
            let mut in_twin = false;
            for later in &lines[i + 1..] {
                if later.starts_with("```") {
                    in_fence = !in_fence;
                }
                if !in_fence && later.starts_with("<div class=\"twin\"") {
                    in_twin = true;
                }
                if !in_fence && later.starts_with("</div>") {
                    in_twin = false;
                }
                if in_twin {
                    continue;
                }
                if !in_fence && (later.starts_with("<span class=\"caption\">") || later.starts_with('#')) {
                    break;
                }
                if *later == format!("<p class=\"continued\">Listing {number}, continued</p>") {
                    label_seen = true;
                }
                let Some(included) = later.split("include ../listings/").nth(1) else { continue };
                if included.contains("output.txt") || included.contains(".svg") || !belongs(included) {
                    continue;
                }
                if !label_seen {
                    problems.push(format!(
                        "{name}: a fragment of listing {number} after its caption is not marked continued: {later}"
                    ));
                }
                label_seen = false;
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// A reader who runs plain `mdbook test` gets every Rust block run with the
/// crates it uses: mdBook cannot be told where they are, so the book's
/// preprocessor for the test renderer builds them and runs the blocks of the
/// chapters being tested itself, a line per chapter, before mdBook's own
/// pass (which then finds them marked ignore). Here with `-c`; the suite
/// runs it over the whole book.
#[test]
fn plain_mdbook_test_runs_every_block_with_the_books_crates() {
    let mut cmd = Command::new(mdbook());
    cmd.current_dir(root()).args(["test", "-c", "What Forget actually touches"]);
    cmd.env_remove("FORGET_IS_NOT_DELETE_BOOK_LIB");
    let out = cmd.output().expect("mdbook can be started");
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "plain `mdbook test -c` failed:\n{log}");
    assert!(log.contains("mdbook test: ch04-forget.md: "), "no result line for the chapter:\n{log}");
    assert!(log.contains(" Rust blocks passed with the book's crates"), "no summary line:\n{log}");
    assert!(!log.contains("mdbook test: ch05-silent-stall.md"), "`-c` ran another chapter too:\n{log}");
    assert!(!log.contains("error[E0463]"), "a block could not find its crates:\n{log}");
}

/// A block that does not compile fails plain `mdbook test`, with rustdoc's
/// error for that block and the chapter to rerun. In a scratch book of one
/// chapter, inside the repository so that `cargo xtask` resolves.
#[test]
fn a_broken_block_fails_plain_mdbook_test_with_its_error() {
    let dir = root().join("target/broken-block-book");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("src")).unwrap();
    fs::write(
        dir.join("book.toml"),
        "[book]\ntitle = \"Broken\"\n\n[rust]\nedition = \"2024\"\n\n\
         [preprocessor.test-guide]\ncommand = \"cargo xtask mdbook-test-guide\"\nrenderers = [\"test\"]\n",
    )
    .unwrap();
    fs::write(dir.join("src/SUMMARY.md"), "# Summary\n\n- [Broken](broken.md)\n").unwrap();
    fs::write(
        dir.join("src/broken.md"),
        "# Broken\n\n```rust\n# extern crate faithful_workqueue;\nlet n: u32 = \"not a number\";\n```\n",
    )
    .unwrap();
    let out = Command::new(mdbook())
        .current_dir(&dir)
        .arg("test")
        .env_remove("FORGET_IS_NOT_DELETE_BOOK_LIB")
        .output()
        .expect("mdbook can be started");
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success(), "a broken block passed plain `mdbook test`:\n{log}");
    assert!(log.contains("mdbook test: broken.md: FAILED"), "no failure line for the chapter:\n{log}");
    assert!(log.contains("error[E0308]"), "rustdoc's error for the block is not shown:\n{log}");
    assert!(log.contains("mdbook test -c \"Broken\""), "no way to rerun the chapter alone:\n{log}");
    let _ = fs::remove_dir_all(&dir);
}

/// The first line of the performance appendix (`PAGE_STAMP` in
/// xtask/src/perf.rs), which only `cargo xtask perf --write` writes.
const PERF_PAGE_STAMP: &str =
    "<!-- Written whole from one measurement by `cargo xtask perf`, with its write flag; never edit it by hand. -->";

/// The performance appendix is the report of one run, as the xtask writes
/// it: its stamp, the run's date and machine, the Go comparison as the first
/// table after the begin marker, and the hardware's costs of the same run.
/// Only the perf run can refresh it (it needs a quiet machine), so this
/// checks the shape of what it wrote, and the xtask's own tests check the
/// writing.
#[test]
fn the_performance_page_is_a_whole_perf_report() {
    let xtask = fs::read_to_string(root().join("xtask/src/perf.rs")).unwrap();
    assert!(xtask.contains(&format!("{PERF_PAGE_STAMP:?}")), "PERF_PAGE_STAMP differs from xtask's PAGE_STAMP");
    let page = fs::read_to_string(root().join("src/performance.md"))
        .expect("src/performance.md: run `cargo xtask perf --write`");
    assert!(
        page.starts_with(&format!("{PERF_PAGE_STAMP}\n# Performance against Go\n")),
        "src/performance.md was not written by `cargo xtask perf --write`"
    );
    let (begin, end) = (page.find("<!-- perf:begin -->"), page.find("<!-- perf:end -->"));
    let (Some(begin), Some(end)) = (begin, end) else { panic!("src/performance.md lacks the perf markers") };
    assert!(begin < end, "src/performance.md: perf:end before perf:begin");
    let block = &page[begin..end];
    let stamp =
        block.lines().find(|l| l.starts_with("Measured ")).expect("the block says when and where it was measured");
    let date = stamp.trim_start_matches("Measured ");
    assert!(
        date.len() > 20 && date[..10].chars().all(|c| c.is_ascii_digit() || c == '-') && date.contains(" UTC on "),
        "the measurement's date and machine: {stamp}"
    );
    let first_table = block.lines().find(|l| l.starts_with('|')).expect("a table after perf:begin");
    assert_eq!(
        first_table,
        "| workload | Go ops/s | Rust ops/s | Rust/Go (runs) | floor ops/s | floor/Rust (runs) | targets |",
        "the first table after perf:begin is the Go comparison"
    );
    for row in ["cycles-1", "cycles-2", "cycles-8", "burst", "delaying", "priority", "queue"] {
        assert!(block.contains(&format!("| `{row}` |")), "the Go comparison lacks the row {row}");
    }
    for section in ["## What the hardware costs", "## What stands in the way", "## How the port is built"] {
        assert!(page[end..].contains(section), "src/performance.md lacks {section}");
    }
}
