//! `{{#run listing-NN-MM}}` in a chapter: the command that runs a listing,
//! in the reader's language.
//!
//! A chapter says "Run it with {{#run listing-05-01}}:" and this writes the
//! commands from what the listing's folder holds, so that no chapter types
//! one by hand: `cargo run -p listing-05-01` when it has a crate, and when it
//! has a Go twin, the twin's own command from the repository's root (`go -C
//! listings run ./…/twin` for a main package, `go -C …/twin test` for a test
//! package, which needs `testing/synctest` and may read files beside it).
//! `{{#run listing-09-01 kubeconfig}}` prefixes both with the kubeconfig that
//! `cargo xtask cluster up` writes. `{{#run listing-02-01 go}}` (or `rust`)
//! writes one side's command only, for a line that introduces the output
//! that side prints on its own (a twin with its own `output.txt`).
//!
//! Each command is a `span.run` with its `data-lang`. Where a listing has
//! both, `theme/tabs.css` shows only the one of the reader's language on the
//! screen (`html[data-language]`, set by `theme/tabs.js`); without the script,
//! on paper and in the EPUB, both show, joined by "or, for the Go twin". A
//! listing in one language only says so to the reader of the other.

use std::cell::RefCell;
use std::fs;
use std::path::{Path, PathBuf};

use crate::Result;

/// mdBook's book JSON with `page` applied to every chapter's markdown, then
/// its `{{#run …}}` expanded: what a preprocessor that draws pages hands back.
pub fn each_chapter(book: &str, page: impl Fn(&str) -> String) -> Result<String> {
    let listings = crate::root().join("listings");
    let errors = RefCell::new(Vec::new());
    let book = crate::json::rewrite_strings(book, "content", |markdown| match expand(&page(markdown), &listings) {
        Ok(expanded) => expanded,
        Err(e) => {
            errors.borrow_mut().push(e);
            String::new()
        }
    });
    let errors = errors.into_inner();
    if errors.is_empty() { Ok(book) } else { Err(errors.join("\n")) }
}

/// `markdown` with every `{{#run …}}` replaced by its commands, and every
/// `{{#output …}}` by the line of output it quotes
/// ([`crate::output_lines`]). An unknown listing, or a directive this does
/// not understand, is an error that names it.
pub fn expand(markdown: &str, listings: &Path) -> Result<String> {
    let ran = expand_with(markdown, "{{#run ", |spec| commands(spec, listings))?;
    expand_with(&ran, "{{#output ", |spec| crate::output_lines::render(spec, listings))
}

/// Every `{open}SPEC}}` (`{{#run SPEC}}`, say) of `markdown` replaced by
/// `f(SPEC)`; code blocks and code spans are left alone, so the book can
/// show the directive itself. Every directive `f` refuses is named in the
/// error.
fn expand_with(markdown: &str, open: &str, mut f: impl FnMut(&str) -> Result<String>) -> Result<String> {
    let mut errors = Vec::new();
    let mut out = String::with_capacity(markdown.len());
    // The open fence, as CommonMark reads it: its character and length. A
    // shorter fence inside it (a patch that quotes a ```release-note block)
    // neither closes it nor opens another.
    let mut fence: Option<(char, usize)> = None;
    for line in markdown.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        if let Some(c) = marker.filter(|_| line.len() - trimmed.len() <= 3) {
            let len = trimmed.chars().take_while(|x| *x == c).count();
            match fence {
                None if len >= 3 => fence = Some((c, len)),
                Some((open_c, open_len)) if c == open_c && len >= open_len && trimmed[len..].trim().is_empty() => {
                    fence = None;
                    out.push_str(line);
                    continue;
                }
                _ => {}
            }
        }
        if fence.is_some() || !line.contains(open) {
            out.push_str(line);
            continue;
        }
        let mut rest = line;
        // Backticks seen so far on the line: an odd count is an open span.
        let mut ticks = 0;
        while let Some(at) = rest.find(open) {
            ticks += rest[..at].matches('`').count();
            let Some(len) = rest[at..].find("}}") else { break };
            out.push_str(&rest[..at]);
            if ticks % 2 == 1 {
                out.push_str(&rest[at..at + len + 2]);
            } else {
                match f(rest[at + open.len()..at + len].trim()) {
                    Ok(html) => out.push_str(&html),
                    Err(e) => errors.push(e),
                }
            }
            rest = &rest[at + len + 2..];
        }
        out.push_str(rest);
    }
    if errors.is_empty() { Ok(out) } else { Err(errors.join("\n")) }
}

/// What one listing's folder offers a reader to run.
#[derive(Debug, PartialEq)]
struct Runnable {
    /// `listing-05-01`
    name: String,
    /// `ch05-silent-stall/listing-05-01`, under `listings/`
    folder: String,
    has_crate: bool,
    /// `Some(true)` for a twin that is a test package.
    twin_is_test: Option<bool>,
}

fn find(name: &str, listings: &Path) -> Result<Runnable> {
    let valid = name
        .strip_prefix("listing-")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    if !valid {
        return Err(format!("{{{{#run {name}}}}}: expected a listing's name, such as listing-05-01"));
    }
    let mut chapters: Vec<PathBuf> = fs::read_dir(listings)
        .map_err(|e| format!("reading {}: {e}", listings.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    chapters.sort();
    let dir = chapters.iter().map(|c| c.join(name)).find(|d| d.is_dir()).ok_or_else(|| {
        format!("{{{{#run {name}}}}}: no folder {name} in any chapter folder of {}", listings.display())
    })?;
    let twin = dir.join("twin");
    let twin_is_test = twin.is_dir().then(|| {
        fs::read_dir(&twin)
            .map(|entries| {
                entries.filter_map(|e| e.ok()).any(|e| e.file_name().to_string_lossy().ends_with("_test.go"))
            })
            .unwrap_or(false)
    });
    let has_crate = dir.join("Cargo.toml").is_file();
    if !has_crate && twin_is_test.is_none() {
        return Err(format!("{{{{#run {name}}}}}: {} has neither a Cargo.toml nor a twin/", dir.display()));
    }
    let folder = dir.strip_prefix(listings).map_err(|e| e.to_string())?.to_string_lossy().replace('\\', "/");
    Ok(Runnable { name: name.to_owned(), folder, has_crate, twin_is_test })
}

fn commands(spec: &str, listings: &Path) -> Result<String> {
    let mut words = spec.split_whitespace();
    let name = words.next().unwrap_or_default();
    let (mut kubeconfig, mut only) = (false, None);
    for word in words {
        match word {
            "kubeconfig" => kubeconfig = true,
            "rust" | "go" => only = Some(word),
            other => {
                return Err(format!(
                    "{{{{#run {spec}}}}}: unknown word {other:?} (the options are `kubeconfig`, and `rust` or `go`)"
                ));
            }
        }
    }
    let mut runnable = find(name, listings)?;
    match only {
        Some("rust") if !runnable.has_crate => return Err(format!("{{{{#run {spec}}}}}: {name} has no crate")),
        Some("go") if runnable.twin_is_test.is_none() => {
            return Err(format!("{{{{#run {spec}}}}}: {name} has no twin"));
        }
        Some("rust") => runnable.twin_is_test = None,
        Some(_) => runnable.has_crate = false,
        None => {}
    }
    Ok(markup(&runnable, kubeconfig, only.is_some()))
}

/// The commands of `r` as the page shows them; `one_side` for a line about
/// one side's own output, which says nothing to the other side's reader.
fn markup(r: &Runnable, kubeconfig: bool, one_side: bool) -> String {
    let rust = r.has_crate.then(|| {
        let env = if kubeconfig { "KUBECONFIG=target/cluster/kubeconfig " } else { "" };
        format!("{env}cargo run -p {}", r.name)
    });
    let go = r.twin_is_test.map(|is_test| {
        // `go -C` changes the directory of the program it runs too, so the
        // kubeconfig's path must not be relative.
        let env = if kubeconfig { "KUBECONFIG=$PWD/target/cluster/kubeconfig " } else { "" };
        if is_test {
            format!("{env}go -C listings/{}/twin test", r.folder)
        } else {
            format!("{env}go -C listings run ./{}/twin", r.folder)
        }
    });
    let span =
        |lang: &str, command: &str| format!("<span class=\"run\" data-lang=\"{lang}\"><code>{command}</code></span>");
    match (rust, go) {
        (Some(command), None) | (None, Some(command)) if one_side => {
            let lang = if r.has_crate { "rust" } else { "go" };
            format!("<span class=\"run-line one-side\">{}</span>", span(lang, &command))
        }
        (Some(rust), Some(go)) => format!(
            "<span class=\"run-line twinned\">{}<span class=\"run-or\">, or for the Go twin </span>{}</span>",
            span("rust", &rust),
            span("go", &go)
        ),
        (Some(rust), None) => format!(
            "<span class=\"run-line\">{}<span class=\"run-note\" data-lang=\"go\"> (Rust only: this listing has no Go \
             twin)</span></span>",
            span("rust", &rust)
        ),
        (None, Some(go)) => format!(
            "<span class=\"run-line\">{}<span class=\"run-note\" data-lang=\"rust\"> (Go only: it runs Go's own \
             code)</span></span>",
            span("go", &go)
        ),
        (None, None) => unreachable!("find() refuses a listing with neither"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runnable(has_crate: bool, twin_is_test: Option<bool>) -> Runnable {
        Runnable {
            name: "listing-05-01".into(),
            folder: "ch05-silent-stall/listing-05-01".into(),
            has_crate,
            twin_is_test,
        }
    }

    #[test]
    fn a_listing_with_a_twin_gets_both_commands() {
        let html = markup(&runnable(true, Some(false)), false, false);
        assert_eq!(
            html,
            "<span class=\"run-line twinned\"><span class=\"run\" data-lang=\"rust\"><code>cargo run -p \
             listing-05-01</code></span><span class=\"run-or\">, or for the Go twin </span><span class=\"run\" \
             data-lang=\"go\"><code>go -C listings run ./ch05-silent-stall/listing-05-01/twin</code></span></span>"
        );
        let test = markup(&runnable(true, Some(true)), true, false);
        assert!(test.contains("<code>KUBECONFIG=target/cluster/kubeconfig cargo run -p listing-05-01</code>"));
        assert!(test.contains(
            "<code>KUBECONFIG=$PWD/target/cluster/kubeconfig go -C listings/ch05-silent-stall/listing-05-01/twin \
             test</code>"
        ));
    }

    #[test]
    fn a_listing_in_one_language_says_so_to_the_other() {
        assert!(
            markup(&runnable(true, None), false, false)
                .contains("<span class=\"run-note\" data-lang=\"go\"> (Rust only")
        );
        let go = markup(&runnable(false, Some(false)), false, false);
        assert!(go.contains("<span class=\"run-note\" data-lang=\"rust\"> (Go only") && !go.contains("cargo"));
    }

    #[test]
    fn directives_in_code_are_left_alone() {
        let md = "Run it with {{#run a}}: `{{#run b}}`, then {{#run c x}}.\n```\n{{#run d}}\n```\n";
        let mut seen = Vec::new();
        let out = expand_with(md, "{{#run ", |spec| {
            seen.push(spec.to_owned());
            Ok(format!("<{spec}>"))
        })
        .unwrap();
        assert_eq!(seen, ["a", "c x"]);
        assert_eq!(out, "Run it with <a>: `{{#run b}}`, then <c x>.\n```\n{{#run d}}\n```\n");
    }

    #[test]
    fn a_longer_fence_holds_a_shorter_one() {
        // A patch whose description quotes a ```release-note block, shown in
        // a four-backtick fence: the inner fences close nothing.
        let md = "````diff\n```release-note\n```\n{{#run d}}\n````\n{{#run e}}\n";
        let mut seen = Vec::new();
        expand_with(md, "{{#run ", |spec| {
            seen.push(spec.to_owned());
            Ok(String::new())
        })
        .unwrap();
        assert_eq!(seen, ["e"]);
    }

    #[test]
    fn the_books_listings_are_found_and_a_wrong_name_is_named() {
        let listings = crate::root().join("listings");
        let r = find("listing-07-04", &listings).unwrap();
        assert_eq!(
            r,
            Runnable {
                name: "listing-07-04".into(),
                folder: "ch07-whole-controller/listing-07-04".into(),
                has_crate: true,
                twin_is_test: Some(true)
            }
        );
        let err = expand("Run {{#run listing-99-99}}.", &listings).unwrap_err();
        assert!(err.contains("{{#run listing-99-99}}: no folder listing-99-99"), "{err}");
        let go = expand("Go: {{#run listing-07-04 go}}.", &listings).unwrap();
        assert_eq!(
            go,
            "Go: <span class=\"run-line one-side\"><span class=\"run\" data-lang=\"go\"><code>go -C \
             listings/ch07-whole-controller/listing-07-04/twin test</code></span></span>."
        );
        let err = expand("Run {{#run listing-03-03 go}}.", &listings).unwrap_err();
        assert!(err.contains("listing-03-03 has no twin"), "{err}");
        let err = expand("Run {{#run listing-07-04 quickly}}.", &listings).unwrap_err();
        assert!(err.contains("unknown word \"quickly\""), "{err}");
    }
}
