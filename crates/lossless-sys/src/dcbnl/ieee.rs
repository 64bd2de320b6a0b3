//! The IEEE 802.1Qaz interface (`DCB_CMD_IEEE_GET`/`IEEE_SET`): the PFC
//! object with its delay allowance, and the whole IEEE_GET reply.

use super::buffer::{decode_dcb_buffer, DcbBuffer, DCB_ATTR_DCB_BUFFER};
use super::error::DcbError;
use super::msg::{decode_with, find_attr, ne_u64, request, struct_attr, DcbCmd, DCB_ATTR_IEEE};
use crate::netlink::{self, Bytes, NetlinkError};

pub(crate) const DCB_ATTR_IEEE_PFC: u16 = 2;
/// `sizeof(struct ieee_pfc)`: pfc_cap, pfc_en, mbc, (pad), delay u16, (pad to 8),
/// requests[8] u64, indications[8] u64.
pub(crate) const IEEE_PFC_LEN: usize = 136;
/// Offsets in `struct ieee_pfc`.
pub(crate) const IEEE_PFC_DELAY: usize = 4;
pub(crate) const IEEE_PFC_REQUESTS: usize = 8;
pub(crate) const IEEE_PFC_INDICATIONS: usize = 72;

/// `struct ieee_pfc` as the driver reports it in `DCB_CMD_IEEE_GET`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IeeePfc {
    /// Traffic classes that may be PFC-enabled at once (`pfc_cap`).
    pub cap: u8,
    /// Bit `p` set: PFC on priority `p` (`pfc_en`).
    pub enabled: u8,
    /// MACsec bypass capability (`mbc`).
    pub mbc: u8,
    /// The delay allowance, bit times (`delay`; mlx5 reads it as metres of cable).
    pub delay: u16,
    /// PFC frames sent per priority (`requests`).
    pub requests: [u64; 8],
    /// PFC frames received per priority (`indications`).
    pub indications: [u64; 8],
}

/// What `DCB_CMD_IEEE_GET` says about the objects adaptive headroom uses. Each
/// is absent when the driver lacks the op that reports it (`ieee_getpfc`,
/// `dcbnl_getbuffer`): the kernel then leaves the attribute out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IeeeConfig {
    pub pfc: Option<IeeePfc>,
    pub buffer: Option<DcbBuffer>,
}

/// `DCB_CMD_IEEE_SET`: `DCB_ATTR_IEEE { DCB_ATTR_IEEE_PFC: struct ieee_pfc }` with
/// PFC on the priorities of `enabled` (of 8 classes) and `delay`, the allowance for the
/// link's round-trip delay in bit times (<linux/dcbnl.h>; some drivers, mlx5, read it
/// as metres of cable instead).
pub fn encode_set_ieee_pfc(
    seq: u32,
    ifname: &str,
    enabled: u8,
    delay: u16,
) -> Result<Vec<u8>, DcbError> {
    let mut b = request(DcbCmd::IeeeSet, seq, ifname)?;
    let n = b.nest_start(DCB_ATTR_IEEE);
    let mut pfc = [0u8; IEEE_PFC_LEN];
    pfc[0] = 8; // pfc_cap: classes that may be PFC-enabled at once
    pfc[1] = enabled;
    pfc[4..6].copy_from_slice(&delay.to_ne_bytes());
    b.attr(DCB_ATTR_IEEE_PFC, &pfc);
    b.nest_end(n);
    Ok(b.finish())
}

/// `DCB_CMD_IEEE_GET`: the driver's whole IEEE configuration (the request
/// carries only the interface name).
pub fn encode_get_ieee(seq: u32, ifname: &str) -> Result<Vec<u8>, DcbError> {
    Ok(request(DcbCmd::IeeeGet, seq, ifname)?.finish())
}

fn decode_ieee_pfc(a: &netlink::Attr<'_>) -> Result<IeeePfc, NetlinkError> {
    let b = struct_attr(a, IEEE_PFC_LEN, "DCB_ATTR_IEEE_PFC")?;
    let mut pfc = IeeePfc {
        cap: b.first().copied().unwrap_or_default(),
        enabled: b.get(1).copied().unwrap_or_default(),
        mbc: b.get(2).copied().unwrap_or_default(),
        delay: netlink::ne_u16(b, IEEE_PFC_DELAY).unwrap_or_default(),
        ..IeeePfc::default()
    };
    for i in 0..8 {
        pfc.requests[i] = ne_u64(b, IEEE_PFC_REQUESTS + 8 * i);
        pfc.indications[i] = ne_u64(b, IEEE_PFC_INDICATIONS + 8 * i);
    }
    Ok(pfc)
}

/// Decodes the reply to `DCB_CMD_IEEE_GET` (`dcbnl_ieee_fill()` in dcbnl.c):
/// `DCB_ATTR_IFNAME`, `DCB_ATTR_IEEE { ETS, MAXRATE, QCN, QCN_STATS, PFC,
/// DCB_BUFFER, APP_TABLE, peer objects ... }`, `DCB_ATTR_DCBX`. The nest is
/// required; of its members only the PFC object and the DCB buffer are read,
/// each absent when the driver does not report it. The peer's PFC
/// (`DCB_ATTR_IEEE_PEER_PFC`) is not ours and is skipped with the rest.
pub fn decode_ieee_reply(
    buf: &[u8],
    seq: u32,
    ifname: &str,
) -> Result<Option<IeeeConfig>, DcbError> {
    decode_with(buf, seq, DcbCmd::IeeeGet, ifname, parse_ieee)
}

fn parse_ieee(attrs: Bytes<'_>) -> Result<IeeeConfig, NetlinkError> {
    let nest = find_attr(attrs.attrs(), DCB_ATTR_IEEE, "DCB_ATTR_IEEE", attrs.offset)?;
    let mut cfg = IeeeConfig::default();
    for a in nest.nested() {
        let a = a?;
        match a.ty {
            DCB_ATTR_IEEE_PFC if cfg.pfc.is_none() => cfg.pfc = Some(decode_ieee_pfc(&a)?),
            DCB_ATTR_DCB_BUFFER if cfg.buffer.is_none() => {
                cfg.buffer = Some(decode_dcb_buffer(&a)?)
            }
            DCB_ATTR_IEEE_PFC | DCB_ATTR_DCB_BUFFER => {
                return Err(NetlinkError::new(
                    a.offset,
                    "DCB_ATTR_IEEE",
                    "duplicate attribute",
                ))
            }
            _ => {}
        }
    }
    Ok(cfg)
}
