//! The metrics endpoint's web configuration (exporter-toolkit's YAML): any text in, a
//! configuration or one mistake at a line of the text out, no panic. What is taken
//! keeps the rules the reader promises: users with bcrypt hashes, a rate limit that
//! lets requests through, at least one TLS version.
#![no_main]
use libfuzzer_sys::fuzz_target;
use losslessd::web_config;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match web_config::parse(text) {
        Err(e) => {
            // YAML breaks lines at CR as well as LF; an error at the end of the text
            // may be placed on the line after its last.
            let lines = text.chars().filter(|c| matches!(c, '\n' | '\r')).count() + 1;
            assert!(
                (1..=lines + 1).contains(&e.line),
                "line {} of a {lines}-line text: {}",
                e.line,
                e.what
            );
            assert!(!e.what.is_empty());
        }
        Ok(spec) => {
            for u in &spec.users {
                assert!(u.hash.parse::<bcrypt::HashParts>().is_ok(), "{u:?}");
                assert!(!u.name.contains(':'), "{u:?}");
            }
            if let Some(r) = spec.rate_limit {
                assert!(r.burst >= 1 && !r.interval.is_zero(), "{r:?}");
            }
            if let Some(t) = &spec.tls {
                assert!(t.min_version <= t.max_version, "{t:?}");
            }
        }
    }
});
