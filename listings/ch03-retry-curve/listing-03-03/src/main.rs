// The retry curve as a picture: delay and cumulative backoff against the
// failure number, on a log scale, for both default limiters, with the cap
// marked where it is first reached. Every point comes from the limiters
// themselves; the listing writes the SVG to stdout, and the book includes it.

use std::fmt::Write;
use std::time::Duration;

use faithful_workqueue::default_rate_limiters::{
    RateLimiter, default_typed_controller_rate_limiter, priority_queue_default_rate_limiter,
};
use faithful_workqueue::go_duration::GoDuration;

const FAILURES: usize = 22;
const CAP: Duration = Duration::from_secs(1000);
// The plot area inside a 720 x 420 picture.
const LEFT: f64 = 90.0;
const RIGHT: f64 = 700.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 360.0;
// The y axis spans 1ms to 10,000s, in decades.
const Y_MIN: f64 = -3.0;
const Y_MAX: f64 = 4.0;

struct Curve {
    delays: Vec<Duration>,
    cumulative: Vec<Duration>,
}

// ANCHOR: measure
/// Asks `limiter` for the delay of failures 1..=22 of one object.
fn curve(limiter: &dyn RateLimiter<&'static str>) -> Curve {
    let delays: Vec<Duration> = (0..FAILURES).map(|_| limiter.when(&"default/web")).collect();
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
    let coords: Vec<String> = points.iter().enumerate().map(|(i, d)| format!("{:.1},{:.1}", x(i + 1), y(*d))).collect();
    writeln!(svg, r#"<polyline fill="none" {style} points="{}"/>"#, coords.join(" ")).unwrap();
}

fn main() {
    let exponential = curve(&priority_queue_default_rate_limiter());
    let controller_default = curve(&default_typed_controller_rate_limiter());
    let first_capped = exponential.delays.iter().position(|d| *d == CAP).expect("the cap is reached") + 1;

    let mut svg = String::new();
    writeln!(svg, r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 720 420" width="720" height="420" font-family="sans-serif" font-size="12" role="img" aria-label="Retry delay and cumulative backoff per failure">"#).unwrap();
    writeln!(svg, r#"<rect x="0" y="0" width="720" height="420" fill="white"/>"#).unwrap();
    // Decades on the y axis, labelled in Go's duration notation.
    for decade in Y_MIN as i32..=Y_MAX as i32 {
        let d = Duration::from_secs_f64(10f64.powi(decade));
        let yy = y(d);
        writeln!(svg, r##"<line x1="{LEFT}" x2="{RIGHT}" y1="{yy:.1}" y2="{yy:.1}" stroke="#ddd"/>"##).unwrap();
        writeln!(svg, r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#, LEFT - 6.0, yy + 4.0, GoDuration(d))
            .unwrap();
    }
    for failure in [1, 4, 8, 12, 16, 19, 22] {
        writeln!(svg, r#"<text x="{:.1}" y="{}" text-anchor="middle">#{failure}</text>"#, x(failure), BOTTOM + 18.0)
            .unwrap();
    }
    writeln!(svg, r#"<text x="{}" y="{}" text-anchor="middle">failure</text>"#, (LEFT + RIGHT) / 2.0, BOTTOM + 40.0)
        .unwrap();
    writeln!(svg, r##"<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{BOTTOM}" stroke="#333"/>"##).unwrap();
    writeln!(svg, r##"<line x1="{LEFT}" x2="{RIGHT}" y1="{BOTTOM}" y2="{BOTTOM}" stroke="#333"/>"##).unwrap();
    // The cap, and the failure that first reaches it.
    let cx = x(first_capped);
    writeln!(
        svg,
        r##"<line x1="{cx:.1}" x2="{cx:.1}" y1="{TOP}" y2="{BOTTOM}" stroke="#c00" stroke-dasharray="4 4"/>"##
    )
    .unwrap();
    writeln!(
        svg,
        r##"<text x="{:.1}" y="{:.1}" fill="#c00" text-anchor="end">cap {} first reached at #{first_capped}</text>"##,
        cx - 6.0,
        y(CAP) - 8.0,
        GoDuration(CAP)
    )
    .unwrap();
    // Both limiters; the dashed one lies on top of the solid one.
    polyline(&mut svg, &exponential.delays, r##"stroke="#1f77b4" stroke-width="3""##);
    polyline(&mut svg, &exponential.cumulative, r##"stroke="#ff7f0e" stroke-width="3""##);
    polyline(&mut svg, &controller_default.delays, r##"stroke="#0b3d66" stroke-width="1.5" stroke-dasharray="6 4""##);
    polyline(
        &mut svg,
        &controller_default.cumulative,
        r##"stroke="#7a3d00" stroke-width="1.5" stroke-dasharray="6 4""##,
    );
    let legend = [
        ("#1f77b4", "", "delay, exponential 5ms..1000s (priority queue default)"),
        ("#ff7f0e", "", "cumulative, exponential 5ms..1000s"),
        ("#0b3d66", r#" stroke-dasharray="6 4""#, "delay, DefaultTypedControllerRateLimiter"),
        ("#7a3d00", r#" stroke-dasharray="6 4""#, "cumulative, DefaultTypedControllerRateLimiter"),
    ];
    for (i, (color, dash, label)) in legend.iter().enumerate() {
        let ly = TOP + 8.0 + 16.0 * i as f64;
        writeln!(
            svg,
            r#"<line x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="2"{dash}/>"#,
            LEFT + 12.0,
            LEFT + 40.0
        )
        .unwrap();
        writeln!(svg, r#"<text x="{}" y="{}">{label}</text>"#, LEFT + 46.0, ly + 4.0).unwrap();
    }
    svg.push_str("</svg>\n");
    print!("{svg}");
}
