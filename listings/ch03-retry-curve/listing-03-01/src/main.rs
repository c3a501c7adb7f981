// The two default rate limiters a controller-runtime controller can get,
// asked straight for the delays of one object that keeps failing: they give
// the same answer at every failure, and the cap first at failure #19.

use std::time::Duration;

use faithful_workqueue::default_rate_limiters::{
    RateLimiter, default_typed_controller_rate_limiter,
    priority_queue_default_rate_limiter,
};

/// How many failures the two limiters are asked about: past #19, where the
/// cap starts, and up to #42, where the float overflow guard takes over.
const FAILURES: usize = 42;
const MAX_DELAY: Duration = Duration::from_secs(1000);

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: limiters
    println!("limiter A: exponential 5ms..1000s");
    println!("           the default with the priority queue");
    println!("limiter B: DefaultTypedControllerRateLimiter");
    println!(
        "           max of exponential 5ms..1000s and a 10 qps / 100 burst bucket"
    );
    let a = priority_queue_default_rate_limiter();
    let b = default_typed_controller_rate_limiter();
    // Each call is one more failure of the same object.
    let delays = |limiter: &dyn RateLimiter<&'static str>| -> Vec<Duration> {
        (0..FAILURES).map(|_| limiter.when(&"default/web")).collect()
    };
    let (from_a, from_b) = (delays(&a), delays(&b));
    // ANCHOR_END: limiters

    // ANCHOR: compare
    let differ = (1..=FAILURES).filter(|n| from_a[n - 1] != from_b[n - 1]);
    println!();
    println!(
        "failures 1 to {FAILURES} of one object: A and B differ at {} of them",
        differ.count()
    );
    for (name, delays) in [("A", &from_a), ("B", &from_b)] {
        let first = delays.iter().position(|d| *d == MAX_DELAY);
        println!(
            "limiter {name}: first failure hitting the 1000s cap: #{}",
            first.expect("the cap is reached by #42") + 1
        );
    }
    // ANCHOR_END: compare
}
