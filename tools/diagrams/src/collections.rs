//! What each queue holds after each call, as panels of boxes.
//!
//! The table is a header line and one line per call. Cells are split by
//! `|` into the call and one panel per queue; inside a panel, the header
//! names the columns (`FIFO dirty processing Len`) and each row gives, in
//! the same order, a list (`[a b]`, in order), a set (`{a b}`) or a number.
//! The panels stand side by side, one box per key, ordered collections with
//! links between their keys; each call is written on a band across both
//! panels, above what they hold after it. A key that is not there after the
//! previous call is drawn in the accent colour, so the eye finds what each
//! call changed.

use crate::svg::{ACCENT, BOX, INK, MUTED, NEW, RULE, Svg, bold_width, mono_width, text_width, wrap};

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

/// A panel's title, in two lines: whose it is, and which queue.
fn title(columns: &[String]) -> [String; 2] {
    if columns.iter().any(|c| c == "FIFO") {
        ["client-go".into(), "workqueue".into()]
    } else if columns.iter().any(|c| c == "ready") {
        ["controller-runtime".into(), "priority queue".into()]
    } else {
        [columns.join(" / "), String::new()]
    }
}

/// Each row is the call, on a band across the picture, above what each
/// queue holds after it: the two queues stay side by side, and no column
/// of calls takes a third of the width.
const CALL: f64 = 18.0;
const CELLS: f64 = 30.0;
const ROW: f64 = CALL + CELLS;
const KEY: f64 = 20.0;
const TOP: f64 = 66.0;
const MARGIN: f64 = 10.0;
const PANEL_GAP: f64 = 18.0;
/// Space between two keys of an ordered cell, which draws a link in it,
/// and of a set, whose keys stay closer together than two cells' keys.
const ORDERED_GAP: f64 = 7.0;
const SET_GAP: f64 = 4.0;
/// Space a column keeps beside its widest cell, half on each side.
const PAD: f64 = 10.0;

fn gap(cell: &Cell) -> f64 {
    if matches!(cell, Cell::Ordered(_)) { ORDERED_GAP } else { SET_GAP }
}

fn key_width(key: &str) -> f64 {
    mono_width(key).max(KEY - 8.0) + 8.0
}

/// Draws the table.
pub fn render(table: &str) -> Result<String, String> {
    let t = parse(table)?;

    // Each column as wide as its widest cell or its name.
    let cell_width = |cell: &Cell| match cell {
        Cell::Ordered(keys) | Cell::Set(keys) => {
            keys.iter().map(|k| key_width(k) + gap(cell)).sum::<f64>().max(KEY + gap(cell)) - gap(cell)
        }
        Cell::Count(n) => bold_width(n),
    };
    let mut widths: Vec<Vec<f64>> =
        t.panels.iter().map(|cols| cols.iter().map(|c| text_width(c) + PAD).collect()).collect();
    for (_, row) in &t.rows {
        for (p, panel) in row.iter().enumerate() {
            for (c, cell) in panel.iter().enumerate() {
                widths[p][c] = widths[p][c].max(cell_width(cell) + PAD);
            }
        }
    }
    // A title wider than its columns widens the panel's last column.
    for (p, cols) in t.panels.iter().enumerate() {
        let [name, queue] = title(cols);
        let need = bold_width(&name).max(text_width(&queue)) + 8.0;
        let have: f64 = widths[p].iter().sum();
        if need > have {
            *widths[p].last_mut().unwrap() += need - have;
        }
    }
    let mut panel_x = vec![MARGIN];
    for w in &widths {
        let last = *panel_x.last().unwrap();
        panel_x.push(last + w.iter().sum::<f64>() + PANEL_GAP);
    }
    let width = (panel_x.last().unwrap() - PANEL_GAP + MARGIN).round();
    let note = wrap(
        "square boxes: an ordered collection, head first; round: a set; blue: new since the row above",
        width - 2.0 * MARGIN,
    );
    let rows_end = TOP + t.rows.len() as f64 * ROW;
    let height = (rows_end + 10.0 + note.len() as f64 * 16.0 + 8.0).round();
    let mut svg = Svg::new(width, height, "What each queue holds after each call, from a listing's output");

    // Titles and column names; a rule between the panels, below the titles.
    for (p, cols) in t.panels.iter().enumerate() {
        let x0 = panel_x[p];
        let w: f64 = widths[p].iter().sum();
        let [name, queue] = title(cols);
        svg.text(x0 + w / 2.0, 22.0, "middle", INK, r#"font-weight="bold""#, &name);
        if !queue.is_empty() {
            svg.text(x0 + w / 2.0, 37.0, "middle", INK, "", &queue);
        }
        let mut x = x0;
        for (c, name) in cols.iter().enumerate() {
            svg.text(x + PAD / 2.0, TOP - 8.0, "start", MUTED, "", name);
            x += widths[p][c];
        }
        if p > 0 {
            let between = x0 - PANEL_GAP / 2.0;
            svg.line((between, TOP - 22.0), (between, rows_end), RULE, "");
        }
    }

    // Rows: the call on its band, then each cell's keys as boxes.
    let mut previous: Option<&Vec<Vec<Cell>>> = None;
    for (r, (call, row)) in t.rows.iter().enumerate() {
        let y = TOP + r as f64 * ROW;
        svg.rect((1.0, y), (width - 2.0, CALL), 0.0, Some(BOX), None);
        svg.line((1.0, y), (width - 1.0, y), RULE, "");
        svg.text(MARGIN, y + 13.0, "start", INK, r#"font-family="monospace""#, call);
        let middle = y + CALL + CELLS / 2.0;
        for (p, panel) in row.iter().enumerate() {
            let mut x = panel_x[p];
            for (c, cell) in panel.iter().enumerate() {
                let before = previous.map(|prev| &prev[p][c]);
                match cell {
                    Cell::Count(n) => {
                        let changed = before.is_some_and(|b| b != cell);
                        let colour = if changed { ACCENT } else { INK };
                        svg.text(x + PAD / 2.0, middle + 4.0, "start", colour, r#"font-weight="bold""#, n);
                    }
                    Cell::Ordered(keys) | Cell::Set(keys) => {
                        let was: &[String] = match before {
                            Some(Cell::Ordered(k) | Cell::Set(k)) => k,
                            _ => &[],
                        };
                        let ordered = matches!(cell, Cell::Ordered(_));
                        let mut kx = x + PAD / 2.0;
                        if keys.is_empty() {
                            svg.text(kx + 4.0, middle + 4.0, "start", MUTED, "", "-");
                        }
                        for (i, key) in keys.iter().enumerate() {
                            let kw = key_width(key);
                            let new = previous.is_some()
                                && was.iter().filter(|k| *k == key).count()
                                    < keys[..=i].iter().filter(|k| *k == key).count();
                            let (fill, stroke) = if new { (NEW, ACCENT) } else { (BOX, INK) };
                            let rx = if ordered { 2.0 } else { KEY / 2.0 };
                            svg.rect((kx, middle - KEY / 2.0), (kw, KEY), rx, Some(fill), Some(stroke));
                            svg.text(kx + kw / 2.0, middle + 4.0, "middle", INK, r#"font-family="monospace""#, key);
                            kx += kw + gap(cell);
                            if ordered && i + 1 < keys.len() {
                                svg.line((kx - ORDERED_GAP + 1.0, middle), (kx - 1.0, middle), MUTED, "");
                            }
                        }
                    }
                }
                x += widths[p][c];
            }
        }
        previous = Some(row);
    }
    svg.line((1.0, rows_end), (width - 1.0, rows_end), RULE, "");
    for (n, line) in note.iter().enumerate() {
        svg.text(MARGIN, rows_end + 22.0 + n as f64 * 16.0, "start", MUTED, "", line);
    }
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
        for title in [">client-go<", ">workqueue<", ">controller-runtime<", ">priority queue<"] {
            assert!(svg.contains(title), "no title {title}");
        }
        // Four keys in all: a in FIFO, dirty and ready, then a in locked.
        assert_eq!(svg.matches(r#"height="20.0""#).count(), 4);
        // Only the second row's locked a is new; the first row marks nothing.
        assert_eq!(svg.matches(r##"fill="#ddf4ff""##).count(), 1);
    }

    #[test]
    fn a_row_with_a_missing_cell_is_an_error() {
        let err = parse("call | FIFO Len\nadd a | [a]\n").unwrap_err();
        assert_eq!(err, "line 2 has 1 cells in panel 1, the header names 2");
    }
}
