//! Registration of this crate's sockets with tokio's reactor.
//!
//! `AsyncFd::register` is `unsafe`: the caller promises that the descriptor
//! stays open and the same for as long as the `AsyncFd` lives. That holds for
//! the types here, which own their descriptor (`OwnedFd`) from creation to
//! drop and always return it from `as_raw_fd`; so the promise is made once,
//! here, and the daemon stays free of `unsafe`.

use std::io;

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use crate::addr::AddrMonitor;
use crate::link::LinkMonitor;
use crate::packet::PacketSocket;
use crate::shared_packet::SharedPacketSocket;
use crate::timestamp::MeasureSocket;

mod sealed {
    pub trait OwnsFd: std::os::fd::AsRawFd {}
}

/// Types that own one descriptor for their whole life.
pub trait OwnsFd: sealed::OwnsFd {}

impl sealed::OwnsFd for PacketSocket {}
impl OwnsFd for PacketSocket {}
impl sealed::OwnsFd for SharedPacketSocket {}
impl OwnsFd for SharedPacketSocket {}
impl sealed::OwnsFd for MeasureSocket {}
impl OwnsFd for MeasureSocket {}
impl sealed::OwnsFd for LinkMonitor {}
impl OwnsFd for LinkMonitor {}
impl sealed::OwnsFd for AddrMonitor {}
impl OwnsFd for AddrMonitor {}

/// Wraps `inner` in an `AsyncFd` (read and write interest). Must run inside a
/// tokio runtime.
pub fn async_fd<T: OwnsFd>(inner: T) -> io::Result<AsyncFd<T>> {
    // SAFETY: `OwnsFd` is sealed and implemented only for types holding an
    // `OwnedFd` that is neither closed nor replaced before they are dropped,
    // and whose `as_raw_fd` returns it; the `AsyncFd` owns `inner`.
    unsafe { AsyncFd::register(inner) }.map_err(io::Error::from)
}

/// Wraps `inner` in an `AsyncFd` with the given interest: `READABLE | ERROR` for a
/// [`MeasureSocket`], whose transmit timestamps wait on the error queue.
pub fn async_fd_with_interest<T: OwnsFd>(inner: T, interest: Interest) -> io::Result<AsyncFd<T>> {
    // SAFETY: as in `async_fd`.
    unsafe { AsyncFd::register_with_interest(inner, interest) }.map_err(io::Error::from)
}
