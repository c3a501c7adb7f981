//! The lock the queues' state lives behind (the queue's and the priority
//! queue's). Normally `parking_lot`'s mutex, taken by a short spin that reads
//! the lock before it tries it, and poisoned as `std`'s is (see [`Mutex`]). It is public so that `listings/perf` can measure
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
pub use spin_then_park::{Mutex, MutexGuard, fallbacks};
/// The atomic counter the priority queue reads outside its locks (shuttle's
/// under `--cfg shuttle`, so that the model checks schedule around it).
#[cfg(not(shuttle))]
pub(crate) use std::sync::atomic::AtomicUsize;

#[cfg(not(shuttle))]
mod spin_then_park {
    use std::ops::{Deref, DerefMut};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
    use std::sync::{LockResult, PoisonError};

    static FALLBACKS: AtomicU64 = AtomicU64::new(0);

    /// How many times, in this process, a [`Mutex::lock`] spun to the end
    /// and went on to `parking_lot`'s own `lock`, which sleeps if the lock is
    /// still held after its own short spin. `cargo xtask perf` reports it
    /// beside each run's time: a run whose lock kept falling back is a run
    /// that paid for sleeps and wake-ups. Counted only on that slow path.
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

    /// A mutex taken by a few spaced looks before it sleeps, and poisoned,
    /// as `std::sync::Mutex` is, when a holder panics.
    ///
    /// The queue holds its lock for tens of nanoseconds, and when two threads
    /// share the queue (a producer adding on one core, a worker getting on
    /// the other) they meet at it all the time. Two things decide what that
    /// costs, and `cargo xtask perf` measured both:
    ///
    /// * **Spin before sleeping.** `std::sync::Mutex` spins only while the
    ///   lock has no sleeper, then sleeps in the kernel; while threads keep
    ///   contending, each unlock is then a `futex` wake-up system call. With
    ///   two workers a third of the time went to `futex` calls. So a
    ///   contended `lock` tries again up to 15 times with doubling pauses, for
    ///   a few microseconds in all, before it sleeps. (Go's `sync.Mutex` spins
    ///   too, for at most 4 × 30 pause instructions: `active_spin` and
    ///   `active_spin_cnt` in go1.26's `runtime/lock_spinbit.go`; this spin is
    ///   longer, 207 hints, because it did better here: 277 against 329 ns
    ///   per `cycles-2` cycle, medians of 9 runs, for 127 hints.)
    /// * **Look before trying.** A try is a compare-and-swap, which takes the
    ///   lock's cache line away from the holder even when it fails, so the
    ///   holder's unlock must fetch it back from the waiter's core. A waiter
    ///   here reads the lock first and tries only when it looks free:
    ///   reading leaves a shared copy, and the holder keeps the line until it
    ///   unlocks. `std`'s mutex cannot be read without trying it; `parking_lot`'s
    ///   can (`is_locked`), so it is the lock underneath. With the queues'
    ///   state on cache lines of its own (their `State` is aligned to 128
    ///   bytes), 21 interleaved runs each: `cycles-2` 185 ns per cycle at the
    ///   median against 199 ns with `std`'s lock and 211 ns with `parking_lot`'s
    ///   tried without a look, and 2 of its runs over 300 ns against 5 for
    ///   each of the others.
    ///
    /// The spin is bounded, so a holder that was preempted costs a waiter a
    /// few microseconds of CPU, not more. Poisoning is `std`'s: a panic that
    /// begins while a thread holds the lock marks it, and every later
    /// `lock` returns the guard inside an error, so a queue whose state a
    /// panic may have left half-changed says so instead of going on.
    ///
    /// ```
    /// use faithful_workqueue::sync::Mutex;
    ///
    /// let m = Mutex::new(1);
    /// *m.lock().unwrap() += 1;
    /// assert_eq!(*m.lock().unwrap(), 2);
    /// ```
    #[derive(Default)]
    pub struct Mutex<T> {
        lock: parking_lot::Mutex<T>,
        /// Set when a guard drops during a panic. Written at most once, so
        /// reading it in every `lock` moves no cache line.
        poisoned: AtomicBool,
    }

    /// The guard of [`Mutex`]: the value, until it drops and unlocks.
    pub struct MutexGuard<'a, T> {
        guard: parking_lot::MutexGuard<'a, T>,
        poisoned: &'a AtomicBool,
        /// Whether the thread was already panicking when it took the lock: a
        /// `done` run by a `Lease`'s `Drop` while a reconcile unwinds holds
        /// the lock inside a panic it did not cause, and, as with `std`,
        /// that does not poison.
        panicking: bool,
    }

    /// How many times a contended `lock` tries before it sleeps.
    const TRIES: u32 = 16;
    /// The longest pause between two tries, in `spin_loop` hints. The pauses
    /// double from 1 to this: 207 hints over the 16 tries, about 6 µs on the
    /// machine of the README's measurements (28 ns per hint).
    const MAX_PAUSE: u32 = 16;

    impl<T> Mutex<T> {
        /// A lock around `value`.
        pub fn new(value: T) -> Self {
            Mutex { lock: parking_lot::Mutex::new(value), poisoned: AtomicBool::new(false) }
        }

        /// Takes the lock: one try at once, then up to 15 more looks with
        /// doubling pauses between them, each followed by a try if the lock
        /// looked free, and then `parking_lot`'s `lock`, which sleeps. Errs as
        /// `std`'s does when a holder panicked.
        #[inline]
        pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
            // The first try inline: an uncontended lock costs no call.
            match self.lock.try_lock() {
                Some(guard) => self.guard(guard),
                None => self.lock_contended(),
            }
        }

        /// The other 15 looks, each after a pause, and one more pause before
        /// `parking_lot`'s lock.
        #[cold]
        #[inline(never)]
        fn lock_contended(&self) -> LockResult<MutexGuard<'_, T>> {
            let mut pause = 1u32;
            for _ in 0..TRIES - 1 {
                for _ in 0..pause {
                    std::hint::spin_loop();
                }
                pause = (pause * 2).min(MAX_PAUSE);
                if !self.lock.is_locked()
                    && let Some(guard) = self.lock.try_lock()
                {
                    return self.guard(guard);
                }
            }
            for _ in 0..pause {
                std::hint::spin_loop();
            }
            FALLBACKS.fetch_add(1, Relaxed);
            self.guard(self.lock.lock())
        }

        fn guard<'a>(&'a self, guard: parking_lot::MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
            let guard = MutexGuard { guard, poisoned: &self.poisoned, panicking: std::thread::panicking() };
            if self.poisoned.load(Relaxed) { Err(PoisonError::new(guard)) } else { Ok(guard) }
        }
    }

    impl<T> Deref for MutexGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            &self.guard
        }
    }

    impl<T> DerefMut for MutexGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            &mut self.guard
        }
    }

    impl<T> Drop for MutexGuard<'_, T> {
        fn drop(&mut self) {
            // A panic that began while the lock was held, marked before the
            // inner guard unlocks, so that the next holder sees it.
            if !self.panicking && std::thread::panicking() {
                self.poisoned.store(true, Relaxed);
            }
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
        /// unwind that began before it (a `Drop` running during a panic)
        /// is not poisoned.
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
