// The cdylib both exports the OpenCL entry points (LD_PRELOAD) and hands out its own functions in a
// loader-layer dispatch table. Without -Bsymbolic-functions an address taken inside the library can
// resolve through the PLT to the loader's exported symbol of the same name, and the loader then calls
// itself forever (../shared/docs/layer-contract.md, "the hang").
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic-functions");
    println!("cargo:rerun-if-changed=build.rs");
}
