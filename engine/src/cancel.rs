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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_is_set_and_cleared() {
        set(true);
        assert!(requested());
        set(false);
        assert!(!requested());
    }
}
