//! The DCB buffer (`struct dcbnl_buffer`): the NIC's receive buffers and the
//! priority each holds, carried in the IEEE nest.

use super::error::DcbError;
use super::msg::{request, struct_attr, DcbCmd, DCB_ATTR_IEEE};
use crate::netlink::{self, NetlinkError};

/// In the `DCB_ATTR_IEEE` nest: `struct dcbnl_buffer`. The kernel adds it to the
/// IEEE_GET reply only for a driver with `dcbnl_getbuffer`, and passes it on in
/// IEEE_SET only to a driver with `dcbnl_setbuffer` (silently dropping it otherwise).
pub(crate) const DCB_ATTR_DCB_BUFFER: u16 = 10;
/// `sizeof(struct dcbnl_buffer)`: prio2buffer[8] u8, buffer_size[8] u32, total_size u32.
pub(crate) const DCB_BUFFER_LEN: usize = 44;
/// Offsets in `struct dcbnl_buffer`.
pub(crate) const DCB_BUFFER_SIZES: usize = 8;
pub(crate) const DCB_BUFFER_TOTAL: usize = 40;
/// `DCBX_MAX_BUFFERS`: buffers a port may have.
pub const MAX_BUFFERS: usize = 8;

/// `struct dcbnl_buffer`: the NIC's receive buffers and which priority each
/// holds (`dcb buffer show` in iproute2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DcbBuffer {
    /// The buffer (0..8) each priority is received into.
    pub prio2buffer: [u8; 8],
    /// Size of each buffer, bytes.
    pub buffer_size: [u32; MAX_BUFFERS],
    /// The port's whole buffer, bytes (reported by the driver; ignored on set).
    pub total_size: u32,
}

impl DcbBuffer {
    /// The buffers that hold at least one priority of `priorities` (bit `p` =
    /// priority `p`), as a bit mask of buffer indices.
    pub fn buffers_of(&self, priorities: u8) -> u8 {
        let mut mask = 0u8;
        for (p, &b) in self.prio2buffer.iter().enumerate() {
            if priorities & (1 << p) != 0 && usize::from(b) < MAX_BUFFERS {
                mask |= 1 << b;
            }
        }
        mask
    }

    pub(crate) fn check(&self) -> Result<(), String> {
        match self
            .prio2buffer
            .iter()
            .enumerate()
            .find(|(_, &b)| usize::from(b) >= MAX_BUFFERS)
        {
            Some((p, b)) => Err(format!(
                "prio2buffer[{p}] = {b}: a port has buffers 0..={}",
                MAX_BUFFERS - 1
            )),
            None => Ok(()),
        }
    }

    pub(crate) fn to_bytes(self) -> [u8; DCB_BUFFER_LEN] {
        let mut b = [0u8; DCB_BUFFER_LEN];
        b[..8].copy_from_slice(&self.prio2buffer);
        for (i, size) in self.buffer_size.iter().enumerate() {
            let at = DCB_BUFFER_SIZES + 4 * i;
            b[at..at + 4].copy_from_slice(&size.to_ne_bytes());
        }
        b[DCB_BUFFER_TOTAL..].copy_from_slice(&self.total_size.to_ne_bytes());
        b
    }
}

/// `DCB_CMD_IEEE_SET`: `DCB_ATTR_IEEE { DCB_ATTR_DCB_BUFFER: struct dcbnl_buffer }`.
/// A `prio2buffer` entry beyond the 8 buffers is refused here, as the kernel
/// would (`-EINVAL`).
pub fn encode_set_dcb_buffer(
    seq: u32,
    ifname: &str,
    buffer: &DcbBuffer,
) -> Result<Vec<u8>, DcbError> {
    buffer.check().map_err(DcbError::Invalid)?;
    let mut b = request(DcbCmd::IeeeSet, seq, ifname)?;
    let n = b.nest_start(DCB_ATTR_IEEE);
    b.attr(DCB_ATTR_DCB_BUFFER, &buffer.to_bytes());
    b.nest_end(n);
    Ok(b.finish())
}

pub(crate) fn decode_dcb_buffer(a: &netlink::Attr<'_>) -> Result<DcbBuffer, NetlinkError> {
    let b = struct_attr(a, DCB_BUFFER_LEN, "DCB_ATTR_DCB_BUFFER")?;
    let mut buf = DcbBuffer::default();
    for (p, slot) in buf.prio2buffer.iter_mut().enumerate() {
        *slot = b.get(p).copied().unwrap_or_default();
    }
    for (i, size) in buf.buffer_size.iter_mut().enumerate() {
        *size = netlink::ne_u32(b, DCB_BUFFER_SIZES + 4 * i).unwrap_or_default();
    }
    buf.total_size = netlink::ne_u32(b, DCB_BUFFER_TOTAL).unwrap_or_default();
    buf.check()
        .map_err(|why| NetlinkError::new(a.payload_offset, "DCB_ATTR_DCB_BUFFER", why))?;
    Ok(buf)
}
