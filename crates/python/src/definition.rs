//! `Definition`: a versioned, immutable set of criteria, loaded from TOML or JSON.

use std::{path::PathBuf, sync::Arc};

use jevjudge_judge::{Definition, DefinitionFormat, LoadError, LoadErrorKind};
use pyo3::{prelude::*, types::PyDict};

use crate::{errors::DefinitionError, json};

/// A definition (judge-contract §2): its version and required criteria, each a question,
/// whether a yes is expected, and the fail/pass thresholds on the yes-probability.
#[pyclass(name = "Definition", module = "jevjudge._native", frozen)]
pub struct PyDefinition {
    pub inner: Arc<Definition>,
}

/// The `DefinitionError` of a load error: its message names the file (when one was read) and
/// the field; `path` and `field` are set when known.
fn load_error(py: Python<'_>, error: &LoadError) -> PyErr {
    let raised = DefinitionError::new_err(error.to_string());
    let value = raised.value(py);
    let field = match error.kind() {
        LoadErrorKind::Invalid { field, .. } => Some(field.clone()),
        _ => None,
    };
    let path = error.path().map(|p| p.display().to_string());
    if value.setattr("field", field).is_err() || value.setattr("path", path).is_err() {
        return raised;
    }
    raised
}

#[pymethods]
impl PyDefinition {
    /// Loads a `.toml` or `.json` definition file.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<PyDefinition> {
        Definition::from_path(&path)
            .map(PyDefinition::new)
            .map_err(|e| load_error(py, &e))
    }

    /// Parses a definition from TOML text.
    #[staticmethod]
    fn from_toml(py: Python<'_>, text: &str) -> PyResult<PyDefinition> {
        Definition::from_str_as(text, DefinitionFormat::Toml)
            .map(PyDefinition::new)
            .map_err(|e| load_error(py, &e))
    }

    /// Parses a definition from JSON text.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &str) -> PyResult<PyDefinition> {
        Definition::from_str_as(text, DefinitionFormat::Json)
            .map(PyDefinition::new)
            .map_err(|e| load_error(py, &e))
    }

    /// The version, like `refund-answer-v1`.
    #[getter]
    fn version(&self) -> &str {
        self.inner.version()
    }

    /// The criteria in definition order, each a dict as in the JSON form: `id`, `question`,
    /// `expected`, `fail_at_or_below`, `pass_at_or_above`.
    #[getter]
    fn criteria<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = self.inner.to_json_value();
        json::to_py(py, &value["criteria"])
    }

    /// Each criterion's thresholds: `{id: (fail_at_or_below, pass_at_or_above)}`.
    #[getter]
    fn thresholds<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let thresholds = PyDict::new(py);
        for criterion in self.inner.criteria() {
            thresholds.set_item(
                criterion.id(),
                (criterion.fail_at_or_below(), criterion.pass_at_or_above()),
            )?;
        }
        Ok(thresholds)
    }

    /// The JSON form as a dict (loads back to an equal definition).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, &self.inner.to_json_value())
    }

    /// The TOML form.
    fn to_toml(&self) -> PyResult<String> {
        self.inner
            .to_toml_string()
            .map_err(|e| DefinitionError::new_err(format!("no TOML form: {e}")))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyDefinition>()
            .is_ok_and(|other| *other.get().inner == *self.inner)
    }

    fn __repr__(&self) -> String {
        format!(
            "Definition(version={:?}, criteria={})",
            self.inner.version(),
            self.inner.criteria().len()
        )
    }
}

impl PyDefinition {
    /// Wraps a definition.
    pub fn new(definition: Definition) -> PyDefinition {
        PyDefinition {
            inner: Arc::new(definition),
        }
    }
}
