//! Running code inside a named network namespace (`ip netns add NAME`, a
//! file under `/run/netns`): tests and benchmarks open sockets there. A
//! socket keeps the namespace it was created in, so it can be used from any
//! thread afterwards.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// Runs `f` on a new thread that has entered the network namespace `name`
/// and returns what it returns. The calling thread's namespace is not
/// touched.
pub fn in_netns<T: Send>(name: &str, f: impl FnOnce() -> T + Send) -> io::Result<T> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("invalid namespace name {name:?}"),
        ));
    }
    let path = Path::new("/run/netns").join(name);
    let ns = File::open(&path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: ns is an open namespace file; setns changes only this
            // thread's network namespace, and the thread ends with f.
            crate::sys::cvt(unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) })?;
            Ok(f())
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}
