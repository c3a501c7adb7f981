//! The book's diagrams, drawn as SVG from the traces its listings print.
//!
//! A listing that has a picture commits two files: `output.txt`, its stdout
//! (checked against a fresh run, and against its Go twin), and
//! `diagram.svg`, drawn from that output by [`render`]. The suite redraws
//! every diagram from the committed output and fails when the SVG is stale,
//! so a picture can only show what running code printed.
//!
//! Two kinds, told apart by the output's header line:
//!
//! - a **sequence** (`time  from  to  call`): one row per step, an arrow
//!   from one participant's lifeline to another's; see [`sequence`];
//! - a **collections table** (`call | ... | ...`): what each queue holds after
//!   each call, one panel per queue; see [`collections`].
//!
//! Both are drawn narrow and tall: at most [`MAX_WIDTH`] wide, so that on a
//! phone, where the book's stylesheet shrinks a picture to the column, a
//! 12px label is still drawn at 9px or more. Their colours are dark ink on
//! a white card, and each carries a class that `theme/listings.css`
//! recolours in the dark themes (see `svg::Paint`).

pub mod collections;
pub mod sequence;
mod svg;

/// The widest a diagram may be: on a 390px phone mdBook's text column is
/// 350px wide, and 12px labels shrunk by 350/464 are 9px.
pub const MAX_WIDTH: f64 = 464.0;

/// Draws the diagram for a listing's `output`, choosing the kind from its
/// header line.
pub fn render(output: &str) -> Result<String, String> {
    let header = output.lines().next().ok_or("the output is empty")?;
    let words: Vec<&str> = header.split_whitespace().collect();
    if words.starts_with(&["time", "from", "to"]) {
        sequence::render(output)
    } else if words.first() == Some(&"call") && header.contains('|') {
        collections::render(output)
    } else {
        Err(format!("no diagram kind has the header line {header:?}"))
    }
}

/// The `width` attribute of a drawn SVG.
#[cfg(test)]
fn width_of(svg: &str) -> f64 {
    let tag = &svg[..svg.find('>').unwrap()];
    let at = tag.find(" width=\"").unwrap() + 8;
    tag[at..].split('"').next().unwrap().parse().unwrap()
}

#[cfg(test)]
mod tests {
    /// Every element's attributes are unique: a duplicate makes the SVG
    /// invalid XML (browsers forgive it, the EPUB's checker does not).
    #[test]
    fn no_element_repeats_an_attribute() {
        let trace = "time from to call\n0s a b x\n0s b a y\n";
        let table = "call | FIFO Len\nadd a | [a] 1\n";
        for svg in [super::render(trace).unwrap(), super::render(table).unwrap()] {
            for element in svg.split('<').skip(1) {
                let tag = element.split('>').next().unwrap();
                let mut names: Vec<&str> =
                    tag.split_whitespace().skip(1).filter_map(|a| a.split_once('=').map(|(n, _)| n)).collect();
                let all = names.len();
                names.sort();
                names.dedup();
                assert_eq!(names.len(), all, "an attribute repeats in <{tag}>");
            }
        }
    }

    /// The book's two diagrams, drawn from their listings' committed
    /// outputs, fit a phone's column without shrinking their labels below
    /// 9px.
    #[test]
    fn the_books_diagrams_are_at_most_max_width_wide() {
        for (listing, output) in [
            ("1-3", include_str!("../../../listings/ch01-the-loop/listing-01-03/output.txt")),
            ("6-2", include_str!("../../../listings/ch06-priority-queue/listing-06-02/output.txt")),
        ] {
            let width = super::width_of(&super::render(output).unwrap());
            assert!(
                width <= super::MAX_WIDTH,
                "listing {listing}'s diagram is {width} wide, more than {}",
                super::MAX_WIDTH
            );
        }
    }

    #[test]
    fn an_unknown_header_is_an_error_that_quotes_it() {
        assert_eq!(super::render("a b c\n").unwrap_err(), r#"no diagram kind has the header line "a b c""#);
    }
}
