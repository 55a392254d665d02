//! Each entry point's arguments as one struct, made from the list in `vocab/api.rs`: named as the
//! entry point, with one field per parameter, named and typed as the list has it. The exports
//! (`expand.rs`) pack the program's arguments into it and unpack it to call down, so a hook reads
//! `a.buffer` or `a.blocking_write`, not a position, and the compiler checks every name and type
//! a hook uses against the list. It is what the tuple it replaces was: the same fields, copied
//! once and passed by reference; no `#[repr]` (only Rust code sees it), no allocation.
//!
//! Where entry points name parameters alike, the traits below are implemented here for every one
//! of them, so that one hook serves them all: [`EnqueueArgs`] for each enqueue with a wait list,
//! [`Blocking`] for each with a `blocking_*` flag. A hook that reads other fields the entry points
//! it serves share writes its impl once for all of them with `for_args!`.

use opencl_sys::cl_egl::*;
use opencl_sys::*;
use std::ffi::{c_char, c_void};

/// The arguments of an enqueue: its queue (the first), its wait list and its event out-pointer
/// (the last three).
pub trait EnqueueArgs {
    fn queue(&self) -> cl_command_queue;
    fn event(&self) -> *mut cl_event;
    fn event_mut(&mut self) -> &mut *mut cl_event;
    /// `(num_events_in_wait_list, event_wait_list)`.
    fn wait_list(&self) -> (cl_uint, *const cl_event);
}

/// An enqueue that may block: its `blocking_read`, `blocking_write`, `blocking_map`,
/// `blocking_copy` or `blocking` flag.
pub trait Blocking {
    fn blocking(&self) -> bool;
}

/// The traits a struct gets for one of its fields, by the field's name.
macro_rules! shared {
    ($s:ident event_wait_list) => {
        impl EnqueueArgs for $s {
            #[inline(always)]
            fn queue(&self) -> cl_command_queue {
                self.command_queue
            }
            #[inline(always)]
            fn event(&self) -> *mut cl_event {
                self.event
            }
            #[inline(always)]
            fn event_mut(&mut self) -> &mut *mut cl_event {
                &mut self.event
            }
            #[inline(always)]
            fn wait_list(&self) -> (cl_uint, *const cl_event) {
                (self.num_events_in_wait_list, self.event_wait_list)
            }
        }
    };
    ($s:ident blocking_read) => { shared!(@blocking $s blocking_read); };
    ($s:ident blocking_write) => { shared!(@blocking $s blocking_write); };
    ($s:ident blocking_map) => { shared!(@blocking $s blocking_map); };
    ($s:ident blocking_copy) => { shared!(@blocking $s blocking_copy); };
    ($s:ident blocking) => { shared!(@blocking $s blocking); };
    (@blocking $s:ident $flag:ident) => {
        impl Blocking for $s {
            #[inline(always)]
            fn blocking(&self) -> bool {
                self.$flag != 0
            }
        }
    };
    ($s:ident $other:ident) => {};
}

macro_rules! arg_struct {
    ($name:ident $($arg:ident : $ty:ty),*) => {
        #[doc = concat!("The arguments of `", stringify!($name), "`.")]
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy)]
        pub struct $name {
            $(pub $arg: $ty,)*
        }
        $(shared!($name $arg);)*
    };
}

macro_rules! arg_structs {
    (
        core { $(
            fn $name:ident( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty
                $([$err:ident])? $(=> $hook:path)? ;
        )* }
        extension { $(
            fn $xname:ident( $($xarg:ident : $xty:ty),* $(,)? ) -> $xret:ty
                $([$xerr:ident])? $(=> $xhook:path)? ;
        )* }
    ) => {
        $(arg_struct!($name $($arg: $ty),*);)*
        $(arg_struct!($xname $($xarg: $xty),*);)*
    };
}

crate::vocab::api::entry_points!(arg_structs);

/// `clEnqueueMarker`, the one enqueue without a wait list.
impl EnqueueArgs for clEnqueueMarker {
    #[inline(always)]
    fn queue(&self) -> cl_command_queue {
        self.command_queue
    }
    #[inline(always)]
    fn event(&self) -> *mut cl_event {
        self.event
    }
    #[inline(always)]
    fn event_mut(&mut self) -> &mut *mut cl_event {
        &mut self.event
    }
    #[inline(always)]
    fn wait_list(&self) -> (cl_uint, *const cl_event) {
        (0, std::ptr::null())
    }
}

/// One impl for each listed argument struct, written once: for a hook that serves entry points
/// which name their parameters alike. The items name the struct `Args`; the compiler checks them
/// against each struct in turn.
macro_rules! for_args {
    ([$name:ident $(, $rest:ident)* $(,)?] $($item:tt)*) => {
        const _: () = {
            type Args = $crate::layer::args::$name;
            $($item)*
        };
        $crate::layer::args::for_args!([$($rest),*] $($item)*);
    };
    ([] $($item:tt)*) => {};
}

pub(crate) use for_args;
