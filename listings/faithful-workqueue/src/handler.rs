//! Which event puts which key into the queue, at which priority
//! (controller-runtime's `pkg/handler/eventhandler.go` and `enqueue.go`).
//!
//! An informer reports four kinds of event about an object: created (either
//! found by the initial list or created later), updated (with the old and
//! the new object; a resync is an update whose two resource versions are the
//! same), deleted, and generic (from a source other than the API server).
//! [`EnqueueRequestForObject`] turns each into an add of the object's key,
//! and on a priority queue it chooses the priority the way controller-runtime
//! does:
//!
//! | event | priority |
//! |---|---|
//! | create found by the initial list | [`LOW_PRIORITY`] (-100) |
//! | create after the informer synced | 0 |
//! | update that changed the resource version | 0 |
//! | update with the same resource version (a resync) | [`LOW_PRIORITY`] |
//! | delete, generic | 0 |
//!
//! So a controller that starts with a thousand objects in its cache works
//! through them at low priority, and a change made meanwhile overtakes them.
//! On a queue without priorities ([`RateLimitingQueue`]), every event is a
//! plain add, as upstream.
//!
//! The handler takes only what it needs from an event: the key and, for an
//! update, the two resource versions. It knows nothing of a Kubernetes
//! client, so a kube-rs watcher, a client-go style informer or a test can
//! feed it alike (listing 9-1 feeds it from `kube::runtime::watcher`).
//!
//! ```
//! use faithful_workqueue::handler::{EnqueueRequestForObject, LOW_PRIORITY};
//! use faithful_workqueue::priorityqueue::PriorityQueue;
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let q = PriorityQueue::new();
//! let handler = EnqueueRequestForObject;
//! handler.create(&q, "in-cache", true); // found by the initial list
//! handler.update(&q, "changed", "41", "42"); // a real change
//! assert_eq!(q.get_with_priority().await, Some(("changed", 0)));
//! assert_eq!(q.get_with_priority().await, Some(("in-cache", LOW_PRIORITY)));
//! # }
//! ```
//!
//! [`RateLimitingQueue`]: crate::rate_limiting_queue::RateLimitingQueue

use crate::priorityqueue::{AddOpts, PriorityInterface};

pub use crate::priorityqueue::LOW_PRIORITY;

/// Enqueues the key of the object an event is about
/// (upstream's `EnqueueRequestForObject`, with the priorities of
/// `addToQueueCreate` and `addToQueueUpdate`).
#[derive(Clone, Copy, Debug, Default)]
pub struct EnqueueRequestForObject;

impl EnqueueRequestForObject {
    /// An object was created, or found by the informer's initial list
    /// (`is_in_initial_list`): that one comes at [`LOW_PRIORITY`].
    pub fn create<T: Send, Q: PriorityInterface<T>>(
        &self,
        queue: &Q,
        key: T,
        is_in_initial_list: bool,
    ) {
        let priority = is_in_initial_list.then_some(LOW_PRIORITY);
        queue.add_with_opts(AddOpts { priority, ..AddOpts::default() }, [key]);
    }

    /// An object was updated. An update whose resource version did not
    /// change is a resync (or a re-list after a lost watch) and comes at
    /// [`LOW_PRIORITY`]; a real change comes at 0.
    pub fn update<T: Send, Q: PriorityInterface<T>>(
        &self,
        queue: &Q,
        key: T,
        old_resource_version: &str,
        new_resource_version: &str,
    ) {
        let priority = (old_resource_version == new_resource_version)
            .then_some(LOW_PRIORITY);
        queue.add_with_opts(AddOpts { priority, ..AddOpts::default() }, [key]);
    }

    /// An object was deleted: a plain add, priority 0.
    pub fn delete<T: Send, Q: PriorityInterface<T>>(&self, queue: &Q, key: T) {
        queue.add(key);
    }

    /// An event from another source: a plain add, priority 0.
    pub fn generic<T: Send, Q: PriorityInterface<T>>(&self, queue: &Q, key: T) {
        queue.add(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::default_rate_limiters::priority_queue_default_rate_limiter;
    use crate::priorityqueue::PriorityQueue;
    use crate::rate_limiting_queue::RateLimitingQueue;

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn each_event_gets_upstreams_priority() {
        let q = PriorityQueue::new();
        let h = EnqueueRequestForObject;
        h.create(&q, "listed", true);
        h.create(&q, "created", false);
        h.update(&q, "changed", "1", "2");
        h.update(&q, "resynced", "3", "3");
        h.delete(&q, "deleted");
        h.generic(&q, "generic");
        let mut got = Vec::new();
        while !q.is_empty() {
            got.push(q.get_with_priority().await.unwrap());
        }
        assert_eq!(
            got,
            [
                ("created", 0),
                ("changed", 0),
                ("deleted", 0),
                ("generic", 0),
                ("listed", LOW_PRIORITY),
                ("resynced", LOW_PRIORITY)
            ]
        );
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_change_raises_a_key_queued_by_the_initial_list() {
        let q = PriorityQueue::new();
        let h = EnqueueRequestForObject;
        h.create(&q, "a", true);
        h.create(&q, "b", true);
        h.update(&q, "b", "7", "8");
        assert_eq!(q.get_with_priority().await, Some(("b", 0)));
        assert_eq!(q.get_with_priority().await, Some(("a", LOW_PRIORITY)));
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_queue_without_priorities_gets_plain_adds() {
        let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
        let h = EnqueueRequestForObject;
        h.create(&q, "listed", true);
        h.update(&q, "resynced", "3", "3");
        assert_eq!(q.get_with_priority().await, Some(("listed", 0)));
        assert_eq!(q.get_with_priority().await, Some(("resynced", 0)));
    }
}
