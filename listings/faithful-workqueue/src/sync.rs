//! The lock the queue's state lives behind.
//!
//! Normally `std::sync::Mutex`. Built with `RUSTFLAGS="--cfg shuttle"`, it is
//! [shuttle](https://docs.rs/shuttle)'s mutex, plus a scheduling point right
//! after every unlock: shuttle's scheduler may then switch tasks when a lock is
//! taken and when it is released, so the model checks in
//! `tests/model_check.rs` explore the gaps between releasing the lock and
//! waiting on, or waking, a `Notify`. tokio's `Notify` itself is left as it
//! is: it is the primitive the queue trusts (tokio checks it with loom).

#[cfg(not(shuttle))]
pub(crate) use std::sync::{Mutex, MutexGuard};

#[cfg(shuttle)]
pub(crate) use model::{Mutex, MutexGuard};

#[cfg(shuttle)]
mod model {
    use std::ops::{Deref, DerefMut};
    use std::sync::{LockResult, PoisonError};

    /// shuttle's mutex, whose guard also yields to the scheduler on release.
    pub(crate) struct Mutex<T>(shuttle::sync::Mutex<T>);

    pub(crate) struct MutexGuard<'a, T>(Option<shuttle::sync::MutexGuard<'a, T>>);

    impl<T> Mutex<T> {
        pub(crate) fn new(value: T) -> Self {
            Mutex(shuttle::sync::Mutex::new(value))
        }

        pub(crate) fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
            match self.0.lock() {
                Ok(guard) => Ok(MutexGuard(Some(guard))),
                Err(poisoned) => Err(PoisonError::new(MutexGuard(Some(poisoned.into_inner())))),
            }
        }
    }

    impl<T> Deref for MutexGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            self.0.as_ref().expect("held until drop")
        }
    }

    impl<T> DerefMut for MutexGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            self.0.as_mut().expect("held until drop")
        }
    }

    impl<T> Drop for MutexGuard<'_, T> {
        fn drop(&mut self) {
            drop(self.0.take());
            if !std::thread::panicking() {
                // shuttle models no time: a zero sleep is a bare scheduling point.
                shuttle::thread::sleep(std::time::Duration::ZERO);
            }
        }
    }
}
