//! The node's ports, by handle, with their names at the edges, and an index of
//! their deadlines.
//!
//! A port is found by its [`PortId`]: a slot of a slab and the slot's generation.
//! Removing a port bumps its slot's generation, so an id kept past the removal
//! finds nothing, never the port that reuses the slot. Names are looked up only
//! where they come in (a request, a link) and kept for what goes out (views,
//! events, logs); ports are listed in name order.
//!
//! Without the deadline index the node found its next timeout by asking every
//! port on every turn of the loop: with 4,096 ports that scan was most of the
//! daemon's time during a simultaneous link-up, and all of its time at steady
//! state. Here a port's deadline is asked again only after the port was handed
//! out mutably ([`Ports::get_mut`], [`Ports::insert`]): a port changes only
//! through `&mut`, and its deadline is a function of its state, so the index
//! holds every port's deadline whenever it is read.

use std::collections::{BTreeMap, BTreeSet};

use lossless_dcbx::Instant;

use crate::port::Port;

/// A port of the node: valid until that port is removed (then it finds nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PortId {
    slot: u32,
    generation: u32,
}

struct Entry {
    port: Box<Port>,
    /// The deadline the index holds for this port.
    indexed: Option<Instant>,
    /// Handed out mutably since the index was last brought up to date.
    touched: bool,
}

#[derive(Default)]
struct Slot {
    generation: u32,
    entry: Option<Entry>,
}

#[derive(Default)]
pub(super) struct Ports {
    slots: Vec<Slot>,
    /// Empty slots, to reuse.
    free: Vec<u32>,
    /// Every port by name (the edges), in name order.
    by_name: BTreeMap<String, PortId>,
    /// (deadline, name) of every port that has a deadline: the earliest first,
    /// ports due at the same time in name order.
    deadlines: BTreeSet<(Instant, String, PortId)>,
    /// Ports handed out mutably since the index was last brought up to date.
    touched: Vec<PortId>,
}

impl Ports {
    fn entry(&self, id: PortId) -> Option<&Entry> {
        let slot = self.slots.get(id.slot as usize)?;
        if slot.generation != id.generation {
            return None;
        }
        slot.entry.as_ref()
    }

    pub fn get(&self, id: PortId) -> Option<&Port> {
        self.entry(id).map(|e| &*e.port)
    }

    /// The port, to change: its deadline is indexed again before the next read.
    pub fn get_mut(&mut self, id: PortId) -> Option<&mut Port> {
        let slot = self.slots.get_mut(id.slot as usize)?;
        if slot.generation != id.generation {
            return None;
        }
        let e = slot.entry.as_mut()?;
        if !e.touched {
            e.touched = true;
            self.touched.push(id);
        }
        Some(&mut e.port)
    }

    /// The port called `name` (where a name comes in: a request, a link).
    pub fn id(&self, name: &str) -> Option<PortId> {
        self.by_name.get(name).copied()
    }

    /// The port called `name`, to read (views).
    pub fn by_name(&self, name: &str) -> Option<&Port> {
        self.get(self.id(name)?)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Adds a port (one of the same name goes first); its id.
    pub fn insert(&mut self, name: String, port: Box<Port>) -> PortId {
        if let Some(old) = self.id(&name) {
            self.remove(old);
        }
        let entry = Entry {
            port,
            indexed: None,
            touched: true,
        };
        let id = match self.free.pop() {
            Some(slot) => {
                let s = &mut self.slots[slot as usize];
                s.entry = Some(entry);
                PortId {
                    slot,
                    generation: s.generation,
                }
            }
            None => {
                let slot = u32::try_from(self.slots.len()).unwrap_or(u32::MAX);
                self.slots.push(Slot {
                    generation: 0,
                    entry: Some(entry),
                });
                PortId {
                    slot,
                    generation: 0,
                }
            }
        };
        self.touched.push(id);
        self.by_name.insert(name, id);
        id
    }

    /// Removes the port; its id (and every copy of it) finds nothing from now on.
    pub fn remove(&mut self, id: PortId) -> Option<Box<Port>> {
        let slot = self.slots.get_mut(id.slot as usize)?;
        if slot.generation != id.generation {
            return None;
        }
        let e = slot.entry.take()?;
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(id.slot);
        self.by_name.remove(&e.port.name);
        if let Some(t) = e.indexed {
            self.deadlines.remove(&(t, e.port.name.clone(), id));
        }
        Some(e.port)
    }

    /// Every port's name, in name order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.by_name.keys()
    }

    /// Every port's id, in name order.
    pub fn ids(&self) -> Vec<PortId> {
        self.by_name.values().copied().collect()
    }

    /// Every port, in name order.
    pub fn values(&self) -> impl Iterator<Item = &Port> {
        self.by_name.values().filter_map(|&id| self.get(id))
    }

    /// Every port with its id, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (PortId, &Port)> {
        self.by_name
            .values()
            .filter_map(|&id| Some((id, self.get(id)?)))
    }

    /// The earliest deadline of any port.
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        self.reindex();
        let first = self.deadlines.first().map(|(t, _, _)| *t);
        debug_assert_eq!(
            first,
            self.values().filter_map(Port::poll_timeout).min(),
            "the deadline index agrees with the ports"
        );
        first
    }

    /// The ports whose deadline is `now` or earlier, earliest first.
    pub fn due(&mut self, now: Instant) -> Vec<PortId> {
        self.reindex();
        self.deadlines
            .iter()
            .take_while(|(t, _, _)| *t <= now)
            .map(|&(_, _, id)| id)
            .collect()
    }

    /// Asks the touched ports for their deadlines again.
    fn reindex(&mut self) {
        for id in std::mem::take(&mut self.touched) {
            let Some(slot) = self.slots.get_mut(id.slot as usize) else {
                continue;
            };
            if slot.generation != id.generation {
                continue;
            }
            let Some(e) = slot.entry.as_mut() else {
                continue;
            };
            e.touched = false;
            let now = e.port.poll_timeout();
            if now == e.indexed {
                continue;
            }
            if let Some(t) = e.indexed {
                self.deadlines.remove(&(t, e.port.name.clone(), id));
            }
            if let Some(t) = now {
                self.deadlines.insert((t, e.port.name.clone(), id));
            }
            e.indexed = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(name: &str) -> Box<Port> {
        let settings = crate::config::DaemonConfig::default().port(name);
        let mac = lossless_wire::MacAddr([2, 0, 0, 0, 0, 1]);
        let local = crate::identity::LocalInfo::default();
        let port = Port::new(name, 1, mac, settings, local, None, 0, Instant::ZERO);
        Box::new(port.expect("the defaults are a valid port"))
    }

    #[test]
    fn a_stale_id_finds_nothing_not_the_port_reusing_its_slot() {
        let mut ports = Ports::default();
        let a = ports.insert("a".into(), port("a"));
        assert!(ports.remove(a).is_some());
        let b = ports.insert("b".into(), port("b"));
        assert_eq!(a.slot, b.slot, "the slot is reused");
        assert!(ports.get(a).is_none());
        assert!(ports.get_mut(a).is_none());
        assert!(ports.remove(a).is_none());
        assert_eq!(ports.get(b).map(|p| p.name.as_str()), Some("b"));
        assert_eq!(ports.id("b"), Some(b));
        assert_eq!(ports.id("a"), None);
    }
}
