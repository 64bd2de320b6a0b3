//! The IEEE 802.1Qaz TLVs we emit, checked by an oracle we did not write:
//! tshark decodes every field of ETS Configuration, ETS Recommendation, PFC
//! Configuration and Application Priority, for configurations covering
//! every TSA, every selector (DSCP included), willing on and off, MaxTCs 8
//! sent as 0. tshark does not check TLV lengths against the standard's, so
//! the lengths are also read from the bytes here. (tshark 4.0 names selector
//! 5 "Reserved": it predates IEEE 802.1Qcd, but decodes the entry's fields.)
//!
//! Needs tshark (CI installs it). Without it the test fails, unless
//! LOSSLESS_SKIP_ORACLES=1 says to skip on purpose.

use std::collections::BTreeMap;

use lossless_testkit::{require, tshark_fields, write_pcap, Oracle};
use lossless_wire::ieee::{
    AppPriority, AppPriorityTable, EtsConfig, EtsRecommendation, EtsTable, IeeeDcbx, PfcConfig,
    PriorityMap, Selector, Tsa,
};
use lossless_wire::{emit_lldp_frame, Lldpdu, MacAddr};

fn app(entries: &[(u8, Selector, u16)]) -> AppPriorityTable {
    let v: Vec<AppPriority> = entries
        .iter()
        .map(|&(priority, selector, protocol)| AppPriority {
            priority,
            selector,
            protocol,
        })
        .collect();
    AppPriorityTable::try_from(&v[..]).expect("fits")
}

/// The configurations sent, one frame each.
fn configurations() -> Vec<IeeeDcbx> {
    let all_tsa = EtsTable {
        prio_tc: [0, 0, 1, 2, 3, 3, 4, 7],
        tc_bw: [30, 70, 0, 0, 0, 0, 0, 0],
        tsa: [
            Tsa::ETS,
            Tsa::ETS,
            Tsa::CBS,
            Tsa::VENDOR,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
        ],
    };
    let dscp = [
        (3, Selector::DSCP, 26),
        (3, Selector::DSCP, 24),
        (5, Selector::DSCP, 46),
        (6, Selector::DSCP, 48),
        (0, Selector::DSCP, 0),
        (1, Selector::DSCP, 10),
        (2, Selector::DSCP, 18),
        (7, Selector::DSCP, 63),
        (3, Selector::ETHERTYPE, 0x8906),
        (4, Selector::TCP, 3260),
        (3, Selector::UDP, 4791),
        (2, Selector::PORT, 445),
    ];
    vec![
        // Willing, CBS, 4 TCs, every TSA kind; a recommendation; PFC with
        // MBC; 8 DSCP entries and one of each other selector.
        IeeeDcbx::new(
            Some(EtsConfig {
                willing: true,
                cbs: true,
                max_tcs: 4,
                table: all_tsa,
            }),
            Some(EtsRecommendation {
                table: EtsTable {
                    prio_tc: [7, 6, 5, 4, 3, 2, 1, 0],
                    tc_bw: [10, 10, 10, 10, 10, 10, 20, 20],
                    tsa: [Tsa::ETS; 8],
                },
            }),
            Some(PfcConfig {
                willing: true,
                mbc: true,
                cap: 4,
                enabled: PriorityMap(0x08),
                // Our reserved bit (adaptive headroom): tshark must read past it.
                headroom_measurement: true,
            }),
            Some(app(&dscp)),
        ),
        // Not willing, 8 TCs (sent as 0), lldpad's all-strict table; PFC on
        // every priority; an empty APP table.
        IeeeDcbx::new(
            Some(EtsConfig {
                willing: false,
                ..EtsConfig::default()
            }),
            None,
            Some(PfcConfig {
                willing: false,
                mbc: false,
                cap: 8,
                enabled: PriorityMap(0xff),
                headroom_measurement: false,
            }),
            Some(AppPriorityTable::new()),
        ),
        // One TC; PFC off everywhere, capability 0; APP alone after it.
        IeeeDcbx::new(
            Some(EtsConfig {
                willing: true,
                cbs: false,
                max_tcs: 1,
                table: EtsTable {
                    prio_tc: [0; 8],
                    tc_bw: [100, 0, 0, 0, 0, 0, 0, 0],
                    tsa: [Tsa::ETS; 8],
                },
            }),
            None,
            Some(PfcConfig {
                willing: true,
                mbc: false,
                cap: 0,
                enabled: PriorityMap::NONE,
                headroom_measurement: false,
            }),
            Some(app(&[
                (7, Selector::DSCP, 46),
                (0, Selector::ETHERTYPE, 0x8915),
            ])),
        ),
    ]
}

fn frame(ieee: &IeeeDcbx) -> Vec<u8> {
    let mac = MacAddr([2, 0, 0, 0, 0, 0x0a]);
    let (chassis, port) = Lldpdu::mac_ids(&mac);
    let mut pdu = Lldpdu::new(chassis, port, 120);
    pdu.ieee_dcbx = ieee.clone();
    let mut out = Vec::new();
    emit_lldp_frame(mac, &pdu, &mut out).expect("emits");
    out
}

/// The TLV length fields, read from the bytes: (type, length) per TLV.
fn tlv_lengths(frame: &[u8]) -> Vec<(u8, usize)> {
    let mut at = 14;
    let mut out = Vec::new();
    loop {
        let word = u16::from_be_bytes([frame[at], frame[at + 1]]);
        let (t, len) = ((word >> 9) as u8, usize::from(word & 0x1ff));
        out.push((t, len));
        if t == 0 {
            return out;
        }
        at += 2 + len;
    }
}

const TABLE_FIELDS: [&str; 3] = [
    "lldp.dcbx.feature.pg.pgid_prio",
    "lldp.dcbx.feature.pg.per",
    "lldp.dcbx.ieee.ets.tsa",
];
const PFC_PRIO: &str = "lldp.dcbx.feature.pfc.prio";

fn fields() -> Vec<String> {
    let mut f: Vec<String> = [
        "lldp.tlv.type",
        "lldp.tlv.len",
        "lldp.orgtlv.oui",
        "lldp.ieee.802_1.subtype",
        "lldp.dcbx.ieee.willing",
        "lldp.dcbx.ieee.ets.cbs",
        "lldp.dcbx.ieee.ets.maxtcs",
        "lldp.dcbx.feature.pg.reserved",
        "lldp.dcbx.ieee.pfc.mbc",
        "lldp.dcbx.ieee.pfc.numtcs",
        "lldp.dcbx.ieee.app.reserved",
        "lldp.dcbx.ieee.app.prio",
        // (sic: Wireshark's name for the APP selector field)
        "lldp.dcbx.iee.app.sf",
        "lldp.dcbx.feature.app.proto",
    ]
    .map(String::from)
    .to_vec();
    for prefix in TABLE_FIELDS.iter().chain([&PFC_PRIO]) {
        for i in 0..8 {
            f.push(format!("{prefix}{i}"));
        }
    }
    f
}

fn b(v: bool) -> String {
    u8::from(v).to_string()
}

fn join<T: ToString>(v: impl IntoIterator<Item = T>) -> String {
    v.into_iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// What tshark must show for a frame carrying `ieee`, field by field.
fn expected(ieee: &IeeeDcbx, frame: &[u8]) -> BTreeMap<String, String> {
    let mut e = BTreeMap::new();
    let mut put = |k: &str, v: String| {
        e.insert(k.to_string(), v);
    };
    let lengths = tlv_lengths(frame);
    put("lldp.tlv.type", join(lengths.iter().map(|l| l.0)));
    put("lldp.tlv.len", join(lengths.iter().map(|l| l.1)));
    let cfg = ieee.ets_config.clone().map(|r| r.expect("valid"));
    let rec = ieee.ets_recommendation.clone().map(|r| r.expect("valid"));
    let pfc = ieee.pfc.clone().map(|r| r.expect("valid"));
    let app = ieee.app.clone().map(|r| r.expect("valid"));
    let mut subtypes = Vec::new();
    cfg.is_some().then(|| subtypes.push("0x09"));
    rec.is_some().then(|| subtypes.push("0x0a"));
    pfc.is_some().then(|| subtypes.push("0x0b"));
    app.is_some().then(|| subtypes.push("0x0c"));
    // 00-80-C2 as tshark prints a 24-bit field: decimal.
    put("lldp.orgtlv.oui", join(subtypes.iter().map(|_| 0x0080c2)));
    put("lldp.ieee.802_1.subtype", join(&subtypes));
    let mut willing = Vec::new();
    if let Some(c) = &cfg {
        willing.push(b(c.willing));
        put("lldp.dcbx.ieee.ets.cbs", b(c.cbs));
        // Sent as 3 bits: 8 is 0, and tshark shows the raw field.
        put("lldp.dcbx.ieee.ets.maxtcs", (c.max_tcs % 8).to_string());
    }
    if rec.is_some() {
        put("lldp.dcbx.feature.pg.reserved", "0x00".into());
    }
    if let Some(p) = &pfc {
        willing.push(b(p.willing));
        put("lldp.dcbx.ieee.pfc.mbc", b(p.mbc));
        put("lldp.dcbx.ieee.pfc.numtcs", p.cap.to_string());
        for i in 0..8u8 {
            put(&format!("{PFC_PRIO}{i}"), b(p.enabled.contains(i)));
        }
    }
    put("lldp.dcbx.ieee.willing", join(willing));
    let tables: Vec<EtsTable> = cfg
        .iter()
        .map(|c| c.table)
        .chain(rec.map(|r| r.table))
        .collect();
    for i in 0..8 {
        put(
            &format!("{}{i}", TABLE_FIELDS[0]),
            join(tables.iter().map(|t| t.prio_tc[i])),
        );
        put(
            &format!("{}{i}", TABLE_FIELDS[1]),
            join(tables.iter().map(|t| t.tc_bw[i])),
        );
        put(
            &format!("{}{i}", TABLE_FIELDS[2]),
            join(tables.iter().map(|t| t.tsa[i].0)),
        );
    }
    if let Some(a) = &app {
        put("lldp.dcbx.ieee.app.reserved", "0x00".into());
        put(
            "lldp.dcbx.ieee.app.prio",
            join(a.iter().map(|e| e.priority)),
        );
        put("lldp.dcbx.iee.app.sf", join(a.iter().map(|e| e.selector.0)));
        put(
            "lldp.dcbx.feature.app.proto",
            join(a.iter().map(|e| format!("{:#06x}", e.protocol))),
        );
    }
    e
}

/// tshark 4.0 prints booleans as 1/0, later versions as True/False.
fn normalize(v: &str) -> String {
    v.split(',')
        .map(|x| match x {
            "True" => "1",
            "False" => "0",
            other => other,
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn tshark_decodes_every_ieee_field_as_sent() {
    if !require("tshark_decodes_every_ieee_field_as_sent", &[Oracle::Tshark]) {
        return;
    }
    let configs = configurations();
    let frames: Vec<Vec<u8>> = configs.iter().map(frame).collect();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("ieee-tshark.pcap");
    write_pcap(&path, &frames);
    let fields = fields();
    let names: Vec<&str> = fields.iter().map(String::as_str).collect();
    let decoded = tshark_fields(&path, &[], &names);
    let rows = &decoded.rows;
    assert_eq!(
        rows.len(),
        frames.len(),
        "tshark saw every frame:\n{rows:?}"
    );

    for (n, ((ieee, frame), row)) in configs.iter().zip(&frames).zip(rows).enumerate() {
        let want = expected(ieee, frame);
        for (i, f) in fields.iter().enumerate() {
            let got = normalize(row.get(i).map_or("", String::as_str));
            let exp = want.get(f).cloned().unwrap_or_default();
            assert_eq!(got, exp, "frame {}: field {f}", n + 1);
        }
    }

    // The lengths, from the bytes: the standard's, whatever tshark accepts.
    for (frame, ieee) in frames.iter().zip(&configs) {
        let org: Vec<usize> = tlv_lengths(frame)
            .into_iter()
            .filter(|(t, _)| *t == 127)
            .map(|(_, len)| len)
            .collect();
        let mut want = Vec::new();
        if ieee.ets_config.is_some() {
            want.push(25);
        }
        if ieee.ets_recommendation.is_some() {
            want.push(25);
        }
        if ieee.pfc.is_some() {
            want.push(6);
        }
        if let Some(Ok(a)) = &ieee.app {
            want.push(5 + 3 * a.len());
        }
        assert_eq!(org, want);
    }
    // The first frame carries 12 APP entries, 8 of them DSCP: 5 + 36.
    assert!(tlv_lengths(&frames[0]).contains(&(127, 41)));
}
