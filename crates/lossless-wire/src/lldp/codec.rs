//! Parsing and emission of a whole LLDPDU (802.1AB-2016 §8 and §9.2.7.7).

use super::{
    tlv_type, Id, Lldpdu, ManagementAddress, OrgTlv, RawTlv, SystemCapabilities, MAX_LLDPDU_LEN,
    MAX_STRING_LEN,
};
use crate::cee::{CeeDcbx, DCBX_OUI, SUBTYPE_CEE, SUBTYPE_CIN};
use crate::codec::{read_tlv, Reader, Tlv, Writer};
use crate::ieee::{is_dcbx_tlv, IeeeRx};
use crate::{DecodeError, DecodeErrorKind, EmitError};

/// Longest Chassis ID / Port ID TLV: subtype + 255 octets of id.
const MAX_ID_TLV_LEN: usize = 256;
const MAX_ID_LEN: usize = MAX_ID_TLV_LEN - 1;
const SYSTEM_CAPABILITIES_LEN: usize = 4;
/// Management Address: address string length 2..=32 (subtype + 1..=31
/// octets), OID 0..=128 octets; the TLV adds 7 fixed octets.
const MGMT_MIN_LEN: usize = 9;
const MGMT_MAX_LEN: usize = 167;
const MGMT_FIXED_LEN: usize = 7;
const MGMT_MAX_OID_LEN: usize = 128;
const MGMT_MAX_ADDR_LEN: usize = 31;
/// OUI + subtype.
const ORG_HEADER_LEN: usize = 4;

fn too_long(at: usize, field: &'static str, len: usize, reason: &'static str) -> DecodeError {
    DecodeError::new(
        at,
        field,
        DecodeErrorKind::BadValue {
            value: len as u64,
            reason,
        },
    )
}

/// Reads one of the three mandatory TLVs, refusing anything else in its place.
fn expect<'a>(r: &mut Reader<'a>, want: u8, name: &'static str) -> Result<Tlv<'a>, DecodeError> {
    let tlv = read_tlv(r)?;
    if tlv.tlv_type != want {
        return Err(DecodeError::new(
            tlv.at,
            "lldp.tlv.type",
            DecodeErrorKind::Misordered {
                expected: name,
                found: tlv.tlv_type,
            },
        ));
    }
    Ok(tlv)
}

fn parse_id<'a>(tlv: Tlv<'a>, field: &'static str) -> Result<Id<'a>, DecodeError> {
    let len = tlv.value.left();
    if len < 2 {
        return Err(DecodeError::new(
            tlv.at,
            field,
            DecodeErrorKind::TooShort {
                length: len,
                minimum: 2,
            },
        ));
    }
    if len > MAX_ID_TLV_LEN {
        return Err(too_long(
            tlv.at,
            field,
            len,
            "ID TLV longer than 256 octets",
        ));
    }
    let mut v = tlv.value;
    let subtype = v.u8(field)?;
    Ok(Id {
        subtype,
        id: v.rest(),
    })
}

fn parse_string<'a>(tlv: &Tlv<'a>, field: &'static str) -> Result<&'a [u8], DecodeError> {
    let len = tlv.value.left();
    if len > MAX_STRING_LEN {
        return Err(too_long(
            tlv.at,
            field,
            len,
            "string TLV longer than 255 octets",
        ));
    }
    Ok(tlv.value.rest())
}

fn parse_mgmt<'a>(tlv: Tlv<'a>) -> Result<ManagementAddress<'a>, DecodeError> {
    let len = tlv.value.left();
    if len < MGMT_MIN_LEN {
        return Err(DecodeError::new(
            tlv.at,
            "lldp.mgmt_addr",
            DecodeErrorKind::TooShort {
                length: len,
                minimum: MGMT_MIN_LEN,
            },
        ));
    }
    if len > MGMT_MAX_LEN {
        return Err(too_long(
            tlv.at,
            "lldp.mgmt_addr",
            len,
            "Management Address TLV longer than 167 octets",
        ));
    }
    let mut v = tlv.value;
    let str_at = v.offset();
    let str_len = usize::from(v.u8("lldp.mgmt_addr.addr_str_len")?);
    if !(2..=32).contains(&str_len) {
        return Err(DecodeError::new(
            str_at,
            "lldp.mgmt_addr.addr_str_len",
            DecodeErrorKind::BadValue {
                value: str_len as u64,
                reason: "address string length must be 2..32",
            },
        ));
    }
    let mut addr = v.sub(str_len, "lldp.mgmt_addr.addr")?;
    let address_subtype = addr.u8("lldp.mgmt_addr.addr_subtype")?;
    let address = addr.rest();
    let interface_subtype = v.u8("lldp.mgmt_addr.if_subtype")?;
    let interface_number = v.u32("lldp.mgmt_addr.if_number")?;
    let oid_at = v.offset();
    let oid_len = usize::from(v.u8("lldp.mgmt_addr.oid_len")?);
    if oid_len > MGMT_MAX_OID_LEN {
        return Err(DecodeError::new(
            oid_at,
            "lldp.mgmt_addr.oid_len",
            DecodeErrorKind::BadValue {
                value: oid_len as u64,
                reason: "OID string longer than 128 octets",
            },
        ));
    }
    let expected = MGMT_FIXED_LEN + str_len + oid_len;
    if expected != len {
        return Err(DecodeError::new(
            tlv.at,
            "lldp.mgmt_addr",
            DecodeErrorKind::BadLength {
                length: len,
                expected,
            },
        ));
    }
    let oid = v.take(oid_len, "lldp.mgmt_addr.oid")?;
    Ok(ManagementAddress {
        address_subtype,
        address,
        interface_subtype,
        interface_number,
        oid,
    })
}

/// Refuses a second instance of a TLV the standard allows once per LLDPDU
/// (Port Description, System Name, System Description, System
/// Capabilities, the CEE TLV): `Lldpdu` has room for one, and keeping either
/// silently would hide a broken peer.
fn once(first: &mut Option<usize>, at: usize, field: &'static str) -> Result<(), DecodeError> {
    match *first {
        Some(first_offset) => Err(DecodeError::new(
            at,
            field,
            DecodeErrorKind::Duplicate { first_offset },
        )),
        None => {
            *first = Some(at);
            Ok(())
        }
    }
}

impl<'a> Lldpdu<'a> {
    /// Parses an LLDPDU (the Ethernet payload); error offsets count from the
    /// start of `data`.
    ///
    /// Allocates only for Management Address, non-DCBX organizationally
    /// specific and reserved-type TLVs (the `Vec`s that hold them), and for an
    /// APP table longer than it keeps in place (more than 4 CEE or 16 IEEE
    /// entries: one allocation each): the CEE and IEEE DCBX TLVs are held
    /// inline.
    pub fn parse(data: &'a [u8]) -> Result<Lldpdu<'a>, DecodeError> {
        Lldpdu::parse_at(data, 0)
    }

    /// The MSAP (Chassis ID, Port ID) of an LLDPDU, reading only its first two
    /// TLVs: what a receiver needs to tell who sent a frame before paying for the
    /// whole parse. None when those two TLVs are not there or malformed (the whole
    /// parse would refuse the LLDPDU too).
    pub fn msap_of(data: &'a [u8]) -> Option<(Id<'a>, Id<'a>)> {
        let mut r = Reader::with_base(data, 0);
        let chassis_id = parse_id(
            expect(&mut r, tlv_type::CHASSIS_ID, "Chassis ID").ok()?,
            "lldp.chassis_id",
        )
        .ok()?;
        let port_id = parse_id(
            expect(&mut r, tlv_type::PORT_ID, "Port ID").ok()?,
            "lldp.port_id",
        )
        .ok()?;
        Some((chassis_id, port_id))
    }

    /// [`Lldpdu::parse`] for an LLDPDU that starts `base` bytes into the
    /// caller's buffer (a frame): every offset, including those kept inside
    /// the CEE TLV's feature errors, counts from the caller's start.
    pub fn parse_at(data: &'a [u8], base: usize) -> Result<Lldpdu<'a>, DecodeError> {
        let mut r = Reader::with_base(data, base);
        let chassis_id = parse_id(
            expect(&mut r, tlv_type::CHASSIS_ID, "Chassis ID")?,
            "lldp.chassis_id",
        )?;
        let port_id = parse_id(
            expect(&mut r, tlv_type::PORT_ID, "Port ID")?,
            "lldp.port_id",
        )?;
        let ttl_tlv = expect(&mut r, tlv_type::TTL, "Time To Live")?;
        let ttl_len = ttl_tlv.value.left();
        if ttl_len != 2 {
            return Err(DecodeError::new(
                ttl_tlv.at,
                "lldp.ttl",
                DecodeErrorKind::BadLength {
                    length: ttl_len,
                    expected: 2,
                },
            ));
        }
        let ttl = ttl_tlv.value.clone().u16("lldp.ttl")?;
        let mut pdu = Lldpdu::new(chassis_id, port_id, ttl);
        // Offsets of the first of each once-only TLV.
        let mut seen_port_description = None;
        let mut seen_system_name = None;
        let mut seen_system_description = None;
        let mut seen_system_capabilities = None;
        let mut seen_cee = None;
        let mut seen_cin = None;
        let mut ieee_rx = IeeeRx::default();
        loop {
            if r.is_empty() {
                return Err(DecodeError::new(
                    r.offset(),
                    "lldp.end",
                    DecodeErrorKind::MissingEnd,
                ));
            }
            let tlv = read_tlv(&mut r)?;
            let at = tlv.at;
            match tlv.tlv_type {
                tlv_type::END => {
                    let len = tlv.value.left();
                    if len != 0 {
                        return Err(DecodeError::new(
                            at,
                            "lldp.end",
                            DecodeErrorKind::BadLength {
                                length: len,
                                expected: 0,
                            },
                        ));
                    }
                    check_padding(&r)?;
                    return Ok(pdu);
                }
                tlv_type::CHASSIS_ID => return Err(mandatory(at, "Chassis ID")),
                tlv_type::PORT_ID => return Err(mandatory(at, "Port ID")),
                tlv_type::TTL => return Err(mandatory(at, "Time To Live")),
                tlv_type::PORT_DESCRIPTION => {
                    once(&mut seen_port_description, at, "lldp.port_description")?;
                    pdu.port_description = Some(parse_string(&tlv, "lldp.port_description")?);
                }
                tlv_type::SYSTEM_NAME => {
                    once(&mut seen_system_name, at, "lldp.system_name")?;
                    pdu.system_name = Some(parse_string(&tlv, "lldp.system_name")?);
                }
                tlv_type::SYSTEM_DESCRIPTION => {
                    once(&mut seen_system_description, at, "lldp.system_description")?;
                    pdu.system_description = Some(parse_string(&tlv, "lldp.system_description")?);
                }
                tlv_type::SYSTEM_CAPABILITIES => {
                    once(
                        &mut seen_system_capabilities,
                        at,
                        "lldp.system_capabilities",
                    )?;
                    let len = tlv.value.left();
                    if len != SYSTEM_CAPABILITIES_LEN {
                        return Err(DecodeError::new(
                            at,
                            "lldp.system_capabilities",
                            DecodeErrorKind::BadLength {
                                length: len,
                                expected: SYSTEM_CAPABILITIES_LEN,
                            },
                        ));
                    }
                    let mut v = tlv.value;
                    pdu.system_capabilities = Some(SystemCapabilities {
                        capabilities: v.u16("lldp.system_capabilities.capabilities")?,
                        enabled: v.u16("lldp.system_capabilities.enabled")?,
                    });
                }
                tlv_type::MANAGEMENT_ADDRESS => pdu.management_addresses.push(parse_mgmt(tlv)?),
                tlv_type::ORG_SPECIFIC => {
                    let len = tlv.value.left();
                    if len < ORG_HEADER_LEN {
                        return Err(DecodeError::new(
                            at,
                            "lldp.org",
                            DecodeErrorKind::TooShort {
                                length: len,
                                minimum: ORG_HEADER_LEN,
                            },
                        ));
                    }
                    let mut v = tlv.value;
                    let oui: [u8; 3] = v.array("lldp.org.oui")?;
                    let subtype = v.u8("lldp.org.subtype")?;
                    if oui == DCBX_OUI && subtype == SUBTYPE_CEE {
                        // lldpad drops an LLDPDU with two DCBX TLVs; which one
                        // would it believe? Neither, and so do we.
                        once(&mut seen_cee, at, "lldp.dcbx")?;
                        pdu.cee_dcbx = Some(CeeDcbx::parse_at(v.rest(), v.offset())?);
                    } else if oui == DCBX_OUI && subtype == SUBTYPE_CIN {
                        once(&mut seen_cin, at, "lldp.dcbx")?;
                        pdu.cin_dcbx = Some(v.rest());
                    } else if is_dcbx_tlv(oui, subtype) {
                        // Kept inside `ieee_dcbx`, malformed or not: a bad
                        // IEEE TLV does not cost the rest of the LLDPDU.
                        ieee_rx.tlv(&mut pdu.ieee_dcbx, subtype, at, len, v);
                    } else {
                        pdu.org_specific.push(OrgTlv {
                            oui,
                            subtype,
                            info: v.rest(),
                        });
                    }
                }
                other => pdu.unknown.push(RawTlv {
                    tlv_type: other,
                    value: tlv.value.rest(),
                }),
            }
        }
    }

    /// Length of the LLDPDU `emit` writes: every TLV including End, no padding.
    pub fn buffer_len(&self) -> usize {
        let mut n = 2 + 1 + self.chassis_id.id.len();
        n += 2 + 1 + self.port_id.id.len();
        n += 2 + 2;
        for s in [
            self.port_description,
            self.system_name,
            self.system_description,
        ]
        .into_iter()
        .flatten()
        {
            n += 2 + s.len();
        }
        if self.system_capabilities.is_some() {
            n += 2 + SYSTEM_CAPABILITIES_LEN;
        }
        for m in &self.management_addresses {
            n += 2 + mgmt_len(m);
        }
        if let Some(cee) = &self.cee_dcbx {
            n += cee.tlv_len();
        }
        if let Some(cin) = self.cin_dcbx {
            n += 2 + ORG_HEADER_LEN + cin.len();
        }
        n += self.ieee_dcbx.buffer_len();
        for o in &self.org_specific {
            n += 2 + ORG_HEADER_LEN + o.info.len();
        }
        for u in &self.unknown {
            n += 2 + u.value.len();
        }
        n + 2
    }

    /// Writes `buffer_len()` bytes in the order documented on [`Lldpdu`];
    /// returns that count.
    ///
    /// Refuses an LLDPDU longer than [`MAX_LLDPDU_LEN`] (field `lldpdu`), and,
    /// with the field at fault, a length the parser would refuse:
    /// an id of 0 or over 255 octets, a string over 255, a management address
    /// of 0 or over 31 octets or an OID over 128, a CEE DCBX, org-specific or
    /// unknown TLV whose value exceeds 511 octets; and an invalid IEEE DCBX
    /// value (see [`IeeeDcbx::emit`](crate::ieee::IeeeDcbx::emit)). On error
    /// the buffer's contents are unspecified.
    ///
    /// Malformed CEE features and IEEE TLVs are not written. A `RawTlv` of
    /// type 0..=8 or 127, or an `OrgTlv` carrying the DCBX OUI with subtype 1
    /// or 2 or the IEEE 802.1 OUI with subtype 9..=12, is written but will
    /// not parse back to the same value: building one is a caller bug.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, EmitError> {
        EmitError::check("lldpdu", self.buffer_len(), 0, MAX_LLDPDU_LEN)?;
        let mut w = Writer::new(buf);
        for (t, id, field) in [
            (tlv_type::CHASSIS_ID, &self.chassis_id, "lldp.chassis_id"),
            (tlv_type::PORT_ID, &self.port_id, "lldp.port_id"),
        ] {
            EmitError::check(field, id.id.len(), 1, MAX_ID_LEN)?;
            w.tlv_header(t, 1 + id.id.len(), field)?;
            w.u8(id.subtype);
            w.put(id.id);
        }
        w.tlv_header(tlv_type::TTL, 2, "lldp.ttl")?;
        w.u16(self.ttl);
        for (t, s, field) in [
            (
                tlv_type::PORT_DESCRIPTION,
                self.port_description,
                "lldp.port_description",
            ),
            (tlv_type::SYSTEM_NAME, self.system_name, "lldp.system_name"),
            (
                tlv_type::SYSTEM_DESCRIPTION,
                self.system_description,
                "lldp.system_description",
            ),
        ] {
            if let Some(s) = s {
                EmitError::check(field, s.len(), 0, MAX_STRING_LEN)?;
                w.tlv_header(t, s.len(), field)?;
                w.put(s);
            }
        }
        if let Some(c) = self.system_capabilities {
            w.tlv_header(
                tlv_type::SYSTEM_CAPABILITIES,
                SYSTEM_CAPABILITIES_LEN,
                "lldp.system_capabilities",
            )?;
            w.u16(c.capabilities);
            w.u16(c.enabled);
        }
        for m in &self.management_addresses {
            EmitError::check("lldp.mgmt_addr.addr", m.address.len(), 1, MGMT_MAX_ADDR_LEN)?;
            EmitError::check("lldp.mgmt_addr.oid", m.oid.len(), 0, MGMT_MAX_OID_LEN)?;
            w.tlv_header(tlv_type::MANAGEMENT_ADDRESS, mgmt_len(m), "lldp.mgmt_addr")?;
            // Both fit a byte: checked just above.
            w.u8((1 + m.address.len()) as u8);
            w.u8(m.address_subtype);
            w.put(m.address);
            w.u8(m.interface_subtype);
            w.u32(m.interface_number);
            w.u8(m.oid.len() as u8);
            w.put(m.oid);
        }
        if let Some(cee) = &self.cee_dcbx {
            // The one limit of the CEE TLV: its value fits the 9-bit length.
            w.tlv_header(tlv_type::ORG_SPECIFIC, cee.tlv_len() - 2, "lldp.dcbx")?;
            w.put(&DCBX_OUI);
            w.u8(SUBTYPE_CEE);
            // The body has its own emitter, which writes into the rest of `buf`.
            let body_len = cee.emit(w.rest_mut())?;
            w.advance(body_len);
        }
        if let Some(cin) = self.cin_dcbx {
            w.tlv_header(
                tlv_type::ORG_SPECIFIC,
                ORG_HEADER_LEN + cin.len(),
                "lldp.dcbx",
            )?;
            w.put(&DCBX_OUI);
            w.u8(SUBTYPE_CIN);
            w.put(cin);
        }
        self.ieee_dcbx.emit_into(&mut w)?;
        for o in &self.org_specific {
            w.tlv_header(
                tlv_type::ORG_SPECIFIC,
                ORG_HEADER_LEN + o.info.len(),
                "lldp.org",
            )?;
            w.put(&o.oui);
            w.u8(o.subtype);
            w.put(o.info);
        }
        for u in &self.unknown {
            w.tlv_header(u.tlv_type, u.value.len(), "lldp.tlv")?;
            w.put(u.value);
        }
        w.tlv_header(tlv_type::END, 0, "lldp.end")?;
        Ok(w.written())
    }
}

fn mgmt_len(m: &ManagementAddress<'_>) -> usize {
    MGMT_FIXED_LEN + 1 + m.address.len() + m.oid.len()
}

fn mandatory(at: usize, tlv: &'static str) -> DecodeError {
    DecodeError::new(
        at,
        "lldp.tlv.type",
        DecodeErrorKind::UnexpectedMandatory { tlv },
    )
}

/// After End only zero octets (Ethernet padding) may follow. The error names
/// the TLV header (2-octet word, counted from End) that holds the first
/// nonzero octet, and its type.
fn check_padding(r: &Reader<'_>) -> Result<(), DecodeError> {
    let rest = r.rest();
    match rest.iter().position(|&b| b != 0) {
        None => Ok(()),
        Some(i) => {
            let word = i - i % 2;
            let first = rest.get(word).copied().unwrap_or(0);
            Err(DecodeError::new(
                r.offset() + word,
                "lldp.end",
                DecodeErrorKind::TlvAfterEnd {
                    tlv_type: first >> 1,
                },
            ))
        }
    }
}
