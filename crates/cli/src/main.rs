//! The `jevjudge` command: see the library, [`jevjudge::run`].

/// mimalloc rather than the system's allocator: a run allocates on one worker thread and frees
/// on another, which glibc's arenas handle slowly (see docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(jevjudge::run(std::env::args_os()))
}
