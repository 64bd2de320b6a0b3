//! The `[relay]` section: the PFC relay of draft-he-rtgwg-wan-pfc-00, as
//! `lossless_relay` defines it (`docs/relay.md`), read with positions so a
//! refusal names the line and the key, plus what only the daemon needs: the
//! interfaces.

use lossless_relay::{ConfigError, GatewayCheck, Relay, RelaySection};
use serde::Deserialize;

use super::error::Fault;
use super::pattern::Pattern;
use super::read::Field;

/// Only the `[relay]` table of the document; serde skips the rest.
#[derive(Deserialize)]
struct Document {
    relay: RelaySection,
}

/// Reads `[relay]` from `text`, whose parsed root has the field `section`.
pub(crate) fn parse(text: &str, section: &Field) -> Result<RelaySection, Fault> {
    let doc: Document = toml::from_str(text).map_err(|e| {
        let reason = e.message().trim().to_string();
        // serde reads an internally tagged section through a buffer that
        // loses positions: find an unknown key by name ourselves.
        let named = reason
            .strip_prefix("unknown field `")
            .and_then(|r| r.split('`').next())
            .and_then(|name| find_key(section, name));
        match named {
            Some(f) => Fault {
                at: f.key_at(),
                key: f.path,
                reason,
            },
            None => Fault {
                at: e
                    .span()
                    .filter(|s| s.start > 0)
                    .map_or(section.key_at(), |s| s.start),
                key: "relay".into(),
                reason,
            },
        }
    })?;
    let refuse = |e: ConfigError| {
        let key = e.key();
        let text = e.to_string();
        // The messages start with the key; the fault names it already.
        let reason = text
            .strip_prefix(key)
            .map(|r| r.trim_start_matches([' ', ':', '=']).to_string())
            .unwrap_or(text);
        let (at, path) = locate(section, key);
        Fault {
            at,
            key: path,
            reason,
        }
    };
    match &doc.relay {
        RelaySection::Pe(cfg) => {
            // Every check the data path will make when it starts: the
            // values (validate) and the encodings.
            Relay::new(cfg.clone(), lossless_relay::Instant::ZERO).map_err(refuse)?;
            let dc = interface(section, "dc.interface", cfg.dc.interface.as_deref())?;
            let wan = interface(section, "wan.interface", cfg.wan.interface.as_deref())?;
            if dc == wan {
                let (at, key) = locate(section, "wan.interface");
                return Err(Fault {
                    at,
                    key,
                    reason: format!("{wan:?} is the DC interface too: a PE relays between two"),
                });
            }
        }
        RelaySection::Gateway(cfg) => {
            GatewayCheck::new(cfg).map_err(refuse)?;
            interface(section, "interface", cfg.interface.as_deref())?;
        }
    }
    Ok(doc.relay)
}

/// A required interface name at `key`.
fn interface<'a>(section: &Field, key: &str, name: Option<&'a str>) -> Result<&'a str, Fault> {
    let (at, path) = locate(section, key);
    let Some(name) = name else {
        return Err(Fault {
            at,
            key: path,
            reason: "required: the interface name".into(),
        });
    };
    match Pattern::parse(name) {
        Ok(p) if !p.is_glob() => Ok(name),
        Ok(_) => Err(Fault {
            at,
            key: path,
            reason: format!("{name:?}: one interface name, not a pattern"),
        }),
        Err(reason) => Err(Fault {
            at,
            key: path,
            reason: reason.to_string(),
        }),
    }
}

/// The first key called `name` at any depth below `field`.
fn find_key<'a>(field: &Field<'a>, name: &str) -> Option<Field<'a>> {
    for f in field.entries().ok()? {
        if f.name == name {
            return Some(f);
        }
        if let Some(found) = find_key(&f, name) {
            return Some(found);
        }
    }
    None
}

/// Where `key` (a dotted path below `[relay]`) is in the file, as deep as it
/// exists, and its full key path.
fn locate(section: &Field, key: &str) -> (usize, String) {
    let mut at = section.at();
    let mut current = section.clone();
    for part in key.split('.') {
        let next = current
            .entries()
            .ok()
            .and_then(|es| es.into_iter().find(|f| f.name == part));
        match next {
            Some(f) => {
                at = f.at();
                current = f;
            }
            None => break,
        }
    }
    (at, format!("relay.{key}"))
}
