//! The identity TLVs' keys of a port section: `port_description`, `system_name`,
//! `system_description`, `system_capabilities`, `management_address`. Each is `true`
//! (the host's value, the default), `false` (not sent) or a value of its own.

use std::net::IpAddr;

use lossless_wire::lldp::{capability, SystemCapabilities};

use super::error::Fault;
use super::read::{quoted, Field};
use super::setting::Setting;
use crate::identity::{Advertise, IdentitySettings};

/// What `true` and `false` mean, for the messages.
const BOOL_MEANING: &str = "true (the host's value) or false (not sent)";

/// Reads one identity key; `None` when `f` is not one. The element offsets of a
/// capabilities list or table go into `parts`.
pub(super) fn read(f: &Field, parts: &mut Vec<(String, usize)>) -> Result<Option<Setting>, Fault> {
    Ok(Some(match f.name {
        "port_description" => Setting::PortDescription(text(f)?),
        "system_name" => Setting::SystemName(text(f)?),
        "system_description" => Setting::SystemDescription(text(f)?),
        "system_capabilities" => Setting::SystemCapabilities(capabilities(f, parts)?),
        "management_address" => Setting::ManagementAddress(address(f)?),
        _ => return Ok(None),
    }))
}

fn switch<T>(f: &Field) -> Option<Advertise<T>> {
    match f.bool() {
        Ok(true) => Some(Advertise::Host),
        Ok(false) => Some(Advertise::Off),
        Err(_) => None,
    }
}

/// A string (checked against the TLV's 255 octets by `PortConfig::validate`), or a
/// boolean.
fn text(f: &Field) -> Result<Advertise<String>, Fault> {
    if let Some(a) = switch(f) {
        return Ok(a);
    }
    f.str()
        .map(|s| Advertise::Value(s.to_string()))
        .map_err(|_| {
            f.fault(format!(
                "expected a string, {BOOL_MEANING}, found {}",
                f.kind()
            ))
        })
}

/// An IPv4 or IPv6 address (the rest is `PortConfig::validate`'s), or a boolean.
fn address(f: &Field) -> Result<Advertise<IpAddr>, Fault> {
    if let Some(a) = switch(f) {
        return Ok(a);
    }
    let s = f.str().map_err(|_| {
        f.fault(format!(
            "expected an IPv4 or IPv6 address such as \"192.0.2.1\", {BOOL_MEANING}, found {}",
            f.kind()
        ))
    })?;
    s.parse()
        .map(Advertise::Value)
        .map_err(|_| f.fault(format!("{} is not an IPv4 or IPv6 address", quoted(s))))
}

/// `["station_only"]` (capabilities, all enabled), `{ capabilities = [..], enabled =
/// [..] }` (enabled defaults to every capability), or a boolean.
fn capabilities(
    f: &Field,
    parts: &mut Vec<(String, usize)>,
) -> Result<Advertise<SystemCapabilities>, Fault> {
    if let Some(a) = switch(f) {
        return Ok(a);
    }
    if f.elements().is_ok() {
        let bits = names(f, "", parts)?;
        return Ok(Advertise::Value(SystemCapabilities {
            capabilities: bits,
            enabled: bits,
        }));
    }
    let entries = f.entries().map_err(|_| {
        f.fault(format!(
            "expected a list of capabilities such as [\"station_only\"], a table \
             {{ capabilities = [..], enabled = [..] }}, {BOOL_MEANING}, found {}",
            f.kind()
        ))
    })?;
    let (mut caps, mut enabled) = (None, None);
    for e in entries {
        match e.name {
            "capabilities" => caps = Some(names(&e, ".capabilities", parts)?),
            "enabled" => enabled = Some(names(&e, ".enabled", parts)?),
            _ => return Err(e.unknown(&["capabilities", "enabled"])),
        }
    }
    let capabilities = caps.ok_or_else(|| f.fault("missing key `capabilities`"))?;
    Ok(Advertise::Value(SystemCapabilities {
        capabilities,
        enabled: enabled.unwrap_or(capabilities),
    }))
}

/// A list of capability names (802.1AB Table 8-4, as `lossless decode` prints them),
/// none twice.
fn names(f: &Field, suffix: &str, parts: &mut Vec<(String, usize)>) -> Result<u16, Fault> {
    parts.push((suffix.to_string(), f.at()));
    let mut bits = 0u16;
    for e in f.elements()? {
        let name = e.str()?;
        let bit = capability::from_name(name).ok_or_else(|| {
            e.fault(format!(
                "unknown capability {}; expected one of: {}",
                quoted(name),
                capability::NAMES.join(", ")
            ))
        })?;
        if bits & bit != 0 {
            return Err(e.fault(format!("{} is listed twice", quoted(name))));
        }
        bits |= bit;
    }
    Ok(bits)
}

/// The five keys as `to_toml` writes them.
pub(super) fn render(id: &IdentitySettings, line: &mut impl FnMut(&str, String)) {
    let text = |a: &Advertise<String>| match a {
        Advertise::Host => "true".to_string(),
        Advertise::Off => "false".to_string(),
        Advertise::Value(s) => quoted(s),
    };
    line("port_description", text(&id.port_description));
    line("system_name", text(&id.system_name));
    line("system_description", text(&id.system_description));
    let list = |bits: u16| {
        let names: Vec<String> = capability::names(bits).iter().map(|n| quoted(n)).collect();
        format!("[{}]", names.join(", "))
    };
    line(
        "system_capabilities",
        match id.system_capabilities {
            Advertise::Host => "true".to_string(),
            Advertise::Off => "false".to_string(),
            Advertise::Value(c) if c.capabilities == c.enabled => list(c.capabilities),
            Advertise::Value(c) => format!(
                "{{ capabilities = {}, enabled = {} }}",
                list(c.capabilities),
                list(c.enabled)
            ),
        },
    );
    line(
        "management_address",
        match id.management_address {
            Advertise::Host => "true".to_string(),
            Advertise::Off => "false".to_string(),
            Advertise::Value(a) => quoted(&a.to_string()),
        },
    );
}
