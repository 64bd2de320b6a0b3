//! A list with a bound, held inline while short: what the APP tables are made of.
//!
//! A TLV's table can hold up to `MAX` entries (84 CEE APP entries, 168 IEEE
//! Application Priority entries: what a 9-bit TLV length can carry), but nearly
//! every table is a handful of entries long, and a host keeps several per port
//! (configured, advertised, the peer's, operational). Held inline at full
//! capacity, each cost its 672 octets; a [`Table`] holds its first `INLINE`
//! entries in place and moves to the heap only past them. Parsing a TLV of at
//! most `INLINE` entries therefore allocates nothing (`tests/no_alloc.rs`); a
//! longer one allocates its table once.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use smallvec::SmallVec;

/// At most `MAX` entries of `T` in order, the first `INLINE` of them in place.
///
/// Compares, hashes, prints and serialises as the slice of its entries.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Table<T, const MAX: usize, const INLINE: usize>(SmallVec<[T; INLINE]>);

impl<T, const MAX: usize, const INLINE: usize> Table<T, MAX, INLINE> {
    /// The most entries the table takes.
    pub const CAPACITY: usize = MAX;

    pub const fn new() -> Self {
        Table(SmallVec::new_const())
    }

    /// Appends an entry; `Err` gives it back when the table holds `MAX` already.
    pub fn try_push(&mut self, entry: T) -> Result<(), T> {
        if self.0.len() >= MAX {
            return Err(entry);
        }
        self.0.push(entry);
        Ok(())
    }

    /// Appends an entry.
    ///
    /// # Panics
    ///
    /// When the table holds `MAX` entries already (use [`Table::try_push`] for
    /// entries that may not fit).
    pub fn push(&mut self, entry: T) {
        assert!(self.0.len() < MAX, "a table holds at most {MAX} entries");
        self.0.push(entry);
    }

    /// Makes room for `additional` more entries (at most up to `MAX`) at once:
    /// a table that will not fit in place allocates once, to the size it needs,
    /// rather than growing by doubling as entries come.
    pub fn reserve(&mut self, additional: usize) {
        self.0
            .reserve_exact(additional.min(MAX.saturating_sub(self.0.len())));
    }

    pub fn pop(&mut self) -> Option<T> {
        self.0.pop()
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }

    pub fn is_full(&self) -> bool {
        self.0.len() >= MAX
    }

    /// The entries have moved to the heap (more than `INLINE` of them were held).
    pub fn spilled(&self) -> bool {
        self.0.spilled()
    }

    pub fn as_slice(&self) -> &[T] {
        &self.0
    }
}

impl<T, const MAX: usize, const INLINE: usize> Default for Table<T, MAX, INLINE> {
    fn default() -> Self {
        Table::new()
    }
}

impl<T, const MAX: usize, const INLINE: usize> Deref for Table<T, MAX, INLINE> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T, const MAX: usize, const INLINE: usize> DerefMut for Table<T, MAX, INLINE> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

impl<T: fmt::Debug, const MAX: usize, const INLINE: usize> fmt::Debug for Table<T, MAX, INLINE> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

/// # Panics
///
/// When the iterator gives more than `MAX` entries, as [`Table::push`].
impl<T, const MAX: usize, const INLINE: usize> FromIterator<T> for Table<T, MAX, INLINE> {
    fn from_iter<I: IntoIterator<Item = T>>(entries: I) -> Self {
        let mut t = Table::new();
        for e in entries {
            t.push(e);
        }
        t
    }
}

impl<'a, T, const MAX: usize, const INLINE: usize> IntoIterator for &'a Table<T, MAX, INLINE> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<T: Serialize, const MAX: usize, const INLINE: usize> Serialize for Table<T, MAX, INLINE> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter())
    }
}

/// Refuses more than `MAX` entries as arrayvec's `ArrayVec` did (the tables'
/// type before): "invalid length MAX + 1, expected an array with no more than
/// MAX items".
impl<'de, T: Deserialize<'de>, const MAX: usize, const INLINE: usize> Deserialize<'de>
    for Table<T, MAX, INLINE>
{
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries<T, const MAX: usize, const INLINE: usize>(PhantomData<T>);

        impl<'de, T: Deserialize<'de>, const MAX: usize, const INLINE: usize> Visitor<'de>
            for Entries<T, MAX, INLINE>
        {
            type Value = Table<T, MAX, INLINE>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "an array with no more than {MAX} items")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut table = Table::new();
                while let Some(entry) = seq.next_element()? {
                    if table.try_push(entry).is_err() {
                        return Err(serde::de::Error::invalid_length(MAX + 1, &self));
                    }
                }
                Ok(table)
            }
        }

        d.deserialize_seq(Entries::<T, MAX, INLINE>(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    type Small = Table<u16, 5, 2>;

    #[test]
    fn holds_max_entries_inline_up_to_inline() {
        let mut t = Small::new();
        for v in 0..5 {
            assert_eq!(t.spilled(), v > 2, "{v} entries");
            t.try_push(v).unwrap();
        }
        assert!(t.spilled() && t.is_full());
        assert_eq!(t.try_push(5), Err(5));
        assert_eq!(*t, [0, 1, 2, 3, 4]);
        assert_eq!(format!("{t:?}"), "[0, 1, 2, 3, 4]");
    }

    #[test]
    fn serialises_as_its_entries_and_refuses_more_than_max() {
        let t: Small = serde_json::from_str("[1,2,3]").unwrap();
        assert_eq!(serde_json::to_string(&t).unwrap(), "[1,2,3]");
        let many = "[1,2,3,4,5,6]";
        let e = serde_json::from_str::<Small>(many).unwrap_err();
        // The same words as the type the APP tables had before.
        let before = serde_json::from_str::<arrayvec::ArrayVec<u16, 5>>(many).unwrap_err();
        assert_eq!(e.to_string(), before.to_string());
        assert_eq!(
            e.to_string(),
            "invalid length 6, expected an array with no more than 5 items at line 1 column 13"
        );
    }
}
