//! IEEE 802.1Qaz test support: TLVs assembled byte by byte (independently of
//! the crate's emitter), proptest strategies for valid values, and the
//! captures used as golden vectors.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use lossless_wire::ieee::{
    AppPriority, AppPriorityTable, EtsConfig, EtsRecommendation, EtsTable, IeeeDcbx, PfcConfig,
    PriorityMap, Selector, Tsa, MAX_APP_ENTRIES,
};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

/// An LLDP TLV header word.
pub fn tlv_header(tlv_type: u8, len: usize) -> [u8; 2] {
    (((tlv_type as u16) << 9) | len as u16).to_be_bytes()
}

/// An 802.1 org TLV: header, OUI 00-80-C2, subtype, `info` (after the subtype).
pub fn org_8021(subtype: u8, info: &[u8]) -> Vec<u8> {
    let mut v = tlv_header(127, 4 + info.len()).to_vec();
    v.extend_from_slice(&[0x00, 0x80, 0xc2, subtype]);
    v.extend_from_slice(info);
    v
}

/// An ETS TLV (subtype 9 or 10): `first` is the flags (or reserved) byte.
pub fn ets_tlv(subtype: u8, first: u8, prio_tc: [u8; 8], tc_bw: [u8; 8], tsa: [u8; 8]) -> Vec<u8> {
    let mut info = vec![first];
    for p in prio_tc.chunks(2) {
        info.push((p[0] << 4) | p[1]);
    }
    info.extend_from_slice(&tc_bw);
    info.extend_from_slice(&tsa);
    org_8021(subtype, &info)
}

pub fn pfc_tlv(flags: u8, enable: u8) -> Vec<u8> {
    org_8021(11, &[flags, enable])
}

/// An Application Priority TLV from (priority, selector, protocol) triples.
pub fn app_tlv(entries: &[(u8, u8, u16)]) -> Vec<u8> {
    let mut info = vec![0u8];
    for &(prio, sel, proto) in entries {
        info.push((prio << 5) | sel);
        info.extend_from_slice(&proto.to_be_bytes());
    }
    org_8021(12, &info)
}

/// Chassis ID and Port ID (MAC 02:00:00:00:00:01), TTL 120: 22 bytes.
pub fn mandatory() -> Vec<u8> {
    let mut v = vec![0x02, 0x07, 0x04, 0x02, 0, 0, 0, 0, 0x01];
    v.extend_from_slice(&[0x04, 0x07, 0x03, 0x02, 0, 0, 0, 0, 0x01]);
    v.extend_from_slice(&[0x06, 0x02, 0x00, 0x78]);
    v
}

/// The mandatory TLVs, `tlvs`, End.
pub fn lldpdu(tlvs: &[Vec<u8>]) -> Vec<u8> {
    let mut v = mandatory();
    for t in tlvs {
        v.extend_from_slice(t);
    }
    v.extend_from_slice(&[0, 0]);
    v
}

/// The frame the tshark and decode tests use for DSCP: ETS-CFG (willing,
/// CBS, 4 TCs; ETS 30/70 on TCs 0-1, CBS TC 2, vendor TC 3, strict above),
/// ETS-REC, PFC on 3 (MBC, cap 4) and eight DSCP entries plus one of each
/// other selector.
pub fn dscp_tlvs() -> Vec<Vec<u8>> {
    vec![
        ets_tlv(
            9,
            0xc4,
            [0, 0, 1, 2, 3, 3, 3, 3],
            [30, 70, 0, 0, 0, 0, 0, 0],
            [2, 2, 1, 255, 0, 0, 0, 0],
        ),
        ets_tlv(
            10,
            0,
            [1, 1, 1, 1, 0, 0, 0, 0],
            [50, 50, 0, 0, 0, 0, 0, 0],
            [2, 2, 0, 0, 0, 0, 0, 0],
        ),
        pfc_tlv(0x44, 0x08),
        app_tlv(&[
            (3, 5, 26),
            (3, 5, 24),
            (5, 5, 46),
            (6, 5, 48),
            (0, 5, 0),
            (1, 5, 10),
            (2, 5, 18),
            (7, 5, 56),
            (3, 1, 0x8906),
            (4, 2, 3260),
            (3, 3, 4791),
            (2, 4, 445),
        ]),
    ]
}

// ------------------------------------------------------------ captures

/// Every capture the golden test replays: the lldpad IEEE capture of the
/// CLI's tests, and whatever lies in this crate's `tests/data/`. Adding a
/// pcap or pcapng file there is enough to make it a golden vector.
pub fn capture_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("../lossless/tests/data/lldpad-ieee.pcapng")];
    if let Ok(dir) = std::fs::read_dir(root.join("tests/data")) {
        let mut more: Vec<PathBuf> = dir
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                matches!(
                    p.extension().and_then(|e| e.to_str()),
                    Some("pcap" | "pcapng")
                )
            })
            .collect();
        more.sort();
        files.extend(more);
    }
    files
}

/// The Ethernet frames of a pcap or pcapng file.
pub fn read_capture(path: &Path) -> Vec<Vec<u8>> {
    lossless_testkit::read_frames(path)
}

// ---------------------------------------------------------- strategies

pub fn tsa() -> impl Strategy<Value = Tsa> {
    prop_oneof![
        Just(Tsa::STRICT),
        Just(Tsa::CBS),
        Just(Tsa::ETS),
        Just(Tsa::VENDOR)
    ]
}

/// Eight percentages summing to 100: seven cuts of 0..=100.
pub fn shares() -> impl Strategy<Value = [u8; 8]> {
    vec(0u8..=100, 7).prop_map(|mut cuts| {
        cuts.sort_unstable();
        let mut out = [0u8; 8];
        let mut prev = 0;
        for (i, c) in cuts.iter().chain([&100]).enumerate() {
            out[i] = c - prev;
            prev = *c;
        }
        out
    })
}

/// A valid table: shares summing to 100 with any TSAs, or all 0 with no ETS.
pub fn ets_table() -> impl Strategy<Value = EtsTable> {
    (
        [
            0u8..8,
            0u8..8,
            0u8..8,
            0u8..8,
            0u8..8,
            0u8..8,
            0u8..8,
            0u8..8,
        ],
        [tsa(), tsa(), tsa(), tsa(), tsa(), tsa(), tsa(), tsa()],
        option::of(shares()),
    )
        .prop_map(|(prio_tc, tsa, shares)| match shares {
            Some(tc_bw) => EtsTable {
                prio_tc,
                tc_bw,
                tsa,
            },
            None => EtsTable {
                prio_tc,
                tc_bw: [0; 8],
                tsa: tsa.map(|t| if t == Tsa::ETS { Tsa::STRICT } else { t }),
            },
        })
}

pub fn ets_config() -> impl Strategy<Value = EtsConfig> {
    (any::<bool>(), any::<bool>(), 1u8..=8, ets_table()).prop_map(
        |(willing, cbs, max_tcs, table)| EtsConfig {
            willing,
            cbs,
            max_tcs,
            table,
        },
    )
}

pub fn pfc() -> impl Strategy<Value = PfcConfig> {
    (
        any::<bool>(),
        any::<bool>(),
        0u8..=8,
        any::<u8>(),
        any::<bool>(),
    )
        .prop_map(|(willing, mbc, cap, e, hdrm)| PfcConfig {
            willing,
            mbc,
            cap,
            enabled: PriorityMap(e),
            headroom_measurement: hdrm,
        })
}

pub fn app_entry() -> impl Strategy<Value = AppPriority> {
    (0u8..8, 1u8..=5, any::<u16>()).prop_map(|(priority, sel, protocol)| AppPriority {
        priority,
        selector: Selector(sel),
        protocol: if sel == 5 { protocol % 64 } else { protocol },
    })
}

pub fn app_table(max: usize) -> impl Strategy<Value = AppPriorityTable> {
    vec(app_entry(), 0..=max.min(MAX_APP_ENTRIES))
        .prop_map(|v| AppPriorityTable::try_from(&v[..]).expect("fits"))
}

/// Any valid set of the four TLVs (each present or not).
pub fn ieee(max_app: usize) -> impl Strategy<Value = IeeeDcbx> {
    (
        option::of(ets_config()),
        option::of(ets_table().prop_map(|table| EtsRecommendation { table })),
        option::of(pfc()),
        option::of(app_table(max_app)),
    )
        .prop_map(|(c, r, p, a)| IeeeDcbx::new(c, r, p, a))
}
