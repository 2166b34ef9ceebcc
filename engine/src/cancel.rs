//! One process-wide cancel flag: set from Python when the rank is interrupted (Ctrl-C,
//! SIGTERM) while a phase runs with the GIL released, so the phase stops within one transfer
//! instead of running to its end.

use std::sync::atomic::{AtomicBool, Ordering};

static CANCELLED: AtomicBool = AtomicBool::new(false);

/// Stop every lane of every running and later `Executor::run` after its transfer in flight.
pub fn set(cancelled: bool) {
    CANCELLED.store(cancelled, Ordering::SeqCst);
}

pub fn requested() -> bool {
    CANCELLED.load(Ordering::Relaxed)
}

/// Held by every test that sets the flag or runs a plan: the flag is process-wide and tests
/// run in parallel threads.
#[cfg(test)]
pub static TEST_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_is_set_and_cleared() {
        let _serial = TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        set(true);
        assert!(requested());
        set(false);
        assert!(!requested());
    }
}
