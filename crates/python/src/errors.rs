//! The exceptions: one base class, one class per kind of refusal, and `ReviewError` with a
//! subclass per error code of the wire (judge-contract §6), carrying `code` and `detail`.

use jevjudge_judge::{ErrorCode, Verdict};
use jevjudge_wire::setting::Setting;
use pyo3::{create_exception, exceptions::PyException, prelude::*};

create_exception!(
    _native,
    JevjudgeError,
    PyException,
    "The base class of every jevjudge error."
);
create_exception!(
    _native,
    DefinitionError,
    JevjudgeError,
    "A definition that cannot be loaded: its text, a missing or mistyped field, a rule of the contract."
);
create_exception!(
    _native,
    ConfigurationError,
    JevjudgeError,
    "Settings that cannot work (no API key, a bad base URL, an unreadable recording, a number out of range); nothing was sent."
);
create_exception!(
    _native,
    CasesError,
    JevjudgeError,
    "A cases file, or one of its lines, that breaks a rule or a cap; nothing was sent."
);
create_exception!(
    _native,
    StateError,
    JevjudgeError,
    "A state that cannot be reviewed: not a JSON string, object or array, or larger than the cap; nothing was sent."
);
create_exception!(
    _native,
    ReportError,
    JevjudgeError,
    "A report that cannot be read, written or compared."
);
create_exception!(
    _native,
    ReviewError,
    JevjudgeError,
    "A review that ended in ERROR (raised by Result.raise_for_error()); `code` is TIMEOUT, INVALID_RESPONSE or BACKEND, `detail` the safe detail code."
);
create_exception!(
    _native,
    ReviewTimeout,
    ReviewError,
    "ERROR/TIMEOUT: the budget ran out before a valid answer came back."
);
create_exception!(
    _native,
    InvalidResponse,
    ReviewError,
    "ERROR/INVALID_RESPONSE: an answer came back but broke the wire's rules."
);
create_exception!(
    _native,
    BackendFailure,
    ReviewError,
    "ERROR/BACKEND: the backend failed (HTTP status, connection, refused key, not recorded)."
);

/// Adds the exception classes to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add("JevjudgeError", py.get_type::<JevjudgeError>())?;
    module.add("DefinitionError", py.get_type::<DefinitionError>())?;
    module.add("ConfigurationError", py.get_type::<ConfigurationError>())?;
    module.add("CasesError", py.get_type::<CasesError>())?;
    module.add("StateError", py.get_type::<StateError>())?;
    module.add("ReportError", py.get_type::<ReportError>())?;
    module.add("ReviewError", py.get_type::<ReviewError>())?;
    module.add("ReviewTimeout", py.get_type::<ReviewTimeout>())?;
    module.add("InvalidResponse", py.get_type::<InvalidResponse>())?;
    module.add("BackendFailure", py.get_type::<BackendFailure>())?;
    Ok(())
}

/// A `ConfigurationError` with `message`.
pub fn configuration(message: impl std::fmt::Display) -> PyErr {
    ConfigurationError::new_err(message.to_string())
}

/// The `ReviewError` of an ERROR verdict (`None` for any other status): the subclass of its
/// code, with `code` and `detail` set and a message `CODE/detail`.
pub fn review_error(py: Python<'_>, verdict: &Verdict) -> PyResult<Option<PyErr>> {
    let Some(detail) = verdict.detail else {
        return Ok(None);
    };
    let code = verdict.error.as_str();
    let detail = detail.to_string();
    let message = format!("{code}/{detail}");
    let error = match verdict.error {
        ErrorCode::Timeout => ReviewTimeout::new_err(message),
        ErrorCode::InvalidResponse => InvalidResponse::new_err(message),
        ErrorCode::Backend => BackendFailure::new_err(message),
        ErrorCode::None | ErrorCode::Evaluator => ReviewError::new_err(message),
    };
    let value = error.value(py);
    value.setattr("code", code)?;
    value.setattr("detail", detail)?;
    Ok(Some(error))
}

/// A setting as Python callers give it: the keyword argument, `=True` for a switch
/// (`resume=True`), `=` for a value (`max_input_bytes=`).
pub fn keyword(setting: Setting) -> String {
    match setting {
        Setting::Fake | Setting::Resume | Setting::Overwrite | Setting::AllowInsecureHttp => {
            format!("{}=True", setting.key())
        }
        _ => format!("{}=", setting.key()),
    }
}
