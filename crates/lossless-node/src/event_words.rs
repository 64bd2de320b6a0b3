//! An event as a person reads it: its kind, then each field as `key=value` (a string as
//! it is, anything else as compact JSON), the same in `lossless events` and the lab's
//! timeline. The JSON forms keep the event as it is.

use serde_json::Value;

/// `neighbor_added chassis_id=02:00:00:00:00:0a port_id=02:00:00:00:00:0a` for
/// `{"event":"neighbor_added","chassis_id":..,"port_id":..}`; fields in the object's
/// order. A value that is not an object is written as JSON.
pub fn event_words(event: &Value) -> String {
    let Some(fields) = event.as_object() else {
        return event.to_string();
    };
    let mut out = fields
        .get("event")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    for (k, v) in fields.iter().filter(|(k, _)| *k != "event") {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(k);
        out.push('=');
        match v.as_str() {
            Some(s) => out.push_str(s),
            None => out.push_str(&v.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_first_then_each_field() {
        let v: Value = serde_json::from_str(
            r#"{"event":"pfc_counters","available":false,"reason":"no dcbnl","n":[1,2]}"#,
        )
        .expect("json");
        let w = event_words(&v);
        assert!(w.starts_with("pfc_counters "), "{w}");
        for part in ["available=false", "reason=no dcbnl", "n=[1,2]"] {
            assert!(w.contains(part), "{w}");
        }
        assert!(!w.contains('{'), "{w}");
        assert_eq!(event_words(&Value::from(3)), "3");
    }
}
