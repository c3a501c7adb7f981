//! `{{#output listing-NN-MM "text"}}` in a chapter: one line of a listing's
//! committed output, quoted where the prose needs it.
//!
//! A page that cites what a listing prints (the triage page's symptoms, a
//! metric's value, a log line) names the listing and a piece of the line,
//! and this writes the whole line from the listing's `output.txt`, as inline
//! code. The prose then never restates an output by hand: when a listing
//! stops printing the line, the page no longer builds, and the error names
//! the page's directive and the file it searched.
//!
//! The line is the one that contains `text`; where several do, the one that
//! is `text` exactly (leading and trailing spaces aside); anything else is
//! an error. `{{#output listing-05-07 go "…"}}` reads the Go twin's own
//! `twin/output.txt`, and `rust` the crate's `output.txt`; with neither,
//! the listing's `output.txt`, or its twin's when it has only that.

use std::fs;
use std::path::Path;

use crate::Result;

/// The markup a directive becomes: the line, trimmed and escaped, as inline
/// code (mdBook passes HTML through; runs of spaces collapse on the page, as
/// they would in any inline code).
pub fn render(spec: &str, listings: &Path) -> Result<String> {
    let (line, _) = find_line(spec, listings)?;
    Ok(format!("<code class=\"output-line\">{}</code>", escape(line.trim())))
}

/// The line a directive quotes, and the file it came from.
fn find_line(spec: &str, listings: &Path) -> Result<(String, String)> {
    let directive = format!("{{{{#output {spec}}}}}");
    let usage = "expected {{#output listing-NN-MM [rust|go] \"text of the line\"}}";
    let (words, quoted) = spec.split_once('"').ok_or_else(|| format!("{directive}: {usage}"))?;
    let needle = quoted.strip_suffix('"').filter(|n| !n.is_empty() && !n.contains('"'));
    let needle = needle.ok_or_else(|| format!("{directive}: {usage}"))?;
    let mut words = words.split_whitespace();
    let name = words.next().ok_or_else(|| format!("{directive}: {usage}"))?;
    let side = words.next();
    if let Some(extra) = words.next() {
        return Err(format!("{directive}: unknown word {extra:?}; {usage}"));
    }
    let folder = listing_folder(name, listings)
        .ok_or_else(|| format!("{directive}: no folder {name} in any chapter folder of {}", listings.display()))?;
    let candidates: &[&str] = match side {
        None => &["output.txt", "twin/output.txt"],
        Some("rust") => &["output.txt"],
        Some("go") => &["twin/output.txt"],
        Some(other) => return Err(format!("{directive}: unknown word {other:?}; {usage}")),
    };
    let file = candidates
        .iter()
        .map(|c| folder.join(c))
        .find(|f| f.is_file())
        .ok_or_else(|| format!("{directive}: {} has no {}", folder.display(), candidates.join(" or ")))?;
    let shown = file.strip_prefix(listings.parent().unwrap_or(listings)).unwrap_or(&file).display().to_string();
    let text = fs::read_to_string(&file).map_err(|e| format!("{directive}: reading {shown}: {e}"))?;
    let containing: Vec<&str> = text.lines().filter(|l| l.contains(needle)).collect();
    let line = match containing[..] {
        [] => {
            return Err(format!(
                "{directive}: no line of {shown} contains {needle:?}; the listing's output changed, so the page \
                 that quotes it must change too"
            ));
        }
        [one] => one,
        _ => {
            let exact: Vec<&str> = containing.iter().copied().filter(|l| l.trim() == needle.trim()).collect();
            match exact[..] {
                [one] => one,
                _ => {
                    return Err(format!(
                        "{directive}: {} lines of {shown} contain {needle:?}; quote more of the one you mean:\n  {}",
                        containing.len(),
                        containing.join("\n  ")
                    ));
                }
            }
        }
    };
    Ok((line.to_owned(), shown))
}

/// `listings/<chapter>/<name>`, for the first chapter folder that has it.
fn listing_folder(name: &str, listings: &Path) -> Option<std::path::PathBuf> {
    if !name.starts_with("listing-") || name.contains('/') || name.contains("..") {
        return None;
    }
    let mut chapters: Vec<_> = fs::read_dir(listings).ok()?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    chapters.sort();
    chapters.into_iter().map(|c| c.join(name)).find(|d| d.is_dir())
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listings() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("output-lines-{}", std::process::id()));
        let listing = dir.join("ch01-x/listing-01-01");
        fs::create_dir_all(listing.join("twin")).unwrap();
        fs::write(listing.join("output.txt"), "a  1\nab 2\n  runs at 0s, 10s\n  runs at 0s, 10s, 20s\n<x> & y\n")
            .unwrap();
        fs::write(listing.join("twin/output.txt"), "from go\n").unwrap();
        dir
    }

    #[test]
    fn quotes_the_one_line_that_holds_the_text() {
        let dir = listings();
        let line = |spec: &str| find_line(spec, &dir).map(|(l, _)| l);
        assert_eq!(line("listing-01-01 \"ab\"").unwrap(), "ab 2");
        // Several lines hold it: the one that is it exactly.
        assert_eq!(line("listing-01-01 \"runs at 0s, 10s\"").unwrap(), "  runs at 0s, 10s");
        assert_eq!(line("listing-01-01 go \"from\"").unwrap(), "from go");
        assert_eq!(
            render("listing-01-01 \"<x>\"", &dir).unwrap(),
            "<code class=\"output-line\">&lt;x&gt; &amp; y</code>"
        );
        // Ambiguous, missing, malformed: each an error that names it.
        let err = line("listing-01-01 \"a\"").unwrap_err();
        assert!(err.contains("4 lines of ") && err.contains("ch01-x/listing-01-01/output.txt contain \"a\""), "{err}");
        let err = line("listing-01-01 \"zzz\"").unwrap_err();
        assert!(err.contains("no line of") && err.contains("output changed"), "{err}");
        assert!(line("listing-01-02 \"a\"").unwrap_err().contains("no folder listing-01-02"));
        assert!(line("listing-01-01 java \"a\"").unwrap_err().contains("unknown word \"java\""));
        assert!(line("listing-01-01 ab").unwrap_err().contains("expected {{#output"));
        assert!(line("listing-01-01 \"\"").unwrap_err().contains("expected {{#output"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
