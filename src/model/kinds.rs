//! What a memory object is and why a host range is pinned or registered: the kinds the registry
//! keeps (`memory.rs`) and the classification names (`classification.rs`), below both.

/// What a memory object is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemKind {
    Buffer,
    Image,
    Pipe,
    Other,
}

/// Why a host range is pinned or registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RangeKind {
    /// From map until unmap; `map_flags` as given.
    Mapping {
        map_flags: u64,
    },
    UseHostPtr,
    Svm {
        flags: u64,
    },
    UsmHost,
    UsmShared,
    UsmDevice,
    Imported,
}

impl RangeKind {
    /// The host-memory kind word used in classifications and traces.
    pub fn word(self) -> &'static str {
        match self {
            RangeKind::Mapping { .. } => "mapped",
            RangeKind::UseHostPtr => "use-host-ptr",
            RangeKind::Svm { .. } => "svm",
            RangeKind::UsmHost => "usm-host",
            RangeKind::UsmShared => "usm-shared",
            RangeKind::UsmDevice => "usm-device",
            RangeKind::Imported => "imported",
        }
    }
}

/// Whether a host-memory kind [`RangeKind::word`] names is memory the driver hands the host, the
/// region a program stages through: a mapping, SVM, USM host or shared memory (every record of
/// summary mode asks, so no `memcmp`).
pub fn staging(word: &str) -> bool {
    use crate::vocab::word::is;
    is(word, b"mapped") || is(word, b"svm") || is(word, b"usm-host") || is(word, b"usm-shared")
}
