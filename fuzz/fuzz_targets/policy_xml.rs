//! The OFA QoS RFC's XML policy form: any text in, a policy or every mistake out, no panic.
//! Each mistake is one line and points inside the input; `parse` returns the first of
//! `parse_all`'s; an accepted policy goes through `check` and is what `parse_policy` (which
//! picks the form itself) returns for the same text when it starts with `<`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use lossless_policy::parse::xml;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let lines = u32::try_from(s.split('\n').count()).unwrap_or(u32::MAX);
    let all = xml::parse_all("fuzz", s);
    let first = xml::parse("fuzz", s);
    match (&all, &first) {
        (Ok(p), Ok(q)) => {
            assert_eq!(p, q);
            let _ = lossless_policy::check::check("fuzz", p, None);
            if lossless_policy::parse::is_xml(s) {
                assert_eq!(lossless_policy::parse_policy("fuzz", s).as_ref(), Ok(p));
            }
        }
        (Err(errs), Err(e)) => {
            assert_eq!(errs.first(), Some(e));
            for e in errs {
                let l = e.loc();
                assert!(
                    l.line >= 1 && l.line <= lines && l.col >= 1,
                    "{e} outside the input"
                );
                assert!(!e.to_string().contains('\n'), "multi-line error: {e}");
            }
        }
        _ => panic!("parse and parse_all disagree: {all:?} vs {first:?}"),
    }
});
