//! What each queue holds after each call, as panels of boxes.
//!
//! The table is a header line and one line per call. Cells are split by
//! `|` into the call and one panel per queue; inside a panel, the header
//! names the columns (`FIFO dirty processing Len`) and each row gives, in
//! the same order, a list (`[a b]`, in order), a set (`{a b}`) or a number.
//! Each panel is drawn as a column of rows, one box per key, ordered
//! collections with arrows between their keys; a key that is not there
//! after the previous call is drawn in the accent colour, so the eye finds
//! what each call changed.

use crate::svg::{ACCENT, INK, MUTED, RULE, Svg, text_width};

/// A cell's value: the keys of a collection (ordered or not), or a count.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Ordered(Vec<String>),
    Set(Vec<String>),
    Count(String),
}

/// A parsed table: the column names of each panel, and each row's call and
/// cells.
#[derive(Debug, PartialEq)]
pub struct Table {
    pub panels: Vec<Vec<String>>,
    pub rows: Vec<(String, Vec<Vec<Cell>>)>,
}

fn cells(text: &str) -> Result<Vec<Cell>, String> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let (cell, tail) = match rest.as_bytes()[0] {
            open @ (b'[' | b'{') => {
                let close = if open == b'[' { ']' } else { '}' };
                let end = rest.find(close).ok_or_else(|| format!("unclosed {:?} in {text:?}", open as char))?;
                let keys = rest[1..end].split_whitespace().map(String::from).collect();
                (if open == b'[' { Cell::Ordered(keys) } else { Cell::Set(keys) }, &rest[end + 1..])
            }
            _ => {
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                (Cell::Count(rest[..end].to_owned()), &rest[end..])
            }
        };
        out.push(cell);
        rest = tail.trim_start();
    }
    Ok(out)
}

/// Parses the table; every row must have a cell for every column.
pub fn parse(table: &str) -> Result<Table, String> {
    let mut lines = table.lines().filter(|l| !l.trim().is_empty());
    let header = lines.next().ok_or("the table is empty")?;
    let mut parts = header.split('|');
    if parts.next().map(str::trim) != Some("call") {
        return Err(format!("a collections table starts with `call |`, not {header:?}"));
    }
    let panels: Vec<Vec<String>> = parts.map(|p| p.split_whitespace().map(String::from).collect()).collect();
    if panels.is_empty() {
        return Err("the header names no panel".into());
    }
    let mut rows = Vec::new();
    for (n, line) in lines.enumerate() {
        let mut parts = line.split('|');
        let call = parts.next().unwrap_or_default().trim().to_owned();
        let mut row = Vec::new();
        for (i, part) in parts.enumerate() {
            let got = cells(part)?;
            let want = panels.get(i).ok_or_else(|| format!("line {} has more panels than the header", n + 2))?;
            if got.len() != want.len() {
                return Err(format!(
                    "line {} has {} cells in panel {}, the header names {}",
                    n + 2,
                    got.len(),
                    i + 1,
                    want.len()
                ));
            }
            row.push(got);
        }
        if row.len() != panels.len() {
            return Err(format!("line {} has {} panels, the header {}", n + 2, row.len(), panels.len()));
        }
        rows.push((call, row));
    }
    Ok(Table { panels, rows })
}

/// A panel's title, from the collections it shows.
fn title(columns: &[String]) -> String {
    if columns.iter().any(|c| c == "FIFO") {
        "client-go's queue".into()
    } else if columns.iter().any(|c| c == "ready") {
        "controller-runtime's priority queue".into()
    } else {
        columns.join(" / ")
    }
}

const ROW: f64 = 34.0;
const KEY: f64 = 22.0;
const TOP: f64 = 58.0;

/// Draws the table.
pub fn render(table: &str) -> Result<String, String> {
    let t = parse(table)?;
    let call_width = t.rows.iter().map(|(c, _)| text_width(c)).fold(text_width("call"), f64::max) + 24.0;

    // Each column as wide as its widest cell or its name.
    let cell_width = |cell: &Cell| match cell {
        Cell::Ordered(keys) | Cell::Set(keys) => {
            keys.iter().map(|k| text_width(k).max(KEY - 8.0) + 8.0 + 10.0).sum::<f64>().max(KEY + 10.0)
        }
        Cell::Count(n) => text_width(n) + 10.0,
    };
    let mut widths: Vec<Vec<f64>> =
        t.panels.iter().map(|cols| cols.iter().map(|c| text_width(c) + 16.0).collect()).collect();
    for (_, row) in &t.rows {
        for (p, panel) in row.iter().enumerate() {
            for (c, cell) in panel.iter().enumerate() {
                widths[p][c] = widths[p][c].max(cell_width(cell) + 12.0);
            }
        }
    }
    let panel_gap = 24.0;
    let mut panel_x = vec![12.0 + call_width];
    for w in &widths {
        let last = *panel_x.last().unwrap();
        panel_x.push(last + w.iter().sum::<f64>() + panel_gap);
    }
    let width = panel_x.last().unwrap() - panel_gap + 12.0;
    let height = TOP + t.rows.len() as f64 * ROW + 40.0;
    let mut svg =
        Svg::new(width.round(), height.round(), "What each queue holds after each call, from a listing's output");

    // Titles and column names.
    svg.text(12.0, TOP - 10.0, "start", r#"font-weight="bold""#, "call");
    for (p, cols) in t.panels.iter().enumerate() {
        let x0 = panel_x[p];
        let w: f64 = widths[p].iter().sum();
        svg.raw(&format!(
            r#"<rect x="{:.1}" y="8" width="{:.1}" height="{:.1}" rx="6" fill="none" stroke="{RULE}"/>"#,
            x0 - 6.0,
            w + 12.0,
            TOP + t.rows.len() as f64 * ROW - 2.0
        ));
        svg.text(x0 + w / 2.0, 26.0, "middle", r#"font-weight="bold""#, &title(cols));
        let mut x = x0;
        for (c, name) in cols.iter().enumerate() {
            svg.text(x + 4.0, TOP - 10.0, "start", &format!(r#"fill="{MUTED}""#), name);
            x += widths[p][c];
        }
    }

    // Rows: the call, then each cell's keys as boxes.
    let mut previous: Option<&Vec<Vec<Cell>>> = None;
    for (r, (call, row)) in t.rows.iter().enumerate() {
        let y = TOP + r as f64 * ROW;
        svg.line((8.0, y), (width - 8.0, y), RULE, "");
        svg.text(12.0, y + ROW / 2.0 + 4.0, "start", r#"font-family="monospace""#, call);
        for (p, panel) in row.iter().enumerate() {
            let mut x = panel_x[p];
            for (c, cell) in panel.iter().enumerate() {
                let before = previous.map(|prev| &prev[p][c]);
                match cell {
                    Cell::Count(n) => {
                        let changed = before.is_some_and(|b| b != cell);
                        let colour = if changed { ACCENT } else { INK };
                        svg.text(
                            x + 6.0,
                            y + ROW / 2.0 + 4.0,
                            "start",
                            &format!(r#"fill="{colour}" font-weight="bold""#),
                            n,
                        );
                    }
                    Cell::Ordered(keys) | Cell::Set(keys) => {
                        let was: &[String] = match before {
                            Some(Cell::Ordered(k) | Cell::Set(k)) => k,
                            _ => &[],
                        };
                        let ordered = matches!(cell, Cell::Ordered(_));
                        let mut kx = x + 4.0;
                        if keys.is_empty() {
                            svg.text(kx + 4.0, y + ROW / 2.0 + 4.0, "start", &format!(r#"fill="{RULE}""#), "-");
                        }
                        for (i, key) in keys.iter().enumerate() {
                            let kw = text_width(key).max(KEY - 8.0) + 8.0;
                            let new = previous.is_some()
                                && was.iter().filter(|k| *k == key).count()
                                    < keys[..=i].iter().filter(|k| *k == key).count();
                            let (fill, stroke) = if new { ("#ddf4ff", ACCENT) } else { ("#f6f8fa", INK) };
                            let rx = if ordered { 2 } else { 9 };
                            svg.raw(&format!(
                                r#"<rect x="{kx:.1}" y="{:.1}" width="{kw:.1}" height="{KEY}" rx="{rx}" fill="{fill}" stroke="{stroke}"/>"#,
                                y + (ROW - KEY) / 2.0
                            ));
                            svg.text(kx + kw / 2.0, y + ROW / 2.0 + 4.0, "middle", r#"font-family="monospace""#, key);
                            kx += kw + 10.0;
                            if ordered && i + 1 < keys.len() {
                                svg.line((kx - 9.0, y + ROW / 2.0), (kx - 2.0, y + ROW / 2.0), MUTED, "");
                            }
                        }
                    }
                }
                x += widths[p][c];
            }
        }
        previous = Some(row);
    }
    let y = TOP + t.rows.len() as f64 * ROW;
    svg.line((8.0, y), (width - 8.0, y), RULE, "");
    let note = "square boxes: an ordered collection, head first; round: a set; blue: new since the row above";
    svg.text(12.0, y + 24.0, "start", &format!(r#"fill="{MUTED}""#), note);
    Ok(svg.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "call     | FIFO   dirty   Len | ready  locked Len\n\
                         add a    | [a]    {a}     1   | [a]    {}     1\n\
                         get -> a | []     {}      0   | []     {a}    0\n";

    #[test]
    fn parses_lists_sets_and_counts_per_panel() {
        let t = parse(TABLE).unwrap();
        assert_eq!(t.panels, [vec!["FIFO", "dirty", "Len"], vec!["ready", "locked", "Len"]]);
        assert_eq!(t.rows[1].0, "get -> a");
        assert_eq!(t.rows[1].1[1], [Cell::Ordered(vec![]), Cell::Set(vec!["a".into()]), Cell::Count("0".into())]);
    }

    #[test]
    fn draws_a_box_per_key_and_marks_what_is_new() {
        let svg = render(TABLE).unwrap();
        assert!(svg.contains("client-go&#x27;s queue") || svg.contains("client-go's queue"));
        assert!(svg.contains("controller-runtime's priority queue"));
        // Four keys in all: a in FIFO, dirty and ready, then a in locked.
        assert_eq!(svg.matches(r#"height="22""#).count(), 4);
        // Only the second row's locked a is new; the first row marks nothing.
        assert_eq!(svg.matches(r##"fill="#ddf4ff""##).count(), 1);
    }

    #[test]
    fn a_row_with_a_missing_cell_is_an_error() {
        let err = parse("call | FIFO Len\nadd a | [a]\n").unwrap_err();
        assert_eq!(err, "line 2 has 1 cells in panel 1, the header names 2");
    }
}
