// The retry curve as a picture: delay and cumulative backoff against the
// failure number, on a log scale, for both default limiters, with the cap
// marked where it is first reached. Every point comes from the limiters
// themselves; the listing writes the SVG to stdout, and the book includes it.
// The picture is 456 wide, with the legend below the plot: a phone shrinks
// it to its column, and 12px labels stay 9px or more. Each coloured element
// has a class (f- for its fill, s- for its stroke) that the book's
// stylesheet recolours in its dark themes; the attributes hold the light
// colours that any other reader of the file sees.

use std::fmt::Write;
use std::time::Duration;

use faithful_workqueue::default_rate_limiters::{
    RateLimiter, default_typed_controller_rate_limiter,
    priority_queue_default_rate_limiter,
};
use faithful_workqueue::go_duration::GoDuration;

const FAILURES: usize = 22;
const CAP: Duration = Duration::from_secs(1000);
// The picture, and the plot area inside it.
const WIDTH: f64 = 456.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 434.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 290.0;
// The y axis spans 1ms to 10,000s, in decades.
const Y_MIN: f64 = -3.0;
const Y_MAX: f64 = 4.0;
// Text in ink.
const INK: &str = r##"fill="#1f2328" class="f-ink""##;

struct Curve {
    delays: Vec<Duration>,
    cumulative: Vec<Duration>,
}

// ANCHOR: measure
/// Asks `limiter` for the delay of failures 1..=22 of one object.
fn curve(limiter: &dyn RateLimiter<&'static str>) -> Curve {
    let delays: Vec<Duration> =
        (0..FAILURES).map(|_| limiter.when(&"default/web")).collect();
    let cumulative = delays
        .iter()
        .scan(Duration::ZERO, |sum, d| {
            *sum += *d;
            Some(*sum)
        })
        .collect();
    Curve { delays, cumulative }
}
// ANCHOR_END: measure

fn x(failure: usize) -> f64 {
    LEFT + (failure as f64 - 1.0) / (FAILURES as f64 - 1.0) * (RIGHT - LEFT)
}

fn y(d: Duration) -> f64 {
    let log = d.as_secs_f64().max(1e-3).log10();
    BOTTOM - (log - Y_MIN) / (Y_MAX - Y_MIN) * (BOTTOM - TOP)
}

fn polyline(svg: &mut String, points: &[Duration], style: &str) {
    let coords: Vec<String> = points
        .iter()
        .enumerate()
        .map(|(i, d)| format!("{:.1},{:.1}", x(i + 1), y(*d)))
        .collect();
    writeln!(
        svg,
        r#"<polyline fill="none" {style} points="{}"/>"#,
        coords.join(" ")
    )
    .unwrap();
}

fn main() {
    let exponential = curve(&priority_queue_default_rate_limiter());
    let controller_default = curve(&default_typed_controller_rate_limiter());
    let first_capped = exponential
        .delays
        .iter()
        .position(|d| *d == CAP)
        .expect("the cap is reached")
        + 1;

    let mut svg = String::new();
    writeln!(svg, r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" class="figure" font-family="sans-serif" font-size="12" role="img" aria-label="Retry delay and cumulative backoff per failure">"#).unwrap();
    writeln!(
        svg,
        r##"<rect x="0.5" y="0.5" width="{}" height="{}" rx="6" fill="white" stroke="#d0d7de" class="f-paper s-rule"/>"##,
        WIDTH - 1.0,
        HEIGHT - 1.0
    )
    .unwrap();
    // Decades on the y axis, labelled in Go's duration notation.
    for decade in Y_MIN as i32..=Y_MAX as i32 {
        let d = Duration::from_secs_f64(10f64.powi(decade));
        let yy = y(d);
        writeln!(svg, r##"<line x1="{LEFT}" x2="{RIGHT}" y1="{yy:.1}" y2="{yy:.1}" stroke="#ddd" class="s-rule"/>"##).unwrap();
        writeln!(
            svg,
            r#"<text x="{}" y="{:.1}" text-anchor="end" {INK}>{}</text>"#,
            LEFT - 6.0,
            yy + 4.0,
            GoDuration(d)
        )
        .unwrap();
    }
    for failure in [1, 4, 8, 12, 16, 19, 22] {
        writeln!(
            svg,
            r#"<text x="{:.1}" y="{}" text-anchor="middle" {INK}>#{failure}</text>"#,
            x(failure),
            BOTTOM + 18.0
        )
        .unwrap();
    }
    writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle" {INK}>failure</text>"#,
        (LEFT + RIGHT) / 2.0,
        BOTTOM + 36.0
    )
    .unwrap();
    writeln!(svg, r##"<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{BOTTOM}" stroke="#333" class="s-ink"/>"##).unwrap();
    writeln!(svg, r##"<line x1="{LEFT}" x2="{RIGHT}" y1="{BOTTOM}" y2="{BOTTOM}" stroke="#333" class="s-ink"/>"##).unwrap();
    // The cap, and the failure that first reaches it, labelled at the top,
    // where left of the line no curve has risen yet.
    let cx = x(first_capped);
    writeln!(
        svg,
        r##"<line x1="{cx:.1}" x2="{cx:.1}" y1="{TOP}" y2="{BOTTOM}" stroke="#c00" class="s-cap" stroke-dasharray="4 4"/>"##
    )
    .unwrap();
    writeln!(
        svg,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#c00" class="f-cap">cap {} first reached at #{first_capped}</text>"##,
        cx - 6.0,
        TOP + 14.0,
        GoDuration(CAP)
    )
    .unwrap();
    // Both limiters; the dashed one lies on top of the solid one.
    polyline(
        &mut svg,
        &exponential.delays,
        r##"stroke="#1f77b4" class="s-delay" stroke-width="3""##,
    );
    polyline(
        &mut svg,
        &exponential.cumulative,
        r##"stroke="#ff7f0e" class="s-cumulative" stroke-width="3""##,
    );
    polyline(
        &mut svg,
        &controller_default.delays,
        r##"stroke="#0b3d66" class="s-delay-alt" stroke-width="1.5" stroke-dasharray="6 4""##,
    );
    polyline(
        &mut svg,
        &controller_default.cumulative,
        r##"stroke="#7a3d00" class="s-cumulative-alt" stroke-width="1.5" stroke-dasharray="6 4""##,
    );
    // The legend, below the plot: inside it, it would hide the curves.
    let legend = [
        (
            r##"stroke="#1f77b4" class="s-delay""##,
            "delay, exponential 5ms..1000s (priority queue default)",
        ),
        (
            r##"stroke="#ff7f0e" class="s-cumulative""##,
            "cumulative, exponential 5ms..1000s",
        ),
        (
            r##"stroke="#0b3d66" class="s-delay-alt" stroke-dasharray="6 4""##,
            "delay, DefaultTypedControllerRateLimiter",
        ),
        (
            r##"stroke="#7a3d00" class="s-cumulative-alt" stroke-dasharray="6 4""##,
            "cumulative, DefaultTypedControllerRateLimiter",
        ),
    ];
    for (i, (stroke, label)) in legend.iter().enumerate() {
        let ly = BOTTOM + 60.0 + 18.0 * i as f64;
        writeln!(
            svg,
            r#"<line x1="12" x2="40" y1="{ly}" y2="{ly}" {stroke} stroke-width="2"/>"#
        )
        .unwrap();
        writeln!(svg, r#"<text x="46" y="{}" {INK}>{label}</text>"#, ly + 4.0)
            .unwrap();
    }
    svg.push_str("</svg>\n");
    print!("{svg}");
}
