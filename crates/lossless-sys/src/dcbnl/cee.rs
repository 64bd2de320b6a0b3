//! The CEE commands: DCB state, PFC per priority and its state, priority
//! groups (transmit and receive), and the SET_ALL commit.

use super::error::DcbError;
use super::msg::{
    decode_with, find_attr, request, DcbCmd, DCB_ATTR_PFC_CFG, DCB_ATTR_PFC_STATE, DCB_ATTR_PG_CFG,
    DCB_ATTR_SET_ALL, DCB_ATTR_STATE,
};
use crate::netlink::{Bytes, NetlinkError};

pub(crate) const DCB_PFC_UP_ATTR_0: u16 = 1;
pub(crate) const DCB_PFC_UP_ATTR_ALL: u16 = 9;

pub(crate) const DCB_PG_ATTR_TC_0: u16 = 1;
pub(crate) const DCB_PG_ATTR_TC_ALL: u16 = 10;
pub(crate) const DCB_PG_ATTR_BW_ID_0: u16 = 11;
pub(crate) const DCB_PG_ATTR_BW_ID_ALL: u16 = 20;

pub(crate) const DCB_TC_ATTR_PARAM_PGID: u16 = 1;
pub(crate) const DCB_TC_ATTR_PARAM_UP_MAPPING: u16 = 2;
pub(crate) const DCB_TC_ATTR_PARAM_STRICT_PRIO: u16 = 3;
pub(crate) const DCB_TC_ATTR_PARAM_BW_PCT: u16 = 4;
pub(crate) const DCB_TC_ATTR_PARAM_ALL: u16 = 5;

/// PGID of strict-priority traffic in CEE.
pub const PGID_STRICT: u8 = 15;
/// `STRICT_PRIO` value: not strict.
pub const STRICT_NONE: u8 = 0;
/// `STRICT_PRIO` value: strict within its group.
pub const STRICT_GROUP: u8 = 1;
/// `STRICT_PRIO` value: link strict (CEE PGID 15).
pub const STRICT_LINK: u8 = 2;
/// PFC value for an enabled priority (`pfc_enabled_full`); 0 is disabled.
pub const PFC_ENABLED: u8 = 1;

/// SET_ALL status: the configuration was applied with a link reset.
pub const SET_ALL_CHANGED_RESET: u8 = 0;
/// SET_ALL status: nothing needed changing.
pub const SET_ALL_NO_CHANGE: u8 = 1;
/// SET_ALL status: the configuration was applied without a link reset.
pub const SET_ALL_CHANGED_NO_RESET: u8 = 2;

/// PFC per priority 0..7 (true = enabled).
pub type PfcSetting = [bool; 8];

/// A CEE priority-group configuration as DCBX carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PgSetting {
    /// PGID per priority 0..7: 0..=7, or 15 ([`PGID_STRICT`]) for strict.
    pub pgid: [u8; 8],
    /// Bandwidth percentage per PG 0..7.
    pub percent: [u8; 8],
}

/// One traffic class in the driver's CEE model (`DCB_TC_ATTR_PARAM_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcConfig {
    /// Bandwidth group of the TC (`DCB_TC_ATTR_PARAM_PGID`).
    pub pgid: u8,
    /// Bit `p` set: priority `p` maps to this TC (`UP_MAPPING`).
    pub up_map: u8,
    /// [`STRICT_NONE`], [`STRICT_GROUP`] or [`STRICT_LINK`] (`STRICT_PRIO`).
    pub strict_prio: u8,
    /// Percentage of the group's bandwidth (`BW_PCT`).
    pub bw_pct: u8,
}

/// The driver's CEE priority-group programming for one direction: what
/// `DCB_CMD_PGTX_SCFG`/`PGRX_SCFG` write and `..._GCFG` read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PgConfig {
    pub tc: [TcConfig; 8],
    /// Percentage of link bandwidth per bandwidth group
    /// (`DCB_PG_ATTR_BW_ID_0..7`).
    pub pg_bw: [u8; 8],
}

/// Transmit or receive priority groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgDir {
    Tx,
    Rx,
}

impl PgDir {
    pub(crate) fn get_cmd(self) -> DcbCmd {
        match self {
            PgDir::Tx => DcbCmd::PgTxGetCfg,
            PgDir::Rx => DcbCmd::PgRxGetCfg,
        }
    }

    pub(crate) fn set_cmd(self) -> DcbCmd {
        match self {
            PgDir::Tx => DcbCmd::PgTxSetCfg,
            PgDir::Rx => DcbCmd::PgRxSetCfg,
        }
    }
}

impl PgConfig {
    /// Maps a CEE setting onto traffic classes as lldpad does (see the
    /// module documentation). PGIDs 8..=14 and percentages above 100 are
    /// refused.
    pub fn from_cee(pg: &PgSetting) -> Result<PgConfig, DcbError> {
        let mut used = [false; 8];
        for (p, &g) in pg.pgid.iter().enumerate() {
            match g {
                0..=7 => used[usize::from(g)] = true,
                PGID_STRICT => {}
                _ => {
                    return Err(DcbError::Invalid(format!(
                        "priority {p}: PGID {g} is reserved (0..=7 or 15)"
                    )))
                }
            }
        }
        if let Some((i, pct)) = pg.percent.iter().enumerate().find(|(_, &v)| v > 100) {
            return Err(DcbError::Invalid(format!("PG {i}: {pct}% is above 100")));
        }
        // With at most 7 priorities in PGs 0..=7 next to a strict one, some
        // TC is always free.
        let strict_tc = used.iter().position(|&u| !u).unwrap_or(7);
        let mut cfg = PgConfig {
            pg_bw: pg.percent,
            ..PgConfig::default()
        };
        for (t, tc) in cfg.tc.iter_mut().enumerate() {
            tc.pgid = t as u8;
        }
        for (p, &g) in pg.pgid.iter().enumerate() {
            let strict = g == PGID_STRICT;
            let t = if strict { strict_tc } else { usize::from(g) };
            if let Some(tc) = cfg.tc.get_mut(t) {
                tc.up_map |= 1 << p;
                tc.strict_prio = if strict { STRICT_LINK } else { STRICT_NONE };
                tc.bw_pct = if strict { 0 } else { 100 };
            }
        }
        Ok(cfg)
    }

    /// The CEE view of a driver configuration: each priority's PG is the
    /// bandwidth group of its TC, or 15 when that TC is link strict; a
    /// priority no TC claims is put in PG 0. The inverse of
    /// [`PgConfig::from_cee`].
    pub fn to_cee(&self) -> PgSetting {
        let mut pgid = [0u8; 8];
        for (p, g) in pgid.iter_mut().enumerate() {
            if let Some(tc) = self.tc.iter().find(|tc| tc.up_map & (1 << p) != 0) {
                *g = if tc.strict_prio == STRICT_LINK {
                    PGID_STRICT
                } else {
                    tc.pgid
                };
            }
        }
        PgSetting {
            pgid,
            percent: self.pg_bw,
        }
    }
}

/// `DCB_CMD_GSTATE`: is DCB on?
pub fn encode_get_state(seq: u32, ifname: &str) -> Result<Vec<u8>, DcbError> {
    Ok(request(DcbCmd::GetState, seq, ifname)?.finish())
}

/// `DCB_CMD_SSTATE` with `DCB_ATTR_STATE` = 0/1.
pub fn encode_set_state(seq: u32, ifname: &str, on: bool) -> Result<Vec<u8>, DcbError> {
    let mut b = request(DcbCmd::SetState, seq, ifname)?;
    b.attr_u8(DCB_ATTR_STATE, u8::from(on));
    Ok(b.finish())
}

/// `DCB_CMD_PFC_GCFG` asking for every priority (`DCB_ATTR_PFC_CFG {
/// DCB_PFC_UP_ATTR_ALL }`).
pub fn encode_get_pfc(seq: u32, ifname: &str) -> Result<Vec<u8>, DcbError> {
    let mut b = request(DcbCmd::PfcGetCfg, seq, ifname)?;
    let n = b.nest_start(DCB_ATTR_PFC_CFG);
    b.flag(DCB_PFC_UP_ATTR_ALL);
    b.nest_end(n);
    Ok(b.finish())
}

/// `DCB_CMD_PFC_SCFG`: `DCB_ATTR_PFC_CFG { DCB_PFC_UP_ATTR_0..7: u8 }`,
/// [`PFC_ENABLED`] or 0.
pub fn encode_set_pfc(seq: u32, ifname: &str, priorities: PfcSetting) -> Result<Vec<u8>, DcbError> {
    let mut b = request(DcbCmd::PfcSetCfg, seq, ifname)?;
    let n = b.nest_start(DCB_ATTR_PFC_CFG);
    for (i, &on) in (0u16..).zip(priorities.iter()) {
        b.attr_u8(DCB_PFC_UP_ATTR_0 + i, if on { PFC_ENABLED } else { 0 });
    }
    b.nest_end(n);
    Ok(b.finish())
}

/// `DCB_CMD_PFC_GSTATE`.
pub fn encode_get_pfc_state(seq: u32, ifname: &str) -> Result<Vec<u8>, DcbError> {
    Ok(request(DcbCmd::PfcGetState, seq, ifname)?.finish())
}

/// `DCB_CMD_PFC_SSTATE` with `DCB_ATTR_PFC_STATE` = 0/1.
pub fn encode_set_pfc_state(seq: u32, ifname: &str, on: bool) -> Result<Vec<u8>, DcbError> {
    let mut b = request(DcbCmd::PfcSetState, seq, ifname)?;
    b.attr_u8(DCB_ATTR_PFC_STATE, u8::from(on));
    Ok(b.finish())
}

/// `DCB_CMD_PGTX_GCFG`/`PGRX_GCFG` asking for everything:
/// `DCB_ATTR_PG_CFG { DCB_PG_ATTR_TC_ALL { DCB_TC_ATTR_PARAM_ALL },
/// DCB_PG_ATTR_BW_ID_ALL }`.
pub fn encode_get_pg(seq: u32, ifname: &str, dir: PgDir) -> Result<Vec<u8>, DcbError> {
    let mut b = request(dir.get_cmd(), seq, ifname)?;
    let pg = b.nest_start(DCB_ATTR_PG_CFG);
    let tc = b.nest_start(DCB_PG_ATTR_TC_ALL);
    b.flag(DCB_TC_ATTR_PARAM_ALL);
    b.nest_end(tc);
    b.flag(DCB_PG_ATTR_BW_ID_ALL);
    b.nest_end(pg);
    Ok(b.finish())
}

/// `DCB_CMD_PGTX_SCFG`/`PGRX_SCFG`: `DCB_ATTR_PG_CFG { DCB_PG_ATTR_TC_0..7 {
/// PGID, UP_MAPPING, STRICT_PRIO, BW_PCT }, DCB_PG_ATTR_BW_ID_0..7 }`, in
/// lldpad's order.
pub fn encode_set_pg(
    seq: u32,
    ifname: &str,
    dir: PgDir,
    cfg: &PgConfig,
) -> Result<Vec<u8>, DcbError> {
    let mut b = request(dir.set_cmd(), seq, ifname)?;
    let pg = b.nest_start(DCB_ATTR_PG_CFG);
    for (i, tc) in (0u16..).zip(cfg.tc.iter()) {
        let n = b.nest_start(DCB_PG_ATTR_TC_0 + i);
        b.attr_u8(DCB_TC_ATTR_PARAM_PGID, tc.pgid);
        b.attr_u8(DCB_TC_ATTR_PARAM_UP_MAPPING, tc.up_map);
        b.attr_u8(DCB_TC_ATTR_PARAM_STRICT_PRIO, tc.strict_prio);
        b.attr_u8(DCB_TC_ATTR_PARAM_BW_PCT, tc.bw_pct);
        b.nest_end(n);
    }
    for (i, &pct) in (0u16..).zip(cfg.pg_bw.iter()) {
        b.attr_u8(DCB_PG_ATTR_BW_ID_0 + i, pct);
    }
    b.nest_end(pg);
    Ok(b.finish())
}

/// `DCB_CMD_SET_ALL` (the kernel requires `DCB_ATTR_SET_ALL`; lldpad sends
/// 1).
pub fn encode_set_all(seq: u32, ifname: &str) -> Result<Vec<u8>, DcbError> {
    let mut b = request(DcbCmd::SetAll, seq, ifname)?;
    b.attr_u8(DCB_ATTR_SET_ALL, 1);
    Ok(b.finish())
}

/// Decodes the reply to `DCB_CMD_PFC_GCFG`: `DCB_ATTR_PFC_CFG {
/// DCB_PFC_UP_ATTR_0..7 }`, all eight required; non-zero = enabled.
pub fn decode_pfc_reply(
    buf: &[u8],
    seq: u32,
    ifname: &str,
) -> Result<Option<PfcSetting>, DcbError> {
    decode_with(buf, seq, DcbCmd::PfcGetCfg, ifname, parse_pfc)
}

fn parse_pfc(attrs: Bytes<'_>) -> Result<PfcSetting, NetlinkError> {
    let nest = find_attr(
        attrs.attrs(),
        DCB_ATTR_PFC_CFG,
        "DCB_ATTR_PFC_CFG",
        attrs.offset,
    )?;
    let mut seen = [false; 8];
    let mut pfc = [false; 8];
    for a in nest.nested() {
        let a = a?;
        let i = usize::from(a.ty.wrapping_sub(DCB_PFC_UP_ATTR_0));
        if i < 8 {
            pfc[i] = a.u8("DCB_PFC_UP_ATTR")? != 0;
            seen[i] = true;
        }
    }
    if let Some(i) = seen.iter().position(|&s| !s) {
        return Err(NetlinkError::new(
            nest.offset,
            "DCB_ATTR_PFC_CFG",
            format!("no DCB_PFC_UP_ATTR_{i}"),
        ));
    }
    Ok(pfc)
}

/// Decodes the reply to `DCB_CMD_PGTX_GCFG`/`PGRX_GCFG`: `DCB_ATTR_PG_CFG {
/// DCB_PG_ATTR_TC_0..7 { PGID, UP_MAPPING, STRICT_PRIO, BW_PCT },
/// DCB_PG_ATTR_BW_ID_0..7 }`, everything required.
pub fn decode_pg_reply(
    buf: &[u8],
    seq: u32,
    dir: PgDir,
    ifname: &str,
) -> Result<Option<PgConfig>, DcbError> {
    decode_with(buf, seq, dir.get_cmd(), ifname, parse_pg)
}

fn parse_pg(attrs: Bytes<'_>) -> Result<PgConfig, NetlinkError> {
    let nest = find_attr(
        attrs.attrs(),
        DCB_ATTR_PG_CFG,
        "DCB_ATTR_PG_CFG",
        attrs.offset,
    )?;
    let mut cfg = PgConfig::default();
    let mut tc_seen = [false; 8];
    let mut bw_seen = [false; 8];
    for a in nest.nested() {
        let a = a?;
        let tc_i = usize::from(a.ty.wrapping_sub(DCB_PG_ATTR_TC_0));
        let bw_i = usize::from(a.ty.wrapping_sub(DCB_PG_ATTR_BW_ID_0));
        if tc_i < 8 {
            let mut params = [None::<u8>; 4];
            for p in a.nested() {
                let p = p?;
                let k = usize::from(p.ty.wrapping_sub(DCB_TC_ATTR_PARAM_PGID));
                if let Some(slot) = params.get_mut(k) {
                    *slot = Some(p.u8("DCB_TC_ATTR_PARAM")?);
                }
            }
            let [Some(pgid), Some(up_map), Some(strict_prio), Some(bw_pct)] = params else {
                return Err(NetlinkError::new(
                    a.offset,
                    "DCB_PG_ATTR_TC",
                    format!("TC {tc_i} lacks one of PGID, UP_MAPPING, STRICT_PRIO, BW_PCT"),
                ));
            };
            cfg.tc[tc_i] = TcConfig {
                pgid,
                up_map,
                strict_prio,
                bw_pct,
            };
            tc_seen[tc_i] = true;
        } else if bw_i < 8 {
            cfg.pg_bw[bw_i] = a.u8("DCB_PG_ATTR_BW_ID")?;
            bw_seen[bw_i] = true;
        }
    }
    if let Some(i) = tc_seen.iter().position(|&s| !s) {
        return Err(NetlinkError::new(
            nest.offset,
            "DCB_ATTR_PG_CFG",
            format!("no DCB_PG_ATTR_TC_{i}"),
        ));
    }
    if let Some(i) = bw_seen.iter().position(|&s| !s) {
        return Err(NetlinkError::new(
            nest.offset,
            "DCB_ATTR_PG_CFG",
            format!("no DCB_PG_ATTR_BW_ID_{i}"),
        ));
    }
    Ok(cfg)
}
