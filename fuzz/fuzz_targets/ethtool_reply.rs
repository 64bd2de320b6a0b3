//! Any bytes as the kernel's answer to an ethtool generic netlink request, through
//! every parser of lossless-sys's `ethtool_nl`, and any values through the request
//! builders and back.
//!
//! Input: byte 0 picks what runs, bytes 1..5 are the sequence number expected (little
//! endian), the rest is the datagram (or the attributes of a reply).
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_sys::ethtool_nl::{
    decode_family_id, decode_pause, decode_private_flags, encode_pause_set,
    encode_private_flag_set, parse_answers, Answer, Pause,
};

/// The generic netlink and netlink headers before a request's attributes.
const HEADERS: usize = 20;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let Some((seq, buf)) = rest.split_first_chunk::<4>() else {
        return;
    };
    let seq = u32::from_le_bytes(*seq);
    match sel % 5 {
        0 => {
            // A datagram: every reply in it through every attribute decoder.
            if let Ok(answers) = parse_answers(buf, seq) {
                for a in answers {
                    if let Answer::Reply { attrs, .. } = a {
                        let _ = decode_pause(&attrs);
                        let _ = decode_private_flags(&attrs);
                        let _ = decode_family_id(&attrs);
                    }
                }
            }
        }
        1 => {
            let _ = decode_pause(buf);
        }
        2 => {
            let _ = decode_private_flags(buf);
        }
        3 => {
            let _ = decode_family_id(buf);
        }
        _ => {
            // Values from the bytes: a PAUSE_SET with every value has the reply's
            // layout, and decodes to them; a PRIVFLAGS_SET's bitset names its flag.
            let bit = |i: usize| buf.get(i).is_some_and(|b| b & 1 == 1);
            let want = Pause {
                autoneg: bit(0),
                rx: bit(1),
                tx: bit(2),
            };
            let req = encode_pause_set(
                21,
                seq,
                "va",
                Some(want.autoneg),
                Some(want.rx),
                Some(want.tx),
            )
            .expect("a valid name");
            assert_eq!(decode_pause(&req[HEADERS..]).expect("own encoding"), want);
            let name: String = buf
                .iter()
                .skip(3)
                .take(31)
                .map(|&b| char::from(b'a' + b % 26))
                .collect();
            if let Ok(req) = encode_private_flag_set(21, seq, "va", &name, bit(0)) {
                assert_eq!(
                    decode_private_flags(&req[HEADERS..]).expect("own encoding"),
                    vec![(name, bit(0))]
                );
            }
        }
    }
});
