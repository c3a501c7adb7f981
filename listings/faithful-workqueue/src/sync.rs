//! The lock the queues' state lives behind (the queue's and the priority
//! queue's). Normally `std::sync::Mutex`, taken by a short spin before it
//! sleeps (see [`Mutex`]). It is public so that `listings/perf` can measure
//! it alone, in the floor and hardware rows of `cargo xtask perf`. Built with
//! `RUSTFLAGS="--cfg shuttle"`, it is [shuttle](https://docs.rs/shuttle)'s
//! mutex, plus a scheduling point right after every unlock: shuttle's
//! scheduler may then switch tasks when a lock is taken and when it is
//! released, so the model checks in `tests/model_check.rs` explore the gaps
//! between releasing the lock and waiting on, or waking, a `Notify`. tokio's
//! `Notify` itself is left as it is: it is the primitive the queues trust
//! (tokio checks it with loom).

#[cfg(shuttle)]
pub(crate) use shuttle::sync::atomic::AtomicUsize;
#[cfg(not(shuttle))]
pub use spin_then_park::{Mutex, fallbacks};
#[cfg(not(shuttle))]
pub use std::sync::MutexGuard;
/// The atomic counter the priority queue reads outside its locks (shuttle's
/// under `--cfg shuttle`, so that the model checks schedule around it).
#[cfg(not(shuttle))]
pub(crate) use std::sync::atomic::AtomicUsize;

#[cfg(not(shuttle))]
mod spin_then_park {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use std::sync::{LockResult, MutexGuard, TryLockError};

    static FALLBACKS: AtomicU64 = AtomicU64::new(0);

    /// How many times, in this process, a [`Mutex::lock`] spun to the end
    /// and went on to `std::sync::Mutex::lock`, which sleeps if the lock is
    /// still held after its own short spin. `cargo xtask perf` reports it beside each run's time: a run
    /// whose lock kept falling back is a run that paid for sleeps and
    /// wake-ups. Counted only on that slow path.
    ///
    /// ```
    /// use faithful_workqueue::sync::{Mutex, fallbacks};
    ///
    /// let before = fallbacks();
    /// let m = Mutex::new(0);
    /// *m.lock().unwrap() += 1; // uncontended: taken at the first try
    /// assert_eq!(fallbacks(), before);
    /// ```
    pub fn fallbacks() -> u64 {
        FALLBACKS.load(Relaxed)
    }

    /// `std::sync::Mutex`, taken by a few spaced `try_lock`s before it sleeps.
    ///
    /// The queue holds its lock for tens of nanoseconds. When two threads
    /// share the queue (a producer adding on one core, a worker getting on
    /// the other), `std::sync::Mutex` spins only while the lock has no
    /// sleeper, then sleeps in the kernel; while threads keep contending,
    /// each unlock is then a `futex` wake-up system call and each lock a trip
    /// through the scheduler, a hundred times the critical section or more. `cargo
    /// xtask perf` measured it: with two workers, a third of the time went to
    /// `futex` calls. So a contended `lock` first retries `try_lock` a few
    /// times with growing pauses, for a few microseconds in all, and only then
    /// sleeps as `std` does. (Go's `sync.Mutex` spins too, for at most 4 × 30
    /// pause instructions: `active_spin` and `active_spin_cnt` in go1.26's
    /// `runtime/lock_spinbit.go`; this spin is longer, 207 hints, because
    /// it did better here: 277 against 329 ns per `cycles-2` cycle, medians
    /// of 9 runs, for 127 hints.) The guard is `std`'s own, so
    /// poisoning and unlocking are unchanged.
    ///
    /// The spin is bounded, so a holder that was preempted costs a waiter a
    /// few microseconds of CPU, not more.
    ///
    /// ```
    /// use faithful_workqueue::sync::Mutex;
    ///
    /// let m = Mutex::new(1);
    /// *m.lock().unwrap() += 1;
    /// assert_eq!(*m.lock().unwrap(), 2);
    /// ```
    #[derive(Default)]
    pub struct Mutex<T>(std::sync::Mutex<T>);

    /// How many times a contended `lock` retries `try_lock` before it sleeps.
    const TRIES: u32 = 16;
    /// The longest pause between two tries, in `spin_loop` hints. The pauses
    /// double from 1 to this: 207 hints over the 16 tries, about 6 µs on the
    /// machine of the README's measurements (28 ns per hint).
    const MAX_PAUSE: u32 = 16;

    impl<T> Mutex<T> {
        /// A lock around `value`.
        pub fn new(value: T) -> Self {
            Mutex(std::sync::Mutex::new(value))
        }

        /// Takes the lock: `try_lock` at once, then up to 15 more times with
        /// doubling pauses between them, and then
        /// `std::sync::Mutex::lock`, which sleeps. Errs as `std`'s does when a
        /// holder panicked.
        #[inline]
        pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
            // The first try inline: an uncontended lock costs no call.
            match self.0.try_lock() {
                Ok(guard) => Ok(guard),
                Err(TryLockError::Poisoned(poisoned)) => Err(poisoned),
                Err(TryLockError::WouldBlock) => self.lock_contended(),
            }
        }

        /// The other 15 tries, each after a pause, and one more pause before
        /// `std`'s lock.
        #[cold]
        #[inline(never)]
        fn lock_contended(&self) -> LockResult<MutexGuard<'_, T>> {
            let mut pause = 1u32;
            for _ in 0..TRIES - 1 {
                for _ in 0..pause {
                    std::hint::spin_loop();
                }
                pause = (pause * 2).min(MAX_PAUSE);
                match self.0.try_lock() {
                    Ok(guard) => return Ok(guard),
                    Err(TryLockError::Poisoned(poisoned)) => return Err(poisoned),
                    Err(TryLockError::WouldBlock) => {}
                }
            }
            for _ in 0..pause {
                std::hint::spin_loop();
            }
            FALLBACKS.fetch_add(1, Relaxed);
            self.0.lock()
        }
    }

    #[cfg(test)]
    mod tests {
        use super::Mutex;
        use std::sync::Arc;

        #[test]
        fn a_contended_lock_still_excludes() {
            let counter = Arc::new(Mutex::new(0u64));
            let threads: Vec<_> = (0..4)
                .map(|_| {
                    let counter = counter.clone();
                    std::thread::spawn(move || {
                        for _ in 0..100_000 {
                            let mut n = counter.lock().unwrap();
                            // A read and a later write: lost updates show if
                            // two threads ever hold the lock together.
                            let seen = *n;
                            std::hint::black_box(&mut n);
                            *n = seen + 1;
                        }
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            assert_eq!(*counter.lock().unwrap(), 400_000);
        }

        #[test]
        fn a_poisoned_lock_reports_it() {
            let m = Arc::new(Mutex::new(()));
            let m2 = m.clone();
            let _ = std::thread::spawn(move || {
                let _guard = m2.lock().unwrap();
                panic!("poison it");
            })
            .join();
            assert!(m.lock().is_err());
        }

        /// As with `std::sync::Mutex`: a lock taken and released during an
        /// unwind that began before it (a `Lease`'s `done`, run by its `Drop`
        /// while a reconcile panics) is not poisoned.
        #[test]
        fn a_lock_held_only_inside_a_panic_is_not_poisoned() {
            struct LocksOnDrop(Arc<Mutex<u32>>);
            impl Drop for LocksOnDrop {
                fn drop(&mut self) {
                    *self.0.lock().unwrap() += 1;
                }
            }
            let m = Arc::new(Mutex::new(0));
            let on_drop = LocksOnDrop(m.clone());
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                let _on_drop = on_drop;
                panic!("the panic starts before the lock is taken");
            }));
            assert!(unwound.is_err());
            assert_eq!(*m.lock().unwrap(), 1);
        }
    }
}

#[cfg(shuttle)]
pub use model::{Mutex, MutexGuard, fallbacks};

#[cfg(shuttle)]
mod model {
    use std::ops::{Deref, DerefMut};
    use std::sync::{LockResult, PoisonError};

    /// Always 0: shuttle's mutex does not spin.
    pub fn fallbacks() -> u64 {
        0
    }

    /// shuttle's mutex, whose guard also yields to the scheduler on release.
    pub struct Mutex<T>(shuttle::sync::Mutex<T>);

    /// The guard of [`Mutex`].
    pub struct MutexGuard<'a, T>(Option<shuttle::sync::MutexGuard<'a, T>>);

    impl<T> Mutex<T> {
        /// A lock around `value`.
        pub fn new(value: T) -> Self {
            Mutex(shuttle::sync::Mutex::new(value))
        }

        /// Takes the lock; shuttle may switch tasks here.
        pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
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
