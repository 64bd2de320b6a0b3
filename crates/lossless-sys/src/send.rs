//! Sending whole Ethernet frames in batches (`sendmmsg`) on a packet socket,
//! each frame addressed to its interface with its own destination and
//! EtherType, and any of them with a request for its software transmit
//! timestamp (the `SO_TIMESTAMPING` control message `sendmsg(2)` takes per
//! message). Shared by [`crate::batch::BatchSocket`] and
//! [`crate::ring::RingSocket`].

use std::io;
use std::mem;
use std::os::fd::{AsRawFd, OwnedFd};

use crate::packet::frame_address;

/// The headers a `sendmmsg` call needs, kept between calls so a busy
/// sender does not allocate per batch. The pointers in them are set and used
/// within one call only.
#[derive(Default)]
pub(crate) struct SendScratch {
    names: Vec<libc::sockaddr_ll>,
    iovs: Vec<libc::iovec>,
    msgs: Vec<libc::mmsghdr>,
    /// Per frame, the `SO_TIMESTAMPING` control message asking for its transmit
    /// time, if it does (`CMSG_SPACE(4)`: 24 octets on 64-bit Linux).
    controls: Vec<Option<[u64; 3]>>,
}

/// A control message asking the kernel for a frame's software transmit
/// timestamp (`SO_TIMESTAMPING` with `SOF_TIMESTAMPING_TX_SOFTWARE`), the
/// way `sendmsg(2)` takes it per message: the socket's own flags, set once,
/// say how the stamp is reported.
fn tx_stamp_request() -> [u64; 3] {
    let mut c = [0u64; 3];
    // SAFETY: CMSG_LEN and CMSG_SPACE are arithmetic on their argument.
    let (len, space) = unsafe {
        (
            libc::CMSG_LEN(mem::size_of::<u32>() as u32) as usize,
            libc::CMSG_SPACE(mem::size_of::<u32>() as u32) as usize,
        )
    };
    assert!(space <= mem::size_of_val(&c), "CMSG_SPACE(4) is {space}");
    // SAFETY: c is 8-aligned and at least CMSG_SPACE(4) octets long (checked
    // above), room for one cmsghdr and its u32, written through the header's
    // own layout and an unaligned write for the data.
    unsafe {
        let h = c.as_mut_ptr().cast::<libc::cmsghdr>();
        (*h).cmsg_len = len as _;
        (*h).cmsg_level = libc::SOL_SOCKET;
        (*h).cmsg_type = crate::timestamp::SO_TIMESTAMPING;
        std::ptr::write_unaligned(
            libc::CMSG_DATA(h).cast::<u32>(),
            crate::timestamp::SOF_TIMESTAMPING_TX_SOFTWARE,
        );
    }
    c
}

// SAFETY: the raw pointers inside are written and dereferenced only during
// one send_frames call, on the calling thread; between calls they are dead
// values that nothing reads.
unsafe impl Send for SendScratch {}

/// `sendmmsg` of whole Ethernet frames on interface `ifindex`; a frame whose
/// flag is set asks for its software transmit timestamp (it comes back on the
/// socket's error queue, if the socket reports software stamps).
pub(crate) fn send_frames<'a>(
    fd: &OwnedFd,
    ifindex: u32,
    frames: impl IntoIterator<Item = (&'a [u8], bool)>,
    scratch: &mut SendScratch,
) -> io::Result<usize> {
    let SendScratch {
        names,
        iovs,
        msgs,
        controls,
    } = scratch;
    names.clear();
    iovs.clear();
    msgs.clear();
    controls.clear();
    for (f, stamp) in frames {
        names.push(frame_address(ifindex, f)?);
        iovs.push(libc::iovec {
            iov_base: f.as_ptr().cast_mut().cast::<libc::c_void>(),
            iov_len: f.len(),
        });
        controls.push(stamp.then(tx_stamp_request));
    }
    for i in 0..names.len() {
        // SAFETY: mmsghdr is plain data; all-zero is a valid value.
        let mut m: libc::mmsghdr = unsafe { mem::zeroed() };
        m.msg_hdr.msg_name = (&mut names[i] as *mut libc::sockaddr_ll).cast();
        m.msg_hdr.msg_namelen = mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        m.msg_hdr.msg_iov = &mut iovs[i];
        m.msg_hdr.msg_iovlen = 1;
        if let Some(c) = &mut controls[i] {
            m.msg_hdr.msg_control = c.as_mut_ptr().cast();
            // The whole buffer: CMSG_SPACE(4) is 24 octets, its size.
            m.msg_hdr.msg_controllen = mem::size_of_val(c) as _;
        }
        msgs.push(m);
    }
    let mut sent = 0;
    while sent < msgs.len() {
        let rest = &mut msgs[sent..];
        // SAFETY: rest holds valid headers whose names, iovecs (over the
        // caller's frames) and control messages outlive the call.
        let n = unsafe {
            libc::sendmmsg(
                fd.as_raw_fd(),
                rest.as_mut_ptr(),
                rest.len() as libc::c_uint,
                0,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return if sent == 0 { Err(e) } else { Ok(sent) };
        }
        if n == 0 {
            break;
        }
        sent += n as usize;
    }
    Ok(sent)
}
