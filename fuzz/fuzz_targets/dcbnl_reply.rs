//! Any bytes as a dcbnl reply datagram for any of the decoders, and any
//! bytes as a CEE priority-group setting through encoder and decoder.
//!
//! Input: byte 0 picks the decoder, bytes 1..5 are the sequence number
//! expected (little endian), the rest is the datagram.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_sys::dcbnl::{
    decode_pfc_reply, decode_pg_reply, decode_u8_reply, encode_set_pg, DcbCmd, PgConfig, PgDir,
    PgSetting, RTM_GETDCB,
};

const CMDS: [DcbCmd; 11] = [
    DcbCmd::GetState,
    DcbCmd::SetState,
    DcbCmd::PgTxGetCfg,
    DcbCmd::PgTxSetCfg,
    DcbCmd::PgRxGetCfg,
    DcbCmd::PgRxSetCfg,
    DcbCmd::PfcGetCfg,
    DcbCmd::PfcSetCfg,
    DcbCmd::SetAll,
    DcbCmd::PfcGetState,
    DcbCmd::PfcSetState,
];

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let Some((seq, buf)) = rest.split_first_chunk::<4>() else {
        return;
    };
    let seq = u32::from_le_bytes(*seq);
    match sel % 16 {
        i @ 0..=10 => {
            let _ = decode_u8_reply(buf, seq, CMDS[usize::from(i)], "va");
        }
        11 => {
            let _ = decode_pfc_reply(buf, seq, "va");
        }
        12 | 13 => {
            let dir = if sel % 16 == 12 { PgDir::Tx } else { PgDir::Rx };
            if let Ok(Some(cfg)) = decode_pg_reply(buf, seq, dir, "va") {
                // Whatever the driver says, its CEE view maps back to itself.
                let cee = cfg.to_cee();
                if let Ok(again) = PgConfig::from_cee(&cee) {
                    assert_eq!(again.to_cee(), cee);
                }
            }
        }
        _ => {
            // A setting from the bytes: encode it as PGTX_SCFG, turn the
            // request into the GCFG reply the kernel would send (same nested
            // layout), decode, compare.
            let mut s = PgSetting::default();
            for (i, b) in buf.iter().take(16).enumerate() {
                if i < 8 {
                    s.pgid[i] = b % 17;
                } else {
                    s.percent[i - 8] = *b;
                }
            }
            let Ok(cfg) = PgConfig::from_cee(&s) else {
                return;
            };
            assert_eq!(cfg.to_cee(), s);
            let mut msg = encode_set_pg(seq, "va", PgDir::Tx, &cfg).expect("valid name");
            msg[4..6].copy_from_slice(&RTM_GETDCB.to_ne_bytes());
            msg[17] = DcbCmd::PgTxGetCfg.code();
            let back = decode_pg_reply(&msg, seq, PgDir::Tx, "va").expect("own encoding decodes");
            assert_eq!(back, Some(cfg));
        }
    }
});
