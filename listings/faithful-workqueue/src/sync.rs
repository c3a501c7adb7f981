//! The lock the queues' state lives behind (the queue's and the priority
//! queue's): a spin lock whose unlock is a plain store, and whose waiters
//! read before they try and back off exponentially (see [`Mutex`]). It is
//! public so that `listings/perf` can measure it alone, in the floor and
//! hardware rows of `cargo xtask perf`.
//!
//! Built with `RUSTFLAGS="--cfg shuttle"`, the same lock runs on
//! [shuttle](https://docs.rs/shuttle)'s atomics: every read, compare-and-swap
//! and store of the lock is then a point where shuttle's scheduler may switch
//! tasks, its pauses and naps become yields to the scheduler, and there is
//! one more scheduling point right after every unlock. So the model checks
//! in `tests/model_check.rs` explore the lock's own steps, interleaved with
//! the queues' (including the gaps between releasing the lock and waiting
//! on, or waking, a `Notify`), and check its exclusion, its back-off and its
//! poisoning. shuttle runs every interleaving as if memory were sequentially
//! consistent, so it checks the algorithm, not the orderings; those are the
//! ones `std`'s mutex uses (acquire to take, release to give back). tokio's
//! `Notify` itself is left as it is: it is the primitive the queues trust
//! (tokio checks it with loom).

/// The atomic counter the priority queue reads outside its locks (shuttle's
/// under `--cfg shuttle`, so that the model checks schedule around it).
#[cfg(shuttle)]
pub(crate) use shuttle::sync::atomic::AtomicUsize;
#[cfg(any(shuttle, not(feature = "std-mutex")))]
pub use spin_lock::{Mutex, MutexGuard, fallbacks};
#[cfg(not(shuttle))]
pub(crate) use std::sync::atomic::AtomicUsize;
#[cfg(all(feature = "std-mutex", not(shuttle)))]
pub use std_mutex::{Mutex, MutexGuard, fallbacks};

/// What the lock waits with: the processor's and the OS's primitives, or
/// under `--cfg shuttle` shuttle's atomics and yields to its scheduler.
#[cfg(not(any(shuttle, feature = "std-mutex")))]
mod prim {
    pub use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    #[inline]
    pub fn pause() {
        std::hint::spin_loop();
    }
    pub fn yield_thread() {
        std::thread::yield_now();
    }
    pub fn nap(d: Duration) {
        // Nobody unparks this thread: the nap is a timed one.
        std::thread::park_timeout(d);
    }
    #[inline]
    pub fn after_unlock() {}
}

#[cfg(shuttle)]
mod prim {
    pub use shuttle::sync::atomic::AtomicBool;
    use std::time::Duration;

    /// The reads between pauses are scheduling points already.
    pub fn pause() {}
    pub fn yield_thread() {
        shuttle::thread::yield_now();
    }
    /// shuttle models no time: a nap is a yield.
    pub fn nap(_: Duration) {
        shuttle::thread::yield_now();
    }
    pub fn after_unlock() {
        if !std::thread::panicking() {
            // A zero sleep is a bare scheduling point.
            shuttle::thread::sleep(Duration::ZERO);
        }
    }
}

/// With the `std-mutex` feature, for `cargo xtask perf` only: the queues take
/// `std::sync::Mutex`, which parks a waiter in the kernel instead of spinning.
#[cfg(all(feature = "std-mutex", not(shuttle)))]
mod std_mutex {
    pub use std::sync::{Mutex, MutexGuard};

    /// Always 0: `std`'s mutex has no back-off to run out of.
    pub fn fallbacks() -> u64 {
        0
    }
}

#[cfg(any(shuttle, not(feature = "std-mutex")))]
mod spin_lock {
    use super::prim::{self, AtomicBool};
    use std::cell::UnsafeCell;
    use std::marker::PhantomData;
    use std::ops::{Deref, DerefMut};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{LockResult, PoisonError};
    use std::time::Duration;

    static FALLBACKS: AtomicU64 = AtomicU64::new(0);

    /// How many times, in this process, a [`Mutex::lock`] spun to the end
    /// of its back-off and went on to yield its thread (and, if the lock
    /// stayed held, to nap). `cargo xtask perf` reports it beside each run's
    /// time: a run whose lock kept falling back is a run whose waiters found
    /// it held, or taken again and again by other threads, for their whole
    /// back-off. Counted only on that slow path.
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
        FALLBACKS.load(Ordering::Relaxed)
    }

    /// A spin lock for critical sections of tens of nanoseconds, with
    /// `std::sync::Mutex`'s poisoning.
    ///
    /// * **Taking it** is one compare-and-swap when it is free, as with
    ///   `std`'s.
    /// * **Releasing it** is a plain store with release ordering. `std`'s
    ///   mutex must learn at the unlock whether a thread sleeps on it, so its
    ///   unlock is an atomic swap, a read-modify-write (`xchg` on x86,
    ///   8.8 ns on the Intel machine where this lock was chosen). Nobody
    ///   sleeps on this lock waiting to be woken, so there is nothing to
    ///   learn. On the `burst` row of `cargo xtask perf` (one thread, one
    ///   lock pair per add) an add took 10.4 ns against 15.3 with `std`'s
    ///   lock and spaced `try_lock`s before it (medians of 7 interleaved
    ///   runs, on that machine).
    /// * **A waiter reads before it tries**, and backs off exponentially
    ///   between reads: 1, 2, 4, … 8,192 `spin_loop` hints over 14 reads.
    ///   A read only shares the lock's cache line with the holder; a
    ///   compare-and-swap takes it away, and the holder's store at its
    ///   unlock would have to fetch it back. The long pauses let a thread that takes the lock again and
    ///   again (a producer adding a burst of keys) do so while its lines stay
    ///   on its core, instead of waiting for each one to come back from the
    ///   waiter's. On `cycles-2`: 545 ns per cycle before, 180 ns with this
    ///   lock (7 interleaved runs); a probe that read before it tried but
    ///   paused 255 hints in all took 349 ns.
    /// * **A waiter that did not get it in 14 reads** (16,383 hints in all:
    ///   about 0.2 ms on the Intel machine, 11 ns a hint, time in which a
    ///   holder that runs finishes a critical section thousands of times
    ///   over) yields its thread 16 times, then naps, 10 µs at first,
    ///   doubling up to 1 ms, reading the lock after each. Either a holder
    ///   lost its core, or other threads keep taking the lock between the
    ///   waiter's reads (a producer adding a long burst); either way the
    ///   waiter gives its core back. The cost of never being woken is that a napping waiter
    ///   may take the lock up to one nap after it was released.
    ///
    /// Poisoning is `std`'s: a guard dropped while its thread panics, when
    /// that panic began after the lock was taken, marks the lock poisoned,
    /// and every later `lock` returns `Err` with the guard inside.
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
        locked: AtomicBool,
        poisoned: AtomicBool,
        data: UnsafeCell<T>,
    }

    // SAFETY: as for `std::sync::Mutex` (`Send` follows from the fields):
    // the lock hands `&mut T` to one thread at a time (the compare-and-swap
    // from `false` to `true` with acquire ordering, and the release store of
    // `false` in the guard's drop, order every access to `data` after the
    // previous holder's), so sharing the lock shares `T` only by moving it
    // between threads.
    unsafe impl<T: Send> Sync for Mutex<T> {}

    /// The guard of a held [`Mutex`]; dropping it releases the lock. As
    /// `std`'s: not `Send` (a guard cannot be held across an `.await` in a
    /// task that may move between threads), and `Sync` only if `T` is.
    pub struct MutexGuard<'a, T> {
        lock: &'a Mutex<T>,
        /// Whether the thread was panicking when it took the lock: such a
        /// guard does not poison it (as `std`'s).
        panicking: bool,
        _as_std: PhantomData<(&'a T, std::sync::MutexGuard<'a, ()>)>,
    }

    /// Reads of a held lock before its waiter yields.
    const TRIES: u32 = 14;
    /// The longest pause between two reads, in `spin_loop` hints: pauses
    /// double from 1 to this, 16,383 hints over the 14 reads.
    const MAX_PAUSE: u32 = 8_192;
    /// Yields before a waiter naps.
    const YIELDS: u32 = 16;
    /// The first and the longest nap.
    const FIRST_NAP: Duration = Duration::from_micros(10);
    const LONGEST_NAP: Duration = Duration::from_millis(1);

    impl<T> Mutex<T> {
        /// A lock around `value`.
        pub const fn new(value: T) -> Self {
            Mutex {
                locked: AtomicBool::new(false),
                poisoned: AtomicBool::new(false),
                data: UnsafeCell::new(value),
            }
        }

        /// Takes the lock, waiting as described on [`Mutex`]. Errs as
        /// `std`'s does when a holder panicked.
        #[inline]
        pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
            if !self.try_take() {
                self.lock_contended();
            }
            let guard = MutexGuard {
                lock: self,
                panicking: std::thread::panicking(),
                _as_std: PhantomData,
            };
            if self.poisoned.load(Ordering::Relaxed) {
                Err(PoisonError::new(guard))
            } else {
                Ok(guard)
            }
        }

        #[inline]
        fn try_take(&self) -> bool {
            self.locked
                .compare_exchange_weak(
                    false,
                    true,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                )
                .is_ok()
        }

        /// Read, then try, while the back-off grows; then yield; then nap.
        #[cold]
        #[inline(never)]
        fn lock_contended(&self) {
            let free_and_taken =
                || !self.locked.load(Ordering::Relaxed) && self.try_take();
            let mut pause = 1u32;
            for _ in 0..TRIES {
                for _ in 0..pause {
                    prim::pause();
                }
                pause = (pause * 2).min(MAX_PAUSE);
                if free_and_taken() {
                    return;
                }
            }
            FALLBACKS.fetch_add(1, Ordering::Relaxed);
            for _ in 0..YIELDS {
                prim::yield_thread();
                if free_and_taken() {
                    return;
                }
            }
            let mut nap = FIRST_NAP;
            loop {
                prim::nap(nap);
                nap = (nap * 2).min(LONGEST_NAP);
                if free_and_taken() {
                    return;
                }
            }
        }
    }

    impl<T> Deref for MutexGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            // SAFETY: the guard holds the lock, so no other reference to
            // `data` exists until it drops.
            unsafe { &*self.lock.data.get() }
        }
    }

    impl<T> DerefMut for MutexGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            // SAFETY: as in `deref`, and `&mut self` makes this the only one.
            unsafe { &mut *self.lock.data.get() }
        }
    }

    impl<T> Drop for MutexGuard<'_, T> {
        #[inline]
        fn drop(&mut self) {
            if !self.panicking && std::thread::panicking() {
                self.lock.poisoned.store(true, Ordering::Relaxed);
            }
            self.lock.locked.store(false, Ordering::Release);
            prim::after_unlock();
        }
    }

    #[cfg(all(test, not(shuttle)))]
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

        /// A waiter whose lock stays held past its back-off yields, then
        /// naps, and still takes the lock once it is free.
        #[test]
        fn a_lock_held_past_the_back_off_is_taken_after_it() {
            let m = Arc::new(Mutex::new(0u64));
            let before = super::fallbacks();
            let guard = m.lock().unwrap();
            let waiter = {
                let m = m.clone();
                std::thread::spawn(move || *m.lock().unwrap() += 1)
            };
            // Held until the waiter (or another test's) spun to the end, and
            // some yields longer, so that it is likely napping by now.
            while super::fallbacks() == before {
                std::thread::yield_now();
            }
            for _ in 0..1_000 {
                std::thread::yield_now();
            }
            drop(guard);
            waiter.join().unwrap();
            assert_eq!(*m.lock().unwrap(), 1);
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
            let unwound = std::panic::catch_unwind(
                std::panic::AssertUnwindSafe(move || {
                    let _on_drop = on_drop;
                    panic!("the panic starts before the lock is taken");
                }),
            );
            assert!(unwound.is_err());
            assert_eq!(*m.lock().unwrap(), 1);
        }
    }
}
