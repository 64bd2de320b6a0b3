//! Parsing and emission of the CEE DCBX TLV body (the bytes after OUI and
//! subtype). Layouts are in the parent module's documentation.

use super::{
    subtlv, AppConfig, AppEntry, AppSelector, CeeDcbx, Control, FeatureHeader, FeatureTlv,
    InvalidValue, PfcConfig, PgConfig, PriorityMap, APP_ENTRY_LEN, APP_HEADER_LEN, CONTROL_LEN,
    PFC_LEN, PG_LEN,
};
use crate::codec::{split_tlv_header, Reader, Writer};
use crate::{DecodeError, DecodeErrorKind, EmitError};

/// Feature header (4) + PGID nibbles (4) + percentages (8): offset of num_tcs in the PG body.
const PG_PGID_AT: usize = 4;
const PG_PERCENT_AT: usize = 8;
const PG_NUM_TCS_AT: usize = 16;
const PFC_NUM_TCS_AT: usize = 5;
/// Offset, inside an APP entry, of the byte shared by OUI[0] and the selector.
const APP_SELECTOR_AT: usize = 2;

impl CeeDcbx {
    /// Parses a CEE DCBX TLV body; offsets in errors are relative to `body`.
    ///
    /// Fatal (the whole TLV, and with it the LLDPDU, is refused, as lldpad
    /// does): a sub-TLV header cut short, a zero-length sub-TLV, a sub-TLV
    /// running past the body, a Control sub-TLV whose length is not 10.
    /// Not fatal: a feature sub-TLV with a bad length or value becomes
    /// `Some(Err(..))`; duplicates keep the first instance. Both are also
    /// recorded in `anomalies`.
    pub fn parse(body: &[u8]) -> Result<CeeDcbx, DecodeError> {
        CeeDcbx::parse_at(body, 0)
    }

    /// [`CeeDcbx::parse`] for a body found `base` bytes into the caller's
    /// buffer, so that errors kept inside the value (which `shifted` cannot
    /// reach) carry offsets from the caller's start too.
    pub fn parse_at(body: &[u8], base: usize) -> Result<CeeDcbx, DecodeError> {
        let mut r = Reader::with_base(body, base);
        let mut out = CeeDcbx::default();
        // Offsets of the first Control, PG, PFC, APP sub-TLVs.
        let mut first: [Option<usize>; 4] = [None; 4];
        while !r.is_empty() {
            let at = r.offset();
            let (tlv_type, len) = split_tlv_header(r.u16("dcbx.subtlv")?);
            if len == 0 {
                return Err(DecodeError::new(
                    at,
                    "dcbx.subtlv.length",
                    DecodeErrorKind::ZeroLength,
                ));
            }
            if len > r.left() {
                return Err(DecodeError::new(
                    at,
                    "dcbx.subtlv.length",
                    DecodeErrorKind::LengthBeyondContainer {
                        length: len,
                        available: r.left(),
                    },
                ));
            }
            let sub = r.sub(len, "dcbx.subtlv")?;
            let slot = match tlv_type {
                subtlv::CONTROL => 0,
                subtlv::PG => 1,
                subtlv::PFC => 2,
                subtlv::APP => 3,
                _ => {
                    // lldpad skips sub-TLVs it does not know; so do we.
                    out.unknown_subtlvs = out.unknown_subtlvs.saturating_add(1);
                    continue;
                }
            };
            if let Some(first_offset) = first[slot] {
                let field = match slot {
                    0 => {
                        out.duplicates.control = true;
                        "dcbx.control"
                    }
                    1 => {
                        out.duplicates.pg = true;
                        "dcbx.pg"
                    }
                    2 => {
                        out.duplicates.pfc = true;
                        "dcbx.pfc"
                    }
                    _ => {
                        out.duplicates.app = true;
                        "dcbx.app"
                    }
                };
                out.note(DecodeError::new(
                    at,
                    field,
                    DecodeErrorKind::Duplicate { first_offset },
                ));
                continue;
            }
            first[slot] = Some(at);
            match slot {
                0 => out.control = Some(parse_control(sub, at, len)?),
                1 => {
                    let pg = parse_pg(sub, at, len);
                    out.note_err(&pg);
                    out.pg = Some(pg);
                }
                2 => {
                    let pfc = parse_pfc(sub, at, len);
                    out.note_err(&pfc);
                    out.pfc = Some(pfc);
                }
                _ => {
                    let app = parse_app(sub, at, len);
                    out.note_err(&app);
                    out.app = Some(app);
                }
            }
        }
        Ok(out)
    }

    /// Records a non-fatal finding; past eight, further ones are dropped (the
    /// count of what DCBX acts on is in `duplicates` and the features).
    fn note(&mut self, e: DecodeError) {
        let _ = self.anomalies.try_push(e);
    }

    fn note_err<T>(&mut self, r: &Result<T, DecodeError>) {
        if let Err(e) = r {
            self.note(e.clone());
        }
    }

    /// Length of the body `emit` writes: each present Control and valid
    /// feature sub-TLV with its 2-byte header.
    pub fn buffer_len(&self) -> usize {
        let mut n = 0;
        if self.control.is_some() {
            n += 2 + CONTROL_LEN;
        }
        if let Some(Ok(_)) = self.pg {
            n += 2 + PG_LEN;
        }
        if let Some(Ok(_)) = self.pfc {
            n += 2 + PFC_LEN;
        }
        if let Some(Ok(app)) = &self.app {
            n += 2 + app_len(&app.cfg);
        }
        n
    }

    /// Length of the whole organizationally specific TLV: LLDP TLV header,
    /// OUI, subtype and body. `Lldpdu::emit` refuses a TLV longer than 513
    /// (a 9-bit LLDP length plus header), which an APP table of more than
    /// [`MAX_SENT_APP_ENTRIES`](super::MAX_SENT_APP_ENTRIES) entries next to
    /// Control, PG and PFC would need.
    pub fn tlv_len(&self) -> usize {
        2 + 4 + self.buffer_len()
    }

    /// Writes the body (`buffer_len()` bytes) in lldpad's order: Control, PG,
    /// PFC, APP; returns the number of bytes written. Every sub-TLV this type
    /// can hold fits its 9-bit length (the APP table holds at most 84
    /// entries), so the error is there only because a length is checked
    /// wherever one is written.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, EmitError> {
        let mut w = Writer::new(buf);
        if let Some(c) = &self.control {
            w.tlv_header(subtlv::CONTROL, CONTROL_LEN, "dcbx.control")?;
            w.u8(c.oper_version);
            w.u8(c.max_version);
            w.u32(c.seq);
            w.u32(c.ack);
        }
        if let Some(Ok(pg)) = &self.pg {
            w.tlv_header(subtlv::PG, PG_LEN, "dcbx.pg")?;
            emit_header(&mut w, &pg.header);
            for pair in pg.cfg.pgid.chunks_exact(2) {
                if let [hi, lo] = pair {
                    w.u8(((hi & 0x0f) << 4) | (lo & 0x0f));
                }
            }
            w.put(&pg.cfg.percent);
            w.u8(pg.cfg.num_tcs);
        }
        if let Some(Ok(pfc)) = &self.pfc {
            w.tlv_header(subtlv::PFC, PFC_LEN, "dcbx.pfc")?;
            emit_header(&mut w, &pfc.header);
            w.u8(pfc.cfg.priorities.0);
            w.u8(pfc.cfg.num_tcs);
        }
        if let Some(Ok(app)) = &self.app {
            w.tlv_header(subtlv::APP, app_len(&app.cfg), "dcbx.app")?;
            emit_header(&mut w, &app.header);
            for e in &app.cfg.entries {
                w.u16(e.protocol);
                w.u8((e.oui[0] & 0xfc) | (e.selector.0 & 0x03));
                w.u8(e.oui[1]);
                w.u8(e.oui[2]);
                w.u8(e.priorities.0);
            }
        }
        Ok(w.written())
    }
}

fn app_len(cfg: &AppConfig) -> usize {
    APP_HEADER_LEN + APP_ENTRY_LEN * cfg.entries.len()
}

fn emit_header(w: &mut Writer<'_>, h: &FeatureHeader) {
    w.u8(h.oper_version);
    w.u8(h.max_version);
    w.u8(h.flags());
    w.u8(h.subtype);
}

fn bad_length(at: usize, field: &'static str, length: usize, expected: usize) -> DecodeError {
    DecodeError::new(at, field, DecodeErrorKind::BadLength { length, expected })
}

/// The received-value error for `e`, at the byte `offset` that holds the value.
fn bad_value(e: InvalidValue, offset: usize) -> DecodeError {
    let field = match e.field {
        "pg.pgid" => "dcbx.pg.pgid",
        "pg.percent" => "dcbx.pg.percent",
        "pg.num_tcs" => "dcbx.pg.num_tcs",
        "pfc.num_tcs" => "dcbx.pfc.num_tcs",
        "app.selector" => "dcbx.app.selector",
        "app.oui" => "dcbx.app.oui",
        _ => "dcbx",
    };
    DecodeError::new(
        offset,
        field,
        DecodeErrorKind::BadValue {
            value: e.value,
            reason: e.reason,
        },
    )
}

fn parse_control(mut r: Reader<'_>, at: usize, len: usize) -> Result<Control, DecodeError> {
    if len != CONTROL_LEN {
        return Err(bad_length(at, "dcbx.control", len, CONTROL_LEN));
    }
    Ok(Control {
        oper_version: r.u8("dcbx.control.oper_version")?,
        max_version: r.u8("dcbx.control.max_version")?,
        seq: r.u32("dcbx.control.seq")?,
        ack: r.u32("dcbx.control.ack")?,
    })
}

fn parse_header(r: &mut Reader<'_>) -> Result<FeatureHeader, DecodeError> {
    let oper_version = r.u8("dcbx.feature.oper_version")?;
    let max_version = r.u8("dcbx.feature.max_version")?;
    let flags = r.u8("dcbx.feature.flags")?;
    let subtype = r.u8("dcbx.feature.subtype")?;
    Ok(FeatureHeader {
        oper_version,
        max_version,
        enable: flags & 0x80 != 0,
        willing: flags & 0x40 != 0,
        error: flags & 0x20 != 0,
        reserved_flags: flags & 0x1f,
        subtype,
    })
}

fn parse_pg(mut r: Reader<'_>, at: usize, len: usize) -> Result<FeatureTlv<PgConfig>, DecodeError> {
    if len != PG_LEN {
        return Err(bad_length(at, "dcbx.pg", len, PG_LEN));
    }
    let body = r.offset();
    let header = parse_header(&mut r)?;
    let nibbles: [u8; 4] = r.array("dcbx.pg.pgid")?;
    let mut pgid = [0u8; 8];
    for (pair, byte) in pgid.chunks_exact_mut(2).zip(nibbles) {
        if let [hi, lo] = pair {
            *hi = byte >> 4;
            *lo = byte & 0x0f;
        }
    }
    let cfg = PgConfig {
        pgid,
        percent: r.array("dcbx.pg.percent")?,
        num_tcs: r.u8("dcbx.pg.num_tcs")?,
    };
    cfg.validate().map_err(|e| {
        let offset = match (e.field, e.index) {
            ("pg.pgid", Some(i)) => body + PG_PGID_AT + i / 2,
            ("pg.percent", Some(i)) => body + PG_PERCENT_AT + i,
            ("pg.percent", None) => body + PG_PERCENT_AT,
            _ => body + PG_NUM_TCS_AT,
        };
        bad_value(e, offset)
    })?;
    Ok(FeatureTlv { header, cfg })
}

fn parse_pfc(
    mut r: Reader<'_>,
    at: usize,
    len: usize,
) -> Result<FeatureTlv<PfcConfig>, DecodeError> {
    if len != PFC_LEN {
        return Err(bad_length(at, "dcbx.pfc", len, PFC_LEN));
    }
    let body = r.offset();
    let header = parse_header(&mut r)?;
    let cfg = PfcConfig {
        priorities: PriorityMap(r.u8("dcbx.pfc.enable")?),
        num_tcs: r.u8("dcbx.pfc.num_tcs")?,
    };
    cfg.validate()
        .map_err(|e| bad_value(e, body + PFC_NUM_TCS_AT))?;
    Ok(FeatureTlv { header, cfg })
}

fn parse_app(
    mut r: Reader<'_>,
    at: usize,
    len: usize,
) -> Result<FeatureTlv<AppConfig>, DecodeError> {
    if len < APP_HEADER_LEN {
        return Err(DecodeError::new(
            at,
            "dcbx.app",
            DecodeErrorKind::TooShort {
                length: len,
                minimum: APP_HEADER_LEN,
            },
        ));
    }
    let entries_len = len - APP_HEADER_LEN;
    let stray = entries_len % APP_ENTRY_LEN;
    if stray != 0 {
        let expected = len - stray;
        return Err(bad_length(at, "dcbx.app", len, expected));
    }
    let header = parse_header(&mut r)?;
    let mut cfg = AppConfig::default();
    // In place up to INLINE_APP_ENTRIES; past them, one allocation.
    cfg.entries.reserve(entries_len / APP_ENTRY_LEN);
    while !r.is_empty() {
        let entry_at = r.offset();
        let protocol = r.u16("dcbx.app.proto")?;
        let [b0, oui1, oui2] = r.array::<3>("dcbx.app.oui")?;
        let entry = AppEntry {
            selector: AppSelector(b0 & 0x03),
            protocol,
            oui: [b0 & 0xfc, oui1, oui2],
            priorities: PriorityMap(r.u8("dcbx.app.prio")?),
        };
        // Cannot fail for a decoded entry (both fields come from their bit
        // ranges); kept so that a future rule applies on receive too.
        entry
            .validate()
            .map_err(|e| bad_value(e, entry_at + APP_SELECTOR_AT))?;
        // At most 84 entries fit in a 9-bit length, the table's capacity.
        if cfg.entries.try_push(entry).is_err() {
            return Err(bad_length(at, "dcbx.app", len, APP_HEADER_LEN));
        }
    }
    Ok(FeatureTlv { header, cfg })
}
