// The delays a failing item gets from each of controller-runtime's two
// default rate limiters, read straight off the limiters.

use std::time::Duration;

use faithful_workqueue::default_rate_limiters::{
    RateLimiter, default_typed_controller_rate_limiter,
    priority_queue_default_rate_limiter,
};
use faithful_workqueue::go_duration::{GoDuration, round};

/// The failures the table shows: the doubling, then the cap.
const SHOWN: [usize; 12] = [1, 2, 4, 8, 10, 12, 14, 16, 18, 19, 20, 22];
const MAX_DELAY: Duration = Duration::from_secs(1000);

// ANCHOR: table
fn print_table(
    name: &str,
    about: &str,
    limiter: &dyn RateLimiter<&'static str>,
) {
    println!("limiter: {name}");
    println!("         {about}");
    println!("{:<10}{:>15}{:>17}", "failure", "delay", "cumulative");
    let mut cumulative = Duration::ZERO;
    let mut first_capped = None;
    for failure in 1..=*SHOWN.last().unwrap() {
        // Each call is one more failure of the same object.
        let delay = limiter.when(&"default/web");
        cumulative += delay;
        if delay == MAX_DELAY && first_capped.is_none() {
            first_capped = Some(failure);
        }
        if SHOWN.contains(&failure) {
            let total = round(cumulative, Duration::from_secs(1));
            println!(
                "{failure:<10}{:>15}{:>17}",
                GoDuration(delay),
                GoDuration(total)
            );
        }
    }
    println!();
    println!(
        "first failure hitting the 1000s cap: #{}",
        first_capped.expect("the cap is reached by #22")
    );
}
// ANCHOR_END: table

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: limiters
    print_table(
        "exponential 5ms..1000s",
        "the default with the priority queue",
        &priority_queue_default_rate_limiter(),
    );
    println!();
    print_table(
        "DefaultTypedControllerRateLimiter",
        "max of exponential 5ms..1000s and a 10 qps / 100 burst bucket",
        &default_typed_controller_rate_limiter(),
    );
    // ANCHOR_END: limiters
}
