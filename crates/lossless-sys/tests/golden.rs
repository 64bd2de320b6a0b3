#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! Decoders against datagrams captured from the kernel and from the dcbnl
//! shim (tests/data/README.md says how). No privileges needed.

use lossless_sys::dcbnl::{
    decode_ieee_reply, decode_pfc_reply, decode_pg_reply, decode_u8_reply, DcbCmd, DcbError,
    DcbErrorKind, PgConfig, PgDir, PgSetting,
};
use lossless_sys::link::{parse_link_messages, LinkEvent, LinkInfo};

fn data(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn link(ifindex: u32, name: &str, mac_last: u8, up: bool, run: bool, mtu: u32) -> LinkEvent {
    LinkEvent::New(LinkInfo {
        ifindex,
        name: name.into(),
        mac: Some([2, 0, 0, 0, 0, mac_last]),
        admin_up: up,
        oper_up: run,
        carrier: run,
        mtu: Some(mtu),
        alias: None,
    })
}

fn with_carrier(ev: LinkEvent) -> LinkEvent {
    match ev {
        LinkEvent::New(info) => LinkEvent::New(LinkInfo {
            carrier: true,
            ..info
        }),
        other => other,
    }
}

#[test]
fn a_captured_link_sequence_parses_to_what_ip_did() {
    let buf = data("rtm_link_sequence.bin");
    let ev = parse_link_messages(&buf).unwrap();
    assert_eq!(
        ev,
        vec![
            link(2, "lsys1", 0x0b, false, false, 1500),
            link(3, "lsys0", 0x0a, false, false, 1500),
            link(2, "lsys1", 0x0b, true, false, 1500),
            link(3, "lsys0", 0x0a, false, false, 9000),
            // Admin up with the peer up: the carrier (IFF_LOWER_UP) is on in
            // this very message; IFF_RUNNING follows when linkwatch runs.
            with_carrier(link(3, "lsys0", 0x0a, true, false, 9000)),
            link(3, "lsys0", 0x0a, true, true, 9000),
            link(2, "lsys1", 0x0b, true, true, 1500),
            link(3, "lsys0", 0x0a, false, false, 9000),
            link(2, "lsys1", 0x0b, false, false, 1500),
            LinkEvent::Del {
                ifindex: 3,
                name: "lsys0".into()
            },
            LinkEvent::Del {
                ifindex: 2,
                name: "lsys1".into()
            },
        ]
    );
}

#[test]
fn every_cut_of_the_capture_is_an_error_at_the_cut_message() {
    let buf = data("rtm_link_sequence.bin");
    // Message boundaries: 9 x 1496, then 2 x 684.
    let starts: Vec<usize> = (0..9)
        .map(|i| i * 1496)
        .chain([9 * 1496, 9 * 1496 + 684])
        .collect();
    for cut in 0..buf.len() {
        let r = parse_link_messages(&buf[..cut]);
        if starts.contains(&cut) {
            assert_eq!(
                r.unwrap().len(),
                starts.iter().position(|&s| s == cut).unwrap()
            );
        } else {
            let e = r.unwrap_err();
            let msg = *starts.iter().rev().find(|&&s| s < cut).unwrap();
            assert_eq!(e.offset, msg, "cut at {cut}: {e}");
            assert_eq!(e.what, "nlmsghdr");
        }
    }
}

#[test]
fn corrupting_any_byte_never_panics() {
    let buf = data("rtm_link_sequence.bin");
    let one = &buf[..1496];
    for i in 0..one.len() {
        for v in [0x00, 0x01, 0x03, 0x7f, 0x80, 0xff] {
            let mut m = one.to_vec();
            m[i] = v;
            let _ = parse_link_messages(&m);
        }
    }
}

#[test]
fn the_kernels_dcbnl_errors_map_to_typed_errors() {
    let e = decode_u8_reply(
        &data("kernel_gstate_veth_eopnotsupp.bin"),
        1,
        DcbCmd::GetState,
        "va",
    )
    .unwrap_err();
    assert!(
        matches!(e, DcbError::Unsupported { ref ifname, .. } if ifname == "va"),
        "{e}"
    );
    assert_eq!(e.kind(), DcbErrorKind::Unsupported);
    assert_eq!(
        e.to_string(),
        "va: DCB_CMD_GSTATE: the driver does not support DCB netlink (EOPNOTSUPP)"
    );
    let e = decode_u8_reply(
        &data("kernel_gstate_nodev.bin"),
        2,
        DcbCmd::GetState,
        "nosuch0",
    )
    .unwrap_err();
    assert!(matches!(e, DcbError::NoDevice { .. }), "{e}");
    assert_eq!((e.kind(), e.errno()), (DcbErrorKind::NoDevice, Some(19)));
    // An answer to another request is not ours.
    assert!(
        decode_u8_reply(&data("kernel_gstate_nodev.bin"), 3, DcbCmd::GetState, "x")
            .unwrap()
            .is_none()
    );
}

#[test]
fn the_shims_dcbnl_replies_decode() {
    let u8r = |f: &str, seq, cmd| decode_u8_reply(&data(f), seq, cmd, "va").unwrap();
    assert_eq!(u8r("shim_sstate.bin", 10, DcbCmd::SetState), Some(0));
    assert_eq!(u8r("shim_pfc_scfg.bin", 11, DcbCmd::PfcSetCfg), Some(0));
    assert_eq!(u8r("shim_pgtx_scfg.bin", 12, DcbCmd::PgTxSetCfg), Some(0));
    assert_eq!(u8r("shim_set_all.bin", 13, DcbCmd::SetAll), Some(2));
    assert_eq!(u8r("shim_gstate.bin", 14, DcbCmd::GetState), Some(1));
    assert_eq!(
        decode_pfc_reply(&data("shim_pfc_gcfg.bin"), 15, "va").unwrap(),
        Some([false, false, false, true, true, false, false, false])
    );
    let pg = decode_pg_reply(&data("shim_pgtx_gcfg.bin"), 16, PgDir::Tx, "va")
        .unwrap()
        .unwrap();
    let cee = PgSetting {
        pgid: [0, 0, 0, 0, 1, 1, 1, 15],
        percent: [25, 75, 0, 0, 0, 0, 0, 0],
    };
    assert_eq!(pg, PgConfig::from_cee(&cee).unwrap());
    assert_eq!(pg.to_cee(), cee);

    // The right bytes for the wrong question are refused.
    assert!(matches!(
        decode_u8_reply(&data("shim_gstate.bin"), 14, DcbCmd::PfcGetState, "va"),
        Err(DcbError::Reply { .. })
    ));
    assert!(matches!(
        decode_pg_reply(&data("shim_pgtx_gcfg.bin"), 16, PgDir::Rx, "va"),
        Err(DcbError::Reply { .. })
    ));
}

#[test]
fn every_cut_of_a_dcbnl_reply_is_refused_cleanly() {
    let buf = data("shim_pgtx_gcfg.bin");
    for cut in 0..buf.len() {
        let r = decode_pg_reply(&buf[..cut], 16, PgDir::Tx, "va");
        if cut == 0 {
            assert!(matches!(r, Ok(None)));
        } else {
            assert!(matches!(r, Err(DcbError::Reply { .. })), "cut {cut}: {r:?}");
        }
    }
}

#[test]
fn ieee_get_replies_decode() {
    // The shim plays a driver with IEEE ETS/PFC/APP ops but no dcbnl_getbuffer:
    // the PFC object carries what the IEEE_SET before it wrote, and there is no
    // DCB buffer.
    assert_eq!(
        decode_u8_reply(&data("shim_ieee_set_pfc.bin"), 20, DcbCmd::IeeeSet, "va").unwrap(),
        Some(0)
    );
    let cfg = decode_ieee_reply(&data("shim_ieee_get.bin"), 21, "va")
        .unwrap()
        .unwrap();
    let pfc = cfg.pfc.unwrap();
    assert_eq!(
        (pfc.cap, pfc.enabled, pfc.mbc, pfc.delay),
        (8, 0x18, 0, 20269)
    );
    assert_eq!(cfg.buffer, None);
    let e = decode_ieee_reply(&data("kernel_ieee_get_veth_eopnotsupp.bin"), 21, "va").unwrap_err();
    assert!(matches!(e, DcbError::Unsupported { .. }), "{e}");

    // Every cut is refused cleanly, never a panic.
    let buf = data("shim_ieee_get.bin");
    for cut in 1..buf.len() {
        let r = decode_ieee_reply(&buf[..cut], 21, "va");
        assert!(matches!(r, Err(DcbError::Reply { .. })), "cut {cut}: {r:?}");
    }
}
