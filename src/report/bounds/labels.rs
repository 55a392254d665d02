//! What the critical path charges: a [`Label`] per kind of stretch, interned as numbers so that
//! every command's charge is an index, not a string.

use super::super::facts::Kind;
use crate::model::classification::{Direction, Path};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// What a stretch of the path is charged to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Label {
    Transfer(Kind, Direction, Path),
    Kernel(Arc<str>),
    /// The host: the program's own work and its OpenCL calls, outside waits.
    Host,
    /// A device command waiting for the one it depended on to end and start it.
    Dependency,
    /// From an enqueue call's end to its command's start.
    Launch,
    /// Before the oldest command or synchronisation point the walk kept.
    NotFollowed,
    /// The host from the end of a wait for a command to the next enqueue the path goes through:
    /// the program re-arming the device, which waits for it meanwhile (a pipeline that does not
    /// overlap; what a thread freed by non-blocking calls would overlap; issue #57).
    HostBetween,
}

impl Label {
    pub fn describe(&self) -> String {
        match self {
            Label::Transfer(Kind::Kernel, d, p) => {
                format!("launches moving buffers {} {}", d.as_str(), p.as_str())
            }
            Label::Transfer(k, d, p) => format!("{} {} {}", k.as_str(), d.as_str(), p.as_str()),
            Label::Kernel(name) => format!("kernel {name}"),
            Label::Host => "host (the program and its calls, outside waits)".into(),
            Label::Dependency => "device idle between dependent commands".into(),
            Label::Launch => "device idle from enqueue to start".into(),
            Label::NotFollowed => "not followed (before the graph window)".into(),
            Label::HostBetween => {
                "host (between a wait and the next enqueue: the device waits for it)".into()
            }
        }
    }
}

/// What a command is charged as, given without building its [`Label`] (every command asks).
#[derive(Clone, Copy, Debug)]
pub enum Of<'a> {
    Transfer(Kind, Direction, Path),
    Kernel(&'a Arc<str>),
}

/// The labels charged, interned: the four fixed ones first, then transfers and kernels as they
/// come (a transfer's by its kind, direction and path; a kernel's by its name's allocation, which
/// the layer shares between all launches of one kernel).
#[derive(Debug)]
pub(super) struct Labels {
    pub(super) all: Vec<Label>,
    /// By kind, direction and path (an index, not a hash, per command; 0: none yet).
    transfers: Vec<u32>,
    /// A kernel name's allocation → its label (cleared past [`LABELS`]: a program that makes a
    /// kernel object per launch), and each name's label.
    kernels: FxHashMap<usize, u32>,
    names: FxHashMap<Arc<str>, u32>,
}

/// Labels kept apart at most; later kernels share one.
pub(super) const LABELS: usize = 1024;

pub(super) const HOST: u32 = 0;
pub(super) const DEPENDENCY: u32 = 1;
pub(super) const LAUNCH: u32 = 2;
pub(super) const NOT_FOLLOWED: u32 = 3;
pub(super) const HOST_BETWEEN: u32 = 4;

impl Default for Labels {
    fn default() -> Self {
        Labels {
            all: vec![
                Label::Host,
                Label::Dependency,
                Label::Launch,
                Label::NotFollowed,
                Label::HostBetween,
            ],
            transfers: vec![0; Kind::COUNT * Direction::ALL.len() * Path::ALL.len()],
            kernels: FxHashMap::default(),
            names: FxHashMap::default(),
        }
    }
}

impl Labels {
    #[inline]
    pub(super) fn of(&mut self, of: Of) -> u32 {
        match of {
            Of::Transfer(k, d, p) => {
                let i =
                    (k as usize * Direction::ALL.len() + d as usize) * Path::ALL.len() + p as usize;
                match self.transfers[i] {
                    0 => self.new_transfer(i, Label::Transfer(k, d, p)),
                    id => id,
                }
            }
            Of::Kernel(name) => self.kernel(name),
        }
    }

    #[cold]
    fn new_transfer(&mut self, i: usize, label: Label) -> u32 {
        let id = self.add(label);
        self.transfers[i] = id;
        id
    }

    fn kernel(&mut self, name: &Arc<str>) -> u32 {
        let at = Arc::as_ptr(name) as *const u8 as usize;
        if let Some(&id) = self.kernels.get(&at) {
            return id;
        }
        // Past the bound, a new name shares the others' label.
        let name: Arc<str> = match self.names.contains_key(name) || self.all.len() < LABELS {
            true => name.clone(),
            false => super::super::kernels::OTHERS.into(),
        };
        let id = match self.names.get(&name) {
            Some(&id) => id,
            None => {
                let id = self.add(Label::Kernel(name.clone()));
                self.names.insert(name, id);
                id
            }
        };
        if self.kernels.len() >= LABELS {
            self.kernels.clear();
        }
        self.kernels.insert(at, id);
        id
    }

    fn add(&mut self, label: Label) -> u32 {
        self.all.push(label);
        self.all.len() as u32 - 1
    }
}
