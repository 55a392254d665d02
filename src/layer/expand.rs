//! The macro that turns the list in `vocab/api.rs` into functions. Every generated body is the same three
//! lines: pick the next function down, pack the arguments into the entry point's struct
//! ([`super::args`]), hand both to [`super::forward`].

/// The hook type of an entry: the one named after `=>`, else [`super::Plain`].
macro_rules! hook_of {
    () => {
        $crate::layer::Plain
    };
    ($hook:path) => {
        $hook
    };
}

/// An entry's error out-parameter, where the list names one (`[errcode_ret]`), for
/// [`super::Outcome`].
macro_rules! errcode_of {
    () => {
        None
    };
    ($err:ident) => {
        Some($err)
    };
}

macro_rules! cl_entry_points {
    (
        core { $(
            fn $name:ident( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty
                $([$err:ident])? $(=> $hook:path)? ;
        )* }
        extension { $(
            fn $xname:ident( $xfirst:ident : $xfty:ty $(, $xarg:ident : $xty:ty)* $(,)? ) -> $xret:ty
                $([$xerr:ident])? $(=> $xhook:path)? ;
        )* }
    ) => {
        /// The LD_PRELOAD exports: each forwards to the real OpenCL library.
        #[allow(non_snake_case, clippy::missing_safety_doc)]
        pub mod exports {
            use super::*;
            use $crate::layer::{Via, args, forward, preload, Fallback};
            $(
                #[unsafe(no_mangle)]
                pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
                    unsafe {
                        forward::<$crate::layer::expand::hook_of!($($hook)?), _, _, _>(
                            Api::$name, Via::Preload, preload::real().$name, (args::$name { $($arg),* }, $crate::layer::expand::errcode_of!($($err)?)),
                            |f, args::$name { $($arg),* }| f($($arg),*),
                            || { $(if !$err.is_null() { *$err = $crate::layer::NO_DRIVER; })? Fallback::fallback(Api::$name) },
                        )
                    }
                }
            )*
        }

        /// clxfer's LD_PRELOAD export of a core entry point: what `dlsym` on the program's own
        /// OpenCL library hands out under LD_PRELOAD (`dlsym.rs`).
        pub(crate) fn export_of(api: Api) -> Option<*mut c_void> {
            match api {
                $(Api::$name => Some(exports::$name as *mut c_void),)*
                _ => None,
            }
        }

        /// The loader-layer table entries: each forwards to the next table down.
        #[allow(non_snake_case)]
        mod layer_fns {
            use super::*;
            use $crate::layer::{Via, args, forward, loader_layer, Fallback};
            $(
                pub(super) unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
                    unsafe {
                        forward::<$crate::layer::expand::hook_of!($($hook)?), _, _, _>(
                            Api::$name, Via::Layer, loader_layer::target().and_then(|t| t.$name), (args::$name { $($arg),* }, $crate::layer::expand::errcode_of!($($err)?)),
                            |f, args::$name { $($arg),* }| f($($arg),*),
                            || Fallback::fallback(Api::$name),
                        )
                    }
                }
            )*
        }

        /// Puts clxfer's function into every slot of `table` below `n` that the next layer fills.
        pub(crate) fn install_layer(table: &mut opencl_sys::cl_icd::cl_icd_dispatch, n: usize) {
            $(
                if Api::$name.slot().is_some_and(|slot| slot < n) && table.$name.is_some() {
                    table.$name = Some(layer_fns::$name);
                }
            )*
        }

        /// Fills every core slot from `lookup` (symbol name with its NUL → address or null).
        ///
        /// # Safety
        /// `lookup` must return null or the address of a function with the entry's signature.
        pub(crate) unsafe fn fill_from(
            table: &mut opencl_sys::cl_icd::cl_icd_dispatch,
            lookup: impl Fn(&'static std::ffi::CStr) -> *mut c_void,
        ) {
            $(
                let name = match std::ffi::CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
                    Ok(name) => name,
                    Err(_) => unreachable!(),
                };
                table.$name = unsafe { std::mem::transmute::<*mut c_void, Option<unsafe extern "C" fn($($ty),*) -> $ret>>(lookup(name)) };
            )*
        }

        /// The wrappers handed out for extension functions: each forwards to the driver's pointer.
        #[allow(non_snake_case)]
        mod ext_fns {
            use super::*;
            use $crate::layer::{Via, args, forward, extensions, Fallback};
            $(
                pub(super) unsafe extern "C" fn $xname($xfirst: $xfty $(, $xarg: $xty)*) -> $xret {
                    unsafe {
                        let real = extensions::real(Api::$xname, $xfirst as *const c_void);
                        let down = std::mem::transmute::<*mut c_void, Option<unsafe extern "C" fn($xfty $(, $xty)*) -> $xret>>(real);
                        forward::<$crate::layer::expand::hook_of!($($xhook)?), _, _, _>(
                            Api::$xname, Via::Extension, down, (args::$xname { $xfirst $(, $xarg)* }, $crate::layer::expand::errcode_of!($($xerr)?)),
                            |f, args::$xname { $xfirst $(, $xarg)* }| f($xfirst $(, $xarg)*),
                            || { $(if !$xerr.is_null() { *$xerr = $crate::layer::NO_DRIVER; })? Fallback::fallback(Api::$xname) },
                        )
                    }
                }
            )*
        }

        /// clxfer's wrapper for an extension function, or `None` for a function it does not wrap.
        pub(crate) fn extension_wrapper(api: Api) -> Option<*mut c_void> {
            match api {
                $(Api::$xname => Some(ext_fns::$xname as *mut c_void),)*
                _ => None,
            }
        }
    };
}

pub(crate) use cl_entry_points;
pub(crate) use errcode_of;
pub(crate) use hook_of;
