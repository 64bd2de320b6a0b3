//! The node's ports by name, and an index of their deadlines.
//!
//! Without the index the node found its next timeout by asking every port
//! on every turn of the loop: with 4,096 ports that scan was most of the
//! daemon's time during a simultaneous link-up, and all of its time at steady
//! state. Here a port's deadline is asked again only after the port was
//! handed out mutably ([`Ports::get_mut`], [`Ports::insert`]): a port changes
//! only through `&mut`, and its deadline is a function of its state, so the
//! index holds every port's deadline whenever it is read.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use lossless_dcbx::Instant;

use crate::port::Port;

struct Entry {
    port: Box<Port>,
    /// The deadline the index holds for this port.
    indexed: Option<Instant>,
}

#[derive(Default)]
pub(super) struct Ports {
    by_name: BTreeMap<String, Entry>,
    /// (deadline, name) of every port that has a deadline.
    deadlines: BTreeSet<(Instant, String)>,
    /// Ports handed out mutably since the index was last brought up to date.
    touched: HashSet<String>,
}

impl Ports {
    pub fn get(&self, name: &str) -> Option<&Port> {
        self.by_name.get(name).map(|e| &*e.port)
    }

    /// The port, to change: its deadline is indexed again before the next read.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Port> {
        let e = self.by_name.get_mut(name)?;
        if !self.touched.contains(name) {
            self.touched.insert(name.to_owned());
        }
        Some(&mut e.port)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    pub fn insert(&mut self, name: String, port: Box<Port>) {
        self.remove(&name);
        self.touched.insert(name.clone());
        self.by_name.insert(
            name,
            Entry {
                port,
                indexed: None,
            },
        );
    }

    pub fn remove(&mut self, name: &str) -> Option<Box<Port>> {
        let e = self.by_name.remove(name)?;
        self.touched.remove(name);
        if let Some(t) = e.indexed {
            self.deadlines.remove(&(t, name.to_owned()));
        }
        Some(e.port)
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.by_name.keys()
    }

    pub fn values(&self) -> impl Iterator<Item = &Port> {
        self.by_name.values().map(|e| &*e.port)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Port)> {
        self.by_name.iter().map(|(n, e)| (n, &*e.port))
    }

    /// The earliest deadline of any port.
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        self.reindex();
        let first = self.deadlines.first().map(|(t, _)| *t);
        debug_assert_eq!(
            first,
            self.values().filter_map(Port::poll_timeout).min(),
            "the deadline index agrees with the ports"
        );
        first
    }

    /// The ports whose deadline is `now` or earlier, earliest first.
    pub fn due(&mut self, now: Instant) -> Vec<String> {
        self.reindex();
        self.deadlines
            .iter()
            .take_while(|(t, _)| *t <= now)
            .map(|(_, name)| name.clone())
            .collect()
    }

    /// Asks the touched ports for their deadlines again.
    fn reindex(&mut self) {
        for name in self.touched.drain() {
            let Some(e) = self.by_name.get_mut(&name) else {
                continue;
            };
            let now = e.port.poll_timeout();
            if now == e.indexed {
                continue;
            }
            if let Some(t) = e.indexed {
                self.deadlines.remove(&(t, name.clone()));
            }
            if let Some(t) = now {
                self.deadlines.insert((t, name));
            }
            e.indexed = now;
        }
    }
}
