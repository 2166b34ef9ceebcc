//! Time threads spent runnable but waiting for a core (Linux schedstat's run delay). The
//! runner reads the live threads' own counts; a thread that ends inside a phase (a plan's
//! lanes, a background plan's thread, the runner's helper) leaves its count here as it ends,
//! so a rank starved of CPU can still be told from one waiting for storage.

use std::sync::atomic::{AtomicU64, Ordering};

static ENDED_NS: AtomicU64 = AtomicU64::new(0);

/// This thread's run delay so far, ns; None where the kernel keeps no schedstat.
pub fn thread_run_delay_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().nth(1)?.parse().ok()
}

/// The current thread is about to end: keep its run delay.
pub fn thread_ends() {
    if let Some(ns) = thread_run_delay_ns() {
        ENDED_NS.fetch_add(ns, Ordering::Relaxed);
    }
}

/// Calls `thread_ends` when the thread that holds it is done, however it returns.
pub struct Counted;

impl Drop for Counted {
    fn drop(&mut self) {
        thread_ends();
    }
}

/// The run delay of every thread that ended so far, ns.
pub fn ended_threads_waited_ns() -> u64 {
    ENDED_NS.load(Ordering::Relaxed)
}
