# Sourced by the scripts/gpu-* packers: `gpu_pack [fresh]` builds the release, makes .gpu/ (kept
# out of git through .git/info/exclude; emptied first with `fresh`) and strips the layer and the
# CLI into it. Each packer then adds its own programs.
gpu_pack() {
    cargo build --release --quiet
    mkdir -p .gpu
    grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
    [[ "${1:-}" == fresh ]] && rm -f .gpu/*
    strip -o .gpu/libclxfer.so target/release/libclxfer.so
    strip -o .gpu/clxfer target/release/clxfer
}
