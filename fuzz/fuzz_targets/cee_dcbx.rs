//! Any bytes as a CEE DCBX TLV body: parse; on success emit, parse again and
//! compare with the normalized value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_wire::CeeDcbx;

fuzz_target!(|data: &[u8]| {
    let Ok(cee) = CeeDcbx::parse(data) else {
        return;
    };
    // Every stored error points inside the input.
    for e in &cee.anomalies {
        assert!(e.offset < data.len(), "{e}");
    }
    let mut out = vec![0u8; cee.buffer_len()];
    assert_eq!(cee.emit(&mut out), Ok(out.len()));
    let again = CeeDcbx::parse(&out).expect("a re-emitted body parses");
    assert_eq!(again, cee.normalized());
    // Whatever parses also validates: the stored configs obey the rules.
    if let Some(Ok(pg)) = &again.pg {
        assert!(pg.cfg.validate().is_ok());
    }
    if let Some(Ok(pfc)) = &again.pfc {
        assert!(pfc.cfg.validate().is_ok());
    }
    if let Some(Ok(app)) = &again.app {
        assert!(app.cfg.validate().is_ok());
    }
});
