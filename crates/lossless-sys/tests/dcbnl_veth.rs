#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! The kernel's own answers to the IEEE 802.1Qaz commands on a device
//! without dcbnl ops (a veth, in a namespace of the test's own): each is
//! `EOPNOTSUPP`, classified as [`DcbErrorKind::Unsupported`]; an unknown
//! name is `ENODEV`; the socket stays in step after every error. A driver
//! that takes the requests needs the dcbnl shim (see the crate README).

mod common;
use common::*;

use lossless_sys::dcbnl::*;

#[test]
fn ieee_commands_on_a_veth_are_unsupported_as_the_kernel_says() {
    if !require(
        "ieee_commands_on_a_veth_are_unsupported_as_the_kernel_says",
        &[Oracle::Netns],
    ) {
        return;
    }
    let pair = Pair::new();
    pair.a.run(|| {
        let mut d = Dcbnl::open().unwrap();
        let app = DcbApp {
            selector: AppSelector::DSCP,
            priority: 3,
            protocol: 26,
        };
        let ets = IeeeEts {
            tc_tx_bw: [100, 0, 0, 0, 0, 0, 0, 0],
            tc_tsa: [
                Tsa::ETS,
                Tsa(0),
                Tsa(0),
                Tsa(0),
                Tsa(0),
                Tsa(0),
                Tsa(0),
                Tsa(0),
            ],
            ..IeeeEts::default()
        };
        let results: Vec<(DcbCmd, Result<(), DcbError>)> = vec![
            (DcbCmd::IeeeGet, d.get_ieee_state("va").map(drop)),
            (DcbCmd::IeeeSet, d.set_ieee_ets("va", &ets)),
            (DcbCmd::IeeeSet, d.set_ieee_pfc("va", 0x08, 100)),
            (DcbCmd::IeeeDel, d.del_ieee_app("va", &app)),
            (DcbCmd::GetDcbx, d.get_dcbx("va").map(drop)),
            (
                DcbCmd::SetDcbx,
                d.set_dcbx("va", DcbxMode::HOST | DcbxMode::VER_IEEE),
            ),
            // These read the IEEE state first, and stop there.
            (DcbCmd::IeeeGet, d.add_ieee_apps("va", &[app]).map(drop)),
            (DcbCmd::IeeeGet, d.del_ieee_apps("va", &[app]).map(drop)),
            (
                DcbCmd::IeeeGet,
                d.set_app_trust("va", &[AppSelector::DSCP, AppSelector::PCP]),
            ),
            (
                DcbCmd::IeeeGet,
                d.set_ieee_pfc_keep_delay("va", 0x08).map(drop),
            ),
        ];
        for (cmd, r) in results {
            let e = r.unwrap_err();
            assert_eq!(e.kind(), DcbErrorKind::Unsupported, "{e}");
            assert_eq!((e.cmd(), e.errno()), (Some(cmd), Some(95)), "{e}");
            assert!(e.to_string().starts_with(&format!("va: {cmd}: ")), "{e}");
        }
        let e = d.get_dcbx("nosuch0").unwrap_err();
        assert_eq!(e.kind(), DcbErrorKind::NoDevice, "{e}");
        // Refused here, before the kernel is asked.
        let e = d.set_dcbx("va", DcbxMode(0x40)).unwrap_err();
        assert_eq!(e.kind(), DcbErrorKind::InvalidRequest, "{e}");
        assert_eq!(d.add_ieee_apps("va", &[]).unwrap(), 0);
        // Still in step.
        assert_eq!(
            d.get_state("va").unwrap_err().kind(),
            DcbErrorKind::Unsupported
        );
    });
}
