//! Every finding's kind, declared once: its name in reports and in `clxfer check --require
//! finding:KIND`, whether it says the program does something wrong (a misuse: it ranks first and
//! is never minor), and whether its saving is an estimate of time. A new finding joins here.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! kinds {
    ($($(#[$doc:meta])* $variant:ident = $name:literal, misuse: $misuse:literal, time: $time:literal;)*) => {
        /// A finding's kind.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum FindingKind {
            $($(#[$doc])* $variant,)*
        }

        impl FindingKind {
            /// Every kind, in the order of the report's families.
            pub const ALL: &[FindingKind] = &[$(FindingKind::$variant,)*];

            /// Its name: `staged-pageable`.
            pub const fn as_str(self) -> &'static str {
                match self { $(FindingKind::$variant => $name,)* }
            }

            /// It says the program does something wrong: a race makes its results wrong, a
            /// HOST-flag hand-off moves a buffer twice, a migration on the source's queue moves
            /// nothing, a buffer written on two devices is written twice. Whatever it saves, it
            /// ranks first (races before the others) and is never counted as minor.
            pub const fn misuse(self) -> bool {
                match self { $(FindingKind::$variant => $misuse,)* }
            }

            /// Its saving is always an estimate of time (0 included).
            pub const fn time(self) -> bool {
                match self { $(FindingKind::$variant => $time,)* }
            }
        }
    };
}

kinds! {
    PossibleRace = "possible-race", misuse: true, time: false;
    UnjudgedRace = "unjudged-race", misuse: false, time: false;
    HostHopMigration = "host-hop-migration", misuse: true, time: false;
    MigrationOnSourceQueue = "migration-on-source-queue", misuse: true, time: false;
    InitialisedTwice = "initialised-twice", misuse: true, time: false;
    ViaHostMigration = "via-host-migration", misuse: false, time: false;
    EmptyMigration = "empty-migration", misuse: false, time: false;
    StagedPageable = "staged-pageable", misuse: false, time: true;
    NonblockingHeldHost = "nonblocking-held-host", misuse: false, time: true;
    MapWriteCopied = "map-write-copied", misuse: false, time: true;
    SmallTransfers = "small-transfers", misuse: false, time: true;
    Misaligned = "misaligned", misuse: false, time: true;
    QueueOrder = "queue-order", misuse: false, time: true;
    AllocHostPtrDeviceMemory = "alloc-host-ptr-device-memory", misuse: false, time: false;
    SvmDeviceMemory = "svm-device-memory", misuse: false, time: false;
    DeviceTimeUnavailable = "device-time-unavailable", misuse: false, time: false;
    DeviceTimeImplausible = "device-time-implausible", misuse: false, time: false;
    NoSuchFunction = "no-such-function", misuse: false, time: false;
    FunctionNotOffered = "function-not-offered", misuse: false, time: false;
}

impl FindingKind {
    /// The kind called `name`.
    pub fn named(name: &str) -> Option<FindingKind> {
        Self::ALL.iter().copied().find(|k| k.as_str() == name)
    }
}

impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Tests and rules read a kind against its name.
impl PartialEq<&str> for FindingKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for FindingKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A report read back (`clxfer diff`, `clxfer check`) names only kinds this clxfer knows: one of
/// another version is an error that names it, not a finding of no kind.
impl<'de> Deserialize<'de> for FindingKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        FindingKind::named(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("no finding is called {name}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_back_by_name_and_no_other() {
        for &k in FindingKind::ALL {
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.as_str()));
            assert_eq!(serde_json::from_str::<FindingKind>(&json).unwrap(), k);
        }
        assert!(serde_json::from_str::<FindingKind>("\"held-host\"").is_err());
        let misuses: Vec<_> = (FindingKind::ALL.iter()).filter(|k| k.misuse()).collect();
        assert_eq!(misuses.len(), 4);
    }
}
