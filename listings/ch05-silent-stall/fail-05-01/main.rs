// Does not compile, on purpose: a lease's `done` takes the lease by value,
// so calling it twice is a use of a moved value. The Go API cannot stop a
// second `Done`; the Rust types do.

use faithful_workqueue::queue::Queue;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let queue = Queue::new();
    queue.add("obj");
    // ANCHOR: misuse
    let lease = queue.lease().await.expect("obj is queued");
    lease.done();
    lease.done(); // error[E0382]: use of moved value: `lease`
    // ANCHOR_END: misuse
}
