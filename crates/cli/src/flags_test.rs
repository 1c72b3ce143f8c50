//! For the commands' unit tests: a command's flags parsed the way `jevjudge COMMAND` parses
//! them, without the rest of the command line.

use clap::Parser;

/// Just one command's flags.
#[derive(Debug, Parser)]
struct Cli<A: clap::Args> {
    #[command(flatten)]
    args: A,
}

/// `argv` parsed as the flags `A` of the command `name`.
pub(crate) fn parse<A: clap::Args>(name: &str, argv: &[&str]) -> Result<A, clap::Error> {
    Cli::<A>::try_parse_from(std::iter::once(name).chain(argv.iter().copied())).map(|cli| cli.args)
}

/// A command's flags parsed in its unit tests with no `parse` wrapper of its own:
/// `Args::parse_flags(&["--definitions", "d"])` (messages name the program `jevjudge`).
pub(crate) trait ParseFlags: clap::Args + Sized {
    /// `argv` parsed as these flags.
    fn parse_flags(argv: &[&str]) -> Result<Self, clap::Error> {
        parse("jevjudge", argv)
    }
}

impl<A: clap::Args> ParseFlags for A {}
