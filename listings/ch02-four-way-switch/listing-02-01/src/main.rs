// Which errors the controller treats as terminal, and whether it requeues
// them: each row runs one reconcile through the real switch.

use std::error::Error;
use std::fmt;

use anyhow::{Context, anyhow};
use faithful_workqueue::controller::Controller;
use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
use faithful_workqueue::reconcile::{
    ReconcileResult, TerminalError, terminal_error,
};

// ANCHOR: source_chain
/// An error of our own whose cause is a terminal error. anyhow's
/// `downcast_ref` looks at the outermost error (and through `.context()`), so
/// it cannot see a terminal error behind this type's `source()`.
#[derive(Debug)]
struct ScaleError {
    cause: TerminalError,
}

impl fmt::Display for ScaleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cannot scale default/web")
    }
}

impl Error for ScaleError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.cause)
    }
}
// ANCHOR_END: source_chain

fn invalid_spec() -> anyhow::Error {
    anyhow!("spec.replicas must be >= 0")
}

/// Runs one reconcile that returns `result` through the controller's switch,
/// and reports whether the queue will hand the key out again.
async fn requeued(result: fn() -> anyhow::Result<ReconcileResult>) -> bool {
    let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    let controller =
        Controller::new(queue.clone(), move |_key: &'static str| async move {
            result()
        });
    queue.add("default/web");
    controller.process_next_work_item().await;
    queue.len() + queue.waiting_len() > 0
}

/// What one row's reconciler returns.
type Outcome = fn() -> anyhow::Result<ReconcileResult>;

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: rows
    let rows: [(&str, Outcome); 5] = [
        ("plain error", || Err(anyhow!("connection refused"))),
        ("TerminalError", || Err(terminal_error(invalid_spec()))),
        ("TerminalError + .context()", || {
            Err(terminal_error(invalid_spec()))
                .context("reconciling default/web")
        }),
        ("TerminalError as source() of an error", || {
            Err(anyhow::Error::new(ScaleError {
                cause: TerminalError::new(invalid_spec()),
            }))
        }),
        ("Ok", || Ok(ReconcileResult::done())),
    ];
    // ANCHOR_END: rows

    println!(
        "{:<39}{:<15}{:<10}requeued?",
        "error", "downcast_ref?", "chain()?"
    );
    for (name, result) in rows {
        // ANCHOR: detect
        let (by_downcast, by_chain) = match result() {
            Err(err) => (
                err.downcast_ref::<TerminalError>().is_some().to_string(),
                err.chain().any(|e| e.is::<TerminalError>()).to_string(),
            ),
            Ok(_) => ("-".to_owned(), "-".to_owned()),
        };
        // ANCHOR_END: detect
        println!(
            "{name:<39}{by_downcast:<15}{by_chain:<10}{}",
            requeued(result).await
        );
    }

    // ANCHOR: message
    let err = TerminalError::new(invalid_spec());
    println!();
    println!("TerminalError message : {err}");
    println!(
        "source()              : {}",
        err.source().expect("a terminal error wraps its cause")
    );
    // What upstream's TerminalError(nil) prints.
    println!("TerminalError::nil()  : {}", TerminalError::nil());
    // ANCHOR_END: message
}
