//! What the classifier answers: the vocabulary of directions and paths (one list, used alike in
//! code, logs, traces and docs) and the [`Classification`] of one transfer.

use super::flags::{self, MAP_FLAGS, MEM_FLAGS, MIGRATION_FLAGS, SVM_FLAGS};
use super::kinds::{MemKind, RangeKind};
use crate::units;
use smallvec::SmallVec;
use std::fmt::{self, Write as _};

macro_rules! words {
    ($(#[$m:meta])* $name:ident { $($variant:ident = $word:literal: $doc:literal,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $(#[doc = $doc] $variant,)* }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $word,)* }
            }

            /// (word, meaning) for docs.
            pub const DOCS: &'static [(&'static str, &'static str)] = &[$(($word, $doc),)*];
        }
    };
}

words! {
    /// Which way the bytes go.
    Direction {
        H2D = "H2D": "host to device",
        D2H = "D2H": "device to host",
        D2D = "D2D": "within or between devices",
        H2H = "H2H": "host to host",
    }
}

words! {
    /// How the bytes move.
    Path {
        Pinned = "pinned": "DMA straight from or to page-locked (pinned or registered) host memory",
        Staged = "staged": "copied through a hidden driver bounce buffer, at a fraction of the speed",
        ZeroCopy = "zero-copy": "nothing is copied: the device uses the host memory in place",
        HostCopy = "host-copy": "the CPU copies the bytes within host memory (a memcpy): no DMA, no bus transfer",
        Device = "device": "a copy or fill inside device memory",
        Peer = "peer": "device to device directly, peer-to-peer",
        ViaHost = "via-host": "device to device through host memory",
        None = "none": "no data moved",
        Unknown = "unknown": "clxfer cannot tell (unknown object, driver error)",
    }
}

words! {
    /// When a migration's bytes moved, by the memory model (the brief's "does migrate copy at
    /// call time?").
    When {
        AtCall = "at the call": "the migration copied the contents when it ran",
        AtFirstUse = "at first use": "the migration only marked the objects: the first command that uses them on the device moves the contents",
        NotAtAll = "not at all": "nothing needed moving (CONTENT_UNDEFINED, the contents already there or none yet, or one memory for host and device)",
    }
}

impl When {
    /// A migration that moved `bytes`, having cited the rules `rule_ids`.
    pub fn of<'a>(bytes: u64, rule_ids: impl IntoIterator<Item = &'a str>) -> When {
        const NOTHING: [&str; 4] = [
            "any.content-undefined",
            "any.already-there",
            "any.no-contents",
            "any.host-resident",
        ];
        if bytes > 0 {
            return When::AtCall;
        }
        // Only a marker: the set's migration rule said so, and nothing said there was nothing
        // to move (a device whose memory is the host's cites its memory rule instead).
        let (mut marker, mut nothing) = (false, false);
        for id in rule_ids {
            marker |= id.ends_with(".migrate");
            nothing |= NOTHING.contains(&id);
        }
        match marker && !nothing {
            true => When::AtFirstUse,
            false => When::NotAtAll,
        }
    }
}

/// What the report reads from the rules a classification cited: marked where the classifier
/// cites them (every enqueue's facts ask, and matching ids as strings cost more than the rest
/// of the fact), and read back from rule ids by [`Cited::of`] (a trace carries only the ids).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cited {
    /// A rule about pointer alignment: the pointer was misaligned for this device.
    pub misaligned: bool,
    /// A rule saying that non-blocking pageable transfers hold the host.
    pub holds_host: bool,
    /// A hand-off between devices gone wrong (`any.host-hop`, `any.idle-migration`,
    /// `any.written-twice`).
    pub hand_off: Option<HandOff>,
    /// The host side was locked with mlock (`any.mlocked`).
    pub locked: bool,
}

/// The hand-offs between devices the findings name (issue #25).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandOff {
    /// Brought back from the host after a HOST migration took it off another device.
    HostHop,
    /// Pulled from another device after a migration there moved nothing.
    IdleMigration,
    /// A whole write after a whole write on another device, with no use between.
    WrittenTwice,
}

impl Cited {
    /// What rule ids `rule_ids` say; a classification's own marks are the same
    /// (`model/classify/tests.rs` checks every case). The last byte of an id sorts most of
    /// them out before a suffix is compared.
    pub fn of<'a>(rule_ids: impl IntoIterator<Item = &'a str>) -> Cited {
        use crate::vocab::word;
        let mut c = Cited::default();
        for id in rule_ids {
            match id.as_bytes().last() {
                Some(b't') => c.misaligned |= word::ends(id, b".alignment"),
                Some(b'g') => c.holds_host |= word::ends(id, b".nonblocking"),
                Some(b'p') if word::is(id, b"any.host-hop") => c.hand_off = Some(HandOff::HostHop),
                Some(b'n') if word::is(id, b"any.idle-migration") => {
                    c.hand_off = Some(HandOff::IdleMigration)
                }
                Some(b'e') if word::is(id, b"any.written-twice") => {
                    c.hand_off = Some(HandOff::WrittenTwice)
                }
                Some(b'd') => c.locked |= word::is(id, b"any.mlocked"),
                _ => {}
            }
        }
        c
    }
}

/// One step of the reasoning, citing the rule it applied (an id from `rules/`). Structured,
/// not text: the words are rendered only when shown ([`Reason::text`]), so classifying allocates
/// nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reason {
    pub rule: &'static str,
    /// The object it is about, when a command has several (migrations).
    pub about: Option<ObjRef>,
    pub why: Why,
}

impl Reason {
    pub fn text(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.about {
            Some(obj) => write!(f, "{obj}: {}", self.why),
            None => write!(f, "{}", self.why),
        }
    }
}

/// A memory object as reasons name it: `buffer #7 (READ_WRITE|ALLOC_HOST_PTR)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ObjRef {
    pub id: u64,
    pub flags: u64,
    pub kind: MemKind,
    pub sub: bool,
    /// Its size, bytes.
    pub size: u64,
}

impl ObjRef {
    /// `buffer`, `sub-buffer`, `image`, `pipe`, `memory object`.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            MemKind::Buffer if self.sub => "sub-buffer",
            MemKind::Buffer => "buffer",
            MemKind::Image => "image",
            MemKind::Pipe => "pipe",
            MemKind::Other => "memory object",
        }
    }
}

impl fmt::Display for ObjRef {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "{} #{} ({})",
            self.kind_name(),
            self.id,
            flags::decode(self.flags, MEM_FLAGS)
        )
    }
}

/// A pinned or registered host range as reasons name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RangeRef {
    pub kind: RangeKind,
    pub owner: Option<ObjRef>,
}

impl fmt::Display for RangeRef {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let owner = |f: &mut fmt::Formatter, what: &str| match self.owner {
            Some(obj) => write!(f, "{obj}"),
            None => write!(f, "{what}"),
        };
        match self.kind {
            RangeKind::Mapping { map_flags } => {
                write!(
                    f,
                    "the live {} mapping of ",
                    flags::decode(map_flags, MAP_FLAGS)
                )?;
                owner(f, "a buffer")
            }
            RangeKind::UseHostPtr => {
                write!(f, "the host range of ")?;
                owner(f, "a buffer")
            }
            RangeKind::Svm { flags } => {
                write!(
                    f,
                    "a clSVMAlloc allocation ({})",
                    flags::decode(flags, SVM_FLAGS)
                )
            }
            RangeKind::UsmHost => write!(f, "a clHostMemAllocINTEL allocation"),
            RangeKind::UsmShared => write!(f, "a clSharedMemAllocINTEL allocation"),
            RangeKind::UsmDevice => write!(f, "a clDeviceMemAllocINTEL allocation"),
            RangeKind::Imported => {
                write!(f, "the clImportMemoryARM import of ")?;
                owner(f, "an object")
            }
        }
    }
}

/// What a reason says, with the numbers it says it with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Why {
    Text(&'static str),
    InRange {
        range: RangeRef,
        offset: u64,
        pinned: bool,
    },
    Partial {
        range: RangeRef,
        offset: u64,
        past: u64,
    },
    SubBuffer {
        sub: ObjRef,
        offset: u64,
        parent: ObjRef,
    },
    Placement {
        obj: ObjRef,
        host: bool,
    },
    HostResident {
        what: &'static str,
        unified: bool,
    },
    Rect {
        bytes: u64,
        span: u64,
    },
    StagedUpTo {
        bytes: u64,
        limit: u64,
    },
    PinnedAbove {
        bytes: u64,
        limit: u64,
    },
    CpuCopy {
        align: u64,
        rem: u64,
    },
    Misaligned {
        align: u64,
        rem: u64,
    },
    MapCopies {
        flags: u64,
    },
    UnmapCopies {
        flags: u64,
    },
    UnknownObject {
        handle: usize,
    },
    NoMapping {
        ptr: usize,
    },
    ContentsElsewhere {
        obj: ObjRef,
    },
    LastElsewhere {
        obj: ObjRef,
    },
    OnlyOnHost {
        obj: ObjRef,
    },
    Marker {
        flags: u64,
    },
    NoObjects {
        flags: u64,
    },
    DriverError {
        code: Option<i32>,
    },
}

impl From<&'static str> for Why {
    fn from(text: &'static str) -> Why {
        Why::Text(text)
    }
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let b = units::bytes;
        let map = |flags| flags::decode(flags, MAP_FLAGS);
        match *self {
            Why::Text(text) => f.write_str(text),
            Why::InRange {
                range,
                offset,
                pinned,
            } => {
                let state = if pinned { "pinned" } else { "not pinned" };
                write!(f, "the pointer is inside {range}, at +{offset}: {state}")
            }
            Why::Partial {
                range,
                offset,
                past,
            } => write!(
                f,
                "the span starts inside {range}, at +{offset}, but runs {past} B past its end"
            ),
            Why::SubBuffer {
                sub,
                offset,
                parent,
            } => {
                write!(
                    f,
                    "{sub} is at +{offset} in {parent}: it takes the parent's placement"
                )
            }
            Why::Placement { obj, host: true } => write!(f, "{obj} lives in host memory"),
            Why::Placement { obj, host: false } => write!(f, "{obj} has device storage"),
            Why::HostResident {
                what,
                unified: true,
            } => {
                write!(f, "device memory is host memory: {what}")
            }
            Why::HostResident { what, .. } => write!(f, "the buffer is in host memory: {what}"),
            Why::Rect { bytes, span } => {
                write!(f, "{} moved across a host span of {}", b(bytes), b(span))
            }
            Why::StagedUpTo { bytes, limit } => {
                write!(f, "{} is at most {}: staged", b(bytes), b(limit))
            }
            Why::PinnedAbove { bytes, limit } => write!(
                f,
                "{} is over {}: the pages are pinned on the fly (about 2/3 of peak)",
                b(bytes),
                b(limit)
            ),
            Why::CpuCopy { align, rem } => write!(
                f,
                "blocking, to system memory, pointer % {align} = {rem}: a CPU memcpy"
            ),
            Why::Misaligned { align, rem } => {
                write!(f, "the pointer is {rem} B past a {align} B boundary: slow")
            }
            Why::MapCopies { flags } => {
                write!(
                    f,
                    "map for {} copies device→host into pinned host memory",
                    map(flags)
                )
            }
            Why::UnmapCopies { flags } => {
                write!(
                    f,
                    "unmap of a {} mapping copies the region host→device",
                    map(flags)
                )
            }
            Why::UnknownObject { handle } => write!(f, "memory object {handle:#x} is unknown"),
            Why::NoMapping { ptr } => write!(f, "no live mapping at {ptr:#x}"),
            Why::ContentsElsewhere { obj } => {
                write!(f, "the contents of {obj} are on another device")
            }
            Why::LastElsewhere { obj } => write!(f, "{obj} was last on another device"),
            Why::OnlyOnHost { obj } => {
                write!(f, "the contents of {obj} are valid only on the host")
            }
            Why::Marker { flags } => write!(
                f,
                "migration with flags {} is only a marker: the data moves at first use",
                flags::decode(flags, MIGRATION_FLAGS)
            ),
            Why::NoObjects { flags } => write!(
                f,
                "no objects to migrate ({})",
                flags::decode(flags, MIGRATION_FLAGS)
            ),
            Why::DriverError { code: Some(code) } => {
                write!(
                    f,
                    "the driver returned {} ({code})",
                    flags::error_name(code)
                )
            }
            Why::DriverError { code: None } => {
                f.write_str("the driver returned no result and no error code")
            }
        }
    }
}

/// The host memory on one side of a transfer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostMemory {
    pub ptr: usize,
    /// `pageable`, `mapped`, `use-host-ptr`, `svm`, `usm-host`, `usm-shared`, `usm-device`,
    /// `imported`.
    pub kind: &'static str,
    /// Whether the driver can DMA from it directly.
    pub pinned: bool,
    /// The range it is in, and the offset into it.
    pub range: Option<(RangeRef, u64)>,
}

impl HostMemory {
    /// "pinned: inside the live WRITE mapping of buffer #7 (ALLOC_HOST_PTR), at +4096".
    /// Where the pointer is (shown, not allocated: the trace writes one per transfer).
    pub fn provenance(&self) -> Provenance<'_> {
        Provenance(self)
    }
}

/// [`HostMemory::provenance`]: `pinned: inside …, at +64`.
pub struct Provenance<'a>(&'a HostMemory);

impl fmt::Display for Provenance<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let state = if self.0.pinned {
            "pinned"
        } else {
            "not pinned"
        };
        match self.0.range {
            Some((range, offset)) => write!(f, "{state}: inside {range}, at +{offset}"),
            None => f.write_str("pageable: in no pinned or registered range clxfer saw"),
        }
    }
}

/// Alignment facts of the host pointer and the size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Alignment {
    pub ptr_mod_4096: u64,
    pub ptr_mod_64: u64,
    pub size_mod_64: u64,
}

impl Alignment {
    pub fn of(ptr: usize, size: u64) -> Alignment {
        Alignment {
            ptr_mod_4096: ptr as u64 % 4096,
            ptr_mod_64: ptr as u64 % 64,
            size_mod_64: size % 64,
        }
    }
}

/// How one command moves its bytes, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Classification {
    pub direction: Direction,
    pub path: Path,
    /// Bytes moved by this command.
    pub bytes: u64,
    /// For rect transfers: first to last host byte touched.
    pub host_span: Option<u64>,
    pub host: Option<HostMemory>,
    pub alignment: Option<Alignment>,
    pub blocking: bool,
    /// The rule set applied (`nvidia`, `cpu`, …).
    pub rules: &'static str,
    /// In the order applied.
    pub reasons: SmallVec<[Reason; 4]>,
    /// What the report reads from them.
    pub cited: Cited,
    /// The driver's error code, when it refused the call.
    pub error: Option<i32>,
}

impl Classification {
    /// `H2D staged 4.00 MiB blocking; host pageable 0x7f…; [nvidia.pageable] …`.
    pub fn line(&self) -> String {
        let mut s = format!(
            "{} {} {}",
            self.direction.as_str(),
            self.path.as_str(),
            units::bytes(self.bytes)
        );
        if let Some(span) = self.host_span {
            let _ = write!(s, " (host span {})", units::bytes(span));
        }
        s.push_str(if self.blocking {
            " blocking"
        } else {
            " non-blocking"
        });
        if let Some(code) = self.error {
            let _ = write!(s, " error {code}");
        }
        if let Some(host) = &self.host {
            let _ = write!(s, "; host {:#x} {}", host.ptr, host.provenance());
        }
        if let Some(a) = self.alignment {
            let _ = write!(
                s,
                "; ptr%4096={} ptr%64={} size%64={}",
                a.ptr_mod_4096, a.ptr_mod_64, a.size_mod_64
            );
        }
        let _ = write!(s, "; rules {}", self.rules);
        for r in &self.reasons {
            let _ = write!(s, "; [{}] {}", r.rule, r.text());
        }
        s
    }
}
