//! The field numbers of Perfetto's own schema (`perfetto/trace/perfetto_trace.proto`, as PyPI's
//! `perfetto` 0.59 ships it) that clxfer writes and reads, in one place for the encoder and the
//! decoder. A file is a `Trace`: each `TracePacket` as its field 1, length-delimited, so a killed
//! program leaves a file readable up to its last whole packet.

/// `Trace.packet`.
pub const TRACE_PACKET: u32 = 1;

/// `TracePacket`.
pub mod packet {
    pub const CLOCK_SNAPSHOT: u32 = 6;
    pub const TIMESTAMP: u32 = 8;
    pub const SEQUENCE_ID: u32 = 10;
    pub const TRACK_EVENT: u32 = 11;
    pub const INTERNED_DATA: u32 = 12;
    pub const SEQUENCE_FLAGS: u32 = 13;
    pub const TIMESTAMP_CLOCK_ID: u32 = 58;
    pub const DEFAULTS: u32 = 59;
    pub const TRACK_DESCRIPTOR: u32 = 60;
    pub const FIRST_ON_SEQUENCE: u32 = 87;
    /// `sequence_flags`.
    pub const INCREMENTAL_STATE_CLEARED: u64 = 1;
    pub const NEEDS_INCREMENTAL_STATE: u64 = 2;
}

/// `TracePacketDefaults` and `ClockSnapshot`: clxfer's timestamps are nanoseconds from its start
/// on a clock of its own (a sequence-scoped one, id 64), which the first packet maps onto
/// `CLOCK_MONOTONIC`, the trace's clock; by default, packets give them as deltas on that clock's
/// incremental twin (id 65, 0 at clxfer's start: each packet's time is the last one's plus its
/// own).
pub mod clock {
    pub const DEFAULTS_CLOCK_ID: u32 = 58;
    pub const SNAPSHOT_CLOCKS: u32 = 1;
    pub const SNAPSHOT_PRIMARY: u32 = 2;
    pub const CLOCK_ID: u32 = 1;
    pub const CLOCK_TIMESTAMP: u32 = 2;
    pub const CLOCK_INCREMENTAL: u32 = 3;
    pub const MONOTONIC: u64 = 3;
    pub const CLXFER: u64 = 64;
    pub const CLXFER_DELTA: u64 = 65;
}

/// `TrackEvent`.
pub mod event {
    pub const CATEGORY_IIDS: u32 = 3;
    pub const DEBUG_ANNOTATIONS: u32 = 4;
    pub const TYPE: u32 = 9;
    pub const NAME_IID: u32 = 10;
    pub const TRACK_UUID: u32 = 11;
    pub const NAME: u32 = 23;
    pub const COUNTER_VALUE: u32 = 30;
    pub const FLOW_IDS: u32 = 47;
    pub const TERMINATING_FLOW_IDS: u32 = 48;
    /// `type`.
    pub const SLICE_BEGIN: u64 = 1;
    pub const SLICE_END: u64 = 2;
    pub const INSTANT: u64 = 3;
    pub const COUNTER: u64 = 4;
}

/// `InternedData` and its entries (`EventName`, `EventCategory`, `DebugAnnotationName`,
/// `InternedString`: each an `iid` (1) and its text (2)).
pub mod interned {
    pub const CATEGORIES: u32 = 1;
    pub const NAMES: u32 = 2;
    pub const ANNOTATION_NAMES: u32 = 3;
    pub const STRINGS: u32 = 29;
    pub const IID: u32 = 1;
    pub const TEXT: u32 = 2;
}

/// `DebugAnnotation`.
pub mod annotation {
    pub const NAME_IID: u32 = 1;
    pub const BOOL: u32 = 2;
    pub const UINT: u32 = 3;
    pub const INT: u32 = 4;
    pub const DOUBLE: u32 = 5;
    pub const STRING: u32 = 6;
    pub const POINTER: u32 = 7;
    pub const JSON: u32 = 9;
    pub const NAME: u32 = 10;
    pub const DICT: u32 = 11;
    pub const ARRAY: u32 = 12;
    pub const STRING_IID: u32 = 17;
}

/// `TrackDescriptor`, `ProcessDescriptor`, `ThreadDescriptor`, `CounterDescriptor`.
pub mod track {
    pub const UUID: u32 = 1;
    pub const NAME: u32 = 2;
    pub const PROCESS: u32 = 3;
    pub const THREAD: u32 = 4;
    pub const PARENT: u32 = 5;
    pub const COUNTER: u32 = 8;
    pub const PROCESS_PID: u32 = 1;
    pub const PROCESS_NAME: u32 = 6;
    pub const THREAD_PID: u32 = 1;
    pub const THREAD_TID: u32 = 2;
    pub const THREAD_NAME: u32 = 5;
    pub const COUNTER_UNIT: u32 = 3;
    pub const COUNTER_UNIT_NAME: u32 = 6;
    pub const UNIT_SIZE_BYTES: u64 = 3;
    /// `sibling_order_rank`: the JSON's sort index.
    pub const ORDER_RANK: u32 = 12;
}

/// Flow ids: an enqueue arrow's is its command's number; a dependency or race arrow's, its own
/// number (as in the JSON) with one of these bits, so that ids are unique over the trace.
pub const WAIT_FLOW_BIT: u64 = 1 << 62;
pub const RACE_FLOW_BIT: u64 = 1 << 61;

/// The wire format's value kinds.
pub const VARINT: u8 = 0;
pub const FIXED64: u8 = 1;
pub const LEN: u8 = 2;
pub const FIXED32: u8 = 5;
