//! The process heap: giving the memory it holds free back to the system.
//!
//! glibc keeps what a burst of work freed for the next allocations, in the
//! process's RSS: thousands of ports coming up at once, or a `status` of
//! thousands of ports (its answer is built as a JSON value, several MB), leave
//! the heap as large as their peak, though the daemon holds far less once they
//! are over. Only the top of the heap goes back by itself.

/// Gives every free page of the heap back to the system (glibc's
/// `malloc_trim(0)`, which walks every arena and every free chunk, not only the
/// top). True when some memory was released. Elsewhere than glibc, nothing to do.
pub fn trim() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim takes no pointer and works on the allocator's own
        // state under its own locks; any thread may call it at any time.
        unsafe { libc::malloc_trim(0) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}
