//! The little SVG writing the two diagram kinds share.
//!
//! Every colour is a [`Paint`]: a light colour written as the element's
//! `fill` or `stroke` attribute, and a class (`f-ink`, `s-rule`, ...) that
//! `theme/listings.css` recolours in mdBook's dark themes. An SVG read
//! without the book's stylesheet (the file itself, the EPUB's image, the
//! PDF) keeps the light colours: dark ink on a white card.

use std::fmt::Write;

/// One colour of the picture: its name in the stylesheet, and its light value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paint {
    pub name: &'static str,
    pub light: &'static str,
}

/// The card the picture is drawn on.
pub const PAPER: Paint = Paint { name: "paper", light: "white" };
/// Text, arrows and the outlines that matter.
pub const INK: Paint = Paint { name: "ink", light: "#1f2328" };
/// Secondary text: times, column names, notes; lifelines.
pub const MUTED: Paint = Paint { name: "muted", light: "#57606a" };
/// Separators and the card's border.
pub const RULE: Paint = Paint { name: "rule", light: "#d0d7de" };
/// What changed, and what is held.
pub const ACCENT: Paint = Paint { name: "accent", light: "#0969da" };
/// The fill of a box: a lane's head, a key.
pub const BOX: Paint = Paint { name: "box", light: "#f6f8fa" };
/// The fill of a new key, and of the span a worker holds a key.
pub const NEW: Paint = Paint { name: "new", light: "#ddf4ff" };
/// The fill of the controller's switch.
pub const SWITCH: Paint = Paint { name: "switch", light: "#fff8c5" };

/// The attributes that paint an element: `fill` and `stroke` (`None`: no
/// fill, or no stroke) and the classes that let the stylesheet recolour them.
pub fn paint(fill: Option<Paint>, stroke: Option<Paint>) -> String {
    let mut attributes = String::new();
    let mut classes = Vec::new();
    match fill {
        Some(p) => {
            write!(attributes, r#"fill="{}""#, p.light).unwrap();
            classes.push(format!("f-{}", p.name));
        }
        None => attributes.push_str(r#"fill="none""#),
    }
    if let Some(p) = stroke {
        write!(attributes, r#" stroke="{}""#, p.light).unwrap();
        classes.push(format!("s-{}", p.name));
    }
    write!(attributes, r#" class="{}""#, classes.join(" ")).unwrap();
    attributes
}

/// Escapes text for an SVG text node or attribute.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// An SVG document being written: a card of the given size.
pub struct Svg {
    out: String,
}

impl Svg {
    /// The `width` attribute is the size the picture is drawn at where there
    /// is room; the book's stylesheet shrinks it to a narrower column, so
    /// `width` is chosen small enough that 12px labels stay legible on a
    /// phone.
    pub fn new(width: f64, height: f64, label: &str) -> Self {
        let mut out = String::new();
        writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" class="figure" font-family="sans-serif" font-size="12" role="img" aria-label="{}">"#,
            escape(label)
        )
        .unwrap();
        writeln!(
            out,
            r#"<rect x="0.5" y="0.5" width="{}" height="{}" rx="6" {}/>"#,
            width - 1.0,
            height - 1.0,
            paint(Some(PAPER), Some(RULE))
        )
        .unwrap();
        Self { out }
    }

    pub fn raw(&mut self, element: &str) {
        self.out.push_str(element);
        self.out.push('\n');
    }

    /// Text at (x, y) in `colour`; `anchor` is start, middle or end; `extra`
    /// adds attributes (never a fill: the colour is `colour`).
    pub fn text(&mut self, x: f64, y: f64, anchor: &str, colour: Paint, extra: &str, text: &str) {
        let extra = if extra.is_empty() { String::new() } else { format!(" {extra}") };
        self.raw(&format!(
            r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}" {}{extra}>{}</text>"#,
            paint(Some(colour), None),
            escape(text)
        ));
    }

    pub fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: Paint, extra: &str) {
        let extra = if extra.is_empty() { String::new() } else { format!(" {extra}") };
        self.raw(&format!(
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{}" class="s-{}"{extra}/>"#,
            stroke.light, stroke.name
        ));
    }

    /// A rectangle; `rx` rounds its corners.
    pub fn rect(
        &mut self,
        (x, y): (f64, f64),
        (width, height): (f64, f64),
        rx: f64,
        fill: Option<Paint>,
        stroke: Option<Paint>,
    ) {
        self.raw(&format!(
            r#"<rect x="{x:.1}" y="{y:.1}" width="{width:.1}" height="{height:.1}" rx="{rx}" {}/>"#,
            paint(fill, stroke)
        ));
    }

    pub fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }
}

/// The width of `text` at 12px sans-serif, estimated on the wide side (a
/// little wider than DejaVu Sans, which is wider than Arial): wide enough
/// for boxes and columns, without measuring fonts.
pub fn text_width(text: &str) -> f64 {
    text.chars().map(|c| if c.is_ascii_uppercase() || c == 'm' || c == 'w' { 8.5 } else { 6.6 }).sum()
}

/// The same for bold text.
pub fn bold_width(text: &str) -> f64 {
    text_width(text) * 1.15
}

/// The same for 12px monospace (DejaVu Sans Mono's advance is 7.2px).
pub fn mono_width(text: &str) -> f64 {
    text.chars().count() as f64 * 7.3
}

/// `text` cut at spaces into lines no wider than `width` (a word wider than
/// that is a line of its own).
pub fn wrap(text: &str, width: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if text_width(&format!("{line} {word}")) <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_owned()),
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paint_is_a_light_colour_and_a_class_for_each_of_fill_and_stroke() {
        assert_eq!(paint(Some(BOX), Some(INK)), r##"fill="#f6f8fa" stroke="#1f2328" class="f-box s-ink""##);
        assert_eq!(paint(None, Some(RULE)), r##"fill="none" stroke="#d0d7de" class="s-rule""##);
    }

    #[test]
    fn wrap_keeps_words_whole_and_lines_under_the_width() {
        let lines = wrap("square boxes: an ordered collection, head first", 150.0);
        assert_eq!(lines, ["square boxes: an", "ordered collection,", "head first"]);
        assert!(lines.iter().all(|l| text_width(l) <= 150.0));
        assert_eq!(wrap("unbreakable-word", 10.0), ["unbreakable-word"]);
    }
}
