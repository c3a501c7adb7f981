//! A queue wrapper that reports every call a controller makes to its queue:
//! for traces, tests and teaching. Not part of upstream; upstream's tests use
//! a hand-written delegating queue for the same purpose.
//!
//! Each call is reported as one line, in the notation the book's traces use:
//! `forget "key"`, `add_rate_limited "key"`, `add_after "key" 30ms`,
//! `done "key"`. Adds without options and gets are the traffic, not the
//! decisions: they are reported only by a log made with
//! [`CallLog::reporting_traffic`], as `add "key"` and `get -> "key"`.
//!
//! ```
//! use faithful_workqueue::call_log::CallLog;
//! use faithful_workqueue::controller::Controller;
//! use faithful_workqueue::priorityqueue::PriorityQueue;
//! use faithful_workqueue::rate_limiting_queue::Interface;
//! use faithful_workqueue::reconcile::ReconcileResult;
//! use std::sync::{Arc, Mutex};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let calls = Arc::new(Mutex::new(Vec::new()));
//! let sink = calls.clone();
//! let queue = CallLog::new(PriorityQueue::new(), move |call| sink.lock().unwrap().push(call));
//! let controller = Controller::new(queue.clone(), |_key: &'static str| async { Ok(ReconcileResult::done()) });
//! queue.add("default/web");
//! controller.process_next_work_item().await;
//! assert_eq!(*calls.lock().unwrap(), [r#"forget "default/web""#, r#"done "default/web""#]);
//! # }
//! ```

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::go_duration::GoDuration;
use crate::priorityqueue::{AddOpts, PriorityInterface};
use crate::rate_limiting_queue::{
    DelayingInterface, Interface, RateLimitingInterface,
};

/// Wraps a queue `Q` and hands a line describing each decision call to `sink`
/// before passing the call on. Clones share the queue and the sink.
pub struct CallLog<Q> {
    queue: Q,
    sink: Arc<dyn Fn(String) + Send + Sync>,
    traffic: bool,
}

impl<Q: Clone> Clone for CallLog<Q> {
    fn clone(&self) -> Self {
        Self {
            queue: self.queue.clone(),
            sink: self.sink.clone(),
            traffic: self.traffic,
        }
    }
}

impl<Q> CallLog<Q> {
    /// Wraps `queue`, reporting to `sink`.
    ///
    /// ```
    /// use faithful_workqueue::call_log::CallLog;
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingInterface;
    ///
    /// let queue = CallLog::new(PriorityQueue::new(), |call| println!("  {call}"));
    /// queue.forget(&"a"); // prints `  forget "a"`
    /// ```
    pub fn new(
        queue: Q,
        sink: impl Fn(String) + Send + Sync + 'static,
    ) -> Self {
        Self { queue, sink: Arc::new(sink), traffic: false }
    }

    /// Reports the traffic too: each plain add as `add "key"` and each key a
    /// get hands out as `get -> "key"`, after the get returns.
    ///
    /// ```
    /// use faithful_workqueue::call_log::CallLog;
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use faithful_workqueue::rate_limiting_queue::Interface;
    /// use std::sync::{Arc, Mutex};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let calls = Arc::new(Mutex::new(Vec::new()));
    /// let sink = calls.clone();
    /// let queue = CallLog::new(PriorityQueue::new(), move |call| sink.lock().unwrap().push(call)).reporting_traffic();
    /// queue.add("a");
    /// queue.get().await;
    /// queue.done(&"a");
    /// assert_eq!(*calls.lock().unwrap(), [r#"add "a""#, r#"get -> "a""#, r#"done "a""#]);
    /// # }
    /// ```
    pub fn reporting_traffic(mut self) -> Self {
        self.traffic = true;
        self
    }

    /// The wrapped queue.
    ///
    /// ```
    /// use faithful_workqueue::call_log::CallLog;
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    ///
    /// let queue = CallLog::new(PriorityQueue::<&str>::new(), |_| {});
    /// assert!(queue.inner().is_empty());
    /// ```
    pub fn inner(&self) -> &Q {
        &self.queue
    }

    fn report(&self, line: String) {
        (self.sink)(line)
    }
}

impl<T: Debug + Send, Q: Interface<T>> Interface<T> for CallLog<Q> {
    fn add(&self, item: T) {
        if self.traffic {
            self.report(format!("add {item:?}"));
        }
        self.queue.add(item)
    }
    fn len(&self) -> usize {
        self.queue.len()
    }
    fn get(&self) -> impl Future<Output = Option<T>> + Send {
        let (got, sink, traffic) =
            (self.queue.get(), self.sink.clone(), self.traffic);
        async move {
            let item = got.await;
            if let Some(item) = item.as_ref().filter(|_| traffic) {
                sink(format!("get -> {item:?}"));
            }
            item
        }
    }
    fn done(&self, item: &T) {
        self.report(format!("done {item:?}"));
        self.queue.done(item)
    }
    fn shut_down(&self) {
        self.queue.shut_down()
    }
    fn shut_down_with_drain(&self) -> impl Future<Output = ()> + Send {
        self.queue.shut_down_with_drain()
    }
    fn shutting_down(&self) -> bool {
        self.queue.shutting_down()
    }
}

impl<T: Debug + Send, Q: DelayingInterface<T>> DelayingInterface<T>
    for CallLog<Q>
{
    fn add_after(&self, item: T, delay: Duration) {
        self.report(format!("add_after {item:?} {}", GoDuration(delay)));
        self.queue.add_after(item, delay)
    }
}

impl<T: Debug + Send, Q: RateLimitingInterface<T>> RateLimitingInterface<T>
    for CallLog<Q>
{
    fn add_rate_limited(&self, item: T) {
        self.report(format!("add_rate_limited {item:?}"));
        self.queue.add_rate_limited(item)
    }
    fn forget(&self, item: &T) {
        self.report(format!("forget {item:?}"));
        self.queue.forget(item)
    }
    fn num_requeues(&self, item: &T) -> usize {
        self.queue.num_requeues(item)
    }
}

impl<T: Debug + Send, Q: PriorityInterface<T>> PriorityInterface<T>
    for CallLog<Q>
{
    // The controller requeues through add_with_opts; report it in the terms of
    // the client-go calls it stands for, as upstream's wrapper maps them.
    fn add_with_opts(&self, opts: AddOpts, items: impl IntoIterator<Item = T>) {
        let items: Vec<T> = items.into_iter().collect();
        for item in &items {
            if opts.rate_limited {
                self.report(format!("add_rate_limited {item:?}"));
            } else if !opts.after.is_zero() {
                self.report(format!(
                    "add_after {item:?} {}",
                    GoDuration(opts.after)
                ));
            } else if self.traffic {
                self.report(format!("add {item:?}"));
            }
        }
        self.queue.add_with_opts(opts, items)
    }
    fn get_with_priority(
        &self,
    ) -> impl Future<Output = Option<(T, i32)>> + Send {
        let (got, sink, traffic) =
            (self.queue.get_with_priority(), self.sink.clone(), self.traffic);
        async move {
            let item = got.await;
            if let Some((item, _)) = item.as_ref().filter(|_| traffic) {
                sink(format!("get -> {item:?}"));
            }
            item
        }
    }
}
