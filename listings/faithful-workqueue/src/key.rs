//! A string key that clones like Go's `string` and compares like it.
//!
//! Upstream queues hold Go strings (or `reconcile.Request`, two of them). A Go
//! string is a pointer and a length: copying one copies those two words, and
//! `==` on two strings, in a map lookup too, first compares lengths, then
//! addresses, and reads the bytes only when both differ.
//!
//! `Arc<str>` gets the first half of that in Rust: a clone bumps a reference
//! count and shares the bytes. Not the second: std's `Arc` skips the
//! comparison of two handles to the same allocation only for sized contents,
//! so `Arc<str>` equality always compares the bytes, through libc's `memcmp`,
//! even when both sides are clones of one key. In a queue that is every find
//! of a key it already holds, on every deduplicated add and every `done`,
//! each one also a read of the key's bytes in another cache line.
//!
//! [`SharedKey`] is an `Arc<str>` whose equality tests the address first, as
//! Go's does. It hashes, orders, prints and borrows as the `str` it holds, so
//! it can replace an `Arc<str>` key without changing what any map or log
//! sees.
//!
//! ```
//! use faithful_workqueue::key::SharedKey;
//! use faithful_workqueue::queue::Queue;
//!
//! let key = SharedKey::from("default/web");
//! let q: Queue<SharedKey> = Queue::new();
//! q.add_ref(&key); // stored: the queue clones the handle, not the bytes
//! q.add_ref(&key); // deduplicated: one address comparison, no `memcmp`
//! assert_eq!(q.len(), 1);
//! assert_eq!(&*key, "default/web");
//! ```

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

/// A shared, immutable string key: cheap to clone, compared by address
/// before bytes. See the [module docs](self).
///
/// Two keys are equal exactly when their strings are, whether or not they
/// share an allocation:
///
/// ```
/// use faithful_workqueue::key::SharedKey;
///
/// let a = SharedKey::from("ns/a");
/// assert_eq!(a, a.clone());              // same allocation: by address
/// assert_eq!(a, SharedKey::from("ns/a")); // two allocations: by bytes
/// assert_ne!(a, SharedKey::from("ns/b"));
/// ```
#[derive(Clone)]
pub struct SharedKey(Arc<str>);

impl SharedKey {
    /// The key's string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `self` and `other` share one allocation (then they are equal
    /// without reading their bytes).
    ///
    /// ```
    /// use faithful_workqueue::key::SharedKey;
    ///
    /// let a = SharedKey::from("ns/a");
    /// assert!(a.ptr_eq(&a.clone()));
    /// assert!(!a.ptr_eq(&SharedKey::from("ns/a")));
    /// ```
    pub fn ptr_eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl PartialEq for SharedKey {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        // What std's `Arc` does for sized contents, and Go's string `==` for
        // every string: one allocation is one string.
        self.ptr_eq(other) || *self.0 == *other.0
    }
}

impl Eq for SharedKey {}

impl Hash for SharedKey {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        // As `str` hashes, so that `Borrow<str>` lookups find the key.
        self.as_str().hash(state);
    }
}

impl PartialOrd for SharedKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SharedKey {
    fn cmp(&self, other: &Self) -> Ordering {
        if self.ptr_eq(other) {
            Ordering::Equal
        } else {
            self.as_str().cmp(other.as_str())
        }
    }
}

impl Deref for SharedKey {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for SharedKey {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SharedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl From<&str> for SharedKey {
    fn from(s: &str) -> Self {
        Self(Arc::from(s))
    }
}

impl From<String> for SharedKey {
    fn from(s: String) -> Self {
        Self(Arc::from(s))
    }
}

impl From<Arc<str>> for SharedKey {
    /// Wraps the handle: no copy of the bytes.
    fn from(s: Arc<str>) -> Self {
        Self(s)
    }
}

impl From<SharedKey> for Arc<str> {
    fn from(key: SharedKey) -> Self {
        key.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeSet, HashMap};

    #[test]
    fn equal_exactly_when_the_strings_are() {
        let keys = ["", "a", "ab", "b", "default/web", "default/weB"];
        for x in keys {
            for y in keys {
                let (a, b) = (SharedKey::from(x), SharedKey::from(y));
                assert_eq!(a == b, x == y, "{x:?} == {y:?}");
                assert_eq!(a.cmp(&b), x.cmp(y), "{x:?} cmp {y:?}");
                assert!(a == a.clone());
            }
        }
    }

    #[test]
    fn a_queue_deduplicates_equal_keys_from_different_allocations() {
        let q = crate::queue::Queue::new();
        let first = SharedKey::from("ns/a");
        q.add_ref(&first);
        q.add(SharedKey::from(String::from("ns/a"))); // another allocation
        q.add_ref(&SharedKey::from("ns/b"));
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn hashes_and_borrows_as_str() {
        let mut map = HashMap::new();
        map.insert(SharedKey::from("ns/a"), 1);
        assert_eq!(map.get("ns/a"), Some(&1));
        let hasher = std::hash::RandomState::new();
        use std::hash::BuildHasher;
        assert_eq!(
            hasher.hash_one(SharedKey::from("ns/a")),
            hasher.hash_one("ns/a")
        );
        let set: BTreeSet<_> =
            ["b", "a", "c"].into_iter().map(SharedKey::from).collect();
        assert_eq!(
            set.iter().map(SharedKey::as_str).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
    }

    #[test]
    fn prints_as_str() {
        let key = SharedKey::from(String::from("ns/\"a\""));
        assert_eq!(format!("{key}"), "ns/\"a\"");
        assert_eq!(format!("{key:?}"), "\"ns/\\\"a\\\"\"");
        let arc: Arc<str> = key.clone().into();
        assert!(SharedKey::from(arc).ptr_eq(&key));
    }
}
