//! Registration of this crate's sockets with tokio's reactor.
//!
//! `AsyncFd::register` is `unsafe`: the caller promises that the descriptor
//! stays open and the same for as long as the `AsyncFd` lives. That holds for
//! the types here, which own their descriptor (`OwnedFd`) from creation to
//! drop and always return it from `as_raw_fd`; so the promise is made once,
//! here, and the daemon stays free of `unsafe`.

use std::io;

use tokio::io::unix::AsyncFd;

use crate::link::LinkMonitor;
use crate::packet::PacketSocket;

mod sealed {
    pub trait OwnsFd: std::os::fd::AsRawFd {}
}

/// Types that own one descriptor for their whole life.
pub trait OwnsFd: sealed::OwnsFd {}

impl sealed::OwnsFd for PacketSocket {}
impl OwnsFd for PacketSocket {}
impl sealed::OwnsFd for LinkMonitor {}
impl OwnsFd for LinkMonitor {}

/// Wraps `inner` in an `AsyncFd` (read and write interest). Must run inside a
/// tokio runtime.
pub fn async_fd<T: OwnsFd>(inner: T) -> io::Result<AsyncFd<T>> {
    // SAFETY: `OwnsFd` is sealed and implemented only for types holding an
    // `OwnedFd` that is neither closed nor replaced before they are dropped,
    // and whose `as_raw_fd` returns it; the `AsyncFd` owns `inner`.
    unsafe { AsyncFd::register(inner) }.map_err(io::Error::from)
}
