//! Parsing and emission of the four IEEE DCBX TLVs; layouts are in the
//! parent module's documentation. Offsets in errors are those of the byte
//! that holds the value, or of the TLV header for a bad length or a duplicate.

use super::ets::{Part, TableFields, CONFIG_FIELDS, RECOMMENDATION_FIELDS};
use super::{
    subtype, AppPriority, AppPriorityTable, EtsConfig, EtsRecommendation, EtsTable, IeeeDcbx,
    PfcConfig, PriorityMap, Selector, Tsa, APP_ENTRY_LEN, APP_TLV_HEADER_LEN, ETS_TLV_LEN,
    IEEE_8021_OUI, MAX_TCS, PFC_TLV_LEN,
};
use crate::codec::{read_tlv, Reader, Tlv, Writer};
use crate::lldp::tlv_type;
use crate::{DecodeError, DecodeErrorKind, EmitError, InvalidValue};

/// Offsets from the TLV header: header (2), OUI (3), subtype (1), then the body.
const FLAGS_AT: usize = 6;
const PRIO_TC_AT: usize = 7;
const TC_BW_AT: usize = 11;
const TSA_AT: usize = 19;

/// Field names in decode errors, per ETS TLV.
struct WireNames {
    tlv: &'static str,
    prio_tc: &'static str,
    tc_bw: &'static str,
    tsa: &'static str,
}

const ETS_CFG: WireNames = WireNames {
    tlv: "ieee.ets_cfg",
    prio_tc: "ieee.ets_cfg.prio_tc",
    tc_bw: "ieee.ets_cfg.tc_bw",
    tsa: "ieee.ets_cfg.tsa",
};

const ETS_REC: WireNames = WireNames {
    tlv: "ieee.ets_rec",
    prio_tc: "ieee.ets_rec.prio_tc",
    tc_bw: "ieee.ets_rec.tc_bw",
    tsa: "ieee.ets_rec.tsa",
};

const PFC: &str = "ieee.pfc";
const APP: &str = "ieee.app";

/// The receive side of one LLDPDU's IEEE DCBX TLVs: remembers where each
/// first appeared, to report duplicates.
#[derive(Debug, Default)]
pub(crate) struct IeeeRx {
    first: [Option<usize>; 4],
}

impl IeeeRx {
    /// Takes one IEEE DCBX TLV into `out`. `at` is the offset of its TLV
    /// header, `len` its length field (OUI and subtype included), `body` the
    /// bytes after the subtype. Never fails: a malformed TLV is kept as an error.
    pub(crate) fn tlv(
        &mut self,
        out: &mut IeeeDcbx,
        subtype: u8,
        at: usize,
        len: usize,
        body: Reader<'_>,
    ) {
        let (slot, field) = match subtype {
            subtype::ETS_CONFIGURATION => (0, ETS_CFG.tlv),
            subtype::ETS_RECOMMENDATION => (1, ETS_REC.tlv),
            subtype::PFC_CONFIGURATION => (2, PFC),
            subtype::APPLICATION_PRIORITY => (3, APP),
            _ => return,
        };
        if let Some(first_offset) = self.first[slot] {
            // See `IeeeDcbx`: a duplicate leaves neither instance standing. A
            // third instance changes nothing more.
            let dup = DecodeError::new(at, field, DecodeErrorKind::Duplicate { first_offset });
            match slot {
                0 => mark_duplicate(&mut out.ets_config, dup),
                1 => mark_duplicate(&mut out.ets_recommendation, dup),
                2 => mark_duplicate(&mut out.pfc, dup),
                _ => mark_duplicate(&mut out.app, dup),
            }
            return;
        }
        self.first[slot] = Some(at);
        match slot {
            0 => out.ets_config = Some(parse_ets_config(body, at, len)),
            1 => out.ets_recommendation = Some(parse_ets_recommendation(body, at, len)),
            2 => out.pfc = Some(parse_pfc(body, at, len)),
            _ => parse_app(&mut out.app, body, at, len),
        }
    }
}

fn mark_duplicate<T>(slot: &mut Option<Result<T, DecodeError>>, dup: DecodeError) {
    let already = matches!(
        slot,
        Some(Err(DecodeError {
            kind: DecodeErrorKind::Duplicate { .. },
            ..
        }))
    );
    if !already {
        *slot = Some(Err(dup));
    }
}

/// Is this org TLV one of the four? (OUI 00-80-C2, subtypes 9..=12.)
pub(crate) fn is_dcbx_tlv(oui: [u8; 3], subtype: u8) -> bool {
    oui == IEEE_8021_OUI
        && (subtype::ETS_CONFIGURATION..=subtype::APPLICATION_PRIORITY).contains(&subtype)
}

impl IeeeDcbx {
    /// Parses a run of IEEE DCBX TLVs (LLDP TLV headers included, as
    /// [`IeeeDcbx::emit`] writes them); offsets count from the start of `data`.
    ///
    /// A TLV header cut short, a length running past `data`, or a TLV that is
    /// not one of the four, is an error; a malformed TLV among the four is
    /// kept inside the value, as in an LLDPDU.
    pub fn parse(data: &[u8]) -> Result<IeeeDcbx, DecodeError> {
        let mut r = Reader::new(data);
        let mut rx = IeeeRx::default();
        let mut out = IeeeDcbx::default();
        while !r.is_empty() {
            let Tlv {
                tlv_type: t,
                at,
                value: mut v,
            } = read_tlv(&mut r)?;
            let len = v.left();
            let not_dcbx = || {
                DecodeError::new(
                    at,
                    "lldp.org",
                    DecodeErrorKind::NotThisProtocol {
                        reason:
                            "not an IEEE 802.1Qaz DCBX TLV (type 127, OUI 00-80-C2, subtype 9..12)",
                    },
                )
            };
            if t != tlv_type::ORG_SPECIFIC || len < 4 {
                return Err(not_dcbx());
            }
            let oui: [u8; 3] = v.array("lldp.org.oui")?;
            let sub = v.u8("lldp.org.subtype")?;
            if !is_dcbx_tlv(oui, sub) {
                return Err(not_dcbx());
            }
            rx.tlv(&mut out, sub, at, len, v);
        }
        Ok(out)
    }

    /// Length of what `emit` writes: every well-formed TLV held, with its
    /// 2-byte LLDP header.
    pub fn buffer_len(&self) -> usize {
        let mut n = 0;
        if let Some(Ok(_)) = self.ets_config {
            n += 2 + ETS_TLV_LEN;
        }
        if let Some(Ok(_)) = self.ets_recommendation {
            n += 2 + ETS_TLV_LEN;
        }
        if let Some(Ok(_)) = self.pfc {
            n += 2 + PFC_TLV_LEN;
        }
        if let Some(Ok(app)) = &self.app {
            n += 2 + app_len(app);
        }
        n
    }

    /// Writes the well-formed TLVs (`buffer_len()` bytes) in lldpad's order
    /// ETS Configuration, ETS Recommendation, PFC, Application Priority, and
    /// returns that count; malformed ones (`Some(Err(..))`) are skipped.
    ///
    /// Each value is validated first and refused if invalid, so that what is
    /// sent parses back to what was given; on error the buffer's contents are
    /// unspecified.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, EmitError> {
        let mut w = Writer::new(buf);
        self.emit_into(&mut w)?;
        Ok(w.written())
    }

    pub(crate) fn emit_into(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        if let Some(Ok(c)) = &self.ets_config {
            c.validate().map_err(EmitError::Value)?;
            org_header(w, subtype::ETS_CONFIGURATION, ETS_TLV_LEN, ETS_CFG.tlv)?;
            // D.2.9.3-5: Willing (bit 7), CBS (bit 6), reserved, Max TCs (8 as 0).
            w.u8((u8::from(c.willing) << 7) | (u8::from(c.cbs) << 6) | (c.max_tcs % MAX_TCS));
            emit_table(w, &c.table);
        }
        if let Some(Ok(r)) = &self.ets_recommendation {
            r.validate().map_err(EmitError::Value)?;
            org_header(w, subtype::ETS_RECOMMENDATION, ETS_TLV_LEN, ETS_REC.tlv)?;
            // D.2.10: the first byte is reserved.
            w.u8(0);
            emit_table(w, &r.table);
        }
        if let Some(Ok(p)) = &self.pfc {
            p.validate().map_err(EmitError::Value)?;
            org_header(w, subtype::PFC_CONFIGURATION, PFC_TLV_LEN, PFC)?;
            // D.2.11.3-5: Willing (bit 7), MBC (bit 6), reserved, PFC cap (4 bits);
            // bit 5 announces adaptive headroom measurement.
            let hdrm = if p.headroom_measurement {
                super::pfc::FLAG_HEADROOM_MEASUREMENT
            } else {
                0
            };
            w.u8((u8::from(p.willing) << 7) | (u8::from(p.mbc) << 6) | hdrm | p.cap);
            w.u8(p.enabled.0);
        }
        if let Some(Ok(app)) = &self.app {
            app.validate().map_err(EmitError::Value)?;
            org_header(w, subtype::APPLICATION_PRIORITY, app_len(app), APP)?;
            w.u8(0);
            for e in app.iter() {
                w.u8((e.priority << 5) | e.selector.0);
                w.u16(e.protocol);
            }
        }
        Ok(())
    }
}

fn app_len(app: &AppPriorityTable) -> usize {
    APP_TLV_HEADER_LEN + APP_ENTRY_LEN * app.len()
}

fn org_header(
    w: &mut Writer<'_>,
    sub: u8,
    len: usize,
    field: &'static str,
) -> Result<(), EmitError> {
    w.tlv_header(tlv_type::ORG_SPECIFIC, len, field)?;
    w.put(&IEEE_8021_OUI);
    w.u8(sub);
    Ok(())
}

fn emit_table(w: &mut Writer<'_>, t: &EtsTable) {
    for pair in t.prio_tc.chunks_exact(2) {
        if let [hi, lo] = pair {
            w.u8((hi << 4) | lo);
        }
    }
    w.put(&t.tc_bw);
    for tsa in t.tsa {
        w.u8(tsa.0);
    }
}

fn bad_length(at: usize, field: &'static str, length: usize, expected: usize) -> DecodeError {
    DecodeError::new(at, field, DecodeErrorKind::BadLength { length, expected })
}

fn bad_value(offset: usize, field: &'static str, e: InvalidValue) -> DecodeError {
    DecodeError::new(
        offset,
        field,
        DecodeErrorKind::BadValue {
            value: e.value,
            reason: e.reason,
        },
    )
}

/// The three tables; `at` is the TLV header's offset.
fn parse_table(
    r: &mut Reader<'_>,
    at: usize,
    names: &WireNames,
    fields: &TableFields,
) -> Result<EtsTable, DecodeError> {
    let nibbles: [u8; 4] = r.array(names.prio_tc)?;
    let mut prio_tc = [0u8; 8];
    for (pair, byte) in prio_tc.chunks_exact_mut(2).zip(nibbles) {
        if let [hi, lo] = pair {
            *hi = byte >> 4;
            *lo = byte & 0x0f;
        }
    }
    let tc_bw: [u8; 8] = r.array(names.tc_bw)?;
    let tsa: [u8; 8] = r.array(names.tsa)?;
    let table = EtsTable {
        prio_tc,
        tc_bw,
        tsa: tsa.map(Tsa),
    };
    table.check(fields).map_err(|(part, e)| {
        let (offset, field) = match (part, e.index) {
            (Part::PrioTc, Some(p)) => (at + PRIO_TC_AT + p / 2, names.prio_tc),
            (Part::TcBw, Some(tc)) => (at + TC_BW_AT + tc, names.tc_bw),
            (Part::TcBw, None) => (at + TC_BW_AT, names.tc_bw),
            (Part::Tsa, Some(tc)) => (at + TSA_AT + tc, names.tsa),
            (Part::PrioTc | Part::Tsa, None) => (at, names.tlv),
        };
        bad_value(offset, field, e)
    })?;
    Ok(table)
}

fn parse_ets_config(mut r: Reader<'_>, at: usize, len: usize) -> Result<EtsConfig, DecodeError> {
    if len != ETS_TLV_LEN {
        return Err(bad_length(at, ETS_CFG.tlv, len, ETS_TLV_LEN));
    }
    let flags = r.u8("ieee.ets_cfg.flags")?;
    let max_tcs = match flags & 0x07 {
        0 => MAX_TCS,
        n => n,
    };
    Ok(EtsConfig {
        willing: flags & 0x80 != 0,
        cbs: flags & 0x40 != 0,
        max_tcs,
        table: parse_table(&mut r, at, &ETS_CFG, &CONFIG_FIELDS)?,
    })
}

fn parse_ets_recommendation(
    mut r: Reader<'_>,
    at: usize,
    len: usize,
) -> Result<EtsRecommendation, DecodeError> {
    if len != ETS_TLV_LEN {
        return Err(bad_length(at, ETS_REC.tlv, len, ETS_TLV_LEN));
    }
    r.u8("ieee.ets_rec.reserved")?;
    Ok(EtsRecommendation {
        table: parse_table(&mut r, at, &ETS_REC, &RECOMMENDATION_FIELDS)?,
    })
}

fn parse_pfc(mut r: Reader<'_>, at: usize, len: usize) -> Result<PfcConfig, DecodeError> {
    if len != PFC_TLV_LEN {
        return Err(bad_length(at, PFC, len, PFC_TLV_LEN));
    }
    let flags = r.u8("ieee.pfc.flags")?;
    let cfg = PfcConfig {
        willing: flags & 0x80 != 0,
        mbc: flags & 0x40 != 0,
        cap: flags & 0x0f,
        headroom_measurement: flags & super::pfc::FLAG_HEADROOM_MEASUREMENT != 0,
        enabled: PriorityMap(r.u8("ieee.pfc.enable")?),
    };
    cfg.validate()
        .map_err(|e| bad_value(at + FLAGS_AT, "ieee.pfc.cap", e))?;
    Ok(cfg)
}

/// Parses straight into `slot`.
fn parse_app(
    slot: &mut Option<Result<AppPriorityTable, DecodeError>>,
    r: Reader<'_>,
    at: usize,
    len: usize,
) {
    let outcome = match slot.insert(Ok(AppPriorityTable::new())) {
        Ok(table) => fill_app(table, r, at, len),
        Err(_) => Ok(()),
    };
    if let Err(e) = outcome {
        *slot = Some(Err(e));
    }
}

fn fill_app(
    table: &mut AppPriorityTable,
    mut r: Reader<'_>,
    at: usize,
    len: usize,
) -> Result<(), DecodeError> {
    if len < APP_TLV_HEADER_LEN {
        return Err(DecodeError::new(
            at,
            APP,
            DecodeErrorKind::TooShort {
                length: len,
                minimum: APP_TLV_HEADER_LEN,
            },
        ));
    }
    let stray = (len - APP_TLV_HEADER_LEN) % APP_ENTRY_LEN;
    if stray != 0 {
        return Err(bad_length(at, APP, len, len - stray));
    }
    r.u8("ieee.app.reserved")?;
    // In place up to INLINE_APP_ENTRIES; past them, one allocation.
    table.0.reserve((len - APP_TLV_HEADER_LEN) / APP_ENTRY_LEN);
    while !r.is_empty() {
        let entry_at = r.offset();
        let b = r.u8("ieee.app.selector")?;
        let entry = AppPriority {
            priority: b >> 5,
            selector: Selector(b & 0x07),
            protocol: r.u16("ieee.app.protocol")?,
        };
        entry.validate().map_err(|e| match e.field {
            "app.protocol" => bad_value(entry_at + 1, "ieee.app.protocol", e),
            _ => bad_value(entry_at, "ieee.app.selector", e),
        })?;
        // A 9-bit length holds at most 168 entries, the table's capacity.
        if table.push(entry).is_err() {
            return Err(bad_length(at, APP, len, APP_TLV_HEADER_LEN));
        }
    }
    Ok(())
}
