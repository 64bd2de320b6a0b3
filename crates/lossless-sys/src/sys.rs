//! Thin, checked wrappers around the libc calls the modules share.

use std::ffi::CString;
use std::io;
use std::mem;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// Turns a libc return value into `io::Result`, reading `errno` on -1.
pub(crate) fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// `socket(2)`, always close-on-exec.
pub(crate) fn socket(
    domain: libc::c_int,
    ty: libc::c_int,
    protocol: libc::c_int,
) -> io::Result<OwnedFd> {
    // SAFETY: socket(2) takes plain integers; a non-negative result is a new
    // descriptor that nothing else owns.
    let fd = cvt(unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, protocol) })?;
    // SAFETY: fd was just returned by socket(2) and is owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `setsockopt(2)` with a plain-old-data value.
pub(crate) fn setsockopt<T: Copy>(
    fd: &impl AsRawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: &T,
) -> io::Result<()> {
    let len = libc::socklen_t::try_from(mem::size_of::<T>())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: value points to size_of::<T>() readable bytes for the duration
    // of the call; T is Copy (plain data) as every socket option here.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (value as *const T).cast::<libc::c_void>(),
            len,
        )
    })?;
    Ok(())
}

/// `getsockopt(2)` for an `int` option.
pub(crate) fn getsockopt_int(
    fd: &impl AsRawFd,
    level: libc::c_int,
    name: libc::c_int,
) -> io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: value and len are valid for writes; the kernel writes at most
    // len bytes into value.
    cvt(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&mut value as *mut libc::c_int).cast::<libc::c_void>(),
            &mut len,
        )
    })?;
    Ok(value)
}

/// An interface name as the kernel wants it: 1..=15 bytes, no NUL, no '/'.
pub(crate) fn ifname_cstring(name: &str) -> io::Result<CString> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "invalid interface name {name:?}: must be 1 to {} bytes without '/'",
                libc::IFNAMSIZ - 1
            ),
        ));
    }
    CString::new(name).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("invalid interface name {name:?}: contains NUL"),
        )
    })
}

/// Socket address structures `sendto_all` may pass to the kernel.
pub(crate) trait SockAddr: Copy {}
impl SockAddr for libc::sockaddr_nl {}
impl SockAddr for libc::sockaddr_ll {}

/// `sendto(2)` of one whole datagram, retried on EINTR; a short send is an
/// error (`WriteZero`, naming `what`).
pub(crate) fn sendto_all<A: SockAddr>(
    fd: &impl AsRawFd,
    buf: &[u8],
    addr: &A,
    what: &str,
) -> io::Result<()> {
    let len = libc::socklen_t::try_from(mem::size_of::<A>())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    loop {
        // SAFETY: buf is valid for buf.len() bytes; addr is a socket address
        // structure (SockAddr) of exactly the length passed.
        let n = unsafe {
            libc::sendto(
                fd.as_raw_fd(),
                buf.as_ptr().cast::<libc::c_void>(),
                buf.len(),
                0,
                (addr as *const A).cast::<libc::sockaddr>(),
                len,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n as usize != buf.len() {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                format!("{what}: sent {n} of {} bytes", buf.len()),
            ));
        }
        return Ok(());
    }
}

/// `recvfrom(2)` with `MSG_TRUNC`, retried on EINTR: fills `buf` and `addr`
/// and returns the datagram's whole length (larger than `buf.len()` when it
/// did not fit; the datagram is consumed either way) and the address length.
pub(crate) fn recvfrom_trunc<A: SockAddr>(
    fd: &impl AsRawFd,
    buf: &mut [u8],
    addr: &mut A,
) -> io::Result<(usize, usize)> {
    loop {
        let mut len = libc::socklen_t::try_from(mem::size_of::<A>())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: buf is valid for writes of buf.len() bytes; addr is a
        // writable socket address structure (SockAddr) of `len` bytes.
        let n = unsafe {
            libc::recvfrom(
                fd.as_raw_fd(),
                buf.as_mut_ptr().cast::<libc::c_void>(),
                buf.len(),
                libc::MSG_TRUNC,
                (addr as *mut A).cast::<libc::sockaddr>(),
                &mut len,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        return Ok((n as usize, len as usize));
    }
}

/// Blocks until one of `fds` is readable or `timeout` passes (`ppoll`,
/// nanosecond resolution; `None` waits without limit). True when one is
/// readable; an interrupted wait returns false.
pub fn wait_any(fds: &[BorrowedFd<'_>], timeout: Option<std::time::Duration>) -> io::Result<bool> {
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|f| libc::pollfd {
            fd: f.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: t.subsec_nanos() as libc::c_long,
    });
    let tsp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: pfds and ts are live for the call; pfds.len() entries; no mask.
    let n = unsafe {
        libc::ppoll(
            pfds.as_mut_ptr(),
            pfds.len() as libc::nfds_t,
            tsp,
            std::ptr::null(),
        )
    };
    match n {
        n if n > 0 => Ok(true),
        0 => Ok(false),
        _ => {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(e)
            }
        }
    }
}

/// `AsRawFd` and `AsFd` for a type that holds its descriptor in `field` (an
/// `OwnedFd`, or another type that has both).
macro_rules! fd_traits {
    ($type:ty, $field:ident) => {
        impl std::os::fd::AsRawFd for $type {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                std::os::fd::AsRawFd::as_raw_fd(&self.$field)
            }
        }

        impl std::os::fd::AsFd for $type {
            fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
                std::os::fd::AsFd::as_fd(&self.$field)
            }
        }
    };
}
pub(crate) use fd_traits;
