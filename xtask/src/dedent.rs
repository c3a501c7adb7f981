//! `cargo xtask dedent-preprocessor`: what book.toml runs after mdBook's
//! `links` for the HTML renderer, so that a fragment included from inside a
//! function starts at column 0 on the page.
//!
//! mdBook 0.5.4 keeps an anchored include's indentation as it is in the file
//! (`take_anchored_lines` and `take_rustdoc_include_anchored_lines` in
//! mdbook-driver's `links/take_lines.rs` copy each line whole), so code shown
//! from inside `main` or a Go func would start four spaces or a tab in and
//! push its long lines past the text column. This removes, from each `rust`
//! and `go` block, the indentation its visible lines share. A hidden Rust
//! line (`# …`, which `rustdoc_include` makes of every line outside the
//! anchor) keeps its own, and the block's fence gets the class `dedent-N`,
//! N the columns removed: when the eye icon reveals the hidden lines,
//! `theme/reveal.js` gives the shown lines their N columns back, so the
//! whole program reads at its true indentation.
//!
//! In a Go block it also writes each `// want` comment of the analyzer's
//! testdata (chapter 10) as the reader will meet it: a report as
//! `// ← stall: …`, the text `analysistest` expects with its regular
//! expression's escapes removed, and a fact as `// fact Get: …`. The test
//! files keep their `// want` comments; the page does not show the syntax.
//!
//! It also writes each `{{#run listing-NN-MM}}` as the commands that run
//! the listing, in the reader's language ([`crate::run_lines`]).
//!
//! The HTML renderer runs it (so the PDF, printed from print.html, has it
//! too), and the EPUB's preprocessor calls [`code_blocks`] itself. `mdbook
//! test` and the expanded markdown that skeptic reads get the code as it is
//! in the listing: Rust does not care about indentation, but a string
//! literal that spans lines would.

use std::io::{Read, Write};

use crate::{Result, json};

/// `supports RENDERER` first, then the book as JSON on stdin.
pub fn preprocessor(args: &[String]) -> Result {
    if args.first().map(String::as_str) == Some("supports") {
        // book.toml names the renderer, so mdBook does not ask; if it does,
        // any renderer that draws the page may have it.
        return match args.get(1).map(String::as_str) {
            Some("html" | "epub") => Ok(()),
            other => Err(format!("dedent-preprocessor is for renderers that draw pages, not {other:?}")),
        };
    }
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).map_err(|e| format!("reading the book from mdBook: {e}"))?;
    let book = json::second_element(&input).ok_or("mdBook sent no [context, book] array")?;
    let book = crate::run_lines::each_chapter(book, code_blocks)?;
    std::io::stdout().write_all(book.as_bytes()).map_err(|e| e.to_string())
}

/// `markdown` with every `rust` and `go` fenced block dedented. Other blocks
/// (outputs, YAML, shell) are left as they are: their indentation is content.
pub fn code_blocks(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    // The open fence (its character, its length, whether its lines are Rust)
    // and the block's lines so far.
    let mut open: Option<(char, usize, bool)> = None;
    let mut fence = "";
    let mut block: Vec<&str> = Vec::new();
    for line in markdown.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        match open {
            None => {
                if indent <= 3
                    && let Some(c) = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')
                {
                    let len = trimmed.chars().take_while(|x| *x == c).count();
                    if len >= 3 {
                        let lang = trimmed[len..].trim().split([',', ' ', '\t']).next().unwrap_or_default();
                        if lang == "rust" || lang == "go" {
                            open = Some((c, len, lang == "rust"));
                            // Written when the block closes, with its class.
                            fence = line;
                            continue;
                        }
                    }
                }
                out.push_str(line);
            }
            Some((c, len, rust)) => {
                let closing = trimmed.trim_end();
                if indent <= 3 && closing.len() >= len && closing.chars().all(|x| x == c) {
                    if rust {
                        let (code, removed) = dedent(&block, true);
                        out.push_str(&with_dedent_class(fence, removed, &block));
                        out.push_str(&code);
                    } else {
                        let shown: Vec<String> = block.iter().map(|l| want_as_shown(l)).collect();
                        let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
                        out.push_str(fence);
                        out.push_str(&dedent(&shown, false).0);
                    }
                    out.push_str(line);
                    block.clear();
                    open = None;
                } else {
                    block.push(line);
                }
            }
        }
    }
    // A block never closed runs to the end of the chapter, as in CommonMark.
    if open.is_some() {
        out.push_str(fence);
        out.push_str(&dedent(&block, open.is_some_and(|(_, _, rust)| rust)).0);
    }
    out
}

/// The opening fence of a Rust block, with `dedent-N` added to its info
/// string when its shown lines lost N columns (spaces) and it has hidden
/// lines to reveal.
fn with_dedent_class(fence: &str, removed: &str, block: &[&str]) -> String {
    let has_hidden = block.iter().any(|l| hidden(l.trim_end_matches(['\n', '\r'])).is_some());
    if removed.is_empty() || !has_hidden || removed.bytes().any(|b| b != b' ') {
        return fence.to_owned();
    }
    let body = fence.trim_end_matches(['\n', '\r']);
    format!("{body},dedent-{}{}", removed.len(), &fence[body.len()..])
}

/// A Go line with its `// want` comment, if any, as the page shows it.
fn want_as_shown(line: &str) -> String {
    let body = line.trim_end_matches(['\n', '\r']);
    let newline = &line[body.len()..];
    let Some(at) = body.find("// want ") else { return line.to_owned() };
    let mut rest = &body[at + "// want ".len()..];
    let (mut reports, mut facts) = (Vec::new(), Vec::new());
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        // `name:` before a quoted text makes it a fact about `name`.
        let name_len = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
        let (name, after) = if name_len > 0 && rest[name_len..].starts_with(':') {
            (Some(&rest[..name_len]), &rest[name_len + 1..])
        } else {
            (None, rest)
        };
        let Some(quote) = after.chars().next().filter(|c| *c == '`' || *c == '"') else {
            return line.to_owned(); // not a form this knows: shown as it is
        };
        let Some(end) = after[1..].find(quote) else { return line.to_owned() };
        let text = without_line_numbers(&unescape(&after[1..1 + end]));
        match name {
            Some(name) => facts.push(format!("{name}: {text}")),
            None => reports.push(text),
        }
        rest = &after[end + 2..];
    }
    let code = body[..at].trim_end();
    let comment = if !reports.is_empty() {
        format!("// ← {}", reports.join("; "))
    } else {
        format!("// fact {}", facts.join("; "))
    };
    if code.is_empty() { format!("{}{comment}{newline}", &body[..at]) } else { format!("{code} {comment}{newline}") }
}

/// A report as a fragment shows it: without the line numbers it names
/// (" on line 44", " (line 48)"), which are the test file's and which a
/// fragment of it does not show; the report points at the line it sits on.
fn without_line_numbers(report: &str) -> String {
    let mut out = report.to_owned();
    for (open, close) in [(" on line ", ""), (" (line ", ")")] {
        let mut from = 0;
        while let Some(at) = out[from..].find(open).map(|i| i + from) {
            let digits = out[at + open.len()..].chars().take_while(char::is_ascii_digit).count();
            let end = at + open.len() + digits;
            if digits > 0 && out[end..].starts_with(close) {
                out.replace_range(at..end + close.len(), "");
            } else {
                from = at + open.len();
            }
        }
    }
    out
}

/// A regular expression of `analysistest` as plain text: `\(` is `(`, and
/// `.*` (any text) is an ellipsis.
fn unescape(re: &str) -> String {
    let re = re.replace(".*", "…");
    let mut out = String::with_capacity(re.len());
    let mut chars = re.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A Rust line that mdBook hides (mdbook-html's `hide_lines_rust`: `#`
/// followed by a space or by nothing), split into what comes up to the `# `
/// and the line's own text.
fn hidden(body: &str) -> Option<(&str, &str)> {
    let trimmed = body.trim_start();
    let after = trimmed.strip_prefix('#')?;
    let marker = body.len() - after.len();
    match after.chars().next() {
        None => Some((body, "")),
        Some(' ') => Some((&body[..marker + 1], &after[1..])),
        Some(_) => None,
    }
}

/// The lines of one block without the leading whitespace that all its
/// visible, non-blank lines share, and that whitespace. Hidden Rust lines
/// keep theirs.
fn dedent<'a>(lines: &[&'a str], rust: bool) -> (String, &'a str) {
    let bodies: Vec<&str> = lines.iter().map(|l| l.trim_end_matches(['\n', '\r'])).collect();
    let visible = |body: &str| !body.trim().is_empty() && (!rust || hidden(body).is_none());
    let mut shared: Option<&str> = None;
    for body in bodies.iter().copied().filter(|b| visible(b)) {
        let ws = &body[..body.len() - body.trim_start().len()];
        shared = Some(match shared {
            None => ws,
            Some(s) => {
                let common = s.bytes().zip(ws.bytes()).take_while(|(a, b)| a == b).count();
                &s[..common]
            }
        });
    }
    let shared = shared.unwrap_or_default();
    let mut out = String::new();
    for (line, body) in lines.iter().zip(&bodies) {
        let newline = &line[body.len()..];
        if shared.is_empty() || (rust && hidden(body).is_some()) {
            out.push_str(line);
            continue;
        }
        if !body.trim().is_empty() {
            out.push_str(body.strip_prefix(shared).unwrap_or(body));
        }
        out.push_str(newline);
    }
    (out, shared)
}

#[cfg(test)]
mod tests {
    use super::{code_blocks, without_line_numbers};

    #[test]
    fn a_fragment_from_inside_main_starts_at_column_0() {
        let md = "Text\n\n```rust,noplayground\n# extern crate tokio;\n# fn main() {\n#     let q = 1;\n    \
                  if q > 0 {\n        println!(\"{q}\");\n\n    }\n#     drop(q);\n# }\n```\n";
        assert_eq!(
            code_blocks(md),
            "Text\n\n```rust,noplayground,dedent-4\n# extern crate tokio;\n# fn main() {\n#     let q = 1;\n\
             if q > 0 {\n    println!(\"{q}\");\n\n}\n#     drop(q);\n# }\n```\n"
        );
    }

    #[test]
    fn go_loses_its_shared_tabs_and_other_blocks_keep_theirs() {
        let md = "```go\n\tif err != nil {\n\t\treturn err\n\t}\n```\n\n```text\n  a table\n  indented\n```\n";
        assert_eq!(
            code_blocks(md),
            "```go\nif err != nil {\n\treturn err\n}\n```\n\n```text\n  a table\n  indented\n```\n"
        );
    }

    #[test]
    fn a_shown_report_names_no_line_of_the_test_file() {
        assert_eq!(
            without_line_numbers(
                "stall: c.queue.Get() on line 44 hands out key, and the path where err != nil (line 48) is true"
            ),
            "stall: c.queue.Get() hands out key, and the path where err != nil is true"
        );
        assert_eq!(without_line_numbers("on line x (line )"), "on line x (line )");
    }

    #[test]
    fn a_want_comment_shows_the_report_or_the_fact() {
        let md = "```go\n\treturn true // want `stall: c.queue.Get\\(\\) on line 44 hands out key`\n\
                  func (q *w) Get() (string, bool) { // want Get:`handsOut\\[0\\] shutdown\\[1\\]`\n\
                  \tq.Done(k) // want `stall: .* the loop goes back` `panic: q.Done`\n```\n\
                  ```text\nx // want `kept`\n```\n";
        assert_eq!(
            code_blocks(md),
            "```go\n\treturn true // ← stall: c.queue.Get() hands out key\n\
             func (q *w) Get() (string, bool) { // fact Get: handsOut[0] shutdown[1]\n\
             \tq.Done(k) // ← stall: … the loop goes back; panic: q.Done\n```\n\
             ```text\nx // want `kept`\n```\n"
        );
    }

    #[test]
    fn a_block_at_column_0_and_its_doubled_hash_are_untouched() {
        let md = "````rust\n## not hidden\nfn main() {\n    let x = 1;\n}\n````\n";
        assert_eq!(code_blocks(md), md);
        // Mixed tabs and spaces share only what is the same.
        assert_eq!(code_blocks("```go\n\t  a\n\t b\n```\n"), "```go\n a\nb\n```\n");
    }
}
