//! Any text through the one ETS notation's parser (`lossless dcbx set PORT ets '...'`,
//! the text `dcbx show` and the lab print): no panic; an error points inside the text;
//! whatever parses is written back by the summary to text that parses to the same table.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_wire::ieee::EtsTable;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    match EtsTable::parse(s) {
        Err(e) => {
            assert!(e.offset <= s.len(), "{e} beyond {} bytes", s.len());
            assert!(s.is_char_boundary(e.offset), "{e}");
            assert!(s[e.offset..].starts_with(&e.found), "{e}");
            let _ = e.to_string();
        }
        Ok(t) => {
            let text = t.summary();
            assert_eq!(EtsTable::parse(&text), Ok(t), "{s:?} -> {text:?}");
            let _ = t.validate();
        }
    }
});
