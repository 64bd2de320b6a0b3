use std::io;

use super::*;
use crate::netlink::{self, MsgBuilder, NLMSG_ERROR};

fn u16at(b: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes([b[at], b[at + 1]])
}

fn u32at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// `(nla_len, nla_type)` at `at`.
fn attr(b: &[u8], at: usize) -> (u16, u16) {
    (u16at(b, at), u16at(b, at + 2))
}

const DEMO: PgSetting = PgSetting {
    pgid: [0, 0, 0, 0, 1, 1, 1, 15],
    percent: [25, 75, 0, 0, 0, 0, 0, 0],
};

#[test]
fn ieee_pfc_request_layout() {
    let r = encode_set_ieee_pfc(7, "va", 0b0001_1000, 0x1234).unwrap();
    // nlmsghdr 16 + dcbmsg 4 + IFNAME 8 + IEEE nest 4 + PFC attr 4 + 136.
    assert_eq!(r.len(), 16 + 4 + 8 + 4 + 4 + IEEE_PFC_LEN);
    assert_eq!(u16at(&r, 4), RTM_SETDCB);
    assert_eq!(r[17], DcbCmd::IeeeSet.code(), "dcbmsg.cmd");
    assert_eq!(attr(&r, 28), ((4 + 4 + IEEE_PFC_LEN) as u16, DCB_ATTR_IEEE));
    assert_eq!(attr(&r, 32), ((4 + IEEE_PFC_LEN) as u16, DCB_ATTR_IEEE_PFC));
    let pfc = &r[36..];
    assert_eq!((pfc[0], pfc[1], pfc[2]), (8, 0b0001_1000, 0));
    assert_eq!(u16at(pfc, 4), 0x1234);
    assert!(pfc[6..].iter().all(|&b| b == 0));
}

#[test]
fn get_state_request_layout() {
    let r = encode_get_state(0x01020304, "va").unwrap();
    // nlmsghdr 16 + dcbmsg 4 + IFNAME (4 + "va\0", padded to 8).
    assert_eq!(r.len(), 28);
    assert_eq!(u32at(&r, 0), 28);
    assert_eq!(u16at(&r, 4), RTM_GETDCB);
    assert_eq!(u16at(&r, 6), netlink::NLM_F_REQUEST);
    assert_eq!(u32at(&r, 8), 0x01020304);
    assert_eq!(u32at(&r, 12), 0);
    assert_eq!(&r[16..20], &[AF_UNSPEC, 1, 0, 0]);
    assert_eq!(attr(&r, 20), (7, DCB_ATTR_IFNAME));
    assert_eq!(&r[24..28], b"va\0\0");
}

#[test]
fn set_requests_carry_their_value() {
    let r = encode_set_state(1, "eth0", true).unwrap();
    assert_eq!(u16at(&r, 4), RTM_SETDCB);
    assert_eq!(r[17], 2);
    // IFNAME "eth0\0" = 9 -> 12; then STATE.
    assert_eq!(attr(&r, 32), (5, DCB_ATTR_STATE));
    assert_eq!(r[36], 1);
    assert_eq!(r.len(), 40);

    let r = encode_set_pfc_state(1, "eth0", false).unwrap();
    assert_eq!(
        (r[17], attr(&r, 32), r[36]),
        (15, (5, DCB_ATTR_PFC_STATE), 0)
    );

    let r = encode_set_all(1, "eth0").unwrap();
    assert_eq!((r[17], attr(&r, 32), r[36]), (9, (5, DCB_ATTR_SET_ALL), 1));
}

#[test]
fn set_pfc_request_layout() {
    let r = encode_set_pfc(
        1,
        "va",
        [false, false, false, true, true, false, false, false],
    )
    .unwrap();
    assert_eq!(r[17], 8);
    // PFC_CFG nest: 4 + 8 x (5 -> 8) = 68.
    assert_eq!(attr(&r, 28), (68, DCB_ATTR_PFC_CFG));
    for i in 0..8 {
        let at = 32 + 8 * i;
        assert_eq!(attr(&r, at), (5, DCB_PFC_UP_ATTR_0 + i as u16));
        assert_eq!(r[at + 4], u8::from(i == 3 || i == 4));
    }
    assert_eq!(r.len(), 96);
    assert_eq!(u32at(&r, 0), 96);
}

#[test]
fn get_requests_ask_for_everything() {
    let r = encode_get_pfc(1, "va").unwrap();
    assert_eq!((u16at(&r, 4), r[17]), (RTM_GETDCB, 7));
    assert_eq!(attr(&r, 28), (8, DCB_ATTR_PFC_CFG));
    assert_eq!(attr(&r, 32), (4, DCB_PFC_UP_ATTR_ALL));
    assert_eq!(r.len(), 36);

    let r = encode_get_pg(1, "va", PgDir::Rx).unwrap();
    assert_eq!((u16at(&r, 4), r[17]), (RTM_GETDCB, 5));
    assert_eq!(attr(&r, 28), (16, DCB_ATTR_PG_CFG));
    assert_eq!(attr(&r, 32), (8, DCB_PG_ATTR_TC_ALL));
    assert_eq!(attr(&r, 36), (4, DCB_TC_ATTR_PARAM_ALL));
    assert_eq!(attr(&r, 40), (4, DCB_PG_ATTR_BW_ID_ALL));
    assert_eq!(r.len(), 44);
    assert_eq!(encode_get_pg(1, "va", PgDir::Tx).unwrap()[17], 3);

    assert_eq!(encode_get_pfc_state(1, "va").unwrap()[17], 14);
}

#[test]
fn set_pg_request_layout_is_lldpads() {
    let cfg = PgConfig::from_cee(&DEMO).unwrap();
    let r = encode_set_pg(1, "va", PgDir::Tx, &cfg).unwrap();
    assert_eq!((u16at(&r, 4), r[17]), (RTM_SETDCB, 4));
    // PG_CFG: 4 + 8 TCs x (4 + 4 params x 8) + 8 BW ids x 8 = 356.
    assert_eq!(attr(&r, 28), (356, DCB_ATTR_PG_CFG));
    let up_map = [0x0f, 0x70, 0x80, 0, 0, 0, 0, 0];
    for (t, &map) in up_map.iter().enumerate() {
        let at = 32 + 36 * t;
        assert_eq!(attr(&r, at), (36, DCB_PG_ATTR_TC_0 + t as u16));
        let want = [
            t as u8,
            map,
            if t == 2 { STRICT_LINK } else { 0 },
            if t < 2 { 100 } else { 0 },
        ];
        for (k, v) in want.iter().enumerate() {
            let p = at + 4 + 8 * k;
            assert_eq!(
                attr(&r, p),
                (5, DCB_TC_ATTR_PARAM_PGID + k as u16),
                "tc {t} param {k}"
            );
            assert_eq!(r[p + 4], *v, "tc {t} param {k}");
        }
    }
    for i in 0..8usize {
        let at = 32 + 36 * 8 + 8 * i;
        assert_eq!(attr(&r, at), (5, DCB_PG_ATTR_BW_ID_0 + i as u16));
        assert_eq!(r[at + 4], DEMO.percent[i]);
    }
    assert_eq!(r.len(), 28 + 356);
    assert_eq!(encode_set_pg(1, "va", PgDir::Rx, &cfg).unwrap()[17], 6);
}

#[test]
fn bad_names_are_refused_before_sending() {
    for name in ["", "sixteen-chars-xx", "a\0b"] {
        assert!(matches!(
            encode_get_state(1, name),
            Err(DcbError::Invalid(_))
        ));
    }
    assert!(encode_get_state(1, "fifteen-chars-x").is_ok());
}

#[test]
fn cee_mapping_is_lldpads() {
    let cfg = PgConfig::from_cee(&DEMO).unwrap();
    let tc = |pgid, up_map, strict_prio, bw_pct| TcConfig {
        pgid,
        up_map,
        strict_prio,
        bw_pct,
    };
    assert_eq!(
        cfg.tc,
        [
            tc(0, 0x0f, 0, 100),
            tc(1, 0x70, 0, 100),
            tc(2, 0x80, STRICT_LINK, 0),
            tc(3, 0, 0, 0),
            tc(4, 0, 0, 0),
            tc(5, 0, 0, 0),
            tc(6, 0, 0, 0),
            tc(7, 0, 0, 0),
        ]
    );
    assert_eq!(cfg.pg_bw, DEMO.percent);
    assert_eq!(cfg.to_cee(), DEMO);

    // Strict priorities go to the first PG no priority uses.
    let s = PgSetting {
        pgid: [15, 0, 1, 2, 4, 5, 6, 15],
        percent: [10, 10, 10, 0, 10, 10, 50, 0],
    };
    let cfg = PgConfig::from_cee(&s).unwrap();
    assert_eq!(cfg.tc[3], tc(3, 0x81, STRICT_LINK, 0));
    assert_eq!(cfg.to_cee(), s);

    // Everything strict.
    let s = PgSetting {
        pgid: [15; 8],
        percent: [0; 8],
    };
    let cfg = PgConfig::from_cee(&s).unwrap();
    assert_eq!(cfg.tc[0], tc(0, 0xff, STRICT_LINK, 0));
    assert_eq!(cfg.to_cee(), s);
}

#[test]
fn cee_round_trips_for_many_settings() {
    // A small LCG: deterministic, no dependency.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) as u8
    };
    for _ in 0..10_000 {
        let mut s = PgSetting::default();
        for p in 0..8 {
            let v = next() % 9;
            s.pgid[p] = if v == 8 { 15 } else { v };
            s.percent[p] = next() % 101;
        }
        let cfg = PgConfig::from_cee(&s).unwrap();
        assert_eq!(cfg.to_cee(), s, "{cfg:?}");
        // Each priority is in exactly one TC.
        let mut all = 0u8;
        for tc in cfg.tc {
            assert_eq!(all & tc.up_map, 0);
            all |= tc.up_map;
        }
        assert_eq!(all, 0xff);
    }
}

#[test]
fn invalid_cee_settings_are_refused() {
    let mut s = DEMO;
    s.pgid[2] = 8;
    assert!(matches!(PgConfig::from_cee(&s), Err(DcbError::Invalid(m)) if m.contains("PGID 8")));
    let mut s = DEMO;
    s.percent[1] = 101;
    assert!(matches!(PgConfig::from_cee(&s), Err(DcbError::Invalid(m)) if m.contains("101")));
}

/// A reply as net/dcb/dcbnl.c builds it.
fn reply(cmd: DcbCmd, seq: u32, body: impl FnOnce(&mut MsgBuilder)) -> Vec<u8> {
    let mut b = MsgBuilder::new(cmd.msg_type(), 0, seq);
    b.header(&[AF_UNSPEC, cmd.code(), 0, 0]);
    body(&mut b);
    b.finish()
}

fn error(seq: u32, errno: i32) -> Vec<u8> {
    let mut b = MsgBuilder::new(NLMSG_ERROR, 0, seq);
    let mut p = (-errno).to_ne_bytes().to_vec();
    p.extend_from_slice(&encode_get_state(seq, "va").unwrap());
    b.header(&p);
    b.finish()
}

#[test]
fn decoding_u8_replies_and_errors() {
    let r = reply(DcbCmd::GetState, 5, |b| b.attr_u8(DCB_ATTR_STATE, 1));
    assert_eq!(
        decode_u8_reply(&r, 5, DcbCmd::GetState, "va").unwrap(),
        Some(1)
    );
    assert_eq!(
        decode_u8_reply(&r, 6, DcbCmd::GetState, "va").unwrap(),
        None
    );
    // A stale reply first, then ours, in one datagram.
    let mut two = reply(DcbCmd::GetState, 4, |b| b.attr_u8(DCB_ATTR_STATE, 0));
    two.extend_from_slice(&r);
    assert_eq!(
        decode_u8_reply(&two, 5, DcbCmd::GetState, "va").unwrap(),
        Some(1)
    );

    assert!(matches!(
        decode_u8_reply(&error(5, libc::EOPNOTSUPP), 5, DcbCmd::GetState, "va"),
        Err(DcbError::Unsupported { .. })
    ));
    assert!(matches!(
        decode_u8_reply(&error(5, libc::ENODEV), 5, DcbCmd::GetState, "va"),
        Err(DcbError::NoDevice { .. })
    ));
    assert!(matches!(
        decode_u8_reply(&error(5, libc::EPERM), 5, DcbCmd::SetState, "va"),
        Err(DcbError::Kernel {
            cmd: DcbCmd::SetState,
            errno: libc::EPERM,
            ..
        })
    ));
    // An ACK is not the answer.
    assert_eq!(
        decode_u8_reply(&error(5, 0), 5, DcbCmd::GetState, "va").unwrap(),
        None
    );
    // Missing attribute, wrong size, wrong command.
    let e = decode_u8_reply(
        &reply(DcbCmd::GetState, 5, |_| {}),
        5,
        DcbCmd::GetState,
        "va",
    )
    .unwrap_err();
    assert!(
        matches!(e, DcbError::Reply { source: ref n, .. } if n.what == "DCB_ATTR_STATE" && n.offset == 20),
        "{e}"
    );
    let r = reply(DcbCmd::GetState, 5, |b| b.attr(DCB_ATTR_STATE, &[1, 2]));
    assert!(matches!(
        decode_u8_reply(&r, 5, DcbCmd::GetState, "va"),
        Err(DcbError::Reply { source: n, .. }) if n.offset == 20 && n.why.contains("expected 1")
    ));
    let r = reply(DcbCmd::PfcGetState, 5, |b| b.attr_u8(DCB_ATTR_STATE, 1));
    assert!(matches!(
        decode_u8_reply(&r, 5, DcbCmd::GetState, "va"),
        Err(DcbError::Reply { source: n, .. }) if n.what == "dcbmsg" && n.offset == 17
    ));
}

#[test]
fn decoding_pfc_and_pg_replies() {
    let pfc = reply(DcbCmd::PfcGetCfg, 1, |b| {
        let n = b.nest_start(DCB_ATTR_PFC_CFG);
        for i in 0..8u16 {
            b.attr_u8(DCB_PFC_UP_ATTR_0 + i, u8::from(i % 3 == 0));
        }
        b.nest_end(n);
    });
    assert_eq!(
        decode_pfc_reply(&pfc, 1, "va").unwrap(),
        Some([true, false, false, true, false, false, true, false])
    );
    let short = reply(DcbCmd::PfcGetCfg, 1, |b| {
        let n = b.nest_start(DCB_ATTR_PFC_CFG);
        for i in 0..7u16 {
            b.attr_u8(DCB_PFC_UP_ATTR_0 + i, 0);
        }
        b.nest_end(n);
    });
    assert!(matches!(
        decode_pfc_reply(&short, 1, "va"),
        Err(DcbError::Reply { source: n, .. }) if n.why.contains("DCB_PFC_UP_ATTR_7")
    ));

    // The GCFG reply has the SCFG request's nested layout.
    let cfg = PgConfig::from_cee(&DEMO).unwrap();
    let req = encode_set_pg(9, "va", PgDir::Tx, &cfg).unwrap();
    let mut r = req.clone();
    r[4..6].copy_from_slice(&RTM_GETDCB.to_ne_bytes());
    r[17] = DcbCmd::PgTxGetCfg.code();
    assert_eq!(decode_pg_reply(&r, 9, PgDir::Tx, "va").unwrap(), Some(cfg));
}

const BUFFER: DcbBuffer = DcbBuffer {
    prio2buffer: [0, 0, 0, 1, 1, 0, 0, 0],
    buffer_size: [130_944, 262_016, 0, 0, 0, 0, 0, 0],
    total_size: 1_048_576,
};

fn pfc_struct(enabled: u8, delay: u16) -> [u8; IEEE_PFC_LEN] {
    let mut pfc = [0u8; IEEE_PFC_LEN];
    pfc[0] = 8;
    pfc[1] = enabled;
    pfc[2] = 1;
    pfc[4..6].copy_from_slice(&delay.to_ne_bytes());
    pfc[IEEE_PFC_REQUESTS + 8 * 3..IEEE_PFC_REQUESTS + 8 * 4].copy_from_slice(&7u64.to_ne_bytes());
    pfc[IEEE_PFC_INDICATIONS + 8 * 4..IEEE_PFC_INDICATIONS + 8 * 5]
        .copy_from_slice(&9u64.to_ne_bytes());
    pfc
}

/// An IEEE_GET reply as `dcbnl_ieee_fill()` builds it, for a driver with
/// the ops `with` names ("ets", "pfc", "buffer", "peer_pfc").
fn ieee_reply(seq: u32, with: &[&str], buffer: &DcbBuffer) -> Vec<u8> {
    reply(DcbCmd::IeeeGet, seq, |b| {
        b.attr(DCB_ATTR_IFNAME, b"va\0");
        let n = b.nest_start(DCB_ATTR_IEEE);
        if with.contains(&"ets") {
            b.attr(1, &[0u8; 59]); // DCB_ATTR_IEEE_ETS, struct ieee_ets
        }
        if with.contains(&"pfc") {
            b.attr(DCB_ATTR_IEEE_PFC, &pfc_struct(0x18, 1234));
        }
        if with.contains(&"buffer") {
            b.attr(DCB_ATTR_DCB_BUFFER, &buffer.to_bytes());
        }
        let app = b.nest_start(3); // DCB_ATTR_IEEE_APP_TABLE
        b.nest_end(app);
        if with.contains(&"peer_pfc") {
            b.attr(5, &pfc_struct(0xff, 1)); // DCB_ATTR_IEEE_PEER_PFC
        }
        b.nest_end(n);
        b.attr_u8(14, 0x0c); // DCB_ATTR_DCBX
    })
}

#[test]
fn ieee_get_request_and_buffer_set_layout() {
    let r = encode_get_ieee(3, "va").unwrap();
    assert_eq!((u16at(&r, 4), r[17]), (RTM_GETDCB, 21));
    assert_eq!(attr(&r, 20), (7, DCB_ATTR_IFNAME));
    assert_eq!(r.len(), 28);

    let r = encode_set_dcb_buffer(4, "va", &BUFFER).unwrap();
    assert_eq!((u16at(&r, 4), r[17]), (RTM_SETDCB, 20));
    // nlmsghdr 16 + dcbmsg 4 + IFNAME 8 + IEEE nest 4 + BUFFER attr 4 + 44.
    assert_eq!(r.len(), 16 + 4 + 8 + 4 + 4 + DCB_BUFFER_LEN);
    assert_eq!(attr(&r, 28), ((8 + DCB_BUFFER_LEN) as u16, DCB_ATTR_IEEE));
    assert_eq!(
        attr(&r, 32),
        ((4 + DCB_BUFFER_LEN) as u16, DCB_ATTR_DCB_BUFFER)
    );
    let b = &r[36..];
    assert_eq!(&b[..8], &BUFFER.prio2buffer);
    assert_eq!(u32at(b, 8), 130_944);
    assert_eq!(u32at(b, 12), 262_016);
    assert_eq!(u32at(b, 40), 1_048_576);

    // The kernel refuses a buffer index beyond 7 (-EINVAL); so do we, first.
    let mut bad = BUFFER;
    bad.prio2buffer[6] = 8;
    let e = encode_set_dcb_buffer(4, "va", &bad).unwrap_err();
    assert!(
        matches!(&e, DcbError::Invalid(m) if m == "prio2buffer[6] = 8: a port has buffers 0..=7"),
        "{e}"
    );
}

#[test]
fn decoding_ieee_get_replies() {
    let all = ieee_reply(8, &["ets", "pfc", "buffer", "peer_pfc"], &BUFFER);
    let cfg = decode_ieee_reply(&all, 8, "va").unwrap().unwrap();
    assert_eq!(cfg.buffer, Some(BUFFER));
    let pfc = cfg.pfc.unwrap();
    assert_eq!(
        (pfc.cap, pfc.enabled, pfc.mbc, pfc.delay),
        (8, 0x18, 1, 1234)
    );
    assert_eq!((pfc.requests[3], pfc.indications[4]), (7, 9));
    assert_eq!(BUFFER.buffers_of(pfc.enabled), 0b10);
    assert_eq!(BUFFER.buffers_of(0b1001), 0b11);
    assert_eq!(decode_ieee_reply(&all, 9, "va").unwrap(), None);

    // A driver without dcbnl_getbuffer (or without any IEEE op): absent.
    let cfg = decode_ieee_reply(&ieee_reply(8, &["ets", "pfc"], &BUFFER), 8, "va")
        .unwrap()
        .unwrap();
    assert_eq!(cfg.buffer, None);
    assert!(cfg.pfc.is_some());
    let cfg = decode_ieee_reply(&ieee_reply(8, &[], &BUFFER), 8, "va")
        .unwrap()
        .unwrap();
    assert_eq!(cfg, IeeeConfig::default());

    // A buffer index beyond 7, a short struct, a duplicate, no nest.
    let mut bad = BUFFER;
    bad.prio2buffer[2] = 200;
    let e = decode_ieee_reply(&ieee_reply(8, &["buffer"], &bad), 8, "va").unwrap_err();
    assert!(
        matches!(&e, DcbError::Reply { source: n, .. } if n.what == "DCB_ATTR_DCB_BUFFER"
            && n.why == "prio2buffer[2] = 200: a port has buffers 0..=7"),
        "{e}"
    );
    let short = reply(DcbCmd::IeeeGet, 8, |b| {
        let n = b.nest_start(DCB_ATTR_IEEE);
        b.attr(DCB_ATTR_DCB_BUFFER, &[0u8; 40]);
        b.nest_end(n);
    });
    let e = decode_ieee_reply(&short, 8, "va").unwrap_err();
    assert!(
        matches!(&e, DcbError::Reply { source: n, .. } if n.offset == 24 && n.what == "DCB_ATTR_DCB_BUFFER"
            && n.why == "payload of 40 bytes, the struct needs 44"),
        "{e}"
    );
    let twice = reply(DcbCmd::IeeeGet, 8, |b| {
        let n = b.nest_start(DCB_ATTR_IEEE);
        b.attr(DCB_ATTR_IEEE_PFC, &pfc_struct(1, 1));
        b.attr(DCB_ATTR_IEEE_PFC, &pfc_struct(2, 2));
        b.nest_end(n);
    });
    assert!(matches!(
        decode_ieee_reply(&twice, 8, "va"),
        Err(DcbError::Reply { source: n, .. }) if n.why == "duplicate attribute"
    ));
    let bare = reply(DcbCmd::IeeeGet, 8, |b| b.attr(DCB_ATTR_IFNAME, b"va\0"));
    assert!(matches!(
        decode_ieee_reply(&bare, 8, "va"),
        Err(DcbError::Reply { source: n, .. }) if n.what == "DCB_ATTR_IEEE" && n.why == "missing"
    ));
    // A driver without dcbnl ops.
    assert!(matches!(
        decode_ieee_reply(&error(8, libc::EOPNOTSUPP), 8, "va"),
        Err(DcbError::Unsupported { .. })
    ));
}

#[test]
fn ieee_set_status_is_the_drivers_errno() {
    let status = |cmd, status| DcbError::Status {
        ifname: "va".into(),
        cmd,
        status,
    };
    let e = status(DcbCmd::IeeeSet, (-libc::EINVAL) as u8);
    assert_eq!(
        e.to_string(),
        format!(
            "va: DCB_CMD_IEEE_SET: the driver refused (status 234 = -EINVAL, {})",
            io::Error::from_raw_os_error(libc::EINVAL)
        )
    );
    assert_eq!((e.kind(), e.errno()), (DcbErrorKind::Refused, Some(22)));
    let e = status(DcbCmd::IeeeDel, (-libc::ENOENT) as u8);
    assert_eq!(
        (e.kind(), e.errno(), e.cmd()),
        (DcbErrorKind::Errno(2), Some(2), Some(DcbCmd::IeeeDel))
    );
    let e = status(DcbCmd::IeeeSet, (-libc::EOPNOTSUPP) as u8);
    assert_eq!(e.kind(), DcbErrorKind::Unsupported);
    let e = status(DcbCmd::SetAll, 3);
    assert_eq!(
        e.to_string(),
        "va: DCB_CMD_SET_ALL: the driver refused (status 3)"
    );
    // A CEE (or SDCBX) status is the driver's own code, not an errno.
    assert_eq!((e.kind(), e.errno()), (DcbErrorKind::Refused, None));
    assert_eq!(status(DcbCmd::SetDcbx, 1).kind(), DcbErrorKind::Refused);
}

#[test]
fn kernel_errnos_are_classified() {
    let cases = [
        (libc::EOPNOTSUPP, DcbErrorKind::Unsupported, "Unsupported"),
        (524, DcbErrorKind::Unsupported, "Unsupported"),
        (libc::ENODEV, DcbErrorKind::NoDevice, "NoDevice"),
        (libc::EINVAL, DcbErrorKind::Refused, "Kernel"),
        (libc::ERANGE, DcbErrorKind::Refused, "Kernel"),
        (libc::EPERM, DcbErrorKind::Permission, "Kernel"),
        (libc::EACCES, DcbErrorKind::Permission, "Kernel"),
        (libc::EBUSY, DcbErrorKind::Busy, "Kernel"),
        (libc::ETIMEDOUT, DcbErrorKind::Timeout, "Kernel"),
        (libc::EEXIST, DcbErrorKind::Errno(libc::EEXIST), "Kernel"),
    ];
    for (errno, kind, variant) in cases {
        let e = decode_u8_reply(&error(5, errno), 5, DcbCmd::SetState, "va").unwrap_err();
        assert_eq!(e.kind(), kind, "{e}");
        assert_eq!((e.errno(), e.cmd()), (Some(errno), Some(DcbCmd::SetState)));
        assert!(format!("{e:?}").starts_with(variant), "{e:?}");
        assert!(e.to_string().starts_with("va: DCB_CMD_SSTATE: "), "{e}");
    }
    let e = decode_u8_reply(&error(5, libc::EPERM), 5, DcbCmd::SetState, "va").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "va: DCB_CMD_SSTATE: EPERM, {}",
            io::Error::from_raw_os_error(libc::EPERM)
        )
    );
    let e = decode_u8_reply(&error(5, libc::EOPNOTSUPP), 5, DcbCmd::GetState, "va").unwrap_err();
    assert_eq!(
        e.to_string(),
        "va: DCB_CMD_GSTATE: the driver does not support DCB netlink (EOPNOTSUPP)"
    );
    assert_eq!(DcbErrorKind::Errno(17).to_string(), "errno 17 (EEXIST)");
    assert_eq!(DcbErrorKind::NoDevice.label(), "no_device");

    // Malformed replies, refusals before sending, timeouts, the socket.
    let e = decode_u8_reply(&[1, 2, 3], 5, DcbCmd::GetState, "va").unwrap_err();
    assert_eq!(
        (e.kind(), e.cmd()),
        (DcbErrorKind::Malformed, Some(DcbCmd::GetState))
    );
    assert!(
        e.to_string()
            .starts_with("va: DCB_CMD_GSTATE: malformed dcbnl reply: "),
        "{e}"
    );
    let e = encode_get_state(1, "").unwrap_err();
    assert_eq!((e.kind(), e.cmd()), (DcbErrorKind::InvalidRequest, None));
    assert!(
        e.to_string().contains("DCB_CMD_GSTATE: interface name"),
        "{e}"
    );
    let e = DcbError::Timeout {
        ifname: "va".into(),
        cmd: DcbCmd::IeeeGet,
        seq: 4,
        waited: REPLY_TIMEOUT,
    };
    assert_eq!(e.kind(), DcbErrorKind::Timeout);
    assert_eq!(
        e.to_string(),
        "va: DCB_CMD_IEEE_GET: no dcbnl reply to request 4 within 1s"
    );
    let e = DcbError::from(io::Error::from_raw_os_error(libc::ENOBUFS));
    assert_eq!(
        (e.kind(), e.errno(), e.cmd()),
        (DcbErrorKind::Io, Some(libc::ENOBUFS), None)
    );
}

#[test]
fn cmd_names_and_types() {
    assert_eq!(DcbCmd::SetAll.to_string(), "DCB_CMD_SET_ALL");
    assert_eq!(DcbCmd::PfcGetState.msg_type(), RTM_GETDCB);
    assert_eq!(DcbCmd::PgRxSetCfg.msg_type(), RTM_SETDCB);
    assert!(decode_u8_reply(&[], 1, DcbCmd::PfcGetCfg, "va").is_err());
}
