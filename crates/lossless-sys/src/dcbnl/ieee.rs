//! The IEEE 802.1Qaz interface: `DCB_CMD_IEEE_SET` of ETS, PFC (with its
//! delay allowance), the DCB buffer, APP entries and the trust order;
//! `DCB_CMD_IEEE_DEL` of APP entries; and the `DCB_CMD_IEEE_GET` reply.
//!
//! `IEEE_SET` hands each object to the driver in a fixed order (ETS,
//! MAXRATE, QCN, PFC, DCB buffer, APP table, trust table), stops at the first
//! the driver refuses and answers with its errno in the status byte. The
//! kernels we read pass ETS, PFC and the buffer only to a driver with the
//! matching op and drop them without a word otherwise: read back with
//! `IEEE_GET` to know what the driver holds.

use super::app::{
    check_apps, check_trust, decode_app_table, decode_trust_table, put_app_table, put_trust_table,
    AppSelector, DcbApp, DCB_ATTR_DCB_APP_TRUST_TABLE, DCB_ATTR_IEEE_APP_TABLE,
    DCB_ATTR_IEEE_PEER_APP,
};
use super::buffer::{decode_dcb_buffer, DcbBuffer, DCB_ATTR_DCB_BUFFER};
use super::dcbx::DcbxMode;
use super::error::DcbError;
use super::msg::{
    decode_with, find_attr, ne_u64, request, struct_attr, DcbCmd, DCB_ATTR_DCBX, DCB_ATTR_IEEE,
};
use crate::netlink::{self, Attr, Bytes, NetlinkError};

pub(crate) const DCB_ATTR_IEEE_ETS: u16 = 1;
pub(crate) const DCB_ATTR_IEEE_PFC: u16 = 2;
pub(crate) const DCB_ATTR_IEEE_PEER_ETS: u16 = 4;
pub(crate) const DCB_ATTR_IEEE_PEER_PFC: u16 = 5;
pub(crate) const DCB_ATTR_IEEE_MAXRATE: u16 = 7;
/// `sizeof(struct ieee_pfc)`: pfc_cap, pfc_en, mbc, (pad), delay u16, (pad to 8),
/// requests[8] u64, indications[8] u64.
pub(crate) const IEEE_PFC_LEN: usize = 136;
/// Offsets in `struct ieee_pfc`.
pub(crate) const IEEE_PFC_DELAY: usize = 4;
pub(crate) const IEEE_PFC_REQUESTS: usize = 8;
pub(crate) const IEEE_PFC_INDICATIONS: usize = 72;
/// `sizeof(struct ieee_ets)`: willing, ets_cap, cbs, then seven u8[8] tables.
pub(crate) const IEEE_ETS_LEN: usize = 59;
/// Offsets in `struct ieee_ets` of tc_tx_bw, tc_rx_bw, tc_tsa, prio_tc,
/// tc_reco_bw, tc_reco_tsa, reco_prio_tc.
pub(crate) const IEEE_ETS_TABLES: [usize; 7] = [3, 11, 19, 27, 35, 43, 51];
/// `sizeof(struct ieee_maxrate)`: tc_maxrate[8] u64.
pub(crate) const IEEE_MAXRATE_LEN: usize = 64;
/// `IEEE_8021QAZ_MAX_TCS`.
pub const MAX_TCS: usize = 8;

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

/// What `IEEE_SET` writes of `struct ieee_pfc`: the enabled priorities and
/// the delay allowance together, so that setting PFC never loses the delay
/// programmed for headroom. `pfc_cap` is sent as 8, `mbc` as 0, the counters
/// as 0 (drivers ignore them on set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IeeePfcSet {
    /// Bit `p` set: PFC on priority `p`.
    pub enabled: u8,
    /// The delay allowance in bit times (see [`IeeePfc::delay`]).
    pub delay: u16,
}

/// A transmission selection algorithm (`IEEE_8021QAZ_TSA_*`). Open: unknown
/// values read from a driver are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Tsa(pub u8);

impl Tsa {
    pub const STRICT: Tsa = Tsa(0);
    pub const CB_SHAPER: Tsa = Tsa(1);
    pub const ETS: Tsa = Tsa(2);
    pub const VENDOR: Tsa = Tsa(255);
}

/// `struct ieee_ets`: the ETS configuration and recommendation per traffic
/// class (TC 0..7), and the priority-to-TC maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IeeeEts {
    pub willing: bool,
    /// TCs the device supports (`ets_cap`; reported, ignored on set).
    pub ets_cap: u8,
    /// Credit-based shaper support (`cbs`).
    pub cbs: bool,
    /// Bandwidth % per TC, transmit.
    pub tc_tx_bw: [u8; MAX_TCS],
    /// Bandwidth % per TC, receive (few drivers use it).
    pub tc_rx_bw: [u8; MAX_TCS],
    pub tc_tsa: [Tsa; MAX_TCS],
    /// The TC of each priority 0..7.
    pub prio_tc: [u8; MAX_TCS],
    /// The recommendation (ETS Recommendation TLV) the same way.
    pub tc_reco_bw: [u8; MAX_TCS],
    pub tc_reco_tsa: [Tsa; MAX_TCS],
    pub reco_prio_tc: [u8; MAX_TCS],
}

impl IeeeEts {
    /// Refuses what IEEE 802.1Qaz does not allow: a TC past 7 in a
    /// priority map, a bandwidth above 100%, and ETS bandwidths (of the TCs
    /// whose algorithm is ETS) that do not add up to 100%.
    pub fn check(&self) -> Result<(), String> {
        for (table, map) in [
            ("prio_tc", &self.prio_tc),
            ("reco_prio_tc", &self.reco_prio_tc),
        ] {
            if let Some((p, tc)) = map.iter().enumerate().find(|(_, &tc)| tc >= 8) {
                return Err(format!("ETS {table}[{p}] = {tc}: TCs are 0..=7"));
            }
        }
        let tables = [
            ("tc_tx_bw", &self.tc_tx_bw, &self.tc_tsa),
            ("tc_rx_bw", &self.tc_rx_bw, &self.tc_tsa),
            ("tc_reco_bw", &self.tc_reco_bw, &self.tc_reco_tsa),
        ];
        for (table, bw, tsa) in tables {
            if let Some((tc, pct)) = bw.iter().enumerate().find(|(_, &v)| v > 100) {
                return Err(format!("ETS {table}[{tc}] = {pct}% is above 100"));
            }
            let ets: Vec<usize> = (0..MAX_TCS).filter(|&t| tsa[t] == Tsa::ETS).collect();
            let sum: u32 = ets.iter().map(|&t| u32::from(bw[t])).sum();
            if table != "tc_rx_bw" && !ets.is_empty() && sum != 100 {
                return Err(format!(
                    "ETS {table}: the TCs with the ETS algorithm ({ets:?}) have {sum}%, not 100%"
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn to_bytes(self) -> [u8; IEEE_ETS_LEN] {
        let mut b = [0u8; IEEE_ETS_LEN];
        b[0] = u8::from(self.willing);
        b[1] = self.ets_cap;
        b[2] = u8::from(self.cbs);
        let tsa = |t: [Tsa; MAX_TCS]| t.map(|x| x.0);
        let tables = [
            self.tc_tx_bw,
            self.tc_rx_bw,
            tsa(self.tc_tsa),
            self.prio_tc,
            self.tc_reco_bw,
            tsa(self.tc_reco_tsa),
            self.reco_prio_tc,
        ];
        for (at, table) in IEEE_ETS_TABLES.iter().zip(tables) {
            b[*at..*at + MAX_TCS].copy_from_slice(&table);
        }
        b
    }

    fn from_bytes(b: &[u8]) -> IeeeEts {
        let byte = |at: usize| b.get(at).copied().unwrap_or_default();
        let table = |i: usize| -> [u8; MAX_TCS] {
            let at = IEEE_ETS_TABLES.get(i).copied().unwrap_or_default();
            std::array::from_fn(|t| byte(at + t))
        };
        IeeeEts {
            willing: byte(0) != 0,
            ets_cap: byte(1),
            cbs: byte(2) != 0,
            tc_tx_bw: table(0),
            tc_rx_bw: table(1),
            tc_tsa: table(2).map(Tsa),
            prio_tc: table(3),
            tc_reco_bw: table(4),
            tc_reco_tsa: table(5).map(Tsa),
            reco_prio_tc: table(6),
        }
    }
}

/// `struct ieee_maxrate`: the rate limit per TC as the driver reports it
/// (iproute2's `dcb maxrate` reads it as bits per second; 0 = no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IeeeMaxrate {
    pub tc_maxrate: [u64; MAX_TCS],
}

/// What `DCB_CMD_IEEE_SET` writes: each object present is sent, in one
/// request. Empty `apps` sends no APP table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IeeeSet {
    pub ets: Option<IeeeEts>,
    pub pfc: Option<IeeePfcSet>,
    pub buffer: Option<DcbBuffer>,
    /// APP entries to add.
    pub apps: Vec<DcbApp>,
    /// The selector trust order (Linux 6.2+, drivers with
    /// `dcbnl_setapptrust`).
    pub trust: Option<Vec<AppSelector>>,
}

/// What `DCB_CMD_IEEE_GET` says about the objects adaptive headroom uses: the
/// part of [`IeeeState`] the headroom code reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IeeeConfig {
    pub pfc: Option<IeeePfc>,
    pub buffer: Option<DcbBuffer>,
}

/// The whole `DCB_CMD_IEEE_GET` reply. An object is `None` when the driver
/// lacks the op that reports it (the kernel then leaves the attribute out):
/// `ieee_getets`, `ieee_getmaxrate`, `ieee_getpfc`, `dcbnl_getbuffer`,
/// `dcbnl_getapptrust`, the `ieee_peer_get*` ops of firmware agents,
/// `getdcbx`. The APP table is the kernel's own list for the device, always
/// present.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IeeeState {
    pub ets: Option<IeeeEts>,
    pub maxrate: Option<IeeeMaxrate>,
    pub pfc: Option<IeeePfc>,
    pub buffer: Option<DcbBuffer>,
    pub apps: Vec<DcbApp>,
    /// The selector trust order; `Some` exactly when the driver supports it.
    pub trust: Option<Vec<AppSelector>>,
    pub peer_ets: Option<IeeeEts>,
    pub peer_pfc: Option<IeeePfc>,
    pub peer_apps: Option<Vec<DcbApp>>,
    /// `DCB_ATTR_DCBX` after the nest.
    pub dcbx: Option<DcbxMode>,
}

impl IeeeState {
    /// The headroom part.
    pub fn config(&self) -> IeeeConfig {
        IeeeConfig {
            pfc: self.pfc,
            buffer: self.buffer,
        }
    }
}

fn pfc_bytes(pfc: IeeePfcSet) -> [u8; IEEE_PFC_LEN] {
    let mut b = [0u8; IEEE_PFC_LEN];
    b[0] = 8; // pfc_cap: classes that may be PFC-enabled at once
    b[1] = pfc.enabled;
    b[IEEE_PFC_DELAY..IEEE_PFC_DELAY + 2].copy_from_slice(&pfc.delay.to_ne_bytes());
    b
}

/// `DCB_CMD_IEEE_SET`: `DCB_ATTR_IEEE { ETS, PFC, DCB_BUFFER, APP_TABLE {
/// entries }, APP_TRUST_TABLE { selectors } }`, each only when present in
/// `set`. Everything is checked before anything is encoded: ETS with
/// [`IeeeEts::check`], the buffer's indices, each APP entry with
/// [`DcbApp::check`], the trust order for unknown or repeated selectors; a
/// request with nothing to set is refused.
pub fn encode_set_ieee(seq: u32, ifname: &str, set: &IeeeSet) -> Result<Vec<u8>, DcbError> {
    let invalid = |why: String| DcbError::Invalid(format!("{}: {why}", DcbCmd::IeeeSet));
    if let Some(ets) = &set.ets {
        ets.check().map_err(invalid)?;
    }
    if let Some(buffer) = &set.buffer {
        buffer.check().map_err(invalid)?;
    }
    if !set.apps.is_empty() {
        check_apps(&set.apps)?;
    }
    if let Some(order) = &set.trust {
        check_trust(order)?;
    }
    if set.ets.is_none()
        && set.pfc.is_none()
        && set.buffer.is_none()
        && set.apps.is_empty()
        && set.trust.is_none()
    {
        return Err(invalid("nothing to set".into()));
    }
    let mut b = request(DcbCmd::IeeeSet, seq, ifname)?;
    let n = b.nest_start(DCB_ATTR_IEEE);
    if let Some(ets) = set.ets {
        b.attr(DCB_ATTR_IEEE_ETS, &ets.to_bytes());
    }
    if let Some(pfc) = set.pfc {
        b.attr(DCB_ATTR_IEEE_PFC, &pfc_bytes(pfc));
    }
    if let Some(buffer) = set.buffer {
        b.attr(DCB_ATTR_DCB_BUFFER, &buffer.to_bytes());
    }
    if !set.apps.is_empty() {
        put_app_table(&mut b, &set.apps);
    }
    if let Some(order) = &set.trust {
        put_trust_table(&mut b, order);
    }
    b.nest_end(n);
    Ok(b.finish())
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
    let set = IeeeSet {
        pfc: Some(IeeePfcSet { enabled, delay }),
        ..IeeeSet::default()
    };
    encode_set_ieee(seq, ifname, &set)
}

/// `DCB_CMD_IEEE_SET`: `DCB_ATTR_IEEE { DCB_ATTR_IEEE_ETS: struct ieee_ets }`.
pub fn encode_set_ieee_ets(seq: u32, ifname: &str, ets: &IeeeEts) -> Result<Vec<u8>, DcbError> {
    let set = IeeeSet {
        ets: Some(*ets),
        ..IeeeSet::default()
    };
    encode_set_ieee(seq, ifname, &set)
}

/// `DCB_CMD_IEEE_SET`: `DCB_ATTR_IEEE { DCB_ATTR_IEEE_APP_TABLE { entries } }`,
/// adding these entries (at least one; each checked).
pub fn encode_set_ieee_apps(seq: u32, ifname: &str, apps: &[DcbApp]) -> Result<Vec<u8>, DcbError> {
    check_apps(apps)?;
    let set = IeeeSet {
        apps: apps.to_vec(),
        ..IeeeSet::default()
    };
    encode_set_ieee(seq, ifname, &set)
}

/// `DCB_CMD_IEEE_SET`: `DCB_ATTR_IEEE { DCB_ATTR_DCB_APP_TRUST_TABLE {
/// selectors } }`: the driver trusts these selectors in this order (say DSCP,
/// then PCP); an empty order trusts none.
pub fn encode_set_app_trust(
    seq: u32,
    ifname: &str,
    order: &[AppSelector],
) -> Result<Vec<u8>, DcbError> {
    let set = IeeeSet {
        trust: Some(order.to_vec()),
        ..IeeeSet::default()
    };
    encode_set_ieee(seq, ifname, &set)
}

/// `DCB_CMD_IEEE_DEL`: `DCB_ATTR_IEEE { DCB_ATTR_IEEE_APP_TABLE { entries }
/// }`, removing exactly these entries (at least one; each checked); entries
/// not listed, whoever set them, stay.
pub fn encode_del_ieee_apps(seq: u32, ifname: &str, apps: &[DcbApp]) -> Result<Vec<u8>, DcbError> {
    check_apps(apps)?;
    let mut b = request(DcbCmd::IeeeDel, seq, ifname)?;
    let n = b.nest_start(DCB_ATTR_IEEE);
    put_app_table(&mut b, apps);
    b.nest_end(n);
    Ok(b.finish())
}

/// `DCB_CMD_IEEE_GET`: the driver's whole IEEE configuration (the request
/// carries only the interface name).
pub fn encode_get_ieee(seq: u32, ifname: &str) -> Result<Vec<u8>, DcbError> {
    Ok(request(DcbCmd::IeeeGet, seq, ifname)?.finish())
}

fn decode_ieee_pfc(a: &Attr<'_>, what: &'static str) -> Result<IeeePfc, NetlinkError> {
    let b = struct_attr(a, IEEE_PFC_LEN, what)?;
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

fn decode_ets(a: &Attr<'_>, what: &'static str) -> Result<IeeeEts, NetlinkError> {
    Ok(IeeeEts::from_bytes(struct_attr(a, IEEE_ETS_LEN, what)?))
}

fn decode_maxrate(a: &Attr<'_>) -> Result<IeeeMaxrate, NetlinkError> {
    let b = struct_attr(a, IEEE_MAXRATE_LEN, "DCB_ATTR_IEEE_MAXRATE")?;
    Ok(IeeeMaxrate {
        tc_maxrate: std::array::from_fn(|t| ne_u64(b, 8 * t)),
    })
}

/// Decodes the reply to `DCB_CMD_IEEE_GET` (`dcbnl_ieee_fill()` in dcbnl.c):
/// `DCB_ATTR_IFNAME`, `DCB_ATTR_IEEE { ETS, MAXRATE, QCN, QCN_STATS, PFC,
/// DCB_BUFFER, APP_TABLE, REWR_TABLE, APP_TRUST_TABLE, PEER_ETS, PEER_PFC,
/// PEER_APP }`, `DCB_ATTR_DCBX`. The nest is required; each object in it is
/// read when present (QCN and the rewrite table are skipped), a struct
/// shorter than the kernel's is refused, an object twice is refused. Panics
/// never.
pub fn decode_ieee_state(
    buf: &[u8],
    seq: u32,
    ifname: &str,
) -> Result<Option<IeeeState>, DcbError> {
    decode_with(buf, seq, DcbCmd::IeeeGet, ifname, parse_ieee)
}

/// [`decode_ieee_state`], keeping the headroom part.
pub fn decode_ieee_reply(
    buf: &[u8],
    seq: u32,
    ifname: &str,
) -> Result<Option<IeeeConfig>, DcbError> {
    Ok(decode_ieee_state(buf, seq, ifname)?.map(|s| s.config()))
}

fn parse_ieee(attrs: Bytes<'_>) -> Result<IeeeState, NetlinkError> {
    let mut st = IeeeState::default();
    let mut dcbx = None;
    for a in attrs.attrs() {
        let a = a?;
        if a.ty == DCB_ATTR_DCBX && dcbx.is_none() {
            dcbx = Some(DcbxMode(a.u8("DCB_ATTR_DCBX")?));
        }
    }
    st.dcbx = dcbx;
    let nest = find_attr(attrs.attrs(), DCB_ATTR_IEEE, "DCB_ATTR_IEEE", attrs.offset)?;
    let mut seen = 0u32;
    for a in nest.nested() {
        let a = a?;
        let bit = 1u32.checked_shl(u32::from(a.ty)).unwrap_or(0);
        let known = matches!(
            a.ty,
            DCB_ATTR_IEEE_ETS
                | DCB_ATTR_IEEE_PFC
                | DCB_ATTR_IEEE_APP_TABLE
                | DCB_ATTR_IEEE_PEER_ETS
                | DCB_ATTR_IEEE_PEER_PFC
                | DCB_ATTR_IEEE_PEER_APP
                | DCB_ATTR_IEEE_MAXRATE
                | DCB_ATTR_DCB_BUFFER
                | DCB_ATTR_DCB_APP_TRUST_TABLE
        );
        if known && seen & bit != 0 {
            return Err(NetlinkError::new(
                a.offset,
                "DCB_ATTR_IEEE",
                "duplicate attribute",
            ));
        }
        seen |= bit;
        match a.ty {
            DCB_ATTR_IEEE_ETS => st.ets = Some(decode_ets(&a, "DCB_ATTR_IEEE_ETS")?),
            DCB_ATTR_IEEE_PFC => st.pfc = Some(decode_ieee_pfc(&a, "DCB_ATTR_IEEE_PFC")?),
            DCB_ATTR_IEEE_APP_TABLE => {
                st.apps = decode_app_table(&a, "DCB_ATTR_IEEE_APP_TABLE", false)?
            }
            DCB_ATTR_IEEE_PEER_ETS => st.peer_ets = Some(decode_ets(&a, "DCB_ATTR_IEEE_PEER_ETS")?),
            DCB_ATTR_IEEE_PEER_PFC => {
                st.peer_pfc = Some(decode_ieee_pfc(&a, "DCB_ATTR_IEEE_PEER_PFC")?)
            }
            DCB_ATTR_IEEE_PEER_APP => {
                st.peer_apps = Some(decode_app_table(&a, "DCB_ATTR_IEEE_PEER_APP", true)?)
            }
            DCB_ATTR_IEEE_MAXRATE => st.maxrate = Some(decode_maxrate(&a)?),
            DCB_ATTR_DCB_BUFFER => st.buffer = Some(decode_dcb_buffer(&a)?),
            DCB_ATTR_DCB_APP_TRUST_TABLE => st.trust = Some(decode_trust_table(&a)?),
            _ => {}
        }
    }
    Ok(st)
}
