//! Canonical JSON as jevkit writes it (systemone-wire.md §15). Owned by the canonical/record work.
