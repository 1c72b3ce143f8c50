//! The `jevjudge` command: see the library, [`jevjudge::run`].

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(jevjudge::run(std::env::args_os()))
}
