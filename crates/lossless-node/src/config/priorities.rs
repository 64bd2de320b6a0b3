//! The one rule for a list of priorities, for the file, `dcbx set` and the control
//! socket alike: each 0..=7, none twice; in text (the CLI's `3,4`), at least one
//! priority or the word `none`.

use lossless_wire::cee::PriorityMap;

use super::error::Fault;
use super::read::Field;

/// Why a list of priorities is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PriorityError {
    #[error("priority {0} is out of range 0..=7")]
    OutOfRange(i64),
    #[error("priority {0} is listed twice")]
    Twice(i64),
    /// Text: nothing but commas and spaces.
    #[error("no priority given: list them (e.g. 3,4) or say none")]
    NoneGiven,
    /// Text: an element that is not a number.
    #[error("{0:?} is not a priority (0..=7, comma separated, or none)")]
    NotANumber(String),
}

/// Adds priority `p` to a list being read.
pub(crate) fn add_priority(map: &mut PriorityMap, p: i64) -> Result<(), PriorityError> {
    let one = u8::try_from(p)
        .ok()
        .and_then(|p| PriorityMap::from_priorities(&[p]).ok())
        .ok_or(PriorityError::OutOfRange(p))?;
    if map.0 & one.0 != 0 {
        return Err(PriorityError::Twice(p));
    }
    map.0 |= one.0;
    Ok(())
}

/// A list of priorities as text: `3`, `3,4` (spaces allowed) or `none`, in the order
/// given. Empty text is refused: an unset shell variable must not mean "no priority".
pub fn priority_text(text: &str) -> Result<Vec<u8>, PriorityError> {
    let t = text.trim();
    if t == "none" {
        return Ok(Vec::new());
    }
    if t.split(',').all(|p| p.trim().is_empty()) {
        return Err(PriorityError::NoneGiven);
    }
    let mut map = PriorityMap::NONE;
    let mut out = Vec::new();
    for p in t.split(',').map(str::trim) {
        let n: i64 = p
            .parse()
            .map_err(|_| PriorityError::NotANumber(p.to_string()))?;
        add_priority(&mut map, n)?;
        out.push(n as u8);
    }
    Ok(out)
}

pub(super) fn indexed(at: Vec<usize>) -> Vec<(String, usize)> {
    at.into_iter()
        .enumerate()
        .map(|(i, at)| (format!("[{i}]"), at))
        .collect()
}

/// A list of distinct priorities 0..=7.
pub(super) fn priorities(f: &Field) -> Result<(PriorityMap, Vec<(String, usize)>), Fault> {
    let mut map = PriorityMap::NONE;
    let mut at = Vec::new();
    for e in f.elements()? {
        add_priority(&mut map, e.int()?).map_err(|reason| e.fault(reason.to_string()))?;
        at.push(e.at());
    }
    Ok((map, indexed(at)))
}

#[cfg(test)]
mod tests {
    use super::priority_text;

    fn text(t: &str) -> Result<Vec<u8>, String> {
        priority_text(t).map_err(|e| e.to_string())
    }

    #[test]
    fn text_lists() {
        assert_eq!(text("3"), Ok(vec![3]));
        assert_eq!(text(" 4, 3 "), Ok(vec![4, 3]));
        assert_eq!(text("none"), Ok(vec![]));
        for empty in ["", " ", ",", " , "] {
            assert_eq!(
                text(empty),
                Err("no priority given: list them (e.g. 3,4) or say none".into()),
                "{empty:?}"
            );
        }
        assert_eq!(text("3,3"), Err("priority 3 is listed twice".into()));
        assert_eq!(
            text("3,300"),
            Err("priority 300 is out of range 0..=7".into())
        );
        assert_eq!(
            text("3,,4"),
            Err("\"\" is not a priority (0..=7, comma separated, or none)".into())
        );
        assert_eq!(text("-1"), Err("priority -1 is out of range 0..=7".into()));
    }
}
