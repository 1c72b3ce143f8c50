//! `jevjudge._native`: the Python package's compiled module. It wraps the library crates
//! (`jevjudge-judge`, `jevjudge-eval`) and the whole command line (`jevjudge::run`) for
//! Python: `Definition`, `Judge` and its `Result`, `evaluate` and its `Report`, `compare`,
//! `calibrate`, the exceptions and `main`.
//!
//! Values cross the boundary as JSON: a Python state is `json.dumps`-ed and read with the same
//! checks as `jevjudge judge --state`, and every dict handed back is the JSON the command line
//! prints, read with `json.loads`, so that the two are equal by construction.
//!
//! Reviews run on one shared multi-threaded tokio runtime; a blocking call releases the GIL
//! while it waits and checks for Ctrl-C (Python's signal handlers) ten times a second.

mod backend;
mod definition;
mod errors;
mod evaluate;
mod json;
mod judge;
mod report;
mod runtime;

use pyo3::prelude::*;

/// Runs the `jevjudge` command line `argv` (the program name first) and returns its exit
/// status: the same flags, output and exit codes as the Rust binary.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| jevjudge::run(argv))
}

/// The compiled module.
#[pymodule]
#[pyo3(name = "_native")]
fn native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    runtime::install()?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add_function(wrap_pyfunction!(main, module)?)?;
    errors::register(module)?;
    module.add_class::<definition::PyDefinition>()?;
    module.add_class::<judge::PyJudge>()?;
    module.add_class::<judge::PyVerdict>()?;
    module.add_class::<report::PyReport>()?;
    module.add_function(wrap_pyfunction!(evaluate::evaluate, module)?)?;
    module.add_function(wrap_pyfunction!(report::compare, module)?)?;
    module.add_function(wrap_pyfunction!(report::calibrate, module)?)?;
    Ok(())
}
