// A reconcile that asks to come back in ten minutes, on client-go's queue
// and on the priority queue: with no other event, with an event for the same
// key while the reconcile runs, and with that event when every run asks.
// tokio's paused clock: the fifteen minutes watched take no time.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use faithful_workqueue::controller::Controller;
use faithful_workqueue::default_rate_limiters::{
    default_typed_controller_rate_limiter, priority_queue_default_rate_limiter,
};
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::priorityqueue::{PriorityInterface, PriorityQueue};
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
use faithful_workqueue::reconcile::ReconcileResult;
use tokio::time::{Instant, sleep, timeout};

const SECOND: Duration = Duration::from_secs(1);
const MINUTE: Duration = Duration::from_secs(60);

/// Which situation a run shows.
#[derive(Clone, Copy)]
struct Situation {
    /// An event for the key 2s into the first reconcile.
    event: bool,
    /// Every run asks for `RequeueAfter`, not only the first.
    every_run: bool,
}

/// Watches one key on `queue` for fifteen minutes and says when its
/// reconciles began.
async fn runs<Q>(queue: Q, s: Situation) -> String
where
    Q: PriorityInterface<&'static str> + Clone + Send + Sync + 'static,
{
    let start = Instant::now();
    let began: Arc<Mutex<Vec<Duration>>> = Arc::default();
    // ANCHOR: reconcile
    let seen = began.clone();
    let c = Controller::new(queue.clone(), move |_key: &'static str| {
        let first = seen.lock().unwrap().is_empty();
        seen.lock().unwrap().push(start.elapsed());
        async move {
            sleep(10 * SECOND).await; // the reconcile's work
            if first || s.every_run {
                // "Come back in ten minutes", to renew something in time.
                return Ok(ReconcileResult::requeue_after(10 * MINUTE));
            }
            Ok(ReconcileResult::done())
        }
    });
    queue.add("cert");
    let event = async {
        if s.event {
            sleep(2 * SECOND).await;
            queue.add("cert"); // an update to the object, mid-reconcile
        }
    };
    // ANCHOR_END: reconcile
    let work = async { while c.process_next_work_item().await {} };
    let _ = timeout(15 * MINUTE, async { tokio::join!(event, work) }).await;
    let at: Vec<String> = began
        .lock()
        .unwrap()
        .iter()
        .map(|t| GoDuration(*t).to_string())
        .collect();
    format!("runs at {}", at.join(", "))
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let situations = [
        ("no other event", Situation { event: false, every_run: false }),
        (
            "an event at 2s, during the first reconcile",
            Situation { event: true, every_run: false },
        ),
        (
            "the same event, and every run asks again",
            Situation { event: true, every_run: true },
        ),
    ];
    println!("each reconcile takes 10s and asks for RequeueAfter 10m;");
    println!("when does the key run in the first 15m?");
    for (title, s) in situations {
        println!();
        println!("{title}");
        let client_go =
            RateLimitingQueue::new(default_typed_controller_rate_limiter());
        println!("  client-go queue  {}", runs(client_go, s).await);
        let priority = PriorityQueue::with_rate_limiter(
            priority_queue_default_rate_limiter(),
        );
        println!("  priority queue   {}", runs(priority, s).await);
    }
}
