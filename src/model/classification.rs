//! What the classifier answers: the vocabulary of directions and paths (one list, used alike in
//! code, logs, traces and docs) and the [`Classification`] of one transfer.

use crate::units;
use std::fmt::Write as _;

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
        ZeroCopy = "zero-copy": "the device uses host memory directly: a host memcpy or nothing, no bus transfer",
        Device = "device": "a copy or fill inside device memory",
        Peer = "peer": "device to device directly, peer-to-peer",
        ViaHost = "via-host": "device to device through host memory",
        None = "none": "no data moved",
        Unknown = "unknown": "clxfer cannot tell (unknown object, driver error)",
    }
}

/// One step of the reasoning, citing the rule it applied (an id from `rules.rs`).
#[derive(Clone, Debug, PartialEq)]
pub struct Reason {
    pub rule: &'static str,
    pub text: String,
}

/// The host memory on one side of a transfer.
#[derive(Clone, Debug, PartialEq)]
pub struct HostMemory {
    pub ptr: usize,
    /// `pageable`, `mapped`, `use-host-ptr`, `svm`, `usm-host`, `usm-shared`, `usm-device`,
    /// `imported`.
    pub kind: &'static str,
    /// Whether the driver can DMA from it directly.
    pub pinned: bool,
    /// "pinned: inside the live WRITE mapping of buffer #7 (ALLOC_HOST_PTR), at +4096".
    pub provenance: String,
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
    pub reasons: Vec<Reason>,
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
            let _ = write!(s, "; host {:#x} {}", host.ptr, host.provenance);
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
            let _ = write!(s, "; [{}] {}", r.rule, r.text);
        }
        s
    }
}
