//! The IEEE 802.1Qaz encoders and decoders, field by field. Byte-exact
//! comparison with messages built from the kernel's own structs is in
//! `tests/dcbnl_oracle.rs`.

use super::app::{DCB_ATTR_DCB_APP, DCB_ATTR_DCB_APP_TRUST_TABLE, DCB_ATTR_IEEE_APP_TABLE};
use super::ieee::{
    DCB_ATTR_IEEE_ETS, DCB_ATTR_IEEE_MAXRATE, DCB_ATTR_IEEE_PEER_ETS, DCB_ATTR_IEEE_PEER_PFC,
    IEEE_ETS_LEN,
};
use super::*;
use crate::netlink::MsgBuilder;

fn u16at(b: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes([b[at], b[at + 1]])
}

fn attr(b: &[u8], at: usize) -> (u16, u16) {
    (u16at(b, at), u16at(b, at + 2))
}

/// TCs 0-2 ETS 20/30/50, TC 3 strict; priorities 0-1 -> TC 0, 2-3 -> TC 1,
/// 4-6 -> TC 2, 7 -> TC 3; the recommendation the same.
pub(super) const ETS: IeeeEts = IeeeEts {
    willing: true,
    ets_cap: 8,
    cbs: false,
    tc_tx_bw: [20, 30, 50, 0, 0, 0, 0, 0],
    tc_rx_bw: [0; 8],
    tc_tsa: [
        Tsa::ETS,
        Tsa::ETS,
        Tsa::ETS,
        Tsa::STRICT,
        Tsa::STRICT,
        Tsa::STRICT,
        Tsa::STRICT,
        Tsa::STRICT,
    ],
    prio_tc: [0, 0, 1, 1, 2, 2, 2, 3],
    tc_reco_bw: [20, 30, 50, 0, 0, 0, 0, 0],
    tc_reco_tsa: [
        Tsa::ETS,
        Tsa::ETS,
        Tsa::ETS,
        Tsa::STRICT,
        Tsa::STRICT,
        Tsa::STRICT,
        Tsa::STRICT,
        Tsa::STRICT,
    ],
    reco_prio_tc: [0, 0, 1, 1, 2, 2, 2, 3],
};

pub(super) const ROCE: DcbApp = DcbApp {
    selector: AppSelector::DGRAM,
    priority: 3,
    protocol: 4791,
};
pub(super) const DSCP26: DcbApp = DcbApp {
    selector: AppSelector::DSCP,
    priority: 3,
    protocol: 26,
};
pub(super) const PCP3: DcbApp = DcbApp {
    selector: AppSelector::PCP,
    priority: 3,
    protocol: 3,
};

#[test]
fn ets_request_layout() {
    let r = encode_set_ieee_ets(1, "va", &ETS).unwrap();
    assert_eq!((u16at(&r, 4), r[17]), (RTM_SETDCB, 20));
    // nlmsghdr 16 + dcbmsg 4 + IFNAME 8 + IEEE nest 4 + ETS 4 + 59 (pad 1).
    assert_eq!(r.len(), 16 + 4 + 8 + 4 + 4 + 60);
    assert_eq!(attr(&r, 28), (4 + 4 + 60, DCB_ATTR_IEEE));
    assert_eq!(attr(&r, 32), (4 + IEEE_ETS_LEN as u16, DCB_ATTR_IEEE_ETS));
    let e = &r[36..36 + IEEE_ETS_LEN];
    assert_eq!(&e[..3], &[1, 8, 0]);
    assert_eq!(&e[3..11], &ETS.tc_tx_bw);
    assert_eq!(&e[19..27], &[2, 2, 2, 0, 0, 0, 0, 0]);
    assert_eq!(&e[27..35], &ETS.prio_tc);
    assert_eq!(&e[51..59], &ETS.reco_prio_tc);
    assert_eq!(r[36 + IEEE_ETS_LEN], 0, "padding");
}

#[test]
fn ets_is_checked_before_sending() {
    let refuse = |f: &dyn Fn(&mut IeeeEts), why: &str| {
        let mut e = ETS;
        f(&mut e);
        let err = encode_set_ieee_ets(1, "va", &e).unwrap_err();
        assert_eq!(err.kind(), DcbErrorKind::InvalidRequest);
        assert!(err.to_string().contains(why), "{err}");
    };
    refuse(&|e| e.prio_tc[5] = 8, "prio_tc[5] = 8: TCs are 0..=7");
    refuse(&|e| e.reco_prio_tc[0] = 9, "reco_prio_tc[0] = 9");
    refuse(&|e| e.tc_tx_bw[0] = 101, "tc_tx_bw[0] = 101% is above 100");
    refuse(
        &|e| e.tc_tx_bw[0] = 10,
        "tc_tx_bw: the TCs with the ETS algorithm ([0, 1, 2]) have 90%, not 100%",
    );
    refuse(
        &|e| e.tc_reco_bw[2] = 60,
        "tc_reco_bw: the TCs with the ETS algorithm ([0, 1, 2]) have 110%",
    );
    // All strict: no sum to check. An empty recommendation is fine.
    let mut e = ETS;
    e.tc_tsa = [Tsa::STRICT; 8];
    e.tc_tx_bw = [0; 8];
    e.tc_reco_bw = [0; 8];
    e.tc_reco_tsa = [Tsa::STRICT; 8];
    assert!(encode_set_ieee_ets(1, "va", &e).is_ok());
}

#[test]
fn app_entries_travel_by_selector_type() {
    let r = encode_set_ieee_apps(2, "va", &[ROCE, DSCP26, PCP3]).unwrap();
    assert_eq!((u16at(&r, 4), r[17]), (RTM_SETDCB, 20));
    // IEEE nest 4 + APP_TABLE 4 + 3 x (4 + 4).
    assert_eq!(attr(&r, 28), (4 + 4 + 24, DCB_ATTR_IEEE));
    assert_eq!(attr(&r, 32), (4 + 24, DCB_ATTR_IEEE_APP_TABLE));
    assert_eq!(attr(&r, 36), (8, 1));
    assert_eq!(&r[40..42], &[3, 3]);
    assert_eq!(u16at(&r, 42), 4791);
    assert_eq!(attr(&r, 44), (8, 1));
    assert_eq!((r[48], r[49], u16at(&r, 50)), (5, 3, 26));
    // PCP is not an IEEE selector: DCB_ATTR_DCB_APP.
    assert_eq!(attr(&r, 52), (8, DCB_ATTR_DCB_APP));
    assert_eq!((r[56], r[57], u16at(&r, 58)), (255, 3, 3));
    assert_eq!(r.len(), 60);

    let d = encode_del_ieee_apps(3, "va", &[DSCP26]).unwrap();
    assert_eq!((u16at(&d, 4), d[17]), (RTM_SETDCB, 27));
    assert_eq!(attr(&d, 28), (16, DCB_ATTR_IEEE));
    assert_eq!(attr(&d, 32), (12, DCB_ATTR_IEEE_APP_TABLE));
    assert_eq!(&d[36..44], &r[44..52]);
    assert_eq!(d.len(), 44);
}

#[test]
fn app_entries_are_checked_before_sending() {
    let bad = [
        (
            DcbApp {
                selector: AppSelector(0),
                ..ROCE
            },
            "selector 0 is neither",
        ),
        (
            DcbApp {
                selector: AppSelector(6),
                ..ROCE
            },
            "selector 6 is neither",
        ),
        (
            DcbApp {
                priority: 8,
                ..ROCE
            },
            "priority is 0..=7",
        ),
        (
            DcbApp {
                protocol: 64,
                ..DSCP26
            },
            "dscp is 0..=63",
        ),
        (
            DcbApp {
                protocol: 16,
                ..PCP3
            },
            "pcp is 0..=15",
        ),
    ];
    for (app, why) in bad {
        for e in [
            encode_set_ieee_apps(1, "va", &[ROCE, app]).unwrap_err(),
            encode_del_ieee_apps(1, "va", &[app]).unwrap_err(),
        ] {
            assert_eq!(e.kind(), DcbErrorKind::InvalidRequest);
            assert!(e.to_string().contains(why), "{e}");
        }
    }
    // Never an empty (blanket) delete, nor an empty add.
    assert!(encode_del_ieee_apps(1, "va", &[]).is_err());
    assert!(encode_set_ieee_apps(1, "va", &[]).is_err());
    assert!(encode_set_ieee(1, "va", &IeeeSet::default()).is_err());
    assert_eq!(DSCP26.to_string(), "dscp 26 -> priority 3");
}

#[test]
fn trust_order_layout_and_checks() {
    let r = encode_set_app_trust(4, "va", &[AppSelector::DSCP, AppSelector::PCP]).unwrap();
    assert_eq!(attr(&r, 28), (4 + 4 + 16, DCB_ATTR_IEEE));
    assert_eq!(attr(&r, 32), (4 + 16, DCB_ATTR_DCB_APP_TRUST_TABLE));
    assert_eq!((attr(&r, 36), r[40]), ((5, 1), 5));
    assert_eq!((attr(&r, 44), r[48]), ((5, DCB_ATTR_DCB_APP), 255));
    assert_eq!(r.len(), 52);
    // An empty order is a request too: trust nothing.
    let r = encode_set_app_trust(4, "va", &[]).unwrap();
    assert_eq!(attr(&r, 32), (4, DCB_ATTR_DCB_APP_TRUST_TABLE));
    let e = encode_set_app_trust(4, "va", &[AppSelector::DSCP, AppSelector::DSCP]).unwrap_err();
    assert!(e.to_string().contains("dscp twice"), "{e}");
    let e = encode_set_app_trust(4, "va", &[AppSelector(7)]).unwrap_err();
    assert!(e.to_string().contains("selector 7"), "{e}");
}

#[test]
fn dcbx_mode_requests_and_checks() {
    let m = DcbxMode::HOST | DcbxMode::VER_IEEE;
    assert_eq!(m, DcbxMode(0x09));
    assert_eq!(m.to_string(), "HOST|VER_IEEE");
    assert_eq!(DcbxMode(0x26).to_string(), "LLD_MANAGED|VER_CEE|0x20");
    assert_eq!(DcbxMode(0).to_string(), "none");
    let r = encode_set_dcbx(5, "va", m).unwrap();
    assert_eq!((u16at(&r, 4), r[17]), (RTM_SETDCB, 23));
    assert_eq!((attr(&r, 28), r[32]), ((5, 14), 0x09));
    assert_eq!(r.len(), 36);
    let r = encode_get_dcbx(5, "va").unwrap();
    assert_eq!((u16at(&r, 4), r[17], r.len()), (RTM_GETDCB, 22, 28));
    for bad in [DcbxMode(0x20), DcbxMode::HOST | DcbxMode::LLD_MANAGED] {
        let e = encode_set_dcbx(5, "va", bad).unwrap_err();
        assert_eq!(e.kind(), DcbErrorKind::InvalidRequest, "{e}");
    }
}

/// A reply as net/dcb/dcbnl.c builds it.
fn reply(cmd: DcbCmd, seq: u32, body: impl FnOnce(&mut MsgBuilder)) -> Vec<u8> {
    let mut b = MsgBuilder::new(cmd.msg_type(), 0, seq);
    b.header(&[AF_UNSPEC, cmd.code(), 0, 0]);
    body(&mut b);
    b.finish()
}

fn pfc_struct(enabled: u8, delay: u16, requests: u64) -> [u8; IEEE_PFC_LEN] {
    let mut p = [0u8; IEEE_PFC_LEN];
    p[0] = 8;
    p[1] = enabled;
    p[IEEE_PFC_DELAY..IEEE_PFC_DELAY + 2].copy_from_slice(&delay.to_ne_bytes());
    for i in 0..8 {
        let at = IEEE_PFC_REQUESTS + 8 * i;
        p[at..at + 8].copy_from_slice(&(requests + i as u64).to_ne_bytes());
        let at = IEEE_PFC_INDICATIONS + 8 * i;
        p[at..at + 8].copy_from_slice(&(2 * requests + i as u64).to_ne_bytes());
    }
    p
}

#[test]
fn a_full_ieee_get_reply_decodes() {
    let mut peer = ETS;
    peer.willing = false;
    let r = reply(DcbCmd::IeeeGet, 9, |b| {
        b.attr(DCB_ATTR_IFNAME, b"va\0");
        let n = b.nest_start(DCB_ATTR_IEEE);
        b.attr(DCB_ATTR_IEEE_ETS, &ETS.to_bytes());
        let mut rate = Vec::new();
        for t in 0..8u64 {
            rate.extend_from_slice(&(t * 1_000_000_000).to_ne_bytes());
        }
        b.attr(DCB_ATTR_IEEE_MAXRATE, &rate);
        b.attr(8, &[0u8; 100]); // QCN: skipped
        b.attr(DCB_ATTR_IEEE_PFC, &pfc_struct(0x08, 2000, 100));
        let t = b.nest_start(DCB_ATTR_IEEE_APP_TABLE);
        for app in [ROCE, DSCP26] {
            b.attr(1, &app.to_bytes());
        }
        b.attr(DCB_ATTR_DCB_APP, &PCP3.to_bytes());
        b.nest_end(t);
        let t = b.nest_start(12); // the rewrite table: skipped
        b.attr(DCB_ATTR_DCB_APP, &PCP3.to_bytes());
        b.nest_end(t);
        let t = b.nest_start(DCB_ATTR_DCB_APP_TRUST_TABLE);
        b.attr_u8(1, 5);
        b.attr_u8(DCB_ATTR_DCB_APP, 255);
        b.nest_end(t);
        b.attr(DCB_ATTR_IEEE_PEER_ETS, &peer.to_bytes());
        b.attr(DCB_ATTR_IEEE_PEER_PFC, &pfc_struct(0x18, 0, 7));
        let t = b.nest_start(6);
        b.attr(1, &ROCE.to_bytes());
        b.nest_end(t);
        b.nest_end(n);
        b.attr_u8(14, 0x09);
    });
    let st = decode_ieee_state(&r, 9, "va").unwrap().unwrap();
    assert_eq!(st.ets, Some(ETS));
    assert_eq!(st.maxrate.unwrap().tc_maxrate[3], 3_000_000_000);
    let pfc = st.pfc.unwrap();
    assert_eq!((pfc.cap, pfc.enabled, pfc.delay), (8, 0x08, 2000));
    assert_eq!(pfc.requests, std::array::from_fn(|i| 100 + i as u64));
    assert_eq!(pfc.indications, std::array::from_fn(|i| 200 + i as u64));
    assert_eq!(st.apps, vec![ROCE, DSCP26, PCP3]);
    assert_eq!(st.trust, Some(vec![AppSelector::DSCP, AppSelector::PCP]));
    assert_eq!(st.peer_ets, Some(peer));
    assert_eq!(st.peer_pfc.unwrap().enabled, 0x18);
    assert_eq!(st.peer_apps, Some(vec![ROCE]));
    assert_eq!(st.dcbx, Some(DcbxMode::HOST | DcbxMode::VER_IEEE));
    assert_eq!(st.buffer, None);
    assert_eq!(
        decode_ieee_reply(&r, 9, "va").unwrap().unwrap(),
        st.config()
    );

    // Every cut is refused cleanly.
    for cut in 1..r.len() {
        let e = decode_ieee_state(&r[..cut], 9, "va").unwrap_err();
        assert_eq!(e.kind(), DcbErrorKind::Malformed, "cut {cut}: {e}");
    }
}

#[test]
fn malformed_ieee_objects_are_refused() {
    let bad = |body: &dyn Fn(&mut MsgBuilder), what: &str, why: &str| {
        let r = reply(DcbCmd::IeeeGet, 1, |b| {
            let n = b.nest_start(DCB_ATTR_IEEE);
            body(b);
            b.nest_end(n);
        });
        match decode_ieee_state(&r, 1, "va") {
            Err(DcbError::Reply { source, .. }) => {
                assert_eq!((source.what, source.why.as_str()), (what, why))
            }
            other => panic!("{other:?}"),
        }
    };
    bad(
        &|b| b.attr(DCB_ATTR_IEEE_ETS, &[0u8; 58]),
        "DCB_ATTR_IEEE_ETS",
        "payload of 58 bytes, the struct needs 59",
    );
    bad(
        &|b| b.attr(DCB_ATTR_IEEE_MAXRATE, &[0u8; 63]),
        "DCB_ATTR_IEEE_MAXRATE",
        "payload of 63 bytes, the struct needs 64",
    );
    bad(
        &|b| {
            let t = b.nest_start(DCB_ATTR_IEEE_APP_TABLE);
            b.attr(1, &[5, 3, 26]);
            b.nest_end(t);
        },
        "DCB_ATTR_IEEE_APP_TABLE",
        "APP entry of 3 bytes, struct dcb_app needs 4",
    );
    bad(
        &|b| {
            let t = b.nest_start(DCB_ATTR_DCB_APP_TRUST_TABLE);
            b.attr(1, &[5, 0]);
            b.nest_end(t);
        },
        "DCB_ATTR_DCB_APP_TRUST_TABLE",
        "payload of 2 bytes, expected 1",
    );
    bad(
        &|b| {
            for _ in 0..2 {
                let t = b.nest_start(DCB_ATTR_IEEE_APP_TABLE);
                b.nest_end(t);
            }
        },
        "DCB_ATTR_IEEE",
        "duplicate attribute",
    );
    // Unknown attributes in the nest and in the tables are skipped.
    let r = reply(DcbCmd::IeeeGet, 1, |b| {
        let n = b.nest_start(DCB_ATTR_IEEE);
        b.attr(31, &[1, 2, 3]);
        let t = b.nest_start(DCB_ATTR_IEEE_APP_TABLE);
        b.attr(0, &[9]);
        b.nest_end(t);
        b.nest_end(n);
    });
    assert_eq!(
        decode_ieee_state(&r, 1, "va").unwrap().unwrap(),
        IeeeState::default()
    );
}

#[test]
fn dcbx_and_del_replies_decode() {
    let r = reply(DcbCmd::GetDcbx, 3, |b| b.attr_u8(14, 0x0a));
    assert_eq!(
        decode_u8_reply(&r, 3, DcbCmd::GetDcbx, "va").unwrap(),
        Some(0x0a)
    );
    let r = reply(DcbCmd::SetDcbx, 3, |b| b.attr_u8(14, 1));
    assert_eq!(
        decode_u8_reply(&r, 3, DcbCmd::SetDcbx, "va").unwrap(),
        Some(1)
    );
    let r = reply(DcbCmd::IeeeDel, 3, |b| {
        b.attr_u8(DCB_ATTR_IEEE, (-libc::ENOENT) as u8)
    });
    assert_eq!(
        decode_u8_reply(&r, 3, DcbCmd::IeeeDel, "va").unwrap(),
        Some(254)
    );
    // A GDCBX answer is not an SDCBX answer.
    let r = reply(DcbCmd::GetDcbx, 3, |b| b.attr_u8(14, 0x0a));
    assert_eq!(
        decode_u8_reply(&r, 3, DcbCmd::SetDcbx, "va")
            .unwrap_err()
            .kind(),
        DcbErrorKind::Malformed
    );
    assert_eq!(DcbCmd::IeeeDel.msg_type(), RTM_SETDCB);
    assert_eq!(DcbCmd::GetDcbx.msg_type(), RTM_GETDCB);
}
