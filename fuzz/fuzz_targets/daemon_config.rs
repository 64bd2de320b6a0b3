//! The daemon's configuration file: any text in, a configuration or errors out
//! (each single error one line naming the file, however many there are), no panic. An accepted file's effective port settings
//! render back to TOML that parses to the same settings.
#![no_main]
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use lossless_node::config::DaemonConfig;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match DaemonConfig::parse(text, Path::new("fuzz.toml")) {
        Err(e) => {
            let errors = e.errors();
            assert_eq!(e.to_string().lines().count(), errors.len(), "{e}");
            for one in errors {
                let text = one.to_string();
                assert!(!text.contains('\n'), "multi-line error: {text}");
                assert!(
                    text.starts_with("fuzz.toml"),
                    "an error without its file: {text}"
                );
            }
        }
        Ok(c) => {
            let mut names: Vec<String> = c.named_ports().map(str::to_string).collect();
            names.extend(["eth0", "swp1", "lo", ""].map(String::from));
            for name in names {
                let _ = c.selects(&name);
                let s = c.port(&name);
                let body = s.to_toml();
                let again = DaemonConfig::parse(&format!("[defaults]\n{body}"), Path::new("r"))
                    .unwrap_or_else(|e| panic!("rendered settings refused: {e}\n{body}"));
                assert_eq!(again.port("x"), s, "{body}");
            }
        }
    }
});
