//! tshark's decode of the frames the relay lab's links carried, and what it
//! must show of the tunnel headers and of the PFC frame inside.

use std::path::Path;
use std::rc::Rc;

use lossless_relay::TunnelConfig;
use lossless_testkit::tshark::{tshark_fields, Fields, PFC_FIELDS};
use lossless_wire::tunnel::{ParseOptions, TunnelFrame};
use lossless_wire::MacAddr;

use super::hex;
use crate::common::unique;

/// Asked of tshark beside [`PFC_FIELDS`].
const FIELDS: &[&str] = &[
    "frame.len",
    "frame.protocols",
    "eth.dst",
    "eth.src",
    "ipv6.src",
    "ipv6.dst",
    "ipv6.tclass.dscp",
    "ipv6.hlim",
    "ipv6.routing.type",
    "ipv6.routing.segleft",
    "ipv6.routing.srh.addr",
    "ipv6.routing.nxt",
    "ip.src",
    "ip.dst",
    "ip.dsfield.dscp",
    "ip.ttl",
    "ip.checksum.status",
    "udp.dstport",
    "udp.checksum.status",
    "vxlan.flag_i",
    "vxlan.vni",
    "mpls.label",
    "mpls.exp",
    "mpls.bottom",
    "macc.opcode",
];

/// tshark's decode of one frame.
pub struct Row {
    pub label: &'static str,
    pub frame: Vec<u8>,
    /// The decode of every frame; this one is row `row`.
    fields: Rc<Fields>,
    row: usize,
}

impl Row {
    /// Field `name`: its values, comma-joined (outer layer first).
    pub fn get(&self, name: &str) -> &str {
        self.fields.get(self.row, name)
    }

    #[track_caller]
    pub fn expect(&self, name: &str, want: &str) {
        assert_eq!(
            self.get(name),
            want,
            "tshark's {name} on {} for {}",
            self.label,
            hex(&self.frame)
        );
    }

    /// The PFC fields of `frame` (a PFC frame as sent, figure 1), as tshark
    /// must show them for the last (innermost) MAC Control layer.
    #[track_caller]
    pub fn expect_pfc(&self, frame: &[u8]) {
        let word = |at: usize| u16::from_be_bytes([frame[at], frame[at + 1]]);
        let last = |name: &str| self.get(name).rsplit(',').next().unwrap_or("").to_string();
        let show = |name: &str, want: String| {
            assert_eq!(
                last(name),
                want,
                "tshark's {name} on {} for {}",
                self.label,
                hex(&self.frame)
            );
        };
        show("eth.dst", mac(&frame[0..6]));
        show("eth.src", mac(&frame[6..12]));
        show("macc.opcode", format!("0x{:04x}", word(14)));
        let want = (
            format!("0x{:04x}", word(16)),
            std::array::from_fn(|p| word(18 + 2 * p).to_string()),
        );
        assert_eq!(
            self.fields.pfc(self.row),
            want,
            "tshark's PFC fields on {} for {}",
            self.label,
            hex(&self.frame)
        );
    }
}

pub fn mac(b: &[u8]) -> String {
    MacAddr(b.try_into().unwrap()).to_string()
}

/// Writes `frames` to one pcap (Ethernet) and returns tshark's decode of
/// each, in order.
pub fn tshark(dir: &Path, frames: &[(&'static str, Vec<u8>)]) -> Vec<Row> {
    let path = dir.join(format!("{}.pcap", unique("links")));
    let bytes: Vec<&[u8]> = frames.iter().map(|(_, f)| f.as_slice()).collect();
    lossless_testkit::write_pcap(&path, &bytes);
    let decoded = tshark_fields(
        &path,
        &[
            "-o",
            "ip.check_checksum:TRUE",
            "-o",
            "udp.check_checksum:TRUE",
        ],
        &[FIELDS, &PFC_FIELDS[..]].concat(),
    );
    let text = decoded
        .rows
        .iter()
        .map(|r| r.join("|"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        decoded.len(),
        frames.len(),
        "tshark decoded every frame:\n{text}"
    );
    let decoded = Rc::new(decoded);
    frames
        .iter()
        .enumerate()
        .map(|(row, (label, frame))| Row {
            label,
            frame: frame.clone(),
            fields: Rc::clone(&decoded),
            row,
        })
        .collect()
}

/// What tshark must show of the tunnel headers of a frame PE2 sends with
/// `tunnel` (its configuration): the draft's highest-priority marking (DSCP
/// 48, MPLS TC 7) and the configured addresses, SIDs and labels. `routed`:
/// after the transit router (TTL / hop limit one less).
#[track_caller]
pub fn expect_tunnel(r: &Row, tunnel: &TunnelConfig, routed: bool) {
    let hops = if routed { "63" } else { "64" };
    match tunnel {
        TunnelConfig::Srv6 {
            source,
            segments,
            reduced,
            ..
        } => {
            let sid = segments[segments.len() - 1].to_string();
            r.expect("ipv6.src", &source.to_string());
            r.expect("ipv6.dst", &sid);
            r.expect("ipv6.tclass.dscp", "48");
            r.expect("ipv6.hlim", hops);
            if *reduced {
                r.expect("frame.protocols", "eth:ethertype:ipv6:eth:ethertype:macc");
                r.expect("ipv6.routing.type", "");
            } else {
                r.expect(
                    "frame.protocols",
                    "eth:ethertype:ipv6:ipv6.routing:eth:ethertype:macc",
                );
                r.expect("ipv6.routing.type", "4");
                r.expect("ipv6.routing.segleft", "0");
                r.expect("ipv6.routing.srh.addr", &sid);
                r.expect("ipv6.routing.nxt", "143");
            }
        }
        TunnelConfig::Vxlan {
            source,
            destination,
            vni,
            port,
            ..
        } => {
            let ip = if source.is_ipv4() { "ip" } else { "ipv6" };
            r.expect(
                "frame.protocols",
                &format!("eth:ethertype:{ip}:udp:vxlan:eth:ethertype:macc"),
            );
            r.expect(&format!("{ip}.src"), &source.to_string());
            r.expect(&format!("{ip}.dst"), &destination.to_string());
            if source.is_ipv4() {
                r.expect("ip.dsfield.dscp", "48");
                r.expect("ip.ttl", hops);
                r.expect("ip.checksum.status", "1");
            } else {
                r.expect("ipv6.tclass.dscp", "48");
                r.expect("ipv6.hlim", hops);
            }
            r.expect("udp.dstport", &port.to_string());
            r.expect("udp.checksum.status", "1");
            r.expect("vxlan.flag_i", "1");
            r.expect("vxlan.vni", &vni.to_string());
        }
        TunnelConfig::SrMpls { labels, .. } => {
            r.expect(
                "frame.protocols",
                "eth:ethertype:mpls:pwethheuristic:pwethcw:eth:ethertype:macc",
            );
            let joined = |f: &dyn Fn(usize) -> String| {
                (0..labels.len()).map(f).collect::<Vec<_>>().join(",")
            };
            r.expect("mpls.label", &joined(&|i| labels[i].to_string()));
            r.expect("mpls.exp", &joined(&|_| "7".into()));
            let bottom = |i: usize| u8::from(i + 1 == labels.len()).to_string();
            r.expect("mpls.bottom", &joined(&bottom));
        }
    }
}

/// The inner frame of a tunnel frame, by our decoder (tshark checks the same
/// frames independently).
pub fn inner(frame: &[u8]) -> Vec<u8> {
    TunnelFrame::parse(frame, &ParseOptions::default())
        .unwrap_or_else(|e| panic!("{e}: {}", hex(frame)))
        .inner
        .to_vec()
}
