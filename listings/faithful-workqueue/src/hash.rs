//! The hash maps and sets behind the queues and limiters.
//!
//! std's `HashMap` with foldhash's hasher instead of SipHash: a queue key is
//! hashed several times per add/get/done cycle, and for short keys such as
//! `namespace/name` SipHash is most of a cycle's cost. Like Go's map hash,
//! foldhash's `RandomState` is seeded per process, so keys cannot be crafted
//! ahead of time to collide; it makes a weaker promise than SipHash, whose
//! keyed construction is designed to resist an attacker who chooses keys.

pub(crate) type HashMap<K, V> =
    std::collections::HashMap<K, V, foldhash::fast::RandomState>;
pub(crate) type HashSet<K> =
    std::collections::HashSet<K, foldhash::fast::RandomState>;

/// The hasher of a queue that hashes its items itself: outside its lock, once
/// per add and per done (see `queue.rs`).
pub(crate) type Hasher = foldhash::fast::RandomState;

/// hashbrown's table without a hasher of its own: the caller passes each hash.
pub(crate) type HashTable<T> = hashbrown::HashTable<T>;
