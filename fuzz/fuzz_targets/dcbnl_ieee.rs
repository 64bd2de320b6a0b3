//! Any bytes as the reply to `DCB_CMD_IEEE_GET`, `GDCBX`, `SDCBX` or
//! `IEEE_DEL`: decodes or is refused, never panics. Whatever of an IEEE_GET
//! reply can be written back (ETS that passes its check, PFC enabled and
//! delay, the DCB buffer, valid APP entries, a valid trust order) is encoded
//! as one `IEEE_SET`; that request, read as the reply it mirrors (same
//! nested layout), decodes to the same objects.
//!
//! Input: bytes 0..4 are the sequence number expected (little endian), the
//! rest is the datagram.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_sys::dcbnl::{
    decode_ieee_reply, decode_ieee_state, decode_u8_reply, encode_set_ieee, AppSelector, DcbApp,
    DcbCmd, IeeePfcSet, IeeeSet, RTM_GETDCB,
};

fn valid_trust(order: &[AppSelector]) -> bool {
    order
        .iter()
        .enumerate()
        .all(|(i, s)| (matches!(s.0, 1..=5 | 255)) && !order[..i].contains(s))
}

fuzz_target!(|data: &[u8]| {
    let Some((seq, buf)) = data.split_first_chunk::<4>() else {
        return;
    };
    let seq = u32::from_le_bytes(*seq);
    for cmd in [DcbCmd::GetDcbx, DcbCmd::SetDcbx, DcbCmd::IeeeDel] {
        let _ = decode_u8_reply(buf, seq, cmd, "va");
    }
    let state = decode_ieee_state(buf, seq, "va");
    // The headroom view agrees with the whole.
    match (&state, decode_ieee_reply(buf, seq, "va")) {
        (Ok(s), Ok(c)) => assert_eq!(s.as_ref().map(|s| s.config()), c),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!("IEEE_GET decoders disagree: {a:?} / {b:?}"),
    }
    let Ok(Some(st)) = state else {
        return;
    };
    let apps: Vec<DcbApp> = st
        .apps
        .iter()
        .copied()
        .filter(|a| a.check().is_ok())
        .collect();
    let set = IeeeSet {
        ets: st.ets.filter(|e| e.check().is_ok()),
        pfc: st.pfc.map(|p| IeeePfcSet {
            enabled: p.enabled,
            delay: p.delay,
        }),
        buffer: st.buffer,
        apps,
        trust: st.trust.clone().filter(|t| valid_trust(t)),
    };
    if set == IeeeSet::default() {
        return;
    }
    let mut msg = encode_set_ieee(seq, "va", &set).expect("a decoded, checked state encodes");
    msg[4..6].copy_from_slice(&RTM_GETDCB.to_ne_bytes());
    msg[17] = DcbCmd::IeeeGet.code();
    let back = decode_ieee_state(&msg, seq, "va")
        .expect("own encoding decodes")
        .expect("the answer to seq");
    assert_eq!(back.ets, set.ets);
    assert_eq!(
        back.pfc.map(|p| (p.enabled, p.delay)),
        set.pfc.map(|p| (p.enabled, p.delay))
    );
    assert_eq!(back.buffer, set.buffer);
    assert_eq!(back.apps, set.apps);
    assert_eq!(back.trust, set.trust);
});
