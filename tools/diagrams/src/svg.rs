//! The little SVG writing the two diagram kinds share.

use std::fmt::Write;

/// Ink and paper: dark on white, legible whatever the page's theme.
pub const INK: &str = "#1f2328";
pub const MUTED: &str = "#57606a";
pub const RULE: &str = "#d0d7de";
pub const ACCENT: &str = "#0969da";

/// Escapes text for an SVG text node or attribute.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// An SVG document being written: a white card of the given size.
pub struct Svg {
    out: String,
}

impl Svg {
    pub fn new(width: f64, height: f64, label: &str) -> Self {
        let mut out = String::new();
        writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" font-family="sans-serif" font-size="12" role="img" aria-label="{}">"#,
            escape(label)
        )
        .unwrap();
        writeln!(out, r#"<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>"#).unwrap();
        Self { out }
    }

    pub fn raw(&mut self, element: &str) {
        self.out.push_str(element);
        self.out.push('\n');
    }

    /// Text at (x, y); `anchor` is start, middle or end; `extra` adds attributes.
    pub fn text(&mut self, x: f64, y: f64, anchor: &str, extra: &str, text: &str) {
        // Ink unless `extra` gives a fill of its own: an attribute may appear
        // only once in XML, and the EPUB's checker holds the book to that.
        let fill = if extra.contains("fill=") { String::new() } else { format!(r#" fill="{INK}""#) };
        let extra = if extra.is_empty() { String::new() } else { format!(" {extra}") };
        self.raw(&format!(
            r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}"{fill}{extra}>{}</text>"#,
            escape(text)
        ));
    }

    pub fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str, extra: &str) {
        let extra = if extra.is_empty() { String::new() } else { format!(" {extra}") };
        self.raw(&format!(r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}"{extra}/>"#));
    }

    pub fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }
}

/// The width of `text` at 12px sans-serif, estimated: wide enough for boxes
/// and columns, without measuring fonts.
pub fn text_width(text: &str) -> f64 {
    text.chars().map(|c| if c.is_ascii_uppercase() || c == 'm' || c == 'w' { 8.5 } else { 6.6 }).sum()
}
