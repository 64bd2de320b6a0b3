//! One decoded frame, and its JSON form (the schema is in docs/decode.md).
//!
//! The DCBX values are serialised with the wire crate's own serde
//! implementations, so `decode --json` uses the same names as every other
//! command; only the LLDP envelope, whose wire types borrow raw bytes, is
//! spelled out here.

use serde::Serialize;

use lossless_wire::cee::{CeeDcbx, Control, FeatureHeader, FeatureTlv};
use lossless_wire::ethernet::EthernetHeader;
use lossless_wire::ieee::{AppPriority, EtsConfig, EtsRecommendation, IeeeDcbx, PfcConfig};
use lossless_wire::lldp::{Lldpdu, ETHERTYPE_LLDP};
use lossless_wire::mac_control::{MacControl, ETHERTYPE_MAC_CONTROL, OPCODE_PAUSE, OPCODE_PFC};
use lossless_wire::measure::{Measure, ETHERTYPE_MEASURE};
use lossless_wire::{DecodeError, DecodeErrorKind, Frame, MacAddr, Payload};
use pcap_file::DataLink;

use lossless_wire::tunnel::{Encap, ParseOptions};

use super::names::{self, IdKind};
use super::tunnel::{self, TunnelJson};
use lossless::capture::{Packet, Timestamp};

/// What a frame is, by Ethertype (and MAC Control opcode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Lldp,
    Pfc,
    Pause,
    /// A link-delay measurement message (adaptive headroom).
    Measure,
    /// A frame inside one of the PFC relay's tunnels (SRv6, VXLAN, SR-MPLS).
    Tunnel,
    Other,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Lldp => "LLDP",
            Kind::Pfc => "PFC",
            Kind::Pause => "PAUSE",
            Kind::Measure => "delay measurement",
            Kind::Tunnel => "tunnel",
            Kind::Other => "other",
        }
    }
}

/// Why a captured frame was not decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// The bytes are malformed: the wire crate's error, offsets from the frame's first byte.
    Wire(DecodeError),
    /// The capture's link type is not Ethernet, so there is no frame to parse.
    LinkType(DataLink),
}

/// A captured frame after decoding.
#[derive(Debug)]
pub struct Decoded<'a> {
    /// 1-based position in the capture.
    pub frame: usize,
    pub time: Option<Timestamp>,
    /// Captured bytes, and the length on the wire when it differs.
    pub len: usize,
    pub orig_len: usize,
    /// The Ethernet header, when at least that could be read.
    pub header: Option<EthernetHeader>,
    pub kind: Kind,
    pub payload: Result<Payload<'a>, FrameError>,
    /// The tunnel headers and the frame they carry ([`Kind::Tunnel`]).
    pub tunnel: Option<Tunnel<'a>>,
}

/// A relay tunnel's headers and the frame inside, decoded as a frame of its own.
#[derive(Debug)]
pub struct Tunnel<'a> {
    pub encap: Encap<'a>,
    pub inner: Box<Decoded<'a>>,
}

/// Decodes one captured frame; never fails, a malformed frame is a value.
pub fn decode<'a>(frame: usize, packet: &'a Packet, opts: &ParseOptions) -> Decoded<'a> {
    let data: &[u8] = &packet.data;
    let mut d = Decoded {
        frame,
        time: packet.time,
        len: data.len(),
        orig_len: packet.orig_len as usize,
        header: None,
        kind: Kind::Other,
        payload: Err(FrameError::LinkType(packet.linktype)),
        tunnel: None,
    };
    if packet.linktype == DataLink::ETHERNET {
        ethernet(&mut d, data, Some(opts));
    }
    d
}

/// Decodes `data` as an Ethernet frame into `d`; `tunnels`: look into relay
/// tunnels with these options (not inside a tunnel: one level is all the relay uses).
fn ethernet<'a>(d: &mut Decoded<'a>, data: &'a [u8], tunnels: Option<&ParseOptions>) {
    match Frame::parse(data) {
        Ok(f) => {
            d.kind = match &f.payload {
                Payload::Lldp(_) => Kind::Lldp,
                Payload::MacControl(MacControl::Pfc { .. }) => Kind::Pfc,
                Payload::MacControl(MacControl::Pause { .. }) => Kind::Pause,
                Payload::Measure(_) => Kind::Measure,
                Payload::Other(_) => Kind::Other,
            };
            d.header = Some(f.header);
            d.payload = Ok(f.payload);
            if let (Some(opts), Kind::Other) = (tunnels, d.kind) {
                let complete = d.len == d.orig_len;
                match tunnel::recognise(data, f.header.ethertype, complete, opts) {
                    tunnel::Recognised::Tunnel(t) => {
                        let mut inner = Decoded {
                            frame: d.frame,
                            time: None,
                            len: t.inner.len(),
                            orig_len: t.inner.len(),
                            header: None,
                            kind: Kind::Other,
                            payload: Ok(Payload::Other(t.inner)),
                            tunnel: None,
                        };
                        ethernet(&mut inner, t.inner, None);
                        d.kind = Kind::Tunnel;
                        d.tunnel = Some(Tunnel {
                            encap: t.encap,
                            inner: Box::new(inner),
                        });
                    }
                    tunnel::Recognised::Malformed(e) => {
                        d.kind = Kind::Tunnel;
                        d.payload = Err(FrameError::Wire(e));
                    }
                    tunnel::Recognised::NotTunnel => {}
                }
            }
        }
        Err(e) => {
            // Say as much as can be said: the header, and what the frame meant to be.
            if let Ok((h, hlen)) = EthernetHeader::parse(data) {
                d.kind = match h.ethertype {
                    ETHERTYPE_LLDP => Kind::Lldp,
                    ETHERTYPE_MAC_CONTROL => {
                        match data
                            .get(hlen..hlen + 2)
                            .map(|b| u16::from_be_bytes([b[0], b[1]]))
                        {
                            Some(OPCODE_PFC) => Kind::Pfc,
                            Some(OPCODE_PAUSE) => Kind::Pause,
                            _ => Kind::Other,
                        }
                    }
                    ETHERTYPE_MEASURE => Kind::Measure,
                    _ => Kind::Other,
                };
                d.header = Some(h);
            }
            d.payload = Err(FrameError::Wire(e));
        }
    }
}

/// An error as JSON: `{offset, field, kind, <the kind's values>, reason}`.
#[derive(Debug, Serialize)]
pub struct ErrorJson<'a> {
    pub offset: usize,
    pub field: &'a str,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'a DecodeErrorKind>,
    pub reason: String,
}

impl<'a> ErrorJson<'a> {
    pub fn wire(e: &'a DecodeError) -> Self {
        ErrorJson {
            offset: e.offset,
            field: e.field,
            kind: Some(&e.kind),
            reason: e.kind.to_string(),
        }
    }

    fn frame(e: &'a FrameError) -> Self {
        match e {
            FrameError::Wire(e) => ErrorJson::wire(e),
            FrameError::LinkType(l) => ErrorJson {
                offset: 0,
                field: "capture.linktype",
                kind: None,
                reason: link_type_reason(*l),
            },
        }
    }
}

pub fn link_type_reason(l: DataLink) -> String {
    format!(
        "link type {:?} ({}) is not Ethernet; only Ethernet captures are decoded",
        l,
        u32::from(l)
    )
}

#[derive(Debug, Serialize)]
struct Vlan {
    id: u16,
    pcp: u8,
    dei: bool,
}

/// The JSON object written for one frame.
#[derive(Debug, Serialize)]
pub struct Record<'a> {
    /// Absent for the frame inside a tunnel.
    #[serde(skip_serializing_if = "Option::is_none")]
    frame: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    time: Option<f64>,
    len: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    orig_len: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    src: Option<MacAddr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dst: Option<MacAddr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    vlan: Option<Vlan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ethertype: Option<String>,
    #[serde(rename = "type")]
    kind: Kind,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    lldp: Option<LldpJson<'a>>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    mac_control: Option<MacControlJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    measure: Option<&'a Measure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tunnel: Option<TunnelJson>,
    /// The frame inside the tunnel, as a record of its own (no `frame`, no `time`).
    #[serde(skip_serializing_if = "Option::is_none")]
    inner: Option<Box<Record<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorJson<'a>>,
}

impl<'a> Record<'a> {
    /// The record of a captured frame.
    pub fn new(d: &'a Decoded<'a>) -> Self {
        Record {
            frame: Some(d.frame),
            ..Record::body(d)
        }
    }

    /// Everything but the frame number (which the frame inside a tunnel does not have).
    fn body(d: &'a Decoded<'a>) -> Self {
        let h = d.header.as_ref();
        let (mut lldp, mut mac_control, mut measure, mut error) = (None, None, None, None);
        match &d.payload {
            Ok(Payload::Lldp(pdu)) => lldp = Some(LldpJson::new(pdu)),
            Ok(Payload::MacControl(ctl)) => mac_control = Some(MacControlJson::new(ctl)),
            Ok(Payload::Measure(m)) => measure = Some(m),
            Ok(Payload::Other(_)) => {}
            Err(e) => error = Some(ErrorJson::frame(e)),
        }
        Record {
            frame: None,
            time: d.time.map(Timestamp::as_f64),
            len: d.len,
            orig_len: (d.orig_len != d.len).then_some(d.orig_len),
            src: h.map(|h| h.src),
            dst: h.map(|h| h.dst),
            vlan: h.and_then(|h| h.vlan).map(|v| Vlan {
                id: v.vid,
                pcp: v.pcp,
                dei: v.dei,
            }),
            ethertype: h.map(|h| format!("{:#06x}", h.ethertype)),
            kind: d.kind,
            lldp,
            mac_control,
            measure,
            tunnel: d.tunnel.as_ref().map(|t| TunnelJson::new(&t.encap)),
            inner: d.tunnel.as_ref().map(|t| Box::new(Record::body(&t.inner))),
            error,
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum MacControlJson {
    Pause {
        quanta: u16,
    },
    Pfc {
        class_enable: u16,
        priorities: lossless_wire::cee::PriorityMap,
        quanta: [u16; 8],
    },
}

impl MacControlJson {
    fn new(ctl: &MacControl) -> Self {
        match *ctl {
            MacControl::Pause { quanta } => MacControlJson::Pause { quanta },
            MacControl::Pfc {
                class_enable,
                quanta,
            } => MacControlJson::Pfc {
                class_enable,
                // The parser refuses a nonzero high byte, so the low byte is the whole vector.
                priorities: lossless_wire::cee::PriorityMap(class_enable as u8),
                quanta,
            },
        }
    }
}

#[derive(Debug, Serialize)]
struct IdJson {
    subtype: u8,
    value: String,
}

#[derive(Debug, Serialize)]
struct CapabilitiesJson {
    capabilities: Vec<String>,
    enabled: Vec<String>,
}

#[derive(Debug, Serialize)]
struct MgmtJson {
    family: u8,
    address: String,
    interface_subtype: u8,
    interface_number: u32,
    #[serde(skip_serializing_if = "String::is_empty")]
    oid: String,
}

#[derive(Debug, Serialize)]
struct OrgJson {
    oui: String,
    subtype: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'static str>,
    info: String,
}

#[derive(Debug, Serialize)]
struct RawJson {
    #[serde(rename = "type")]
    tlv_type: u8,
    value: String,
}

#[derive(Debug, Serialize)]
struct LldpJson<'a> {
    chassis_id: IdJson,
    port_id: IdJson,
    ttl: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    port_description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_capabilities: Option<CapabilitiesJson>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    management_addresses: Vec<MgmtJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dcbx: Option<DcbxJson<'a>>,
    /// The CIN (DCBX 1.0) TLV body in hex: recognised, not decoded.
    #[serde(skip_serializing_if = "Option::is_none")]
    cin_dcbx: Option<String>,
    /// The IEEE 802.1Qaz TLVs, when any is present.
    #[serde(skip_serializing_if = "Option::is_none")]
    ieee_dcbx: Option<IeeeJson<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    org_specific: Vec<OrgJson>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    unknown_tlvs: Vec<RawJson>,
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

impl<'a> LldpJson<'a> {
    fn new(pdu: &'a Lldpdu<'a>) -> Self {
        LldpJson {
            chassis_id: IdJson {
                subtype: pdu.chassis_id.subtype,
                value: names::id_value(IdKind::Chassis, &pdu.chassis_id),
            },
            port_id: IdJson {
                subtype: pdu.port_id.subtype,
                value: names::id_value(IdKind::Port, &pdu.port_id),
            },
            ttl: pdu.ttl,
            port_description: pdu.port_description.map(lossy),
            system_name: pdu.system_name.map(lossy),
            system_description: pdu.system_description.map(lossy),
            system_capabilities: pdu.system_capabilities.map(|c| CapabilitiesJson {
                capabilities: names::capability_names(c.capabilities),
                enabled: names::capability_names(c.enabled),
            }),
            management_addresses: pdu
                .management_addresses
                .iter()
                .map(|m| MgmtJson {
                    family: m.address_subtype,
                    address: names::ip_address(m.address_subtype, m.address)
                        .unwrap_or_else(|| names::hex(m.address)),
                    interface_subtype: m.interface_subtype,
                    interface_number: m.interface_number,
                    oid: names::hex(m.oid),
                })
                .collect(),
            dcbx: pdu.cee_dcbx.as_ref().map(DcbxJson::new),
            cin_dcbx: pdu.cin_dcbx.map(names::hex),
            ieee_dcbx: (!pdu.ieee_dcbx.is_empty()).then(|| IeeeJson::new(&pdu.ieee_dcbx)),
            org_specific: pdu
                .org_specific
                .iter()
                .map(|o| OrgJson {
                    oui: names::oui(o.oui),
                    subtype: o.subtype,
                    name: names::org_tlv_name(o.oui, o.subtype),
                    info: names::hex(o.info),
                })
                .collect(),
            unknown_tlvs: pdu
                .unknown
                .iter()
                .map(|u| RawJson {
                    tlv_type: u.tlv_type,
                    value: names::hex(u.value),
                })
                .collect(),
        }
    }
}

/// A feature sub-TLV: its header and configuration side by side in one
/// object, or `{"error": ...}` when the sub-TLV was malformed.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum FeatureJson<'a, C: Serialize> {
    Ok {
        #[serde(flatten)]
        header: &'a FeatureHeader,
        #[serde(flatten)]
        cfg: &'a C,
    },
    Err {
        error: ErrorJson<'a>,
    },
}

impl<'a, C: Serialize> FeatureJson<'a, C> {
    fn new(f: &'a Result<FeatureTlv<C>, DecodeError>) -> Self {
        match f {
            Ok(t) => FeatureJson::Ok {
                header: &t.header,
                cfg: &t.cfg,
            },
            Err(e) => FeatureJson::Err {
                error: ErrorJson::wire(e),
            },
        }
    }
}

#[derive(Debug, Serialize)]
struct DcbxJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    control: Option<&'a Control>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pg: Option<FeatureJson<'a, lossless_wire::cee::PgConfig>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pfc: Option<FeatureJson<'a, lossless_wire::cee::PfcConfig>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    app: Option<FeatureJson<'a, lossless_wire::cee::AppConfig>>,
    anomalies: Vec<ErrorJson<'a>>,
    unknown_subtlvs: u16,
}

impl<'a> DcbxJson<'a> {
    fn new(c: &'a CeeDcbx) -> Self {
        DcbxJson {
            control: c.control.as_ref(),
            pg: c.pg.as_ref().map(FeatureJson::new),
            pfc: c.pfc.as_ref().map(FeatureJson::new),
            app: c.app.as_ref().map(FeatureJson::new),
            anomalies: c.anomalies.iter().map(ErrorJson::wire).collect(),
            unknown_subtlvs: c.unknown_subtlvs,
        }
    }
}

/// One IEEE 802.1Qaz TLV: its fields, or `{"error": ...}` when malformed.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum TlvJson<'a, T: Serialize> {
    Ok(T),
    Err { error: ErrorJson<'a> },
}

impl<'a, T: Serialize> TlvJson<'a, T> {
    fn new<V>(r: &'a Result<V, DecodeError>, f: impl FnOnce(&'a V) -> T) -> Self {
        match r {
            Ok(v) => TlvJson::Ok(f(v)),
            Err(e) => TlvJson::Err {
                error: ErrorJson::wire(e),
            },
        }
    }
}

/// An APP entry as the wire crate names it, plus a name for what it matches.
#[derive(Debug, Serialize)]
struct AppPriorityJson<'a> {
    #[serde(flatten)]
    entry: &'a AppPriority,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'static str>,
}

/// The Application Priority TLV: `{"entries": [...]}`, as the CEE APP.
#[derive(Debug, Serialize)]
struct AppTableJson<'a> {
    entries: Vec<AppPriorityJson<'a>>,
}

/// The IEEE PFC Configuration TLV as the wire crate names it, but for its enabled
/// priorities, named `priorities` as in the CEE PFC TLV's object (one name for one
/// thing in decode's JSON).
fn ieee_pfc(p: &PfcConfig) -> serde_json::Value {
    let mut v = serde_json::to_value(p).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        if let Some(on) = o.remove("enabled") {
            o.insert("priorities".into(), on);
        }
    }
    v
}

#[derive(Debug, Serialize)]
struct IeeeJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    ets_config: Option<TlvJson<'a, &'a EtsConfig>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ets_recommendation: Option<TlvJson<'a, &'a EtsRecommendation>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pfc: Option<TlvJson<'a, serde_json::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    app: Option<TlvJson<'a, AppTableJson<'a>>>,
}

impl<'a> IeeeJson<'a> {
    fn new(i: &'a IeeeDcbx) -> Self {
        IeeeJson {
            ets_config: i.ets_config.as_ref().map(|r| TlvJson::new(r, |v| v)),
            ets_recommendation: i
                .ets_recommendation
                .as_ref()
                .map(|r| TlvJson::new(r, |v| v)),
            pfc: i.pfc.as_ref().map(|r| TlvJson::new(r, ieee_pfc)),
            app: i.app.as_ref().map(|r| {
                TlvJson::new(r, |t| AppTableJson {
                    entries: t
                        .iter()
                        .map(|entry| AppPriorityJson {
                            entry,
                            name: names::ieee_app_name(entry),
                        })
                        .collect(),
                })
            }),
        }
    }
}
